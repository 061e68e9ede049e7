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

use serde::Serialize;

use super::config::{Acks, ReplicaSelector, TruncationMode};
use super::io::{Ctx, Timer};
use super::log::Record;
use super::partition::{Replica, Role};
use super::pmap::{DenseMap, PartitionMap, VecMap};
use super::protocol::*;
use super::trace::{list, TraceKind};

/// `replica.socket.timeout.ms` (30 s): how long a fetcher waits for an answer.
pub const REPLICA_SOCKET_TIMEOUT_MS: u64 = 30_000;
/// How long the leader waits before re-sending an unanswered AlterPartition.
pub const ALTER_PARTITION_RETRY_MS: u64 = 5_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Process {
    Running,
    Crashed,
    PoweredOff,
    ShutDown,
}

#[derive(Clone, Debug)]
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

#[derive(Clone, Debug)]
struct ParkedProduce {
    from: Node,
    id: u64,
    /// Per partition: the offset the HW must reach, and the answer once known.
    waiting: Vec<(PartitionIndex, u64, u64)>,
    done: Vec<ProducePartitionResponse>,
}

/// The broker's lifecycle states as its BrokerLifecycleManager has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
/// Resend backoff after a failed registration or heartbeat: 100 ms doubling
/// up to broker.session.timeout.ms (BrokerLifecycleManager's
/// ExponentialBackoff(100, 2, session timeout); its 2 % jitter is left out).
const RESEND_BACKOFF_MS: u64 = 100;

#[derive(Clone, Debug)]
pub struct Broker {
    pub id: BrokerId,
    pub process: Process,
    pub incarnation: u32,
    pub broker_epoch: u64,
    pub registered: bool,
    /// As last told by the controller's heartbeat response.
    pub fenced: bool,
    pub want_shutdown: bool,
    pub clean_shutdown: bool,
    pub metadata_offset: u64,
    /// The metadata thread is busy applying until then (µs; `sim.broker.*`).
    metadata_busy_until_us: u64,
    /// Records up to here have had their apply work charged.
    metadata_costed_to: u64,
    /// Metadata cache for client requests: leader and epoch per partition.
    pub meta_leaders: Vec<(Option<BrokerId>, u32)>,
    /// Fenced / shutting-down brokers as this broker's metadata says.
    pub meta_ineligible: Vec<BrokerId>,
    pub replicas: PartitionMap<Replica>,
    /// The Fetch in flight to each leader broker (by broker id): its id and
    /// the (partition, leader epoch) pairs it asked for.
    fetch_in_flight: DenseMap<(u64, Vec<(PartitionIndex, u32)>)>,
    parked_fetches: VecMap<u64, ParkedFetch>,
    /// Parked fetches per hosted partition, by the replica's slot.
    fetch_waiters: Vec<Vec<u64>>,
    parked_produces: VecMap<u64, ParkedProduce>,
    /// Parked produces per hosted partition, by the replica's slot.
    produce_waiters: Vec<Vec<u64>>,
    registration_in_flight: bool,
    /// BrokerLifecycleManager: where in its start-up (or shutdown) it is.
    pub lifecycle: Lifecycle,
    /// The live `Timer::Heartbeat` (rescheduling replaces the previous one).
    comm_seq: u64,
    /// Registrations or heartbeats that failed in a row (backoff exponent).
    failed_attempts: u32,
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
    followed: VecMap<BrokerId, Vec<PartitionIndex>>,
    followed_stale: bool,
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
            want_shutdown: false,
            clean_shutdown: true,
            metadata_offset: 0,
            meta_leaders: vec![(None, 0); partitions],
            meta_ineligible: Vec::new(),
            replicas: PartitionMap::new(),
            fetch_in_flight: DenseMap::new(),
            parked_fetches: VecMap::new(),
            fetch_waiters: Vec::new(),
            parked_produces: VecMap::new(),
            produce_waiters: Vec::new(),
            registration_in_flight: false,
            lifecycle: Lifecycle::Starting,
            comm_seq: 0,
            failed_attempts: 0,
            started_ms: 0,
            got_shutdown_response: false,
            replayed_offset: 0,
            metadata_busy_until_us: 0,
            metadata_costed_to: 0,
            slow_partitions: Vec::new(),
            followed: VecMap::new(),
            followed_stale: true,
        }
    }

    /// Give this broker a replica of partition `p` (when the cluster is built).
    pub fn host(&mut self, p: PartitionIndex, replica: Replica) {
        self.replicas.insert(p, replica);
        self.fetch_waiters
            .resize_with(self.replicas.len(), Vec::new);
        self.produce_waiters
            .resize_with(self.replicas.len(), Vec::new);
    }

    /// Take the keys of the fetches (or produces) parked on partition `p`.
    fn take_waiters(&mut self, p: PartitionIndex, fetches: bool) -> Vec<u64> {
        let waiters = if fetches {
            &mut self.fetch_waiters
        } else {
            &mut self.produce_waiters
        };
        self.replicas
            .slot_of(p)
            .and_then(|s| waiters.get_mut(s))
            .map(std::mem::take)
            .unwrap_or_default()
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

    /// Start (or restart) the process: forget everything in memory, keep the log.
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.process = Process::Running;
        self.incarnation += 1;
        self.broker_epoch = 0;
        self.registered = false;
        self.fenced = true;
        self.want_shutdown = false;
        self.lifecycle = Lifecycle::Starting;
        self.started_ms = ctx.now;
        self.failed_attempts = 0;
        self.got_shutdown_response = false;
        self.replayed_offset = 0;
        self.metadata_offset = 0;
        self.metadata_busy_until_us = 0;
        self.metadata_costed_to = 0;
        self.meta_leaders.iter_mut().for_each(|m| *m = (None, 0));
        self.meta_ineligible.clear();
        self.fetch_in_flight.clear();
        self.parked_fetches.clear();
        self.fetch_waiters.iter_mut().for_each(Vec::clear);
        self.parked_produces.clear();
        self.produce_waiters.iter_mut().for_each(Vec::clear);
        for r in self.replicas.values_mut() {
            // The HW lives in memory; a restart reads the last checkpoint.
            r.log.high_watermark = r
                .log
                .checkpointed_high_watermark
                .min(r.log.log_end_offset());
            let replicas = std::mem::take(&mut r.replicas);
            let log = std::mem::take(&mut r.log);
            *r = Replica::new(r.partition, replicas);
            self.followed_stale = true;
            r.log = log;
        }
        self.send_registration(ctx);
        ctx.after(ctx.config.replica_lag_time_max_ms / 2, Timer::IsrCheck);
        ctx.after(
            ctx.config.replica_high_watermark_checkpoint_interval_ms,
            Timer::HighWatermarkCheckpoint,
        );
        ctx.after(ctx.config.flush_interval_ms, Timer::Flush);
    }

    /// Start as part of a cluster that is already running at t=0: registered
    /// with `broker_epoch`, unfenced, and caught up with the metadata log
    /// (see `Controller::bootstrap_broker`).
    pub fn bootstrap(&mut self, ctx: &mut Ctx, broker_epoch: u64) {
        self.start(ctx);
        ctx.sends
            .retain(|(_, m)| !matches!(m, Message::BrokerRegistration { .. }));
        self.registration_in_flight = false;
        self.registered = true;
        self.broker_epoch = broker_epoch;
        self.fenced = false;
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

    fn schedule_after_failure(&mut self, ctx: &mut Ctx) {
        let shift = self.failed_attempts.min(20);
        let delay = RESEND_BACKOFF_MS
            .saturating_mul(1u64 << shift)
            .min(ctx.config.broker_session_timeout_ms.max(RESEND_BACKOFF_MS));
        self.failed_attempts += 1;
        self.schedule_communication(ctx, delay);
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
        for r in self.replicas.values_mut() {
            r.log.flush();
            r.log.checkpoint_high_watermark();
        }
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
                for r in self.replicas.values_mut() {
                    r.log.checkpoint_high_watermark();
                }
                ctx.after(
                    ctx.config.replica_high_watermark_checkpoint_interval_ms,
                    Timer::HighWatermarkCheckpoint,
                );
            }
            Timer::Flush => {
                for r in self.replicas.values_mut() {
                    r.log.flush();
                }
                ctx.after(ctx.config.flush_interval_ms, Timer::Flush);
            }
            Timer::FetchTimeout { leader, id } => self.fetch_failed(ctx, leader, id),
            Timer::FetchRetry => self.send_fetches(ctx),
            Timer::DelayedFetchExpire { id } => {
                if let Some(parked) = self.parked_fetches.remove(&id) {
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
                    ctx.send(
                        parked.from,
                        Message::ProduceResponse {
                            id: parked.id,
                            partitions: parked.done,
                        },
                    );
                }
            }
            Timer::MetadataApplied { end } => self.apply_metadata_now(ctx, end),
            Timer::AlterPartitionRetry { partition, id } => {
                let resend = self
                    .replicas
                    .get(&partition)
                    .and_then(|r| r.pending_isr.clone().filter(|p| p.0 == id).map(|p| (r, p)))
                    .map(|(r, (id, isr))| Message::AlterPartition {
                        id,
                        broker: self.id,
                        broker_epoch: self.broker_epoch,
                        partition,
                        leader_epoch: r.leader_epoch,
                        partition_epoch: r.partition_epoch,
                        new_isr: isr,
                        recovered: false,
                    });
                if let Some(msg) = resend {
                    ctx.send(Node::Controller, msg);
                    ctx.after(
                        ALTER_PARTITION_RETRY_MS,
                        Timer::AlterPartitionRetry { partition, id },
                    );
                }
            }
            _ => {}
        }
    }

    pub fn on_message(&mut self, ctx: &mut Ctx, from: Node, msg: Message) {
        match msg {
            Message::BrokerRegistrationResponse { result } => {
                self.registration_in_flight = false;
                match result {
                    Ok(broker_epoch) => {
                        self.failed_attempts = 0;
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
                self.failed_attempts = 0;
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
                ctx.send(from, Message::MetadataResponse { id, partitions });
            }
            Message::OffsetsForLeaderEpoch {
                id,
                partition,
                current_leader_epoch,
                leader_epoch,
            } => {
                let result = match self.replicas.get(&partition) {
                    Some(r) if r.is_leader() => {
                        if current_leader_epoch < r.leader_epoch {
                            Err(ErrorCode::FencedLeaderEpoch)
                        } else if current_leader_epoch > r.leader_epoch {
                            Err(ErrorCode::UnknownLeaderEpoch)
                        } else {
                            Ok(r.log.end_offset_for(leader_epoch))
                        }
                    }
                    _ => Err(ErrorCode::NotLeaderOrFollower),
                };
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
            Message::Disconnected {
                id,
                to: Node::Broker(leader),
            } => self.fetch_failed(ctx, leader, id),
            _ => {}
        }
    }

    // ---------------------------------------------------------------- metadata

    /// Replay the metadata log up to `end`. When catching up over many records,
    /// only the last state of each partition matters: a restarted broker must
    /// not briefly "become leader" in epochs long gone.
    fn apply_metadata(&mut self, ctx: &mut Ctx, end: u64) {
        let end = end.min(ctx.metadata.len() as u64);
        if self.lifecycle == Lifecycle::Starting {
            self.replayed_offset = self.replayed_offset.max(end);
            return;
        }
        if end <= self.metadata_offset || !self.metadata_work_done(ctx, end) {
            return;
        }
        self.apply_metadata_now(ctx, end);
    }

    /// The `sim.broker.*` costs: applying the records up to `end` keeps the
    /// broker's metadata thread busy for a time (per partition change, and
    /// per partition it starts leading or following). Returns whether the
    /// work is done now; otherwise a `MetadataApplied` timer applies them.
    fn metadata_work_done(&mut self, ctx: &mut Ctx, end: u64) -> bool {
        let from = self.metadata_offset.max(self.metadata_costed_to);
        if end <= from {
            // Already costed; its timer applies it.
            return false;
        }
        let c = ctx.config.costs;
        let mut us = 0;
        for rec in &ctx.metadata[from as usize..end as usize] {
            if let MetadataRecord::Partition {
                partition,
                registration,
            } = rec
            {
                us += c.broker_metadata_apply_us;
                let new_role = self.replicas.get(partition).is_some_and(|r| {
                    !r.known_registration || r.leader_epoch != registration.leader_epoch
                });
                if new_role {
                    us += if registration.leader == Some(self.id) {
                        c.broker_become_leader_us
                    } else {
                        c.broker_become_follower_us
                    };
                }
            }
        }
        let begin = self.metadata_busy_until_us.max(ctx.now * 1000);
        self.metadata_busy_until_us = begin + us;
        self.metadata_costed_to = end;
        let at = self.metadata_busy_until_us / 1000;
        if at > ctx.now {
            ctx.after(at - ctx.now, Timer::MetadataApplied { end });
            return false;
        }
        true
    }

    fn apply_metadata_now(&mut self, ctx: &mut Ctx, end: u64) {
        let end = end.min(ctx.metadata.len() as u64);
        if end <= self.metadata_offset {
            return;
        }
        let metadata = ctx.metadata;
        // The last registration of each partition in the new records, in
        // partition order.
        let mut latest: Vec<(PartitionIndex, &PartitionRegistration)> = Vec::new();
        for rec in &metadata[self.metadata_offset as usize..end as usize] {
            match rec {
                MetadataRecord::Partition {
                    partition,
                    registration,
                } => {
                    latest.push((*partition, registration));
                }
                MetadataRecord::Broker {
                    broker,
                    fenced,
                    in_controlled_shutdown,
                    ..
                } => {
                    self.meta_ineligible.retain(|b| b != broker);
                    if *fenced || *in_controlled_shutdown {
                        self.meta_ineligible.push(*broker);
                    }
                }
            }
        }
        self.metadata_offset = end;
        latest.reverse();
        latest.sort_by_key(|x| x.0); // stable: the last record of a partition comes first
        latest.dedup_by_key(|x| x.0);
        for (p, reg) in latest {
            self.meta_leaders[p] = (reg.leader, reg.leader_epoch);
            if self.replicas.contains_key(&p) {
                self.apply_partition(ctx, p, reg);
            }
        }
        self.send_fetches(ctx);
    }

    fn apply_partition(&mut self, ctx: &mut Ctx, p: PartitionIndex, reg: &PartitionRegistration) {
        let me = self.id;
        let now = ctx.now;
        let Some(rep) = self.replicas.get_mut(&p) else {
            return;
        };
        if rep.known_registration && reg.partition_epoch <= rep.partition_epoch {
            return;
        }
        rep.known_registration = true;
        ctx.touch(p);
        if reg.leader == Some(me) {
            let same_epoch = rep.is_leader() && rep.leader_epoch == reg.leader_epoch;
            let was_follower = rep.role == Role::Follower;
            rep.make_leader(me, reg, now);
            self.followed_stale = true;
            if !same_epoch {
                let text = format!(
                    "Broker {me} is now leader of {} in epoch {}: it writes (epoch {}, start offset {}) to its leader-epoch cache before accepting writes; LEO {}, HW {} (kept from before, it may lag).",
                    ctx.tp(p),
                    reg.leader_epoch,
                    reg.leader_epoch,
                    rep.log.log_end_offset(),
                    rep.log.log_end_offset(),
                    rep.log.high_watermark
                );
                ctx.trace(
                    TraceKind::BecameLeader {
                        broker: me,
                        topic: ctx.partitions[p].topic.clone(),
                        partition: ctx.partitions[p].partition,
                        leader_epoch: reg.leader_epoch,
                        log_end_offset: rep.log.log_end_offset(),
                        high_watermark: rep.log.high_watermark,
                    },
                    text,
                );
                if reg.leader_recovery_state == LeaderRecoveryState::Recovering {
                    // KIP-704: the unclean leader reports it has taken over.
                    let id = ctx.new_id();
                    rep.pending_isr = Some((id, vec![me]));
                    ctx.send(
                        Node::Controller,
                        Message::AlterPartition {
                            id,
                            broker: me,
                            broker_epoch: self.broker_epoch,
                            partition: p,
                            leader_epoch: reg.leader_epoch,
                            partition_epoch: reg.partition_epoch,
                            new_isr: vec![me],
                            recovered: true,
                        },
                    );
                }
            }
            self.after_leader_state_change(ctx, p);
            if was_follower {
                // Consumers parked here while it was a follower (KIP-392)
                // learn at once that their epoch is stale.
                self.wake_fetches(ctx, p);
            }
        } else {
            let was_leader = rep.is_leader();
            let same = rep.role == Role::Follower
                && rep.leader == reg.leader
                && rep.leader_epoch == reg.leader_epoch;
            rep.make_follower(reg);
            self.followed_stale = true;
            if !same {
                let tp = ctx.tp(p);
                ctx.trace(
                    TraceKind::BecameFollower {
                        broker: me,
                        topic: ctx.partitions[p].topic.clone(),
                        partition: ctx.partitions[p].partition,
                        leader: reg.leader,
                        leader_epoch: reg.leader_epoch,
                    },
                    match reg.leader {
                        Some(l) => format!(
                            "Broker {me} follows broker {l} for {tp} in epoch {}.",
                            reg.leader_epoch
                        ),
                        None => format!("Broker {me} has no leader to follow for {tp}: the partition is offline."),
                    },
                );
                let follows = reg.leader.is_some();
                if let Some(to) = rep
                    .truncation_on_become_follower(ctx.config.truncation)
                    .filter(|_| follows)
                {
                    let from = rep.log.log_end_offset();
                    let removed = rep.log.truncate_to(to);
                    if !removed.is_empty() {
                        trace_truncation(
                            ctx,
                            me,
                            p,
                            from,
                            to,
                            &removed,
                            format!("pre-KIP-101 mode: a new follower truncates to its own high watermark {to}"),
                        );
                    }
                }
            }
            if was_leader {
                self.fail_parked_produces(ctx, p, ErrorCode::NotLeaderOrFollower);
                self.wake_fetches(ctx, p);
            } else if !same {
                // A new leader or epoch: consumers parked on this follower
                // (KIP-392) are answered now, with an error.
                self.wake_fetches(ctx, p);
            }
        }
    }

    // ---------------------------------------------------------------- leader: produce

    fn handle_produce(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        acks: Acks,
        timeout_ms: u64,
        batches: Vec<ProduceBatch>,
    ) {
        let mut done = Vec::new();
        let mut waiting = Vec::new();
        for batch in batches {
            let p = batch.partition;
            let hint = self.leader_hint(p);
            let result = self.append_as_leader(ctx, p, acks, batch.records);
            match result {
                Err(e) => done.push(ProducePartitionResponse {
                    partition: p,
                    result: Err(e),
                    current_leader: hint,
                }),
                Ok((base, required)) => {
                    let hw = self.replicas.get(&p).map_or(0, |r| r.log.high_watermark);
                    if acks != Acks::All || hw >= required {
                        // min.insync.replicas only concerns acks=all.
                        let result = if acks == Acks::All {
                            self.ack_result(ctx, p, base)
                        } else {
                            Ok(base)
                        };
                        done.push(ProducePartitionResponse {
                            partition: p,
                            result,
                            current_leader: None,
                        });
                    } else {
                        waiting.push((p, required, base));
                    }
                }
            }
        }
        if acks == Acks::None {
            // No response to acks=0; on any error the broker closes the
            // connection instead, which makes the client refresh its metadata
            // (KafkaApis.handleProduceRequest, NetworkClient).
            if done.iter().any(|r| r.result.is_err()) {
                let me = self.node();
                ctx.send(from, Message::Disconnected { id, to: me });
            }
            return;
        }
        if waiting.is_empty() {
            ctx.send(
                from,
                Message::ProduceResponse {
                    id,
                    partitions: done,
                },
            );
            return;
        }
        let key = ctx.new_id();
        for (p, _, _) in &waiting {
            if let Some(s) = self.replicas.slot_of(*p) {
                self.produce_waiters[s].push(key);
            }
        }
        self.parked_produces.insert(
            key,
            ParkedProduce {
                from,
                id,
                waiting,
                done,
            },
        );
        ctx.after(timeout_ms, Timer::DelayedProduceExpire { id: key });
    }

    /// Partition.checkEnoughReplicasReachOffset once the HW covers the batch.
    fn ack_result(&self, ctx: &Ctx, p: PartitionIndex, base: u64) -> Result<u64, ErrorCode> {
        let Some(r) = self.replicas.get(&p) else {
            return Err(ErrorCode::NotLeaderOrFollower);
        };
        let min_isr = r.effective_min_isr(ctx.partitions[p].config.min_insync_replicas);
        if r.maximal_isr_len() < min_isr {
            Err(ErrorCode::NotEnoughReplicasAfterAppend)
        } else {
            Ok(base)
        }
    }

    fn leader_hint(&self, p: PartitionIndex) -> Option<(BrokerId, u32)> {
        match self.meta_leaders.get(p) {
            Some((Some(l), e)) if *l != self.id => Some((*l, *e)),
            _ => None,
        }
    }

    /// Append a batch as leader. Returns (base offset, offset the HW must reach).
    fn append_as_leader(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        acks: Acks,
        records: Vec<Record>,
    ) -> Result<(u64, u64), ErrorCode> {
        let me = self.id;
        let eligible: Vec<BrokerId> = self.meta_ineligible.clone();
        let Some(rep) = self.replicas.get_mut(&p) else {
            return Err(ErrorCode::NotLeaderOrFollower);
        };
        if !rep.is_leader() {
            return Err(ErrorCode::NotLeaderOrFollower);
        }
        let cfg = &ctx.partitions[p].config;
        if acks == Acks::All && rep.isr.len() < rep.effective_min_isr(cfg.min_insync_replicas) {
            return Err(ErrorCode::NotEnoughReplicas);
        }
        let Some(first) = records.first().copied() else {
            return Err(ErrorCode::InvalidRequest);
        };
        let count = records.len() as u64;
        if first.producer_id != 0 {
            let last_seq = first.seq + count as u32 - 1;
            if let Some(state) = rep.log.producer_state(first.producer_id) {
                if let Some(dup) = state
                    .batches
                    .iter()
                    .find(|b| b.first_seq == first.seq && b.last_seq == last_seq)
                {
                    // A retry of a batch already in the log: answer with its offsets.
                    return Ok((dup.base_offset, dup.base_offset + count));
                }
                let expected = state.last_seq().map_or(0, |s| s.wrapping_add(1));
                if first.seq != expected {
                    return Err(ErrorCode::OutOfOrderSequenceNumber);
                }
            }
            // A producer this log holds no state for (a new leader that never
            // saw its batches, or state lost with a truncated tail) is
            // accepted at any sequence (ProducerAppendInfo.checkSequence: no
            // current producer epoch).
        }
        let base = rep.log.log_end_offset();
        let epoch = rep.leader_epoch;
        for (i, r) in records.into_iter().enumerate() {
            rep.log.append(Record {
                epoch,
                batch_start: i == 0,
                ..r
            });
        }
        let _ = me;
        ctx.touch(p);
        let eligible_fn = |b: BrokerId| !eligible.contains(&b);
        let cfg = &ctx.partitions[p].config;
        let moved = rep.maybe_increment_high_watermark(
            ctx.now,
            ctx.config.replica_lag_time_max_ms,
            cfg.min_insync_replicas,
            ctx.config.strict_min_isr,
            &eligible_fn,
        );
        self.wake_fetches(ctx, p);
        if moved {
            self.complete_parked_produces(ctx, p);
        }
        Ok((base, base + count))
    }

    fn complete_parked_produces(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        let keys = self.take_waiters(p, false);
        let hw = self.replicas.get(&p).map_or(0, |r| r.log.high_watermark);
        let mut still = Vec::new();
        for key in keys {
            let Some(mut parked) = self.parked_produces.remove(&key) else {
                continue;
            };
            let mut keep_waiting = Vec::new();
            for (wp, required, base) in std::mem::take(&mut parked.waiting) {
                if wp == p && hw >= required {
                    let result = self.ack_result(ctx, p, base);
                    parked.done.push(ProducePartitionResponse {
                        partition: p,
                        result,
                        current_leader: None,
                    });
                } else {
                    if wp == p {
                        still.push(key);
                    }
                    keep_waiting.push((wp, required, base));
                }
            }
            parked.waiting = keep_waiting;
            if parked.waiting.is_empty() {
                ctx.send(
                    parked.from,
                    Message::ProduceResponse {
                        id: parked.id,
                        partitions: parked.done,
                    },
                );
            } else {
                self.parked_produces.insert(key, parked);
            }
        }
        if !still.is_empty() {
            still.dedup();
            if let Some(s) = self.replicas.slot_of(p) {
                self.produce_waiters[s] = still;
            }
        }
    }

    fn fail_parked_produces(&mut self, ctx: &mut Ctx, p: PartitionIndex, error: ErrorCode) {
        let keys = self.take_waiters(p, false);
        let hint = self.leader_hint(p);
        for key in keys {
            let Some(mut parked) = self.parked_produces.remove(&key) else {
                continue;
            };
            let (failed, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut parked.waiting)
                .into_iter()
                .partition(|w| w.0 == p);
            for _ in failed {
                parked.done.push(ProducePartitionResponse {
                    partition: p,
                    result: Err(error),
                    current_leader: hint,
                });
            }
            parked.waiting = rest;
            if parked.waiting.is_empty() {
                ctx.send(
                    parked.from,
                    Message::ProduceResponse {
                        id: parked.id,
                        partitions: parked.done,
                    },
                );
            } else {
                self.parked_produces.insert(key, parked);
            }
        }
    }

    // ---------------------------------------------------------------- leader: fetch

    fn handle_fetch(&mut self, ctx: &mut Ctx, mut parked: ParkedFetch, max_wait_ms: u64) {
        let has_data = self.fetch_would_return(ctx, &parked);
        if has_data || max_wait_ms == 0 {
            self.answer_fetch(ctx, parked, false);
            return;
        }
        // Long poll (replica.fetch.wait.max.ms / fetch.max.wait.ms): park until
        // something is appended, or the wait expires. Followers' positions are
        // recorded now, as Kafka does on the first read.
        if let Some(replica) = parked.replica {
            for fp in &parked.partitions {
                self.record_follower_position(ctx, replica, parked.broker_epoch, fp);
            }
            parked.positions_recorded = true;
        }
        let key = ctx.new_id();
        for fp in &parked.partitions {
            if let Some(s) = self.replicas.slot_of(fp.partition) {
                self.fetch_waiters[s].push(key);
            }
        }
        self.parked_fetches.insert(key, parked);
        ctx.after(max_wait_ms, Timer::DelayedFetchExpire { id: key });
    }

    /// Whether an immediate answer is due: data, an error, or a divergence.
    fn fetch_would_return(&self, ctx: &Ctx, parked: &ParkedFetch) -> bool {
        parked.partitions.iter().any(|fp| {
            let Some(r) = self.replicas.get(&fp.partition) else {
                return true;
            };
            if parked.replica.is_none() && serves_consumer_as_follower(r, fp) {
                // Records below this follower's own HW, or an offset past its
                // log: answer now. Otherwise wait for its HW to move.
                return fp.fetch_offset < r.log.high_watermark
                    || fp.fetch_offset > r.log.log_end_offset();
            }
            if !r.is_leader() || fp.current_leader_epoch != r.leader_epoch {
                return true;
            }
            if parked.replica.is_none()
                && self
                    .preferred_read_replica(ctx, r, fp.fetch_offset, &parked.rack_id)
                    .is_some()
            {
                // A redirect is answered at once (ReplicaManager does not
                // delay a fetch that names a preferred read replica).
                return true;
            }
            let end = if parked.replica.is_some() {
                r.log.log_end_offset()
            } else {
                r.log.high_watermark
            };
            if fp.fetch_offset != end {
                return true;
            }
            if let Some(lfe) = fp.last_fetched_epoch {
                match r.log.end_offset_for(lfe) {
                    None => return true,
                    Some((e, o)) if e < lfe || o < fp.fetch_offset => return true,
                    _ => {}
                }
            }
            false
        })
    }

    /// Something changed on partition `p` (its log end, its HW, its leader):
    /// complete the fetches parked on it that now have an answer, as
    /// DelayedFetch.tryComplete does — a follower's fetch reads to the log
    /// end, so only new records (or an error, a new epoch, a divergence)
    /// complete it, not a HW that moved; a consumer's fetch reads to the HW.
    fn wake_fetches(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        let keys = self.take_waiters(p, true);
        let mut still = Vec::new();
        for &key in &keys {
            let Some(parked) = self.parked_fetches.get(&key) else {
                continue;
            };
            if self.fetch_would_return(ctx, parked) {
                if let Some(parked) = self.parked_fetches.remove(&key) {
                    self.answer_fetch(ctx, parked, false);
                }
            } else {
                still.push(key);
            }
        }
        if let Some(slot) = self.replicas.slot_of(p) {
            let list = &mut self.fetch_waiters[slot];
            still.append(list);
            *list = still;
        }
    }

    fn record_follower_position(
        &mut self,
        ctx: &mut Ctx,
        replica: BrokerId,
        broker_epoch: u64,
        fp: &FetchPartition,
    ) {
        let p = fp.partition;
        let ineligible = self.meta_ineligible.clone();
        let eligible = |b: BrokerId| !ineligible.contains(&b);
        let Some(rep) = self.replicas.get_mut(&p) else {
            return;
        };
        if !rep.is_leader() || fp.current_leader_epoch != rep.leader_epoch {
            return;
        }
        if fp.fetch_offset > rep.log.log_end_offset() {
            return;
        }
        if let Some(lfe) = fp.last_fetched_epoch {
            match rep.log.end_offset_for(lfe) {
                Some((e, o)) if e >= lfe && o >= fp.fetch_offset => {}
                _ => return,
            }
        }
        let moved = rep.record_follower_fetch(replica, fp.fetch_offset, broker_epoch, ctx.now);
        // ISR expansion (Partition.maybeExpandIsr).
        if rep.pending_isr.is_none() {
            let add = rep.expand_candidates(&eligible);
            if !add.is_empty() {
                let mut new_isr = rep.isr.clone();
                new_isr.extend(add);
                let id = ctx.new_id();
                rep.pending_isr = Some((id, new_isr.clone()));
                ctx.send(
                    Node::Controller,
                    Message::AlterPartition {
                        id,
                        broker: self.id,
                        broker_epoch: self.broker_epoch,
                        partition: p,
                        leader_epoch: rep.leader_epoch,
                        partition_epoch: rep.partition_epoch,
                        new_isr,
                        recovered: false,
                    },
                );
                ctx.after(
                    ALTER_PARTITION_RETRY_MS,
                    Timer::AlterPartitionRetry { partition: p, id },
                );
            }
        }
        if moved {
            // What the leader knows of a follower is not something the
            // invariants read; a HW this moves is touched below.
            self.after_leader_state_change(ctx, p);
        }
    }

    /// Try to advance the HW; complete produce requests and consumer fetches it unblocks.
    fn after_leader_state_change(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        let ineligible = self.meta_ineligible.clone();
        let eligible = |b: BrokerId| !ineligible.contains(&b);
        let Some(rep) = self.replicas.get_mut(&p) else {
            return;
        };
        let moved = rep.maybe_increment_high_watermark(
            ctx.now,
            ctx.config.replica_lag_time_max_ms,
            ctx.partitions[p].config.min_insync_replicas,
            ctx.config.strict_min_isr,
            &eligible,
        );
        if moved {
            ctx.touch(p);
            self.complete_parked_produces(ctx, p);
            self.wake_fetches(ctx, p);
        }
    }

    fn answer_fetch(&mut self, ctx: &mut Ctx, parked: ParkedFetch, expired: bool) {
        let _ = expired;
        let mut out = Vec::with_capacity(parked.partitions.len());
        for fp in &parked.partitions {
            out.push(self.read_partition(
                ctx,
                parked.replica.filter(|_| !parked.positions_recorded),
                parked.replica,
                parked.broker_epoch,
                &parked.rack_id,
                fp,
            ));
        }
        ctx.send(
            parked.from,
            Message::FetchResponse {
                id: parked.id,
                partitions: out,
            },
        );
    }

    /// Leader-side processing of one partition of a Fetch (§1 steps 1–4).
    #[allow(clippy::too_many_arguments)]
    fn read_partition(
        &mut self,
        ctx: &mut Ctx,
        record_for: Option<BrokerId>,
        replica: Option<BrokerId>,
        broker_epoch: u64,
        rack_id: &str,
        fp: &FetchPartition,
    ) -> FetchPartitionResponse {
        let p = fp.partition;
        let mut resp = FetchPartitionResponse {
            partition: p,
            error: None,
            high_watermark: 0,
            log_end_offset: 0,
            diverging_epoch: None,
            current_leader: None,
            records: Vec::new(),
            base_offset: fp.fetch_offset,
            preferred_read_replica: None,
        };
        let error = match self.replicas.get(&p) {
            None => Some(ErrorCode::NotLeaderOrFollower),
            Some(r) if replica.is_none() && serves_consumer_as_follower(r, fp) => None,
            Some(r) if !r.is_leader() => Some(ErrorCode::NotLeaderOrFollower),
            Some(r) if fp.current_leader_epoch < r.leader_epoch => {
                Some(ErrorCode::FencedLeaderEpoch)
            }
            Some(r) if fp.current_leader_epoch > r.leader_epoch => {
                Some(ErrorCode::UnknownLeaderEpoch)
            }
            Some(r) if replica.is_some_and(|b| !r.replicas.contains(&b)) => {
                Some(ErrorCode::NotLeaderOrFollower)
            }
            _ => None,
        };
        if let Some(e) = error {
            resp.error = Some(e);
            resp.current_leader = self.leader_hint(p).or_else(|| {
                self.replicas
                    .get(&p)
                    .filter(|r| r.is_leader())
                    .map(|r| (self.id, r.leader_epoch))
            });
            return resp;
        }
        let Some(r) = self.replicas.get(&p) else {
            return resp;
        };
        if !r.is_leader() {
            // KIP-392: a follower serves a consumer from its own log, below
            // its own high watermark, which trails the leader's until its
            // next fetch response.
            let (hw, leo) = (r.log.high_watermark, r.log.log_end_offset());
            resp.high_watermark = hw;
            resp.log_end_offset = leo;
            if fp.fetch_offset > leo {
                resp.error = Some(ErrorCode::OffsetOutOfRange);
            } else if fp.fetch_offset < hw {
                resp.records = r.log.records()[fp.fetch_offset as usize..hw as usize].to_vec();
            }
            return resp;
        }
        // Snapshot before the read: the follower learns a HW this fetch moves
        // from its next fetch response.
        resp.high_watermark = r.log.high_watermark;
        resp.log_end_offset = r.log.log_end_offset();
        resp.current_leader = Some((self.id, r.leader_epoch));
        let Some(follower) = replica else {
            if let Some(b) = self.preferred_read_replica(ctx, r, fp.fetch_offset, rack_id) {
                // KIP-392: no records, only where to read from.
                resp.preferred_read_replica = Some(b);
                return resp;
            }
            // A consumer reads only below the HW (read_uncommitted).
            let hw = r.log.high_watermark;
            if fp.fetch_offset > r.log.log_end_offset() {
                resp.error = Some(ErrorCode::OffsetOutOfRange);
            } else if fp.fetch_offset < hw {
                resp.records = r.log.records()[fp.fetch_offset as usize..hw as usize].to_vec();
            }
            return resp;
        };
        if let Some(lfe) = fp.last_fetched_epoch {
            match r.log.end_offset_for(lfe) {
                None => {
                    resp.error = Some(ErrorCode::OffsetOutOfRange);
                    return resp;
                }
                Some((e, o)) if e < lfe || o < fp.fetch_offset => {
                    resp.diverging_epoch = Some((e, o));
                    return resp;
                }
                _ => {}
            }
        }
        if fp.fetch_offset > r.log.log_end_offset() {
            resp.error = Some(ErrorCode::OffsetOutOfRange);
            return resp;
        }
        resp.records = r.log.records()[fp.fetch_offset as usize..].to_vec();
        if record_for == Some(follower) {
            self.record_follower_position(ctx, follower, broker_epoch, fp);
        }
        resp
    }

    /// KIP-392 on the leader: the replica a consumer in rack `rack_id` should
    /// read from, when it is not the leader itself (ReplicaManager's
    /// findPreferredReadReplica with the rack-aware selector). Candidates are
    /// followers in the ISR, not fenced, whose log reaches the fetch offset and
    /// whose `broker.rack` is the consumer's `client.rack`; the most caught-up
    /// one wins (highest LEO, then most recently caught up, then lowest id).
    /// `None` without a selector, without a client rack, or when the leader is
    /// itself in that rack or no follower there qualifies.
    fn preferred_read_replica(
        &self,
        ctx: &Ctx,
        r: &Replica,
        fetch_offset: u64,
        rack_id: &str,
    ) -> Option<BrokerId> {
        if ctx.config.replica_selector != Some(ReplicaSelector::RackAware) || rack_id.is_empty() {
            return None;
        }
        if !r.is_leader() || ctx.rack_of(self.id) == Some(rack_id) {
            return None;
        }
        r.followers
            .iter()
            .filter(|f| r.isr.contains(&f.broker) && !self.meta_ineligible.contains(&f.broker))
            .filter(|f| f.log_end_offset.is_some_and(|leo| leo >= fetch_offset))
            .filter(|f| ctx.rack_of(f.broker) == Some(rack_id))
            .max_by(|a, b| {
                a.log_end_offset
                    .cmp(&b.log_end_offset)
                    .then(a.last_caught_up_ms.cmp(&b.last_caught_up_ms))
                    .then(b.broker.cmp(&a.broker))
            })
            .map(|f| f.broker)
    }

    // ---------------------------------------------------------------- follower: fetcher

    /// The fetch to `leader` timed out or its connection broke: back off.
    fn fetch_failed(&mut self, ctx: &mut Ctx, leader: BrokerId, id: u64) {
        if self
            .fetch_in_flight
            .get(&(leader as usize))
            .is_some_and(|f| f.0 == id)
        {
            self.fetch_in_flight.remove(&(leader as usize));
            self.back_off_leader(ctx, leader);
            self.send_fetches(ctx);
        }
    }

    fn back_off_leader(&mut self, ctx: &mut Ctx, leader: BrokerId) {
        let until = ctx.now + ctx.config.replica_fetch_backoff_ms;
        for r in self.replicas.values_mut() {
            if r.role == Role::Follower && r.leader == Some(leader) {
                r.fetch_backoff_until = until;
            }
        }
        ctx.after(ctx.config.replica_fetch_backoff_ms, Timer::FetchRetry);
    }

    /// One Fetch per leader broker, for every partition followed from it.
    fn send_fetches(&mut self, ctx: &mut Ctx) {
        if !self.is_running() || !self.registered {
            return;
        }
        if self.followed_stale {
            self.followed_stale = false;
            self.followed.clear();
            for r in self.replicas.values() {
                match r.leader {
                    Some(leader) if r.role == Role::Follower && leader != self.id => {
                        self.followed.or_default(leader).push(r.partition)
                    }
                    _ => {}
                }
            }
        }
        let mut by_leader: Vec<(BrokerId, Vec<FetchPartition>)> = Vec::new();
        for (&leader, parts) in self.followed.iter() {
            if self.fetch_in_flight.contains_key(&(leader as usize)) {
                continue;
            }
            let mut partitions = Vec::with_capacity(parts.len());
            for p in parts {
                let Some(r) = self.replicas.get(p) else {
                    continue;
                };
                if r.fetch_backoff_until > ctx.now || self.slow_partitions.contains(p) {
                    continue;
                }
                let last_fetched_epoch = match ctx.config.truncation {
                    TruncationMode::LeaderEpoch => r.log.last_record_epoch(),
                    TruncationMode::HighWatermark => None,
                };
                partitions.push(FetchPartition {
                    partition: r.partition,
                    fetch_offset: r.log.log_end_offset(),
                    current_leader_epoch: r.leader_epoch,
                    last_fetched_epoch,
                });
            }
            if !partitions.is_empty() {
                by_leader.push((leader, partitions));
            }
        }
        for (leader, partitions) in by_leader {
            let id = ctx.new_id();
            let sent = partitions
                .iter()
                .map(|fp| (fp.partition, fp.current_leader_epoch))
                .collect();
            self.fetch_in_flight.insert(leader as usize, (id, sent));
            ctx.send(
                Node::Broker(leader),
                Message::Fetch {
                    id,
                    replica: Some(self.id),
                    broker_epoch: self.broker_epoch,
                    max_wait_ms: ctx.config.replica_fetch_wait_max_ms,
                    partitions,
                    rack_id: String::new(),
                },
            );
            ctx.after(
                REPLICA_SOCKET_TIMEOUT_MS,
                Timer::FetchTimeout { leader, id },
            );
        }
    }

    fn handle_fetch_response(
        &mut self,
        ctx: &mut Ctx,
        leader: BrokerId,
        id: u64,
        partitions: Vec<FetchPartitionResponse>,
    ) {
        match self.fetch_in_flight.get(&(leader as usize)) {
            Some((want, _)) if *want == id => {}
            _ => return,
        }
        let Some((_, sent)) = self.fetch_in_flight.remove(&(leader as usize)) else {
            return;
        };
        let mut retry_later = false;
        // Partitions whose log or HW changed: consumers parked here may now
        // have something to read (KIP-392 follower fetching).
        let mut changed: Vec<PartitionIndex> = Vec::with_capacity(partitions.len());
        for resp in partitions {
            let p = resp.partition;
            let Some(sent_epoch) = sent.iter().find(|s| s.0 == p).map(|s| s.1) else {
                continue;
            };
            let me = self.id;
            let Some(rep) = self.replicas.get_mut(&p) else {
                continue;
            };
            if rep.role != Role::Follower
                || rep.leader != Some(leader)
                || rep.leader_epoch != sent_epoch
            {
                continue;
            }
            match resp.error {
                None => {}
                Some(ErrorCode::OffsetOutOfRange) => {
                    let leo = rep.log.log_end_offset();
                    if resp.log_end_offset < leo {
                        changed.push(p);
                        let removed = rep.log.truncate_to(resp.log_end_offset);
                        let to = resp.log_end_offset;
                        trace_truncation(
                            ctx,
                            me,
                            p,
                            leo,
                            to,
                            &removed,
                            format!("OFFSET_OUT_OF_RANGE: the leader's log ends at {to}, before this replica's"),
                        );
                    } else {
                        rep.fetch_backoff_until = ctx.now + ctx.config.replica_fetch_backoff_ms;
                        retry_later = true;
                    }
                    continue;
                }
                Some(_) => {
                    rep.fetch_backoff_until = ctx.now + ctx.config.replica_fetch_backoff_ms;
                    retry_later = true;
                    continue;
                }
            }
            if let Some((epoch, end)) = resp.diverging_epoch {
                let t = rep.truncation_point(epoch, end);
                let from = rep.log.log_end_offset();
                let removed = rep.log.truncate_to(t.to);
                ctx.touch(p);
                changed.push(p);
                if !removed.is_empty() {
                    trace_truncation(
                        ctx,
                        me,
                        p,
                        from,
                        t.to,
                        &removed,
                        format!(
                            "the leader says epoch {epoch} ends at offset {end} (DivergingEpoch); this replica's own records from {} on were written in a diverging history",
                            t.to
                        ),
                    );
                }
                continue;
            }
            if resp.base_offset != rep.log.log_end_offset() {
                continue;
            }
            let appended = !resp.records.is_empty();
            for r in resp.records {
                rep.log.append(r);
            }
            let leo = rep.log.log_end_offset();
            let hw = resp.high_watermark.min(leo);
            // The invariants need a look only when this replica's state moved.
            if appended || !rep.reconciled || hw != rep.log.high_watermark {
                ctx.touch(p);
            }
            rep.reconciled = true;
            rep.log.high_watermark = hw;
            changed.push(p);
        }
        for p in changed {
            self.wake_fetches(ctx, p);
        }
        if retry_later {
            ctx.after(ctx.config.replica_fetch_backoff_ms, Timer::FetchRetry);
        }
        self.send_fetches(ctx);
    }

    // ---------------------------------------------------------------- leader: ISR

    fn shrink_isr_check(&mut self, ctx: &mut Ctx) {
        if !self.registered {
            return;
        }
        let me = self.id;
        let lag = ctx.config.replica_lag_time_max_ms;
        let mut sends = Vec::new();
        for rep in self.replicas.values_mut() {
            if !rep.is_leader() || rep.pending_isr.is_some() {
                continue;
            }
            let out = rep.out_of_sync(me, ctx.now, lag);
            if out.is_empty() {
                continue;
            }
            let new_isr: Vec<BrokerId> = rep
                .isr
                .iter()
                .copied()
                .filter(|b| !out.contains(b))
                .collect();
            let id = ctx.new_id();
            rep.pending_isr = Some((id, new_isr.clone()));
            sends.push(Message::AlterPartition {
                id,
                broker: me,
                broker_epoch: self.broker_epoch,
                partition: rep.partition,
                leader_epoch: rep.leader_epoch,
                partition_epoch: rep.partition_epoch,
                new_isr,
                recovered: false,
            });
        }
        for msg in sends {
            if let Message::AlterPartition { id, partition, .. } = &msg {
                ctx.after(
                    ALTER_PARTITION_RETRY_MS,
                    Timer::AlterPartitionRetry {
                        partition: *partition,
                        id: *id,
                    },
                );
            }
            ctx.send(Node::Controller, msg);
        }
    }

    fn handle_alter_partition_response(
        &mut self,
        ctx: &mut Ctx,
        id: u64,
        p: PartitionIndex,
        result: Result<PartitionRegistration, ErrorCode>,
    ) {
        let me = self.id;
        let Some(rep) = self.replicas.get_mut(&p) else {
            return;
        };
        if rep.pending_isr.as_ref().map(|x| x.0) != Some(id) {
            return;
        }
        rep.pending_isr = None;
        match result {
            Ok(reg) => {
                if reg.partition_epoch > rep.partition_epoch && reg.leader == Some(me) {
                    rep.make_leader(me, &reg, ctx.now);
                    self.followed_stale = true;
                    ctx.touch(p);
                    self.after_leader_state_change(ctx, p);
                }
            }
            Err(e) => {
                let tp = ctx.tp(p);
                ctx.trace(
                    TraceKind::AlterPartitionRejected {
                        broker: me,
                        topic: ctx.partitions[p].topic.clone(),
                        partition: ctx.partitions[p].partition,
                        error: e.name().to_string(),
                    },
                    format!(
                        "The controller refused broker {me}'s AlterPartition for {tp} with {e}: its view (leader epoch {}, partition epoch {}) is stale; it waits for new metadata.",
                        rep.leader_epoch, rep.partition_epoch
                    ),
                );
                // Retry the HW computation with the (unchanged) committed ISR.
                self.after_leader_state_change(ctx, p);
            }
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

/// Whether this replica, as a follower, serves a consumer's fetch itself
/// (KIP-392). Since Fetch v11 a consumer's fetch carries client metadata, and
/// a follower answers it from its own log whatever `replica.selector.class`
/// says: the selector only decides, on the leader, where to send consumers.
/// The epochs must match; a consumer with another epoch gets the lab's usual
/// NOT_LEADER_OR_FOLLOWER and refreshes its metadata.
fn serves_consumer_as_follower(r: &Replica, fp: &FetchPartition) -> bool {
    r.role == Role::Follower && fp.current_leader_epoch == r.leader_epoch
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
    use crate::sim::io::TestWorld;

    #[test]
    fn a_parked_follower_fetch_records_the_followers_position_once() {
        // ReplicaManager updates a follower's fetch state on the first read;
        // DelayedFetch.onComplete reads again with readFromPurgatory = true,
        // which leaves it alone. The second update used to overwrite the
        // fetch time and the leader LEO seen, making the follower look caught
        // up later than Kafka would.
        let mut world = TestWorld::one_partition();
        let mut b = Broker::new(1, 1);
        b.host(0, Replica::new(0, vec![1, 2, 3]));
        let reg = PartitionRegistration {
            replicas: vec![1, 2, 3],
            isr: vec![1, 2, 3],
            leader: Some(1),
            leader_epoch: 0,
            partition_epoch: 0,
            leader_recovery_state: LeaderRecoveryState::Recovered,
            elr: Vec::new(),
            last_known_elr: Vec::new(),
        };
        if let Some(r) = b.replicas.get_mut(&0) {
            r.make_leader(1, &reg, 0);
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
            let _ = b.append_as_leader(ctx, 0, Acks::Leader, vec![Record::plain(5, 0)]);
        });
        assert!(b.parked_fetches.is_empty(), "the new record completed it");
        let f = b.replicas.get(&0).and_then(|r| r.follower(2)).cloned();
        let f = f.unwrap_or_default();
        assert_eq!(f.last_fetch_ms, 1_000, "recorded when the fetch arrived");
        assert_eq!(f.last_fetch_leader_leo, 5);
        assert_eq!(f.log_end_offset, Some(5));
    }
}
