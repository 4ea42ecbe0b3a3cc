import { api, apiAll, topicPath } from './api.js';
import { h, clear, num, time, table, field } from './dom.js';
import { eventDetail } from './eventview.js';
import { notify } from './ui.js';

// Browse one partition by position or time, find by key or id; pages by position on the server.
export function events(root, params) {
  const topicSel = h('select', { id: 'ev-topic', name: 'topic' });
  const partition = h('input', { id: 'ev-partition', type: 'number', min: 0, value: params.partition || 0, size: 5 });
  const after = h('input', { id: 'ev-after', type: 'number', min: 0, value: params.after || '', placeholder: '0', size: 10 });
  const at = h('input', { id: 'ev-at', type: 'text', value: params.at || '', placeholder: '2026-01-31T12:00:00Z', size: 24 });
  const key = h('input', { id: 'ev-key', type: 'text', value: params.key || '', size: 14 });
  const id = h('input', { id: 'ev-id', type: 'text', value: params.id || '', size: 36 });
  const list = h('div', { id: 'ev-list' });
  const detail = h('div', { id: 'ev-detail' }, h('p', { class: 'muted' }, 'Select an event to see its headers and payload.'));
  const banner = h('div');
  const form = h('form', { class: 'form', id: 'ev-form', onsubmit: (e) => { e.preventDefault(); go(); } },
    field('Topic', topicSel), field('Partition', partition), field('After position', after),
    field('Or from time (ISO-8601)', at), field('Key', key), field('Event id', id),
    h('button', { type: 'submit' }, 'Show'));
  clear(root).append(h('h1', null, 'Events'), banner, h('div', { class: 'panel' }, form),
    h('div', { class: 'split' }, h('section', { class: 'panel', 'aria-label': 'Events' }, list), h('section', { class: 'panel', 'aria-label': 'Event' }, detail)));

  const back = [];
  let head = null;

  apiAll('/v1/topics', 'topics').then((topics) => {
    for (const t of topics) topicSel.append(h('option', { value: t.name }, `${t.name} (${t.partitions} partitions)`));
    if (params.topic) topicSel.value = params.topic;
    if (params.subscription) {
      banner.append(h('p', { class: 'panel', id: 'unhandled-banner' },
        `Events of ${params.topic} partition ${params.partition} not yet handled by subscription ${params.subscription} (handled up to ${params.after}).`));
    }
    if (topicSel.value) load({ after: params.after, at: params.at, key: params.key, id: params.id });
  }).catch((e) => notify(e.message));

  function go() {
    back.length = 0;
    load({ after: after.value, at: at.value.trim(), key: key.value, id: id.value.trim() });
  }

  async function load(q) {
    const p = Number(partition.value || 0);
    try {
      const state = await api(topicPath(topicSel.value));
      head = state.heads[p];
      const page = await api(`${topicPath(topicSel.value)}/partitions/${p}/events`, {
        params: { after: q.at ? undefined : q.after, at: q.at || undefined, key: q.key, id: q.id, limit: 50 },
      });
      draw(page, q, p);
      notify('');
    } catch (e) { notify(e.message); }
  }

  function draw(page, q, p) {
    const rows = page.events.map((e) => {
      const open = h('button', { type: 'button', class: 'ghost', 'aria-label': 'Show event ' + e.sequence, onclick: () => {
        for (const r of list.querySelectorAll('tr.selected')) r.classList.remove('selected');
        tr.classList.add('selected');
        clear(detail).append(eventDetail(e));
      } }, num(e.sequence));
      const tr = h('tr', { dataset: { sequence: e.sequence, key: e.key || '' } },
        h('td', { class: 'num' }, open), h('td', null, time(e.createdAt)), h('td', { class: 'truncate' }, e.key === null ? '–' : e.key),
        h('td', null, e.type));
      return tr;
    });
    const first = page.events.length ? page.events[0].sequence : null;
    const last = page.events.length ? page.events[page.events.length - 1].sequence : null;
    const pager = h('div', { class: 'pager' },
      h('button', { type: 'button', class: 'ghost', id: 'ev-first', onclick: () => { back.length = 0; load({ ...q, after: 0, at: '' }); } }, 'First'),
      h('button', { type: 'button', class: 'ghost', id: 'ev-prev', disabled: back.length === 0, onclick: () => load({ ...q, after: back.pop(), at: '' }) }, 'Previous'),
      h('button', { type: 'button', id: 'ev-next', disabled: page.next === null, onclick: () => { back.push(first === null ? 0 : first - 1); load({ ...q, after: page.next, at: '' }); } }, 'Next'),
      h('span', { class: 'muted', id: 'ev-range' }, first === null ? 'No events here.' : `${num(first)}–${num(last)} of ${num(head)} in partition ${p}`));
    clear(list).append(rows.length ? table(null, [{ label: 'Position', num: true }, 'Created', 'Key', 'Type'], rows) : h('p', { class: 'muted' }, 'No events match.'), pager);
  }

  return { update: null };
}
