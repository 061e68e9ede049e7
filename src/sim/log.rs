//! One replica's log: records stamped with the leader epoch that wrote them, the
//! log end offset (LEO), the high watermark (HW) and the leader-epoch cache.
//!
//! Offsets start at 0; the LEO is the offset the next record gets and the HW is
//! exclusive (offsets `< HW` are committed), as in Kafka's code
//! (KAFKA_REPLICATION.md, "Notation"). The epoch cache is the
//! `leader-epoch-checkpoint` file: an ordered list of `(epoch, start offset)` that
//! answers `endOffsetFor` (§7), the question at the heart of KIP-101/KIP-279
//! truncation.
//!
//! Every record also carries a running prefix hash, so two replicas can be
//! compared at any offset in O(1): that is how "log matching below the HW" is
//! checked after every step without rescanning logs.

use std::rc::Rc;

use crate::sim::shared::cow;

use serde::Serialize;

use super::shared::{SharedChunk, SharedVec, SharedVecDelta};

/// One record as the simulation sees it. `id` is unique per `send()` call of a
/// producer (a retry keeps it), so the same id at two offsets is a duplicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Record {
    pub id: u64,
    pub epoch: u32,
    /// Producer id (0 for a non-idempotent producer).
    pub producer_id: u32,
    /// Idempotent sequence number of this record (first of batch + index).
    pub seq: u32,
    /// True on the first record of a produce batch.
    pub batch_start: bool,
    /// CreateTime: when the application called send() (simulated ms). It
    /// travels with the record to every replica; ListOffsets by timestamp
    /// (auto.offset.reset=by_duration) searches it.
    pub timestamp_ms: u64,
}

impl Record {
    /// A record of a non-idempotent producer, its own batch, written in `epoch`.
    pub fn plain(id: u64, epoch: u32) -> Record {
        Record {
            id,
            epoch,
            producer_id: 0,
            seq: 0,
            batch_start: true,
            timestamp_ms: 0,
        }
    }
}

/// Metadata of a batch kept for idempotent de-duplication (the last five per
/// producer, ProducerStateEntry.NUM_BATCHES_TO_RETAIN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct BatchMeta {
    pub first_seq: u32,
    pub last_seq: u32,
    pub base_offset: u64,
}

pub const RETAINED_BATCHES: usize = 5;

/// One producer's state in a log: its last batches in a ring of their own
/// rather than a heap block (a log's producer states are copied on the first
/// append after a snapshot: one allocation, not two; issue 27).
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ProducerState {
    pub producer_id: u32,
    /// The oldest retained batch's place in `kept`, and how many there are.
    head: u8,
    len: u8,
    kept: [BatchMeta; RETAINED_BATCHES],
}

impl ProducerState {
    fn new(producer_id: u32) -> Self {
        ProducerState {
            producer_id,
            ..Self::default()
        }
    }

    fn at(&self, i: usize) -> usize {
        (self.head as usize + i) % RETAINED_BATCHES
    }

    /// The retained batches, oldest first.
    pub fn batches(&self) -> impl Iterator<Item = &BatchMeta> + '_ {
        (0..self.len as usize).map(|i| &self.kept[self.at(i)])
    }

    pub fn last_seq(&self) -> Option<u32> {
        self.last().map(|b| b.last_seq)
    }

    fn last(&self) -> Option<&BatchMeta> {
        let n = self.len as usize;
        n.checked_sub(1).map(|i| &self.kept[self.at(i)])
    }

    /// A new batch; the oldest is forgotten past [`RETAINED_BATCHES`].
    fn push(&mut self, batch: BatchMeta) {
        if self.len as usize == RETAINED_BATCHES {
            self.kept[self.head as usize] = batch;
            self.head = self.at(1) as u8;
        } else {
            let i = self.at(self.len as usize);
            self.kept[i] = batch;
            self.len += 1;
        }
    }

    fn last_mut(&mut self) -> Option<&mut BatchMeta> {
        let n = self.len as usize;
        let i = self.at(n.checked_sub(1)?);
        Some(&mut self.kept[i])
    }
}

/// The leader-epoch cache (`leader-epoch-checkpoint`, LeaderEpochFileCache):
/// `(epoch, start offset)` entries, epochs and start offsets strictly
/// increasing. Kept apart from the records so its rules can be checked on
/// their own (tests/conformance/epoch_cache.rs ports Kafka's test cases).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct EpochCache {
    /// Shared with snapshots until a new epoch or a truncation changes it.
    entries: Rc<Vec<(u32, u64)>>,
    /// The last entry's epoch, kept beside the entries so the questions asked
    /// on every fetch (`latest_epoch`, `end_offset_for` the latest epoch) do
    /// not read the entries' heap block.
    latest: Option<u32>,
}

impl EpochCache {
    pub fn entries(&self) -> &[(u32, u64)] {
        &self.entries
    }

    pub fn latest_epoch(&self) -> Option<u32> {
        self.latest
    }

    /// Start offset of `epoch`, if the cache has it (`epochEntry`).
    pub fn start_offset(&self, epoch: u32) -> Option<u64> {
        self.entries.iter().find(|e| e.0 == epoch).map(|e| e.1)
    }

    /// `assign(epoch, start)`: nothing to do when the latest entry already has
    /// this epoch at or before `start`; otherwise every entry the new one
    /// supersedes (epoch ≥ new epoch or start ≥ new start) is removed and the
    /// new one appended (LeaderEpochFileCache.assign / isUpdateNeeded).
    pub fn assign(&mut self, epoch: u32, start: u64) {
        if self
            .entries
            .last()
            .is_some_and(|&(e, s)| e == epoch && s <= start)
        {
            return;
        }
        let entries = cow(&mut self.entries);
        entries.retain(|&(e, s)| e < epoch && s < start);
        entries.push((epoch, start));
        self.latest = Some(epoch);
    }

    /// `endOffsetFor(requested, logEndOffset)` of KAFKA_REPLICATION.md §7: the
    /// largest epoch ≤ requested, and the start offset of the first epoch after
    /// it (or the LEO when requested is the latest epoch). `None` is "undefined".
    pub fn end_offset_for(&self, requested: u32, log_end_offset: u64) -> Option<(u32, u64)> {
        let latest = self.latest_epoch()?;
        if requested == latest {
            return Some((requested, log_end_offset));
        }
        if requested > latest {
            return None;
        }
        let first = self.entries[0];
        if requested < first.0 {
            return Some((requested, first.1));
        }
        let idx = self.entries.iter().rposition(|e| e.0 <= requested)?;
        let epoch = self.entries[idx].0;
        let end = self
            .entries
            .get(idx + 1)
            .map(|e| e.1)
            .unwrap_or(log_end_offset);
        Some((epoch, end))
    }

    /// `truncateFromEnd(offset)`: drop the entries that start at or after
    /// `offset` (the log was truncated there).
    pub fn truncate_from_end(&mut self, offset: u64) {
        if self.entries.iter().any(|&(_, s)| s >= offset) {
            cow(&mut self.entries).retain(|&(_, s)| s < offset);
            self.latest = self.entries.last().map(|e| e.0);
        }
    }

    /// `truncateFromStart(offset)`: the log now starts at `offset`. The
    /// entries that start at or before it go, except the last of them, which
    /// stays as the first entry, moved to start at `offset` (the epoch of the
    /// log's new first record). The simulator keeps every log from offset 0
    /// (no retention, no DeleteRecords), so only the oracle test calls this;
    /// it is here so the cache answers Kafka's whole contract.
    pub fn truncate_from_start(&mut self, offset: u64) {
        let removed = self
            .entries
            .iter()
            .take_while(|&&(_, s)| s <= offset)
            .count();
        if removed == 0 {
            return;
        }
        let entries = cow(&mut self.entries);
        let epoch = entries[removed - 1].0;
        entries.drain(..removed);
        entries.insert(0, (epoch, offset));
    }
}

/// Records per shared chunk of a log (write-once cells, 320 bytes with their
/// hashes): a snapshot shares every chunk, and an append fills the next cell
/// in place (`shared::SharedVec`). Measured (issue 27, `failover-bench
/// snapshot`, 20,000-partition bench): with chunks of 16 the live world at
/// 10 s is 197.9 MB against 178.7 with 8, and what a snapshot alone holds a
/// second later is the same (47.7 MB at 10 s, 48.0 at 60 s).
const LOG_CHUNK: usize = 8;

/// A chunk of a leader's log sent with the records of a fetch response
/// (`Log::chunk_starting_in`, `Log::append_from`).
pub type LogChunk = SharedChunk<(Record, u64), LOG_CHUNK>;

/// `repr(C)`: what every fetch asks (the end, the HW, the latest epoch)
/// first, beside the records' index; flush and checkpoint state last.
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[repr(C)]
pub struct Log {
    /// Each record with the hash of the log up to and including it.
    records: SharedVec<(Record, u64), LOG_CHUNK>,
    pub high_watermark: u64,
    /// The last record's epoch (a follower's `LastFetchedEpoch`, asked for
    /// every partition of every fetch), kept beside the records.
    last_epoch: Option<u32>,
    /// The hash of the whole log (the last record's; 0 when empty), kept
    /// beside it too: the invariants compare replicas' logs up to their HW
    /// after every event, and that is most often the whole log.
    last_hash: u64,
    /// Leader-epoch cache.
    epochs: EpochCache,
    /// Offsets below this are on disk (fsynced); the rest is in the page cache.
    pub flushed_offset: u64,
    /// The last high watermark written to `replication-offset-checkpoint`.
    pub checkpointed_high_watermark: u64,
    /// Idempotent producer state, brought up to the log end when it is read
    /// (shared with snapshots until then); `None` until a record of an
    /// idempotent producer is read into it (no heap block for a follower's).
    producers: Option<Rc<Producers>>,
}

/// What the records below `upto` say of each idempotent producer. Only a
/// leader asks (to de-duplicate a retried batch), so it is kept up to date
/// lazily: an append leaves it behind, and a read applies the records
/// appended since, in order, exactly as applying each at its append would
/// (and a truncation below `upto` starts it again from the first record,
/// as Kafka rebuilds it from the log). A follower's appends thus never copy
/// it away from a snapshot (issue 27: a copied replica carried ~150 bytes
/// of it, a third of each).
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct Producers {
    upto: u64,
    states: Vec<ProducerState>,
}

/// A log written against another copy of the same log (`base`), for a
/// checkpoint that keeps it against an older one (`crate::checkpoint`):
/// what moves as records come and the HW advances, with the records as
/// chunks shared with `base` and those after. The epoch cache and the last
/// record's epoch are `base`'s (a log where either differs, after a new
/// leader epoch, is not written this way). The idempotent producers' state
/// is kept only when it is `base`'s; otherwise the rebuilt log reads it
/// again from its records when a leader next asks, as after a truncation
/// (the answer is the same; a leader's state changes with every batch, and
/// keeping each leader's copy was a tenth of a checkpoint of the
/// 20,000-partition bench).
#[derive(Debug)]
pub struct LogDelta {
    records: SharedVecDelta<(Record, u64), LOG_CHUNK>,
    last_hash: u64,
    /// Offsets in 32 bits (a log past 2^32 records is kept whole): a
    /// checkpoint of a large cluster holds one delta per replica.
    high_watermark: u32,
    flushed_offset: u32,
    checkpointed_high_watermark: u32,
    /// Whether the producers' state is `base`'s own block (else it is read
    /// again from the records).
    producers_of_base: bool,
}

impl LogDelta {
    /// This log written against `base`, when their epoch caches agree.
    pub fn of(log: &Log, base: &Log) -> Option<LogDelta> {
        // Every field named, so a new one must be placed here.
        let Log {
            records,
            high_watermark,
            last_epoch,
            last_hash,
            epochs,
            flushed_offset,
            checkpointed_high_watermark,
            producers,
        } = log;
        if *epochs != base.epochs || *last_epoch != base.last_epoch {
            return None;
        }
        let producers_of_base = match (producers, &base.producers) {
            (Some(p), Some(b)) => Rc::ptr_eq(p, b),
            _ => false,
        };
        Some(LogDelta {
            records: records.delta_from(&base.records)?,
            last_hash: *last_hash,
            high_watermark: u32::try_from(*high_watermark).ok()?,
            flushed_offset: u32::try_from(*flushed_offset).ok()?,
            checkpointed_high_watermark: u32::try_from(*checkpointed_high_watermark).ok()?,
            producers_of_base,
        })
    }

    /// The log this was taken from, out of the `base` it was taken against.
    pub fn apply(&self, base: &Log) -> Log {
        Log {
            records: SharedVec::rebuilt(&base.records, &self.records),
            high_watermark: self.high_watermark.into(),
            last_epoch: base.last_epoch,
            last_hash: self.last_hash,
            epochs: base.epochs.clone(),
            flushed_offset: self.flushed_offset.into(),
            checkpointed_high_watermark: self.checkpointed_high_watermark.into(),
            producers: base.producers.clone().filter(|_| self.producers_of_base),
        }
    }
}

impl Log {
    /// Whether `other` holds exactly what this log holds: the same records
    /// (the same shared chunks), HW, epochs, flush and checkpoint state. The
    /// idempotent producers' state is what the records say (read from them
    /// when asked, [`Log::producer_state`]), so it is compared by asking.
    /// A rebuilt checkpoint's logs are checked this way.
    pub fn same_as(&self, other: &Log) -> bool {
        self.records.same_as(&other.records)
            && self.high_watermark == other.high_watermark
            && self.last_epoch == other.last_epoch
            && self.last_hash == other.last_hash
            && self.epochs == other.epochs
            && self.flushed_offset == other.flushed_offset
            && self.checkpointed_high_watermark == other.checkpointed_high_watermark
            && self.producer_states() == other.producer_states()
    }

    /// Every idempotent producer's state as the whole log says, by producer
    /// id (a copy: the log itself is left as it is).
    fn producer_states(&self) -> Vec<(u32, Option<u32>, Vec<BatchMeta>)> {
        let mut log = self.clone();
        let mut ids: Vec<u32> = self.records().map(|r| r.producer_id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.iter()
            .filter_map(|&id| {
                let p = log.producer_state(id)?;
                Some((id, p.last_seq(), p.batches().copied().collect()))
            })
            .collect()
    }
}

fn mix(prev: u64, r: &Record) -> u64 {
    let mut h = prev ^ 0x9e37_79b9_7f4a_7c15;
    for v in [
        r.id,
        r.epoch as u64,
        r.producer_id as u64 | ((r.seq as u64) << 32),
    ] {
        h = (h ^ v).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 31;
    }
    h
}

impl Log {
    pub fn log_end_offset(&self) -> u64 {
        self.records.len() as u64
    }

    /// Every record, in offset order.
    pub fn records(&self) -> impl Iterator<Item = &Record> + '_ {
        self.records.iter().map(|e| &e.0)
    }

    /// The records at offsets `from..to` (clamped to the LEO).
    pub fn records_between(&self, from: u64, to: u64) -> Vec<Record> {
        let mut out = Vec::new();
        self.copy_records_between(from, to, &mut out);
        out
    }

    /// [`Log::records_between`] appended to `out`, a buffer the caller
    /// reuses (a leader copies records into every fetch response it sends).
    pub fn copy_records_between(&self, from: u64, to: u64, out: &mut Vec<Record>) {
        out.extend(self.records.range(from as usize, to as usize).map(|e| e.0));
    }

    pub fn record_at(&self, offset: u64) -> Option<&Record> {
        self.records.get(offset as usize).map(|e| &e.0)
    }

    /// Hash of the whole prefix `[0, offset)`; 0 for the empty prefix.
    pub fn prefix_hash(&self, offset: u64) -> u64 {
        if offset == 0 {
            0
        } else if offset == self.log_end_offset() {
            self.last_hash
        } else {
            self.records
                .get(offset as usize - 1)
                .map_or(u64::MAX, |e| e.1)
        }
    }

    /// The first offset whose record's timestamp is at least `t`, and that
    /// record's epoch (UnifiedLog.fetchOffsetByTimestamp: the first batch
    /// whose largest timestamp reaches `t`, then its first record that does;
    /// in offset order that is the first such record).
    pub fn first_offset_at_or_after(&self, t: u64) -> Option<(u64, u32)> {
        self.records
            .iter()
            .enumerate()
            .find(|(_, e)| e.0.timestamp_ms >= t)
            .map(|(o, e)| (o as u64, e.0.epoch))
    }

    pub fn digest(&self) -> u64 {
        self.prefix_hash(self.log_end_offset())
    }

    pub fn epochs(&self) -> &[(u32, u64)] {
        self.epochs.entries()
    }

    pub fn latest_epoch(&self) -> Option<u32> {
        self.epochs.latest_epoch()
    }

    /// Epoch of the last record, the follower's `LastFetchedEpoch`.
    pub fn last_record_epoch(&self) -> Option<u32> {
        self.last_epoch
    }

    /// Start offset of `epoch` in the cache, if present.
    pub fn epoch_start_offset(&self, epoch: u32) -> Option<u64> {
        self.epochs.start_offset(epoch)
    }

    /// Record that `epoch` starts at `start` ([`EpochCache::assign`]).
    pub fn assign_epoch(&mut self, epoch: u32, start: u64) {
        self.epochs.assign(epoch, start);
    }

    /// `endOffsetFor(requested)` of KAFKA_REPLICATION.md §7: the largest epoch
    /// ≤ requested, and the start offset of the first epoch after it (or the LEO
    /// when requested is the latest epoch). `None` is "undefined".
    pub fn end_offset_for(&self, requested: u32) -> Option<(u32, u64)> {
        self.epochs.end_offset_for(requested, self.log_end_offset())
    }

    /// Append one record at the LEO; returns its offset. Keeps the epoch cache up
    /// to date (a record with a newer epoch starts a cache entry).
    pub fn append(&mut self, record: Record) -> u64 {
        self.append_with(record, |records, cell| records.push(cell))
    }

    /// `append`'s bookkeeping around `push`, which puts the record and the
    /// hash of the log up to it in place (a leader writes it; a follower
    /// may find it there, `append_from`).
    #[inline]
    fn append_with(
        &mut self,
        record: Record,
        push: impl FnOnce(&mut SharedVec<(Record, u64), LOG_CHUNK>, (Record, u64)),
    ) -> u64 {
        let offset = self.log_end_offset();
        if self.latest_epoch().is_none_or(|e| record.epoch > e) {
            self.assign_epoch(record.epoch, offset);
        }
        let hash = mix(self.last_hash, &record);
        push(&mut self.records, (record, hash));
        self.last_epoch = Some(record.epoch);
        self.last_hash = hash;
        offset
    }

    /// The first chunk of this log that starts at an offset in
    /// `from..to`, for a follower that appends those records
    /// (`append_from`).
    pub fn chunk_starting_in(&self, from: u64, to: u64) -> Option<LogChunk> {
        self.records.chunk_starting_in(from as usize, to as usize)
    }

    /// How many chunks of this log's records (of how many) are `other`'s
    /// too: a follower's log shares its leader's (`append_from`).
    pub fn record_chunks_shared_with(&self, other: &Log) -> (usize, usize) {
        let chunks = self.records.len().div_ceil(LOG_CHUNK);
        (
            self.records.chunks_shared_with(&other.records).min(chunks),
            chunks,
        )
    }

    /// `append(record)`, for a record the leader sent with the chunk of its
    /// log that starts among them (`chunk_starting_in`): where this log's
    /// prefix is the leader's, the record (and the hash of the log up to it)
    /// is already in the leader's chunk, and this log shares that chunk
    /// instead of writing a copy. What the log holds is the same either way.
    pub fn append_from(&mut self, record: Record, sent: Option<&LogChunk>) -> u64 {
        self.append_with(record, |records, cell| records.push_matching(cell, sent))
    }

    fn producer_mut(&mut self, producer_id: u32) -> &mut ProducerState {
        let producers = &mut cow(self.producers.get_or_insert_with(Rc::default)).states;
        let idx = match producers.iter().position(|p| p.producer_id == producer_id) {
            Some(i) => i,
            None => {
                // Room for exactly this one more (a log usually has one
                // producer; the first push would otherwise reserve four).
                producers.reserve_exact(1);
                producers.push(ProducerState::new(producer_id));
                producers.len() - 1
            }
        };
        &mut producers[idx]
    }

    fn note_batch_start(&mut self, r: Record, offset: u64) {
        let p = self.producer_mut(r.producer_id);
        p.push(BatchMeta {
            first_seq: r.seq,
            last_seq: r.seq,
            base_offset: offset,
        });
    }

    fn note_batch_continue(&mut self, r: Record) {
        let p = self.producer_mut(r.producer_id);
        if let Some(b) = p.last_mut() {
            b.last_seq = r.seq;
        }
    }

    /// The state of `producer_id` as the whole log says (see [`Producers`]).
    pub fn producer_state(&mut self, producer_id: u32) -> Option<&ProducerState> {
        let end = self.log_end_offset();
        let from = self.producers.as_ref().map_or(0, |p| p.upto);
        let mut noted = None;
        for offset in from..end {
            let Some(&(r, _)) = self.records.get(offset as usize) else {
                break;
            };
            if r.producer_id == 0 {
                continue;
            }
            if r.batch_start {
                self.note_batch_start(r, offset);
            } else {
                self.note_batch_continue(r);
            }
            noted = Some(offset + 1);
        }
        if let (Some(upto), Some(p)) = (noted, self.producers.as_mut()) {
            // Noted (so the state is this log's own already): mark how far.
            cow(p).upto = upto;
        }
        self.producers
            .as_ref()?
            .states
            .iter()
            .find(|p| p.producer_id == producer_id)
    }

    /// Remove every record at or above `offset`; returns the records removed.
    /// The HW is clamped to the new LEO and the epoch cache loses entries that
    /// start at or after the truncation point.
    pub fn truncate_to(&mut self, offset: u64) -> Vec<Record> {
        if offset >= self.log_end_offset() {
            return Vec::new();
        }
        let removed = self.records_between(offset, u64::MAX);
        self.records.truncate(offset as usize);
        self.last_epoch = self.records.last().map(|e| e.0.epoch);
        self.last_hash = self.records.last().map_or(0, |e| e.1);
        self.epochs.truncate_from_end(offset);
        self.high_watermark = self.high_watermark.min(offset);
        self.flushed_offset = self.flushed_offset.min(offset);
        self.checkpointed_high_watermark = self.checkpointed_high_watermark.min(offset);
        // Idempotent producer state is rebuilt from the records that are
        // left (so de-duplication survives a failover), on its next read.
        if self.producers.as_ref().is_some_and(|p| p.upto > offset) {
            self.producers = None;
        }
        removed
    }

    /// Power loss: everything not flushed is gone; the HW comes back from its
    /// last checkpoint.
    pub fn lose_unflushed(&mut self) -> Vec<Record> {
        let hw = self.checkpointed_high_watermark;
        let removed = self.truncate_to(self.flushed_offset);
        self.high_watermark = hw.min(self.log_end_offset());
        removed
    }

    /// Whether [`Log::flush`] would change anything (a snapshot's shared copy
    /// is left alone when it would not).
    pub fn needs_flush(&self) -> bool {
        self.flushed_offset != self.log_end_offset()
    }

    pub fn needs_high_watermark_checkpoint(&self) -> bool {
        self.checkpointed_high_watermark != self.high_watermark
    }

    pub fn flush(&mut self) {
        self.flushed_offset = self.log_end_offset();
    }

    pub fn checkpoint_high_watermark(&mut self) {
        self.checkpointed_high_watermark = self.high_watermark;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_with(epochs: &[u32]) -> Log {
        let mut log = Log::default();
        for (i, e) in epochs.iter().enumerate() {
            log.append(Record::plain(i as u64, *e));
        }
        log
    }

    #[test]
    fn epoch_cache_records_the_start_of_each_epoch() {
        let log = log_with(&[0, 0, 1, 1, 3]);
        assert_eq!(log.epochs(), &[(0, 0), (1, 2), (3, 4)]);
    }

    #[test]
    fn end_offset_for_follows_leader_epoch_file_cache_rules() {
        let log = log_with(&[1, 1, 3, 3, 3]);
        // latest epoch: the LEO
        assert_eq!(log.end_offset_for(3), Some((3, 5)));
        // an epoch the log never had: largest epoch below it, start of the next
        assert_eq!(log.end_offset_for(2), Some((1, 2)));
        // older than every epoch: the requested epoch, start of the first epoch
        assert_eq!(log.end_offset_for(0), Some((0, 0)));
        // newer than every epoch: undefined
        assert_eq!(log.end_offset_for(4), None);
    }

    #[test]
    fn truncation_removes_epoch_entries_at_or_after_the_point() {
        let mut log = log_with(&[0, 0, 1, 1]);
        log.high_watermark = 4;
        let removed = log.truncate_to(2);
        assert_eq!(removed.len(), 2);
        assert_eq!(log.epochs(), &[(0, 0)]);
        assert_eq!(log.high_watermark, 2);
    }

    #[test]
    fn equal_prefixes_hash_equal_and_divergent_ones_do_not() {
        let a = log_with(&[0, 0, 1]);
        let mut b = log_with(&[0, 0]);
        b.append(Record::plain(2, 2));
        assert_eq!(a.prefix_hash(2), b.prefix_hash(2));
        assert_ne!(a.prefix_hash(3), b.prefix_hash(3));
    }

    /// The whole log's hash, kept beside it, is the one its records give,
    /// through appends and truncations (a truncated log that appends the
    /// leader's records hashes as the leader's does).
    #[test]
    fn the_whole_logs_hash_follows_appends_and_truncations() {
        let leader = log_with(&[0, 0, 2, 2]);
        let mut follower = log_with(&[0, 0, 1]);
        assert_ne!(follower.prefix_hash(3), leader.prefix_hash(3));
        follower.truncate_to(2);
        assert_eq!(follower.prefix_hash(2), leader.prefix_hash(2));
        for offset in 2..4 {
            let r = leader.record_at(offset).copied();
            follower.append(r.unwrap_or_else(|| Record::plain(offset, 9)));
        }
        for k in 0..=4 {
            assert_eq!(follower.prefix_hash(k), leader.prefix_hash(k), "prefix {k}");
        }
        follower.truncate_to(0);
        assert_eq!(follower.prefix_hash(0), 0);
        follower.append(Record::plain(0, 0));
        assert_eq!(follower.prefix_hash(1), leader.prefix_hash(1));
        assert_eq!(follower.prefix_hash(2), u64::MAX, "past the end");
    }

    #[test]
    fn power_loss_keeps_flushed_records_and_checkpointed_high_watermark() {
        let mut log = log_with(&[0, 0, 0]);
        log.high_watermark = 2;
        log.flush();
        log.checkpoint_high_watermark();
        log.append(Record::plain(9, 0));
        log.high_watermark = 4;
        let lost = log.lose_unflushed();
        assert_eq!(lost.len(), 1);
        assert_eq!(log.log_end_offset(), 3);
        assert_eq!(log.high_watermark, 2);
    }

    /// A leader's idempotent producer state, read lazily (at any point, after
    /// any mix of appends and truncations), is what applying each record at
    /// its append would have made it: the same batches for every producer.
    #[test]
    fn producer_state_read_late_is_what_each_append_would_have_made_it() {
        let mut lazy = Log::default();
        let mut eager = Log::default();
        let mut seq = [0u32; 3];
        for i in 0..400u64 {
            let x = i.wrapping_mul(2_654_435_761) % 97;
            if x % 23 == 0 && lazy.log_end_offset() > 0 {
                let to = lazy.log_end_offset() - 1 - x % lazy.log_end_offset().min(6);
                lazy.truncate_to(to);
                eager.truncate_to(to);
            } else {
                let producer = (x % 3) as u32;
                let start = x % 4 != 0;
                let r = Record {
                    id: i,
                    epoch: 1,
                    producer_id: producer,
                    seq: seq[producer as usize],
                    batch_start: start,
                    timestamp_ms: i,
                };
                seq[producer as usize] += 1;
                lazy.append(r);
                eager.append(r);
                for pid in 1..3 {
                    let _ = eager.producer_state(pid);
                }
            }
            if x % 7 == 0 {
                for pid in 0..3 {
                    let want = eager
                        .producer_state(pid)
                        .map(|p| p.batches().copied().collect::<Vec<_>>());
                    let got = lazy
                        .producer_state(pid)
                        .map(|p| p.batches().copied().collect::<Vec<_>>());
                    assert_eq!(got, want, "producer {pid} after {i} steps");
                }
            }
        }
    }
}
