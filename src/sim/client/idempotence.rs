//! The idempotent producer's sequence and epoch decisions, as Kafka's
//! `TransactionManager` (kafka-clients, `producer.internals`) takes them for
//! a producer without a `transactional.id`.
//!
//! A producer id and epoch are producer-wide; sequences are per partition.
//! Each partition keeps its next sequence, the last sequence and offset the
//! broker acknowledged, and the batches in flight ordered by sequence
//! (`TxnPartitionMap`). The decisions:
//!
//! - **May a failed batch be retried, and must the epoch be bumped?**
//!   (`TransactionManager.canRetry`). UNKNOWN_PRODUCER_ID: always retried; the
//!   epoch is bumped unless the response carries no log start offset or the
//!   batch's sequence was already reset. OUT_OF_ORDER_SEQUENCE_NUMBER: always
//!   retried; the epoch is bumped at once when the batch is the next sequence
//!   after the last acknowledged one (a real gap) and no sequence of the
//!   partition is unresolved, or when it is the sequence right after the
//!   unresolved one. Other errors: retried if retriable, no bump.
//! - **A batch fails for good** (`TransactionManager.handleFailedBatch`):
//!   OUT_OF_ORDER_SEQUENCE_NUMBER and UNKNOWN_PRODUCER_ID (whose exception is
//!   an `OutOfOrderSequenceException`) request a bump; any other failure
//!   requests a bump when the
//!   Sender passes `adjustSequenceNumbers`, which it does when the batch still
//!   had retries left (e.g. it failed because `delivery.timeout.ms` passed).
//! - **A batch expires** (`Sender.sendProducerData`): its sequence becomes
//!   *unresolved* only if the batch was being retried (`ProducerBatch.inRetry`);
//!   `maybeResolveSequences` settles it once nothing is in flight: resolved if
//!   the last acknowledged sequence is the one before the next, else a bump.
//! - **The bump** (`bumpIdempotentProducerEpoch`) is producer-wide: epoch + 1
//!   (a new producer id after `Short.MAX_VALUE`); the partitions that asked
//!   for it restart their in-flight batches' sequences at 0; every other
//!   partition restarts at 0 once its own in-flight batches are done
//!   (`maybeUpdateProducerIdAndEpoch`).
//!
//! The functions are pure; [`IdempotentProducer`] strings them together the
//! way `TransactionManager` does, and `tests/oracle.rs` replays Kafka 4.4.0's
//! answers (`tests/oracle/transaction_manager.jsonl`) through it.

use std::collections::{BTreeMap, BTreeSet};

/// A produce error, as the idempotence rules tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum ProduceError {
    OutOfOrderSequenceNumber,
    UnknownProducerId,
    /// Any other error whose exception is a `RetriableException`
    /// (NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS, …).
    Retriable,
    /// Any other error (INVALID_RECORD, MESSAGE_TOO_LARGE, …).
    NonRetriable,
}

/// What `TransactionManager` knows when a batch's response is an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct RetryContext {
    /// The response's log start offset; `None` when it carried none (-1).
    pub log_start_offset: Option<u64>,
    /// The batch's sequence was rewritten after an epoch bump
    /// (`ProducerBatch.sequenceHasBeenReset`).
    pub sequence_has_been_reset: bool,
    pub base_sequence: u32,
    /// The partition's last acknowledged sequence and offset.
    pub last_acked_sequence: Option<u32>,
    pub last_acked_offset: Option<u64>,
    /// The partition's unresolved next sequence (`partitionsWithUnresolvedSequences`).
    pub unresolved: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct RetryDecision {
    /// `canRetry`'s answer (the Sender also needs retries and time left).
    pub retry: bool,
    /// The partition asks for a producer-wide epoch bump
    /// (`requestIdempotentEpochBumpForPartition`).
    pub bump_epoch: bool,
}

/// `TransactionManager.isNextSequence`: `sequence` directly follows the last
/// acknowledged one (0 when nothing was acknowledged).
pub fn is_next_sequence(last_acked: Option<u32>, sequence: u32) -> bool {
    i64::from(sequence) - last_acked.map_or(-1, i64::from) == 1
}

/// `TransactionManager.canRetry` for an idempotent (non-transactional) producer.
pub fn can_retry(error: ProduceError, c: &RetryContext) -> RetryDecision {
    let retry = |bump_epoch| RetryDecision {
        retry: true,
        bump_epoch,
    };
    match error {
        // Unknown log start offset: retry until a response carries one. A
        // batch already rewritten: the other in-flight batches' answers. Else
        // (log head removed by retention, or the producer state lost) the
        // idempotent producer bumps its epoch.
        ProduceError::UnknownProducerId => {
            retry(c.log_start_offset.is_some() && !c.sequence_has_been_reset)
        }
        ProduceError::OutOfOrderSequenceNumber => {
            if c.unresolved.is_none()
                && (c.sequence_has_been_reset
                    || !is_next_sequence(c.last_acked_sequence, c.base_sequence))
            {
                // Not the next batch: an earlier one is still to land.
                return retry(false);
            }
            // A real gap, or the batch right after the unresolved one.
            retry(c.unresolved.is_none() || c.unresolved == Some(c.base_sequence))
        }
        ProduceError::Retriable => retry(false),
        ProduceError::NonRetriable => RetryDecision {
            retry: false,
            bump_epoch: false,
        },
    }
}

/// What `TransactionManager.handleFailedBatch` does to the partition of a
/// batch that failed for good. (Its third branch, forgetting the partition's
/// sequences on UNKNOWN_PRODUCER_ID, is never reached by an idempotent
/// producer: `UnknownProducerIdException` extends
/// `OutOfOrderSequenceException`, whose branch comes first.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum FailedBatch {
    Nothing,
    /// Request a producer-wide epoch bump, this partition's sequences rewritten.
    BumpEpoch,
}

/// Why a batch failed for good, as `handleFailedBatch` tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum Failure {
    OutOfOrderSequence,
    UnknownProducerId,
    /// Anything else, an expiry (TimeoutException) included.
    Other,
}

/// `TransactionManager.handleFailedBatch`; `retries_left` is the Sender's
/// `adjustSequenceNumbers` (`batch.attempts() < retries`; false for an expiry).
pub fn on_failed_batch(failure: Failure, retries_left: bool) -> FailedBatch {
    match failure {
        Failure::OutOfOrderSequence | Failure::UnknownProducerId => FailedBatch::BumpEpoch,
        Failure::Other if retries_left => FailedBatch::BumpEpoch,
        Failure::Other => FailedBatch::Nothing,
    }
}

/// `Sender.sendProducerData`: an expired batch leaves its sequence
/// unresolved only if it was being retried.
pub fn expiry_leaves_sequence_unresolved(in_retry: bool) -> bool {
    in_retry
}

/// `TransactionManager.maybeResolveSequences`, for a partition with an
/// unresolved sequence and nothing in flight: true when the epoch must be
/// bumped (the last acknowledged sequence is not the one before the next).
pub fn unresolved_needs_bump(last_acked: Option<u32>, next_sequence: u32) -> bool {
    !is_next_sequence(last_acked, next_sequence)
}

/// `bumpIdempotentProducerEpoch`: the next epoch, or `None` when the epoch
/// was `Short.MAX_VALUE` and a new producer id is needed.
pub fn bumped_epoch(epoch: i16) -> Option<i16> {
    epoch.checked_add(1)
}

/// `TxnPartitionEntry.startSequencesAtBeginning`: the in-flight batches'
/// new base sequences (given their record counts in sequence order) and the
/// partition's next sequence.
pub fn restart_sequences(records_in_flight: &[u32]) -> (Vec<u32>, u32) {
    let mut next = 0;
    let bases = records_in_flight
        .iter()
        .map(|r| {
            let base = next;
            next += r;
            base
        })
        .collect();
    (bases, next)
}

/// One batch as `TransactionManager` sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Batch {
    pub partition: u32,
    pub records: u32,
    pub base_sequence: u32,
    /// The producer epoch the batch carries (`None`: no producer id).
    pub epoch: Option<i16>,
    pub sequence_has_been_reset: bool,
    /// Re-enqueued after an error (`ProducerBatch.inRetry`).
    pub in_retry: bool,
}

impl Batch {
    pub fn last_sequence(&self) -> u32 {
        self.base_sequence + self.records - 1
    }
}

/// A partition's sequences (`TxnPartitionEntry`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct PartitionSequences {
    /// The producer epoch these sequences belong to (`None` before the first use).
    pub epoch: Option<i16>,
    pub next_sequence: u32,
    pub last_acked_sequence: Option<u32>,
    pub last_acked_offset: Option<u64>,
    /// Batch ids in flight by base sequence.
    pub in_flight: BTreeMap<u32, u64>,
}

/// The idempotent producer's bookkeeping, `TransactionManager`'s for a
/// producer without a `transactional.id`, built from the functions above.
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct IdempotentProducer {
    /// `None`: no producer id (after the epoch ran out; InitProducerId next).
    pub epoch: Option<i16>,
    /// `clientSideEpochBumpRequired`: producer-wide.
    pub bump_required: bool,
    /// Partitions whose in-flight sequences the next bump rewrites.
    pub rewrite: BTreeSet<u32>,
    /// Partitions with an unresolved sequence: the sequence after it.
    pub unresolved: BTreeMap<u32, u32>,
    pub partitions: BTreeMap<u32, PartitionSequences>,
    pub batches: BTreeMap<u64, Batch>,
}

impl IdempotentProducer {
    pub fn new(epoch: i16) -> Self {
        IdempotentProducer {
            epoch: Some(epoch),
            ..Default::default()
        }
    }

    fn entry(&mut self, p: u32) -> &mut PartitionSequences {
        self.partitions.entry(p).or_default()
    }

    pub fn has_in_flight(&self, p: u32) -> bool {
        self.partitions
            .get(&p)
            .is_some_and(|e| !e.in_flight.is_empty())
    }

    /// `hasStaleProducerIdAndEpoch`: the partition's sequences belong to an
    /// older producer id or epoch.
    pub fn is_stale(&self, p: u32) -> bool {
        self.partitions.get(&p).and_then(|e| e.epoch) != self.epoch
    }

    pub fn next_sequence(&self, p: u32) -> u32 {
        self.partitions.get(&p).map_or(0, |e| e.next_sequence)
    }

    pub fn last_acked_sequence(&self, p: u32) -> Option<u32> {
        self.partitions.get(&p).and_then(|e| e.last_acked_sequence)
    }

    pub fn last_acked_offset(&self, p: u32) -> Option<u64> {
        self.partitions.get(&p).and_then(|e| e.last_acked_offset)
    }

    /// `startSequencesAtBeginning` for one partition, with the current epoch.
    fn restart(&mut self, p: u32) {
        let epoch = self.epoch;
        let ids: Vec<u64> = self.entry(p).in_flight.values().copied().collect();
        let records: Vec<u32> = ids.iter().map(|id| self.batches[id].records).collect();
        let (bases, next) = restart_sequences(&records);
        let e = self.entry(p);
        e.in_flight = bases.iter().copied().zip(ids.iter().copied()).collect();
        e.epoch = epoch;
        e.next_sequence = next;
        e.last_acked_sequence = None;
        for (id, base) in ids.iter().zip(bases) {
            if let Some(b) = self.batches.get_mut(id) {
                b.base_sequence = base;
                b.epoch = epoch;
                b.sequence_has_been_reset = true;
            }
        }
    }

    /// A batch of `records` is drained to partition `p` (the accumulator,
    /// after `maybeUpdateProducerIdAndEpoch`): it takes the next sequence.
    pub fn send(&mut self, id: u64, p: u32, records: u32) -> Batch {
        if self.is_stale(p) && !self.has_in_flight(p) {
            self.restart(p);
        }
        let epoch = self.epoch;
        let e = self.entry(p);
        let b = Batch {
            partition: p,
            records,
            base_sequence: e.next_sequence,
            epoch,
            sequence_has_been_reset: false,
            in_retry: false,
        };
        e.next_sequence += records;
        e.in_flight.insert(b.base_sequence, id);
        self.batches.insert(id, b);
        b
    }

    fn remove_in_flight(&mut self, id: u64) {
        let Some(b) = self.batches.get(&id).copied() else {
            return;
        };
        if let Some(e) = self.partitions.get_mut(&b.partition) {
            if e.in_flight.get(&b.base_sequence) == Some(&id) {
                e.in_flight.remove(&b.base_sequence);
            }
        }
    }

    /// `handleCompletedBatch`: acknowledged at `base_offset`.
    pub fn ack(&mut self, id: u64, base_offset: u64) {
        let Some(b) = self.batches.get(&id).copied() else {
            return;
        };
        let e = self.entry(b.partition);
        if e.last_acked_sequence.is_none_or(|l| b.last_sequence() > l) {
            e.last_acked_sequence = Some(b.last_sequence());
        }
        let last_offset = base_offset + u64::from(b.records) - 1;
        if e.last_acked_offset.is_none_or(|l| last_offset > l) {
            e.last_acked_offset = Some(last_offset);
        }
        self.remove_in_flight(id);
        self.batches.remove(&id);
    }

    fn request_bump(&mut self, p: u32) {
        self.bump_required = true;
        self.rewrite.insert(p);
    }

    /// The context `canRetry` reads for batch `id`.
    pub fn retry_context(&self, id: u64, log_start_offset: Option<u64>) -> Option<RetryContext> {
        let b = self.batches.get(&id)?;
        Some(RetryContext {
            log_start_offset,
            sequence_has_been_reset: b.sequence_has_been_reset,
            base_sequence: b.base_sequence,
            last_acked_sequence: self.last_acked_sequence(b.partition),
            last_acked_offset: self.last_acked_offset(b.partition),
            unresolved: self.unresolved.get(&b.partition).copied(),
        })
    }

    /// `canRetry`, with the bump it may request.
    pub fn can_retry(
        &mut self,
        id: u64,
        error: ProduceError,
        log_start_offset: Option<u64>,
    ) -> bool {
        let Some(c) = self.retry_context(id, log_start_offset) else {
            return false;
        };
        let d = can_retry(error, &c);
        if d.bump_epoch {
            self.request_bump(self.batches[&id].partition);
        }
        d.retry
    }

    /// The Sender re-enqueues batch `id` for another attempt.
    pub fn reenqueued(&mut self, id: u64) {
        if let Some(b) = self.batches.get_mut(&id) {
            b.in_retry = true;
        }
    }

    /// `handleFailedBatch`.
    pub fn fail(&mut self, id: u64, failure: Failure, retries_left: bool) {
        let Some(b) = self.batches.get(&id).copied() else {
            return;
        };
        self.remove_in_flight(id);
        self.batches.remove(&id);
        match on_failed_batch(failure, retries_left) {
            FailedBatch::Nothing => {}
            FailedBatch::BumpEpoch => self.request_bump(b.partition),
        }
    }

    /// delivery.timeout.ms passed for batch `id` (the Sender's expiry).
    pub fn expire(&mut self, id: u64) {
        let Some(b) = self.batches.get(&id).copied() else {
            return;
        };
        self.fail(id, Failure::Other, false);
        if expiry_leaves_sequence_unresolved(b.in_retry) {
            let next = b.last_sequence() + 1;
            let u = self.unresolved.entry(b.partition).or_insert(next);
            *u = (*u).max(next);
        }
    }

    /// The start of a Sender loop: `bumpIdempotentEpochAndResetIdIfNeeded`,
    /// then `maybeResolveSequences`.
    pub fn poll(&mut self) {
        if self.bump_required {
            self.epoch = self.epoch.and_then(bumped_epoch);
            for p in std::mem::take(&mut self.rewrite) {
                self.restart(p);
                self.unresolved.remove(&p);
            }
            self.bump_required = false;
        }
        let settled: Vec<u32> = self
            .unresolved
            .keys()
            .copied()
            .filter(|p| !self.has_in_flight(*p))
            .collect();
        for p in settled {
            if unresolved_needs_bump(self.last_acked_sequence(p), self.next_sequence(p)) {
                self.request_bump(p);
            }
            self.unresolved.remove(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(last_acked: Option<u32>, base: u32) -> RetryContext {
        RetryContext {
            log_start_offset: Some(0),
            sequence_has_been_reset: false,
            base_sequence: base,
            last_acked_sequence: last_acked,
            last_acked_offset: last_acked.map(u64::from),
            unresolved: None,
        }
    }

    #[test]
    fn out_of_order_on_the_next_sequence_bumps_the_epoch_at_once_but_not_for_a_later_batch() {
        // TransactionManager.canRetry: the batch right after the last
        // acknowledged sequence failing OUT_OF_ORDER_SEQUENCE_NUMBER is a real
        // gap, so the first attempt already requests the bump; a later batch
        // only waits for the earlier ones.
        let gap = can_retry(ProduceError::OutOfOrderSequenceNumber, &ctx(Some(4), 5));
        assert_eq!(
            gap,
            RetryDecision {
                retry: true,
                bump_epoch: true
            }
        );
        let later = can_retry(ProduceError::OutOfOrderSequenceNumber, &ctx(Some(4), 8));
        assert_eq!(
            later,
            RetryDecision {
                retry: true,
                bump_epoch: false
            }
        );
    }

    #[test]
    fn a_bump_is_producer_wide_and_other_partitions_restart_when_their_batches_are_done() {
        let mut p = IdempotentProducer::new(0);
        p.send(1, 0, 2);
        p.send(2, 1, 3);
        p.fail(1, Failure::OutOfOrderSequence, true);
        p.poll();
        assert_eq!(p.epoch, Some(1));
        assert!(p.is_stale(1), "partition 1 still has epoch 0 in flight");
        p.ack(2, 0);
        assert_eq!(p.send(3, 1, 1).base_sequence, 0, "restarts at 0 in epoch 1");
    }
}
