//! Leader failover: fencing, election from the ISR in replica order, the
//! leader-epoch bump, offline partitions, controlled shutdown, preferred election
//! (KAFKA_REPLICATION.md §3, §5; vector T3).

mod common;
use common::*;
use failover_lab::sim::trace::TraceKind;
use failover_lab::Action;

const THREE: &str = r#"{
  "seed": 3, "brokers": 3,
  "config": {"min.insync.replicas": 2},
  "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
  "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 50}],
  "run_until_ms": 5000
}"#;

#[test]
fn fenced_leader_is_replaced_by_first_isr_member_in_replica_order_with_epoch_bump() {
    let mut l = lab(THREE);
    l.cluster.run_until(5_000);
    assert_eq!(reg(&l, 0).leader, Some(1));
    l.cluster.apply(Action::Crash(1)).unwrap();
    // Not yet: the controller waits broker.session.timeout.ms for heartbeats.
    l.cluster.run_until(10_000);
    assert_eq!(reg(&l, 0).leader, Some(1));
    l.cluster.run_until(16_000);
    let r = reg(&l, 0);
    assert_eq!(
        r.leader,
        Some(2),
        "first of [1,2,3] that is in ISR and alive"
    );
    assert_eq!(r.leader_epoch, 1);
    assert_eq!(r.isr, vec![2, 3]);
    assert!(replica(&l, 2, 0).is_leader());
    assert_eq!(replica(&l, 2, 0).leader_epoch, 1);
    // the epoch cache of the new leader starts epoch 1 at its LEO
    let start = replica(&l, 2, 0).log.epoch_start_offset(1);
    assert!(start.is_some());
    l.cluster.run_until(30_000);
    assert_no_violations(&l);
    assert_eq!(l.cluster.invariants.total_lost(), 0);
}

#[test]
fn t3_rejoining_old_leader_truncates_its_uncommitted_suffix_and_rejoins_the_isr() {
    // Followers stop fetching, the leader takes writes it cannot commit (acks=all
    // with min ISR 2 parks them), then dies. Broker 2 wins; broker 1 returns.
    let mut l = lab(r#"{
      "seed": 11, "brokers": 3,
      "config": {"min.insync.replicas": 2},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
      "steps": [
        {"at_ms": 3000, "produce": {"topic": "t", "count": 4, "acks": "all"}},
        {"at_ms": 4000, "slow": {"broker": 2, "topic": "t"}},
        {"at_ms": 4000, "slow": {"broker": 3, "topic": "t"}},
        {"at_ms": 5000, "produce": {"topic": "t", "count": 3, "acks": "all"}},
        {"at_ms": 6000, "crash": 1},
        {"at_ms": 6500, "unslow": {"broker": 2, "topic": "t"}},
        {"at_ms": 6500, "unslow": {"broker": 3, "topic": "t"}},
        {"at_ms": 25000, "restart": 1}
      ],
      "run_until_ms": 60000
    }"#);
    l.cluster.run_until(5_500);
    assert_eq!(replica(&l, 1, 0).log.log_end_offset(), 7);
    assert_eq!(replica(&l, 1, 0).log.high_watermark, 4);
    assert_eq!(replica(&l, 2, 0).log.log_end_offset(), 4);
    l.run_to_end();
    // broker 1 truncated 7 → 4 on its first fetch (DivergingEpoch(0, 4))
    assert_eq!(truncations(&l, 1), vec![(7, 4)]);
    let r = reg(&l, 0);
    assert_eq!((r.leader, r.leader_epoch), (Some(2), 1));
    assert_eq!(r.isr, vec![1, 2, 3], "broker 1 rejoined the ISR");
    // the producer's 3 unacknowledged records were retried on broker 2 in epoch 1
    let logs: Vec<u64> = (1..=3).map(|b| digest(&l, b, 0)).collect();
    assert!(logs.iter().all(|d| *d == logs[0]), "all logs identical");
    assert_eq!(replica(&l, 1, 0).log.epochs(), &[(0, 0), (1, 4)]);
    let all = ids(&l, 2, 0);
    assert_eq!(all.len(), 7);
    assert!(
        no_duplicates(&all),
        "idempotent retries wrote each record once"
    );
    assert_eq!(l.report().producers[0].acked, 7);
    assert_no_violations(&l);
}

#[test]
fn partition_goes_offline_with_leader_none_and_returns_when_an_isr_member_restarts() {
    // The classic rule (before KIP-966): the ISR keeps its last member.
    // Kafka 4.1+ new clusters have eligible leader replicas on, which empties
    // the ISR instead (tests/elr.rs); this test pins the older behaviour.
    let mut l = lab(r#"{
      "seed": 5, "brokers": 2,
      "config": {"eligible.leader.replicas.enable": false},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
      "steps": [
        {"at_ms": 1000, "produce": {"topic": "t", "count": 5}},
        {"at_ms": 3000, "crash": 2},
        {"at_ms": 20000, "crash": 1},
        {"at_ms": 40000, "restart": 1}
      ],
      "run_until_ms": 60000
    }"#);
    l.cluster.run_until(35_000);
    let r = reg(&l, 0);
    assert_eq!(r.leader, None, "offline: no live ISR member");
    assert_eq!(r.isr, vec![1], "the ISR keeps its last member");
    assert!(l.describe().contains("Leader: none"));
    l.run_to_end();
    let r = reg(&l, 0);
    assert_eq!(r.leader, Some(1), "back online when the ISR member returns");
    assert_eq!(l.cluster.invariants.total_lost(), 0);
    assert!(!events(&l, |k| matches!(
        k,
        TraceKind::LeaderElected { leader: None, .. }
    ))
    .is_empty());
}

#[test]
fn out_of_sync_replica_is_not_elected_without_unclean_leader_election() {
    // Pre-KIP-966 ISR bookkeeping (the last member stays in the ISR); with
    // ELR on the outcome is the same leaderless partition, with an empty ISR.
    let mut l = lab(r#"{
      "seed": 5, "brokers": 2,
      "config": {"eligible.leader.replicas.enable": false},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
      "steps": [
        {"at_ms": 1000, "crash": 2},
        {"at_ms": 20000, "produce": {"topic": "t", "count": 5, "acks": "1"}},
        {"at_ms": 25000, "crash": 1},
        {"at_ms": 26000, "restart": 2}
      ],
      "run_until_ms": 60000
    }"#);
    l.run_to_end();
    assert_eq!(
        reg(&l, 0).leader,
        None,
        "broker 2 is alive but not in the ISR"
    );
    assert_eq!(reg(&l, 0).isr, vec![1]);
}

#[test]
fn controlled_shutdown_moves_leadership_away_before_the_broker_stops() {
    let mut l = lab(THREE);
    l.cluster.run_until(5_000);
    let acked_before = l.report().producers[0].acked;
    l.cluster.apply(Action::Shutdown(1)).unwrap();
    // Two steps: leadership moves at once, the shutdown is granted on a later
    // heartbeat once the other brokers have replayed the change.
    l.cluster.run_until(9_000);
    let r = reg(&l, 0);
    assert_eq!(r.leader, Some(2));
    assert_eq!(r.leader_epoch, 1);
    assert!(!r.isr.contains(&1));
    assert_eq!(l.report().brokers[0].state, "shut_down");
    let shut = events(&l, |k| matches!(k, TraceKind::BrokerShutDown { .. }));
    let elected = events(&l, |k| matches!(k, TraceKind::LeaderElected { .. }));
    assert!(
        elected.last().unwrap().at_ms <= shut[0].at_ms,
        "leadership moved first"
    );
    l.cluster.run_until(11_000);
    // no session timeout was needed: the producer barely noticed
    assert!(l.report().producers[0].acked > acked_before);
    assert_eq!(l.report().producers[0].failed, 0);
    assert_no_violations(&l);
}

#[test]
fn preferred_leader_election_returns_leadership_to_the_first_replica() {
    let mut l = lab(THREE);
    l.cluster.run_until(2_000);
    l.cluster.apply(Action::Crash(1)).unwrap();
    l.cluster.run_until(15_000);
    l.cluster.apply(Action::Restart(1)).unwrap();
    l.cluster.run_until(25_000);
    assert_eq!(reg(&l, 0).leader, Some(2));
    assert!(
        reg(&l, 0).isr.contains(&1),
        "broker 1 caught up and rejoined"
    );
    l.cluster
        .apply(Action::ElectPreferred {
            topic: "t".into(),
            partition: 0,
        })
        .unwrap();
    l.cluster.run_until(27_000);
    assert_eq!(reg(&l, 0).leader, Some(1));
    assert_eq!(reg(&l, 0).leader_epoch, 2);
    assert_no_violations(&l);
}

#[test]
fn zombie_leader_cannot_commit_acks_all_writes_and_its_tail_is_truncated_on_heal() {
    // Broker 1 leads; its followers pause, it appends 3 acks=all records it
    // cannot commit, and is cut off from the network with them.
    let mut l = lab(r#"{
      "seed": 9, "brokers": 3,
      "config": {"min.insync.replicas": 2},
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
      "steps": [
        {"at_ms": 1000, "produce": {"topic": "t", "count": 3}},
        {"at_ms": 2000, "slow": {"broker": 2, "topic": "t"}},
        {"at_ms": 2000, "slow": {"broker": 3, "topic": "t"}},
        {"at_ms": 3000, "produce": {"topic": "t", "count": 3, "acks": "all"}},
        {"at_ms": 3100, "isolate": 1},
        {"at_ms": 3200, "unslow": {"broker": 2, "topic": "t"}},
        {"at_ms": 3200, "unslow": {"broker": 3, "topic": "t"}},
        {"at_ms": 60000, "heal": 1}
      ],
      "run_until_ms": 90000
    }"#);
    l.cluster.run_until(59_000);
    let z = replica(&l, 1, 0);
    assert!(z.is_leader(), "the isolated broker still believes it leads");
    assert_eq!(z.leader_epoch, 0);
    assert_eq!(z.log.log_end_offset(), 6);
    assert_eq!(z.log.high_watermark, 3, "it could not commit the tail");
    let r = reg(&l, 0);
    assert_eq!((r.leader, r.leader_epoch), (Some(2), 1));
    l.run_to_end();
    let z = replica(&l, 1, 0);
    assert!(!z.is_leader(), "the zombie learned epoch 1 and follows");
    assert_eq!(
        truncations(&l, 1),
        vec![(6, 3)],
        "its uncommitted tail is gone"
    );
    assert_eq!(digest(&l, 1, 0), digest(&l, 2, 0));
    let all = ids(&l, 2, 0);
    assert_eq!(
        all.len(),
        6,
        "the producer's retries landed on broker 2 once"
    );
    assert!(no_duplicates(&all));
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}
