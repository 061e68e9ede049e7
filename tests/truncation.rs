//! Log reconciliation after failures: truncation by leader epoch (KIP-101,
//! KIP-279, truncate-on-fetch) against the pre-KIP-101 rule of truncating to the
//! local high watermark (`sim.truncation = high_watermark`). Vectors T4, T5, T6
//! of KAFKA_REPLICATION.md §11, each in both modes.

mod common;
use common::*;

fn with_mode(json: &str, mode: &str) -> failover_lab::Lab {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["config"]["sim.truncation"] = serde_json::Value::from(mode);
    let mut l = lab(&v.to_string());
    l.run_to_end();
    l
}

fn violated(l: &failover_lab::Lab, invariant: &str) -> bool {
    l.cluster
        .violations()
        .iter()
        .any(|v| v.invariant == invariant)
}

/// KIP-101 scenario 1: B leads, A follows, m1 and m2 are committed. A restarts
/// (its checkpointed HW is 0) and B dies before A has fetched again. As in
/// 0.10, A's quick restart keeps it in the ISR (`sim.fence.on.reregistration`).
/// Both KIP-101 scenarios predate eligible leader replicas (KIP-966), so they
/// run with `eligible.leader.replicas.enable=false`, the ISR rules of their time.
const KIP101_SCENARIO_1: &str = r#"{
  "seed": 4, "brokers": 2,
  "config": {"replica.high.watermark.checkpoint.interval.ms": 600000,
             "sim.fence.on.reregistration": false,
             "eligible.leader.replicas.enable": false},
  "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": [[2, 1]]}],
  "steps": [
    {"at_ms": 2000, "produce": {"topic": "t", "count": 2, "acks": "all"}},
    {"at_ms": 3000, "crash": 1},
    {"at_ms": 3500, "restart": 1},
    {"at_ms": 3500, "crash": 2},
    {"at_ms": 30000, "restart": 2}
  ],
  "run_until_ms": 45000
}"#;

#[test]
fn t4_kip101_scenario_1_epoch_truncation_keeps_committed_records() {
    let l = with_mode(KIP101_SCENARIO_1, "leader_epoch");
    assert_eq!(reg(&l, 0).leader, Some(1));
    assert_eq!(replica(&l, 1, 0).log.log_end_offset(), 2);
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

#[test]
fn t4_kip101_scenario_1_high_watermark_truncation_loses_a_committed_record() {
    let l = with_mode(KIP101_SCENARIO_1, "high_watermark");
    assert_eq!(
        reg(&l, 0).leader,
        Some(1),
        "A is elected cleanly (it is in the ISR)"
    );
    assert_eq!(
        truncations(&l, 1),
        vec![(2, 0)],
        "A truncated to its stale HW"
    );
    assert_eq!(l.report().acked_records_lost, 2);
    assert!(violated(&l, "no_acked_record_lost"));
}

/// KIP-101 scenario 2: both replicas lose power; B (without m2 on disk) comes
/// back first, leads and takes m3; then A (with m2 flushed) returns.
const KIP101_SCENARIO_2: &str = r#"{
  "seed": 4, "brokers": 2,
  "config": {"sim.os.flush.interval.ms": 600000, "sim.fence.on.reregistration": false,
             "eligible.leader.replicas.enable": false},
  "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
  "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "all", "config": {"request.timeout.ms": 3000}}],
  "steps": [
    {"at_ms": 2000, "produce": {"topic": "t", "count": 1, "producer": "p"}},
    {"at_ms": 3000, "flush": 1},
    {"at_ms": 3000, "flush": 2},
    {"at_ms": 4000, "produce": {"topic": "t", "count": 1, "producer": "p"}},
    {"at_ms": 5500, "flush": 1},
    {"at_ms": 6000, "power_loss": 1},
    {"at_ms": 6000, "power_loss": 2},
    {"at_ms": 7000, "restart": 2},
    {"at_ms": 25000, "produce": {"topic": "t", "count": 1, "producer": "p"}},
    {"at_ms": 40000, "restart": 1}
  ],
  "run_until_ms": 60000
}"#;

#[test]
fn t5_kip101_scenario_2_epoch_truncation_converges() {
    let l = with_mode(KIP101_SCENARIO_2, "leader_epoch");
    assert_eq!(truncations(&l, 1), vec![(2, 1)]);
    assert_eq!(digest(&l, 1, 0), digest(&l, 2, 0));
    assert!(!violated(&l, "log_matching"));
}

#[test]
fn t5_kip101_scenario_2_high_watermark_truncation_leaves_diverging_logs() {
    let l = with_mode(KIP101_SCENARIO_2, "high_watermark");
    assert!(
        truncations(&l, 1).is_empty(),
        "A's HW 2 covers m2: nothing truncated"
    );
    let a = ids(&l, 1, 0);
    let b = ids(&l, 2, 0);
    assert_eq!(a.len(), b.len());
    assert_eq!(a[0], b[0]);
    assert_ne!(a[1], b[1], "same offset, different record");
    assert!(violated(&l, "log_matching"));
}

/// KIP-279's fast leader change (KAFKA-6361): A holds records of epoch 0 that B
/// never had; B leads in epoch 1 and appends; then A is elected again (epoch 2)
/// before it has truncated, and appends. B must end with A's log.
const KIP279_DOUBLE_FAILOVER: &str = r#"{
  "seed": 12, "brokers": 2,
  "config": {"unclean.leader.election.enable": true},
  "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": [[1, 2]]}],
  "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "1", "config": {"request.timeout.ms": 2000}}],
  "steps": [
    {"at_ms": 2000, "produce": {"topic": "t", "count": 11, "producer": "p"}},
    {"at_ms": 2500, "slow": {"broker": 2, "topic": "t"}},
    {"at_ms": 3500, "produce": {"topic": "t", "count": 10, "producer": "p"}},
    {"at_ms": 4000, "isolate": 1},
    {"at_ms": 4000, "unslow": {"broker": 2, "topic": "t"}},
    {"at_ms": 16000, "produce": {"topic": "t", "count": 5, "producer": "p"}},
    {"at_ms": 26000, "crash": 2},
    {"at_ms": 26000, "heal": 1},
    {"at_ms": 40000, "produce": {"topic": "t", "count": 5, "producer": "p"}},
    {"at_ms": 45000, "restart": 2}
  ],
  "run_until_ms": 70000
}"#;

#[test]
fn t6_kip279_fast_double_failover_follower_walks_back_to_the_common_epoch() {
    let l = with_mode(KIP279_DOUBLE_FAILOVER, "leader_epoch");
    let r = reg(&l, 0);
    assert_eq!((r.leader, r.leader_epoch), (Some(1), 2));
    // A: [0-10 e0][11-20 e0][21.. e2]; its cache {0→0, 2→21}
    assert_eq!(replica(&l, 1, 0).log.epochs(), &[(0, 0), (2, 21)]);
    // B had [0-10 e0][11-15 e1]: the leader answers (epoch 0, end 21), B's own
    // epoch 0 ends at 11 → it truncates to 11, then fetches A's records.
    assert_eq!(truncations(&l, 2), vec![(16, 11)]);
    assert_eq!(digest(&l, 1, 0), digest(&l, 2, 0), "no divergence");
    assert!(!violated(&l, "log_matching"));
}

#[test]
fn t6_fast_double_failover_with_high_watermark_truncation_diverges() {
    let l = with_mode(KIP279_DOUBLE_FAILOVER, "high_watermark");
    assert_ne!(digest(&l, 1, 0), digest(&l, 2, 0), "logs diverge silently");
}

#[test]
fn the_why_not_truncate_to_hw_tour_loses_records_only_in_the_old_mode() {
    let old = {
        let mut l = scenario_file("tour-9-why-not-truncate-to-hw.json");
        l.run_to_end();
        l
    };
    assert_eq!(old.report().acked_records_lost, 2);
    assert!(violated(&old, "no_acked_record_lost"));
    let mut v = old.scenario.source.clone();
    v["config"]["sim.truncation"] = serde_json::Value::from("leader_epoch");
    v["config"]["sim.fence.on.reregistration"] = serde_json::Value::Bool(false);
    let mut new = lab(&v.to_string());
    new.run_to_end();
    assert_eq!(new.report().acked_records_lost, 0);
    assert_no_violations(&new);
}
