//! The consumer (KAFKA_REPLICATION.md §6): positions below the high
//! watermark, leader-epoch validation, follower fetching (KIP-392).

use std::collections::BTreeMap;

use serde::Serialize;

use super::backoff;
use super::connection::{Broken, Connections, State};
use crate::sim::config::{ConsumerConfig, OffsetReset};
use crate::sim::io::{Ctx, Timer};
use crate::sim::pmap::{DenseMap, VecMap};
use crate::sim::protocol::*;
use crate::sim::trace::TraceKind;

#[derive(Clone, Debug, Default, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ConsumerPosition {
    pub offset: u64,
    /// Leader epoch of the last consumed record.
    pub epoch: Option<u32>,
    /// Leader epoch of the metadata the position was last validated against.
    #[serde(skip)]
    pub validated_epoch: Option<u32>,
    #[serde(skip)]
    pub awaiting: Option<u64>,
    #[serde(skip)]
    pub backoff_until: u64,
    pub consumed: u64,
    pub stopped: bool,
    /// KIP-392: the replica the leader named for this partition, and when
    /// that advice expires (`metadata.max.age.ms` after it was given).
    pub preferred_read_replica: Option<(BrokerId, u64)>,
    /// The broker that last answered a fetch of this partition with data
    /// (or an empty long poll) rather than an error or a redirect.
    pub read_from: Option<BrokerId>,
    /// The replica whose naming by the leader was last narrated: a leader
    /// that names the same replica again after every failed fetch from it
    /// is narrated once, until the consumer reads from some broker.
    #[serde(skip)]
    pub named: Option<BrokerId>,
    /// The group has no committed offset for it: auto.offset.reset decides
    /// (a ListOffsets to the leader) before it is read.
    #[serde(skip)]
    pub reset_pending: bool,
    /// Why the pending reset was asked for, for its narration (none: the
    /// group has no committed offset).
    #[serde(skip)]
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::opt_static_str::ser",
            deserialize_with = "crate::snapshot::opt_static_str::de"
        )
    )]
    pub reset_why: Option<&'static str>,
    /// The position was last set by a reset or a seek (auto.offset.reset,
    /// a truncation found by validation), not by a commit or the start: a
    /// record read again from it is re-read by that reset.
    #[serde(skip)]
    pub moved_by_reset: bool,
    /// The consumer's last [`Jump`] of this position, while nothing has been
    /// read since: a further move before the next read extends it.
    #[serde(skip)]
    pub jump: Option<u32>,
}

/// Why a position was set other than by reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum JumpCause {
    /// auto.offset.reset answered by ListOffsets (SubscriptionState.
    /// resetInitializingPositions / requestOffsetReset).
    Reset,
    /// The group's committed offset (OffsetFetch), unvalidated when it
    /// carries no leader epoch (KIP-320).
    Commit,
}

/// A position set other than by reading: from where (`None`: the partition
/// had no position yet) to where, when and why. Moves made before the next
/// read are one jump (a commit out of range, then its reset, is the reset).
/// Only starts and resets add one, so the list grows with them, never with
/// fetches; the fate of every record tells its skips by them (`delivery`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Jump {
    pub partition: PartitionIndex,
    pub at_ms: u64,
    pub from: Option<u64>,
    pub to: u64,
    pub cause: JumpCause,
}

/// Position `pos` of partition `p` moves to `to` other than by reading:
/// the pending jump is extended (a seek back only moves its end), or a new
/// one is recorded. `cause` `None` is a seek back, which skips nothing.
pub(super) fn jump(
    jumps: &mut Vec<Jump>,
    pos: &mut ConsumerPosition,
    p: PartitionIndex,
    now: u64,
    from: Option<u64>,
    to: u64,
    cause: Option<JumpCause>,
) {
    pos.offset = to;
    match (pos.jump.and_then(|i| jumps.get_mut(i as usize)), cause) {
        (Some(j), c) => {
            j.to = to;
            j.at_ms = now;
            j.cause = c.unwrap_or(j.cause);
        }
        (None, Some(cause)) if to > 0 => {
            pos.jump = Some(jumps.len() as u32);
            jumps.push(Jump {
                partition: p,
                at_ms: now,
                from,
                to,
                cause,
            });
        }
        _ => {}
    }
}

/// One record read by a consumer: where, which record, by which start of
/// the process, and whether the position it was read from came from a
/// reset (for the fate of every record's re-reads by cause).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Read {
    pub partition: PartitionIndex,
    pub offset: u64,
    pub id: u64,
    pub incarnation: u32,
    pub after_reset: bool,
}

impl ConsumerPosition {
    /// SubscriptionState's AWAIT_VALIDATION: the leader named in the
    /// metadata (`leader_epoch`) is newer than the epoch of the last record
    /// read, and the position has not been validated against it yet
    /// (OffsetsForLeaderEpoch). Such a position is not fetched from, nor
    /// committed (`hasValidPosition` is false).
    pub fn awaits_validation(&self, leader_epoch: u32) -> bool {
        self.epoch
            .is_some_and(|e| e < leader_epoch && self.validated_epoch != Some(leader_epoch))
    }
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Consumer {
    pub name: String,
    pub index: u32,
    pub topic_partitions: Vec<PartitionIndex>,
    pub config: ConsumerConfig,
    pub metadata: DenseMap<(Option<BrokerId>, u32)>,
    /// The metadata request in flight: its id and the broker it went to.
    metadata_request: Option<(u64, BrokerId)>,
    brokers: u32,
    pub positions: DenseMap<ConsumerPosition>,
    fetches: VecMap<u64, (BrokerId, Vec<PartitionIndex>)>,
    validations: VecMap<u64, PartitionIndex>,
    pub consumed: u64,
    pub truncations_detected: u64,
    pub errors: BTreeMap<String, u64>,
    /// Everything consumed, in order.
    pub consumed_records: Vec<Read>,
    /// Every position set other than by reading, in order.
    pub jumps: Vec<Jump>,
    next_metadata_ms: u64,
    metadata_refreshes: u32,
    /// The connection to each broker (NetworkClient).
    pub connections: Connections,
    /// A ConsumerPoll timer is set for a connection's backoff to pass.
    reconnect_wake: bool,
    /// A metadata refresh is wanted but no connection was up for it.
    metadata_due: bool,
    /// The process runs (false after a `crash_client` step until restarted).
    pub running: bool,
    /// Which start of the process this is: timers of an earlier one are dead.
    pub incarnation: u32,
    /// With a `group.id`: the group half (`client/group.rs`).
    pub group: Option<super::group::GroupMember>,
    /// Since when the application has not called poll() (a `stall_client`
    /// step), if it stopped.
    pub stalled_since: Option<u64>,
}

impl Consumer {
    /// As [`Producer::timer_live`]: a request timeout for a request no longer
    /// outstanding is a no-op.
    pub fn timer_live(&self, timer: &Timer) -> bool {
        match timer {
            Timer::RequestTimeout { id } => {
                self.metadata_request.is_some_and(|m| m.0 == *id)
                    || self.fetches.contains_key(id)
                    || self.validations.contains_key(id)
                    || self.group.as_ref().is_some_and(|g| g.owns(*id))
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
        config: ConsumerConfig,
        brokers: u32,
    ) -> Self {
        // A subscribing member holds no partition until its group assigns
        // it some.
        let positions = topic_partitions
            .iter()
            .filter(|_| !config.subscribe)
            .map(|p| (*p, ConsumerPosition::default()))
            .collect();
        let group = config.group_id.clone().map(|id| {
            let mut g = super::group::GroupMember::new(id);
            if config.subscribe && config.group_protocol == "consumer" {
                g.membership = Some(super::membership::Membership::kip848(
                    format!("{name}-1"),
                    config.group_instance_id.clone(),
                ));
            } else if config.subscribe {
                g.membership = Some(super::membership::Membership::new(
                    config.group_instance_id.clone(),
                ));
            } else {
                g.to_fetch = topic_partitions.clone();
            }
            g
        });
        Consumer {
            name,
            index,
            topic_partitions,
            metadata: DenseMap::new(),
            metadata_request: None,
            brokers,
            positions,
            fetches: VecMap::new(),
            validations: VecMap::new(),
            consumed: 0,
            truncations_detected: 0,
            errors: BTreeMap::new(),
            consumed_records: Vec::new(),
            jumps: Vec::new(),
            next_metadata_ms: 0,
            metadata_refreshes: 0,
            connections: Connections::new(Node::Consumer(index), brokers, config.connection),
            reconnect_wake: false,
            metadata_due: false,
            running: true,
            incarnation: 0,
            group,
            stalled_since: None,
            config,
        }
    }

    pub fn start(&mut self, ctx: &mut Ctx) {
        self.refresh_metadata(ctx);
        ctx.after(self.config.metadata_max_age_ms, Timer::MetadataRefresh);
        if self.group.is_some() {
            self.poll(ctx);
            if self.config.enable_auto_commit {
                ctx.after(
                    self.config.auto_commit_interval_ms,
                    Timer::AutoCommit { seq: 0 },
                );
            }
        }
    }

    /// The process dies: everything it held in memory is gone (positions,
    /// metadata, connections, the coordinator, uncommitted progress); what
    /// it consumed so far stays counted. Its timers die with it.
    pub fn crash(&mut self) {
        let mut fresh = Consumer::new(
            self.name.clone(),
            self.index,
            self.topic_partitions.clone(),
            self.config.clone(),
            self.brokers,
        );
        fresh.consumed = self.consumed;
        fresh.truncations_detected = self.truncations_detected;
        fresh.errors = std::mem::take(&mut self.errors);
        fresh.consumed_records = std::mem::take(&mut self.consumed_records);
        fresh.jumps = std::mem::take(&mut self.jumps);
        if let (Some(old), Some(new)) = (self.group.as_mut(), fresh.group.as_mut()) {
            new.errors = std::mem::take(&mut old.errors);
            new.commits = old.commits;
        }
        fresh.incarnation = self.incarnation + 1;
        // A KIP-848 member's new process chooses a new member id.
        if let Some(m) = fresh.group.as_mut().and_then(|g| g.membership.as_mut()) {
            if m.kip848 {
                m.member_id = format!("{}-{}", self.name, fresh.incarnation + 1).into();
            }
        }
        fresh.running = false;
        // The new process will open its connections as it needs them (the
        // scenario's clients start connected only because they are already
        // running at t=0).
        fresh.connections = fresh.connections.none_yet();
        *self = fresh;
    }

    /// Fetches out for partitions the consumer no longer holds: their
    /// answers for them are dropped.
    #[cfg(group_protocols)]
    pub(super) fn forget_fetches_of(&mut self, gone: &[PartitionIndex]) {
        for (_, parts) in self.fetches.values_mut() {
            parts.retain(|p| !gone.contains(p));
        }
        self.validations.retain(|_, p| !gone.contains(p));
    }

    /// The broker this consumer fetches partition `p` from at time `now`: its
    /// unexpired preferred read replica, else the leader in its metadata.
    pub fn fetch_target(&self, p: PartitionIndex, now: u64) -> Option<BrokerId> {
        let preferred = self
            .positions
            .get(&p)
            .and_then(|pos| pos.preferred_read_replica)
            // SubscriptionState.preferredReadReplica: expired only once the
            // time is past the expiry; at that millisecond it still holds.
            .filter(|(_, until)| *until >= now)
            .map(|(b, _)| b);
        preferred.or_else(|| self.metadata.get(&p).and_then(|m| m.0))
    }

    /// Narration of follower fetching is for consumers that set `client.rack`
    /// (the only ones a leader may send elsewhere); others keep the trace as
    /// it always was.
    fn narrates_read_replica(&self) -> bool {
        self.config.client_rack.is_some()
    }

    /// The leader `by` names `replica` the preferred read replica of `p`
    /// (KIP-392: `FetchResponse.preferredReadReplica`, which the consumer
    /// keeps in `SubscriptionState` and fetches from next).
    fn trace_named(&self, ctx: &mut Ctx, p: PartitionIndex, by: BrokerId, replica: BrokerId) {
        let rack = ctx.rack_of(replica).unwrap_or("none").to_string();
        let client_rack = self.config.client_rack.clone().unwrap_or_default();
        let tp = ctx.tp(p);
        let text = format!(
            "The leader of {tp}, broker {by}, names broker {replica} (rack {rack}) the preferred read replica of consumer {} (client.rack={client_rack}, KIP-392): the consumer's next fetches go there.",
            self.name
        );
        let info = &ctx.partitions[p];
        ctx.trace(
            TraceKind::ConsumerPreferredReplicaNamed {
                consumer: self.name.clone(),
                topic: info.topic.clone(),
                partition: info.partition,
                broker: replica,
                by,
            },
            text,
        );
    }

    /// The consumer now reads `p` from `broker` (first answer from it).
    fn trace_read_from(&mut self, ctx: &mut Ctx, p: PartitionIndex, broker: BrokerId) {
        if !self.narrates_read_replica() {
            return;
        }
        // A naming after this read is narrated again (it follows a read).
        if let Some(pos) = self.positions.get_mut(&p) {
            pos.named = None;
        }
        let leader = self.metadata.get(&p).and_then(|m| m.0) == Some(broker);
        let rack = ctx.rack_of(broker).unwrap_or("none").to_string();
        let client_rack = self.config.client_rack.clone().unwrap_or_default();
        let tp = ctx.tp(p);
        let text = if leader {
            format!(
                "Consumer {} (client.rack={client_rack}) reads {tp} from the leader, broker {broker} (rack {rack}).",
                self.name
            )
        } else {
            format!(
                "Consumer {} (client.rack={client_rack}) now reads {tp} from broker {broker}, a follower in rack {rack}: the leader named it the preferred read replica (KIP-392). A follower serves only records below its own high watermark, so the consumer trails the leader by a replication round.",
                self.name
            )
        };
        let info = &ctx.partitions[p];
        ctx.trace(
            TraceKind::ConsumerReadReplicaChanged {
                consumer: self.name.clone(),
                topic: info.topic.clone(),
                partition: info.partition,
                broker,
                leader,
            },
            text,
        );
    }

    /// Forget `broker` if it is the preferred read replica for `p` (a failed
    /// fetch to the leader changes nothing here). Narrated once per stretch
    /// of actually reading from it.
    fn forget_read_replica(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        broker: BrokerId,
        reason: String,
    ) {
        let narrate = self.narrates_read_replica();
        let Some(pos) = self.positions.get_mut(&p) else {
            return;
        };
        if pos.preferred_read_replica.map(|x| x.0) != Some(broker) {
            return;
        }
        pos.preferred_read_replica = None;
        if pos.read_from != Some(broker) {
            return;
        }
        pos.read_from = None;
        if !narrate {
            return;
        }
        let info = &ctx.partitions[p];
        let text = format!(
            "Consumer {} stops reading {} from broker {broker}, its preferred read replica: {reason}. It goes back to the leader, which may name a replica again; its position {} is kept.",
            self.name,
            ctx.tp(p),
            pos.offset
        );
        ctx.trace(
            TraceKind::ConsumerPreferredReplicaLost {
                consumer: self.name.clone(),
                topic: info.topic.clone(),
                partition: info.partition,
                broker,
                reason,
            },
            text,
        );
    }

    /// Apply a leader learned from metadata or from a fetch response's
    /// CurrentLeader (KIP-951), unless it is older than what the cache holds
    /// (KIP-320).
    fn learn_leader(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        leader: Option<BrokerId>,
        leader_epoch: u32,
    ) {
        let then = "; it validates its position before fetching again.";
        let (metadata, refreshes, name) =
            (&mut self.metadata, &mut self.metadata_refreshes, &self.name);
        super::learn_leader(
            ctx,
            metadata,
            refreshes,
            "Consumer",
            name,
            then,
            p,
            leader,
            leader_epoch,
        );
    }

    /// NetworkClient.leastLoadedNode over this consumer's requests in
    /// flight: fetches, metadata and the group's. (Its ListOffsets and
    /// OffsetsForLeaderEpoch requests are not counted: they go to a
    /// partition's leader, which the lab does not keep with them.) The
    /// consumer's NetworkClient allows 100 requests per connection.
    pub(super) fn least_loaded(&mut self, ctx: &mut Ctx) -> Option<BrokerId> {
        let fetches = &self.fetches;
        let metadata = self.metadata_request;
        let group = self.group.as_ref();
        let in_flight = |b: BrokerId| {
            let f = fetches.values().filter(|(to, _)| *to == b).count() as u32;
            f + u32::from(metadata.is_some_and(|(_, to)| to == b))
                + group.map_or(0, |g| g.in_flight_to(b))
        };
        self.connections.least_loaded(ctx, &in_flight, 100)
    }

    fn refresh_metadata(&mut self, ctx: &mut Ctx) {
        if self.metadata_request.is_some() {
            return;
        }
        if ctx.now < self.next_metadata_ms {
            ctx.after(self.next_metadata_ms - ctx.now, Timer::ConsumerPoll);
            return;
        }
        let Some(node) = self.least_loaded(ctx) else {
            // Every connection is down or still connecting: poll() asks
            // again once one is up or may be tried again.
            self.metadata_due = true;
            self.wake_for_reconnect(ctx);
            return;
        };
        self.metadata_due = false;
        self.metadata_refreshes += 1;
        self.next_metadata_ms =
            ctx.now + backoff(self.config.retry_backoff_ms, 1_000, self.metadata_refreshes);
        let id = ctx.new_id();
        self.metadata_request = Some((id, node));
        ctx.send(Node::Broker(node), Message::Metadata { id });
        ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
    }

    /// Poll again when the next connection that is backing off may be tried.
    pub(super) fn wake_for_reconnect(&mut self, ctx: &mut Ctx) {
        if self.reconnect_wake {
            return;
        }
        if let Some(at) = self.connections.next_reconnect_at(ctx.now) {
            self.reconnect_wake = true;
            ctx.after(at.saturating_sub(ctx.now).max(1), Timer::ConsumerPoll);
        }
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        match timer {
            Timer::ConsumerPoll => {
                self.reconnect_wake = false;
                self.poll(ctx)
            }
            Timer::ConnectionSetupTimeout { broker, id } => self.setup_timed_out(ctx, broker, id),
            Timer::AutoCommit { seq } => self.auto_commit(ctx, seq),
            Timer::MemberHeartbeat => self.heartbeat_due(ctx),
            Timer::MaxPollExpired { since } if self.stalled_since == Some(since) => {
                self.leave_group(ctx)
            }
            Timer::MetadataRefresh => {
                self.refresh_metadata(ctx);
                ctx.after(self.config.metadata_max_age_ms, Timer::MetadataRefresh);
            }
            Timer::RequestTimeout { id } => {
                // A timed-out request closes its connection.
                let broker = if let Some((_, b)) = self.metadata_request.filter(|m| m.0 == id) {
                    Some(b)
                } else {
                    self.fetches.get(&id).map(|f| f.0).or_else(|| {
                        self.validations
                            .get(&id)
                            .and_then(|p| self.metadata.get(p).and_then(|m| m.0))
                            .or_else(|| self.group.as_ref().and_then(|g| g.broker_of(id)))
                    })
                };
                if let Some(b) = broker {
                    self.connections.close(ctx.now, b);
                }
                self.request_failed(ctx, id, ErrorCode::RequestTimedOut)
            }
            _ => {}
        }
    }

    /// A connect attempt gave up: fresh metadata, and a new attempt later.
    fn setup_timed_out(&mut self, ctx: &mut Ctx, broker: BrokerId, id: u64) {
        if self.connections.on_setup_timeout(ctx.now, broker, id) {
            self.refresh_metadata(ctx);
            self.wake_for_reconnect(ctx);
        }
    }

    fn connected(&mut self, ctx: &mut Ctx, broker: BrokerId, id: u64) {
        if self.connections.on_connected(broker, id) {
            self.poll(ctx);
        }
    }

    fn request_failed(&mut self, ctx: &mut Ctx, id: u64, e: ErrorCode) {
        if self.group.as_ref().is_some_and(|g| g.owns(id)) {
            self.group_request_failed(ctx, id, e);
        } else if self.metadata_request.is_some_and(|m| m.0 == id) {
            self.metadata_request = None;
            ctx.after(self.config.retry_backoff_ms.max(1), Timer::ConsumerPoll);
        } else if let Some((broker, parts)) = self.fetches.remove(&id) {
            *self.errors.entry(e.name().to_string()).or_default() += 1;
            // Back off these partitions; other leaders' answers must not make
            // the consumer hammer the broken connection. A preferred read
            // replica that failed is forgotten (the Java consumer clears it
            // for every partition of the failed fetch).
            let until = ctx.now + self.config.retry_backoff_ms;
            for p in parts {
                if let Some(pos) = self.positions.get_mut(&p) {
                    pos.backoff_until = until;
                }
                self.forget_read_replica(ctx, p, broker, format!("the fetch failed ({e})"));
            }
            self.refresh_metadata(ctx);
            ctx.after(self.config.retry_backoff_ms.max(1), Timer::ConsumerPoll);
        } else if let Some(p) = self.validations.remove(&id) {
            if let Some(pos) = self.positions.get_mut(&p) {
                pos.awaiting = None;
                pos.backoff_until = ctx.now + self.config.retry_backoff_ms;
            }
            self.refresh_metadata(ctx);
            ctx.after(self.config.retry_backoff_ms.max(1), Timer::ConsumerPoll);
        }
    }

    pub fn on_message(&mut self, ctx: &mut Ctx, msg: Message) {
        match msg {
            Message::MetadataResponse {
                id,
                partitions,
                offline,
            } => {
                if self.metadata_request.is_none_or(|m| m.0 != id) {
                    return;
                }
                self.metadata_request = None;
                // AbstractFetch.selectReadReplica: a preferred read replica
                // the metadata no longer lists as online is dropped; the
                // partition goes back to its leader.
                let gone: Vec<(PartitionIndex, BrokerId)> = self
                    .positions
                    .iter()
                    .filter_map(|(p, pos)| pos.preferred_read_replica.map(|r| (p, r.0)))
                    .filter(|(_, b)| offline.contains(b))
                    .collect();
                for (p, b) in gone {
                    self.forget_read_replica(
                        ctx,
                        p,
                        b,
                        format!("the metadata no longer lists broker {b} as online"),
                    );
                }
                for pm in partitions {
                    if !self.positions.contains_key(&pm.partition) {
                        continue;
                    }
                    self.learn_leader(ctx, pm.partition, pm.leader, pm.leader_epoch);
                }
                self.poll(ctx);
            }
            Message::FetchResponse { id, partitions } => {
                let Some((broker, asked)) = self.fetches.remove(&id) else {
                    return;
                };
                let mut refresh = false;
                let max_age = self.config.metadata_max_age_ms;
                for r in partitions {
                    let p = r.partition;
                    // A partition given up while the fetch was out is not
                    // read from its answer.
                    if !asked.contains(&p) {
                        continue;
                    }
                    let Some(pos) = self.positions.get(&p) else {
                        continue;
                    };
                    let from_preferred = pos.preferred_read_replica.map(|x| x.0) == Some(broker);
                    if let Some(e) = r.error {
                        *self.errors.entry(e.name().to_string()).or_default() += 1;
                        if from_preferred {
                            // KIP-392: any error from the preferred replica sends
                            // the consumer back to the leader; OFFSET_OUT_OF_RANGE
                            // from a follower never resets the position.
                            self.forget_read_replica(ctx, p, broker, format!("it answered {e}"));
                            if e == ErrorCode::OffsetOutOfRange {
                                continue;
                            }
                        }
                        let Some(pos) = self.positions.get_mut(&p) else {
                            continue;
                        };
                        match e {
                            ErrorCode::OffsetOutOfRange => {
                                let position = pos.offset;
                                let reset = self.config.auto_offset_reset;
                                let action = if reset == OffsetReset::None {
                                    // No reset policy: poll() raises
                                    // OffsetOutOfRangeException and the
                                    // application must decide.
                                    pos.stopped = true;
                                    "auto.offset.reset=none: poll() raises OffsetOutOfRangeException and it stops reading the partition".to_string()
                                } else {
                                    // AbstractFetch: requestOffsetReset with
                                    // the policy; the next poll asks the
                                    // leader where that is (ListOffsets).
                                    pos.reset_pending = true;
                                    pos.reset_why = Some("its position was out of range");
                                    pos.epoch = None;
                                    format!(
                                        "auto.offset.reset={}: it asks the leader where to resume (ListOffsets)",
                                        reset.name()
                                    )
                                };
                                let info = &ctx.partitions[p];
                                ctx.trace(
                                    TraceKind::ConsumerOffsetOutOfRange {
                                        consumer: self.name.clone(),
                                        topic: info.topic.clone(),
                                        partition: info.partition,
                                        position,
                                        reset: reset.name(),
                                    },
                                    format!(
                                        "Consumer {}'s position {position} on {} is out of range for broker {broker} (OFFSET_OUT_OF_RANGE); {action}.",
                                        self.name,
                                        ctx.tp(p)
                                    ),
                                );
                            }
                            _ => {
                                pos.backoff_until = ctx.now + self.config.retry_backoff_ms;
                                refresh = true;
                                // KIP-951 (AbstractFetch): NOT_LEADER_OR_FOLLOWER
                                // and FENCED_LEADER_EPOCH name the new leader;
                                // the consumer uses it before its metadata
                                // refresh comes back.
                                if matches!(
                                    e,
                                    ErrorCode::NotLeaderOrFollower | ErrorCode::FencedLeaderEpoch
                                ) {
                                    if let Some((l, ep)) = r.current_leader {
                                        self.learn_leader(ctx, p, Some(l), ep);
                                    }
                                }
                            }
                        }
                        continue;
                    }
                    if let Some(replica) = r.preferred_read_replica {
                        // The leader sent no records, only where to read from.
                        let narrate = self.narrates_read_replica();
                        let mut named_now = false;
                        if let Some(pos) = self.positions.get_mut(&p) {
                            pos.preferred_read_replica = Some((replica, ctx.now + max_age));
                            named_now = narrate && pos.named != Some(replica);
                            if named_now {
                                pos.named = Some(replica);
                            }
                        }
                        if named_now {
                            self.trace_named(ctx, p, broker, replica);
                        }
                        continue;
                    }
                    if pos.read_from != Some(broker) {
                        if let Some(pos) = self.positions.get_mut(&p) {
                            pos.read_from = Some(broker);
                        }
                        self.trace_read_from(ctx, p, broker);
                    }
                    let Some(pos) = self.positions.get_mut(&p) else {
                        continue;
                    };
                    if r.base_offset != pos.offset {
                        continue;
                    }
                    for (i, rec) in r.records.iter().enumerate() {
                        self.consumed_records.push(Read {
                            partition: p,
                            offset: r.base_offset + i as u64,
                            id: rec.id,
                            incarnation: self.incarnation,
                            after_reset: pos.moved_by_reset,
                        });
                    }
                    let n = r.records.len() as u64;
                    if let Some(last) = r.records.last() {
                        pos.epoch = Some(last.epoch);
                    }
                    pos.offset += n;
                    pos.jump = None;
                    pos.consumed += n;
                    self.consumed += n;
                }
                if refresh {
                    self.refresh_metadata(ctx);
                    ctx.after(self.config.retry_backoff_ms.max(1), Timer::ConsumerPoll);
                }
                self.poll(ctx);
            }
            Message::OffsetsForLeaderEpochResponse {
                id,
                partition,
                result,
            } => {
                if self.validations.remove(&id).is_none() {
                    return;
                }
                let leader_epoch = self.metadata.get(&partition).map(|m| m.1);
                let reset = self.config.auto_offset_reset;
                let Some(pos) = self.positions.get_mut(&partition) else {
                    return;
                };
                pos.awaiting = None;
                match result {
                    Ok(None) => {
                        // SubscriptionState.maybeCompleteValidation: an
                        // undefined epoch or end offset cannot validate the
                        // position, so it is reset by auto.offset.reset
                        // (with `none`, poll() raises the error).
                        pos.reset_pending = true;
                        pos.reset_why = Some("the leader could not validate it (undefined epoch)");
                        pos.epoch = None;
                    }
                    Ok(Some((_, end))) => {
                        pos.validated_epoch = leader_epoch;
                        if end < pos.offset {
                            self.truncations_detected += 1;
                            let position = pos.offset;
                            let info = &ctx.partitions[partition];
                            let action = if reset == OffsetReset::None {
                                pos.stopped = true;
                                "auto.offset.reset=none: it raises LogTruncationException"
                                    .to_string()
                            } else {
                                jump(&mut self.jumps, pos, partition, ctx.now, None, end, None);
                                pos.moved_by_reset = true;
                                format!("it seeks back to the divergence point {end}")
                            };
                            ctx.trace(
                                TraceKind::ConsumerTruncationDetected {
                                    consumer: self.name.clone(),
                                    topic: info.topic.clone(),
                                    partition: info.partition,
                                    position,
                                    divergent_offset: end,
                                },
                                format!(
                                    "Consumer {} validated its position {position} on {} (KIP-320): the new leader's log ends that epoch at {end}, so records it consumed were truncated; {action}.",
                                    self.name,
                                    ctx.tp(partition)
                                ),
                            );
                        }
                    }
                    Err(_) => {
                        pos.backoff_until = ctx.now + self.config.retry_backoff_ms;
                        self.refresh_metadata(ctx);
                    }
                }
                self.poll(ctx);
            }
            Message::ListOffsetsResponse {
                id,
                partition,
                result,
            } => {
                if self.validations.remove(&id).is_none() {
                    return;
                }
                let name = self.name.clone();
                let reset = self.config.auto_offset_reset;
                let Some(pos) = self.positions.get_mut(&partition) else {
                    return;
                };
                pos.awaiting = None;
                match result {
                    Ok(found) => {
                        let policy = reset.name();
                        let info = &ctx.partitions[partition];
                        let tp = ctx.tp(partition);
                        let (offset, text) = match found {
                            Some((offset, epoch)) => {
                                // OffsetFetcherUtils.resetPositionIfNeeded:
                                // the position takes the offset and the
                                // epoch of its record, so it can be
                                // validated after a leader change (KIP-320).
                                let from = pos.reset_why.map(|_| pos.offset);
                                let why = pos
                                    .reset_why
                                    .take()
                                    .unwrap_or("the group has no committed offset for it");
                                pos.reset_pending = false;
                                let cause = Some(JumpCause::Reset);
                                jump(
                                    &mut self.jumps,
                                    pos,
                                    partition,
                                    ctx.now,
                                    from,
                                    offset,
                                    cause,
                                );
                                pos.moved_by_reset = true;
                                pos.epoch = epoch;
                                let what = match reset {
                                    OffsetReset::Earliest => "the log start".to_string(),
                                    OffsetReset::ByDuration(d) => {
                                        let t = ctx.now.saturating_sub(d);
                                        format!(
                                            "the first record sent at or after {}.{:03} s",
                                            t / 1000,
                                            t % 1000
                                        )
                                    }
                                    _ => {
                                        "the high watermark: records already in the log are skipped"
                                            .to_string()
                                    }
                                };
                                (
                                    Some(offset),
                                    format!("Consumer {name} resets its position on {tp} ({why}): auto.offset.reset={policy} puts it at {offset}, {what}."),
                                )
                            }
                            None => {
                                // No record that recent below the high
                                // watermark (UNKNOWN_OFFSET): the partition
                                // stays awaiting its reset, asked again once
                                // the request's retry time has passed.
                                pos.backoff_until = ctx.now + self.config.request_timeout_ms;
                                (
                                    None,
                                    format!("Consumer {name} resets its position on {tp} with auto.offset.reset={policy}, but no committed record is that recent (ListOffsets answers -1); it asks again after request.timeout.ms={} ms.", self.config.request_timeout_ms),
                                )
                            }
                        };
                        ctx.trace(
                            TraceKind::ConsumerOffsetReset {
                                consumer: name.clone(),
                                topic: info.topic.clone(),
                                partition: info.partition,
                                reset: policy,
                                offset,
                            },
                            text,
                        );
                    }
                    Err(_) => {
                        pos.backoff_until = ctx.now + self.config.retry_backoff_ms;
                        self.refresh_metadata(ctx);
                    }
                }
                self.poll(ctx);
            }
            Message::Connected { id, broker } => self.connected(ctx, broker, id),
            Message::ConnectionClosed { broker } => {
                self.connections.close(ctx.now, broker);
                self.group_connection_closed(broker);
                self.refresh_metadata(ctx);
            }
            m @ (Message::FindCoordinatorResponse { .. }
            | Message::OffsetFetchResponse { .. }
            | Message::OffsetCommitResponse { .. }) => self.on_group_message(ctx, m),
            #[cfg(group_protocols)]
            Message::ConsumerHeartbeatResponse { id, result } => {
                self.on_consumer_heartbeat(ctx, id, result)
            }
            #[cfg(group_protocols)]
            m @ (Message::JoinGroupResponse { .. }
            | Message::SyncGroupResponse { .. }
            | Message::GroupHeartbeatResponse { .. }) => self.on_membership_message(ctx, m),
            Message::Disconnected { id, to } => {
                if let Node::Broker(b) = to {
                    if self.connections.on_disconnected(ctx.now, b, id) == Some(Broken::Refused) {
                        // Refused: nothing was sent. Fresh metadata, and a
                        // new attempt after the backoff. A coordinator that
                        // cannot be reached is marked unknown
                        // (AbstractCoordinator.checkAndGetCoordinator).
                        self.group_connection_closed(b);
                        self.refresh_metadata(ctx);
                        self.wake_for_reconnect(ctx);
                        return;
                    }
                }
                self.request_failed(ctx, id, ErrorCode::NetworkException)
            }
            _ => {}
        }
    }

    /// Fetch every partition that is idle, one request per broker: its
    /// leader, or its preferred read replica (KIP-392).
    pub(super) fn poll(&mut self, ctx: &mut Ctx) {
        if self.stalled_since.is_some() {
            // The application does not call poll(): nothing is fetched or
            // committed (heartbeats have their own timer).
            return;
        }
        if self.group.is_some() {
            self.drive_group(ctx);
            if !self.may_fetch() {
                if self.metadata_due {
                    self.refresh_metadata(ctx);
                }
                return;
            }
        }
        let mut by_broker: VecMap<BrokerId, Vec<FetchPartition>> = VecMap::new();
        let busy: Vec<PartitionIndex> = self
            .fetches
            .values()
            .flat_map(|(_, ps)| ps.iter().copied())
            .collect();
        let mut wake: Option<u64> = None;
        let mut need_metadata = false;
        let mut expired: Vec<(PartitionIndex, BrokerId)> = Vec::new();
        let mut no_offset: Vec<PartitionIndex> = Vec::new();
        let mut not_ready = false;
        for (p, pos) in self.positions.iter_mut() {
            if pos.stopped || pos.awaiting.is_some() || busy.contains(&p) {
                continue;
            }
            if pos.backoff_until > ctx.now {
                wake = Some(wake.map_or(pos.backoff_until, |w: u64| w.min(pos.backoff_until)));
                continue;
            }
            let Some((Some(leader), epoch)) = self.metadata.get(&p).copied() else {
                need_metadata = true;
                continue;
            };
            if pos.reset_pending {
                // SubscriptionState.resetInitializingPositions: no committed
                // offset, so auto.offset.reset; `none` is an error for the
                // application (NoOffsetForPartitionException).
                let reset = self.config.auto_offset_reset;
                if reset == OffsetReset::None {
                    pos.reset_pending = false;
                    pos.stopped = true;
                    no_offset.push(p);
                    continue;
                }
                let spec = match reset {
                    OffsetReset::Earliest => OffsetSpec::Earliest,
                    OffsetReset::ByDuration(d) => OffsetSpec::Timestamp(ctx.now.saturating_sub(d)),
                    _ => OffsetSpec::Latest,
                };
                let asked = ask_leader(
                    ctx,
                    &mut self.connections,
                    &mut self.validations,
                    self.config.request_timeout_ms,
                    leader,
                    p,
                    |id| Message::ListOffsets {
                        id,
                        partition: p,
                        current_leader_epoch: epoch,
                        spec,
                    },
                );
                match asked {
                    Some(id) => pos.awaiting = Some(id),
                    None => not_ready = true,
                }
                continue;
            }
            if let Some(record_epoch) = pos.epoch {
                if pos.awaits_validation(epoch) {
                    let asked = ask_leader(
                        ctx,
                        &mut self.connections,
                        &mut self.validations,
                        self.config.request_timeout_ms,
                        leader,
                        p,
                        |id| Message::OffsetsForLeaderEpoch {
                            id,
                            partition: p,
                            current_leader_epoch: epoch,
                            leader_epoch: record_epoch,
                        },
                    );
                    match asked {
                        Some(id) => pos.awaiting = Some(id),
                        None => not_ready = true,
                    }
                    continue;
                }
            }
            // KIP-392: fetch from the preferred read replica while the
            // leader's advice is fresh; once it expires, ask the leader again.
            let target = match pos.preferred_read_replica {
                Some((b, until)) if until >= ctx.now => b,
                Some((b, _)) => {
                    expired.push((p, b));
                    leader
                }
                None => leader,
            };
            if !self.connections.ready(ctx, target) {
                // NetworkClient.ready: no fetch goes to a broker whose
                // connection is not up; the partition waits.
                not_ready = true;
                continue;
            }
            by_broker.or_default(target).push(FetchPartition {
                partition: p,
                fetch_offset: pos.offset,
                current_leader_epoch: epoch,
                last_fetched_epoch: None,
            });
        }
        for p in no_offset {
            let info = &ctx.partitions[p];
            ctx.trace(
                TraceKind::ConsumerOffsetReset {
                    consumer: self.name.clone(),
                    topic: info.topic.clone(),
                    partition: info.partition,
                    reset: "none".to_string(),
                    offset: None,
                },
                format!(
                    "Consumer {} has no committed offset for {} and auto.offset.reset=none: poll() raises NoOffsetForPartitionException and it reads nothing from the partition.",
                    self.name,
                    ctx.tp(p)
                ),
            );
        }
        let max_age = self.config.metadata_max_age_ms;
        for (p, b) in expired {
            self.forget_read_replica(
                ctx,
                p,
                b,
                format!("the leader's advice expired after metadata.max.age.ms={max_age}"),
            );
        }
        let rack_id = self.config.client_rack.clone().unwrap_or_default();
        for (broker, partitions) in by_broker {
            let id = ctx.new_id();
            let ps = partitions.iter().map(|f| f.partition).collect();
            self.fetches.insert(id, (broker, ps));
            ctx.send(
                Node::Broker(broker),
                Message::Fetch {
                    id,
                    replica: None,
                    broker_epoch: 0,
                    max_wait_ms: self.config.fetch_max_wait_ms,
                    partitions,
                    rack_id: rack_id.clone(),
                },
            );
            ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
        }
        if need_metadata || self.metadata_due {
            self.refresh_metadata(ctx);
        }
        if not_ready {
            self.wake_for_reconnect(ctx);
        }
        if let Some(w) = wake {
            ctx.after((w - ctx.now).max(1), Timer::ConsumerPoll);
        }
    }
}

/// Send partition `p`'s leader a one-partition request (`make` builds it
/// from its id) if the connection is up: the request is remembered in
/// `pending` with its timeout. Returns its id, or `None` when the connection
/// is not ready (nothing is sent).
fn ask_leader(
    ctx: &mut Ctx,
    connections: &mut Connections,
    pending: &mut VecMap<u64, PartitionIndex>,
    timeout_ms: u64,
    leader: BrokerId,
    p: PartitionIndex,
    make: impl FnOnce(u64) -> Message,
) -> Option<u64> {
    if !connections.ready(ctx, leader) {
        return None;
    }
    let id = ctx.new_id();
    pending.insert(id, p);
    ctx.send(Node::Broker(leader), make(id));
    ctx.after(timeout_ms, Timer::RequestTimeout { id });
    Some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::io::TestWorld;
    use crate::sim::log::Record;
    use crate::sim::trace::Trace;

    fn consumer(reset: OffsetReset) -> Consumer {
        let mut config = match ConsumerConfig::parse(&Default::default(), "consumer") {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        config.auto_offset_reset = reset;
        let mut c = Consumer::new("c".to_string(), 0, vec![0], config, 3);
        c.metadata.insert(0, (Some(1), 4));
        if let Some(pos) = c.positions.get_mut(&0) {
            pos.offset = 120;
        }
        c.fetches.insert(7, (1, vec![0]));
        c
    }

    /// The leader answers a fetch at offset 120 with OFFSET_OUT_OF_RANGE (its
    /// log now ends at 100, HW 100).
    fn out_of_range(c: &mut Consumer) -> Trace {
        let mut world = TestWorld::one_partition();
        world.at(5_000, |ctx| {
            c.on_message(
                ctx,
                Message::FetchResponse {
                    id: 7,
                    partitions: vec![FetchPartitionResponse {
                        partition: 0,
                        error: Some(ErrorCode::OffsetOutOfRange),
                        high_watermark: 100,
                        log_end_offset: 100,
                        diverging_epoch: None,
                        current_leader: Some((1, 4)),
                        records: Vec::new(),
                        base_offset: 120,
                        preferred_read_replica: None,
                        chunk: None,
                    }],
                },
            )
        });
        world.trace
    }

    #[test]
    fn auto_offset_reset_none_raises_on_offset_out_of_range_instead_of_resetting() {
        // ConsumerConfig: with auto.offset.reset=none the consumer throws
        // (OffsetOutOfRangeException from poll) rather than picking a position.
        let mut c = consumer(OffsetReset::None);
        let trace = out_of_range(&mut c);
        let pos = c.positions.get(&0).cloned().unwrap_or_default();
        assert!(pos.stopped, "it stops reading the partition");
        assert_eq!(pos.offset, 120, "the position is not moved");
        assert!(trace.events().any(|e| matches!(
            &e.kind,
            TraceKind::ConsumerOffsetOutOfRange { reset, position: 120, .. } if reset == "none"
        )));
    }

    /// AbstractFetch.handleInitializeErrors: OFFSET_OUT_OF_RANGE with a
    /// reset policy requests a reset (SubscriptionState.requestOffsetReset);
    /// the position moves only when the leader answers the ListOffsets, to
    /// its high watermark for `latest`, with the leader epoch it gives.
    #[test]
    fn auto_offset_reset_latest_seeks_to_the_high_watermark_on_offset_out_of_range() {
        let mut c = consumer(OffsetReset::Latest);
        let trace = out_of_range(&mut c);
        let pos = c.positions.get(&0).cloned().unwrap_or_default();
        assert!(!pos.stopped);
        assert!(pos.reset_pending, "a reset is requested");
        assert_eq!(pos.offset, 120, "not moved before the leader answers");
        assert!(trace.events().any(|e| matches!(
            &e.kind,
            TraceKind::ConsumerOffsetOutOfRange { reset, position: 120, .. } if reset == "latest"
        )));
        c.validations.insert(99, 0);
        let mut world = TestWorld::one_partition();
        world.at(5_010, |ctx| {
            c.on_message(
                ctx,
                Message::ListOffsetsResponse {
                    id: 99,
                    partition: 0,
                    result: Ok(Some((100, Some(4)))),
                },
            )
        });
        let pos = c.positions.get(&0).cloned().unwrap_or_default();
        assert!(!pos.reset_pending);
        assert_eq!((pos.offset, pos.epoch), (100, Some(4)));
    }

    /// KIP-951 (AbstractFetch): a NOT_LEADER_OR_FOLLOWER or
    /// FENCED_LEADER_EPOCH fetch error carries CurrentLeader; the consumer
    /// takes the new leader from it instead of waiting for its metadata
    /// refresh, and ignores a hint older than what it knows (KIP-320).
    #[test]
    fn a_fetch_error_naming_the_current_leader_moves_the_consumer_to_it() {
        for error in [ErrorCode::NotLeaderOrFollower, ErrorCode::FencedLeaderEpoch] {
            let mut c = consumer(OffsetReset::Latest);
            let mut world = TestWorld::one_partition();
            let answer = |current_leader| Message::FetchResponse {
                id: 7,
                partitions: vec![FetchPartitionResponse {
                    partition: 0,
                    error: Some(error),
                    high_watermark: 0,
                    log_end_offset: 0,
                    diverging_epoch: None,
                    current_leader,
                    records: Vec::new(),
                    base_offset: 120,
                    preferred_read_replica: None,
                    chunk: None,
                }],
            };
            world.at(5_000, |ctx| c.on_message(ctx, answer(Some((2, 5)))));
            assert_eq!(c.metadata.get(&0).copied(), Some((Some(2), 5)), "{error}");
            c.fetches.insert(7, (2, vec![0]));
            world.at(5_100, |ctx| c.on_message(ctx, answer(Some((1, 4)))));
            assert_eq!(
                c.metadata.get(&0).copied(),
                Some((Some(2), 5)),
                "stale hint"
            );
        }
    }

    /// What a handler sent, and the timers it set.
    type Outputs = (Vec<(Node, Message)>, Vec<(u64, Timer)>);

    /// Run `f` at `now`; what it sent and the timers it set.
    fn run(world: &mut TestWorld, now: u64, f: impl FnOnce(&mut Ctx)) -> Outputs {
        world.at(now, |ctx| {
            f(ctx);
            (
                std::mem::take(&mut ctx.sends),
                std::mem::take(&mut ctx.timers),
            )
        })
    }

    /// The leader's answer to fetch 7: `records` from offset 120, or `error`.
    fn fetch_answer(error: Option<ErrorCode>, records: Vec<Record>) -> Message {
        Message::FetchResponse {
            id: 7,
            partitions: vec![FetchPartitionResponse {
                partition: 0,
                error,
                high_watermark: 200,
                log_end_offset: 200,
                diverging_epoch: None,
                current_leader: None,
                records,
                base_offset: 120,
                preferred_read_replica: None,
                chunk: None,
            }],
        }
    }

    fn position(c: &Consumer) -> ConsumerPosition {
        c.positions.get(&0).cloned().unwrap_or_default()
    }

    fn position_mut(c: &mut Consumer) -> &mut ConsumerPosition {
        c.positions
            .get_mut(&0)
            .unwrap_or_else(|| panic!("partition 0 is assigned"))
    }

    /// What a poll sends, by request name.
    fn polled(world: &mut TestWorld, c: &mut Consumer, now: u64) -> Vec<&'static str> {
        let (sends, _) = run(world, now, |ctx| c.poll(ctx));
        sends.iter().map(|(_, m)| m.kind()).collect()
    }

    /// As the producer's: a timer that can no longer do anything is dropped
    /// from the cluster's queue. A request timeout lives while its request
    /// (a fetch, the metadata request, a validation or reset) awaits an
    /// answer; a connection setup timeout while that very attempt connects.
    #[test]
    fn a_consumers_request_timeout_lives_only_while_its_request_awaits_an_answer() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        c.metadata_request = Some((10, 3));
        c.validations.insert(12, 0);
        let timeout = |id| Timer::RequestTimeout { id };
        assert!(c.timer_live(&timeout(7)), "the fetch");
        assert!(c.timer_live(&timeout(10)), "the metadata request");
        assert!(c.timer_live(&timeout(12)), "the ListOffsets");
        assert!(!c.timer_live(&timeout(11)), "answered long ago");
        world.at(5_000, |ctx| {
            c.on_message(ctx, fetch_answer(None, Vec::new()))
        });
        assert!(!c.timer_live(&timeout(7)), "answered: its timer is dead");

        c.connections = Connections::new(Node::Consumer(0), 3, c.config.connection).none_yet();
        assert!(!world.at(6_000, |ctx| c.connections.ready(ctx, 2)));
        let Some(State::Connecting { id: attempt }) = c.connections.state(2) else {
            panic!("connecting to broker 2")
        };
        let setup = |broker, id| Timer::ConnectionSetupTimeout { broker, id };
        assert!(c.timer_live(&setup(2, attempt)));
        assert!(!c.timer_live(&setup(2, attempt + 1)), "another attempt's");
        assert!(!c.timer_live(&setup(3, attempt)), "broker 3: no attempt");
        assert!(c.timer_live(&Timer::MetadataRefresh));
        assert!(c.timer_live(&Timer::ConsumerPoll));
    }

    /// NetworkClient.leastLoadedNode counts each node's requests in flight
    /// (inFlightRequestCount): the consumer's fetches to it and its
    /// metadata request if it went there. From a random start, the first
    /// node with none wins, else the one with the fewest.
    #[test]
    fn least_loaded_node_counts_the_fetches_and_the_metadata_request_out_to_each_broker() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        c.fetches.insert(8, (2, Vec::new()));
        c.fetches.insert(9, (2, Vec::new()));
        c.fetches.insert(10, (3, Vec::new()));
        let mut picks = |c: &mut Consumer| -> Vec<Option<BrokerId>> {
            (0..24)
                .map(|_| world.at(1_000, |ctx| c.least_loaded(ctx)))
                .collect()
        };
        let out = picks(&mut c);
        assert!(
            out.iter().all(|b| matches!(b, Some(1 | 3))),
            "one fetch each to 1 and 3, two to 2: {out:?}"
        );
        assert!(out.contains(&Some(1)) && out.contains(&Some(3)), "{out:?}");

        c.fetches = VecMap::new();
        c.metadata_request = Some((11, 2));
        let out = picks(&mut c);
        assert!(
            out.iter().all(|b| matches!(b, Some(1 | 3))),
            "the metadata request is out to 2: {out:?}"
        );
    }

    /// Metadata backoff (Metadata.refreshBackoff, KIP-580): refreshes that
    /// bring nothing new come `retry.backoff.ms` apart, doubling up to
    /// `retry.backoff.max.ms` (1 s). Before the backoff has passed the
    /// consumer only polls again when it has (once, not every millisecond);
    /// at that millisecond it asks.
    #[test]
    fn metadata_refreshes_back_off_from_retry_backoff_ms_doubling_to_one_second() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        let (mut before, mut now) = (0, 1_000);
        let mut gaps = Vec::new();
        for round in 0..6 {
            if round > 0 {
                for at in [before + 1, now - 1] {
                    let (sends, timers) = run(&mut world, at, |ctx| c.refresh_metadata(ctx));
                    assert!(sends.is_empty(), "still backing off at {at}: {sends:?}");
                    assert_eq!(timers, [(now, Timer::ConsumerPoll)], "at {at}");
                }
            }
            let (sends, _) = run(&mut world, now, |ctx| c.refresh_metadata(ctx));
            let [(Node::Broker(_), Message::Metadata { id })] = sends[..] else {
                panic!("one metadata request at {now}: {sends:?}")
            };
            world.at(now + 1, |ctx| {
                c.on_message(
                    ctx,
                    Message::MetadataResponse {
                        id,
                        partitions: Vec::new(),
                        offline: Vec::new(),
                    },
                )
            });
            gaps.push(c.next_metadata_ms - now);
            (before, now) = (now, c.next_metadata_ms);
        }
        assert_eq!(gaps, [100, 200, 400, 800, 1_000, 1_000]);
    }

    /// metadata.max.age.ms: the consumer refreshes its metadata that often
    /// even when nothing failed.
    #[test]
    fn the_metadata_is_refreshed_every_metadata_max_age_ms() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        let max_age = c.config.metadata_max_age_ms;
        let (sends, timers) = run(&mut world, max_age, |ctx| {
            c.on_timer(ctx, Timer::MetadataRefresh)
        });
        assert!(
            matches!(sends[..], [(Node::Broker(_), Message::Metadata { .. })]),
            "{sends:?}"
        );
        assert!(
            timers.contains(&(2 * max_age, Timer::MetadataRefresh)),
            "{timers:?}"
        );
    }

    /// NetworkClient.handleTimedOutRequests: a request that times out
    /// closes the connection it went on, and no other; it fails like a
    /// broken one (a fetch's partitions back off `retry.backoff.ms`, its
    /// error is counted; the metadata request is asked again later).
    #[test]
    fn a_timed_out_request_closes_its_own_connection_and_fails_only_itself() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        c.metadata_request = Some((10, 3));
        let backoff = c.config.retry_backoff_ms;
        world.at(31_000, |ctx| {
            c.on_timer(ctx, Timer::RequestTimeout { id: 7 })
        });
        assert!(
            !c.connections.is_ready(1),
            "the fetch's connection is closed"
        );
        assert!(c.connections.is_ready(3), "the metadata request's is not");
        assert!(!c.fetches.contains_key(&7));
        assert_eq!(c.metadata_request, Some((10, 3)), "still awaited");
        assert_eq!(c.errors.get("REQUEST_TIMED_OUT"), Some(&1));
        assert_eq!(position(&c).backoff_until, 31_000 + backoff);

        let (_, timers) = run(&mut world, 31_500, |ctx| {
            c.on_timer(ctx, Timer::RequestTimeout { id: 10 })
        });
        assert!(!c.connections.is_ready(3), "now the metadata request's");
        assert_eq!(c.metadata_request, None);
        assert!(
            timers.contains(&(31_500 + backoff, Timer::ConsumerPoll)),
            "{timers:?}"
        );
    }

    /// A validation or reset request that fails backs its partition off
    /// `retry.backoff.ms`, as does an error answer to one.
    #[test]
    fn a_failed_validation_or_reset_backs_its_partition_off_retry_backoff_ms() {
        let backoff = consumer(OffsetReset::Latest).config.retry_backoff_ms;
        // The connection broke under it.
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        c.validations.insert(12, 0);
        position_mut(&mut c).awaiting = Some(12);
        world.at(5_000, |ctx| {
            c.on_message(
                ctx,
                Message::Disconnected {
                    id: 12,
                    to: Node::Broker(1),
                },
            )
        });
        assert!(!c.validations.contains_key(&12));
        assert_eq!(position(&c).awaiting, None);
        assert_eq!(position(&c).backoff_until, 5_000 + backoff);
        // The leader answered with an error.
        let answers = [
            Message::OffsetsForLeaderEpochResponse {
                id: 12,
                partition: 0,
                result: Err(ErrorCode::NotLeaderOrFollower),
            },
            Message::ListOffsetsResponse {
                id: 12,
                partition: 0,
                result: Err(ErrorCode::NotLeaderOrFollower),
            },
        ];
        for answer in answers {
            let mut c = consumer(OffsetReset::Latest);
            c.validations.insert(12, 0);
            position_mut(&mut c).awaiting = Some(12);
            world.at(5_000, |ctx| c.on_message(ctx, answer));
            assert_eq!(position(&c).awaiting, None);
            assert_eq!(position(&c).backoff_until, 5_000 + backoff);
        }
    }

    /// ClusterConnectionStates.isConnectionSetupTimeout: a connect attempt
    /// still unanswered after `socket.connection.setup.timeout.ms` is closed
    /// (the connection backs off before the next attempt).
    #[test]
    fn a_connect_attempt_that_times_out_is_closed() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        c.connections = Connections::new(Node::Consumer(0), 3, c.config.connection).none_yet();
        let (_, timers) = run(&mut world, 1_000, |ctx| {
            c.connections.ready(ctx, 2);
        });
        let [(at, timer @ Timer::ConnectionSetupTimeout { broker: 2, .. })] = &timers[..] else {
            panic!("a setup timeout for broker 2: {timers:?}")
        };
        world.at(*at, |ctx| c.on_timer(ctx, timer.clone()));
        assert!(
            matches!(c.connections.state(2), Some(State::Disconnected { .. })),
            "{:?}",
            c.connections.state(2)
        );
    }

    /// A broker closing the connection (it shuts down) marks it down, and
    /// the consumer refreshes its metadata over another one.
    #[test]
    fn a_connection_the_broker_closes_is_marked_down_and_metadata_refreshed_elsewhere() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        let (sends, _) = run(&mut world, 5_000, |ctx| {
            c.on_message(ctx, Message::ConnectionClosed { broker: 1 })
        });
        assert!(!c.connections.is_ready(1));
        assert!(
            matches!(sends[..], [(Node::Broker(2 | 3), Message::Metadata { .. })]),
            "{sends:?}"
        );
    }

    /// AbstractFetch: a partition error is counted, backs the partition off
    /// `retry.backoff.ms` and refreshes the metadata; the partition is
    /// fetched again at the first millisecond the backoff has passed (and
    /// the consumer polls again then, not before).
    #[test]
    fn a_partition_error_backs_the_partition_off_retry_backoff_ms_then_it_is_fetched_again() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        let backoff = c.config.retry_backoff_ms;
        let (sends, timers) = run(&mut world, 5_000, |ctx| {
            c.on_message(
                ctx,
                fetch_answer(Some(ErrorCode::NotLeaderOrFollower), Vec::new()),
            )
        });
        assert_eq!(c.errors.get("NOT_LEADER_OR_FOLLOWER"), Some(&1));
        assert_eq!(position(&c).backoff_until, 5_000 + backoff);
        assert!(
            matches!(sends[..], [(_, Message::Metadata { .. })]),
            "no fetch yet: {sends:?}"
        );
        let polls: Vec<u64> = timers
            .iter()
            .filter(|(_, t)| *t == Timer::ConsumerPoll)
            .map(|(at, _)| *at)
            .collect();
        assert!(
            !polls.is_empty() && polls.iter().all(|at| *at == 5_000 + backoff),
            "{polls:?}"
        );
        assert_eq!(polled(&mut world, &mut c, 5_000 + backoff - 1), [""; 0]);
        assert_eq!(polled(&mut world, &mut c, 5_000 + backoff), ["Fetch"]);
    }

    /// KIP-392, `SubscriptionState.preferredReadReplica(timeMs)`: the
    /// leader's advice expires only once the time is past its expiry (the
    /// answer's time + metadata.max.age.ms); at that very millisecond the
    /// replica is still the one fetched from, by `fetch_target` and by a poll.
    #[test]
    fn a_preferred_read_replica_holds_up_to_and_including_its_expiry_millisecond() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        c.fetches.clear();
        position_mut(&mut c).preferred_read_replica = Some((2, 300_000));
        assert_eq!(c.fetch_target(0, 300_000), Some(2));
        assert_eq!(c.fetch_target(0, 300_001), Some(1));
        polled(&mut world, &mut c, 300_000);
        assert_eq!(position(&c).preferred_read_replica, Some((2, 300_000)));
        c.fetches.clear();
        polled(&mut world, &mut c, 300_001);
        assert_eq!(position(&c).preferred_read_replica, None);
    }

    /// KIP-392: any error from the preferred read replica sends the consumer
    /// back to the leader; OFFSET_OUT_OF_RANGE from a follower (which may
    /// just lag) never resets the position, while another error also backs
    /// the partition off as from the leader.
    #[test]
    fn offset_out_of_range_from_the_preferred_read_replica_only_sends_the_consumer_back_to_the_leader(
    ) {
        let mut world = TestWorld::one_partition();
        for (error, resets, backs_off) in [
            (ErrorCode::OffsetOutOfRange, false, false),
            (ErrorCode::NotLeaderOrFollower, false, true),
        ] {
            let mut c = consumer(OffsetReset::Latest);
            c.fetches.insert(7, (2, vec![0]));
            let pos = position_mut(&mut c);
            pos.preferred_read_replica = Some((2, 1_000_000));
            pos.read_from = Some(2);
            world.at(5_000, |ctx| {
                c.on_message(ctx, fetch_answer(Some(error), Vec::new()))
            });
            let pos = position(&c);
            assert_eq!(pos.preferred_read_replica, None, "{error}");
            assert_eq!(pos.read_from, None, "{error}");
            assert_eq!(pos.reset_pending, resets, "{error}");
            assert!(!pos.stopped, "{error}");
            assert_eq!(pos.offset, 120, "{error}");
            assert_eq!(pos.backoff_until > 5_000, backs_off, "{error}");
        }
        assert!(!world
            .trace
            .events()
            .any(|e| matches!(e.kind, TraceKind::ConsumerOffsetOutOfRange { .. })));
    }

    /// FetchCollector: the records returned move the position past them and
    /// count as consumed, the epoch of the last one kept for validation.
    #[test]
    fn a_fetched_batch_moves_the_position_past_its_records_and_counts_them() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        let records = vec![
            Record::plain(31, 4),
            Record::plain(32, 4),
            Record::plain(33, 5),
        ];
        world.at(5_000, |ctx| c.on_message(ctx, fetch_answer(None, records)));
        let pos = position(&c);
        assert_eq!((pos.offset, pos.consumed, pos.epoch), (123, 3, Some(5)));
        assert_eq!(c.consumed, 3);
        let read: Vec<(usize, u64, u64)> = c
            .consumed_records
            .iter()
            .map(|r| (r.partition, r.offset, r.id))
            .collect();
        assert_eq!(read, [(0, 120, 31), (0, 121, 32), (0, 122, 33)]);
    }

    /// KIP-320 (SubscriptionState.maybeCompleteValidation): the position is
    /// truncated only when the new leader's log ends its epoch *below* it; a
    /// position exactly at that end is valid.
    #[test]
    fn a_position_at_the_end_of_its_epoch_validates_without_a_truncation() {
        let mut world = TestWorld::one_partition();
        for (end, truncated, offset) in [(120, 0, 120), (110, 1, 110)] {
            let mut c = consumer(OffsetReset::Latest);
            c.validations.insert(12, 0);
            let pos = position_mut(&mut c);
            pos.awaiting = Some(12);
            pos.epoch = Some(3);
            world.at(5_000, |ctx| {
                c.on_message(
                    ctx,
                    Message::OffsetsForLeaderEpochResponse {
                        id: 12,
                        partition: 0,
                        result: Ok(Some((3, end))),
                    },
                )
            });
            let pos = position(&c);
            assert_eq!(pos.validated_epoch, Some(4));
            assert_eq!(
                (c.truncations_detected, pos.offset),
                (truncated, offset),
                "end {end}"
            );
        }
        let detected = world
            .trace
            .events()
            .filter(|e| matches!(e.kind, TraceKind::ConsumerTruncationDetected { .. }))
            .count();
        assert_eq!(detected, 1);
    }

    /// The reset's narration says where each auto.offset.reset policy puts
    /// the position: the log start, the first record at or after the
    /// duration's start (KIP-1106), or the high watermark.
    #[test]
    fn the_reset_narration_names_where_each_policy_puts_the_position() {
        for (reset, said) in [
            (OffsetReset::Earliest, "at 100, the log start."),
            (
                OffsetReset::ByDuration(60_000),
                "at 100, the first record sent at or after 5.000 s.",
            ),
            (OffsetReset::Latest, "at 100, the high watermark"),
        ] {
            let mut world = TestWorld::one_partition();
            let mut c = consumer(reset);
            c.validations.insert(12, 0);
            let pos = position_mut(&mut c);
            pos.awaiting = Some(12);
            pos.reset_pending = true;
            world.at(65_000, |ctx| {
                c.on_message(
                    ctx,
                    Message::ListOffsetsResponse {
                        id: 12,
                        partition: 0,
                        result: Ok(Some((100, Some(4)))),
                    },
                )
            });
            assert_eq!(position(&c).offset, 100);
            let text = world
                .trace
                .events()
                .map(|e| e.text.clone())
                .collect::<Vec<_>>();
            assert!(text.iter().any(|t| t.contains(said)), "{said}: {text:?}");
        }
    }

    /// Fetcher.fetchablePartitions: one fetch per partition at a time; a
    /// partition awaiting a validation or reset answer is not fetched; an
    /// idle one is fetched from its leader once its connection is ready
    /// (NetworkClient.ready).
    #[test]
    fn a_poll_fetches_only_idle_partitions_over_ready_connections() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        assert_eq!(polled(&mut world, &mut c, 5_000), [""; 0], "fetch 7 is out");
        c.fetches = VecMap::new();
        position_mut(&mut c).awaiting = Some(12);
        c.validations.insert(12, 0);
        assert_eq!(
            polled(&mut world, &mut c, 5_000),
            [""; 0],
            "awaiting an answer"
        );
        position_mut(&mut c).awaiting = None;
        c.validations = VecMap::new();
        let (sends, _) = run(&mut world, 5_000, |ctx| c.poll(ctx));
        let [(Node::Broker(1), Message::Fetch { partitions, .. })] = &sends[..] else {
            panic!("one fetch to the leader: {sends:?}")
        };
        assert_eq!(partitions[0].fetch_offset, 120);
    }

    /// A partition with no committed offset asks its leader where to start
    /// (ListOffsets); a position behind a newer leader epoch is validated
    /// first (OffsetsForLeaderEpoch); one whose leader is unknown wants a
    /// metadata refresh.
    #[test]
    fn a_poll_asks_the_leader_to_reset_or_validate_and_refreshes_unknown_leaders() {
        let mut world = TestWorld::one_partition();
        let mut c = consumer(OffsetReset::Latest);
        c.fetches = VecMap::new();
        position_mut(&mut c).reset_pending = true;
        assert_eq!(polled(&mut world, &mut c, 5_000), ["ListOffsets"]);

        let mut c = consumer(OffsetReset::Latest);
        c.fetches = VecMap::new();
        position_mut(&mut c).epoch = Some(3);
        assert_eq!(polled(&mut world, &mut c, 5_000), ["OffsetsForLeaderEpoch"]);

        let mut c = consumer(OffsetReset::Latest);
        c.fetches = VecMap::new();
        c.metadata = DenseMap::new();
        assert_eq!(polled(&mut world, &mut c, 5_000), ["MetadataRequest"]);
    }
}
