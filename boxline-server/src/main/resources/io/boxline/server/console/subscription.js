import { api, subPath, may } from './api.js';
import { h, clear, num, seconds, ago, time, badge, table, field } from './dom.js';
import { record, points, rateOf } from './history.js';
import { lineChart, heatColour } from './chart.js';
import { confirmAction, notify } from './ui.js';

// One subscription: partitions as a heat map, lag over time, members, and rebalances as they happen.
export function subscription(root, name) {
  const head = h('div', { class: 'row' }, h('h1', null, 'Subscription ', name));
  const summary = h('div', { class: 'cards' });
  const heat = h('div', { class: 'heat', id: 'heatmap' });
  const chart = h('div', { id: 'lag-chart' });
  const members = h('div', { id: 'members' });
  const program = h('section', { class: 'panel', id: 'handler', hidden: true, 'aria-labelledby': 'handler-title' });
  const rebalances = h('ol', { class: 'log', id: 'rebalances', 'aria-live': 'polite' });
  const admin = h('div', { id: 'sub-admin' });
  clear(root).append(
    head, summary,
    h('div', { class: 'split' },
      h('section', { class: 'panel', 'aria-labelledby': 'heat-title' },
        h('h2', { id: 'heat-title' }, 'Partitions'),
        h('p', { class: 'muted' }, 'Colour: events not yet handled. Select a partition to see them.'),
        heat,
        h('div', { class: 'legend' }, 'none', h('span', { class: 'swatch' }), 'most')),
      h('section', { class: 'panel', 'aria-labelledby': 'chart-title' },
        h('h2', { id: 'chart-title' }, 'Lag, last 10 minutes'), chart,
        h('h2', null, 'Rebalances'), rebalances)),
    h('section', { class: 'panel', 'aria-labelledby': 'members-title' }, h('h2', { id: 'members-title' }, 'Members'), members),
    program,
    admin);

  let owners = null;
  let lastGroup = null;
  let adminDrawn = false;

  async function update() {
    const [info, g] = await Promise.all([api(subPath(name)), api(subPath(name) + '/group')]);
    lastGroup = g;
    const at = Date.now(); // the clock every sample uses (see overview.js)
    const lag = g.partitions.reduce((a, p) => a + p.lag, 0);
    const handled = g.partitions.reduce((a, p) => a + p.cursor, 0);
    record('lag:' + name, lag, at);
    record('out:' + name, handled, at);
    const oldest = Math.max(0, ...g.partitions.map((p) => p.lagSeconds));
    clear(summary).append(
      cardOf('Lag (events)', num(lag), 'lag'),
      cardOf('Oldest unhandled', seconds(oldest), 'lag-seconds'),
      cardOf('Handled', rateOf('out:' + name) === null ? '–' : rateOf('out:' + name).toFixed(1) + '/s', 'out-rate'),
      cardOf('Members', num(g.members.length), 'members'),
      cardOf('Retrying', num(info.failures.retrying), 'retrying'),
      cardOf('Dead letters', h('a', { href: '#/failures?subscription=' + encodeURIComponent(name) }, num(info.failures.deadLetters)), 'dead-letters'));
    drawHeat(g, at);
    clear(chart).append(lineChart(points('lag:' + name), { label: 'Lag of ' + name + ' over the last 10 minutes' }));
    drawMembers(g);
    drawProgram(info.handler);
    if (!adminDrawn && may('manage')) {
      adminDrawn = true;
      drawAdmin(info);
    }
  }

  function drawHeat(g, at) {
    const max = Math.max(0, ...g.partitions.map((p) => p.lag));
    const now = {};
    clear(heat);
    for (const p of g.partitions) {
      const id = p.topic + '#' + p.partition;
      now[id] = p.owner;
      const moved = owners && owners[id] !== p.owner;
      if (moved) {
        for (const waiting of rebalances.querySelectorAll('li.muted')) waiting.remove();
        rebalances.prepend(h('li', null,
          `${new Date(at).toLocaleTimeString('en-GB')} ${p.topic} partition ${p.partition}: ${owners[id] || 'nobody'} → ${p.owner || 'nobody'}` + (p.owner ? ` (epoch ${p.epoch})` : '')));
      }
      const label = `${p.topic} partition ${p.partition}: ${p.lag} not handled, oldest ${seconds(p.lagSeconds)}, owner ${p.owner || 'none'}, epoch ${p.epoch}`;
      heat.append(h('a', {
        class: 'cell' + (moved ? ' changed' : ''), title: label, 'aria-label': label,
        href: `#/events?topic=${encodeURIComponent(p.topic)}&partition=${p.partition}&after=${p.cursor}&subscription=${encodeURIComponent(name)}`,
        dataset: { partition: p.partition, topic: p.topic, lag: p.lag, cursor: p.cursor, owner: p.owner || '' },
        style: { background: heatColour(p.lag, max) },
      },
      h('b', null, (g.partitions.some((x) => x.topic !== p.topic) ? p.topic.split('/').pop() + ' ' : '') + 'p' + p.partition),
      h('span', null, num(p.lag) + ' behind'),
      h('span', null, p.lagSeconds ? seconds(p.lagSeconds) : '—'),
      h('span', null, p.owner ? short(p.owner) : 'unowned'),
      p.owner ? h('span', { class: 'muted-small' }, 'epoch …' + String(p.epoch).slice(-4)) : null));
    }
    if (!owners && rebalances.childElementCount === 0) rebalances.append(h('li', { class: 'muted' }, 'Watching for partitions changing owner…'));
    owners = now;
  }

  function drawMembers(g) {
    const rows = g.members.map((m) => [
      m.id, num(m.weight), ago(m.lastCheckIn), time(m.deadline), num(m.leases),
      [m.host, m.process].filter(Boolean).join(' · ') || '–',
      m.inFlight.length ? m.inFlight.map((f) => `${f.topic}/${f.partition} ${f.fromSequence}–${f.toSequence}`).join(', ') : '–',
    ]);
    clear(members).append(rows.length
      ? table(null, ['Member', { label: 'Weight', num: true }, 'Last check-in', 'Deadline', { label: 'Leases', num: true }, 'Host', 'In flight'], rows)
      : h('p', { class: 'muted' }, 'No live member: nobody consumes this subscription now.'));
  }

  // The program this server runs as the subscription's consumer (config: subscriptions[].handler).
  function drawProgram(handler) {
    program.hidden = !handler;
    if (!handler) return;
    const rows = handler.processes.map((p) => [
      p.member, h('span', { class: 'badge ' + (p.state === 'running' ? 'ok' : p.state === 'backing-off' ? 'critical' : 'warn') }, p.state),
      p.pid === null ? '–' : String(p.pid), num(p.partitions), num(p.starts), num(p.crashes),
      num(p.ok), num(p.retried), num(p.dead),
      p.lastProblem ? h('span', { title: p.lastProblem }, time(p.lastProblemAt) + ': ' + p.lastProblem) : '–',
    ]);
    clear(program).append(
      h('h2', { id: 'handler-title' }, 'Handler program'),
      h('p', { class: 'muted' }, h('code', null, handler.command), handler.perEvent ? ' — a process per event' : ' — one process per member', ', run by this server'),
      table(null, ['Member', 'State', 'PID', { label: 'Partitions', num: true }, { label: 'Starts', num: true }, { label: 'Crashes', num: true },
        { label: 'OK', num: true }, { label: 'Retried', num: true }, { label: 'Dead', num: true }, 'Last problem'], rows));
  }

  function drawAdmin(info) {
    const to = h('select', { id: 'rewind-to' },
      h('option', { value: 'time' }, 'a time'), h('option', { value: 'earliest' }, 'the earliest event kept'), h('option', { value: 'latest' }, 'the latest (skip everything)'));
    const oldest = lastGroup.partitions.map((p) => p.oldestUnhandledAt).filter(Boolean).sort()[0];
    const at = h('input', { id: 'rewind-at', type: 'text', value: oldest || new Date().toISOString(), size: 28 });
    const positions = table('Positions now', ['Partition', { label: 'Handled up to', num: true }, { label: 'Head', num: true }, 'Oldest unhandled'],
      lastGroup.partitions.map((p) => [p.topic + ' / ' + p.partition, num(p.cursor), num(p.head), time(p.oldestUnhandledAt)]));
    const rewind = h('form', { class: 'form', id: 'rewind-form', onsubmit: async (e) => {
      e.preventDefault();
      const target = to.value === 'time' ? at.value.trim() : to.value;
      if (!(await confirmAction(`Rewind ${name} to ${target}? Every partition moves; events after it are delivered again.`, 'Rewind'))) return;
      try {
        await api(subPath(name) + '/rewind', { method: 'POST', body: { to: target } });
        notify(`Rewound ${name} to ${target}.`, true);
        update();
      } catch (err) { notify(err.message); }
    } }, field('Rewind to', to), field('Time (ISO-8601, prefilled with where it is now)', at), h('button', { type: 'submit' }, 'Rewind…'));

    const policyBox = h('div', { id: 'policy' });
    api(subPath(name) + '/group-policy').then((p) => {
      const inputs = {};
      const fields = Object.entries(p).map(([k, v]) => field(k, (inputs[k] = h('input', { name: k, value: String(v), size: 10 }))));
      clear(policyBox).append(h('form', { class: 'form', id: 'policy-form', onsubmit: async (e) => {
        e.preventDefault();
        const body = {};
        for (const [k, input] of Object.entries(inputs)) {
          const v = input.value.trim();
          body[k] = /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
        }
        try {
          await api(subPath(name) + '/group-policy', { method: 'PUT', body });
          notify('Group policy saved.', true);
        } catch (err) { notify(err.message); }
      } }, fields, h('button', { type: 'submit' }, 'Save policy')));
    }).catch((err) => notify(err.message));

    clear(admin).append(h('section', { class: 'panel', 'aria-labelledby': 'admin-title' },
      h('h2', { id: 'admin-title' }, 'Change'),
      h('h2', null, 'Rewind'), positions, rewind,
      h('p', { class: 'muted' }, 'Refused while members are live: stop the consumers first.'),
      h('h2', null, 'Group policy'), policyBox));
  }

  return { update };
}

const short = (id) => (id.length > 14 ? '…' + id.slice(-12) : id);

function cardOf(label, value, id) {
  return h('div', { class: 'card', dataset: { card: id } }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));
}
