//! A consumer in a group: it finds the group's coordinator, starts each
//! partition from the offset the group committed, and commits its
//! positions as it reads (ConsumerCoordinator, the classic protocol's
//! offset half; `broker/coordinator.rs` is the other side).
//!
//! - FindCoordinator goes to any broker (the least loaded one). Until the
//!   answer names a broker the consumer reads nothing.
//! - OffsetFetch, to the coordinator, before the first fetch: a committed
//!   position becomes the partition's position with its leader epoch, so a
//!   leader that truncated meanwhile is caught by the usual validation
//!   (KIP-320); a partition with no commit starts where the lab's consumer
//!   always starts, at offset 0.
//! - OffsetCommit every `auto.commit.interval.ms` with `enable.auto.commit`
//!   (and on a `commit` step): each position with the leader epoch of the
//!   last record read (OffsetCommit v7+). The clock restarts a full
//!   interval after each new assignment; a failed auto-commit comes back
//!   after `retry.backoff.ms`, and the attempt that gets through starts the
//!   next interval.
//! - NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a timed-out or broken
//!   request, or the coordinator's connection closing mark the coordinator
//!   unknown (ConsumerCoordinator.markCoordinatorUnknown): the consumer asks
//!   FindCoordinator again after `retry.backoff.ms`, growing to 1 s.
//!   COORDINATOR_LOAD_IN_PROGRESS keeps the coordinator and retries.
//!
//! Simplified (README): each consumer process is the group's only member
//! for the partitions it reads (a static assignment, no JoinGroup/SyncGroup
//! rebalance, no heartbeats or session timeout); a failed auto-commit is
//! retried with the positions of the moment.

use std::collections::BTreeMap;

use super::backoff;
use super::connection::State;
use super::consumer::{jump, Consumer, JumpCause};
use crate::sim::cluster::ClientStep;
use crate::sim::io::{Ctx, Timer};
use crate::sim::pmap::VecMap;
use crate::sim::protocol::*;
use crate::sim::trace::TraceKind;

#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct GroupMember {
    pub group_id: String,
    /// The coordinator as last found; `None` while unknown.
    pub coordinator: Option<BrokerId>,
    /// Which arming of the auto-commit clock is current (see
    /// `Timer::AutoCommit`).
    auto_commit_seq: u32,
    /// The auto-commit the clock last asked for has not succeeded yet: a
    /// retriable failure brings the clock back after `retry.backoff.ms`.
    auto_commit_attempt: bool,
    /// The clock's last attempt failed: the next one that goes out sets
    /// the clock's phase (its interval counts from that attempt).
    auto_commit_retrying: bool,
    /// The last commit the coordinator confirmed, per partition.
    pub committed: VecMap<PartitionIndex, CommittedOffset>,
    /// OffsetFetch has answered: the partitions may be read.
    pub offsets_fetched: bool,
    /// Errors of coordinator requests, by name.
    pub errors: BTreeMap<String, u64>,
    pub commits: u64,
    find: Option<(u64, BrokerId)>,
    offset_fetch: Option<(u64, BrokerId)>,
    commit: Option<(u64, BrokerId, Vec<CommittedOffset>)>,
    /// A commit is wanted (auto-commit interval passed, a step, a retry).
    commit_due: bool,
    next_try_ms: u64,
    pub(super) failures: u32,
    /// The last error narrated, so a streak of the same one is told once.
    pub(super) last_error: Option<ErrorCode>,
    /// Partitions whose committed offset is to be fetched (OffsetFetch)
    /// before they are read.
    pub to_fetch: Vec<PartitionIndex>,
    /// What the OffsetFetch out asked for.
    fetch_asked: Vec<PartitionIndex>,
    /// With `subscribe`: the membership in the classic group
    /// (`client/membership.rs`).
    pub membership: Option<super::membership::Membership>,
    /// The coordinator last narrated as found.
    announced: Option<BrokerId>,
}

impl GroupMember {
    pub fn new(group_id: String) -> Self {
        GroupMember {
            group_id,
            ..Default::default()
        }
    }

    /// Whether `id` is one of this member's outstanding requests.
    pub fn owns(&self, id: u64) -> bool {
        self.broker_of(id).is_some()
    }

    /// The broker an outstanding request `id` went to.
    pub fn broker_of(&self, id: u64) -> Option<BrokerId> {
        self.requests().find(|r| r.0 == id).map(|r| r.1)
    }

    /// Every request out: (id, broker).
    fn requests(&self) -> impl Iterator<Item = (u64, BrokerId)> + '_ {
        [self.find, self.offset_fetch]
            .into_iter()
            .flatten()
            .chain(self.commit.as_ref().map(|c| (c.0, c.1)))
            .chain(self.membership.iter().flat_map(|m| m.requests()))
    }
}

impl GroupMember {
    /// How many of the group's requests are out to broker `b`.
    pub fn in_flight_to(&self, b: BrokerId) -> u32 {
        self.requests().filter(|r| r.1 == b).count() as u32
    }
}

impl Consumer {
    /// Whether partitions may be fetched: always without a group; with one,
    /// once the committed offsets are known.
    pub(super) fn may_fetch(&self) -> bool {
        self.group.as_ref().is_none_or(|g| g.offsets_fetched) && self.member_ready()
    }

    /// Move the group protocol on: find the coordinator, fetch the committed
    /// offsets, send a due commit. Called from poll().
    pub(super) fn drive_group(&mut self, ctx: &mut Ctx) {
        let Some(g) = self.group.as_ref() else {
            return;
        };
        if g.find.is_some() || g.offset_fetch.is_some() || g.commit.is_some() {
            return;
        }
        if ctx.now < g.next_try_ms {
            let at = g.next_try_ms;
            ctx.after(at - ctx.now, Timer::ConsumerPoll);
            return;
        }
        let group = g.group_id.clone();
        let Some(coordinator) = g.coordinator else {
            let Some(node) = self.least_loaded(ctx) else {
                self.wake_for_reconnect(ctx);
                return;
            };
            let id = ctx.new_id();
            if let Some(g) = self.group.as_mut() {
                g.find = Some((id, node));
            }
            ctx.send(Node::Broker(node), Message::FindCoordinator { id, group });
            ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
            return;
        };
        // AbstractCoordinator.checkAndGetCoordinator: a coordinator whose
        // connection failed and is backing off is unavailable: forget it
        // and look it up again.
        let blacked_out = matches!(
            self.connections.state(coordinator),
            Some(State::Disconnected { reconnect_at }) if reconnect_at > ctx.now
        );
        if blacked_out {
            // A pending auto-commit fails with it (it would go to a
            // coordinator that cannot be reached): the classic consumer's
            // commitOffsetsAsync. KIP-848's CommitRequestManager keeps the
            // request queued until a coordinator is known instead.
            if !self.kip848() {
                self.auto_commit_retry(ctx);
            }
            // Looked up again after retry.backoff.ms, growing to 1 s.
            let base = self.config.retry_backoff_ms;
            if let Some(g) = self.group.as_mut() {
                g.coordinator = None;
                g.failures += 1;
                g.next_try_ms = ctx.now + backoff(base, 1_000, g.failures);
                let at = g.next_try_ms;
                ctx.after((at - ctx.now).max(1), Timer::ConsumerPoll);
            }
            return;
        }
        let idle = self
            .group
            .as_ref()
            .is_none_or(|g| g.membership.is_none() && g.offsets_fetched && !g.commit_due);
        if idle {
            return;
        }
        if !self.connections.ready(ctx, coordinator) {
            self.wake_for_reconnect(ctx);
            return;
        }
        if self.drive_membership(ctx, coordinator) {
            return;
        }
        let Some(g) = self.group.as_ref() else {
            return;
        };
        if !g.offsets_fetched {
            let id = ctx.new_id();
            let partitions = g.to_fetch.clone();
            if let Some(g) = self.group.as_mut() {
                g.offset_fetch = Some((id, coordinator));
                g.fetch_asked = partitions.clone();
            }
            ctx.send(
                Node::Broker(coordinator),
                Message::OffsetFetch {
                    id,
                    group,
                    partitions,
                },
            );
            ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
        } else if g.commit_due {
            self.send_commit(ctx, coordinator);
        }
    }

    /// Send the positions to the coordinator (OffsetCommit). Returns
    /// whether a commit went out.
    pub(super) fn send_commit(&mut self, ctx: &mut Ctx, coordinator: BrokerId) -> bool {
        let id = ctx.new_id();
        // SubscriptionState.allConsumed: only partitions with a valid
        // position (hasValidPosition: FETCHING) are committed, not one
        // waiting for a reset, one stopped by an error, or one awaiting
        // validation against a newer leader; nothing at all is sent
        // when none has.
        let metadata = &self.metadata;
        let offsets: Vec<CommittedOffset> = self
            .positions
            .iter()
            .filter(|(p, pos)| {
                !pos.stopped
                    && !pos.reset_pending
                    && !metadata
                        .get(p)
                        .is_some_and(|(_, epoch)| pos.awaits_validation(*epoch))
            })
            .map(|(p, pos)| CommittedOffset {
                partition: p,
                offset: pos.offset,
                leader_epoch: pos.epoch.filter(|_| self.config.commit_leader_epoch),
            })
            .collect();
        let Some(g) = self.group.as_mut() else {
            return false;
        };
        g.commit_due = false;
        // Positions not yet started from the committed offsets are not
        // positions to commit.
        let offsets: Vec<CommittedOffset> = offsets
            .into_iter()
            .filter(|o| !g.to_fetch.contains(&o.partition))
            .collect();
        if offsets.is_empty() {
            g.auto_commit_attempt = false;
            return false;
        }
        if g.auto_commit_attempt && g.auto_commit_retrying {
            // Kafka retries on every expiry of its clock, so the attempt
            // that gets through starts the next interval.
            g.auto_commit_retrying = false;
            g.auto_commit_seq += 1;
            let seq = g.auto_commit_seq;
            ctx.after(
                self.config.auto_commit_interval_ms,
                Timer::AutoCommit { seq },
            );
        }
        g.commit = Some((id, coordinator, offsets.clone()));
        let member = g
            .membership
            .as_ref()
            .map(|m| (m.generation, m.member_id.clone()));
        ctx.send(
            Node::Broker(coordinator),
            Message::OffsetCommit {
                id,
                group: g.group_id.clone(),
                offsets,
                member,
            },
        );
        ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
        true
    }

    /// The auto-commit clock: a commit of the positions every
    /// `auto.commit.interval.ms`. A timer of a clock since re-armed is
    /// stale and does nothing.
    pub(super) fn auto_commit(&mut self, ctx: &mut Ctx, seq: u32) {
        let Some(g) = self.group.as_mut() else {
            return;
        };
        if g.auto_commit_seq != seq {
            return;
        }
        if g.offsets_fetched {
            g.commit_due = true;
            g.auto_commit_attempt = true;
        }
        self.poll(ctx);
        ctx.after(
            self.config.auto_commit_interval_ms,
            Timer::AutoCommit { seq },
        );
    }

    /// Whether the consumer is a KIP-848 member (`group.protocol=consumer`).
    fn kip848(&self) -> bool {
        self.group
            .as_ref()
            .and_then(|g| g.membership.as_ref())
            .is_some_and(|m| m.kip848)
    }

    /// An auto-commit failed with a retriable error, or its coordinator
    /// could not be found: the clock comes back after `retry.backoff.ms`
    /// (ConsumerCoordinator's auto-commit callback,
    /// nextAutoCommitTimer.updateAndReset(retryBackoffMs); KIP-848
    /// CommitRequestManager.maybeResetTimerWithBackoff), and its next
    /// interval counts from that attempt.
    fn auto_commit_retry(&mut self, ctx: &mut Ctx) {
        let Some(g) = self.group.as_mut() else {
            return;
        };
        if !g.auto_commit_attempt {
            return;
        }
        g.auto_commit_attempt = false;
        g.auto_commit_retrying = true;
        g.auto_commit_seq += 1;
        let seq = g.auto_commit_seq;
        ctx.after(
            self.config.retry_backoff_ms.max(1),
            Timer::AutoCommit { seq },
        );
    }

    /// A new assignment re-arms the auto-commit clock a full interval from
    /// now ("reschedule the auto commit starting from now"): classic
    /// ConsumerCoordinator.onJoinComplete (nextAutoCommitTimer
    /// .updateAndReset), KIP-848 ConsumerMembershipManager when a
    /// reconciliation completes (CommitRequestManager.resetAutoCommitTimer).
    #[cfg(group_protocols)]
    pub(super) fn rearm_auto_commit(&mut self, ctx: &mut Ctx) {
        if !self.config.enable_auto_commit {
            return;
        }
        let Some(g) = self.group.as_mut() else {
            return;
        };
        g.auto_commit_seq += 1;
        let seq = g.auto_commit_seq;
        ctx.after(
            self.config.auto_commit_interval_ms,
            Timer::AutoCommit { seq },
        );
    }

    /// A coordinator request answered with an error, timed out or lost its
    /// connection.
    pub(super) fn group_request_failed(&mut self, ctx: &mut Ctx, id: u64, e: ErrorCode) {
        let Some(g) = self.group.as_mut() else {
            return;
        };
        let request = if g.find.is_some_and(|f| f.0 == id) {
            g.find = None;
            "FindCoordinator"
        } else if g.offset_fetch.is_some_and(|f| f.0 == id) {
            g.offset_fetch = None;
            "OffsetFetch"
        } else if g.commit.as_ref().is_some_and(|c| c.0 == id) {
            g.commit = None;
            g.commit_due = true;
            "OffsetCommit"
        } else {
            self.membership_failed(ctx, id, e);
            return;
        };
        if request == "OffsetCommit" && g.membership.is_some() && e.is_member_error() {
            // The commit is fenced (CommitFailedException): not retried.
            g.commit_due = false;
            g.auto_commit_attempt = false;
            self.member_error(ctx, request, e);
            return;
        }
        if request == "OffsetCommit" || (request == "FindCoordinator" && !self.kip848()) {
            self.auto_commit_retry(ctx);
        }
        self.group_request_failed_known(ctx, request, e);
    }

    /// The common handling of a failed coordinator request: the error
    /// counted, the coordinator marked unknown (unless still loading), a
    /// retry after the backoff.
    pub(super) fn group_request_failed_known(
        &mut self,
        ctx: &mut Ctx,
        request: &'static str,
        e: ErrorCode,
    ) {
        let name = self.name.clone();
        let backoff_base = self.config.retry_backoff_ms;
        let Some(g) = self.group.as_mut() else {
            return;
        };
        *g.errors.entry(e.name().to_string()).or_default() += 1;
        let unknown = e != ErrorCode::CoordinatorLoadInProgress;
        let was = g.coordinator;
        if unknown && request != "FindCoordinator" {
            g.coordinator = None;
        }
        g.failures += 1;
        g.next_try_ms = ctx.now + backoff(backoff_base, 1_000, g.failures);
        let first = g.last_error != Some(e);
        g.last_error = Some(e);
        if first {
            let then = match (e, was) {
                (ErrorCode::CoordinatorLoadInProgress, _) => {
                    "the coordinator is still loading the group's offsets; it asks again"
                        .to_string()
                }
                (_, Some(b)) if request != "FindCoordinator" => format!(
                    "it marks coordinator {b} unknown and looks for the group's coordinator again"
                ),
                _ => "it asks again after retry.backoff.ms".to_string(),
            };
            ctx.trace(
                TraceKind::CoordinatorError {
                    consumer: name.clone(),
                    group: g.group_id.clone(),
                    request: request.to_string(),
                    error: e.name().to_string(),
                },
                format!(
                    "Consumer {name}'s {request} for group {} failed with {e}: {then}.",
                    g.group_id
                ),
            );
        }
        let at = g.next_try_ms;
        ctx.after((at - ctx.now).max(1), Timer::ConsumerPoll);
    }

    /// The connection to `broker` closed: a coordinator there is unknown now.
    pub(super) fn group_connection_closed(&mut self, broker: BrokerId) {
        if let Some(g) = self.group.as_mut() {
            if g.coordinator == Some(broker) {
                g.coordinator = None;
            }
        }
    }

    pub(super) fn on_group_message(&mut self, ctx: &mut Ctx, msg: Message) {
        match msg {
            Message::FindCoordinatorResponse { id, result } => {
                let owned = self
                    .group
                    .as_ref()
                    .is_some_and(|g| g.find.is_some_and(|f| f.0 == id));
                if !owned {
                    return;
                }
                match result {
                    Err(e) => self.group_request_failed(ctx, id, e),
                    Ok(b) => {
                        let name = self.name.clone();
                        if let Some(g) = self.group.as_mut() {
                            g.find = None;
                            g.last_error = None;
                            g.coordinator = Some(b);
                            if g.announced == Some(b) {
                                self.poll(ctx);
                                return;
                            }
                            g.failures = 0;
                            g.announced = Some(b);
                            ctx.trace(
                                TraceKind::CoordinatorFound {
                                    consumer: name.clone(),
                                    group: g.group_id.clone(),
                                    broker: b,
                                },
                                format!(
                                    "Consumer {name} found the coordinator of group {}: broker {b}, the leader of the group's {} partition.",
                                    g.group_id,
                                    crate::sim::OFFSETS_TOPIC
                                ),
                            );
                        }
                        self.poll(ctx);
                    }
                }
            }
            Message::OffsetFetchResponse { id, result } => {
                let owned = self
                    .group
                    .as_ref()
                    .is_some_and(|g| g.offset_fetch.is_some_and(|f| f.0 == id));
                if !owned {
                    return;
                }
                match result {
                    Err(e) => self.group_request_failed(ctx, id, e),
                    Ok(offsets) => {
                        let name = self.name.clone();
                        let parts = self
                            .group
                            .as_ref()
                            .map(|g| g.fetch_asked.clone())
                            .unwrap_or_default();
                        for p in parts.iter().copied() {
                            if !self.positions.contains_key(&p) {
                                continue;
                            }
                            let committed = offsets.iter().find(|o| o.partition == p).copied();
                            if let Some(pos) = self.positions.get_mut(&p) {
                                match committed {
                                    Some(o) => {
                                        let cause = Some(JumpCause::Commit);
                                        let (now, jumps) = (ctx.now, &mut self.jumps);
                                        jump(jumps, pos, p, now, None, o.offset, cause);
                                        pos.moved_by_reset = false;
                                        pos.epoch = o.leader_epoch;
                                        pos.validated_epoch = None;
                                    }
                                    None => pos.reset_pending = true,
                                }
                            }
                            let info = &ctx.partitions[p];
                            let tp = ctx.tp(p);
                            let text = match committed {
                                Some(o) => format!(
                                    "Consumer {name} starts {tp} at its group's committed offset {}{}.",
                                    o.offset,
                                    o.leader_epoch
                                        .map(|e| format!(" (leader epoch {e}, validated against the current leader before it reads)"))
                                        .unwrap_or_default()
                                ),
                                None => format!(
                                    "Consumer {name}'s group has no committed offset for {tp}: auto.offset.reset decides where it starts."
                                ),
                            };
                            ctx.trace(
                                TraceKind::CommittedOffsetFetched {
                                    consumer: name.clone(),
                                    topic: info.topic.clone(),
                                    partition: info.partition,
                                    offset: committed.map(|o| o.offset),
                                    leader_epoch: committed.and_then(|o| o.leader_epoch),
                                },
                                text,
                            );
                        }
                        if let Some(g) = self.group.as_mut() {
                            g.offset_fetch = None;
                            g.failures = 0;
                            g.last_error = None;
                            g.to_fetch.retain(|p| !parts.contains(p));
                            g.offsets_fetched = g.to_fetch.is_empty();
                            for p in &parts {
                                g.committed.remove(p);
                            }
                            for o in offsets {
                                g.committed.insert(o.partition, o);
                            }
                        }
                        self.poll(ctx);
                    }
                }
            }
            Message::OffsetCommitResponse { id, result } => {
                let owned = self
                    .group
                    .as_ref()
                    .is_some_and(|g| g.commit.as_ref().is_some_and(|c| c.0 == id));
                if !owned {
                    return;
                }
                match result {
                    Err(e) => self.group_request_failed(ctx, id, e),
                    Ok(()) => {
                        let name = self.name.clone();
                        if let Some(g) = self.group.as_mut() {
                            let Some((_, broker, offsets)) = g.commit.take() else {
                                return;
                            };
                            g.failures = 0;
                            g.last_error = None;
                            g.commits += 1;
                            g.auto_commit_attempt = false;
                            let changed = offsets
                                .iter()
                                .any(|o| g.committed.get(&o.partition) != Some(o));
                            for o in &offsets {
                                g.committed.insert(o.partition, *o);
                            }
                            if changed {
                                let list: Vec<(String, u64, Option<u32>)> = offsets
                                    .iter()
                                    .map(|o| (ctx.tp(o.partition), o.offset, o.leader_epoch))
                                    .collect();
                                let shown: Vec<String> = list
                                    .iter()
                                    .map(|(tp, o, _)| format!("{tp} at {o}"))
                                    .collect();
                                ctx.trace(
                                    TraceKind::OffsetsCommitted {
                                        consumer: name.clone(),
                                        group: g.group_id.clone(),
                                        offsets: list,
                                    },
                                    format!(
                                        "Consumer {name} committed group {}'s positions ({}) to coordinator {broker}: they are on the offsets partition's in-sync replicas.",
                                        g.group_id,
                                        shown.join(", ")
                                    ),
                                );
                            }
                        }
                        self.poll(ctx);
                    }
                }
            }
            _ => {}
        }
    }

    /// A step for this consumer's process.
    pub fn client_step(&mut self, ctx: &mut Ctx, kind: ClientStep) {
        match kind {
            ClientStep::Commit => {
                if !self.running {
                    return;
                }
                if let Some(g) = self.group.as_mut() {
                    if g.offsets_fetched {
                        g.commit_due = true;
                    }
                }
                self.poll(ctx);
            }
            ClientStep::Crash => {
                if !self.running {
                    return;
                }
                let name = self.name.clone();
                self.crash();
                ctx.trace(
                    TraceKind::ConsumerCrashed {
                        consumer: name.clone(),
                    },
                    format!(
                        "Consumer {name}'s process crashed: its positions, its metadata and anything it had read but not committed are gone."
                    ),
                );
            }
            ClientStep::Restart => {
                if self.running {
                    return;
                }
                let name = self.name.clone();
                self.running = true;
                let then = if self.group.is_some() {
                    "it finds its group's coordinator and resumes from the committed offsets; what it read after the last commit it reads again"
                } else {
                    "without a group.id it has no committed offsets and starts each partition at offset 0"
                };
                ctx.trace(
                    TraceKind::ConsumerRestarted {
                        consumer: name.clone(),
                    },
                    format!("Consumer {name} starts again: {then}."),
                );
                self.start(ctx);
            }
            ClientStep::Stall => {
                if !self.running || self.stalled_since.is_some() {
                    return;
                }
                self.stalled_since = Some(ctx.now);
                let since = ctx.now;
                ctx.after(
                    self.config.max_poll_interval_ms,
                    Timer::MaxPollExpired { since },
                );
            }
            ClientStep::Resume => {
                if self.stalled_since.take().is_some() {
                    self.poll(ctx);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::ConsumerConfig;
    use crate::sim::io::TestWorld;

    fn group_consumer(partitions: Vec<PartitionIndex>) -> Consumer {
        let mut config = match ConsumerConfig::parse(&Default::default(), "consumer") {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        config.group_id = Some("g".to_string());
        Consumer::new("c".to_string(), 0, partitions, config, 3)
    }

    fn member(c: &Consumer) -> &GroupMember {
        c.group.as_ref().unwrap_or_else(|| panic!("a group"))
    }

    fn member_mut(c: &mut Consumer) -> &mut GroupMember {
        c.group.as_mut().unwrap_or_else(|| panic!("a group"))
    }

    /// Fail the group's request `id` with `e` at `now`; return the timers
    /// that set.
    fn fail(
        world: &mut TestWorld,
        c: &mut Consumer,
        now: u64,
        id: u64,
        e: ErrorCode,
    ) -> Vec<(u64, Timer)> {
        world.at(now, |ctx| {
            c.group_request_failed(ctx, id, e);
            ctx.timers.clone()
        })
    }

    /// ConsumerCoordinator: NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE on
    /// an OffsetCommit or OffsetFetch marks the coordinator unknown
    /// (markCoordinatorUnknown) and the commit is made again;
    /// COORDINATOR_LOAD_IN_PROGRESS keeps it. Each failure waits
    /// retry.backoff.ms, doubling per failure up to 1 s (the lab's
    /// stand-in for the client's exponential retry backoff); a streak of
    /// one error is narrated once, every error is counted.
    #[test]
    fn a_coordinator_error_marks_it_unknown_unless_it_is_loading_and_retries_back_off_doubling_to_one_second(
    ) {
        let mut world = TestWorld::one_partition();
        let mut c = group_consumer(vec![0]);
        let g = member_mut(&mut c);
        g.coordinator = Some(1);
        g.offsets_fetched = true;
        g.to_fetch.clear();
        g.commit = Some((5, 1, Vec::new()));
        let timers = fail(&mut world, &mut c, 1_000, 5, ErrorCode::NotCoordinator);
        let g = member(&c);
        assert!(
            g.commit.is_none() && g.commit_due,
            "the commit is made again"
        );
        assert_eq!(g.coordinator, None, "marked unknown");
        assert_eq!((g.failures, g.next_try_ms), (1, 1_100));
        assert!(
            matches!(timers[..], [(1_100, Timer::ConsumerPoll)]),
            "{timers:?}"
        );
        let texts = |world: &TestWorld| {
            world
                .trace
                .events()
                .map(|e| e.text.clone())
                .collect::<Vec<_>>()
        };
        let t = texts(&world);
        assert_eq!(t.len(), 1);
        assert!(
            t[0].contains("OffsetCommit") && t[0].contains("marks coordinator 1 unknown"),
            "{t:?}"
        );
        // FindCoordinator fails twice alike: counted twice, told once.
        for (id, now, next) in [(6, 1_100, 1_300), (7, 1_300, 1_700)] {
            member_mut(&mut c).find = Some((id, 2));
            let timers = fail(
                &mut world,
                &mut c,
                now,
                id,
                ErrorCode::CoordinatorNotAvailable,
            );
            let g = member(&c);
            assert!(g.find.is_none());
            assert_eq!(g.next_try_ms, next);
            assert!(
                matches!(timers[..], [(at, Timer::ConsumerPoll)] if at == next),
                "{timers:?}"
            );
        }
        let t = texts(&world);
        assert_eq!(t.len(), 2, "{t:?}");
        assert!(
            t[1].contains("FindCoordinator") && t[1].contains("asks again after retry.backoff.ms"),
            "{t:?}"
        );
        // Loading: the coordinator is kept.
        let g = member_mut(&mut c);
        g.coordinator = Some(3);
        g.offset_fetch = Some((8, 3));
        fail(
            &mut world,
            &mut c,
            1_700,
            8,
            ErrorCode::CoordinatorLoadInProgress,
        );
        let g = member(&c);
        assert_eq!(g.coordinator, Some(3), "kept while it loads");
        assert_eq!(g.next_try_ms, 1_700 + 800);
        let t = texts(&world);
        assert!(t[2].contains("still loading"), "{t:?}");
        // Capped at 1 s.
        member_mut(&mut c).offset_fetch = Some((9, 3));
        fail(
            &mut world,
            &mut c,
            3_000,
            9,
            ErrorCode::CoordinatorLoadInProgress,
        );
        assert_eq!(member(&c).next_try_ms, 4_000);
        let errors: Vec<(String, u64)> = member(&c).errors.clone().into_iter().collect();
        assert_eq!(
            errors,
            [
                ("COORDINATOR_LOAD_IN_PROGRESS".to_string(), 2),
                ("COORDINATOR_NOT_AVAILABLE".to_string(), 2),
                ("NOT_COORDINATOR".to_string(), 1)
            ]
        );
        // An answer to none of its requests changes nothing.
        fail(&mut world, &mut c, 4_000, 99, ErrorCode::NotCoordinator);
        assert_eq!(member(&c).failures, 5);
    }

    /// The group's requests go out one at a time (ConsumerCoordinator
    /// keeps one FindCoordinator, one OffsetFetch and one OffsetCommit in
    /// flight), and not before the retry backoff has passed: until then a
    /// poll only sets its timer for it. A coordinator whose connection is
    /// backing off is forgotten (AbstractCoordinator.checkAndGetCoordinator)
    /// and looked up again after the backoff.
    #[test]
    fn the_group_sends_one_request_at_a_time_after_the_backoff_and_forgets_a_coordinator_that_cannot_be_reached(
    ) {
        let mut world = TestWorld::one_partition();
        let sent = |world: &mut TestWorld, c: &mut Consumer, now: u64| {
            world.at(now, |ctx| {
                c.drive_group(ctx);
                (ctx.sends.clone(), ctx.timers.clone())
            })
        };
        let mut c = group_consumer(vec![0]);
        member_mut(&mut c).next_try_ms = 2_000;
        let (sends, timers) = sent(&mut world, &mut c, 1_500);
        assert!(sends.is_empty());
        assert!(
            matches!(timers[..], [(2_000, Timer::ConsumerPoll)]),
            "{timers:?}"
        );
        let (sends, _) = sent(&mut world, &mut c, 2_000);
        assert!(
            matches!(sends[..], [(_, Message::FindCoordinator { .. })]),
            "{sends:?}"
        );
        // FindCoordinator in flight: nothing more.
        assert!(sent(&mut world, &mut c, 2_100).0.is_empty());
        // A commit in flight, another due: nothing more.
        let g = member_mut(&mut c);
        g.find = None;
        g.coordinator = Some(1);
        g.offsets_fetched = true;
        g.to_fetch.clear();
        g.commit = Some((5, 1, Vec::new()));
        g.commit_due = true;
        assert!(sent(&mut world, &mut c, 2_200).0.is_empty());
        // The coordinator's connection backs off: forgotten, looked up
        // again after retry.backoff.ms.
        member_mut(&mut c).commit = None;
        c.connections.close(2_300, 1);
        let (sends, timers) = sent(&mut world, &mut c, 2_300);
        assert!(sends.is_empty(), "{sends:?}");
        let g = member(&c);
        assert_eq!(g.coordinator, None);
        assert_eq!((g.failures, g.next_try_ms), (1, 2_400));
        assert!(
            matches!(timers[..], [(2_400, Timer::ConsumerPoll)]),
            "{timers:?}"
        );
    }

    /// NetworkClient.handleTimedOutRequests: a group request that times out
    /// closes its connection, and fails like any coordinator error
    /// (REQUEST_TIMED_OUT: the coordinator is marked unknown, the commit is
    /// made again). Its timer stops mattering once it is answered.
    #[test]
    fn a_timed_out_group_request_closes_its_connection_and_marks_the_coordinator_unknown() {
        let mut world = TestWorld::one_partition();
        let mut c = group_consumer(vec![0]);
        let g = member_mut(&mut c);
        g.coordinator = Some(2);
        g.offsets_fetched = true;
        g.to_fetch.clear();
        g.commit = Some((5, 2, Vec::new()));
        let timeout = Timer::RequestTimeout { id: 5 };
        assert!(c.timer_live(&timeout));
        world.at(31_000, |ctx| c.on_timer(ctx, timeout.clone()));
        assert!(!c.connections.is_ready(2), "the connection is closed");
        assert!(c.connections.is_ready(1) && c.connections.is_ready(3));
        let g = member(&c);
        assert!(g.commit.is_none() && g.commit_due);
        assert_eq!(g.coordinator, None);
        assert_eq!(g.errors.get("REQUEST_TIMED_OUT"), Some(&1));
        assert!(!c.timer_live(&timeout), "answered: its timer is dead");
    }

    /// leastLoadedNode counts every request the client has in flight to a
    /// node (NetworkClient.inFlightRequestCount), the group's included.
    #[test]
    fn the_groups_requests_count_toward_their_brokers_load() {
        let mut g = GroupMember::new("g".to_string());
        g.find = Some((1, 2));
        g.offset_fetch = Some((2, 2));
        g.commit = Some((3, 3, Vec::new()));
        assert_eq!(
            (1..=3).map(|b| g.in_flight_to(b)).collect::<Vec<_>>(),
            [0, 2, 1]
        );
        assert_eq!(
            [1, 2, 3, 4].map(|id| g.broker_of(id)),
            [Some(2), Some(2), Some(3), None]
        );
    }

    /// The consumer's leastLoadedNode adds the group's requests to its own:
    /// a broker with a FindCoordinator out is never picked while another
    /// has nothing in flight.
    #[test]
    fn least_loaded_node_counts_the_groups_requests_with_the_consumers_own() {
        let mut world = TestWorld::one_partition();
        let mut c = group_consumer(vec![0]);
        member_mut(&mut c).find = Some((5, 2));
        let picks: Vec<_> = (0..24)
            .map(|_| world.at(1_000, |ctx| c.least_loaded(ctx)))
            .collect();
        assert!(picks.iter().all(|b| matches!(b, Some(1 | 3))), "{picks:?}");
    }

    /// AbstractCoordinator: the coordinator found is narrated once, and
    /// finding it resets the retry backoff; a connection closing forgets
    /// the coordinator only if it was that broker's (markCoordinatorUnknown
    /// on its disconnect).
    #[test]
    fn the_coordinator_found_is_told_once_and_forgotten_only_when_its_own_connection_closes() {
        let mut world = TestWorld::one_partition();
        let mut c = group_consumer(vec![0]);
        for (id, round) in [(5, 0), (6, 1)] {
            let g = member_mut(&mut c);
            g.find = Some((id, 1));
            g.coordinator = None;
            g.failures = 3;
            world.at(1_000 + round, |ctx| {
                c.on_group_message(ctx, Message::FindCoordinatorResponse { id, result: Ok(2) })
            });
            assert_eq!(member(&c).coordinator, Some(2));
        }
        let found = world
            .trace
            .events()
            .filter(|e| matches!(e.kind, TraceKind::CoordinatorFound { broker: 2, .. }))
            .count();
        assert_eq!(found, 1, "told once");
        assert_eq!(
            member(&c).failures,
            3,
            "the second find of the same broker changes nothing"
        );
        member_mut(&mut c).failures = 0;
        c.group_connection_closed(1);
        assert_eq!(member(&c).coordinator, Some(2));
        c.group_connection_closed(2);
        assert_eq!(member(&c).coordinator, None);
    }

    /// ConsumerCoordinator: a successful OffsetCommit makes its offsets the
    /// group's committed ones and counts a commit; the narration tells only
    /// commits that changed something.
    #[test]
    fn every_commit_is_counted_and_only_a_changed_one_is_narrated() {
        let mut world = TestWorld::one_partition();
        let mut c = group_consumer(vec![0]);
        let offsets = vec![CommittedOffset {
            partition: 0,
            offset: 40,
            leader_epoch: Some(1),
        }];
        for id in [5, 6] {
            let g = member_mut(&mut c);
            g.coordinator = Some(2);
            g.offsets_fetched = true;
            g.to_fetch.clear();
            g.commit = Some((id, 2, offsets.clone()));
            world.at(1_000, |ctx| {
                c.on_group_message(ctx, Message::OffsetCommitResponse { id, result: Ok(()) })
            });
        }
        let g = member(&c);
        assert_eq!(g.commits, 2);
        assert_eq!(g.committed.get(&0), Some(&offsets[0]));
        let told = world
            .trace
            .events()
            .filter(|e| matches!(e.kind, TraceKind::OffsetsCommitted { .. }))
            .count();
        assert_eq!(told, 1);
    }

    /// The lab's `commit`, `crash_client` and `restart_client` steps act on
    /// a process in the state they need: a running consumer commits and
    /// crashes, a stopped one does neither.
    #[test]
    fn commit_and_crash_steps_act_on_a_running_consumer_only() {
        let mut world = TestWorld::one_partition();
        let mut c = group_consumer(vec![0]);
        let g = member_mut(&mut c);
        g.coordinator = Some(1);
        g.offsets_fetched = true;
        g.to_fetch.clear();
        c.metadata.insert(0, (Some(1), 0));
        let commits = |world: &mut TestWorld, c: &mut Consumer| {
            world.at(1_000, |ctx| {
                c.client_step(ctx, ClientStep::Commit);
                ctx.sends
                    .iter()
                    .filter(|(_, m)| matches!(m, Message::OffsetCommit { .. }))
                    .count()
            })
        };
        assert_eq!(commits(&mut world, &mut c), 1);
        world.at(2_000, |ctx| c.client_step(ctx, ClientStep::Crash));
        assert!(!c.running);
        assert_eq!(c.incarnation, 1);
        world.at(3_000, |ctx| c.client_step(ctx, ClientStep::Crash));
        assert_eq!(c.incarnation, 1, "a stopped process does not crash again");
        let g = member_mut(&mut c);
        g.coordinator = Some(1);
        g.offsets_fetched = true;
        g.to_fetch.clear();
        assert_eq!(
            commits(&mut world, &mut c),
            0,
            "a stopped process commits nothing"
        );
    }

    /// SubscriptionState.allConsumed commits only positions that are
    /// FETCHING: not one stopped by an error (auto.offset.reset=none) nor
    /// one waiting for its reset.
    #[test]
    fn a_commit_leaves_out_stopped_positions_and_positions_awaiting_a_reset() {
        let mut c = group_consumer(vec![0, 1, 2]);
        let g = member_mut(&mut c);
        g.coordinator = Some(1);
        g.offsets_fetched = true;
        g.to_fetch.clear();
        g.commit_due = true;
        for p in 0..3 {
            c.metadata.insert(p, (Some(1), 0));
            if let Some(pos) = c.positions.get_mut(&p) {
                pos.offset = 10 * (p as u64 + 1);
                pos.stopped = p == 1;
                pos.reset_pending = p == 2;
            }
        }
        let mut world = TestWorld::one_partition();
        let committed = world.at(1_000, |ctx| {
            c.drive_group(ctx);
            ctx.sends.iter().find_map(|(_, m)| match m {
                Message::OffsetCommit { offsets, .. } => Some(
                    offsets
                        .iter()
                        .map(|o| (o.partition, o.offset))
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
        });
        assert_eq!(committed, Some(vec![(0, 10)]));
    }

    /// SubscriptionState.allConsumed uses hasValidPosition, which is false
    /// in AWAIT_VALIDATION: a partition whose leader changed after its last
    /// record was read (the metadata names epoch 5, the record is of epoch
    /// 3) and which has not been validated yet is left out of the commit;
    /// a partition read in the current epoch is committed.
    #[test]
    fn a_commit_leaves_out_positions_awaiting_validation() {
        let config = match ConsumerConfig::parse(&Default::default(), "consumer") {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let mut c = Consumer::new("c".to_string(), 0, vec![0, 1], config, 3);
        let mut g = GroupMember::new("g".to_string());
        g.coordinator = Some(1);
        g.offsets_fetched = true;
        g.to_fetch.clear();
        g.commit_due = true;
        c.group = Some(g);
        c.metadata.insert(0, (Some(1), 5));
        c.metadata.insert(1, (Some(2), 5));
        for (p, offset, epoch) in [(0, 120, 5), (1, 80, 3)] {
            if let Some(pos) = c.positions.get_mut(&p) {
                pos.offset = offset;
                pos.epoch = Some(epoch);
            }
        }
        let mut world = TestWorld::one_partition();
        let committed = |world: &mut TestWorld, c: &mut Consumer| {
            world.at(1_000, |ctx| {
                c.drive_group(ctx);
                ctx.sends.iter().find_map(|(_, m)| match m {
                    Message::OffsetCommit { offsets, .. } => Some(
                        offsets
                            .iter()
                            .map(|o| (o.partition, o.offset))
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                })
            })
        };
        assert_eq!(committed(&mut world, &mut c), Some(vec![(0, 120)]));
        // Validated against epoch 5: now it is committed too.
        if let Some(g) = c.group.as_mut() {
            g.commit = None;
            g.commit_due = true;
        }
        if let Some(pos) = c.positions.get_mut(&1) {
            pos.validated_epoch = Some(5);
        }
        assert_eq!(committed(&mut world, &mut c), Some(vec![(0, 120), (1, 80)]));
    }
}
