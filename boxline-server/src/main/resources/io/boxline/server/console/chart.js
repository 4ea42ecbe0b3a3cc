import { svg, num } from './dom.js';

// A line chart of one series over the last minutes, drawn as SVG (no chart library to load).
export function lineChart(points, { label, minutes = 10 } = {}) {
  const W = 600, H = 160, L = 56, B = 20, T = 8;
  const root = svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label });
  const now = Date.now();
  const from = now - minutes * 60000;
  const shown = points.filter((p) => p.t >= from);
  const max = Math.max(1, ...shown.map((p) => p.v));
  const x = (t) => L + ((t - from) / (now - from)) * (W - L - 4);
  const y = (v) => T + (1 - v / max) * (H - T - B);
  root.append(svg('line', { class: 'axis', x1: L, y1: H - B, x2: W, y2: H - B }));
  root.append(svg('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
  const top = svg('text', { x: L - 6, y: T + 10, 'text-anchor': 'end' });
  top.textContent = num(max);
  const zero = svg('text', { x: L - 6, y: H - B, 'text-anchor': 'end' });
  zero.textContent = '0';
  const left = svg('text', { x: L, y: H - 4 });
  left.textContent = `−${minutes} min`;
  const right = svg('text', { x: W - 4, y: H - 4, 'text-anchor': 'end' });
  right.textContent = 'now';
  root.append(top, zero, left, right);
  if (shown.length > 1) {
    const line = shown.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ');
    root.append(svg('polygon', { class: 'area', points: `${x(shown[0].t)},${H - B} ${line} ${x(shown[shown.length - 1].t)},${H - B}` }));
    root.append(svg('polyline', { class: 'line', points: line }));
  }
  return root;
}

// Green for an empty backlog, through yellow, to red for the largest one on the map (log scale).
export function heatColour(lag, maxLag) {
  if (!lag) return 'hsl(135 55% 78%)';
  const f = Math.min(1, Math.log10(lag + 1) / Math.log10(Math.max(10, maxLag) + 1));
  const hue = 50 - 50 * Math.max(0, (f - 0.5) * 2);
  return f < 0.5 ? `hsl(${135 - 170 * f} 70% 72%)` : `hsl(${hue} 85% 70%)`;
}
