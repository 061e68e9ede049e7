//! The classic group protocol at the coordinator: who is in a consumer
//! group, which generation it is in, and who reads which partition
//! (Kafka's ClassicGroup and the classic half of GroupMetadataManager).
//!
//! - A group is Empty, PreparingRebalance, CompletingRebalance or Stable.
//! - JoinGroup without a member id answers MEMBER_ID_REQUIRED with the id to
//!   join with (KIP-394); a static member (`group.instance.id`, KIP-345) is
//!   given its id at once, and one that comes back while the group is Stable
//!   takes its old place and assignment without a rebalance.
//! - A rebalance waits for every known member to join again, at most the
//!   largest rebalance timeout (`max.poll.interval.ms`); one that starts in
//!   an Empty group first waits `group.initial.rebalance.delay.ms` (3 s),
//!   again after each new member, within the rebalance timeout
//!   (InitialDelayedJoin). When it completes, members that did not join are
//!   removed, the generation grows by one and the leader (the old one if it
//!   joined, else the first member) receives every member's subscription.
//! - SyncGroup: the leader's assignment makes the group Stable and is
//!   written to the group's `__consumer_offsets` partition as a group
//!   record; every member gets its share.
//! - Heartbeat: REBALANCE_IN_PROGRESS while a rebalance gathers members,
//!   ILLEGAL_GENERATION for an old generation, UNKNOWN_MEMBER_ID for a member
//!   the group does not have. A member not heard from for its
//!   `session.timeout.ms` (45 s) is removed and the group rebalances.
//! - OffsetCommit from a member is fenced by its generation
//!   (ClassicGroup.validateOffsetCommit).
//! - A new coordinator loads the last group record with the commits: the
//!   group is Stable again with the members and assignment it had, and each
//!   member's session starts afresh, so a coordinator move alone causes no
//!   rebalance. A rebalance that was under way is lost with the old
//!   coordinator; its members join again.
//!
//! Simplified (the book, consumer groups): the SyncGroup answers do not wait
//! for the group record to reach the high watermark; LeaveGroup is not sent
//! (a process dies or its session ends); each member subscribes to its
//! consumer's one topic.

use std::rc::Rc;

use super::Broker;
use crate::sim::config::Acks;
use crate::sim::io::{Ctx, OffsetsRecord, Timer};
use crate::sim::log::Record;
use crate::sim::pmap::VecMap;
use crate::sim::protocol::*;
use crate::sim::trace::TraceKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

impl GroupState {
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
        }
    }
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ClassicMember {
    pub member_id: Rc<str>,
    pub instance_id: Option<Rc<str>>,
    /// The consumer that last joined as this member (where answers go).
    pub client: Node,
    pub session_timeout_ms: u64,
    pub rebalance_timeout_ms: u64,
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub protocol: &'static str,
    /// What it owned when it last joined, and in which generation.
    pub owned: Vec<PartitionIndex>,
    pub owned_generation: i32,
    pub assignment: Vec<PartitionIndex>,
    awaiting_join: Option<u64>,
    awaiting_sync: Option<u64>,
    /// The session ends at this time unless a heartbeat (or a request of
    /// the rebalance) comes first.
    pub expires_at: u64,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ClassicGroup {
    pub state: GroupState,
    pub generation: i32,
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::opt_static_str::ser",
            deserialize_with = "crate::snapshot::opt_static_str::de"
        )
    )]
    pub protocol: Option<&'static str>,
    pub leader: Option<Rc<str>>,
    /// In the order they joined.
    pub members: Vec<ClassicMember>,
    /// Ids handed out with MEMBER_ID_REQUIRED, not yet used to join.
    pending: Vec<Rc<str>>,
    /// PreparingRebalance ends here at the latest.
    join_deadline: u64,
    /// The initial delay of a rebalance that began in an Empty group: how
    /// much of the rebalance timeout is left, and whether a member joined
    /// during the current delay.
    initial_delay: Option<(u64, bool)>,
    next_member: u32,
    /// Why the current rebalance started (for its narration).
    reason: String,
}

/// What a group record in `__consumer_offsets` holds (GroupMetadataValue):
/// enough for a new coordinator to take the group over.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct GroupSnapshot {
    pub generation: i32,
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::opt_static_str::ser",
            deserialize_with = "crate::snapshot::opt_static_str::de"
        )
    )]
    pub protocol: Option<&'static str>,
    pub leader: Option<Rc<str>>,
    pub next_member: u32,
    pub members: Vec<SnapshotMember>,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct SnapshotMember {
    pub member_id: Rc<str>,
    pub instance_id: Option<Rc<str>>,
    pub client: Node,
    pub session_timeout_ms: u64,
    pub rebalance_timeout_ms: u64,
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub protocol: &'static str,
    pub assignment: Vec<PartitionIndex>,
}

impl ClassicGroup {
    fn new() -> Self {
        ClassicGroup {
            state: GroupState::Empty,
            generation: 0,
            protocol: None,
            leader: None,
            members: Vec::new(),
            pending: Vec::new(),
            join_deadline: 0,
            initial_delay: None,
            next_member: 1,
            reason: String::new(),
        }
    }

    fn member(&self, id: &str) -> Option<usize> {
        self.members.iter().position(|m| &*m.member_id == id)
    }

    fn snapshot(&self) -> GroupSnapshot {
        GroupSnapshot {
            generation: self.generation,
            protocol: self.protocol,
            leader: self.leader.clone(),
            next_member: self.next_member,
            members: self
                .members
                .iter()
                .map(|m| SnapshotMember {
                    member_id: m.member_id.clone(),
                    instance_id: m.instance_id.clone(),
                    client: m.client,
                    session_timeout_ms: m.session_timeout_ms,
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    protocol: m.protocol,
                    assignment: m.assignment.clone(),
                })
                .collect(),
        }
    }

    /// The group as a new coordinator loads it: Stable with its members
    /// (Empty without any), every session starting now.
    pub fn restore(s: &GroupSnapshot, now: u64) -> Self {
        let mut g = ClassicGroup::new();
        g.generation = s.generation;
        g.protocol = s.protocol;
        g.leader = s.leader.clone();
        g.next_member = s.next_member;
        g.members = s
            .members
            .iter()
            .map(|m| ClassicMember {
                member_id: m.member_id.clone(),
                instance_id: m.instance_id.clone(),
                client: m.client,
                session_timeout_ms: m.session_timeout_ms,
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                protocol: m.protocol,
                owned: m.assignment.clone(),
                owned_generation: s.generation,
                assignment: m.assignment.clone(),
                awaiting_join: None,
                awaiting_sync: None,
                expires_at: now + m.session_timeout_ms,
            })
            .collect();
        g.state = if g.members.is_empty() {
            GroupState::Empty
        } else {
            GroupState::Stable
        };
        g
    }

    fn rebalance_timeout(&self) -> u64 {
        self.members
            .iter()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
    }

    fn all_joined(&self) -> bool {
        self.pending.is_empty() && self.members.iter().all(|m| m.awaiting_join.is_some())
    }

    /// The earliest time something is due: a session's end or the join
    /// deadline.
    fn next_deadline(&self) -> Option<u64> {
        let sessions = self
            .members
            .iter()
            .filter(|m| m.awaiting_join.is_none() && m.awaiting_sync.is_none())
            .map(|m| m.expires_at);
        let join = (self.state == GroupState::PreparingRebalance).then_some(self.join_deadline);
        sessions.chain(join).min()
    }

    fn answer_for(&self, m: &ClassicMember) -> JoinAnswer {
        let leader = self.leader.clone().unwrap_or_else(|| Rc::from(""));
        let members = if leader == m.member_id {
            self.members
                .iter()
                .map(|x| JoinedMember {
                    member_id: x.member_id.clone(),
                    instance_id: x.instance_id.clone(),
                    owned: x.owned.clone(),
                    generation: x.owned_generation,
                })
                .collect()
        } else {
            Vec::new()
        };
        JoinAnswer {
            generation: self.generation,
            member_id: m.member_id.clone(),
            leader,
            protocol: self.protocol.unwrap_or("range"),
            members,
        }
    }
}

impl Broker {
    /// The classic group `group` of the shard that coordinates it, or the
    /// error a member gets instead.
    pub(super) fn classic_shard(
        &mut self,
        ctx: &Ctx,
        group: &str,
    ) -> Result<(PartitionIndex, &mut super::coordinator::Shard), ErrorCode> {
        let p = super::coordinator::offsets_partition_index(ctx, group)
            .ok_or(ErrorCode::NotCoordinator)?;
        let leads = self.replicas.get(&p).is_some_and(|r| r.is_leader());
        let shard = self
            .coordinator
            .get_mut(&p)
            .ok_or(ErrorCode::NotCoordinator)?;
        if !leads {
            return Err(ErrorCode::NotCoordinator);
        }
        if !shard.loaded {
            return Err(ErrorCode::CoordinatorLoadInProgress);
        }
        Ok((p, shard))
    }

    pub(super) fn handle_join_group(&mut self, ctx: &mut Ctx, from: Node, id: u64, j: JoinRequest) {
        let me = self.id;
        let (p, shard) = match self.classic_shard(ctx, &j.group) {
            Ok(s) => s,
            Err(e) => {
                let result = Err((e, None));
                ctx.send(from, Message::JoinGroupResponse { id, result });
                return;
            }
        };
        let key: Rc<str> = Rc::from(j.group.as_str());
        let g = shard.classic.or_insert_with(key.clone(), ClassicGroup::new);
        let now = ctx.now;
        let mut member_id = j.member_id.clone();
        if member_id.is_empty() {
            let static_known = j.instance_id.as_ref().and_then(|i| {
                g.members
                    .iter()
                    .position(|m| m.instance_id.as_ref() == Some(i))
            });
            let fresh: Rc<str> = Rc::from(format!("{}-{}", j.client_id, g.next_member));
            g.next_member += 1;
            match (static_known, &j.instance_id) {
                (Some(i), _) => {
                    // KIP-345: the static member's new process takes its
                    // old member's place (and, in a Stable group, its
                    // assignment, without a rebalance).
                    let old = std::mem::replace(&mut g.members[i].member_id, fresh.clone());
                    if g.leader.as_ref() == Some(&old) {
                        g.leader = Some(fresh.clone());
                    }
                    g.members[i].client = from;
                    g.members[i].expires_at = now + j.session_timeout_ms;
                    if g.state == GroupState::Stable {
                        let answer = g.answer_for(&g.members[i]);
                        let text = format!(
                            "Broker {me}: static member {} of group {} is back as {fresh} within its session: it keeps its assignment, and the group does not rebalance.",
                            j.instance_id.as_deref().unwrap_or(""),
                            j.group
                        );
                        ctx.trace(
                            TraceKind::GroupMemberReplaced {
                                broker: me,
                                group: j.group.clone(),
                                member: fresh.to_string(),
                            },
                            text,
                        );
                        ctx.send(
                            from,
                            Message::JoinGroupResponse {
                                id,
                                result: Ok(answer),
                            },
                        );
                        return;
                    }
                    member_id = fresh;
                }
                (None, Some(_)) => member_id = fresh,
                (None, None) => {
                    // KIP-394: the member must come back with this id.
                    g.pending.push(fresh.clone());
                    let result = Err((ErrorCode::MemberIdRequired, Some(fresh)));
                    ctx.send(from, Message::JoinGroupResponse { id, result });
                    return;
                }
            }
        }
        let known = g.member(&member_id);
        let was_pending = g.pending.iter().position(|m| *m == member_id);
        if known.is_none() && was_pending.is_none() && j.member_id == member_id {
            let result = Err((ErrorCode::UnknownMemberId, None));
            ctx.send(from, Message::JoinGroupResponse { id, result });
            return;
        }
        if let Some(i) = was_pending {
            g.pending.remove(i);
        }
        let (index, changed, new) = match known {
            Some(i) => {
                let m = &mut g.members[i];
                let changed = m.owned != j.owned || m.protocol != j.protocol;
                m.owned = j.owned.clone();
                m.owned_generation = j.generation;
                m.protocol = j.protocol;
                m.client = from;
                m.session_timeout_ms = j.session_timeout_ms;
                m.rebalance_timeout_ms = j.rebalance_timeout_ms;
                (i, changed, false)
            }
            None => {
                g.members.push(ClassicMember {
                    member_id: member_id.clone(),
                    instance_id: j.instance_id.clone(),
                    client: from,
                    session_timeout_ms: j.session_timeout_ms,
                    rebalance_timeout_ms: j.rebalance_timeout_ms,
                    protocol: j.protocol,
                    owned: j.owned.clone(),
                    owned_generation: j.generation,
                    assignment: Vec::new(),
                    awaiting_join: None,
                    awaiting_sync: None,
                    expires_at: now + j.session_timeout_ms,
                });
                (g.members.len() - 1, true, true)
            }
        };
        let is_leader = g.leader.as_ref() == Some(&member_id);
        match g.state {
            GroupState::CompletingRebalance | GroupState::Stable if !changed && !is_leader => {
                // Nothing new: it gets this generation's answer again.
                let answer = g.answer_for(&g.members[index]);
                ctx.send(
                    from,
                    Message::JoinGroupResponse {
                        id,
                        result: Ok(answer),
                    },
                );
                return;
            }
            _ => {}
        }
        g.members[index].awaiting_join = Some(id);
        let client = j.client_id.clone();
        let reason = if new {
            format!("{client} joined as a new member")
        } else {
            format!("member {member_id} ({client}) joined again")
        };
        match g.state {
            GroupState::PreparingRebalance => {
                if let Some((_, joined)) = g.initial_delay.as_mut() {
                    *joined = true;
                }
            }
            _ => prepare_rebalance(ctx, me, &j.group, g, reason),
        }
        self.try_complete_join(ctx, p, &key);
        self.schedule_group_tick(ctx, p);
    }

    /// LeaveGroup: the member is removed at once (no session to wait out)
    /// and the group rebalances.
    pub(super) fn handle_leave_group(&mut self, ctx: &mut Ctx, group: &str, member_id: &Rc<str>) {
        let me = self.id;
        let Ok((p, shard)) = self.classic_shard(ctx, group) else {
            return;
        };
        let key: Rc<str> = Rc::from(group);
        let Some(g) = shard.classic.get_mut(&key) else {
            return;
        };
        let Some(i) = g.member(member_id) else {
            return;
        };
        g.members.remove(i);
        let reason = format!("member {member_id} left the group (LeaveGroup)");
        match g.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                prepare_rebalance(ctx, me, group, g, reason)
            }
            _ => {}
        }
        self.try_complete_join(ctx, p, &key);
        self.schedule_group_tick(ctx, p);
    }

    /// Complete the join phase now if every member has joined and no
    /// initial delay runs.
    fn try_complete_join(&mut self, ctx: &mut Ctx, p: PartitionIndex, key: &Rc<str>) {
        let Some(g) = self
            .coordinator
            .get_mut(&p)
            .and_then(|s| s.classic.get_mut(key))
        else {
            return;
        };
        if g.state == GroupState::PreparingRebalance && g.initial_delay.is_none() && g.all_joined()
        {
            self.complete_join(ctx, p, key);
        }
    }

    /// onCompleteJoin: the members that did not join are dropped (static
    /// members stay until their session ends), the generation grows, and
    /// each member gets its JoinGroup answer.
    fn complete_join(&mut self, ctx: &mut Ctx, p: PartitionIndex, key: &Rc<str>) {
        let me = self.id;
        let now = ctx.now;
        let Some(g) = self
            .coordinator
            .get_mut(&p)
            .and_then(|s| s.classic.get_mut(key))
        else {
            return;
        };
        let dropped: Vec<Rc<str>> = g
            .members
            .iter()
            .filter(|m| m.awaiting_join.is_none() && m.instance_id.is_none())
            .map(|m| m.member_id.clone())
            .collect();
        g.members
            .retain(|m| m.awaiting_join.is_some() || m.instance_id.is_some());
        g.pending.clear();
        g.initial_delay = None;
        g.generation += 1;
        if g.members.iter().all(|m| m.awaiting_join.is_none()) {
            g.state = GroupState::Empty;
            g.leader = None;
            g.members.clear();
            let generation = g.generation;
            ctx.trace(
                TraceKind::GroupRebalanced {
                    broker: me,
                    group: key.to_string(),
                    generation,
                    members: Vec::new(),
                    leader: None,
                },
                format!("Broker {me}: group {key} has no members left; it is Empty (generation {generation})."),
            );
            let snapshot = g.snapshot();
            self.write_group_record(ctx, p, key, snapshot);
            return;
        }
        if !g.leader.as_ref().is_some_and(|l| {
            g.members
                .iter()
                .any(|m| &m.member_id == l && m.awaiting_join.is_some())
        }) {
            g.leader = g
                .members
                .iter()
                .find(|m| m.awaiting_join.is_some())
                .map(|m| m.member_id.clone());
        }
        g.protocol = g.members.first().map(|m| m.protocol);
        g.state = GroupState::CompletingRebalance;
        let generation = g.generation;
        let mut sends = Vec::new();
        for i in 0..g.members.len() {
            if let Some(id) = g.members[i].awaiting_join.take() {
                g.members[i].expires_at = now + g.members[i].session_timeout_ms;
                let answer = g.answer_for(&g.members[i]);
                sends.push((g.members[i].client, id, answer));
            }
        }
        let members: Vec<String> = g.members.iter().map(|m| m.member_id.to_string()).collect();
        let leader = g.leader.clone();
        let dropped_text = if dropped.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = dropped.iter().map(|d| &**d).collect();
            format!(
                " {} did not join in time and left the group.",
                names.join(", ")
            )
        };
        ctx.trace(
            TraceKind::GroupRebalanced {
                broker: me,
                group: key.to_string(),
                generation,
                members: members.clone(),
                leader: leader.as_ref().map(|l| l.to_string()),
            },
            format!(
                "Broker {me}: group {key} enters generation {generation} with {} member(s) ({}); the leader, {}, computes the assignment.{dropped_text}",
                members.len(),
                members.join(", "),
                leader.as_deref().unwrap_or("none"),
            ),
        );
        for (to, id, answer) in sends {
            ctx.send(
                to,
                Message::JoinGroupResponse {
                    id,
                    result: Ok(answer),
                },
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle_sync_group(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        group: &str,
        generation: i32,
        member_id: &Rc<str>,
        assignments: Vec<(Rc<str>, Vec<PartitionIndex>)>,
    ) {
        let me = self.id;
        let now = ctx.now;
        let (p, shard) = match self.classic_shard(ctx, group) {
            Ok(s) => s,
            Err(e) => {
                ctx.send(from, Message::SyncGroupResponse { id, result: Err(e) });
                return;
            }
        };
        let key: Rc<str> = Rc::from(group);
        let Some(g) = shard.classic.get_mut(&key) else {
            let result = Err(ErrorCode::UnknownMemberId);
            ctx.send(from, Message::SyncGroupResponse { id, result });
            return;
        };
        let Some(i) = g.member(member_id) else {
            let result = Err(ErrorCode::UnknownMemberId);
            ctx.send(from, Message::SyncGroupResponse { id, result });
            return;
        };
        if generation != g.generation {
            let result = Err(ErrorCode::IllegalGeneration);
            ctx.send(from, Message::SyncGroupResponse { id, result });
            return;
        }
        match g.state {
            GroupState::Empty => {
                let result = Err(ErrorCode::UnknownMemberId);
                ctx.send(from, Message::SyncGroupResponse { id, result });
            }
            GroupState::PreparingRebalance => {
                let result = Err(ErrorCode::RebalanceInProgress);
                ctx.send(from, Message::SyncGroupResponse { id, result });
            }
            GroupState::Stable => {
                g.members[i].expires_at = now + g.members[i].session_timeout_ms;
                let result = Ok(g.members[i].assignment.clone());
                ctx.send(from, Message::SyncGroupResponse { id, result });
            }
            GroupState::CompletingRebalance => {
                g.members[i].awaiting_sync = Some(id);
                g.members[i].client = from;
                if g.leader.as_ref() != Some(member_id) {
                    return;
                }
                for m in g.members.iter_mut() {
                    m.assignment = assignments
                        .iter()
                        .find(|(id, _)| *id == m.member_id)
                        .map(|(_, a)| a.clone())
                        .unwrap_or_default();
                }
                g.state = GroupState::Stable;
                let mut sends = Vec::new();
                for m in g.members.iter_mut() {
                    m.expires_at = now + m.session_timeout_ms;
                    if let Some(id) = m.awaiting_sync.take() {
                        sends.push((m.client, id, m.assignment.clone()));
                    }
                }
                let shown: Vec<String> = g
                    .members
                    .iter()
                    .map(|m| {
                        let ps: Vec<String> = m
                            .assignment
                            .iter()
                            .map(|p| ctx.partitions[*p].partition.to_string())
                            .collect();
                        format!("{} ← [{}]", m.member_id, ps.join(", "))
                    })
                    .collect();
                let generation = g.generation;
                let snapshot = g.snapshot();
                ctx.trace(
                    TraceKind::GroupStable {
                        broker: me,
                        group: group.to_string(),
                        generation,
                    },
                    format!(
                        "Broker {me}: group {group} is Stable in generation {generation} with the leader's assignment: {}.",
                        shown.join("; ")
                    ),
                );
                for (to, id, a) in sends {
                    ctx.send(to, Message::SyncGroupResponse { id, result: Ok(a) });
                }
                self.write_group_record(ctx, p, &key, snapshot);
            }
        }
    }

    pub(super) fn handle_group_heartbeat(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        group: &str,
        generation: i32,
        member_id: &Rc<str>,
    ) {
        let now = ctx.now;
        let result = match self.classic_shard(ctx, group) {
            Err(e) => Err(e),
            Ok((_, shard)) => match shard.classic.get_mut(&Rc::from(group)) {
                None => Err(ErrorCode::UnknownMemberId),
                Some(g) => g.heartbeat(member_id, generation, now),
            },
        };
        ctx.send(from, Message::GroupHeartbeatResponse { id, result });
    }

    /// OffsetMetadataManager.validateOffsetCommit and
    /// ClassicGroup.validateOffsetCommit: a commit without a generation
    /// (a consumer that assigns its own partitions) is accepted while the
    /// group is Empty; one from a member must name a member the group has
    /// and the group's generation, and is refused while the group waits
    /// for its assignment. A member's commit to a group the coordinator
    /// does not have is ILLEGAL_GENERATION.
    pub(super) fn validate_classic_commit(
        &self,
        p: PartitionIndex,
        group: &str,
        member: &Option<(i32, Rc<str>)>,
    ) -> Result<(), ErrorCode> {
        let g = self
            .coordinator
            .get(&p)
            .and_then(|s| s.classic.get(&Rc::from(group)));
        validate_commit(g, member)
    }

    /// The group record goes into the offsets partition's log, where a new
    /// coordinator finds it (written like a commit, with acks=1).
    fn write_group_record(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        key: &Rc<str>,
        snapshot: GroupSnapshot,
    ) {
        let rid = ctx.new_id();
        ctx.commit_values
            .insert(rid, OffsetsRecord::Group(key.clone(), Rc::new(snapshot)));
        let _ = self.append_as_leader(ctx, p, Acks::Leader, &[Record::plain(rid, 0)]);
    }

    /// A new coordinator of `p` takes over the classic groups whose last
    /// group records it read: each Stable (or Empty) as recorded, each
    /// member's session starting now. Returns what it took over, for the
    /// narration.
    pub(super) fn load_classic_groups(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        records: &VecMap<Rc<str>, Rc<GroupSnapshot>>,
    ) -> Vec<String> {
        let now = ctx.now;
        let Some(shard) = self.coordinator.get_mut(&p) else {
            return Vec::new();
        };
        for (g, snapshot) in records.iter() {
            shard
                .classic
                .insert(g.clone(), ClassicGroup::restore(snapshot, now));
            if !shard.groups.contains_key(g) {
                shard.groups.insert(g.clone(), VecMap::new());
            }
        }
        let memberships: Vec<String> = shard
            .classic
            .iter()
            .filter(|(_, g)| !g.members.is_empty())
            .map(|(k, g)| {
                format!(
                    "group {k}'s generation {} with {} member(s)",
                    g.generation,
                    g.members.len()
                )
            })
            .collect();
        self.schedule_group_tick(ctx, p);
        memberships
    }

    /// Schedule the shard's next group check at its earliest deadline.
    pub(super) fn schedule_group_tick(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        let consumer = self.consumer_group_deadline(p);
        let Some(shard) = self.coordinator.get_mut(&p) else {
            return;
        };
        let classic = shard
            .classic
            .values()
            .filter_map(|g| g.next_deadline())
            .min();
        let next = match (classic, consumer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(at) = next {
            if shard.tick_at.is_none_or(|t| t <= ctx.now || at < t) {
                shard.tick_at = Some(at);
                let epoch = shard.leader_epoch;
                ctx.after(
                    at.saturating_sub(ctx.now).max(1),
                    Timer::GroupTick {
                        partition: p,
                        leader_epoch: epoch,
                    },
                );
            }
        }
    }

    /// The shard's group check: sessions that ended, join phases that are
    /// due.
    pub(super) fn group_tick(&mut self, ctx: &mut Ctx, p: PartitionIndex, leader_epoch: u32) {
        let me = self.id;
        let now = ctx.now;
        let Some(shard) = self.coordinator.get_mut(&p) else {
            return;
        };
        if shard.leader_epoch != leader_epoch || !shard.loaded {
            return;
        }
        if shard.tick_at.is_some_and(|t| t <= now) {
            shard.tick_at = None;
        }
        let keys: Vec<Rc<str>> = shard.classic.iter().map(|(k, _)| k.clone()).collect();
        for key in keys {
            let Some(g) = self
                .coordinator
                .get_mut(&p)
                .and_then(|s| s.classic.get_mut(&key))
            else {
                continue;
            };
            // Sessions that ended.
            let expired: Vec<(Rc<str>, u64)> = g
                .members
                .iter()
                .filter(|m| {
                    m.awaiting_join.is_none() && m.awaiting_sync.is_none() && m.expires_at <= now
                })
                .map(|m| (m.member_id.clone(), m.session_timeout_ms))
                .collect();
            for (member, session) in &expired {
                g.members.retain(|m| &m.member_id != member);
                let text = format!(
                    "Broker {me}: member {member} of group {key} sent no heartbeat for session.timeout.ms={session} ms; it is removed from the group."
                );
                ctx.trace(
                    TraceKind::GroupMemberExpired {
                        broker: me,
                        group: key.to_string(),
                        member: member.to_string(),
                    },
                    text,
                );
            }
            if !expired.is_empty() {
                match g.state {
                    GroupState::Stable | GroupState::CompletingRebalance => {
                        let reason =
                            format!("member {} left after its session timed out", expired[0].0);
                        prepare_rebalance(ctx, me, &key, g, reason);
                    }
                    _ => {}
                }
            }
            let due = g.state == GroupState::PreparingRebalance && g.join_deadline <= now;
            if due {
                match g.initial_delay {
                    Some((remaining, true)) if remaining > 0 => {
                        // InitialDelayedJoin: someone joined during the
                        // delay; wait once more, within the rebalance timeout.
                        let delay = ctx.config.group_initial_rebalance_delay_ms.min(remaining);
                        g.initial_delay = Some((remaining - delay, false));
                        g.join_deadline = now + delay.max(1);
                    }
                    Some(_) => {
                        g.initial_delay = None;
                        if g.all_joined() {
                            self.complete_join(ctx, p, &key);
                        } else {
                            let timeout = g.rebalance_timeout();
                            g.join_deadline = now + timeout;
                        }
                    }
                    None => self.complete_join(ctx, p, &key),
                }
            } else if !expired.is_empty() {
                self.try_complete_join(ctx, p, &key);
            }
        }
        self.consumer_group_tick(ctx, p);
        self.schedule_group_tick(ctx, p);
    }

    /// The coordinator stopped leading `p`: a member waiting for a join or
    /// sync answer is told NOT_COORDINATOR.
    pub(super) fn classic_groups_unloaded(
        &mut self,
        ctx: &mut Ctx,
        shard: &super::coordinator::Shard,
    ) {
        for g in shard.classic.values() {
            for m in &g.members {
                if let Some(id) = m.awaiting_join {
                    let result = Err((ErrorCode::NotCoordinator, None));
                    ctx.send(m.client, Message::JoinGroupResponse { id, result });
                }
                if let Some(id) = m.awaiting_sync {
                    let result = Err(ErrorCode::NotCoordinator);
                    ctx.send(m.client, Message::SyncGroupResponse { id, result });
                }
            }
        }
    }
}

impl ClassicGroup {
    /// A member's heartbeat (validateClassicGroupHeartbeat, then the
    /// group's state): its session starts again unless it is unknown or of
    /// another generation.
    pub fn heartbeat(
        &mut self,
        member_id: &str,
        generation: i32,
        now: u64,
    ) -> Result<(), ErrorCode> {
        let i = self.member(member_id).ok_or(ErrorCode::UnknownMemberId)?;
        if self.generation != generation {
            return Err(ErrorCode::IllegalGeneration);
        }
        if self.state == GroupState::Empty {
            return Err(ErrorCode::UnknownMemberId);
        }
        self.members[i].expires_at = now + self.members[i].session_timeout_ms;
        match self.state {
            GroupState::PreparingRebalance => Err(ErrorCode::RebalanceInProgress),
            _ => Ok(()),
        }
    }
}

/// OffsetMetadataManager.validateOffsetCommit with ClassicGroup
/// .validateOffsetCommit, for group `g` (None: the coordinator has no such
/// group).
pub fn validate_commit(
    g: Option<&ClassicGroup>,
    member: &Option<(i32, Rc<str>)>,
) -> Result<(), ErrorCode> {
    let generation = member.as_ref().map_or(-1, |m| m.0);
    let Some(g) = g else {
        return if generation < 0 {
            Ok(())
        } else {
            Err(ErrorCode::IllegalGeneration)
        };
    };
    if generation < 0 && g.state == GroupState::Empty {
        return Ok(());
    }
    match member {
        Some((generation, id)) if *generation >= 0 || !id.is_empty() => {
            if g.member(id).is_none() {
                return Err(ErrorCode::UnknownMemberId);
            }
            if *generation != g.generation {
                return Err(ErrorCode::IllegalGeneration);
            }
        }
        _ if g.state != GroupState::Empty => return Err(ErrorCode::UnknownMemberId),
        _ => {}
    }
    if g.state == GroupState::CompletingRebalance {
        return Err(ErrorCode::RebalanceInProgress);
    }
    Ok(())
}

/// prepareRebalance: a Stable or CompletingRebalance group (whose waiting
/// SyncGroups are told REBALANCE_IN_PROGRESS), or an Empty one, starts
/// gathering members again.
fn prepare_rebalance(
    ctx: &mut Ctx,
    me: BrokerId,
    group: &str,
    g: &mut ClassicGroup,
    reason: String,
) {
    if g.state == GroupState::CompletingRebalance {
        for m in g.members.iter_mut() {
            if let Some(id) = m.awaiting_sync.take() {
                let result = Err(ErrorCode::RebalanceInProgress);
                ctx.send(m.client, Message::SyncGroupResponse { id, result });
            }
        }
    }
    let timeout = g.rebalance_timeout();
    if g.state == GroupState::Empty {
        let delay = ctx.config.group_initial_rebalance_delay_ms.min(timeout);
        g.initial_delay = Some((timeout - delay, false));
        g.join_deadline = ctx.now + delay;
    } else {
        g.initial_delay = None;
        g.join_deadline = ctx.now + timeout;
    }
    let from = g.state.name();
    g.state = GroupState::PreparingRebalance;
    let wait = if g.initial_delay.is_some() {
        format!(
            "it waits group.initial.rebalance.delay.ms={} ms for more members",
            ctx.config.group_initial_rebalance_delay_ms
        )
    } else {
        format!("members have up to {timeout} ms (the rebalance timeout) to join again")
    };
    ctx.trace(
        TraceKind::GroupRebalanceStarted {
            broker: me,
            group: group.to_string(),
            reason: reason.clone(),
        },
        format!("Broker {me}: group {group} rebalances ({from} → PreparingRebalance): {reason}; {wait}."),
    );
    g.reason = reason;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stable_group(generation: i32, members: &[&str]) -> ClassicGroup {
        let snapshot = GroupSnapshot {
            generation,
            protocol: Some("range"),
            leader: members.first().map(|m| Rc::from(*m)),
            next_member: 9,
            members: members
                .iter()
                .map(|m| SnapshotMember {
                    member_id: Rc::from(*m),
                    instance_id: None,
                    client: Node::Consumer(0),
                    session_timeout_ms: 45_000,
                    rebalance_timeout_ms: 300_000,
                    protocol: "range",
                    assignment: vec![0],
                })
                .collect(),
        };
        ClassicGroup::restore(&snapshot, 1_000)
    }

    fn member(generation: i32, id: &str) -> Option<(i32, Rc<str>)> {
        Some((generation, Rc::from(id)))
    }

    /// ClassicGroup.validateOffsetCommit: a member's commit must carry the
    /// group's generation (ILLEGAL_GENERATION), come from a member the group
    /// has (UNKNOWN_MEMBER_ID), and not arrive while the group waits for its
    /// assignment (REBALANCE_IN_PROGRESS); PreparingRebalance still takes it
    /// (the commit before rejoining).
    #[test]
    fn a_members_commit_is_fenced_by_generation_member_id_and_completing_rebalance() {
        let mut g = stable_group(4, &["a-1", "b-2"]);
        assert_eq!(validate_commit(Some(&g), &member(4, "a-1")), Ok(()));
        assert_eq!(
            validate_commit(Some(&g), &member(3, "a-1")),
            Err(ErrorCode::IllegalGeneration)
        );
        assert_eq!(
            validate_commit(Some(&g), &member(4, "c-3")),
            Err(ErrorCode::UnknownMemberId)
        );
        g.state = GroupState::PreparingRebalance;
        assert_eq!(validate_commit(Some(&g), &member(4, "b-2")), Ok(()));
        g.state = GroupState::CompletingRebalance;
        assert_eq!(
            validate_commit(Some(&g), &member(4, "b-2")),
            Err(ErrorCode::RebalanceInProgress)
        );
    }

    /// OffsetMetadataManager.validateOffsetCommit: a commit without a
    /// generation (assign()) is accepted by an Empty or absent group and
    /// refused (UNKNOWN_MEMBER_ID) by one with members; a member's commit to
    /// a group the coordinator does not have is ILLEGAL_GENERATION.
    #[test]
    fn a_commit_without_a_generation_is_accepted_only_while_the_group_is_empty() {
        assert_eq!(validate_commit(None, &None), Ok(()));
        assert_eq!(
            validate_commit(None, &member(1, "a-1")),
            Err(ErrorCode::IllegalGeneration)
        );
        let g = stable_group(2, &["a-1"]);
        assert_eq!(
            validate_commit(Some(&g), &None),
            Err(ErrorCode::UnknownMemberId)
        );
        let empty = stable_group(3, &[]);
        assert_eq!(empty.state, GroupState::Empty);
        assert_eq!(validate_commit(Some(&empty), &None), Ok(()));
    }

    /// GroupMetadataManager.classicGroupHeartbeatToClassicGroup: an unknown
    /// member gets UNKNOWN_MEMBER_ID, another generation ILLEGAL_GENERATION;
    /// while the group gathers members REBALANCE_IN_PROGRESS, which still
    /// restarts the member's session; in CompletingRebalance and Stable the
    /// heartbeat is answered and the session restarts.
    #[test]
    fn a_heartbeat_restarts_the_session_and_tells_a_member_to_rejoin_while_rebalancing() {
        let mut g = stable_group(2, &["a-1"]);
        assert_eq!(
            g.members[0].expires_at, 46_000,
            "the session starts at the load"
        );
        assert_eq!(
            g.heartbeat("z-9", 2, 5_000),
            Err(ErrorCode::UnknownMemberId)
        );
        assert_eq!(
            g.heartbeat("a-1", 1, 5_000),
            Err(ErrorCode::IllegalGeneration)
        );
        assert_eq!(
            g.members[0].expires_at, 46_000,
            "a refused heartbeat restarts nothing"
        );
        assert_eq!(g.heartbeat("a-1", 2, 5_000), Ok(()));
        assert_eq!(g.members[0].expires_at, 50_000);
        g.state = GroupState::PreparingRebalance;
        assert_eq!(
            g.heartbeat("a-1", 2, 7_000),
            Err(ErrorCode::RebalanceInProgress)
        );
        assert_eq!(g.members[0].expires_at, 52_000);
        g.state = GroupState::CompletingRebalance;
        assert_eq!(g.heartbeat("a-1", 2, 8_000), Ok(()));
    }
}
