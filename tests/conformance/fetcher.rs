//! Kafka's `AbstractFetcherThreadTest` and `ReplicaFetcherThreadTest`
//! (core/src/test/scala/unit/kafka/server/): where a follower truncates given
//! the leader's epoch end offset. Kafka's `MockFetcherThread` against a
//! `MockLeaderEndPoint` becomes our follower broker's replica fetcher against
//! a real leader broker ([`FetcherWorld`]); for the `ReplicaFetcherThreadTest`
//! case, whose leader answers are mocked, the same follower gets those
//! answers instead of the leader's, and its log is a real one whose epoch
//! cache gives the mocked `endOffsetForEpoch` answers.

use failover_lab::sim::config::{ReplicaSelector, TruncationMode};
use failover_lab::sim::log::{Log, Record};
use failover_lab::sim::partition::Replica;
use failover_lab::sim::protocol::{ErrorCode, FetchPartition, Message, MetadataRecord, Node};

use super::harness::{log_of, registration, FetcherWorld};

/// A log of `(epoch, count)` runs.
fn runs_of(runs: &[(u32, u64)]) -> Log {
    let mut log = Log::default();
    for &(epoch, n) in runs {
        for _ in 0..n {
            let id = log.log_end_offset();
            log.append(Record::plain(id, epoch));
        }
    }
    log
}

fn follower(runs: &[(u32, u64)]) -> Replica {
    let mut r = Replica::new(0, &[1, 2]);
    r.log = runs_of(runs);
    r
}

// Kafka: ReplicaFetcherThreadTest.shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower
// Difference: loop 4 not reproduced: Kafka's mocked log answers endOffsetForEpoch(2) = (1, 119) after answering endOffsetForEpoch(3) = (2, 129), which no real epoch cache does (a log holding epoch 2 up to 129 answers (2, 129) for epoch 2); our follower's log is a real one
#[test]
fn a_diverging_epoch_truncates_step_by_step_to_the_common_prefix() {
    // Follower: latest epoch 5, LEO 200; its endOffsetForEpoch(4) = (4, 149),
    // endOffsetForEpoch(3) = (2, 129). The mocked leader answers each fetch
    // with a divergence: (4, 140) then (3, 130), and for Kafka's second
    // partition one offset further: (4, 141) then (3, 131).
    for (first, second) in [(140, 130), (141, 131)] {
        let f = runs_of(&[(1, 119), (2, 10), (4, 20), (5, 51)]);
        assert_eq!(f.end_offset_for(4), Some((4, 149)));
        assert_eq!(f.end_offset_for(3), Some((2, 129)));
        let leader = f.clone();
        let mut w = FetcherWorld::new(5, leader, 0, f, 0);
        // Loop 1: the first fetch goes out at once, with no epoch round.
        let fp = w.queued_fetch().unwrap_or_else(|| panic!("a fetch"));
        assert_eq!((fp.fetch_offset, fp.last_fetched_epoch), (200, Some(5)));
        // Loop 2: truncated to the leader's end of epoch 4, fetching again.
        w.answer_with_diverging_epoch(4, first);
        assert_eq!(w.follower_replica().log.log_end_offset(), first);
        assert_eq!(w.queued_last_fetched_epoch(), Some(4));
        // Loop 3: epoch 3 is unknown to the follower: it truncates to its own
        // end of the epoch below (2, 129) and fetches on from there.
        w.answer_with_diverging_epoch(3, second);
        assert_eq!(w.follower_replica().log.log_end_offset(), 129);
        let fp = w.queued_fetch().unwrap_or_else(|| panic!("a fetch"));
        assert_eq!((fp.fetch_offset, fp.last_fetched_epoch), (129, Some(2)));
        assert_eq!(w.follower_truncations(), 2);
    }
}

// Kafka: AbstractFetcherThreadTest.testTruncation
// Difference: log start offset: Kafka also compares the two logs' start offsets; ours are always 0 (retention is not modelled)
#[test]
fn a_follower_whose_every_epoch_diverges_truncates_everything_and_copies_the_leader() {
    // Follower: a, b, c in epochs 0, 2, 4; leader: a, b, c in epochs 1, 3, 5,
    // leader epoch 5, HW 2.
    let follower = log_of(&[(0, 0), (1, 2), (2, 4)]);
    let leader = log_of(&[(0, 1), (1, 3), (2, 5)]);
    let mut w = FetcherWorld::new(5, leader, 2, follower, 0);
    assert_eq!(w.queued_fetch().map(|p| p.fetch_offset), Some(3));
    w.reconcile(10);
    let (l, f) = (&w.leader_replica().log, &w.follower_replica().log);
    assert_eq!(f.log_end_offset(), l.log_end_offset());
    assert_eq!(f.log_end_offset(), 3);
    assert_eq!(f.epochs(), l.epochs());
    // The follower learns the HW from the answer that carried the records.
    assert_eq!(f.high_watermark, l.high_watermark);
    assert_eq!(f.high_watermark, 2);
}

// Kafka: AbstractFetcherThreadTest.testDivergingEpochs
#[test]
fn a_diverging_epoch_in_the_fetch_answer_truncates_to_the_shared_epoch_then_fetches_the_rest() {
    // Follower: a, b, c in epochs 0, 2, 4; leader: a, b in 0, 2 and d in 5.
    let follower = log_of(&[(0, 0), (1, 2), (2, 4)]);
    let leader = log_of(&[(0, 0), (1, 2), (3, 5)]);
    let mut w = FetcherWorld::new(5, leader, 2, follower, 0);
    assert_eq!(w.follower_replica().log.log_end_offset(), 3);
    assert_eq!(w.queued_last_fetched_epoch(), Some(4));
    assert!(w.round(), "the leader answers at once: a divergence");
    assert_eq!(w.queued_last_fetched_epoch(), Some(2));
    assert_eq!(w.follower_replica().log.log_end_offset(), 2);
    w.reconcile(10);
    assert_eq!(w.queued_last_fetched_epoch(), Some(5));
}

// Kafka: AbstractFetcherThreadTest.testTruncateOnFetchDoesNotProcessPartitionData
// Difference: initial fetch offset: Kafka's case adds the partition at fetch offset 3 while the follower's log ends at 6; our follower fetches from its log end offset, as ReplicaManager.initialFetchOffset does with truncate-on-fetch; the leader's answer, a divergence at (2, 3), is the same
#[test]
fn the_fetch_answer_that_truncates_carries_no_data_and_does_not_move_the_high_watermark() {
    // Follower: a, b (epoch 0), c (2), d, e, f (4), HW 1; leader: a, b (0),
    // c (2), g, h (5), HW 4.
    let follower = log_of(&[(0, 0), (1, 0), (2, 2), (3, 4), (4, 4), (5, 4)]);
    let leader = log_of(&[(0, 0), (1, 0), (2, 2), (6, 5), (7, 5)]);
    let mut w = FetcherWorld::new(5, leader, 4, follower, 1);
    assert_eq!(w.follower_replica().log.log_end_offset(), 6);
    assert_eq!(w.queued_last_fetched_epoch(), Some(4));
    assert!(w.round());
    assert_eq!(w.follower_truncations(), 1);
    let f = &w.follower_replica().log;
    assert_eq!(f.log_end_offset(), 3, "truncated, nothing appended");
    assert_eq!(f.high_watermark, 1, "the answer's HW is not applied");
    w.reconcile(10);
    assert_eq!(w.queued_last_fetched_epoch(), Some(5));
    assert_eq!(w.follower_truncations(), 1, "truncated once");
    let f = &w.follower_replica().log;
    assert_eq!(f.log_end_offset(), 5);
    assert_eq!(f.high_watermark, 4);
}

// Kafka: AbstractFetcherThreadTest.testFollowerFetchOutOfRangeHigh
// Difference: log start offset: Kafka also checks the follower's log start offset is 0; ours always is (retention is not modelled)
#[test]
fn a_fetch_past_the_leaders_log_end_truncates_the_follower_to_the_leaders_log_end() {
    // Both logs: a, b, c in epochs 0, 2, 4; leader epoch 4, leader HW 2.
    let log = log_of(&[(0, 0), (1, 2), (2, 4)]);
    let mut w = FetcherWorld::new(4, log.clone(), 2, log, 0);
    assert!(w.round());
    assert_eq!(w.follower_replica().log.log_end_offset(), 3);
    assert_eq!(w.follower_truncations(), 0);
    // The leader's log is emptied without a leader change (Kafka clears its
    // mock leader's log, LEO, log start and HW to 0).
    if let Some(r) = w.leader.replicas.get_mut(&0) {
        r.log = Log::default();
    }
    // The follower's next fetch (at 3) gets OFFSET_OUT_OF_RANGE.
    assert_eq!(w.queued_fetch().map(|p| p.fetch_offset), Some(3));
    assert!(w.round());
    let f = &w.follower_replica().log;
    assert_eq!(f.log_end_offset(), 0);
    assert_eq!(f.high_watermark, 0);
    assert_eq!(w.follower_truncations(), 1);
}

// Kafka: AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable
#[test]
fn without_leader_epoch_requests_the_follower_truncates_to_its_high_watermark() {
    // `sim.truncation=high_watermark` is the pre-KIP-101 protocol.
    let mut f = follower(&[(0, 1), (2, 1), (4, 1)]);
    f.log.high_watermark = 2;
    assert_eq!(
        f.truncation_on_become_follower(TruncationMode::HighWatermark),
        Some(2)
    );
    assert_eq!(
        f.truncation_on_become_follower(TruncationMode::LeaderEpoch),
        None
    );
}

// Kafka: ReplicaManagerTest.testPreferredReplicaAsFollower
// Difference: the consumer's leader epoch: Kafka's fetch names none (Optional.empty); our consumer fetch always names one, here the follower's own epoch, which a follower needs to serve it (otherwise NOT_LEADER_OR_FOLLOWER)
#[test]
fn a_follower_serves_a_consumer_itself_and_never_names_a_preferred_read_replica() {
    // KIP-392, rack-aware selector: broker 1 leads in rack-b, broker 2
    // follows in rack-a, the consumer is in rack-a.
    let log = log_of(&[(0, 1), (1, 1)]);
    let mut w = FetcherWorld::new(1, log.clone(), 2, log, 2);
    w.config.replica_selector = Some(ReplicaSelector::RackAware);
    w.racks = vec!["rack-b".to_string(), "rack-a".to_string()];
    let epoch = w.follower_replica().leader_epoch;
    assert!(!w.follower_replica().is_leader());
    let fetch = Message::Fetch {
        id: 77,
        replica: None,
        broker_epoch: 0,
        max_wait_ms: 0,
        partitions: vec![FetchPartition {
            partition: 0,
            fetch_offset: 0,
            current_leader_epoch: epoch,
            last_fetched_epoch: None,
        }],
        rack_id: "rack-a".to_string(),
    };
    w.in_flight.clear();
    w.with(2, |b, ctx| b.on_message(ctx, Node::Consumer(0), fetch));
    let answer = w.in_flight.iter().find_map(|(_, to, m)| match m {
        Message::FetchResponse { id: 77, partitions } if *to == Node::Consumer(0) => {
            partitions.first().cloned()
        }
        _ => None,
    });
    let Some(r) = answer else {
        panic!("the follower answers at once: {:?}", w.in_flight)
    };
    assert_eq!(r.error, None, "the fetch from the follower succeeds");
    assert_eq!(r.preferred_read_replica, None, "only a leader names one");
}

// Kafka: AbstractFetcherThreadTest.testSimpleFetch
#[test]
fn a_follower_fetch_copies_the_leaders_records_and_its_high_watermark() {
    // Follower empty; leader: a, b in epoch 0, HW 2; leader epoch 0.
    let leader = log_of(&[(0, 0), (1, 0)]);
    let mut w = FetcherWorld::new(0, leader, 2, Log::default(), 0);
    assert!(w.round());
    let f = &w.follower_replica().log;
    assert_eq!(f.log_end_offset(), 2);
    assert_eq!(f.high_watermark, 2);
}

// Kafka: AbstractFetcherThreadTest.testFencedFetch
// Fixed: a follower answered FENCED_LEADER_EPOCH for its own current epoch backed off and fetched again every replica.fetch.backoff.ms with the stale epoch; AbstractFetcherThread.onPartitionFenced marks the partition failed and awaits the new partition state before fetching it again
#[test]
fn a_follower_fenced_by_a_newer_leader_epoch_stops_fetching_until_it_learns_the_new_epoch() {
    let leader = log_of(&[(0, 0), (1, 0)]);
    let mut w = FetcherWorld::new(0, leader, 2, Log::default(), 0);
    assert!(w.round());
    assert_eq!(w.follower_replica().log.log_end_offset(), 2, "caught up");
    // The leader moves to epoch 1; the follower has not heard of it.
    w.publish_to(
        1,
        MetadataRecord::Partition {
            partition: 0,
            registration: registration(&[1, 2], &[1, 2], Some(1), 1, 2),
        },
    );
    assert_eq!(w.leader_replica().leader_epoch, 1);
    let fp = w.queued_fetch().unwrap_or_else(|| panic!("a fetch"));
    assert_eq!(fp.current_leader_epoch, 0);
    w.deliver();
    let fenced = w.in_flight.iter().any(|(from, _, m)| {
        *from == 1
            && matches!(m, Message::FetchResponse { partitions, .. }
                if partitions.first().and_then(|p| p.error) == Some(ErrorCode::FencedLeaderEpoch))
    });
    assert!(fenced, "FENCED_LEADER_EPOCH");
    w.deliver();
    // The partition is out of the fetcher: no fetch now, nor after the backoff.
    assert!(w.queued_fetch().is_none());
    w.follower_retry_after_backoff();
    assert!(
        w.queued_fetch().is_none(),
        "awaiting the new partition state"
    );
    // Beyond Kafka's case: the new state arrives and fetching resumes.
    w.publish_to(
        2,
        MetadataRecord::Partition {
            partition: 0,
            registration: registration(&[1, 2], &[1, 2], Some(1), 1, 2),
        },
    );
    let fp = w.queued_fetch().unwrap_or_else(|| panic!("fetching again"));
    assert_eq!(fp.current_leader_epoch, 1);
}

// Kafka: AbstractFetcherThreadTest.testFencedTruncation
#[test]
fn a_follower_whose_first_fetch_is_fenced_makes_no_progress_until_it_learns_the_new_epoch() {
    // The leader is in epoch 1 with a, b written in it; the follower, empty,
    // still knows epoch 0.
    let mut w = FetcherWorld::new(0, Log::default(), 0, Log::default(), 0);
    w.publish_to(
        1,
        MetadataRecord::Partition {
            partition: 0,
            registration: registration(&[1, 2], &[1, 2], Some(1), 1, 2),
        },
    );
    if let Some(r) = w.leader.replicas.get_mut(&0) {
        r.log.append(Record::plain(0, 1));
        r.log.append(Record::plain(1, 1));
        r.log.high_watermark = 2;
    }
    assert!(w.round(), "answered at once: fenced");
    let f = &w.follower_replica().log;
    assert_eq!(
        (f.log_end_offset(), f.high_watermark),
        (0, 0),
        "no progress"
    );
    w.follower_retry_after_backoff();
    assert!(w.queued_fetch().is_none(), "out of the fetcher");
}

// Kafka: AbstractFetcherThreadTest.testIgnoreFetchResponseWhenLeaderEpochChanged
#[test]
fn a_fetch_answer_for_an_older_leader_epoch_than_the_followers_is_ignored() {
    // Leader: a in epoch 0, HW 1. The follower's fetch in epoch 0 is on its
    // way when the follower learns epoch 1.
    let leader = log_of(&[(0, 0)]);
    let mut w = FetcherWorld::new(0, leader, 1, Log::default(), 0);
    assert_eq!(w.queued_fetch().map(|p| p.current_leader_epoch), Some(0));
    w.publish_to(
        2,
        MetadataRecord::Partition {
            partition: 0,
            registration: registration(&[1, 2], &[1, 2], Some(1), 1, 2),
        },
    );
    assert_eq!(w.follower_replica().leader_epoch, 1);
    // The leader (still in epoch 0) answers the old fetch with record a.
    assert!(w.round());
    assert_eq!(w.follower_replica().log.log_end_offset(), 0, "ignored");
}
