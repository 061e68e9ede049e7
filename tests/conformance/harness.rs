//! A small world for driving the controller directly: its handlers take a
//! [`Ctx`], so a test builds one around a config and a partition table, calls
//! the handler, and reads the controller's state and outputs afterwards.

use failover_lab::sim::config::{ClusterConfig, TopicConfig};
use failover_lab::sim::controller::{Controller, ElectionKind};
use failover_lab::sim::io::{Ctx, Timer};
use failover_lab::sim::protocol::{
    BrokerId, ErrorCode, LeaderRecoveryState, Message, MetadataRecord, Node, PartitionRegistration,
};
use failover_lab::sim::trace::Trace;
use failover_lab::sim::PartitionInfo;

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
        let mut controller = Controller::new(brokers, assignment);
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
        self.alter_partition_with_recovery(
            p,
            broker,
            broker_epoch,
            leader_epoch,
            partition_epoch,
            new_isr,
            false,
        )
    }

    /// An AlterPartition for partition `p`, saying whether the leader
    /// reports it has recovered (KIP-704's LeaderRecoveryState).
    #[allow(clippy::too_many_arguments)]
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
        let msg = Message::AlterPartition {
            id: 1,
            broker,
            broker_epoch,
            partition: p,
            leader_epoch,
            partition_epoch,
            new_isr: new_isr.to_vec(),
            recovered,
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
