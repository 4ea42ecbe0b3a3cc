import { api } from './api.js';
import { h, clear, append, num, rate, seconds, badge, table } from './dom.js';
import { record, rateOf } from './history.js';

// Namespaces → topics → subscriptions, with rates from the counters sampled at every refresh. The
// server pages the topics by name (PAGE at a time); the cards count everything the token covers.
const PAGE = 50;

export function overview(root) {
  const cards = h('div', { class: 'cards', id: 'overview-cards' });
  const body = h('div', { class: 'panel', id: 'overview-table' }, h('p', { class: 'muted' }, 'Loading…'));
  const pager = h('div', { class: 'pager', id: 'overview-pager' });
  clear(root).append(h('h1', null, 'Overview'), cards, body, pager);
  // The `after` of each page shown so far: the current page is the last.
  const pages = [undefined];

  async function update() {
    const o = await api('/v1/overview', { params: { limit: PAGE, after: pages[pages.length - 1] } });
    // One clock for every sample (the browser's): the server's and the database's may differ.
    const at = Date.now();
    for (const t of o.topics) record('in:' + t.name, t.events, at);
    for (const s of o.subscriptions) {
      record('out:' + s.name, s.handled, at);
      record('lag:' + s.name, s.lag, at);
    }
    const lag = o.subscriptions.reduce((a, s) => a + s.lag, 0);
    const paged = pages.length > 1 || o.next;
    const inRate = o.topics.reduce((a, t) => a + (rateOf('in:' + t.name) || 0), 0);
    // The outbox is cluster-wide: only a token for every namespace gets it. The DOM's own append
    // would print a missing card as the text "null"; dom.js's append leaves it out.
    append(clear(cards), [
      card('Topics', num(o.totals.topics), 'topics'),
      card('Subscriptions', num(o.totals.subscriptions), 'subscriptions'),
      card(paged ? 'Events in (this page)' : 'Events in', rate(inRate), 'in-rate'),
      card(paged ? 'Lag (events, this page)' : 'Lag (events)', num(lag), 'lag'),
      card('Dead letters', num(o.totals.deadLetters), 'dead-letters'),
      o.outbox ? card('Outbox backlog', num(o.outbox.events) + (o.outbox.events ? ' · ' + seconds(o.outbox.ageSeconds) : ''), 'outbox') : null,
    ]);
    const rows = [];
    const namespaces = [...new Set(o.topics.map((t) => t.namespace))].sort();
    for (const ns of namespaces) {
      rows.push(h('tr', { class: 'ns-row' }, h('td', { colspan: 9 }, 'namespace ' + ns)));
      for (const t of o.topics.filter((x) => x.namespace === ns)) {
        rows.push(h('tr', { dataset: { topic: t.name } },
          h('td', null, h('a', { href: '#/events?topic=' + encodeURIComponent(t.name) }, t.name)),
          h('td', { class: 'muted' }, `topic · ${t.partitions} partitions · ${t.sequencing}`),
          h('td', { class: 'num', dataset: { field: 'events' } }, num(t.events)),
          h('td', { class: 'num', dataset: { field: 'in-rate' } }, rate(rateOf('in:' + t.name))),
          h('td', { colspan: 5 })));
        for (const s of o.subscriptions.filter((x) => x.topics.includes(t.name))) {
          rows.push(subscriptionRow(s, t.name));
        }
      }
    }
    const headers = ['Name', 'What', { label: 'Events', num: true }, { label: 'In / out', num: true },
      { label: 'Lag', num: true }, { label: 'Oldest unhandled', num: true }, { label: 'Retrying', num: true },
      { label: 'Dead letters', num: true }, 'Health'];
    clear(body).append(
      rows.length ? table('Topics and their subscriptions', headers, rows) : h('p', { class: 'muted' }, 'No topics yet.'),
      h('p', { class: 'muted' }, `Read at ${new Date(at).toLocaleTimeString('en-GB')}; rates over the last 10 s of samples.`));
    const first = (pages.length - 1) * PAGE + 1;
    clear(pager).append(...(paged ? [
      h('button', { type: 'button', id: 'overview-prev', disabled: pages.length === 1, onclick: () => { pages.pop(); update(); } }, '← Previous'),
      h('span', { class: 'muted' }, ` topics ${num(first)}–${num(first + o.topics.length - 1)} of ${num(o.totals.topics)} `),
      h('button', { type: 'button', id: 'overview-next', disabled: !o.next, onclick: () => { pages.push(o.next); update(); } }, 'Next →'),
    ] : []));
  }

  function subscriptionRow(s, topic) {
    return h('tr', { dataset: { subscription: s.name, topic } },
      h('td', null, '↳ ', h('a', { href: '#/subscription/' + encodeURIComponent(s.name) }, s.name)),
      h('td', { class: 'muted' }, `subscription · ${s.members} member${s.members === 1 ? '' : 's'}`),
      h('td', { class: 'num', dataset: { field: 'handled' } }, num(s.handled)),
      h('td', { class: 'num', dataset: { field: 'out-rate' } }, rate(rateOf('out:' + s.name))),
      h('td', { class: 'num', dataset: { field: 'lag' } }, num(s.lag)),
      h('td', { class: 'num', dataset: { field: 'lag-seconds' } }, seconds(s.lagSeconds)),
      h('td', { class: 'num', dataset: { field: 'retrying' } }, num(s.retrying)),
      h('td', { class: 'num', dataset: { field: 'dead-letters' } },
        s.deadLetters ? h('a', { href: '#/failures?subscription=' + encodeURIComponent(s.name) }, num(s.deadLetters)) : '0'),
      h('td', { dataset: { field: 'health' } }, badge(s.health)));
  }

  return { update };
}

function card(label, value, id) {
  return h('div', { class: 'card', dataset: { card: id } }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));
}
