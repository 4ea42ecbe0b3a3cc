import { api, apiAll, subPath, may } from './api.js';
import { h, clear, num, time, table, field } from './dom.js';
import { eventDetail } from './eventview.js';
import { confirmAction, notify } from './ui.js';

const TABS = ['Dead letters', 'Reasons', 'Retries'];

// Retries and dead letters of one subscription: filter, group by reason, inspect, redrive or discard.
export function failures(root, params) {
  const sub = h('select', { id: 'f-subscription' });
  const f = {
    topic: h('input', { id: 'f-topic', value: params.topic || '', size: 16 }),
    type: h('input', { id: 'f-type', value: params.type || '', size: 14 }),
    key: h('input', { id: 'f-key', value: params.key || '', size: 14 }),
    error: h('input', { id: 'f-error', value: params.error || '', size: 20 }),
    olderThan: h('input', { id: 'f-older', type: 'number', min: 0, value: params.olderThan || '', size: 6 }),
    newerThan: h('input', { id: 'f-newer', type: 'number', min: 0, value: params.newerThan || '', size: 6 }),
  };
  let tab = TABS.includes(params.tab) ? params.tab : TABS[0];
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const list = h('div', { id: 'f-list', role: 'tabpanel' });
  const detail = h('div', { id: 'f-detail' }, h('p', { class: 'muted' }, 'Inspect one to see its error and payload.'));
  const actions = h('div', { class: 'row', id: 'f-actions' });
  const form = h('form', { class: 'form', id: 'f-form', onsubmit: (e) => { e.preventDefault(); pages.length = 0; load(); } },
    field('Subscription', sub), field('Topic', f.topic), field('Type', f.type), field('Key', f.key),
    field('Error contains', f.error), field('Died more than … min ago', f.olderThan), field('Died less than … min ago', f.newerThan),
    h('button', { type: 'submit' }, 'Filter'));
  clear(root).append(h('h1', null, 'Failures'), h('div', { class: 'panel' }, form), tabs, actions,
    h('div', { class: 'split' }, h('section', { class: 'panel', 'aria-label': tab }, list), h('section', { class: 'panel', 'aria-label': 'Inspect' }, detail)));

  const pages = [];
  function drawTabs() {
    clear(tabs).append(...TABS.map((t) => h('button', {
      type: 'button', role: 'tab', 'aria-selected': String(t === tab), dataset: { tab: t },
      onclick: () => { tab = t; pages.length = 0; drawTabs(); load(); },
    }, t)));
  }
  drawTabs();

  apiAll('/v1/subscriptions', 'subscriptions').then((subscriptions) => {
    for (const s of subscriptions) sub.append(h('option', { value: s.name }, s.name));
    if (params.subscription) sub.value = params.subscription;
    if (sub.value) load();
  }).catch((e) => notify(e.message));

  function filters() {
    const minutesAgo = (m) => (m === '' ? undefined : new Date(Date.now() - Number(m) * 60000).toISOString());
    return {
      topic: f.topic.value.trim(), type: f.type.value, key: f.key.value, error: f.error.value,
      deadBefore: minutesAgo(f.olderThan.value), deadAfter: minutesAgo(f.newerThan.value),
    };
  }

  async function load(after) {
    try {
      if (tab === 'Dead letters') await deadLetters(after);
      else if (tab === 'Reasons') await reasons();
      else await retries(after);
    } catch (e) { notify(e.message); }
  }

  function pager(rows, next) {
    return h('div', { class: 'pager' },
      h('button', { type: 'button', class: 'ghost', id: 'f-prev', disabled: pages.length === 0, onclick: () => { pages.pop(); load(pages[pages.length - 1]); } }, 'Previous'),
      h('button', { type: 'button', id: 'f-next', disabled: !next, onclick: () => { pages.push(next); load(next); } }, 'Next'),
      h('span', { class: 'muted' }, `${num(rows)} shown`));
  }

  const position = (e) => `${e.topic}/${e.partition}/${e.sequence}`;

  async function deadLetters(after) {
    const limit = 50;
    const r = await api(subPath(sub.value) + '/dead-letters', { params: { ...filters(), after, limit } });
    const rows = r.deadLetters.map((d) => h('tr', { dataset: { key: d.event.key || '', eventId: d.event.id } },
      h('td', null, position(d.event)), h('td', { class: 'truncate' }, d.event.key === null ? '–' : d.event.key), h('td', null, d.event.type),
      h('td', { class: 'num' }, num(d.attempts)), h('td', { class: 'truncate', title: d.lastError }, d.lastError), h('td', null, time(d.deadAt)),
      h('td', null, h('div', { class: 'row' },
        h('button', { type: 'button', class: 'ghost', onclick: () => inspect(d, 'dead') }, 'Inspect'),
        may('redrive') && d.event.key !== null
          ? h('button', { type: 'button', class: 'ghost', dataset: { action: 'redrive-key' }, onclick: () => act('redrive', { key: d.event.key }, `every dead letter of key "${d.event.key}"`) }, 'Redrive key')
          : null))));
    const next = r.deadLetters.length === limit ? position(r.deadLetters[r.deadLetters.length - 1].event) : null;
    clear(list).append(rows.length
      ? table(null, ['Position', 'Key', 'Type', { label: 'Attempts', num: true }, 'Last error', 'Died', ''], rows)
      : h('p', { class: 'muted' }, 'No dead letters match.'), pager(rows.length, next));
    clear(actions);
    if (may('redrive') && rows.length) {
      actions.append(
        h('button', { type: 'button', id: 'redrive-all', onclick: () => act('redrive', {}, 'the dead letters that match the filters') }, 'Redrive all matching…'),
        h('button', { type: 'button', class: 'danger', id: 'discard-all', onclick: () => act('discard', {}, 'the dead letters that match the filters') }, 'Discard all matching…'));
    }
  }

  async function reasons() {
    const r = await api(subPath(sub.value) + '/dead-letters/reasons', { params: { limit: 100 } });
    const rows = r.reasons.map((x) => h('tr', null,
      h('td', { class: 'num' }, num(x.count)), h('td', null, h('pre', null, x.reason || '(no error text)')),
      h('td', null, time(x.firstDeadAt)), h('td', null, time(x.lastDeadAt)),
      h('td', null, h('button', { type: 'button', class: 'ghost', onclick: () => {
        f.error.value = x.reason; tab = 'Dead letters'; pages.length = 0; drawTabs(); load();
      } }, 'Show these'))));
    clear(actions);
    clear(list).append(rows.length
      ? table('Dead letters by reason, the largest group first', [{ label: 'Count', num: true }, 'Reason', 'First died', 'Last died', ''], rows)
      : h('p', { class: 'muted' }, 'No dead letters.'));
  }

  async function retries(after) {
    const limit = 50;
    const r = await api(subPath(sub.value) + '/retries', { params: { after, limit } });
    const rows = r.retries.map((x) => h('tr', null,
      h('td', null, position(x.event)), h('td', null, x.event.key === null ? '–' : x.event.key), h('td', null, x.event.type),
      h('td', { class: 'num' }, num(x.attempts)), h('td', null, x.behindItsKey ? 'waits behind its key' : time(x.nextAttemptAt)),
      h('td', { class: 'truncate', title: x.lastError || '' }, x.lastError || '–'),
      h('td', null, h('button', { type: 'button', class: 'ghost', onclick: () => inspect(x, 'retry') }, 'Inspect'))));
    const next = r.retries.length === limit ? position(r.retries[r.retries.length - 1].event) : null;
    clear(actions);
    clear(list).append(rows.length
      ? table(null, ['Position', 'Key', 'Type', { label: 'Attempts', num: true }, 'Next attempt', 'Last error', ''], rows)
      : h('p', { class: 'muted' }, 'Nothing is being retried.'), pager(rows.length, next));
  }

  function inspect(x, kind) {
    clear(detail).append(
      h('h2', null, kind === 'dead' ? 'Dead letter' : 'Retrying'),
      h('dl', { class: 'meta' },
        h('dt', null, 'Attempts'), h('dd', null, num(x.attempts)),
        h('dt', null, 'First failed'), h('dd', null, time(x.firstFailedAt)),
        kind === 'dead' ? [h('dt', null, 'Died'), h('dd', null, time(x.deadAt))] : null),
      h('h2', null, 'Last error'), h('pre', { class: 'error-text' }, x.lastError || '–'),
      h('h2', null, 'Event'), eventDetail(x.event));
  }

  // Counts first (the server's dry run), says how many, then acts in one request.
  async function act(action, extra, what) {
    const body = { ...filters(), ...extra };
    for (const k of Object.keys(body)) if (body[k] === '' || body[k] === undefined) delete body[k];
    try {
      const dry = await api(subPath(sub.value) + '/dead-letters/' + action, { method: 'POST', body: { ...body, dryRun: true } });
      if (dry.affected === 0) { notify('Nothing matches.'); return; }
      const verb = action === 'redrive' ? 'Redrive' : 'Discard for good';
      const ok = await confirmAction(`${verb} ${num(dry.affected)} dead letter${dry.affected === 1 ? '' : 's'} of ${sub.value}: ${what}?`
        + (action === 'redrive' ? ' They are handled again in order per key.' : ' The events stay in the log.'), `${verb} ${num(dry.affected)}`);
      if (!ok) return;
      const done = await api(subPath(sub.value) + '/dead-letters/' + action, { method: 'POST', body });
      notify(`${action === 'redrive' ? 'Redriven' : 'Discarded'}: ${num(done.affected)}.`
        + (done.more ? ` More match past the limit of ${num(done.limit)}: run it again to go on.` : ''), true);
      pages.length = 0;
      load();
    } catch (e) { notify(e.message); }
  }

  return { update: null };
}
