//! The leader's ISR management: shrinking the ISR every
//! `replica.lag.time.max.ms / 2` and the AlterPartition round trip with the
//! controller (Partition.maybeShrinkIsr, AlterPartitionManager, KIP-497).
//!
//! A proposal stays pending until the controller answers (Kafka's
//! PendingExpandIsr / PendingShrinkIsr); the committed ISR only ever takes
//! the controller's value. A refusal is handled as Partition.handleAlterPartitionError
//! does:
//! - INELIGIBLE_REPLICA: the controller says the request was not applied and
//!   the leader's partition epoch is current, so the proposal is dropped and
//!   the leader is back at its last committed state;
//! - FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, INVALID_REQUEST: the
//!   leader's view is stale; it keeps the proposal pending, sends nothing
//!   more, and waits for new metadata (which replaces the pending state);
//! - anything else: the same proposal is sent again at once.
//!
//! Each proposed member carries the broker epoch the leader knows it by
//! (KIP-903), so the controller can refuse a follower that restarted since.

use crate::sim::followers::FollowerTable;
use crate::sim::io::{Ctx, Timer};
use crate::sim::partition::{PendingIsr, Replica};
use crate::sim::protocol::*;
use crate::sim::trace::{list, TraceKind};

use super::{Broker, ALTER_PARTITION_RETRY_MS};

/// Partition.addBrokerEpochToIsr: each member with the broker epoch the
/// leader knows it by — its own registration's for itself, the epoch the
/// follower's last fetch carried for the others (none if it has not fetched
/// in this leader epoch: Kafka's -1).
fn with_broker_epochs(
    me: BrokerId,
    my_epoch: u64,
    followers: &FollowerTable,
    rep: &Replica,
    isr: &[BrokerId],
) -> Vec<BrokerState> {
    isr.iter()
        .map(|&b| BrokerState {
            broker_id: b,
            broker_epoch: if b == me {
                Some(my_epoch)
            } else {
                rep.follower(followers, b)
                    .map(|f| f.broker_epoch)
                    .filter(|e| *e != 0)
            },
        })
        .collect()
}

/// The AlterPartition carrying `rep`'s pending proposal.
fn alter_partition_message(me: BrokerId, my_epoch: u64, rep: &Replica) -> Option<Message> {
    let pending = rep.pending_isr.as_ref()?;
    Some(Message::AlterPartition {
        id: pending.id,
        broker: me,
        broker_epoch: my_epoch,
        partition: rep.partition,
        leader_epoch: rep.leader_epoch,
        partition_epoch: rep.partition_epoch,
        new_isr: pending.isr.clone(),
        leader_recovery_state: rep.recovery,
    })
}

/// Propose `isr` for `rep` (Partition.prepareIsrExpand / prepareIsrShrink
/// then submitAlterPartition): it becomes the pending state and goes to the
/// controller, re-sent if no answer comes.
pub(super) fn propose_isr(
    ctx: &mut Ctx,
    me: BrokerId,
    my_epoch: u64,
    followers: &FollowerTable,
    rep: &mut Replica,
    isr: &[BrokerId],
) {
    let id = ctx.new_id();
    let members = with_broker_epochs(me, my_epoch, followers, rep, isr);
    rep.pending_isr = Some(Box::new(PendingIsr::new(id, members)));
    if let Some(msg) = alter_partition_message(me, my_epoch, rep) {
        ctx.send(Node::Controller, msg);
        ctx.after(
            ALTER_PARTITION_RETRY_MS,
            Timer::AlterPartitionRetry {
                partition: rep.partition,
                id,
            },
        );
    }
}

/// Whether an accepted AlterPartition's registration becomes the leader's
/// committed state (Partition.handleAlterPartitionUpdate): one in another
/// leader epoch, or older than the state the leader holds, is ignored; one
/// in the same partition epoch (the controller changed nothing: the proposal
/// already was the state) is committed like a newer one, and the HW is
/// tried again.
fn commits(rep: &Replica, reg: &PartitionRegistration, me: BrokerId) -> bool {
    reg.leader_epoch == rep.leader_epoch
        && reg.partition_epoch >= rep.partition_epoch
        && reg.leader == Some(me)
}

/// What a leader does with a refused AlterPartition
/// (Partition.handleAlterPartitionError; the module comment has the cases).
#[derive(Clone, Copy)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
enum Refused {
    /// Not applied, and the leader's view is current: back to the committed ISR.
    Drop,
    /// The leader's view is stale: keep the proposal pending, send nothing
    /// more, wait for new metadata.
    AwaitMetadata,
    /// Send the same proposal again.
    Resend,
}

impl Broker {
    pub(super) fn shrink_isr_check(&mut self, ctx: &mut Ctx) {
        if !self.registered {
            return;
        }
        let me = self.id;
        let my_epoch = self.broker_epoch;
        let lag = ctx.config.replica_lag_time_max_ms;
        for s in 0..self.replicas.len() {
            let Some(shared) = self.replicas.at(s) else {
                continue;
            };
            if !shared.is_leader() || shared.pending_isr.is_some() {
                continue;
            }
            let out = shared.out_of_sync(&self.followers, me, ctx.now, lag);
            if out.is_empty() {
                continue;
            }
            let Some(rep) = self.replicas.at_mut(s) else {
                continue;
            };
            let new_isr: Vec<BrokerId> = rep
                .isr
                .iter()
                .copied()
                .filter(|b| !out.contains(b))
                .collect();
            propose_isr(ctx, me, my_epoch, &self.followers, rep, &new_isr);
        }
    }

    /// The retry timer of AlterPartition `id`: re-send the same proposal
    /// while it is still the one in flight.
    pub(super) fn retry_alter_partition(&mut self, ctx: &mut Ctx, p: PartitionIndex, id: u64) {
        let me = self.id;
        let my_epoch = self.broker_epoch;
        let Some(rep) = self.replicas.get(&p) else {
            return;
        };
        let in_flight = rep
            .pending_isr
            .as_ref()
            .is_some_and(|x| x.id == id && !x.awaiting_metadata);
        if !in_flight {
            return;
        }
        if let Some(msg) = alter_partition_message(me, my_epoch, rep) {
            ctx.send(Node::Controller, msg);
            ctx.after(
                ALTER_PARTITION_RETRY_MS,
                Timer::AlterPartitionRetry { partition: p, id },
            );
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
        let my_epoch = self.broker_epoch;
        let followers = &mut self.followers;
        let Some(rep) = self.replicas.get_mut(&p) else {
            return;
        };
        // An answer to anything but the proposal in flight is out of date
        // (Partition.submitAlterPartition compares the partition state).
        let current = rep
            .pending_isr
            .as_ref()
            .is_some_and(|x| x.id == id && !x.awaiting_metadata);
        if !current {
            return;
        }
        match result {
            Ok(reg) => {
                rep.pending_isr = None;
                if commits(rep, &reg, me) {
                    rep.make_leader(followers, me, &reg, ctx.now);
                    self.followed_stale = true;
                    ctx.touch(p);
                    self.after_leader_state_change(ctx, p);
                }
            }
            Err(e) => {
                let tp = ctx.tp(p);
                let (what, next) = match e {
                    ErrorCode::IneligibleReplica => (
                        "the request was not applied, so it drops the proposal and is back at its committed ISR",
                        Refused::Drop,
                    ),
                    ErrorCode::FencedLeaderEpoch
                    | ErrorCode::InvalidUpdateVersion
                    | ErrorCode::InvalidRequest => (
                        "its view is stale; the proposal stays pending (no other ISR change starts) until new metadata arrives",
                        Refused::AwaitMetadata,
                    ),
                    _ => ("it sends the same proposal again", Refused::Resend),
                };
                ctx.trace(
                    TraceKind::AlterPartitionRejected {
                        broker: me,
                        topic: ctx.partitions[p].topic.clone(),
                        partition: ctx.partitions[p].partition,
                        error: e.name().to_string(),
                    },
                    format!(
                        "The controller refused broker {me}'s AlterPartition for {tp} (ISR {} proposed; leader epoch {}, partition epoch {}) with {e}: {what}. The committed ISR stays {}.",
                        list(
                            &rep.pending_isr
                                .as_ref()
                                .map(|x| BrokerState::ids(&x.isr))
                                .unwrap_or_default()
                        ),
                        rep.leader_epoch,
                        rep.partition_epoch,
                        list(&rep.isr),
                    ),
                );
                match next {
                    Refused::Drop => {
                        rep.pending_isr = None;
                        // The maximal ISR is the committed one again.
                        self.after_leader_state_change(ctx, p);
                    }
                    Refused::Resend => {
                        // Still in flight: its retry timer stays armed too.
                        if let Some(msg) = alter_partition_message(me, my_epoch, rep) {
                            ctx.send(Node::Controller, msg);
                        }
                    }
                    Refused::AwaitMetadata => {
                        if let Some(pending) = rep.pending_isr.as_mut() {
                            pending.awaiting_metadata = true;
                        }
                    }
                }
            }
        }
    }
}
