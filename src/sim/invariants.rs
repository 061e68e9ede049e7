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

use std::fmt::Display;

use serde::Serialize;

use super::client::Acked;
use super::cluster::Cluster;
use super::config::Acks;
use super::log::Log;
use super::partition::Role;
use super::protocol::{BrokerId, PartitionIndex, PartitionRegistration};
use super::shared::Pages;
use super::trace::TraceKind;

#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Violation {
    pub at_ms: u64,
    pub invariant: String,
    pub detail: String,
}

#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct PartitionWatch {
    /// (leader, its process incarnation, epoch, hw) last seen on the
    /// controller's leader: a restarted process is a new leader instance.
    leader_hw: Option<(BrokerId, u32, u32, u64)>,
    controller_epoch: u32,
    /// Why the rules are relaxed here, if they are (rare: boxed, so the
    /// watch's pages, copied whole after a snapshot, carry 8 bytes for it
    /// rather than 48; issue 27).
    excuses: Option<Box<Excuses>>,
    lost: u64,
    last_checked: Option<(Option<BrokerId>, u32, u64, u64)>,
}

#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct Excuses {
    /// An unclean election happened: replicas may legitimately diverge.
    unclean: Option<String>,
    /// A replica lost power: acknowledged records may legitimately be lost
    /// (Kafka does not fsync each write), but logs must still converge.
    power_loss: Option<String>,
}

impl PartitionWatch {
    fn unclean(&self) -> Option<&String> {
        self.excuses.as_ref()?.unclean.as_ref()
    }

    fn power_loss(&self) -> Option<&String> {
        self.excuses.as_ref()?.power_loss.as_ref()
    }

    fn excuses(&mut self) -> &mut Excuses {
        self.excuses.get_or_insert_with(Box::default)
    }
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct InvariantState {
    /// In pages shared with snapshots.
    watch: Pages<PartitionWatch, 32>,
    pub violations: Vec<Violation>,
    /// Distinct (invariant, partition) already reported, to keep the list short.
    reported: Vec<(String, PartitionIndex)>,
}

impl InvariantState {
    pub fn new(partitions: usize) -> Self {
        InvariantState {
            watch: Pages::filled(partitions, PartitionWatch::default()),
            violations: Vec::new(),
            reported: Vec::new(),
        }
    }

    pub fn power_loss(&mut self, p: PartitionIndex, b: BrokerId) {
        if let Some(w) = self.watch.get_mut(p) {
            w.excuses()
                .power_loss
                .get_or_insert_with(|| format!("power loss of broker {b}"));
        }
    }

    pub fn lost(&self, p: PartitionIndex) -> u64 {
        self.watch.get(p).map_or(0, |w| w.lost)
    }

    pub fn total_lost(&self) -> u64 {
        self.watch.iter().map(|w| w.lost).sum()
    }

    /// Whether acknowledged acks=all records must survive (clean elections
    /// only, no power loss on this partition).
    pub fn promised(&self, p: PartitionIndex) -> bool {
        self.watch
            .get(p)
            .is_some_and(|w| w.unclean().is_none() && w.power_loss().is_none())
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

/// Records acknowledged to a producer that the partition no longer has: not in
/// the current leader's log at their offset, or — while the partition is
/// offline — in no replica's log at all.
pub fn lost_records(c: &Cluster, p: PartitionIndex) -> Vec<(u64, u64, Acks)> {
    missing_acked(c.acked[p].iter(), &holder_logs(c, p))
}

/// The logs that decide whether partition `p` still has a record: the
/// current leader's, or every replica's while it has none.
pub fn holder_logs(c: &Cluster, p: PartitionIndex) -> Vec<&Log> {
    let reg = &c.controller.partitions[p];
    match reg.leader {
        Some(l) => log_on(c, l, p).into_iter().collect(),
        None => reg
            .replicas
            .iter()
            .filter_map(|&b| log_on(c, b, p))
            .collect(),
    }
}

/// Partition `p`'s log on broker `b`, if `b` hosts a replica of it.
fn log_on(c: &Cluster, b: BrokerId, p: PartitionIndex) -> Option<&Log> {
    c.broker(b).and_then(|x| x.replicas.get(&p)).map(|r| &r.log)
}

/// One replica as the invariants see it.
#[derive(Clone, Copy, Debug)]
pub struct ReplicaState<'a> {
    pub broker: BrokerId,
    pub log: &'a Log,
    pub running: bool,
    pub role: Role,
    pub leader_epoch: u32,
    /// The ISR this replica believes in (meaningful on a leader).
    pub isr: &'a [BrokerId],
    /// A follower that has appended from its leader in the current epoch.
    pub reconciled: bool,
}

/// HW ≤ LEO on every replica.
pub fn high_watermark_within_log_end(
    tp: &dyn Display,
    replicas: &[ReplicaState],
) -> Option<String> {
    replicas.iter().find_map(|r| {
        (r.log.high_watermark > r.log.log_end_offset()).then(|| {
            format!(
                "{tp} on broker {}: HW {} > LEO {}",
                r.broker,
                r.log.high_watermark,
                r.log.log_end_offset()
            )
        })
    })
}

/// No two live brokers lead the partition in the same leader epoch.
pub fn one_leader_per_epoch(tp: &dyn Display, replicas: &[ReplicaState]) -> Option<String> {
    // The same pairs, in the same order, as collecting the live leaders
    // first, without allocating per check.
    let leads = |r: &&ReplicaState| r.running && r.role == Role::Leader;
    for (i, a) in replicas.iter().enumerate().filter(|(_, r)| leads(r)) {
        if let Some(b) = replicas[i + 1..]
            .iter()
            .filter(leads)
            .find(|b| b.leader_epoch == a.leader_epoch)
        {
            return Some(format!(
                "{tp}: brokers {} and {} both lead in epoch {}",
                a.broker, b.broker, a.leader_epoch
            ));
        }
    }
    None
}

/// The controller's leader epoch never goes back.
pub fn leader_epoch_monotonic(tp: &dyn Display, previous: u32, current: u32) -> Option<String> {
    (current < previous).then(|| format!("{tp}: leader epoch went from {previous} to {current}"))
}

/// The controller's leader, when there is one, is in its ISR.
pub fn leader_in_isr(tp: &dyn Display, reg: &PartitionRegistration) -> Option<String> {
    let l = reg.leader?;
    (!reg.isr.contains(&l)).then(|| format!("{tp}: leader {l} is not in ISR {:?}", reg.isr))
}

/// A leader process's HW never decreases within its epoch. `previous` and
/// `current` are (leader, process incarnation, leader epoch, HW).
pub fn leader_high_watermark_monotonic(
    tp: &dyn Display,
    previous: Option<(BrokerId, u32, u32, u64)>,
    current: (BrokerId, u32, u32, u64),
) -> Option<String> {
    let (pl, pi, pe, phw) = previous?;
    let (l, i, e, hw) = current;
    (pl == l && pi == i && pe == e && hw < phw)
        .then(|| format!("{tp}: leader {l}'s HW fell from {phw} to {hw} in epoch {e}"))
}

/// Live replicas settled in the current leader epoch — its leader, and
/// followers that have reconciled with that leader — agree on every offset
/// below the smaller of their HWs. A replica still in an older epoch (a zombie
/// leader, a follower that has not heard of the new epoch) is not compared: it
/// will truncate when it catches up, and a loss it reveals is counted as one.
pub fn log_matching(tp: &dyn Display, epoch: u32, replicas: &[ReplicaState]) -> Option<String> {
    // The same pairs, in the same order, as collecting the settled replicas
    // first, without allocating per check (it runs for every touched partition).
    let settled = |r: &&ReplicaState| {
        r.running
            && r.leader_epoch == epoch
            && (r.role == Role::Leader || (r.role == Role::Follower && r.reconciled))
    };
    for (i, a) in replicas.iter().enumerate().filter(|(_, r)| settled(r)) {
        for b in replicas[i + 1..].iter().filter(settled) {
            let hw = a.log.high_watermark.min(b.log.high_watermark);
            if a.log.prefix_hash(hw) != b.log.prefix_hash(hw) {
                return Some(format!(
                    "{tp}: brokers {} and {} disagree below offset {hw}",
                    a.broker, b.broker
                ));
            }
        }
    }
    None
}

fn holds_prefix(member: &Log, leader: &Log, hw: u64) -> bool {
    member.log_end_offset() >= hw && member.prefix_hash(hw) == leader.prefix_hash(hw)
}

/// TLA+ StrongIsr: every member of the controller's ISR holds the
/// controller's leader's records below that leader's HW.
pub fn strong_isr(
    tp: &dyn Display,
    reg: &PartitionRegistration,
    replicas: &[ReplicaState],
) -> Option<String> {
    strong_isr_message(tp, reg, strong_isr_search(reg, replicas)?)
}

/// What StrongIsr looks at: the controller's leader, when it runs, and the
/// first member of the controller's ISR (in replica order) that lacks its
/// records below its HW, if one does.
#[derive(Clone, Copy)]
struct StrongIsrSearch<'a> {
    leader: &'a ReplicaState<'a>,
    lacking: Option<BrokerId>,
}

fn strong_isr_search<'a>(
    reg: &PartitionRegistration,
    replicas: &'a [ReplicaState<'a>],
) -> Option<StrongIsrSearch<'a>> {
    let l = reg.leader?;
    let leader = replicas.iter().find(|r| r.broker == l && r.running)?;
    let hw = leader.log.high_watermark;
    let lacking = replicas
        .iter()
        .find(|r| {
            r.broker != l && reg.isr.contains(&r.broker) && !holds_prefix(r.log, leader.log, hw)
        })
        .map(|r| r.broker);
    Some(StrongIsrSearch { leader, lacking })
}

fn strong_isr_message(
    tp: &dyn Display,
    reg: &PartitionRegistration,
    s: StrongIsrSearch,
) -> Option<String> {
    let m = s.lacking?;
    let l = reg.leader?;
    let hw = s.leader.log.high_watermark;
    Some(format!(
        "{tp}: ISR member {m} lacks leader {l}'s records below HW {hw}"
    ))
}

/// TLA+ WeakIsr: every member of a self-believed leader's own ISR holds that
/// leader's records below its HW.
pub fn weak_isr(tp: &dyn Display, replicas: &[ReplicaState]) -> Option<String> {
    weak_isr_knowing(tp, replicas, None)
}

/// [`weak_isr`], told what StrongIsr found (with the ISR it searched): for
/// the self-believed leader that is the controller's running leader, with
/// the controller's ISR as its own, WeakIsr's search is StrongIsr's — the
/// same leader log and HW, the same members, the same replicas in the same
/// order under the same test — so its answer is taken, not searched again
/// (the common case: each check otherwise compared the same logs twice).
fn weak_isr_knowing(
    tp: &dyn Display,
    replicas: &[ReplicaState],
    strong: Option<(StrongIsrSearch, &[BrokerId])>,
) -> Option<String> {
    for leader in replicas
        .iter()
        .filter(|r| r.running && r.role == Role::Leader)
    {
        let hw = leader.log.high_watermark;
        let known = strong
            .filter(|(s, isr)| s.leader.broker == leader.broker && *isr == leader.isr)
            .map(|(s, _)| s.lacking);
        let lacking = match known {
            Some(found) => found,
            None => replicas
                .iter()
                .find(|r| {
                    r.broker != leader.broker
                        && leader.isr.contains(&r.broker)
                        && !holds_prefix(r.log, leader.log, hw)
                })
                .map(|r| r.broker),
        };
        if let Some(m) = lacking {
            return Some(format!(
                "{tp}: member {m} of leader {}'s ISR lacks its records below HW {hw}",
                leader.broker
            ));
        }
    }
    None
}

/// Acknowledged records (offset, id, acks) that none of `holders` has at their
/// offset.
pub fn missing_acked<'a>(
    acked: impl IntoIterator<Item = &'a Acked>,
    holders: &[&Log],
) -> Vec<(u64, u64, Acks)> {
    acked
        .into_iter()
        .filter(|a| {
            !holders
                .iter()
                .any(|log| log.record_at(a.offset).is_some_and(|r| r.id == a.id))
        })
        .map(|a| (a.offset, a.id, a.acks))
        .collect()
}

/// `f` over the items, kept on the stack when there are at most 8 of them
/// (a partition's replicas), else in a `Vec`. A first buffer of four covers
/// Kafka's usual replication factors (the scenarios use 2 or 3); a buffer is
/// filled with copies of an item before use, so each unused slot is paid for
/// on every check (one buffer of 8 cost 52 more instructions per event on
/// the large bench, issue 27), and the second buffer of eight is only filled
/// for a fifth replica. A larger factor allocates.
fn with_small<T: Copy, R>(mut items: impl Iterator<Item = T>, f: impl FnOnce(&[T]) -> R) -> R {
    // One call of `f`, on whichever buffer the items filled (a single call
    // site keeps `f` inlined here).
    let mut four;
    let mut eight;
    let mut heap;
    let items: &[T] = match items.next() {
        None => &[],
        Some(first) => {
            four = [first; 4];
            let mut n = 1;
            'fill: loop {
                match items.next() {
                    None => break &four[..n],
                    Some(x) if n < four.len() => {
                        four[n] = x;
                        n += 1;
                    }
                    Some(x) => {
                        // A fifth replica: a second buffer, still no allocation.
                        eight = [x; 8];
                        eight[..4].copy_from_slice(&four);
                        let mut m = 5;
                        loop {
                            match items.next() {
                                None => break 'fill &eight[..m],
                                Some(y) if m < eight.len() => {
                                    eight[m] = y;
                                    m += 1;
                                }
                                Some(y) => {
                                    heap = eight.to_vec();
                                    heap.push(y);
                                    heap.extend(items.by_ref());
                                    break 'fill &heap;
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    f(items)
}

/// Check each partition of `checks`, in full or (`false`) lightly.
///
/// A light check is for a partition the event changed only by records a
/// replica wrote at its log end with its HW at or below where the log ended
/// before (`Ctx::touch_grown`: a leader's append; a reconciled follower's
/// that leaves its HW where it was), or by new acknowledgements:
/// it looks only at the acknowledged records and keeps the watch's key, and
/// reports what the full check would report. Why: the full check's findings
/// are a function of the replicas, the controller's registration and the
/// watch; every change of those that can make an invariant find something
/// touches the partition (that is what `dirty` is for; the untouched ones —
/// a restart's reset of its replicas to no role with the HW at or below the
/// log end, a flush, a HW checkpoint, an isolation — can only take findings
/// away), so before this event the full check would find what the
/// partition's last check found, all of it reported then (a violation is
/// reported once per invariant and partition, so finding it again adds
/// nothing). Such a write
/// moves no HW, role, epoch or ISR, and it leaves every prefix hash at or
/// below the writer's HW (the only offsets the checks hash: a pair's smaller
/// HW, a leader's HW for its own log) as it was. The only log reads it can
/// change are the writer's log end, which only grows (HW <= LEO keeps
/// holding) and `holds_prefix`'s "the member's log reaches the leader's HW",
/// which can only turn from lacking to holding. So no invariant of the
/// replicas finds anything it did not find at the last check, and the watch's
/// leader HW and epoch stay as they are (`writing_at_the_end_finds_nothing_new`
/// tests this on random replicas). Acknowledgements are looked at in full
/// either way.
pub fn check(c: &mut Cluster, checks: &[(PartitionIndex, bool)]) {
    let now = c.now;
    for &(p, full) in checks {
        if let Some((b, e)) = c.controller.unclean_elected[p] {
            let last_known = c.controller.last_known_leader_elected[p];
            c.invariants.watch[p].excuses().unclean.get_or_insert_with(|| {
                if last_known {
                    format!("election of the last known leader, broker {b}, at leader epoch {e} (KIP-966: an unclean choice made without unclean.leader.election.enable)")
                } else {
                    format!("unclean election of broker {b} at leader epoch {e}")
                }
            });
        }
        let (mut found, new_leader_hw, key, leader_epoch) = if full {
            check_replicas(c, p)
        } else {
            let reg = &c.controller.partitions[p];
            // As the full check finds it: the leader's log when the leader
            // is among the replicas and hosts one.
            let leader_leo = reg
                .leader
                .filter(|l| reg.replicas.contains(l))
                .and_then(|l| log_on(c, l, p))
                .map_or(0, |l| l.log_end_offset());
            let key = (
                reg.leader,
                reg.leader_epoch,
                leader_leo,
                c.acked[p].len() as u64,
            );
            let watch = &c.invariants.watch[p];
            (Vec::new(), watch.leader_hw, key, reg.leader_epoch)
        };
        let watch = &mut c.invariants.watch[p];
        let previous = watch.last_checked;
        let recount = match previous {
            None => !c.acked[p].is_empty(),
            Some(prev) => prev.0 != key.0 || prev.1 != key.1 || key.2 < prev.2,
        };
        watch.controller_epoch = watch.controller_epoch.max(leader_epoch);
        watch.leader_hw = new_leader_hw;
        watch.last_checked = Some(key);
        // Acknowledgements that arrived since the last check, when nothing
        // else moved: an acks=1 answer from a leader that lost the record
        // before the answer came back (the controller moved leadership, the
        // old leader truncated) is a loss already, with no leader change
        // left to notice it.
        let fresh = previous
            .map(|prev| prev.3 as usize)
            .filter(|from| !recount && key.3 as usize > *from);
        if recount || fresh.is_some() {
            let before = c.invariants.watch[p].lost;
            // `lost`: the records the narration explains (all of them on a
            // recount, the new ones on an incremental check).
            let (count, lost) = match fresh {
                Some(from) => {
                    let acked = c.acked[p].range(from, key.3 as usize);
                    // The leader's log, when there is a leader: no vector
                    // of holders per acknowledgement.
                    let newly = match c.controller.partitions[p].leader {
                        Some(l) => missing_acked(acked, log_on(c, l, p).as_slice()),
                        None => missing_acked(acked, &holder_logs(c, p)),
                    };
                    (before + newly.len() as u64, newly)
                }
                None => {
                    let all = lost_records(c, p);
                    (all.len() as u64, all)
                }
            };
            c.invariants.watch[p].lost = count;
            if count > before {
                let tp = c.partitions[p].name();
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

/// What the watch keeps of a leader: (leader, process incarnation, leader
/// epoch, HW).
type LeaderHw = Option<(BrokerId, u32, u32, u64)>;

/// The watch's key for the acknowledged records: (leader, leader epoch, the
/// leader's log end, acknowledgements so far).
type AckKey = (Option<BrokerId>, u32, u64, u64);

/// The full check's read-only phase on partition `p`: what every invariant
/// of the replicas finds, the leader HW to watch, the acknowledged records'
/// key and the controller's leader epoch.
#[allow(clippy::type_complexity)]
fn check_replicas(
    c: &Cluster,
    p: PartitionIndex,
) -> (Vec<(&'static str, String)>, LeaderHw, AckKey, u32) {
    let reg = &c.controller.partitions[p];
    let states = reg.replicas.iter().filter_map(|b| {
        let broker = c.broker(*b)?;
        let r = broker.replicas.get(&p)?;
        Some(ReplicaState {
            broker: *b,
            log: &r.log,
            running: broker.is_running(),
            role: r.role,
            leader_epoch: r.leader_epoch,
            isr: &r.isr,
            reconciled: r.reconciled,
        })
    });
    // Read-only phase on a stack buffer of the replicas (no allocation
    // per touched partition).
    with_small(states, |replicas| {
        let mut found: Vec<(&'static str, String)> = Vec::new();
        // `topic-partition`, formatted only when a message needs it (the checks
        // run after every event; formatting eagerly was a measurable share).
        let tp = c.partitions[p].tp();
        let tp: &dyn Display = &tp;
        let watch = &c.invariants.watch[p];
        let mut push = |name: &'static str, v: Option<String>| {
            if let Some(d) = v {
                found.push((name, d));
            }
        };
        push(
            "high_watermark_within_log_end",
            high_watermark_within_log_end(tp, replicas),
        );
        push("one_leader_per_epoch", one_leader_per_epoch(tp, replicas));
        push(
            "leader_epoch_monotonic",
            leader_epoch_monotonic(tp, watch.controller_epoch, reg.leader_epoch),
        );
        push("leader_in_isr", leader_in_isr(tp, reg));
        let mut new_leader_hw = watch.leader_hw;
        if let Some(r) = reg
            .leader
            .and_then(|l| replicas.iter().find(|x| x.broker == l && x.running))
        {
            if r.role == Role::Leader && r.leader_epoch == reg.leader_epoch {
                let inc = c.broker(r.broker).map_or(0, |b| b.incarnation);
                let current = (r.broker, inc, r.leader_epoch, r.log.high_watermark);
                push(
                    "leader_high_watermark_monotonic",
                    leader_high_watermark_monotonic(tp, watch.leader_hw, current),
                );
                new_leader_hw = Some(current);
            }
        }
        // Whether the replicas must agree (no unclean election here) and,
        // with no power loss either, `promised(p)`: read off the watch
        // already in hand rather than looked up again.
        let consistent = watch.unclean().is_none();
        if consistent {
            push("log_matching", log_matching(tp, reg.leader_epoch, replicas));
        }
        if consistent && watch.power_loss().is_none() {
            let strong = strong_isr_search(reg, replicas);
            push(
                "strong_isr",
                strong.and_then(|s| strong_isr_message(tp, reg, s)),
            );
            let known = strong.map(|s| (s, &reg.isr[..]));
            push("weak_isr", weak_isr_knowing(tp, replicas, known));
        }
        // Acknowledged records: recount when the leader or its log end moved back.
        let leader_leo = reg
            .leader
            .and_then(|l| replicas.iter().find(|x| x.broker == l))
            .map_or(0, |x| x.log.log_end_offset());
        let key = (
            reg.leader,
            reg.leader_epoch,
            leader_leo,
            c.acked[p].len() as u64,
        );
        (found, new_leader_hw, key, reg.leader_epoch)
    })
}

fn loss_cause(c: &Cluster, p: PartitionIndex, lost: &[(u64, u64, Acks)]) -> String {
    let w = &c.invariants.watch[p];
    if let Some(reason) = w.unclean().or(w.power_loss()) {
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

#[cfg(test)]
mod tests {
    //! Each invariant catches a deliberately broken state and accepts a sound one.
    use super::*;
    use crate::sim::log::Record;

    #[test]
    fn the_replica_buffer_hands_over_every_item_in_order_on_the_stack_or_the_heap() {
        // The checker sees a partition's replicas through `with_small`: none,
        // a few (the first stack buffer), five to eight (the second) and
        // more (heap) must all arrive whole.
        for n in [0usize, 1, 3, 4, 5, 6, 7, 8, 9, 20] {
            let got = with_small(0..n, |xs| xs.to_vec());
            assert_eq!(got, (0..n).collect::<Vec<_>>(), "{n} items");
        }
    }
    use crate::sim::protocol::LeaderRecoveryState;

    fn log(ids: &[u64], hw: u64) -> Log {
        let mut l = Log::default();
        for id in ids {
            l.append(Record {
                id: *id,
                epoch: 0,
                producer_id: 0,
                seq: 0,
                batch_start: true,
                timestamp_ms: 0,
            });
        }
        l.high_watermark = hw;
        l
    }

    fn st<'a>(broker: BrokerId, log: &'a Log, role: Role, isr: &'a [BrokerId]) -> ReplicaState<'a> {
        ReplicaState {
            broker,
            log,
            running: true,
            role,
            leader_epoch: 1,
            isr,
            reconciled: true,
        }
    }

    fn reg(leader: Option<BrokerId>, isr: &[BrokerId]) -> PartitionRegistration {
        PartitionRegistration {
            replicas: vec![1, 2, 3],
            isr: isr.to_vec(),
            leader,
            leader_epoch: 1,
            partition_epoch: 1,
            leader_recovery_state: LeaderRecoveryState::Recovered,
            elr: Vec::new(),
            last_known_elr: Vec::new(),
        }
    }

    #[test]
    fn high_watermark_above_log_end_is_caught() {
        let ok = log(&[1, 2], 2);
        let bad = log(&[1, 2], 3);
        assert!(high_watermark_within_log_end(&"t-0", &[st(1, &ok, Role::Leader, &[])]).is_none());
        assert!(high_watermark_within_log_end(&"t-0", &[st(1, &bad, Role::Leader, &[])]).is_some());
    }

    #[test]
    fn two_leaders_in_one_epoch_are_caught() {
        let l = log(&[1], 1);
        let a = st(1, &l, Role::Leader, &[]);
        let mut b = st(2, &l, Role::Leader, &[]);
        assert!(one_leader_per_epoch(&"t-0", &[a, b]).is_some());
        b.leader_epoch = 2;
        assert!(
            one_leader_per_epoch(&"t-0", &[a, b]).is_none(),
            "a zombie in an older epoch is fine"
        );
    }

    #[test]
    fn a_leader_epoch_going_back_is_caught() {
        assert!(leader_epoch_monotonic(&"t-0", 3, 2).is_some());
        assert!(leader_epoch_monotonic(&"t-0", 3, 3).is_none());
    }

    #[test]
    fn a_leader_outside_its_isr_is_caught() {
        assert!(leader_in_isr(&"t-0", &reg(Some(1), &[2, 3])).is_some());
        assert!(leader_in_isr(&"t-0", &reg(Some(1), &[1, 2])).is_none());
        assert!(leader_in_isr(&"t-0", &reg(None, &[2])).is_none());
    }

    #[test]
    fn a_falling_leader_high_watermark_is_caught_within_one_process_and_epoch() {
        assert!(
            leader_high_watermark_monotonic(&"t-0", Some((1, 1, 4, 10)), (1, 1, 4, 9)).is_some()
        );
        assert!(
            leader_high_watermark_monotonic(&"t-0", Some((1, 1, 4, 10)), (1, 2, 4, 9)).is_none()
        );
        assert!(
            leader_high_watermark_monotonic(&"t-0", Some((1, 1, 4, 10)), (1, 1, 5, 9)).is_none()
        );
    }

    #[test]
    fn replicas_disagreeing_below_their_high_watermarks_are_caught() {
        let a = log(&[1, 2, 3], 3);
        let b = log(&[1, 9, 3], 2);
        let c = log(&[1, 2], 2);
        assert!(log_matching(
            &"t-0",
            1,
            &[st(1, &a, Role::Leader, &[]), st(2, &b, Role::Follower, &[])]
        )
        .is_some());
        assert!(log_matching(
            &"t-0",
            1,
            &[st(1, &a, Role::Leader, &[]), st(3, &c, Role::Follower, &[])]
        )
        .is_none());
        // a follower that has not reconciled yet may still hold a stale tail
        let mut unsettled = st(2, &b, Role::Follower, &[]);
        unsettled.reconciled = false;
        assert!(log_matching(&"t-0", 1, &[st(1, &a, Role::Leader, &[]), unsettled]).is_none());
        // a zombie leader of an older epoch is not compared either
        let mut zombie = st(2, &b, Role::Leader, &[]);
        zombie.leader_epoch = 0;
        assert!(log_matching(&"t-0", 1, &[st(1, &a, Role::Leader, &[]), zombie]).is_none());
    }

    #[test]
    fn an_isr_member_missing_committed_records_breaks_strong_isr() {
        let leader = log(&[1, 2, 3], 3);
        let short = log(&[1, 2], 2);
        let full = log(&[1, 2, 3], 3);
        let isr = [1, 2];
        let replicas = [
            st(1, &leader, Role::Leader, &isr),
            st(2, &short, Role::Follower, &[]),
        ];
        assert!(strong_isr(&"t-0", &reg(Some(1), &[1, 2]), &replicas).is_some());
        assert!(weak_isr(&"t-0", &replicas).is_some());
        let replicas = [
            st(1, &leader, Role::Leader, &isr),
            st(2, &full, Role::Follower, &[]),
        ];
        assert!(strong_isr(&"t-0", &reg(Some(1), &[1, 2]), &replicas).is_none());
        assert!(weak_isr(&"t-0", &replicas).is_none());
        // outside the ISR, a short log is allowed
        let replicas = [
            st(1, &leader, Role::Leader, &[1]),
            st(2, &short, Role::Follower, &[]),
        ];
        assert!(strong_isr(&"t-0", &reg(Some(1), &[1]), &replicas).is_none());
        assert!(weak_isr(&"t-0", &replicas).is_none());
    }

    #[test]
    fn weak_isr_takes_strong_isrs_answer_only_for_the_same_leader_and_isr() {
        let leader = log(&[1, 2, 3], 3);
        let short = log(&[1, 2], 2);
        let full = log(&[1, 2, 3], 3);
        // The leader believes in ISR {1, 2}; the controller says {1, 3}.
        let own = [1, 2];
        let replicas = [
            st(1, &leader, Role::Leader, &own),
            st(2, &short, Role::Follower, &[]),
            st(3, &full, Role::Follower, &[]),
        ];
        let r = reg(Some(1), &[1, 3]);
        let strong = strong_isr_search(&r, &replicas);
        assert!(strong.is_some_and(|s| s.lacking.is_none()));
        let known = strong.map(|s| (s, &r.isr[..]));
        // Another ISR: searched, and member 2 is found lacking.
        assert_eq!(
            weak_isr_knowing(&"t-0", &replicas, known),
            weak_isr(&"t-0", &replicas)
        );
        assert!(weak_isr(&"t-0", &replicas).is_some());
        // The same ISR: StrongIsr's answer is WeakIsr's, with or without a gap.
        for (ids, lacking) in [(&[1u32, 2][..], true), (&[1, 3][..], false)] {
            let same = reg(Some(1), ids);
            let replicas = [
                st(1, &leader, Role::Leader, ids),
                st(2, &short, Role::Follower, &[]),
                st(3, &full, Role::Follower, &[]),
            ];
            let strong = strong_isr_search(&same, &replicas);
            let known = strong.map(|s| (s, &same.isr[..]));
            let got = weak_isr_knowing(&"t-0", &replicas, known);
            assert_eq!(got, weak_isr(&"t-0", &replicas));
            assert_eq!(got.is_some(), lacking);
        }
    }

    #[test]
    fn weak_isr_searches_again_for_a_second_self_believed_leader() {
        // The controller's leader 1 and member 3 agree; broker 2, a zombie
        // leader of an older epoch with the same ISR {1, 3}, holds another
        // record below its HW: WeakIsr finds member 1 lacking it, though
        // StrongIsr (leader 1's) found no gap.
        let leader = log(&[1, 2, 3], 3);
        let zombie = log(&[1, 9], 2);
        let full = log(&[1, 2, 3], 3);
        let isr = [1, 3];
        let mut old = st(2, &zombie, Role::Leader, &isr);
        old.leader_epoch = 0;
        let replicas = [
            st(1, &leader, Role::Leader, &isr),
            old,
            st(3, &full, Role::Follower, &[]),
        ];
        let r = reg(Some(1), &isr);
        let strong = strong_isr_search(&r, &replicas);
        assert!(strong.is_some_and(|s| s.lacking.is_none()));
        let known = strong.map(|s| (s, &r.isr[..]));
        let got = weak_isr_knowing(&"t-0", &replicas, known);
        assert_eq!(got, weak_isr(&"t-0", &replicas));
        assert!(got.is_some_and(|d| d.contains("member 1 of leader 2")));
    }

    #[test]
    fn acknowledged_records_missing_from_the_leader_are_counted() {
        let acked = [
            Acked {
                offset: 0,
                id: 1,
                acks: Acks::All,
                producer: 0,
                at_ms: 0,
            },
            Acked {
                offset: 1,
                id: 2,
                acks: Acks::All,
                producer: 0,
                at_ms: 0,
            },
        ];
        let leader = log(&[1, 7], 2);
        let lost = missing_acked(&acked, &[&leader]);
        assert_eq!(
            lost,
            vec![(1, 2, Acks::All)],
            "offset 1 holds another record"
        );
        let other = log(&[1, 2], 2);
        assert!(missing_acked(&acked, &[&leader, &other]).is_empty());
    }

    /// One replica for the property below: the first `shared` records of a
    /// common history, then `own` records only it has; its HW, role, leader
    /// epoch, liveness, reconciliation and (as a bit mask of brokers 1–3)
    /// the ISR it believes in.
    type Shape = (u64, u64, u64, u8, u32, bool, bool, u8);

    fn shaped_log(b: BrokerId, shape: &Shape) -> Log {
        let (shared, own, hw, ..) = *shape;
        let ids: Vec<u64> = (1..=shared)
            .chain((1..=own).map(|j| u64::from(b) * 100 + j))
            .collect();
        log(&ids, hw)
    }

    fn members(mask: u8) -> Vec<BrokerId> {
        (1..=3).filter(|b| mask & (1 << (b - 1)) != 0).collect()
    }

    fn states<'a>(
        shapes: &[Shape],
        logs: &'a [Log],
        isrs: &'a [Vec<BrokerId>],
    ) -> Vec<ReplicaState<'a>> {
        (0..3)
            .map(|i| {
                let (_, _, _, role, leader_epoch, running, reconciled, _) = shapes[i];
                ReplicaState {
                    broker: i as BrokerId + 1,
                    log: &logs[i],
                    running,
                    role: [Role::Leader, Role::Follower, Role::Unknown][role as usize],
                    leader_epoch,
                    isr: &isrs[i],
                    reconciled,
                }
            })
            .collect()
    }

    /// Every invariant of the replicas that `invariants::check` evaluates,
    /// by name, with what it finds.
    fn replica_findings(
        reg: &PartitionRegistration,
        replicas: &[ReplicaState],
    ) -> Vec<(&'static str, bool)> {
        let tp = "t-0";
        vec![
            (
                "high_watermark_within_log_end",
                high_watermark_within_log_end(&tp, replicas).is_some(),
            ),
            (
                "one_leader_per_epoch",
                one_leader_per_epoch(&tp, replicas).is_some(),
            ),
            (
                "log_matching",
                log_matching(&tp, reg.leader_epoch, replicas).is_some(),
            ),
            ("strong_isr", strong_isr(&tp, reg, replicas).is_some()),
            ("weak_isr", weak_isr(&tp, replicas).is_some()),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        /// The lemma behind the light check (`check`'s doc): records written
        /// at a replica's log end, with its HW at or below where the log
        /// ended, make no invariant of the replicas find what it did not find
        /// before. A light check that skipped a write which could (one above
        /// a HW past the log end, a HW moved) would fail here.
        #[test]
        fn writing_at_the_end_finds_nothing_new(
            shapes in proptest::collection::vec(
                (0u64..6, 0u64..3, 0u64..10, 0u8..3, 1u32..3, proptest::bool::ANY, proptest::bool::ANY, 0u8..8),
                3,
            ),
            leader in 0u32..4,
            isr in 0u8..8,
            epoch in 1u32..3,
            writer in 0usize..3,
            written in 1u64..4,
        ) {
            let mut shapes: Vec<Shape> = shapes;
            // The writer's HW at or below its log end (the others' anywhere).
            let (shared, own, hw, ..) = shapes[writer];
            shapes[writer].2 = hw % (shared + own + 1);
            let writer_shape = shapes[writer];
            let logs: Vec<Log> = (0..3).map(|i| shaped_log(i as BrokerId + 1, &shapes[i])).collect();
            let isrs: Vec<Vec<BrokerId>> = shapes.iter().map(|s| members(s.7)).collect();
            let mut registration = reg((leader > 0).then_some(leader), &members(isr));
            registration.leader_epoch = epoch;
            let before = replica_findings(&registration, &states(&shapes, &logs, &isrs));
            let mut grown = logs.clone();
            for j in 0..written {
                grown[writer].append(Record {
                    id: 1000 + j,
                    epoch: writer_shape.4,
                    producer_id: 0,
                    seq: 0,
                    batch_start: j == 0,
                    timestamp_ms: 0,
                });
            }
            let after = replica_findings(&registration, &states(&shapes, &grown, &isrs));
            for ((name, was), (_, is)) in before.iter().zip(&after) {
                proptest::prop_assert!(!is || *was, "{} finds something new after the write", name);
            }
        }
    }

    /// Why the light check asks for a HW at or below the log end: two
    /// replicas whose HWs are past their (empty) logs agree below them
    /// (neither has the records, both hash alike), and a write to one of
    /// them makes them disagree. `append_as_leader` touches such a write in
    /// full.
    #[test]
    fn a_write_below_a_high_watermark_past_the_log_end_can_find_something_new() {
        let isr = [1, 2];
        let (a, b) = (log(&[], 2), log(&[], 2));
        let leader = st(1, &a, Role::Leader, &isr);
        let follower = st(2, &b, Role::Follower, &isr);
        assert!(log_matching(&"t-0", 1, &[leader, follower]).is_none());
        let grown = log(&[1, 2], 2);
        let leader = st(1, &grown, Role::Leader, &isr);
        assert!(log_matching(&"t-0", 1, &[leader, follower]).is_some());
    }
}
