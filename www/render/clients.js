// Producers and consumers: acked / in flight / queued / retries / failed, the errors
// they saw, consumer positions, and the always-visible count of acknowledged
// records lost.

import { h, patch, setText } from './util.js';

const WAITING = { restart: 'process down', committed: 'waiting for its committed offsets', reset: 'waiting for auto.offset.reset' };


export class ClientsPanel {
  /**
   * `opts.onAction(action)` applies a consumer step (crash_client, restart_client,
   * commit); `opts.delivery()` and `opts.story(id)` read the core's fate of
   * every record and one record's story; `opts.endMs()` is the timeline's
   * end and `opts.onSeek(t)` goes to time t (a group card's history).
   * Without them the panel only shows.
   */
  constructor(root, opts = {}) {
    this.root = root;
    this.opts = opts;
    this.lost = h('div.lost', { 'data-testid': 'acked-lost' });
    this.list = h('div.clist');
    // Buttons live outside the cards, which are redrawn as they change, so
    // keyboard focus stays on them.
    this.acts = h('div.cacts');
    this.root.append(this.lost, this.list, this.acts);
    if (opts.delivery) {
      this.fateBody = h('div.fate-body');
      this.storyEl = h('div.story', { 'aria-live': 'polite' });
      this.fate = h('details.fate', { ontoggle: () => this.fate.open && this.drawFate(true) },
        h('summary', { text: 'Fate of every record', title: 'where each record sent ended up (the report\'s delivery); pick an id for its story' }),
        this.fateBody, this.storyEl);
      this.root.append(this.fate);
    }
    this.sig = '';
    this.actSig = '';
  }

  /**
   * The fate view (render/fate.js, fetched the first time it is opened: it is
   * not part of the page's first load); redrawn at most every 400 ms while open.
   */
  drawFate(now = false) {
    if (!this.fate?.open) return;
    const t = performance.now();
    if (!now && t - (this.fateAt || 0) < 400) return;
    this.fateAt = t;
    this.fateLoad ??= import(new URL('./fate.js', import.meta.url).href).then((m) => new m.FateView(this.fateBody, this.storyEl, this.opts));
    this.fateLoad.then((v) => v.draw());
  }

  /** Crash / restart / commit buttons per consumer, rebuilt only when that set changes. */
  drawActions(consumers) {
    if (!this.opts.onAction) return;
    const sig = consumers.map((k) => `${k.id}:${k.running !== false}:${!!k.group}`).join(',');
    if (sig === this.actSig) return;
    this.actSig = sig;
    const act = (a) => this.opts.onAction(a);
    this.acts.replaceChildren(...consumers.map((k) => {
      const up = k.running !== false;
      return h('div.cact', { dataset: { consumer: k.id } },
        h('span.muted', { text: `Consumer ${k.id} process: ` }),
        h('button', { type: 'button', 'data-action': up ? 'crash_client' : 'restart_client', text: up ? 'Crash' : 'Restart',
          title: up ? 'the process dies: its positions and what it read since its last commit are gone' : 'start it again: it resumes from its group\'s committed offsets',
          onclick: () => act(up ? { crash_client: k.id } : { restart_client: k.id }) }),
        k.group && up ? h('button', { type: 'button', 'data-action': 'commit', text: 'Commit now', title: 'commitAsync() of its current positions', onclick: () => act({ commit: k.id }) }) : null);
    }));
  }

  /**
   * The group card module (render/group-card.js), fetched the first time a
   * scenario has a subscribing consumer; the panel draws again once it is in.
   */
  groupCards(consumers) {
    if (this.groupMod || !consumers.some((k) => k.group?.member)) return this.groupMod;
    this.groupLoad ??= import(new URL('./group-card.js', import.meta.url).href).then((m) => {
      this.groupMod = m;
      m.install(this.list, this.opts);
      this.sig = '';
      if (this.lastView) this.update(this.lastView);
    });
    return null;
  }

  update(view) {
    this.lastView = view;
    const lost = view.acked_records_lost;
    this.lost.classList.toggle('bad', lost > 0);
    const viol = view.invariant_violations;
    const lkey = `${lost}|${viol}`;
    if (this.lost.dataset.key !== lkey) {
      this.lost.dataset.key = lkey;
      const parts = [
        h('span.big', { text: String(lost) }),
        h('span', { text: lost === 1 ? 'acknowledged record lost' : 'acknowledged records lost' }),
      ];
      if (viol > 0) parts.push(h('span.viol', { text: `${viol} invariant violation${viol === 1 ? '' : 's'}` }));
      patch(this.lost, parts);
    }
    this.drawActions(view.consumers);
    this.drawFate();
    const st = {};
    // A consumer line to a dead or cut-off broker says so: "(follower, crashed)".
    for (const b of view.brokers) if (b.state !== 'running') st[b.id] = `, ${b.state.replace('_', ' ')}`;
    // With a group's history the card's line at now moves with the clock.
    const sig = JSON.stringify([view.producers, view.consumers, st, view.groups, view.groups && view.now_ms]);
    if (sig === this.sig) return;
    this.sig = sig;
    const items = [];
    for (const p of view.producers) {
      const errs = Object.entries(p.errors);
      items.push(
        h('div.client', { dataset: { producer: p.id } },
          h('div.chead', null, h('b', { text: `Producer ${p.id}` }),
            h('span.muted', { text: `acks=${p.acks}${p.idempotent ? ' · idempotent' : ''}` })),
          h('div.stats', null,
            stat('acked', p.acked, 'good'),
            stat('in flight', p.in_flight),
            stat('queued', p.queued, p.queued > 0 ? 'warn' : '', 'records waiting in the producer to be sent: new ones and ones waiting to be retried'),
            stat('retries', p.retries, p.retries > 0 ? 'warn' : '', 'records sent again after an error or a timeout (Kafka\'s record-retry-total)'),
            stat('failed', p.failed, p.failed > 0 ? 'bad' : '')),
          errs.length
            ? h('div.errs', null, ...errs.map(([e, n]) => h('span.err', { text: `${e} ×${n}`, title: 'errors seen by this producer', dataset: { error: e } })))
            : h('div.errs.muted', { text: 'no errors seen' }),
        ),
      );
    }
    const gm = this.groupCards(view.consumers);
    const carded = new Set();
    for (const k of view.consumers) {
      const errs = Object.entries(k.errors);
      // A subscribing group's card comes before its first consumer's.
      const gid = k.group?.member ? k.group.group_id : null;
      if (gm && gid != null && !carded.has(gid)) {
        carded.add(gid);
        items.push(gm.groupCard(gid, view.consumers.filter((x) => x.group?.member && x.group.group_id === gid), view, this.opts));
      }
      items.push(
        h('div.client', { dataset: { consumer: k.id } },
          h('div.chead', null, h('b', { text: `Consumer ${k.id}` }),
            h('span.muted', { text: `consumed ${k.consumed}${k.read_twice ? ` (${k.read_twice} read twice)` : ''}${k.client_rack ? ` · client.rack=${k.client_rack}` : ''}` }),
            k.running === false ? h('span.err', { text: 'crashed', title: 'its process is down (crash_client); restart_client starts it again' }) : null),
          k.group
            ? h('div.group', { dataset: { group: k.group.group_id } },
                h('span.muted', { text: `group ${k.group.group_id} · ` }),
                h('span', {
                  text: k.group.coordinator == null ? 'coordinator unknown' : `coordinator broker ${k.group.coordinator}`,
                  title: 'the leader of the group\'s __consumer_offsets partition',
                }),
                ...k.group.committed.map(([tp, off, ep]) => h('span.muted', {
                  text: ` · committed ${tp} @ ${off}${ep == null ? '' : ` (epoch ${ep})`}`,
                  title: `the last commit the coordinator confirmed${ep == null ? '' : `, leader epoch ${ep}`}: a restart resumes here`,
                })))
            : null,
          gm && k.group?.member ? gm.memberLine(k) : null,
          k.group && Object.keys(k.group.errors).length
            ? h('div.errs', null, ...Object.entries(k.group.errors).map(([e, n]) => h('span.err', { text: `coordinator ${e} ×${n}`, title: 'errors of its coordinator requests (FindCoordinator, OffsetFetch, OffsetCommit)', dataset: { error: e } })))
            : null,
          h('div.positions', null,
            ...(k.partitions || []).map((p) => h('span.pos', { dataset: { partition: p.partition, readingFrom: p.reading_from ?? '' } },
              h('span.muted', { text: p.partition }), p.waiting ? h('span.muted', { text: ` @ — ${WAITING[p.waiting] || p.waiting}` }) : ` @ ${p.position}`,
              p.reading_from == null ? null : h('span.from', {
                text: ` ← broker ${p.reading_from}${p.reading_from_leader ? '' : ` (${p.preferred_read_replica == null ? 'old leader' : 'follower'}${st[p.reading_from] || ''})`}`,
                title: p.reading_from_leader ? 'reads from the leader'
                  : p.preferred_read_replica == null ? 'its metadata still names the previous leader: it learns the new one from an error or a metadata refresh'
                    : 'reads from its preferred read replica (KIP-392): below that follower\'s high watermark',
              }),
              p.lag == null ? null : h('span.muted', { text: ` · lag ${p.lag}`, title: "the leader's high watermark minus this position" })))),
          k.truncations_detected > 0
            ? h('div.errs', null, h('span.err', { text: `log truncation detected ×${k.truncations_detected}` }))
            : null,
          errs.length ? h('div.errs', null, ...errs.map(([e, n]) => h('span.err', { text: `${e} ×${n}`, dataset: { error: e } }))) : null,
        ),
      );
    }
    patch(this.list, items);
  }
}

function stat(label, value, cls = '', title = undefined) {
  return h(`span.stat${cls ? '.' + cls : ''}`, title ? { title } : null, h('b', { text: String(value) }), h('small', { text: label }));
}

export { setText };
