// DOM events for documentation pages, shared by the page (index.html) and the
// <failover-lab> element. As simulated time moves forward, the new trace
// events are turned into a few CustomEvents a docs page can react to (show a
// question after the leader changes, …):
//
//   ready          the first frame is drawn            detail: { now_ms }
//   fault          a fault was applied to a broker     detail: { at_ms, fault, broker, text }
//                  (fault: crash | power_loss | shutdown | isolate; by a
//                  scenario step, a menu, a key or a method call)
//   leaderchange   the controller elected a leader     detail: the trace's leader_elected event
//                  { at_ms, topic, partition, leader, previous_leader,
//                    leader_epoch, isr, election, text }
//   recordslost    acknowledged records were lost      detail: { at_ms, topic, partition, count, cause, text, total }
//   tourstop       a guided tour reached a stop        detail: { index, count, at_ms, title, text }
//
// The element dispatches them on itself under these names (they bubble); the
// page dispatches them on `document` as `failoverlab:<name>` (failoverlab:ready,
// failoverlab:leaderchange, …). Types: failover-lab.d.ts.
//
// Time travel: going back and replaying rebuilds the run; events fire for what
// happens after the point travelled to, never again for what was replayed to
// get there.

export const EVENT_NAMES = ['ready', 'fault', 'leaderchange', 'recordslost', 'tourstop'];

const FAULTS = {
  broker_crashed: 'crash',
  broker_power_loss: 'power_loss',
  broker_shut_down: 'shutdown',
  broker_isolated: 'isolate',
};
// Past this many new trace events in one go it is a jump, not a run: only the
// newest are looked at (the count of records lost comes from the view).
const MAX_SCAN = 5000;

export class LabEvents {
  /** `target`: where to dispatch; `prefix`: '' for the element, 'failoverlab:' for the page. */
  constructor(target, prefix = '') {
    this.target = target;
    this.prefix = prefix;
    this.generation = -1;
    this.cursor = 0;
    this.lost = 0;
    this.announce = null; // optional (text) => void: speaks the key events of a frame
  }

  emit(name, detail) {
    this.target.dispatchEvent(new CustomEvent(this.prefix + name, { detail, bubbles: true }));
  }

  /** After a rebuild (seek back, switch, load): start from where the core now is. */
  rebase(lab, view) {
    this.generation = lab.generation;
    this.cursor = lab.traceLength();
    this.lost = view ? view.acked_records_lost : 0;
  }

  /** Call after the simulation moved (each drawn frame); `view` is the frame's view. */
  update(lab, view) {
    if (!lab.core) return;
    if (lab.generation !== this.generation) {
      this.rebase(lab, view);
      return;
    }
    const len = lab.traceLength();
    if (len <= this.cursor) {
      this.cursor = len;
      return;
    }
    const events = lab.traceSince(Math.max(this.cursor, len - MAX_SCAN));
    this.cursor = len;
    let lostSoFar = this.lost;
    const said = [];
    for (const ev of events) {
      if (FAULTS[ev.event] || ev.event === 'leader_elected' || ev.event === 'acked_records_lost') said.push(ev.text);
      if (FAULTS[ev.event]) {
        this.emit('fault', { at_ms: ev.at_ms, fault: FAULTS[ev.event], broker: ev.broker, text: ev.text });
      } else if (ev.event === 'leader_elected') {
        this.emit('leaderchange', { ...ev });
      } else if (ev.event === 'acked_records_lost') {
        lostSoFar += ev.count;
        this.emit('recordslost', { at_ms: ev.at_ms, topic: ev.topic, partition: ev.partition, count: ev.count, cause: ev.cause, text: ev.text, total: lostSoFar });
      }
    }
    this.lost = view ? view.acked_records_lost : lostSoFar;
    if (this.announce && said.length && events.length <= 50) this.announce(said.slice(-3).join(' '));
  }

  ready(now_ms) {
    this.emit('ready', { now_ms });
  }

  tourStop(index, count, stop) {
    this.emit('tourstop', { index, count, at_ms: stop.at_ms, title: stop.title || '', text: stop.text || '' });
  }
}
