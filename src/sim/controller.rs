//! The active KRaft controller: broker liveness, leader election, ISR changes,
//! and the metadata log every broker replays (KAFKA_REPLICATION.md §3, §5).
//!
//! - A broker that misses heartbeats for `broker.session.timeout.ms` is fenced:
//!   it leaves every ISR (the last member stays, with no leader) and the
//!   partitions it led elect a new leader — the first replica in assignment order
//!   that is in the ISR and acceptable; the leader epoch is bumped.
//! - With `unclean.leader.election.enable` and no clean candidate, the first
//!   acceptable replica in assignment order leads with ISR = {itself}, in the
//!   RECOVERING state of KIP-704.
//! - No candidate at all: leader none, the partition is offline; it is elected
//!   again when a broker that can lead unfences.
//! - AlterPartition from a leader is validated before it changes the ISR
//!   (ReplicationControlManager.validateAlterPartitionData): stale epochs, an
//!   ISR outside the assignment or without the leader, a RECOVERING state with
//!   more than the leader, and any listed member — already in the ISR or not —
//!   that is unregistered, fenced, shutting down or at another broker epoch than
//!   the leader gave for it (INELIGIBLE_REPLICA, KIP-903). The leader epoch
//!   stays, the partition epoch grows; the leader's recovery state rides along,
//!   so an unclean leader's RECOVERED reaches the controller with its next ISR
//!   change.
//! - A registration from the incarnation already registered (a re-sent
//!   request) is amended: same broker epoch, same fencing state
//!   (ClusterControlManager.registerBroker); only a new incarnation gets a new
//!   epoch and has its predecessor cleaned up.
//!
//! The controller is its own node, not one of the brokers: crashing a broker
//! never kills it (controller failover belongs to the quorum, out of scope).

use std::rc::Rc;

use serde::Serialize;

use super::io::{Ctx, Timer};
use super::partition_change::{self, ChangeRequest, Elected, Election};
use super::protocol::*;
use super::shared::Pages;
use super::trace::{list, TraceKind};

/// Partition registrations per shared page.
const REGISTRATION_PAGE: usize = 64;

/// Milliseconds as seconds with three decimals, in integer arithmetic (no
/// float formatting code in the wasm).
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct BrokerRegistrationState {
    pub id: BrokerId,
    pub registered: bool,
    pub broker_epoch: u64,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    pub last_heartbeat_ms: u64,
    /// Metadata offset of this broker's registration record: it unfences once
    /// it has replayed that far.
    pub registration_offset: u64,
    /// The session has expired and the broker was fenced for it; checked
    /// again only after the broker heartbeats or registers anew.
    pub session_expired: bool,
    /// The process start (incarnation) this registration belongs to.
    pub incarnation: u32,
    /// The metadata offset the broker reported in its last heartbeat.
    pub reported_metadata_offset: u64,
    /// In controlled shutdown: the metadata log length once its leaderships
    /// were moved; it may stop when every active broker has replayed that far.
    pub controlled_shutdown_offset: u64,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Controller {
    pub brokers: Vec<BrokerRegistrationState>,
    /// In pages shared with snapshots (a registration changes only with
    /// an election or an ISR change).
    pub partitions: Pages<PartitionRegistration, REGISTRATION_PAGE>,
    /// Append-only; each record shared with snapshots. (The list itself,
    /// and the two unclean-election tables below, are copied with each
    /// checkpoint: 0.42 MB of the large bench's. Behind `Rc`s, shared until
    /// they change, they cost the sweep 0.5 % more instructions, measured
    /// 2026-12-04; the cluster reads the log's length on every event.)
    pub metadata_log: Vec<Rc<MetadataRecord>>,
    next_broker_epoch: u64,
    /// Metadata records appended since the last push to brokers.
    pub pending_push: bool,
    pub elections: u64,
    pub unclean_elections: u64,
    pub isr_shrinks: u64,
    pub isr_expands: u64,
    /// Per partition: the last unclean election (new leader, leader epoch).
    pub unclean_elected: Vec<Option<(BrokerId, u32)>>,
    /// Per partition: that unclean election was KIP-966's last known leader
    /// (no `unclean.leader.election.enable` needed).
    pub last_known_leader_elected: Vec<bool>,
    /// A leader rebalance is scheduled (QuorumController's imbalance schedule).
    pub rebalance_scheduled: bool,
    /// The metadata log length when the partitions were last found balanced:
    /// an imbalance only appears with a new partition record, so controller
    /// events that wrote none skip the scan.
    balanced_at_len: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum ElectionKind {
    Clean,
    Preferred,
}

impl Controller {
    /// The controller of a cluster already running at t=0: every partition
    /// led by its first replica with all replicas in sync, unless `initial`
    /// gives its registration as it stood (a scenario's `initial_state`, an
    /// imported cluster: the leader, epoch, ISR and ELR as pasted).
    pub fn new(
        brokers: u32,
        assignment: &[Vec<BrokerId>],
        initial: &[(PartitionIndex, PartitionRegistration)],
    ) -> Self {
        let mut partitions: Vec<PartitionRegistration> = assignment
            .iter()
            .map(|replicas| PartitionRegistration {
                replicas: replicas.clone(),
                isr: replicas.clone(),
                leader: replicas.first().copied(),
                leader_epoch: 0,
                partition_epoch: 0,
                leader_recovery_state: LeaderRecoveryState::Recovered,
                elr: Vec::new(),
                last_known_elr: Vec::new(),
            })
            .collect();
        for (p, reg) in initial {
            if let Some(slot) = partitions.get_mut(*p) {
                *slot = reg.clone();
            }
        }
        let metadata_log = partitions
            .iter()
            .enumerate()
            .map(|(p, r)| {
                Rc::new(MetadataRecord::Partition {
                    partition: p,
                    registration: r.clone(),
                })
            })
            .collect();
        let n = partitions.len();
        Controller {
            unclean_elected: vec![None; n],
            last_known_leader_elected: vec![false; n],
            brokers: (1..=brokers)
                .map(|id| BrokerRegistrationState {
                    id,
                    registered: false,
                    broker_epoch: 0,
                    fenced: true,
                    in_controlled_shutdown: false,
                    last_heartbeat_ms: 0,
                    registration_offset: 0,
                    session_expired: false,
                    incarnation: 0,
                    reported_metadata_offset: 0,
                    controlled_shutdown_offset: 0,
                })
                .collect(),
            partitions: Pages::from_vec(partitions),
            metadata_log,
            next_broker_epoch: 1,
            pending_push: false,
            elections: 0,
            unclean_elections: 0,
            isr_shrinks: 0,
            isr_expands: 0,
            rebalance_scheduled: false,
            balanced_at_len: None,
        }
    }

    /// IsrShrinks / IsrExpands: a committed ISR change is a shrink when a
    /// member left and an expansion when one joined, so an election that
    /// replaces a dead ISR by its new leader ({1} → {2}) is both.
    fn count_isr_change(&mut self, before: &[BrokerId], after: &[BrokerId]) {
        if before.iter().any(|b| !after.contains(b)) {
            self.isr_shrinks += 1;
        }
        if after.iter().any(|b| !before.contains(b)) {
            self.isr_expands += 1;
        }
    }

    /// A partition led by a replica other than its preferred (first) one.
    fn imbalanced(&self, p: PartitionIndex) -> bool {
        let r = &self.partitions[p];
        r.leader.is_some() && r.leader != r.replicas.first().copied()
    }

    /// QuorumController.maybeScheduleNextBalancePartitionLeaders: with
    /// auto.leader.rebalance.enable, once some partition is imbalanced and no
    /// rebalance is pending, one is scheduled
    /// leader.imbalance.check.interval.seconds later — counted from when the
    /// imbalance appeared, not on a fixed clock.
    pub fn maybe_schedule_rebalance(&mut self, ctx: &mut Ctx) {
        let len = self.metadata_log.len();
        if self.rebalance_scheduled
            || !ctx.config.auto_leader_rebalance_enable
            || self.balanced_at_len == Some(len)
        {
            return;
        }
        if (0..self.partitions.len()).any(|p| self.imbalanced(p)) {
            self.rebalance_scheduled = true;
            self.balanced_at_len = None;
            ctx.after(
                ctx.config.leader_imbalance_check_interval_seconds * 1000,
                Timer::LeaderRebalance,
            );
        } else {
            self.balanced_at_len = Some(len);
        }
    }

    fn broker(&self, b: BrokerId) -> Option<&BrokerRegistrationState> {
        self.brokers.get(b as usize - 1)
    }

    fn broker_mut(&mut self, b: BrokerId) -> Option<&mut BrokerRegistrationState> {
        self.brokers.get_mut((b as usize).wrapping_sub(1))
    }

    /// isAcceptableLeader: registered, unfenced, not shutting down.
    pub fn acceptable(&self, b: BrokerId) -> bool {
        self.broker(b)
            .is_some_and(|s| s.registered && !s.fenced && !s.in_controlled_shutdown)
    }

    fn append(&mut self, rec: MetadataRecord) {
        self.metadata_log.push(Rc::new(rec));
        self.pending_push = true;
    }

    fn append_broker_record(&mut self, b: BrokerId) {
        if let Some(s) = self.broker(b) {
            let rec = MetadataRecord::Broker {
                broker: b,
                broker_epoch: s.broker_epoch,
                fenced: s.fenced,
                in_controlled_shutdown: s.in_controlled_shutdown,
            };
            self.append(rec);
        }
    }

    pub fn on_message(&mut self, ctx: &mut Ctx, from: Node, msg: Message) {
        match msg {
            Message::BrokerRegistration {
                broker,
                clean_shutdown,
                incarnation,
            } => self.register(ctx, broker, clean_shutdown, incarnation),
            Message::BrokerHeartbeat {
                broker,
                broker_epoch,
                metadata_offset,
                want_fence,
                want_shutdown,
            } => self.heartbeat(
                ctx,
                broker,
                broker_epoch,
                metadata_offset,
                want_fence,
                want_shutdown,
            ),
            Message::AlterPartition {
                id,
                broker,
                broker_epoch,
                partition,
                leader_epoch,
                partition_epoch,
                new_isr,
                leader_recovery_state,
            } => {
                let result = self.alter_partition(
                    ctx,
                    broker,
                    broker_epoch,
                    partition,
                    leader_epoch,
                    partition_epoch,
                    new_isr,
                    leader_recovery_state,
                );
                ctx.send(
                    from,
                    Message::AlterPartitionResponse {
                        id,
                        partition,
                        result,
                    },
                );
            }
            _ => {}
        }
    }

    pub fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        match timer {
            Timer::SessionCheck { broker } => {
                let timeout = ctx.config.broker_session_timeout_ms;
                let Some(s) = self.broker(broker) else { return };
                // A broker that registered but never unfenced may still be in
                // ISRs (topics created at t=0): its session is checked too.
                let in_any_isr = self
                    .partitions
                    .iter()
                    .any(|r| r.isr.contains(&broker) || r.leader == Some(broker));
                if !s.registered || s.session_expired || (s.fenced && !in_any_isr) {
                    return;
                }
                // Kafka's tracker expires a session only strictly after the
                // deadline (a nanosecond later on its clock); we fence at the
                // deadline's millisecond (README, "Checked against Kafka 4.4.0").
                let deadline = s.last_heartbeat_ms + timeout;
                if ctx.now >= deadline {
                    if let Some(st) = self.broker_mut(broker) {
                        st.session_expired = true;
                    }
                    self.fence(
                        ctx,
                        broker,
                        format!("missed heartbeats for broker.session.timeout.ms={timeout}"),
                    );
                } else {
                    ctx.after(deadline - ctx.now, Timer::SessionCheck { broker });
                }
            }
            Timer::LeaderRebalance => {
                self.rebalance_scheduled = false;
                for p in 0..self.partitions.len() {
                    if self.imbalanced(p) {
                        self.elect_preferred(ctx, p);
                    }
                }
            }
            _ => {}
        }
    }

    /// A new registration of `broker`: the next broker epoch, the metadata
    /// offset its registration record is written at, and that record.
    /// Returns the broker epoch.
    fn record_registration(
        &mut self,
        now: u64,
        broker: BrokerId,
        incarnation: u32,
        fenced: bool,
    ) -> u64 {
        let epoch = self.next_broker_epoch;
        self.next_broker_epoch += 1;
        let offset = self.metadata_log.len() as u64;
        if let Some(s) = self.broker_mut(broker) {
            s.registered = true;
            s.broker_epoch = epoch;
            s.fenced = fenced;
            s.in_controlled_shutdown = false;
            s.last_heartbeat_ms = now;
            s.session_expired = false;
            s.registration_offset = offset;
            s.incarnation = incarnation;
            s.reported_metadata_offset = 0;
        }
        self.append_broker_record(broker);
        epoch
    }

    /// The cluster is already running at t=0: broker `broker` is registered
    /// and unfenced before any topic is used, as on a cluster that has been
    /// up for a while (Kafka never elects a fenced broker, so a cluster drawn
    /// as "fenced" must not lead). Returns its broker epoch.
    pub fn bootstrap_broker(&mut self, ctx: &mut Ctx, broker: BrokerId, incarnation: u32) -> u64 {
        let epoch = self.record_registration(ctx.now, broker, incarnation, false);
        let end = self.metadata_log.len() as u64;
        if let Some(s) = self.broker_mut(broker) {
            s.reported_metadata_offset = end;
        }
        ctx.trace(
            TraceKind::BrokerRegistered {
                broker,
                broker_epoch: epoch,
            },
            format!("Broker {broker} is registered (broker epoch {epoch}) and unfenced: the cluster is already running when the scenario starts."),
        );
        ctx.after(
            ctx.config.broker_session_timeout_ms,
            Timer::SessionCheck { broker },
        );
        epoch
    }

    /// BrokerHeartbeatManager.hasValidSession (Kafka 4.4.0: its
    /// BrokerHeartbeatTracker): heard from within broker.session.timeout.ms
    /// and not yet found expired, fenced or not — a broker that is still
    /// starting, or asked to be fenced, holds its session too.
    pub fn has_valid_session(&self, b: BrokerId, now: u64, session_timeout_ms: u64) -> bool {
        self.broker(b).is_some_and(|s| {
            s.registered && !s.session_expired && s.last_heartbeat_ms + session_timeout_ms >= now
        })
    }

    /// ClusterControlManager.registerBroker for the incarnation already
    /// registered (the broker re-sent its request, e.g. the answer was slow or
    /// lost): the registration is amended, not replaced. The broker epoch, the
    /// fencing and controlled-shutdown states stay; nothing is cleaned up for
    /// a previous incarnation, because there is none; the session is touched
    /// and the broker must replay past the new registration record.
    fn amend_registration(&mut self, ctx: &mut Ctx, broker: BrokerId) {
        let offset = self.metadata_log.len() as u64;
        let Some(s) = self.broker_mut(broker) else {
            return;
        };
        let epoch = s.broker_epoch;
        s.last_heartbeat_ms = ctx.now;
        s.session_expired = false;
        s.registration_offset = offset;
        self.append_broker_record(broker);
        registered(
            ctx,
            broker,
            epoch,
            format!("Broker {broker} registered again with the same incarnation (its earlier request went unanswered): the controller amends the registration and the broker epoch stays {epoch}."),
        );
    }

    fn register(
        &mut self,
        ctx: &mut Ctx,
        broker: BrokerId,
        clean_shutdown: bool,
        incarnation: u32,
    ) {
        let Some(s) = self.broker(broker) else { return };
        if s.registered && s.incarnation == incarnation {
            self.amend_registration(ctx, broker);
            return;
        }
        // ClusterControlManager.registerBroker: a new incarnation is turned
        // away while the previous one still holds a valid session. A quick
        // restart therefore does not shorten failure detection: the old
        // registration keeps its leaderships until its session expires.
        let timeout = ctx.config.broker_session_timeout_ms;
        if ctx.config.fence_on_reregistration
            && s.incarnation != incarnation
            && self.has_valid_session(broker, ctx.now, timeout)
        {
            let expires = s.last_heartbeat_ms + timeout;
            ctx.trace(
                TraceKind::BrokerRegistrationRejected {
                    broker,
                    error: ErrorCode::DuplicateBrokerRegistration.name().to_string(),
                },
                format!("Broker {broker} restarted and asks to register, but the controller still holds a live session for its previous incarnation (last heartbeat {} s ago; broker.session.timeout.ms={timeout}): DUPLICATE_BROKER_REGISTRATION. The old registration keeps its leaderships until the session expires at {} s; the broker retries every broker.heartbeat.interval.ms.", seconds(ctx.now - s.last_heartbeat_ms), seconds(expires)),
            );
            ctx.send(
                Node::Broker(broker),
                Message::BrokerRegistrationResponse {
                    result: Err(ErrorCode::DuplicateBrokerRegistration),
                },
            );
            return;
        }
        // A new incarnation: the old process is gone, so the controller handles
        // it as if the old registration were fenced — out of every ISR,
        // leadership elsewhere, a new leader epoch — before registering the new
        // one (RCM.handleBrokerShutdown). Without this a leader that lost its
        // unflushed tail could resume in the same epoch and overwrite offsets
        // its followers hold. `sim.fence.on.reregistration=false` gives the
        // older behaviour, in which a quick restart kept its ISR memberships.
        let holds_state = self
            .partitions
            .iter()
            .any(|r| r.isr.contains(&broker) || r.leader == Some(broker));
        let in_elr = self.partitions.iter().any(|r| r.elr.contains(&broker));
        if ctx.config.eligible_leader_replicas_enable && !clean_shutdown {
            // KIP-966 (RCM.handleBrokerUncleanShutdown): a broker that cannot
            // prove a clean shutdown may have lost unflushed records, so it
            // leaves every ISR and ELR; it must catch up to be eligible again.
            if s.registered && (holds_state || in_elr) {
                if let Some(st) = self.broker_mut(broker) {
                    st.fenced = true;
                }
                self.append_broker_record(broker);
                ctx.trace(
                    TraceKind::BrokerFenced {
                        broker,
                        reason: "unclean shutdown".to_string(),
                    },
                    format!("Broker {broker} re-registered after an unclean shutdown: it may have lost unflushed records, so the controller removes it from every ISR and ELR (KIP-966)."),
                );
                for p in 0..self.partitions.len() {
                    let reg = &self.partitions[p];
                    if reg.isr.contains(&broker)
                        || reg.elr.contains(&broker)
                        || reg.leader == Some(broker)
                    {
                        let isr = reg.isr.iter().copied().filter(|b| *b != broker).collect();
                        self.change(
                            ctx,
                            p,
                            isr,
                            ElectionKind::Clean,
                            "unclean_shutdown",
                            Some(broker),
                        );
                    }
                }
            }
        } else if s.registered && holds_state && ctx.config.fence_on_reregistration {
            self.fence(
                ctx,
                broker,
                "it re-registered with a new incarnation".to_string(),
            );
        }
        let epoch = self.record_registration(ctx.now, broker, incarnation, true);
        registered(
            ctx,
            broker,
            epoch,
            format!("Broker {broker} registered with the controller and got broker epoch {epoch}; it stays fenced until it has replayed the metadata log."),
        );
    }

    /// BrokerHeartbeatManager.calculateNextBrokerState, and what the
    /// controller writes for each transition.
    fn heartbeat(
        &mut self,
        ctx: &mut Ctx,
        broker: BrokerId,
        broker_epoch: u64,
        metadata_offset: u64,
        want_fence: bool,
        want_shutdown: bool,
    ) {
        let Some(s) = self.broker(broker) else { return };
        if !s.registered || s.broker_epoch != broker_epoch {
            let end = self.metadata_log.len() as u64;
            ctx.send(
                Node::Broker(broker),
                Message::BrokerHeartbeatResponse {
                    fenced: true,
                    caught_up: false,
                    shutdown_ok: false,
                    metadata_end: end,
                },
            );
            return;
        }
        let was_fenced = s.fenced;
        let in_cs = s.in_controlled_shutdown;
        let caught_up = metadata_offset > s.registration_offset;
        if let Some(s) = self.broker_mut(broker) {
            s.last_heartbeat_ms = ctx.now;
            s.session_expired = false;
            s.reported_metadata_offset = metadata_offset;
        }
        let leads = |c: &Self| c.partitions.iter().any(|r| r.leader == Some(broker));
        let mut shutdown_ok = false;
        if in_cs {
            // Granted once it leads nothing and every active broker has
            // replayed the records that moved its leaderships away.
            let cs_offset = self
                .broker(broker)
                .map_or(0, |s| s.controlled_shutdown_offset);
            if !leads(self) && self.lowest_active_offset() >= cs_offset {
                shutdown_ok = true;
                self.shut_down_now(ctx, broker);
            }
        } else if was_fenced {
            if want_shutdown {
                shutdown_ok = true;
                self.shut_down_now(ctx, broker);
            } else if !want_fence && caught_up {
                if let Some(s) = self.broker_mut(broker) {
                    s.fenced = false;
                }
                self.append_broker_record(broker);
                ctx.trace(
                    TraceKind::BrokerUnfenced { broker },
                    format!("Broker {broker} has caught up with the metadata log and is ready; the controller unfences it."),
                );
                ctx.after(
                    ctx.config.broker_session_timeout_ms,
                    Timer::SessionCheck { broker },
                );
                self.elect_offline_partitions(ctx);
            }
        } else if want_fence {
            // An unfenced broker asking to be fenced is fenced, or shut down
            // at once if it also wants to stop (calculateNextBrokerState,
            // UNFENCED). Our brokers ask for it only while starting.
            if want_shutdown {
                shutdown_ok = true;
                self.shut_down_now(ctx, broker);
            } else {
                self.fence(ctx, broker, "it asked to be fenced".to_string());
            }
        } else if want_shutdown {
            if leads(self) {
                // Step one: move its leaderships; the broker keeps heartbeating.
                if let Some(s) = self.broker_mut(broker) {
                    s.in_controlled_shutdown = true;
                }
                self.append_broker_record(broker);
                self.move_away_from(ctx, broker, "controlled_shutdown");
                let end = self.metadata_log.len() as u64;
                if let Some(s) = self.broker_mut(broker) {
                    s.controlled_shutdown_offset = end;
                }
            } else {
                shutdown_ok = true;
                self.shut_down_now(ctx, broker);
            }
        }
        let end = self.metadata_log.len() as u64;
        let fenced = self.broker(broker).is_some_and(|s| s.fenced);
        ctx.send(
            Node::Broker(broker),
            Message::BrokerHeartbeatResponse {
                fenced,
                caught_up,
                shutdown_ok,
                metadata_end: end,
            },
        );
    }

    /// The lowest metadata offset reported by an active broker (unfenced, not
    /// shutting down); none active: no limit.
    fn lowest_active_offset(&self) -> u64 {
        self.brokers
            .iter()
            .filter(|s| s.registered && !s.fenced && !s.in_controlled_shutdown)
            .map(|s| s.reported_metadata_offset)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// SHUTDOWN_NOW: the broker leaves every ISR and is fenced.
    fn shut_down_now(&mut self, ctx: &mut Ctx, broker: BrokerId) {
        if let Some(s) = self.broker_mut(broker) {
            s.in_controlled_shutdown = true;
        }
        self.move_away_from(ctx, broker, "controlled_shutdown");
        if let Some(s) = self.broker_mut(broker) {
            s.fenced = true;
        }
        self.append_broker_record(broker);
    }

    /// RCM.handleBrokerFenced: out of every ISR, leadership elsewhere.
    pub fn fence(&mut self, ctx: &mut Ctx, broker: BrokerId, reason: String) {
        if let Some(s) = self.broker_mut(broker) {
            s.fenced = true;
            // A fenced broker leaves controlled shutdown; asked again, it may
            // shut down at once (BrokerHeartbeatManager.touch).
            s.in_controlled_shutdown = false;
        }
        self.append_broker_record(broker);
        ctx.trace(
            TraceKind::BrokerFenced {
                broker,
                reason: reason.clone(),
            },
            format!("The controller fenced broker {broker} ({reason}): it leaves every ISR and the partitions it led elect new leaders."),
        );
        self.move_away_from(ctx, broker, "fenced");
    }

    fn move_away_from(&mut self, ctx: &mut Ctx, broker: BrokerId, why: &str) {
        for p in 0..self.partitions.len() {
            let reg = &self.partitions[p];
            if !reg.isr.contains(&broker) && reg.leader != Some(broker) {
                continue;
            }
            let mut isr: Vec<BrokerId> = reg.isr.iter().copied().filter(|b| *b != broker).collect();
            if isr.is_empty() && !ctx.config.eligible_leader_replicas_enable {
                // Without ELR the ISR never becomes empty: the last member stays.
                isr = reg.isr.clone();
            }
            self.change(ctx, p, isr, ElectionKind::Clean, why, None);
        }
    }

    /// Leaderless partitions get another chance whenever a broker unfences.
    fn elect_offline_partitions(&mut self, ctx: &mut Ctx) {
        for p in 0..self.partitions.len() {
            if self.partitions[p].leader.is_none() {
                let isr = self.partitions[p].isr.clone();
                self.change(ctx, p, isr, ElectionKind::Clean, "broker_unfenced", None);
            }
        }
    }

    pub fn elect_preferred(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        // The cluster resolves the partition before it asks (an unknown one is
        // the action's error); `get` keeps a stray index harmless.
        if let Some(isr) = self.partitions.get(p).map(|r| r.isr.clone()) {
            self.change(ctx, p, isr, ElectionKind::Preferred, "preferred", None);
        }
    }

    /// Apply a target ISR and (re-)elect a leader: PartitionChangeBuilder.
    pub fn change(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        target_isr: Vec<BrokerId>,
        kind: ElectionKind,
        why: &str,
        unclean_shutdown: Option<BrokerId>,
    ) {
        let old = self.partitions[p].clone();
        let unclean_enabled = ctx.partitions[p].config.unclean_leader_election_enable;
        let election = match kind {
            ElectionKind::Preferred => Election::Preferred,
            ElectionKind::Clean if unclean_enabled => Election::Unclean,
            ElectionKind::Clean => Election::Clean,
        };
        let shut: Vec<BrokerId> = unclean_shutdown.into_iter().collect();
        let acceptable = |b: BrokerId| self.acceptable(b);
        let request = ChangeRequest {
            target_isr,
            election,
            elr_enabled: ctx.config.eligible_leader_replicas_enable,
            effective_min_isr: (ctx.partitions[p].config.min_insync_replicas as usize)
                .min(old.replicas.len()),
            unclean_shutdown: &shut,
            acceptable: &acceptable,
            recovered: false,
        };
        let Some(built) = partition_change::build(&old, &request) else {
            return;
        };
        let reg = built.registration;
        let leader = reg.leader;
        let isr = reg.isr.clone();
        let leader_changed = reg.leader_epoch != old.leader_epoch;
        let unclean = built.elected.is_unclean();
        let from_elr = built.elected == Elected::FromElr;
        let last_known = built.elected == Elected::LastKnownLeader;
        self.partitions[p] = reg.clone();
        self.append(MetadataRecord::Partition {
            partition: p,
            registration: reg.clone(),
        });
        ctx.touch(p);
        let tp = ctx.tp(p);
        let topic = ctx.partitions[p].topic.clone();
        let partition = ctx.partitions[p].partition;
        if leader_changed {
            self.elections += 1;
            if unclean {
                self.unclean_elections += 1;
                if let Some(l) = leader {
                    self.unclean_elected[p] = Some((l, reg.leader_epoch));
                    self.last_known_leader_elected[p] = last_known;
                }
            }
            let election = if from_elr {
                "eligible_leader_replica"
            } else if last_known {
                "last_known_leader"
            } else if unclean {
                "unclean"
            } else if kind == ElectionKind::Preferred {
                "preferred"
            } else {
                why
            };
            let text = match (leader, old.leader) {
                (Some(l), _) if from_elr => format!(
                    "{tp} had an empty ISR; the controller elected broker {l} from the eligible leader replicas {} (KIP-966): it left the ISR while the high watermark was frozen below min.insync.replicas, so it holds every committed record. ISR := {{{l}}}, leader epoch {} → {}.",
                    list(&old.elr),
                    old.leader_epoch,
                    reg.leader_epoch
                ),
                (Some(l), _) if last_known => format!(
                    "{tp} had an empty ISR and no eligible leader replica; its last known leader, broker {l}, is unfenced again and the controller elects it (KIP-966: \"select the last known leader if it is unfenced\", no unclean.leader.election.enable needed). It may have lost records, so it leads in the RECOVERING state with ISR := {{{l}}}, leader epoch {} → {}.",
                    old.leader_epoch,
                    reg.leader_epoch
                ),
                (Some(l), prev) if unclean => format!(
                    "No in-sync replica of {tp} can lead (ISR was {}), and unclean.leader.election.enable=true: the controller elected out-of-sync broker {l} (ISR := {{{l}}}), leader epoch {} → {}. Records only the old ISR had are lost.{}",
                    list(&old.isr),
                    old.leader_epoch,
                    reg.leader_epoch,
                    prev.map(|b| format!(" Previous leader: {b}.")).unwrap_or_default()
                ),
                (Some(l), Some(prev)) => format!(
                    "{} {tp}: the controller elected broker {l} from ISR {} (first eligible in replica order {}), leader epoch {} → {}; previous leader {prev}.",
                    match why {
                        "controlled_shutdown" => "Controlled shutdown moves leadership of",
                        "preferred" => "Preferred leader election for",
                        _ => "Leader change for",
                    },
                    list(&isr),
                    list(&old.replicas),
                    old.leader_epoch,
                    reg.leader_epoch
                ),
                (Some(l), None) => format!(
                    "{tp} is back online: broker {l} is elected from ISR {}, leader epoch {} → {}.",
                    list(&isr),
                    old.leader_epoch,
                    reg.leader_epoch
                ),
                (None, prev) => format!(
                    "{tp} is offline (Leader: none): no replica in ISR {} is alive{}; leader epoch {} → {}. It comes back when an ISR member returns.{}",
                    list(&isr),
                    if unclean_enabled { "" } else { " and unclean election is disabled" },
                    old.leader_epoch,
                    reg.leader_epoch,
                    prev.map(|b| format!(" Previous leader: {b}.")).unwrap_or_default()
                ),
            };
            ctx.trace(
                TraceKind::LeaderElected {
                    topic: topic.clone(),
                    partition,
                    leader,
                    previous_leader: old.leader,
                    leader_epoch: reg.leader_epoch,
                    isr: isr.clone(),
                    election: election.to_string(),
                },
                text,
            );
        }
        if isr != old.isr {
            self.count_isr_change(&old.isr, &isr);
            ctx.trace(
                TraceKind::IsrChanged {
                    topic,
                    partition,
                    isr_before: old.isr.clone(),
                    isr_after: isr.clone(),
                    partition_epoch: reg.partition_epoch,
                    by: "controller".to_string(),
                },
                format!(
                    "The controller changed the ISR of {tp}: {} → {} (partition epoch {}).",
                    list(&old.isr),
                    list(&isr),
                    reg.partition_epoch
                ),
            );
        }
    }

    /// ReplicationControlManager.ineligibleReplicasForIsr: every listed
    /// member — new or already in the ISR — must be registered, unfenced, not
    /// in controlled shutdown, and, when the leader gave one, at the broker
    /// epoch of its current registration (KIP-903: a follower that restarted
    /// since the leader saw it fetch is refused).
    fn ineligible_members(&self, isr: &[BrokerState]) -> Vec<BrokerId> {
        isr.iter()
            .filter(|m| {
                !self.acceptable(m.broker_id)
                    || m.broker_epoch.is_some_and(|e| {
                        self.broker(m.broker_id)
                            .is_some_and(|s| s.broker_epoch != e)
                    })
            })
            .map(|m| m.broker_id)
            .collect()
    }

    /// ReplicationControlManager.alterPartition / validateAlterPartitionData.
    #[allow(clippy::too_many_arguments)]
    fn alter_partition(
        &mut self,
        ctx: &mut Ctx,
        broker: BrokerId,
        broker_epoch: u64,
        p: PartitionIndex,
        leader_epoch: u32,
        partition_epoch: u32,
        new_isr: Vec<BrokerState>,
        leader_recovery_state: LeaderRecoveryState,
    ) -> Result<PartitionRegistration, ErrorCode> {
        let Some(reg) = self.partitions.get(p).cloned() else {
            return Err(ErrorCode::InvalidRequest);
        };
        let Some(s) = self.broker(broker) else {
            return Err(ErrorCode::InvalidRequest);
        };
        // ReplicationControlManager.alterPartition's checks, in its order
        // (validateAlterPartitionData; checked by tests/oracle.rs). Three keep
        // our names: a stale broker epoch (Kafka: STALE_BROKER_EPOCH for the
        // whole request) and epochs from the future (Kafka: NOT_CONTROLLER;
        // our one controller is never stale).
        if s.broker_epoch != broker_epoch {
            return Err(ErrorCode::FencedLeaderEpoch);
        }
        if leader_epoch > reg.leader_epoch {
            return Err(ErrorCode::InvalidRequest);
        }
        if partition_epoch > reg.partition_epoch {
            return Err(ErrorCode::InvalidUpdateVersion);
        }
        if leader_epoch < reg.leader_epoch {
            return Err(ErrorCode::FencedLeaderEpoch);
        }
        if reg.leader != Some(broker) {
            return Err(ErrorCode::InvalidRequest);
        }
        if partition_epoch < reg.partition_epoch {
            return Err(ErrorCode::InvalidUpdateVersion);
        }
        let ids = BrokerState::ids(&new_isr);
        if !ids.contains(&broker) || ids.iter().any(|b| !reg.replicas.contains(b)) {
            return Err(ErrorCode::InvalidRequest);
        }
        if leader_recovery_state == LeaderRecoveryState::Recovering && ids.len() > 1 {
            return Err(ErrorCode::InvalidRequest);
        }
        if reg.leader_recovery_state == LeaderRecoveryState::Recovered
            && leader_recovery_state == LeaderRecoveryState::Recovering
        {
            return Err(ErrorCode::InvalidRequest);
        }
        if !self.ineligible_members(&new_isr).is_empty() {
            return Err(ErrorCode::IneligibleReplica);
        }
        let recovered = leader_recovery_state == LeaderRecoveryState::Recovered;
        let new_isr = ids;
        // The same builder as the controller's own changes: a shrink below
        // min.insync.replicas moves the dropped members into the ELR
        // (ReplicationControlManager.alterPartition → PartitionChangeBuilder).
        let unclean_enabled = ctx.partitions[p].config.unclean_leader_election_enable;
        let acceptable = |b: BrokerId| self.acceptable(b);
        let request = ChangeRequest {
            target_isr: new_isr,
            election: if unclean_enabled {
                Election::Unclean
            } else {
                Election::Clean
            },
            elr_enabled: ctx.config.eligible_leader_replicas_enable,
            effective_min_isr: (ctx.partitions[p].config.min_insync_replicas as usize)
                .min(reg.replicas.len()),
            unclean_shutdown: &[],
            acceptable: &acceptable,
            recovered,
        };
        let next = match partition_change::build(&reg, &request) {
            Some(c) if c.registration.leader == reg.leader => c.registration,
            // The leader stays valid (it is in its own ISR and alive), so the
            // builder never moves it here; nothing to change: the current state.
            _ => return Ok(reg),
        };
        let isr = next.isr.clone();
        self.partitions[p] = next.clone();
        self.append(MetadataRecord::Partition {
            partition: p,
            registration: next.clone(),
        });
        ctx.touch(p);
        if isr != reg.isr {
            let tp = ctx.tp(p);
            let grew = isr.len() > reg.isr.len();
            self.count_isr_change(&reg.isr, &isr);
            ctx.trace(
                TraceKind::IsrChanged {
                    topic: ctx.partitions[p].topic.clone(),
                    partition: ctx.partitions[p].partition,
                    isr_before: reg.isr.clone(),
                    isr_after: isr.clone(),
                    partition_epoch: next.partition_epoch,
                    by: format!("leader {broker}"),
                },
                if grew {
                    format!(
                        "ISR expand for {tp}: leader {broker} saw the follower catch up to the high watermark and the start of epoch {}; AlterPartition accepted, ISR {} → {} (partition epoch {}, leader epoch unchanged).",
                        reg.leader_epoch,
                        list(&reg.isr),
                        list(&isr),
                        next.partition_epoch
                    )
                } else {
                    format!(
                        "ISR shrink for {tp}: leader {broker} found a follower not caught up within replica.lag.time.max.ms={}; AlterPartition accepted, ISR {} → {} (partition epoch {}, leader epoch unchanged).",
                        ctx.config.replica_lag_time_max_ms,
                        list(&reg.isr),
                        list(&isr),
                        next.partition_epoch
                    )
                },
            );
        }
        Ok(next)
    }
}

/// A registration accepted: narrated, answered with the broker epoch, and the
/// session watched from now on (ClusterControlManager.registerBroker).
fn registered(ctx: &mut Ctx, broker: BrokerId, epoch: u64, text: String) {
    ctx.trace(
        TraceKind::BrokerRegistered {
            broker,
            broker_epoch: epoch,
        },
        text,
    );
    ctx.send(
        Node::Broker(broker),
        Message::BrokerRegistrationResponse { result: Ok(epoch) },
    );
    ctx.after(
        ctx.config.broker_session_timeout_ms,
        Timer::SessionCheck { broker },
    );
}
