// Panels agree with the run (issue 62, item 2): every stop of every tour
// (compare lanes included) is walked with Next, and every panel that sums up
// a broker, a partition, a lane, a client, a group or a fault is read off the
// page (its text and attributes) and compared with the report it is drawn
// from: failoverLab.report() (lane A's in compare mode) and, in a compare
// tour, each lane's own report and events (failoverLab.lanes()). What a
// panel shows that is not in the report is a defect.
//
// The expectations are written here from the report's fields, not from the
// drawing code: a panel that draws the wrong field, a stale value or a
// sentence the run contradicts fails with the tour, the stop, the panel and
// both values. Panels read at a stop:
//
//   cards      broker cards or tiles: state, partitions led (and which), the ★
//   partitions partition cards: leader, leader epoch, ISR, min.insync, badges,
//              each replica's row (role, in/out of the ISR, LEO · HW, the
//              records and uncommitted cells in the window), commit marks
//   describe   the kafka-topics.sh --describe table: every row shown
//   clients    acked-lost box, each producer's counts and errors, each
//              consumer's counts, group (coordinator, committed, errors),
//              positions (broker read from, lag), truncations
//   badges     one recovery badge per fault (what, whom, when, partitions,
//              stalled, RTO, phases), or the no-fault sentence; the strip's peak
//   overview   the 'N partitions · K not fully healthy' line and sampled
//              cells' tooltips (describe line, epoch, flags)
//   pills      each compare lane's summary pills
//   delta      the compare delta box: a ≠ row is a real difference between
//              the lanes' reports, every difference has its ≠ row (or, a
//              time figure within 1 % in every lane, its 'about the same'
//              item), the rest is named the same; 'one run so far' only
//              while the lanes' events are one
//   diverge    the divergence box: the first event where a lane's trace
//              differs from lane A's
//   fold       a lane drawn 'the same as lane A' has lane A's brokers and logs
//
// A consumer's own errors (NETWORK_EXCEPTION, NOT_LEADER_OR_FOLLOWER … on its
// card; tour 17's c-b after broker 2 dies) were in the view but not in the
// report until the report gained consumers[].errors (the test found it).
//
// The page is opened in a window tall enough for every panel to be on
// screen: in a burst of seeks (Next clicked quickly) a panel off screen waits
// (app.js `later`), and this test reads them all at once. Tour 19 (20,000
// partitions): its overview is sampled, its describe table shows 64 rows.
// Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW, tourClick } from './helpers.mjs';

let app;
const checked = {}; // panel → readings compared

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'dist', 'lanes.js')), 'run `make build` first');
  app = await startApp({ viewport: { width: 1400, height: 6000 } });
});

after(async () => {
  await app?.close();
  const total = Object.values(checked).reduce((a, b) => a + b, 0);
  console.log(`panels.test: ${total} panel readings compared with the report: ${Object.entries(checked).map(([k, n]) => `${k} ${n}`).join(', ')}`);
});

const TOURS = fs
  .readdirSync(path.join(ROOT, 'scenarios'))
  .filter((f) => /^tour-.*\.json$/.test(f))
  .sort((a, b) => parseInt(a.slice(5), 10) - parseInt(b.slice(5), 10));

/**
 * Runs in the page: reads every panel on screen and compares it with the
 * report(s). Returns { checks, wrong: ['panel: what: shows X, the report says Y'] }.
 * Self-contained (page.evaluate sends its source).
 */
function readPanels({ scenario }) {
  const wrong = [];
  let checks = 0;
  const show = (v) => JSON.stringify(v);
  const perPanel = {};
  /** One reading of `panel` compared (lanes' panels counted with the page's of their kind). */
  const count = (panel) => {
    checks++;
    const kind = panel.replace(/^lane [A-D] /, '');
    perPanel[kind] = (perPanel[kind] ?? 0) + 1;
  };
  const expect = (panel, what, got, want) => {
    count(panel);
    if (show(got) !== show(want)) wrong.push(`${panel}: ${what}: shows ${show(got)}, the report says ${show(want)}`);
  };
  const fault = (panel, what) => wrong.push(`${panel}: ${what}`);
  const text = (el) => el?.textContent ?? null;
  const visible = (el) => !!el && el.getClientRects().length > 0 && !el.closest('[hidden]');
  const name = (p) => `${p.topic}-${p.partition}`;
  const secs = (ms) => `${(ms / 1000).toFixed(3)} s`;
  const STATE = { running: 'running', crashed: 'crashed', fenced: 'fenced', isolated: 'isolated', shut_down: 'shut down' };
  // A replica's process runs (its row is not 'down') unless it crashed or was shut down.
  const alive = (r, b) => !['crashed', 'shut_down'].includes(r.brokers.find((x) => x.id === b)?.state);

  // Every panel read must be on screen (see the header: off-screen panels may wait during a burst).
  for (const el of document.querySelectorAll('main .panel, .avail-panel, #compare')) {
    if (!visible(el)) continue;
    const box = el.getBoundingClientRect();
    if (box.bottom > innerHeight) fault('page', `a panel ends at ${Math.round(box.bottom)} px, below the window (${innerHeight} px): make the window taller`);
  }

  /** min.insync.replicas as set for `lane` (its settings, then the scenario's cluster config, then Kafka's default 1). */
  const minIsrOf = (laneSettings) => {
    const set = (laneSettings || '').split(',').map((kv) => kv.split('=')).find(([k]) => k?.trim() === 'min.insync.replicas');
    return Number(set?.[1] ?? scenario.config?.['min.insync.replicas'] ?? 1);
  };

  /** Broker cards (or tiles) in `root` against report `r`. */
  function cards(panel, root, r) {
    const nodes = root.querySelectorAll('g.node.broker');
    expect(panel, 'brokers drawn', nodes.length, r.brokers.length);
    for (const g of nodes) {
      const id = Number(g.dataset.broker);
      const b = r.brokers.find((x) => x.id === id);
      if (!b) {
        fault(panel, `broker ${id} is drawn but not in the report`);
        continue;
      }
      const led = r.partitions.filter((p) => p.leader === id).map(name);
      const at = `broker ${id}`;
      expect(panel, `${at} data-state`, g.dataset.state, b.state);
      expect(panel, `${at} ★ (leads something)`, text(g.querySelector('.crown')), led.length ? '★' : '');
      if (g.classList.contains('tile')) {
        const m = /^Broker (\d+)(?: \(rack (\S+)\))?: (.+), (leads nothing|leads (\d+) partitions?)\. Click for actions\.$/.exec(text(g.querySelector('title')));
        if (!m) {
          fault(panel, `${at}: tile tooltip unreadable: ${text(g.querySelector('title'))}`);
          continue;
        }
        expect(panel, `${at} tooltip state`, m[3], STATE[b.state]);
        expect(panel, `${at} tooltip rack`, m[2] ?? null, b.rack ?? null);
        expect(panel, `${at} tooltip partitions led`, m[5] ? Number(m[5]) : 0, led.length);
        continue;
      }
      expect(panel, `${at} state`, text(g.querySelector('.state')), STATE[b.state]);
      const lead = text(g.querySelector('.sub'));
      let m;
      if (lead === 'leads nothing' || lead === '') expect(panel, `${at} partitions led ('${lead}')`, 0, led.length);
      else if ((m = /^(?:leader ×|leads )(\d+)(?: partitions?)?$/.exec(lead))) expect(panel, `${at} partitions led`, Number(m[1]), led.length);
      else if ((m = /^leads (.+)$/.exec(lead))) expect(panel, `${at} partitions led`, m[1].split(', ').sort(), [...led].sort());
      else fault(panel, `${at}: unreadable leadership line '${lead}'`);
    }
  }

  /** Partition cards in `root` against report `r` (`laneSettings`: the lane's, for min.insync). */
  function partitions(panel, root, r, laneSettings) {
    for (const card of root.querySelectorAll('.pcard')) {
      const at = card.dataset.partition;
      const p = r.partitions.find((x) => name(x) === at);
      if (!p) {
        fault(panel, `${at} is drawn but not in the report`);
        continue;
      }
      const kv = (k) => text(card.querySelector(`.phead [data-k="${k}"]`));
      expect(panel, `${at} leader`, kv('leader'), p.leader == null ? 'Leader: none' : `Leader: broker ${p.leader}`);
      expect(panel, `${at} leader epoch`, kv('epoch'), `Leader epoch: ${p.leader_epoch}`);
      const m = /^ISR: \{([\d,]*)\}\s+min\.insync=(\d+)(?: \(effective (\d+)\))?$/.exec(kv('isr'));
      if (!m) {
        fault(panel, `${at}: unreadable ISR line '${kv('isr')}'`);
        continue;
      }
      expect(panel, `${at} ISR`, m[1], p.isr.join(','));
      const minIsr = Number(m[2]);
      if (p.topic !== '__consumer_offsets') expect(panel, `${at} min.insync.replicas`, minIsr, minIsrOf(laneSettings));
      // The effective min ISR: a topic with fewer replicas than the setting needs them all (min(RF, setting)).
      const eff = Math.min(minIsr, p.replicas.length);
      expect(panel, `${at} effective min.insync`, m[3] == null ? minIsr : Number(m[3]), eff);
      const badges = [];
      if (p.leader == null) badges.push('OFFLINE');
      else if (p.isr.length < eff) badges.push('UNDER MIN ISR');
      else if (p.isr.length === eff) badges.push('AT MIN ISR');
      if (p.isr.length < p.replicas.length && p.leader != null) badges.push('UNDER-REPLICATED');
      if (p.acked_records_lost > 0) badges.push(`${p.acked_records_lost} ACKED LOST`);
      expect(panel, `${at} badges`, [...card.querySelectorAll('.badges .badge')].map(text), badges);
      // Each replica's row: the report's replica logs, one row each.
      const rows = [...card.querySelectorAll('.rrow')];
      expect(panel, `${at} replica rows`, rows.map((x) => Number(x.dataset.broker)).sort(), p.replica_logs.map((l) => l.broker).sort());
      const leaderLog = p.leader != null && alive(r, p.leader) ? p.replica_logs.find((l) => l.broker === p.leader) : null;
      for (const row of rows) {
        const b = Number(row.dataset.broker);
        const log = p.replica_logs.find((l) => l.broker === b);
        if (!log) continue;
        const who = `${at} broker ${b}`;
        expect(panel, `${who} LEO · HW`, text(row.querySelector('.rinfo')), `LEO ${log.log_end_offset} · HW ${log.high_watermark}`);
        const role = text(row.querySelector('.role'));
        if (!alive(r, b)) expect(panel, `${who} role`, role, 'down');
        else if (p.leader === b) expect(panel, `${who} role`, role, '★ leader');
        // A running replica the controller does not name leader: a follower, or one that still believes it leads.
        else if (role !== 'follower' && role !== 'stale leader') fault(panel, `${who} role: shows '${role}', the report names broker ${p.leader} leader`);
        expect(panel, `${who} in the ISR`, text(row.querySelector('.isr')), p.isr.includes(b) ? 'ISR' : 'out');
        // The window's records: offsets below this replica's LEO; above the leader's HW (its own when no live leader) uncommitted.
        const offs = [...row.querySelectorAll('.cell:not(.ghost)')].map((c) => ({ off: Number(c.dataset.off), cls: c.className }));
        const committedTo = leaderLog ? leaderLog.high_watermark : log.high_watermark;
        expect(panel, `${who} records in the window`, offs.filter((c) => c.cls.includes('rec')).map((c) => c.off), offs.filter((c) => c.off < log.log_end_offset).map((c) => c.off));
        expect(panel, `${who} uncommitted records`, offs.filter((c) => c.cls.includes('uncommitted')).map((c) => c.off), offs.filter((c) => c.off < log.log_end_offset && c.off >= committedTo).map((c) => c.off));
      }
      // Commit marks: each group's commit as its coordinator holds it (the consumer's own while no broker serves it).
      const cells = [...card.querySelectorAll('.rrow:first-of-type .cell:not(.ghost)')].map((c) => Number(c.dataset.off));
      const lo = Math.min(...cells);
      const hi = lo + cells.length;
      const want = [];
      for (const k of r.consumers) {
        for (const [tp, off] of k.group?.stored ?? k.group?.committed ?? []) {
          if (tp === at && off >= lo && off <= hi && !want.includes(`${k.group.group_id} @ ${off}`)) want.push(`${k.group.group_id} @ ${off}`);
        }
      }
      const row = card.querySelector('.cmrow');
      expect(panel, `${at} commit marks`, visible(row) ? [...row.querySelectorAll('.cm')].map((e) => text(e).replace('▾', '').trim()).sort() : [], want.sort());
    }
  }

  /** The describe table against report `r`. */
  function describe(panel, root, r) {
    // A huge cluster's table lists the first 64 partitions and says how many more there are.
    const rows = root.querySelectorAll('tr[data-partition]');
    const more = r.partitions.length > 64 ? r.partitions.length - 64 : 0;
    expect(panel, 'rows', rows.length, r.partitions.length - more);
    expect(panel, 'partitions not listed', [...root.querySelectorAll('.dnote')].map(text), more ? [`(${more} more partitions not listed)`] : []);
    const topics = [...new Set(r.partitions.map((p) => p.topic))];
    for (const head of root.querySelectorAll('.dtopic')) {
      const f = Object.fromEntries([...head.children].map((s) => [s.firstChild.textContent.replace(/: $/, ''), s.lastChild.textContent]));
      if (!topics.includes(f.Topic)) fault(panel, `a topic block '${text(head)}' names no topic of the report`);
      else expect(panel, `topic ${f.Topic} PartitionCount`, Number(f.PartitionCount), r.partitions.filter((p) => p.topic === f.Topic).length);
    }
    for (const tr of rows) {
      const p = r.partitions.find((x) => name(x) === tr.dataset.partition);
      if (!p) {
        fault(panel, `${tr.dataset.partition} is listed but not in the report`);
        continue;
      }
      const col = (c) => text(tr.querySelector(`td[data-col="${c}"]`));
      const at = tr.dataset.partition;
      expect(panel, `${at} Leader`, col('Leader'), p.leader == null ? 'none' : String(p.leader));
      expect(panel, `${at} Replicas`, col('Replicas'), p.replicas.join(','));
      expect(panel, `${at} Isr`, col('Isr'), p.isr.join(','));
      expect(panel, `${at} Elr`, col('Elr'), p.elr.join(','));
      expect(panel, `${at} LastKnownElr`, col('LastKnownElr'), p.last_known_elr.join(','));
    }
  }

  /** The clients panel against report `r`. */
  function clients(panel, root, r) {
    expect(panel, 'acknowledged records lost', text(root.querySelector('.lost .big')), String(r.acked_records_lost));
    const viol = r.invariant_violations.length;
    expect(panel, 'invariant violations', text(root.querySelector('.lost .viol')), viol ? `${viol} invariant violation${viol === 1 ? '' : 's'}` : null);
    const errs = (el, prefix = '') => [...el.querySelectorAll(':scope > .err')].map(text).filter((t) => t.startsWith(prefix));
    const chips = (o, prefix = '') => Object.entries(o).map(([e, n]) => `${prefix}${e} ×${n}`);
    const producers = root.querySelectorAll('.client[data-producer]');
    expect(panel, 'producers', [...producers].map((e) => e.dataset.producer), r.producers.map((p) => p.id));
    for (const el of producers) {
      const p = r.producers.find((x) => x.id === el.dataset.producer);
      if (!p) continue;
      const stat = (label) => [...el.querySelectorAll('.stat')].find((s) => text(s.querySelector('small')) === label)?.querySelector('b').textContent;
      const at = `producer ${p.id}`;
      expect(panel, `${at} counts`, ['acked', 'retries', 'failed'].map(stat), [p.acked, p.retries, p.failed].map(String));
      // The report's in_flight counts every record not yet answered: the panel's 'in flight' (sent) and 'queued' together.
      expect(panel, `${at} in flight + queued`, Number(stat('in flight')) + Number(stat('queued')), p.in_flight);
      expect(panel, `${at} errors`, [...el.querySelectorAll('.errs .err')].map(text), chips(p.errors));
    }
    // A group card's assignment history: its changes, newest first, are the report's groups[].changes.
    for (const card of root.querySelectorAll('.gcard')) {
      const hist = (r.groups ?? []).find((x) => x.group === card.dataset.group);
      const rows = [...card.querySelectorAll('.grows button')].map((b) => [Number(b.dataset.seek), b.dataset.member, b.dataset.state, Number(b.dataset.generation)]).reverse();
      if (rows.length || hist) expect(panel, `group ${card.dataset.group} history`, rows, hist ? hist.changes.map((c) => [c.at_ms, hist.members[c.member][1], c.state, c.generation]) : []);
    }
    const consumers = root.querySelectorAll('.client[data-consumer]');
    expect(panel, 'consumers', [...consumers].map((e) => e.dataset.consumer), r.consumers.map((k) => k.id));
    for (const el of consumers) {
      const k = r.consumers.find((x) => x.id === el.dataset.consumer);
      if (!k) continue;
      const at = `consumer ${k.id}`;
      const head = el.querySelector('.chead');
      expect(panel, `${at} consumed`, text(head.querySelector('.muted')), `consumed ${k.consumed}${k.read_twice ? ` (${k.read_twice} read twice)` : ''}${k.client_rack ? ` · client.rack=${k.client_rack}` : ''}`);
      expect(panel, `${at} crashed`, errs(head).includes('crashed'), k.running === false);
      const g = el.querySelector('.group');
      expect(panel, `${at} group`, g?.dataset.group ?? null, k.group?.group_id ?? null);
      if (g && k.group) {
        const [, coord, ...commits] = [...g.children].map(text);
        expect(panel, `${at} coordinator`, coord, k.group.coordinator == null ? 'coordinator unknown' : `coordinator broker ${k.group.coordinator}`);
        expect(panel, `${at} committed`, commits, k.group.committed.map(([tp, o, e]) => ` · committed ${tp} @ ${o}${e == null ? '' : ` (epoch ${e})`}`));
      }
      const chipsShown = [...el.querySelectorAll(':scope > .errs .err')].map(text);
      expect(panel, `${at} coordinator errors`, chipsShown.filter((t) => t.startsWith('coordinator ')), chips(k.group?.errors ?? {}, 'coordinator '));
      expect(panel, `${at} truncations`, chipsShown.filter((t) => t.startsWith('log truncation')), k.truncations_detected > 0 ? [`log truncation detected ×${k.truncations_detected}`] : []);
      expect(panel, `${at} errors`, chipsShown.filter((t) => !t.startsWith('coordinator ') && !t.startsWith('log truncation')), chips(k.errors));
      const pos = [...el.querySelectorAll('.pos')];
      expect(panel, `${at} partitions`, pos.map((e) => e.dataset.partition), k.partitions.map((p) => p.partition));
      const WAITING = { restart: 'process down', committed: 'waiting for its committed offsets', reset: 'waiting for auto.offset.reset' };
      for (const e of pos) {
        const p = k.partitions.find((x) => x.partition === e.dataset.partition);
        if (!p) continue;
        const where = `${at} ${p.partition}`;
        const [, ...rest] = [...e.childNodes].map((n) => n.textContent);
        expect(panel, `${where} position`, rest[0], p.waiting ? ` @ — ${WAITING[p.waiting] || p.waiting}` : ` @ ${p.position}`);
        const from = text(e.querySelector('.from'));
        expect(panel, `${where} reads from`, from && /^ ← broker (\d+)/.exec(from)?.[1], p.reading_from == null ? null : String(p.reading_from));
        if (from && p.reading_from != null) {
          // Not the leader: its preferred read replica (a follower), or the previous leader its metadata still names.
          const kind = p.reading_from_leader ? '' : p.preferred_read_replica == null ? 'old leader' : 'follower';
          expect(panel, `${where} reads from (which)`, /\((old leader|follower)/.exec(from)?.[1] ?? '', kind);
          const state = r.brokers.find((b) => b.id === p.reading_from)?.state;
          if (kind) expect(panel, `${where} read broker's state`, /, ([a-z ]+)\)$/.exec(from)?.[1] ?? 'running', STATE[state]);
        }
        expect(panel, `${where} lag`, [...e.querySelectorAll('.muted')].map(text).find((t) => t.startsWith(' · lag ')) ?? null, p.lag == null ? null : ` · lag ${p.lag}`);
      }
    }
  }

  /** A recovery badge's head line, read back: { action, brokers, at_ms, partitions, stalled, rto } (rto: ms, null open, 'nothing'). */
  const MS = (s) => (s === '…' ? null : s.endsWith(' ms') ? Number(s.slice(0, -3)) : Math.round(Number(s.slice(0, -2)) * 1000));
  function readBadge(t) {
    const m = /^(.+) of broker ([\d, ]+) at ([\d.]+) s · (\d+) partitions? (?:\+ (\d+) stalled )?· (?:RTO (.+)|(nothing to recover))$/.exec(t);
    if (!m) return null;
    return { action: m[1], brokers: m[2], at_ms: Math.round(Number(m[3]) * 1000), partitions: Number(m[4]), stalled: Number(m[5] ?? 0), rto: m[7] ? 'nothing' : MS(m[6]) };
  }

  /** Recovery badges and the strip in `root` against report `r`. */
  function availability(panel, root, r, now) {
    const av = r.availability;
    const badges = [...root.querySelectorAll('.rbadge')];
    expect(panel, 'faults', badges.length, av.faults.length);
    av.faults.forEach((f, i) => {
      const el = badges[i];
      if (!el) return;
      const at = `fault ${i + 1}`;
      const got = readBadge(text(el.querySelector('.rb-head')));
      if (!got) {
        fault(panel, `${at}: unreadable badge '${text(el.querySelector('.rb-head'))}'`);
        return;
      }
      const nothing = !f.partition_count && !f.stalled_partition_count;
      expect(panel, at, got, {
        action: f.action.replace('_', ' '),
        brokers: f.brokers.join(', '),
        at_ms: f.at_ms,
        partitions: f.partition_count,
        stalled: f.stalled_partition_count,
        // A fault that made nothing unavailable has nothing to recover.
        rto: nothing ? 'nothing' : f.rto_ms,
      });
      expect(panel, `${at} still open`, el.dataset.open, f.rto_ms == null ? '1' : '0');
      const phases = [...el.querySelectorAll('.rb-phase')].map((b) => [b.dataset.phase, MS(b.lastChild.textContent.trim())]);
      expect(panel, `${at} phases`, phases, Object.entries(f.phases).map(([k, v]) => [k.replace(/_ms$/, ''), v]));
    });
    const windows = av.partitions.flatMap((p) => p.windows).filter((w) => w.from_ms <= now);
    if (!av.faults.length) {
      // With no fault yet, the badge area says whether anything was unavailable all the same.
      const said = text(root.querySelector('.avail-badges > .muted')) ?? '';
      expect(panel, "no-fault sentence: 'No fault yet' only while nothing was unavailable", said.startsWith('No fault yet'), windows.length === 0);
    }
    // The strip's tallest bucket: nothing drawn without a window, and never more than the windows so far.
    const peak = Number(root.querySelector('canvas.avail-strip')?.dataset.peak);
    count(panel);
    if (windows.length === 0 ? peak !== 0 : peak < 1 || peak > windows.length) {
      fault(panel, `strip: peak ${peak} unavailable, the report has ${windows.length} unavailability window(s) by ${secs(now)}`);
    }
  }

  /** The overview's summary line and a sample of its cells' tooltips against report `r`. */
  function overview(panel, root, r) {
    const line = text(root.querySelector('.ov-sum'));
    const m = /^([\d,]+) partitions · ([\d,]+) not fully healthy · (\d+)px cells$/.exec(line);
    if (!m) return fault(panel, `unreadable summary '${line}'`);
    const state = new Map(r.brokers.map((b) => [b.id, b.state]));
    const bad = (p) => p.leader == null || p.isr.length < p.replicas.length || state.get(p.leader) !== 'running';
    expect(panel, 'partitions', Number(m[1].replace(/,/g, '')), r.partitions.length);
    expect(panel, 'not fully healthy', Number(m[2].replace(/,/g, '')), r.partitions.filter(bad).length);
    const canvas = root.querySelector('canvas.ov-canvas');
    const pitch = Number(m[3]);
    const cols = Math.round(canvas.clientWidth / pitch);
    const n = r.partitions.length;
    // A sample: the first and last cells, spread ones, and the first few not fully healthy.
    const sample = new Set([0, n - 1, ...[1, 2, 3, 4, 5, 6, 7].map((k) => Math.floor((k * n) / 8))]);
    for (const [i] of r.partitions.entries()) if (sample.size < 14 && bad(r.partitions[i])) sample.add(i);
    const box = canvas.getBoundingClientRect();
    for (const i of sample) {
      const x = box.left + (i % cols) * pitch + pitch / 2;
      const y = box.top + Math.floor(i / cols) * pitch + pitch / 2;
      canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: x, clientY: y, bubbles: true }));
      const p = r.partitions[i];
      const tip = text(root.querySelector('.ov-line')) ?? '';
      const f = Object.fromEntries(tip.trim().split(/\s{2,}/).map((s) => [s.slice(0, s.indexOf(':')), s.slice(s.indexOf(':') + 1).trim()]));
      const at = `cell ${i}`;
      expect(panel, `${at} describe line`, [f.Topic, f.Partition, f.Leader, f.Replicas, f.Isr], [p.topic, String(p.partition), p.leader == null ? 'none' : String(p.leader), p.replicas.join(','), p.isr.join(',')]);
      const flags = text(root.querySelector('.ov-flags')) ?? '';
      expect(panel, `${at} leader epoch`, /^leader epoch (\d+)/.exec(flags)?.[1], String(p.leader_epoch));
      expect(panel, `${at} OFFLINE`, flags.includes('OFFLINE'), p.leader == null);
      expect(panel, `${at} UNDER-REPLICATED`, flags.includes('UNDER-REPLICATED'), p.isr.length < p.replicas.length);
      expect(panel, `${at} leader down`, flags.includes('leader down'), p.leader != null && state.get(p.leader) !== 'running');
      expect(panel, `${at} ACKED RECORDS LOST`, flags.includes('ACKED RECORDS LOST'), p.acked_records_lost > 0);
    }
    canvas.dispatchEvent(new MouseEvent('mouseleave'));
  }

  /**
   * A compare lane's summary, as its report says it (the expectation, written
   * from the report's fields): key → the value its pill and delta cell show.
   */
  function laneFigures(r) {
    const out = new Map();
    // The time figures' numbers: within 1 % in every lane they are 'about the same', not ≠.
    const nums = new Map();
    out.nums = nums;
    const av = r.availability;
    const p = r.partitions[0];
    out.set('lost', String(r.acked_records_lost));
    out.set('acked', String(r.producers.reduce((n, x) => n + x.acked, 0)));
    out.set('unavailable', `${(av.unavailable_ms / 1000).toFixed(3)} partition-s`);
    nums.set('unavailable', av.unavailable_ms);
    av.faults.forEach((f, n) => {
      const nothing = !f.partition_count && !f.stalled_partition_count;
      out.set(`rto-${n}`, nothing ? 'nothing to recover' : f.rto_ms == null ? 'no write yet' : `${f.rto_ms} ms`);
      if (!nothing && f.rto_ms != null) nums.set(`rto-${n}`, f.rto_ms);
    });
    out.set('p99', av.produce_latency_ms?.p99 == null ? '–' : `${av.produce_latency_ms.p99} ms`);
    if (av.produce_latency_ms?.p99 != null) nums.set('p99', av.produce_latency_ms.p99);
    out.set('leader', p.leader == null ? 'none' : `broker ${p.leader}`);
    // Offline: no leader serves a high watermark.
    out.set('hw', p.leader == null ? 'none (offline)' : String(p.high_watermark));
    const grouped = r.consumers.filter((k) => k.group);
    const groups = new Set();
    for (const k of grouped) {
      // Once per group, named after its first member: a subscribing group's state as its
      // coordinator holds it (the classic generation or the KIP-848 group epoch), and the
      // group's commit (null: no running broker leads its offsets partition).
      if (!groups.has(k.group.group_id)) {
        groups.add(k.group.group_id);
        if ('coordinator_view' in k.group) {
          const v = k.group.coordinator_view;
          const epoch = k.group.member?.protocol === 'consumer' ? 'epoch' : 'generation';
          out.set(`group-${k.id}`, v ? `${v.state} · ${epoch} ${v.generation} · ${v.members.length} members` : 'coordinator unavailable');
        }
        const s = k.group.stored;
        out.set(`committed-${k.id}`, s == null ? 'coordinator unavailable' : s.map(([tp, o, e]) => `${tp} @ ${o}${e == null ? '' : ` · epoch ${e}`}`).join(', ') || 'none');
      }
      out.set(`position-${k.id}`, k.running === false ? 'crashed' : k.positions.map(([tp, o]) => `${tp} @ ${o}`).join(', ') || '–');
      out.set(`truncations-${k.id}`, String(k.truncations_detected));
    }
    if (grouped.length) {
      const sum = (f) => r.delivery.reduce((n, d) => n + d[f].count, 0);
      out.set('twice', String(sum('consumed_twice')));
      out.set('never', String(sum('never_consumed')));
    }
    return out;
  }

  const r = failoverLab.report();
  const now = failoverLab.now();
  const lanes = failoverLab.lanes();
  const main = (sel) => document.querySelector(sel);
  const laneA = lanes[0]?.settings ?? '';
  if (visible(main('#map'))) cards('cards', main('#map'), r);
  if (visible(main('#partitions'))) partitions('partitions', main('#partitions'), r, laneA);
  if (visible(main('#availability'))) availability('badges', main('#availability'), r, now);
  if (visible(main('#overview'))) overview('overview', main('#overview'), r);
  clients('clients', main('#clients'), r);
  describe('describe', main('#describe'), r);

  if (lanes.length) {
    const L = 'ABCD';
    const figures = lanes.map((l) => laneFigures(l.report));
    lanes.forEach((l, j) => {
      const el = document.querySelector(`section.lane[data-lane="${L[j]}"]`);
      const at = `lane ${L[j]}`;
      const pills = new Map([...el.querySelectorAll('dl.lane-sum .ls')].map((x) => [x.dataset.k, text(x.querySelector('dd'))]));
      expect(`pills`, `${at} figures`, [...pills.keys()], [...figures[j].keys()]);
      for (const [k, v] of figures[j]) expect('pills', `${at} ${k}`, pills.get(k) ?? null, v);
      availability(`${at} badges`, el.querySelector('.lane-avail'), l.report, now);
      const folded = visible(el.querySelector('.lane-same'));
      if (folded) {
        // 'The same as lane A's': the brokers and the drawn partitions' logs are lane A's.
        const drawn = (rep) => [rep.brokers.map((b) => [b.id, b.state]), rep.partitions.slice(0, 2).map((p) => [p.leader, p.leader_epoch, p.isr, p.elr, p.replica_logs.map((x) => [x.broker, x.log_end_offset, x.high_watermark, x.epochs])])];
        expect('fold', `${at} drawn as lane A's cluster and logs`, drawn(l.report), drawn(lanes[0].report));
        if (j === 0) fault('fold', 'lane A is folded into itself');
      } else {
        cards(`${at} cards`, el.querySelector('.lane-map'), l.report);
        partitions(`${at} partitions`, el.querySelector('.lane-parts'), l.report, l.settings);
      }
    });
    // The delta box: ≠ rows are the keys whose values differ between the lanes.
    const keys = [...new Set(figures.flatMap((f) => [...f.keys()]))];
    const values = (k) => figures.map((f) => f.get(k) ?? '–');
    const changed = keys.filter((k) => values(k).some((v) => v !== values(k)[0]));
    const isNear = (k) => {
      const ns = figures.map((f) => f.nums.get(k));
      if (ns.some((n) => typeof n !== 'number')) return false;
      const max = Math.max(...ns);
      return max > 0 && max - Math.min(...ns) <= 0.01 * max;
    };
    const differ = changed.filter((k) => !isNear(k));
    const rows = [...document.querySelectorAll('.cmp-delta tr.differs')];
    expect('delta', '≠ rows', rows.map((tr) => tr.dataset.k).sort(), [...differ].sort());
    expect('delta', 'about the same', [...document.querySelectorAll('.cmp-delta p.cmp-near [data-k]')].map((e) => e.dataset.k).sort(), changed.filter(isNear).sort());
    for (const tr of rows) expect('delta', `≠ ${tr.dataset.k}`, [...tr.querySelectorAll('td')].map(text), values(tr.dataset.k));
    const sameLine = [...document.querySelectorAll('.cmp-delta p.cmp-same')].map(text).join(' ');
    if (differ.length) {
      for (const k of keys.filter((k) => !changed.includes(k))) {
        count('delta');
        if (!sameLine.includes(values(k)[0])) fault('delta', `'the same in every lane' does not name ${k} = ${values(k)[0]}: '${sameLine}'`);
      }
    } else expect('delta', 'no difference said', sameLine.startsWith(`No difference at ${secs(now)}`), true);
    // Where the lanes' traces first part: the first event (by index) that differs from lane A's.
    const events = lanes.map((l) => l.events);
    let div = null;
    events.slice(1).forEach((b, j) => {
      const a = events[0];
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if (a[i] && b[i] && JSON.stringify(a[i]) === JSON.stringify(b[i])) continue;
        const t = Math.min(a[i]?.at_ms ?? Infinity, b[i]?.at_ms ?? Infinity);
        if (!div || t < div.at_ms) div = { at_ms: t, lane: L[j + 1] };
        break;
      }
    });
    const box = document.querySelector('.cmp-div');
    expect('diverge', 'first divergence', visible(box) ? text(box.querySelector('.cmp-div-head span')) : null, div ? `Lanes A and ${div.lane} diverge at ${secs(div.at_ms)}` : null);
    // "One run so far" only while the lanes' events are one.
    count('delta');
    if (div && /one run so far/.test(sameLine)) fault('delta', `says '${sameLine}', but the lanes' events part at ${secs(div.at_ms)}`);
  }
  return { checks, perPanel, wrong };
}

for (const file of TOURS) {
  test(`${file}: at every stop every panel says what the report says`, async () => {
    app.errors.length = 0;
    const page = app.page;
    const scenario = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', file), 'utf8'));
    await page.goto(`${app.baseUrl}/?scenario=${file}`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
    if (scenario.compare) await page.waitForFunction(() => failoverLab.lanes().length > 1, null, { timeout: 10000 });
    const wrong = [];
    for (const [i, stop] of scenario.tour.entries()) {
      await tourClick(page.locator('#tour [data-tour="next"]'));
      assert.equal(await page.evaluate(() => failoverLab.now()), stop.at_ms, `${file} stop ${i + 1}: the stop's time`);
      const seen = await page.evaluate(readPanels, { scenario });
      for (const [k, n] of Object.entries(seen.perPanel)) checked[k] = (checked[k] ?? 0) + n;
      wrong.push(...seen.wrong.map((w) => `${file} stop ${i + 1} (${stop.at_ms} ms) ${w}`));
    }
    assert.deepEqual(wrong, [], `panels that disagree with the report:\n${wrong.join('\n')}`);
    assert.deepEqual(app.errors, []);
  });
}
