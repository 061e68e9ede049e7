//! A subscribing consumer's membership in a classic group: join, sync,
//! heartbeat (Kafka's AbstractCoordinator and the join half of
//! ConsumerCoordinator; `broker/classic_group.rs` is the other side).
//!
//! - Before it joins again, the member commits its positions when
//!   auto-commit is on and it still has a generation, and waits for the
//!   answer (ConsumerCoordinator.onJoinPrepare); then, with the eager
//!   `range` assignor, it gives up every partition (onPartitionsRevoked).
//!   Without a generation (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) its
//!   partitions are lost: no commit.
//! - JoinGroup: the first answer is MEMBER_ID_REQUIRED with the id to join
//!   with; the next waits at the coordinator until the rebalance completes.
//!   The request's timeout is the rebalance timeout plus 5 s.
//! - The leader computes the assignment and sends it with its SyncGroup;
//!   every member's SyncGroup answer is its share. New partitions start at
//!   the group's committed offset (OffsetFetch), as in the single-member
//!   case.
//! - `cooperative-sticky` (KIP-429): a member keeps the partitions it is
//!   assigned again (no position lost), gives up only those assigned
//!   elsewhere, and joins a second time so they can be handed over.
//! - A heartbeat every `heartbeat.interval.ms` once it has joined:
//!   REBALANCE_IN_PROGRESS makes it join again; ILLEGAL_GENERATION and
//!   UNKNOWN_MEMBER_ID lose its partitions (the latter its member id too).

use std::rc::Rc;

use super::consumer::Consumer;
#[cfg(group_protocols)]
use super::consumer::ConsumerPosition;
use crate::sim::io::Ctx;
#[cfg(group_protocols)]
use crate::sim::io::Timer;
#[cfg(group_protocols)]
use crate::sim::pmap::DenseMap;
use crate::sim::protocol::*;
#[cfg(group_protocols)]
use crate::sim::trace::TraceKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum MemberState {
    /// Not in the group (or told to join again): JoinGroup is next.
    Unjoined,
    /// JoinGroup sent, its answer awaited.
    Joining,
    /// Joined: SyncGroup is next (or awaited).
    Syncing,
    Stable,
    /// KIP-848: the coordinator refused the member for good
    /// (UNRELEASED_INSTANCE_ID): poll() raises, the member does nothing more.
    Failed,
}

impl MemberState {
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Unjoined => "unjoined",
            MemberState::Joining => "joining",
            MemberState::Syncing => "syncing",
            MemberState::Stable => "stable",
            MemberState::Failed => "failed",
        }
    }
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[cfg_attr(not(group_protocols), allow(dead_code))]
pub struct Membership {
    pub member_id: Rc<str>,
    pub instance_id: Option<Rc<str>>,
    /// -1 until a rebalance completes for it.
    pub generation: i32,
    pub state: MemberState,
    /// The partitions this generation gave it.
    pub assignment: Vec<PartitionIndex>,
    /// Rebalances it took part in to the end (SyncGroup answered).
    pub rebalances: u32,
    pub(super) join: Option<(u64, BrokerId)>,
    pub(super) sync: Option<(u64, BrokerId)>,
    pub(super) heartbeat: Option<(u64, BrokerId)>,
    /// onJoinPrepare's commit has been sent (or was not needed); KIP-848:
    /// the commit before a revocation.
    pub(super) prepared: bool,
    /// The leader's assignment, sent with its SyncGroup.
    to_assign: Vec<(Rc<str>, Vec<PartitionIndex>)>,
    /// A heartbeat timer is scheduled.
    pub(super) beating: bool,
    /// KIP-848 (`group.protocol=consumer`, `client/consumer_member.rs`):
    /// the member epoch is `generation`.
    pub kip848: bool,
    /// KIP-848: the next heartbeat reports what it owns (its assignment
    /// changed), and goes now.
    pub(super) ack: bool,
    /// KIP-848: partitions to give up (commit first, then revoke).
    pub(super) revoking: Vec<PartitionIndex>,
    /// KIP-848: when the next heartbeat is due.
    pub(super) next_heartbeat_ms: u64,
}

#[cfg_attr(not(group_protocols), allow(dead_code))]
impl Membership {
    pub fn new(instance_id: Option<String>) -> Self {
        Membership {
            kip848: false,
            ack: false,
            revoking: Vec::new(),
            next_heartbeat_ms: 0,
            member_id: Rc::from(""),
            instance_id: instance_id.map(Rc::from),
            generation: -1,
            state: MemberState::Unjoined,
            assignment: Vec::new(),
            rebalances: 0,
            join: None,
            sync: None,
            heartbeat: None,
            prepared: false,
            to_assign: Vec::new(),
            beating: false,
        }
    }

    /// A KIP-848 member whose process chose `member_id`.
    pub fn kip848(member_id: String, instance_id: Option<String>) -> Self {
        Membership {
            member_id: Rc::from(member_id),
            generation: 0,
            kip848: true,
            ..Membership::new(instance_id)
        }
    }

    pub(super) fn requests(&self) -> impl Iterator<Item = (u64, BrokerId)> + '_ {
        [self.join, self.sync, self.heartbeat].into_iter().flatten()
    }

    fn rejoin(&mut self) {
        self.state = MemberState::Unjoined;
        self.prepared = false;
    }
}

/// The client-side assignors over one topic's partitions 0..n, each
/// member's share in partition numbers.
#[cfg(group_protocols)]
fn assign(
    strategy: &str,
    members: &[JoinedMember],
    partitions: &[PartitionIndex],
) -> Vec<(Rc<str>, Vec<PartitionIndex>)> {
    let n = partitions.len() as u32;
    let shares: Vec<Vec<u32>> = if strategy == "cooperative-sticky" {
        let subs: Vec<crate::sim::assignor::Member> = members
            .iter()
            .map(|m| crate::sim::assignor::Member {
                member_id: m.member_id.to_string(),
                instance_id: m.instance_id.as_ref().map(|i| i.to_string()),
                owned: m
                    .owned
                    .iter()
                    .filter_map(|p| partitions.iter().position(|x| x == p).map(|i| i as u32))
                    .collect(),
                generation: m.generation,
            })
            .collect();
        crate::sim::assignor::cooperative_sticky(&subs, n)
    } else {
        let subs: Vec<crate::sim::assignor::Member> = members
            .iter()
            .map(|m| crate::sim::assignor::Member {
                member_id: m.member_id.to_string(),
                instance_id: m.instance_id.as_ref().map(|i| i.to_string()),
                owned: Vec::new(),
                generation: m.generation,
            })
            .collect();
        crate::sim::assignor::range(&subs, n)
    };
    members
        .iter()
        .zip(shares)
        .map(|(m, share)| {
            (
                m.member_id.clone(),
                share
                    .into_iter()
                    .filter_map(|i| partitions.get(i as usize).copied())
                    .collect(),
            )
        })
        .collect()
}

/// Without the classic protocol compiled in (the page's first-load wasm;
/// build.rs) no consumer subscribes: the scenario refuses it.
#[cfg(not(group_protocols))]
impl Consumer {
    pub(super) fn member_ready(&self) -> bool {
        true
    }

    pub(super) fn drive_membership(&mut self, _ctx: &mut Ctx, _coordinator: BrokerId) -> bool {
        false
    }

    pub(super) fn membership_failed(&mut self, _ctx: &mut Ctx, _id: u64, _e: ErrorCode) -> bool {
        false
    }

    pub(super) fn member_error(&mut self, _ctx: &mut Ctx, _request: &str, _e: ErrorCode) -> bool {
        false
    }

    pub(super) fn heartbeat_due(&mut self, _ctx: &mut Ctx) {}

    pub(super) fn leave_group(&mut self, _ctx: &mut Ctx) {}
}

#[cfg(group_protocols)]
impl Consumer {
    pub(super) fn membership(&self) -> Option<&Membership> {
        self.group.as_ref().and_then(|g| g.membership.as_ref())
    }

    /// The partitions this member reads now (the strip's "not consumed",
    /// consumption.rs): its generation's (KIP-848: its member epoch's)
    /// assignment while its process runs, the application polls
    /// (`stall_client` stops it) and it may fetch; nothing otherwise.
    pub fn reads_assigned(&self) -> &[PartitionIndex] {
        match self.membership() {
            Some(m) if self.running && self.stalled_since.is_none() && self.member_ready() => {
                &m.assignment
            }
            _ => &[],
        }
    }

    pub(super) fn membership_mut(&mut self) -> Option<&mut Membership> {
        self.group.as_mut().and_then(|g| g.membership.as_mut())
    }

    /// Whether the member may fetch: it has an assignment of the current
    /// generation; with the cooperative assignor it goes on reading the
    /// partitions it keeps while it rebalances (KIP-429).
    pub(super) fn member_ready(&self) -> bool {
        self.membership().is_none_or(|m| {
            m.kip848
                || m.state == MemberState::Stable
                || self.config.assignment_strategy == "cooperative-sticky"
        })
    }

    /// Move the membership on (called from drive_group with the coordinator
    /// known and its connection up). Returns true when it sent something or
    /// must wait, so the offsets half does nothing now.
    pub(super) fn drive_membership(&mut self, ctx: &mut Ctx, coordinator: BrokerId) -> bool {
        let Some(m) = self.membership() else {
            return false;
        };
        if m.kip848 {
            return self.drive_consumer_member(ctx, coordinator);
        }
        if m.join.is_some() || m.sync.is_some() {
            return true;
        }
        match m.state {
            MemberState::Stable | MemberState::Joining | MemberState::Failed => false,
            MemberState::Unjoined => {
                if !m.prepared {
                    let commit = self.config.enable_auto_commit && m.generation >= 0;
                    if let Some(m) = self.membership_mut() {
                        m.prepared = true;
                    }
                    // onJoinPrepare: commit first, and wait for the answer.
                    if commit && self.send_commit(ctx, coordinator) {
                        return true;
                    }
                }
                self.revoke_before_join(ctx);
                self.send_join(ctx, coordinator);
                true
            }
            MemberState::Syncing => {
                self.send_sync(ctx, coordinator);
                true
            }
        }
    }

    /// AbstractCoordinator.maybeLeaveGroup on the poll timer's expiry: the
    /// application has not called poll() for `max.poll.interval.ms`, so the
    /// member leaves its group (LeaveGroup; KIP-848: a heartbeat with epoch
    /// -1) and its partitions are lost; it joins again when the application
    /// polls again.
    pub(super) fn leave_group(&mut self, ctx: &mut Ctx) {
        let name = self.name.clone();
        let max_poll = self.config.max_poll_interval_ms;
        let Some(g) = self.group.as_mut() else {
            return;
        };
        let coordinator = g.coordinator;
        let group = g.group_id.clone();
        let Some(m) = g.membership.as_mut() else {
            return;
        };
        if m.state == MemberState::Unjoined && m.generation <= 0 {
            return;
        }
        let member_id = m.member_id.clone();
        let kip848 = m.kip848;
        m.heartbeat = None;
        m.join = None;
        m.sync = None;
        m.state = MemberState::Unjoined;
        m.prepared = true;
        if kip848 {
            m.generation = 0;
        } else {
            m.generation = -1;
            m.member_id = Rc::from("");
        }
        if let Some(c) = coordinator {
            let msg = if kip848 {
                Message::ConsumerHeartbeat {
                    id: ctx.new_id(),
                    hb: Box::new(ConsumerHeartbeatRequest {
                        group: group.clone(),
                        member_id: member_id.clone(),
                        epoch: -1,
                        assignor: self.config.remote_assignor,
                        owned: None,
                        partitions: Vec::new(),
                        instance_id: None,
                    }),
                }
            } else {
                Message::LeaveGroup {
                    group: group.clone(),
                    member_id: member_id.clone(),
                }
            };
            ctx.send(Node::Broker(c), msg);
        }
        let shown: Vec<String> = self.positions.iter().map(|(p, _)| ctx.tp(p)).collect();
        if kip848 {
            self.lose_partitions();
        } else {
            let gone: Vec<PartitionIndex> = self.positions.iter().map(|(p, _)| p).collect();
            self.drop_positions(&gone);
            if let Some(m) = self.membership_mut() {
                m.assignment.clear();
            }
        }
        ctx.trace(
            TraceKind::PartitionsRevoked {
                consumer: name.clone(),
                group: group.clone(),
                partitions: shown.clone(),
            },
            format!(
                "Consumer {name}'s application has not called poll() for max.poll.interval.ms={max_poll} ms: it leaves group {group} ({}), and {} lost, not committed; it joins again when the application polls again.",
                if kip848 { "a heartbeat with member epoch -1" } else { "LeaveGroup" },
                if shown.is_empty() { "nothing is".to_string() } else { format!("{} are", shown.join(", ")) }
            ),
        );
    }

    /// Eager assignors give up every partition before joining; without a
    /// generation the partitions are lost, not revoked (nothing committed).
    fn revoke_before_join(&mut self, ctx: &mut Ctx) {
        let eager = self.config.assignment_strategy != "cooperative-sticky";
        let lost = self.membership().is_some_and(|m| m.generation < 0);
        if !eager && !lost {
            return;
        }
        let gone: Vec<PartitionIndex> = self.positions.iter().map(|(p, _)| p).collect();
        if gone.is_empty() {
            return;
        }
        self.drop_positions(&gone);
        if let Some(m) = self.membership_mut() {
            m.assignment.clear();
        }
        let name = self.name.clone();
        let group = self
            .group
            .as_ref()
            .map(|g| g.group_id.clone())
            .unwrap_or_default();
        let shown: Vec<String> = gone.iter().map(|p| ctx.tp(*p)).collect();
        let why = if lost {
            "it has lost its generation, so they are lost, not committed"
        } else {
            "the eager range assignor gives everything up before a rebalance"
        };
        ctx.trace(
            TraceKind::PartitionsRevoked {
                consumer: name.clone(),
                group: group.clone(),
                partitions: shown.clone(),
            },
            format!(
                "Consumer {name} stops reading {} ({why}); it joins group {group} again.",
                shown.join(", ")
            ),
        );
    }

    /// Forget the positions of `gone` (and any fetch of them in flight).
    pub(super) fn drop_positions(&mut self, gone: &[PartitionIndex]) {
        let keep: DenseMap<ConsumerPosition> = self
            .positions
            .iter()
            .filter(|(p, _)| !gone.contains(p))
            .map(|(p, pos)| (p, pos.clone()))
            .collect();
        self.positions = keep;
        self.forget_fetches_of(gone);
        if let Some(g) = self.group.as_mut() {
            g.to_fetch.retain(|p| !gone.contains(p));
        }
    }

    fn send_join(&mut self, ctx: &mut Ctx, coordinator: BrokerId) {
        let id = ctx.new_id();
        let owned: Vec<PartitionIndex> = self.positions.iter().map(|(p, _)| p).collect();
        let Some(g) = self.group.as_mut() else {
            return;
        };
        let Some(m) = g.membership.as_mut() else {
            return;
        };
        m.join = Some((id, coordinator));
        m.state = MemberState::Joining;
        let join = JoinRequest {
            group: g.group_id.clone(),
            client_id: Rc::from(self.name.as_str()),
            member_id: m.member_id.clone(),
            instance_id: m.instance_id.clone(),
            session_timeout_ms: self.config.session_timeout_ms,
            rebalance_timeout_ms: self.config.max_poll_interval_ms,
            protocol: self.config.assignment_strategy,
            owned,
            generation: m.generation,
        };
        ctx.send(
            Node::Broker(coordinator),
            Message::JoinGroup {
                id,
                join: Box::new(join),
            },
        );
        // AbstractCoordinator: a JoinGroup may wait a whole rebalance.
        let timeout = self
            .config
            .request_timeout_ms
            .max(self.config.max_poll_interval_ms + 5_000);
        ctx.after(timeout, Timer::RequestTimeout { id });
    }

    fn send_sync(&mut self, ctx: &mut Ctx, coordinator: BrokerId) {
        self.send_member_request(ctx, coordinator, |g, m, id| {
            m.sync = Some((id, coordinator));
            Message::SyncGroup {
                id,
                group: g.to_string(),
                generation: m.generation,
                member_id: m.member_id.clone(),
                assignments: std::mem::take(&mut m.to_assign),
            }
        });
    }

    /// Send the coordinator a request of the membership that `make` builds
    /// (and records in the membership) from the group id, the membership
    /// and the request id, with `request.timeout.ms`.
    fn send_member_request(
        &mut self,
        ctx: &mut Ctx,
        coordinator: BrokerId,
        make: impl FnOnce(&str, &mut Membership, u64) -> Message,
    ) {
        let id = ctx.new_id();
        let Some(g) = self.group.as_mut() else {
            return;
        };
        let Some(m) = g.membership.as_mut() else {
            return;
        };
        let msg = make(&g.group_id, m, id);
        ctx.send(Node::Broker(coordinator), msg);
        ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
    }

    /// The heartbeat timer: a heartbeat if the member has joined and none
    /// is out, then the next timer.
    pub(super) fn heartbeat_due(&mut self, ctx: &mut Ctx) {
        if self.membership().is_some_and(|m| m.kip848) {
            self.consumer_heartbeat_due(ctx);
            return;
        }
        let interval = self.config.heartbeat_interval_ms;
        let Some(g) = self.group.as_ref() else {
            return;
        };
        let coordinator = g.coordinator;
        let Some(m) = g.membership.as_ref() else {
            return;
        };
        let joined = matches!(m.state, MemberState::Syncing | MemberState::Stable);
        if !joined {
            if let Some(m) = self.membership_mut() {
                m.beating = false;
            }
            return;
        }
        if m.heartbeat.is_none() {
            if let Some(c) = coordinator.filter(|c| self.connections.ready(ctx, *c)) {
                self.send_member_request(ctx, c, |g, m, id| {
                    m.heartbeat = Some((id, c));
                    Message::GroupHeartbeat {
                        id,
                        group: g.to_string(),
                        generation: m.generation,
                        member_id: m.member_id.clone(),
                    }
                });
            }
        }
        ctx.after(interval, Timer::MemberHeartbeat);
    }

    fn start_heartbeats(&mut self, ctx: &mut Ctx) {
        let interval = self.config.heartbeat_interval_ms;
        if let Some(m) = self.membership_mut() {
            if !m.beating {
                m.beating = true;
                ctx.after(interval, Timer::MemberHeartbeat);
            }
        }
    }

    /// A JoinGroup, SyncGroup or Heartbeat failed with `e` (or timed out,
    /// or its connection broke). Returns false when `id` is none of them.
    pub(super) fn membership_failed(&mut self, ctx: &mut Ctx, id: u64, e: ErrorCode) -> bool {
        let Some(m) = self.membership_mut() else {
            return false;
        };
        let request = if m.join.is_some_and(|r| r.0 == id) {
            m.join = None;
            "JoinGroup"
        } else if m.sync.is_some_and(|r| r.0 == id) {
            m.sync = None;
            "SyncGroup"
        } else if m.heartbeat.is_some_and(|r| r.0 == id) {
            m.heartbeat = None;
            if m.kip848 {
                "ConsumerGroupHeartbeat"
            } else {
                "Heartbeat"
            }
        } else {
            return false;
        };
        if e == ErrorCode::UnreleasedInstanceId {
            self.instance_id_unreleased(ctx);
            return true;
        }
        if self.member_error(ctx, request, e) {
            return true;
        }
        // A coordinator error: a join or sync in progress starts over with
        // the next coordinator (the member keeps its id and generation).
        if let Some(m) = self.membership_mut().filter(|m| m.kip848) {
            // KIP-848: the heartbeat goes again once the coordinator is
            // found (a join not answered is still a join).
            m.next_heartbeat_ms = 0;
            if m.state == MemberState::Joining {
                m.state = MemberState::Unjoined;
            }
        }
        if request == "JoinGroup" || request == "SyncGroup" {
            if let Some(m) = self.membership_mut() {
                if m.state != MemberState::Stable {
                    m.state = MemberState::Unjoined;
                    m.prepared = true;
                }
            }
        }
        self.group_request_failed_known(ctx, request, e);
        true
    }

    /// The member errors of a group request (a Heartbeat, SyncGroup or
    /// OffsetCommit): REBALANCE_IN_PROGRESS makes the member join again;
    /// ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID end its generation (its
    /// partitions are lost), the latter its member id too. Counted and
    /// narrated; false (nothing done) for any other error.
    pub(super) fn member_error(&mut self, ctx: &mut Ctx, request: &str, e: ErrorCode) -> bool {
        let name = self.name.clone();
        let Some(g) = self.group.as_mut() else {
            return false;
        };
        let Some(m) = g.membership.as_mut() else {
            return false;
        };
        if !e.is_member_error() {
            return false;
        }
        let then = match e {
            ErrorCode::RebalanceInProgress => "the group is rebalancing: it joins again",
            ErrorCode::IllegalGeneration => {
                m.generation = -1;
                "its generation is over: its partitions are lost and it joins again"
            }
            ErrorCode::UnknownMemberId | ErrorCode::FencedMemberEpoch if m.kip848 => {
                m.generation = 0;
                "its member epoch is over: its partitions are lost and it joins again with epoch 0"
            }
            ErrorCode::StaleMemberEpoch => "its epoch is behind the group's",
            ErrorCode::UnknownMemberId => {
                m.generation = -1;
                m.member_id = Rc::from("");
                "the group no longer knows it: its partitions are lost and it joins as a new member"
            }
            _ => "",
        };
        let lost =
            m.kip848 && matches!(e, ErrorCode::UnknownMemberId | ErrorCode::FencedMemberEpoch);
        // A commit refused mid-rebalance leaves a join under way alone.
        if m.kip848 {
            if lost {
                m.state = MemberState::Unjoined;
            }
        } else if request != "OffsetCommit" || m.state == MemberState::Stable {
            m.rejoin();
        }
        let not_retried = if request == "OffsetCommit" {
            "the commit is not retried; "
        } else {
            ""
        };
        *g.errors.entry(e.name().to_string()).or_default() += 1;
        let group = g.group_id.clone();
        if lost {
            self.lose_partitions();
        }
        ctx.trace(
            TraceKind::CoordinatorError {
                consumer: name.clone(),
                group: group.clone(),
                request: request.to_string(),
                error: e.name().to_string(),
            },
            format!("Consumer {name}'s {request} for group {group} failed with {e}: {not_retried}{then}."),
        );
        self.poll(ctx);
        true
    }

    pub(super) fn on_membership_message(&mut self, ctx: &mut Ctx, msg: Message) {
        match msg {
            Message::JoinGroupResponse { id, result } => {
                if !self.awaits(id, |m| m.join) {
                    return;
                }
                match result {
                    Err((ErrorCode::MemberIdRequired, Some(member))) => {
                        if let Some(m) = self.membership_mut() {
                            m.join = None;
                            m.member_id = member;
                            m.state = MemberState::Unjoined;
                        }
                        self.poll(ctx);
                    }
                    Err((e, _)) => {
                        self.membership_failed(ctx, id, e);
                    }
                    Ok(answer) => {
                        let partitions = self.topic_partitions.clone();
                        let strategy = self.config.assignment_strategy;
                        if let Some(g) = self.group.as_mut() {
                            g.failures = 0;
                        }
                        if let Some(m) = self.membership_mut() {
                            m.join = None;
                            m.member_id = answer.member_id.clone();
                            m.generation = answer.generation;
                            m.state = MemberState::Syncing;
                            m.to_assign = if answer.leader == answer.member_id {
                                assign(strategy, &answer.members, &partitions)
                            } else {
                                Vec::new()
                            };
                        }
                        self.start_heartbeats(ctx);
                        self.poll(ctx);
                    }
                }
            }
            Message::SyncGroupResponse { id, result } => {
                if !self.awaits(id, |m| m.sync) {
                    return;
                }
                match result {
                    Err(e) => {
                        self.membership_failed(ctx, id, e);
                    }
                    Ok(assignment) => self.assigned(ctx, assignment),
                }
            }
            Message::GroupHeartbeatResponse { id, result } => {
                if !self.awaits(id, |m| m.heartbeat) {
                    return;
                }
                match result {
                    Ok(()) => {
                        if let Some(m) = self.membership_mut() {
                            m.heartbeat = None;
                        }
                    }
                    Err(e) => {
                        self.membership_failed(ctx, id, e);
                    }
                }
            }
            _ => {}
        }
    }

    /// What a new assignment `target` changes: the partitions held now that
    /// it leaves out, and those it adds.
    pub(super) fn assignment_change(
        &self,
        target: &[PartitionIndex],
    ) -> (Vec<PartitionIndex>, Vec<PartitionIndex>) {
        let held: Vec<PartitionIndex> = self.positions.iter().map(|(p, _)| p).collect();
        let gone = held
            .iter()
            .copied()
            .filter(|p| !target.contains(p))
            .collect();
        let added = target
            .iter()
            .copied()
            .filter(|p| !held.contains(p))
            .collect();
        (gone, added)
    }

    /// New partitions of the member: each gets a position, started from the
    /// group's committed offset (OffsetFetch) before it is read.
    pub(super) fn start_partitions(&mut self, added: &[PartitionIndex]) {
        for p in added {
            self.positions.insert(*p, ConsumerPosition::default());
        }
        if let Some(g) = self.group.as_mut() {
            g.to_fetch.extend(added.iter().copied());
            g.offsets_fetched = g.to_fetch.is_empty();
        }
    }

    /// Whether `id` is the membership's request in `slot` (its join, sync
    /// or heartbeat): answers to anything else are stale.
    pub(super) fn awaits(&self, id: u64, slot: fn(&Membership) -> Option<(u64, BrokerId)>) -> bool {
        self.membership()
            .is_some_and(|m| slot(m).is_some_and(|r| r.0 == id))
    }

    /// onJoinComplete: the generation's assignment. Partitions kept keep
    /// their positions; new ones start from the committed offsets; with
    /// the cooperative assignor, partitions given up mean a second round.
    fn assigned(&mut self, ctx: &mut Ctx, mut assignment: Vec<PartitionIndex>) {
        assignment.sort_unstable();
        let (revoked, added) = self.assignment_change(&assignment);
        let name = self.name.clone();
        let group = self
            .group
            .as_ref()
            .map(|g| g.group_id.clone())
            .unwrap_or_default();
        if !revoked.is_empty() {
            self.drop_positions(&revoked);
            let shown: Vec<String> = revoked.iter().map(|p| ctx.tp(*p)).collect();
            ctx.trace(
                TraceKind::PartitionsRevoked {
                    consumer: name.clone(),
                    group: group.clone(),
                    partitions: shown.clone(),
                },
                format!(
                    "Consumer {name} gives up {} (assigned to another member); it joins again so they can be handed over.",
                    shown.join(", ")
                ),
            );
        }
        self.start_partitions(&added);
        self.rearm_auto_commit(ctx);
        let generation = self.membership().map_or(-1, |m| m.generation);
        if let Some(g) = self.group.as_mut() {
            g.failures = 0;
            g.last_error = None;
            if let Some(m) = g.membership.as_mut() {
                m.sync = None;
                m.assignment = assignment.clone();
                m.rebalances += 1;
                m.state = MemberState::Stable;
                m.prepared = false;
                if !revoked.is_empty() {
                    m.rejoin();
                }
            }
        }
        let shown: Vec<String> = assignment.iter().map(|p| ctx.tp(*p)).collect();
        let text = if shown.is_empty() {
            format!("Consumer {name} is in generation {generation} of group {group} with no partition to read.")
        } else if added.is_empty() {
            format!(
                "Consumer {name} keeps {} in generation {generation} of group {group}.",
                shown.join(", ")
            )
        } else {
            let new: Vec<String> = added.iter().map(|p| ctx.tp(*p)).collect();
            format!(
                "Consumer {name} reads {} in generation {generation} of group {group}; it starts {} from the group's committed offsets.",
                shown.join(", "),
                new.join(", ")
            )
        };
        ctx.trace(
            TraceKind::PartitionsAssigned {
                consumer: name,
                group,
                generation,
                partitions: shown,
            },
            text,
        );
        self.poll(ctx);
    }
}
