//! How long a fault cost: unavailability windows per partition, recovery time
//! per fault split into its four phases, and producer latency.
//!
//! This module only *observes*. The cluster tells it, after each event, the
//! state of the partitions that event touched ([`PartitionState`]); it turns
//! that into windows with a cause, in the order a Kafka operator would check:
//!
//! 1. `offline` — the controller names no leader (no eligible replica);
//! 2. `leader_down` — it names a leader whose process is dead, powered off or
//!    cut off from the network: nothing can be written until the controller
//!    notices (`broker.session.timeout.ms`) and moves leadership;
//! 3. `leader_moving` — a new leader is elected, but that broker has not yet
//!    applied the metadata change, so it still answers NOT_LEADER_OR_FOLLOWER;
//! 4. `below_min_isr` — an `acks=all` producer writes to a partition whose ISR
//!    is smaller than its effective `min.insync.replicas` (min(RF,
//!    min.insync.replicas)): NOT_ENOUGH_REPLICAS;
//! 5. `isr_member_down` — an `acks=all` producer writes to a partition whose
//!    ISR still names a follower that cannot fetch (its process is dead, it is
//!    cut off, or its fetching is paused): the leader waits for every ISR
//!    member, so nothing is acknowledged until that follower is back or is
//!    removed from the ISR (fenced by the controller, or shrunk by the leader
//!    after `replica.lag.time.max.ms`).
//!
//! One definition covers all five: *a write with the producer's settings would
//! not be acknowledged now*. The strip draws these windows; their lengths,
//! summed over partitions, are the report's `unavailable_ms`
//! (partition-milliseconds); a fault's recovery time (RTO) runs from the fault
//! to the first acknowledged write of the last partition it stalled, so it also
//! covers the client finding the new leader after the last window closed.
//!
//! A fault (crash, power loss, isolation, controlled shutdown; several at the
//! same millisecond count as one) takes away the partitions its brokers led,
//! and stalls those where one of its brokers is an ISR follower and an
//! `acks=all` producer writes.
//! Its recovery time ends when every one of them has acknowledged a produce
//! again, and splits into **detection** (until the controller acts: fences the
//! broker, or for a controlled shutdown starts moving its leaders),
//! **election** (until the last of them has a live leader named),
//! **metadata** (until the last new leader has applied the change) and
//! **client** (until the producer found it and got an acknowledgement).
//! The four add up to the recovery time exactly, by construction.
//!
//! Latencies go into [`Histogram`], a small HDR-style histogram (see its doc
//! for why not the `hdrhistogram` crate).

use serde::Serialize;

use super::protocol::{BrokerId, PartitionIndex};
use super::shared::Pages;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Offline,
    LeaderDown,
    LeaderMoving,
    BelowMinIsr,
    IsrMemberDown,
}

/// How many causes there are (the strip's counts per cause).
pub const CAUSES: usize = 5;

impl Cause {
    pub const ALL: [Cause; CAUSES] = [
        Cause::LeaderDown,
        Cause::Offline,
        Cause::BelowMinIsr,
        Cause::LeaderMoving,
        Cause::IsrMemberDown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Offline => "offline",
            Cause::LeaderDown => "leader_down",
            Cause::LeaderMoving => "leader_moving",
            Cause::BelowMinIsr => "below_min_isr",
            Cause::IsrMemberDown => "isr_member_down",
        }
    }

    fn slot(self) -> usize {
        match self {
            Cause::LeaderDown => 0,
            Cause::Offline => 1,
            Cause::BelowMinIsr => 2,
            Cause::LeaderMoving => 3,
            Cause::IsrMemberDown => 4,
        }
    }

    /// The partition has no usable leader named by the controller.
    fn leaderless(self) -> bool {
        matches!(self, Cause::Offline | Cause::LeaderDown)
    }
}

/// What the cluster tells the accountant about one partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct PartitionState {
    /// The leader the controller names (its committed registration).
    pub leader: Option<BrokerId>,
    pub leader_epoch: u32,
    /// That broker's process runs, takes connections (unfenced since it
    /// started) and the network reaches it.
    pub leader_up: bool,
    /// That broker has applied the registration: it leads in this epoch.
    pub leader_applied: bool,
    pub isr_len: u32,
    pub min_insync_replicas: u32,
    /// An `acks=all` producer writes to this partition.
    pub acks_all: bool,
    /// A follower the ISR names cannot fetch: its process is dead, it is cut
    /// off, or its fetching of this partition is paused.
    pub isr_member_down: bool,
}

impl PartitionState {
    /// Why a write at the producer's `acks` cannot be acknowledged now, if it can't.
    pub fn cause(&self) -> Option<Cause> {
        match self.leader {
            None => Some(Cause::Offline),
            Some(_) if !self.leader_up => Some(Cause::LeaderDown),
            Some(_) if !self.leader_applied => Some(Cause::LeaderMoving),
            Some(_) if self.acks_all && self.isr_len < self.min_insync_replicas => {
                Some(Cause::BelowMinIsr)
            }
            Some(_) if self.acks_all && self.isr_member_down => Some(Cause::IsrMemberDown),
            Some(_) => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Window {
    pub from_ms: u64,
    pub to_ms: Option<u64>,
    pub cause: Cause,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum FaultAction {
    Crash,
    PowerLoss,
    Isolate,
    Shutdown,
}

impl FaultAction {
    pub fn as_str(self) -> &'static str {
        match self {
            FaultAction::Crash => "crash",
            FaultAction::PowerLoss => "power_loss",
            FaultAction::Isolate => "isolate",
            FaultAction::Shutdown => "shutdown",
        }
    }
}

/// Where one partition of a fault is on its way back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
enum Stage {
    /// Waiting for the controller to name a live leader.
    Leaderless,
    /// Elected; waiting for the leader to apply it.
    Elected,
    /// Applied; waiting for an acknowledged produce.
    Applied,
    Writable,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct FaultPartition {
    partition: PartitionIndex,
    /// Leader epoch when the fault happened.
    epoch: u32,
    stage: Stage,
    /// It has been leaderless since the fault (an isolated leader healed
    /// before the controller acted comes back in the same epoch).
    saw_leaderless: bool,
    /// The fault's broker was an ISR follower here, not its leader: the
    /// partition keeps its leader and stalls until the ISR no longer waits.
    stalled: bool,
    elected_at: u64,
    applied_at: u64,
    writable_at: u64,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Fault {
    pub at_ms: u64,
    pub actions: Vec<FaultAction>,
    pub brokers: Vec<BrokerId>,
    /// In partition order.
    parts: Vec<FaultPartition>,
    /// Partitions not yet writable again.
    remaining: usize,
    /// The controller first acted on it (fenced a broker or moved a leader).
    acted_at: Option<u64>,
}

/// Two lists of a fault's partitions, each in partition order, as one.
fn merge_by_partition(a: Vec<FaultPartition>, b: Vec<FaultPartition>) -> Vec<FaultPartition> {
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut b = b.into_iter().peekable();
    for x in a {
        while let Some(y) = b.next_if(|y| y.partition < x.partition) {
            out.push(y);
        }
        out.push(x);
    }
    for y in b {
        out.push(y);
    }
    out
}

impl Fault {
    /// The partitions it took away: those its brokers led.
    pub fn partitions(&self) -> impl Iterator<Item = PartitionIndex> + '_ {
        self.parts
            .iter()
            .filter(|f| !f.stalled)
            .map(|f| f.partition)
    }

    /// The partitions it stalled without leading them (an ISR follower died).
    pub fn stalled_partitions(&self) -> impl Iterator<Item = PartitionIndex> + '_ {
        self.parts.iter().filter(|f| f.stalled).map(|f| f.partition)
    }

    /// Per partition that is writable again, its own recovery time.
    pub fn partition_rto_ms(&self) -> Vec<u64> {
        self.parts
            .iter()
            .filter(|p| p.stage == Stage::Writable)
            .map(|p| p.writable_at.saturating_sub(self.at_ms))
            .collect()
    }
}

/// One fault's recovery, as the report shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct FaultRecovery {
    pub at_ms: u64,
    pub fenced_at_ms: Option<u64>,
    pub elected_at_ms: Option<u64>,
    pub applied_at_ms: Option<u64>,
    pub writable_at_ms: Option<u64>,
    pub rto_ms: Option<u64>,
    pub phases: Phases,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Phases {
    pub detection_ms: Option<u64>,
    pub election_ms: Option<u64>,
    pub metadata_ms: Option<u64>,
    pub client_ms: Option<u64>,
}

impl Fault {
    /// The recovery so far: each milestone is the latest of its partitions,
    /// and each is at least the one before, so the phases add up.
    pub fn recovery(&self) -> FaultRecovery {
        let at = self.at_ms;
        let all = |stage: Stage, f: fn(&FaultPartition) -> u64| -> Option<u64> {
            if self.parts.iter().all(|p| p.stage as u8 >= stage as u8) {
                Some(self.parts.iter().map(f).max().unwrap_or(at).max(at))
            } else {
                None
            }
        };
        let elected = all(Stage::Elected, |p| p.elected_at);
        let applied = all(Stage::Applied, |p| p.applied_at);
        let writable = all(Stage::Writable, |p| p.writable_at);
        // The controller acts at the latest when the last leader is elected.
        let fenced = if self.parts.is_empty() {
            Some(at)
        } else {
            match (self.acted_at, elected) {
                (Some(a), Some(e)) => Some(a.min(e)),
                (a, e) => a.or(e),
            }
        };
        let elected = elected.zip(fenced).map(|(e, f)| e.max(f));
        let applied = applied.zip(elected).map(|(a, e)| a.max(e));
        let writable = writable.zip(applied).map(|(w, a)| w.max(a));
        let diff = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a - b);
        FaultRecovery {
            at_ms: at,
            fenced_at_ms: fenced,
            elected_at_ms: elected,
            applied_at_ms: applied,
            writable_at_ms: writable,
            rto_ms: writable.map(|w| w - at),
            phases: Phases {
                detection_ms: fenced.map(|f| f - at),
                election_ms: diff(elected, fenced),
                metadata_ms: diff(applied, elected),
                client_ms: diff(writable, applied),
            },
        }
    }
}

/// An HDR-style histogram of millisecond values: exact below 128 ms, then
/// 64 buckets per power of two (relative error under 1.6 %, about what
/// HdrHistogram gives with two significant digits), plus the exact maximum.
///
/// Why not the `hdrhistogram` crate: its counts are generic, its
/// serialisation and iterators come along, and the page has about 14 kB
/// gzipped left of its 200 kB budget for this whole issue; forty lines give
/// the same answers for what the report needs (count, percentiles, max).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    max: u64,
}

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

impl Histogram {
    pub fn bucket_of(v: u64) -> usize {
        if v < 2 * SUB {
            return v as usize;
        }
        let top = 63 - v.leading_zeros(); // ≥ SUB_BITS + 1
        let shift = top - SUB_BITS;
        let sub = (v >> shift) - SUB; // 0..SUB
        (2 * SUB + (shift as u64 - 1) * SUB + sub) as usize
    }

    /// The largest value that falls into bucket `i`.
    pub fn highest_in(i: usize) -> u64 {
        let i = i as u64;
        if i < 2 * SUB {
            return i;
        }
        let shift = (i - 2 * SUB) / SUB + 1;
        let sub = i % SUB; // the same as (i - 2 * SUB) % SUB: 2 * SUB is a multiple of SUB
        ((SUB + sub + 1) << shift) - 1
    }

    pub fn record(&mut self, v: u64) {
        let b = Self::bucket_of(v);
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.count += 1;
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, other: &Histogram) {
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.count += other.count;
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// The value at quantile `permille`/1000: the highest value equivalent
    /// to the one at that rank, never above the recorded maximum. (Integer
    /// arithmetic only: the wasm carries no float formatting for it.)
    pub fn quantile(&self, permille: u64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = (permille * self.count).div_ceil(1000).clamp(1, self.count);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Self::highest_in(i).min(self.max));
            }
        }
        Some(self.max)
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            p50: self.quantile(500),
            p90: self.quantile(900),
            p99: self.quantile(990),
            p999: self.quantile(999),
            max: self.max(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct LatencySummary {
    pub count: u64,
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
    pub max: Option<u64>,
}

/// Produce latencies are also kept per slot of this many ms, for the strip.
pub const SLOT_MS: u64 = 100;

/// Partitions per shared page of the per-partition tables (a page of
/// windows' lists is 6 KB).
const AVAILABILITY_PAGE: usize = 256;

/// The accountant. Owned by the cluster, cloned with it (time travel).
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Availability {
    /// Current cause per partition (a byte each, read for every partition
    /// an event touches), and since when: the windows, in pages shared with
    /// snapshots, since they change only when a partition's cause does
    /// (deep-copied, their table was 0.5 MB of every checkpoint of the
    /// large bench, issue 27).
    cause: Vec<Option<Cause>>,
    windows: Pages<Vec<Window>, AVAILABILITY_PAGE>,
    /// An `acks=all` producer writes to the partition.
    pub acks_all: Vec<bool>,
    /// Some producer writes to the partition at all (else "writable" is
    /// reached as soon as the new leader applied the change).
    pub produced: Vec<bool>,
    faults: Vec<Fault>,
    /// Faults not yet recovered (indices into `faults`).
    open: Vec<usize>,
    /// Unavailable partitions per cause (in [`Cause::ALL`] order), and every
    /// change of those counts: (ms, counts), one entry per ms at most.
    counts: [u32; CAUSES],
    pub count_log: Vec<(u64, [u32; CAUSES])>,
    pub produce_latency: Histogram,
    /// Sum of every produce latency (for the mean).
    pub latency_sum_ms: u64,
    pub end_to_end_latency: Histogram,
    /// Produce latency per [`SLOT_MS`] slot of acknowledgement time.
    pub latency_slots: Vec<Histogram>,
}

impl Availability {
    pub fn new(partitions: usize) -> Self {
        Availability {
            cause: vec![None; partitions],
            windows: Pages::filled(partitions, Vec::new()),
            acks_all: vec![false; partitions],
            produced: vec![false; partitions],
            faults: Vec::new(),
            open: Vec::new(),
            counts: [0; CAUSES],
            count_log: vec![(0, [0; CAUSES])],
            produce_latency: Histogram::default(),
            latency_sum_ms: 0,
            end_to_end_latency: Histogram::default(),
            latency_slots: Vec::new(),
        }
    }

    pub fn windows(&self, p: PartitionIndex) -> &[Window] {
        self.windows.get(p).map_or(&[], Vec::as_slice)
    }

    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// The unavailable partitions per cause now, in [`Cause::ALL`] order.
    pub fn counts(&self) -> [u32; CAUSES] {
        self.counts
    }

    /// Milliseconds partition `p` was unavailable up to `now`.
    pub fn unavailable_ms(&self, p: PartitionIndex, now: u64) -> u64 {
        self.windows(p)
            .iter()
            .map(|w| w.to_ms.unwrap_or(now).max(w.from_ms) - w.from_ms)
            .sum()
    }

    /// Partition `p` is now in `state` (called for every partition an event
    /// touched, and for every partition a broker led when it died or came back).
    pub fn observe(&mut self, p: PartitionIndex, now: u64, state: &PartitionState) {
        let Some(current) = self.cause.get(p).copied() else {
            return;
        };
        let next = state.cause();
        if next != current {
            let ws = &mut self.windows[p];
            if let Some(c) = current {
                if let Some(w) = ws.last_mut().filter(|w| w.to_ms.is_none()) {
                    w.to_ms = Some(now);
                }
                self.counts[c.slot()] -= 1;
            }
            if let Some(c) = next {
                // A cause that changes within the same ms replaces the window.
                if let Some(w) = ws
                    .last_mut()
                    .filter(|w| w.from_ms == now && w.to_ms == Some(now))
                {
                    w.cause = c;
                    w.to_ms = None;
                } else {
                    ws.push(Window {
                        from_ms: now,
                        to_ms: None,
                        cause: c,
                    });
                }
                self.counts[c.slot()] += 1;
            } else if ws.last().is_some_and(|w| w.to_ms == Some(w.from_ms)) {
                ws.pop(); // opened and closed in the same ms: no window at all
            }
            self.cause[p] = next;
            match self.count_log.last_mut() {
                Some(last) if last.0 == now => last.1 = self.counts,
                _ => self.count_log.push((now, self.counts)),
            }
        }
        self.advance_faults(p, now, state, next);
    }

    fn advance_faults(
        &mut self,
        p: PartitionIndex,
        now: u64,
        state: &PartitionState,
        cause: Option<Cause>,
    ) {
        let produced = self.produced.get(p).copied().unwrap_or(false);
        for &f in &self.open {
            let fault = &mut self.faults[f];
            let mut moved = false;
            let Ok(i) = fault.parts.binary_search_by_key(&p, |x| x.partition) else {
                continue;
            };
            {
                let fp = &mut fault.parts[i];
                let leaderless = cause.is_some_and(Cause::leaderless);
                if leaderless {
                    fp.saw_leaderless = true;
                }
                if state.leader_epoch > fp.epoch {
                    moved = true;
                }
                // A stalled partition keeps its leader: it is back once the
                // ISR no longer waits for the dead follower (and no other
                // cause keeps its leader from taking the write); the client
                // phase then runs to its first acknowledged write.
                if fp.stalled
                    && fp.stage == Stage::Leaderless
                    && !matches!(
                        cause,
                        Some(
                            Cause::Offline
                                | Cause::LeaderDown
                                | Cause::LeaderMoving
                                | Cause::IsrMemberDown
                        )
                    )
                {
                    fp.stage = Stage::Elected;
                    fp.elected_at = now;
                }
                if !fp.stalled
                    && fp.stage == Stage::Leaderless
                    && !leaderless
                    && state.leader.is_some()
                    && (state.leader_epoch > fp.epoch || fp.saw_leaderless)
                {
                    fp.stage = Stage::Elected;
                    fp.elected_at = now;
                }
                if fp.stage == Stage::Elected
                    && !matches!(
                        cause,
                        Some(Cause::Offline | Cause::LeaderDown | Cause::LeaderMoving)
                    )
                {
                    fp.stage = Stage::Applied;
                    fp.applied_at = now;
                    if !produced {
                        fp.stage = Stage::Writable;
                        fp.writable_at = now;
                        fault.remaining -= 1;
                    }
                }
            }
            if moved && fault.acted_at.is_none() {
                fault.acted_at = Some(now);
            }
        }
        self.close_faults();
    }

    fn close_faults(&mut self) {
        let faults = &self.faults;
        self.open.retain(|&f| faults[f].remaining > 0);
    }

    /// A fault happened now to broker `b`, which the controller names as the
    /// leader of `led` (with their current leader epochs) and as an ISR
    /// follower of `followed` (those an `acks=all` producer writes stall).
    pub fn fault(
        &mut self,
        now: u64,
        action: FaultAction,
        b: BrokerId,
        led: &[(PartitionIndex, u32)],
        followed: &[(PartitionIndex, u32)],
    ) {
        let part = |stalled: bool| {
            move |&(p, epoch): &(PartitionIndex, u32)| FaultPartition {
                partition: p,
                epoch,
                stage: Stage::Leaderless,
                saw_leaderless: false,
                stalled,
                elected_at: 0,
                applied_at: 0,
                writable_at: 0,
            }
        };
        let same_ms = self
            .faults
            .last()
            .filter(|f| f.at_ms == now)
            .map(|_| self.faults.len() - 1);
        let i = match same_ms {
            Some(i) => i,
            None => {
                self.faults.push(Fault {
                    at_ms: now,
                    actions: Vec::new(),
                    brokers: Vec::new(),
                    parts: Vec::new(),
                    remaining: 0,
                    acted_at: None,
                });
                self.open.push(self.faults.len() - 1);
                self.faults.len() - 1
            }
        };
        let f = &mut self.faults[i];
        if !f.actions.contains(&action) {
            f.actions.push(action);
        }
        if !f.brokers.contains(&b) {
            f.brokers.push(b);
        }
        // Each list ascends by partition (the controller's order): its new
        // partitions are merged into the fault's in one pass (inserted one
        // by one, a rack of 20 brokers over 20,000 partitions moved the
        // vector's tail 60,000 times: 58 ms of tour 19's crash, issue 63).
        let acks_all = &self.acks_all;
        for (list, stalled) in [(led, false), (followed, true)] {
            debug_assert!(list.windows(2).all(|w| w[0].0 < w[1].0));
            let mut added = Vec::new();
            for fp in list.iter().map(part(stalled)) {
                if stalled && !acks_all.get(fp.partition).copied().unwrap_or(false) {
                    continue;
                }
                match f.parts.binary_search_by_key(&fp.partition, |x| x.partition) {
                    Err(_) => added.push(fp),
                    // Its leader and a follower failed in the same
                    // millisecond: it lost its leader.
                    Ok(at) if !stalled => f.parts[at].stalled = false,
                    Ok(_) => {}
                }
            }
            f.remaining += added.len();
            f.parts = merge_by_partition(std::mem::take(&mut f.parts), added);
        }
        if !self.open.contains(&i) {
            self.open.push(i);
        }
    }

    /// The controller fenced broker `b` now.
    pub fn fenced(&mut self, now: u64, b: BrokerId) {
        for &f in &self.open {
            let fault = &mut self.faults[f];
            if fault.acted_at.is_none() && fault.brokers.contains(&b) {
                fault.acted_at = Some(now);
            }
        }
    }

    /// A producer got an acknowledgement for a record of `p` now, `latency_ms`
    /// after the application sent it.
    pub fn acked(&mut self, p: PartitionIndex, now: u64, latency_ms: u64) {
        self.produce_latency.record(latency_ms);
        self.latency_sum_ms += latency_ms;
        let slot = (now / SLOT_MS) as usize;
        if self.latency_slots.len() <= slot {
            self.latency_slots.resize(slot + 1, Histogram::default());
        }
        self.latency_slots[slot].record(latency_ms);
        let mut any = false;
        for &f in &self.open {
            let fault = &mut self.faults[f];
            if let Ok(i) = fault.parts.binary_search_by_key(&p, |x| x.partition) {
                let fp = &mut fault.parts[i];
                if fp.stage == Stage::Applied {
                    fp.stage = Stage::Writable;
                    fp.writable_at = now;
                    fault.remaining -= 1;
                    any = true;
                }
            }
        }
        if any {
            self.close_faults();
        }
    }

    /// The mean produce latency so far in µs (HDR bucket values, as
    /// `request-latency-avg`), rounded; integer arithmetic only.
    pub fn latency_mean_us(&self) -> Option<u64> {
        let n = self.produce_latency.count();
        (n > 0).then(|| (self.latency_sum_ms * 1000 + n / 2) / n)
    }

    pub fn consumed(&mut self, latency_ms: u64) {
        self.end_to_end_latency.record(latency_ms);
    }

    /// The p99 produce latency of records acknowledged in [from, to).
    pub fn latency_p99(&self, from_ms: u64, to_ms: u64) -> Option<u64> {
        let (a, b) = (
            (from_ms / SLOT_MS) as usize,
            to_ms.div_ceil(SLOT_MS) as usize,
        );
        let mut h = Histogram::default();
        for s in self.latency_slots.get(a..b.min(self.latency_slots.len()))? {
            h.merge(s);
        }
        h.quantile(990)
    }

    /// The unavailable partitions per cause (in [`Cause::ALL`] order) at the
    /// moment in [from, to) when most were unavailable.
    pub fn max_counts(&self, from_ms: u64, to_ms: u64) -> [u32; CAUSES] {
        let start = self.count_log.partition_point(|e| e.0 <= from_ms);
        let mut out = self.count_log[start.saturating_sub(1)].1;
        let total = |c: &[u32; CAUSES]| c.iter().sum::<u32>();
        for (t, c) in &self.count_log[start..] {
            if *t >= to_ms {
                break;
            }
            if total(c) > total(&out) {
                out = *c;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(leader: BrokerId, epoch: u32) -> PartitionState {
        PartitionState {
            leader: Some(leader),
            leader_epoch: epoch,
            leader_up: true,
            leader_applied: true,
            isr_len: 3,
            min_insync_replicas: 2,
            acks_all: true,
            isr_member_down: false,
        }
    }

    #[test]
    fn each_state_has_the_cause_a_kafka_operator_would_name() {
        let ok = up(1, 0);
        assert_eq!(ok.cause(), None);
        assert_eq!(
            PartitionState { leader: None, ..ok }.cause(),
            Some(Cause::Offline)
        );
        assert_eq!(
            PartitionState {
                leader_up: false,
                ..ok
            }
            .cause(),
            Some(Cause::LeaderDown)
        );
        assert_eq!(
            PartitionState {
                leader_applied: false,
                ..ok
            }
            .cause(),
            Some(Cause::LeaderMoving)
        );
        assert_eq!(
            PartitionState { isr_len: 1, ..ok }.cause(),
            Some(Cause::BelowMinIsr)
        );
        // An acks=1 producer is not refused by min.insync.replicas.
        assert_eq!(
            PartitionState {
                isr_len: 1,
                acks_all: false,
                ..ok
            }
            .cause(),
            None
        );
    }

    /// A crashed leader: leader_down until the controller elects, then
    /// leader_moving until the new leader applies it. Each window closes
    /// exactly where the next opens, and the total is their sum.
    #[test]
    fn crash_windows_follow_leader_down_then_leader_moving() {
        let mut a = Availability::new(1);
        a.observe(0, 0, &up(1, 0));
        a.fault(10_000, FaultAction::Crash, 1, &[(0, 0)], &[]);
        let down = PartitionState {
            leader_up: false,
            ..up(1, 0)
        };
        a.observe(0, 10_000, &down);
        let moving = PartitionState {
            leader_applied: false,
            ..up(2, 1)
        };
        a.observe(0, 19_001, &moving);
        a.observe(0, 19_003, &up(2, 1));
        assert_eq!(
            a.windows(0),
            &[
                Window {
                    from_ms: 10_000,
                    to_ms: Some(19_001),
                    cause: Cause::LeaderDown
                },
                Window {
                    from_ms: 19_001,
                    to_ms: Some(19_003),
                    cause: Cause::LeaderMoving
                },
            ]
        );
        assert_eq!(a.unavailable_ms(0, 60_000), 9_003);
        assert_eq!(a.counts(), [0; CAUSES]);
    }

    #[test]
    fn a_window_still_open_at_the_end_has_no_end_and_counts_until_now() {
        let mut a = Availability::new(1);
        a.observe(
            0,
            5_000,
            &PartitionState {
                leader: None,
                ..up(1, 0)
            },
        );
        assert_eq!(a.windows(0)[0].to_ms, None);
        assert_eq!(a.windows(0)[0].cause, Cause::Offline);
        assert_eq!(a.unavailable_ms(0, 8_000), 3_000);
        assert_eq!(a.counts(), [0, 1, 0, 0, 0]);
        assert_eq!(a.max_counts(4_000, 6_000), [0, 1, 0, 0, 0]);
        assert_eq!(a.max_counts(0, 5_000), [0, 0, 0, 0, 0]);
    }

    #[test]
    fn below_min_isr_window_opens_on_shrink_and_closes_on_expand() {
        let mut a = Availability::new(1);
        let shrunk = PartitionState {
            isr_len: 1,
            ..up(1, 0)
        };
        a.observe(0, 100, &shrunk);
        a.observe(0, 700, &up(1, 0));
        assert_eq!(
            a.windows(0),
            &[Window {
                from_ms: 100,
                to_ms: Some(700),
                cause: Cause::BelowMinIsr
            }]
        );
    }

    /// A cause that comes and goes within one millisecond leaves no window,
    /// and one that changes within the millisecond is recorded once.
    #[test]
    fn causes_within_one_millisecond_leave_one_window_or_none() {
        let mut a = Availability::new(1);
        let moving = PartitionState {
            leader_applied: false,
            ..up(2, 1)
        };
        a.observe(0, 50, &moving);
        a.observe(0, 50, &up(2, 1));
        assert!(a.windows(0).is_empty());
        a.observe(0, 60, &moving);
        a.observe(
            0,
            60,
            &PartitionState {
                leader: None,
                ..up(2, 1)
            },
        );
        assert_eq!(a.windows(0).len(), 1);
        assert_eq!(a.windows(0)[0].cause, Cause::Offline);
        assert_eq!(a.counts(), [0, 1, 0, 0, 0]);
    }

    /// The four phases of a crash add up to the recovery time exactly.
    #[test]
    fn crash_phases_add_up_to_the_recovery_time() {
        let mut a = Availability::new(2);
        a.produced = vec![true, true];
        a.fault(10_000, FaultAction::Crash, 1, &[(0, 3), (1, 5)], &[]);
        let down = |e| PartitionState {
            leader_up: false,
            ..up(1, e)
        };
        a.observe(0, 10_000, &down(3));
        a.observe(1, 10_000, &down(5));
        a.fenced(19_001, 1);
        let moving = |e| PartitionState {
            leader_applied: false,
            ..up(2, e)
        };
        a.observe(0, 19_001, &moving(4));
        a.observe(1, 19_003, &moving(6));
        a.observe(0, 19_004, &up(2, 4));
        a.observe(1, 19_006, &up(2, 6));
        a.acked(0, 19_100, 9_000);
        let r = a.faults()[0].recovery();
        assert_eq!(
            r.writable_at_ms, None,
            "partition 1 has not been written yet"
        );
        assert_eq!(r.rto_ms, None);
        a.acked(1, 19_410, 9_400);
        let r = a.faults()[0].recovery();
        assert_eq!(r.fenced_at_ms, Some(19_001));
        assert_eq!(r.elected_at_ms, Some(19_003));
        assert_eq!(r.applied_at_ms, Some(19_006));
        assert_eq!(r.writable_at_ms, Some(19_410));
        assert_eq!(r.rto_ms, Some(9_410));
        let p = &r.phases;
        assert_eq!(p.detection_ms, Some(9_001));
        assert_eq!(p.election_ms, Some(2));
        assert_eq!(p.metadata_ms, Some(3));
        assert_eq!(p.client_ms, Some(404));
        let sum: u64 = [p.detection_ms, p.election_ms, p.metadata_ms, p.client_ms]
            .iter()
            .flatten()
            .sum();
        assert_eq!(Some(sum), r.rto_ms);
    }

    /// A controlled shutdown: the leader is never down; the controller moves
    /// it at once, so detection is a heartbeat, not a session timeout.
    #[test]
    fn controlled_shutdown_is_detected_by_the_move_not_a_fence() {
        let mut a = Availability::new(1);
        a.produced = vec![true];
        a.fault(30_000, FaultAction::Shutdown, 1, &[(0, 0)], &[]);
        a.observe(0, 30_000, &up(1, 0)); // still leading: nothing to elect yet
        let moving = PartitionState {
            leader_applied: false,
            ..up(2, 1)
        };
        a.observe(0, 30_002, &moving);
        a.observe(0, 30_003, &up(2, 1));
        a.acked(0, 30_010, 12);
        let r = a.faults()[0].recovery();
        assert_eq!(r.fenced_at_ms, Some(30_002));
        assert_eq!(r.phases.detection_ms, Some(2));
        assert_eq!(r.phases.election_ms, Some(0));
        assert_eq!(r.phases.metadata_ms, Some(1));
        assert_eq!(r.phases.client_ms, Some(7));
        assert_eq!(r.rto_ms, Some(10));
        assert_eq!(a.windows(0).len(), 1);
        assert_eq!(a.windows(0)[0].cause, Cause::LeaderMoving);
    }

    /// A controlled shutdown of a partition's only in-sync replica: the
    /// controller acts at once (a new leader epoch with no leader), though the
    /// partition is elected only when the broker returns. Detection ends at
    /// that first new epoch, not at the election (KAFKA_REPLICATION.md §5,
    /// "Controlled shutdown (KRaft)": the controller moves the broker's
    /// leaderships at once, without waiting for a session timeout).
    #[test]
    fn a_new_leader_epoch_is_the_controllers_first_action_even_with_no_leader_to_elect() {
        let mut a = Availability::new(1);
        a.fault(30_000, FaultAction::Shutdown, 1, &[(0, 0)], &[]);
        a.observe(0, 30_000, &up(1, 0));
        a.observe(
            0,
            30_002,
            &PartitionState {
                leader: None,
                ..up(1, 1)
            },
        );
        assert_eq!(a.faults()[0].recovery().fenced_at_ms, Some(30_002));
        a.observe(0, 50_000, &up(1, 2));
        let r = a.faults()[0].recovery();
        assert_eq!(r.fenced_at_ms, Some(30_002));
        assert_eq!(r.phases.detection_ms, Some(2));
        assert_eq!(r.phases.election_ms, Some(19_998));
        assert_eq!(r.rto_ms, Some(20_000));
    }

    /// The strip's count log keeps one entry per millisecond, the counts at
    /// its end: a state that lasted no time (two partitions down for an
    /// instant inside one millisecond) is never the peak.
    #[test]
    fn the_peak_unavailable_count_ignores_states_that_lasted_no_time() {
        let mut a = Availability::new(2);
        let offline = PartitionState {
            leader: None,
            ..up(1, 1)
        };
        a.observe(0, 100, &offline);
        a.observe(1, 100, &offline);
        a.observe(0, 100, &up(2, 1));
        assert_eq!(a.count_log.len(), 2, "one entry for 0 ms, one for 100 ms");
        assert_eq!(a.count_log[1], (100, [0, 1, 0, 0, 0]));
        assert_eq!(a.max_counts(0, 200), [0, 1, 0, 0, 0]);
        a.observe(1, 101, &up(2, 1));
        assert_eq!(a.max_counts(0, 200), [0, 1, 0, 0, 0]);
        assert_eq!(a.max_counts(101, 200), [0; CAUSES]);
    }

    /// No eligible replica: offline until the broker returns; the fault stays
    /// open (null RTO) while it is offline.
    #[test]
    fn an_offline_partition_keeps_its_fault_open() {
        let mut a = Availability::new(1);
        a.produced = vec![true];
        a.fault(1_000, FaultAction::PowerLoss, 1, &[(0, 0)], &[]);
        a.observe(
            0,
            1_000,
            &PartitionState {
                leader_up: false,
                ..up(1, 0)
            },
        );
        a.fenced(10_000, 1);
        a.observe(
            0,
            10_000,
            &PartitionState {
                leader: None,
                leader_epoch: 1,
                ..up(1, 0)
            },
        );
        let r = a.faults()[0].recovery();
        assert_eq!(r.fenced_at_ms, Some(10_000));
        assert_eq!(r.phases.detection_ms, Some(9_000));
        assert_eq!((r.elected_at_ms, r.rto_ms), (None, None));
        assert_eq!(r.phases.election_ms, None);
        let causes: Vec<Cause> = a.windows(0).iter().map(|w| w.cause).collect();
        assert_eq!(causes, vec![Cause::LeaderDown, Cause::Offline]);
        // The broker comes back and leads again, in a new epoch.
        a.observe(0, 40_000, &up(1, 2));
        a.acked(0, 40_050, 39_000);
        assert_eq!(a.faults()[0].recovery().rto_ms, Some(39_050));
    }

    /// Two brokers shut down in the same millisecond make one fault; the first
    /// one's partition may already be back within that millisecond (no
    /// producer writes it), and the second one's still counts: the fault
    /// reopens and its RTO waits for the second partition.
    #[test]
    fn a_fault_recovered_within_its_millisecond_reopens_for_a_second_broker() {
        let mut a = Availability::new(2);
        a.fault(7_000, FaultAction::Shutdown, 1, &[(0, 0)], &[]);
        a.observe(0, 7_000, &up(2, 1));
        assert_eq!(a.faults()[0].recovery().rto_ms, Some(0));
        a.fault(7_000, FaultAction::Shutdown, 2, &[(1, 0)], &[]);
        assert_eq!(a.faults().len(), 1, "one fault for the millisecond");
        assert_eq!(a.faults()[0].recovery().rto_ms, None);
        a.observe(
            1,
            7_002,
            &PartitionState {
                leader_applied: false,
                ..up(3, 1)
            },
        );
        a.observe(1, 7_005, &up(3, 1));
        let r = a.faults()[0].recovery();
        assert_eq!(r.elected_at_ms, Some(7_002));
        assert_eq!(r.rto_ms, Some(5));
    }

    /// Detection ends when the controller fences the broker, though the new
    /// leaders' records reach the metadata log only after the records ahead
    /// of them (`sim.controller.record.write.us` each): the first new leader
    /// epoch comes later than the fence, and the election phase holds the gap.
    #[test]
    fn detection_ends_at_the_fence_even_when_the_first_new_leader_epoch_is_written_later() {
        let mut a = Availability::new(2);
        a.fault(1_000, FaultAction::Crash, 1, &[(0, 0), (1, 0)], &[]);
        let down = PartitionState {
            leader_up: false,
            ..up(1, 0)
        };
        a.observe(0, 1_000, &down);
        a.observe(1, 1_000, &down);
        a.fenced(10_000, 1);
        a.observe(0, 10_004, &up(2, 1));
        a.observe(1, 10_009, &up(3, 1));
        let r = a.faults()[0].recovery();
        assert_eq!(r.fenced_at_ms, Some(10_000));
        assert_eq!(r.phases.detection_ms, Some(9_000));
        assert_eq!(r.phases.election_ms, Some(9));
        assert_eq!(r.rto_ms, Some(9_009));
    }

    /// `request-latency-avg`: the mean of the acknowledged produce latencies,
    /// in µs, rounded to the nearest; none before the first acknowledgement.
    #[test]
    fn the_mean_produce_latency_is_the_rounded_mean_of_every_acknowledged_write() {
        let mean = |ms: &[u64]| {
            let mut a = Availability::new(1);
            for (i, &l) in ms.iter().enumerate() {
                a.acked(0, 100 + i as u64, l);
            }
            a.latency_mean_us()
        };
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[0, 1, 1]), Some(667), "666.7 µs rounds up");
        assert_eq!(mean(&[0, 0, 0, 0, 0, 1]), Some(167), "166.7 µs rounds up");
        assert_eq!(mean(&[0, 0, 0, 1]), Some(250));
        assert_eq!(mean(&[1_000, 2_000]), Some(1_500_000));
    }

    /// An isolated leader healed before the controller noticed resumes in the
    /// same epoch: the fault ends when it is reachable again.
    #[test]
    fn a_leader_healed_before_fencing_recovers_in_the_same_epoch() {
        let mut a = Availability::new(1);
        a.produced = vec![true];
        a.fault(5_000, FaultAction::Isolate, 1, &[(0, 0)], &[]);
        let cut = PartitionState {
            leader_up: false,
            ..up(1, 0)
        };
        a.observe(0, 5_000, &cut);
        a.observe(0, 8_000, &up(1, 0));
        a.acked(0, 8_020, 3_020);
        let r = a.faults()[0].recovery();
        assert_eq!(r.fenced_at_ms, Some(8_000));
        assert_eq!(r.rto_ms, Some(3_020));
        assert_eq!(r.phases.detection_ms, Some(3_000));
    }

    #[test]
    fn faults_in_the_same_millisecond_count_as_one() {
        let mut a = Availability::new(3);
        a.fault(7_000, FaultAction::Crash, 1, &[(0, 0)], &[]);
        a.fault(7_000, FaultAction::Isolate, 2, &[(1, 0)], &[]);
        a.fault(7_001, FaultAction::Crash, 3, &[(2, 0)], &[]);
        assert_eq!(a.faults().len(), 2);
        assert_eq!(a.faults()[0].brokers, vec![1, 2]);
        assert_eq!(
            a.faults()[0].actions,
            vec![FaultAction::Crash, FaultAction::Isolate]
        );
        assert_eq!(a.faults()[0].partitions().collect::<Vec<_>>(), vec![0, 1]);
    }

    /// A rack's brokers failing in one millisecond make one fault whose
    /// partitions are each listed once, in partition order: one a later
    /// broker led loses its leader (no longer only stalled), one it only
    /// followed keeps the leader loss it had; a follower's partition counts
    /// only under acks=all.
    #[test]
    fn brokers_failing_in_one_millisecond_list_each_partition_once_in_order() {
        let mut a = Availability::new(8);
        a.acks_all = vec![true, true, true, true, true, true, false, true];
        a.fault(
            7_000,
            FaultAction::Crash,
            1,
            &[(2, 0), (5, 0)],
            &[(1, 0), (3, 0), (6, 0)],
        );
        a.fault(
            7_000,
            FaultAction::Crash,
            2,
            &[(1, 0), (7, 0)],
            &[(0, 0), (2, 0), (4, 0)],
        );
        let f = &a.faults()[0];
        assert_eq!(a.faults().len(), 1);
        let all: Vec<_> = f.parts.iter().map(|x| x.partition).collect();
        assert_eq!(all, vec![0, 1, 2, 3, 4, 5, 7]);
        assert_eq!(
            f.partitions().collect::<Vec<_>>(),
            vec![1, 2, 5, 7],
            "1 was led by broker 2, 2 by broker 1"
        );
        assert_eq!(f.stalled_partitions().collect::<Vec<_>>(), vec![0, 3, 4]);
        assert_eq!(f.remaining, 7);
    }

    /// A fault that took no leader away costs no recovery.
    #[test]
    fn a_fault_without_led_partitions_has_zero_recovery() {
        let mut a = Availability::new(1);
        a.fault(1_000, FaultAction::Crash, 3, &[], &[]);
        let r = a.faults()[0].recovery();
        assert_eq!(r.rto_ms, Some(0));
        assert_eq!(r.phases.detection_ms, Some(0));
    }

    #[test]
    fn histogram_is_exact_for_small_values_and_close_for_large_ones() {
        let mut h = Histogram::default();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.quantile(500), Some(50));
        assert_eq!(h.quantile(990), Some(99));
        assert_eq!(h.max(), Some(100));
        let mut big = Histogram::default();
        big.record(9_405);
        let q = big.quantile(500).unwrap_or(0);
        assert_eq!(q, 9_405, "never above the maximum");
        for v in [129u64, 1_000, 9_405, 123_456, 10_000_000] {
            let i = Histogram::bucket_of(v);
            let hi = Histogram::highest_in(i);
            assert!(hi >= v && (hi - v) as f64 <= v as f64 / 64.0, "{v} -> {hi}");
            assert!(
                i == 0 || Histogram::highest_in(i - 1) < v,
                "{v}: bucket {i}"
            );
        }
        assert_eq!(Histogram::default().summary().p99, None);
    }

    #[test]
    fn latency_p99_per_window_of_time() {
        let mut a = Availability::new(1);
        for i in 0..100 {
            a.acked(0, 1_000 + i, 2);
        }
        a.acked(0, 5_050, 4_000);
        assert_eq!(a.latency_p99(1_000, 1_200), Some(2));
        assert_eq!(a.latency_p99(5_000, 5_100), Some(4_000));
        assert_eq!(a.latency_p99(2_000, 3_000), None);
    }

    #[test]
    fn a_histogram_bucket_holds_the_values_up_to_its_highest_within_one_part_in_64() {
        // The report's latency percentiles (KAFKA_REPLICATION.md §10: p99
        // produce latency): exact below 128 ms, then 64 buckets per power of
        // two. Every value lands in the bucket whose highest value is at or
        // above it and less than 1/64 above it; consecutive buckets tile the
        // line with no gap.
        for v in (0..5_000u64).chain([
            65_535,
            65_536,
            1 << 20,
            (1 << 20) + 12_345,
            u64::from(u32::MAX),
        ]) {
            let b = Histogram::bucket_of(v);
            let hi = Histogram::highest_in(b);
            assert!(
                hi >= v && hi - v <= v / 64,
                "{v} in bucket {b}, whose highest is {hi}"
            );
            if b > 0 {
                assert!(
                    Histogram::highest_in(b - 1) < v,
                    "{v} belongs to bucket {b}, not {}",
                    b - 1
                );
            }
        }
        for b in 0..2_000usize {
            assert_eq!(Histogram::bucket_of(Histogram::highest_in(b) + 1), b + 1);
        }
        let mut h = Histogram::default();
        for v in 1..=1_000 {
            h.record(v);
        }
        let p99 = h.quantile(990).unwrap_or(0);
        assert!(
            (990..=1_000).contains(&p99),
            "p99 of 1..=1000 is 990, within 1/64: {p99}"
        );
        // 500 lies in the bucket [500, 503] (width 4 between 256 and 511): a
        // percentile is reported as its bucket's highest value.
        assert_eq!(h.quantile(500), Some(503));
        assert_eq!(h.quantile(100), Some(100), "exact below 128");
    }

    #[test]
    fn merged_histograms_answer_as_one_that_recorded_every_value() {
        // A sweep's shards are merged (failover-lab sweep-merge): the merge
        // must give the counts, maximum and percentiles of one histogram fed
        // every value, whichever side holds the longer bucket list.
        let fill = |vs: &[u64]| {
            let mut h = Histogram::default();
            for &v in vs {
                h.record(v);
            }
            h
        };
        let (small, large): (Vec<u64>, Vec<u64>) =
            ((1..=50).collect(), (40..=9_000).step_by(7).collect());
        let all = fill(&[small.clone(), large.clone()].concat());
        for (a, b) in [(&small, &large), (&large, &small)] {
            let mut m = fill(a);
            m.merge(&fill(b));
            assert_eq!(m, all, "merging {} values into {}", b.len(), a.len());
            assert_eq!(m.count(), (small.len() + large.len()) as u64);
            assert_eq!(m.max(), Some(9_000), "40 + 7k reaches 9,000");
            assert_eq!(m.quantile(990), all.quantile(990));
        }
        assert_eq!(Histogram::default().max(), None, "no value, no maximum");
        assert_eq!(Histogram::default().count(), 0);
        assert_eq!(fill(&[0]).max(), Some(0), "a single 0 ms");
    }
}
