//! The producer (KAFKA_REPLICATION.md §4): batches per partition, acks,
//! idempotence (producer id + sequence), in-flight limits and retries.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use serde::Serialize;

use super::backoff;
use super::connection::{Broken, Connections, State};
use super::idempotence::{can_retry, is_next_sequence, ProduceError, RetryContext};
use crate::sim::config::{Acks, ProducerConfig};
use crate::sim::io::{Buffers, Ctx, Timer};
use crate::sim::log::Record;
use crate::sim::pmap::{DenseMap, VecMap};
use crate::sim::protocol::*;
use crate::sim::shared::Scratch;
use crate::sim::trace::TraceKind;

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Batch {
    pub records: Vec<u64>,
    /// When each record was sent (its CreateTime), in step with `records`.
    pub sent_ms: Vec<u64>,
    pub acks: Acks,
    pub producer_id: u32,
    /// An idempotent batch gets its sequence numbers when it is first
    /// drained into a request, not when the application sends it
    /// (RecordAccumulator.drainBatchesForOneNode), so a batch that expires
    /// before it ever went out leaves no gap. `None` until then.
    pub first_seq: Option<u32>,
    pub created_ms: u64,
    pub attempts: u32,
    pub retry_at: u64,
    pub request: Option<u64>,
    /// Produced by an explicit step (narrated); steady load is not.
    pub narrate: bool,
    /// The leader epoch it was last sent in: a retry to a leader known to be
    /// newer skips the backoff (KIP-951).
    pub sent_in_epoch: Option<u32>,
    /// Its sequence was rewritten by an epoch bump (ProducerBatch
    /// .sequenceHasBeenReset): an OUT_OF_ORDER_SEQUENCE_NUMBER for it is
    /// retried without another bump.
    pub seq_reset: bool,
}

impl Batch {
    /// A finished batch's vectors, given back for the next ones.
    fn recycle(self, buffers: &mut Buffers) {
        buffers.ids.put(self.records);
        buffers.ids.put(self.sent_ms);
    }
}

/// The bytes one record takes in a batch as the lab models it: a record
/// with no key, no headers and a short value (like `p1-123`, what the
/// real-cluster driver sends) is about 16 bytes in the v2 format
/// (DefaultRecord: attributes, timestamp and offset deltas, key and value
/// lengths, the value, the header count).
pub const RECORD_BYTES: u64 = 16;
/// DefaultRecordBatch.RECORD_BATCH_OVERHEAD: a v2 batch header.
pub const BATCH_OVERHEAD_BYTES: u64 = 61;

/// How many of the lab's records fit a batch of `batch.size` bytes; the
/// first record always fits (Kafka sends an oversized record alone).
pub fn records_per_batch(batch_size: u64) -> usize {
    (batch_size.saturating_sub(BATCH_OVERHEAD_BYTES) / RECORD_BYTES).max(1) as usize
}

#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ProducerPartition {
    pub producer_id: u32,
    pub next_seq: u32,
    /// The sequence right after the last one acknowledged under the current
    /// producer id (TransactionManager's lastAckedSequence + 1; 0 while none
    /// is): the batch starting there is the "next sequence".
    pub acked_seq_end: u32,
    /// The partition's batches while it has any (`queue()`, `in_flight()`).
    /// A partition of a big topic is idle nearly all the time: 20,000
    /// partitions at 10,000 records/s hold a batch for a few milliseconds
    /// every two seconds. So the two lists live in a box only a busy
    /// partition has, and the table a checkpoint copies holds a pointer
    /// where it held both lists (136 → 32 bytes a partition natively; the
    /// table is copied whole by every checkpoint, since steady load touches
    /// every page of it within seconds; issue 27).
    batches: Option<Box<Batches>>,
    pub last_error: Option<ErrorCode>,
    /// The partition asked for an epoch bump (TransactionManager
    /// .requestIdempotentEpochBumpForPartition: a batch failed for good with
    /// retries left, or its sequences stayed unresolved): once nothing sent
    /// under its producer id is outstanding, the producer moves to a new
    /// producer id (the lab's epoch bump, KIP-360) and this partition's
    /// batches are numbered from 0 under it.
    pub bump_pending: bool,
    /// A batch that had been retried expired (Sender.sendProducerData →
    /// markSequenceUnresolved): whether the broker wrote it is unknown. Once
    /// nothing is outstanding, maybeResolveSequences decides: if the last
    /// acknowledged sequence is the one right before the next, later batches
    /// landed and nothing is missing; otherwise the epoch is bumped. New
    /// batches wait meanwhile (shouldStopDrainBatchesForPartition).
    pub unresolved: bool,
    /// Why pump() left this partition out of its scan, if it did (`Parked`).
    parked: Option<Blocked>,
    /// The list of `Parked::on_leader` this partition is on (leader, and
    /// `NotReady` or `InFlightFull`), so it is listed there once.
    listed: Option<(BrokerId, Blocked)>,
}

/// A busy partition's batches: those waiting to be sent, oldest first, and
/// those sent and not answered yet.
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct Batches {
    queue: VecDeque<Batch>,
    in_flight: Vec<Batch>,
}

/// What an idle partition's lists read as.
static NO_BATCHES: Batches = Batches {
    queue: VecDeque::new(),
    in_flight: Vec::new(),
};

impl ProducerPartition {
    /// Batches waiting to be sent, oldest first.
    pub fn queue(&self) -> &VecDeque<Batch> {
        &self.batches.as_deref().unwrap_or(&NO_BATCHES).queue
    }

    /// Batches sent and not answered yet, in the order they went out.
    pub fn in_flight(&self) -> &[Batch] {
        &self.batches.as_deref().unwrap_or(&NO_BATCHES).in_flight
    }

    /// The lists, to change: a partition that had none gets them now.
    fn batches_mut(&mut self) -> &mut Batches {
        self.batches.get_or_insert_with(Box::default)
    }

    fn queue_mut(&mut self) -> &mut VecDeque<Batch> {
        &mut self.batches_mut().queue
    }

    fn in_flight_mut(&mut self) -> &mut Vec<Batch> {
        &mut self.batches_mut().in_flight
    }

    /// Hand the lists to `spare` once both are empty (the partition is idle
    /// again); they keep their room for the next partition that gets busy.
    #[allow(clippy::vec_box)] // the boxes themselves are what is reused
    fn settle(&mut self, spare: &mut Vec<Box<Batches>>) {
        let Some(b) = self
            .batches
            .take_if(|b| b.queue.is_empty() && b.in_flight.is_empty())
        else {
            return;
        };
        if spare.len() < MAX_SPARE_BATCHES {
            spare.push(b);
        }
    }
}

/// How many idle partitions' emptied lists a producer keeps for reuse.
const MAX_SPARE_BATCHES: usize = 256;

/// A partition's first batch gets room for itself alone in its queue (and,
/// where `pump` moves it, in its in-flight list). Either otherwise grows to
/// room for four at its first batch, and keeps it: most partitions of a big
/// topic hold one batch at a time, and on the 20,000-partition bench that
/// room held 18 MB of the producer's 22 MB (issue 27). Later growth doubles
/// as before.
fn room_for_one(queue: &mut VecDeque<Batch>) {
    if queue.capacity() == 0 {
        queue.reserve_exact(1);
    }
}

#[derive(Clone, Debug, Default, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ProducerStats {
    /// Records the application handed to send().
    pub sent: u64,
    pub acked: u64,
    pub failed: u64,
    /// The ids of the records that failed (for the report's `delivery`).
    #[serde(skip)]
    pub failed_ids: Vec<u64>,
    /// The ids of acks=0 records, counted as acknowledged when sent.
    #[serde(skip)]
    pub acks0_ids: Vec<u64>,
    pub retries: u64,
    pub errors: BTreeMap<String, u64>,
    /// The acks its records were sent with, one bit each (0, 1, all): a
    /// produce step may set its own, so it can differ from the config's.
    #[serde(skip)]
    pub acks_sent: u8,
}

/// An acknowledged record, as the producer saw it.
#[derive(Clone, Copy, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Acked {
    pub offset: u64,
    pub id: u64,
    pub acks: Acks,
    /// The producer's index (its place among the scenario's producers).
    pub producer: u32,
    /// When the producer got the acknowledgement (after an unclean election
    /// another record can be acknowledged at the same offset).
    pub at_ms: u64,
}

/// One partition's acknowledged records in order, shared with snapshots in
/// chunks of 16 (`SharedVec`).
pub type AckedLedger = crate::sim::shared::SharedVec<Acked, 16>;

/// Why pump() could do nothing for a partition with batches waiting, in a
/// way that only something outside that partition's scan can change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[cfg_attr(world_snapshot, borsh(use_discriminant = true))]
enum Blocked {
    /// No leader known: pump() asks for metadata, and only an answer helps.
    NoLeader = 0,
    /// The leader's connection is connecting, or backing off before the
    /// next attempt: asking `ready` does nothing until that changes.
    NotReady = 1,
    /// max.in.flight.requests.per.connection batches are out; only an answer
    /// (or a failure) for one of them frees a slot.
    InFlightFull = 2,
}

/// The partitions pump() found blocked (the cost of a mass failover: a
/// producer to 20,000 partitions whose 6,000 leaders are gone would scan
/// them all on every send). A parked partition is out of `queued`; scanning
/// it would change nothing until one of these happens, and each wakes it:
/// - it is touched: a send to it, an answer or failure for it, an expiry,
///   metadata for it (`Producer::wake`);
/// - its leader's connection is where the scan would now end otherwise:
///   parked `NotReady`, the connection is ready or backing off no longer
///   (`ready` would send, or start a connect); parked `InFlightFull`, the
///   connection is not ready (the scan stops at `ready` first). Only the
///   partitions on that leader wake: a connection that is connecting, or
///   still backing off, makes `ready` do nothing. (Until issue 27 any
///   connection's change woke every parked partition: with a rack of 20
///   leaders gone, each reconnect attempt rescanned all 6,667 partitions.)
/// - the oldest batch of a parked partition reaches delivery.timeout.ms
///   (all wake then: pump() expires it in partition order).
///
/// A pending producer-id bump (`bump_pending`) parks too: what it waits for
/// (its in-flight batches answered or expired, its retried batches sent or
/// expired) touches the partition or reaches a deadline first.
///
/// What a parked partition would still have done in the scan is done for it:
/// `NoLeader` asks for metadata, `NotReady` wakes the producer for the next
/// reconnect. So a run with parking sends exactly what one without would
/// (`a_parked_partition_changes_nothing_pump_would_have_done`).
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct Parked {
    /// How many partitions are parked for each reason (`Blocked as usize`);
    /// each parked partition's reason is its `ProducerPartition::parked`.
    count: [usize; 3],
    /// By leader (`broker - 1`): the partitions parked `NotReady` on its
    /// connection, and those parked `InFlightFull` on it. An entry whose
    /// partition has been listed elsewhere since (`ProducerPartition::listed`)
    /// is dropped when its list is read.
    on_leader: Vec<[Vec<PartitionIndex>; 2]>,
    /// The earliest delivery deadline of a parked partition's oldest unsent
    /// batch (`u64::MAX`: none).
    wake_at: u64,
}

/// Which of a leader's two lists in `Parked::on_leader` holds `why`.
fn leader_list(why: Blocked) -> Option<usize> {
    match why {
        Blocked::NotReady => Some(0),
        Blocked::InFlightFull => Some(1),
        Blocked::NoLeader => None,
    }
}

impl Parked {
    fn is_empty(&self) -> bool {
        self.count == [0; 3]
    }

    /// Park partition `p` (`state` is its state): out of `queued`, into the
    /// count, and for `NotReady` and `InFlightFull` onto the list of
    /// `leader`. `expiry` is its oldest unsent batch's delivery deadline.
    #[inline(never)]
    fn park(
        &mut self,
        queued: &mut BTreeSet<PartitionIndex>,
        (p, state): (PartitionIndex, &mut ProducerPartition),
        why: Blocked,
        expiry: Option<u64>,
        leader: Option<BrokerId>,
    ) {
        queued.remove(&p);
        if self.is_empty() {
            self.wake_at = u64::MAX;
        }
        if let Some(old) = state.parked.replace(why) {
            self.count[old as usize] -= 1;
        }
        self.count[why as usize] += 1;
        if let Some(at) = expiry {
            self.wake_at = self.wake_at.min(at);
        }
        let (Some(b), Some(k)) = (leader, leader_list(why)) else {
            return;
        };
        let Some(i) = (b as usize).checked_sub(1) else {
            return;
        };
        if state.listed == Some((b, why)) {
            return;
        }
        state.listed = Some((b, why));
        if self.on_leader.len() <= i {
            self.on_leader.resize_with(i + 1, Default::default);
        }
        self.on_leader[i][k].push(p);
    }
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Producer {
    pub name: String,
    pub index: u32,
    /// Shared by every copy of the world (they never change; 20,000
    /// partitions' indexes, twice, were 320 KB of each checkpoint of the
    /// large bench, issue 27).
    pub topic_partitions: Rc<Vec<PartitionIndex>>,
    /// `topic_partitions` sorted, for membership tests.
    topic_sorted: Rc<Vec<PartitionIndex>>,
    pub config: ProducerConfig,
    pub records_per_sec: u64,
    pub generated: u64,
    pub started_ms: u64,
    /// Leader and leader epoch per partition, as last learned. Changed only
    /// through `learn_leader` (or `set_leader`), which wakes the partition.
    metadata: DenseMap<(Option<BrokerId>, u32)>,
    metadata_request: Option<(u64, BrokerId)>,
    metadata_attempts: u32,
    pub metadata_refresh_due: bool,
    pub partitions: DenseMap<ProducerPartition>,
    requests: VecMap<u64, (BrokerId, Vec<PartitionIndex>)>,
    round_robin: usize,
    pub stats: ProducerStats,
    /// Acknowledged since the world last read them, by partition (the
    /// ledger entry itself does not name its partition: its ledger does).
    pub newly_acked: Vec<(PartitionIndex, Acked)>,
    next_producer_id: u32,
    /// The producer id (and so epoch) every new batch is numbered under:
    /// producer-wide, as TransactionManager's producerIdAndEpoch (0 before
    /// the first idempotent send). A partition still holding batches of an
    /// older one keeps numbering nothing new until they are answered
    /// (shouldStopDrainBatchesForPartition), then starts again from 0
    /// (maybeUpdateProducerIdAndEpoch).
    pid: u32,
    pump_scheduled: bool,
    /// Partitions whose queue may hold batches (a superset, in partition
    /// order), so pump() does not scan every partition the producer knows;
    /// those pump() found blocked are in `parked` instead.
    queued: BTreeSet<PartitionIndex>,
    /// Partitions pump() found blocked and nothing has touched since: pump()
    /// leaves them out of its scan until their block may have lifted.
    parked: Parked,
    /// An emptied buffer for the partitions one pump looks at, reused from
    /// pump to pump (holds no state: a snapshot starts without it).
    pump_candidates: Scratch<Vec<PartitionIndex>>,
    /// Produce requests in flight per broker id (`requests` by
    /// destination), kept as they come and go: leastLoadedNode reads it on
    /// every metadata attempt.
    in_flight_to: Vec<u32>,
    /// Emptied lists of partitions gone idle, for the next to get busy
    /// (`ProducerPartition::settle`; holds no state).
    #[allow(clippy::vec_box)] // the boxes themselves are what is reused
    spare_batches: Scratch<Vec<Box<Batches>>>,
    /// pump()'s requests as it builds them, by leader and acks (emptied
    /// each time; kept for its room).
    pump_requests: Scratch<VecMap<(BrokerId, Acks), Vec<ProduceBatch>>>,
    /// A tick's new record ids by partition (emptied each tick; kept for
    /// its room).
    tick_ids: Scratch<VecMap<PartitionIndex, Vec<u64>>>,
    next_metadata_ms: u64,
    metadata_refreshes: u32,
    /// acks=0 requests recently sent (id → first partition, records), so a
    /// disconnect from the broker can be told apart; only the last few kept.
    acks0_requests: VecMap<u64, (PartitionIndex, u64)>,
    /// When pump() is due to expire the next in-flight batch.
    expiry_wake: Option<u64>,
    /// The connection to each broker (NetworkClient).
    pub connections: Connections,
}

/// How many acks=0 requests a producer remembers for disconnect reports.
const ACKS0_REMEMBERED: usize = 64;

impl Producer {
    /// Whether `timer`, set earlier, can still do anything when it fires: a
    /// request timeout for a request already answered cannot (request ids
    /// are never reused). The cluster drops such timers from its queue.
    pub fn timer_live(&self, timer: &Timer) -> bool {
        match timer {
            Timer::RequestTimeout { id } => {
                self.metadata_request.is_some_and(|m| m.0 == *id) || self.requests.contains_key(id)
            }
            Timer::ConnectionSetupTimeout { broker, id } => {
                self.connections.state(*broker) == Some(State::Connecting { id: *id })
            }
            _ => true,
        }
    }

    pub fn new(
        name: String,
        index: u32,
        topic_partitions: Vec<PartitionIndex>,
        config: ProducerConfig,
        records_per_sec: u64,
        brokers: u32,
    ) -> Self {
        let mut topic_sorted = topic_partitions.clone();
        crate::sim::shared::sort_slim(&mut topic_sorted);
        Producer {
            name,
            index,
            topic_partitions: Rc::new(topic_partitions),
            topic_sorted: Rc::new(topic_sorted),
            records_per_sec,
            generated: 0,
            started_ms: 0,
            metadata: DenseMap::new(),
            metadata_request: None,
            metadata_attempts: 0,
            metadata_refresh_due: true,
            partitions: DenseMap::new(),
            requests: VecMap::new(),
            round_robin: 0,
            stats: ProducerStats::default(),
            newly_acked: Vec::new(),
            next_producer_id: 0,
            pid: 0,
            pump_scheduled: false,
            queued: BTreeSet::new(),
            parked: Parked::default(),
            pump_candidates: Scratch::default(),
            in_flight_to: Vec::new(),
            spare_batches: Scratch::default(),
            pump_requests: Scratch::default(),
            tick_ids: Scratch::default(),
            next_metadata_ms: 0,
            metadata_refreshes: 0,
            acks0_requests: VecMap::new(),
            expiry_wake: None,
            connections: Connections::new(Node::Producer(index), brokers, config.connection),
            config,
        }
    }

    fn new_producer_id(&mut self) -> u32 {
        self.next_producer_id += 1;
        producer_id(self.index, self.next_producer_id)
    }

    fn tick_interval(&self) -> u64 {
        if self.records_per_sec == 0 {
            0
        } else if self.records_per_sec <= 200 {
            (1000 / self.records_per_sec).max(1)
        } else {
            self.config.linger_ms.max(1)
        }
    }

    pub fn start(&mut self, ctx: &mut Ctx) {
        self.started_ms = ctx.now;
        self.refresh_metadata(ctx);
        let t = self.tick_interval();
        if t > 0 {
            ctx.after(t, Timer::ProducerTick);
        }
        ctx.after(self.config.metadata_max_age_ms, Timer::MetadataRefresh);
    }

    /// The application calls send() for `count` records to one partition.
    pub fn send(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        ids: Vec<u64>,
        acks: Acks,
        narrate: bool,
    ) {
        self.stats.acks_sent |= 1 << acks as u8;
        let idempotent = self.config.enable_idempotence && acks == Acks::All;
        // A batch takes its producer id and sequence when it is drained
        // (RecordAccumulator.drain); until then `producer_id` only marks it
        // idempotent, with the producer-wide id of the moment.
        let pid = if idempotent {
            if self.pid == 0 {
                self.pid = self.new_producer_id();
            }
            self.pid
        } else {
            0
        };
        self.stats.sent += ids.len() as u64;
        let room = records_per_batch(self.config.batch_size);
        self.touch(p);
        let state = self.partitions.or_default(p);
        if state.batches.is_none() {
            state.batches = self.spare_batches.0.pop();
        }
        // RecordAccumulator.append: a record goes into the newest batch of
        // its partition while that batch is still open (never drained) and
        // has room; only then is a new batch started. So while nothing can
        // be sent, one batch gathers the records of many seconds, and they
        // all share its creation time, and so its delivery.timeout.ms.
        if let Some(tail) = state.queue_mut().back_mut() {
            let open = tail.attempts == 0 && tail.first_seq.is_none() && tail.request.is_none();
            if open
                && tail.acks == acks
                && (tail.producer_id != 0) == (pid != 0)
                && tail.narrate == narrate
                && tail.records.len() + ids.len() <= room
            {
                tail.sent_ms.extend(std::iter::repeat_n(ctx.now, ids.len()));
                tail.records.extend_from_slice(&ids);
                ctx.buffers.ids.put(ids);
                self.pump(ctx);
                return;
            }
        }
        let mut sent_ms = ctx.buffers.ids.take();
        sent_ms.resize(ids.len(), ctx.now);
        let queue = state.queue_mut();
        room_for_one(queue);
        queue.push_back(Batch {
            sent_ms,
            records: ids,
            acks,
            producer_id: pid,
            first_seq: None,
            created_ms: ctx.now,
            attempts: 0,
            retry_at: ctx.now,
            request: None,
            narrate,
            sent_in_epoch: None,
            seq_reset: false,
        });
        self.pump(ctx);
    }

    fn refresh_metadata(&mut self, ctx: &mut Ctx) {
        if self.metadata_request.is_some() {
            self.metadata_refresh_due = true;
            return;
        }
        if ctx.now < self.next_metadata_ms {
            // Refreshes are rate limited by retry.backoff.ms, growing to
            // retry.backoff.max.ms while nothing changes.
            self.metadata_refresh_due = true;
            if !self.pump_scheduled {
                self.pump_scheduled = true;
                ctx.after(self.next_metadata_ms - ctx.now, Timer::Send);
            }
            return;
        }
        let counts = &self.in_flight_to;
        let metadata = self.metadata_request;
        let in_flight = |b: BrokerId| {
            let produce = counts.get(b as usize).copied().unwrap_or(0);
            produce + u32::from(metadata.is_some_and(|(_, to)| to == b))
        };
        let max = self.config.max_in_flight;
        let Some(node) = self.connections.least_loaded(ctx, &in_flight, max) else {
            // Every connection is down or still connecting: ask again once
            // one is up (Connected wakes pump) or may be tried again.
            self.metadata_refresh_due = true;
            self.wake_for_reconnect(ctx);
            return;
        };
        self.metadata_refreshes += 1;
        self.next_metadata_ms = ctx.now
            + backoff(
                self.config.retry_backoff_ms,
                self.config.retry_backoff_max_ms,
                self.metadata_refreshes,
            );
        self.metadata_refresh_due = false;
        let id = ctx.new_id();
        self.metadata_request = Some((id, node));
        ctx.send(Node::Broker(node), Message::Metadata { id });
        ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
    }

    /// Run pump() when the next connection that is backing off may be tried.
    fn wake_for_reconnect(&mut self, ctx: &mut Ctx) {
        if let Some(at) = self.connections.next_reconnect_at(ctx.now) {
            if !self.pump_scheduled {
                self.pump_scheduled = true;
                ctx.after(at.saturating_sub(ctx.now).max(1), Timer::Send);
            }
        }
    }

    fn metadata_failed(&mut self, ctx: &mut Ctx) {
        self.metadata_request = None;
        self.metadata_attempts += 1;
        self.metadata_refresh_due = true;
        let wait = backoff(
            self.config.retry_backoff_ms,
            self.config.retry_backoff_max_ms,
            self.metadata_attempts,
        );
        ctx.after(wait.max(1), Timer::Send);
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        match timer {
            Timer::ProducerTick => {
                let due = (ctx.now - self.started_ms) * self.records_per_sec / 1000;
                let n = due.saturating_sub(self.generated);
                self.generated += n;
                let parts = self.topic_partitions.len().max(1);
                // Round robin: each partition gets n / parts records, or one
                // more; room for them all up front (no regrowth per tick).
                let each = n.div_ceil(parts as u64) as usize;
                let mut per = std::mem::take(&mut self.tick_ids.0);
                per.reserve(parts.min(n as usize));
                for _ in 0..n {
                    let p = self.topic_partitions[self.round_robin % parts];
                    self.round_robin += 1;
                    let id = ctx.new_id();
                    let ids = &mut ctx.buffers.ids;
                    per.or_insert_with(p, || {
                        let mut v = ids.take();
                        v.reserve(each);
                        v
                    })
                    .push(id);
                }
                let acks = self.config.acks;
                for (p, ids) in per.drain() {
                    self.send(ctx, p, ids, acks, false);
                }
                self.tick_ids.0 = per;
                ctx.after(self.tick_interval(), Timer::ProducerTick);
            }
            Timer::Send => {
                self.pump_scheduled = false;
                self.pump(ctx);
            }
            Timer::MetadataRefresh => {
                self.refresh_metadata(ctx);
                ctx.after(self.config.metadata_max_age_ms, Timer::MetadataRefresh);
            }
            Timer::RequestTimeout { id } => {
                if let Some((_, broker)) = self.metadata_request.filter(|m| m.0 == id) {
                    self.connections.close(ctx.now, broker);
                    self.metadata_failed(ctx);
                } else if let Some(&(broker, _)) = self.requests.get(&id) {
                    // Closed first, so the retry's metadata request goes
                    // elsewhere (leastLoadedNode skips it).
                    self.connections.close(ctx.now, broker);
                    self.fail_request(ctx, id, ErrorCode::RequestTimedOut);
                    self.disconnected(ctx, broker);
                }
            }
            Timer::ConnectionSetupTimeout { broker, id } => self.setup_timed_out(ctx, broker, id),
            _ => {}
        }
    }

    pub fn on_message(&mut self, ctx: &mut Ctx, msg: Message) {
        match msg {
            Message::MetadataResponse { id, partitions, .. } => {
                if self.metadata_request.is_none_or(|m| m.0 != id) {
                    return;
                }
                self.metadata_request = None;
                self.metadata_attempts = 0;
                for pm in partitions {
                    if self.topic_sorted.binary_search(&pm.partition).is_err()
                        && !self.partitions.contains_key(&pm.partition)
                    {
                        continue;
                    }
                    self.learn_leader(ctx, pm.partition, pm.leader, pm.leader_epoch);
                }
                self.pump(ctx);
            }
            Message::ProduceResponse { id, mut partitions } => {
                let Some((to, parts)) = self.requests.remove(&id) else {
                    return;
                };
                self.count_in_flight(to, false);
                for r in partitions.drain(..) {
                    if parts.contains(&r.partition) {
                        self.on_partition_result(ctx, id, r);
                    }
                }
                ctx.buffers.answers.put(partitions);
                ctx.buffers.partitions.put(parts);
                self.pump(ctx);
            }
            Message::Connected { id, broker } => self.connected(ctx, broker, id),
            Message::ConnectionClosed { broker } => {
                // The socket closed under the client: requests on it fail as
                // their notices arrive; the next send reconnects first.
                self.connections.close(ctx.now, broker);
                self.refresh_metadata(ctx);
            }
            Message::Disconnected { id, to } => {
                let Node::Broker(broker) = to else {
                    return;
                };
                if self.connections.on_disconnected(ctx.now, broker, id) == Some(Broken::Refused) {
                    // The connect was refused: nothing was sent, nothing failed.
                    self.connection_failed(ctx);
                    return;
                }
                if self.metadata_request.is_some_and(|m| m.0 == id) {
                    self.metadata_failed(ctx);
                } else if self.requests.contains_key(&id) {
                    self.fail_request(ctx, id, ErrorCode::NetworkException);
                } else if let Some((p, n)) = self.acks0_requests.remove(&id) {
                    // An acks=0 request the broker refused: it closed the
                    // connection. The records were counted as sent and are
                    // gone; the disconnect makes the client ask for metadata.
                    self.trace_error(
                        ctx,
                        p,
                        ErrorCode::NetworkException.name(),
                        false,
                        format!(
                            "{to} closed producer {}'s connection: it refused an acks=0 write of {n} record{} to {} (a broker answers an acks=0 error by disconnecting). The producer had already counted them as sent; they are lost. The disconnect makes it refresh its metadata.",
                            self.name,
                            if n == 1 { "" } else { "s" },
                            ctx.tp(p)
                        ),
                    );
                    *self
                        .stats
                        .errors
                        .entry(ErrorCode::NetworkException.name().to_string())
                        .or_default() += 1;
                    self.refresh_metadata(ctx);
                }
            }
            _ => {}
        }
    }

    /// Apply a leader learned from metadata or a CurrentLeader hint, unless it
    /// is older than what the cache already holds (KIP-320).
    fn learn_leader(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        leader: Option<BrokerId>,
        epoch: u32,
    ) {
        let (metadata, refreshes) = (&mut self.metadata, &mut self.metadata_refreshes);
        let name = &self.name;
        super::learn_leader(
            ctx, metadata, refreshes, "Producer", name, ".", p, leader, epoch,
        );
        // What it knows of `p` may have changed (waking one that did not
        // change only costs a rescan).
        self.wake(p);
    }

    /// The leader and leader epoch the producer knows for `p`.
    pub fn known_leader(&self, p: PartitionIndex) -> Option<(Option<BrokerId>, u32)> {
        self.metadata.get(&p).copied()
    }

    /// Set what the producer knows of `p`'s leader from outside (a test
    /// harness), as `learn_leader` would without its narration.
    pub fn set_leader(&mut self, p: PartitionIndex, entry: (Option<BrokerId>, u32)) {
        self.metadata.insert(p, entry);
        self.wake(p);
    }

    /// `p` changed: if pump() had parked it, it looks at it again.
    #[inline(never)]
    fn wake(&mut self, p: PartitionIndex) {
        if let Some(why) = self.partitions.get_mut(&p).and_then(|s| s.parked.take()) {
            self.parked.count[why as usize] -= 1;
            self.queued.insert(p);
        }
    }

    /// `p` may have batches to send now.
    #[inline(never)]
    fn touch(&mut self, p: PartitionIndex) {
        self.wake(p);
        self.queued.insert(p);
    }

    /// Before a pump: wake the parked partitions whose block may have lifted
    /// (see [`Parked`]).
    fn wake_due(&mut self, now: u64) {
        if self.parked.is_empty() {
            return;
        }
        if now >= self.parked.wake_at {
            self.wake_all();
            return;
        }
        for i in 0..self.parked.on_leader.len() {
            let b = i as BrokerId + 1;
            let lifted = [
                (Blocked::NotReady, self.connections.usable(b, now)),
                (Blocked::InFlightFull, !self.connections.is_ready(b)),
            ];
            for (why, lifted) in lifted {
                let Some(k) = leader_list(why) else {
                    continue;
                };
                if !lifted || self.parked.on_leader[i][k].is_empty() {
                    continue;
                }
                let mut list = std::mem::take(&mut self.parked.on_leader[i][k]);
                for &p in &list {
                    let Some(s) = self.partitions.get_mut(&p) else {
                        continue;
                    };
                    if s.listed != Some((b, why)) {
                        continue; // listed elsewhere since
                    }
                    s.listed = None;
                    if s.parked == Some(why) {
                        self.wake(p);
                    }
                }
                // The buffer back, empty (those still blocked park again).
                list.clear();
                self.parked.on_leader[i][k] = list;
            }
        }
    }

    /// Every parked partition is scanned again.
    fn wake_all(&mut self) {
        let woken: Vec<PartitionIndex> = self
            .partitions
            .iter()
            .filter(|(_, s)| s.parked.is_some())
            .map(|(p, _)| p)
            .collect();
        for p in woken {
            self.wake(p);
        }
        for (_, s) in self.partitions.iter_mut() {
            s.listed = None;
        }
        for lists in &mut self.parked.on_leader {
            lists.iter_mut().for_each(Vec::clear);
        }
    }

    /// NetworkClient: a connect attempt that times out is closed as a
    /// disconnect, which asks for fresh metadata.
    fn setup_timed_out(&mut self, ctx: &mut Ctx, broker: BrokerId, id: u64) {
        if self.connections.on_setup_timeout(ctx.now, broker, id) {
            self.connection_failed(ctx);
        }
    }

    fn connected(&mut self, ctx: &mut Ctx, broker: BrokerId, id: u64) {
        if self.connections.on_connected(broker, id) {
            self.pump(ctx);
        }
    }

    /// A connect attempt was refused or timed out: the client asks for fresh
    /// metadata (handleServerDisconnect) and tries again after the backoff.
    fn connection_failed(&mut self, ctx: &mut Ctx) {
        self.refresh_metadata(ctx);
        self.wake_for_reconnect(ctx);
    }

    /// A request to `broker` timed out, so the client closes that connection
    /// (NetworkClient.handleTimedOutRequests): every other request in flight
    /// on it fails as disconnected, and metadata is asked of another broker
    /// (leastLoadedNode skips a node that is disconnected or backing off).
    fn disconnected(&mut self, ctx: &mut Ctx, broker: BrokerId) {
        let others: Vec<u64> = self
            .requests
            .iter()
            .filter(|(_, (b, _))| *b == broker)
            .map(|(id, _)| *id)
            .collect();
        for id in others {
            self.fail_request(ctx, id, ErrorCode::NetworkException);
        }
        if self.metadata_request.is_some_and(|m| m.1 == broker) {
            self.metadata_failed(ctx);
        }
    }

    /// Keeps `in_flight_to` in step with `requests`.
    fn count_in_flight(&mut self, broker: BrokerId, sent: bool) {
        let i = broker as usize;
        if self.in_flight_to.len() <= i {
            self.in_flight_to.resize(i + 1, 0);
        }
        let n = &mut self.in_flight_to[i];
        *n = if sent { *n + 1 } else { n.saturating_sub(1) };
    }

    fn fail_request(&mut self, ctx: &mut Ctx, id: u64, error: ErrorCode) {
        let Some((to, parts)) = self.requests.remove(&id) else {
            return;
        };
        self.count_in_flight(to, false);
        for p in parts {
            self.on_partition_result(
                ctx,
                id,
                ProducePartitionResponse {
                    partition: p,
                    result: Err(error),
                    current_leader: None,
                },
            );
        }
        self.pump(ctx);
    }

    fn on_partition_result(&mut self, ctx: &mut Ctx, request: u64, r: ProducePartitionResponse) {
        let p = r.partition;
        self.wake(p);
        let idempotent_partition;
        let batch = {
            let Some(state) = self.partitions.get_mut(&p) else {
                return;
            };
            let Some(pos) = state
                .in_flight()
                .iter()
                .position(|b| b.request == Some(request))
            else {
                return;
            };
            idempotent_partition = state.in_flight()[pos].producer_id != 0;
            state.in_flight_mut().remove(pos)
        };
        match r.result {
            Ok(base) => {
                let n = batch.records.len() as u64;
                self.stats.acked += n;
                if let (Some(first), Some(state)) = (batch.first_seq, self.partitions.get_mut(&p)) {
                    if batch.producer_id == state.producer_id {
                        let end = first.wrapping_add(n as u32);
                        // lastAckedSequence only grows (Math.max).
                        if end.wrapping_sub(state.acked_seq_end) as i32 > 0 {
                            state.acked_seq_end = end;
                        }
                    }
                }
                for (i, id) in batch.records.iter().enumerate() {
                    self.newly_acked.push((
                        p,
                        Acked {
                            offset: base + i as u64,
                            id: *id,
                            acks: batch.acks,
                            producer: self.index,
                            at_ms: ctx.now,
                        },
                    ));
                }
                let had_error = self
                    .partitions
                    .get_mut(&p)
                    .and_then(|s| s.last_error.take());
                if batch.narrate || had_error.is_some() {
                    let info = &ctx.partitions[p];
                    let retried = if batch.attempts > 1 {
                        format!(" after {} attempts", batch.attempts)
                    } else {
                        String::new()
                    };
                    ctx.trace(
                        TraceKind::ProduceAcked {
                            producer: self.name.clone(),
                            topic: info.topic.clone(),
                            partition: info.partition,
                            base_offset: base,
                            count: n as u32,
                        },
                        format!(
                            "Producer {} got acks={} for {n} record{} on {} at offsets {base}..{}{retried}.",
                            self.name,
                            batch.acks.as_str(),
                            if n == 1 { "" } else { "s" },
                            ctx.tp(p),
                            base + n - 1
                        ),
                    );
                }
                batch.recycle(ctx.buffers);
            }
            Err(e) => {
                *self.stats.errors.entry(e.name().to_string()).or_default() += 1;
                if let Some((l, ep)) = r.current_leader {
                    self.learn_leader(ctx, p, Some(l), ep);
                }
                if e.invalidates_metadata() {
                    self.refresh_metadata(ctx);
                }
                let expired = ctx.now.saturating_sub(batch.created_ms)
                    >= self.config.delivery_timeout_ms
                    || u64::from(batch.attempts) > self.config.retries;
                // TransactionManager.canRetry, idempotent producer: an
                // OUT_OF_ORDER_SEQUENCE_NUMBER for the batch right after the
                // last acknowledged sequence (not one rewritten by an earlier
                // bump) is a real gap: the broker lost this producer's
                // state, so the epoch is bumped at once (here a new producer
                // id) and the sequences start again from 0. Any other batch
                // is retried as it is, since it may only be waiting for an
                // earlier one.
                // The decision is TransactionManager.canRetry's, as
                // client::idempotence models it and Kafka 4.4.0's own class
                // checks it (tests/oracle/transaction_manager.jsonl).
                let bump_now = e == ErrorCode::OutOfOrderSequenceNumber
                    && batch.first_seq.is_some_and(|base_sequence| {
                        self.partitions.get(&p).is_some_and(|s| {
                            let context = RetryContext {
                                log_start_offset: None,
                                sequence_has_been_reset: batch.seq_reset,
                                base_sequence,
                                last_acked_sequence: s.acked_seq_end.checked_sub(1),
                                last_acked_offset: None,
                                unresolved: None,
                            };
                            can_retry(ProduceError::OutOfOrderSequenceNumber, &context).bump_epoch
                        })
                    });
                let retries_left = u64::from(batch.attempts) < self.config.retries;
                let mut batches = vec![batch];
                if idempotent_partition {
                    // Keep order: every later in-flight batch goes back too.
                    if let Some(state) = self.partitions.get_mut(&p) {
                        batches.append(state.in_flight_mut());
                    }
                    // By first sequence, ties in their order: an insertion
                    // sort (stable; a partition has at most
                    // max.in.flight.requests.per.connection batches out).
                    for i in 1..batches.len() {
                        let mut j = i;
                        while j > 0 && batches[j - 1].first_seq > batches[j].first_seq {
                            batches.swap(j - 1, j);
                            j -= 1;
                        }
                    }
                }
                let first_error = self
                    .partitions
                    .get(&p)
                    .is_none_or(|s| s.last_error != Some(e));
                if let Some(state) = self.partitions.get_mut(&p) {
                    state.last_error = Some(e);
                }
                if expired {
                    // TransactionManager.handleFailedBatch: a batch that
                    // fails for good on a sequence error, or with retries
                    // left (the Sender's adjustSequenceNumbers, attempts <
                    // retries: a delivery.timeout.ms expiry answered with any
                    // error), asks for an epoch bump for its partition. The
                    // lab bumps once what was sent under it is answered.
                    if idempotent_partition
                        && (e == ErrorCode::OutOfOrderSequenceNumber || retries_left)
                    {
                        if let Some(state) = self.partitions.get_mut(&p) {
                            state.bump_pending = true;
                        }
                    }
                    let failed = batches.remove(0);
                    self.stats.failed += failed.records.len() as u64;
                    self.stats.failed_ids.extend_from_slice(&failed.records);
                    // The error that came back is what is counted (above);
                    // the report still lists DELIVERY_TIMEOUT, at 0 if no
                    // batch expired unsent or in flight.
                    self.stats
                        .errors
                        .entry("DELIVERY_TIMEOUT".to_string())
                        .or_default();
                    self.trace_error(
                        ctx,
                        p,
                        e.name(),
                        false,
                        format!(
                            "Producer {} gave up on {} record{} for {}: {e}, and delivery.timeout.ms={} has passed. The application's send() fails.",
                            self.name,
                            failed.records.len(),
                            if failed.records.len() == 1 { "" } else { "s" },
                            ctx.tp(p),
                            self.config.delivery_timeout_ms
                        ),
                    );
                } else if first_error {
                    let why = match e {
                        ErrorCode::NotLeaderOrFollower => " — the broker it asked is no longer the leader; it refreshes its metadata",
                        ErrorCode::FencedLeaderEpoch => " — its leader epoch is stale; it refreshes its metadata",
                        ErrorCode::NotEnoughReplicas => " — the ISR is smaller than min.insync.replicas, nothing was written",
                        ErrorCode::NotEnoughReplicasAfterAppend => " — written, but the ISR shrank below min.insync.replicas before it was replicated",
                        ErrorCode::RequestTimedOut => " — no answer within request.timeout.ms",
                        ErrorCode::NetworkException => " — the connection to the broker broke",
                        ErrorCode::OutOfOrderSequenceNumber if bump_now => " — a real gap after its last acknowledged batch: it bumps its epoch (a new producer id) and numbers its batches from 0",
                        ErrorCode::OutOfOrderSequenceNumber => " — an earlier batch may still be on its way",
                        _ => "",
                    };
                    self.trace_error(
                        ctx,
                        p,
                        e.name(),
                        true,
                        format!(
                            "Producer {} got {e} for {}{why}; it will retry.",
                            self.name,
                            ctx.tp(p)
                        ),
                    );
                }
                let new_pid = if bump_now && !expired {
                    // Producer-wide: every partition moves to it
                    // (bumpIdempotentProducerEpoch); this one rewrites its
                    // sequences now, the others when their batches of the
                    // old one are answered.
                    self.pid = self.new_producer_id();
                    Some(self.pid)
                } else {
                    None
                };
                let wait = backoff(
                    self.config.retry_backoff_ms,
                    self.config.retry_backoff_max_ms,
                    batches.first().map_or(1, |b| b.attempts),
                );
                if let Some(state) = self.partitions.get_mut(&p) {
                    for mut b in batches.into_iter().rev() {
                        self.stats.retries += b.records.len() as u64;
                        b.request = None;
                        b.retry_at = ctx.now + wait;
                        let queue = state.queue_mut();
                        room_for_one(queue);
                        queue.push_front(b);
                        self.queued.insert(p);
                    }
                    if let Some(pid) = new_pid {
                        // The log lost this producer's state (truncation): start
                        // a new producer id and renumber what is still pending
                        // (TransactionManager.bumpIdempotentProducerEpoch; its
                        // sequence is resolved by the bump).
                        state.producer_id = pid;
                        state.next_seq = renumber(state.queue_mut(), pid);
                        state.acked_seq_end = 0;
                        state.bump_pending = false;
                        state.unresolved = false;
                    }
                }
                if !self.pump_scheduled {
                    self.pump_scheduled = true;
                    ctx.after(wait.max(1), Timer::Send);
                }
            }
        }
        // Answered, or failed for good, the partition may be idle now: its
        // lists go to the spares. Last, so a batch going back to its queue
        // for a retry keeps the lists it was in.
        if let Some(state) = self.partitions.get_mut(&p) {
            state.settle(&mut self.spare_batches.0);
        }
    }

    /// Send what can be sent: per partition, the oldest ready batches, up to
    /// max.in.flight, grouped into one Produce per (leader, acks).
    pub fn pump(&mut self, ctx: &mut Ctx) {
        // Expire batches that never got out within delivery.timeout.ms.
        let timeout = self.config.delivery_timeout_ms;
        let mut requests = std::mem::take(&mut self.pump_requests.0);
        let mut need_metadata = false;
        let mut next_wake: Option<u64> = None;
        self.expire_in_flight(ctx);
        self.wake_due(ctx.now);
        let mut first_expiry: Option<u64> = None;
        let mut candidates = std::mem::take(&mut self.pump_candidates.0);
        candidates.clear();
        candidates.extend(self.queued.iter().copied());
        let mut not_ready = false;
        for p in &candidates {
            // NetworkClient.ready: nothing is drained for a leader whose
            // connection is not up (the check may start a connect).
            let ready = match self.metadata.get(p).copied() {
                Some((Some(leader), _)) => self.connections.ready(ctx, leader),
                _ => false,
            };
            let Some(state) = self.partitions.get_mut(p) else {
                self.queued.remove(p);
                continue;
            };
            while let Some(b) = state.queue().front() {
                if ctx.now.saturating_sub(b.created_ms) >= timeout && b.request.is_none() {
                    let b = state.queue_mut().pop_front();
                    if let Some(b) = b {
                        // Sender.sendProducerData: an expired batch that had
                        // been sent (it is in retry) leaves its sequence
                        // unresolved (markSequenceUnresolved), resolved below
                        // once nothing is outstanding.
                        if b.first_seq.is_some() && b.producer_id != 0 {
                            state.unresolved = true;
                        }
                        self.stats.failed += b.records.len() as u64;
                        self.stats.failed_ids.extend_from_slice(&b.records);
                        *self
                            .stats
                            .errors
                            .entry("DELIVERY_TIMEOUT".to_string())
                            .or_default() += 1;
                    }
                } else {
                    break;
                }
            }
            if state.queue().is_empty() {
                state.settle(&mut self.spare_batches.0);
                self.queued.remove(p);
                continue;
            }
            // TransactionManager bumps the epoch only once every batch sent
            // under the old one is resolved: none in flight, and none waiting
            // to be retried with its old sequence (RecordAccumulator keeps
            // draining those, under the old epoch, so the broker still
            // recognises a copy it already has). New batches wait.
            let unresolved = |s: &ProducerPartition| {
                !s.in_flight().is_empty()
                    || s.queue()
                        .iter()
                        .any(|b| b.first_seq.is_some() && b.producer_id == s.producer_id)
            };
            // TransactionManager.maybeResolveSequences: with nothing
            // outstanding, an unresolved sequence is settled if the last
            // acknowledged one is right before the next (later batches
            // landed: the broker has no gap), else the epoch is bumped.
            if state.unresolved && !unresolved(state) {
                state.unresolved = false;
                let settled = is_next_sequence(state.acked_seq_end.checked_sub(1), state.next_seq);
                if !settled {
                    state.bump_pending = true;
                }
            }
            if state.bump_pending && !unresolved(state) {
                state.bump_pending = false;
                // A partition still under an older id only needs the
                // current one: it starts again from 0 under it.
                if state.producer_id == self.pid {
                    self.next_producer_id += 1;
                    self.pid = producer_id(self.index, self.next_producer_id);
                }
                let pid = self.pid;
                state.producer_id = pid;
                state.next_seq = renumber(state.queue_mut(), pid);
                state.acked_seq_end = 0;
            }
            // Parked below: the oldest batch's deadline, when pump() would
            // expire it (and only a fresh scan may, in partition order).
            let expiry = state
                .queue()
                .front()
                .filter(|b| b.request.is_none())
                .map(|b| b.created_ms.saturating_add(timeout));
            let Some((Some(leader), epoch)) = self.metadata.get(p).copied() else {
                need_metadata = true;
                let slot = (*p, &mut *state);
                self.parked
                    .park(&mut self.queued, slot, Blocked::NoLeader, expiry, None);
                continue;
            };
            if !ready {
                // `ready` has acted if it could (a connect): asking again
                // does nothing until the connection changes.
                not_ready = true;
                let slot = (*p, &mut *state);
                let why = Blocked::NotReady;
                self.parked
                    .park(&mut self.queued, slot, why, expiry, Some(leader));
                continue;
            }
            // One batch per partition per request, up to max.in.flight.
            if state.in_flight().len() < self.config.max_in_flight as usize {
                let Some(front) = state.queue().front() else {
                    continue;
                };
                // shouldStopDrainBatchesForPartition: no new batch while the
                // partition's sequences wait for a bump or are unresolved,
                // nor while batches of an older producer id are outstanding;
                // after those, new batches start from 0 under the current id
                // (maybeUpdateProducerIdAndEpoch).
                let fresh = front.producer_id != 0 && front.first_seq.is_none();
                let (leader_changed, retry_at) = (
                    front.sent_in_epoch.is_some_and(|e| epoch > e),
                    front.retry_at,
                );
                if fresh {
                    if state.bump_pending || state.unresolved {
                        continue;
                    }
                    if state.producer_id != self.pid {
                        if unresolved(state) {
                            continue;
                        }
                        state.producer_id = self.pid;
                        state.next_seq = 0;
                        state.acked_seq_end = 0;
                    }
                }
                // KIP-951 (RecordAccumulator.shouldBackoff): a retry to a
                // leader newer than the one it last went to goes at once.
                if retry_at > ctx.now && !leader_changed {
                    next_wake = Some(next_wake.map_or(retry_at, |w: u64| w.min(retry_at)));
                    continue;
                }
                let Some(mut b) = state.queue_mut().pop_front() else {
                    continue;
                };
                if b.producer_id != 0 && b.first_seq.is_none() {
                    b.producer_id = state.producer_id;
                    b.first_seq = Some(state.next_seq);
                    state.next_seq = state.next_seq.wrapping_add(b.records.len() as u32);
                }
                b.attempts += 1;
                b.sent_in_epoch = Some(epoch);
                if b.acks != Acks::None {
                    let at = b.created_ms.saturating_add(timeout);
                    first_expiry = Some(first_expiry.map_or(at, |f| f.min(at)));
                }
                let mut records = ctx.buffers.records.take();
                records.extend(b.records.iter().enumerate().map(|(i, id)| Record {
                    id: *id,
                    epoch: 0,
                    producer_id: b.producer_id,
                    seq: b.first_seq.unwrap_or(0).wrapping_add(i as u32),
                    batch_start: i == 0,
                    timestamp_ms: b.sent_ms.get(i).copied().unwrap_or(b.created_ms),
                }));
                let batches = &mut ctx.buffers.batches;
                requests
                    .or_insert_with((leader, b.acks), || batches.take())
                    .push(ProduceBatch {
                        partition: *p,
                        records,
                    });
                // Room for one, as the queue's (`room_for_one`).
                let in_flight = state.in_flight_mut();
                if in_flight.capacity() == 0 {
                    in_flight.reserve_exact(1);
                }
                in_flight.push(b);
            } else {
                let slot = (*p, &mut *state);
                let why = Blocked::InFlightFull;
                self.parked
                    .park(&mut self.queued, slot, why, expiry, Some(leader));
            }
        }
        self.pump_candidates.0 = candidates;
        // What the parked partitions would have asked for in the scan.
        need_metadata |= self.parked.count[Blocked::NoLeader as usize] > 0;
        not_ready |= self.parked.count[Blocked::NotReady as usize] > 0;
        for ((leader, acks), batches) in requests.drain() {
            let id = ctx.new_id();
            let mut parts = ctx.buffers.partitions.take();
            parts.extend(batches.iter().map(|b| b.partition));
            for p in &parts {
                if let Some(state) = self.partitions.get_mut(p) {
                    if let Some(b) = state.in_flight_mut().last_mut() {
                        b.request = Some(id);
                    }
                }
            }
            if acks != Acks::None {
                self.requests.insert(id, (leader, parts));
                self.count_in_flight(leader, true);
                ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
            } else {
                // acks=0: fire and forget, counted as acknowledged at send time.
                let mut sent = 0;
                for p in &parts {
                    if let Some(state) = self.partitions.get_mut(p) {
                        if let Some(b) = state.in_flight_mut().pop() {
                            sent += b.records.len() as u64;
                            self.stats.acks0_ids.extend_from_slice(&b.records);
                            b.recycle(ctx.buffers);
                        }
                        state.settle(&mut self.spare_batches.0);
                    }
                }
                self.stats.acked += sent;
                if let Some(first) = parts.first() {
                    if self.acks0_requests.len() >= ACKS0_REMEMBERED {
                        let oldest = self.acks0_requests.iter().next().map(|(k, _)| *k);
                        if let Some(oldest) = oldest {
                            self.acks0_requests.remove(&oldest);
                        }
                    }
                    self.acks0_requests.insert(id, (*first, sent));
                }
                ctx.buffers.partitions.put(parts);
            }
            ctx.send(
                Node::Broker(leader),
                Message::Produce {
                    id,
                    acks,
                    timeout_ms: self.config.request_timeout_ms,
                    batches,
                },
            );
        }
        self.pump_requests.0 = requests;
        if let Some(first) = first_expiry {
            self.wake_for_expiry(ctx, first);
        }
        if need_metadata || self.metadata_refresh_due {
            self.refresh_metadata(ctx);
        }
        if let Some(w) = next_wake {
            if !self.pump_scheduled {
                self.pump_scheduled = true;
                ctx.after((w - ctx.now).max(1), Timer::Send);
            }
        }
        if not_ready {
            self.wake_for_reconnect(ctx);
        }
    }

    /// Sender.getExpiredInflightBatches: a batch still waiting for its answer
    /// when delivery.timeout.ms has passed since it was created fails now;
    /// a late answer is ignored. Then wake up for the next such deadline.
    fn expire_in_flight(&mut self, ctx: &mut Ctx) {
        if self.expiry_wake.is_none_or(|w| ctx.now < w) {
            return;
        }
        let timeout = self.config.delivery_timeout_ms;
        let mut next: Option<u64> = None;
        let mut expired: Vec<(PartitionIndex, Batch)> = Vec::new();
        for (p, state) in self.partitions.iter_mut() {
            let mut i = 0;
            while i < state.in_flight().len() {
                let b = &state.in_flight()[i];
                let deadline = b.created_ms.saturating_add(timeout);
                if b.request.is_some() && ctx.now >= deadline {
                    let b = state.in_flight_mut().remove(i);
                    // Unresolved only if it was being retried (inRetry): a
                    // first attempt's sequence is simply skipped, and a gap
                    // shows as OUT_OF_ORDER_SEQUENCE_NUMBER on the next batch.
                    if b.producer_id != 0 && b.attempts > 1 {
                        state.unresolved = true;
                    }
                    expired.push((p, b));
                } else {
                    if b.request.is_some() {
                        next = Some(next.map_or(deadline, |n: u64| n.min(deadline)));
                    }
                    i += 1;
                }
            }
        }
        // Each partition a batch expired from is touched below, so the scan
        // that follows settles it.
        for (p, b) in expired {
            let n = b.records.len() as u64;
            self.stats.failed += n;
            self.stats.failed_ids.extend_from_slice(&b.records);
            *self
                .stats
                .errors
                .entry("DELIVERY_TIMEOUT".to_string())
                .or_default() += 1;
            self.touch(p);
            self.trace_error(
                ctx,
                p,
                "DELIVERY_TIMEOUT",
                false,
                format!(
                    "Producer {} gave up on {n} record{} for {} still in flight: delivery.timeout.ms={} has passed since the batch was created. The application's send() fails with a TimeoutException, though the broker may still write them; a late answer is ignored.",
                    self.name,
                    if n == 1 { "" } else { "s" },
                    ctx.tp(p),
                    timeout
                ),
            );
        }
        self.expiry_wake = None;
        if let Some(at) = next {
            self.wake_for_expiry(ctx, at);
        }
    }

    /// Make sure pump() runs at `deadline`, when an in-flight batch expires.
    fn wake_for_expiry(&mut self, ctx: &mut Ctx, deadline: u64) {
        if self.expiry_wake.is_none_or(|w| deadline < w) {
            self.expiry_wake = Some(deadline);
            ctx.after(deadline.saturating_sub(ctx.now).max(1), Timer::Send);
        }
    }

    /// A ProduceError trace event for partition `p`, with its narration.
    fn trace_error(
        &self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        error: &str,
        retrying: bool,
        text: String,
    ) {
        let info = &ctx.partitions[p];
        ctx.trace(
            TraceKind::ProduceError {
                producer: self.name.clone(),
                topic: info.topic.clone(),
                partition: info.partition,
                error: error.to_string(),
                retrying,
            },
            text,
        );
    }

    pub fn in_flight_records(&self) -> u64 {
        self.partitions
            .values()
            .map(|s| {
                s.in_flight()
                    .iter()
                    .map(|b| b.records.len() as u64)
                    .sum::<u64>()
            })
            .sum()
    }

    /// The ids of every record not yet answered: queued or in flight.
    pub fn pending_ids(&self) -> Vec<u64> {
        self.partitions
            .values()
            .flat_map(|s| {
                s.queue()
                    .iter()
                    .chain(s.in_flight())
                    .flat_map(|b| b.records.iter().copied())
            })
            .collect()
    }

    pub fn queued_records(&self) -> u64 {
        self.partitions
            .values()
            .map(|s| {
                s.queue()
                    .iter()
                    .map(|b| b.records.len() as u64)
                    .sum::<u64>()
            })
            .sum()
    }
}

/// The `n`th producer id of producer `index`: unique across producers (the
/// index in the high digits) and never 0, which marks a batch that is not
/// idempotent.
fn producer_id(index: u32, n: u32) -> u32 {
    (index + 1) * 100_000 + n
}

/// After a producer epoch bump (here a new producer id): the batches that
/// already had sequence numbers get new ones from 0, in order; the others get
/// theirs when drained. Returns the next sequence.
fn renumber(queue: &mut VecDeque<Batch>, pid: u32) -> u32 {
    let mut seq = 0u32;
    for b in queue.iter_mut().filter(|b| b.producer_id != 0) {
        b.producer_id = pid;
        if b.first_seq.is_some() {
            b.first_seq = Some(seq);
            b.seq_reset = true;
            seq = seq.wrapping_add(b.records.len() as u32);
        }
    }
    seq
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::ConfigMap;
    use crate::sim::io::TestWorld;
    use crate::sim::PartitionInfo;

    /// A producer of partition 0 of the test world that knows broker 1 as its
    /// leader in epoch 4, with Kafka's defaults and the settings given.
    fn producer(settings: &[(&str, serde_json::Value)]) -> Producer {
        let map: ConfigMap = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let config = match ProducerConfig::parse(&map, "producer", None) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let mut p = Producer::new("p".to_string(), 0, vec![0], config, 0, 3);
        p.set_leader(0, (Some(1), 4));
        p.metadata_refresh_due = false;
        p
    }

    impl Producer {
        /// No leader known for `p`.
        fn forget_leader(&mut self, p: PartitionIndex) {
            self.metadata.remove(&p);
            self.wake(p);
        }

        /// No leader known for any partition.
        fn forget_leaders(&mut self) {
            self.metadata = DenseMap::new();
            self.wake_all();
        }
    }

    /// What a handler sent, and the timers it set.
    type Effects = (Vec<(Node, Message)>, Vec<(u64, Timer)>);

    /// Run `f` at `now` and return what it sent and the timers it set.
    fn sent_and_timers(world: &mut TestWorld, now: u64, f: impl FnOnce(&mut Ctx)) -> Effects {
        world.at(now, |ctx| {
            f(ctx);
            (
                std::mem::take(&mut ctx.sends),
                std::mem::take(&mut ctx.timers),
            )
        })
    }

    /// Run `f` at `now` and return what it sent.
    fn sent(world: &mut TestWorld, now: u64, f: impl FnOnce(&mut Ctx)) -> Vec<(Node, Message)> {
        sent_and_timers(world, now, f).0
    }

    /// Partition 1 of topic `t` in the world, and in `p`'s topic.
    fn second_partition(world: &mut TestWorld, p: &mut Producer) {
        world.partitions.push(PartitionInfo {
            partition: 1,
            ..world.partitions[0].clone()
        });
        p.topic_partitions = Rc::new(vec![0, 1]);
        p.topic_sorted = Rc::new(vec![0, 1]);
    }

    /// The ids of the Produce requests among `sends`.
    fn produce_ids(sends: &[(Node, Message)]) -> Vec<u64> {
        sends
            .iter()
            .filter_map(|(_, m)| match m {
                Message::Produce { id, .. } => Some(*id),
                _ => None,
            })
            .collect()
    }

    fn answer(id: u64, result: Result<u64, ErrorCode>) -> Message {
        Message::ProduceResponse {
            id,
            partitions: vec![ProducePartitionResponse {
                partition: 0,
                result,
                current_leader: None,
            }],
        }
    }

    /// Memory, not a Kafka rule (issue 27): a partition's first batch gets
    /// room for one batch in its queue and in its in-flight list, not the
    /// four a first push makes room for (18 MB of 22 on the large bench).
    #[test]
    fn a_partitions_first_batch_gets_room_for_one_batch() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let sends = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![11], Acks::All, false)
        });
        assert_eq!(produce_ids(&sends).len(), 1, "sent: {sends:?}");
        let Some(state) = p.partitions.get(&0) else {
            panic!("no state for partition 0")
        };
        assert_eq!(state.in_flight().len(), 1);
        let Some(batches) = &state.batches else {
            panic!("a busy partition without its lists")
        };
        assert_eq!(batches.in_flight.capacity(), 1);
        assert_eq!(batches.queue.capacity(), 1);
    }

    /// Memory, not a Kafka rule (issue 27): a partition whose last batch is
    /// answered, or fails for good, holds no batch lists (a checkpoint
    /// copies every partition's entry); the emptied lists wait, with their
    /// room, for the next partition to get busy. A retried batch keeps them.
    #[test]
    fn an_idle_partition_holds_no_batch_lists_and_the_next_busy_one_reuses_them() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("retries", serde_json::json!(1))]);
        fn lists(p: &Producer) -> Option<&Batches> {
            p.partitions.get(&0).and_then(|s| s.batches.as_deref())
        }
        // Each answer comes after another scan of the queues, which finds
        // the partition's queue empty (its batch is in flight) and stops
        // looking at it: the answer itself must free the lists.
        let out = sent(&mut world, 0, |ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false)
        });
        let [id] = produce_ids(&out)[..] else {
            panic!("one Produce: {out:?}")
        };
        world.at(1, |ctx| retry(&mut p, ctx));
        world.at(5, |ctx| p.on_message(ctx, answer(id, Ok(42))));
        assert!(lists(&p).is_none(), "answered, still holds {:?}", lists(&p));
        assert_eq!(p.spare_batches.0.len(), 1);
        let kept: *const Batches = &*p.spare_batches.0[0];
        // The next batch takes the emptied lists, room and all.
        let out = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![2], Acks::All, false)
        });
        let [next] = produce_ids(&out)[..] else {
            panic!("one Produce: {out:?}")
        };
        assert!(next > id);
        assert!(p.spare_batches.0.is_empty());
        assert!(lists(&p).is_some_and(|b| std::ptr::eq(b, kept)));
        world.at(101, |ctx| retry(&mut p, ctx));
        // A failure that will be retried keeps them; one past its retries
        // frees them.
        let err = Err(ErrorCode::NotEnoughReplicas);
        world.at(105, |ctx| p.on_message(ctx, answer(next, err)));
        assert_eq!(lists(&p).map(|b| b.queue.len()), Some(1), "retried");
        assert!(
            lists(&p).is_some_and(|b| std::ptr::eq(b, kept)),
            "the same lists"
        );
        assert!(p.spare_batches.0.is_empty());
        answer_next(&mut world, &mut p, 1_000, err, retry);
        assert_eq!((p.stats.failed, p.stats.acked), (1, 1));
        assert!(lists(&p).is_none(), "failed, still holds {:?}", lists(&p));
        // acks=0: counted as acknowledged once sent.
        let out = sent(&mut world, 2_000, |ctx| {
            p.send(ctx, 0, vec![3], Acks::None, false)
        });
        assert_eq!(produce_ids(&out).len(), 1);
        assert!(lists(&p).is_none(), "acks=0, still holds {:?}", lists(&p));
        // Sent and never answered: it expires at delivery.timeout.ms.
        let out = sent(&mut world, 3_000, |ctx| {
            p.send(ctx, 0, vec![4], Acks::All, false)
        });
        assert_eq!(produce_ids(&out).len(), 1);
        world.at(3_001, |ctx| retry(&mut p, ctx));
        let deadline = 3_000 + p.config.delivery_timeout_ms;
        world.at(deadline, |ctx| retry(&mut p, ctx));
        assert_eq!((p.stats.failed, p.stats.acked), (2, 2));
        assert!(lists(&p).is_none(), "expired, still holds {:?}", lists(&p));
        assert_eq!(p.pending_ids(), Vec::<u64>::new());
    }

    /// A timer that can no longer do anything is dropped from the cluster's
    /// queue (request ids are never reused): a request timeout lives while
    /// its request (Produce or Metadata) awaits an answer, a connection setup
    /// timeout while that very attempt is connecting; other timers always.
    #[test]
    fn a_request_timeout_lives_only_while_its_request_awaits_an_answer() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let sends = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![11], Acks::All, false)
        });
        let [id] = produce_ids(&sends)[..] else {
            panic!("one Produce: {sends:?}")
        };
        assert!(p.timer_live(&Timer::RequestTimeout { id }));
        assert!(!p.timer_live(&Timer::RequestTimeout { id: id + 1 }));
        world.at(105, |ctx| p.on_message(ctx, answer(id, Ok(0))));
        assert_eq!(p.stats.acked, 1);
        assert!(!p.timer_live(&Timer::RequestTimeout { id }));

        world.at(200, |ctx| p.refresh_metadata(ctx));
        let Some((meta, _)) = p.metadata_request else {
            panic!("a metadata request")
        };
        assert!(p.timer_live(&Timer::RequestTimeout { id: meta }));
        assert!(!p.timer_live(&Timer::RequestTimeout { id: meta + 1 }));

        p.connections = Connections::new(Node::Producer(0), 3, p.config.connection).none_yet();
        assert!(!world.at(300, |ctx| p.connections.ready(ctx, 2)));
        let Some(State::Connecting { id: attempt }) = p.connections.state(2) else {
            panic!("connecting to broker 2")
        };
        let setup = |broker, id| Timer::ConnectionSetupTimeout { broker, id };
        assert!(p.timer_live(&setup(2, attempt)));
        assert!(!p.timer_live(&setup(2, attempt + 1)));
        assert!(!p.timer_live(&setup(3, attempt)), "broker 3: no attempt");
        assert!(p.timer_live(&Timer::Send));
        assert!(p.timer_live(&Timer::MetadataRefresh));
    }

    /// InitProducerId hands out producer ids unique in the cluster: two
    /// producers, each bumping its epoch (here a new id) a few times, never
    /// share one, and none is 0 (which the lab keeps for "not idempotent").
    #[test]
    fn producer_ids_are_unique_across_producers_and_never_zero() {
        let mut ids = Vec::new();
        for index in 0..3 {
            let mut p = producer(&[]);
            p.index = index;
            for _ in 0..4 {
                ids.push(p.new_producer_id());
            }
        }
        assert!(!ids.contains(&0), "{ids:?}");
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
    }

    /// The producer remembers every acks its records went out with (a
    /// produce step may set its own, so one producer can send with two).
    #[test]
    fn each_acks_a_producer_sent_with_is_remembered_once() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        assert_eq!(p.stats.acks_sent, 0);
        world.at(100, |ctx| p.send(ctx, 0, vec![1], Acks::All, false));
        assert_eq!(p.stats.acks_sent, 0b100);
        world.at(101, |ctx| p.send(ctx, 0, vec![2], Acks::Leader, false));
        world.at(102, |ctx| p.send(ctx, 0, vec![3], Acks::Leader, false));
        assert_eq!(p.stats.acks_sent, 0b110);
        world.at(103, |ctx| p.send(ctx, 0, vec![4], Acks::None, false));
        assert_eq!(p.stats.acks_sent, 0b111);
    }

    /// Steady load: a producer of r records per second (r ≤ 200) sends one
    /// every 1000 / r ms; a faster one gathers its records for linger.ms; one
    /// with no steady load (only the scenario's produce steps) never ticks.
    #[test]
    fn a_producer_ticks_once_per_record_up_to_200_per_second_then_once_per_linger_ms() {
        let first_tick = |rps: u64, linger: u64| {
            let mut world = TestWorld::one_partition();
            let mut p = producer(&[("linger.ms", serde_json::json!(linger))]);
            p.records_per_sec = rps;
            world.at(1_000, |ctx| {
                p.start(ctx);
                ctx.timers
                    .iter()
                    .find(|(_, t)| matches!(t, Timer::ProducerTick))
                    .map(|(at, _)| *at)
            })
        };
        assert_eq!(first_tick(0, 5), None, "no steady load: no tick");
        assert_eq!(first_tick(1, 5), Some(2_000));
        assert_eq!(first_tick(10, 5), Some(1_100));
        assert_eq!(
            first_tick(200, 20),
            Some(1_005),
            "1000 / 200, not linger.ms"
        );
        assert_eq!(first_tick(201, 5), Some(1_005), "linger.ms, not 1000 / 201");
        assert_eq!(first_tick(5_000, 20), Some(1_020));
        assert_eq!(first_tick(5_000, 0), Some(1_001), "at least 1 ms");
        assert_eq!(first_tick(2_000, 5), Some(1_005));
    }

    /// The Metadata requests `sends` holds: (broker, request id).
    fn metadata_requests(sends: &[(Node, Message)]) -> Vec<(Node, u64)> {
        sends
            .iter()
            .filter_map(|(to, m)| match m {
                Message::Metadata { id } => Some((*to, *id)),
                _ => None,
            })
            .collect()
    }

    /// Metadata refreshes are rate limited by retry.backoff.ms, doubling up
    /// to retry.backoff.max.ms (Metadata.timeToNextUpdate with the
    /// client's exponential backoff, KIP-580): one asked too early waits for
    /// the backoff's end, and one asked while a request is out waits for it.
    #[test]
    fn metadata_refreshes_wait_out_the_retry_backoff_and_the_request_in_flight() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let refresh = |p: &mut Producer, world: &mut TestWorld, now| {
            let (out, timers) = sent_and_timers(world, now, |ctx| p.refresh_metadata(ctx));
            (metadata_requests(&out), timers)
        };
        let (asked, _) = refresh(&mut p, &mut world, 100);
        let [(Node::Broker(_), id)] = asked[..] else {
            panic!("one Metadata request: {asked:?}")
        };
        let (asked, _) = refresh(&mut p, &mut world, 120);
        assert!(asked.is_empty(), "one request at a time");
        assert!(p.metadata_refresh_due);
        let timers = world.at(130, |ctx| {
            p.on_message(
                ctx,
                Message::MetadataResponse {
                    id,
                    partitions: vec![PartitionMetadata {
                        partition: 0,
                        leader: Some(1),
                        leader_epoch: 4,
                    }],
                    offline: Vec::new(),
                },
            );
            std::mem::take(&mut ctx.timers)
        });
        assert_eq!(p.metadata_request, None);
        // The refresh asked for at 120 goes once retry.backoff.ms (100) has
        // passed since the first: at 200; the next backoffs are 200, 400.
        assert!(timers.contains(&(200, Timer::Send)), "{timers:?}");
        let (asked, _) = refresh(&mut p, &mut world, 150);
        assert!(asked.is_empty(), "within retry.backoff.ms of the last");
        assert!(p.metadata_refresh_due);
        let (asked, _) = refresh(&mut p, &mut world, 200);
        assert_eq!(asked.len(), 1, "the backoff has passed");
        p.metadata_request = None;
        assert!(refresh(&mut p, &mut world, 399).0.is_empty());
        assert_eq!(refresh(&mut p, &mut world, 400).0.len(), 1);
        assert!(!p.metadata_refresh_due);
    }

    /// A metadata request unanswered within request.timeout.ms: the producer
    /// closes that connection (NetworkClient.handleTimedOutRequests) and
    /// asks again after retry.backoff.ms, doubled for each failure in a row.
    /// The closed connection is down, so leastLoadedNode asks a broker whose
    /// connection is ready instead. A timeout of another request id does
    /// nothing to it.
    #[test]
    fn a_timed_out_metadata_request_closes_its_connection_and_asks_a_ready_broker_after_a_growing_backoff(
    ) {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let mut fire = |p: &mut Producer, now, timer| {
            let (out, timers) = sent_and_timers(&mut world, now, |ctx| p.on_timer(ctx, timer));
            (metadata_requests(&out), timers)
        };
        p.metadata_refresh_due = true;
        let (asked, _) = fire(&mut p, 100, Timer::Send);
        let [(Node::Broker(from), first)] = asked[..] else {
            panic!("one request: {asked:?}")
        };
        let (asked, _) = fire(&mut p, 5_000, Timer::RequestTimeout { id: first + 1 });
        assert!(asked.is_empty());
        assert_eq!(p.metadata_request, Some((first, from)), "not its request");
        assert!(p.connections.is_ready(from));

        // Each timeout closes that connection and backs off 100, then 200 ms;
        // the retry goes to a broker whose connection is up.
        let (mut id, mut from, mut at) = (first, from, 30_100);
        for backoff in [100, 200] {
            let (_, timers) = fire(&mut p, at, Timer::RequestTimeout { id });
            assert_eq!(p.metadata_request, None);
            assert!(
                !p.connections.is_ready(from),
                "the connection to {from} is closed"
            );
            assert!(
                timers.contains(&(at + backoff, Timer::Send)),
                "{backoff} ms: {timers:?}"
            );
            let (asked, _) = fire(&mut p, at + backoff, Timer::Send);
            let [(Node::Broker(b), again)] = asked[..] else {
                panic!("one request after {backoff} ms: {asked:?}")
            };
            assert!(p.connections.is_ready(b), "asks a ready broker, not {from}");
            assert_ne!(b, from);
            (id, from, at) = (again, b, at + backoff + 30_000);
        }
        // The third timeout leaves no connection up: after 400 ms the
        // request waits while one connect (to the broker tried longest ago)
        // is under way.
        let (_, timers) = fire(&mut p, at, Timer::RequestTimeout { id });
        assert!(timers.contains(&(at + 400, Timer::Send)), "{timers:?}");
        let (asked, _) = fire(&mut p, at + 400, Timer::Send);
        assert!(asked.is_empty(), "{asked:?}");
        let connecting: Vec<BrokerId> = (1..=3)
            .filter(|b| matches!(p.connections.state(*b), Some(State::Connecting { .. })))
            .collect();
        assert_eq!(connecting.len(), 1, "one connect at a time");
    }

    /// NetworkClient.leastLoadedNode prefers a ready node with no request in
    /// flight: with batches stuck in flight to broker 1 (an isolated leader
    /// whose connection still looks up), every metadata request goes to
    /// broker 2 or 3, wherever its random start falls.
    #[test]
    fn metadata_goes_to_a_ready_broker_with_no_request_in_flight() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let out = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false)
        });
        assert!(matches!(produces(&out)[..], [(_, Node::Broker(1), _)]));
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..40u64 {
            p.metadata_request = None;
            p.next_metadata_ms = 0;
            let asked = world.at(200 + k, |ctx| {
                p.refresh_metadata(ctx);
                metadata_requests(&ctx.sends)
            });
            let [(Node::Broker(b), _)] = asked[..] else {
                panic!("{asked:?}")
            };
            seen.insert(b);
        }
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            [2, 3],
            "never broker 1, both others"
        );
    }

    /// metadata.max.age.ms: the producer refreshes its metadata that often
    /// even when nothing went wrong.
    #[test]
    fn metadata_is_refreshed_every_metadata_max_age_ms() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("metadata.max.age.ms", serde_json::json!(60_000))]);
        let (out, timers) = sent_and_timers(&mut world, 1_000, |ctx| {
            p.on_timer(ctx, Timer::MetadataRefresh)
        });
        assert_eq!(metadata_requests(&out).len(), 1);
        assert!(
            timers.contains(&(61_000, Timer::MetadataRefresh)),
            "{timers:?}"
        );
    }

    /// Steady load at r records per second: by time t since the start the
    /// application has sent t * r / 1000 records in all, each tick sending
    /// what has come due since the last (never a record twice).
    #[test]
    fn steady_load_sends_exactly_the_records_due_by_each_tick() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        p.records_per_sec = 10;
        world.at(0, |ctx| p.start(ctx));
        for (now, total) in [
            (100, 1),
            (250, 2),
            (250, 2),
            (1_000, 10),
            (1_099, 10),
            (3_000, 30),
        ] {
            world.at(now, |ctx| p.on_timer(ctx, Timer::ProducerTick));
            assert_eq!((now, p.stats.sent), (now, total));
        }
        assert_eq!(p.generated, 30);
    }

    /// Steady load goes round robin over the topic's partitions, record by
    /// record, carrying on from where the last tick stopped: with three
    /// partitions and seven records due, partition 0 takes the 1st, 4th and
    /// 7th, and the next tick starts at partition 1.
    #[test]
    fn steady_load_spreads_records_round_robin_across_ticks() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        second_partition(&mut world, &mut p);
        world.partitions.push(PartitionInfo {
            partition: 2,
            ..world.partitions[0].clone()
        });
        p.topic_partitions = Rc::new(vec![0, 1, 2]);
        p.topic_sorted = Rc::new(vec![0, 1, 2]);
        p.forget_leaders();
        p.records_per_sec = 10;
        world.at(0, |ctx| p.start(ctx));
        let queued = |p: &Producer, q: PartitionIndex| -> Vec<u64> {
            p.partitions.get(&q).map_or(Vec::new(), |s| {
                s.queue().iter().flat_map(|b| b.records.clone()).collect()
            })
        };
        world.at(700, |ctx| p.on_timer(ctx, Timer::ProducerTick));
        let first = queued(&p, 0)[0];
        let ids = |offsets: &[u64]| offsets.iter().map(|k| first + k).collect::<Vec<_>>();
        assert_eq!(queued(&p, 0), ids(&[0, 3, 6]));
        assert_eq!(queued(&p, 1), ids(&[1, 4]));
        assert_eq!(queued(&p, 2), ids(&[2, 5]));
        world.at(900, |ctx| p.on_timer(ctx, Timer::ProducerTick));
        assert_eq!(queued(&p, 0), ids(&[0, 3, 6]), "the next tick starts at 1");
        assert_eq!(queued(&p, 1), ids(&[1, 4, 7]));
        assert_eq!(queued(&p, 2), ids(&[2, 5, 8]));
    }

    /// The Produce requests among `sends`: (id, broker, each batch's
    /// partition and records' (id, sequence)).
    /// A Produce request as the tests see it: (id, broker, each record's
    /// (id, sequence)).
    type SentProduce = (u64, Node, Vec<(u64, u32)>);

    fn produces(sends: &[(Node, Message)]) -> Vec<SentProduce> {
        sends
            .iter()
            .filter_map(|(to, m)| match m {
                Message::Produce { id, batches, .. } => Some((
                    *id,
                    *to,
                    batches
                        .iter()
                        .flat_map(|b| b.records.iter().map(|r| (r.id, r.seq)))
                        .collect(),
                )),
                _ => None,
            })
            .collect()
    }

    fn texts(world: &TestWorld) -> Vec<String> {
        world.trace.events().map(|e| e.text.clone()).collect()
    }

    /// A retriable error (NOT_LEADER_OR_FOLLOWER): the producer counts it,
    /// refreshes its metadata, narrates it once, and sends the batch again
    /// after retry.backoff.ms with the same sequence numbers (idempotence:
    /// the broker can tell a copy it already has); the acknowledgement then
    /// names the offsets and the attempts it took.
    #[test]
    fn a_retriable_error_resends_the_same_sequences_after_the_backoff_and_the_ack_names_the_attempts(
    ) {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let first = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![7, 8], Acks::All, true)
        });
        let [(id, Node::Broker(1), ref recs)] = produces(&first)[..] else {
            panic!("{first:?}")
        };
        assert_eq!(recs, &[(7, 0), (8, 1)]);
        let (out, timers) = sent_and_timers(&mut world, 110, |ctx| {
            p.on_message(ctx, answer(id, Err(ErrorCode::NotLeaderOrFollower)))
        });
        assert_eq!(
            metadata_requests(&out).len(),
            1,
            "it refreshes its metadata"
        );
        assert!(produces(&out).is_empty(), "not before retry.backoff.ms");
        assert!(timers.contains(&(210, Timer::Send)), "{timers:?}");
        assert_eq!(p.stats.retries, 2);
        assert_eq!(p.stats.errors.get("NOT_LEADER_OR_FOLLOWER"), Some(&1));
        assert_eq!(
            texts(&world),
            ["Producer p got NOT_LEADER_OR_FOLLOWER for t-0 — the broker it asked is no longer the leader; it refreshes its metadata; it will retry."]
        );
        p.metadata_request = None;
        // Woken early (another reason to send), it sleeps until the backoff ends.
        let (out, timers) = sent_and_timers(&mut world, 150, |ctx| p.on_timer(ctx, Timer::Send));
        assert!(produces(&out).is_empty());
        assert!(timers.contains(&(210, Timer::Send)), "{timers:?}");
        let again = sent(&mut world, 210, |ctx| p.on_timer(ctx, Timer::Send));
        let [(id2, Node::Broker(1), ref recs)] = produces(&again)[..] else {
            panic!("{again:?}")
        };
        assert_eq!(recs, &[(7, 0), (8, 1)], "the same sequences");
        world.at(215, |ctx| p.on_message(ctx, answer(id2, Ok(40))));
        assert_eq!(p.stats.acked, 2);
        let offsets: Vec<(u64, u64)> = p
            .newly_acked
            .iter()
            .map(|(_, a)| (a.id, a.offset))
            .collect();
        assert_eq!(offsets, [(7, 40), (8, 41)]);
        assert_eq!(
            texts(&world).last().map(String::as_str),
            Some(
                "Producer p got acks=all for 2 records on t-0 at offsets 40..41 after 2 attempts."
            )
        );
        // A lone record acknowledged at the first attempt: no "after".
        let third = sent(&mut world, 300, |ctx| {
            p.send(ctx, 0, vec![9], Acks::All, true)
        });
        let [(id3, _, ref recs)] = produces(&third)[..] else {
            panic!("{third:?}")
        };
        assert_eq!(recs, &[(9, 2)], "the next sequence");
        world.at(305, |ctx| p.on_message(ctx, answer(id3, Ok(42))));
        assert_eq!(
            texts(&world).last().map(String::as_str),
            Some("Producer p got acks=all for 1 record on t-0 at offsets 42..42.")
        );
    }

    /// Run `f` at `now` (a send, or the producer's Send timer), which must
    /// send one Produce, and answer it with `result` 5 ms later.
    fn answer_next(
        world: &mut TestWorld,
        p: &mut Producer,
        now: u64,
        result: Result<u64, ErrorCode>,
        f: impl FnOnce(&mut Producer, &mut Ctx),
    ) -> u64 {
        let out = sent(world, now, |ctx| f(p, ctx));
        let [(id, _, _)] = produces(&out)[..] else {
            panic!("one Produce at {now}: {out:?}")
        };
        world.at(now + 5, |ctx| p.on_message(ctx, answer(id, result)));
        p.metadata_request = None;
        id
    }

    fn retry(p: &mut Producer, ctx: &mut Ctx) {
        p.on_timer(ctx, Timer::Send)
    }

    /// Sender.completeBatch / canRetry: a batch that failed is retried while
    /// it has retries left and delivery.timeout.ms has not passed since it
    /// was created; then the application's send() fails, and the report
    /// counts it as failed.
    #[test]
    fn a_failed_batch_is_retried_until_its_retries_are_spent_or_delivery_timeout_ms_has_passed() {
        let err = Err(ErrorCode::NotEnoughReplicas);
        // retries=1: the first failure is retried, the second gives up.
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("retries", serde_json::json!(1))]);
        answer_next(&mut world, &mut p, 0, err, |p, ctx| {
            p.send(ctx, 0, vec![6, 7], Acks::All, false)
        });
        assert_eq!((p.stats.failed, p.queued_records()), (0, 2), "retried");
        answer_next(&mut world, &mut p, 105, err, retry);
        assert_eq!(
            (p.stats.failed, p.queued_records()),
            (2, 0),
            "retries spent"
        );
        assert_eq!(p.stats.failed_ids, [6, 7]);
        assert!(p.stats.errors.contains_key("DELIVERY_TIMEOUT"));
        assert_eq!(
            texts(&world).last().map(String::as_str),
            Some("Producer p gave up on 2 records for t-0: NOT_ENOUGH_REPLICAS, and delivery.timeout.ms=120000 has passed. The application's send() fails.")
        );

        // delivery.timeout.ms=40000: retried 38,905 ms after the batch was
        // created; its answer 40,000 ms after gives up.
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("delivery.timeout.ms", serde_json::json!(40_000))]);
        answer_next(&mut world, &mut p, 100, err, |p, ctx| {
            p.send(ctx, 0, vec![10], Acks::All, false)
        });
        answer_next(&mut world, &mut p, 39_000, err, retry);
        assert_eq!((p.stats.failed, p.queued_records()), (0, 1));
        assert_eq!(p.pending_ids(), [10]);
        let out = sent(&mut world, 39_995, |ctx| retry(&mut p, ctx));
        let [(id, _, _)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(p.in_flight_records(), 1);
        world.at(40_100, |ctx| p.on_message(ctx, answer(id, err)));
        assert_eq!((p.stats.failed, p.stats.failed_ids.clone()), (1, vec![10]));
        assert_eq!(
            p.stats.errors.get("DELIVERY_TIMEOUT"),
            Some(&0),
            "it failed on its answer"
        );
        assert_eq!(p.in_flight_records() + p.queued_records(), 0);
        assert!(p.pending_ids().is_empty());
        // One waiting for its retry expires in the queue, never sent again.
        p.metadata_request = None;
        answer_next(&mut world, &mut p, 50_000, err, |p, ctx| {
            p.send(ctx, 0, vec![11], Acks::All, false)
        });
        let out = sent(&mut world, 89_999, |ctx| retry(&mut p, ctx));
        assert_eq!(produces(&out).len(), 1, "39,999 ms: still retried");
        world.at(89_999, |ctx| {
            p.on_message(ctx, answer(produces(&out)[0].0, err))
        });
        let out = sent(&mut world, 90_000, |ctx| retry(&mut p, ctx));
        assert!(produces(&out).is_empty(), "{out:?}");
        assert_eq!(p.stats.failed_ids, [10, 11]);
        assert_eq!(p.stats.errors.get("DELIVERY_TIMEOUT"), Some(&1));
    }

    /// Sender.getExpiredInflightBatches: a batch still waiting for its
    /// answer when delivery.timeout.ms has passed since it was created fails
    /// then (the producer wakes for that deadline), and its late answer is
    /// ignored. On its first attempt it was not being retried
    /// (ProducerBatch.inRetry), so Sender.sendProducerData does not mark its
    /// sequence unresolved: the next batch takes the next sequence under the
    /// same producer id (a gap, if the broker never wrote it, shows as
    /// OUT_OF_ORDER_SEQUENCE_NUMBER on that batch; audit item 6 of issue 59).
    #[test]
    fn an_in_flight_batch_fails_at_its_delivery_timeout_its_late_answer_is_ignored_and_a_first_attempt_leaves_no_unresolved_sequence(
    ) {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("delivery.timeout.ms", serde_json::json!(40_000))]);
        let (out, timers) = sent_and_timers(&mut world, 1_000, |ctx| {
            p.send(ctx, 0, vec![3], Acks::All, false)
        });
        let [(id, _, _)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert!(
            timers.contains(&(41_000, Timer::Send)),
            "wakes at the deadline: {timers:?}"
        );
        let pid = p.partitions.get(&0).map(|s| s.producer_id);
        world.at(40_999, |ctx| p.on_timer(ctx, Timer::Send));
        assert_eq!((p.stats.failed, p.in_flight_records()), (0, 1), "not yet");
        world.at(41_000, |ctx| p.on_timer(ctx, Timer::Send));
        assert_eq!((p.stats.failed, p.in_flight_records()), (1, 0));
        assert_eq!(p.stats.errors.get("DELIVERY_TIMEOUT"), Some(&1));
        assert!(texts(&world).last().is_some_and(|t| t.starts_with(
            "Producer p gave up on 1 record for t-0 still in flight: delivery.timeout.ms=40000 has passed"
        )));
        world.at(41_500, |ctx| p.on_message(ctx, answer(id, Ok(0))));
        assert_eq!(p.stats.acked, 0, "a late answer is ignored");
        let out = sent(&mut world, 42_000, |ctx| {
            p.send(ctx, 0, vec![4], Acks::All, false)
        });
        let [(_, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(4, 1)], "the next sequence");
        assert_eq!(
            p.partitions.get(&0).map(|s| s.producer_id),
            pid,
            "under the same producer id"
        );
    }

    /// Sender.sendProducerData marks an expired batch's sequence unresolved
    /// when it was being retried (inRetry); TransactionManager
    /// .maybeResolveSequences then, with nothing in flight, bumps the epoch
    /// if the last acknowledged sequence is not the one before the next:
    /// here nothing was acknowledged after it, so the next batch starts from
    /// 0 under a new producer id (the lab's epoch bump).
    #[test]
    fn an_expired_retried_batch_leaves_its_sequence_unresolved_and_the_epoch_is_bumped_when_nothing_later_landed(
    ) {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("delivery.timeout.ms", serde_json::json!(40_000))]);
        let err = Err(ErrorCode::NotEnoughReplicas);
        answer_next(&mut world, &mut p, 1_000, err, |p, ctx| {
            p.send(ctx, 0, vec![3], Acks::All, false)
        });
        let pid = p.partitions.get(&0).map(|s| s.producer_id);
        // The retry goes out and is never answered.
        let out = sent(&mut world, 1_200, |ctx| retry(&mut p, ctx));
        assert_eq!(produces(&out).len(), 1, "{out:?}");
        world.at(41_000, |ctx| p.on_timer(ctx, Timer::Send));
        assert_eq!(p.stats.failed, 1);
        assert!(p.partitions.get(&0).is_some_and(|s| s.unresolved));
        let out = sent(&mut world, 42_000, |ctx| {
            p.send(ctx, 0, vec![4], Acks::All, false)
        });
        let [(_, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(4, 0)], "sequences restart");
        assert_ne!(
            p.partitions.get(&0).map(|s| s.producer_id),
            pid,
            "under a new producer id"
        );
    }

    /// TransactionManager.maybeResolveSequences: an unresolved sequence is
    /// settled without a bump when, once nothing is in flight, the last
    /// acknowledged sequence is right before the next one: a later batch
    /// landed, so the broker holds no gap.
    #[test]
    fn an_unresolved_sequence_is_settled_without_a_bump_when_a_later_batch_was_acknowledged() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        answer_next(&mut world, &mut p, 0, Ok(0), |p, ctx| {
            p.send(ctx, 0, vec![1, 2], Acks::All, false)
        });
        let pid = p.partitions.get(&0).map(|s| s.producer_id);
        if let Some(s) = p.partitions.get_mut(&0) {
            s.unresolved = true;
        }
        let out = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![3], Acks::All, false)
        });
        let [(_, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(3, 2)], "the next sequence, no restart");
        assert_eq!(p.partitions.get(&0).map(|s| s.producer_id), pid);
        assert!(p.partitions.get(&0).is_some_and(|s| !s.unresolved));
    }

    /// Sender.completeBatch → failBatch(batch, response, attempts < retries):
    /// a batch answered with an error after its delivery.timeout.ms fails for
    /// good with retries left, and TransactionManager.handleFailedBatch then
    /// asks for an epoch bump for its partition (adjustSequenceNumbers), not
    /// only on a sequence error: what comes next starts from 0 under a new
    /// producer id.
    #[test]
    fn a_batch_failing_after_its_delivery_timeout_with_retries_left_requests_an_epoch_bump() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[
            ("delivery.timeout.ms", serde_json::json!(1_000)),
            ("request.timeout.ms", serde_json::json!(995)),
        ]);
        answer_next(&mut world, &mut p, 0, Ok(0), |p, ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false)
        });
        let pid = p.partitions.get(&0).map(|s| s.producer_id);
        // Created and sent at 10, answered NOT_ENOUGH_REPLICAS at 1,010: at
        // its deadline, so it fails for good, with retries left.
        let out = sent(&mut world, 10, |ctx| {
            p.send(ctx, 0, vec![2], Acks::All, false)
        });
        let [(id, _, _)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        world.at(1_010, |ctx| {
            p.on_message(ctx, answer(id, Err(ErrorCode::NotEnoughReplicas)))
        });
        assert_eq!(p.stats.failed, 1);
        let out = sent(&mut world, 1_200, |ctx| {
            p.send(ctx, 0, vec![3], Acks::All, false)
        });
        let [(_, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(3, 0)], "sequences restart");
        assert_ne!(p.partitions.get(&0).map(|s| s.producer_id), pid, "bumped");
    }

    /// The idempotent producer's epoch is producer-wide
    /// (TransactionManager.producerIdAndEpoch): a bump asked for by one
    /// partition moves every partition to the new one. A partition with
    /// batches of the old one in flight drains nothing new until they are
    /// answered (RecordAccumulator.shouldStopDrainBatchesForPartition), then
    /// starts from 0 under the new id (maybeUpdateProducerIdAndEpoch).
    #[test]
    fn an_epoch_bump_is_producer_wide_and_a_partition_with_old_batches_in_flight_waits_for_them() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        second_partition(&mut world, &mut p);
        p.set_leader(1, (Some(1), 4));
        let out = sent(&mut world, 0, |ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false);
            p.send(ctx, 1, vec![2], Acks::All, false)
        });
        let [(id0, _, _), (id1, _, _)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        let old = p.pid;
        // Partition 0 answers OUT_OF_ORDER_SEQUENCE_NUMBER on its next
        // sequence (a real gap): the producer bumps; partition 1's batch of
        // the old id is still in flight.
        world.at(5, |ctx| {
            p.on_message(
                ctx,
                Message::ProduceResponse {
                    id: id0,
                    partitions: vec![ProducePartitionResponse {
                        partition: 0,
                        result: Err(ErrorCode::OutOfOrderSequenceNumber),
                        current_leader: None,
                    }],
                },
            )
        });
        assert_ne!(p.pid, old, "a new producer-wide id");
        assert_eq!(p.partitions.get(&1).map(|s| s.producer_id), Some(old));
        let out = sent(&mut world, 10, |ctx| {
            p.send(ctx, 1, vec![3], Acks::All, false)
        });
        assert!(
            produces(&out)
                .iter()
                .all(|(_, _, r)| r.iter().all(|(rec, _)| *rec != 3)),
            "record 3 waits for partition 1's old batch: {out:?}"
        );
        // The answer wakes the partition: record 3 goes at once.
        let out = sent(&mut world, 15, |ctx| {
            p.on_message(
                ctx,
                Message::ProduceResponse {
                    id: id1,
                    partitions: vec![ProducePartitionResponse {
                        partition: 1,
                        result: Ok(0),
                        current_leader: None,
                    }],
                },
            )
        });
        let third: Vec<_> = produces(&out)
            .into_iter()
            .flat_map(|(_, _, r)| r)
            .filter(|(rec, _)| *rec == 3)
            .collect();
        assert_eq!(third, [(3, 0)], "from 0 under the new id: {out:?}");
        assert_eq!(p.partitions.get(&1).map(|s| s.producer_id), Some(p.pid));
    }

    /// acks=0: fire and forget. The records count as acknowledged when sent,
    /// no request timeout is set; a broker that refuses the write closes the
    /// connection, and the producer learns only that (the records are lost)
    /// and refreshes its metadata.
    #[test]
    fn acks_0_records_count_as_acknowledged_when_sent_and_a_refusal_is_only_a_disconnect() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("acks", serde_json::json!("0"))]);
        let (out, timers) = sent_and_timers(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![1, 2], Acks::None, false)
        });
        let [(id, Node::Broker(1), _)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert!(
            !timers
                .iter()
                .any(|(_, t)| matches!(t, Timer::RequestTimeout { .. })),
            "{timers:?}"
        );
        assert_eq!((p.stats.acked, p.in_flight_records()), (2, 0));
        assert_eq!(p.stats.acks0_ids, [1, 2]);
        assert!(!p.timer_live(&Timer::RequestTimeout { id }));
        let asked = world.at(120, |ctx| {
            p.on_message(
                ctx,
                Message::Disconnected {
                    id,
                    to: Node::Broker(1),
                },
            );
            metadata_requests(&ctx.sends)
        });
        assert_eq!(asked.len(), 1, "it refreshes its metadata");
        assert_eq!(p.stats.errors.get("NETWORK_EXCEPTION"), Some(&1));
        assert!(texts(&world).last().is_some_and(|t| t.starts_with(
            "broker 1 closed producer p's connection: it refused an acks=0 write of 2 records to t-0"
        )), "{:?}", texts(&world));
    }

    /// A Produce unanswered within request.timeout.ms: the producer closes
    /// that connection (NetworkClient.handleTimedOutRequests), so the batch
    /// fails with REQUEST_TIMED_OUT and every other request on the
    /// connection with NETWORK_EXCEPTION, all to be retried; its next
    /// metadata request goes to another broker (leastLoadedNode skips a
    /// connection that is down).
    #[test]
    fn a_timed_out_produce_closes_the_connection_and_fails_every_request_on_it() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        second_partition(&mut world, &mut p);
        p.set_leader(1, (Some(1), 2));
        let first = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false)
        });
        let second = sent(&mut world, 101, |ctx| {
            p.send(ctx, 1, vec![2], Acks::All, false)
        });
        let (a, b) = (produces(&first)[0].0, produces(&second)[0].0);
        let asked = world.at(30_100, |ctx| {
            p.on_timer(ctx, Timer::RequestTimeout { id: a });
            metadata_requests(&ctx.sends)
        });
        assert!(!p.connections.is_ready(1));
        assert!(
            !p.timer_live(&Timer::RequestTimeout { id: b }),
            "failed with it"
        );
        assert_eq!(p.stats.errors.get("REQUEST_TIMED_OUT"), Some(&1));
        assert_eq!(p.stats.errors.get("NETWORK_EXCEPTION"), Some(&1));
        assert_eq!((p.queued_records(), p.in_flight_records()), (2, 0));
        assert_eq!(p.stats.retries, 2);
        assert!(
            matches!(asked[..], [(Node::Broker(b), _)] if b != 1),
            "not the closed one: {asked:?}"
        );
    }

    /// KIP-951: a NOT_LEADER_OR_FOLLOWER answer names the current leader;
    /// the producer takes it (no metadata round trip needed) and, the leader
    /// being newer than the one the batch went to, retries at once instead
    /// of after retry.backoff.ms (RecordAccumulator.shouldBackoff).
    #[test]
    fn a_retry_to_a_newer_leader_named_in_the_error_skips_the_backoff() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let out = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false)
        });
        let id = produces(&out)[0].0;
        let out = world.at(105, |ctx| {
            p.on_message(
                ctx,
                Message::ProduceResponse {
                    id,
                    partitions: vec![ProducePartitionResponse {
                        partition: 0,
                        result: Err(ErrorCode::NotLeaderOrFollower),
                        current_leader: Some((2, 5)),
                    }],
                },
            );
            std::mem::take(&mut ctx.sends)
        });
        assert_eq!(p.metadata.get(&0).copied(), Some((Some(2), 5)));
        let [(_, Node::Broker(2), ref recs)] = produces(&out)[..] else {
            panic!("at once, to broker 2: {out:?}")
        };
        assert_eq!(recs, &[(1, 0)]);
        // The same error without a newer leader waits out the backoff.
        let id = produces(&out)[0].0;
        let out = sent(&mut world, 110, |ctx| {
            p.on_message(ctx, answer(id, Err(ErrorCode::NotLeaderOrFollower)))
        });
        assert!(produces(&out).is_empty(), "{out:?}");
    }

    /// An idempotent producer keeps order across a failure: when a batch
    /// fails, the later batches of the partition still in flight go back
    /// into the queue too, in sequence order, and are sent again in that
    /// order, one at a time, with their sequences.
    #[test]
    fn a_failed_idempotent_batch_takes_the_later_in_flight_batches_back_in_sequence_order() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let mut ids = Vec::new();
        for (t, rec) in [(100, 1), (101, 2), (102, 3)] {
            let out = sent(&mut world, t, |ctx| {
                p.send(ctx, 0, vec![rec], Acks::All, false)
            });
            ids.push(produces(&out)[0].0);
        }
        assert_eq!(p.in_flight_records(), 3);
        world.at(110, |ctx| {
            p.on_message(ctx, answer(ids[0], Err(ErrorCode::NotEnoughReplicas)))
        });
        assert_eq!((p.in_flight_records(), p.queued_records()), (0, 3));
        // The first goes when the backoff ends; each answer sends the next.
        let mut out = sent(&mut world, 210, |ctx| p.on_timer(ctx, Timer::Send));
        let mut again = Vec::new();
        for t in [215, 220, 225] {
            let [(id, _, ref recs)] = produces(&out)[..] else {
                panic!("one batch before {t}: {out:?}")
            };
            again.extend_from_slice(recs);
            out = sent(&mut world, t, |ctx| p.on_message(ctx, answer(id, Ok(t))));
        }
        assert_eq!(again, [(1, 0), (2, 1), (3, 2)]);
        assert_eq!(p.stats.acked, 3);
    }

    /// TransactionManager.canRetry (idempotent producer): an
    /// OUT_OF_ORDER_SEQUENCE_NUMBER for the batch whose first sequence comes
    /// right after the last acknowledged one is a real gap (the leader lost
    /// this producer's state, e.g. an unclean election or a truncation), so
    /// the epoch is bumped at once, not after a few attempts: the first retry
    /// already goes under the new producer id, renumbered from 0.
    #[test]
    fn out_of_order_sequence_for_the_next_sequence_bumps_the_epoch_at_once() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let err = Err(ErrorCode::OutOfOrderSequenceNumber);
        answer_next(&mut world, &mut p, 0, Ok(0), |p, ctx| {
            p.send(ctx, 0, vec![1, 2], Acks::All, false)
        });
        let pid = p.partitions.get(&0).map(|s| s.producer_id);
        assert_eq!(p.partitions.get(&0).map(|s| s.acked_seq_end), Some(2));
        // Record 3 goes with sequence 2: the next one after the acked 0..1.
        answer_next(&mut world, &mut p, 100, err, |p, ctx| {
            p.send(ctx, 0, vec![3], Acks::All, false)
        });
        assert_ne!(p.partitions.get(&0).map(|s| s.producer_id), pid, "bumped");
        let out = sent(&mut world, 300, |ctx| retry(&mut p, ctx));
        let [(id, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(3, 0)], "the first retry is renumbered from 0");
        world.at(305, |ctx| p.on_message(ctx, answer(id, Ok(2))));
        assert_eq!(p.stats.acked, 3);
        assert_eq!(p.stats.errors.get("OUT_OF_ORDER_SEQUENCE_NUMBER"), Some(&1));
    }

    /// TransactionManager.canRetry: an OUT_OF_ORDER_SEQUENCE_NUMBER for a
    /// batch that is not the next sequence (an earlier batch is still
    /// unanswered: this one may only be waiting for it), or for a batch an
    /// epoch bump already renumbered (sequenceHasBeenReset), is retried with
    /// the same producer id and sequence: no bump.
    #[test]
    fn out_of_order_sequence_for_a_later_or_renumbered_batch_is_retried_without_a_bump() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let err = Err(ErrorCode::OutOfOrderSequenceNumber);
        let first = sent(&mut world, 0, |ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false)
        });
        let second = sent(&mut world, 1, |ctx| {
            p.send(ctx, 0, vec![2], Acks::All, false)
        });
        let ([(_, _, ref r1)], [(id2, _, ref r2)]) =
            (&produces(&first)[..], &produces(&second)[..])
        else {
            panic!("{first:?} {second:?}")
        };
        assert_eq!(
            (r1.as_slice(), r2.as_slice()),
            (&[(1, 0)][..], &[(2, 1)][..])
        );
        let pid = p.partitions.get(&0).map(|s| s.producer_id);
        // Sequence 1 answers first, out of order: 0 is not acknowledged yet.
        world.at(5, |ctx| p.on_message(ctx, answer(*id2, err)));
        assert_eq!(p.partitions.get(&0).map(|s| s.producer_id), pid, "no bump");
        let out = sent(&mut world, 300, |ctx| retry(&mut p, ctx));
        let [(id, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(1, 0)], "resent with its old sequence, in order");
        // Now sequence 0 is next: its gap bumps; the renumbered batch that
        // fails again is only retried.
        world.at(305, |ctx| p.on_message(ctx, answer(id, err)));
        let bumped = p.partitions.get(&0).map(|s| s.producer_id);
        assert_ne!(bumped, pid, "bumped for the next sequence");
        let out = sent(&mut world, 600, |ctx| retry(&mut p, ctx));
        let [(id, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(1, 0)]);
        world.at(605, |ctx| p.on_message(ctx, answer(id, err)));
        assert_eq!(
            p.partitions.get(&0).map(|s| s.producer_id),
            bumped,
            "a renumbered batch does not bump again"
        );
    }

    /// A metadata answer lists every partition; the producer keeps the
    /// leaders of its topic's partitions and of any other partition it has
    /// written to (a produce step may name one), not the rest.
    #[test]
    fn metadata_is_kept_for_the_producers_topic_and_the_partitions_it_wrote() {
        let mut world = TestWorld::one_partition();
        for partition in [1, 2] {
            world.partitions.push(PartitionInfo {
                partition,
                ..world.partitions[0].clone()
            });
        }
        let mut p = producer(&[]);
        p.forget_leaders();
        p.partitions.or_default(1);
        p.metadata_refresh_due = true;
        let asked = world.at(100, |ctx| {
            p.on_timer(ctx, Timer::Send);
            metadata_requests(&ctx.sends)
        });
        let [(_, id)] = asked[..] else {
            panic!("{asked:?}")
        };
        let leader = |partition| PartitionMetadata {
            partition,
            leader: Some(2),
            leader_epoch: 3,
        };
        world.at(105, |ctx| {
            p.on_message(
                ctx,
                Message::MetadataResponse {
                    id,
                    partitions: vec![leader(0), leader(1), leader(2)],
                    offline: Vec::new(),
                },
            )
        });
        assert_eq!(
            p.metadata.get(&0).copied(),
            Some((Some(2), 3)),
            "its topic's"
        );
        assert_eq!(
            p.metadata.get(&1).copied(),
            Some((Some(2), 3)),
            "written to"
        );
        assert_eq!(p.metadata.get(&2), None, "neither");
    }

    /// max.in.flight.requests.per.connection (5): a sixth batch of the
    /// partition waits until an answer frees a place.
    #[test]
    fn at_most_max_in_flight_batches_of_a_partition_are_in_flight() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let mut ids = Vec::new();
        for rec in 1..=6 {
            let out = sent(&mut world, 100 + rec, |ctx| {
                p.send(ctx, 0, vec![rec], Acks::All, false)
            });
            ids.extend(produces(&out).into_iter().map(|x| x.0));
        }
        assert_eq!(
            (ids.len(), p.in_flight_records(), p.queued_records()),
            (5, 5, 1)
        );
        let out = sent(&mut world, 120, |ctx| {
            p.on_message(ctx, answer(ids[0], Ok(0)))
        });
        let [(_, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(6, 5)]);
    }

    /// Records the application sends while a batch of the partition is
    /// still open (never drained) join it, up to batch.size; then a new
    /// batch starts.
    #[test]
    fn records_join_the_open_batch_until_batch_size_then_start_another() {
        let mut world = TestWorld::one_partition();
        // 61 + 16 * 3 = 109 bytes: three records per batch.
        let mut p = producer(&[("batch.size", serde_json::json!(109))]);
        p.forget_leaders(); // no leader yet: nothing is drained
        for rec in 1..=4 {
            world.at(100, |ctx| p.send(ctx, 0, vec![rec], Acks::All, false));
        }
        let sizes: Vec<usize> = p.partitions.get(&0).map_or(Vec::new(), |s| {
            s.queue().iter().map(|b| b.records.len()).collect()
        });
        assert_eq!(sizes, [3, 1]);
        assert_eq!(records_per_batch(109), 3);
        assert_eq!(records_per_batch(108), 2);
        assert_eq!(records_per_batch(10), 1, "an oversized record goes alone");
    }

    /// Closing a connection after a request timed out fails the metadata
    /// request on that connection too (it is asked again after the
    /// backoff), and leaves one on another connection alone.
    #[test]
    fn a_timed_out_produce_fails_the_metadata_request_on_its_connection_only() {
        for (metadata_to, fails) in [(2, false), (1, true)] {
            let mut world = TestWorld::one_partition();
            let mut p = producer(&[]);
            let out = sent(&mut world, 100, |ctx| {
                p.send(ctx, 0, vec![1], Acks::All, false)
            });
            let id = produces(&out)[0].0;
            p.metadata_request = Some((999, metadata_to));
            world.at(30_100, |ctx| p.on_timer(ctx, Timer::RequestTimeout { id }));
            assert_eq!(
                p.metadata_request != Some((999, metadata_to)),
                fails,
                "metadata request to broker {metadata_to}"
            );
        }
    }

    /// Each retriable error is narrated with what it means for the write.
    #[test]
    fn each_retriable_produce_error_is_narrated_with_what_it_means() {
        let cases = [
            (
                ErrorCode::FencedLeaderEpoch,
                " — its leader epoch is stale; it refreshes its metadata",
            ),
            (
                ErrorCode::NotEnoughReplicas,
                " — the ISR is smaller than min.insync.replicas, nothing was written",
            ),
            (
                ErrorCode::NotEnoughReplicasAfterAppend,
                " — written, but the ISR shrank below min.insync.replicas before it was replicated",
            ),
            (
                ErrorCode::RequestTimedOut,
                " — no answer within request.timeout.ms",
            ),
            (
                ErrorCode::NetworkException,
                " — the connection to the broker broke",
            ),
            (
                ErrorCode::OutOfOrderSequenceNumber,
                " — a real gap after its last acknowledged batch: it bumps its epoch (a new producer id) and numbers its batches from 0",
            ),
        ];
        for (error, why) in cases {
            let mut world = TestWorld::one_partition();
            let mut p = producer(&[]);
            answer_next(&mut world, &mut p, 0, Err(error), |p, ctx| {
                p.send(ctx, 0, vec![1], Acks::All, false)
            });
            assert_eq!(
                texts(&world),
                [format!(
                    "Producer p got {error} for t-0{why}; it will retry."
                )]
            );
        }
    }

    /// Steady load is not narrated record by record: an error is narrated
    /// the first time it comes (not again while the same one repeats), and
    /// the acknowledgement that ends it is narrated; the next is not.
    #[test]
    fn a_repeated_error_is_narrated_once_and_the_ack_that_ends_it_is_narrated() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        let err = Err(ErrorCode::NotEnoughReplicas);
        answer_next(&mut world, &mut p, 0, err, |p, ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false)
        });
        answer_next(&mut world, &mut p, 105, err, retry);
        assert_eq!(texts(&world).len(), 1, "{:?}", texts(&world));
        answer_next(
            &mut world,
            &mut p,
            310,
            Err(ErrorCode::NotLeaderOrFollower),
            retry,
        );
        assert_eq!(texts(&world).len(), 2, "another error");
        answer_next(&mut world, &mut p, 715, Ok(0), retry);
        assert_eq!(
            texts(&world).last().map(String::as_str),
            Some("Producer p got acks=all for 1 record on t-0 at offsets 0..0 after 4 attempts.")
        );
        answer_next(&mut world, &mut p, 800, Ok(1), |p, ctx| {
            p.send(ctx, 0, vec![2], Acks::All, false)
        });
        assert_eq!(texts(&world).len(), 3, "steady load again: not narrated");
    }

    /// A batch that expires before it was ever sent had no sequence numbers
    /// yet (they are given when it is first drained), so it leaves no gap:
    /// the producer keeps its producer id and the next batch starts at 0.
    #[test]
    fn a_batch_that_expires_unsent_leaves_no_gap_in_the_sequences() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        p.forget_leaders(); // no leader known: nothing is drained
        world.at(0, |ctx| p.send(ctx, 0, vec![1], Acks::All, false));
        let pid = Some(p.pid);
        world.at(120_000, |ctx| p.on_timer(ctx, Timer::Send));
        assert_eq!((p.stats.failed, p.queued_records()), (1, 0));
        p.set_leader(0, (Some(1), 4));
        p.metadata_request = None;
        let out = sent(&mut world, 120_001, |ctx| {
            p.send(ctx, 0, vec![2], Acks::All, false)
        });
        let [(_, _, ref recs)] = produces(&out)[..] else {
            panic!("{out:?}")
        };
        assert_eq!(recs, &[(2, 0)]);
        assert_eq!(p.partitions.get(&0).map(|s| s.producer_id), pid);
    }

    /// A broker answers a refused acks=0 write by closing the connection;
    /// the producer remembers its last 64 acks=0 requests to tell which
    /// write that was, and forgets older ones.
    #[test]
    fn the_last_64_acks_0_requests_are_remembered_for_a_disconnect() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("acks", serde_json::json!("0"))]);
        let mut ids = Vec::new();
        for rec in 0..65 {
            let out = sent(&mut world, 100 + rec, |ctx| {
                p.send(ctx, 0, vec![rec], Acks::None, false)
            });
            ids.extend(produces(&out).into_iter().map(|x| x.0));
        }
        assert_eq!(ids.len(), 65);
        let refused = |p: &mut Producer, world: &mut TestWorld, id| {
            world.at(1_000, |ctx| {
                p.on_message(
                    ctx,
                    Message::Disconnected {
                        id,
                        to: Node::Broker(1),
                    },
                )
            });
            p.stats
                .errors
                .get("NETWORK_EXCEPTION")
                .copied()
                .unwrap_or(0)
        };
        assert_eq!(
            refused(&mut p, &mut world, ids[0]),
            0,
            "the 65th most recent: forgotten"
        );
        assert_eq!(
            refused(&mut p, &mut world, ids[1]),
            1,
            "the 64th: remembered"
        );
        assert_eq!(refused(&mut p, &mut world, ids[64]), 2);
    }

    /// Each in-flight batch fails at its own delivery.timeout.ms, whatever
    /// order the batches went out in (one created earlier may be sent
    /// later, its partition's leader unknown until then), and a producer
    /// woken after a deadline still fails what is overdue.
    #[test]
    fn each_in_flight_batch_expires_at_its_own_deadline_whatever_order_they_went_out_in() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[("delivery.timeout.ms", serde_json::json!(40_000))]);
        second_partition(&mut world, &mut p);
        p.forget_leaders();
        p.set_leader(1, (Some(1), 2));
        world.at(1_000, |ctx| p.send(ctx, 0, vec![1], Acks::All, false));
        assert_eq!(p.in_flight_records(), 0, "no leader for partition 0 yet");
        let out = sent(&mut world, 2_000, |ctx| {
            p.send(ctx, 1, vec![2], Acks::All, false)
        });
        assert_eq!(produces(&out).len(), 1);
        p.set_leader(0, (Some(1), 4));
        p.metadata_request = None;
        let out = sent(&mut world, 3_000, |ctx| p.on_timer(ctx, Timer::Send));
        assert_eq!(produces(&out).len(), 1);
        assert_eq!(p.in_flight_records(), 2);
        world.at(41_000, |ctx| p.on_timer(ctx, Timer::Send));
        assert_eq!(p.stats.failed_ids, [1], "created at 1,000");
        assert_eq!(p.in_flight_records(), 1, "the other is due at 42,000");
        world.at(45_000, |ctx| p.on_timer(ctx, Timer::Send));
        assert_eq!(p.stats.failed_ids, [1, 2], "woken late, still failed");
        assert_eq!(p.in_flight_records(), 0);
    }

    /// Everything a producer knows, with parked partitions counted as
    /// queued (where they were before parking existed).
    fn observable(p: &Producer) -> String {
        let mut c = p.clone();
        c.parked = Parked::default();
        for (p, s) in c.partitions.iter_mut() {
            s.listed = None;
            if s.parked.take().is_some() {
                c.queued.insert(p);
            }
        }
        c.pump_candidates = Scratch::default();
        // Whether an idle partition still holds its emptied lists is room,
        // not knowledge.
        let mut spare = Vec::new();
        for (_, s) in c.partitions.iter_mut() {
            s.settle(&mut spare);
        }
        format!("{c:?}")
    }

    /// A partition pump() found blocked is left out of its scan (the cost of
    /// a mass failover: a producer whose thousands of partitions have a dead
    /// leader scanned them all on every send). Parking must change nothing a
    /// full scan would have done. Two producers take the same steps; one
    /// may park, the other is woken fully before each step (so it scans
    /// every partition with batches, as before parking existed). Every step
    /// sends the same messages, sets the same timers and leaves the same
    /// state, through each block (no leader; a connection connecting or
    /// backing off; max.in.flight reached) and each way out of it (a
    /// connect, a refusal and its backoff, an answer, a closed connection,
    /// a delivery timeout while parked, a new leader).
    #[test]
    fn a_parked_partition_changes_nothing_pump_would_have_done() {
        let settings = [
            (
                "max.in.flight.requests.per.connection",
                serde_json::json!(1),
            ),
            ("delivery.timeout.ms", serde_json::json!(30_000)),
            ("request.timeout.ms", serde_json::json!(20_000)),
            ("linger.ms", serde_json::json!(0)),
        ];
        let setup = || {
            let mut world = TestWorld::one_partition();
            let mut p = producer(&settings);
            for q in 1..4 {
                world.partitions.push(PartitionInfo {
                    partition: q,
                    ..world.partitions[0].clone()
                });
            }
            p.topic_partitions = Rc::new(vec![0, 1, 2, 3]);
            p.topic_sorted = Rc::new(vec![0, 1, 2, 3]);
            p.connections = p.connections.clone().none_yet();
            p.set_leader(0, (Some(1), 4));
            p.set_leader(1, (Some(2), 4));
            p.forget_leader(2);
            p.forget_leader(3);
            (world, p)
        };
        let (mut wa, mut a) = setup();
        let (mut wb, mut b) = setup();
        let mut parked_seen = std::collections::BTreeSet::new();
        // The connect attempt to broker 3 under way, if any.
        let connecting_3 = std::cell::Cell::new(None);
        let mut step = |now: u64, what: &str, f: &dyn Fn(&mut Producer, &mut Ctx)| {
            b.wake_all();
            assert_eq!(b.parked.count, [0; 3], "woken, none counted");
            let ea = sent_and_timers(&mut wa, now, |ctx| f(&mut a, ctx));
            let eb = sent_and_timers(&mut wb, now, |ctx| f(&mut b, ctx));
            assert_eq!(format!("{ea:?}"), format!("{eb:?}"), "{what} at {now} ms");
            assert_eq!(observable(&a), observable(&b), "{what} at {now} ms");
            parked_seen.extend(a.partitions.values().filter_map(|s| s.parked));
            if let Some(State::Connecting { id }) = a.connections.state(3) {
                connecting_3.set(Some(id));
            }
            (ea, a.metadata_request)
        };
        let send = |q: PartitionIndex, id: u64| {
            move |p: &mut Producer, ctx: &mut Ctx| p.send(ctx, q, vec![id], Acks::All, false)
        };
        let connect = |e: &Effects, to: BrokerId| {
            e.0.iter()
                .find_map(|(n, m)| match (n, m) {
                    (Node::Broker(b), Message::Connect { id }) if *b == to => Some(*id),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("a connect to broker {to}"))
        };
        // Connections to brokers 1 and 2 are opened on first use; partitions
        // 2 and 3 have no leader (3 never gets one).
        let c1 = connect(&step(1_000, "send to 0", &send(0, 1)).0, 1);
        let c2 = connect(&step(1_001, "send to 1", &send(1, 2)).0, 2);
        step(1_002, "send to 3", &send(3, 3));
        for (k, t) in (1_003..1_010).enumerate() {
            step(t, "sends while nothing is ready", &send(k % 3, 10 + t));
        }
        // Broker 1 accepts: one batch of partition 0 in flight, the rest wait.
        let (e, _) = step(1_020, "broker 1 accepts", &move |p, ctx| {
            p.on_message(ctx, Message::Connected { id: c1, broker: 1 })
        });
        let first = produce_ids(&e.0);
        for t in 1_021..1_025 {
            step(t, "sends to 0, its one slot taken", &send(0, t));
        }
        // Broker 2 refuses: partition 1 waits out the reconnect backoff.
        step(1_030, "broker 2 refuses", &move |p, ctx| {
            p.on_message(
                ctx,
                Message::Disconnected {
                    id: c2,
                    to: Node::Broker(2),
                },
            )
        });
        for t in 1_031..1_035 {
            step(t, "sends to 1, backing off", &send(1, t));
        }
        step(
            1_035,
            "woken while only parked partitions wait",
            &|p, ctx| p.on_timer(ctx, Timer::Send),
        );
        let Some(&id) = first.first() else {
            panic!("partition 0's first batch went out")
        };
        let (e, _) = step(1_040, "partition 0's batch is answered", &move |p, ctx| {
            p.on_message(ctx, answer(id, Ok(0)))
        });
        assert_eq!(produce_ids(&e.0).len(), 1, "the answer freed the slot");
        step(1_041, "send to 0, its slot taken again", &send(0, 1_041));
        step(1_050, "broker 1 closes the connection", &|p, ctx| {
            p.on_message(ctx, Message::ConnectionClosed { broker: 1 })
        });
        step(1_051, "woken after the close", &|p, ctx| {
            p.on_timer(ctx, Timer::Send)
        });
        step(1_052, "send to 0 after the close", &send(0, 1_052));
        // With broker 1 at its in-flight limit and broker 2 backing off,
        // leastLoadedNode opened a connection to broker 3 for the metadata
        // request, which waits for it (no second connect alongside).
        let Some(c3) = connecting_3.get() else {
            panic!("a connect to broker 3 for metadata")
        };
        let (_, asked) = step(1_053, "broker 3 accepts", &move |p, ctx| {
            p.on_message(ctx, Message::Connected { id: c3, broker: 3 })
        });
        // Metadata names partition 2's leader.
        let Some((meta, _)) = asked else {
            panic!("partition 2's missing leader asked for metadata")
        };
        step(1_060, "metadata names a leader", &move |p, ctx| {
            p.on_message(
                ctx,
                Message::MetadataResponse {
                    id: meta,
                    partitions: vec![PartitionMetadata {
                        partition: 2,
                        leader: Some(2),
                        leader_epoch: 5,
                    }],
                    offline: Vec::new(),
                },
            )
        });
        // Both backoffs have passed: both connections are tried again, and
        // both brokers accept; partitions 1 and 2 go to broker 2.
        let (e, _) = step(2_000, "woken after the backoffs", &|p, ctx| {
            p.on_timer(ctx, Timer::Send)
        });
        let (c1, c2) = (connect(&e, 1), connect(&e, 2));
        step(2_100, "broker 1 accepts again", &move |p, ctx| {
            p.on_message(ctx, Message::Connected { id: c1, broker: 1 })
        });
        let (e, _) = step(2_101, "broker 2 accepts", &move |p, ctx| {
            p.on_message(ctx, Message::Connected { id: c2, broker: 2 })
        });
        let to_2 = e.0.iter().find_map(|(_, m)| match m {
            Message::Produce { batches, .. } => {
                Some(batches.iter().map(|b| b.partition).collect::<Vec<_>>())
            }
            _ => None,
        });
        assert_eq!(to_2, Some(vec![1, 2]), "the leader metadata named");
        // Broker 1's connection closes while partition 0 waits for its slot.
        step(2_200, "broker 1 closes the connection", &|p, ctx| {
            p.on_message(ctx, Message::ConnectionClosed { broker: 1 })
        });
        step(2_201, "woken after that close", &|p, ctx| {
            p.on_timer(ctx, Timer::Send)
        });
        // Partition 3's batch reaches delivery.timeout.ms while parked;
        // later deadlines are parked after it.
        for t in (3_000..31_000)
            .step_by(1_000)
            .chain([31_001, 31_005, 32_000, 40_000])
        {
            step(t, "time passes", &|p, ctx| p.on_timer(ctx, Timer::Send));
        }

        step(40_500, "partition 2 moves to broker 1", &|p, ctx| {
            p.set_leader(2, (Some(1), 6));
            p.pump(ctx)
        });
        for why in [Blocked::NoLeader, Blocked::NotReady, Blocked::InFlightFull] {
            assert!(parked_seen.contains(&why), "{why:?} was exercised");
        }
        assert!(
            a.stats.failed_ids.contains(&3),
            "partition 3's batch expired unsent"
        );
    }

    /// Parking is what saves the rescans (see [`Parked`]): a pump() in
    /// which nothing could have lifted a parked partition's block (nothing
    /// touched it, no connection changed state, no deadline or reconnect
    /// time reached) leaves it out of its scan. To see whether the scan
    /// looked at it, its leader is put in the cache behind the producer's
    /// back (no wake): a pump that scanned it would send its batch. A wake
    /// (`set_leader`) then brings it back. (Waking every parked partition
    /// on every pump changes nothing else a test can see: the equivalence
    /// test above cannot tell.)
    #[test]
    fn a_parked_partition_stays_out_of_the_scan_until_something_wakes_it() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        p.forget_leaders();
        let out = sent(&mut world, 100, |ctx| {
            p.send(ctx, 0, vec![1], Acks::All, false);
            p.pump(ctx);
        });
        assert!(produces(&out).is_empty(), "no leader known: {out:?}");
        let parked = |p: &Producer| p.partitions.get(&0).and_then(|s| s.parked);
        assert_eq!(parked(&p), Some(Blocked::NoLeader));
        assert!(!p.queued.contains(&0));
        let connections = format!("{:?}", p.connections);
        // Behind its back: a scan of partition 0 would now send.
        p.metadata.insert(0, (Some(1), 4));
        let out = sent(&mut world, 200, |ctx| p.pump(ctx));
        assert_eq!(
            format!("{:?}", p.connections),
            connections,
            "no connection changed"
        );
        assert!(produces(&out).is_empty(), "not rescanned: {out:?}");
        assert_eq!(parked(&p), Some(Blocked::NoLeader), "still parked");
        // A wake: the next pump scans it and sends.
        p.set_leader(0, (Some(1), 4));
        assert_eq!(parked(&p), None);
        let out = sent(&mut world, 300, |ctx| p.pump(ctx));
        assert_eq!(produces(&out).len(), 1, "{out:?}");
    }

    /// A connect that a later partition's `ready` starts in the same scan in
    /// which an earlier partition was parked: the broker's accepting that
    /// connect must wake the partition parked waiting for it (it is on its
    /// leader's `NotReady` list), or it stays parked. (Written when parking
    /// compared a count of connection changes; it now guards the per-leader
    /// lists.)
    #[test]
    fn a_connect_begun_after_the_first_park_of_a_scan_still_wakes_on_connected() {
        let mut world = TestWorld::one_partition();
        let mut p = producer(&[]);
        second_partition(&mut world, &mut p);
        p.forget_leader(0);
        p.set_leader(1, (Some(2), 4));
        // Broker 2's connection goes down; it may be tried again well
        // before 1 s (reconnect.backoff.ms).
        p.connections.close(0, 2);
        let out = sent(&mut world, 10, |ctx| {
            p.send(ctx, 1, vec![1], Acks::All, false)
        });
        assert!(produces(&out).is_empty(), "broker 2 backing off: {out:?}");
        world.at(20, |ctx| p.send(ctx, 0, vec![2], Acks::All, false));
        let parked = |p: &Producer, q: PartitionIndex| p.partitions.get(&q).and_then(|s| s.parked);
        assert_eq!(parked(&p, 0), Some(Blocked::NoLeader));
        assert_eq!(parked(&p, 1), Some(Blocked::NotReady));
        // After the backoff: both woken; in one scan partition 0 is parked
        // first, then partition 1's `ready` connects to broker 2.
        let out = sent(&mut world, 1_000, |ctx| p.on_timer(ctx, Timer::Send));
        let Some(id) = out.iter().find_map(|(n, m)| match (n, m) {
            (Node::Broker(2), Message::Connect { id }) => Some(*id),
            _ => None,
        }) else {
            panic!("a connect to broker 2: {out:?}")
        };
        assert_eq!(parked(&p, 0), Some(Blocked::NoLeader));
        assert_eq!(parked(&p, 1), Some(Blocked::NotReady));
        // Broker 2 accepts: partition 1's batch goes out at once.
        let out = sent(&mut world, 1_010, |ctx| {
            p.on_message(ctx, Message::Connected { id, broker: 2 })
        });
        let sent_to: Vec<(Node, Vec<u64>)> = produces(&out)
            .into_iter()
            .map(|(_, to, records)| (to, records.into_iter().map(|(id, _)| id).collect()))
            .collect();
        assert_eq!(sent_to, [(Node::Broker(2), vec![1])], "{out:?}");
        assert_eq!(parked(&p, 1), None);
    }
}
