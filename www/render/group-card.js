// The card of a subscribing consumer group (issue 64) in the Clients panel:
// the group as its coordinator holds it (the report's
// group.coordinator_view: state, generation, leader, each member with the
// consumer that joined as it, its partitions and when its session ends)
// and, per member, whether that consumer's process is down. Drawing only:
// who owns what and until when is the core's; this module puts it in words.
// Fetched by render/clients.js the first time a scenario has a subscribing
// consumer (not part of the page's first load).
//
// Under the members, the group's assignment history (the view's `groups`,
// the report's `groups`: consumption.rs keeps it): one lane per member over
// the run's time, a lane of the partitions nobody read, a line at now, and
// the list of changes. Each lane segment and each change carries
// data-seek=<ms>: install()'s listener seeks there on a click (a change is a
// button, so Enter and Space do it too).

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

/** What a change's state means, as a lane segment's class and words. */
const PHASE = {
  joining: 'joining, no partitions yet',
  idle: 'in the group, no partitions',
  reading: 'reads',
  rebalancing: 'rebalancing: holds but does not read',
  not_polling: 'application not polling: holds but does not read',
  process_down: 'process down: still owns, nobody reads',
  left: 'out of the group',
};

/** The history's own styles, added once per document or shadow root (not in the first load's style.css). */
const CSS = `
.ghist { margin-top: 6px; border-top: 1px solid var(--line); padding-top: 5px; }
.ghist-head { display: flex; justify-content: space-between; align-items: baseline; gap: 8px; font-size: 11.5px; flex-wrap: wrap; }
.ghist-hint { font-size: 10.5px; margin-top: 1px; }
.ghist-head b { font-size: 12px; }
.glanes { display: grid; grid-template-columns: max-content 1fr; column-gap: 8px; row-gap: 3px; align-items: center; margin: 5px 0 2px; font-size: 11px; }
.glanes .glabel { white-space: nowrap; }
.glanes .glabel small { color: var(--muted); font-family: ui-monospace, monospace; margin-left: 3px; }
.gtrack { position: relative; height: 18px; background: var(--bar); border-radius: 3px; }
.gseg { position: absolute; top: 0; bottom: 0; overflow: hidden; white-space: nowrap; font-size: 10px; line-height: 18px; padding: 0 3px; box-sizing: border-box; cursor: pointer; border-left: 1px solid var(--panel); }
.gseg.reading { background: var(--good); color: var(--panel); font-weight: 600; }
.gseg.process_down { background: var(--bad-bg) repeating-linear-gradient(135deg, transparent 0 5px, color-mix(in srgb, var(--bad) 45%, transparent) 5px 7px); color: var(--bad-text); border: 1px solid var(--bad); font-weight: 600; line-height: 16px; }
.gseg.rebalancing, .gseg.not_polling { background: var(--warn-bg); border: 1px solid var(--warn); color: var(--warn-text); line-height: 16px; }
.gseg.joining, .gseg.idle { top: 8px; bottom: 8px; background: var(--line2); padding: 0; }
.gtrack.gunread { height: auto; display: grid; gap: 1px; padding: 1px 0; }
.gurow { position: relative; height: 3px; }
.gurow i { position: absolute; top: 0; bottom: 0; background: #0072B2; cursor: pointer; }
.light .gurow i { background: #0072B2; }
.gnow { position: absolute; top: -2px; bottom: -2px; width: 2px; margin-left: -1px; background: var(--hi); pointer-events: none; }
.gaxis { display: flex; justify-content: space-between; color: var(--muted); font-size: 10px; }
.grows { position: relative; list-style: none; margin: 4px 0 0; padding: 0; max-height: 196px; overflow-y: auto; font-size: 11.5px; }
.grows li { margin: 0; }
.grows button { display: grid; grid-template-columns: 4.6em 5.6em minmax(0, 1fr); gap: 6px; width: 100%; text-align: left; background: none; border: 1px solid transparent; border-radius: 4px; padding: 2px 4px; color: var(--text); font: inherit; cursor: pointer; }
.grows button:hover { border-color: var(--line2); }
.grows button[aria-current] { background: var(--panel2); border-color: var(--accent); }
.grows .gt { font-variant-numeric: tabular-nums; color: var(--muted); }
.grows .gwho { white-space: nowrap; }
.grows .gwhat { white-space: normal; overflow-wrap: anywhere; }
.grows .gwhat.process_down, .grows .gwhat.left { color: var(--bad-text); }
.grows .gwhat.rebalancing, .grows .gwhat.not_polling { color: var(--warn-text); }
`;

/**
 * Once, when the module arrives: the history's styles in `list`'s document
 * or shadow root, and one click listener on the list of cards (they are
 * redrawn by patch(), which carries no listeners): an element with
 * data-seek takes the lab there (`opts.onSeek`).
 */
export function install(list, opts = {}) {
  const root = list.getRootNode?.() ?? document;
  const host = root === document ? document.head : root;
  if (host && !host.querySelector?.(':scope > style[data-group-history]')) host.append(h('style', { dataset: { groupHistory: '' }, text: CSS }));
  if (opts.onSeek) {
    list.addEventListener('click', (e) => {
      const at = e.target.closest?.('[data-seek]')?.dataset.seek;
      if (at != null) opts.onSeek(Number(at));
    });
  }
}

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
export function groupCard(groupId, consumers, view = null, opts = {}) {
  // The history needs the timeline's end (opts.endMs); without it the card shows the group now only.
  const history = view?.groups?.find((g) => g.group === groupId) ?? null;
  const timing = opts.endMs ? { now: view.now_ms, end: opts.endMs() } : null;
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
      h('div.gstate.muted', { text: 'The coordinator\u2019s view is unknown: no running broker leads the group\u2019s __consumer_offsets partition.' }),
      history && timing ? historyView(history, proto, timing) : null);
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
      : null,
    history && timing ? historyView(history, proto, timing) : null);
}

/** An axis label: whole seconds when they are whole. */
const secs = (ms) => (ms % 1000 ? fmtTime(ms) : `${ms / 1000} s`);

/** Partitions' numbers only, for a narrow lane segment: `orders-0, orders-1` as `0, 1`. */
const nums = (tps) => tps.map((tp) => tp.slice(tp.lastIndexOf('-') + 1)).join(', ');

/** A change in words: what the member holds from then on and what moved. */
function changeText(c) {
  const moved = [c.took.length ? `takes ${short(c.took)}` : '', c.gave_up.length ? `gives up ${short(c.gave_up)}` : ''].filter(Boolean).join('; ');
  switch (c.state) {
    case 'reading': return `${moved || 'reads'}${moved && c.partitions.length !== c.took.length ? ` · reads ${short(c.partitions)}` : moved ? '' : ` ${short(c.partitions)}`}`;
    case 'process_down': return `process down: still owns ${short(c.partitions)}, nobody reads ${c.partitions.length === 1 ? 'it' : 'them'}`;
    case 'left': return `leaves the group${c.gave_up.length ? `: ${short(c.gave_up)} free` : ''}`;
    case 'rebalancing': return `stops reading ${short(c.partitions)}: rebalancing`;
    case 'not_polling': return `stops reading ${short(c.partitions)}: not polling`;
    case 'joining': return c.gave_up.length ? `gives up ${short(c.gave_up)} and joins again` : c.generation > 0 ? 'joins again, no partitions' : PHASE.joining;
    default: return `${PHASE[c.state] || c.state}${c.gave_up.length ? ` · gives up ${short(c.gave_up)}` : ''}`;
  }
}

/**
 * The group's assignment history: `hist` is the view's entry for this group
 * ({members, changes, unread}); `timing` {now, end} in ms: the lanes span
 * the run (0 to end), filled up to now.
 */
function historyView(hist, proto, { now, end }) {
  const span = Math.max(1, end, now);
  const pct = (t) => `${Math.min(100, (t / span) * 100).toFixed(3)}%`;
  const gen = (c) => (c.generation > 0 ? `${proto.memberEpoch === 'generation' ? 'gen' : 'epoch'} ${c.generation}` : '');
  const lanes = [];
  hist.members.forEach(([consumer, memberId], m) => {
    const mine = hist.changes.filter((c) => c.member === m);
    const segs = mine.map((c, i) => {
      const to = mine[i + 1]?.at_ms ?? now;
      if (c.state === 'left' || to <= c.at_ms && i + 1 < mine.length) return null;
      const label = `${consumer} (${memberId}) from ${fmtTime(c.at_ms)}${i + 1 < mine.length ? ` to ${fmtTime(to)}` : ''}: ${PHASE[c.state] || c.state}${c.partitions.length ? ` ${list(c.partitions)}` : ''}${c.generation > 0 ? ` (${proto.memberEpoch} ${c.generation})` : ''}`;
      return h(`span.gseg.${c.state}`, {
        style: { left: pct(c.at_ms), width: `calc(${pct(Math.max(to, c.at_ms) - c.at_ms)} + 1px)` },
        title: label,
        dataset: { seek: c.at_ms, state: c.state, partitions: c.partitions.join(',') },
        text: c.partitions.length ? nums(c.partitions) : '',
      });
    });
    lanes.push(
      h('span.glabel', { dataset: { member: memberId } }, h('b', { text: consumer }), h('small', { text: memberId })),
      h('span.gtrack', { dataset: { member: memberId } }, ...segs, h('span.gnow', { style: { left: pct(now) } })));
  });
  // The partitions nobody read: one thin row per partition.
  const parts = [...new Set(hist.unread.map((u) => u.partition))];
  if (parts.length) {
    lanes.push(
      h('span.glabel', { title: 'partitions of the group that no member read' }, h('b', { text: 'no reader' })),
      h('span.gtrack.gunread', null,
        ...parts.map((p) => h('span.gurow', { dataset: { partition: p } },
          ...hist.unread.filter((u) => u.partition === p).map((u) => h('i', {
            style: { left: pct(u.from_ms), width: `calc(${pct((u.to_ms ?? now) - u.from_ms)} + 1px)` },
            title: `${p}: no member reads it from ${fmtTime(u.from_ms)}${u.to_ms == null ? ' (still)' : ` to ${fmtTime(u.to_ms)}`}`,
            dataset: { seek: u.from_ms },
          })))),
        h('span.gnow', { style: { left: pct(now) } })));
  }
  // The change in force now: the last at or before now.
  let current = -1;
  hist.changes.forEach((c, i) => {
    if (c.at_ms <= now) current = i;
  });
  // Newest first, as the narration: the change in force now leads.
  const rows = hist.changes.map((c, i) => {
    const [consumer, memberId] = hist.members[c.member];
    return h('li', null, h('button', {
      type: 'button',
      dataset: { seek: c.at_ms, member: memberId, consumer, state: c.state, generation: c.generation },
      'aria-current': i === current ? 'time' : null,
      title: `go to ${fmtTime(c.at_ms)}`,
    },
    h('span.gt', { text: fmtTime(c.at_ms) }),
    h('span.gwho', null, `${consumer} ${gen(c)}`, h('span.sr-only', { text: ` (member ${memberId})` })),
    h(`span.gwhat.${c.state}`, { text: changeText(c) })));
  }).reverse();
  return h('div.ghist', { role: 'group', 'aria-label': 'assignment history' },
    h('div.ghist-head', null,
      h('b', { text: 'Assignment over time' }),
      h('span.muted', { text: `now ${fmtTime(now)}` })),
    h('div.ghist-hint.muted', { text: 'One lane per member (its partitions by number); click a lane or a change to go to that moment.' }),
    h('div.glanes', { 'aria-hidden': 'true' }, ...lanes),
    h('div.gaxis', { 'aria-hidden': 'true' }, h('span', { text: '0 s' }), h('span', { text: secs(span / 2) }), h('span', { text: secs(span) })),
    rows.length ? h('ol.grows', { 'aria-label': `changes of the group\u2019s assignment, newest first: ${rows.length}` }, ...rows) : h('div.muted', { text: 'no member yet' }));
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
