//! A subscribing consumer's membership under KIP-848
//! (`group.protocol=consumer`: Kafka's AsyncKafkaConsumer with its
//! ConsumerMembershipManager; `broker/consumer_group.rs` is the other side).
//!
//! - The member chooses its member id (KIP-1082) and joins with member
//!   epoch 0 in a ConsumerGroupHeartbeat; it heartbeats every interval the
//!   coordinator names (5 s).
//! - Each answer carries the partitions it is to own. Partitions that left
//!   it are given up after a commit of its positions (auto-commit on
//!   revocation), new ones start from the group's committed offsets, and
//!   the next heartbeat, sent at once, reports what it owns: that is how
//!   the coordinator learns a partition is free for its next owner.
//! - It goes on reading what it keeps throughout: there is no group-wide
//!   stop.
//! - FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: its partitions are lost (no
//!   commit) and it joins again with epoch 0.

use super::consumer::Consumer;
use super::membership::MemberState;
use crate::sim::io::{Ctx, Timer};
use crate::sim::protocol::*;
use crate::sim::trace::TraceKind;

impl Consumer {
    /// The KIP-848 half of drive_membership. Returns true when the offsets
    /// half must wait (a commit before a revocation is out).
    pub(super) fn drive_consumer_member(&mut self, ctx: &mut Ctx, coordinator: BrokerId) -> bool {
        let Some(m) = self.membership() else {
            return false;
        };
        if m.state == MemberState::Failed {
            return false;
        }
        if !m.revoking.is_empty() {
            // Commit before giving partitions up (auto-commit on
            // revocation), then revoke and report it.
            let commit = self.config.enable_auto_commit && !m.prepared;
            if let Some(m) = self.membership_mut() {
                m.prepared = true;
            }
            if commit && self.send_commit(ctx, coordinator) {
                return true;
            }
            self.revoke_now(ctx);
        }
        let Some(m) = self.membership() else {
            return false;
        };
        let due = m.state == MemberState::Unjoined || m.ack || ctx.now >= m.next_heartbeat_ms;
        if m.heartbeat.is_none() && due {
            self.send_consumer_heartbeat(ctx, coordinator);
        }
        false
    }

    fn send_consumer_heartbeat(&mut self, ctx: &mut Ctx, coordinator: BrokerId) {
        let id = ctx.new_id();
        let owned: Vec<PartitionIndex> = self.positions.iter().map(|(p, _)| p).collect();
        let partitions = self.topic_partitions.clone();
        let assignor = self.config.remote_assignor;
        let Some(g) = self.group.as_mut() else {
            return;
        };
        let Some(m) = g.membership.as_mut() else {
            return;
        };
        let joining = m.state == MemberState::Unjoined;
        let report = joining || m.ack;
        if joining {
            m.state = MemberState::Joining;
            m.generation = 0;
        }
        m.ack = false;
        m.heartbeat = Some((id, coordinator));
        m.next_heartbeat_ms = ctx.now + crate::sim::broker::consumer_group::HEARTBEAT_INTERVAL_MS;
        let hb = ConsumerHeartbeatRequest {
            group: g.group_id.clone(),
            member_id: m.member_id.clone(),
            epoch: m.generation,
            assignor,
            owned: report.then_some(owned),
            partitions,
            instance_id: m.instance_id.clone(),
        };
        if !m.beating {
            m.beating = true;
            ctx.after(
                crate::sim::broker::consumer_group::HEARTBEAT_INTERVAL_MS,
                Timer::MemberHeartbeat,
            );
        }
        ctx.send(
            Node::Broker(coordinator),
            Message::ConsumerHeartbeat {
                id,
                hb: Box::new(hb),
            },
        );
        ctx.after(self.config.request_timeout_ms, Timer::RequestTimeout { id });
    }

    /// The heartbeat timer: the next heartbeat (through poll), and the
    /// timer after it.
    pub(super) fn consumer_heartbeat_due(&mut self, ctx: &mut Ctx) {
        let interval = self
            .membership()
            .map_or(0, |m| m.next_heartbeat_ms.saturating_sub(ctx.now))
            .max(self.config.retry_backoff_ms.max(1));
        if self.stalled_since.is_some() {
            // The background thread heartbeats while the application does
            // not poll (reconciling waits for poll).
            let coordinator = self.group.as_ref().and_then(|g| g.coordinator);
            let due = self.membership().is_some_and(|m| {
                m.heartbeat.is_none()
                    && m.state != MemberState::Unjoined
                    && m.state != MemberState::Failed
                    && ctx.now >= m.next_heartbeat_ms
            });
            if let Some(c) = coordinator.filter(|_| due) {
                if self.connections.ready(ctx, c) {
                    self.send_consumer_heartbeat(ctx, c);
                }
            }
        } else {
            self.poll(ctx);
        }
        ctx.after(interval, Timer::MemberHeartbeat);
    }

    /// UNRELEASED_INSTANCE_ID (ConsumerHeartbeatRequestManager: a fatal
    /// failure): the coordinator keeps the instance id for the member of a
    /// process that was killed, so this process cannot join; poll() raises
    /// UnreleasedInstanceIdException and the member stops.
    pub(super) fn instance_id_unreleased(&mut self, ctx: &mut Ctx) {
        let name = self.name.clone();
        let Some(g) = self.group.as_mut() else {
            return;
        };
        let Some(m) = g.membership.as_mut() else {
            return;
        };
        m.state = MemberState::Failed;
        let instance = m.instance_id.as_deref().unwrap_or("").to_string();
        let e = ErrorCode::UnreleasedInstanceId;
        *g.errors.entry(e.name().to_string()).or_default() += 1;
        let group = g.group_id.clone();
        ctx.trace(
            TraceKind::CoordinatorError {
                consumer: name.clone(),
                group: group.clone(),
                request: "ConsumerGroupHeartbeat".to_string(),
                error: e.name().to_string(),
            },
            format!(
                "Consumer {name}'s ConsumerGroupHeartbeat for group {group} failed with UNRELEASED_INSTANCE_ID: group.instance.id={instance} still belongs to the member of its killed process, which never left (only a clean close releases it); poll() raises UnreleasedInstanceIdException and this consumer reads nothing more."
            ),
        );
    }

    /// Give up the partitions being revoked now (their commit is done).
    fn revoke_now(&mut self, ctx: &mut Ctx) {
        let Some(m) = self.membership_mut() else {
            return;
        };
        let gone = std::mem::take(&mut m.revoking);
        m.ack = true;
        if gone.is_empty() {
            return;
        }
        self.drop_positions(&gone);
        // The reconciliation completes with the revocation.
        self.rearm_auto_commit(ctx);
        let name = self.name.clone();
        let group = self
            .group
            .as_ref()
            .map(|g| g.group_id.clone())
            .unwrap_or_default();
        let shown: Vec<String> = gone.iter().map(|p| ctx.tp(*p)).collect();
        ctx.trace(
            TraceKind::PartitionsRevoked {
                consumer: name.clone(),
                group: group.clone(),
                partitions: shown.clone(),
            },
            format!(
                "Consumer {name} gives up {} (its group's target moved them to another member), having committed its positions; its next heartbeat says so, and only then may the new owner read them.",
                shown.join(", ")
            ),
        );
    }

    /// Partitions lost with the member epoch: positions dropped, nothing
    /// committed.
    pub(super) fn lose_partitions(&mut self) {
        let gone: Vec<PartitionIndex> = self.positions.iter().map(|(p, _)| p).collect();
        self.drop_positions(&gone);
        if let Some(m) = self.membership_mut() {
            m.assignment.clear();
            m.revoking.clear();
        }
    }

    /// A ConsumerGroupHeartbeat's answer.
    pub(super) fn on_consumer_heartbeat(
        &mut self,
        ctx: &mut Ctx,
        id: u64,
        result: Result<ConsumerHeartbeatAnswer, ErrorCode>,
    ) {
        if !self.awaits(id, |m| m.heartbeat) {
            return;
        }
        let answer = match result {
            Err(e) => {
                self.membership_failed(ctx, id, e);
                return;
            }
            Ok(a) => a,
        };
        let mut target = answer.assignment;
        target.sort_unstable();
        let (removed, added) = self.assignment_change(&target);
        self.start_partitions(&added);
        let name = self.name.clone();
        let Some(g) = self.group.as_mut() else {
            return;
        };
        g.failures = 0;
        g.last_error = None;
        let group = g.group_id.clone();
        let Some(m) = g.membership.as_mut() else {
            return;
        };
        m.heartbeat = None;
        let epoch_moved = m.generation != answer.member_epoch;
        m.generation = answer.member_epoch;
        m.state = MemberState::Stable;
        m.next_heartbeat_ms = ctx.now + answer.heartbeat_interval_ms;
        m.assignment = target.clone();
        if !removed.is_empty() {
            m.revoking = removed;
            m.prepared = false;
        }
        if !added.is_empty() {
            m.ack = true;
            m.rebalances += 1;
        }
        // A reconciliation with nothing to revoke completes at once.
        let reconciled = m.revoking.is_empty() && !added.is_empty();
        if !added.is_empty() || (epoch_moved && m.revoking.is_empty()) {
            let shown: Vec<String> = target.iter().map(|p| ctx.tp(*p)).collect();
            let new: Vec<String> = added.iter().map(|p| ctx.tp(*p)).collect();
            let epoch = m.generation;
            let text = if new.is_empty() {
                format!(
                    "Consumer {name} is at member epoch {epoch} of group {group}, owning {}.",
                    if shown.is_empty() {
                        "nothing".to_string()
                    } else {
                        shown.join(", ")
                    }
                )
            } else {
                format!(
                    "Consumer {name} is at member epoch {epoch} of group {group} and takes {} (it owns {}); it starts them from the group's committed offsets.",
                    new.join(", "),
                    shown.join(", ")
                )
            };
            ctx.trace(
                TraceKind::PartitionsAssigned {
                    consumer: name,
                    group,
                    generation: epoch,
                    partitions: shown,
                },
                text,
            );
        }
        if reconciled {
            self.rearm_auto_commit(ctx);
        }
        self.poll(ctx);
    }
}
