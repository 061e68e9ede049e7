//! A small world for driving the controller directly: its handlers take a
//! [`Ctx`], so a test builds one around a config and a partition table, calls
//! the handler, and reads the controller's state and outputs afterwards.

use failover_lab::sim::broker::Broker;
use failover_lab::sim::config::{ClusterConfig, TopicConfig};
use failover_lab::sim::controller::{Controller, ElectionKind};
use failover_lab::sim::io::{Ctx, Timer};
use failover_lab::sim::log::Record;
use failover_lab::sim::partition::{FollowerState, Replica};
use failover_lab::sim::protocol::FetchPartition;
use failover_lab::sim::protocol::{
    BrokerId, BrokerState, ErrorCode, LeaderRecoveryState, Message, MetadataRecord, Node,
    PartitionRegistration,
};
use failover_lab::sim::trace::Trace;
use failover_lab::sim::PartitionInfo;

/// Kafka's MockTime starts at the wall clock, far from 0.
pub const T0: u64 = 1_000_000;

/// Kafka's `-1` leader.
pub const NO_LEADER: Option<BrokerId> = None;

pub struct World {
    pub config: ClusterConfig,
    pub partitions: Vec<PartitionInfo>,
    pub controller: Controller,
    pub trace: Trace,
    pub next_id: u64,
    pub now: u64,
    /// Outputs of the last handler call.
    pub sends: Vec<(Node, Message)>,
    pub timers: Vec<(u64, Timer)>,
}

/// A registration as Kafka's tests build one (`PartitionRegistration.Builder`).
pub fn registration(
    replicas: &[BrokerId],
    isr: &[BrokerId],
    leader: Option<BrokerId>,
    leader_epoch: u32,
    partition_epoch: u32,
) -> PartitionRegistration {
    PartitionRegistration {
        replicas: replicas.to_vec(),
        isr: isr.to_vec(),
        leader,
        leader_epoch,
        partition_epoch,
        leader_recovery_state: LeaderRecoveryState::Recovered,
        elr: Vec::new(),
        last_known_elr: Vec::new(),
    }
}

/// Sorted copy: Kafka keeps ELR sets in hash order, we keep replica order.
pub fn set(v: &[BrokerId]) -> Vec<BrokerId> {
    let mut s = v.to_vec();
    s.sort_unstable();
    s
}

impl World {
    /// `brokers` brokers, one partition per entry of `assignment`, every
    /// broker registered and unfenced (ReplicationControlTestContext's
    /// `registerBrokers` + `unfenceBrokers`).
    pub fn new(brokers: u32, assignment: &[Vec<BrokerId>], min_isr: u32, elr: bool) -> World {
        let topic = TopicConfig {
            min_insync_replicas: min_isr,
            unclean_leader_election_enable: false,
        };
        let config = ClusterConfig {
            eligible_leader_replicas_enable: elr,
            topic_defaults: topic.clone(),
            ..ClusterConfig::default()
        };
        let partitions = assignment
            .iter()
            .enumerate()
            .map(|(i, r)| PartitionInfo {
                topic: "foo".to_string(),
                topic_index: 0,
                partition: i as u32,
                replicas: r.clone(),
                config: topic.clone(),
            })
            .collect();
        let mut controller = Controller::new(brokers, assignment, &[]);
        for (i, s) in controller.brokers.iter_mut().enumerate() {
            s.registered = true;
            s.fenced = false;
            s.broker_epoch = 100 + i as u64;
        }
        World {
            config,
            partitions,
            controller,
            trace: Trace::default(),
            next_id: 0,
            now: 0,
            sends: Vec::new(),
            timers: Vec::new(),
        }
    }

    /// One partition with a registration of our choosing, as Kafka's
    /// PartitionChangeBuilder tests start from.
    pub fn with_registration(
        brokers: u32,
        reg: PartitionRegistration,
        min_isr: u32,
        elr: bool,
    ) -> World {
        let mut w = World::new(brokers, std::slice::from_ref(&reg.replicas), min_isr, elr);
        w.controller.partitions[0] = reg;
        w
    }

    pub fn unclean(mut self, enabled: bool) -> World {
        for p in &mut self.partitions {
            p.config.unclean_leader_election_enable = enabled;
        }
        self
    }

    /// Kafka's `isAcceptableLeader` predicate, as broker states: the brokers
    /// it rejects are fenced.
    pub fn acceptable(mut self, f: impl Fn(BrokerId) -> bool) -> World {
        for s in &mut self.controller.brokers {
            s.fenced = !f(s.id);
        }
        self
    }

    pub fn reg(&self, p: usize) -> &PartitionRegistration {
        &self.controller.partitions[p]
    }

    pub fn metadata_len(&self) -> usize {
        self.controller.metadata_log.len()
    }

    pub fn epoch_of(&self, b: BrokerId) -> u64 {
        self.controller.brokers[b as usize - 1].broker_epoch
    }

    pub fn fenced(&self, b: BrokerId) -> bool {
        self.controller.brokers[b as usize - 1].fenced
    }

    fn with<R>(&mut self, f: impl FnOnce(&mut Controller, &mut Ctx) -> R) -> R {
        let metadata: Vec<std::rc::Rc<MetadataRecord>> = Vec::new();
        let mut dirty = Vec::new();
        let racks: Vec<String> = Vec::new();
        let mut ctx = Ctx {
            now: self.now,
            config: &self.config,
            racks: &racks,
            partitions: &self.partitions,
            metadata: &metadata,
            trace: &mut self.trace,
            next_id: &mut self.next_id,
            sends: Vec::new(),
            timers: Vec::new(),
            dirty: &mut dirty,
            grown: &mut Vec::new(),
            commit_values: &mut Default::default(),
            buffers: &mut Default::default(),
            meta_pages: &mut Default::default(),
        };
        let r = f(&mut self.controller, &mut ctx);
        self.sends = ctx.sends;
        self.timers = ctx.timers;
        r
    }

    /// PartitionChangeBuilder: apply `target_isr` to partition 0 and elect.
    pub fn change(&mut self, target_isr: &[BrokerId], kind: ElectionKind) {
        self.change_with_unclean_shutdown(target_isr, kind, None);
    }

    pub fn change_with_unclean_shutdown(
        &mut self,
        target_isr: &[BrokerId],
        kind: ElectionKind,
        unclean_shutdown: Option<BrokerId>,
    ) {
        let isr = target_isr.to_vec();
        self.with(|c, ctx| c.change(ctx, 0, isr, kind, "test", unclean_shutdown));
    }

    /// RCM.handleBrokerFenced (session expiry).
    pub fn fence(&mut self, b: BrokerId) {
        self.with(|c, ctx| c.fence(ctx, b, "test".to_string()));
    }

    /// A heartbeat that has replayed the whole metadata log (unfences a
    /// registered, fenced broker).
    pub fn heartbeat(&mut self, b: BrokerId, want_shutdown: bool) -> (bool, bool) {
        let epoch = self.epoch_of(b);
        self.heartbeat_at_offset(b, epoch, u64::MAX / 2, want_shutdown)
    }

    /// A heartbeat; returns the response's (fenced, shutdown_ok).
    pub fn heartbeat_at_offset(
        &mut self,
        b: BrokerId,
        broker_epoch: u64,
        metadata_offset: u64,
        want_shutdown: bool,
    ) -> (bool, bool) {
        self.heartbeat_full(b, broker_epoch, metadata_offset, false, want_shutdown)
    }

    /// A heartbeat with every field; returns the response's (fenced, shutdown_ok).
    pub fn heartbeat_full(
        &mut self,
        b: BrokerId,
        broker_epoch: u64,
        metadata_offset: u64,
        want_fence: bool,
        want_shutdown: bool,
    ) -> (bool, bool) {
        let msg = Message::BrokerHeartbeat {
            broker: b,
            broker_epoch,
            metadata_offset,
            want_fence,
            want_shutdown,
        };
        self.with(|c, ctx| c.on_message(ctx, Node::Broker(b), msg));
        self.sends
            .iter()
            .rev()
            .find_map(|(to, m)| match m {
                Message::BrokerHeartbeatResponse {
                    fenced,
                    shutdown_ok,
                    ..
                } if *to == Node::Broker(b) => Some((*fenced, *shutdown_ok)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no heartbeat response to broker {b}"))
    }

    /// A BrokerRegistration from a new incarnation; `clean` says whether the
    /// broker proved a clean shutdown. Returns the broker epoch afterwards.
    pub fn register(&mut self, b: BrokerId, clean: bool) -> u64 {
        let incarnation = self.controller.brokers[b as usize - 1].incarnation + 1;
        self.register_incarnation(b, clean, incarnation)
    }

    /// A BrokerRegistration from incarnation `incarnation` of broker `b`.
    /// Returns the broker epoch afterwards.
    pub fn register_incarnation(&mut self, b: BrokerId, clean: bool, incarnation: u32) -> u64 {
        let msg = Message::BrokerRegistration {
            broker: b,
            clean_shutdown: clean,
            incarnation,
        };
        self.with(|c, ctx| c.on_message(ctx, Node::Broker(b), msg));
        self.epoch_of(b)
    }

    /// Fire the controller's session check for `b` at the current time.
    pub fn session_check(&mut self, b: BrokerId) {
        self.with(|c, ctx| c.on_timer(ctx, Timer::SessionCheck { broker: b }));
    }

    /// An AlterPartition from `broker` for partition 0.
    pub fn alter_partition(
        &mut self,
        broker: BrokerId,
        broker_epoch: u64,
        leader_epoch: u32,
        partition_epoch: u32,
        new_isr: &[BrokerId],
    ) -> Result<PartitionRegistration, ErrorCode> {
        self.alter_partition_of(
            0,
            broker,
            broker_epoch,
            leader_epoch,
            partition_epoch,
            new_isr,
        )
    }

    /// A preferred leader election for partition `p` (ElectLeaders PREFERRED,
    /// or one partition of the automatic rebalance).
    pub fn elect_preferred(&mut self, p: usize) {
        self.with(|c, ctx| c.elect_preferred(ctx, p));
    }

    /// An AlterPartition from partition `p`'s leader with its current epochs.
    pub fn alter_isr_of(
        &mut self,
        p: usize,
        new_isr: &[BrokerId],
    ) -> Result<PartitionRegistration, ErrorCode> {
        let reg = self.reg(p).clone();
        let leader = reg
            .leader
            .unwrap_or_else(|| panic!("partition has no leader"));
        let epoch = self.epoch_of(leader);
        self.alter_partition_of(
            p,
            leader,
            epoch,
            reg.leader_epoch,
            reg.partition_epoch,
            new_isr,
        )
    }

    /// Each member with the broker epoch the controller has registered for
    /// it (Kafka's `isrWithDefaultEpoch`).
    pub fn with_current_epochs(&self, isr: &[BrokerId]) -> Vec<BrokerState> {
        isr.iter()
            .map(|&b| BrokerState {
                broker_id: b,
                broker_epoch: Some(self.epoch_of(b)),
            })
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    pub fn alter_partition_of(
        &mut self,
        p: usize,
        broker: BrokerId,
        broker_epoch: u64,
        leader_epoch: u32,
        partition_epoch: u32,
        new_isr: &[BrokerId],
    ) -> Result<PartitionRegistration, ErrorCode> {
        let members = self.with_current_epochs(new_isr);
        self.alter_partition_full(
            p,
            broker,
            broker_epoch,
            leader_epoch,
            partition_epoch,
            members,
            LeaderRecoveryState::Recovered,
        )
    }

    /// An AlterPartition for partition `p` as the oracle's generator sends
    /// one to Kafka: each member at its registered broker epoch, and the
    /// leader reporting RECOVERED when `recovered` or when the partition
    /// already is (a RECOVERING leader that does not report keeps RECOVERING).
    /// (Used by tests/oracle.rs, which shares this harness.)
    #[allow(clippy::too_many_arguments, dead_code)]
    pub fn alter_partition_with_recovery(
        &mut self,
        p: usize,
        broker: BrokerId,
        broker_epoch: u64,
        leader_epoch: u32,
        partition_epoch: u32,
        new_isr: &[BrokerId],
        recovered: bool,
    ) -> Result<PartitionRegistration, ErrorCode> {
        let members = self.with_current_epochs(new_isr);
        let state =
            if recovered || self.reg(p).leader_recovery_state == LeaderRecoveryState::Recovered {
                LeaderRecoveryState::Recovered
            } else {
                LeaderRecoveryState::Recovering
            };
        self.alter_partition_full(
            p,
            broker,
            broker_epoch,
            leader_epoch,
            partition_epoch,
            members,
            state,
        )
    }

    /// An AlterPartition with every field of ours.
    #[allow(clippy::too_many_arguments)]
    pub fn alter_partition_full(
        &mut self,
        p: usize,
        broker: BrokerId,
        broker_epoch: u64,
        leader_epoch: u32,
        partition_epoch: u32,
        new_isr: Vec<BrokerState>,
        leader_recovery_state: LeaderRecoveryState,
    ) -> Result<PartitionRegistration, ErrorCode> {
        let msg = Message::AlterPartition {
            id: 1,
            broker,
            broker_epoch,
            partition: p,
            leader_epoch,
            partition_epoch,
            new_isr,
            leader_recovery_state,
        };
        self.with(|c, ctx| c.on_message(ctx, Node::Broker(broker), msg));
        self.sends
            .iter()
            .find_map(|(_, m)| match m {
                Message::AlterPartitionResponse { result, .. } => Some(result.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no AlterPartition response"))
    }

    /// An AlterPartition from the current leader with the current epochs.
    pub fn alter_isr(&mut self, new_isr: &[BrokerId]) -> Result<PartitionRegistration, ErrorCode> {
        let reg = self.reg(0).clone();
        let leader = reg
            .leader
            .unwrap_or_else(|| panic!("partition has no leader"));
        let epoch = self.epoch_of(leader);
        self.alter_partition(
            leader,
            epoch,
            reg.leader_epoch,
            reg.partition_epoch,
            new_isr,
        )
    }
}

/// A small world around one real broker, for Kafka's `PartitionTest` cases
/// that go through the broker's own handlers: the metadata it replays, the
/// fetches it answers, the AlterPartition it sends and the answer it gets.
/// Broker 1 is Kafka's local broker 0; Kafka's remote brokers 1, 2 are our
/// 2, 3; Kafka's `defaultBrokerEpoch(id)` (id + 1000) is [`default_epoch`].
pub struct BrokerWorld {
    pub config: ClusterConfig,
    pub partitions: Vec<PartitionInfo>,
    pub metadata: Vec<std::rc::Rc<MetadataRecord>>,
    pub broker: Broker,
    pub trace: Trace,
    pub next_id: u64,
    pub now: u64,
    pub sends: Vec<(Node, Message)>,
    pub timers: Vec<(u64, Timer)>,
}

/// Kafka's `defaultBrokerEpoch` for our broker `b` (Kafka's `b - 1`).
pub fn default_epoch(b: BrokerId) -> u64 {
    1000 + u64::from(b) - 1
}

impl BrokerWorld {
    /// `seedLogData(log, numRecords = 10, leaderEpoch = 4)`, then broker 1
    /// becomes leader in leader epoch 5, partition epoch 1, with `isr`, by
    /// replaying the metadata log: every broker registered and unfenced at
    /// [`default_epoch`].
    pub fn leader(replicas: &[BrokerId], isr: &[BrokerId]) -> BrokerWorld {
        let mut log = failover_lab::sim::log::Log::default();
        for i in 0..10 {
            log.append(Record::plain(i, 4));
        }
        BrokerWorld::leader_with(replicas, isr, log, 5)
    }

    /// Broker 1 holds `log` and becomes leader in `leader_epoch`, partition
    /// epoch 1, with `isr`, by replaying the metadata log (every broker
    /// registered and unfenced at [`default_epoch`]).
    pub fn leader_with(
        replicas: &[BrokerId],
        isr: &[BrokerId],
        log: failover_lab::sim::log::Log,
        leader_epoch: u32,
    ) -> BrokerWorld {
        let topic = TopicConfig {
            min_insync_replicas: 1,
            unclean_leader_election_enable: false,
        };
        let config = ClusterConfig {
            topic_defaults: topic.clone(),
            ..ClusterConfig::default()
        };
        let partitions = vec![PartitionInfo {
            topic: "foo".to_string(),
            topic_index: 0,
            partition: 0,
            replicas: replicas.to_vec(),
            config: topic,
        }];
        let mut metadata: Vec<std::rc::Rc<MetadataRecord>> = replicas
            .iter()
            .map(|&b| {
                std::rc::Rc::new(MetadataRecord::Broker {
                    broker: b,
                    broker_epoch: default_epoch(b),
                    fenced: false,
                    in_controlled_shutdown: false,
                })
            })
            .collect();
        metadata.push(std::rc::Rc::new(MetadataRecord::Partition {
            partition: 0,
            registration: registration(replicas, isr, Some(1), leader_epoch, 1),
        }));
        let mut replica = Replica::new(0, replicas);
        replica.log = log;
        let mut broker = Broker::new(1, 1);
        broker.host(0, replica);
        let mut w = BrokerWorld {
            config,
            partitions,
            metadata,
            broker,
            trace: Trace::default(),
            next_id: 0,
            now: T0,
            sends: Vec::new(),
            timers: Vec::new(),
        };
        w.with(|b, ctx| b.bootstrap(ctx, default_epoch(1)));
        w
    }

    fn with<R>(&mut self, f: impl FnOnce(&mut Broker, &mut Ctx) -> R) -> R {
        let mut dirty = Vec::new();
        let racks: Vec<String> = Vec::new();
        let mut ctx = Ctx {
            now: self.now,
            config: &self.config,
            racks: &racks,
            partitions: &self.partitions,
            metadata: &self.metadata,
            trace: &mut self.trace,
            next_id: &mut self.next_id,
            sends: Vec::new(),
            timers: Vec::new(),
            dirty: &mut dirty,
            grown: &mut Vec::new(),
            commit_values: &mut Default::default(),
            buffers: &mut Default::default(),
            meta_pages: &mut Default::default(),
        };
        let r = f(&mut self.broker, &mut ctx);
        self.sends = ctx.sends;
        self.timers = ctx.timers;
        r
    }

    pub fn replica(&self) -> &Replica {
        self.broker
            .replicas
            .get(&0)
            .unwrap_or_else(|| panic!("broker 1 hosts partition 0"))
    }

    /// What the leader knows of follower `b` (its `Replica` object in
    /// Kafka's `Partition`); the default state when it does not know `b`.
    pub fn follower_state(&self, b: BrokerId) -> FollowerState {
        self.replica()
            .follower(&self.broker.followers, b)
            .cloned()
            .unwrap_or_default()
    }

    /// The committed ISR as the leader knows it (`partition.inSyncReplicaIds`).
    pub fn isr(&self) -> Vec<BrokerId> {
        self.replica().isr.to_vec()
    }

    /// The maximal ISR (`partitionState.maximalIsr`), sorted: the replicas
    /// the leader's own rule (`Replica::in_maximal_isr`) counts in it.
    pub fn maximal_isr(&self) -> Vec<BrokerId> {
        let r = self.replica();
        let mut m: Vec<BrokerId> = r
            .replicas
            .iter()
            .copied()
            .filter(|b| r.in_maximal_isr(*b))
            .collect();
        m.sort_unstable();
        m
    }

    pub fn high_watermark(&self) -> u64 {
        self.replica().log.high_watermark
    }

    /// Kafka's `fetchFollower`: a follower fetch at `offset` in the current
    /// leader epoch, answered at once, carrying `broker_epoch`.
    pub fn fetch_follower(&mut self, follower: BrokerId, offset: u64, broker_epoch: u64) {
        let leader_epoch = self.replica().leader_epoch;
        let msg = Message::Fetch {
            id: 1_000_000 + self.next_id,
            replica: Some(follower),
            broker_epoch,
            max_wait_ms: 0,
            partitions: vec![FetchPartition {
                partition: 0,
                fetch_offset: offset,
                current_leader_epoch: leader_epoch,
                last_fetched_epoch: None,
            }],
            rack_id: String::new(),
        };
        self.with(|b, ctx| b.on_message(ctx, Node::Broker(follower), msg));
    }

    /// A follower fetch at `offset` with every field of ours: the leader
    /// epoch it names and its `LastFetchedEpoch`.
    pub fn fetch_follower_with(
        &mut self,
        follower: BrokerId,
        offset: u64,
        broker_epoch: u64,
        current_leader_epoch: u32,
        last_fetched_epoch: Option<u32>,
    ) -> failover_lab::sim::protocol::FetchPartitionResponse {
        let msg = Message::Fetch {
            id: 1_000_000 + self.next_id,
            replica: Some(follower),
            broker_epoch,
            max_wait_ms: 0,
            partitions: vec![FetchPartition {
                partition: 0,
                fetch_offset: offset,
                current_leader_epoch,
                last_fetched_epoch,
            }],
            rack_id: String::new(),
        };
        self.with(|b, ctx| b.on_message(ctx, Node::Broker(follower), msg));
        self.fetch_response()
    }

    /// The last fetch's answer for partition 0.
    pub fn fetch_response(&self) -> failover_lab::sim::protocol::FetchPartitionResponse {
        self.sends
            .iter()
            .find_map(|(_, m)| match m {
                Message::FetchResponse { partitions, .. } => partitions.first().cloned(),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no fetch response"))
    }

    /// How many refusals of its AlterPartition the leader has handled
    /// (Kafka's `alterPartitionListener.failures`).
    pub fn alter_partition_failures(&self) -> usize {
        self.trace
            .events()
            .filter(|e| {
                matches!(
                    e.kind,
                    failover_lab::sim::trace::TraceKind::AlterPartitionRejected { .. }
                )
            })
            .count()
    }

    /// An OffsetsForLeaderEpoch from broker `from` for partition 0; the
    /// leader's answer.
    pub fn offsets_for_leader_epoch(
        &mut self,
        from: BrokerId,
        current_leader_epoch: u32,
        leader_epoch: u32,
    ) -> Result<Option<(u32, u64)>, ErrorCode> {
        let msg = Message::OffsetsForLeaderEpoch {
            id: 3_000_000 + self.next_id,
            partition: 0,
            current_leader_epoch,
            leader_epoch,
        };
        self.with(|b, ctx| b.on_message(ctx, Node::Broker(from), msg));
        self.sends
            .iter()
            .find_map(|(_, m)| match m {
                Message::OffsetsForLeaderEpochResponse { result, .. } => Some(*result),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no OffsetsForLeaderEpoch answer"))
    }

    /// A client's acks=0 Produce of `n` new records to partition 0.
    pub fn produce(&mut self, n: u64) {
        self.produce_with(n, failover_lab::sim::config::Acks::None);
    }

    /// An acks=all Produce of `n` records to partition 0 from producer 1;
    /// returns its request id (its answer waits for the HW).
    #[allow(dead_code)] // tests/isr_changes.rs
    pub fn produce_acks_all(&mut self, n: u64) -> u64 {
        self.produce_with(n, failover_lab::sim::config::Acks::All)
    }

    fn produce_with(&mut self, n: u64, acks: failover_lab::sim::config::Acks) -> u64 {
        let base = 10_000 + self.next_id * 100;
        let records = (0..n).map(|i| Record::plain(base + i, 0)).collect();
        let id = 2_000_000 + self.next_id;
        let msg = Message::Produce {
            id,
            acks,
            timeout_ms: 30_000,
            batches: vec![failover_lab::sim::protocol::ProduceBatch {
                partition: 0,
                records,
            }],
        };
        self.next_id += 1;
        self.with(|b, ctx| b.on_message(ctx, Node::Producer(1), msg));
        id
    }

    /// The ids of the Produce requests the last step answered.
    #[allow(dead_code)] // tests/isr_changes.rs
    pub fn produce_answers(&self) -> Vec<u64> {
        self.sends
            .iter()
            .filter_map(|(_, m)| match m {
                Message::ProduceResponse { id, .. } => Some(*id),
                _ => None,
            })
            .collect()
    }

    /// The error of the last fetch's answer for partition 0, if any.
    pub fn fetch_error(&self) -> Option<ErrorCode> {
        self.sends
            .iter()
            .find_map(|(_, m)| match m {
                Message::FetchResponse { partitions, .. } => {
                    Some(partitions.first().and_then(|p| p.error))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no fetch response"))
    }

    /// `partition.maybeShrinkIsr()`: the broker's periodic ISR check.
    pub fn maybe_shrink_isr(&mut self) {
        self.with(|b, ctx| b.on_timer(ctx, Timer::IsrCheck));
    }

    /// The AlterPartition requests the last call sent (Kafka's
    /// `alterPartitionManager.isrUpdates`): (id, members, recovery state).
    pub fn isr_updates(&self) -> Vec<(u64, Vec<BrokerState>, LeaderRecoveryState)> {
        self.sends
            .iter()
            .filter_map(|(to, m)| match m {
                Message::AlterPartition {
                    id,
                    new_isr,
                    leader_recovery_state,
                    ..
                } if *to == Node::Controller => {
                    Some((*id, new_isr.clone(), *leader_recovery_state))
                }
                _ => None,
            })
            .collect()
    }

    /// The one AlterPartition the last call sent.
    pub fn isr_update(&self) -> (u64, Vec<BrokerState>, LeaderRecoveryState) {
        let mut u = self.isr_updates();
        assert_eq!(u.len(), 1, "one AlterPartition sent: {u:?}");
        u.remove(0)
    }

    /// The controller's answer to AlterPartition `id`
    /// (`alterPartitionManager.failIsrUpdate` / `completeIsrUpdate`).
    pub fn answer(&mut self, id: u64, result: Result<PartitionRegistration, ErrorCode>) {
        let msg = Message::AlterPartitionResponse {
            id,
            partition: 0,
            result,
        };
        self.with(|b, ctx| b.on_message(ctx, Node::Controller, msg));
    }

    /// Fire the retry timer of AlterPartition `id` after the retry delay.
    pub fn retry_timer(&mut self, id: u64) {
        self.now += failover_lab::sim::broker::ALTER_PARTITION_RETRY_MS;
        self.with(|b, ctx| b.on_timer(ctx, Timer::AlterPartitionRetry { partition: 0, id }));
    }

    /// The controller publishes `rec`; the broker replays it.
    pub fn publish(&mut self, rec: MetadataRecord) {
        self.metadata.push(std::rc::Rc::new(rec));
        let end = self.metadata.len() as u64;
        self.with(|b, ctx| {
            b.on_message(
                ctx,
                Node::Controller,
                Message::MetadataPush { metadata_end: end },
            )
        });
        let applied: Vec<Timer> = self
            .timers
            .iter()
            .filter(|(_, t)| matches!(t, Timer::MetadataApplied { .. }))
            .map(|(_, t)| t.clone())
            .collect();
        for t in applied {
            self.with(|b, ctx| b.on_timer(ctx, t));
        }
    }
}

/// Two real brokers around one partition, for Kafka's
/// `AbstractFetcherThreadTest` cases: broker 1 leads, broker 2 follows, and
/// the follower's replica fetcher talks to the leader's Fetch handling
/// (Kafka's `MockLeaderEndPoint` is the real leader here). Both replay the
/// same metadata log: the two brokers registered and unfenced at
/// [`default_epoch`], then the partition with replicas [1, 2], ISR [1, 2],
/// leader 1 in `leader_epoch`.
pub struct FetcherWorld {
    pub config: ClusterConfig,
    pub partitions: Vec<PartitionInfo>,
    pub metadata: Vec<std::rc::Rc<MetadataRecord>>,
    pub leader: Broker,
    pub follower: Broker,
    pub trace: Trace,
    pub next_id: u64,
    pub now: u64,
    /// Messages sent and not yet delivered: (from, to, message).
    pub in_flight: Vec<(BrokerId, Node, Message)>,
    /// `broker.rack` of brokers 1 and 2 (empty: no racks).
    pub racks: Vec<String>,
    /// The timers the last call set.
    pub timers: Vec<(u64, Timer)>,
}

/// A log of `(record id, epoch)` pairs, one record per batch (Kafka's
/// `mkBatch` with one record each).
pub fn log_of(records: &[(u64, u32)]) -> failover_lab::sim::log::Log {
    let mut log = failover_lab::sim::log::Log::default();
    for &(id, epoch) in records {
        log.append(Record::plain(id, epoch));
    }
    log
}

impl FetcherWorld {
    /// The leader holds `leader_log` with high watermark `leader_hw`; the
    /// follower holds `follower_log` with `follower_hw`.
    pub fn new(
        leader_epoch: u32,
        leader_log: failover_lab::sim::log::Log,
        leader_hw: u64,
        follower_log: failover_lab::sim::log::Log,
        follower_hw: u64,
    ) -> FetcherWorld {
        let topic = TopicConfig {
            min_insync_replicas: 1,
            unclean_leader_election_enable: false,
        };
        // Kafka's mock leader answers every fetch at once: no long poll.
        let config = ClusterConfig {
            topic_defaults: topic.clone(),
            replica_fetch_wait_max_ms: 0,
            ..ClusterConfig::default()
        };
        let partitions = vec![PartitionInfo {
            topic: "topic".to_string(),
            topic_index: 0,
            partition: 0,
            replicas: vec![1, 2],
            config: topic,
        }];
        let mut metadata: Vec<std::rc::Rc<MetadataRecord>> = [1, 2]
            .iter()
            .map(|&b| {
                std::rc::Rc::new(MetadataRecord::Broker {
                    broker: b,
                    broker_epoch: default_epoch(b),
                    fenced: false,
                    in_controlled_shutdown: false,
                })
            })
            .collect();
        metadata.push(std::rc::Rc::new(MetadataRecord::Partition {
            partition: 0,
            registration: registration(&[1, 2], &[1, 2], Some(1), leader_epoch, 1),
        }));
        let host = |id: BrokerId, mut log: failover_lab::sim::log::Log, hw: u64| {
            log.high_watermark = hw;
            log.flush();
            log.checkpoint_high_watermark();
            let mut replica = Replica::new(0, &[1, 2]);
            replica.log = log;
            let mut b = Broker::new(id, 1);
            b.host(0, replica);
            b
        };
        let mut w = FetcherWorld {
            config,
            partitions,
            metadata,
            leader: host(1, leader_log, leader_hw),
            follower: host(2, follower_log, follower_hw),
            trace: Trace::default(),
            next_id: 0,
            now: T0,
            in_flight: Vec::new(),
            racks: Vec::new(),
            timers: Vec::new(),
        };
        w.with(1, |b, ctx| b.bootstrap(ctx, default_epoch(1)));
        w.with(2, |b, ctx| b.bootstrap(ctx, default_epoch(2)));
        w
    }

    /// Run `f` on broker `id` and queue what it sends.
    pub fn with<R>(&mut self, id: BrokerId, f: impl FnOnce(&mut Broker, &mut Ctx) -> R) -> R {
        let mut dirty = Vec::new();
        let mut ctx = Ctx {
            now: self.now,
            config: &self.config,
            racks: &self.racks,
            partitions: &self.partitions,
            metadata: &self.metadata,
            trace: &mut self.trace,
            next_id: &mut self.next_id,
            sends: Vec::new(),
            timers: Vec::new(),
            dirty: &mut dirty,
            grown: &mut Vec::new(),
            commit_values: &mut Default::default(),
            buffers: &mut Default::default(),
            meta_pages: &mut Default::default(),
        };
        let broker = if id == 1 {
            &mut self.leader
        } else {
            &mut self.follower
        };
        let r = f(broker, &mut ctx);
        self.in_flight
            .extend(ctx.sends.into_iter().map(|(to, m)| (id, to, m)));
        self.timers = ctx.timers;
        r
    }

    /// The controller publishes `rec` and only broker `id` replays it (the
    /// other has not heard of it yet).
    pub fn publish_to(&mut self, id: BrokerId, rec: MetadataRecord) {
        self.metadata.push(std::rc::Rc::new(rec));
        let end = self.metadata.len() as u64;
        self.with(id, |b, ctx| {
            b.on_message(
                ctx,
                Node::Controller,
                Message::MetadataPush { metadata_end: end },
            )
        });
        let applied: Vec<Timer> = self
            .timers
            .iter()
            .filter(|(_, t)| matches!(t, Timer::MetadataApplied { .. }))
            .map(|(_, t)| t.clone())
            .collect();
        for t in applied {
            self.with(id, |b, ctx| b.on_timer(ctx, t));
        }
    }

    /// The follower's fetch-retry timer fires `replica.fetch.backoff.ms`
    /// from now.
    pub fn follower_retry_after_backoff(&mut self) {
        self.now += self.config.replica_fetch_backoff_ms;
        self.with(2, |b, ctx| b.on_timer(ctx, Timer::FetchRetry));
    }

    /// Deliver every queued Fetch and FetchResponse between the two brokers
    /// (other messages, to the controller, are dropped). Returns how many
    /// fetch responses the follower received: one round of Kafka's
    /// `fetcher.doWork()` when the leader answers at once.
    pub fn deliver(&mut self) -> usize {
        let mut responses = 0;
        let queued = std::mem::take(&mut self.in_flight);
        for (from, to, msg) in queued {
            match (&msg, to) {
                (Message::Fetch { .. }, Node::Broker(1))
                | (Message::FetchResponse { .. }, Node::Broker(2)) => {
                    if matches!(msg, Message::FetchResponse { .. }) {
                        responses += 1;
                    }
                    let Node::Broker(target) = to else { continue };
                    self.with(target, |b, ctx| b.on_message(ctx, Node::Broker(from), msg));
                }
                _ => {}
            }
        }
        responses
    }

    /// Answer the follower's queued Fetch in the leader's place, with a
    /// `DivergingEpoch` and no records (Kafka's mocked network answers of
    /// `ReplicaFetcherThreadTest`); the leader never sees the Fetch.
    pub fn answer_with_diverging_epoch(&mut self, epoch: u32, end_offset: u64) {
        let queued = std::mem::take(&mut self.in_flight);
        let mut fetch = None;
        for (from, to, msg) in queued {
            match msg {
                Message::Fetch { id, partitions, .. } if from == 2 => {
                    fetch = Some((id, partitions))
                }
                other => self.in_flight.push((from, to, other)),
            }
        }
        let Some((id, partitions)) = fetch else {
            panic!("the follower has no Fetch queued")
        };
        let answers = partitions
            .iter()
            .map(|p| failover_lab::sim::protocol::FetchPartitionResponse {
                partition: p.partition,
                error: None,
                high_watermark: 0,
                log_end_offset: 0,
                diverging_epoch: Some((epoch, end_offset)),
                current_leader: None,
                records: Vec::new(),
                base_offset: p.fetch_offset,
                preferred_read_replica: None,
                chunk: None,
            })
            .collect();
        let msg = Message::FetchResponse {
            id,
            partitions: answers,
        };
        self.with(2, |b, ctx| b.on_message(ctx, Node::Broker(1), msg));
    }

    /// One fetch round trip: the follower's queued Fetch reaches the leader,
    /// the leader's answer reaches the follower. Returns whether the follower
    /// got an answer (the leader may park a fetch that has nothing to return).
    pub fn round(&mut self) -> bool {
        self.deliver();
        self.deliver() > 0
    }

    /// Rounds until the follower's log equals the leader's (Kafka's
    /// `waitUntilTrue(... log == leader log)`), at most `max` of them.
    /// Returns the number of rounds taken.
    pub fn reconcile(&mut self, max: usize) -> usize {
        for n in 0..=max {
            if self.logs_match() {
                return n;
            }
            if !self.round() {
                break;
            }
        }
        panic!(
            "the follower's log {:?} never matched the leader's {:?}",
            self.follower_replica().log.records().collect::<Vec<_>>(),
            self.leader_replica().log.records().collect::<Vec<_>>()
        );
    }

    pub fn logs_match(&self) -> bool {
        let (l, f) = (&self.leader_replica().log, &self.follower_replica().log);
        l.digest() == f.digest() && l.epochs() == f.epochs()
    }

    pub fn leader_replica(&self) -> &Replica {
        self.leader
            .replicas
            .get(&0)
            .unwrap_or_else(|| panic!("broker 1 hosts partition 0"))
    }

    pub fn follower_replica(&self) -> &Replica {
        self.follower
            .replicas
            .get(&0)
            .unwrap_or_else(|| panic!("broker 2 hosts partition 0"))
    }

    /// The `LastFetchedEpoch` of the follower's next Fetch (Kafka's
    /// `verifyLastFetchedEpoch`), read from the Fetch it has queued.
    pub fn queued_last_fetched_epoch(&self) -> Option<u32> {
        self.queued_fetch().and_then(|p| p.last_fetched_epoch)
    }

    /// The partition of the follower's queued Fetch, if one is queued.
    pub fn queued_fetch(&self) -> Option<FetchPartition> {
        self.in_flight.iter().find_map(|(from, _, m)| match m {
            Message::Fetch { partitions, .. } if *from == 2 => partitions.first().cloned(),
            _ => None,
        })
    }

    /// How many truncations the follower has traced (Kafka's `truncate` calls).
    pub fn follower_truncations(&self) -> usize {
        self.trace
            .events()
            .filter(|e| {
                matches!(
                    e.kind,
                    failover_lab::sim::trace::TraceKind::Truncated { broker: 2, .. }
                )
            })
            .count()
    }
}
