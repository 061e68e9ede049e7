//! Racks and follower fetching (KIP-392): where replicas live, and who may
//! serve a consumer's reads.
//!
//! - With `broker.rack` on every broker and no explicit assignment, the
//!   replicas of a partition land on distinct racks and leaders are spread.
//! - With `replica.selector.class` = the rack-aware selector, a leader answers
//!   a consumer with `client.rack` by naming the in-sync follower in that rack;
//!   the consumer then reads from it, below the follower's own high watermark.
//! - When that follower dies, leaves the ISR or its leader changes, the
//!   consumer goes back to the leader and is given a new preferred replica;
//!   nothing is skipped or read twice.
//! - Without a selector, the leader never names another replica.

mod common;
use common::*;
use failover_lab::sim::trace::TraceKind;
use failover_lab::{Action, Lab};

const SELECTOR: &str = "org.apache.kafka.common.replica.RackAwareReplicaSelector";

/// Three brokers in racks a, b, c; orders-0 is led by broker 1 (rack a) with
/// followers 2 (rack b) and 3 (rack c). Consumers: `c-a`, `c-b`, `c-c` in
/// those racks, `c-any` without a rack.
fn three_racks(selector: bool, extra_config: &str, consumer_config: &str, steps: &str) -> Lab {
    let selector = if selector {
        format!(r#", "replica.selector.class": "{SELECTOR}""#)
    } else {
        String::new()
    };
    let consumer = |id: &str, rack: &str| {
        format!(
            r#"{{"type": "consumer", "id": "{id}", "topic": "orders", "config": {{"client.rack": "{rack}"{consumer_config}}}}}"#
        )
    };
    lab(&format!(
        r#"{{
      "seed": 3, "brokers": 3, "racks": {{"1": "a", "2": "b", "3": "c"}},
      "config": {{"min.insync.replicas": 2{selector}{extra_config}}},
      "topics": [{{"name": "orders", "partitions": 1, "replication_factor": 3}}],
      "clients": [
        {{"type": "producer", "id": "p1", "topic": "orders", "acks": "all", "records_per_sec": 20}},
        {},
        {},
        {},
        {{"type": "consumer", "id": "c-any", "topic": "orders"}}
      ],
      "steps": [{steps}],
      "run_until_ms": 60000
    }}"#,
        consumer("c-a", "a"),
        consumer("c-b", "b"),
        consumer("c-c", "c"),
    ))
}

const C_A: usize = 0;
const C_B: usize = 1;
const C_C: usize = 2;
const C_ANY: usize = 3;

fn reading_from(l: &Lab, consumer: usize) -> Option<u32> {
    l.cluster.consumers[consumer].fetch_target(0, l.cluster.now)
}

fn preferred(l: &Lab, consumer: usize) -> Option<u32> {
    l.cluster.consumers[consumer].positions[&0]
        .preferred_read_replica
        .map(|x| x.0)
}

fn position(l: &Lab, consumer: usize) -> u64 {
    l.cluster.consumers[consumer].positions[&0].offset
}

/// The consumer read offsets 0, 1, 2, … of orders-0 exactly once each, and
/// each record is the one the leader holds at that offset.
fn assert_read_every_record_once(l: &Lab, consumer: usize, leader: u32) {
    let c = &l.cluster.consumers[consumer];
    let offsets: Vec<u64> = c.consumed_records.iter().map(|r| r.offset).collect();
    let expected: Vec<u64> = (0..offsets.len() as u64).collect();
    assert_eq!(
        offsets, expected,
        "{}: offsets are contiguous from 0, none skipped or repeated",
        c.name
    );
    let log = ids(l, leader, 0);
    for &failover_lab::sim::client::Read {
        offset: off, id, ..
    } in &c.consumed_records
    {
        assert_eq!(
            log.get(off as usize),
            Some(&id),
            "{}: offset {off} holds the leader's record",
            c.name
        );
    }
    assert_eq!(c.positions[&0].offset, offsets.len() as u64);
}

fn read_replica_events(l: &Lab, who: &str) -> Vec<(u64, u32, bool)> {
    l.cluster
        .trace
        .events()
        .filter_map(|e| match &e.kind {
            TraceKind::ConsumerReadReplicaChanged {
                consumer,
                broker,
                leader,
                ..
            } if consumer == who => Some((e.at_ms, *broker, *leader)),
            _ => None,
        })
        .collect()
}

fn lost_events(l: &Lab, who: &str) -> Vec<(u64, u32, String)> {
    l.cluster
        .trace
        .events()
        .filter_map(|e| match &e.kind {
            TraceKind::ConsumerPreferredReplicaLost {
                consumer,
                broker,
                reason,
                ..
            } if consumer == who => Some((e.at_ms, *broker, reason.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn rack_aware_assignment_puts_replicas_on_distinct_racks() {
    let l = lab(r#"{
      "brokers": 6, "racks": {"1": "a", "2": "a", "3": "b", "4": "b", "5": "c", "6": "c"},
      "topics": [{"name": "t", "partitions": 12, "replication_factor": 3}]
    }"#);
    let rack = |b: u32| l.cluster.rack_of(b).unwrap().to_string();
    let mut leaders = vec![0; 6];
    for p in l.cluster.partitions.iter() {
        let mut racks: Vec<String> = p.replicas.iter().map(|b| rack(*b)).collect();
        racks.sort();
        assert_eq!(
            racks,
            ["a", "b", "c"],
            "{}-{}: {:?}",
            p.topic,
            p.partition,
            p.replicas
        );
        leaders[p.replicas[0] as usize - 1] += 1;
    }
    assert_eq!(leaders, vec![2; 6], "preferred leaders spread evenly");
    // Leaders alternate racks: a, b, c, a, b, c, …
    let first: Vec<String> = l.cluster.partitions[..6]
        .iter()
        .map(|p| rack(p.replicas[0]))
        .collect();
    assert_eq!(first, ["a", "b", "c", "a", "b", "c"]);
    // The report and the view show each broker's rack.
    assert_eq!(l.report().brokers[2].rack.as_deref(), Some("b"));
}

#[test]
fn consumer_in_rack_b_is_sent_to_the_rack_b_follower() {
    let mut l = three_racks(true, "", "", "");
    assert_eq!(reg(&l, 0).replicas, vec![1, 2, 3]);
    l.cluster.run_until(10_000);
    assert_eq!(reg(&l, 0).leader, Some(1));
    assert_eq!(
        preferred(&l, C_B),
        Some(2),
        "the leader named the rack-b follower"
    );
    assert_eq!(reading_from(&l, C_B), Some(2));
    assert_eq!(
        reading_from(&l, C_C),
        Some(3),
        "and the rack-c one for rack c"
    );
    assert_eq!(
        reading_from(&l, C_A),
        Some(1),
        "the leader is in rack a itself"
    );
    assert_eq!(preferred(&l, C_A), None);
    assert_eq!(
        reading_from(&l, C_ANY),
        Some(1),
        "no client.rack: the leader"
    );
    assert!(position(&l, C_B) > 100, "it consumes from the follower");
    assert_eq!(
        read_replica_events(&l, "c-b").last().map(|e| (e.1, e.2)),
        Some((2, false))
    );
    assert!(
        read_replica_events(&l, "c-any").is_empty(),
        "rackless: not narrated"
    );
    let rep = l.report();
    let cb = &rep.consumers[C_B];
    assert_eq!(cb.client_rack.as_deref(), Some("b"));
    assert_eq!(cb.partitions[0].reading_from, Some(2));
    assert!(!cb.partitions[0].reading_from_leader);
    assert_eq!(cb.partitions[0].preferred_read_replica, Some(2));
    assert!(rep.consumers[C_ANY].partitions[0].reading_from_leader);
    l.run_to_end();
    for c in [C_A, C_B, C_C, C_ANY] {
        assert_read_every_record_once(&l, c, 1);
    }
    assert_no_violations(&l);
}

#[test]
fn follower_serves_only_below_its_own_high_watermark() {
    // No steady load: one batch, then watch it become readable.
    let mut l = lab(&format!(
        r#"{{
      "seed": 4, "brokers": 3, "racks": {{"1": "a", "2": "b", "3": "c"}},
      "config": {{"replica.selector.class": "{SELECTOR}"}},
      "topics": [{{"name": "orders", "partitions": 1, "replication_factor": 3}}],
      "clients": [
        {{"type": "consumer", "id": "c-b", "topic": "orders", "config": {{"client.rack": "b"}}}},
        {{"type": "consumer", "id": "c-any", "topic": "orders"}}
      ]
    }}"#
    ));
    l.cluster.run_until(3_000);
    l.cluster
        .apply(Action::Produce {
            topic: "orders".into(),
            partition: 0,
            count: 3,
            acks: None,
            producer: None,
        })
        .unwrap();
    l.cluster.run_until(6_000);
    assert_eq!(preferred(&l, 0), Some(2), "c-b reads from broker 2");
    assert_eq!(position(&l, 0), 3);
    l.cluster
        .apply(Action::Produce {
            topic: "orders".into(),
            partition: 0,
            count: 5,
            acks: None,
            producer: None,
        })
        .unwrap();
    // Step until the leader's HW covers the batch; at every event, c-b has
    // read nothing broker 2 did not have below its own HW.
    while replica(&l, 1, 0).log.high_watermark < 8 {
        assert!(l.cluster.step());
        assert!(
            position(&l, 0) <= replica(&l, 2, 0).log.high_watermark,
            "c-b at {} is past broker 2's HW {}",
            position(&l, 0),
            replica(&l, 2, 0).log.high_watermark
        );
    }
    // The leader has committed the batch; the follower learns it next round,
    // so c-b cannot read it yet: it lags the leader by a replication round.
    assert_eq!(replica(&l, 2, 0).log.log_end_offset(), 8);
    assert_eq!(replica(&l, 2, 0).log.high_watermark, 3);
    assert_eq!(position(&l, 0), 3);
    assert_eq!(l.report().consumers[0].partitions[0].lag, Some(5));
    l.cluster.run_for(1_000);
    assert_eq!(replica(&l, 2, 0).log.high_watermark, 8);
    assert_eq!(position(&l, 0), 8, "one round later c-b has the batch");
    assert_eq!(position(&l, 1), 8);
    assert_eq!(l.report().consumers[0].partitions[0].lag, Some(0));
    assert_read_every_record_once(&l, 0, 1);
    assert_read_every_record_once(&l, 1, 1);
}

#[test]
fn consumer_returns_to_the_leader_when_its_preferred_replica_dies() {
    let mut l = three_racks(true, "", "", r#"{"at_ms": 10000, "crash": 2}"#);
    l.cluster.run_until(10_000);
    assert_eq!(reading_from(&l, C_B), Some(2));
    let before = position(&l, C_B);
    l.cluster.run_until(25_000);
    // The controller fenced broker 2 and dropped it from the ISR: the leader
    // has no rack-b replica to offer any more.
    assert_eq!(reg(&l, 0).isr, vec![1, 3]);
    assert_eq!(reading_from(&l, C_B), Some(1), "back on the leader");
    assert_eq!(preferred(&l, C_B), None);
    let lost = lost_events(&l, "c-b");
    assert_eq!(lost.len(), 1, "narrated once: {lost:?}");
    assert_eq!(lost[0].1, 2);
    assert!(lost[0].2.contains("NETWORK_EXCEPTION"), "{}", lost[0].2);
    let back = read_replica_events(&l, "c-b");
    assert_eq!(back.last().map(|e| (e.1, e.2)), Some((1, true)));
    assert!(l.cluster.consumers[C_B]
        .errors
        .contains_key("NETWORK_EXCEPTION"));
    // Its position was kept and it caught up with the leader.
    assert!(position(&l, C_B) > before + 200);
    assert!(l.report().consumers[C_B].partitions[0].lag.unwrap() < 20);
    l.cluster.run_until(30_000);
    assert_read_every_record_once(&l, C_B, 1);
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

#[test]
fn consumer_is_sent_to_the_follower_again_once_it_is_back_in_the_isr() {
    let mut l = three_racks(
        true,
        "",
        "",
        r#"{"at_ms": 10000, "crash": 2}, {"at_ms": 25000, "restart": 2}"#,
    );
    l.cluster.run_until(24_000);
    assert_eq!(reading_from(&l, C_B), Some(1));
    l.cluster.run_until(40_000);
    assert_eq!(reg(&l, 0).isr.len(), 3);
    assert_eq!(reading_from(&l, C_B), Some(2), "named again by the leader");
    let changes: Vec<(u32, bool)> = read_replica_events(&l, "c-b")
        .iter()
        .map(|e| (e.1, e.2))
        .collect();
    // (Its first fetch went to the leader, which named broker 2 at once.)
    assert_eq!(changes, vec![(2, false), (1, true), (2, false)]);
    assert_read_every_record_once(&l, C_B, 1);
}

#[test]
fn consumer_returns_to_the_leader_when_its_preferred_replica_leaves_the_isr() {
    // Broker 2 stops fetching: it drops out of the ISR, its HW freezes, and a
    // consumer reading from it gets nothing new. It notices only when the
    // leader's advice expires (metadata.max.age.ms) and it asks the leader.
    let mut l = three_racks(
        true,
        r#", "replica.lag.time.max.ms": 5000"#,
        r#", "metadata.max.age.ms": 20000"#,
        r#"{"at_ms": 8000, "slow": {"broker": 2, "topic": "orders"}}"#,
    );
    l.cluster.run_until(18_000);
    assert_eq!(reg(&l, 0).isr, vec![1, 3], "broker 2 fell out of the ISR");
    assert_eq!(reading_from(&l, C_B), Some(2), "c-b still reads from it");
    let stuck = position(&l, C_B);
    assert!(stuck <= replica(&l, 2, 0).log.high_watermark);
    // The leader's advice, given on the first fetch at t≈0, expires at ≈20 s.
    l.cluster.run_until(19_900);
    assert_eq!(
        position(&l, C_B),
        stuck,
        "nothing new from a frozen follower"
    );
    let lag = l.report().consumers[C_B].partitions[0].lag.unwrap();
    assert!(lag > 40, "it falls behind the leader: lag {lag}");
    l.cluster.run_until(30_000);
    assert_eq!(reading_from(&l, C_B), Some(1), "advice expired: the leader");
    assert_eq!(
        preferred(&l, C_B),
        None,
        "2 is not in the ISR: not named again"
    );
    let lost = lost_events(&l, "c-b");
    assert_eq!(lost.len(), 1);
    assert!(
        lost[0].2.contains("metadata.max.age.ms=20000"),
        "{}",
        lost[0].2
    );
    assert!(l.report().consumers[C_B].partitions[0].lag.unwrap() < 20);
    assert_read_every_record_once(&l, C_B, 1);
    // c-c's follower stayed in sync: it never moved.
    assert_eq!(reading_from(&l, C_C), Some(3));
}

#[test]
fn consumer_goes_back_to_the_new_leader_and_to_its_follower_after_a_leader_change() {
    let mut l = three_racks(true, "", "", r#"{"at_ms": 10000, "crash": 1}"#);
    l.cluster.run_until(10_000);
    assert_eq!(reading_from(&l, C_C), Some(3));
    l.cluster.run_until(30_000);
    let r = reg(&l, 0);
    assert_eq!((r.leader, r.leader_epoch), (Some(2), 1));
    // Broker 3 now follows broker 2 in epoch 1: c-c's epoch-0 fetch was
    // refused, it refreshed its metadata, validated its position with the
    // new leader, which named broker 3 again.
    let lost = lost_events(&l, "c-c");
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].1, 3);
    assert!(
        lost[0].2.contains("NOT_LEADER_OR_FOLLOWER"),
        "{}",
        lost[0].2
    );
    assert_eq!(reading_from(&l, C_C), Some(3));
    assert_eq!(preferred(&l, C_C), Some(3));
    let changes: Vec<(u32, bool)> = read_replica_events(&l, "c-c")
        .iter()
        .map(|e| (e.1, e.2))
        .collect();
    // (The new leader redirected it at once: it never read from broker 2.)
    assert_eq!(changes, vec![(3, false), (3, false)]);
    // c-b's follower became the leader, in its own rack: it reads from it.
    assert_eq!(reading_from(&l, C_B), Some(2));
    assert_eq!(preferred(&l, C_B), None);
    for c in [C_B, C_C, C_ANY] {
        assert_read_every_record_once(&l, c, 2);
    }
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

#[test]
fn without_a_selector_the_leader_never_names_a_preferred_read_replica() {
    // Kafka's default (replica.selector.class unset): every consumer reads
    // from the leader, client.rack or not. (A follower would serve a modern
    // consumer that asked it, but without a selector none is ever sent there.)
    let mut l = three_racks(false, "", "", r#"{"at_ms": 10000, "crash": 1}"#);
    for t in [5_000, 9_000, 25_000, 40_000] {
        l.cluster.run_until(t);
        let leader = reg(&l, 0).leader;
        for c in [C_A, C_B, C_C, C_ANY] {
            assert_eq!(preferred(&l, c), None);
            assert_eq!(reading_from(&l, c), leader, "at {t} ms");
        }
    }
    for who in ["c-a", "c-b", "c-c"] {
        assert!(read_replica_events(&l, who).iter().all(|e| e.2), "{who}");
        assert!(lost_events(&l, who).is_empty());
    }
    for c in [C_A, C_B, C_C, C_ANY] {
        assert_read_every_record_once(&l, c, 2);
    }
}

/// After rack a (brokers 1-20) is fenced, in tours 18 and 19: every ISR has
/// two members, none in rack a, and every partition is led from rack b or c.
/// Returns how many partitions each broker leads, by broker id.
fn assert_rack_a_gone(l: &Lab) -> [usize; 61] {
    let rack_a = |b: &u32| (1..=20).contains(b);
    let mut led = [0usize; 61];
    for (p, g) in l.cluster.controller.partitions.iter().enumerate() {
        assert_eq!(g.isr.len(), 2, "orders-{p}: ISR {:?}", g.isr);
        assert!(!g.isr.iter().any(rack_a), "orders-{p}: rack a left the ISR");
        let b = g.leader.unwrap_or_else(|| panic!("orders-{p} is led"));
        assert!(!rack_a(&b), "orders-{p} is led outside rack a");
        led[b as usize] += 1;
    }
    led
}

/// After broker 21 is fenced too: exactly the `n` partitions it held (of
/// `partitions`) are below min ISR, each still led, broker 21 in its ELR.
fn assert_below_min_isr_are_broker_21s(l: &Lab, partitions: usize, n: usize) {
    let below: Vec<usize> = (0..partitions)
        .filter(|&p| reg(l, p).isr.len() < 2)
        .collect();
    assert_eq!(below.len(), n, "every partition broker 21 held");
    for &p in &below {
        let g = reg(l, p);
        assert!(g.replicas.contains(&21) && g.leader.is_some(), "orders-{p}");
        assert_eq!(g.elr, vec![21], "orders-{p}: broker 21 moved to the ELR");
    }
}

/// Tour 18 (`scenarios/tour-18-rack-loss.json`): 60 brokers in racks of 20,
/// 3,000 partitions of RF 3 laid out rack-aware, min.insync.replicas=2,
/// acks=all. Losing rack a takes every partition's leader or one in-sync
/// follower, so all 3,000 are unavailable until the controller fences the
/// rack, which it does after the session timeout however many brokers went
/// (KAFKA_REPLICATION.md §3, "Liveness (KRaft)"); it then elects from the
/// remaining ISR and drops rack a from every ISR ("The controller also
/// shrinks"). Nothing goes offline: each partition keeps two in-sync replicas.
/// One more broker lost in rack b leaves its partitions an ISR of one, below
/// min ISR: led, not offline, refusing acks=all writes, the fenced replica
/// moved to the ELR (KIP-966, §3); no acknowledged record is lost.
#[test]
fn a_lost_rack_keeps_every_partition_online_and_one_more_broker_leaves_its_partitions_below_min_isr(
) {
    let mut l = scenario_file("tour-18-rack-loss.json");
    l.cluster.run_until(29_999);
    assert_rack_a_gone(&l);
    let r = l.report();
    let f = &r.availability.faults[0];
    assert_eq!(
        (f.partition_count, f.stalled_partition_count),
        (1_000, 2_000)
    );
    assert_eq!(f.brokers, (1..=20).collect::<Vec<u32>>());
    // Detection is the session timeout, as for one broker; the partitions
    // add the metadata phase. RTO runs to the last partition's first write.
    assert_eq!(f.fenced_at_ms, Some(19_001));
    assert_eq!(
        (f.phases.detection_ms, f.phases.metadata_ms),
        (Some(9_001), Some(32))
    );
    assert_eq!(f.rto_ms, Some(9_353));
    // Across partitions the spread is narrow: every one waited for the
    // same fencing, then for its next record.
    let mut per = l.cluster.availability.faults()[0].partition_rto_ms();
    per.sort_unstable();
    assert_eq!(per.len(), 3_000);
    assert!(
        per[0] >= 9_001 && per[per.len() - 1] == 9_353,
        "{:?}",
        (per[0], per.last())
    );
    l.cluster.run_until(45_000);
    assert_below_min_isr_are_broker_21s(&l, 3_000, 150);
    let r = l.report();
    assert_eq!(r.acked_records_lost, 0);
    assert!(r.producers[0].errors["NOT_ENOUGH_REPLICAS"] >= 100);
    assert_eq!(
        r.availability.faults[1].rto_ms, None,
        "no RTO below min ISR"
    );
    assert_no_violations(&l);
}

/// Tour 19 (`scenarios/tour-19-rack-loss-20000.json`, the cluster of
/// `scenarios/bench/rack-loss.json`): tour 18's question asked of 20,000
/// partitions. Detection is still the session timeout, counted from the
/// last heartbeat the controller had (KAFKA_REPLICATION.md §3, "Liveness
/// (KRaft)"), so it does not grow with the partitions; the metadata phase
/// does, one partition change written and applied per moved partition
/// (tour 18: 32 ms for 3,000). Each lost leader passes to the first live
/// member of its ISR in replica order (the "first replica in assignment
/// order" of KAFKA_REPLICATION.md's election rule): the
/// rack-aware layout lists rack b second in 4,300 of rack a's partitions and
/// rack c in 2,367, so rack b's brokers end up leading more. One more broker
/// then leaves every partition it held below min ISR, led, with that broker
/// in the ELR (KIP-966).
#[test]
fn on_twenty_thousand_partitions_a_lost_rack_costs_the_same_detection_and_a_longer_metadata_phase()
{
    let mut l = scenario_file("tour-19-rack-loss-20000.json");
    l.cluster.run_until(19_999);
    let r = l.report();
    let f = &r.availability.faults[0];
    assert_eq!(
        (f.partition_count, f.stalled_partition_count),
        (6_667, 13_333)
    );
    assert_eq!(f.brokers, (1..=20).collect::<Vec<u32>>());
    // The crash at 3 s came a second after the brokers' heartbeat at 2 s
    // (broker.heartbeat.interval.ms=2000): fenced 9 s after that heartbeat.
    assert_eq!(f.fenced_at_ms, Some(11_001));
    let p = &f.phases;
    assert_eq!(
        (p.detection_ms, p.election_ms, p.metadata_ms, p.client_ms),
        (Some(8_001), Some(1), Some(207), Some(16))
    );
    assert_eq!(f.rto_ms, Some(8_225));
    let mut per = l.cluster.availability.faults()[0].partition_rto_ms();
    per.sort_unstable();
    assert_eq!(per.len(), 20_000);
    assert_eq!(
        (per[0], per[per.len() / 2], per[per.len() - 1]),
        (8_018, 8_161, 8_225)
    );
    let led = assert_rack_a_gone(&l);
    assert!(led[1..=20].iter().all(|n| *n == 0));
    assert!(
        led[21..=40].iter().all(|n| (548..=549).contains(n)),
        "{led:?}"
    );
    assert!(
        led[41..=60].iter().all(|n| (451..=453).contains(n)),
        "{led:?}"
    );
    l.cluster.run_until(32_000);
    assert_below_min_isr_are_broker_21s(&l, 20_000, 549 + 453);
    let r = l.report();
    let f = &r.availability.faults[1];
    assert_eq!(
        (f.partition_count, f.stalled_partition_count, f.fenced_at_ms),
        (549, 453, Some(29_001))
    );
    assert_eq!(
        (f.phases.metadata_ms, f.rto_ms),
        (Some(27), None),
        "no RTO below min ISR"
    );
    assert_eq!(r.acked_records_lost, 0);
    assert!(r.producers[0].errors["NOT_ENOUGH_REPLICAS"] >= 1_000);
    assert_no_violations(&l);
}
