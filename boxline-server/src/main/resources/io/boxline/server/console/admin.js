import { api, apiAll, topicPath, may } from './api.js';
import { h, clear, field, table, num } from './dom.js';
import { notify } from './ui.js';

// Create topics and subscriptions, set retention: shown to admin tokens only (the server checks too).
export function admin(root) {
  if (!may('manage')) {
    clear(root).append(h('h1', null, 'Administration'), h('p', null, 'This token may not change anything.'));
    return { update: null };
  }
  const topicName = h('input', { id: 'new-topic', placeholder: 'acme/orders', required: true });
  const partitions = h('input', { id: 'new-topic-partitions', type: 'number', min: 1, max: 65536, value: 16 });
  const sequencing = h('select', { id: 'new-topic-sequencing' }, h('option', { value: 'sequencer' }, 'sequencer'), h('option', { value: 'in-transaction' }, 'in-transaction'));
  const subName = h('input', { id: 'new-sub', placeholder: 'billing', required: true });
  const subTopics = h('select', { id: 'new-sub-topics', multiple: true, size: 4 });
  const subStart = h('input', { id: 'new-sub-start', value: 'earliest', size: 24 });
  const retTopic = h('select', { id: 'ret-topic' });
  const ret = {
    maxAge: h('input', { id: 'ret-max-age', placeholder: '7d', size: 8 }),
    keepUnconsumed: h('select', { id: 'ret-keep' }, h('option', { value: 'true' }, 'yes'), h('option', { value: 'false' }, 'no')),
    maxEventsPerPartition: h('input', { id: 'ret-max-events', type: 'number', min: 0, value: 0, size: 10 }),
    abandonAfter: h('input', { id: 'ret-abandon', size: 8 }),
  };
  const topicsList = h('div');
  clear(root).append(h('h1', null, 'Administration'),
    h('section', { class: 'panel', 'aria-labelledby': 'ct' }, h('h2', { id: 'ct' }, 'Create a topic'),
      h('form', { class: 'form', id: 'topic-form', onsubmit: submit(() => api('/v1/topics', { method: 'POST', body: { name: topicName.value.trim(), partitions: Number(partitions.value), sequencing: sequencing.value } }), (t) => `Topic ${t.name} created with ${t.partitions} partitions.`) },
        field('Name (namespace/topic)', topicName), field('Partitions', partitions), field('Sequencing', sequencing), h('button', { type: 'submit' }, 'Create topic'))),
    h('section', { class: 'panel', 'aria-labelledby': 'cs' }, h('h2', { id: 'cs' }, 'Create a subscription'),
      h('form', { class: 'form', id: 'sub-form', onsubmit: submit(() => api('/v1/subscriptions', { method: 'POST', body: { name: subName.value.trim(), topics: [...subTopics.selectedOptions].map((o) => o.value), start: subStart.value.trim() } }), (s) => `Subscription ${s.name} created.`) },
        field('Name', subName), field('Topics', subTopics), field('Start (earliest, latest or a time)', subStart), h('button', { type: 'submit' }, 'Create subscription'))),
    h('section', { class: 'panel', 'aria-labelledby': 'rt' }, h('h2', { id: 'rt' }, 'Retention'),
      h('form', { class: 'form', id: 'ret-form', onsubmit: submit(() => {
        const body = { keepUnconsumed: ret.keepUnconsumed.value === 'true', maxEventsPerPartition: Number(ret.maxEventsPerPartition.value || 0) };
        if (ret.maxAge.value.trim()) body.maxAge = ret.maxAge.value.trim();
        if (ret.abandonAfter.value.trim()) body.abandonAfter = ret.abandonAfter.value.trim();
        return api(topicPath(retTopic.value) + '/retention', { method: 'PUT', body });
      }, (t) => `Retention of ${t.name} saved.`) },
        field('Topic', retTopic), field('Keep events for (e.g. 7d; empty: forever)', ret.maxAge), field('Keep unhandled events', ret.keepUnconsumed),
        field('At most events per partition (0: no limit)', ret.maxEventsPerPartition), field('Abandon idle subscriptions after', ret.abandonAfter),
        h('button', { type: 'submit' }, 'Save retention'))),
    h('section', { class: 'panel' }, topicsList));

  retTopic.addEventListener('change', () => fillRetention());

  async function refresh() {
    const topics = await apiAll('/v1/topics', 'topics');
    const keep = retTopic.value;
    clear(subTopics); clear(retTopic);
    for (const t of topics) {
      subTopics.append(h('option', { value: t.name }, t.name));
      retTopic.append(h('option', { value: t.name }, t.name));
    }
    if (keep) retTopic.value = keep;
    clear(topicsList).append(table('Topics', ['Name', { label: 'Partitions', num: true }, 'Sequencing'], topics.map((t) => [t.name, num(t.partitions), t.sequencing])));
    fillRetention();
  }

  async function fillRetention() {
    if (!retTopic.value) return;
    const t = await api(topicPath(retTopic.value));
    ret.maxAge.value = t.retention.maxAge || '';
    ret.keepUnconsumed.value = String(t.retention.keepUnconsumed);
    ret.maxEventsPerPartition.value = t.retention.maxEventsPerPartition;
    ret.abandonAfter.value = t.retention.abandonAfter || '';
  }

  function submit(call, message) {
    return async (e) => {
      e.preventDefault();
      try {
        const r = await call();
        notify(message(r), true);
        refresh();
      } catch (err) { notify(err.message); }
    };
  }

  refresh().catch((e) => notify(e.message));
  return { update: null };
}
