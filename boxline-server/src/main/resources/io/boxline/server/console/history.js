// Samples the console took, kept in memory for ten minutes: rates and charts come from them.
const KEEP_MS = 10 * 60 * 1000;
const series = new Map();

export function record(key, value, at = Date.now()) {
  let s = series.get(key);
  if (!s) series.set(key, (s = []));
  if (s.length && s[s.length - 1].t === at) return;
  s.push({ t: at, v: value });
  while (s.length && s[0].t < at - KEEP_MS) s.shift();
}

export const points = (key) => series.get(key) || [];

// The rate over the last window seconds (or what is kept), from the counter's first and last sample in it.
export function rateOf(key, windowMs = 10000) {
  const s = points(key);
  if (s.length < 2) return null;
  const last = s[s.length - 1];
  let first = s[0];
  for (const p of s) {
    if (p.t >= last.t - windowMs) { first = p; break; }
  }
  if (first === last) first = s[s.length - 2];
  const dt = (last.t - first.t) / 1000;
  return dt > 0 ? Math.max(0, (last.v - first.v) / dt) : null;
}
