import { h, time, num } from './dom.js';
import { api, topicPath } from './api.js';

// One event: its fields, headers, and payload as pretty JSON, the text as stored, or hex.
export function eventDetail(e) {
  const bytes = payloadBytes(e);
  const views = {};
  if (e.payload !== undefined) views.JSON = JSON.stringify(e.payload, null, 2);
  const text = bytes ? utf8(bytes) : '';
  if (e.payload === undefined && bytes) views.Text = text;
  // A JSON payload arrives inline and the browser parses it (276.50 becomes 276.5): its stored text
  // and hex views ask the server for the stored bytes.
  if (e.payload !== undefined) views.Stored = null;
  if (e.payloadBase64) views.Hex = hexDump(bytes);
  else if (bytes) views.Hex = null;
  const pre = h('pre', { id: 'payload', tabindex: '0', 'aria-label': 'Payload' });
  const modes = Object.keys(views);
  const buttons = modes.map((m) => h('button', {
    type: 'button', class: 'ghost', 'aria-pressed': 'false', dataset: { mode: m },
    onclick: () => show(m),
  }, m));
  async function show(m) {
    for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.mode === m));
    if (views[m] === null) {
      pre.textContent = 'Loading the stored bytes…';
      try {
        const raw = await api(`${topicPath(e.topic)}/partitions/${e.partition}/events/${e.sequence}`, { params: { payload: 'base64' } });
        const stored = decode(raw.payloadBase64);
        if ('Stored' in views) views.Stored = utf8(stored);
        views.Hex = hexDump(stored);
      } catch (err) {
        pre.textContent = 'Could not read the stored bytes: ' + err.message;
        return;
      }
    }
    pre.textContent = views[m] || '(no payload)';
  }
  show(modes[0]);
  const headers = Object.entries(e.headers || {});
  return h('div', { class: 'event-detail', dataset: { eventId: e.id } },
    h('dl', { class: 'meta' },
      h('dt', null, 'Id'), h('dd', null, e.id),
      h('dt', null, 'Position'), h('dd', null, `${e.topic} / ${e.partition} / ${e.sequence}`),
      h('dt', null, 'Key'), h('dd', null, e.key === null ? '(none)' : e.key),
      h('dt', null, 'Type'), h('dd', null, e.type),
      h('dt', null, 'Source'), h('dd', null, e.source || '–'),
      h('dt', null, 'Content type'), h('dd', null, e.contentType),
      h('dt', null, 'Created'), h('dd', null, time(e.createdAt)),
      e.deliverAt ? [h('dt', null, 'Deliver at'), h('dd', null, time(e.deliverAt))] : null,
      h('dt', null, 'Size'), h('dd', null, bytes ? num(bytes.length) + ' bytes' : '–')),
    headers.length
      ? h('table', { 'aria-label': 'Headers' }, h('caption', null, 'Headers'),
        h('tbody', null, headers.map(([k, v]) => h('tr', null, h('th', { scope: 'row' }, k), h('td', null, v)))))
      : h('p', { class: 'muted' }, 'No headers.'),
    h('div', { class: 'row', role: 'group', 'aria-label': 'Show payload as' }, 'Payload', buttons),
    pre);
}

function utf8(bytes) {
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

function decode(base64) {
  const s = atob(base64 || '');
  const b = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
  return b;
}

function payloadBytes(e) {
  if (e.payloadBase64) return decode(e.payloadBase64);
  if (e.payload !== undefined) return new TextEncoder().encode(JSON.stringify(e.payload));
  return null;
}

export function hexDump(bytes) {
  const lines = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const row = bytes.slice(i, i + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = [...row].map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
    lines.push(i.toString(16).padStart(8, '0') + '  ' + hex.padEnd(48) + ' ' + ascii);
  }
  return lines.join('\n');
}
