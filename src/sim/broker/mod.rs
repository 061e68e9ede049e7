//! A broker: its replicas, its replica fetchers, and how it answers requests.
//!
//! - It registers with the controller, heartbeats every
//!   `broker.heartbeat.interval.ms`, and replays the metadata log to learn
//!   which replicas it leads or follows (KAFKA_REPLICATION.md §5, "Propagation").
//! - As a follower it pulls from each leader with one long-polling Fetch per
//!   leader broker (a fetcher thread), carrying `CurrentLeaderEpoch` and
//!   `LastFetchedEpoch`, and truncates on a `DivergingEpoch` answer (§1, §7).
//! - As a leader it answers Produce (acks, min.insync.replicas, idempotence,
//!   §4) and Fetch (epoch fencing, diverging epoch, HW advance, ISR expand, §1–3),
//!   shrinks the ISR every `replica.lag.time.max.ms / 2`, and asks the
//!   controller to change the ISR with AlterPartition (KIP-497).
//! - Follower fetching (KIP-392): with `replica.selector.class` set to the
//!   rack-aware selector, a leader answers a consumer whose `client.rack`
//!   matches an in-sync follower's `broker.rack` with that follower as its
//!   preferred read replica, and no records; a follower serves a consumer in
//!   its own leader epoch from its own log, below its own high watermark.
//!
//! A process crash keeps the log (page cache survives) but loses everything in
//! memory; the high watermark comes back from the last checkpoint. A power loss
//! also loses records not yet flushed (`log.flush.interval.ms`, else the OS's
//! write-back, modelled by `sim.os.flush.interval.ms`).
//!
//! One file per seam, as Kafka divides it: `requests` (Produce and Fetch
//! handling and the purgatory), `fetcher` (the replica fetcher), `metadata`
//! (the metadata publisher), `isr` (ISR shrink and AlterPartition); this file
//! holds the broker's state, its lifecycle and the dispatch of timers and
//! messages.

#[cfg(group_protocols)]
pub mod classic_group;
#[cfg(group_protocols)]
pub mod consumer_group;
pub mod coordinator;
mod fetcher;
mod isr;
mod metadata;
mod requests;

use crate::sim::client::connection::Connections;
use std::rc::Rc;

use crate::sim::shared::{Pages, Scratch, Spare};

use serde::Serialize;

use super::followers::FollowerTable;
use super::io::{Ctx, Timer};
use super::log::Record;
use super::partition::{Replica, Role};
use super::pmap::{DenseMap, PartitionMap, SparseWaiters, VecMap, Waiters};
use super::protocol::*;
use super::time::BoxPool;
use super::trace::{list, TraceKind};

/// `replica.socket.timeout.ms` (30 s): how long a fetcher waits for an answer.
pub const REPLICA_SOCKET_TIMEOUT_MS: u64 = 30_000;
/// How long the leader waits before re-sending an unanswered AlterPartition.
pub const ALTER_PARTITION_RETRY_MS: u64 = 5_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum Process {
    Running,
    Crashed,
    PoweredOff,
    ShutDown,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct ParkedFetch {
    from: Node,
    id: u64,
    replica: Option<BrokerId>,
    broker_epoch: u64,
    partitions: Vec<FetchPartition>,
    /// The consumer's `client.rack` (empty for followers and rackless consumers).
    rack_id: String,
    /// A follower's position was recorded when the fetch was parked: its
    /// completion must not record it a second time (Kafka updates the
    /// follower's fetch state once per request, on the first read).
    positions_recorded: bool,
}

impl ParkedFetch {
    /// What an emptied box of the purgatory holds until the next fetch parks.
    const EMPTY: ParkedFetch = ParkedFetch {
        from: Node::Controller,
        id: 0,
        replica: None,
        broker_epoch: 0,
        partitions: Vec::new(),
        rack_id: String::new(),
        positions_recorded: false,
    };
}

/// Put parked fetch `key` on the list of each partition it names (that
/// this broker hosts), at the end: where `handle_fetch` parks it, and where
/// a restored checkpoint's index is built again.
#[inline(never)]
fn wait_on(
    waiters: &mut Waiters,
    replicas: &PartitionMap<Replica>,
    key: u64,
    parked: &ParkedFetch,
) {
    for fp in &parked.partitions {
        if let Some(s) = replicas.slot_of(fp.partition) {
            waiters.push(s, key);
        }
    }
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct ParkedProduce {
    from: Node,
    id: u64,
    /// Per partition: the offset the HW must reach, and the answer once known.
    waiting: Vec<(PartitionIndex, u64, u64)>,
    done: Vec<ProducePartitionResponse>,
    /// What the request was, and so how it is answered.
    answer: ParkedAnswer,
}

/// The request a parked wait for the high watermark answers.
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
enum ParkedAnswer {
    /// A client's Produce: a ProduceResponse.
    Produce,
    /// The coordinator's own append of an OffsetCommit: an
    /// OffsetCommitResponse.
    Commit(coordinator::PendingCommit),
    /// A stable OffsetFetch (require_stable, as every Kafka consumer sends
    /// it): answered with the group's offsets once the offsets partition's
    /// high watermark covers everything the coordinator had written when it
    /// arrived (GroupCoordinatorService.fetchOffsets runs it as a write
    /// operation without records).
    StableOffsetFetch {
        group: std::rc::Rc<str>,
        partitions: Vec<PartitionIndex>,
    },
}

/// The broker's lifecycle states as its BrokerLifecycleManager has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum Lifecycle {
    /// Registering, then replaying the metadata log: heartbeats every 10 ms.
    Starting,
    /// Caught up; asks to be unfenced at once.
    Recovery,
    Running,
    PendingControlledShutdown,
}

/// Heartbeats while starting come 10 ms apart (BrokerLifecycleManager).
const STARTING_HEARTBEAT_MS: u64 = 10;
/// The first heartbeat after a controlled shutdown began comes 50 ms later.
const FIRST_SHUTDOWN_HEARTBEAT_MS: u64 = 50;

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Broker {
    pub id: BrokerId,
    pub process: Process,
    pub incarnation: u32,
    pub broker_epoch: u64,
    pub registered: bool,
    /// As last told by the controller's heartbeat response.
    pub fenced: bool,
    /// The socket server takes connections: from the first time the
    /// controller unfences this incarnation on (BrokerServer.startup enables
    /// request processing only after that), until the process ends.
    pub accepting: bool,
    pub want_shutdown: bool,
    pub clean_shutdown: bool,
    pub metadata_offset: u64,
    /// The metadata thread is busy applying until then (µs; `sim.broker.*`).
    metadata_busy_until_us: u64,
    /// Records up to here have had their apply work charged.
    metadata_costed_to: u64,
    /// Metadata cache for client requests: leader and epoch per partition.
    /// In pages shared with snapshots (it changes only with metadata).
    pub meta_leaders: Pages<(Option<BrokerId>, u32), META_PAGE>,
    /// Fenced / shutting-down brokers as this broker's metadata says.
    pub meta_ineligible: Vec<BrokerId>,
    /// The broker epoch of each registered broker as this broker's metadata
    /// says (KRaftMetadataCache.getAliveBrokerEpoch), by broker id.
    pub meta_broker_epochs: Vec<(BrokerId, u64)>,
    /// Fenced brokers as this broker's metadata says (a broker in
    /// controlled shutdown is not fenced): with `meta_broker_epochs`,
    /// KRaftMetadataCache.getAliveBrokerEpoch.
    pub meta_fenced: Vec<BrokerId>,
    pub replicas: PartitionMap<Replica>,
    /// What each replica this broker leads knows of its followers, by the
    /// replica's `lanes` (dense pages shared with snapshots, issue 27).
    pub followers: FollowerTable,
    /// The Fetch in flight to each leader broker (by broker id): its id and
    /// the (partition, leader epoch) pairs it asked for.
    fetch_in_flight: DenseMap<(u64, Vec<(PartitionIndex, u32)>)>,
    /// The replica fetcher's connections to leaders, once one has been
    /// closed (`None` until then: every connection is up). A fetch that
    /// timed out closes its connection (NetworkClient), and the next fetch
    /// to that leader connects first: across a network partition the
    /// attempt is never answered and gives up after
    /// `socket.connection.setup.timeout.ms`, then connects again at once
    /// (ReplicaFetcherBlockingSend: no reconnect backoff), so a healed
    /// broker fetches again within one set-up timeout.
    fetch_connections: Option<Box<Connections>>,
    /// Boxed: parked fetches (one per follower broker) complete in any
    /// order, and removing one from the middle of the sorted vector moves
    /// every later entry; a box keeps that move to 16 bytes an entry.
    parked_fetches: VecMap<u64, Box<ParkedFetch>>,
    /// Parked fetches per hosted partition, by the replica's slot. Not in
    /// shared pages: its lists change every fetch round, and a page copied
    /// for one of them left the snapshot holding the others' grown buffers
    /// (tour 11: 1.4 MB kept per 250 ms against 0.4 MB).
    fetch_waiters: Waiters,
    parked_produces: VecMap<u64, ParkedProduce>,
    /// The partitions of `__consumer_offsets` this broker leads, and the
    /// groups it has loaded from them (`coordinator.rs`).
    pub coordinator: VecMap<PartitionIndex, coordinator::Shard>,
    /// Parked produces per hosted partition, by the replica's slot (few at
    /// any moment: only those are kept).
    produce_waiters: SparseWaiters,
    registration_in_flight: bool,
    /// BrokerLifecycleManager: where in its start-up (or shutdown) it is.
    pub lifecycle: Lifecycle,
    /// The live `Timer::Heartbeat` (rescheduling replaces the previous one).
    comm_seq: u64,
    /// When the process last started: a running broker heartbeats on a grid
    /// anchored there.
    started_ms: u64,
    /// In controlled shutdown: the controller has answered once already.
    got_shutdown_response: bool,
    /// How far it has read the metadata log while starting, before applying
    /// any of it to its replicas (BrokerServer installs its metadata
    /// publishers only once the controller says it has caught up).
    replayed_offset: u64,
    /// Partitions this broker's fetcher skips (the `slow` fault).
    pub slow_partitions: Vec<PartitionIndex>,
    /// Followed partitions per leader, in partition order (a cache of the
    /// replicas' roles, rebuilt when a role or leader changes), so a fetch
    /// response costs the partitions of one leader, not of the whole broker.
    /// Shared with snapshots: it changes only with roles, not every round
    /// (0.43 MB a checkpoint of the large bench copied).
    followed: Rc<VecMap<BrokerId, Vec<PartitionIndex>>>,
    followed_stale: bool,
    /// The leaders `send_fetches` must look at next time, beyond those it
    /// skips because a fetch to them is in flight: every followed leader
    /// with no fetch in flight is here (or `fetch_all` is set). Those it
    /// found idle and did not fetch from, and those whose fetch ended since
    /// (answered, failed, timed out). Unsorted, few (usually one).
    fetch_idle: Vec<BrokerId>,
    /// `send_fetches` looks at every followed leader next time (the
    /// followed set changed, or the process started).
    fetch_all: bool,
    /// Emptied buffers of the fetch path, reused instead of allocated anew.
    spares: Scratch<Spares>,
}

/// Emptied buffers of the fetch path (a fetch's partitions, a response's
/// partitions and the records of each, the epochs a fetch asked for, the
/// partitions a response changed, the boxes of parked fetches) and of the
/// purgatories (the partitions a parked produce waits on, the keys of the
/// requests parked on a partition while they are woken), kept for
/// the next request: every broker both sends and answers fetches, so what
/// one side frees the other reuses, and a steady run allocates none of them
/// per event. They hold no state: the broker keeps them in a `shared::Scratch`,
/// so a checkpoint starts without any.
#[derive(Default)]
struct Spares {
    fetch_parts: Spare<FetchPartition>,
    responses: Spare<FetchPartitionResponse>,
    records: Spare<Record>,
    sent: Spare<(PartitionIndex, u32)>,
    changed: Vec<PartitionIndex>,
    /// The replica fetcher's list of idle leaders, while it walks the last one.
    leaders: Vec<BrokerId>,
    parked: BoxPool<ParkedFetch>,
    waiting: Spare<(PartitionIndex, u64, u64)>,
    keys: Spare<u64>,
    /// The broker's index of parked fetches while a checkpoint copies the
    /// broker (`Broker::set_fetch_waiters_aside`): out of the copy's way.
    lent_fetch_waiters: Waiters,
}

/// Metadata-cache entries per shared page (8 bytes each).
const META_PAGE: usize = 512;

/// The metadata cache's pages as the broker furthest along left them, for
/// the others to share (issue 27: on the 20,000-partition bench every
/// broker held its own copy, 60 × 240 KB). A broker's cache is what the
/// metadata log's records up to its offset say (each start clears it and
/// replays from offset 0), so a broker that has applied the records up to
/// the same offset holds the same entries, and takes these pages in place of
/// its own. A cache reads exactly as it did.
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct MetaPages {
    leaders: Pages<(Option<BrokerId>, u32), META_PAGE>,
    /// The metadata offset `leaders` holds the records up to.
    offset: u64,
}

impl MetaPages {
    /// A broker's cache now holds the metadata up to `end`.
    fn share(&mut self, cache: &mut Pages<(Option<BrokerId>, u32), META_PAGE>, end: u64) {
        if end == self.offset && cache.len() == self.leaders.len() {
            debug_assert!(
                cache.iter().eq(self.leaders.iter()),
                "caches at {end} differ"
            );
            *cache = self.leaders.clone();
        } else if end > self.offset {
            self.leaders = cache.clone();
            self.offset = end;
        }
    }
}

impl Broker {
    pub fn new(id: BrokerId, partitions: usize) -> Self {
        Broker {
            id,
            process: Process::ShutDown,
            incarnation: 0,
            broker_epoch: 0,
            registered: false,
            fenced: true,
            accepting: false,
            want_shutdown: false,
            clean_shutdown: true,
            metadata_offset: 0,
            meta_leaders: Pages::filled(partitions, (None, 0)),
            meta_ineligible: Vec::new(),
            meta_broker_epochs: Vec::new(),
            meta_fenced: Vec::new(),
            replicas: PartitionMap::new(),
            followers: FollowerTable::default(),
            fetch_in_flight: DenseMap::new(),
            fetch_connections: None,
            parked_fetches: VecMap::new(),
            fetch_waiters: Waiters::default(),
            parked_produces: VecMap::new(),
            coordinator: Default::default(),
            produce_waiters: SparseWaiters::default(),
            registration_in_flight: false,
            lifecycle: Lifecycle::Starting,
            comm_seq: 0,
            started_ms: 0,
            got_shutdown_response: false,
            replayed_offset: 0,
            metadata_busy_until_us: 0,
            metadata_costed_to: 0,
            slow_partitions: Vec::new(),
            followed: Rc::default(),
            followed_stale: true,
            fetch_idle: Vec::new(),
            fetch_all: true,
            spares: Scratch::default(),
        }
    }

    /// Give this broker a replica of partition `p` (when the cluster is built).
    pub fn host(&mut self, p: PartitionIndex, replica: Replica) {
        self.replicas.insert(p, replica);
        self.fetch_waiters.resize(self.replicas.len());
        self.produce_waiters.resize(self.replicas.len());
    }

    /// The index of parked fetches by partition (by the replica's slot).
    pub fn fetch_waiters(&self) -> &Waiters {
        &self.fetch_waiters
    }

    /// Put the index of parked fetches by partition (`fetch_waiters`) aside
    /// while a checkpoint copies the broker, so the copy has none, and back
    /// afterwards (a second call). It follows from the parked fetches
    /// themselves, and [`Broker::rebuild_fetch_waiters`] builds it again on
    /// restore. On the 20,000-partition bench it is a pair of ids for each
    /// of the 60,000 replicas, 0.96 MB that every checkpoint copied (issue
    /// 27). Aside, it waits among the spares, which a copy starts without.
    pub fn set_fetch_waiters_aside(&mut self) {
        std::mem::swap(
            &mut self.fetch_waiters,
            &mut self.spares.0.lent_fetch_waiters,
        );
    }

    /// The index of parked fetches by partition, from the fetches: each is
    /// on the list of every partition it names (all hosted here: a fetch
    /// naming another is answered at once, and hosting only grows), and
    /// ids only grow, so pushing them in id order gives every list, and the
    /// side list, the order they were parked in.
    pub fn rebuild_fetch_waiters(&mut self) {
        // A checkpoint's copy of the broker has none (`set_fetch_waiters_aside`).
        debug_assert_eq!(self.fetch_waiters, Waiters::default());
        self.fetch_waiters.resize(self.replicas.len());
        for (key, parked) in self.parked_fetches.iter() {
            wait_on(&mut self.fetch_waiters, &self.replicas, *key, parked);
        }
    }

    /// Take the keys of the produces parked on partition `p`, in a buffer
    /// from the spares (give it back with `Spare::put`). A wake of parked
    /// fetches reads its list in place instead (`wake_fetches`).
    fn take_produce_waiters(&mut self, p: PartitionIndex) -> Vec<u64> {
        let mut keys = self.spares.0.keys.take();
        if let Some(s) = self.replicas.slot_of(p) {
            self.produce_waiters.take(s, &mut keys);
        }
        keys
    }

    /// Whether `timer`, set by incarnation `incarnation` of this broker, can
    /// still do anything when it fires. Timers of an earlier incarnation never
    /// run; a fetch timeout for a fetch already answered, or the expiry of a
    /// delayed fetch or produce already completed, is a no-op (ids are never
    /// reused). The cluster drops such timers from its queue.
    pub fn timer_live(&self, incarnation: u32, timer: &Timer) -> bool {
        if !self.is_running() || incarnation != self.incarnation {
            return false;
        }
        match timer {
            Timer::FetchTimeout { leader, id } => self
                .fetch_in_flight
                .get(&(*leader as usize))
                .is_some_and(|f| f.0 == *id),
            Timer::DelayedFetchExpire { id } => self.parked_fetches.contains_key(id),
            Timer::DelayedProduceExpire { id } => self.parked_produces.contains_key(id),
            Timer::Heartbeat { seq } => *seq == self.comm_seq,
            _ => true,
        }
    }

    pub fn is_running(&self) -> bool {
        self.process == Process::Running
    }

    fn node(&self) -> Node {
        Node::Broker(self.id)
    }

    /// Start (or restart) the process: forget everything in memory, keep the
    /// log, and register after the start-up ([`Self::startup_ms`]).
    pub fn start(&mut self, ctx: &mut Ctx) {
        let startup = self.startup_ms(ctx.config);
        self.start_with(ctx, startup);
    }

    fn start_with(&mut self, ctx: &mut Ctx, startup: u64) {
        self.process = Process::Running;
        self.incarnation += 1;
        self.broker_epoch = 0;
        self.registered = false;
        self.fenced = true;
        self.accepting = false;
        self.want_shutdown = false;
        self.lifecycle = Lifecycle::Starting;
        self.started_ms = ctx.now;
        self.got_shutdown_response = false;
        self.replayed_offset = 0;
        self.metadata_offset = 0;
        self.metadata_busy_until_us = 0;
        self.metadata_costed_to = 0;
        self.meta_leaders = Pages::filled(self.meta_leaders.len(), (None, 0));
        self.meta_ineligible.clear();
        self.meta_broker_epochs.clear();
        self.meta_fenced.clear();
        self.fetch_in_flight.clear();
        self.fetch_idle.clear();
        self.fetch_all = true;
        self.fetch_connections = None;
        self.parked_fetches.clear();
        self.fetch_waiters.clear();
        self.parked_produces.clear();
        self.coordinator.clear();
        self.produce_waiters.clear();
        // What the old process knew of its followers is gone with it (each
        // replica below starts with no lanes).
        self.followers = FollowerTable::default();
        for r in self.replicas.values_mut() {
            // The HW lives in memory; a restart reads the last checkpoint.
            r.log.high_watermark = r
                .log
                .checkpointed_high_watermark
                .min(r.log.log_end_offset());
            *r = Replica {
                replicas: std::mem::take(&mut r.replicas),
                log: std::mem::take(&mut r.log),
                ..Replica::new(r.partition, &[])
            };
            self.followed_stale = true;
        }
        // The start-up before the broker asks to register (JVM, loading its
        // logs, recovering them after an unclean shutdown): a timer, so the
        // process is alive (its replicas keep their logs) but talks to no one
        // until then. (A broker already running at t=0 has none: `bootstrap`.)
        if startup == 0 {
            self.send_registration(ctx);
        } else {
            self.schedule_communication(ctx, startup);
        }
        ctx.after(ctx.config.replica_lag_time_max_ms / 2, Timer::IsrCheck);
        ctx.after(
            ctx.config.replica_high_watermark_checkpoint_interval_ms,
            Timer::HighWatermarkCheckpoint,
        );
        ctx.after(ctx.config.flush_interval_ms, Timer::Flush);
    }

    /// How long this start takes before the broker registers:
    /// `sim.broker.startup.ms`, plus `sim.broker.log.recovery.ms` when the
    /// last process did not shut down cleanly.
    pub fn startup_ms(&self, config: &super::config::ClusterConfig) -> u64 {
        config.broker_startup_ms
            + if self.clean_shutdown {
                0
            } else {
                config.broker_log_recovery_ms
            }
    }

    /// Start as part of a cluster that is already running at t=0: registered
    /// with `broker_epoch`, unfenced, and caught up with the metadata log
    /// (see `Controller::bootstrap_broker`).
    pub fn bootstrap(&mut self, ctx: &mut Ctx, broker_epoch: u64) {
        self.start_with(ctx, 0);
        ctx.sends
            .retain(|(_, m)| !matches!(m, Message::BrokerRegistration { .. }));
        self.registration_in_flight = false;
        self.registered = true;
        self.broker_epoch = broker_epoch;
        self.fenced = false;
        self.accepting = true;
        self.lifecycle = Lifecycle::Running;
        // Already running: the work of applying it was done before t=0.
        self.apply_metadata_now(ctx, ctx.metadata.len() as u64);
    }

    fn send_registration(&mut self, ctx: &mut Ctx) {
        self.registration_in_flight = true;
        ctx.send(
            Node::Controller,
            Message::BrokerRegistration {
                broker: self.id,
                clean_shutdown: self.clean_shutdown,
                incarnation: self.incarnation,
            },
        );
        // Unanswered (the controller is unreachable): try again a heartbeat
        // interval later. An answer reschedules before then.
        self.schedule_communication(ctx, ctx.config.broker_heartbeat_interval_ms);
    }

    /// The next registration or heartbeat, replacing any scheduled one
    /// (BrokerLifecycleManager.scheduleNextCommunication).
    fn schedule_communication(&mut self, ctx: &mut Ctx, delay_ms: u64) {
        self.comm_seq += 1;
        ctx.after(delay_ms, Timer::Heartbeat { seq: self.comm_seq });
    }

    /// After a failed registration or heartbeat, try again one
    /// broker.heartbeat.interval.ms later: Kafka 4.4.0's
    /// BrokerLifecycleManager.scheduleNextCommunicationAfterFailure
    /// (kafka-server-4.4.0.jar) schedules `brokerHeartbeatIntervalMs`, where
    /// the 2024 trunk snapshot (1eb7644) still backed off exponentially
    /// (ExponentialBackoff(100, 2, session timeout)). A restart refused with
    /// DUPLICATE_BROKER_REGISTRATION so registers within a heartbeat
    /// interval of the old session's end, as the recordings show.
    fn schedule_after_failure(&mut self, ctx: &mut Ctx) {
        self.schedule_communication(ctx, ctx.config.broker_heartbeat_interval_ms.max(1));
    }

    /// A running broker heartbeats on a fixed grid, every
    /// broker.heartbeat.interval.ms from the moment its process started:
    /// Kafka schedules the next one an interval after the answer, which
    /// drifts by one round trip per beat; the lab keeps the grid so timings
    /// read cleanly (README, "What stays simplified").
    fn schedule_next_heartbeat(&mut self, ctx: &mut Ctx) {
        let interval = ctx.config.broker_heartbeat_interval_ms.max(1);
        let elapsed = ctx.now.saturating_sub(self.started_ms);
        let due = self.started_ms + (elapsed / interval + 1) * interval;
        self.schedule_communication(ctx, due - ctx.now);
    }

    /// Process death. Parked requests die with it: their connections reset.
    pub fn crash(&mut self, ctx: &mut Ctx, power_loss: bool) -> u64 {
        self.process = if power_loss {
            Process::PoweredOff
        } else {
            Process::Crashed
        };
        self.clean_shutdown = false;
        if !power_loss {
            self.reset_parked_connections(ctx);
        }
        let mut lost = 0;
        if power_loss {
            for r in self.replicas.values_mut() {
                let removed = r.log.lose_unflushed();
                lost += removed.len() as u64;
                ctx.touch(r.partition);
            }
        }
        lost
    }

    /// The process is gone: every parked request's connection resets.
    fn reset_parked_connections(&mut self, ctx: &mut Ctx) {
        let me = self.node();
        // The index goes with the fetches it points to (the next start would
        // clear it anyway): it is always what `rebuild_fetch_waiters` makes.
        self.fetch_waiters.clear();
        let parked = std::mem::take(&mut self.parked_produces)
            .into_values()
            .map(|p| (p.from, p.id))
            .chain(
                std::mem::take(&mut self.parked_fetches)
                    .into_values()
                    .map(|f| (f.from, f.id)),
            );
        for (from, id) in parked {
            ctx.send(from, Message::Disconnected { id, to: me });
        }
    }

    /// A clean stop: flush and checkpoint, as Kafka does on controlled shutdown.
    pub fn stop_cleanly(&mut self, ctx: &mut Ctx) {
        self.replicas.change_where(
            |r| r.log.needs_flush() || r.log.needs_high_watermark_checkpoint(),
            |r| {
                r.log.flush();
                r.log.checkpoint_high_watermark();
            },
        );
        self.process = Process::ShutDown;
        self.clean_shutdown = true;
        self.reset_parked_connections(ctx);
        ctx.trace(
            TraceKind::BrokerShutDown { broker: self.id },
            format!(
                "Broker {} finished its controlled shutdown: logs flushed, high watermarks checkpointed, process stopped.",
                self.id
            ),
        );
    }

    pub fn request_shutdown(&mut self, ctx: &mut Ctx) {
        let running = matches!(
            self.lifecycle,
            Lifecycle::Running | Lifecycle::PendingControlledShutdown
        );
        if !ctx.config.controlled_shutdown_enable || !self.registered || !running {
            // BrokerLifecycleManager skips controlled shutdown unless RUNNING.
            self.stop_cleanly(ctx);
            return;
        }
        self.want_shutdown = true;
        if self.lifecycle == Lifecycle::Running {
            self.lifecycle = Lifecycle::PendingControlledShutdown;
        }
        self.send_heartbeat(ctx);
    }

    fn send_heartbeat(&mut self, ctx: &mut Ctx) {
        ctx.send(
            Node::Controller,
            Message::BrokerHeartbeat {
                broker: self.id,
                broker_epoch: self.broker_epoch,
                metadata_offset: self.metadata_offset.max(self.replayed_offset),
                want_fence: self.lifecycle == Lifecycle::Starting,
                want_shutdown: self.want_shutdown,
            },
        );
        // Unanswered: the regular interval later (an answer reschedules).
        self.schedule_communication(ctx, ctx.config.broker_heartbeat_interval_ms);
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        match timer {
            Timer::Heartbeat { seq } if seq != self.comm_seq => {}
            Timer::Heartbeat { .. } => {
                if self.registered {
                    self.send_heartbeat(ctx);
                } else {
                    self.send_registration(ctx);
                }
            }
            Timer::IsrCheck => {
                self.shrink_isr_check(ctx);
                ctx.after(ctx.config.replica_lag_time_max_ms / 2, Timer::IsrCheck);
            }
            Timer::HighWatermarkCheckpoint => {
                self.replicas.change_where(
                    |r| r.log.needs_high_watermark_checkpoint(),
                    |r| r.log.checkpoint_high_watermark(),
                );
                ctx.after(
                    ctx.config.replica_high_watermark_checkpoint_interval_ms,
                    Timer::HighWatermarkCheckpoint,
                );
            }
            Timer::Flush => {
                self.replicas
                    .change_where(|r| r.log.needs_flush(), |r| r.log.flush());
                ctx.after(ctx.config.flush_interval_ms, Timer::Flush);
            }
            Timer::FetchTimeout { leader, id } => self.fetch_timed_out(ctx, leader, id),
            Timer::ConnectionSetupTimeout { broker, id } => {
                let closed = self
                    .fetch_connections
                    .as_deref_mut()
                    .is_some_and(|c| c.on_setup_timeout(ctx.now, broker, id));
                if closed {
                    self.send_fetches(ctx);
                }
            }
            Timer::FetchRetry => self.send_fetches(ctx),
            Timer::DelayedFetchExpire { id } => {
                if let Some(parked) = self.unpark_fetch(id) {
                    self.answer_fetch(ctx, parked, true);
                }
            }
            Timer::DelayedProduceExpire { id } => {
                if let Some(mut parked) = self.parked_produces.remove(&id) {
                    for (p, _, _) in std::mem::take(&mut parked.waiting) {
                        parked.done.push(ProducePartitionResponse {
                            partition: p,
                            result: Err(ErrorCode::RequestTimedOut),
                            current_leader: None,
                        });
                    }
                    self.answer_parked(ctx, parked);
                }
            }
            Timer::CoordinatorLoaded {
                partition,
                leader_epoch,
            } => self.coordinator_loaded(ctx, partition, leader_epoch),
            #[cfg(group_protocols)]
            Timer::GroupTick {
                partition,
                leader_epoch,
            } => self.group_tick(ctx, partition, leader_epoch),
            Timer::MetadataApplied { end } => self.apply_metadata_now(ctx, end),
            Timer::AlterPartitionRetry { partition, id } => {
                self.retry_alter_partition(ctx, partition, id)
            }
            _ => {}
        }
    }

    /// This broker's replica of `p` if it leads `p` in the epoch a client's
    /// request names; else the error a leader answers (a stale epoch is
    /// FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH).
    fn leader_in_epoch(&self, p: PartitionIndex, client_epoch: u32) -> Result<&Replica, ErrorCode> {
        match self.replicas.get(&p) {
            Some(r) if r.is_leader() => match client_epoch.cmp(&r.leader_epoch) {
                std::cmp::Ordering::Less => Err(ErrorCode::FencedLeaderEpoch),
                std::cmp::Ordering::Greater => Err(ErrorCode::UnknownLeaderEpoch),
                std::cmp::Ordering::Equal => Ok(r),
            },
            _ => Err(ErrorCode::NotLeaderOrFollower),
        }
    }

    pub fn on_message(&mut self, ctx: &mut Ctx, from: Node, msg: Message) {
        match msg {
            Message::BrokerRegistrationResponse { result } => {
                self.registration_in_flight = false;
                match result {
                    Ok(broker_epoch) => {
                        self.broker_epoch = broker_epoch;
                        self.registered = true;
                        // Registered: heartbeat at once.
                        self.send_heartbeat(ctx);
                    }
                    Err(_) => self.schedule_after_failure(ctx),
                }
            }
            Message::BrokerHeartbeatResponse {
                fenced,
                caught_up,
                shutdown_ok,
                metadata_end,
            } => {
                self.fenced = fenced;
                self.apply_metadata(ctx, metadata_end);
                if shutdown_ok && self.want_shutdown {
                    self.stop_cleanly(ctx);
                    return;
                }
                match self.lifecycle {
                    Lifecycle::Starting if caught_up => {
                        // Caught up with the metadata log; nothing to recover
                        // (the log is kept in memory), so it is ready to be
                        // unfenced and says so at once.
                        self.lifecycle = Lifecycle::Recovery;
                        let replayed = self.replayed_offset;
                        self.apply_metadata(ctx, replayed);
                        self.send_heartbeat(ctx);
                    }
                    Lifecycle::Starting => {
                        self.schedule_communication(ctx, STARTING_HEARTBEAT_MS);
                    }
                    Lifecycle::Recovery | Lifecycle::Running => {
                        if !fenced {
                            self.lifecycle = Lifecycle::Running;
                            self.accepting = true;
                        }
                        self.schedule_next_heartbeat(ctx);
                    }
                    Lifecycle::PendingControlledShutdown => {
                        if self.got_shutdown_response {
                            self.schedule_next_heartbeat(ctx);
                        } else {
                            self.got_shutdown_response = true;
                            self.schedule_communication(ctx, FIRST_SHUTDOWN_HEARTBEAT_MS);
                        }
                    }
                }
            }
            Message::MetadataPush { metadata_end } => self.apply_metadata(ctx, metadata_end),
            Message::Fetch {
                id,
                replica,
                broker_epoch,
                max_wait_ms,
                partitions,
                rack_id,
            } => {
                let parked = ParkedFetch {
                    from,
                    id,
                    replica,
                    broker_epoch,
                    partitions,
                    rack_id,
                    positions_recorded: false,
                };
                self.handle_fetch(ctx, parked, max_wait_ms);
            }
            Message::FetchResponse { id, partitions } => {
                if let Node::Broker(leader) = from {
                    self.handle_fetch_response(ctx, leader, id, partitions);
                }
            }
            Message::Produce {
                id,
                acks,
                timeout_ms,
                batches,
            } => self.handle_produce(ctx, from, id, acks, timeout_ms, batches),
            Message::ListOffsets {
                id,
                partition,
                current_leader_epoch,
                spec,
            } => {
                // Partition.fetchOffsetForTimestamp: only the leader answers,
                // in the epoch the client knows. For a read_uncommitted
                // consumer LATEST is the high watermark, in the current leader
                // epoch; EARLIEST the log start (0: the lab's logs are never
                // trimmed from the front) in the epoch that covers it; a time,
                // the first record at least that recent, in its own epoch,
                // and only if it is below the high watermark (else no offset).
                let result = self
                    .leader_in_epoch(partition, current_leader_epoch)
                    .map(|r| match spec {
                        OffsetSpec::Latest => Some((r.log.high_watermark, Some(r.leader_epoch))),
                        OffsetSpec::Earliest => Some((0, r.log.epochs().first().map(|e| e.0))),
                        OffsetSpec::Timestamp(t) => r
                            .log
                            .first_offset_at_or_after(t)
                            .filter(|(o, _)| *o < r.log.high_watermark)
                            .map(|(o, e)| (o, Some(e))),
                    });
                ctx.send(
                    from,
                    Message::ListOffsetsResponse {
                        id,
                        partition,
                        result,
                    },
                );
            }
            Message::FindCoordinator { id, group } => {
                self.handle_find_coordinator(ctx, from, id, &group)
            }
            Message::OffsetFetch {
                id,
                group,
                partitions,
            } => self.handle_offset_fetch(ctx, from, id, &group, &partitions),
            Message::OffsetCommit {
                id,
                group,
                offsets,
                member,
            } => self.handle_offset_commit(ctx, from, id, &group, offsets, member),
            #[cfg(group_protocols)]
            Message::JoinGroup { id, join } => self.handle_join_group(ctx, from, id, *join),
            #[cfg(group_protocols)]
            Message::LeaveGroup { group, member_id } => {
                self.handle_leave_group(ctx, &group, &member_id)
            }
            #[cfg(group_protocols)]
            Message::ConsumerHeartbeat { id, hb } => {
                self.handle_consumer_heartbeat(ctx, from, id, *hb)
            }
            #[cfg(group_protocols)]
            Message::SyncGroup {
                id,
                group,
                generation,
                member_id,
                assignments,
            } => self.handle_sync_group(ctx, from, id, &group, generation, &member_id, assignments),
            #[cfg(group_protocols)]
            Message::GroupHeartbeat {
                id,
                group,
                generation,
                member_id,
            } => self.handle_group_heartbeat(ctx, from, id, &group, generation, &member_id),
            Message::Metadata { id } => {
                let partitions = self
                    .meta_leaders
                    .iter()
                    .enumerate()
                    .map(|(p, (leader, epoch))| PartitionMetadata {
                        partition: p,
                        leader: *leader,
                        leader_epoch: *epoch,
                    })
                    .collect();
                let offline = self.meta_ineligible.clone();
                ctx.send(
                    from,
                    Message::MetadataResponse {
                        id,
                        partitions,
                        offline,
                    },
                );
            }
            Message::OffsetsForLeaderEpoch {
                id,
                partition,
                current_leader_epoch,
                leader_epoch,
            } => {
                let result = self
                    .leader_in_epoch(partition, current_leader_epoch)
                    .map(|r| r.log.end_offset_for(leader_epoch));
                ctx.send(
                    from,
                    Message::OffsetsForLeaderEpochResponse {
                        id,
                        partition,
                        result,
                    },
                );
            }
            Message::AlterPartitionResponse {
                id,
                partition,
                result,
            } => self.handle_alter_partition_response(ctx, id, partition, result),
            Message::Connected { id, broker } => {
                let up = self
                    .fetch_connections
                    .as_deref_mut()
                    .is_some_and(|c| c.on_connected(broker, id));
                if up {
                    self.send_fetches(ctx);
                }
            }
            Message::Disconnected {
                id,
                to: Node::Broker(leader),
            } => self.fetch_disconnected(ctx, leader, id),
            _ => {}
        }
    }

    pub fn role_of(&self, p: PartitionIndex) -> Role {
        self.replicas.get(&p).map_or(Role::Unknown, |r| r.role)
    }

    pub fn isr_text(&self, p: PartitionIndex) -> String {
        self.replicas
            .get(&p)
            .map_or(String::new(), |r| list(&r.isr))
    }
}

pub fn trace_truncation(
    ctx: &mut Ctx,
    broker: BrokerId,
    p: PartitionIndex,
    from: u64,
    to: u64,
    removed: &[Record],
    reason: String,
) {
    let tp = ctx.tp(p);
    let n = removed.len();
    ctx.touch(p);
    ctx.trace(
        TraceKind::Truncated {
            broker,
            topic: ctx.partitions[p].topic.clone(),
            partition: ctx.partitions[p].partition,
            from_offset: from,
            to_offset: to,
            records: removed.iter().map(|r| r.id).collect(),
            reason: reason.clone(),
        },
        format!(
            "Broker {broker} truncated {tp} from LEO {from} to {to}, removing {n} record{}: {reason}.",
            if n == 1 { "" } else { "s" }
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::Acks;
    use crate::sim::io::TestWorld;

    /// Partition.appendRecordsToLeader tries to advance the high watermark
    /// after every append, a duplicate of an idempotent batch included: by
    /// then a follower outside the ISR may no longer count as caught up, and
    /// the duplicate is the only event that could move the HW.
    #[test]
    fn a_duplicate_idempotent_append_still_advances_the_high_watermark() {
        let mut world = TestWorld::one_partition();
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        b.meta_broker_epochs = vec![(2, 2), (3, 3)];
        let reg = registration(1, 0, &[1, 2]);
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_leader(&mut b.followers, 1, &reg, 0);
        }
        world.at(10, |ctx| {
            let _ = b.append_as_leader(ctx, 0, Acks::All, &idempotent_batch(0, 3));
        });
        // Follower 3, outside the ISR, catches up to offset 3 at 50 ms.
        if let Some(r) = b.replicas.get_mut(&0) {
            r.record_follower_fetch(&mut b.followers, 3, 3, 3, 50);
        }
        world.at(100, |ctx| {
            let _ = b.append_as_leader(ctx, 0, Acks::All, &idempotent_batch(3, 2));
        });
        // Follower 2 (ISR) reaches 5; follower 3, caught up within the lag
        // time, still holds the HW at 3.
        if let Some(r) = b.replicas.get_mut(&0) {
            r.record_follower_fetch(&mut b.followers, 2, 5, 2, 200);
            let eligible = |id: BrokerId, e: u64| [(2, 2), (3, 3)].contains(&(id, e));
            r.maybe_increment_high_watermark(&b.followers, 200, 30_000, 1, true, &eligible);
        }
        let hw = |b: &Broker| b.replicas.get(&0).map_or(0, |r| r.log.high_watermark);
        assert_eq!(hw(&b), 3);
        // 31 s later follower 3 is no longer caught up; the producer retries
        // its second batch, a duplicate.
        let answer = world.at(31_000, |ctx| {
            b.append_as_leader(ctx, 0, Acks::All, &idempotent_batch(3, 2))
        });
        assert_eq!(answer, Ok((3, 5)), "answered with its original offsets");
        assert_eq!(hw(&b), 5, "the duplicate's append moved the high watermark");
        assert_eq!(b.replicas.get(&0).map(|r| r.log.log_end_offset()), Some(5));
    }

    /// A broker's epoch is looked for at its id's position first, and the
    /// whole list searched when the entry there is another broker's: the
    /// same answer as a search from the front (each broker appears once).
    #[test]
    fn a_brokers_epoch_is_found_wherever_its_registration_sits_in_the_list() {
        use super::requests::broker_epoch_of;
        let in_order = [(1, 10), (2, 20), (3, 30)];
        let shuffled = [(3, 30), (1, 10), (2, 20)];
        for b in 1..=3 {
            assert_eq!(broker_epoch_of(&in_order, b), Some(b as u64 * 10));
            assert_eq!(broker_epoch_of(&shuffled, b), Some(b as u64 * 10));
        }
        assert_eq!(broker_epoch_of(&[(2, 20)], 1), None);
        assert_eq!(broker_epoch_of(&in_order, 4), None);
        assert_eq!(broker_epoch_of(&in_order, 0), None);
    }

    /// The replica fetcher looks only at leaders with no fetch in flight
    /// (`fetch_idle`): a leader whose fetch failed, skipped while its
    /// partitions back off, is fetched from again once they may be, while
    /// the fetch to the other leader is still out; and an answered leader
    /// gets its next fetch at once, the other one none (one is in flight).
    #[test]
    fn the_fetcher_fetches_again_from_a_leader_whose_fetch_failed_or_was_answered() {
        let mut world = TestWorld::one_partition();
        let mut second = world.partitions[0].clone();
        second.partition = 1;
        world.partitions.push(second);
        let mut b = Broker::new(3, 2);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        b.host(1, Replica::new(1, &[1, 2, 3]));
        b.process = Process::Running;
        b.registered = true;
        for (p, leader) in [(0, 1), (1, 2)] {
            if let Some(r) = b.replicas.get_mut(&p) {
                r.make_follower(&registration(leader, 0, &[1, 2, 3]));
            }
        }
        b.followed_stale = true;
        let fetches = |ctx: &Ctx| -> Vec<(BrokerId, u64)> {
            ctx.sends
                .iter()
                .filter_map(|(to, m)| match (to, m) {
                    (Node::Broker(l), Message::Fetch { id, .. }) => Some((*l, *id)),
                    _ => None,
                })
                .collect()
        };
        let sent = world.at(0, |ctx| {
            b.send_fetches(ctx);
            fetches(ctx)
        });
        assert_eq!(sent.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1, 2]);
        // The fetch to leader 1 fails: its partition backs off, so the
        // fetcher sends nothing now (leader 2's fetch is still out).
        let backoff = world.config.replica_fetch_backoff_ms;
        let now = world.at(10, |ctx| {
            b.fetch_failed(ctx, 1, sent[0].1);
            assert_eq!(fetches(ctx), vec![], "leader 1 backs off, leader 2 is busy");
            ctx.now
        });
        // Once the backoff is over, the retry fetches from leader 1 only.
        let again = world.at(now + backoff, |ctx| {
            b.on_timer(ctx, Timer::FetchRetry);
            fetches(ctx)
        });
        assert_eq!(again.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1]);
        // Leader 2 answers: the fetcher asks it again, and not leader 1.
        let next = world.at(now + backoff + 5, |ctx| {
            b.on_message(
                ctx,
                Node::Broker(2),
                Message::FetchResponse {
                    id: sent[1].1,
                    partitions: Vec::new(),
                },
            );
            fetches(ctx)
        });
        assert_eq!(next.iter().map(|f| f.0).collect::<Vec<_>>(), vec![2]);
    }

    /// A follower's answer that moves nothing (no records, the HW it has, at
    /// its own log end) is read, not written: the replica stays shared with
    /// a snapshot taken before it, as the page's checkpoints are (issue 27).
    /// One that brings a record or a new HW still changes it.
    #[test]
    fn a_fetch_answer_that_changes_nothing_leaves_the_followers_replica_shared_with_a_snapshot() {
        let mut world = TestWorld::one_partition();
        let mut b = Broker::new(2, 2);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        b.process = Process::Running;
        b.registered = true;
        let reg = registration(1, 0, &[1, 2, 3]);
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_follower(&reg);
            r.log.append(Record::plain(0, 0));
            r.log.high_watermark = 1;
            r.reconciled = true;
        }
        // The fetcher asks leader 1 (each answer sends the next fetch).
        let fetch_id = |ctx: &Ctx| {
            ctx.sends.iter().find_map(|(_, m)| match m {
                Message::Fetch { id, .. } => Some(*id),
                _ => None,
            })
        };
        b.followed_stale = true;
        let mut id = world.at(0, |ctx| {
            b.send_fetches(ctx);
            fetch_id(ctx)
        });
        let answer = |hw: u64, records: Vec<Record>| FetchPartitionResponse {
            partition: 0,
            error: None,
            high_watermark: hw,
            log_end_offset: 1 + records.len() as u64,
            diverging_epoch: None,
            current_leader: None,
            records,
            base_offset: 1,
            preferred_read_replica: None,
            chunk: None,
        };
        let mut respond = |b: &mut Broker, now, resp: FetchPartitionResponse| {
            let Some(asked) = id else {
                panic!("no fetch in flight to leader 1");
            };
            id = world.at(now, |ctx| {
                b.on_message(
                    ctx,
                    Node::Broker(1),
                    Message::FetchResponse {
                        id: asked,
                        partitions: vec![resp],
                    },
                );
                fetch_id(ctx)
            });
        };
        let shared = |a: &Broker, b: &Broker| match (a.replicas.get(&0), b.replicas.get(&0)) {
            (Some(x), Some(y)) => std::ptr::eq(x, y),
            _ => false,
        };
        let snapshot = b.clone();
        respond(&mut b, 100, answer(1, Vec::new()));
        assert!(shared(&snapshot, &b), "nothing moved: still shared");
        respond(&mut b, 200, answer(2, vec![Record::plain(1, 0)]));
        assert!(!shared(&snapshot, &b), "a record arrived: copied");
        let hw = b
            .replicas
            .get(&0)
            .map(|r| (r.log.log_end_offset(), r.log.high_watermark));
        assert_eq!(hw, Some((2, 2)));
        assert_eq!(
            snapshot.replicas.get(&0).map(|r| r.log.log_end_offset()),
            Some(1)
        );
    }

    /// What a leader knows of its followers lives in the broker's follower
    /// table, not in the replica (issue 27): a follower's fetch that moves
    /// no high watermark changes a page of the table and leaves the
    /// leader's replica shared with a snapshot taken before it; the
    /// snapshot still sees the follower where it was. A fetch that moves
    /// the HW copies the replica as before.
    #[test]
    fn a_follower_fetch_that_moves_no_high_watermark_leaves_the_leaders_replica_shared_with_a_snapshot(
    ) {
        let mut world = TestWorld::one_partition();
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        b.meta_broker_epochs = vec![(2, 2), (3, 3)];
        let reg = registration(1, 0, &[1, 2, 3]);
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_leader(&mut b.followers, 1, &reg, 0);
            r.log.append(Record::plain(0, 0));
            r.log.append(Record::plain(1, 0));
        }
        let fetch = |b: &mut Broker, world: &mut TestWorld, now, from: BrokerId, offset| {
            world.at(now, |ctx| {
                b.on_message(
                    ctx,
                    Node::Broker(from),
                    Message::Fetch {
                        id: now,
                        replica: Some(from),
                        broker_epoch: from as u64,
                        max_wait_ms: 500,
                        partitions: vec![FetchPartition {
                            partition: 0,
                            fetch_offset: offset,
                            current_leader_epoch: 0,
                            last_fetched_epoch: Some(0),
                        }],
                        rack_id: String::new(),
                    },
                );
            });
        };
        let shared = |a: &Broker, b: &Broker| match (a.replicas.get(&0), b.replicas.get(&0)) {
            (Some(x), Some(y)) => std::ptr::eq(x, y),
            _ => false,
        };
        let known = |b: &Broker, f: BrokerId| {
            b.replicas
                .get(&0)
                .and_then(|r| r.follower(&b.followers, f))
                .and_then(|s| s.log_end_offset.get())
        };
        let hw = |b: &Broker| b.replicas.get(&0).map(|r| r.log.high_watermark);
        let snapshot = b.clone();
        // Follower 2 fetches from offset 1; follower 3 has not fetched, so
        // the HW (min over the ISR) cannot move.
        fetch(&mut b, &mut world, 100, 2, 1);
        assert_eq!(known(&b, 2), Some(1));
        assert_eq!(hw(&b), Some(0));
        assert!(
            shared(&snapshot, &b),
            "no HW moved: the replica is still shared"
        );
        assert_eq!(known(&snapshot, 2), None, "the snapshot's table is its own");
        // Both followers reach offset 2: the HW moves, the replica is copied.
        fetch(&mut b, &mut world, 200, 2, 2);
        fetch(&mut b, &mut world, 300, 3, 2);
        assert_eq!(hw(&b), Some(2));
        assert!(!shared(&snapshot, &b), "the HW moved: copied");
        assert_eq!(hw(&snapshot), Some(0));
    }

    /// A restarted process knows nothing of its followers (Kafka builds its
    /// Partition objects anew): the broker's follower table starts empty
    /// rather than keeping the old process's states beside the new ones.
    #[test]
    fn a_restarted_broker_starts_with_an_empty_follower_table() {
        let mut world = TestWorld::one_partition();
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_leader(&mut b.followers, 1, &registration(1, 0, &[1, 2, 3]), 0);
        }
        assert_eq!(b.followers.placed(), 2);
        world.at(1_000, |ctx| b.start(ctx));
        assert_eq!(b.followers.placed(), 0);
        let lanes = b.replicas.get(&0).map(|r| r.followers(&b.followers).len());
        assert_eq!(lanes, Some(0));
    }

    #[test]
    fn a_parked_follower_fetch_records_the_followers_position_once() {
        // ReplicaManager updates a follower's fetch state on the first read;
        // DelayedFetch.onComplete reads again with readFromPurgatory = true,
        // which leaves it alone. The second update used to overwrite the
        // fetch time and the leader LEO seen, making the follower look caught
        // up later than Kafka would.
        let mut world = TestWorld::one_partition();
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        let reg = registration(1, 0, &[1, 2, 3]);
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_leader(&mut b.followers, 1, &reg, 0);
            for i in 0..5 {
                r.log.append(Record::plain(i, 0));
            }
        }
        // Broker 2 fetches at the log end at 1 s: nothing to read, parked.
        world.at(1_000, |ctx| {
            b.on_message(
                ctx,
                Node::Broker(2),
                Message::Fetch {
                    id: 42,
                    replica: Some(2),
                    broker_epoch: 2,
                    max_wait_ms: 500,
                    partitions: vec![FetchPartition {
                        partition: 0,
                        fetch_offset: 5,
                        current_leader_epoch: 0,
                        last_fetched_epoch: Some(0),
                    }],
                    rack_id: String::new(),
                },
            );
        });
        assert_eq!(b.parked_fetches.len(), 1, "the fetch is parked");
        // A record arrives at 1.2 s and completes the parked fetch.
        world.at(1_200, |ctx| {
            let _ = b.append_as_leader(ctx, 0, Acks::Leader, &[Record::plain(5, 0)]);
        });
        assert!(b.parked_fetches.is_empty(), "the new record completed it");
        let f = b
            .replicas
            .get(&0)
            .and_then(|r| r.follower(&b.followers, 2))
            .cloned();
        let f = f.unwrap_or_default();
        assert_eq!(
            f.last_fetch_ms.get(),
            Some(1_000),
            "recorded when the fetch arrived"
        );
        assert_eq!(f.last_fetch_leader_leo, 5);
        assert_eq!(f.log_end_offset.get(), Some(5));
    }

    #[test]
    fn a_parked_consumer_fetch_waits_for_records_even_once_a_preferred_read_replica_appears() {
        // KIP-392 and the long poll (KAFKA_REPLICATION.md §1, [DelayedFetch]).
        // ReplicaManager.fetchMessages answers a consumer's fetch at
        // once when the leader can name a preferred read replica; a fetch
        // already parked is DelayedFetch's, whose tryComplete (cases A-H) has
        // no such case: it completes on records below the HW (or an error, or
        // its fetch.max.wait.ms), and names the replica then. The lab used to
        // answer it at the next append once a follower of the consumer's rack
        // was back in the ISR.
        let mut world = rack_aware(["a", "b", "c"]);
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        let reg = registration(1, 0, &[1, 3]);
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_leader(&mut b.followers, 1, &reg, 0);
            for i in 0..5 {
                r.log.append(Record::plain(i, 0));
            }
            r.log.high_watermark = 5;
        }
        let fetch = |id: u64, replica: Option<BrokerId>, offset: u64, rack: &str| Message::Fetch {
            id,
            replica,
            broker_epoch: replica.map_or(0, u64::from),
            max_wait_ms: 500,
            partitions: vec![FetchPartition {
                partition: 0,
                fetch_offset: offset,
                current_leader_epoch: 0,
                last_fetched_epoch: replica.map(|_| 0),
            }],
            rack_id: rack.to_string(),
        };
        let to_consumer = |sends: &[(Node, Message)]| {
            sends
                .iter()
                .filter_map(|(to, m)| match (to, m) {
                    (Node::Consumer(0), Message::FetchResponse { partitions, .. }) => {
                        Some(partitions[0].preferred_read_replica)
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        // 1 s: both followers fetch at the log end; consumer 0 (rack b) at
        // the HW. Broker 2, in rack b, is outside the ISR: no replica to
        // name, nothing to read, so the consumer's fetch is parked.
        let sends = world.at(1_000, |ctx| {
            b.on_message(ctx, Node::Broker(2), fetch(1, Some(2), 5, ""));
            b.on_message(ctx, Node::Broker(3), fetch(2, Some(3), 5, ""));
            b.on_message(ctx, Node::Consumer(0), fetch(3, None, 5, "b"));
            std::mem::take(&mut ctx.sends)
        });
        assert!(
            to_consumer(&sends).is_empty(),
            "the consumer's fetch is parked"
        );
        // Broker 2 rejoins the ISR (its AlterPartition committed).
        if let Some(r) = b.replicas.get_mut(&0) {
            r.isr = std::rc::Rc::from([1, 2, 3]);
        }
        // 1.2 s: an append the followers have not fetched yet. The HW stays
        // at 5, so the consumer's fetch still has nothing to read: it stays
        // parked although broker 2 could now be named.
        let sends = world.at(1_200, |ctx| {
            let _ = b.append_as_leader(ctx, 0, Acks::Leader, &[Record::plain(5, 0)]);
            std::mem::take(&mut ctx.sends)
        });
        assert!(
            to_consumer(&sends).is_empty(),
            "no new record below the HW: the parked fetch keeps waiting"
        );
        assert!(b.parked_fetches.values().any(|f| f.replica.is_none()));
        // 1.3 s: the followers fetch from offset 6; the HW moves to 6 and
        // completes the consumer's fetch, which names broker 2 now.
        let sends = world.at(1_300, |ctx| {
            b.on_message(ctx, Node::Broker(2), fetch(4, Some(2), 6, ""));
            b.on_message(ctx, Node::Broker(3), fetch(5, Some(3), 6, ""));
            std::mem::take(&mut ctx.sends)
        });
        assert_eq!(b.replicas.get(&0).map(|r| r.log.high_watermark), Some(6));
        assert_eq!(to_consumer(&sends), vec![Some(2)]);
    }

    /// A leader with only itself in the ISR, `min.insync.replicas` = 2.
    fn lone_leader(world: &mut TestWorld) -> Broker {
        world.partitions[0].config.min_insync_replicas = 2;
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        let reg = registration(1, 0, &[1]);
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_leader(&mut b.followers, 1, &reg, 0);
        }
        b
    }

    /// The test world with KIP-392's rack-aware replica selector, brokers
    /// 1–3 in `racks`.
    fn rack_aware(racks: [&str; 3]) -> TestWorld {
        let mut world = TestWorld::one_partition();
        world.config.replica_selector = Some(crate::sim::config::ReplicaSelector::RackAware);
        world.racks = racks.map(String::from).to_vec();
        world
    }

    fn idempotent_batch(first_seq: u32, n: u32) -> Vec<Record> {
        (first_seq..first_seq + n)
            .map(|s| Record {
                id: u64::from(s),
                epoch: 0,
                producer_id: 7,
                seq: s,
                batch_start: s == first_seq,
                timestamp_ms: 0,
            })
            .collect()
    }

    #[test]
    fn min_insync_replicas_applies_to_acks_all_only() {
        // KAFKA_REPLICATION.md §4 and §10: Partition.appendRecordsToLeader
        // refuses an acks=all write below min.insync.replicas
        // (NOT_ENOUGH_REPLICAS); acks=1 and acks=0 writes are accepted and
        // acknowledged by the leader alone, whatever the ISR's size.
        let mut world = TestWorld::one_partition();
        let mut b = lone_leader(&mut world);
        let answers = world.at(1_000, |ctx| {
            for (id, acks) in [(1, Acks::Leader), (2, Acks::All)] {
                b.handle_produce(
                    ctx,
                    Node::Producer(0),
                    id,
                    acks,
                    30_000,
                    vec![ProduceBatch {
                        partition: 0,
                        records: vec![Record::plain(id, 0)],
                    }],
                );
            }
            std::mem::take(&mut ctx.sends)
                .into_iter()
                .filter_map(|(_, m)| match m {
                    Message::ProduceResponse { id, partitions } => Some((id, partitions[0].result)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(
            answers,
            vec![(1, Ok(0)), (2, Err(ErrorCode::NotEnoughReplicas))],
            "acks=1 is acknowledged at offset 0 with the ISR at 1 of min.insync.replicas=2; acks=all is refused"
        );
    }

    #[test]
    fn a_batch_sharing_only_one_sequence_bound_with_a_logged_batch_is_not_a_duplicate() {
        // ProducerStateEntry.findDuplicateBatch (KAFKA_REPLICATION.md §6,
        // idempotent producer): a retry is a duplicate only when both its
        // first and its last sequence match a batch in the log; otherwise it
        // is checked as a new batch, and a sequence that does not follow the
        // last one is OUT_OF_ORDER_SEQUENCE_NUMBER.
        let mut world = TestWorld::one_partition();
        let mut b = lone_leader(&mut world);
        world.partitions[0].config.min_insync_replicas = 1;
        let mut append = |at: u64, first: u32, n: u32| {
            world.at(at, |ctx| {
                b.append_as_leader(ctx, 0, Acks::All, &idempotent_batch(first, n))
            })
        };
        assert_eq!(append(10, 0, 3), Ok((0, 3)), "sequences 0-2 at offsets 0-2");
        assert_eq!(
            append(20, 0, 2),
            Err(ErrorCode::OutOfOrderSequenceNumber),
            "0-1: first sequence only"
        );
        assert_eq!(
            append(30, 1, 2),
            Err(ErrorCode::OutOfOrderSequenceNumber),
            "1-2: last sequence only"
        );
        assert_eq!(
            append(40, 0, 3),
            Ok((0, 3)),
            "0-2 again: a duplicate, its first offsets"
        );
        assert_eq!(append(50, 3, 1), Ok((3, 4)), "3 follows 2");
    }

    #[test]
    fn only_not_leader_or_follower_carries_the_current_leader_in_a_produce_answer() {
        // KIP-951 (KAFKA_REPLICATION.md §6): KafkaApis.handleProduceRequest
        // fills CurrentLeader for NOT_LEADER_OR_FOLLOWER only, so a producer
        // sent to a broker that no longer leads can switch at once. A leader
        // refusing a write for another reason (here NOT_ENOUGH_REPLICAS)
        // names nobody: the producer keeps its metadata and retries.
        let mut world = TestWorld::one_partition();
        let mut leader = lone_leader(&mut world);
        leader.meta_leaders = Pages::filled(1, (Some(1), 0));
        let mut other = Broker::new(2, 2);
        other.meta_leaders = Pages::filled(1, (Some(1), 0));
        let produce = |b: &mut Broker, ctx: &mut Ctx| {
            b.handle_produce(
                ctx,
                Node::Producer(0),
                1,
                Acks::All,
                30_000,
                vec![ProduceBatch {
                    partition: 0,
                    records: vec![Record::plain(1, 0)],
                }],
            );
            std::mem::take(&mut ctx.sends)
                .into_iter()
                .find_map(|(_, m)| match m {
                    Message::ProduceResponse { partitions, .. } => {
                        Some((partitions[0].result, partitions[0].current_leader))
                    }
                    _ => None,
                })
        };
        let from_leader = world.at(1_000, |ctx| produce(&mut leader, ctx));
        assert_eq!(from_leader, Some((Err(ErrorCode::NotEnoughReplicas), None)));
        let from_other = world.at(1_000, |ctx| produce(&mut other, ctx));
        assert_eq!(
            from_other,
            Some((Err(ErrorCode::NotLeaderOrFollower), Some((1, 0))))
        );
    }

    /// A registration of partition 0 on brokers 1-3 with ISR `isr`.
    fn registration(
        leader: BrokerId,
        leader_epoch: u32,
        isr: &[BrokerId],
    ) -> PartitionRegistration {
        PartitionRegistration {
            replicas: vec![1, 2, 3],
            isr: isr.to_vec(),
            leader: Some(leader),
            leader_epoch,
            partition_epoch: 0,
            leader_recovery_state: LeaderRecoveryState::Recovered,
            elr: Vec::new(),
            last_known_elr: Vec::new(),
        }
    }

    /// Broker 1 leading partition 0 in epoch 2: offsets 0-4 in epoch 0,
    /// 5-9 in epoch 2 (its epoch cache: 0 → 0, 2 → 5), HW 10.
    fn leader_in_epoch_2() -> Broker {
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        if let Some(r) = b.replicas.get_mut(&0) {
            for i in 0..5 {
                r.log.append(Record::plain(i, 0));
            }
            r.make_leader(&mut b.followers, 1, &registration(1, 2, &[1, 2, 3]), 0);
            for i in 5..10 {
                r.log.append(Record::plain(i, 2));
            }
            r.log.high_watermark = 10;
        }
        b
    }

    /// Send `fetch` to `b` at `now`: the answer sent at once, if any (`None`:
    /// the fetch was parked).
    fn answer_now(
        world: &mut TestWorld,
        b: &mut Broker,
        now: u64,
        from: Node,
        fetch: Message,
    ) -> Option<FetchPartitionResponse> {
        world.at(now, |ctx| {
            b.on_message(ctx, from, fetch);
            std::mem::take(&mut ctx.sends)
                .into_iter()
                .find_map(|(to, m)| match m {
                    Message::FetchResponse { mut partitions, .. } if to == from => partitions.pop(),
                    _ => None,
                })
        })
    }

    fn fetch_of(
        replica: Option<BrokerId>,
        offset: u64,
        leader_epoch: u32,
        last_fetched_epoch: Option<u32>,
    ) -> Message {
        Message::Fetch {
            id: 9,
            replica,
            broker_epoch: replica.map_or(0, u64::from),
            max_wait_ms: 500,
            partitions: vec![FetchPartition {
                partition: 0,
                fetch_offset: offset,
                current_leader_epoch: leader_epoch,
                last_fetched_epoch,
            }],
            rack_id: String::new(),
        }
    }

    /// Replica.updateFetchStateOrThrow, Kafka 4.4.0 (kafka-server-4.4.0.jar;
    /// KAFKA_REPLICATION.md §1, the leader's handling of a follower fetch):
    /// a follower fetch is refused with NOT_LEADER_OR_FOLLOWER when the
    /// leader's metadata cache holds a newer broker epoch for the follower,
    /// registered and unfenced (KRaftMetadataCache.getAliveBrokerEpoch),
    /// than the fetch carries. The follower's last stored fetch epoch does
    /// not decide: a zombie of the old incarnation is refused as soon as the
    /// new one is unfenced, before the new one has fetched; and while the new
    /// registration is fenced, nothing is refused. (Found by the replica
    /// vectors of issue 60.)
    #[test]
    fn a_follower_fetch_is_refused_when_the_metadata_holds_a_newer_alive_broker_epoch() {
        let mut world = TestWorld::one_partition();
        let mut b = leader_in_epoch_2();
        let zombie = |epoch: u64| Message::Fetch {
            id: 9,
            replica: Some(2),
            broker_epoch: epoch,
            max_wait_ms: 0,
            partitions: vec![FetchPartition {
                partition: 0,
                fetch_offset: 10,
                current_leader_epoch: 2,
                last_fetched_epoch: Some(2),
            }],
            rack_id: String::new(),
        };
        let error = |a: Option<FetchPartitionResponse>| a.and_then(|a| a.error);
        // Broker 2 registered again (epoch 7) but is still fenced: its old
        // incarnation's fetch (epoch 2) is served, as Kafka's would be.
        b.meta_broker_epochs = vec![(2, 7), (3, 3)];
        b.meta_fenced = vec![2];
        let a = answer_now(&mut world, &mut b, 1_000, Node::Broker(2), zombie(2));
        assert_eq!(error(a), None, "a fenced registration refuses nothing");
        // Unfenced: the old incarnation is refused, though the leader has
        // never seen a fetch from epoch 7 (ours used to wait for one).
        b.meta_fenced.clear();
        let a = answer_now(&mut world, &mut b, 1_100, Node::Broker(2), zombie(2));
        assert_eq!(error(a), Some(ErrorCode::NotLeaderOrFollower));
        // The new incarnation is served.
        let a = answer_now(&mut world, &mut b, 1_200, Node::Broker(2), zombie(7));
        assert_eq!(error(a), None);
        // A follower the metadata does not hold at all is not refused.
        b.meta_broker_epochs = vec![(3, 3)];
        let a = answer_now(&mut world, &mut b, 1_300, Node::Broker(2), zombie(2));
        assert_eq!(error(a), None);
    }

    #[test]
    fn a_consumer_fetch_in_an_old_leader_epoch_is_answered_at_once_with_fenced_leader_epoch() {
        // KAFKA_REPLICATION.md §1 step 1: a fetch whose CurrentLeaderEpoch is
        // older than the leader's gets FENCED_LEADER_EPOCH, and
        // ReplicaManager.fetchMessages answers an error at once: it is not
        // long-polled (DelayedFetch case E would complete it anyway).
        let mut world = TestWorld::one_partition();
        let mut b = leader_in_epoch_2();
        let answer = answer_now(
            &mut world,
            &mut b,
            1_000,
            Node::Consumer(0),
            fetch_of(None, 10, 1, None),
        );
        assert_eq!(
            answer.map(|a| a.error),
            Some(Some(ErrorCode::FencedLeaderEpoch))
        );
        // In the leader's epoch, at the HW, it is parked.
        let answer = answer_now(
            &mut world,
            &mut b,
            1_000,
            Node::Consumer(0),
            fetch_of(None, 10, 2, None),
        );
        assert!(answer.is_none(), "nothing to read yet: parked");
    }

    #[test]
    fn a_follower_fetch_at_the_log_end_with_a_diverging_or_unknown_last_fetched_epoch_is_answered_at_once(
    ) {
        // KAFKA_REPLICATION.md §1 step 3 and §7: the leader looks up
        // endOffsetFor(LastFetchedEpoch). Undefined (an epoch above any it
        // knows), an older epoch or an end below the fetch offset is a
        // divergence to report now (fetchMessages' hasDivergingEpoch;
        // DelayedFetch case H); a fetch at the log end that agrees with the
        // leader's history waits for records.
        let mut world = TestWorld::one_partition();
        let mut b = leader_in_epoch_2();
        let mut ask = |lfe: u32| {
            answer_now(
                &mut world,
                &mut b,
                1_000,
                Node::Broker(2),
                fetch_of(Some(2), 10, 2, Some(lfe)),
            )
        };
        // Epoch 3: above the leader's latest, undefined.
        assert!(
            ask(3).is_some(),
            "last fetched epoch 3, unknown to the leader: answered at once"
        );
        // Epoch 1: the leader has epoch 0 ending at 5 instead.
        let a = ask(1);
        assert_eq!(
            a.and_then(|a| a.diverging_epoch),
            Some((0, 5)),
            "epoch 1: diverges at (0, 5)"
        );
        // Epoch 0: the same epoch, but it ends at 5 on the leader, below 10.
        let a = ask(0);
        assert_eq!(
            a.and_then(|a| a.diverging_epoch),
            Some((0, 5)),
            "epoch 0 ends at 5: diverges"
        );
        // Epoch 2 at offset 10: in agreement; nothing to read, parked.
        assert!(ask(2).is_none(), "epoch 2 at the log end: parked");
        // A leader whose epoch 2 has no record yet: epoch 0 ends where its
        // log does, at 10, so a follower at 10 whose last record is of epoch
        // 1 diverges by its epoch alone.
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        if let Some(r) = b.replicas.get_mut(&0) {
            for i in 0..10 {
                r.log.append(Record::plain(i, 0));
            }
            r.make_leader(&mut b.followers, 1, &registration(1, 2, &[1, 2, 3]), 0);
            r.log.high_watermark = 10;
        }
        let a = answer_now(
            &mut world,
            &mut b,
            1_000,
            Node::Broker(2),
            fetch_of(Some(2), 10, 2, Some(1)),
        );
        assert_eq!(
            a.and_then(|a| a.diverging_epoch),
            Some((0, 10)),
            "epoch 1 unknown, epoch 0 ends at 10"
        );
    }

    #[test]
    fn a_follower_serves_a_consumer_below_its_own_hw_at_once_waits_at_it_and_refuses_past_its_log_end(
    ) {
        // KIP-392 (KAFKA_REPLICATION.md §1, fetch from a follower): a follower
        // answers a consumer from its own log up to its own high watermark.
        // Records below it are answered at once; at it (even with records
        // above it in the log) the fetch waits for the HW to move; past its
        // log end it is OFFSET_OUT_OF_RANGE at once.
        let mut world = TestWorld::one_partition();
        let mut b = Broker::new(2, 2);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_follower(&registration(1, 0, &[1, 2, 3]));
            for i in 0..6 {
                r.log.append(Record::plain(i, 0));
            }
            r.log.high_watermark = 4;
        }
        let mut ask = |offset: u64| {
            answer_now(
                &mut world,
                &mut b,
                1_000,
                Node::Consumer(0),
                fetch_of(None, offset, 0, None),
            )
        };
        let below = ask(2);
        assert_eq!(
            below.as_ref().map(|a| (a.error, a.records.len())),
            Some((None, 2)),
            "offsets 2 and 3, below the follower's HW 4"
        );
        assert!(
            ask(4).is_none(),
            "at the HW: parked, though 4 and 5 are in its log"
        );
        assert!(ask(6).is_none(), "at the log end: parked");
        let past = ask(7);
        assert_eq!(
            past.and_then(|a| a.error),
            Some(ErrorCode::OffsetOutOfRange)
        );
        // fetch.max.wait.ms runs out for the two parked at 4 and 6: nothing
        // below the HW to send, and no error (6 is the log end, in range).
        let keys: Vec<u64> = b.parked_fetches.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys.len(), 2);
        let expired = world.at(1_500, |ctx| {
            for id in keys {
                b.on_timer(ctx, Timer::DelayedFetchExpire { id });
            }
            std::mem::take(&mut ctx.sends)
                .into_iter()
                .filter_map(|(_, m)| match m {
                    Message::FetchResponse { partitions, .. } => partitions
                        .first()
                        .map(|a| (a.base_offset, a.error, a.records.len())),
                    _ => None,
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(expired, vec![(4, None, 0), (6, None, 0)]);
    }

    #[test]
    fn the_leader_stamps_its_leader_epoch_on_every_record_it_appends() {
        // KAFKA_REPLICATION.md §4 and §7: the leader sets each batch's
        // partitionLeaderEpoch to its own epoch as it appends (whatever the
        // producer sent), and that is what followers' epoch caches and the
        // divergence checks read.
        let mut world = TestWorld::one_partition();
        let mut b = leader_in_epoch_2();
        world.partitions[0].config.min_insync_replicas = 1;
        let appended = world.at(1_000, |ctx| {
            b.append_as_leader(
                ctx,
                0,
                Acks::Leader,
                &[Record::plain(10, 0), Record::plain(11, 7)],
            )
        });
        assert_eq!(appended, Ok((10, 12)));
        let epochs: Vec<u32> = b
            .replicas
            .get(&0)
            .map(|r| {
                r.log
                    .records_between(10, 12)
                    .iter()
                    .map(|x| x.epoch)
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(epochs, vec![2, 2]);
    }

    #[test]
    fn a_fetch_for_a_partition_the_broker_does_not_host_gets_not_leader_or_follower_and_the_leader()
    {
        // KAFKA_REPLICATION.md §1 step 1 and §6: a broker that is not a
        // replica of the partition (a client or follower with old metadata)
        // answers NOT_LEADER_OR_FOLLOWER at once, with the current leader its
        // metadata knows (KIP-951), so the fetcher goes there.
        let mut world = TestWorld::one_partition();
        let mut b = Broker::new(4, 4);
        b.meta_leaders = Pages::filled(1, (Some(1), 2));
        for (from, replica) in [(Node::Consumer(0), None), (Node::Broker(2), Some(2))] {
            let a = answer_now(
                &mut world,
                &mut b,
                1_000,
                from,
                fetch_of(replica, 10, 2, replica.map(|_| 2)),
            );
            assert_eq!(
                a.map(|a| (a.error, a.current_leader)),
                Some((Some(ErrorCode::NotLeaderOrFollower), Some((1, 2)))),
                "{from:?}"
            );
        }
    }

    #[test]
    fn a_follower_fetch_that_agrees_with_the_leaders_epochs_reads_records_and_one_past_the_log_end_is_out_of_range(
    ) {
        // KAFKA_REPLICATION.md §1 steps 3-4: no divergence when the leader's
        // endOffsetFor(LastFetchedEpoch) is that epoch, ending at or after
        // the fetch offset: the follower reads [FetchOffset, LEO). A fetch
        // past the log end without a last fetched epoch is
        // OFFSET_OUT_OF_RANGE.
        let mut world = TestWorld::one_partition();
        let mut b = leader_in_epoch_2();
        let mut ask = |offset: u64, lfe: Option<u32>| {
            answer_now(
                &mut world,
                &mut b,
                1_000,
                Node::Broker(2),
                fetch_of(Some(2), offset, 2, lfe),
            )
        };
        let read = |a: Option<FetchPartitionResponse>| {
            a.map(|a| (a.error, a.diverging_epoch, a.base_offset, a.records.len()))
        };
        // Epoch 2 ends at the log end (10), after 7: records 7-9.
        assert_eq!(read(ask(7, Some(2))), Some((None, None, 7, 3)));
        // Epoch 0 ends at 5 on the leader, exactly where this follower is.
        assert_eq!(read(ask(5, Some(0))), Some((None, None, 5, 5)));
        // At the log end: nothing to read, parked; when replica.fetch.wait.max.ms
        // runs out it is answered with no records and no error.
        assert_eq!(read(ask(10, Some(2))), None);
        // Past the log end, no epoch to compare: out of range.
        assert_eq!(
            read(ask(12, None)),
            Some((Some(ErrorCode::OffsetOutOfRange), None, 12, 0))
        );
        let keys: Vec<u64> = b.parked_fetches.iter().map(|(k, _)| *k).collect();
        let expired = world.at(1_500, |ctx| {
            for id in keys {
                b.on_timer(ctx, Timer::DelayedFetchExpire { id });
            }
            std::mem::take(&mut ctx.sends)
                .into_iter()
                .filter_map(|(_, m)| match m {
                    Message::FetchResponse { mut partitions, .. } => partitions.pop(),
                    _ => None,
                })
                .map(|a| (a.error, a.diverging_epoch, a.base_offset, a.records.len()))
                .collect::<Vec<_>>()
        });
        assert_eq!(expired, vec![(None, None, 10, 0)]);
    }

    #[test]
    fn a_fetch_from_an_older_registration_of_the_follower_is_refused_the_current_one_served() {
        // Replica.updateFetchStateOrThrow (KIP-903, KAFKA_REPLICATION.md §1):
        // a fetch carrying a broker epoch older than the one the leader's
        // metadata holds for that follower (registered, unfenced) is a
        // zombie of its previous incarnation: NOT_LEADER_OR_FOLLOWER, its
        // state left alone. The current epoch, again and again, is served.
        let mut world = TestWorld::one_partition();
        let mut b = leader_in_epoch_2();
        b.meta_broker_epochs = vec![(2, 5), (3, 3)];
        let mut ask = |offset: u64, broker_epoch: u64| {
            let mut m = fetch_of(Some(2), offset, 2, Some(2));
            if let Message::Fetch {
                broker_epoch: e, ..
            } = &mut m
            {
                *e = broker_epoch;
            }
            answer_now(&mut world, &mut b, 1_000, Node::Broker(2), m)
                .map(|a| (a.error, a.records.len()))
        };
        assert_eq!(ask(6, 5), Some((None, 4)), "broker epoch 5: records 6-9");
        assert_eq!(
            ask(7, 5),
            Some((None, 3)),
            "the same broker epoch again: served"
        );
        assert_eq!(
            ask(7, 4),
            Some((Some(ErrorCode::NotLeaderOrFollower), 0)),
            "an older one: refused"
        );
    }

    #[test]
    fn a_leader_in_the_consumers_rack_keeps_the_consumer_though_a_follower_shares_that_rack() {
        // KIP-392, RackAwareReplicaSelector.select: among the replicas in the
        // client's rack the leader wins when it is one of them; only when it
        // is not does the most caught-up follower there get named.
        let mut world = rack_aware(["a", "a", "b"]);
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, &[1, 2, 3]));
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_leader(&mut b.followers, 1, &registration(1, 0, &[1, 2, 3]), 0);
            r.log.append(Record::plain(0, 0));
            r.record_follower_fetch(&mut b.followers, 2, 1, 2, 100);
            r.record_follower_fetch(&mut b.followers, 3, 1, 3, 100);
        }
        let pick = |world: &mut TestWorld, b: &Broker, rack: &str| {
            world.at(200, |ctx| {
                b.replicas
                    .get(&0)
                    .and_then(|r| b.preferred_read_replica(ctx, r, 1, rack))
            })
        };
        assert_eq!(
            pick(&mut world, &b, "a"),
            None,
            "rack a: the leader, broker 1, is there"
        );
        assert_eq!(
            pick(&mut world, &b, "b"),
            Some(3),
            "rack b: broker 3, a caught-up follower"
        );
        world.racks = vec!["a".into(), "b".into(), "b".into()];
        assert_eq!(
            pick(&mut world, &b, "b"),
            Some(2),
            "two followers in rack b, equally caught up: the lower id"
        );
    }
}
