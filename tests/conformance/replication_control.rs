//! Kafka's `ReplicationControlManagerTest` and one `QuorumControllerTest` case
//! (metadata/src/test/java/org/apache/
//! kafka/controller/), the cases about fencing, ELR and AlterPartition, against
//! the controller's handlers. Kafka's brokers 0..3 are our brokers 1..4 (our
//! broker ids start at 1).

use failover_lab::sim::protocol::{ErrorCode, LeaderRecoveryState, MetadataRecord};

use super::harness::*;

// Kafka: ReplicationControlManagerTest.testShrinkAndExpandIsr
#[test]
fn a_leader_shrinks_and_expands_the_isr_through_alter_partition() {
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    assert_eq!(w.reg(0).leader, Some(1));
    let shrunk = w.alter_isr(&[1, 2]).expect("shrink accepted");
    assert_eq!(
        &shrunk,
        w.reg(0),
        "the response matches the committed state"
    );
    assert_eq!(shrunk.isr, vec![1, 2]);
    assert_eq!(shrunk.leader_epoch, 0);
    assert_eq!(shrunk.partition_epoch, 1);
    let grown = w.alter_isr(&[1, 2, 3]).expect("expand accepted");
    assert_eq!(&grown, w.reg(0));
    assert_eq!(grown.isr, vec![1, 2, 3]);
    assert_eq!(grown.partition_epoch, 2);
}

// Kafka: ReplicationControlManagerTest.testEligibleLeaderReplicas_ShrinkAndExpandIsr
#[test]
fn a_leader_initiated_shrink_below_min_isr_fills_the_elr_and_an_expand_clears_it() {
    let mut w = World::new(3, &[vec![1, 2, 3]], 2, true);
    let shrunk = w.alter_isr(&[1]).expect("shrink accepted");
    assert_eq!(
        &shrunk,
        w.reg(0),
        "the response matches the committed state"
    );
    assert_eq!(set(&w.reg(0).elr), vec![2, 3]);
    assert!(w.reg(0).last_known_elr.is_empty());
    let grown = w.alter_isr(&[1, 2]).expect("expand accepted");
    assert_eq!(&grown, w.reg(0));
    assert!(w.reg(0).elr.is_empty());
    assert!(w.reg(0).last_known_elr.is_empty());
}

// Kafka: ReplicationControlManagerTest.testEligibleLeaderReplicas_BrokerFence
#[test]
fn fenced_isr_members_enter_the_elr_once_the_isr_is_below_min_isr_and_stay_after_unfencing() {
    let mut w = World::new(4, &[vec![1, 2, 3, 4]], 3, true);
    w.fence(3);
    w.fence(4);
    assert_eq!(
        w.reg(0).elr,
        vec![4],
        "3 left while the ISR was still at min ISR"
    );
    assert!(w.reg(0).last_known_elr.is_empty());
    w.fence(2);
    assert_eq!(set(&w.reg(0).elr), vec![2, 4]);
    for b in 2..=4 {
        w.heartbeat(b, false);
    }
    assert_eq!(set(&w.reg(0).elr), vec![2, 4]);
    assert!(w.reg(0).last_known_elr.is_empty());
}

// Kafka: ReplicationControlManagerTest.testEligibleLeaderReplicas_EffectiveMinIsr
#[test]
fn min_isr_above_the_replication_factor_counts_as_the_replication_factor() {
    // min.insync.replicas=5 on a 3-replica topic is effectively 3: losing one
    // ISR member already puts the partition below min ISR.
    let mut w = World::new(3, &[vec![1, 2, 3]], 5, true);
    w.fence(3);
    assert_eq!(w.reg(0).isr, vec![1, 2]);
    assert_eq!(w.reg(0).elr, vec![3]);
}

// Kafka: ReplicationControlManagerTest.testEligibleLeaderReplicas_CleanElection
#[test]
fn when_the_last_isr_member_is_fenced_an_unfenced_elr_member_is_elected_cleanly() {
    let mut w = World::new(4, &[vec![1, 2, 3, 4]], 3, true);
    for b in [2, 3, 4] {
        w.fence(b);
    }
    assert_eq!(set(&w.reg(0).elr), vec![3, 4]);
    assert!(w.reg(0).last_known_elr.is_empty());
    w.heartbeat(3, false);
    // Kafka's fenceBrokers(0, 1) first unfences every other broker: 3 and
    // 4 (Kafka's 2 and 3) are both unfenced when 1 and 2 are fenced.
    w.heartbeat(4, false);
    w.fence(1);
    w.fence(2);
    let r = w.reg(0);
    assert_eq!(r.leader, Some(3));
    assert_eq!(r.isr, vec![3]);
    assert_eq!(set(&r.elr), vec![1, 4]);
    assert!(r.last_known_elr.is_empty());
}

// Kafka: ReplicationControlManagerTest.testEligibleLeaderReplicas_UncleanShutdown
#[test]
fn an_unclean_shutdown_leaves_the_elr_and_the_last_isr_member_becomes_the_last_known_leader() {
    let mut w = World::new(4, &[vec![1, 2, 3, 4]], 3, true);
    for b in [2, 3, 4] {
        w.fence(b);
    }
    assert_eq!(set(&w.reg(0).elr), vec![3, 4]);
    // Kafka calls RCM.handleBrokerShutdown(isCleanShutdown = false), which
    // ClusterControlManager.registerBroker calls for a new incarnation that
    // proves no clean shutdown: here the broker re-registers so, once its
    // old session is over.
    w.now = 20_000;
    w.register(4, false);
    assert_eq!(w.reg(0).elr, vec![3]);
    assert!(w.reg(0).last_known_elr.is_empty());
    w.register(1, false);
    let r = w.reg(0);
    assert_eq!(r.elr, vec![3]);
    assert_eq!(r.last_known_elr, vec![1]);
    assert_eq!(r.leader, NO_LEADER);
}

// Kafka: ReplicationControlManagerTest.testRemoveLeaderships
#[test]
fn a_fenced_broker_leaves_every_isr_it_was_in() {
    let assignment = vec![vec![1, 2, 3], vec![2, 3, 4], vec![3, 4, 1], vec![1, 3, 2]];
    let mut w = World::new(4, &assignment, 1, false);
    let led =
        |w: &World| -> Vec<usize> { (0..4).filter(|p| w.reg(*p).leader == Some(1)).collect() };
    let in_isr =
        |w: &World| -> Vec<usize> { (0..4).filter(|p| w.reg(*p).isr.contains(&1)).collect() };
    assert_eq!(
        led(&w),
        vec![0, 3],
        "Kafka's brokersToIsrs leaders of broker 0"
    );
    assert_eq!(in_isr(&w), vec![0, 2, 3]);
    w.fence(1);
    assert!(led(&w).is_empty());
    assert!(in_isr(&w).is_empty());
}

// Kafka: ReplicationControlManagerTest.testInvalidAlterPartitionRequests
#[test]
fn alter_partition_from_a_broker_that_is_not_the_leader_is_an_invalid_request() {
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    let reg = w.reg(0).clone();
    let e2 = w.epoch_of(2);
    let r = w.alter_partition(2, e2, reg.leader_epoch, reg.partition_epoch, &[1, 2]);
    assert_eq!(r, Err(ErrorCode::InvalidRequest));
    assert_eq!(w.reg(0), &reg);
}

// Kafka: ReplicationControlManagerTest.testInvalidAlterPartitionRequests
#[test]
fn alter_partition_with_a_replica_outside_the_assignment_or_without_the_leader_is_invalid() {
    let mut w = World::new(4, &[vec![1, 2, 3]], 1, false);
    let reg = w.reg(0).clone();
    assert_eq!(w.alter_isr(&[1, 2, 4]), Err(ErrorCode::InvalidRequest));
    assert_eq!(w.alter_isr(&[2, 3]), Err(ErrorCode::InvalidRequest));
    assert_eq!(w.reg(0), &reg);
}

// Kafka: ReplicationControlManagerTest.testInvalidAlterPartitionRequests
// Difference: error name: Kafka throws STALE_BROKER_EPOCH for the whole request, which the leader's AlterPartitionManager retries; we answer FENCED_LEADER_EPOCH for the partition, after which the leader keeps its proposal pending until new metadata arrives (both reject it and change nothing)
#[test]
fn alter_partition_with_a_stale_broker_epoch_is_rejected() {
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    let reg = w.reg(0).clone();
    let stale = w.epoch_of(1) - 1;
    let r = w.alter_partition(1, stale, reg.leader_epoch, reg.partition_epoch, &[1, 2]);
    assert_eq!(r, Err(ErrorCode::FencedLeaderEpoch));
    assert_eq!(w.reg(0), &reg);
}

// Kafka: ReplicationControlManagerTest.testInvalidAlterPartitionRequests
// Difference: error name: an epoch from the future means a stale controller to Kafka, which answers NOT_CONTROLLER for both; our single controller is never stale and answers INVALID_REQUEST (leader epoch) and INVALID_UPDATE_VERSION (partition epoch); both reject it and change nothing
#[test]
fn alter_partition_with_a_leader_or_partition_epoch_from_the_future_is_rejected() {
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    let reg = w.reg(0).clone();
    let e1 = w.epoch_of(1);
    assert_eq!(
        w.alter_partition(1, e1, 500, reg.partition_epoch, &[1, 2]),
        Err(ErrorCode::InvalidRequest)
    );
    assert_eq!(
        w.alter_partition(1, e1, reg.leader_epoch, 500, &[1, 2]),
        Err(ErrorCode::InvalidUpdateVersion)
    );
    assert_eq!(w.reg(0), &reg);
}

// Kafka: ReplicationControlManagerTest.testAlterPartitionShouldRejectFencedBrokers
// Difference: request versions: Kafka runs the case for every AlterPartition version and expects INELIGIBLE_REPLICA from each; we model one version (v3+, with broker epochs) and run it once
#[test]
fn alter_partition_adding_a_fenced_broker_is_rejected_as_ineligible() {
    // Kafka's brokers 0..4 and topic foo [[1, 2, 3, 4]]: ours 1..5, [[2, 3, 4, 5]].
    let mut w = World::new(5, &[vec![2, 3, 4, 5]], 1, false);
    w.fence(4);
    assert_eq!(w.reg(0).isr, vec![2, 3, 5]);
    assert_eq!((w.reg(0).leader, w.reg(0).leader_epoch), (Some(2), 0));
    assert_eq!(w.reg(0).partition_epoch, 1);
    let reg = w.reg(0).clone();
    assert_eq!(
        w.alter_isr(&[2, 3, 4, 5]),
        Err(ErrorCode::IneligibleReplica)
    );
    assert_eq!(w.reg(0), &reg);
    w.heartbeat(4, false);
    assert!(!w.fenced(4), "unfenced");
    let r = w.alter_isr(&[2, 3, 4, 5]).expect("accepted once unfenced");
    assert_eq!((r.leader, r.leader_epoch), (Some(2), 0));
    assert_eq!(r.isr, vec![2, 3, 4, 5]);
    assert_eq!(r.partition_epoch, 2);
}

// Kafka: ReplicationControlManagerTest.testAlterPartitionShouldRejectShuttingDownBrokers
// Difference: request versions: Kafka runs the case for every AlterPartition version and expects INELIGIBLE_REPLICA from each; we model one version (v3+, with broker epochs) and run it once
// Fixed: only members new to the ISR were checked; the controller checks every listed member, so re-listing one in controlled shutdown is refused too
#[test]
fn alter_partition_listing_a_broker_in_controlled_shutdown_is_rejected_even_if_already_in_the_isr()
{
    // Kafka's brokers 0..4 and topic foo [[1, 2, 3, 4]]: ours 1..5, [[2, 3, 4, 5]].
    let mut w = World::new(5, &[vec![2, 3, 4, 5]], 1, false);
    assert_eq!(w.reg(0).isr, vec![2, 3, 4, 5]);
    assert_eq!(
        (
            w.reg(0).leader,
            w.reg(0).leader_epoch,
            w.reg(0).partition_epoch
        ),
        (Some(2), 0, 0)
    );
    // Kafka's `inControlledShutdownBrokers(3)` replays only the broker's
    // registration change: it is still in the ISR.
    w.controller.brokers[3].in_controlled_shutdown = true;
    let reg = w.reg(0).clone();
    assert_eq!(
        w.alter_isr(&[2, 3, 4, 5]),
        Err(ErrorCode::IneligibleReplica)
    );
    assert_eq!(w.reg(0), &reg);
}

// Kafka: ReplicationControlManagerTest.testAlterPartitionShouldRejectBrokersWithStaleEpoch
// Difference: request versions: Kafka runs the case for every AlterPartition version and accepts the request below v3 (no broker epochs); we model only v3+
// Fixed: AlterPartition carried broker ids only; it now carries each member's broker epoch (KIP-903) and a member whose registration has a different epoch is refused
#[test]
fn alter_partition_listing_a_broker_at_a_stale_broker_epoch_is_rejected_as_ineligible() {
    // Kafka's brokers 0..4 and topic foo [[1, 2, 3, 4]]: ours 1..5, [[2, 3, 4, 5]].
    let mut w = World::new(5, &[vec![2, 3, 4, 5]], 1, false);
    w.alter_isr(&[2, 3, 4]).expect("shrink accepted");
    // The leader builds its request with the epochs it knows...
    let members = w.with_current_epochs(&[2, 3, 4, 5]);
    let leader_epoch = w.epoch_of(2);
    // ...while Kafka's broker 4 (ours 5) fails silently and registers again
    // (a new incarnation, once its old session is over), then is unfenced.
    let old_epoch = w.epoch_of(5);
    w.now = 20_000;
    let new_epoch = w.register(5, true);
    assert_ne!(new_epoch, old_epoch);
    assert!(w.fenced(5));
    assert_eq!(w.heartbeat(5, false), (false, false), "unfenced");
    let reg = w.reg(0).clone();
    let r = w.alter_partition_full(
        0,
        2,
        leader_epoch,
        0,
        1,
        members,
        LeaderRecoveryState::Recovered,
    );
    assert_eq!(r, Err(ErrorCode::IneligibleReplica));
    assert_eq!(w.reg(0), &reg);
}

// Kafka: ReplicationControlManagerTest.testInvalidAlterPartitionRequests
#[test]
fn alter_partition_in_the_recovering_state_is_invalid_with_more_than_the_leader_or_after_recovered()
{
    // The partition as created: ISR {1, 2, 3}, leader 1, RECOVERED.
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    let reg = w.reg(0).clone();
    assert_eq!(reg.leader_recovery_state, LeaderRecoveryState::Recovered);
    let (e1, le, pe) = (w.epoch_of(1), reg.leader_epoch, reg.partition_epoch);
    let recovering = LeaderRecoveryState::Recovering;
    let isr = w.with_current_epochs(&[1, 2]);
    assert_eq!(
        w.alter_partition_full(0, 1, e1, le, pe, isr, recovering),
        Err(ErrorCode::InvalidRequest),
        "a recovering leader's ISR is only itself"
    );
    let isr = w.with_current_epochs(&[1]);
    assert_eq!(
        w.alter_partition_full(0, 1, e1, le, pe, isr, recovering),
        Err(ErrorCode::InvalidRequest),
        "RECOVERED never goes back to RECOVERING"
    );
    assert_eq!(w.reg(0), &reg);
}

// Kafka: ReplicationControlManagerTest.testFenceMultipleBrokers
#[test]
fn fencing_several_brokers_moves_each_partition_to_a_surviving_isr_member() {
    let assignment = vec![vec![2, 3, 4], vec![3, 4, 5], vec![1, 3, 2]];
    let mut w = World::new(5, &assignment, 1, false);
    w.fence(3);
    w.fence(4);
    assert_eq!((w.reg(0).isr.clone(), w.reg(0).leader), (vec![2], Some(2)));
    assert_eq!((w.reg(1).isr.clone(), w.reg(1).leader), (vec![5], Some(5)));
    assert_eq!(w.reg(2).isr, vec![1, 2]);
    assert_ne!(w.reg(2).leader, Some(3));
}

// Kafka: ReplicationControlManagerTest.testProcessBrokerHeartbeatInControlledShutdown
#[test]
fn a_shutdown_request_puts_the_broker_in_controlled_shutdown_and_moves_its_leadership() {
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    let before = w.metadata_len();
    let epoch = w.epoch_of(1);
    w.heartbeat_at_offset(1, epoch, 0, true);
    assert!(w.controller.brokers[0].in_controlled_shutdown);
    assert_eq!(w.reg(0).isr, vec![2, 3]);
    assert_eq!(w.reg(0).leader, Some(2));
    // Two records, in Kafka's order: the broker's registration change, then
    // the partition's.
    let records: Vec<_> = w.controller.metadata_log[before..].to_vec();
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(matches!(
        *records[0],
        MetadataRecord::Broker {
            broker: 1,
            in_controlled_shutdown: true,
            ..
        }
    ));
    assert!(matches!(
        &*records[1],
        MetadataRecord::Partition { partition: 0, registration }
            if registration.isr == vec![2, 3] && registration.leader == Some(2)
    ));
}

/// Kafka's brokers 0..4 registered, 2..4 unfenced, topic foo
/// [[1, 2, 3], [2, 3, 4], [0, 2, 1]] created while 0 and 1 were fenced; here
/// +1 on every id.
fn balance_world() -> World {
    let assignment = vec![vec![2, 3, 4], vec![3, 4, 5], vec![1, 3, 2]];
    let mut w = World::new(5, &assignment, 1, false).acceptable(|b| b >= 3);
    w.controller.partitions[0] = registration(&[2, 3, 4], &[3, 4], Some(3), 0, 0);
    w.controller.partitions[2] = registration(&[1, 3, 2], &[3], Some(3), 0, 0);
    w
}

// Kafka: ReplicationControlManagerTest.testBalancePartitionLeaders
#[test]
fn a_preferred_replica_leads_again_once_it_is_unfenced_and_back_in_the_isr() {
    let mut w = balance_world();
    w.heartbeat(2, false);
    assert!(!w.fenced(2), "unfenced");
    w.alter_isr_of(0, &[2, 3, 4]).expect("expand accepted");
    for p in 0..3 {
        w.elect_preferred(p);
    }
    assert_eq!(w.reg(0).leader, Some(2));
    assert_eq!(w.reg(0).leader_epoch, 1);
    assert_eq!(
        w.reg(2).leader,
        Some(3),
        "its preferred replica is still fenced"
    );
    w.heartbeat(1, false);
    assert!(!w.fenced(1), "unfenced");
    w.alter_isr_of(2, &[1, 3, 2]).expect("expand accepted");
    w.elect_preferred(2);
    let leaders: Vec<_> = (0..3).map(|p| w.reg(p).leader).collect();
    assert_eq!(leaders, vec![Some(2), Some(3), Some(1)], "balanced");
}

// Kafka: ReplicationControlManagerTest.testElectPreferredLeaders
// Difference: the ElectLeaders answers: Kafka also checks each partition's reply (PREFERRED_LEADER_NOT_AVAILABLE, ELECTION_NOT_NEEDED, NONE, and UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist); our preferred election is the controller's own, without a reply, so the records written (none, then the two leader changes) are what is checked
#[test]
fn a_preferred_election_skips_replicas_that_are_fenced_or_shutting_down_or_outside_the_isr() {
    let mut w = balance_world();
    w.heartbeat(2, false);
    // Kafka's `inControlledShutdownBrokers(1)` replays only the broker's
    // registration change.
    w.controller.brokers[1].in_controlled_shutdown = true;
    let before = w.metadata_len();
    for p in 0..3 {
        w.elect_preferred(p);
    }
    assert_eq!(w.metadata_len(), before, "no election possible or needed");
    // Broker 2 registers again to leave controlled shutdown (once its old
    // session is over), and brokers 1 and 2 are unfenced.
    w.now = 20_000;
    w.register(2, true);
    w.heartbeat(1, false);
    w.heartbeat(2, false);
    assert!(!w.fenced(1) && !w.fenced(2));
    assert!(!w.controller.brokers[1].in_controlled_shutdown);
    w.alter_isr_of(0, &[2, 3, 4]).expect("expand accepted");
    w.alter_isr_of(2, &[1, 3, 2]).expect("expand accepted");
    for p in 0..3 {
        w.elect_preferred(p);
    }
    assert_eq!(w.reg(0).leader, Some(2));
    assert_eq!(w.reg(1).leader, Some(3));
    assert_eq!(w.reg(2).leader, Some(1));
}

// Kafka: ReplicationControlManagerTest.testEligibleLeaderReplicas_ShrinkToEmptyIsr
#[test]
fn a_clean_shutdown_of_the_last_isr_member_empties_the_isr_into_the_elr() {
    // Kafka's brokers 0..2 are ours 1..3; min ISR 3, ELR on.
    let mut w = World::new(3, &[vec![1, 2, 3]], 3, true);
    assert_eq!(w.reg(0).leader, Some(1));
    w.fence(2);
    w.fence(3);
    assert_eq!(set(&w.reg(0).elr), vec![2, 3]);
    assert!(w.reg(0).last_known_elr.is_empty());
    // Broker 1 shuts down cleanly and comes back as a new incarnation
    // (ClusterControlManager.registerBroker → RCM.handleBrokerShutdown with
    // isCleanShutdown), once its old session is over.
    w.now = 20_000;
    w.register(1, true);
    let r = w.reg(0);
    assert_eq!(set(&r.elr), vec![1, 2, 3]);
    assert_eq!(r.last_known_elr, vec![1]);
    assert!(r.isr.is_empty());
}

// Kafka: ReplicationControlManagerTest.testPreferredElectionDoesNotTriggerUncleanElection
// Difference: the ElectLeaders answer: Kafka also checks the reply, PREFERRED_LEADER_NOT_AVAILABLE for the partition; our preferred election is the controller's own (the automatic rebalance, or a command without a reply), so only "no record written" is checked
#[test]
fn a_preferred_election_never_falls_back_to_an_unclean_election() {
    let mut w = World::new(4, &[vec![1, 2, 3]], 1, false);
    w.fence(2);
    w.fence(3);
    w.fence(1);
    w.heartbeat(2, false);
    assert!(!w.fenced(2));
    assert_eq!(
        (w.reg(0).leader, w.reg(0).isr.clone()),
        (NO_LEADER, vec![1])
    );
    // unclean.leader.election.enable=true for the topic, then a preferred
    // election: broker 2 could lead uncleanly, but a preferred election
    // does not elect out of sync.
    w = w.unclean(true);
    let before = w.metadata_len();
    w.elect_preferred(0);
    assert_eq!(w.metadata_len(), before, "no record");
    assert_eq!(
        (w.reg(0).leader, w.reg(0).isr.clone()),
        (NO_LEADER, vec![1])
    );
}

/// RCM.testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions: every
/// broker fenced, then broker 3 (Kafka's 2) unfenced, with
/// unclean.leader.election.enable set from the start or not at all.
fn leaderless_partitions_after_one_broker_returns(unclean: bool) -> World {
    // Kafka's brokers 0..4 are ours 1..5: foo [[2, 3, 5], [2, 4, 5], [1, 3, 5]].
    let assignment = vec![vec![2, 3, 5], vec![2, 4, 5], vec![1, 3, 5]];
    let mut w = World::new(5, &assignment, 1, false).unclean(unclean);
    assert!((0..3).all(|p| w.reg(p).leader.is_some()));
    for b in 1..=5 {
        w.fence(b);
    }
    for p in 0..3 {
        assert_eq!(w.reg(p).isr, vec![5], "partition {p}");
        assert_eq!(w.reg(p).leader, NO_LEADER);
    }
    w.heartbeat(3, false);
    assert!(!w.fenced(3));
    w
}

// Kafka: ReplicationControlManagerTest.testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions[static]
// Difference: the periodic task: Kafka ends by running maybeElectUncleanLeaders (the unclean.leader.election.interval.ms task) and checks it writes nothing here; that task, which serves configs turned on dynamically, is not modelled, so the last check is not run
#[test]
fn with_unclean_election_configured_an_unfenced_broker_leads_the_leaderless_partitions_it_can() {
    let w = leaderless_partitions_after_one_broker_returns(true);
    assert_eq!((w.reg(0).leader, w.reg(0).isr.clone()), (Some(3), vec![3]));
    assert_eq!(
        (w.reg(1).leader, w.reg(1).isr.clone()),
        (NO_LEADER, vec![5])
    );
    assert_eq!((w.reg(2).leader, w.reg(2).isr.clone()), (Some(3), vec![3]));
}

// Kafka: ReplicationControlManagerTest.testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions[none]
// Difference: the periodic task: Kafka ends by running maybeElectUncleanLeaders (the unclean.leader.election.interval.ms task) and checks it writes nothing here; that task, which serves configs turned on dynamically, is not modelled, so the last check is not run
#[test]
fn without_unclean_election_an_unfenced_out_of_sync_broker_leads_nothing() {
    let w = leaderless_partitions_after_one_broker_returns(false);
    for p in 0..3 {
        assert_eq!(
            (w.reg(p).leader, w.reg(p).isr.clone()),
            (NO_LEADER, vec![5])
        );
    }
}

// Kafka: QuorumControllerTest.testUncleanShutdownBrokerElrEnabled
#[test]
fn an_unclean_restart_leaves_the_elr_but_not_the_last_known_leader_and_the_elr_member_is_elected() {
    // Brokers 1..3, session timeout 500 ms, min ISR 2, ELR on.
    let mut w = World::new(3, &[vec![1, 2, 3]], 2, true);
    w.config.broker_session_timeout_ms = 500;
    for b in 1..=3 {
        w.controller.brokers[b as usize - 1].registered = false;
        w.register(b, true);
        assert!(w.fenced(b), "broker {b}: registered, still fenced");
    }
    for b in 1..=3 {
        w.heartbeat(b, false);
        assert!(!w.fenced(b), "broker {b} unfenced");
    }
    // No more heartbeats: every session expires and every broker is fenced.
    w.now = 1_000;
    for b in 1..=3 {
        w.session_check(b);
    }
    assert!((1..=3).all(|b| w.fenced(b)));
    let r = w.reg(0).clone();
    assert_eq!(r.last_known_elr.len(), 1);
    assert!(r.isr.is_empty());
    assert_eq!(r.leader, NO_LEADER);
    assert_eq!(r.elr.len(), 2);
    let last_known = r.last_known_elr[0];
    let Some(&next_leader) = r.elr.iter().find(|b| **b != last_known) else {
        panic!("an ELR member besides the last known leader: {r:?}")
    };
    // The last known leader restarts without proving a clean shutdown: it
    // leaves the ELR but stays the last known leader.
    w.now = 2_000;
    w.register(last_known, false);
    assert_eq!(w.reg(0).elr, vec![next_leader]);
    assert_eq!(w.reg(0).last_known_elr, vec![last_known]);
    // The other one restarts after a clean shutdown (its previous broker
    // epoch): it stays in the ELR, and the last known leader is kept.
    w.register(next_leader, true);
    assert_eq!(w.reg(0).elr, vec![next_leader]);
    assert_eq!(w.reg(0).last_known_elr, vec![last_known]);
    // Unfenced, the ELR member is elected.
    w.heartbeat(next_leader, false);
    assert!(!w.fenced(next_leader));
    let r = w.reg(0);
    assert_eq!(r.isr, vec![next_leader]);
    assert!(r.elr.is_empty());
    assert!(r.last_known_elr.is_empty());
    assert_eq!(r.leader, Some(next_leader));
}
