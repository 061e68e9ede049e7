//! The controller's one rule for changing a partition: given its current
//! registration and a target ISR, work out the eligible leader replicas, elect
//! a leader and produce the next registration — or nothing, when nothing
//! changes. Kafka's `PartitionChangeBuilder` (metadata/.../controller) does the
//! same job for every change: a fenced broker, a controlled shutdown, an
//! unclean restart, a preferred election and a leader's own AlterPartition all
//! go through it (KAFKA_REPLICATION.md §3, §5).
//!
//! The steps, in Kafka's order:
//! 1. ELR (KIP-966, only when enabled): with the target ISR at or above the
//!    effective `min.insync.replicas` the ELR is cleared; below it, every
//!    member of the current ISR or ELR that leaves the ISR becomes eligible,
//!    except a replica known to have shut down uncleanly.
//! 2. Election. Preferred: the first assigned replica if it is a valid leader,
//!    else the current leader if still valid, else the next valid replica.
//!    Otherwise: keep a valid current leader; else the first valid replica in
//!    assignment order (in the ISR, or in the ELR when the ISR is empty); else,
//!    with ELR on and ISR and ELR both empty, the last known leader — an
//!    unclean choice taken without `unclean.leader.election.enable` (Kafka
//!    docs, "Eligible Leader Replicas"); else, with unclean election enabled,
//!    the first acceptable replica. A leader elected from the ELR becomes the
//!    ISR on its own; an unclean leader too, in the RECOVERING state.
//! 3. An unclean election (or ELR off) clears the ELR.
//! 4. Without ELR an empty target ISR is not written: the last member stays
//!    (the ISR never becomes empty).
//! 5. The last known leader (ELR on) is remembered when a change leaves the
//!    partition without a leader and nothing is remembered yet, and forgotten
//!    when a change elects a leader (Kafka 4.4.0's maybeUpdateLastKnownLeader,
//!    checked by tests/oracle.rs).
//! 6. A new leader (or none) bumps the leader epoch; any change bumps the
//!    partition epoch.

use super::protocol::{BrokerId, LeaderRecoveryState, PartitionRegistration};

/// Which election the caller asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum Election {
    /// Keep a valid leader, else any valid replica (no unclean choice but the
    /// ELR's last known leader).
    Clean,
    /// As `Clean`, then an out-of-sync replica if nothing else can lead
    /// (`unclean.leader.election.enable=true`).
    Unclean,
    /// The first assigned replica, when it can lead.
    Preferred,
}

/// How the leader of the new registration was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum Elected {
    /// The leader did not change (it may still be none).
    Unchanged,
    /// A clean election from the ISR.
    FromIsr,
    /// From the eligible leader replicas, the ISR being empty (KIP-966).
    FromElr,
    /// The last known leader, ISR and ELR being empty: unclean (RECOVERING).
    LastKnownLeader,
    /// An out-of-sync replica: unclean (RECOVERING).
    Unclean,
    /// Nobody can lead: the partition goes offline.
    NoLeader,
}

impl Elected {
    pub fn is_unclean(self) -> bool {
        matches!(self, Elected::LastKnownLeader | Elected::Unclean)
    }
}

/// What a change asks for.
pub struct ChangeRequest<'a> {
    pub target_isr: Vec<BrokerId>,
    pub election: Election,
    pub elr_enabled: bool,
    /// min(min.insync.replicas, replication factor).
    pub effective_min_isr: usize,
    /// Replicas known to have restarted after an unclean shutdown.
    pub unclean_shutdown: &'a [BrokerId],
    /// isAcceptableLeader: registered, unfenced, not shutting down.
    pub acceptable: &'a dyn Fn(BrokerId) -> bool,
    /// The leader reports it has recovered (KIP-704 AlterPartition).
    pub recovered: bool,
}

/// The next registration and how its leader was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Change {
    pub registration: PartitionRegistration,
    pub elected: Elected,
}

/// Build the change, or `None` when the registration would not change.
pub fn build(current: &PartitionRegistration, req: &ChangeRequest) -> Option<Change> {
    let acceptable = req.acceptable;
    let replicas = &current.replicas;
    let in_order = |set: &dyn Fn(BrokerId) -> bool| -> Vec<BrokerId> {
        replicas.iter().copied().filter(|b| set(*b)).collect()
    };
    let mut target_isr = in_order(&|b| req.target_isr.contains(&b));
    let mut target_elr: Vec<BrokerId> = current.elr.clone();

    // 1. maybePopulateTargetElr.
    if req.elr_enabled {
        if target_isr.len() >= req.effective_min_isr {
            target_elr.clear();
        } else {
            let candidates = |b: BrokerId| target_elr.contains(&b) || current.isr.contains(&b);
            target_elr = in_order(&|b| {
                candidates(b) && !target_isr.contains(&b) && !req.unclean_shutdown.contains(&b)
            });
        }
    }

    // 2. Election.
    let valid = |b: BrokerId, isr: &[BrokerId], elr: &[BrokerId]| {
        (isr.contains(&b) || (isr.is_empty() && elr.contains(&b))) && acceptable(b)
    };
    let current_valid = current
        .leader
        .filter(|l| valid(*l, &target_isr, &target_elr));
    let first_valid = replicas
        .iter()
        .copied()
        .find(|b| valid(*b, &target_isr, &target_elr));
    // canElectLastKnownLeader: ELR on, ISR and ELR empty, one acceptable
    // last known leader. Both kinds of election try it (electPreferredLeader
    // and electAnyLeader).
    let last_known = (req.elr_enabled
        && target_isr.is_empty()
        && target_elr.is_empty()
        && current.last_known_elr.len() == 1
        && acceptable(current.last_known_elr[0]))
    .then(|| current.last_known_elr[0]);
    let (leader, unclean) = match req.election {
        Election::Preferred => {
            let preferred = replicas
                .first()
                .copied()
                .filter(|b| valid(*b, &target_isr, &target_elr));
            match preferred.or(current_valid).or(first_valid) {
                Some(l) => (Some(l), false),
                None => (last_known, last_known.is_some()),
            }
        }
        Election::Clean | Election::Unclean => {
            if let Some(l) = current_valid.or(first_valid) {
                (Some(l), false)
            } else if let Some(l) = last_known {
                (Some(l), true)
            } else if req.election == Election::Unclean {
                match replicas.iter().copied().find(|b| acceptable(*b)) {
                    Some(b) => (Some(b), true),
                    None => (None, false),
                }
            } else {
                (None, false)
            }
        }
    };
    let leader_changed = leader != current.leader;
    let mut recovery = if req.recovered {
        LeaderRecoveryState::Recovered
    } else {
        current.leader_recovery_state
    };
    let mut elected = if leader_changed {
        if leader.is_none() {
            Elected::NoLeader
        } else if unclean {
            if current.last_known_elr.first() == leader.as_ref()
                && target_isr.is_empty()
                && target_elr.is_empty()
                && req.elr_enabled
            {
                Elected::LastKnownLeader
            } else {
                Elected::Unclean
            }
        } else {
            Elected::FromIsr
        }
    } else {
        Elected::Unchanged
    };
    let mut isr_written: Option<Vec<BrokerId>> = None;
    if let (true, Some(l)) = (leader_changed, leader) {
        // An unclean choice forces ISR := {leader}, RECOVERING, even when the
        // replica is in the ELR (tryElection sets both; the unclean record then
        // clears the ELR).
        if unclean {
            isr_written = Some(vec![l]);
            // Unless the same change carries a RECOVERING leader's report that
            // it recovered: build() writes the target recovery state last,
            // over the election's (Kafka 4.4.0; tests/oracle.rs).
            if !(req.recovered && current.leader_recovery_state == LeaderRecoveryState::Recovering)
            {
                recovery = LeaderRecoveryState::Recovering;
            }
        } else if target_elr.contains(&l) {
            target_isr = vec![l];
            target_elr.retain(|b| *b != l);
            elected = Elected::FromElr;
        }
    }

    // 3. maybeUpdateRecordElr: an unclean election or ELR off clears the ELR.
    if isr_written.is_some() || !req.elr_enabled {
        target_elr.clear();
    }

    // 4. The ISR: an empty one is written only with ELR on.
    let isr = match isr_written {
        Some(isr) => isr,
        None if (!target_isr.is_empty() || req.elr_enabled) => target_isr,
        None => current.isr.clone(),
    };

    // 5. maybeUpdateLastKnownLeader (Kafka 4.4.0, ELR on, the balanced
    //    recovery default): a change that loses the leader remembers it when
    //    nothing is remembered yet, whatever the ISR still holds; a change that
    //    elects a leader forgets what was remembered. Nothing else touches it,
    //    not even an unclean election or ELR off.
    let mut last_known_elr = current.last_known_elr.clone();
    if req.elr_enabled && leader_changed {
        match leader {
            None if current.last_known_elr.is_empty() => {
                last_known_elr = current.leader.into_iter().collect();
            }
            Some(_) => last_known_elr.clear(),
            None => {}
        }
    }

    let registration = PartitionRegistration {
        replicas: current.replicas.clone(),
        isr,
        leader,
        leader_epoch: current.leader_epoch + u32::from(leader_changed),
        partition_epoch: current.partition_epoch,
        leader_recovery_state: recovery,
        elr: target_elr,
        last_known_elr,
    };
    if registration == *current {
        return None;
    }
    Some(Change {
        registration: PartitionRegistration {
            partition_epoch: current.partition_epoch + 1,
            ..registration
        },
        elected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(
        replicas: &[BrokerId],
        isr: &[BrokerId],
        leader: Option<BrokerId>,
    ) -> PartitionRegistration {
        PartitionRegistration {
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
            leader,
            leader_epoch: 0,
            partition_epoch: 0,
            leader_recovery_state: LeaderRecoveryState::Recovered,
            elr: Vec::new(),
            last_known_elr: Vec::new(),
        }
    }

    fn request<'a>(
        target_isr: &[BrokerId],
        election: Election,
        elr: bool,
        min_isr: usize,
        acceptable: &'a dyn Fn(BrokerId) -> bool,
    ) -> ChangeRequest<'a> {
        ChangeRequest {
            target_isr: target_isr.to_vec(),
            election,
            elr_enabled: elr,
            effective_min_isr: min_isr,
            unclean_shutdown: &[],
            acceptable,
            recovered: false,
        }
    }

    #[test]
    fn without_elr_the_last_isr_member_stays_and_the_partition_goes_offline() {
        let old = reg(&[1, 2, 3], &[1], Some(1));
        let alive = |b: BrokerId| b != 1;
        let c = build(&old, &request(&[], Election::Clean, false, 2, &alive)).unwrap();
        assert_eq!(c.registration.isr, vec![1]);
        assert_eq!(c.registration.leader, None);
        assert_eq!(c.registration.leader_epoch, 1);
        assert_eq!(c.elected, Elected::NoLeader);
    }

    #[test]
    fn leader_initiated_shrink_below_min_isr_fills_the_elr() {
        // ReplicationControlManager.alterPartition goes through the builder.
        let old = reg(&[1, 2, 3], &[1, 2], Some(1));
        let all = |_: BrokerId| true;
        let c = build(&old, &request(&[1], Election::Clean, true, 2, &all)).unwrap();
        assert_eq!(c.registration.isr, vec![1]);
        assert_eq!(c.registration.elr, vec![2]);
        assert_eq!(
            c.registration.leader_epoch, 0,
            "an ISR shrink keeps the leader epoch"
        );
        assert_eq!(c.registration.partition_epoch, 1);
    }

    #[test]
    fn last_known_leader_is_elected_without_unclean_election_once_unfenced() {
        let mut old = reg(&[1, 2, 3], &[], None);
        old.last_known_elr = vec![1];
        let only_1 = |b: BrokerId| b == 1;
        let c = build(&old, &request(&[], Election::Clean, true, 2, &only_1)).unwrap();
        assert_eq!(c.registration.leader, Some(1));
        assert_eq!(c.registration.isr, vec![1]);
        assert_eq!(
            c.registration.leader_recovery_state,
            LeaderRecoveryState::Recovering
        );
        assert_eq!(c.elected, Elected::LastKnownLeader);
        assert!(c.registration.last_known_elr.is_empty());
    }

    #[test]
    fn the_elr_is_preferred_over_the_last_known_leader() {
        let mut old = reg(&[1, 2, 3], &[], None);
        old.elr = vec![2];
        old.last_known_elr = vec![1];
        let all = |_: BrokerId| true;
        let c = build(&old, &request(&[], Election::Clean, true, 2, &all)).unwrap();
        assert_eq!(c.registration.leader, Some(2));
        assert_eq!(c.elected, Elected::FromElr);
        assert_eq!(c.registration.isr, vec![2]);
    }

    #[test]
    fn a_recovered_report_outlasts_an_unclean_election_in_the_same_change() {
        // Kafka 4.4.0's builder (tests/oracle.rs vector 2594's shape): the
        // target recovery state is written after the election's RECOVERING.
        let mut old = reg(&[1, 2, 3], &[1], Some(1));
        old.leader_recovery_state = LeaderRecoveryState::Recovering;
        let only_2 = |b: BrokerId| b == 2;
        let mut req = request(&[1], Election::Unclean, false, 2, &only_2);
        req.recovered = true;
        let c = build(&old, &req).unwrap();
        assert_eq!(c.registration.leader, Some(2));
        assert_eq!(c.registration.isr, vec![2]);
        assert_eq!(
            c.registration.leader_recovery_state,
            LeaderRecoveryState::Recovered
        );
        // Without the report, the unclean leader is RECOVERING.
        req.recovered = false;
        let c = build(&old, &req).unwrap();
        assert_eq!(
            c.registration.leader_recovery_state,
            LeaderRecoveryState::Recovering
        );
    }

    #[test]
    fn nothing_to_change_builds_nothing() {
        let old = reg(&[1, 2, 3], &[1, 2, 3], Some(1));
        let all = |_: BrokerId| true;
        assert!(build(&old, &request(&[1, 2, 3], Election::Clean, true, 2, &all)).is_none());
    }
}
