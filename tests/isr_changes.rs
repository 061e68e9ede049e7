//! The AlterPartition round trip between a leader and the controller, where
//! the lab used to differ from Kafka (issue "Fidelity 3", items 6, 9c, 9e):
//! how an unclean leader reports that it has recovered, what a leader does
//! with a refused ISR change, and how broker epochs keep a restarted follower
//! from rejoining on its old registration; and (session 14) that a fetch adds
//! only the follower that fetched. Each test states Kafka's rule and names the
//! class that implements it; the case-by-case ports of Kafka's own tests are
//! in `tests/conformance/`.

#[path = "conformance/harness.rs"]
#[allow(dead_code)]
mod harness;

mod common;
use common::*;

use failover_lab::sim::protocol::{BrokerState, ErrorCode, LeaderRecoveryState, MetadataRecord};
use failover_lab::sim::trace::TraceKind;
use harness::{default_epoch, registration, BrokerWorld};

/// Partition.makeLeader: a leader elected uncleanly (RECOVERING) marks itself
/// RECOVERED as it takes over and sends nothing for it; its next
/// AlterPartition — here the ISR expansion when the old leader returns —
/// carries the state, and the controller writes both in one change
/// (ReplicationControlManager.alterPartition → PartitionChangeBuilder). So
/// the unclean election scenario ends at partition epoch 3 (shrink, unclean
/// election, expansion), not 4.
#[test]
fn an_unclean_leader_marks_itself_recovered_and_the_controller_learns_it_with_the_next_isr_expansion(
) {
    let path = format!(
        "{}/scenarios/unclean-election.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut l = failover_lab::Lab::from_json(&text).unwrap_or_else(|e| panic!("{e}"));
    l.cluster.run_until(45_000);
    let r = reg(&l, 0);
    assert_eq!((r.leader, r.isr.clone()), (Some(2), vec![2]));
    assert_eq!(
        r.leader_recovery_state,
        LeaderRecoveryState::Recovering,
        "the controller has not heard from the leader yet"
    );
    assert_eq!(r.partition_epoch, 2, "shrink, then the unclean election");
    l.run_to_end();
    let r = reg(&l, 0);
    assert_eq!(r.isr, vec![1, 2]);
    assert_eq!(r.leader_recovery_state, LeaderRecoveryState::Recovered);
    assert_eq!(r.partition_epoch, 3, "the expansion carried RECOVERED");
    let changes = events(&l, |k| matches!(k, TraceKind::IsrChanged { .. }));
    assert_eq!(changes.len(), 3, "shrink, unclean election, expansion");
}

/// The same rule at the broker: becoming leader in the RECOVERING state sends
/// no AlterPartition; the leader's state is RECOVERED, and its first ISR
/// change says so (Partition.makeLeader, Partition.prepareIsrExpand).
#[test]
fn an_unclean_leader_sends_no_alter_partition_of_its_own_and_its_first_isr_change_says_recovered() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    let mut reg = registration(&[1, 2], &[1], Some(1), 6, 2);
    reg.leader_recovery_state = LeaderRecoveryState::Recovering;
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: reg,
    });
    assert!(w.isr_updates().is_empty(), "no AlterPartition of its own");
    assert_eq!(w.replica().recovery, LeaderRecoveryState::Recovered);
    w.fetch_follower(2, 10, default_epoch(2));
    let (_, isr, state) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 2]);
    assert_eq!(state, LeaderRecoveryState::Recovered);
}

/// Partition.handleAlterPartitionError: FENCED_LEADER_EPOCH means the
/// leader's view is stale. The proposal stays pending — not retried, no other
/// ISR change starts — and the committed ISR never takes the proposed value;
/// the next metadata for the partition replaces the pending state.
#[test]
fn a_fenced_leader_epoch_answer_keeps_the_proposal_pending_until_new_metadata_arrives() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    w.fetch_follower(2, 10, default_epoch(2));
    let (id, _, _) = w.isr_update();
    w.answer(id, Err(ErrorCode::FencedLeaderEpoch));
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    assert!(w.isr_updates().is_empty());
    w.retry_timer(id);
    assert!(w.isr_updates().is_empty(), "not retried");
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2], &[1, 2], Some(1), 5, 2),
    });
    assert!(w.replica().pending_isr.is_none());
    assert_eq!(w.isr(), vec![1, 2]);
}

/// KIP-903 (Partition.isReplicaIsrEligible, ReplicationControlManager's
/// broker-epoch check): a follower that restarted has a new broker epoch. A
/// fetch that still carries its old one — sent before the restart, answered
/// late — does not bring it back into the ISR once the leader's metadata has
/// the new registration, and a fetch from the new incarnation counts only once
/// the leader has replayed that registration; the proposal then carries the
/// new epoch, which is what the controller checks.
#[test]
fn a_restarted_follower_is_not_added_back_to_the_isr_with_its_old_broker_epoch() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    let old = default_epoch(2);
    let new = old + 1000;
    // Broker 2's new incarnation fetches before the leader has replayed its
    // registration: the leader's metadata still has the old epoch.
    w.fetch_follower(2, 10, new);
    assert!(
        w.isr_updates().is_empty(),
        "epoch unknown to the leader yet"
    );
    // The registration record arrives.
    w.publish(MetadataRecord::Broker {
        broker: 2,
        broker_epoch: new,
        fenced: false,
        in_controlled_shutdown: false,
    });
    // A late fetch of the old incarnation is refused outright.
    w.fetch_follower(2, 10, old);
    assert_eq!(w.fetch_error(), Some(ErrorCode::NotLeaderOrFollower));
    assert!(w.isr_updates().is_empty());
    // The new incarnation's next fetch is eligible.
    w.fetch_follower(2, 10, new);
    let (_, isr, _) = w.isr_update();
    let member = isr.iter().find(|m| m.broker_id == 2).copied();
    assert_eq!(member.and_then(|m| m.broker_epoch), Some(new));
}

/// Partition.maybeExpandIsr (Partition.scala, trunk). A follower's fetch can add that follower, and
/// only it, to the ISR (`prepareIsrExpand(currentState,
/// followerReplica.brokerId)`); another follower outside the ISR that is
/// caught up joins on its own next fetch (KAFKA_REPLICATION.md §2, "Expand
/// (leader)": "follower r ... is added"). Found by reading the source in
/// session 14: the lab proposed every caught-up follower at once.
#[test]
fn a_fetch_adds_only_the_follower_that_fetched_to_the_isr() {
    let mut w = BrokerWorld::leader(&[1, 2, 3], &[1]);
    // Both followers reach the log end; 2's fetch proposes {1, 2}, and
    // 3's, while that is in flight, proposes nothing.
    w.fetch_follower(2, 10, default_epoch(2));
    let (id, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 2]);
    w.fetch_follower(3, 10, default_epoch(3));
    assert!(
        w.isr_updates().is_empty(),
        "nothing while {{1, 2}} is in flight"
    );
    w.answer(id, Ok(registration(&[1, 2, 3], &[1, 2], Some(1), 5, 2)));
    assert_eq!(w.isr(), vec![1, 2]);
    // Follower 3 is caught up, but 2's next fetch does not add it.
    w.fetch_follower(2, 10, default_epoch(2));
    assert!(
        w.isr_updates().is_empty(),
        "only the fetching follower is considered"
    );
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    // 3's own next fetch does.
    w.fetch_follower(3, 10, default_epoch(3));
    let (_, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 2, 3]);
}

/// DelayedProduce: an acks=all write is answered once the HW passes its last
/// offset; a HW move that passes neither of two writes parked on one
/// partition keeps both waiting, and the move that passes both answers both
/// (the leader's list of produces waiting on the partition keeps each).
#[test]
fn two_acks_all_writes_parked_on_one_partition_both_wait_out_a_small_hw_move_and_both_complete() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    let first = w.produce_acks_all(2);
    let second = w.produce_acks_all(2);
    assert!(w.produce_answers().is_empty(), "both wait for follower 2");
    // Follower 2 reaches offset 5: the HW moves, past neither write (10-11, 12-13).
    w.fetch_follower(2, 5, default_epoch(2));
    assert_eq!(w.replica().log.high_watermark, 5);
    assert!(w.produce_answers().is_empty());
    // Then the log end: both are answered.
    w.fetch_follower(2, 14, default_epoch(2));
    assert_eq!(w.replica().log.high_watermark, 14);
    let mut answered = w.produce_answers();
    answered.sort_unstable();
    assert_eq!(answered, vec![first, second]);
}
