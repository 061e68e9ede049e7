//! Every scenario in `scenarios/` runs and shows the Kafka outcome it teaches.

mod common;
use common::*;
use failover_lab::sim::trace::TraceKind;

fn run(name: &str) -> failover_lab::Lab {
    let mut l = scenario_file(name);
    l.run_to_end();
    l
}

#[test]
fn every_scenario_file_loads_and_runs_to_its_end() {
    let dir = format!("{}/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let mut l = lab(&std::fs::read_to_string(&path).unwrap());
            l.run_to_end();
            assert_eq!(l.cluster.now, l.scenario.run_until_ms, "{path:?}");
            n += 1;
        }
    }
    assert!(n >= 8, "at least eight scenarios ship, found {n}");
}

#[test]
fn leader_dies_isr_follower_takes_over_without_losing_acknowledged_records() {
    let l = run("leader-dies.json");
    let r = reg(&l, 0);
    assert_eq!((r.leader, r.leader_epoch), (Some(2), 1));
    assert_eq!(r.isr.len(), 3, "broker 1 rejoined after its restart");
    let rep = l.report();
    assert_eq!(rep.acked_records_lost, 0);
    assert!(rep.producers[0].acked > 1_000);
    assert_eq!(rep.producers[0].failed, 0);
    assert!(no_duplicates(&ids(&l, 2, 0)));
    assert_no_violations(&l);
}

#[test]
fn producer_times_out_on_the_isolated_leader_refreshes_metadata_and_finds_the_new_one() {
    let l = run("producer-rediscovers-leader.json");
    assert_eq!(reg(&l, 0).leader, Some(2));
    let p = &l.cluster.producers[0];
    assert!(p.stats.errors.contains_key("REQUEST_TIMED_OUT"));
    let found = events(
        &l,
        |k| matches!(k, TraceKind::ClientMetadataUpdated { client, leader: Some(2), leader_epoch: 1, .. } if client == "p1"),
    );
    assert_eq!(found.len(), 1);
    assert_eq!(
        p.stats.failed, 0,
        "retries were invisible to the application"
    );
    assert!(
        no_duplicates(&ids(&l, 2, 0)),
        "idempotence: no duplicate after retries"
    );
    // the healed zombie follows the new epoch and holds the same log
    assert!(!replica(&l, 1, 0).is_leader());
    assert_eq!(digest(&l, 1, 0), digest(&l, 2, 0));
    // the consumer continued on the new leader and saw every record exactly once
    let c = &l.cluster.consumers[0];
    let seen: Vec<u64> = c.consumed_records.iter().map(|x| x.id).collect();
    assert!(no_duplicates(&seen));
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

#[test]
fn every_new_leader_bumps_the_leader_epoch_and_records_it_in_its_epoch_cache() {
    let l = run("leader-epoch.json");
    let r = reg(&l, 0);
    // broker 1 had rejoined the ISR, so it is first in replica order again
    assert_eq!((r.leader, r.leader_epoch), (Some(1), 2));
    let epochs = replica(&l, 1, 0).log.epochs().to_vec();
    assert_eq!(
        epochs.iter().map(|e| e.0).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    for b in [2, 3] {
        assert_eq!(replica(&l, b, 0).log.epochs(), &epochs[..], "broker {b}");
    }
    let elected: Vec<u32> = events(&l, |k| matches!(k, TraceKind::LeaderElected { .. }))
        .iter()
        .map(|e| match &e.kind {
            TraceKind::LeaderElected { leader_epoch, .. } => *leader_epoch,
            _ => 0,
        })
        .collect();
    assert_eq!(elected, vec![1, 2]);
    assert_no_violations(&l);
}

#[test]
fn unclean_election_keeps_the_partition_available_and_loses_acknowledged_records() {
    let l = run("unclean-election.json");
    let r = reg(&l, 0);
    assert_eq!(r.leader, Some(2));
    assert_eq!(l.cluster.controller.unclean_elections, 1);
    assert!(l.report().acked_records_lost > 0);
    let lost = events(&l, |k| matches!(k, TraceKind::AckedRecordsLost { .. }));
    assert!(lost[0].text.contains("unclean election of broker 2"));
    // broker 1 came back and truncated to the divergence point
    assert!(!truncations(&l, 1).is_empty());
    assert_eq!(digest(&l, 1, 0), digest(&l, 2, 0));
    // T8: the consumer noticed by validating its position (KIP-320)
    assert_eq!(l.cluster.consumers[0].truncations_detected, 1);
    // outside the durability promise: counted, not an invariant violation
    assert_no_violations(&l);
}

#[test]
fn rejoining_former_leader_truncates_its_divergent_uncommitted_tail() {
    let l = run("rejoining-leader-truncates.json");
    assert_eq!(truncations(&l, 1), vec![(7, 4)]);
    let t = events(&l, |k| matches!(k, TraceKind::Truncated { broker: 1, .. }));
    assert!(
        t[0].text.contains("epoch 0 ends at offset 4"),
        "{}",
        t[0].text
    );
    assert_eq!(l.report().acked_records_lost, 0);
    assert!(no_duplicates(&ids(&l, 1, 0)));
    assert_eq!(ids(&l, 1, 0).len(), 7);
    assert_no_violations(&l);
}

#[test]
fn acks_1_acknowledged_record_is_lost_after_a_clean_election() {
    let l = run("acks1-loses-data.json");
    assert_eq!(l.report().acked_records_lost, 1);
    assert_eq!(truncations(&l, 1), vec![(11, 10)]);
    assert_eq!(
        l.cluster.consumers[0].consumed, 10,
        "no consumer ever saw it"
    );
    assert_no_violations(&l);
}

#[test]
fn min_insync_replicas_refuses_acks_all_writes_when_the_isr_is_too_small() {
    let l = run("min-isr-blocks-writes.json");
    let p = &l.cluster.producers[0];
    assert!(p.stats.errors.contains_key("NOT_ENOUGH_REPLICAS"));
    assert_eq!(reg(&l, 0).isr, vec![1, 2], "broker 2 rejoined");
    assert_eq!(l.report().acked_records_lost, 0);
    assert_eq!(p.stats.failed, 0, "delivery.timeout.ms covered the outage");
    assert_no_violations(&l);
}

#[test]
fn a_follower_that_stops_fetching_leaves_the_isr_and_rejoins_when_caught_up() {
    let l = run("leader-vs-follower.json");
    let changes: Vec<(Vec<u32>, Vec<u32>)> =
        events(&l, |k| matches!(k, TraceKind::IsrChanged { .. }))
            .iter()
            .map(|e| match &e.kind {
                TraceKind::IsrChanged {
                    isr_before,
                    isr_after,
                    ..
                } => (isr_before.clone(), isr_after.clone()),
                _ => unreachable!(),
            })
            .collect();
    assert_eq!(
        changes,
        vec![(vec![1, 2, 3], vec![1, 2]), (vec![1, 2], vec![1, 2, 3])]
    );
    assert_eq!(
        reg(&l, 0).leader_epoch,
        0,
        "ISR changes never bump the leader epoch"
    );
    let shrink = events(
        &l,
        |k| matches!(k, TraceKind::IsrChanged { isr_after, .. } if isr_after.len() == 2),
    );
    assert!(
        shrink[0].at_ms >= 35_000,
        "not before replica.lag.time.max.ms"
    );
    assert_no_violations(&l);
}

#[test]
fn a_whole_rack_fails_and_rf_3_across_three_racks_keeps_every_partition_available() {
    let mut l = scenario_file("rack-failure.json");
    // Rack-aware layout: every partition has one replica in each rack.
    for p in l.cluster.partitions.iter() {
        let mut racks: Vec<&str> = p
            .replicas
            .iter()
            .map(|b| l.cluster.rack_of(*b).unwrap())
            .collect();
        racks.sort_unstable();
        assert_eq!(racks, ["a", "b", "c"], "orders-{}", p.partition);
    }
    l.cluster.run_until(14_000);
    let acked_before = l.cluster.producers[0].stats.acked;
    l.cluster.run_until(30_000);
    // Rack a (brokers 1 and 2) is down: every partition is led from rack b or c
    // with an ISR of two, which still satisfies min.insync.replicas=2.
    let rep = l.report();
    assert_eq!(rep.brokers[0].state, "crashed");
    assert_eq!(rep.brokers[1].state, "crashed");
    for p in &rep.partitions {
        let leader = p.leader.expect("every partition has a leader");
        assert_ne!(
            l.cluster.rack_of(leader),
            Some("a"),
            "orders-{}",
            p.partition
        );
        assert_eq!(p.isr.len(), 2, "orders-{}: ISR {:?}", p.partition, p.isr);
    }
    assert!(
        l.cluster.producers[0].stats.acked > acked_before + 500,
        "acks=all writes continue"
    );
    l.run_to_end();
    let rep = l.report();
    assert_eq!(rep.acked_records_lost, 0);
    assert_eq!(rep.producers[0].failed, 0, "retries covered the failover");
    assert!(
        rep.partitions.iter().all(|p| p.isr.len() == 3),
        "rack a rejoined"
    );
    let c = &l.cluster.consumers[0];
    let seen: Vec<u64> = c.consumed_records.iter().map(|x| x.id).collect();
    assert!(no_duplicates(&seen));
    assert_eq!(
        c.consumed, rep.producers[0].acked,
        "every acked record was read"
    );
    assert_no_violations(&l);
}

#[test]
fn follower_fetching_consumer_reads_from_its_rack_and_falls_back_to_the_leader() {
    let mut l = scenario_file("follower-fetching.json");
    let target =
        |l: &failover_lab::Lab, c: usize| l.cluster.consumers[c].fetch_target(0, l.cluster.now);
    l.cluster.run_until(15_000);
    assert_eq!(target(&l, 0), Some(2), "c-b reads from the rack-b follower");
    assert_eq!(target(&l, 1), Some(1), "c-any reads from the leader");
    l.cluster.run_until(35_000);
    assert_eq!(
        target(&l, 0),
        Some(1),
        "broker 2 died: c-b is back on the leader"
    );
    l.run_to_end();
    assert_eq!(
        target(&l, 0),
        Some(2),
        "broker 2 is back in the ISR: named again"
    );
    for c in &l.cluster.consumers {
        let offsets: Vec<u64> = c.consumed_records.iter().map(|x| x.offset).collect();
        assert_eq!(
            offsets,
            (0..offsets.len() as u64).collect::<Vec<_>>(),
            "{}",
            c.name
        );
        let log = ids(&l, 1, 0);
        assert!(c
            .consumed_records
            .iter()
            .all(|r| log[r.offset as usize] == r.id));
    }
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}
