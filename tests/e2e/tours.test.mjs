// Guided tours (scenarios/tour-*.json) in the full page: each opens paused with
// its tour panel, "Next" runs the simulation to every stop in turn, pauses,
// shows the stop's text and highlights what it names (every highlight must
// find something to light up), and the tour ends with the outcome its text
// states. The what-if claims the stops make about the switches are checked
// too. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW, tourClick, tourIdle } from './helpers.mjs';
import { screenNumbers, missingNumbers, statedNumbers } from './tour-numbers.mjs';

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'scenarios', 'tour-1-leader-dies.json')), 'run `make build` first');
  app = await startApp();
});

after(async () => {
  await app?.close();
});


const part = (r) => r.partitions.find((p) => p.topic === 'orders' && p.partition === 0);

/**
 * Tour stop `i`'s claims (src/claims.rs), evaluated in the page with
 * www/question.js over what a claim reads natively: report() at the top,
 * `events` (trace(0)), `scenario` (the file as written) and, in compare
 * mode, `lanes` (each lane's settings, report and events).
 */
async function pageClaims(page, scenario, i) {
  const claims = scenario.tour[i].claims ?? [];
  if (!claims.length) return [];
  const withEvents = claims.some((c) => c.check.includes('events'));
  const values = await page.evaluate(
    async ({ claims, scenario, withEvents }) => {
      const { evaluate } = await import('/question.js');
      const root = failoverLab.report();
      root.events = withEvents ? failoverLab.trace(0) : [];
      root.scenario = scenario;
      const lanes = failoverLab.lanes();
      if (lanes.length) root.lanes = lanes.map((l) => ({ settings: l.settings, report: l.report, events: withEvents ? l.events : [] }));
      return claims.map((c) => evaluate(c.check, root));
    },
    { claims, scenario, withEvents },
  );
  return claims.map((c, j) => ({ path: `tour[${i}].claims[${j}]`, says: c.says, check: c.check, value: values[j] }));
}

// Claims the walks below evaluated on the page, and the claims of the tours they walked.
let claimsSeen = 0;
let claimsWalked = 0;

/** The outcome each tour's last stop states, checked on report(). */
const OUTCOMES = {
  'tour-1-leader-dies.json': (r) => {
    assert.equal(part(r).leader, 2);
    assert.equal(part(r).leader_epoch, 1);
    assert.deepEqual(part(r).isr, [1, 2, 3]);
    assert.equal(r.acked_records_lost, 0);
  },
  'tour-2-producer-finds-leader.json': (r) => {
    assert.equal(part(r).leader, 1);
    assert.equal(part(r).leader_epoch, 2);
    assert.equal(r.acked_records_lost, 0);
    const p1 = r.producers.find((p) => p.id === 'p1');
    assert.ok(p1.errors.NOT_LEADER_OR_FOLLOWER >= 1, 'the old leader said NOT_LEADER_OR_FOLLOWER');
    assert.ok(p1.errors.REQUEST_TIMED_OUT >= 1, 'the silent leader cost timeouts');
  },
  'tour-3-leader-epoch.json': (r) => {
    assert.equal(part(r).leader, 2);
    assert.equal(part(r).leader_epoch, 3);
    for (const l of part(r).replica_logs) assert.deepEqual(l.epochs, [[0, 0], [1, 49], [2, 349], [3, 599]], `broker ${l.broker}'s epoch cache`);
    assert.equal(r.acked_records_lost, 0);
  },
  'tour-4-unclean-election.json': (r) => {
    assert.equal(part(r).leader, 2);
    assert.equal(part(r).leader_epoch, 1);
    assert.equal(r.acked_records_lost, 269);
    assert.equal(r.consumers[0].truncations_detected, 1);
  },
  'tour-5-rejoining-leader.json': (r) => {
    assert.equal(part(r).leader, 2);
    assert.equal(part(r).leader_epoch, 1);
    assert.equal(r.acked_records_lost, 0);
    const logs = part(r).replica_logs;
    assert.equal(new Set(logs.map((l) => l.log_digest)).size, 1, 'every log ends identical');
    assert.ok(logs.every((l) => l.log_end_offset === 7 && l.high_watermark === 7));
  },
  'tour-6-leader-vs-follower.json': (r) => {
    assert.equal(part(r).leader, 1);
    assert.equal(part(r).leader_epoch, 0);
    assert.deepEqual(part(r).isr, [1, 2, 3]);
    assert.equal(r.acked_records_lost, 0);
  },
  'tour-7-acks1-loses-data.json': (r) => {
    assert.equal(part(r).leader, 2);
    assert.equal(part(r).leader_epoch, 1);
    assert.equal(r.acked_records_lost, 1);
    assert.equal(r.consumers[0].positions[0][1], 10, 'no consumer read offset 10');
  },
  'tour-8-min-insync-replicas.json': (r) => {
    assert.equal(part(r).leader, 1);
    assert.equal(part(r).leader_epoch, 0);
    assert.equal(r.acked_records_lost, 0);
    assert.ok(r.producers[0].errors.NOT_ENOUGH_REPLICAS >= 1);
  },
  'tour-10-how-long-unavailable.json': (r) => {
    assert.equal(part(r).leader, 1);
    assert.equal(part(r).leader_epoch, 2);
    assert.equal(r.acked_records_lost, 0);
    const [crash, shutdown] = r.availability.faults;
    const sum = (f) => Object.values(f.phases).reduce((a, b) => a + b, 0);
    assert.deepEqual([crash.action, crash.rto_ms, sum(crash)], ['crash', 9513, 9513]);
    assert.equal(crash.phases.detection_ms, 9001);
    assert.deepEqual([shutdown.action, shutdown.rto_ms, sum(shutdown)], ['shutdown', 10, 10]);
  },
  // Compare tours: report() is lane A's; the lanes are checked at every stop below (COMPARE).
  'tour-12-unclean-acceptable.json': (r) => {
    assert.deepEqual(r.settings, { 'unclean.leader.election.enable': false });
    assert.deepEqual([part(r).leader, part(r).leader_epoch, r.acked_records_lost], [1, 2, 0]);
  },
  'tour-13-acks1-vs-acks-all.json': (r) => {
    assert.deepEqual(r.settings, { acks: '1' });
    assert.deepEqual([part(r).leader, part(r).leader_epoch, r.acked_records_lost], [2, 1, 1]);
  },
  'tour-15-unclean-committed-offsets.json': (r) => {
    // Lane A (earliest, auto-commit): KIP-320 caught the commit beyond the new leader's log and
    // c1 rewound to the divergence point; nothing read twice as records, nothing skipped.
    assert.deepEqual(r.settings, { 'auto.offset.reset': 'earliest' });
    assert.deepEqual([part(r).leader, part(r).leader_epoch, r.acked_records_lost], [2, 1, 269]);
    const c1 = r.consumers.find((c) => c.id === 'c1');
    assert.equal(c1.truncations_detected, 1);
    assert.deepEqual(c1.group.committed, [['orders-0', 280, 1]]);
    assert.deepEqual([c1.consumed, c1.read_twice], [559, 0], 're-read offsets that hold new records are no duplicates');
    const d = r.delivery[0];
    assert.deepEqual([d.acked_lost.count, d.acked_kept.count, d.consumed.count, d.consumed_twice.count, d.never_consumed.count], [269, 330, 559, 0, 0]);
  },
  'tour-16-replication-factor.json': (r) => {
    // Lane A (rf=1): one replica on broker 1, offline since broker 1's fencing; nothing lost (a crash keeps the log).
    assert.deepEqual(r.settings, { rf: 1 });
    assert.deepEqual([part(r).replicas, part(r).leader, part(r).leader_epoch, r.acked_records_lost], [[1], null, 1, 0]);
    assert.equal(r.producers[0].acked, 99);
    assert.equal(r.producers[0].errors.NOT_ENOUGH_REPLICAS, undefined, 'effective min ISR min(1, 2) = 1: broker 1 alone acknowledged acks=all');
  },
  'tour-17-follower-fetching.json': (r) => {
    // c-b reads from broker 2 (its rack's follower) again, a replication round behind c-any on the leader.
    assert.deepEqual([part(r).leader, part(r).high_watermark, r.acked_records_lost], [1, 1399, 0]);
    const [cb, cany] = ['c-b', 'c-any'].map((id) => r.consumers.find((c) => c.id === id).partitions[0]);
    assert.deepEqual([cb.position, cb.reading_from, cb.preferred_read_replica, cb.lag], [1398, 2, 2, 1]);
    assert.deepEqual([cany.position, cany.reading_from, cany.preferred_read_replica, cany.lag], [1399, 1, null, 0]);
  },
  'tour-18-rack-loss.json': (r) => {
    // A rack of 20 out of 60 brokers, then one broker of a second rack.
    assert.equal(r.acked_records_lost, 0);
    const [rack, b21] = r.availability.faults;
    assert.deepEqual([rack.brokers.length, rack.partition_count, rack.stalled_partition_count, rack.rto_ms], [20, 1000, 2000, 9353]);
    assert.deepEqual(Object.values(rack.phases), [9001, 1, 32, 319]);
    assert.deepEqual([b21.brokers, b21.partition_count, b21.stalled_partition_count, b21.rto_ms], [[21], 80, 70, null]);
    // Nothing offline; the 150 partitions broker 21 held sit below min ISR (an ISR of one) and refuse acks=all writes.
    assert.equal(r.partitions.filter((p) => p.leader === null).length, 0);
    const below = r.partitions.filter((p) => p.isr.length < 2);
    assert.equal(below.length, 150);
    assert.ok(below.every((p) => p.replicas.includes(21) && p.elr.includes(21)), 'broker 21 moved from the ISR to the ELR');
    const stuck = r.availability.partitions.filter((p) => p.windows.at(-1)?.to_ms === null);
    assert.deepEqual([...new Set(stuck.map((p) => p.windows.at(-1).cause))], ['below_min_isr']);
    assert.equal(stuck.length, 150);
    assert.ok(r.producers[0].errors.NOT_ENOUGH_REPLICAS >= 100, 'hundreds of NOT_ENOUGH_REPLICAS');
  },
  'tour-19-rack-loss-20000.json': (r) => {
    // Tour 18's rack on 20,000 partitions: the same detection, a longer metadata phase.
    assert.equal(r.acked_records_lost, 0);
    const [rack, b21] = r.availability.faults;
    assert.deepEqual([rack.brokers.length, rack.partition_count, rack.stalled_partition_count, rack.rto_ms], [20, 6667, 13333, 8225]);
    assert.deepEqual(Object.values(rack.phases), [8001, 1, 207, 16]);
    assert.deepEqual([b21.brokers, b21.partition_count, b21.stalled_partition_count, b21.fenced_at_ms, b21.rto_ms], [[21], 549, 453, 29001, null]);
    assert.equal(r.partitions.length, 20000);
    assert.equal(r.partitions.filter((p) => p.leader === null).length, 0);
    const below = r.partitions.filter((p) => p.isr.length < 2);
    assert.equal(below.length, 549 + 453);
    assert.ok(below.every((p) => p.replicas.includes(21) && p.elr.includes(21)), 'broker 21 moved from the ISR to the ELR');
    const stuck = r.availability.partitions.filter((p) => p.windows.at(-1)?.to_ms === null);
    assert.deepEqual([...new Set(stuck.map((p) => p.windows.at(-1).cause))], ['below_min_isr']);
    assert.equal(stuck.length, 549 + 453);
  },
  'tour-11-mass-failover.json': (r) => {
    assert.equal(r.acked_records_lost, 0);
    const [crash, shutdown] = r.availability.faults;
    const sum = (f) => Object.values(f.phases).reduce((a, b) => a + b, 0);
    assert.deepEqual([crash.action, crash.partitions.length, crash.rto_ms, sum(crash)], ['crash', 100, 9036, 9036]);
    assert.deepEqual([crash.phases.detection_ms, crash.phases.metadata_ms, crash.phases.client_ms], [9001, 9, 26]);
    assert.deepEqual([shutdown.action, shutdown.partitions.length, shutdown.rto_ms, sum(shutdown)], ['shutdown', 120, 508, 508]);
    assert.deepEqual([shutdown.phases.detection_ms, shutdown.phases.metadata_ms, shutdown.phases.client_ms], [1, 9, 498]);
  },
  'tour-14-coordinator-dies.json': (r) => {
    // The coordinator moved with __consumer_offsets-23 (Utils.abs of "order-processor"'s hashCode
    // -1129616173, modulo 50) to broker 2; the restart re-read 40 records; nothing acknowledged was lost.
    const offsets = r.partitions.find((p) => p.topic === '__consumer_offsets' && p.partition === 23);
    assert.equal(offsets.leader, 2);
    const c1 = r.consumers.find((c) => c.id === 'c1');
    assert.equal(c1.group.coordinator, 2);
    assert.deepEqual(c1.group.committed, [['orders-0', 390, 0], ['orders-1', 390, 0], ['orders-2', 389, 1]]);
    assert.deepEqual(c1.group.errors, {}, 'refused connects count no error');
    assert.equal(c1.read_twice, 40);
    assert.equal(r.delivery[0].consumed_twice.count, 40);
    assert.equal(r.delivery[0].acked_lost.count, 0);
    assert.equal(r.acked_records_lost, 0);
  },
  'tour-20-member-dies.json': (r) => {
    // c1 died at 12 s and was removed only at its session's end (54.010 s); generation 2 gave its
    // partitions to c2, which started them at c1's last commit (55): offsets 55 to 59 read twice,
    // by another consumer: delivery's reread (cause rebalance), not a consumer's read_twice.
    const [c1, c2, c3] = ['c1', 'c2', 'c3'].map((id) => r.consumers.find((c) => c.id === id));
    assert.equal(c1.running, false);
    // [member id, partitions, consumer, session end]: the card's view of each member.
    assert.deepEqual(c2.group.coordinator_view.members.map((m) => m.slice(0, 3)), [['c2-2', ['orders-0', 'orders-1', 'orders-2'], 'c2'], ['c3-3', ['orders-3', 'orders-4', 'orders-5'], 'c3']]);
    assert.deepEqual([c2.group.member.generation, c2.group.member.rebalances, c3.group.member.generation], [2, 2, 2]);
    assert.deepEqual([c1.consumed, c2.consumed], [120, 1075]);
    assert.deepEqual([c1.read_twice, c2.read_twice, c3.read_twice, r.delivery[0].consumed_twice.count], [0, 0, 0, 0]);
    assert.deepEqual([r.delivery[0].reread.count, r.delivery[0].reread_causes.rebalance.count], [10, 10]);
    assert.equal(r.acked_records_lost, 0);
  },
  'tour-21-group-protocols-failover.json': (r) => {
    // Lane A (group.protocol=classic), the page's report(): c1 died at 12 s, broker 3 (the
    // coordinator) at 20 s; the new coordinator restarted every session, so c1-1 left only at
    // 74.011 s, and the eager rebalance c1's return started at 35 s waited for it: all six
    // partitions unread from 36.020 s to 74.017 s. Lane B is checked in COMPARE.
    const [c1, c2, c3] = ['c1', 'c2', 'c3'].map((id) => r.consumers.find((c) => c.id === id));
    assert.deepEqual(r.availability.not_consumed.map((w) => [w.from_ms, w.to_ms, w.max_partitions]), [[0, 6012, 6], [12000, 74017, 6]]);
    assert.deepEqual([c1.group.member.member_id, c2.group.member.generation, c2.group.coordinator_view.leader], ['c1-4', 2, 'c2-2']);
    assert.deepEqual([c2.group.commits, c3.group.commits], [9, 9]);
    assert.deepEqual([r.delivery[0].consumed.count, r.delivery[0].reread.count, r.delivery[0].reread_causes.restart.count], [2699, 10, 10]);
    assert.equal(r.acked_records_lost, 0);
  },
  'tour-22-commit-without-leader-epoch.json': (r) => {
    // Lane A (commits carry the leader epoch): c1 validated its commit 349 (epoch 0) against broker 2,
    // found epoch 0 ends at 200 and read on from there: nothing re-read, nothing skipped. Lanes B and C
    // (no epoch: OFFSET_OUT_OF_RANGE, then earliest / latest) are checked stop by stop in COMPARE.
    assert.deepEqual(r.settings, { 'sim.commit.leader.epoch': true });
    assert.deepEqual([part(r).leader, part(r).leader_epoch, r.acked_records_lost], [2, 1, 199]);
    const c1 = r.consumers.find((c) => c.id === 'c1');
    assert.deepEqual([c1.truncations_detected, c1.consumed, c1.read_twice, c1.errors.OFFSET_OUT_OF_RANGE], [1, 559, 0, undefined]);
    assert.deepEqual(c1.group.committed, [['orders-0', 370, 1]]);
    const d = r.delivery[0];
    assert.deepEqual([d.acked_lost.count, d.acked_kept.count, d.reread.count, d.consumed_twice.count, d.never_consumed.count], [199, 400, 0, 0, 0]);
  },
  'tour-9-why-not-truncate-to-hw.json': (r) => {
    assert.equal(part(r).leader, 1);
    assert.equal(part(r).leader_epoch, 1);
    assert.equal(r.acked_records_lost, 2);
    assert.ok(r.invariant_violations.some((v) => v.invariant === 'no_acked_record_lost'), 'the lost acknowledged records are reported');
    const logs = part(r).replica_logs;
    assert.ok(logs.every((l) => l.log_end_offset === 0), 'the replicas agree on the empty log: the records are gone for good');
  },
};

/**
 * Stops that narrate an event sit exactly at that event's time in the trace
 * (a change in the core that moves an event makes this fail, so the texts get
 * re-checked). The other stops describe a state between events.
 */
const ANCHORS = {
  'tour-1-leader-dies.json': { 10000: 'broker_crashed', 19004: 'became_leader', 32891: 'isr_changed' },
  'tour-2-producer-finds-leader.json': { 5005: 'produce_error', 5008: 'produce_acked', 25000: 'broker_isolated', 30000: 'produce_error', 33002: 'leader_elected', 40953: 'produce_acked', 52007: 'isr_changed' },
  'tour-3-leader-epoch.json': { 13001: 'leader_elected', 13002: 'became_leader', 22893: 'isr_changed', 43004: 'became_leader', 60002: 'broker_isolated', 69001: 'leader_elected', 95003: 'alter_partition_rejected', 96005: 'truncated' },
  'tour-4-unclean-election.json': { 15002: 'isr_changed', 39001: 'acked_records_lost', 39080: 'consumer_truncation_detected', 52893: 'truncated' },
  'tour-5-rejoining-leader.json': { 3008: 'produce_acked', 15004: 'became_leader', 15512: 'produce_acked', 27892: 'truncated', 27897: 'isr_changed' },
  'tour-6-leader-vs-follower.json': { 35000: 'produce_error', 45004: 'produce_acked', 50005: 'isr_changed' },
  'tour-7-acks1-loses-data.json': { 4004: 'produce_acked', 4100: 'broker_crashed', 13002: 'acked_records_lost', 22893: 'truncated' },
  'tour-8-min-insync-replicas.json': { 5000: 'broker_crashed', 13001: 'isr_changed', 35103: 'produce_error', 43531: 'produce_acked' },
  'tour-10-how-long-unavailable.json': { 10000: 'broker_crashed', 19001: 'leader_elected', 19003: 'became_leader', 19513: 'produce_acked', 40010: 'produce_acked' },
  'tour-18-rack-loss.json': { 10000: 'broker_crashed', 19001: 'broker_fenced', 19034: 'became_leader', 30000: 'broker_crashed' },
  // Tour 19's stop at 11225 (the RTO) has no narrated event: the last partition's
  // first write is an ack the producer does not narrate; OUTCOMES checks its 8225 ms.
  'tour-19-rack-loss-20000.json': { 3000: 'broker_crashed', 11001: 'broker_fenced', 11209: 'became_leader', 20000: 'broker_crashed', 29028: 'became_leader' },
  // Tour 11's stop at 30508 (the shutdown's RTO) has no narrated event: the last partition's
  // first write after it is an ack the producer does not narrate; OUTCOMES checks its 508 ms.
  'tour-11-mass-failover.json': { 10000: 'broker_crashed', 19001: 'broker_fenced', 19010: 'became_leader', 22889: 'broker_unfenced', 30001: 'leader_elected' },
  'tour-20-member-dies.json': { 6022: 'consumer_offset_reset', 12000: 'consumer_crashed', 57021: 'group_stable', 57027: 'committed_offset_fetched' },
  'tour-21-group-protocols-failover.json': { 12000: 'consumer_crashed', 20000: 'broker_crashed' },
  'tour-14-coordinator-dies.json': { 12000: 'broker_crashed', 16500: 'consumer_crashed', 18470: 'coordinator_found', 21001: 'leader_elected', 21022: 'coordinator_found' },
  'tour-9-why-not-truncate-to-hw.json': { 6389: 'truncated', 11001: 'acked_records_lost', 32890: 'truncated' },
  'tour-17-follower-fetching.json': { 105: 'consumer_read_replica_changed', 20001: 'consumer_preferred_replica_lost', 29970: 'consumer_read_replica_changed', 47954: 'consumer_read_replica_changed' },
  // Lane A's trace.
  'tour-16-replication-factor.json': { 10000: 'broker_crashed', 30000: 'broker_crashed' },
  'tour-12-unclean-acceptable.json': { 30000: 'broker_crashed', 39001: 'isr_changed', 52891: 'leader_elected' },
  'tour-13-acks1-vs-acks-all.json': { 4004: 'produce_acked', 13002: 'acked_records_lost' },
  'tour-15-unclean-committed-offsets.json': { 5006: 'offsets_committed', 15002: 'isr_changed', 25008: 'offsets_committed', 26000: 'consumer_crashed', 39002: 'acked_records_lost', 50007: 'offsets_committed' },
  'tour-22-commit-without-leader-epoch.json': { 5006: 'offsets_committed', 30001: 'isr_changed', 36000: 'consumer_crashed', 49002: 'acked_records_lost', 52015: 'consumer_truncation_detected' },
};

/**
 * Compare tours (scenario field "compare"): at each stop, what each lane's
 * summary row shows (lanes A, B, … in order), and last the divergence marked
 * so far. Every number a stop's text states must be on the screen at that
 * stop too.
 */
const COMPARE = {
  'tour-12-unclean-acceptable.json': {
    lanes: ['unclean.leader.election.enable=false', 'unclean.leader.election.enable=true'],
    stops: {
      29999: [{ lost: 0, leader: 1, hw: 299 }, { lost: 0, leader: 1, hw: 299 }, null],
      30000: [{ lost: 0, faultAt: 30000 }, { lost: 0, faultAt: 30000 }, null],
      // Unavailable includes the stall at the start (3 s to 15.002 s: broker 2
      // had stopped fetching but was still in the ISR, so acks=all waited).
      39001: [{ lost: 0, leader: null, unavailable: 21003 }, { lost: 269, leader: 2, epoch: 1, unavailable: 21003 }, 39001],
      // Broker 1 restarts at 50 s and registers after its start-up (sim.broker.startup.ms, 2870).
      52891: [{ lost: 0, leader: 1, epoch: 2, hw: 299, unavailable: 34893 }, { lost: 269, rto: 9803 }, 39001],
      70000: [{ lost: 0, unavailable: 34895, rto: 23017 }, { lost: 269, unavailable: 21004, rto: 9803 }, 39001],
    },
  },
  'tour-13-acks1-vs-acks-all.json': {
    lanes: ['acks=1', 'acks=all'],
    stops: {
      2500: [{ lost: 0, hw: 10 }, { lost: 0, hw: 10 }, null],
      4000: [{ lost: 0 }, { lost: 0 }, 4000],
      4004: [{ leader: 1, hw: 10, acked: 11 }, { leader: 1, hw: 10, acked: 10 }, 4000],
      13002: [{ lost: 1, leader: 2, epoch: 1 }, { lost: 0, leader: 2, epoch: 1 }, 4000],
      22895: [{ lost: 1 }, { hw: 11, rto: 9508, p99: 9608 }, 4000],
      40000: [{ lost: 1, hw: 10, p99: 7 }, { lost: 0, hw: 11, p99: 9608, rto: 9508 }, 4000],
    },
  },
  // Replicas [1], [1,2], [1,2,3]; broker 1 crashes at 10 s, broker 2 at 30 s, neither returns. The lanes
  // diverge at 0 ms: in lane B (and C) broker 2 follows broker 1 from the start.
  'tour-16-replication-factor.json': {
    lanes: ['rf=1', 'rf=2', 'rf=3'],
    stops: {
      9999: [{ lost: 0, leader: 1, hw: 99 }, { lost: 0, leader: 1, hw: 99 }, { lost: 0, leader: 1, hw: 99 }, 0],
      10000: [{ lost: 0, faultAt: 10000 }, { lost: 0, faultAt: 10000 }, { lost: 0, faultAt: 10000 }, 0],
      19600: [{ lost: 0, leader: null }, { lost: 0, leader: 2, epoch: 1, hw: 98, rto: null }, { lost: 0, leader: 2, epoch: 1, hw: 195, rto: 9513 }, 0],
      30000: [{ lost: 0, leader: null }, { lost: 0, leader: 2, hw: 98 }, { lost: 0, leader: 2, hw: 299 }, 0],
      39700: [{ lost: 0, leader: null }, { lost: 0, leader: null }, { lost: 0, leader: 3, epoch: 2, hw: 298 }, 0],
      60000: [{ lost: 0, leader: null, acked: 99 }, { lost: 0, leader: null, acked: 99 }, { lost: 0, leader: 3, hw: 298, acked: 299 }, 0],
    },
  },
  // One group under both protocols: the lanes part at 4 ms (c3's first request, JoinGroup or
  // ConsumerGroupHeartbeat, both answered COORDINATOR_LOAD_IN_PROGRESS). c1 (position, consumed)
  // is crashed from 12 s to 35 s and owns nothing until 74.015 s (A) and 75.133 s (B); "not
  // consumed" is the report's never_consumed: records written that no consumer has read yet.
  'tour-21-group-protocols-failover.json': {
    lanes: ['group.protocol=classic', 'group.protocol=consumer'],
    stops: {
      11500: [{ lost: 0, hw: 58, position: 58, consumed: 116 }, { lost: 0, hw: 58, position: 57, consumed: 64 }, 4],
      12000: [{ position: null, consumed: 120 }, { position: null, consumed: 70 }, 4],
      20000: [{ lost: 0, hw: 100, never: 80 }, { lost: 0, hw: 100, never: 79 }, 4],
      29700: [{ hw: 149, never: 178 }, { hw: 149, never: 176 }, 4],
      36100: [{ position: null, never: 242 }, { position: null, never: 240 }, 4],
      60000: [{ hw: 300, never: 959, consumed: 120 }, { hw: 300, never: 480, consumed: 70 }, 4],
      75200: [{ position: 376, twice: 10, never: 0 }, { position: 376, twice: 20, never: 0 }, 4],
      90000: [{ lost: 0, acked: 2699, twice: 10, never: 0, consumed: 910 }, { lost: 0, acked: 2699, twice: 20, never: 0, consumed: 870 }, 4],
    },
  },
  // Lanes A and B part at c1's first reset (earliest vs latest, both offset 0 in the empty log) and
  // then take the same path: the committed offset is validated, not reset. C and D never commit.
  'tour-15-unclean-committed-offsets.json': {
    lanes: [
      'auto.offset.reset=earliest',
      'auto.offset.reset=latest',
      'auto.offset.reset=earliest,enable.auto.commit=false',
      'auto.offset.reset=latest,enable.auto.commit=false',
    ],
    stops: {
      5006: [{ hw: 29, committed: '29@0', position: 29 }, { hw: 29, committed: '29@0', position: 29 }, { committed: null }, { committed: null }, 9],
      15002: [{ leader: 1, hw: 29 }, { leader: 1, hw: 29 }, { hw: 29 }, { hw: 29 }, 9],
      25008: [{ committed: '249@0', hw: 250 }, { committed: '249@0' }, { committed: null }, { committed: null }, 9],
      26000: [{ position: null, consumed: 259 }, { position: null }, { position: null }, { position: null }, 9],
      39002: [{ lost: 269, leader: 2, epoch: 1 }, { lost: 269, leader: 2, epoch: 1 }, { lost: 269 }, { lost: 269 }, 9],
      45017: [
        { committed: '249@0', position: 30, truncations: 1, hw: 181 },
        { committed: '249@0', position: 30, truncations: 1 },
        { committed: null, position: 0, truncations: 0 },
        { committed: null, position: 181, truncations: 0 },
        9,
      ],
      50007: [{ committed: '230@1' }, { committed: '230@1' }, { committed: null }, { committed: null }, 9],
      60000: [
        { lost: 269, truncations: 1, twice: 0, never: 0, committed: '280@1', consumed: 559, readTwice: 0, hw: 330 },
        { lost: 269, truncations: 1, twice: 0, never: 0, committed: '280@1' },
        { lost: 269, truncations: 0, twice: 30, never: 0 },
        { lost: 269, truncations: 0, twice: 0, never: 151 },
        9,
      ],
    },
  },
  // Lane A commits with the leader epoch, B and C without (C resets to latest). A and C part at c1's
  // first reset (earliest vs latest, both 0 in the empty log); A and B only when c1 restarts: A
  // validates its commit (truncation detected, back to 200), B and C hit OFFSET_OUT_OF_RANGE.
  'tour-22-commit-without-leader-epoch.json': {
    lanes: ['sim.commit.leader.epoch=true', 'sim.commit.leader.epoch=false', 'sim.commit.leader.epoch=false,auto.offset.reset=latest'],
    stops: {
      5006: [{ hw: 50, committed: '49@0', position: 50 }, { committed: '49@null', position: 50 }, { committed: '49@null', position: 50 }, 9],
      30001: [{ leader: 1, hw: 199 }, { leader: 1, hw: 199 }, { leader: 1, hw: 199 }, 9],
      36000: [{ position: null, consumed: 359 }, { position: null, consumed: 359 }, { position: null, consumed: 359 }, 9],
      49002: [{ lost: 199, leader: 2, epoch: 1 }, { lost: 199, leader: 2, epoch: 1 }, { lost: 199, leader: 2, epoch: 1 }, 9],
      52015: [
        { committed: '349@0', position: 200, truncations: 1, hw: 321 },
        { committed: '349@null', position: 349, truncations: 0 },
        { committed: '349@null', position: 349, truncations: 0 },
        9,
      ],
      52018: [{ position: 321, truncations: 1 }, { position: 0, truncations: 0 }, { position: 321, truncations: 0, hw: 321 }, 9],
      60000: [
        { lost: 199, truncations: 1, twice: 0, never: 0, committed: '370@1', consumed: 559, readTwice: 0, hw: 400 },
        { lost: 199, truncations: 0, twice: 200, never: 0, committed: '370@null', consumed: 759, readTwice: 200 },
        { lost: 199, truncations: 0, twice: 0, never: 121, committed: '370@null', consumed: 438 },
        9,
      ],
    },
  },
};

/** A stop's time as the tour card writes it ("11.209 s"), escaped for a RegExp. */
const fmtStop = (ms) => `${(ms / 1000).toFixed(3)} s`.replace('.', '\\.');

const TOURS = fs.readdirSync(path.join(ROOT, 'scenarios')).filter((f) => /^tour-.*\.json$/.test(f)).sort();

test('there is a tour for each failover question, plus acks=1, min.insync.replicas, pre-KIP-101 truncation, how long a failover takes, RTO during a mass failover, two compare tours, a group coordinator failover, a group member dying, committed offsets after an unclean election (compare), replication factor and fault tolerance (compare), follower fetching (KIP-392), a whole rack lost on 60 brokers and the classic vs the consumer group protocol through a coordinator failover (compare)', () => {
  assert.deepEqual(TOURS, Object.keys(OUTCOMES).sort());
  for (const f of TOURS) {
    const s = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', f), 'utf8'));
    assert.ok(s.tour.length >= 5, `${f} has at least 5 stops`);
    assert.ok(s.tour.every((st) => st.title && st.text && st.highlight?.length), `${f}: every stop has a title, a text and highlights`);
    assert.equal(s.tour.at(-1).at_ms, s.run_until_ms, `${f}: the last stop is the end of the run (its outcome)`);
  }
});

/** Every setting a scenario gives (cluster, topic, client config), as [key, value]. */
function settingsOf(s) {
  const out = Object.entries(s.config || {});
  for (const t of s.topics || []) out.push(...Object.entries(t.config || {}));
  for (const c of s.clients || []) out.push(...Object.entries(c.config || {}));
  return out;
}

test('a tour states every setting it changes, as key=value, with its reason, in its introduction (issue 16, point 9)', () => {
  for (const f of TOURS) {
    const s = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', f), 'utf8'));
    for (const [k, v] of settingsOf(s)) {
      assert.ok(s.description.includes(`${k}=${v}`), `${f}: the description states ${k}=${v}`);
    }
  }
  // Tour 9's history is right (KAFKA-10554 shipped in 2.7) and its words are a learner's, not a test's.
  const t9 = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', 'tour-9-why-not-truncate-to-hw.json'), 'utf8'));
  const last = t9.tour.find((st) => st.text.includes('KIP-101 (Kafka 0.11)')).text;
  assert.match(last, /Kafka 2\.7/);
  assert.doesNotMatch(t9.tour.map((st) => st.text).join(' '), /2\.8|invariant|no_acked_record_lost/);
  assert.ok(last.length < 600, `tour 9's last explanation is short (${last.length} chars)`);
});

// Issue 25, point 4: the welcome's first tour is written for a junior: short,
// few settings, every abbreviation spelled out where it first appears, and the
// deeper material (ELR, broker epochs, metadata replay …) left to later tours.
test('tour 1 is a junior tour: at most 260 words of stop text, at most three config keys, ISR, HW, LEO and the leader epoch explained at first use', () => {
  const s = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', 'tour-1-leader-dies.json'), 'utf8'));
  const words = s.tour.map((st) => st.text).join(' ').split(/\s+/).filter(Boolean).length;
  assert.ok(words <= 260, `tour 1's stops have ${words} words`);
  // Everything a reader of tour 1 sees, in reading order: introduction, each stop and its question.
  const all = [s.description, ...s.tour.flatMap((st) => [st.text, st.question?.text ?? '', ...(st.question?.choices ?? []).map((c) => c.text)])].join(' ');
  const keys = new Set([...all.matchAll(/\b[a-z]{2,}(?:\.[a-z]{2,})+\b/g)].map((m) => m[0]));
  for (const k of ['acks', 'retries']) if (new RegExp(`\\b${k}\\b`).test(all)) keys.add(k);
  assert.ok(keys.size <= 3, `tour 1 names ${keys.size} config keys: ${[...keys].join(', ')}`);
  for (const [abbr, full] of [['ISR', 'in-sync replicas'], ['HW', 'high watermark'], ['LEO', 'log end offset']]) {
    const i = all.search(new RegExp(`\\b${abbr}\\b`));
    assert.ok(i >= 0, `tour 1 uses ${abbr}`);
    assert.equal(all.slice(i, i + abbr.length + full.length + 2), `${abbr} (${full}`, `${abbr} is spelled out where it first appears`);
  }
  const e = all.indexOf('leader epoch');
  assert.match(all.slice(e), /^leader epoch, a term number/, 'the leader epoch is explained where it first appears');
  assert.doesNotMatch(all, /\bELR\b|eligible|broker epoch|DUPLICATE_BROKER_REGISTRATION|replay|partition epoch|preferred|rebalance/i);
});

for (const file of TOURS) {
  test(`${file}: Next walks every stop and the tour ends with its stated outcome`, async () => {
    app.errors.length = 0;
    const page = app.page;
    const scenario = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', file), 'utf8'));
    const stops = scenario.tour;
    claimsWalked += stops.reduce((k, st) => k + (st.claims?.length ?? 0), 0);
    await page.goto(`${app.baseUrl}/?scenario=${file}`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
    assert.equal(await page.evaluate(() => failoverLab.playing), false, 'a tour opens paused');
    assert.equal(await page.locator('#tour').isVisible(), true);
    assert.equal(await page.locator('#tour [data-tour="next"]').textContent(), 'Start ▶');
    const unseen = [];
    const busySeen = [];
    await page.evaluate(() => {
      // What the card shows the moment it is marked busy, and what a second
      // Next (the keyboard's N) does then.
      window.busyMarks = [];
      const card = document.querySelector('#tour');
      new MutationObserver(() => {
        if (card.getAttribute('aria-busy') !== 'true') return;
        const box = card.querySelector('.tour-busy');
        const mark = { text: box.textContent, shown: !box.hidden, next: card.querySelector('[data-tour="next"]').disabled };
        failoverLab.tourNext();
        mark.indexAfterNext = failoverLab.tour().index;
        window.busyMarks.push(mark);
      }).observe(card, { attributes: true, attributeFilter: ['aria-busy'] });
    });
    for (const [i, st] of stops.entries()) {
      await page.locator('#tour [data-tour="next"]').click();
      // A stop the core needs over half a second to reach is announced and
      // computed once the announcement is painted (tour.js BUSY_MS): the
      // observer below saw the mark as it was set.
      await page.waitForFunction(() => document.querySelector('#tour').getAttribute('aria-busy') !== 'true', null, { timeout: 120000 });
      const marks = await page.evaluate(() => window.busyMarks.splice(0));
      if (marks.length) {
        assert.equal(marks.length, 1, `stop ${i + 1}: one mark`);
        // A stop over BUSY_MS (or not estimated yet) is announced; a shorter
        // one still made in slices (over SLICE_MS) only keeps the card busy
        // for its few frames (issue 63).
        if (marks[0].shown) {
          busySeen.push(i + 1);
          assert.match(marks[0].text, new RegExp(`^Running the cluster to ${fmtStop(st.at_ms)}( \\(about [\\d.]+ s\\))?…$`), `stop ${i + 1}: the mark names the stop's time`);
        } else assert.equal(marks[0].text, '', `stop ${i + 1}: a short stop is not announced`);
        // failoverLab.tourNext() lands the stop's seek under way first (every
        // method but seek does), and goes no further: the tour is still busy.
        assert.deepEqual([marks[0].next, marks[0].indexAfterNext], [marks[0].shown, i], 'an announced stop disables Next, and a second Next meanwhile is ignored');
        assert.equal(await page.locator('#tour .tour-busy').isHidden(), true, 'the mark goes once the stop is reached');
        const waited = await page.locator('#tour [data-tour="restart"], #tour .tour-dots button').evaluateAll((bs) => bs.filter((b) => b.disabled).length);
        assert.equal(waited, 0, 'the restart button and the dots take clicks again');
      }
      // Issue 16, point 8: every number the stop states is on screen now (tour-numbers.mjs).
      for (const m of missingNumbers(st.text, await screenNumbers(page))) unseen.push(`stop ${i + 1}: ${m}`);
      // Point 2: the producer's queue is labelled for what it is.
      assert.equal(await page.locator('.client .stat small', { hasText: 'retrying' }).count(), 0, 'no "retrying" label');
      if (file === 'tour-2-producer-finds-leader.json' && i === 1) {
        // The stop narrates broker 1's answer: the map must not show it stopped yet.
        assert.equal(await page.locator('svg g[data-broker="1"]').first().getAttribute('data-state'), 'running');
      }
      if (file === 'tour-7-acks1-loses-data.json') {
        // Point 1: the producer that loses the record is an acks=1 producer, and card and switch say so.
        assert.equal(await page.locator('.client[data-producer="p1"] .chead .muted').textContent(), 'acks=1');
        assert.equal(await page.locator('#acks').inputValue(), '1');
      }
      const s = await page.evaluate(() => ({ now: failoverLab.now(), playing: failoverLab.playing, index: failoverLab.tour().index }));
      assert.deepEqual(s, { now: st.at_ms, playing: false, index: i }, `stop ${i + 1}`);
      // Issue 62: the stop's claims hold on the page too (the wasm build,
      // www/question.js), over what failoverLab gives a script.
      for (const { path: at, says, check, value } of await pageClaims(page, scenario, i)) {
        assert.equal(value, true, `${file} ${at} says ${JSON.stringify(says)}: \`${check}\` is ${JSON.stringify(value)} on the page`);
        claimsSeen += 1;
      }
      assert.equal(await page.locator('#tour .tour-title').textContent(), st.title);
      assert.equal(await page.locator('#tour .tour-text').textContent(), st.text);
      assert.equal(await page.locator('#tour .tour-count').textContent(), `${i + 1} / ${stops.length}`);
      for (const name of st.highlight) {
        const n = await page.evaluate(async (nm) => {
          const { highlightSelectors } = await import('/tour.js');
          return highlightSelectors(nm).reduce((k, sel) => k + document.querySelectorAll(`${sel}.tour-hl`).length, 0);
        }, name);
        assert.ok(n > 0, `${file} stop ${i + 1}: highlight "${name}" lights up something`);
      }
    }
    assert.deepEqual(unseen, [], `${file}: numbers a stop states that the screen does not show`);
    if (file === 'tour-19-rack-loss-20000.json') {
      // Its longer stops take the page seconds (3.16x real time in Chromium): announced.
      assert.ok(busySeen.length >= 2, `tour 19 marks its slow stops busy (marked: ${busySeen.join(', ') || 'none'})`);
    }
    assert.equal(await page.locator('#tour [data-tour="next"]').isDisabled(), true, 'Next is disabled at the last stop');
    const trace = await page.evaluate(() => failoverLab.trace(0).map((e) => [e.at_ms, e.event]));
    for (const [at, kind] of Object.entries(ANCHORS[file])) {
      assert.ok(stops.some((st) => st.at_ms === Number(at)), `${file}: a stop at ${at}`);
      assert.ok(trace.some(([t, k]) => t === Number(at) && k === kind), `${file}: a ${kind} event at exactly ${at} ms`);
    }
    const final = await page.evaluate(() => failoverLab.report());
    OUTCOMES[file](final);
    // Back goes to the previous stop (rewinding the deterministic run).
    await tourClick(page.locator('#tour [data-tour="back"]'));
    assert.equal(await page.evaluate(() => failoverLab.now()), stops.at(-2).at_ms);
    if (file === 'tour-19-rack-loss-20000.json') {
      // Issue 27, point 4: the 20,000-partition cluster scrubs back and forth to the same run.
      const seen = await page.evaluate(() => {
        const at = (t) => {
          failoverLab.seek(t);
          const r = failoverLab.report();
          return [failoverLab.now(), r.trace_hash, r.availability.faults.length, r.availability.faults[0]?.phases.metadata_ms ?? null];
        };
        return [5000, 11209, 2500, 32000].map(at);
      });
      assert.deepEqual(seen.map(([t, , n, m]) => [t, n, m]), [[5000, 1, null], [11209, 1, 207], [2500, 0, null], [32000, 2, 207]]);
      assert.equal(seen.at(-1)[1], final.trace_hash, 'the run after scrubbing is the run');
    }
    assert.deepEqual(app.errors, []);
  });
}

test("tour 19's long stops are run a slice per frame with a bar on the card while the page answers, and a drag of the timeline meanwhile takes over (issue 27, point 4)", async () => {
  app.errors.length = 0;
  const page = app.page;
  await page.goto(`${app.baseUrl}/?scenario=tour-19-rack-loss-20000.json`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  // Only the `seeking` getter is read while a stop runs: every other method
  // of failoverLab lands the seek first.
  // Start (2.5 s) and 3 s are near; 11.001 s is eight simulated seconds of 20,000 partitions away.
  for (let i = 0; i < 2; i++) await tourClick(page.locator('#tour [data-tour="next"]'));
  assert.equal(await page.evaluate(() => failoverLab.tour().index), 1);
  const seen = await page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const card = document.querySelector('#tour');
    const bar = card.querySelector('.tour-busy .tl-bar');
    card.querySelector('[data-tour="next"]').click();
    const out = [];
    for (let i = 0; i < 5000 && card.getAttribute('aria-busy') === 'true'; i++) {
      const seeking = failoverLab.seeking;
      out.push({ width: parseFloat(bar.firstChild.style.width), target: seeking?.target ?? null, landed: !seeking && failoverLab.now() === 11001, next: card.querySelector('[data-tour="next"]').disabled, bar: !bar.hidden && bar.getAttribute('aria-hidden') === 'true' });
      await frame();
    }
    return out;
  });
  assert.ok(seen.length >= 4, `the page drew ${seen.length} frames while the stop ran`);
  // The stop's card arrives in a task of its own after the landed world is
  // drawn (issue 63): the last frame may see the seek landed and drawn, the
  // card still busy (a click on it meanwhile is ignored, as during the seek).
  const under = seen.filter((x) => !x.landed);
  assert.ok(under.length >= seen.length - 1 && seen.slice(under.length).every((x) => x.landed), `landed only at the end: ${JSON.stringify(seen.map((x) => x.landed))}`);
  // A stop whose cost is not known yet (a lab that has not timed its pace:
  // the first Nexts may have been too short to) is announced once it has
  // taken BUSY_MS (300 ms); from then on Next waits and the bar shows.
  const said = under.findIndex((x) => x.next);
  assert.ok(under.every((x) => x.target === 11001), 'the seek to the stop is under way');
  assert.ok(said >= 0 && under.slice(said).every((x) => x.next && x.bar), `announced, then Next waits and the bar shows (not read out): ${JSON.stringify(under.map((x) => [x.next, x.bar]))}`);
  assert.ok(seen.every((x, i) => i === 0 || x.width >= seen[i - 1].width) && seen.at(-1).width > 0, `the bar fills: ${seen.map((x) => x.width)}`);
  assert.deepEqual(await page.evaluate(() => ({ now: failoverLab.now(), index: failoverLab.tour().index })), { now: 11001, index: 2 }, 'it arrives at stop 3');
  // Stops 4 and 5 are near; stop 6 (20 s) is far: a drag of the timeline half-way takes over.
  for (let i = 0; i < 2; i++) await tourClick(page.locator('#tour [data-tour="next"]'));
  const took = await page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const card = document.querySelector('#tour');
    card.querySelector('[data-tour="next"]').click();
    for (let i = 0; i < 3; i++) await frame();
    const during = { busy: card.getAttribute('aria-busy'), target: failoverLab.seeking?.target ?? null };
    const range = document.getElementById('timeline');
    range.value = '15000';
    range.dispatchEvent(new Event('input', { bubbles: true }));
    range.dispatchEvent(new Event('change', { bubbles: true }));
    for (let i = 0; i < 5000 && failoverLab.seeking; i++) await frame();
    await frame();
    return { during, busy: card.getAttribute('aria-busy'), hidden: card.querySelector('.tour-busy').hidden, now: failoverLab.now(), index: failoverLab.tour().index };
  });
  assert.deepEqual(took.during, { busy: 'true', target: 20000 });
  assert.deepEqual({ ...took, during: null }, { during: null, busy: null, hidden: true, now: 15000, index: 4 }, 'the drag took over: the world is at 15 s, the tour still at stop 5, the card no longer busy');
  assert.deepEqual(app.errors, []);
});

test("a link into tour 19's stop 3 opens at once, says how far the run got while the page answers, and lands on the stop's run (issue 63)", async () => {
  app.errors.length = 0;
  const page = app.page;
  await page.goto(`${app.baseUrl}/?scenario=tour-19-rack-loss-20000.json&stop=3`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  const ready = await page.evaluate(() => ({ target: failoverLab.seeking?.target, busy: document.querySelector('#tour').getAttribute('aria-busy') }));
  assert.deepEqual(ready, { target: 11001, busy: 'true' }, 'the stop is under way once the page is ready, not reached in one task');
  // A fresh lab's stop has no estimate: the card says so once it has taken BUSY_MS (300 ms).
  await page.waitForFunction(() => !document.querySelector('#tour .tour-busy').hidden, null, { timeout: 10000 });
  const seen = await page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const card = document.querySelector('#tour');
    const box = card.querySelector('.tour-busy');
    const bar = box.querySelector('.tl-bar');
    const first = { seeking: failoverLab.seeking, busy: card.getAttribute('aria-busy'), shown: !box.hidden, text: box.textContent };
    // The page answers meanwhile: the help opens and closes, and the replay goes on.
    document.getElementById('help-btn').click();
    const help = { open: !document.getElementById('help').hidden, seeking: failoverLab.seeking !== null };
    document.getElementById('help-btn').click();
    const widths = [];
    for (let i = 0; i < 20000 && card.getAttribute('aria-busy') === 'true'; i++) {
      widths.push(parseFloat(bar.firstChild.style.width));
      await frame();
    }
    await frame();
    return { first, help, widths, after: { seeking: failoverLab.seeking, now: failoverLab.now(), index: failoverLab.tour().index, hash: failoverLab.report().trace_hash } };
  });
  assert.equal(seen.first.seeking?.target, 11001, 'the stop is under way once the page is ready, not reached in one task');
  assert.deepEqual([seen.first.busy, seen.first.shown], ['true', true]);
  assert.match(seen.first.text, /^Running the cluster to 11\.001 s( \(about [\d.]+ s\))?…$/);
  assert.deepEqual(seen.help, { open: true, seeking: true }, 'a click is answered while the replay goes on');
  assert.ok(seen.widths.length >= 4, `the page drew ${seen.widths.length} frames on the way`);
  assert.ok(seen.widths.every((w, i) => i === 0 || w >= seen.widths[i - 1]) && seen.widths.at(-1) > 0, `the bar fills: ${seen.widths}`);
  assert.deepEqual({ ...seen.after, hash: null }, { seeking: null, now: 11001, index: 2, hash: null }, 'it lands on stop 3');
  // The run the slices built is the one a seek in one go builds.
  const again = await page.evaluate(() => {
    failoverLab.seek(0);
    failoverLab.seek(11001);
    return failoverLab.report().trace_hash;
  });
  assert.equal(seen.after.hash, again);
  assert.deepEqual(app.errors, []);
});

for (const [file, spec] of Object.entries(COMPARE)) {
  test(`${file}: a compare tour's lanes show, at every stop, the numbers its text states`, async () => {
    app.errors.length = 0;
    const page = app.page;
    const stops = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', file), 'utf8')).tour;
    await page.goto(`${app.baseUrl}/?scenario=${file}`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
    await page.waitForFunction((n) => failoverLab.lanes().length === n, spec.lanes.length, { timeout: 10000 });
    assert.deepEqual(Object.keys(spec.stops).map(Number), stops.map((s) => s.at_ms), 'every stop is checked');
    for (const st of stops) {
      await tourClick(page.locator('#tour [data-tour="next"]'));
      const lanes = await page.evaluate(() => failoverLab.lanes());
      assert.deepEqual(lanes.map((l) => l.settings), spec.lanes);
      const wants = spec.stops[st.at_ms].slice(0, -1);
      const div = spec.stops[st.at_ms].at(-1);
      assert.equal(wants.length, spec.lanes.length);
      for (const [i, want] of wants.entries()) {
        const r = lanes[i].report;
        const c = r.consumers.find((k) => k.id === 'c1');
        const sum = (f) => (r.delivery || []).reduce((n, d) => n + d[f].count, 0);
        const got = {
          lost: r.acked_records_lost,
          leader: part(r).leader,
          epoch: part(r).leader_epoch,
          hw: part(r).high_watermark,
          unavailable: r.availability.unavailable_ms,
          rto: r.availability.faults[0]?.rto_ms,
          faultAt: r.availability.faults[0]?.at_ms,
          p99: r.availability.produce_latency_ms.p99,
          acked: r.producers[0]?.acked,
          // The group consumer c1: its committed offset as OFFSET@EPOCH (null: none), its
          // position (null while crashed), truncations detected, what its card counts.
          committed: c?.group?.committed.length ? c.group.committed.map(([, o, e]) => `${o}@${e}`).join(',') : null,
          // Null while crashed, or running with no partition yet (a group member between assignments).
          position: c?.running ? (c.positions[0]?.[1] ?? null) : null,
          truncations: c?.truncations_detected,
          consumed: c?.consumed,
          readTwice: c?.read_twice,
          twice: sum('consumed_twice'),
          never: sum('never_consumed'),
        };
        for (const k of Object.keys(want)) assert.equal(got[k], want[k], `${file} at ${st.at_ms}: lane ${'ABCD'[i]} ${k}`);
      }
      const box = page.locator('.cmp-div');
      if (div === null) assert.equal(await box.isVisible(), false, `${file} at ${st.at_ms}: not diverged yet`);
      else assert.match(await box.textContent(), new RegExp(`diverge at ${(div / 1000).toFixed(3).replace('.', '\\.')} s`));
      // Every number of the text is on the screen (the tour panel itself aside).
      const screen = await page.evaluate(() => {
        const t = document.getElementById('tour');
        t.hidden = true;
        const s = document.body.innerText;
        t.hidden = false;
        return s;
      });
      // The numbers a stop states, by the same rule as every tour's (tour-numbers.mjs).
      for (const n of statedNumbers(st.text)) {
        assert.match(screen, new RegExp(`(^|[^\\d.])${n.replace('.', '\\.')}($|[^\\d])`), `${file} at ${st.at_ms}: "${n}" is on the screen`);
      }
    }
    assert.deepEqual(app.errors, []);
  });
}

test('playing a tour stops at each stop by itself', async () => {
  const page = app.page;
  app.errors.length = 0;
  await page.goto(`${app.baseUrl}/?scenario=tour-7-acks1-loses-data.json`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  const stops = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', 'tour-7-acks1-loses-data.json'), 'utf8')).tour;
  await page.evaluate(() => {
    failoverLab.setSpeed(20);
    failoverLab.play();
  });
  await page.waitForFunction(() => !failoverLab.playing, null, { timeout: 10000 });
  assert.equal(await page.evaluate(() => failoverLab.now()), stops[0].at_ms);
  assert.equal(await page.locator('#tour .tour-title').textContent(), stops[0].title);
  await page.keyboard.press('n');
  await tourIdle(page);
  assert.equal(await page.evaluate(() => failoverLab.now()), stops[1].at_ms, 'N is the Next key');
  assert.deepEqual(app.errors, []);
});

test('the what-ifs the tours state hold: unclean off, acks=all, min.insync.replicas=1, truncation by leader epoch', async () => {
  const page = app.page;
  app.errors.length = 0;
  /** Open a tour, flip one switch, and return the reports at the given times. */
  const run = async (file, key, value, times) => {
    await page.goto(`${app.baseUrl}/?scenario=${file}`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
    if (key === 'unclean') await page.locator('#unclean').setChecked(value);
    else await page.locator(key).selectOption(String(value));
    return page.evaluate((ts) => ts.map((t) => {
      failoverLab.seek(t);
      return failoverLab.report();
    }), times);
  };
  // Tour 4: without unclean election (ELR on, the default), the ISR empties at 39 s and broker 1,
  // the last replica in sync, is the only eligible leader; orders-0 is offline until broker 1
  // restarts at 50 s and, once started (sim.broker.startup.ms, 2870) and unfenced at 52.891 s, is
  // elected again as the last known leader (KIP-966); nothing lost.
  const [u39, u49, u50, u] = await run('tour-4-unclean-election.json', 'unclean', false, [39001, 52800, 52950, 70000]);
  assert.equal(part(u39).leader, null, 'offline at 39 s');
  assert.deepEqual([part(u39).isr, part(u39).elr], [[], [1]], 'ISR empty, broker 1 in the ELR');
  assert.equal(part(u49).leader, null, 'still offline while broker 1 starts up');
  assert.deepEqual([part(u50).leader, part(u50).leader_epoch], [1, 2], 'broker 1 elected again right after its restart');
  assert.equal(part(u).leader, 1);
  assert.equal(u.acked_records_lost, 0);
  // Tour 7: with acks=all the record is retried on broker 2 and lands once at offset 10, in epoch 1.
  const [a] = await run('tour-7-acks1-loses-data.json', '#acks', 'all', [40000]);
  assert.equal(a.acked_records_lost, 0);
  assert.equal(part(a).high_watermark, 11);
  for (const l of part(a).replica_logs) {
    assert.equal(l.log_end_offset, 11, `broker ${l.broker} has the record once`);
    assert.deepEqual(l.epochs, [[0, 0], [1, 10]], `broker ${l.broker}: offset 10 is in epoch 1`);
  }
  // Tour 8: with min.insync.replicas=1 broker 1 keeps acknowledging alone.
  const [m40, m] = await run('tour-8-min-insync-replicas.json', '#min-isr', 1, [40000, 60000]);
  assert.equal(m.producers[0].errors.NOT_ENOUGH_REPLICAS, undefined);
  assert.ok(m40.producers[0].acked > 300, `acked ${m40.producers[0].acked} by 40 s`);
  assert.deepEqual(part(m40).isr, [1], 'acknowledged by broker 1 alone');
  // Tour 9: truncating by leader epoch, broker 1 keeps both records and nothing is lost; its
  // new registration (after its start-up, from 6.37 s) is refused until its old session expires
  // at 11 s (a millisecond after broker 2's, which had made it leader), so orders-0 is offline
  // until broker 1's next attempt (a heartbeat interval later) registers it and, the last member
  // of its ISR, it is elected (epoch 3, at 12.40 s).
  const [k14, k20, k] = await run('tour-9-why-not-truncate-to-hw.json', '#truncation', 'leader_epoch', [12000, 20000, 45000]);
  assert.equal(part(k14).leader, null, 'offline while broker 1 waits to register again');
  assert.deepEqual([part(k20).leader, part(k20).leader_epoch], [1, 3], 'broker 1 leads again, with both records');
  assert.deepEqual([part(k).leader, part(k).leader_epoch], [1, 3]);
  assert.equal(k.acked_records_lost, 0);
  assert.deepEqual(k.invariant_violations, []);
  assert.ok(part(k).replica_logs.every((l) => l.log_end_offset === 2), 'both replicas hold both records');
  assert.deepEqual(app.errors, []);
});

// Once every tour has been walked: the page evaluated the claims (issue 62's
// "at least 150"; tests/claims.rs checks the same natively).
test('the page evaluated every tour claim it walked past', () => {
  const total = TOURS.reduce((n, f) => n + JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', f), 'utf8')).tour.reduce((k, st) => k + (st.claims?.length ?? 0), 0), 0);
  assert.ok(total >= 150, `${total} claims`);
  assert.equal(claimsSeen, claimsWalked, 'every claim of every tour walked was evaluated on the page');
});
