//! Replication: high watermark, ISR shrink/expand, acks and min.insync.replicas,
//! epoch-based truncation (KAFKA_REPLICATION.md §1–§4, §7; vectors T1, T2, T4,
//! T5, T7, T9).

mod common;
use common::*;
use failover_lab::sim::trace::TraceKind;
use failover_lab::Action;

fn produce(topic: &str, count: u32, acks: &str) -> Action {
    Action::Produce {
        topic: topic.into(),
        partition: 0,
        count,
        acks: Some(failover_lab::sim::config::Acks::parse(&serde_json::json!(acks)).unwrap()),
        producer: None,
    }
}

const RF3: &str = r#"{
  "seed": 1, "brokers": 3, "config": {"min.insync.replicas": 2},
  "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}]
}"#;

#[test]
fn t1_followers_learn_the_high_watermark_one_fetch_round_after_the_leader() {
    let mut l = lab(RF3);
    l.cluster.run_until(3_000);
    l.cluster.apply(produce("t", 2, "all")).unwrap();
    assert_eq!(replica(&l, 1, 0).log.log_end_offset(), 0, "not yet arrived");
    // Step until the leader's HW reaches 2.
    while replica(&l, 1, 0).log.high_watermark < 2 {
        assert!(l.cluster.step());
    }
    assert_eq!(replica(&l, 1, 0).log.log_end_offset(), 2);
    // At that moment the followers have the records but not the new HW.
    for b in [2, 3] {
        let r = replica(&l, b, 0);
        assert_eq!(r.log.log_end_offset(), 2);
        assert_eq!(r.log.high_watermark, 0, "broker {b} learns HW 2 next round");
    }
    l.cluster.run_for(1_000);
    for b in [2, 3] {
        assert_eq!(replica(&l, b, 0).log.high_watermark, 2);
    }
    assert_eq!(reg(&l, 0).partition_epoch, 0, "ISR unchanged");
    let acked = events(&l, |k| {
        matches!(
            k,
            TraceKind::ProduceAcked {
                base_offset: 0,
                count: 2,
                ..
            }
        )
    });
    assert_eq!(acked.len(), 1);
}

/// The time at which `cond` first holds, stepping the cluster.
fn step_until(l: &mut failover_lab::Lab, cond: impl Fn(&failover_lab::Lab) -> bool) -> u64 {
    while !cond(l) {
        assert!(l.cluster.step(), "the run ended first");
    }
    l.cluster.now
}

/// DelayedFetch.tryComplete (KAFKA_REPLICATION.md §1, `replica.fetch.wait.max.ms`):
/// a follower's parked fetch reads to the leader's log end, so only new records
/// (or an error, a new epoch, a divergence) complete it, not a HW that moved.
/// With nothing more produced, the followers learn the new HW when their long
/// poll expires, 500 ms later; a new record brings it at once.
#[test]
fn a_moved_high_watermark_does_not_complete_a_followers_parked_fetch() {
    let mut l = lab(RF3);
    l.cluster.run_until(3_000);
    l.cluster.apply(produce("t", 1, "all")).unwrap();
    let leader_hw = step_until(&mut l, |l| replica(l, 1, 0).log.high_watermark >= 1);
    // The first follower to learn it: both fetches were parked when the HW
    // moved (the last one to arrive is what moved it), and neither completes.
    let first = step_until(&mut l, |l| {
        replica(l, 2, 0).log.high_watermark >= 1 || replica(l, 3, 0).log.high_watermark >= 1
    });
    let lag = first - leader_hw;
    assert!(
        (450..=520).contains(&lag),
        "a follower learned HW 1 {lag} ms after the leader: its fetch waited out replica.fetch.wait.max.ms"
    );

    // Now produce again 100 ms after the HW moved: the new record completes
    // the parked fetches, and its response carries the HW.
    l.cluster.run_for(1_000);
    l.cluster.apply(produce("t", 1, "all")).unwrap();
    let leader_hw = step_until(&mut l, |l| replica(l, 1, 0).log.high_watermark >= 2);
    l.cluster.run_for(100);
    l.cluster.apply(produce("t", 1, "all")).unwrap();
    let followers_hw = step_until(&mut l, |l| {
        replica(l, 2, 0).log.high_watermark >= 2 && replica(l, 3, 0).log.high_watermark >= 2
    });
    let lag = followers_hw - leader_hw;
    assert!(
        (100..=110).contains(&lag),
        "the next record carried HW 2 to the followers {lag} ms after the leader's HW moved"
    );
}

#[test]
fn consumers_read_only_below_the_high_watermark() {
    let mut l = lab(r#"{
      "seed": 2, "brokers": 3,
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
      "clients": [{"type": "consumer", "id": "c", "topic": "t"}],
      "steps": [
        {"at_ms": 3000, "slow": {"broker": 2, "topic": "t"}},
        {"at_ms": 3000, "slow": {"broker": 3, "topic": "t"}},
        {"at_ms": 3500, "produce": {"topic": "t", "count": 5, "acks": "1"}},
        {"at_ms": 8000, "unslow": {"broker": 2, "topic": "t"}},
        {"at_ms": 8000, "unslow": {"broker": 3, "topic": "t"}}
      ],
      "run_until_ms": 12000
    }"#);
    l.cluster.run_until(7_000);
    assert_eq!(replica(&l, 1, 0).log.log_end_offset(), 5);
    assert_eq!(replica(&l, 1, 0).log.high_watermark, 0);
    assert_eq!(
        l.cluster.consumers[0].consumed, 0,
        "nothing is committed yet"
    );
    l.run_to_end();
    assert_eq!(l.cluster.consumers[0].consumed, 5);
}

#[test]
fn t2_lagging_follower_leaves_the_isr_after_replica_lag_time_max_ms_and_min_isr_blocks_acks_all() {
    let mut l = lab(RF3);
    l.cluster.run_until(2_000);
    l.cluster.apply(produce("t", 5, "all")).unwrap();
    l.cluster.run_until(3_000);
    l.cluster
        .apply(Action::Slow {
            broker: 3,
            topic: "t".into(),
            partition: 0,
        })
        .unwrap();
    l.cluster.apply(produce("t", 1, "all")).unwrap();
    l.cluster.run_until(20_000);
    // Broker 3 still counts as caught up within 30 s: the write waits.
    assert_eq!(reg(&l, 0).isr, vec![1, 2, 3]);
    assert_eq!(replica(&l, 1, 0).log.high_watermark, 5);
    l.cluster.run_until(50_000);
    assert_eq!(reg(&l, 0).isr, vec![1, 2], "shrunk by the periodic check");
    assert_eq!(
        reg(&l, 0).leader_epoch,
        0,
        "a shrink keeps the leader epoch"
    );
    assert_eq!(reg(&l, 0).partition_epoch, 1);
    assert_eq!(
        replica(&l, 1, 0).log.high_watermark,
        6,
        "HW moves once 3 is out"
    );
    assert_eq!(
        l.cluster.producers[0].stats.acked, 6,
        "the parked write was acked"
    );
    // Now broker 2 stops too: ISR {1} < min.insync.replicas=2.
    l.cluster
        .apply(Action::Slow {
            broker: 2,
            topic: "t".into(),
            partition: 0,
        })
        .unwrap();
    l.cluster.apply(produce("t", 1, "1")).unwrap();
    l.cluster.run_until(100_000);
    assert_eq!(reg(&l, 0).isr, vec![1]);
    let leo = replica(&l, 1, 0).log.log_end_offset();
    l.cluster.apply(produce("t", 1, "all")).unwrap();
    l.cluster.run_until(101_000);
    assert_eq!(
        replica(&l, 1, 0).log.log_end_offset(),
        leo,
        "NOT_ENOUGH_REPLICAS: nothing written"
    );
    assert!(l.cluster.producers[0]
        .stats
        .errors
        .contains_key("NOT_ENOUGH_REPLICAS"));
    assert_eq!(
        replica(&l, 1, 0).log.high_watermark,
        6,
        "3.7+: the HW does not move while the ISR is below min.insync.replicas"
    );
    assert_no_violations(&l);
}

#[test]
fn t7_acks_1_record_is_lost_when_the_leader_dies_before_replication() {
    let mut l = lab(RF3);
    l.cluster.run_until(2_000);
    l.cluster.apply(produce("t", 10, "all")).unwrap();
    l.cluster.run_until(3_000);
    for b in [2, 3] {
        l.cluster
            .apply(Action::Slow {
                broker: b,
                topic: "t".into(),
                partition: 0,
            })
            .unwrap();
    }
    // Their last long-poll fetch expires; no new one is sent.
    l.cluster.run_until(4_000);
    l.cluster.apply(produce("t", 1, "1")).unwrap();
    l.cluster.run_until(4_100);
    assert_eq!(
        l.cluster.producers[0].stats.acked, 11,
        "acks=1: acked at once"
    );
    l.cluster.apply(Action::Crash(1)).unwrap();
    for b in [2, 3] {
        l.cluster
            .apply(Action::Unslow {
                broker: b,
                topic: "t".into(),
                partition: 0,
            })
            .unwrap();
    }
    l.cluster.run_until(20_000);
    assert_eq!(reg(&l, 0).leader, Some(2));
    l.cluster.apply(Action::Restart(1)).unwrap();
    l.cluster.run_until(40_000);
    assert_eq!(truncations(&l, 1), vec![(11, 10)], "broker 1 drops x@10");
    assert_eq!(l.report().acked_records_lost, 1);
    assert_no_violations(&l); // acks=1 promised nothing: a result, not a violation
    let lost = events(&l, |k| matches!(k, TraceKind::AckedRecordsLost { .. }));
    assert!(lost[0].text.contains("acks=1"));
}

#[test]
fn t4_kip101_scenario_1_restarted_follower_keeps_committed_records_and_can_lead() {
    // B (broker 2) leads, A (broker 1) follows; both have m1, m2 committed.
    let mut l = lab(r#"{
      "seed": 4, "brokers": 2,
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": [[2, 1]]}],
      "steps": [
        {"at_ms": 2000, "produce": {"topic": "t", "count": 2, "acks": "all"}},
        {"at_ms": 3000, "crash": 1},
        {"at_ms": 14000, "restart": 1},
        {"at_ms": 20000, "crash": 2},
        {"at_ms": 40000, "restart": 2}
      ],
      "run_until_ms": 55000
    }"#);
    l.run_to_end();
    let r = reg(&l, 0);
    assert_eq!((r.leader, r.leader_epoch), (Some(1), 1));
    assert_eq!(replica(&l, 1, 0).log.log_end_offset(), 2, "A kept m1, m2");
    assert_eq!(
        digest(&l, 1, 0),
        digest(&l, 2, 0),
        "B returns without truncating"
    );
    assert!(truncations(&l, 1).is_empty() && truncations(&l, 2).is_empty());
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

#[test]
fn t5_kip101_scenario_2_replica_truncates_to_the_start_of_the_next_epoch_after_double_power_loss() {
    // KIP-101's scenario predates eligible leader replicas (KIP-966): the ISR
    // rules of its time keep the last member in the ISR.
    let mut l = lab(r#"{
      "seed": 4, "brokers": 2,
      "config": {"sim.os.flush.interval.ms": 600000, "sim.fence.on.reregistration": false,
                 "eligible.leader.replicas.enable": false},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
      "steps": [
        {"at_ms": 2000, "produce": {"topic": "t", "count": 1, "acks": "all"}},
        {"at_ms": 3000, "flush": 1},
        {"at_ms": 3000, "flush": 2},
        {"at_ms": 4000, "produce": {"topic": "t", "count": 1, "acks": "all"}},
        {"at_ms": 5000, "flush": 1},
        {"at_ms": 6000, "power_loss": 1},
        {"at_ms": 8500, "power_loss": 2},
        {"at_ms": 20000, "restart": 2},
        {"at_ms": 30000, "produce": {"topic": "t", "count": 1, "acks": "all"}},
        {"at_ms": 40000, "restart": 1}
      ],
      "run_until_ms": 80000
    }"#);
    // Each restart waits for its old session to expire (a new incarnation is
    // turned away while the old one's session is valid): A is fenced first,
    // so B, still in the ISR, leads when it comes back (epoch 3, after the
    // epochs 1 and 2 the fencings wrote).
    l.cluster.run_until(20_500);
    assert_eq!(
        replica(&l, 1, 0).log.log_end_offset(),
        2,
        "A flushed m1, m2"
    );
    assert_eq!(replica(&l, 2, 0).log.log_end_offset(), 1, "B lost m2");
    l.run_to_end();
    let r = reg(&l, 0);
    assert_eq!((r.leader, r.leader_epoch), (Some(2), 3));
    // A asked where epoch 0 ends (offset 1) and truncated m2, then fetched m3.
    assert_eq!(truncations(&l, 1), vec![(2, 1)]);
    assert_eq!(digest(&l, 1, 0), digest(&l, 2, 0), "no divergence");
    assert_eq!(replica(&l, 1, 0).log.log_end_offset(), 2);
    assert_eq!(replica(&l, 1, 0).log.epochs(), &[(0, 0), (3, 1)]);
    // m2 was acknowledged and is gone: every replica lost power, outside the promise.
    assert_eq!(l.report().acked_records_lost, 1);
    assert_no_violations(&l);
}

#[test]
fn t9_without_elr_last_replica_standing_loses_committed_records_after_power_loss() {
    let mut l = lab(r#"{
      "seed": 6, "brokers": 3,
      "config": {"min.insync.replicas": 2, "sim.os.flush.interval.ms": 600000},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
      "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 20}],
      "steps": [
        {"at_ms": 4000, "crash": 1},
        {"at_ms": 15000, "flush": 3},
        {"at_ms": 22000, "crash": 2},
        {"at_ms": 40000, "power_loss": 3},
        {"at_ms": 41000, "restart": 1},
        {"at_ms": 41000, "restart": 2},
        {"at_ms": 42000, "restart": 3}
      ],
      "run_until_ms": 90000
    }"#);
    l.cluster.run_until(39_000);
    let r = reg(&l, 0);
    assert_eq!(
        (r.leader, r.isr.clone()),
        (Some(3), vec![3]),
        "under min ISR"
    );
    let hw = replica(&l, 3, 0).log.high_watermark;
    let flushed = replica(&l, 3, 0).log.flushed_offset;
    assert!(flushed < hw, "committed records not yet on broker 3's disk");
    l.run_to_end();
    let r = reg(&l, 0);
    assert_eq!(
        r.leader,
        Some(3),
        "the sole ISR member is elected cleanly again"
    );
    assert!(
        replica(&l, 3, 0)
            .log
            .records()
            .take(flushed as usize)
            .count()
            == flushed as usize
    );
    assert!(
        truncations(&l, 2).iter().any(|t| t.1 == flushed),
        "broker 2 truncates its committed records to broker 3's log: {:?}",
        truncations(&l, 2)
    );
    assert!(l.report().acked_records_lost > 0);
    let lost = events(&l, |k| matches!(k, TraceKind::AckedRecordsLost { .. }));
    assert!(
        lost[0].text.contains("power loss of broker 3"),
        "{}",
        lost[0].text
    );
    assert_no_violations(&l);
}

const SHRINK_UNDER_PARKED_WRITE: &str = r#"{
  "seed": 3, "brokers": 2,
  "config": {"min.insync.replicas": 2, "replica.lag.time.max.ms": 10000},
  "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
  "steps": [
    {"at_ms": 2000, "slow": {"broker": 2, "topic": "t"}},
    {"at_ms": 3000, "produce": {"topic": "t", "count": 1, "acks": "all"}}
  ],
  "run_until_ms": 25000
}"#;

#[test]
fn before_3_7_the_hw_advances_with_the_leader_alone_and_the_write_gets_not_enough_replicas_after_append(
) {
    let mut v: serde_json::Value = serde_json::from_str(SHRINK_UNDER_PARKED_WRITE).unwrap();
    v["config"]["sim.strict.min.isr"] = serde_json::Value::Bool(false);
    let mut l = lab(&v.to_string());
    l.run_to_end();
    assert_eq!(reg(&l, 0).isr, vec![1]);
    assert_eq!(
        replica(&l, 1, 0).log.high_watermark,
        1,
        "HW moved with ISR {{1}}"
    );
    let p = &l.cluster.producers[0];
    assert_eq!(
        p.stats.errors.get("NOT_ENOUGH_REPLICAS_AFTER_APPEND"),
        Some(&1)
    );
    // the record is in the log even though the producer was told it failed
    assert_eq!(replica(&l, 1, 0).log.log_end_offset(), 1);
}

#[test]
fn since_3_7_the_hw_waits_for_min_insync_replicas_and_the_parked_write_times_out() {
    let mut l = lab(SHRINK_UNDER_PARKED_WRITE);
    l.cluster.run_until(25_000);
    assert_eq!(reg(&l, 0).isr, vec![1]);
    assert_eq!(
        replica(&l, 1, 0).log.high_watermark,
        0,
        "strict min ISR gate"
    );
    l.cluster.run_until(40_000);
    let p = &l.cluster.producers[0];
    assert!(p.stats.errors.contains_key("REQUEST_TIMED_OUT"));
    assert!(!p
        .stats
        .errors
        .contains_key("NOT_ENOUGH_REPLICAS_AFTER_APPEND"));
}

#[test]
fn a_broker_restarting_after_power_loss_is_fenced_first_so_it_cannot_lead_with_a_shorter_log() {
    // KIP-101 scenario 2 on a modern controller: B's new incarnation is handled
    // as a fenced broker, so it leaves the ISR instead of being elected with a
    // log that lost m2. The partition waits for A, which still has m2.
    // A loses power last, so its session outlives B's: which session expires
    // first must not hang on the brokers' heartbeat phases (all brokers of a
    // running cluster heartbeat in step from t=0).
    let mut l = lab(r#"{
      "seed": 4, "brokers": 2,
      "config": {"sim.os.flush.interval.ms": 600000},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
      "steps": [
        {"at_ms": 2000, "produce": {"topic": "t", "count": 1, "acks": "all"}},
        {"at_ms": 3000, "flush": 1},
        {"at_ms": 3000, "flush": 2},
        {"at_ms": 4000, "produce": {"topic": "t", "count": 1, "acks": "all"}},
        {"at_ms": 5000, "flush": 1},
        {"at_ms": 6000, "power_loss": 2},
        {"at_ms": 8500, "power_loss": 1},
        {"at_ms": 7000, "restart": 2},
        {"at_ms": 30000, "restart": 1}
      ],
      "run_until_ms": 60000
    }"#);
    l.cluster.run_until(20_000);
    let r = reg(&l, 0);
    // With eligible leader replicas (Kafka 4.1+ default) the ISR empties and
    // A is remembered as the one replica that may lead again.
    assert_eq!((r.leader, r.isr.clone()), (None, vec![]), "offline");
    assert!(
        r.elr.contains(&1) || r.last_known_elr.contains(&1),
        "waiting for A: {r:?}"
    );
    l.run_to_end();
    assert_eq!(reg(&l, 0).leader, Some(1));
    assert_eq!(
        replica(&l, 2, 0).log.log_end_offset(),
        2,
        "B fetched m2 back"
    );
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

/// The page cache is flushed every `sim.os.flush.interval.ms` (Kafka leaves
/// flushing to the OS when `log.flush.interval.ms` is unset;
/// KAFKA_REPLICATION.md, "durability"): a power loss keeps what a flush
/// reached and loses what was appended after it.
#[test]
fn records_a_periodic_flush_reached_survive_a_power_loss_and_later_ones_do_not() {
    let mut l = lab(r#"{
      "seed": 3, "brokers": 1,
      "config": {"sim.os.flush.interval.ms": 1000},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}],
      "steps": [
        {"at_ms": 200, "produce": {"topic": "t", "count": 3, "acks": "1"}},
        {"at_ms": 1950, "produce": {"topic": "t", "count": 2, "acks": "1"}},
        {"at_ms": 1980, "power_loss": 1},
        {"at_ms": 3000, "restart": 1}
      ],
      "run_until_ms": 6000
    }"#);
    l.cluster.run_until(1_970);
    let log = &replica(&l, 1, 0).log;
    assert_eq!(
        (log.log_end_offset(), log.flushed_offset),
        (5, 3),
        "a flush ran between the two writes"
    );
    l.run_to_end();
    assert_eq!(
        replica(&l, 1, 0).log.log_end_offset(),
        3,
        "the flushed records survived, the two after the flush did not"
    );
}

/// A clean stop flushes every log and checkpoints every high watermark
/// (LogManager.shutdown, ReplicaManager's last checkpoint), whichever of the
/// two a replica still needs: here the HW checkpoint is current (every
/// 100 ms) but the records are not flushed (the OS would take 10 minutes).
#[test]
fn a_clean_shutdown_flushes_every_log_and_checkpoints_every_high_watermark() {
    let mut l = lab(r#"{
      "seed": 3, "brokers": 2,
      "config": {"sim.os.flush.interval.ms": 600000, "replica.high.watermark.checkpoint.interval.ms": 100},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
      "steps": [
        {"at_ms": 1000, "produce": {"topic": "t", "count": 4, "acks": "all"}},
        {"at_ms": 3000, "shutdown": 2}
      ],
      "run_until_ms": 8000
    }"#);
    l.cluster.run_until(2_900);
    let log = &replica(&l, 2, 0).log;
    assert_eq!(
        (
            log.log_end_offset(),
            log.flushed_offset,
            log.checkpointed_high_watermark
        ),
        (4, 0, 4),
        "before the stop: HW checkpointed, records not flushed"
    );
    l.run_to_end();
    let log = &replica(&l, 2, 0).log;
    assert_eq!(
        (log.flushed_offset, log.checkpointed_high_watermark),
        (log.log_end_offset(), log.high_watermark),
        "after the clean stop"
    );
}

/// Not a Kafka rule but the lab's memory (issue 27): a follower's log holds
/// the same records as its leader's, so it shares the leader's chunks of them
/// (sent with the fetch response) instead of writing copies. Two of every
/// three record cells of a cluster with replication factor 3 are thus not
/// held twice, and what each log holds is unchanged.
#[test]
fn followers_share_their_leaders_record_chunks_instead_of_copying_them() {
    let mut l = lab(RF3);
    l.cluster.run_until(3_000);
    l.cluster.apply(produce("t", 5, "all")).unwrap();
    l.cluster.run_for(1_000);
    l.cluster.apply(produce("t", 10, "all")).unwrap();
    l.cluster.run_for(2_000);
    let leader = &replica(&l, 1, 0).log;
    assert_eq!(leader.log_end_offset(), 15);
    for b in [2, 3] {
        let log = &replica(&l, b, 0).log;
        assert_eq!(
            log.digest(),
            leader.digest(),
            "broker {b} holds the leader's records"
        );
        assert_eq!(
            log.record_chunks_shared_with(leader),
            (2, 2),
            "broker {b}'s log shares both chunks of the leader's"
        );
    }
    assert_no_violations(&l);
}

/// A broker's metadata cache is what the metadata log says up to its offset
/// (KAFKA_REPLICATION.md §5, "Propagation": every broker replays the same
/// log), so brokers that have replayed as far share its pages rather than
/// holding a copy each. Checked through a failover that rewrites leaders on
/// every page, and a broker's restart, which replays the log from the start
/// into a cache of its own.
#[test]
fn brokers_at_the_same_metadata_offset_share_their_metadata_cache_pages() {
    let mut l = lab(r#"{
      "seed": 3, "brokers": 6, "config": {"min.insync.replicas": 2},
      "topics": [{"name": "t", "partitions": 1500, "replication_factor": 3}],
      "steps": [{"at_ms": 4000, "crash": 1}, {"at_ms": 12000, "restart": 1}]
    }"#);
    let mut checked = 0;
    for t in [3_000, 10_000, 20_000] {
        l.cluster.run_until(t);
        let running: Vec<_> = l
            .cluster
            .brokers
            .iter()
            .filter(|b| b.is_running())
            .collect();
        let first = running[0];
        let pages = first.meta_leaders.len().div_ceil(512);
        assert_eq!(pages, 3);
        for b in &running[1..] {
            assert_eq!(b.metadata_offset, first.metadata_offset, "at {t} ms");
            for k in 0..pages {
                assert!(
                    b.meta_leaders.shares_page(&first.meta_leaders, k),
                    "at {t} ms broker {} holds a copy of broker {}'s page {k}",
                    b.id,
                    first.id
                );
                checked += 1;
            }
        }
    }
    // Three moments, five brokers (four while broker 1 is down) beside the first.
    assert_eq!(checked, 3 * (5 + 4 + 5));
    // A cache at another offset keeps its own pages: broker 1, stopped before
    // the failover rewrote every page, shares none with the others.
    l.cluster.apply(failover_lab::Action::Crash(1)).unwrap();
    l.cluster.run_for(15_000);
    let (stale, live) = (&l.cluster.brokers[0], &l.cluster.brokers[1]);
    assert!(stale.metadata_offset < live.metadata_offset);
    for k in 0..3 {
        assert!(
            !stale.meta_leaders.shares_page(&live.meta_leaders, k),
            "page {k}"
        );
    }
    assert_no_violations(&l);
}
