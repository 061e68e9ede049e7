//! Kafka's `AbstractFetcherThreadTest` and `ReplicaFetcherThreadTest`
//! (core/src/test/scala/unit/kafka/server/): where a follower truncates given
//! the leader's epoch end offset, against `Replica::truncation_point` and the
//! log. Kafka's mocked `endOffsetForEpoch` answers are reproduced with real
//! logs whose epoch caches give the same answers.

use failover_lab::sim::config::TruncationMode;
use failover_lab::sim::log::{Log, Record};
use failover_lab::sim::partition::{Replica, Truncation};

/// A log of `(epoch, count)` runs.
fn log_of(runs: &[(u32, u64)]) -> Log {
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
    let mut r = Replica::new(0, vec![1, 2]);
    r.log = log_of(runs);
    r
}

// Kafka: ReplicaFetcherThreadTest.shouldTruncateToOffsetSpecifiedInEpochOffsetResponse
#[test]
fn the_follower_truncates_to_the_leaders_end_offset_for_an_epoch_both_have() {
    // Follower: latest epoch 5, LEO 200, its epoch 5 ends at 200.
    let f = follower(&[(1, 100), (5, 100)]);
    assert_eq!(f.log.end_offset_for(5), Some((5, 200)));
    for leader_end in [156, 172] {
        assert_eq!(
            f.truncation_point(5, leader_end),
            Truncation {
                to: leader_end,
                ask_again: false
            }
        );
    }
}

// Kafka: ReplicaFetcherThreadTest.shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower
#[test]
fn a_follower_without_the_leaders_epoch_truncates_to_its_own_end_and_asks_again() {
    // Follower: latest epoch 5, LEO 200, endOffsetForEpoch(4) = endOffsetForEpoch(3) = (3, 120).
    let f = follower(&[(0, 101), (3, 19), (5, 80)]);
    assert_eq!(f.log.end_offset_for(4), Some((3, 120)));
    assert_eq!(f.log.end_offset_for(3), Some((3, 120)));
    for (first, second) in [(155, 101), (143, 102)] {
        let t = f.truncation_point(4, first);
        assert_eq!(
            t,
            Truncation {
                to: 120,
                ask_again: true
            }
        );
        let mut g = f.clone();
        g.log.truncate_to(t.to);
        assert_eq!(
            g.truncation_point(3, second),
            Truncation {
                to: second,
                ask_again: false
            }
        );
    }
}

// Kafka: ReplicaFetcherThreadTest.shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower
#[test]
fn a_diverging_epoch_truncates_step_by_step_to_the_common_prefix() {
    // Follower: latest epoch 5, LEO 200; endOffsetForEpoch(4) = (4, 149),
    // endOffsetForEpoch(3) = (2, 129).
    let mut f = follower(&[(1, 119), (2, 10), (4, 20), (5, 51)]);
    assert_eq!(f.log.end_offset_for(4), Some((4, 149)));
    assert_eq!(f.log.end_offset_for(3), Some((2, 129)));
    let t = f.truncation_point(4, 140);
    assert_eq!(
        t,
        Truncation {
            to: 140,
            ask_again: false
        }
    );
    f.log.truncate_to(t.to);
    let t = f.truncation_point(3, 130);
    assert_eq!(
        t,
        Truncation {
            to: 129,
            ask_again: true
        },
        "epoch 3 unknown to the follower"
    );
}

/// The follower reconciles with `leader` as the fetcher does: ask with its
/// latest epoch, truncate, ask again while needed, then copy the leader's tail.
fn reconcile(f: &mut Replica, leader: &Log) {
    while let Some(epoch) = f.log.latest_epoch() {
        let Some((le, lend)) = leader.end_offset_for(epoch) else {
            break;
        };
        let t = f.truncation_point(le, lend);
        f.log.truncate_to(t.to);
        if !t.ask_again {
            break;
        }
    }
    for r in &leader.records_between(f.log.log_end_offset(), u64::MAX) {
        f.log.append(*r);
    }
}

// Kafka: AbstractFetcherThreadTest.testTruncation
#[test]
fn a_follower_whose_every_epoch_diverges_truncates_everything_and_copies_the_leader() {
    // Replica log: offsets 0, 1, 2 in epochs 0, 2, 4; leader log: epochs 1, 3, 5.
    let mut f = follower(&[(0, 1), (2, 1), (4, 1)]);
    let leader = log_of(&[(1, 1), (3, 1), (5, 1)]);
    reconcile(&mut f, &leader);
    assert_eq!(f.log.log_end_offset(), 3);
    assert_eq!(f.log.digest(), leader.digest());
    assert_eq!(f.log.epochs(), leader.epochs());
}

// Kafka: AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochRequestNotSupported
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
