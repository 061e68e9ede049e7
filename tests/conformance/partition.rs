//! Kafka's `PartitionTest` (core/src/test/scala/unit/kafka/cluster/), the
//! leader-side rules: high watermark over the maximal ISR with the min-ISR
//! gate, ISR shrink and expand conditions, the AlterPartition round trip and
//! the follower-fetch checks. Kafka's `Partition` with its mocked metadata
//! cache and AlterPartitionManager becomes one real broker ([`BrokerWorld`]):
//! it replays metadata (the brokers' fencing and epochs are its own view),
//! answers fetches, sends AlterPartition and gets the controller's answer.
//! Kafka's local broker 0 and remotes 1, 2 are our 1 and 2, 3;
//! `replica.lag.time.max.ms` is Kafka's default 30 000.

use failover_lab::sim::log::{Log, Record};
use failover_lab::sim::partition::Replica;

use failover_lab::sim::protocol::{BrokerState, ErrorCode, MetadataRecord};

use super::harness::{default_epoch, registration, BrokerWorld, T0};

const LAG: u64 = 30_000;

fn seed(r: &mut Replica, n: u64, epoch: u32) {
    let base = r.log.log_end_offset();
    for i in 0..n {
        r.log.append(Record::plain(base + i, epoch));
    }
}

// Kafka: PartitionTest.testMaybeShrinkIsr
#[test]
fn an_isr_member_not_caught_up_within_the_lag_time_is_shrunk_and_the_hw_waits_for_the_commit() {
    let mut w = BrokerWorld::leader(&[1, 2, 3], &[1, 2, 3]);
    assert_eq!(w.high_watermark(), 0);
    w.fetch_follower(2, 10, default_epoch(2));
    let f = w.follower_state(3);
    assert_eq!(
        (f.last_caught_up_ms.get(), f.log_end_offset.get()),
        (Some(T0), None)
    );
    // On becoming leader every ISR member counts as caught up.
    w.maybe_shrink_isr();
    assert!(w.isr_updates().is_empty());
    assert_eq!(w.isr(), vec![1, 2, 3]);
    w.now += LAG + 1;
    w.maybe_shrink_isr();
    let (id, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 2]);
    for m in &isr {
        assert_eq!(m.broker_epoch, Some(default_epoch(m.broker_id)), "{m:?}");
    }
    assert_eq!(w.isr(), vec![1, 2, 3]);
    assert_eq!(w.maximal_isr(), vec![1, 2, 3]);
    assert_eq!(w.high_watermark(), 0, "the in-flight shrink still holds 3");
    w.answer(id, Ok(registration(&[1, 2, 3], &[1, 2], Some(1), 5, 2)));
    assert_eq!(w.replica().partition_epoch, 2);
    assert!(w.isr_updates().is_empty());
    assert_eq!(w.isr(), vec![1, 2]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    assert_eq!(w.high_watermark(), 10, "advanced to the log end");
}

// Kafka: PartitionTest.testRetryShrinkIsr
#[test]
fn a_shrink_that_fails_with_a_retriable_error_is_sent_again_and_the_hw_advances_once_committed() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    assert_eq!(w.high_watermark(), 0);
    w.now += LAG + 1;
    w.maybe_shrink_isr();
    let (id, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1]);
    assert_eq!(w.isr(), vec![1, 2]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    // The shrink fails and is retried.
    w.answer(id, Err(ErrorCode::NetworkException));
    assert_eq!(w.alter_partition_failures(), 1);
    assert_eq!(w.replica().partition_epoch, 1);
    let (again, isr, _) = w.isr_update();
    assert_eq!((again, BrokerState::ids(&isr)), (id, vec![1]));
    assert_eq!(w.isr(), vec![1, 2]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    assert_eq!(w.high_watermark(), 0);
    // The retry succeeds.
    w.answer(id, Ok(registration(&[1, 2], &[1], Some(1), 5, 2)));
    assert_eq!(w.replica().partition_epoch, 2);
    assert!(w.isr_updates().is_empty());
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1]);
    assert_eq!(w.high_watermark(), 10);
}

// Kafka: PartitionTest.testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp
#[test]
fn a_follower_that_reached_the_leaders_end_at_its_previous_fetch_is_not_shrunk() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    let state = |w: &BrokerWorld| {
        let f = w.follower_state(2);
        (f.last_caught_up_ms.get(), f.log_end_offset.get())
    };
    assert_eq!(w.high_watermark(), 0);
    assert_eq!(state(&w), (Some(T0), None));
    // A first fetch 5 s in, not yet at the log end.
    w.now += 5_000;
    let first_fetch = w.now;
    w.fetch_follower(2, 5, default_epoch(2));
    assert_eq!(state(&w), (Some(T0), Some(5)));
    assert_eq!(w.high_watermark(), 5);
    // New records; the follower reaches the old log end, more than the lag
    // time after the leader started.
    w.now += 5_001;
    if let Some(r) = w.broker.replicas.get_mut(&0) {
        seed(r, 5, 5);
    }
    w.fetch_follower(2, 10, default_epoch(2));
    assert_eq!(state(&w), (Some(first_fetch), Some(10)));
    assert_eq!(w.high_watermark(), 10);
    w.maybe_shrink_isr();
    assert_eq!(w.isr(), vec![1, 2]);
    assert!(w.isr_updates().is_empty());
}

// Kafka: PartitionTest.testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd
#[test]
fn a_follower_at_the_leaders_log_end_is_not_shrunk_however_long_it_has_been() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    assert_eq!(w.high_watermark(), 0);
    w.fetch_follower(2, 10, default_epoch(2));
    let f = w.follower_state(2);
    assert_eq!(
        (f.last_caught_up_ms.get(), f.log_end_offset.get()),
        (Some(T0), Some(10))
    );
    assert_eq!(w.high_watermark(), 10);
    w.now += 30_001;
    w.maybe_shrink_isr();
    assert_eq!(w.isr(), vec![1, 2]);
    assert!(w.isr_updates().is_empty());
}

// Kafka: PartitionTest.testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR
#[test]
fn the_hw_does_not_advance_while_the_committed_isr_is_below_min_isr() {
    // min.insync.replicas=3; replicas {1, 2, 3}, ISR {1, 2}.
    let mut w = BrokerWorld::leader(&[1, 2, 3], &[1, 2]);
    w.partitions[0].config.min_insync_replicas = 3;
    let under_min_isr = |w: &BrokerWorld| w.isr().len() < 3;
    assert!(under_min_isr(&w));
    assert_eq!(w.high_watermark(), 0);
    w.fetch_follower(2, 10, default_epoch(2));
    assert_eq!(w.high_watermark(), 0);
    // The maximal ISR reaches min ISR; the committed one does not.
    w.fetch_follower(3, 10, default_epoch(3));
    assert_eq!(w.high_watermark(), 0);
    assert_eq!(w.maximal_isr(), vec![1, 2, 3]);
    let (id, _, _) = w.isr_update();
    w.answer(id, Ok(registration(&[1, 2, 3], &[1, 2, 3], Some(1), 5, 2)));
    assert!(!under_min_isr(&w));
    assert_eq!(w.high_watermark(), 10);
}

/// PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower:
/// follower 2 catches up (HW 10), the leader's metadata then says `state` of
/// it, the leader appends 10 records in its epoch and the controller shrinks
/// the ISR to {1}. Returns the leader's high watermark.
fn hw_after_shrink_with_follower(state: Option<MetadataRecord>) -> u64 {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    assert_eq!(w.isr(), vec![1, 2]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    w.fetch_follower(2, 10, default_epoch(2));
    let f = w.follower_state(2);
    assert_eq!(
        (f.last_caught_up_ms.get(), f.log_end_offset.get()),
        (Some(T0), Some(10))
    );
    assert_eq!(w.high_watermark(), 10);
    if let Some(rec) = state {
        w.publish(rec);
    }
    if let Some(r) = w.broker.replicas.get_mut(&0) {
        seed(r, 10, 5);
    }
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2], &[1], Some(1), 5, 2),
    });
    assert!(w.replica().is_leader());
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1]);
    assert!(w
        .replica()
        .out_of_sync(&w.broker.followers, 1, w.now, LAG)
        .is_empty());
    w.high_watermark()
}

fn broker_2(fenced: bool, in_controlled_shutdown: bool) -> MetadataRecord {
    MetadataRecord::Broker {
        broker: 2,
        broker_epoch: default_epoch(2),
        fenced,
        in_controlled_shutdown,
    }
}

// Kafka: PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower[fenced]
#[test]
fn a_fenced_caught_up_follower_outside_the_isr_does_not_hold_back_the_hw() {
    assert_eq!(
        hw_after_shrink_with_follower(Some(broker_2(true, false))),
        20
    );
}

// Kafka: PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower[shutdown]
#[test]
fn a_shutting_down_caught_up_follower_outside_the_isr_does_not_hold_back_the_hw() {
    assert_eq!(
        hw_after_shrink_with_follower(Some(broker_2(false, true))),
        20
    );
}

// Kafka: PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower[unfenced]
#[test]
fn an_eligible_caught_up_follower_outside_the_isr_still_holds_back_the_hw() {
    assert_eq!(hw_after_shrink_with_follower(None), 10);
}

// Kafka: PartitionTest.testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch
// Difference: partition epochs: Kafka's case keeps partition epoch 1 through makeFollower and the second makeLeader (it calls them directly); our broker replays them from the metadata log, where each change has a newer partition epoch (2, then 3) and an older or equal one is ignored
#[test]
fn a_follower_joins_the_isr_only_once_it_reaches_the_start_of_the_leaders_epoch() {
    // Kafka's leader 0 and followers 1, 2 are our 1 and 2, 3; ISR {1, 3};
    // leader epoch 8; an empty log.
    let mut w = BrokerWorld::leader_with(&[1, 2, 3], &[1, 3], Log::default(), 8);
    assert_eq!(w.replica().leader_epoch, 8);
    assert_eq!(w.isr(), vec![1, 3]);
    // Produce (acks=0) batches of 2 and 3 records in epoch 8.
    w.produce(2);
    let last_offset_of_first_batch = w.replica().log.log_end_offset() - 1;
    w.produce(3);
    assert_eq!(w.high_watermark(), 0, "the leader's HW does not move");
    // The ISR follower moves the HW below the log end.
    w.fetch_follower(3, 0, default_epoch(3));
    w.fetch_follower(3, last_offset_of_first_batch + 1, default_epoch(3));
    assert_eq!(w.high_watermark(), last_offset_of_first_batch + 1);
    // Follower in epoch 9, then leader again in epoch 10, no new records.
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2, 3], &[1, 3], Some(3), 9, 2),
    });
    assert!(!w.replica().is_leader());
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2, 3], &[1, 3], Some(1), 10, 3),
    });
    assert!(w.replica().is_leader());
    let epoch_start = w.replica().log.log_end_offset();
    w.produce(2);
    // Follower 2, outside the ISR, fetches from the log start, then from
    // below the epoch's start: not added.
    w.fetch_follower(2, 0, default_epoch(2));
    w.fetch_follower(2, last_offset_of_first_batch, default_epoch(2));
    assert_eq!(w.isr(), vec![1, 3]);
    assert!(w.isr_updates().is_empty());
    // From the epoch's start: proposed; the committed ISR is unchanged.
    w.fetch_follower(2, epoch_start, default_epoch(2));
    assert_eq!(w.isr(), vec![1, 3]);
    assert_eq!(w.maximal_isr(), vec![1, 2, 3]);
    let (_, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 3, 2]);
}

// Kafka: PartitionTest.testIsrExpansion
#[test]
fn a_follower_that_reaches_the_high_watermark_is_proposed_for_the_isr() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    assert_eq!(w.isr(), vec![1]);
    let state = |w: &BrokerWorld| {
        let f = w.follower_state(2);
        (f.last_caught_up_ms.get(), f.log_end_offset.get())
    };
    assert_eq!(state(&w), (None, None), "Kafka's 0 and UNKNOWN_OFFSET");
    w.fetch_follower(2, 3, default_epoch(2));
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(state(&w), (None, Some(3)));
    assert!(w.isr_updates().is_empty());
    w.fetch_follower(2, 10, default_epoch(2));
    let (id, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 2]);
    for m in &isr {
        assert_eq!(m.broker_epoch, Some(default_epoch(m.broker_id)), "{m:?}");
    }
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    assert_eq!(state(&w), (Some(T0), Some(10)));
    w.answer(id, Ok(registration(&[1, 2], &[1, 2], Some(1), 5, 2)));
    assert_eq!(w.isr(), vec![1, 2]);
    assert_eq!(w.alter_partition_failures(), 0);
}

// Kafka: PartitionTest.testUpdateFollowerFetchState
#[test]
fn last_caught_up_time_moves_only_when_the_follower_reaches_the_leaders_end() {
    let mut log = Log::default();
    for i in 0..6 {
        log.append(Record::plain(i, 4));
    }
    let mut w = BrokerWorld::leader_with(&[1, 2], &[1, 2], log, 5);
    let state = |w: &BrokerWorld| {
        let f = w.follower_state(2);
        (f.last_caught_up_ms.get(), f.log_end_offset.get())
    };
    assert_eq!(state(&w), (Some(T0), None));
    w.now += 500;
    w.fetch_follower(2, 3, default_epoch(2));
    assert_eq!(state(&w), (Some(T0), Some(3)));
    w.now += 500;
    w.fetch_follower(2, 6, default_epoch(2));
    assert_eq!(state(&w), (Some(T0 + 1_000), Some(6)));
}

// Kafka: PartitionTest.testAlterIsrLeaderAndIsrRace
// Difference: a second proposal while the first is unanswered: Kafka's AlterPartitionManager keeps one request per partition in flight, so the shrink tried after new metadata reset the pending state is not submitted until the first request's answer arrives (and one is submitted after it); our leader sends the new proposal at once and ignores the old request's answer when it comes
#[test]
fn learning_the_committed_isr_again_drops_an_in_flight_isr_change() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    assert_eq!(w.high_watermark(), 0);
    let f = w.follower_state(2);
    assert_eq!(
        (f.last_caught_up_ms.get(), f.log_end_offset.get()),
        (Some(T0), None)
    );
    w.now += LAG + 1;
    w.maybe_shrink_isr();
    let (first, _, _) = w.isr_update();
    assert!(w.replica().pending_isr.is_some(), "in flight");
    // Leader again in the same epoch, partition epoch 2: the ISR state is
    // reset to the committed one.
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2], &[1, 2], Some(1), 5, 2),
    });
    assert_eq!(w.high_watermark(), 0);
    assert!(
        w.replica().pending_isr.is_none(),
        "committed, not in flight"
    );
    // Ours: the next check proposes the shrink again at once (Kafka: not
    // before the first request is answered).
    w.now += LAG + 1;
    w.maybe_shrink_isr();
    let (second, _, _) = w.isr_update();
    assert_ne!(second, first);
    // The first request's answer arrives: stale, ignored; the second
    // proposal is still the one in flight.
    w.answer(first, Ok(registration(&[1, 2], &[1], Some(1), 5, 10)));
    assert_eq!(w.isr(), vec![1, 2]);
    assert_eq!(w.replica().pending_isr.as_ref().map(|p| p.id), Some(second));
}

// Kafka: PartitionTest.testMakeLeaderUpdatesEpochCache
#[test]
fn becoming_leader_records_the_new_epoch_at_the_log_end_in_the_epoch_cache() {
    // Two records in epoch 0, two in epoch 5; the broker leads in epoch 8.
    let mut log = Log::default();
    for (id, epoch) in [(0, 0), (1, 0), (2, 5), (3, 5)] {
        log.append(Record::plain(id, epoch));
    }
    assert_eq!(log.log_end_offset(), 4);
    let mut w = BrokerWorld::leader_with(&[1, 2], &[1, 2], log, 8);
    assert_eq!(w.replica().log.log_end_offset(), 4);
    assert_eq!(w.replica().log.epochs(), &[(0, 0), (5, 2), (8, 4)]);
    // OffsetsForLeaderEpoch(current 8, epoch 8) from a follower: (8, 4).
    assert_eq!(w.offsets_for_leader_epoch(2, 8, 8), Ok(Some((8, 4))));
}

// Kafka: PartitionTest.testUseCheckpointToInitializeHighWatermark
#[test]
fn a_broker_that_starts_leading_takes_its_high_watermark_from_the_checkpoint() {
    // Six records in epoch 5; the high-watermark checkpoint says 4 (the HW
    // in memory before the restart was further on).
    let mut log = Log::default();
    for i in 0..6 {
        log.append(Record::plain(i, 5));
    }
    log.high_watermark = 4;
    log.checkpoint_high_watermark();
    log.high_watermark = 6;
    let w = BrokerWorld::leader_with(&[1, 2], &[1, 2], log, 6);
    assert!(w.replica().is_leader());
    assert_eq!(w.high_watermark(), 4);
}

// The AlterPartition round trip through the broker's own handlers
// (Partition.handleAlterPartitionError): the proposal is sent, the failure is
// delivered as the controller's answer, and the leader's state is read back.

/// An expansion of ISR {1} by follower 2, proposed after its fetch at the
/// log end (PartitionTest.handleAlterIsrFailure up to the failure).
fn expansion_in_flight() -> (BrokerWorld, u64) {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    assert_eq!(w.high_watermark(), 10, "alone in the ISR");
    w.fetch_follower(2, 10, default_epoch(2));
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    let (id, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 2]);
    let f = w.follower_state(2);
    assert_eq!(
        (f.log_end_offset.get(), f.last_caught_up_ms.get()),
        (Some(10), Some(T0))
    );
    (w, id)
}

// Kafka: PartitionTest.testIsrNotShrunkIfUpdateFails
// Fixed: the leader dropped its proposal on every refusal (and this port used to set the pending state by hand); on INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH and INVALID_REQUEST it now stays pending, not retried, until new metadata arrives (Partition.handleAlterPartitionError)
#[test]
fn a_shrink_refused_with_invalid_update_version_stays_pending_and_the_committed_isr_is_unchanged() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    assert_eq!(w.high_watermark(), 0);
    w.now += 30_001;
    w.maybe_shrink_isr();
    assert_eq!(w.isr(), vec![1, 2]);
    let (id, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1]);
    assert_eq!(w.high_watermark(), 0);
    w.answer(id, Err(ErrorCode::InvalidUpdateVersion));
    assert!(w.replica().pending_isr.is_some(), "still a pending shrink");
    assert_eq!(w.isr(), vec![1, 2]);
    assert!(w.isr_updates().is_empty(), "not retried");
    assert_eq!(w.high_watermark(), 0);
    // Nothing more is sent: not by the retry timer, not by the next check.
    w.retry_timer(id);
    assert!(w.isr_updates().is_empty());
    w.maybe_shrink_isr();
    assert!(w.isr_updates().is_empty());
}

// Kafka: PartitionTest.testIsrNotExpandedIfUpdateFails
// Kafka: PartitionTest.testAlterIsrInvalidVersion
#[test]
fn an_expansion_refused_with_invalid_update_version_stays_pending_without_a_retry() {
    let (mut w, id) = expansion_in_flight();
    w.answer(id, Err(ErrorCode::InvalidUpdateVersion));
    assert_eq!(w.alter_partition_failures(), 1);
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    assert!(w.isr_updates().is_empty());
    w.retry_timer(id);
    assert!(w.isr_updates().is_empty(), "the retry timer sends nothing");
    w.fetch_follower(2, 10, default_epoch(2));
    assert!(w.isr_updates().is_empty(), "no new proposal while pending");
}

// Kafka: PartitionTest.testInvalidAlterPartitionRequestsAreNotRetried
#[test]
fn an_invalid_request_answer_is_not_retried_and_the_proposal_stays_pending() {
    let (mut w, id) = expansion_in_flight();
    w.answer(id, Err(ErrorCode::InvalidRequest));
    assert_eq!(w.alter_partition_failures(), 1);
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    assert!(w.isr_updates().is_empty());
    w.retry_timer(id);
    assert!(w.isr_updates().is_empty());
}

// Kafka: PartitionTest.testAlterIsrUnexpectedError
// Difference: error name: Kafka's case answers UNKNOWN_SERVER_ERROR, which our controller never sends; NETWORK_EXCEPTION stands for "any other error"
#[test]
fn an_unexpected_alter_partition_error_is_retried_with_the_same_proposal() {
    let (mut w, id) = expansion_in_flight();
    w.answer(id, Err(ErrorCode::NetworkException));
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    let (again, isr, _) = w.isr_update();
    assert_eq!((again, BrokerState::ids(&isr)), (id, vec![1, 2]));
}

/// PartitionTest.testIsrNotExpandedIfReplicaIsFencedOrShutdown and
/// …InControlledShutdown: the expansion the controller refuses, the leader
/// learning that follower 2 is `ineligible`, then that it is eligible again.
fn expansion_refused_then_retried_once_eligible(ineligible: MetadataRecord) {
    let (mut w, id) = expansion_in_flight();
    w.answer(id, Err(ErrorCode::IneligibleReplica));
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1], "back at the committed state");
    assert!(w.replica().pending_isr.is_none(), "nothing in flight");
    assert!(w.isr_updates().is_empty());
    // The leader learns the broker is ineligible; its next fetch changes nothing.
    w.publish(ineligible);
    w.fetch_follower(2, 10, default_epoch(2));
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1]);
    assert!(w.replica().pending_isr.is_none());
    assert!(w.isr_updates().is_empty());
    // Eligible again: the next fetch proposes the expansion.
    w.publish(MetadataRecord::Broker {
        broker: 2,
        broker_epoch: default_epoch(2),
        fenced: false,
        in_controlled_shutdown: false,
    });
    w.fetch_follower(2, 10, default_epoch(2));
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    assert!(w.replica().pending_isr.is_some(), "in flight");
    let (id, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 2]);
    // The controller accepts it (Kafka's mock answers in partition epoch 1,
    // the leader's own).
    w.answer(id, Ok(registration(&[1, 2], &[1, 2], Some(1), 5, 1)));
    assert_eq!(w.isr(), vec![1, 2]);
    assert_eq!(w.maximal_isr(), vec![1, 2]);
    assert!(w.replica().pending_isr.is_none());
    assert!(w.isr_updates().is_empty());
}

// Kafka: PartitionTest.testIsrNotExpandedIfReplicaIsFencedOrShutdown
// Fixed: the leader committed an accepted AlterPartition only when its partition epoch was newer than the leader's own; Partition.handleAlterPartitionUpdate commits an answer in the same partition epoch too (the controller changed nothing) and ignores one in another leader epoch
#[test]
fn an_ineligible_replica_answer_resets_to_the_committed_isr_and_a_fenced_follower_is_not_proposed_again(
) {
    expansion_refused_then_retried_once_eligible(MetadataRecord::Broker {
        broker: 2,
        broker_epoch: default_epoch(2),
        fenced: true,
        in_controlled_shutdown: false,
    });
}

// Kafka: PartitionTest.testIsrNotExpandedIfReplicaIsInControlledShutdown
#[test]
fn a_follower_in_controlled_shutdown_is_not_proposed_for_the_isr_until_it_is_back() {
    expansion_refused_then_retried_once_eligible(MetadataRecord::Broker {
        broker: 2,
        broker_epoch: default_epoch(2),
        fenced: false,
        in_controlled_shutdown: true,
    });
}

// Kafka: PartitionTest.testFenceFollowerFetchWithStaleBrokerEpoch
// Fixed: a follower fetch carrying an older broker epoch than the follower's last one was accepted and overwrote its state; Replica.updateFetchStateOrThrow refuses it with NOT_LEADER_OR_FOLLOWER
#[test]
fn a_follower_fetch_with_an_older_broker_epoch_is_refused_and_changes_nothing() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    w.fetch_follower(2, 10, default_epoch(2));
    assert_eq!(w.fetch_error(), None);
    w.fetch_follower(2, 10, default_epoch(2) - 1);
    assert_eq!(w.fetch_error(), Some(ErrorCode::NotLeaderOrFollower));
    let f = w.follower_state(2);
    assert_eq!(
        (
            f.log_end_offset.get(),
            f.last_caught_up_ms.get(),
            f.broker_epoch
        ),
        (Some(10), Some(T0), default_epoch(2))
    );
}

// Kafka: PartitionTest.testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache
// Fixed: the broker epoch a follower's fetch carried was recorded and never read; the leader now checks it against its metadata before proposing the follower, and sends each member's epoch (KIP-903)
#[test]
fn a_follower_joins_the_isr_only_with_the_broker_epoch_the_leaders_metadata_has_for_it() {
    let mut w = BrokerWorld::leader(&[1, 2, 3], &[1, 3]);
    assert_eq!(w.maximal_isr(), vec![1, 3]);
    // Broker 2 catches up, but its fetch carries another registration's
    // epoch. (Kafka's test has the mocked metadata cache answer the wrong
    // epoch to the fetch's staleness check and the right one to the ISR
    // check, a race; here the fetch carries a newer epoch than the metadata
    // holds, which Replica.updateFetchStateOrThrow lets through, issue 60.)
    let wrong = default_epoch(2) + 1;
    w.fetch_follower(2, 10, wrong);
    let f = w.follower_state(2);
    assert_eq!(
        (
            f.log_end_offset.get(),
            f.last_caught_up_ms.get(),
            f.broker_epoch
        ),
        (Some(10), Some(T0), wrong)
    );
    assert_eq!(w.isr(), vec![1, 3]);
    assert_eq!(w.maximal_isr(), vec![1, 3], "not eligible: epoch mismatch");
    assert!(w.isr_updates().is_empty());
    // Again with the epoch of its registration: proposed, with the epochs.
    w.fetch_follower(2, 10, default_epoch(2));
    assert_eq!(w.isr(), vec![1, 3]);
    assert_eq!(w.maximal_isr(), vec![1, 2, 3]);
    let (_, isr, _) = w.isr_update();
    for m in &isr {
        let expected = match m.broker_id {
            // Broker 3 has not fetched from this leader yet: Kafka's -1.
            3 => None,
            b => Some(default_epoch(b)),
        };
        assert_eq!(m.broker_epoch, expected, "{m:?}");
    }
}

// Kafka: PartitionTest.testLastFetchedOffsetValidation
// Difference: log start offset: Kafka's second half moves the log start offset to 5 and then 10 (record deletion) and checks divergence and OFFSET_OUT_OF_RANGE against it; our logs always start at 0 (retention and deletion are not modelled)
#[test]
fn a_follower_fetch_whose_last_fetched_epoch_diverges_gets_the_leaders_epoch_end_and_no_records() {
    // Leader log: epochs 0 (offsets 0-1), 3 (2-7), 4 (8-12), 7 (13), 9
    // (14-16); LEO 17; leader epoch 10.
    let mut log = Log::default();
    for (epoch, n) in [(0, 2), (3, 3), (3, 3), (4, 5), (7, 1), (9, 3)] {
        for _ in 0..n {
            let id = log.log_end_offset();
            log.append(Record::plain(id, epoch));
        }
    }
    assert_eq!(log.log_end_offset(), 17);
    let mut w = BrokerWorld::leader_with(&[1, 2], &[1, 2], log, 10);
    let mut read =
        |lfe: u32, offset: u64| w.fetch_follower_with(2, offset, default_epoch(2), 10, Some(lfe));
    for (lfe, offset, diverging) in [
        (2, 5, (0, 2)),
        (0, 4, (0, 2)),
        (6, 6, (4, 13)),
        (5, 9, (4, 13)),
        (10, 18, (10, 17)),
    ] {
        let r = read(lfe, offset);
        assert_eq!(r.diverging_epoch, Some(diverging), "({lfe}, {offset})");
        assert!(r.records.is_empty() && r.error.is_none());
    }
    for (lfe, offset) in [(0, 2), (7, 14), (9, 17), (10, 17)] {
        let r = read(lfe, offset);
        assert_eq!(r.diverging_epoch, None, "({lfe}, {offset})");
        assert_eq!(r.error, None);
    }
    // An epoch newer than any the leader knows: out of range.
    assert_eq!(read(11, 5).error, Some(ErrorCode::OffsetOutOfRange));
}

// Kafka: PartitionTest.testLeaderEpochValidationOnLeader
// Difference: a fetch without a leader epoch (Kafka's None, fetch versions before 9) is not modelled: ours always names one, so that sub-case is not run
#[test]
fn the_leader_fences_a_follower_fetch_from_an_older_epoch_and_refuses_one_from_a_newer_epoch() {
    let mut w = BrokerWorld::leader_with(&[1, 2], &[1, 2], Log::default(), 5);
    let r = w.fetch_follower_with(2, 0, default_epoch(2), 5, None);
    assert_eq!((r.error, r.log_end_offset), (None, 0));
    let r = w.fetch_follower_with(2, 0, default_epoch(2), 4, None);
    assert_eq!(r.error, Some(ErrorCode::FencedLeaderEpoch));
    let r = w.fetch_follower_with(2, 0, default_epoch(2), 6, None);
    assert_eq!(r.error, Some(ErrorCode::UnknownLeaderEpoch));
}

// Kafka: PartitionTest.testDoNotResetReplicaStateIfLeaderEpochIsNotBumped
#[test]
fn a_new_partition_epoch_in_the_same_leader_epoch_keeps_what_the_leader_knows_of_its_followers() {
    // Leader 1, follower 2 outside the ISR, leader epoch 8, empty log.
    let mut w = BrokerWorld::leader_with(&[1, 2], &[1], Log::default(), 8);
    assert_eq!(w.replica().partition_epoch, 1);
    assert_eq!(w.replica().leader_epoch, 8);
    assert_eq!(w.isr(), vec![1]);
    let f = w.follower_state(2);
    assert_eq!(
        (f.last_caught_up_ms.get(), f.log_end_offset.get()),
        (None, None)
    );
    w.fetch_follower(2, 0, default_epoch(2));
    let f = w.follower_state(2);
    assert_eq!(
        (f.last_caught_up_ms.get(), f.log_end_offset.get()),
        (Some(T0), Some(0))
    );
    // The same leader epoch, a newer partition epoch (a reassignment in
    // Kafka's words), the ISR still {1}.
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2], &[1], Some(1), 8, 2),
    });
    assert_eq!(w.replica().partition_epoch, 2);
    assert_eq!(w.replica().leader_epoch, 8);
    assert_eq!(w.isr(), vec![1]);
    let f = w.follower_state(2);
    assert_eq!(
        (f.last_caught_up_ms.get(), f.log_end_offset.get()),
        (Some(T0), Some(0))
    );
}

// Kafka: PartitionTest.testFetchFromUnrecognizedFollower
// Fixed: a fetch from a broker that is not one of the partition's replicas was answered NOT_LEADER_OR_FOLLOWER; Kafka answers UNKNOWN_LEADER_EPOCH when the fetch names a leader epoch (the leader may not have learned of a replica being added yet, and the follower retries without a metadata refresh)
// Difference: the rest of the case not run: Kafka's fetch without a leader epoch (NOT_LEADER_OR_FOLLOWER; ours always names one), and the second half, where a reassignment adds the two replicas and their fetches are then accepted (reassignment is not modelled)
#[test]
fn a_fetch_from_a_broker_that_is_not_a_replica_gets_unknown_leader_epoch_and_changes_nothing() {
    // Replicas {1, 2}, leader epoch 8; broker 3 is registered but not a replica.
    let mut w = BrokerWorld::leader_with(&[1, 2], &[1, 2], Log::default(), 8);
    let r = w.fetch_follower_with(3, 0, default_epoch(3), 8, None);
    assert_eq!(r.error, Some(ErrorCode::UnknownLeaderEpoch));
    assert!(
        w.replica().follower(&w.broker.followers, 3).is_none(),
        "no state for it"
    );
}

// Kafka: PartitionTest.testOffsetForLeaderEpochValidationForLeader
// Difference: a request without a current leader epoch (Kafka's Optional.empty, answered NONE) is not modelled: our OffsetsForLeaderEpoch always names one, so that sub-case is not run
#[test]
fn offsets_for_leader_epoch_is_fenced_from_an_older_epoch_and_refused_from_a_newer_one() {
    let mut w = BrokerWorld::leader_with(&[1, 2], &[1, 2], Log::default(), 5);
    assert!(w.offsets_for_leader_epoch(2, 5, 0).is_ok());
    assert_eq!(
        w.offsets_for_leader_epoch(2, 4, 0),
        Err(ErrorCode::FencedLeaderEpoch)
    );
    assert_eq!(
        w.offsets_for_leader_epoch(2, 6, 0),
        Err(ErrorCode::UnknownLeaderEpoch)
    );
}

// Kafka: PartitionTest.testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch
#[test]
fn a_partition_state_with_an_older_partition_epoch_is_ignored_by_the_leader() {
    let mut w = BrokerWorld::leader_with(&[1], &[1], Log::default(), 8);
    assert_eq!(
        (w.replica().partition_epoch, w.replica().leader_epoch),
        (1, 8)
    );
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1], &[1], Some(1), 8, 0),
    });
    assert_eq!(
        (w.replica().partition_epoch, w.replica().leader_epoch),
        (1, 8)
    );
}

// Kafka: PartitionTest.testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped
#[test]
fn a_new_partition_epoch_in_the_same_leader_epoch_keeps_the_epoch_start_offset() {
    let mut w = BrokerWorld::leader_with(&[1, 2], &[1], Log::default(), 8);
    assert_eq!(w.replica().partition_epoch, 1);
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.replica().log.epoch_start_offset(8), Some(0));
    assert_eq!(w.replica().log.epochs().last(), Some(&(8, 0)));
    w.produce(2);
    assert_eq!(w.replica().log.log_end_offset(), 2);
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2], &[1], Some(1), 8, 2),
    });
    assert_eq!(
        (w.replica().partition_epoch, w.replica().leader_epoch),
        (2, 8)
    );
    assert_eq!(w.isr(), vec![1]);
    assert_eq!(w.replica().log.epoch_start_offset(8), Some(0));
    assert_eq!(w.replica().log.epochs().last(), Some(&(8, 0)));
}
