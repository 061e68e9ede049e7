//! The broker's metadata publisher: it replays the controller's metadata log
//! and turns each partition's registration into a role for the local replica
//! (become leader, become follower, stop), as BrokerMetadataPublisher and
//! ReplicaManager.applyDelta do (KAFKA_REPLICATION.md §5, "Propagation").

use std::cmp::Reverse;

use crate::sim::io::{Ctx, Timer};
use crate::sim::partition::Role;
use crate::sim::protocol::*;
use crate::sim::shared::sort_slim;
use crate::sim::trace::TraceKind;

use super::{trace_truncation, Broker, Lifecycle};

impl Broker {
    /// Replay the metadata log up to `end`. When catching up over many records,
    /// only the last state of each partition matters: a restarted broker must
    /// not briefly "become leader" in epochs long gone.
    pub(super) fn apply_metadata(&mut self, ctx: &mut Ctx, end: u64) {
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
    pub(super) fn metadata_work_done(&mut self, ctx: &mut Ctx, end: u64) -> bool {
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
            } = &**rec
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

    pub(super) fn apply_metadata_now(&mut self, ctx: &mut Ctx, end: u64) {
        let end = end.min(ctx.metadata.len() as u64);
        if end <= self.metadata_offset {
            return;
        }
        let metadata = ctx.metadata;
        // The last registration of each partition in the new records, in
        // partition order.
        let mut latest: Vec<(PartitionIndex, &PartitionRegistration)> = Vec::new();
        for rec in &metadata[self.metadata_offset as usize..end as usize] {
            match &**rec {
                MetadataRecord::Partition {
                    partition,
                    registration,
                } => {
                    latest.push((*partition, registration));
                }
                MetadataRecord::Broker {
                    broker,
                    broker_epoch,
                    fenced,
                    in_controlled_shutdown,
                } => {
                    self.meta_ineligible.retain(|b| b != broker);
                    if *fenced || *in_controlled_shutdown {
                        self.meta_ineligible.push(*broker);
                    }
                    self.meta_fenced.retain(|b| b != broker);
                    if *fenced {
                        self.meta_fenced.push(*broker);
                    }
                    match self.meta_broker_epochs.iter_mut().find(|e| e.0 == *broker) {
                        Some(e) => e.1 = *broker_epoch,
                        None => self.meta_broker_epochs.push((*broker, *broker_epoch)),
                    }
                }
            }
        }
        self.metadata_offset = end;
        let last = last_of_each_partition(latest.iter().map(|x| x.0));
        for (p, i) in last {
            let reg = latest[i].1;
            self.meta_leaders[p] = (reg.leader, reg.leader_epoch);
            if self.replicas.contains_key(&p) {
                self.apply_partition(ctx, p, reg);
            }
        }
        ctx.meta_pages.share(&mut self.meta_leaders, end);
        self.send_fetches(ctx);
    }

    pub(super) fn apply_partition(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        reg: &PartitionRegistration,
    ) {
        let me = self.id;
        let now = ctx.now;
        let followers = &mut self.followers;
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
            rep.make_leader(followers, me, reg, now);
            self.followed_stale = true;
            if !same_epoch {
                let text = format!(
                    "Broker {me} is now leader of {} in epoch {}: it writes (epoch {}, start offset {}) to its leader-epoch cache before accepting writes; LEO {}, HW {} (kept from before, it may lag).",
                    ctx.partitions[p].tp(),
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
                // A leader elected uncleanly (RECOVERING) has marked itself
                // RECOVERED in make_leader; no request of its own tells the
                // controller, its next ISR change does (Partition.makeLeader).
            }
            let offsets = ctx
                .config
                .offsets_partitions
                .is_some_and(|(first, n)| p >= first && p < first + n as usize);
            if offsets && (!same_epoch || !self.coordinator.contains_key(&p)) {
                self.coordinator_became_leader(ctx, p, reg.leader_epoch);
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
                let tp = ctx.partitions[p].tp();
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
            self.coordinator_resigned(ctx, p);
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
}

/// For records of the given partitions, in log order: the position of the
/// last record of each partition, in partition order (what a broker applies
/// of a metadata batch). The controller writes a step's records in partition
/// order, so a batch usually is that already, each partition once: then the
/// records are taken as they come. Sorting every batch cost each broker a
/// 20,000-entry heapsort at the start and at each fencing on the
/// 20,000-partition bench (issue 27).
fn last_of_each_partition(
    parts: impl Iterator<Item = PartitionIndex>,
) -> impl Iterator<Item = (PartitionIndex, usize)> {
    let mut last: Vec<(PartitionIndex, Reverse<usize>)> =
        parts.enumerate().map(|(i, p)| (p, Reverse(i))).collect();
    if !last.is_sorted_by(|a, b| a.0 < b.0) {
        // By partition, the latest record first, then one per partition.
        sort_slim(&mut last);
        last.dedup_by_key(|x| x.0);
    }
    last.into_iter().map(|(p, Reverse(i))| (p, i))
}

#[cfg(test)]
mod tests {
    use super::last_of_each_partition;

    fn last(parts: &[usize]) -> Vec<(usize, usize)> {
        last_of_each_partition(parts.iter().copied()).collect()
    }

    #[test]
    fn a_metadata_batch_applies_the_last_record_of_each_partition_in_partition_order() {
        // In order, each partition once (a controller step): as they come.
        assert_eq!(last(&[0, 3, 7]), [(0, 0), (3, 1), (7, 2)]);
        // Steps replayed together: later records win, partition order kept.
        assert_eq!(last(&[2, 0, 2, 1]), [(0, 1), (1, 3), (2, 2)]);
        assert_eq!(last(&[5, 4]), [(4, 1), (5, 0)]);
        assert_eq!(last(&[1, 1, 1]), [(1, 2)]);
        assert_eq!(last(&[0, 1, 1]), [(0, 0), (1, 2)]);
        assert_eq!(last(&[]), []);
    }
}
