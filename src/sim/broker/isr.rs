//! The leader's ISR management: shrinking the ISR every
//! `replica.lag.time.max.ms / 2` and the AlterPartition round trip with the
//! controller (Partition.maybeShrinkIsr, AlterPartitionManager, KIP-497).

use crate::sim::shared::cow;

use crate::sim::io::{Ctx, Timer};
use crate::sim::protocol::*;
use crate::sim::trace::TraceKind;

use super::{Broker, ALTER_PARTITION_RETRY_MS};

impl Broker {
    pub(super) fn shrink_isr_check(&mut self, ctx: &mut Ctx) {
        if !self.registered {
            return;
        }
        let me = self.id;
        let lag = ctx.config.replica_lag_time_max_ms;
        let mut sends = Vec::new();
        for shared in self.replicas.shared_mut() {
            if !shared.is_leader() || shared.pending_isr.is_some() {
                continue;
            }
            let out = shared.out_of_sync(me, ctx.now, lag);
            if out.is_empty() {
                continue;
            }
            let rep = cow(shared);
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

    pub(super) fn handle_alter_partition_response(
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
}
