//! The group coordinator: where a consumer group's committed offsets live,
//! and how they move when a broker dies.
//!
//! Committed offsets are records of an ordinary, replicated topic,
//! `__consumer_offsets` (`offsets.topic.num.partitions` = 50,
//! `offsets.topic.replication.factor` = 3). A group belongs to one of its
//! partitions, `abs(hash(group.id)) % partitions` with Java's
//! `String.hashCode` (GroupCoordinatorService.partitionFor), and the leader
//! of that partition is the group's coordinator. So the coordinator fails
//! over exactly as a partition does: when its broker dies, nothing answers
//! for the group until the controller elects a new leader of that offsets
//! partition, and the new leader must first read the partition's records
//! to rebuild the group's offsets (COORDINATOR_LOAD_IN_PROGRESS meanwhile).
//!
//! The requests, as this broker answers them:
//! - FindCoordinator (any broker): the leader of the group's offsets
//!   partition in this broker's metadata, or COORDINATOR_NOT_AVAILABLE while
//!   it has none (KafkaApis.getCoordinator).
//! - OffsetFetch (the coordinator): the group's committed offsets, once the
//!   offsets partition's high watermark covers what the coordinator had
//!   written when the request arrived (consumers ask with require_stable,
//!   which Kafka runs as a write operation without records), and
//!   NOT_COORDINATOR if that takes longer than offsets.commit.timeout.ms;
//!   NOT_COORDINATOR from a broker that does not lead the partition,
//!   COORDINATOR_LOAD_IN_PROGRESS while it is still loading.
//! - OffsetCommit (the coordinator): one record per partition appended to
//!   the offsets partition with requiredAcks=1 (CoordinatorPartitionWriter
//!   .append: no min.insync.replicas check); the commit succeeds, and the
//!   group's offsets change, only once the high watermark covers it
//!   (CoordinatorRuntime). One not covered within offsets.commit.timeout.ms
//!   (5 s; the HW does not move while the ISR is below min.insync.replicas)
//!   answers COORDINATOR_NOT_AVAILABLE, yet its records stay in the log and
//!   take effect if the HW passes them later; one this broker can no longer
//!   lead answers NOT_COORDINATOR (the coordinator's error mapping).
//!
//! Simplified (README): one static member per consumer process, no
//! JoinGroup/SyncGroup rebalance; the load is a fixed cost plus a cost per
//! record (`sim.coordinator.load.ms`, `sim.coordinator.load.us.per.record`),
//! then reads the whole log of the partition.

use std::rc::Rc;

use super::{Broker, ParkedAnswer, ParkedProduce};
use crate::sim::config::{Acks, ClusterConfig};
use crate::sim::io::{Ctx, OffsetsRecord, Timer};
use crate::sim::log::Record;
use crate::sim::pmap::VecMap;
use crate::sim::protocol::*;
use crate::sim::trace::TraceKind;

/// What a broker leading one partition of `__consumer_offsets` knows.
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Shard {
    pub leader_epoch: u32,
    pub loaded: bool,
    /// Committed offsets per group, per partition.
    pub groups: VecMap<Rc<str>, VecMap<PartitionIndex, CommittedOffset>>,
    /// Commits whose answer timed out (offsets.commit.timeout.ms) while
    /// their records stayed in the log: they take effect once the high
    /// watermark passes them, as Kafka's CoordinatorRuntime keeps a timed-out
    /// write's records (only the client was told it failed).
    pub late: Vec<PendingCommit>,
    /// Classic groups (membership, generation, assignment) by group id.
    #[cfg(group_protocols)]
    pub classic: VecMap<Rc<str>, super::classic_group::ClassicGroup>,
    /// KIP-848 consumer groups by group id.
    #[cfg(group_protocols)]
    pub consumer_groups: VecMap<Rc<str>, super::consumer_group::ConsumerGroup>,
    /// When the next group check is scheduled.
    #[cfg(group_protocols)]
    pub tick_at: Option<u64>,
}

/// Java's `String.hashCode` (s[0]·31^(n−1) + … + s[n−1], wrapping in 32 bits)
/// over UTF-16 code units.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The partition of `__consumer_offsets` that holds `group`'s offsets:
/// `Utils.abs(groupId.hashCode()) % partitions`
/// (GroupCoordinatorService.partitionFor). Kafka's `Utils.abs` is the
/// absolute value with `Integer.MIN_VALUE` mapped to 0. It is not the
/// partitioner's `Utils.toPositive`, which masks the sign bit: the two differ
/// for every negative hash ("orders": 31 with abs, 17 with the mask).
pub fn offsets_partition_for(group: &str, partitions: u32) -> u32 {
    java_abs(java_string_hash(group)) % partitions.max(1)
}

/// Kafka's `Utils.abs`: `Math.abs`, except that `Integer.MIN_VALUE` (whose
/// absolute value does not fit) gives 0.
fn java_abs(n: i32) -> u32 {
    if n == i32::MIN {
        0
    } else {
        n.unsigned_abs()
    }
}

/// The global index of `group`'s offsets partition, if the scenario has one.
pub fn offsets_partition_index(ctx: &Ctx, group: &str) -> Option<PartitionIndex> {
    offsets_partition_in(ctx.config, group)
}

/// [`offsets_partition_index`] from the cluster's config (the report's
/// stored offsets read it outside a step).
pub fn offsets_partition_in(config: &ClusterConfig, group: &str) -> Option<PartitionIndex> {
    let (first, n) = config.offsets_partitions?;
    Some(first + offsets_partition_for(group, n) as usize)
}

/// A commit waiting for the offsets partition's high watermark.
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct PendingCommit {
    pub group: Rc<str>,
    pub partition: PartitionIndex,
    pub offsets: Vec<CommittedOffset>,
    /// The offsets partition's log end right after its records.
    pub end: u64,
}

impl Broker {
    pub(super) fn handle_find_coordinator(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        group: &str,
    ) {
        let result = match offsets_partition_index(ctx, group) {
            Some(p) => match self.meta_leaders.get(p) {
                Some((Some(leader), _)) => Ok(*leader),
                _ => Err(ErrorCode::CoordinatorNotAvailable),
            },
            None => Err(ErrorCode::CoordinatorNotAvailable),
        };
        ctx.send(from, Message::FindCoordinatorResponse { id, result });
    }

    /// This broker's shard for `group`, or the error a client gets instead.
    fn shard_for(&self, ctx: &Ctx, group: &str) -> Result<(PartitionIndex, &Shard), ErrorCode> {
        let p = offsets_partition_index(ctx, group).ok_or(ErrorCode::NotCoordinator)?;
        let shard = self.coordinator.get(&p).ok_or(ErrorCode::NotCoordinator)?;
        let leads = self.replicas.get(&p).is_some_and(|r| r.is_leader());
        if !leads {
            return Err(ErrorCode::NotCoordinator);
        }
        if !shard.loaded {
            return Err(ErrorCode::CoordinatorLoadInProgress);
        }
        Ok((p, shard))
    }

    /// OffsetFetch, as Kafka's consumers send it: with require_stable
    /// (ConsumerCoordinator and the KIP-848 consumer both set it).
    /// GroupCoordinatorService.fetchOffsets then runs the fetch as a write
    /// operation with no records: it is answered once the offsets
    /// partition's high watermark covers everything the coordinator had
    /// written when it arrived, so a commit still waiting for its followers
    /// is what a restarted consumer resumes from, once it is durable. Not
    /// covered within offsets.commit.timeout.ms, or the partition lost
    /// meanwhile, it fails with NOT_COORDINATOR (handleOffsetFetchException
    /// remaps the timeout, which consumers before 3.9 would not retry).
    pub(super) fn handle_offset_fetch(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        group: &str,
        partitions: &[PartitionIndex],
    ) {
        let p = match self.shard_for(ctx, group) {
            Ok((p, _)) => p,
            Err(e) => {
                ctx.send(from, Message::OffsetFetchResponse { id, result: Err(e) });
                return;
            }
        };
        let (hw, written) = self
            .replicas
            .get(&p)
            .map_or((0, 0), |r| (r.log.high_watermark, r.log.log_end_offset()));
        if hw >= written {
            self.finish_stable_offset_fetch(ctx, from, id, group, partitions, None);
            return;
        }
        let answer = ParkedAnswer::StableOffsetFetch {
            group: Rc::from(group),
            partitions: partitions.to_vec(),
        };
        self.park_until_committed(ctx, (from, id), p, (written, written), answer);
    }

    /// Hold the answer to `from`'s request `id` in the produce purgatory
    /// until partition `p`'s high watermark reaches `required` (`base`: the
    /// first offset the coordinator wrote for it), as an acks=all produce
    /// waits: the coordinator's own appends wait for the ISR. The consumer
    /// gives up after its request.timeout.ms; the coordinator's own limit
    /// (offsets.commit.timeout.ms, 5 s) answers first.
    fn park_until_committed(
        &mut self,
        ctx: &mut Ctx,
        (from, id): (Node, u64),
        p: PartitionIndex,
        (required, base): (u64, u64),
        answer: ParkedAnswer,
    ) {
        let key = ctx.new_id();
        if let Some(s) = self.replicas.slot_of(p) {
            self.produce_waiters.push(s, key);
        }
        let waiting = vec![(p, required, base)];
        let parked = ParkedProduce {
            from,
            id,
            waiting,
            done: Vec::new(),
            answer,
        };
        self.parked_produces.insert(key, parked);
        ctx.after(
            OFFSETS_COMMIT_TIMEOUT_MS,
            Timer::DelayedProduceExpire { id: key },
        );
    }

    /// Answer a stable OffsetFetch: the group's durable offsets (the
    /// timed-out commits the high watermark has passed since included), or
    /// NOT_COORDINATOR when its wait failed.
    pub(super) fn finish_stable_offset_fetch(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        group: &str,
        partitions: &[PartitionIndex],
        failed: Option<ErrorCode>,
    ) {
        if failed.is_some() {
            let result = Err(ErrorCode::NotCoordinator);
            ctx.send(from, Message::OffsetFetchResponse { id, result });
            return;
        }
        if let Ok((p, _)) = self.shard_for(ctx, group) {
            self.settle_late_commits(p);
        }
        let result = self.shard_for(ctx, group).map(|(_, shard)| {
            let committed = shard.groups.get(&Rc::from(group));
            partitions
                .iter()
                .filter_map(|p| committed.and_then(|c| c.get(p)).copied())
                .collect()
        });
        ctx.send(from, Message::OffsetFetchResponse { id, result });
    }

    pub(super) fn handle_offset_commit(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        group: &str,
        offsets: Vec<CommittedOffset>,
        member: Option<(i32, Rc<str>)>,
    ) {
        #[cfg(group_protocols)]
        let checked = self.shard_for(ctx, group).and_then(|(p, shard)| {
            match shard.consumer_groups.get(&Rc::from(group)) {
                Some(g) => super::consumer_group::validate_commit(g, &member),
                None => self.validate_classic_commit(p, group, &member),
            }
            .map(|_| p)
        });
        #[cfg(not(group_protocols))]
        let checked = {
            let _ = member;
            self.shard_for(ctx, group).map(|(p, _)| p)
        };
        let p = match checked {
            Ok(p) => p,
            Err(e) => {
                ctx.send(from, Message::OffsetCommitResponse { id, result: Err(e) });
                return;
            }
        };
        if offsets.is_empty() {
            ctx.send(from, Message::OffsetCommitResponse { id, result: Ok(()) });
            return;
        }
        let group: Rc<str> = Rc::from(group);
        let records: Vec<Record> = offsets
            .iter()
            .map(|o| {
                let rid = ctx.new_id();
                ctx.commit_values
                    .insert(rid, OffsetsRecord::Commit(group.clone(), *o));
                Record::plain(rid, 0)
            })
            .collect();
        let mut pending = PendingCommit {
            group,
            partition: p,
            offsets,
            end: 0,
        };
        // CoordinatorPartitionWriter.append writes with requiredAcks=1: no
        // min.insync.replicas check at the append; CoordinatorRuntime then
        // holds the answer until the high watermark passes the records (which
        // it does not while the ISR is below min.insync.replicas), or until
        // offsets.commit.timeout.ms.
        match self.append_as_leader(ctx, p, Acks::Leader, &records) {
            Err(e) => {
                let result = Err(commit_error(e));
                ctx.send(from, Message::OffsetCommitResponse { id, result });
            }
            Ok((base, required)) => {
                pending.end = required;
                let hw = self.replicas.get(&p).map_or(0, |r| r.log.high_watermark);
                if hw >= required {
                    let result = self.ack_result(ctx, p, base).map(|_| ());
                    self.finish_commit(ctx, from, id, &pending, result);
                    return;
                }
                let answer = ParkedAnswer::Commit(pending);
                self.park_until_committed(ctx, (from, id), p, (required, base), answer);
            }
        }
    }

    /// Answer a commit: on success the group's offsets take the committed
    /// values (GroupMetadataManager updates its cache once the append is
    /// durable).
    pub(super) fn finish_commit(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        pending: &PendingCommit,
        result: Result<(), ErrorCode>,
    ) {
        if result == Err(ErrorCode::RequestTimedOut) {
            // Timed out, not undone: its records may still be committed.
            if let Some(shard) = self.coordinator.get_mut(&pending.partition) {
                shard.late.push(pending.clone());
            }
        }
        let result = result.map_err(commit_error);
        if result.is_ok() {
            // Earlier commits that timed out precede it in the log.
            self.settle_late_commits(pending.partition);
            if let Some(shard) = self.coordinator.get_mut(&pending.partition) {
                let g = shard.groups.or_default(pending.group.clone());
                for o in &pending.offsets {
                    g.insert(o.partition, *o);
                }
            }
        }
        ctx.send(from, Message::OffsetCommitResponse { id, result });
    }

    /// Applies, in log order, the timed-out commits of offsets partition
    /// `p` that its high watermark has passed since.
    fn settle_late_commits(&mut self, p: PartitionIndex) {
        let hw = self.replicas.get(&p).map_or(0, |r| r.log.high_watermark);
        let Some(shard) = self.coordinator.get_mut(&p) else {
            return;
        };
        if shard.late.is_empty() {
            return;
        }
        let late = std::mem::take(&mut shard.late);
        for pending in late {
            if pending.end <= hw {
                let g = shard.groups.or_default(pending.group.clone());
                for o in &pending.offsets {
                    g.insert(o.partition, *o);
                }
            } else {
                shard.late.push(pending);
            }
        }
    }

    /// This broker now leads offsets partition `p` in `leader_epoch`: it
    /// loads the groups from the partition's log before answering them.
    pub(super) fn coordinator_became_leader(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        leader_epoch: u32,
    ) {
        let records = self.replicas.get(&p).map_or(0, |r| r.log.log_end_offset());
        self.coordinator.insert(
            p,
            Shard {
                leader_epoch,
                loaded: false,
                groups: VecMap::new(),
                late: Vec::new(),
                #[cfg(group_protocols)]
                classic: VecMap::new(),
                #[cfg(group_protocols)]
                tick_at: None,
                #[cfg(group_protocols)]
                consumer_groups: VecMap::new(),
            },
        );
        let us = ctx.config.coordinator_load_ms * 1_000
            + records * ctx.config.coordinator_load_us_per_record;
        ctx.after(
            us.div_ceil(1_000).max(1),
            Timer::CoordinatorLoaded {
                partition: p,
                leader_epoch,
            },
        );
    }

    pub(super) fn coordinator_loaded(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        leader_epoch: u32,
    ) {
        let Some(rep) = self.replicas.get(&p) else {
            return;
        };
        if !rep.is_leader() || rep.leader_epoch != leader_epoch {
            return;
        }
        let mut groups: VecMap<Rc<str>, VecMap<PartitionIndex, CommittedOffset>> = VecMap::new();
        #[cfg(group_protocols)]
        let mut classic: VecMap<Rc<str>, Rc<super::classic_group::GroupSnapshot>> = VecMap::new();
        #[cfg(group_protocols)]
        let mut consumer_groups: VecMap<Rc<str>, Rc<super::consumer_group::ConsumerGroup>> =
            VecMap::new();
        let mut read = 0u64;
        for r in rep.log.records() {
            match ctx.commit_values.get(&r.id) {
                Some(OffsetsRecord::Commit(g, o)) => {
                    groups.or_default(g.clone()).insert(o.partition, *o);
                    read += 1;
                }
                #[cfg(group_protocols)]
                Some(OffsetsRecord::ConsumerGroup(g, snapshot)) => {
                    consumer_groups.insert(g.clone(), snapshot.clone());
                }
                #[cfg(group_protocols)]
                Some(OffsetsRecord::Group(g, snapshot)) => {
                    classic.insert(g.clone(), snapshot.clone());
                }
                None => {}
            }
        }
        let Some(shard) = self.coordinator.get_mut(&p) else {
            return;
        };
        if shard.leader_epoch != leader_epoch {
            return;
        }
        shard.loaded = true;
        shard.groups = groups;
        #[cfg(group_protocols)]
        let memberships = {
            let mut told = self.load_consumer_groups(ctx, p, &consumer_groups);
            told.extend(self.load_classic_groups(ctx, p, &classic));
            told
        };
        #[cfg(not(group_protocols))]
        let memberships: Vec<String> = Vec::new();
        let Some(shard) = self.coordinator.get(&p) else {
            return;
        };
        let names: Vec<String> = shard.groups.iter().map(|(g, _)| g.to_string()).collect();
        if names.is_empty() && read == 0 {
            return;
        }
        let me = self.id;
        let tp = ctx.tp(p);
        ctx.trace(
            TraceKind::CoordinatorLoaded {
                broker: me,
                partition: ctx.partitions[p].partition,
                groups: names.clone(),
                records: read,
            },
            if memberships.is_empty() {
                format!(
                    "Broker {me} leads {tp} and has loaded its {read} commit record(s): it is now the coordinator of group {} and answers its OffsetFetch and OffsetCommit.",
                    names.join(", ")
                )
            } else {
                format!(
                    "Broker {me} leads {tp} and has loaded its {read} commit record(s) and {}: it is now the coordinator of group {}; the members keep their assignment, and each session starts now.",
                    memberships.join(", "),
                    names.join(", ")
                )
            },
        );
    }

    /// No longer the leader of `p`: its groups are unloaded (clients get
    /// NOT_COORDINATOR and look for the new one).
    pub(super) fn coordinator_resigned(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        let shard = self.coordinator.remove(&p);
        #[cfg(group_protocols)]
        if let Some(shard) = shard {
            self.classic_groups_unloaded(ctx, &shard);
        }
        #[cfg(not(group_protocols))]
        let _ = (ctx, shard);
    }
}

/// offsets.commit.timeout.ms (5000): how long the coordinator waits for a
/// commit to become durable.
pub const OFFSETS_COMMIT_TIMEOUT_MS: u64 = 5_000;

/// The coordinator's answer for an error of its own append.
pub fn commit_error(e: ErrorCode) -> ErrorCode {
    match e {
        ErrorCode::NotEnoughReplicas
        | ErrorCode::NotEnoughReplicasAfterAppend
        | ErrorCode::RequestTimedOut => ErrorCode::CoordinatorNotAvailable,
        ErrorCode::NotLeaderOrFollower | ErrorCode::FencedLeaderEpoch => ErrorCode::NotCoordinator,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java: "".hashCode() == 0, "a".hashCode() == 97,
    /// "orders".hashCode() == -1008770331.
    #[test]
    fn the_group_hash_is_javas_string_hash_over_utf16_units() {
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("ab"), 97 * 31 + 98);
        assert_eq!(java_string_hash("orders"), -1008770331);
        // An astral-plane character counts as its two UTF-16 surrogates.
        assert_eq!(java_string_hash("😀"), 0xD83D * 31 + 0xDE00);
        // The classic String whose hashCode is Integer.MIN_VALUE.
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
    }

    /// GroupCoordinatorService.partitionFor: `Utils.abs(groupId.hashCode())
    /// % offsets.topic.num.partitions`, where Utils.abs is the absolute value
    /// (MIN_VALUE → 0), not the sign-bit mask of Utils.toPositive. "orders"
    /// hashes to -1008770331: |h| % 50 = 31, while the mask would give 17.
    #[test]
    fn group_offsets_partition_is_utils_abs_of_the_hash_modulo_the_partitions() {
        assert_eq!(offsets_partition_for("orders", 50), 31);
        assert_eq!(offsets_partition_for("orders", 50), 1_008_770_331 % 50);
        // A positive hash: the same under either rule.
        assert_eq!(offsets_partition_for("a", 50), 97 % 50);
        // Integer.MIN_VALUE: Utils.abs gives 0, so partition 0 at any count.
        assert_eq!(offsets_partition_for("polygenelubricants", 50), 0);
        assert_eq!(offsets_partition_for("polygenelubricants", 7), 0);
        assert_eq!(offsets_partition_for("anything", 0), 0);
    }
}
