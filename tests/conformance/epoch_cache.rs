//! Kafka's `LeaderEpochFileCacheTest` (core/src/test/scala/unit/kafka/server/
//! epoch/), case by case, against our `EpochCache`. Kafka's
//! `(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)` answer is our `None`.

use failover_lab::sim::log::{EpochCache, Log, Record};

fn cache(entries: &[(u32, u64)]) -> EpochCache {
    let mut c = EpochCache::default();
    for &(e, s) in entries {
        c.assign(e, s);
    }
    c
}

// Kafka: LeaderEpochFileCacheTest.shouldAddEpochAndMessageOffsetToCache
#[test]
fn an_assigned_epoch_is_the_latest_and_ends_at_the_log_end() {
    let c = cache(&[(2, 10)]);
    assert_eq!(c.latest_epoch(), Some(2));
    assert_eq!(c.entries()[0], (2, 10));
    assert_eq!(c.end_offset_for(2, 11), Some((2, 11)));
}

// Kafka: LeaderEpochFileCacheTest.shouldReturnLogEndOffsetIfLatestEpochRequested
#[test]
fn the_latest_epoch_ends_at_the_log_end_offset() {
    let c = cache(&[(2, 11), (2, 12)]);
    assert_eq!(c.end_offset_for(2, 14), Some((2, 14)));
}

// Kafka: LeaderEpochFileCacheTest.shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned
// Kafka: LeaderEpochFileCacheTest.shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned
// Kafka: LeaderEpochFileCacheTest.shouldNotUpdateEpochAndStartOffsetIfItDidNotChange
#[test]
fn assigning_the_latest_epoch_again_at_a_later_offset_changes_nothing() {
    assert_eq!(cache(&[(2, 9), (2, 10)]).entries(), &[(2, 9)]);
    assert_eq!(cache(&[(2, 6), (2, 10)]).entries(), &[(2, 6)]);
    assert_eq!(cache(&[(2, 6), (2, 7)]).entries(), &[(2, 6)]);
}

// Kafka: LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingStartOffsets
#[test]
fn a_new_epoch_at_the_same_start_offset_replaces_the_old_entry() {
    assert_eq!(cache(&[(2, 9), (3, 9)]).entries(), &[(3, 9)]);
}

// Kafka: LeaderEpochFileCacheTest.shouldReturnUnsupportedIfNoEpochRecorded
// Kafka: LeaderEpochFileCacheTest.shouldFetchEndOffsetOfEmptyCache
#[test]
fn an_empty_cache_answers_undefined() {
    assert_eq!(cache(&[]).end_offset_for(0, 0), None);
    assert_eq!(cache(&[]).end_offset_for(7, 0), None);
}

// Kafka: LeaderEpochFileCacheTest.shouldFetchLatestEpochOfEmptyCache
#[test]
fn an_empty_cache_has_no_latest_epoch() {
    assert_eq!(cache(&[]).latest_epoch(), None);
}

// Kafka: LeaderEpochFileCacheTest.shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch
#[test]
fn an_epoch_older_than_the_cache_ends_where_the_first_epoch_starts() {
    let c = cache(&[(5, 11), (6, 12), (7, 13)]);
    assert_eq!(c.end_offset_for(4, 0), Some((4, 11)));
}

// Kafka: LeaderEpochFileCacheTest.shouldTruncateIfMatchingEpochButEarlierStartingOffset
// Fixed: assigning the latest epoch again at an earlier offset was ignored; LeaderEpochFileCache.assign replaces it (and drops what starts after it) — `EpochCache::assign` now does
#[test]
fn the_latest_epoch_assigned_at_an_earlier_offset_replaces_the_entries_after_it() {
    let c = cache(&[(5, 11), (6, 12), (7, 13), (7, 12)]);
    assert_eq!(c.entries(), &[(5, 11), (7, 12)]);
    assert_eq!(c.end_offset_for(5, 0), Some((5, 12)));
    assert_eq!(c.end_offset_for(6, 0), Some((5, 12)));
}

// Kafka: LeaderEpochFileCacheTest.shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch
#[test]
fn an_older_epoch_ends_where_the_next_epoch_starts() {
    let c = cache(&[(1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)]);
    assert_eq!(c.end_offset_for(2, 17), Some((2, 15)));
}

// Kafka: LeaderEpochFileCacheTest.shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
#[test]
fn an_epoch_missing_from_the_cache_answers_with_the_largest_epoch_below_it() {
    let c = cache(&[(0, 10), (2, 13), (4, 17)]);
    assert_eq!(c.end_offset_for(1, 0), Some((0, 13)));
    assert_eq!(c.end_offset_for(2, 0), Some((2, 17)));
    assert_eq!(c.end_offset_for(3, 0), Some((2, 17)));
}

// Kafka: LeaderEpochFileCacheTest.shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked
#[test]
fn an_epoch_newer_than_the_cache_is_undefined() {
    assert_eq!(cache(&[(2, 100)]).end_offset_for(3, 100), None);
}

// Kafka: LeaderEpochFileCacheTest.shouldSupportEpochsThatDoNotStartFromZero
#[test]
fn epochs_need_not_start_from_zero() {
    let c = cache(&[(2, 6)]);
    assert_eq!(c.end_offset_for(2, 7), Some((2, 7)));
    assert_eq!(c.entries(), &[(2, 6)]);
}

// Kafka: LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingEpochs
#[test]
fn assigning_an_older_epoch_removes_every_newer_entry() {
    let c = cache(&[(1, 5), (2, 6), (1, 7)]);
    assert_eq!(c.latest_epoch(), Some(1));
    assert_eq!(c.end_offset_for(1, 8), Some((1, 8)));
    assert_eq!(c.end_offset_for(2, 8), None);
    assert_eq!(c.entries(), &[(1, 7)]);
}

// Kafka: LeaderEpochFileCacheTest.shouldEnforceOffsetsIncreaseMonotonically
#[test]
fn assigning_an_earlier_start_offset_removes_the_entries_it_overlaps() {
    assert_eq!(cache(&[(2, 6), (3, 5)]).entries(), &[(3, 5)]);
}

// Kafka: LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes
#[test]
fn epochs_are_tracked_across_many_leader_changes() {
    let mut c = cache(&[(0, 0), (1, 0)]);
    assert_eq!(c.latest_epoch(), Some(1));
    assert_eq!(c.end_offset_for(1, 0), Some((1, 0)));
    assert_eq!(c.end_offset_for(0, 0), Some((0, 0)));
    assert_eq!(c.end_offset_for(1, 5), Some((1, 5)));
    assert_eq!(c.end_offset_for(0, 5), Some((0, 0)));
    c.assign(2, 5);
    assert_eq!(c.end_offset_for(2, 10), Some((2, 10)));
    assert_eq!(c.end_offset_for(1, 10), Some((1, 5)));
    assert_eq!(c.end_offset_for(0, 10), Some((0, 0)));
}

// Kafka: LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages
#[test]
fn epochs_are_tracked_as_a_follower_appends_message_by_message() {
    let mut c = cache(&[(0, 0), (0, 1), (0, 2)]);
    assert_eq!(c.end_offset_for(0, 3), Some((0, 3)));
    for o in 3..6 {
        c.assign(1, o);
    }
    assert_eq!(c.end_offset_for(1, 6), Some((1, 6)));
    for o in 6..9 {
        c.assign(2, o);
    }
    assert_eq!(c.latest_epoch(), Some(2));
    assert_eq!(c.end_offset_for(2, 9), Some((2, 9)));
    assert_eq!(c.end_offset_for(0, 9), Some((0, 3)));
    assert_eq!(c.end_offset_for(1, 9), Some((1, 6)));
}

// Kafka: LeaderEpochFileCacheTest.shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries
#[test]
fn truncating_at_an_epoch_start_drops_that_epoch_and_later_ones() {
    let mut c = cache(&[(2, 6), (3, 8), (4, 11)]);
    c.truncate_from_end(8);
    assert_eq!(c.entries(), &[(2, 6)]);
}

// Kafka: LeaderEpochFileCacheTest.shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest
#[test]
fn truncating_inside_an_epoch_keeps_that_epoch() {
    let mut c = cache(&[(2, 6), (3, 8), (4, 11)]);
    c.truncate_from_end(9);
    assert_eq!(c.latest_epoch(), Some(3));
    assert_eq!(c.entries(), &[(2, 6), (3, 8)]);
}

// Kafka: LeaderEpochFileCacheTest.shouldClearLatestOnEmptyCache
#[test]
fn truncating_an_empty_cache_is_harmless() {
    let mut c = cache(&[]);
    c.truncate_from_end(7);
    assert!(c.entries().is_empty());
}

// Kafka: LeaderEpochFileCacheTest.testGetEpochEntry
#[test]
fn each_epoch_entry_can_be_looked_up_by_epoch() {
    let c = cache(&[(2, 100), (3, 500), (5, 1000)]);
    assert_eq!(c.start_offset(2), Some(100));
    assert_eq!(c.start_offset(3), Some(500));
    assert_eq!(c.start_offset(5), Some(1000));
}

// Kafka: LeaderEpochFileCacheTest.shouldPersistEpochsBetweenInstances
#[test]
fn the_epoch_cache_of_the_flushed_log_survives_a_power_loss() {
    let mut log = Log::default();
    for (id, epoch) in [(0, 2), (1, 2), (2, 3)] {
        log.append(Record {
            id,
            epoch,
            producer_id: 0,
            seq: 0,
            batch_start: true,
            timestamp_ms: 0,
        });
    }
    log.flush();
    log.lose_unflushed();
    assert_eq!(log.epochs(), &[(2, 0), (3, 2)]);
}
