// The card of a subscribing consumer group (issue 64) in the Clients panel:
// the group as its coordinator holds it (the report's
// group.coordinator_view: state, generation, leader, each member with the
// consumer that joined as it, its partitions and when its session ends)
// and, per member, whether that consumer's process is down. Drawing only:
// who owns what and until when is the core's; this module puts it in words.
// Fetched by render/clients.js the first time a scenario has a subscribing
// consumer (not part of the page's first load).

import { h, fmtTime } from './util.js';

/** The coordinator's group states (ClassicGroupState; KIP-848's ConsumerGroupState), in plain words. */
const STATE_TEXT = {
  Empty: 'no members',
  PreparingRebalance: 'rebalancing: waiting for the members to join again',
  CompletingRebalance: 'rebalancing: waiting for the leader\u2019s assignment',
  Reconciling: 'members are moving to the new target assignment',
  Stable: 'every member has its assignment',
};

/** What each protocol calls its numbers and its session setting. */
const PROTOCOL = {
  classic: { name: 'classic protocol', epoch: 'generation', memberEpoch: 'generation', session: 'session.timeout.ms' },
  consumer: { name: 'consumer protocol (KIP-848)', epoch: 'group epoch', memberEpoch: 'member epoch', session: 'group.consumer.session.timeout.ms' },
};

/** A member's own state (the consumer's side of the protocol). */
const MEMBER_TEXT = {
  unjoined: 'not in the group',
  joining: 'joining (JoinGroup)',
  syncing: 'waiting for its assignment (SyncGroup)',
  stable: 'stable',
};

const list = (tps) => (tps.length ? tps.join(', ') : 'no partitions');

/** `orders-0, orders-1, orders-2` as `orders 0, 1, 2`: one topic name per row keeps the table narrow. */
function short(tps) {
  if (!tps.length) return 'none';
  const byTopic = new Map();
  for (const tp of tps) {
    const i = tp.lastIndexOf('-');
    const [t, p] = [tp.slice(0, i), tp.slice(i + 1)];
    byTopic.set(t, [...(byTopic.get(t) || []), p]);
  }
  return [...byTopic].map(([t, ps]) => `${t} ${ps.join(', ')}`).join('; ');
}

/**
 * One card per subscribing group: `consumers` are the view's consumers of
 * that group (at least one has `group.member`).
 */
export function groupCard(groupId, consumers) {
  const byId = new Map(consumers.map((k) => [k.id, k]));
  // Every member's report carries the same coordinator view; a running
  // consumer also knows which broker that is.
  const cv = consumers.find((k) => k.group.coordinator_view !== undefined)?.group.coordinator_view ?? null;
  const coordinator = consumers.find((k) => k.running !== false && k.group.coordinator != null)?.group.coordinator;
  const proto = PROTOCOL[consumers[0].group.member.protocol] || PROTOCOL.classic;
  const head = h('div.chead', null,
    h('b', { text: `Group ${groupId}` }),
    h('span.muted.gproto', { text: `${proto.name}${coordinator == null ? '' : ` · coordinator broker ${coordinator}`}` }));
  if (!cv) {
    return h('div.client.gcard', { dataset: { group: groupId }, role: 'group', 'aria-label': `consumer group ${groupId}` }, head,
      h('div.gstate.muted', { text: 'The coordinator\u2019s view is unknown: no running broker leads the group\u2019s __consumer_offsets partition.' }));
  }
  const rows = [];
  for (const [memberId, tps, consumer, sessionEnds] of cv.members) {
    const k = byId.get(consumer);
    const down = k?.running === false;
    const leader = cv.leader === memberId;
    rows.push(h(`tr${down ? '.gdown' : ''}`, { dataset: { member: memberId, consumer } },
      h('th', { scope: 'row', text: consumer }),
      h('td.mono', { text: memberId }),
      h('td.mono', { text: short(tps), title: list(tps), dataset: { partitions: tps.join(',') } }),
      h('td', null, leader ? h('span.glead', { text: 'leader', title: 'the member that runs the assignor for the group (the first to join)' }) : null)));
    if (down) {
      rows.push(h('tr.gdown-note', { dataset: { member: memberId } },
        h('td', {
          colspan: 4,
          text: `\u26a0 ${consumer}: process down, still owns ${list(tps)} until its session ends at ${fmtTime(sessionEnds)} (${proto.session}): nobody reads ${tps.length === 1 ? 'it' : 'them'} meanwhile`,
        })));
    }
  }
  return h('div.client.gcard', { dataset: { group: groupId, state: cv.state, generation: cv.generation, protocol: consumers[0].group.member.protocol || 'classic' }, role: 'group', 'aria-label': `consumer group ${groupId}` },
    head,
    h('div.gstate', null,
      h('b', { text: cv.state, title: 'the group\u2019s state as its coordinator holds it' }),
      h('span', { text: ` · ${proto.epoch} ${cv.generation}` }),
      h('span.muted', { text: ` · ${STATE_TEXT[cv.state] || cv.state}` })),
    cv.members.length
      ? h('table.gmembers', null,
          h('caption.sr-only', { text: `Members of group ${groupId} as its coordinator holds them, ${proto.epoch} ${cv.generation}` }),
          h('thead', null, h('tr', null,
            h('th', { scope: 'col', text: 'consumer' }),
            h('th', { scope: 'col', text: 'member id' }),
            h('th', { scope: 'col', text: 'partitions' }),
            h('th', { scope: 'col' }, h('span.sr-only', { text: 'role' })))),
          h('tbody', null, ...rows))
      : null);
}

/** A subscribing consumer's own side of the membership, for its consumer card. */
export function memberLine(k) {
  const m = k.group.member;
  const proto = PROTOCOL[m.protocol] || PROTOCOL.classic;
  const text = m.member_id && k.running !== false
    ? `member ${m.member_id} · ${proto.memberEpoch} ${m.generation} · ${MEMBER_TEXT[m.state] || m.state}${m.rebalances ? ` · ${m.rebalances} rebalance${m.rebalances === 1 ? '' : 's'}` : ''}`
    : `member: ${k.running === false ? 'none, its process is down' : MEMBER_TEXT[m.state] || m.state}`;
  return h('div.gmember.muted', { dataset: { member: m.member_id }, text, title: 'the membership as the consumer itself knows it' });
}
