//! Invariants checked after every event, on the partitions the event touched,
//! reported as data (DESIGN.md "Invariants"; KAFKA_REPLICATION.md §8):
//!
//! - `high_watermark_within_log_end`: HW ≤ LEO on every replica;
//! - `leader_high_watermark_monotonic`: a leader's HW never decreases within an epoch;
//! - `one_leader_per_epoch`: no two live brokers lead the same partition in the same epoch;
//! - `leader_epoch_monotonic`: the controller's leader epoch only grows;
//! - `leader_in_isr`: the controller's leader is a member of its ISR;
//! - `log_matching`: two replicas agree below the smaller of their HWs;
//! - `strong_isr`: every member of the controller's ISR holds the leader's
//!   records below the leader's HW (TLA+ StrongIsr);
//! - `weak_isr`: every member of a self-believed leader's own ISR holds its
//!   records below its HW (TLA+ WeakIsr);
//! - `no_acked_record_lost`: records acknowledged with acks=all are in the
//!   current leader's log at their offset.
//!
//! The data-safety checks apply while the configuration promises them:
//! `log_matching` unless an unclean election happened on the partition (after
//! one, replicas may disagree); `strong_isr`, `weak_isr` and
//! `no_acked_record_lost` unless there was also no power loss (Kafka does not
//! fsync each write, so a replica that loses power may lose committed records
//! while in the ISR — KIP-966's "last replica standing"). Outside the promise a
//! loss is a result, counted and narrated, not a violation.

use serde::Serialize;

use super::cluster::Cluster;
use super::config::Acks;
use super::partition::Role;
use super::protocol::{BrokerId, PartitionIndex};
use super::trace::TraceKind;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Violation {
    pub at_ms: u64,
    pub invariant: String,
    pub detail: String,
}

#[derive(Clone, Debug, Default)]
struct PartitionWatch {
    /// (leader, its process incarnation, epoch, hw) last seen on the
    /// controller's leader: a restarted process is a new leader instance.
    leader_hw: Option<(BrokerId, u32, u32, u64)>,
    controller_epoch: u32,
    /// An unclean election happened: replicas may legitimately diverge.
    unclean: Option<String>,
    /// A replica lost power: acknowledged records may legitimately be lost
    /// (Kafka does not fsync each write), but logs must still converge.
    power_loss: Option<String>,
    lost: u64,
    last_checked: Option<(Option<BrokerId>, u32, u64, u64)>,
}

#[derive(Clone, Debug)]
pub struct InvariantState {
    watch: Vec<PartitionWatch>,
    pub violations: Vec<Violation>,
    /// Distinct (invariant, partition) already reported, to keep the list short.
    reported: Vec<(String, PartitionIndex)>,
}

impl InvariantState {
    pub fn new(partitions: usize) -> Self {
        InvariantState {
            watch: vec![PartitionWatch::default(); partitions],
            violations: Vec::new(),
            reported: Vec::new(),
        }
    }

    pub fn power_loss(&mut self, p: PartitionIndex, b: BrokerId) {
        if let Some(w) = self.watch.get_mut(p) {
            w.power_loss
                .get_or_insert_with(|| format!("power loss of broker {b}"));
        }
    }

    pub fn lost(&self, p: PartitionIndex) -> u64 {
        self.watch.get(p).map_or(0, |w| w.lost)
    }

    pub fn total_lost(&self) -> u64 {
        self.watch.iter().map(|w| w.lost).sum()
    }

    /// Whether replicas must agree (no unclean election on this partition).
    pub fn consistent(&self, p: PartitionIndex) -> bool {
        self.watch.get(p).is_some_and(|w| w.unclean.is_none())
    }

    /// Whether acknowledged acks=all records must survive (clean elections
    /// only, no power loss on this partition).
    pub fn promised(&self, p: PartitionIndex) -> bool {
        self.watch
            .get(p)
            .is_some_and(|w| w.unclean.is_none() && w.power_loss.is_none())
    }

    fn violate(&mut self, at_ms: u64, p: PartitionIndex, invariant: &str, detail: String) {
        let key = (invariant.to_string(), p);
        if self.reported.contains(&key) {
            return;
        }
        self.reported.push(key);
        self.violations.push(Violation {
            at_ms,
            invariant: invariant.to_string(),
            detail,
        });
    }
}

/// Records acknowledged to a producer that the partition no longer has.
pub fn lost_records(c: &Cluster, p: PartitionIndex) -> Vec<(u64, u64, Acks)> {
    let reg = &c.controller.partitions[p];
    let holders: Vec<&super::log::Log> = match reg.leader {
        Some(l) => c
            .broker(l)
            .and_then(|b| b.replicas.get(&p))
            .map(|r| vec![&r.log])
            .unwrap_or_default(),
        // Offline: lost only if no replica, running or not, still holds it.
        None => reg
            .replicas
            .iter()
            .filter_map(|b| c.broker(*b).and_then(|x| x.replicas.get(&p)))
            .map(|r| &r.log)
            .collect(),
    };
    c.acked[p]
        .iter()
        .filter(|a| {
            !holders
                .iter()
                .any(|log| log.record_at(a.offset).is_some_and(|r| r.id == a.id))
        })
        .map(|a| (a.offset, a.id, a.acks))
        .collect()
}

pub fn check(c: &mut Cluster, dirty: &[PartitionIndex]) {
    let now = c.now;
    for &p in dirty {
        let mut found: Vec<(&'static str, String)> = Vec::new();
        let tp = format!("{}-{}", c.partitions[p].topic, c.partitions[p].partition);
        let reg = c.controller.partitions[p].clone();
        if let Some((b, e)) = c.controller.unclean_elected[p] {
            c.invariants.watch[p].unclean.get_or_insert_with(|| {
                format!("unclean election of broker {b} at leader epoch {e}")
            });
        }
        let consistent = c.invariants.consistent(p);
        let replicas: Vec<(BrokerId, &super::partition::Replica, bool)> = reg
            .replicas
            .iter()
            .filter_map(|b| {
                c.broker(*b)
                    .and_then(|x| x.replicas.get(&p).map(|r| (*b, r, x.is_running())))
            })
            .collect();
        for (b, r, _) in &replicas {
            if r.log.high_watermark > r.log.log_end_offset() {
                found.push((
                    "high_watermark_within_log_end",
                    format!(
                        "{tp} on broker {b}: HW {} > LEO {}",
                        r.log.high_watermark,
                        r.log.log_end_offset()
                    ),
                ));
            }
        }
        // One leader per epoch among live brokers.
        let leaders: Vec<(BrokerId, u32)> = replicas
            .iter()
            .filter(|(_, r, running)| *running && r.role == Role::Leader)
            .map(|(b, r, _)| (*b, r.leader_epoch))
            .collect();
        for (i, a) in leaders.iter().enumerate() {
            for b in &leaders[i + 1..] {
                if a.1 == b.1 {
                    found.push((
                        "one_leader_per_epoch",
                        format!(
                            "{tp}: brokers {} and {} both lead in epoch {}",
                            a.0, b.0, a.1
                        ),
                    ));
                }
            }
        }
        let watch = &c.invariants.watch[p];
        if reg.leader_epoch < watch.controller_epoch {
            found.push((
                "leader_epoch_monotonic",
                format!(
                    "{tp}: leader epoch went from {} to {}",
                    watch.controller_epoch, reg.leader_epoch
                ),
            ));
        }
        if let Some(l) = reg.leader {
            if !reg.isr.contains(&l) {
                found.push((
                    "leader_in_isr",
                    format!("{tp}: leader {l} is not in ISR {:?}", reg.isr),
                ));
            }
        }
        // Leader HW monotonic within an epoch.
        let mut new_leader_hw = watch.leader_hw;
        if let Some((l, r)) = reg
            .leader
            .and_then(|l| replicas.iter().find(|x| x.0 == l && x.2).map(|x| (l, x.1)))
        {
            let inc = c.broker(l).map_or(0, |b| b.incarnation);
            if r.role == Role::Leader && r.leader_epoch == reg.leader_epoch {
                if let Some((pl, pi, pe, phw)) = watch.leader_hw {
                    if pl == l && pi == inc && pe == r.leader_epoch && r.log.high_watermark < phw {
                        found.push((
                            "leader_high_watermark_monotonic",
                            format!(
                                "{tp}: leader {l}'s HW fell from {phw} to {} in epoch {pe}",
                                r.log.high_watermark
                            ),
                        ));
                    }
                }
                new_leader_hw = Some((l, inc, r.leader_epoch, r.log.high_watermark));
            }
        }
        if consistent {
            // Log matching below the smaller HW, among live replicas that are
            // leaders or have reconciled with their leader in its current epoch
            // (a replica that just restarted may still hold a tail it is about
            // to truncate).
            let settled: Vec<&(BrokerId, &super::partition::Replica, bool)> = replicas
                .iter()
                .filter(|(_, r, running)| {
                    *running
                        && (r.role == Role::Leader || (r.role == Role::Follower && r.reconciled))
                })
                .collect();
            for (i, (a, ra, _)) in settled.iter().copied().enumerate() {
                for (b, rb, _) in settled[i + 1..].iter().copied() {
                    let hw = ra.log.high_watermark.min(rb.log.high_watermark);
                    if ra.log.prefix_hash(hw) != rb.log.prefix_hash(hw) {
                        found.push((
                            "log_matching",
                            format!("{tp}: brokers {a} and {b} disagree below offset {hw}"),
                        ));
                    }
                }
            }
        }
        if c.invariants.promised(p) {
            // StrongIsr: the controller's ISR holds the leader's committed prefix.
            if let Some((l, lr)) = reg
                .leader
                .and_then(|l| replicas.iter().find(|x| x.0 == l).map(|x| (l, x.1)))
            {
                let hw = lr.log.high_watermark;
                for (b, r, _) in &replicas {
                    if *b != l
                        && reg.isr.contains(b)
                        && (r.log.log_end_offset() < hw
                            || r.log.prefix_hash(hw) != lr.log.prefix_hash(hw))
                    {
                        found.push((
                            "strong_isr",
                            format!(
                                "{tp}: ISR member {b} lacks leader {l}'s records below HW {hw}"
                            ),
                        ));
                    }
                }
            }
            // WeakIsr: each self-believed leader's own ISR holds its committed prefix.
            for (l, lr, running) in &replicas {
                if !running || lr.role != Role::Leader {
                    continue;
                }
                let hw = lr.log.high_watermark;
                for (b, r, _) in &replicas {
                    if b != l
                        && lr.isr.contains(b)
                        && (r.log.log_end_offset() < hw
                            || r.log.prefix_hash(hw) != lr.log.prefix_hash(hw))
                    {
                        found.push((
                            "weak_isr",
                            format!("{tp}: member {b} of leader {l}'s ISR lacks its records below HW {hw}"),
                        ));
                    }
                }
            }
        }
        // Acknowledged records: recount when the leader or its log end moved back.
        let leader_leo = reg
            .leader
            .and_then(|l| replicas.iter().find(|x| x.0 == l))
            .map_or(0, |x| x.1.log.log_end_offset());
        let key = (
            reg.leader,
            reg.leader_epoch,
            leader_leo,
            c.acked[p].len() as u64,
        );
        let previous = c.invariants.watch[p].last_checked;
        let recount = match previous {
            None => !c.acked[p].is_empty(),
            Some(prev) => prev.0 != key.0 || prev.1 != key.1 || key.2 < prev.2,
        };
        let watch = &mut c.invariants.watch[p];
        watch.controller_epoch = watch.controller_epoch.max(reg.leader_epoch);
        watch.leader_hw = new_leader_hw;
        watch.last_checked = Some(key);
        if recount {
            let lost = lost_records(c, p);
            let count = lost.len() as u64;
            let before = c.invariants.watch[p].lost;
            c.invariants.watch[p].lost = count;
            if count > before {
                let cause = loss_cause(c, p, &lost);
                let n = count - before;
                c.trace.push(
                    now,
                    TraceKind::AckedRecordsLost {
                        topic: c.partitions[p].topic.clone(),
                        partition: c.partitions[p].partition,
                        count: n,
                        cause: cause.clone(),
                    },
                    format!("{n} acknowledged record(s) of {tp} are lost — {cause}."),
                );
                let all_acks = lost.iter().any(|x| x.2 == Acks::All);
                if c.invariants.promised(p) && all_acks {
                    found.push((
                        "no_acked_record_lost",
                        format!("{tp}: {n} record(s) acknowledged with acks=all are not in the leader's log ({cause})"),
                    ));
                }
            }
        }
        for (inv, detail) in found {
            c.invariants.violate(now, p, inv, detail);
        }
    }
}

fn loss_cause(c: &Cluster, p: PartitionIndex, lost: &[(u64, u64, Acks)]) -> String {
    let w = &c.invariants.watch[p];
    if let Some(reason) = w.unclean.as_ref().or(w.power_loss.as_ref()) {
        return reason.clone();
    }
    if lost.iter().all(|x| x.2 != Acks::All) {
        return "acks=1: the leader acknowledged before any follower had the records, then died; the new leader never had them".to_string();
    }
    match c.config.truncation {
        super::config::TruncationMode::HighWatermark => {
            "pre-KIP-101 truncation to the high watermark removed committed records".to_string()
        }
        super::config::TruncationMode::LeaderEpoch => {
            "records missing from the leader's log".to_string()
        }
    }
}
