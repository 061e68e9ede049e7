//! One replica of a partition on one broker: its log, its role, the leader
//! epoch it knows, and — on the leader — what it knows of each follower.
//!
//! The leader-side rules live here (KAFKA_REPLICATION.md §2–§3):
//! - the high watermark advances to the smallest LEO among the maximal ISR and
//!   the caught-up eligible followers, never backwards, and not at all while the
//!   ISR is below min.insync.replicas (the 3.7+ "strict min ISR" gate);
//! - a follower's `lastCaughtUpTimeMs` follows Replica.updateFetchStateOrThrow;
//! - ISR expansion needs LEO ≥ HW *and* LEO ≥ the start of the leader's epoch
//!   (KAFKA-7128); shrink happens when a member has not caught up within
//!   replica.lag.time.max.ms.
//!
//! The follower-side truncation rule (§7) is [`Replica::truncation_point`].

use std::rc::Rc;

use serde::Serialize;

use super::config::TruncationMode;
use super::followers::{FollowerTable, Lanes};
use super::log::{Log, LogDelta};
use super::protocol::{
    BrokerId, BrokerState, LeaderRecoveryState, PartitionIndex, PartitionRegistration,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Leader,
    Follower,
    /// Not yet told by the metadata log, or the partition is offline.
    Unknown,
}

/// An `Option<u64>` in 8 bytes rather than 16: 0 is `None`, `v + 1` is
/// `Some(v)` (no offset or time here comes near `u64::MAX`). It orders as
/// the `Option` does (`None` first), so `max` and `cmp` read the same.
/// A leader copies its followers' states whenever a snapshot shares them
/// (issue 27): three of these in each made a follower 72 bytes, now 48.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Opt64(u64);

impl Opt64 {
    pub const NONE: Opt64 = Opt64(0);

    pub fn some(v: u64) -> Opt64 {
        Opt64(v.saturating_add(1))
    }

    pub fn get(self) -> Option<u64> {
        self.0.checked_sub(1)
    }
}

impl From<Option<u64>> for Opt64 {
    fn from(v: Option<u64>) -> Opt64 {
        v.map_or(Opt64::NONE, Opt64::some)
    }
}

/// What the leader knows of one follower (kafka.cluster.Replica).
/// `repr(C)`, `broker` first: the leader finds a follower by scanning for its
/// id, which then reads the first word of each entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[repr(C)]
pub struct FollowerState {
    pub broker: BrokerId,
    /// Unknown until the follower fetches in the leader's current epoch.
    pub log_end_offset: Opt64,
    /// `None`: never caught up in this leader's view. Kafka stores 0 for
    /// that, which against a wall clock is "decades ago"; the lab's clock
    /// starts at 0, so the marker has to be explicit.
    pub last_caught_up_ms: Opt64,
    /// `None`: no fetch seen since this broker became leader.
    pub last_fetch_ms: Opt64,
    pub last_fetch_leader_leo: u64,
    /// The broker epoch the follower's last fetch carried (KIP-903); 0 until
    /// it has fetched from this leader (Kafka's empty `brokerEpoch`).
    pub broker_epoch: u64,
}

/// An ISR change the leader has proposed and the controller has not
/// committed (Kafka's PendingExpandIsr / PendingShrinkIsr).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct PendingIsr {
    /// The AlterPartition request carrying it.
    pub id: u64,
    /// The proposed ISR, as sent: each member with its broker epoch.
    pub isr: Vec<BrokerState>,
    /// The controller refused it with an error that is not retried
    /// (Partition.handleAlterPartitionError): the proposal stays pending, so
    /// no other ISR change starts, until new metadata for the partition
    /// arrives. No request is in flight any more.
    pub awaiting_metadata: bool,
}

impl PendingIsr {
    pub fn new(id: u64, isr: Vec<BrokerState>) -> Self {
        PendingIsr {
            id,
            isr,
            awaiting_metadata: false,
        }
    }

    /// A proposal whose members carry no broker epoch (Kafka's -1).
    pub fn of_ids(id: u64, isr: &[BrokerId]) -> Self {
        let isr = isr
            .iter()
            .map(|&broker_id| BrokerState {
                broker_id,
                broker_epoch: None,
            })
            .collect();
        PendingIsr::new(id, isr)
    }

    pub fn contains(&self, b: BrokerId) -> bool {
        self.isr.iter().any(|m| m.broker_id == b)
    }
}

/// Field order is layout (issue 27): `repr(C)` keeps what every fetch and
/// every invariant check reads (role, epoch, ISR, replica list, where the
/// leader's follower states are, then the log's end, HW and latest epoch)
/// together at the front of the block, right after the `Rc`'s counts, so
/// touching a replica costs two or three cache lines rather than four or
/// five. The rest comes last: `partition` and `partition_epoch`, read on
/// metadata changes, and `leader`, which a follower checks on each fetch
/// response (moving it to the front measured the same: 221.2 / 39.9 first-
/// and last-level misses per event against 219.6 / 40.0, noise).
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[repr(C)]
pub struct Replica {
    pub role: Role,
    /// Follower side: it has appended from its leader in the current epoch,
    /// so its log has been reconciled with the leader's (truncation done).
    pub reconciled: bool,
    /// Whether this replica has fetched in its current follower epoch (used by
    /// the pre-KIP-101 mode, which truncates to the HW when it starts following).
    pub known_registration: bool,
    pub recovery: LeaderRecoveryState,
    pub leader_epoch: u32,
    /// Follower side: do not fetch this partition before this time.
    pub fetch_backoff_until: u64,
    /// The committed ISR as this broker last learned it.
    /// Shared with snapshots (they change only with new metadata), so copying
    /// a replica on its first change after a snapshot stays cheap. A slice in
    /// the `Rc`'s own block, not a `Vec` behind it: a membership test, asked
    /// on every fetch, reads one heap block rather than two (issue 27).
    pub isr: Rc<[BrokerId]>,
    pub replicas: Rc<[BrokerId]>,
    /// Leader side: where what it knows of each follower is kept, in its
    /// broker's [`FollowerTable`] (dense pages shared with snapshots, so a
    /// follower's fetch does not copy the whole replica; issue 27).
    pub lanes: Lanes,
    pub log: Log,
    /// An ISR change proposed to the controller and not yet committed (boxed:
    /// it is rare, and a replica is copied whole on its first change after a
    /// snapshot, so 8 bytes here rather than 40).
    pub pending_isr: Option<Box<PendingIsr>>,
    pub partition: PartitionIndex,
    pub leader: Option<BrokerId>,
    pub partition_epoch: u32,
}

/// A replica written against another copy of itself (`base`), for a
/// checkpoint that keeps it against an older checkpoint's copy
/// (`crate::checkpoint`): its log as a [`LogDelta`]. Everything else must
/// be `base`'s: role, epochs, ISR and replica list, a pending ISR change,
/// lanes, leader, fetch backoff (they move with metadata or errors, not with
/// every fetch).
#[derive(Debug)]
pub struct ReplicaDelta {
    log: LogDelta,
}

impl ReplicaDelta {
    /// `r` written against `base`, when they agree on all but the log's
    /// moving parts.
    pub fn of(r: &Replica, base: &Replica) -> Option<ReplicaDelta> {
        if !r.same_apart_from_log(base) {
            return None;
        }
        Some(ReplicaDelta {
            log: LogDelta::of(&r.log, &base.log)?,
        })
    }

    /// The replica this was taken from, out of the `base` it was taken against.
    pub fn apply(&self, base: &Replica) -> Replica {
        Replica {
            role: base.role,
            reconciled: base.reconciled,
            known_registration: base.known_registration,
            recovery: base.recovery,
            leader_epoch: base.leader_epoch,
            fetch_backoff_until: base.fetch_backoff_until,
            isr: base.isr.clone(),
            replicas: base.replicas.clone(),
            lanes: base.lanes,
            log: self.log.apply(&base.log),
            pending_isr: base.pending_isr.clone(),
            partition: base.partition,
            leader: base.leader,
            partition_epoch: base.partition_epoch,
        }
    }
}

impl Replica {
    /// Whether `other` is this replica, field for field (its log by
    /// [`Log::same_as`]): what a rebuilt checkpoint's replicas must be.
    pub fn same_as(&self, other: &Replica) -> bool {
        self.same_apart_from_log(other) && self.log.same_as(&other.log)
    }

    /// Whether `other` has every field of this replica but the log (what a
    /// [`ReplicaDelta`] takes from the copy it is written against).
    fn same_apart_from_log(&self, other: &Replica) -> bool {
        // Every field named, so a new one must be placed here.
        let Replica {
            role,
            reconciled,
            known_registration,
            recovery,
            leader_epoch,
            fetch_backoff_until,
            isr,
            replicas,
            lanes,
            log: _,
            pending_isr,
            partition,
            leader,
            partition_epoch,
        } = self;
        *role == other.role
            && *reconciled == other.reconciled
            && *known_registration == other.known_registration
            && *recovery == other.recovery
            && *leader_epoch == other.leader_epoch
            && *fetch_backoff_until == other.fetch_backoff_until
            && *lanes == other.lanes
            && *pending_isr == other.pending_isr
            && *partition == other.partition
            && *leader == other.leader
            && *partition_epoch == other.partition_epoch
            && isr == &other.isr
            && replicas == &other.replicas
    }
}

/// Partition.isReplicaIsrEligible, as the broker's metadata cache answers
/// it: `(follower, broker epoch its last fetch carried)` → unfenced, not in
/// controlled shutdown, and that epoch is the follower's current
/// registration (KIP-841, KIP-903). A follower that restarted and fetches
/// with a new epoch the leader has not yet replayed is not eligible either.
pub type IsrEligible<'a> = dyn Fn(BrokerId, u64) -> bool + 'a;

/// `*to = from`, keeping the shared copy when it is already equal.
fn set_shared(to: &mut Rc<[BrokerId]>, from: &[BrokerId]) {
    if **to != *from {
        *to = Rc::from(from);
    }
}

/// How a follower reconciles after a `DivergingEpoch` answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Truncation {
    pub to: u64,
    /// KIP-279's iterative step: the follower never had the leader's epoch and
    /// must ask again from its new latest epoch.
    pub ask_again: bool,
}

impl Replica {
    pub fn new(partition: PartitionIndex, replicas: &[BrokerId]) -> Self {
        Replica {
            partition,
            log: Log::default(),
            role: Role::Unknown,
            leader: None,
            leader_epoch: 0,
            partition_epoch: 0,
            isr: Rc::default(),
            replicas: Rc::from(replicas),
            pending_isr: None,
            recovery: LeaderRecoveryState::Recovered,
            lanes: Lanes::NONE,
            fetch_backoff_until: 0,
            known_registration: false,
            reconciled: false,
        }
    }

    pub fn is_leader(&self) -> bool {
        self.role == Role::Leader
    }

    /// Members of the pending ISR not in the committed one (the maximal ISR,
    /// KIP-497, is the committed ISR plus these).
    fn pending_only(&self) -> impl Iterator<Item = BrokerId> + '_ {
        self.pending_isr
            .iter()
            .flat_map(|pending| pending.isr.iter().map(|m| m.broker_id))
            .filter(|b| !self.isr.contains(b))
    }

    /// Whether `b` is in the maximal ISR (no allocation: the HW rule asks
    /// this for every follower on every fetch).
    pub fn in_maximal_isr(&self, b: BrokerId) -> bool {
        self.isr.contains(&b)
            || self
                .pending_isr
                .as_ref()
                .is_some_and(|pending| pending.contains(b))
    }

    /// The size of the maximal ISR.
    pub fn maximal_isr_len(&self) -> usize {
        self.isr.len() + self.pending_only().count()
    }

    /// What this leader knows of each follower, in replica order (empty on
    /// a follower).
    #[inline]
    pub fn followers<'t>(&self, table: &'t FollowerTable) -> &'t [FollowerState] {
        table.of(self.lanes)
    }

    pub fn follower<'t>(
        &self,
        table: &'t FollowerTable,
        broker: BrokerId,
    ) -> Option<&'t FollowerState> {
        self.followers(table).iter().find(|f| f.broker == broker)
    }

    fn follower_mut<'t>(
        &self,
        table: &'t mut FollowerTable,
        broker: BrokerId,
    ) -> Option<&'t mut FollowerState> {
        table
            .of_mut(self.lanes)
            .iter_mut()
            .find(|f| f.broker == broker)
    }

    /// Become leader in `reg.leader_epoch`: record the epoch start in the cache
    /// before any write (KAFKA-7415) and reset follower state (Replica.resetReplicaState).
    pub fn make_leader(
        &mut self,
        table: &mut FollowerTable,
        me: BrokerId,
        reg: &PartitionRegistration,
        now: u64,
    ) {
        let was_leader = self.is_leader();
        let new_epoch = !was_leader || self.leader_epoch != reg.leader_epoch;
        self.role = Role::Leader;
        self.leader = Some(me);
        set_shared(&mut self.isr, &reg.isr);
        set_shared(&mut self.replicas, &reg.replicas);
        self.partition_epoch = reg.partition_epoch;
        // Partition.makeLeader: a leader elected uncleanly (RECOVERING) marks
        // itself RECOVERED as it takes over; the controller learns it from the
        // leader's next AlterPartition, which carries the leader's state.
        self.recovery = LeaderRecoveryState::Recovered;
        self.pending_isr = None;
        if new_epoch {
            self.leader_epoch = reg.leader_epoch;
            let leo = self.log.log_end_offset();
            self.log.assign_epoch(reg.leader_epoch, leo);
            let previous = self.followers(table);
            let states: Vec<FollowerState> = reg
                .replicas
                .iter()
                .filter(|b| **b != me)
                .map(|&b| {
                    let in_sync = reg.isr.contains(&b);
                    let last_caught_up_ms = Opt64::from(in_sync.then_some(now));
                    // Replica.resetReplicaState: a broker that was already
                    // leader keeps what it knew of each follower's log end; a
                    // new leader knows nothing until the follower fetches.
                    match previous.iter().find(|f| f.broker == b) {
                        Some(f) if was_leader => FollowerState {
                            broker: b,
                            log_end_offset: f.log_end_offset,
                            last_caught_up_ms,
                            last_fetch_ms: in_sync.then_some(now).into(),
                            last_fetch_leader_leo: leo,
                            broker_epoch: f.broker_epoch,
                        },
                        _ => FollowerState {
                            broker: b,
                            log_end_offset: Opt64::NONE,
                            last_caught_up_ms,
                            last_fetch_ms: Opt64::NONE,
                            last_fetch_leader_leo: 0,
                            broker_epoch: 0,
                        },
                    }
                })
                .collect();
            self.lanes = table.place(self.lanes, &states);
        }
    }

    pub fn make_follower(&mut self, reg: &PartitionRegistration) {
        self.role = if reg.leader.is_some() {
            Role::Follower
        } else {
            Role::Unknown
        };
        self.leader = reg.leader;
        self.leader_epoch = reg.leader_epoch;
        set_shared(&mut self.isr, &reg.isr);
        set_shared(&mut self.replicas, &reg.replicas);
        self.partition_epoch = reg.partition_epoch;
        self.recovery = reg.leader_recovery_state;
        self.pending_isr = None;
        self.lanes = self.lanes.emptied();
        self.fetch_backoff_until = 0;
        self.reconciled = false;
    }

    /// lastCaughtUpTimeMs update on a follower fetch (Replica.updateFetchStateOrThrow).
    /// It changes only the table, not the replica (which a snapshot may share).
    pub fn record_follower_fetch(
        &self,
        table: &mut FollowerTable,
        broker: BrokerId,
        fetch_offset: u64,
        broker_epoch: u64,
        now: u64,
    ) -> bool {
        let leader_leo = self.log.log_end_offset();
        let Some(f) = self.follower_mut(table, broker) else {
            return false;
        };
        let moved = f.log_end_offset != Opt64::some(fetch_offset);
        if fetch_offset >= leader_leo {
            f.last_caught_up_ms = f.last_caught_up_ms.max(Opt64::some(now));
        } else if fetch_offset >= f.last_fetch_leader_leo {
            f.last_caught_up_ms = f.last_caught_up_ms.max(f.last_fetch_ms);
        }
        f.last_fetch_leader_leo = f.last_fetch_leader_leo.max(leader_leo);
        f.last_fetch_ms = Opt64::some(now);
        f.log_end_offset = Opt64::some(fetch_offset);
        f.broker_epoch = broker_epoch;
        moved
    }

    fn is_caught_up(&self, f: &FollowerState, now: u64, lag_max_ms: u64) -> bool {
        f.log_end_offset == Opt64::some(self.log.log_end_offset())
            || f.last_caught_up_ms
                .get()
                .is_some_and(|t| now.saturating_sub(t) <= lag_max_ms)
    }

    pub fn effective_min_isr(&self, min_insync_replicas: u32) -> usize {
        (min_insync_replicas as usize).min(self.replicas.len())
    }

    /// Partition.maybeIncrementLeaderHW. `eligible(b, epoch)` is
    /// Partition.isReplicaIsrEligible for broker b whose last fetch carried
    /// broker epoch `epoch` (see [`IsrEligible`]). Returns true when the HW
    /// moved.
    pub fn maybe_increment_high_watermark(
        &mut self,
        table: &FollowerTable,
        now: u64,
        lag_max_ms: u64,
        min_insync_replicas: u32,
        strict_min_isr: bool,
        eligible: &IsrEligible<'_>,
    ) -> bool {
        match self.next_high_watermark(
            table,
            now,
            lag_max_ms,
            min_insync_replicas,
            strict_min_isr,
            eligible,
        ) {
            Some(hw) => {
                self.log.high_watermark = hw;
                true
            }
            None => false,
        }
    }

    /// The HW [`Replica::maybe_increment_high_watermark`] would move to, if
    /// it would move: asked first, so a leader whose HW stays put is not
    /// copied away from a snapshot that shares it.
    pub fn next_high_watermark(
        &self,
        table: &FollowerTable,
        now: u64,
        lag_max_ms: u64,
        min_insync_replicas: u32,
        strict_min_isr: bool,
        eligible: &IsrEligible<'_>,
    ) -> Option<u64> {
        if !self.is_leader() {
            return None;
        }
        if strict_min_isr && self.isr.len() < self.effective_min_isr(min_insync_replicas) {
            return None;
        }
        let leo = self.log.log_end_offset();
        let mut candidate = leo;
        for f in self.followers(table) {
            let counts = self.in_maximal_isr(f.broker)
                || (self.is_caught_up(f, now, lag_max_ms) && eligible(f.broker, f.broker_epoch));
            if !counts {
                continue;
            }
            match f.log_end_offset.get() {
                Some(l) => candidate = candidate.min(l),
                None => return None,
            }
        }
        (candidate > self.log.high_watermark).then_some(candidate.min(leo))
    }

    /// Whether follower `b`, which has just fetched, should join the ISR
    /// (Partition.maybeExpandIsr / needsExpandIsr / isFollowerInSync): it is
    /// outside the ISR, its LEO has reached the HW and the start of the
    /// leader's epoch, and it is eligible. Only the follower that fetched is
    /// considered: another one outside the ISR that is caught up joins on
    /// its own next fetch (`prepareIsrExpand` adds one broker).
    pub fn should_join_isr(
        &self,
        table: &FollowerTable,
        b: BrokerId,
        eligible: &IsrEligible<'_>,
    ) -> bool {
        if self.isr.contains(&b) {
            return false;
        }
        let Some(f) = self.follower(table, b) else {
            return false;
        };
        let epoch_start = self.log.epoch_start_offset(self.leader_epoch).unwrap_or(0);
        f.log_end_offset
            .get()
            .is_some_and(|leo| leo >= self.log.high_watermark && leo >= epoch_start)
            && eligible(f.broker, f.broker_epoch)
    }

    /// ISR members that have not caught up within replica.lag.time.max.ms.
    pub fn out_of_sync(
        &self,
        table: &FollowerTable,
        me: BrokerId,
        now: u64,
        lag_max_ms: u64,
    ) -> Vec<BrokerId> {
        self.isr
            .iter()
            .copied()
            .filter(|b| *b != me)
            .filter(|b| match self.follower(table, *b) {
                Some(f) => !self.is_caught_up(f, now, lag_max_ms),
                None => true,
            })
            .collect()
    }

    /// The follower truncation rule (KAFKA_REPLICATION.md §7,
    /// AbstractFetcherThread.getOffsetTruncationState) given the leader's
    /// answer `(epoch, end_offset)`.
    pub fn truncation_point(&self, leader_epoch: u32, leader_end: u64) -> Truncation {
        let leo = self.log.log_end_offset();
        match self.log.end_offset_for(leader_epoch) {
            Some((own_epoch, own_end)) if own_epoch == leader_epoch => Truncation {
                to: leader_end.min(own_end).min(leo),
                ask_again: false,
            },
            Some((_, own_end)) => Truncation {
                to: own_end.min(leo),
                ask_again: true,
            },
            // The follower has nothing as old as the leader's epoch.
            None => Truncation {
                to: self.log.high_watermark.min(leo),
                ask_again: false,
            },
        }
    }

    /// Where a replica that starts following truncates before fetching, in the
    /// pre-KIP-101 mode (its own high watermark); `None` in the modern mode,
    /// where truncation happens on fetch through the diverging epoch.
    pub fn truncation_on_become_follower(&self, mode: TruncationMode) -> Option<u64> {
        match mode {
            TruncationMode::HighWatermark => Some(self.log.high_watermark),
            TruncationMode::LeaderEpoch => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::log::Record;

    fn replica_with(epochs: &[u32]) -> Replica {
        let mut r = Replica::new(0, &[1, 2]);
        for (i, e) in epochs.iter().enumerate() {
            r.log.append(Record::plain(i as u64, *e));
        }
        r
    }

    #[test]
    fn follower_truncates_to_min_of_leader_and_own_epoch_end() {
        // T3 step 4: B1 has epoch 0 up to 5, leader says epoch 0 ends at 4.
        let r = replica_with(&[0, 0, 0, 0, 0]);
        let t = r.truncation_point(0, 4);
        assert_eq!(
            t,
            Truncation {
                to: 4,
                ask_again: false
            }
        );
    }

    #[test]
    fn kip_279_follower_without_the_leaders_epoch_walks_back_and_asks_again() {
        // T6 iterative vector: follower LEO 200, epochs 3 (101..120?) then 5.
        let mut epochs = vec![0u32; 101];
        epochs.extend(std::iter::repeat_n(3, 19));
        epochs.extend(std::iter::repeat_n(5, 80));
        let r = replica_with(&epochs);
        assert_eq!(r.log.log_end_offset(), 200);
        assert_eq!(r.log.end_offset_for(4), Some((3, 120)));
        // leader answers (4, 155): follower lacks epoch 4 → truncate to 120, ask again
        assert_eq!(
            r.truncation_point(4, 155),
            Truncation {
                to: 120,
                ask_again: true
            }
        );
        // after truncating to 120 it asks with epoch 3, leader answers (3, 101)
        let mut r2 = r.clone();
        r2.log.truncate_to(120);
        assert_eq!(
            r2.truncation_point(3, 101),
            Truncation {
                to: 101,
                ask_again: false
            }
        );
    }

    fn registration(leader: BrokerId, epoch: u32) -> PartitionRegistration {
        PartitionRegistration {
            replicas: vec![1, 2, 3],
            isr: vec![1, 2, 3],
            leader: Some(leader),
            leader_epoch: epoch,
            partition_epoch: epoch,
            leader_recovery_state: LeaderRecoveryState::Recovered,
            elr: Vec::new(),
            last_known_elr: Vec::new(),
        }
    }

    #[test]
    fn a_leader_re_elected_in_a_new_epoch_keeps_its_followers_log_end_offsets() {
        // Replica.resetReplicaState: only a broker that was not leader before
        // forgets what it knew of its followers.
        let mut t = FollowerTable::default();
        let mut r = Replica::new(0, &[1, 2, 3]);
        for i in 0..5 {
            r.log.append(Record::plain(i, 0));
        }
        r.make_leader(&mut t, 1, &registration(1, 0), 0);
        r.record_follower_fetch(&mut t, 2, 5, 7, 100);
        r.record_follower_fetch(&mut t, 3, 3, 8, 100);
        r.make_leader(&mut t, 1, &registration(1, 1), 200);
        assert_eq!(
            r.follower(&t, 2).and_then(|f| f.log_end_offset.get()),
            Some(5)
        );
        assert_eq!(
            r.follower(&t, 3).and_then(|f| f.log_end_offset.get()),
            Some(3)
        );
        assert_eq!(
            r.follower(&t, 2).and_then(|f| f.last_caught_up_ms.get()),
            Some(200)
        );
        // A broker that becomes leader from follower knows nothing yet.
        let mut f = Replica::new(0, &[1, 2, 3]);
        f.make_follower(&registration(2, 0));
        f.make_leader(&mut t, 1, &registration(1, 1), 300);
        assert_eq!(f.follower(&t, 2).and_then(|x| x.log_end_offset.get()), None);
    }

    /// Replica.resetReplicaState gives a follower outside the ISR a
    /// lastCaughtUpTimeMs of 0, i.e. "never"; Replica.isCaughtUp then holds
    /// only once it reaches the leader's log end. Such a follower must not
    /// hold back the high watermark (Partition.maybeIncrementLeaderHW counts
    /// only the maximal ISR and followers that *are* caught up), however
    /// early in the run the leader is elected.
    #[test]
    fn a_follower_that_never_caught_up_does_not_hold_the_high_watermark_early_in_a_run() {
        let mut t = FollowerTable::default();
        let mut r = Replica::new(0, &[1, 2, 3]);
        for i in 0..5 {
            r.log.append(Record::plain(i, 0));
        }
        let mut reg = registration(1, 1);
        reg.isr = vec![1, 2];
        // Became leader 2 s into the run; follower 3 is alive but not in
        // the ISR and has not fetched yet (its log end is unknown).
        r.make_follower(&registration(2, 0));
        r.make_leader(&mut t, 1, &reg, 2_000);
        r.record_follower_fetch(&mut t, 2, 5, 7, 2_100);
        let moved = r.maybe_increment_high_watermark(&t, 2_200, 30_000, 1, true, &|_, _| true);
        assert!(moved, "follower 3 never caught up: it does not count");
        assert_eq!(r.log.high_watermark, 5);
        assert!(r.out_of_sync(&t, 1, 2_200, 30_000).is_empty());
    }

    /// `Opt64` orders and compares as the `Option<u64>` it stands for, so
    /// a follower's lastCaughtUpTimeMs still moves only forward with `max`.
    #[test]
    fn opt64_orders_as_the_option_it_stands_for() {
        let values = [None, Some(0), Some(1), Some(7), Some(u64::MAX - 1)];
        for a in values {
            assert_eq!(Opt64::from(a).get(), a);
            for b in values {
                assert_eq!(Opt64::from(a).cmp(&Opt64::from(b)), a.cmp(&b));
                assert_eq!(Opt64::from(a).max(Opt64::from(b)).get(), a.max(b));
            }
        }
        assert_eq!(std::mem::size_of::<Opt64>(), 8);
    }

    /// What a checkpoint may keep as an older copy plus a delta
    /// (`crate::checkpoint`): a replica whose log moved (records, HW, flush
    /// and checkpoint offsets) comes back field for field from the older
    /// copy; one that differs from it in anything else (each field below,
    /// one at a time) is not written as a delta but kept whole.
    #[test]
    fn a_replica_is_written_against_its_older_copy_only_when_its_log_alone_moved() {
        let mut base = replica_with(&[0, 0, 0]);
        base.role = Role::Follower;
        base.leader = Some(2);
        base.isr = Rc::from(&[1, 2][..]);
        let mut moved = base.clone();
        moved.log.append(Record::plain(3, 0));
        moved.log.high_watermark = 2;
        moved.log.flushed_offset = 4;
        moved.log.checkpointed_high_watermark = 1;
        let delta = ReplicaDelta::of(&moved, &base).expect("only the log moved");
        assert!(delta.apply(&base).same_as(&moved));
        assert!(!base.same_as(&moved));
        // The same ISR change pending on both sides is the older copy's.
        let pending = || Some(Box::new(PendingIsr::new(7, Vec::new())));
        let (mut older, mut newer) = (base.clone(), moved.clone());
        (older.pending_isr, newer.pending_isr) = (pending(), pending());
        let delta = ReplicaDelta::of(&newer, &older).expect("the same ISR change pending");
        assert!(delta.apply(&older).same_as(&newer));

        let mut table = FollowerTable::default();
        let lanes = table.place(Lanes::NONE, &[FollowerState::default()]);
        type Change = fn(&mut Replica, Lanes);
        let changes: [(&str, Change); 14] = [
            ("role", |r, _| r.role = Role::Leader),
            ("reconciled", |r, _| r.reconciled = !r.reconciled),
            ("known registration", |r, _| {
                r.known_registration = !r.known_registration
            }),
            ("recovery", |r, _| {
                r.recovery = LeaderRecoveryState::Recovering
            }),
            ("leader epoch", |r, _| r.leader_epoch += 1),
            ("fetch backoff", |r, _| r.fetch_backoff_until += 100),
            ("lanes", |r, lanes| r.lanes = lanes),
            ("pending ISR", |r, _| {
                r.pending_isr = Some(Box::new(PendingIsr::new(1, Vec::new())))
            }),
            ("partition", |r, _| r.partition += 1),
            ("leader", |r, _| r.leader = Some(1)),
            ("partition epoch", |r, _| r.partition_epoch += 1),
            ("ISR", |r, _| r.isr = Rc::from(&[1][..])),
            ("replicas", |r, _| r.replicas = Rc::from(&[1, 2, 3][..])),
            ("a new leader epoch in the log", |r, _| {
                r.log.append(Record::plain(9, 1));
            }),
        ];
        for (what, change) in changes {
            let mut r = moved.clone();
            change(&mut r, lanes);
            assert!(ReplicaDelta::of(&r, &base).is_none(), "{what} changed");
            // And the other way: an older copy with the change.
            if what != "a new leader epoch in the log" {
                let mut older = base.clone();
                change(&mut older, lanes);
                assert!(
                    ReplicaDelta::of(&moved, &older).is_none(),
                    "{what} changed (older)"
                );
            }
        }
        // Only the epoch cache moved (a new leader epoch, no record of it yet).
        let mut r = moved.clone();
        r.log.assign_epoch(1, r.log.log_end_offset());
        assert!(ReplicaDelta::of(&r, &base).is_none(), "epoch cache changed");
        // The same cache, and the first record of its latest epoch since:
        // the last record's epoch moved alone.
        let mut led = base.clone();
        led.log.assign_epoch(1, led.log.log_end_offset());
        let mut first = led.clone();
        first.log.append(Record::plain(3, 1));
        assert_eq!(first.log.epochs(), led.log.epochs());
        assert!(
            ReplicaDelta::of(&first, &led).is_none(),
            "last record's epoch changed"
        );
    }
}
