//! The consumer group protocol of KIP-848 (`group.protocol=consumer`) at the
//! coordinator: Kafka's ConsumerGroup, the target assignment its server-side
//! assignor computes, and each member's reconciliation towards it
//! (GroupMetadataManager.consumerGroupHeartbeat, CurrentAssignmentBuilder).
//!
//! - One request, ConsumerGroupHeartbeat, every
//!   `group.consumer.heartbeat.interval.ms` (5 s, the coordinator tells the
//!   member). Member epoch 0 joins (the client chose its member id).
//! - Any change of membership bumps the group epoch, and the coordinator's
//!   assignor (`uniform` by default, or `range`) computes a new target
//!   assignment for that epoch.
//! - Reconciliation: a member first gives up what the target moves
//!   elsewhere (its answer leaves those partitions out; its epoch stays);
//!   once its heartbeat no longer reports them, its epoch becomes the target
//!   epoch, and it is given the target's partitions that no other member
//!   still holds. Nobody else stops: a rebalance is incremental.
//! - A member not heard from for `group.consumer.session.timeout.ms` (45 s)
//!   is removed (its partitions are free at once); a heartbeat with an epoch
//!   the member does not have is FENCED_MEMBER_EPOCH, an unknown member
//!   UNKNOWN_MEMBER_ID. A commit names the member and its epoch:
//!   STALE_MEMBER_EPOCH when the epoch is not the member's.
//! - The group (members, epochs, assignments) is a record of the group's
//!   `__consumer_offsets` partition after every change; a new coordinator
//!   loads it, each session starting afresh: no rebalance on a move.
//!
//! - A static member (`group.instance.id`) joining while its instance's
//!   old member has not left (epoch -2, a clean close) is refused with
//!   UNRELEASED_INSTANCE_ID: a killed process's instance id is held until
//!   its session ends.
//!
//! Simplified: the heartbeat answer always carries the member's assignment;
//! a member that does not revoke within its rebalance timeout is not fenced;
//! no member leaves with epoch -2 (the lab has no clean close), so no static
//! member takes another's place under this protocol.

use std::rc::Rc;

use super::Broker;
use crate::sim::config::Acks;
use crate::sim::io::{Ctx, OffsetsRecord};
use crate::sim::log::Record;
use crate::sim::pmap::VecMap;
use crate::sim::protocol::*;
use crate::sim::trace::TraceKind;

/// `group.consumer.heartbeat.interval.ms` (5000).
pub const HEARTBEAT_INTERVAL_MS: u64 = 5_000;

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct CgMember {
    pub member_id: Rc<str>,
    pub client: Node,
    pub session_timeout_ms: u64,
    /// The member epoch: the target epoch it has reconciled to.
    pub epoch: i32,
    /// What the member reported owning in its last heartbeat.
    pub owned: Vec<PartitionIndex>,
    /// What the coordinator last told it to own.
    pub assigned: Vec<PartitionIndex>,
    /// Its share of the target assignment.
    pub target: Vec<PartitionIndex>,
    pub expires_at: u64,
    /// `group.instance.id`: a static member.
    pub instance_id: Option<Rc<str>>,
}

impl CgMember {
    /// Partitions it holds or may still hold: told to own, or reported
    /// owned and not yet given up.
    fn holds(&self, p: PartitionIndex) -> bool {
        self.assigned.contains(&p) || self.owned.contains(&p)
    }
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ConsumerGroup {
    /// The group epoch: grows with every change of membership.
    pub epoch: i32,
    /// The epoch of the current target assignment.
    pub target_epoch: i32,
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub assignor: &'static str,
    pub members: Vec<CgMember>,
    /// The subscribed topic's partitions (from the members' metadata).
    pub partitions: Vec<PartitionIndex>,
}

impl ConsumerGroup {
    fn new(assignor: &'static str) -> Self {
        ConsumerGroup {
            epoch: 0,
            target_epoch: 0,
            assignor,
            members: Vec::new(),
            partitions: Vec::new(),
        }
    }

    pub fn member(&self, id: &str) -> Option<usize> {
        self.members.iter().position(|m| &*m.member_id == id)
    }

    /// `Stable` when every member has reconciled to the target, else
    /// `Reconciling` (`Empty` without members).
    pub fn state(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self
            .members
            .iter()
            .all(|m| m.epoch == self.target_epoch && m.assigned == m.target)
        {
            "Stable"
        } else {
            "Reconciling"
        }
    }

    /// A new group epoch and its target assignment, by the assignor over
    /// the topic's partitions, each member's current target kept where the
    /// assignor is sticky.
    fn new_target(&mut self) {
        let partitions = std::mem::take(&mut self.partitions);
        self.new_target_over(&partitions);
        self.partitions = partitions;
    }

    fn new_target_over(&mut self, partitions: &[PartitionIndex]) {
        self.epoch += 1;
        self.target_epoch = self.epoch;
        let members: Vec<crate::sim::assignor::Member> = self
            .members
            .iter()
            .map(|m| crate::sim::assignor::Member {
                member_id: m.member_id.to_string(),
                instance_id: None,
                owned: m
                    .target
                    .iter()
                    .filter_map(|p| partitions.iter().position(|x| x == p).map(|i| i as u32))
                    .collect(),
                generation: -1,
            })
            .collect();
        let n = partitions.len() as u32;
        let shares = if self.assignor == "range" {
            crate::sim::assignor::server_range(&members, n)
        } else {
            crate::sim::assignor::uniform(&members, n)
        };
        for (m, share) in self.members.iter_mut().zip(shares) {
            m.target = share
                .into_iter()
                .filter_map(|i| partitions.get(i as usize).copied())
                .collect();
            m.target.sort_unstable();
        }
    }

    /// CurrentAssignmentBuilder for member `i`: give up first what the
    /// target moves away; then take the target epoch and every target
    /// partition no other member still holds.
    fn reconcile(&mut self, i: usize) {
        let others_hold = |p: PartitionIndex, members: &[CgMember]| {
            members
                .iter()
                .enumerate()
                .any(|(j, m)| j != i && m.holds(p))
        };
        let m = &self.members[i];
        let revoking: Vec<PartitionIndex> = m
            .owned
            .iter()
            .copied()
            .filter(|p| !m.target.contains(p))
            .collect();
        if !revoking.is_empty() {
            let keep: Vec<PartitionIndex> = m
                .owned
                .iter()
                .copied()
                .filter(|p| m.target.contains(p))
                .collect();
            self.members[i].assigned = keep;
            return;
        }
        let free: Vec<PartitionIndex> = m
            .target
            .iter()
            .copied()
            .filter(|p| !others_hold(*p, &self.members))
            .collect();
        let target_epoch = self.target_epoch;
        let m = &mut self.members[i];
        m.epoch = target_epoch;
        m.assigned = free;
    }
}

impl Broker {
    /// ConsumerGroupHeartbeat.
    pub(super) fn handle_consumer_heartbeat(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        hb: ConsumerHeartbeatRequest,
    ) {
        let me = self.id;
        let now = ctx.now;
        let (p, shard) = match self.classic_shard(ctx, &hb.group) {
            Ok(s) => s,
            Err(e) => {
                let result = Err(e);
                ctx.send(from, Message::ConsumerHeartbeatResponse { id, result });
                return;
            }
        };
        let key: Rc<str> = Rc::from(hb.group.as_str());
        let g = shard
            .consumer_groups
            .or_insert_with(key.clone(), || ConsumerGroup::new(hb.assignor));
        if !hb.partitions.is_empty() {
            g.partitions = hb.partitions.clone();
        }
        if hb.epoch == -1 {
            // The member leaves (max.poll.interval.ms, or a close): removed
            // at once, a new epoch and target for the others.
            if let Some(i) = g.member(&hb.member_id) {
                g.members.remove(i);
                g.new_target();
                narrate_target(
                    ctx,
                    me,
                    &hb.group,
                    g,
                    &format!("{} left the group", hb.member_id),
                );
                let snapshot = g.clone();
                self.write_consumer_group_record(ctx, p, &key, snapshot);
            }
            return;
        }
        let mut changed = None;
        let i = match g.member(&hb.member_id) {
            None if hb.epoch != 0 => {
                let result = Err(ErrorCode::UnknownMemberId);
                ctx.send(from, Message::ConsumerHeartbeatResponse { id, result });
                return;
            }
            None if hb
                .instance_id
                .as_ref()
                .is_some_and(|x| g.members.iter().any(|m| m.instance_id.as_ref() == Some(x))) =>
            {
                // GroupMetadataManager.throwIfInstanceIdIsUnreleased: a
                // static member replaces its instance's old member only
                // once that one left with epoch -2 (a clean close); one
                // whose process was killed holds the instance id until
                // its session ends.
                let result = Err(ErrorCode::UnreleasedInstanceId);
                ctx.send(from, Message::ConsumerHeartbeatResponse { id, result });
                return;
            }
            None => {
                g.members.push(CgMember {
                    member_id: hb.member_id.clone(),
                    client: from,
                    session_timeout_ms: ctx.config.group_consumer_session_timeout_ms,
                    epoch: 0,
                    owned: Vec::new(),
                    assigned: Vec::new(),
                    target: Vec::new(),
                    expires_at: now,
                    instance_id: hb.instance_id.clone(),
                });
                changed = Some(format!("{} joined", hb.member_id));
                g.members.len() - 1
            }
            Some(i) if hb.epoch == 0 => {
                // A member that lost its epoch joins again: it owns nothing.
                let m = &mut g.members[i];
                m.owned.clear();
                m.assigned.clear();
                m.epoch = 0;
                m.client = from;
                changed = Some(format!("{} joined again", hb.member_id));
                i
            }
            Some(i) if g.members[i].epoch != hb.epoch => {
                let result = Err(ErrorCode::FencedMemberEpoch);
                ctx.send(from, Message::ConsumerHeartbeatResponse { id, result });
                return;
            }
            Some(i) => i,
        };
        let m = &mut g.members[i];
        m.expires_at = now + m.session_timeout_ms;
        m.client = from;
        if let Some(owned) = hb.owned {
            m.owned = owned;
        }
        if let Some(reason) = changed {
            g.new_target();
            narrate_target(ctx, me, &hb.group, g, &reason);
        }
        let before = (g.members[i].epoch, g.members[i].assigned.clone());
        g.reconcile(i);
        let m = &g.members[i];
        let answer = ConsumerHeartbeatAnswer {
            member_epoch: m.epoch,
            heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS,
            assignment: m.assigned.clone(),
        };
        let moved = before != (m.epoch, m.assigned.clone());
        let snapshot = moved.then(|| g.clone());
        ctx.send(
            from,
            Message::ConsumerHeartbeatResponse {
                id,
                result: Ok(answer),
            },
        );
        if let Some(snapshot) = snapshot {
            self.write_consumer_group_record(ctx, p, &key, snapshot);
        }
        self.schedule_group_tick(ctx, p);
    }

    /// Sessions that ended: the member is removed, its partitions free, and
    /// the group gets a new epoch and target.
    pub(super) fn consumer_group_tick(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        let me = self.id;
        let now = ctx.now;
        let Some(shard) = self.coordinator.get_mut(&p) else {
            return;
        };
        let keys: Vec<Rc<str>> = shard
            .consumer_groups
            .iter()
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            let Some(g) = self
                .coordinator
                .get_mut(&p)
                .and_then(|s| s.consumer_groups.get_mut(&key))
            else {
                continue;
            };
            let expired: Vec<Rc<str>> = g
                .members
                .iter()
                .filter(|m| m.expires_at <= now)
                .map(|m| m.member_id.clone())
                .collect();
            if expired.is_empty() {
                continue;
            }
            // All of the topic's partitions, from the members' targets.
            let mut partitions: Vec<PartitionIndex> = g
                .members
                .iter()
                .flat_map(|m| m.target.iter().copied())
                .collect();
            partitions.sort_unstable();
            partitions.dedup();
            for member in &expired {
                g.members.retain(|m| &m.member_id != member);
                ctx.trace(
                    TraceKind::GroupMemberExpired {
                        broker: me,
                        group: key.to_string(),
                        member: member.to_string(),
                    },
                    format!(
                        "Broker {me}: member {member} of group {key} sent no heartbeat for group.consumer.session.timeout.ms={} ms; it is removed from the group and its partitions are free at once.",
                        ctx.config.group_consumer_session_timeout_ms
                    ),
                );
            }
            g.new_target();
            let reason = format!("{} left after its session timed out", expired[0]);
            narrate_target(ctx, me, &key, g, &reason);
            let snapshot = g.clone();
            self.write_consumer_group_record(ctx, p, &key, snapshot);
        }
    }

    /// The earliest session end among the shard's consumer groups.
    pub(super) fn consumer_group_deadline(&self, p: PartitionIndex) -> Option<u64> {
        self.coordinator.get(&p).and_then(|s| {
            s.consumer_groups
                .values()
                .flat_map(|g| g.members.iter().map(|m| m.expires_at))
                .min()
        })
    }

    fn write_consumer_group_record(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        key: &Rc<str>,
        g: ConsumerGroup,
    ) {
        let rid = ctx.new_id();
        ctx.commit_values
            .insert(rid, OffsetsRecord::ConsumerGroup(key.clone(), Rc::new(g)));
        let _ = self.append_as_leader(ctx, p, Acks::Leader, &[Record::plain(rid, 0)]);
    }

    /// A new coordinator takes over the consumer groups it read: members,
    /// epochs and assignments as recorded, each session starting now.
    pub(super) fn load_consumer_groups(
        &mut self,
        ctx: &Ctx,
        p: PartitionIndex,
        records: &VecMap<Rc<str>, Rc<ConsumerGroup>>,
    ) -> Vec<String> {
        let now = ctx.now;
        let Some(shard) = self.coordinator.get_mut(&p) else {
            return Vec::new();
        };
        let mut told = Vec::new();
        for (key, g) in records.iter() {
            let mut g = (**g).clone();
            for m in g.members.iter_mut() {
                m.expires_at = now + m.session_timeout_ms;
            }
            if !g.members.is_empty() {
                told.push(format!(
                    "group {key}'s epoch {} with {} member(s)",
                    g.epoch,
                    g.members.len()
                ));
            }
            shard.consumer_groups.insert(key.clone(), g);
            if !shard.groups.contains_key(key) {
                shard.groups.insert(key.clone(), VecMap::new());
            }
        }
        told
    }
}

/// ConsumerGroup.validateOffsetCommit: a commit names a member of the
/// group and its current epoch (STALE_MEMBER_EPOCH otherwise).
pub fn validate_commit(
    g: &ConsumerGroup,
    member: &Option<(i32, Rc<str>)>,
) -> Result<(), ErrorCode> {
    match member {
        None if g.members.is_empty() => Ok(()),
        None => Err(ErrorCode::UnknownMemberId),
        Some((epoch, id)) => {
            let i = g.member(id).ok_or(ErrorCode::UnknownMemberId)?;
            if g.members[i].epoch != *epoch {
                Err(ErrorCode::StaleMemberEpoch)
            } else {
                Ok(())
            }
        }
    }
}

fn narrate_target(ctx: &mut Ctx, me: BrokerId, group: &str, g: &ConsumerGroup, reason: &str) {
    let shown: Vec<String> = g
        .members
        .iter()
        .map(|m| {
            let ps: Vec<String> = m
                .target
                .iter()
                .map(|p| ctx.partitions[*p].partition.to_string())
                .collect();
            format!("{} ← [{}]", m.member_id, ps.join(", "))
        })
        .collect();
    ctx.trace(
        TraceKind::GroupTargetAssigned {
            broker: me,
            group: group.to_string(),
            epoch: g.epoch,
            reason: reason.to_string(),
        },
        format!(
            "Broker {me}: group {group} moves to group epoch {} ({reason}); the {} assignor's target: {}. Members give up what moves before others take it; nobody else stops reading.",
            g.epoch,
            g.assignor,
            if shown.is_empty() { "no members".to_string() } else { shown.join("; ") }
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(members: &[(&str, &[PartitionIndex])]) -> ConsumerGroup {
        let mut g = ConsumerGroup::new("uniform");
        for (id, owned) in members {
            g.members.push(CgMember {
                member_id: Rc::from(*id),
                client: Node::Consumer(0),
                session_timeout_ms: 45_000,
                epoch: 1,
                owned: owned.to_vec(),
                assigned: owned.to_vec(),
                target: owned.to_vec(),
                expires_at: 0,
                instance_id: None,
            });
        }
        g.epoch = 1;
        g.target_epoch = 1;
        g
    }

    /// CurrentAssignmentBuilder: a member whose target lost partitions is
    /// first told to keep only the rest (its epoch unchanged); a partition
    /// another member still holds is not given to its new owner until that
    /// member has released it.
    #[test]
    fn a_partition_moves_only_after_its_owner_revoked_it() {
        let mut g = group(&[("a", &[0, 1, 2]), ("b", &[3, 4, 5])]);
        g.members.push(CgMember {
            member_id: Rc::from("c"),
            client: Node::Consumer(2),
            session_timeout_ms: 45_000,
            epoch: 0,
            owned: vec![],
            assigned: vec![],
            target: vec![],
            expires_at: 0,
            instance_id: None,
        });
        g.partitions = vec![0, 1, 2, 3, 4, 5];
        g.new_target();
        assert_eq!(g.epoch, 2);
        let moved: Vec<PartitionIndex> = g.members[2].target.clone();
        assert_eq!(moved.len(), 2, "{:?}", g.members);
        // c reconciles first: what it is to take is still held.
        g.reconcile(2);
        assert_eq!(g.members[2].epoch, 2);
        assert!(g.members[2].assigned.is_empty(), "{:?}", g.members[2]);
        // a (or b) must give up its part of it; its epoch stays.
        for i in 0..2 {
            g.reconcile(i);
            let m = &g.members[i];
            if m.owned.iter().any(|p| moved.contains(p)) {
                assert_eq!(m.epoch, 1, "revoking first");
                assert!(m.assigned.iter().all(|p| !moved.contains(p)));
            }
        }
        // Once they report owning only what they keep, they reach epoch 2
        // and c gets its partitions.
        for i in 0..2 {
            let keep = g.members[i].assigned.clone();
            g.members[i].owned = keep;
            g.reconcile(i);
            assert_eq!(g.members[i].epoch, 2);
        }
        g.reconcile(2);
        assert_eq!(g.members[2].assigned, moved);
        assert_eq!(g.state(), "Stable");
    }

    /// ConsumerGroup.validateOffsetCommit: STALE_MEMBER_EPOCH for a commit
    /// with an epoch the member does not have, UNKNOWN_MEMBER_ID for a
    /// member the group does not have.
    #[test]
    fn a_commit_with_another_member_epoch_is_stale() {
        let g = group(&[("a", &[0])]);
        assert_eq!(validate_commit(&g, &Some((1, Rc::from("a")))), Ok(()));
        assert_eq!(
            validate_commit(&g, &Some((0, Rc::from("a")))),
            Err(ErrorCode::StaleMemberEpoch)
        );
        assert_eq!(
            validate_commit(&g, &Some((1, Rc::from("z")))),
            Err(ErrorCode::UnknownMemberId)
        );
    }
}
