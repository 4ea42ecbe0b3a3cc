// Builds elements from data without innerHTML, so nothing from an event can become markup.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'style') Object.assign(el.style, v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export const svg = (tag, attrs) => {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  return el;
};

export const num = (n) => (n === undefined || n === null ? '–' : Number(n).toLocaleString('en-US'));

export function rate(r) {
  if (r === null || r === undefined || Number.isNaN(r)) return '–';
  return (r >= 100 ? Math.round(r).toLocaleString('en-US') : r.toFixed(1)) + '/s';
}

export function seconds(s) {
  if (!s) return '0 s';
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
  if (s < 3600) return (s / 60).toFixed(1) + ' min';
  if (s < 86400) return (s / 3600).toFixed(1) + ' h';
  return (s / 86400).toFixed(1) + ' d';
}

export function ago(iso) {
  if (!iso) return '–';
  const s = (Date.now() - Date.parse(iso)) / 1000;
  return s < 0 ? 'in ' + seconds(-s) : seconds(s) + ' ago';
}

export const time = (iso) => (iso ? new Date(iso).toLocaleString('en-GB', { hour12: false }) : '–');

export function badge(health) {
  const status = health ? health.status : 'ok';
  return h('span', { class: 'badge ' + status, title: health && health.reasons.join('; ') }, status);
}

// One page's table: a caption, headers and rows of cells (strings, numbers or elements).
export function table(caption, headers, rows, opts = {}) {
  const head = h('tr', null, headers.map((x) => h('th', { scope: 'col', class: x.num ? 'num' : null }, x.label || x)));
  const body = h('tbody');
  for (const r of rows) {
    const tr = r instanceof Node ? r : h('tr', null, r.map((c, i) => h('td', { class: headers[i] && headers[i].num ? 'num' : null }, c)));
    body.append(tr);
  }
  return h('table', { class: opts.class, 'aria-label': caption }, caption ? h('caption', null, caption) : null, h('thead', null, head), body);
}

// A field with its label, the way every form here writes one.
export function field(label, input) {
  return h('label', null, label, input);
}
