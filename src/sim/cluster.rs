//! The world: brokers, the controller, clients and the network, advanced one
//! event at a time by [`Cluster::step`] or up to a time by [`Cluster::run_until`].
//!
//! Faults are verbs on the cluster, as in turmoil: `crash`, `power_loss`,
//! `restart`, `shutdown`, `isolate`, `heal`, `slow`. Each one is also an
//! [`Action`], so a scenario file, the browser and a test script drive the same
//! code path. After every event the invariant checker looks at the partitions
//! that event touched (see `invariants.rs`).

use std::rc::Rc;

use crate::sim::shared::{Scratch, SharedVec};

use serde::Serialize;

use super::availability::{Availability, FaultAction, PartitionState};
use super::broker::{Broker, Process};
use super::client::{AckedLedger, Consumer, Producer};
use super::config::{Acks, ClusterConfig, ConsumerConfig, ProducerConfig};
use super::consumption::Consumption;
use super::controller::Controller;
use super::invariants::{InvariantState, Violation};
use super::io::{Buffers, Ctx, Timer};
use super::net::Network;
use super::partition::Replica;
use super::protocol::{BrokerId, Message, Node, PartitionIndex, PartitionRegistration};
use super::time::{BoxPool, EventQueue};
use super::trace::{Trace, TraceKind};
use super::{PartitionInfo, TopicInfo};

/// Below this many pending events the queue is never compacted.
const MIN_COMPACT_QUEUE: usize = 4096;

/// An event that made the cluster check this many partitions or more ends a
/// bounded run's chunk (`Cluster::run_until_bounded`): its work is of the
/// cluster's size, not an event's.
pub const WIDE_EVENT_PARTITIONS: usize = 64;

/// The first parts of a world's start each give the brokers their replicas
/// of this many partitions (`Cluster::start_part`): the 20,000-partition
/// tour's 60,000 replicas come in 20 parts, where making them all was most
/// of one task of 80–145 ms in the page (issue 63).
pub const HOST_PART_PARTITIONS: usize = 1024;

/// Something a user, a scenario step or a test does to the cluster.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Produce {
        topic: String,
        partition: u32,
        count: u32,
        acks: Option<Acks>,
        producer: Option<String>,
    },
    Crash(BrokerId),
    PowerLoss(BrokerId),
    Restart(BrokerId),
    Shutdown(BrokerId),
    Isolate(BrokerId),
    Heal(BrokerId),
    Slow {
        broker: BrokerId,
        topic: String,
        partition: u32,
    },
    Unslow {
        broker: BrokerId,
        topic: String,
        partition: u32,
    },
    ElectPreferred {
        topic: String,
        partition: u32,
    },
    /// fsync every log of a broker now (a simulation aid for power-loss tests).
    Flush(BrokerId),
    /// A step for one consumer process: commit its positions now, crash it
    /// (everything in memory is gone), or start it again.
    ClientStep {
        kind: ClientStep,
        client: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum ClientStep {
    Commit,
    Crash,
    Restart,
    /// The application stops calling poll() (a long piece of work): no
    /// fetches, no auto-commit; a group member's heartbeats go on until
    /// `max.poll.interval.ms`, when it leaves its group.
    Stall,
    /// The application calls poll() again (a member that left joins again).
    Resume,
}

impl ClientStep {
    /// The scenario step's key.
    pub fn key(self) -> &'static str {
        match self {
            ClientStep::Commit => "commit",
            ClientStep::Crash => "crash_client",
            ClientStep::Restart => "restart_client",
            ClientStep::Stall => "stall_client",
            ClientStep::Resume => "resume_client",
        }
    }
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum Event {
    Deliver {
        from: Node,
        to: Node,
        sent_at: u64,
        /// Boxed: the queue moves events around, and messages are large.
        msg: Box<Message>,
    },
    Timer {
        node: Node,
        incarnation: u32,
        timer: Timer,
    },
    Step(usize),
}

enum Input {
    Msg(Node, Message),
    Timer(Timer),
    Start,
    Crash(bool),
    Shutdown,
    Send {
        partition: PartitionIndex,
        count: u32,
        acks: Acks,
    },
    ElectPreferred(PartitionIndex),
    /// A step for a consumer process (commit, crash, restart).
    Client(ClientStep),
    /// Start-up of an already-running cluster (broker id).
    Bootstrap(BrokerId),
}

/// The description a cluster is built from (the scenario after validation).
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ClusterSpec {
    pub seed: u64,
    pub brokers: u32,
    /// `broker.rack` of broker `i + 1`; empty when the brokers have no racks.
    pub racks: Vec<String>,
    pub config: ClusterConfig,
    pub topics: Vec<TopicInfo>,
    pub partitions: Vec<PartitionInfo>,
    pub producers: Vec<ProducerSpec>,
    pub consumers: Vec<ConsumerSpec>,
    pub steps: Vec<(u64, Action)>,
    /// Partitions whose registration at t=0 is given (a topic's
    /// `initial_state`), by partition index; the others start led by their
    /// first replica with every replica in sync.
    pub initial_states: Vec<(PartitionIndex, PartitionRegistration)>,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ProducerSpec {
    pub name: String,
    pub topic: Option<usize>,
    pub config: ProducerConfig,
    pub records_per_sec: u64,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ConsumerSpec {
    pub name: String,
    pub topic: usize,
    pub config: ConsumerConfig,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Cluster {
    pub now: u64,
    pub seed: u64,
    queue: EventQueue<Event>,
    pub net: Network,
    pub config: ClusterConfig,
    /// `broker.rack` of broker `i + 1`; empty when the brokers have no racks.
    pub racks: Vec<String>,
    pub topics: Vec<TopicInfo>,
    /// Fixed once built: shared by every snapshot.
    pub partitions: Rc<Vec<PartitionInfo>>,
    pub brokers: Vec<Broker>,
    pub controller: Controller,
    pub producers: Vec<Producer>,
    pub consumers: Vec<Consumer>,
    pub trace: Trace,
    next_id: u64,
    pub steps: Vec<(u64, Action)>,
    /// Acknowledged records per partition.
    /// Shared with snapshots in chunks (`SharedVec`): a partition's ledger
    /// copies its last, partial chunk when it first grows after one.
    pub acked: Vec<AckedLedger>,
    pub invariants: InvariantState,
    dirty: Vec<PartitionIndex>,
    /// Partitions changed only by a replica's write at its log end (its HW
    /// at or below the old end) or by acknowledgements (`Ctx::touch_grown`):
    /// checked lightly unless also in `dirty`.
    grown: Vec<PartitionIndex>,
    /// After an event, each partition to check and whether it is checked in
    /// full (a buffer kept between events).
    checks: Vec<(PartitionIndex, bool)>,
    /// Every check in full, as if nothing were touched lightly (tests).
    full_checks_only: bool,
    /// What the records of `__consumer_offsets` say (`io::CommitValues`).
    pub commit_values: super::io::CommitValues,
    /// The metadata-cache pages the brokers share (`broker::MetaPages`).
    meta_pages: super::broker::MetaPages,
    /// Queue length at which dead timers are next dropped.
    compact_at: usize,
    /// A handler's output buffers, reused from event to event.
    sends_buf: Vec<(Node, Message)>,
    timers_buf: Vec<(u64, Timer)>,
    /// Boxes of delivered messages, reused for the next ones sent.
    msg_boxes: Scratch<BoxPool<Message>>,
    /// Emptied vectors of the produce path, lent to every handler.
    buffers: Scratch<Buffers>,
    pub events_processed: u64,
    /// Brokers told to be slow for a partition: (broker, partition).
    pub slow: Vec<(BrokerId, PartitionIndex)>,
    /// Unavailability, recovery times and latencies (`availability.rs`).
    pub availability: Availability,
    /// Brokers whose process or reachability changed in this event: the
    /// partitions they lead are looked at again.
    avail_brokers: Vec<BrokerId>,
    /// Which partitions of each subscribing group nobody reads (`consumption.rs`).
    pub consumption: Consumption,
    /// A consumer handled this event: what its group reads is looked at again.
    #[cfg(group_protocols)]
    consumer_event: bool,
    /// When ids were handed out: (first id, ms), one entry per ms at most.
    /// Ids only grow, so a record's send time is found by binary search.
    /// Append-only, so snapshots share it in chunks.
    id_times: SharedVec<(u64, u64), 256>,
    /// Per consumer, how many of its consumed records were counted.
    consumed_seen: Vec<usize>,
    /// The controller's metadata log is visible to brokers and clients up
    /// to here: records are written in batches that take time
    /// (`sim.controller.record.write.us`).
    pub metadata_committed: u64,
    /// Records up to here have a write time scheduled.
    metadata_scheduled: u64,
    /// The controller is busy writing until then (µs).
    controller_busy_until_us: u64,
}

impl Cluster {
    pub fn new(spec: ClusterSpec) -> Cluster {
        let mut c = Cluster::unstarted(spec);
        for k in 0..c.start_parts() {
            c.start_part(k);
        }
        c
    }

    /// [`Cluster::new`] without its start: every part of the world is built
    /// (brokers hosting their replicas, the controller, the clients, the
    /// scenario's steps queued), but nothing has been told to start yet.
    /// [`Cluster::start_part`] for every part in order then makes the world
    /// `new` makes, the very same one: the page builds a big cluster (the
    /// 20,000-partition tour's 60 brokers) a few parts per task, so that no
    /// task on its main thread grows long (issue 63).
    pub fn unstarted(spec: ClusterSpec) -> Cluster {
        let assignment: Vec<Vec<BrokerId>> =
            spec.partitions.iter().map(|p| p.replicas.clone()).collect();
        let brokers: Vec<Broker> = (1..=spec.brokers)
            .map(|id| Broker::new(id, spec.partitions.len()))
            .collect();
        // The replicas themselves are made by the first parts of the start
        // (`host_part`): most of the building's work on a big world.
        let producers = spec
            .producers
            .iter()
            .enumerate()
            .map(|(i, ps)| {
                let parts = ps
                    .topic
                    .map(|t| spec.topics[t].partitions.clone())
                    .unwrap_or_default();
                Producer::new(
                    ps.name.clone(),
                    i as u32,
                    parts,
                    ps.config.clone(),
                    ps.records_per_sec,
                    spec.brokers,
                )
            })
            .collect();
        let consumers = spec
            .consumers
            .iter()
            .enumerate()
            .map(|(i, cs)| {
                Consumer::new(
                    cs.name.clone(),
                    i as u32,
                    spec.topics[cs.topic].partitions.clone(),
                    cs.config.clone(),
                    spec.brokers,
                )
            })
            .collect();
        let n = spec.partitions.len();
        let mut availability = Availability::new(n);
        for ps in &spec.producers {
            for &p in ps.topic.map_or(&[][..], |t| &spec.topics[t].partitions[..]) {
                availability.produced[p] |= ps.records_per_sec > 0;
                availability.acks_all[p] |= ps.config.acks == Acks::All;
            }
        }
        let consumers_n = spec.consumers.len();
        let mut c = Cluster {
            now: 0,
            seed: spec.seed,
            queue: EventQueue::default(),
            net: Network::new(
                spec.config.network_latency_ms,
                spec.config.network_jitter_ms,
                spec.seed,
                (
                    spec.brokers,
                    spec.producers.len() as u32,
                    spec.consumers.len() as u32,
                ),
            ),
            controller: Controller::new(spec.brokers, &assignment, &spec.initial_states),
            config: spec.config,
            racks: spec.racks,
            topics: spec.topics,
            partitions: Rc::new(spec.partitions),
            brokers,
            producers,
            consumers,
            trace: Trace::default(),
            next_id: 0,
            steps: spec.steps,
            acked: vec![AckedLedger::new(); n],
            invariants: InvariantState::new(n),
            dirty: Vec::new(),
            grown: Vec::new(),
            checks: Vec::new(),
            full_checks_only: false,
            commit_values: Default::default(),
            meta_pages: Default::default(),
            compact_at: MIN_COMPACT_QUEUE,
            sends_buf: Vec::new(),
            timers_buf: Vec::new(),
            msg_boxes: Scratch::default(),
            buffers: Scratch::default(),
            events_processed: 0,
            slow: Vec::new(),
            availability,
            avail_brokers: Vec::new(),
            consumption: Consumption::default(),
            #[cfg(group_protocols)]
            consumer_event: false,
            id_times: SharedVec::new(),
            consumed_seen: vec![0; consumers_n],
            metadata_committed: 0,
            metadata_scheduled: 0,
            controller_busy_until_us: 0,
        };
        // The topics exist before t=0.
        c.metadata_committed = c.controller.metadata_log.len() as u64;
        c.metadata_scheduled = c.metadata_committed;
        // Produce steps count as producers of their partition (the built-in
        // producer's acks default to all, as Kafka's do).
        for (_, a) in &c.steps {
            if let Action::Produce {
                topic,
                partition,
                acks,
                producer,
                ..
            } = a
            {
                if let Ok(p) = c.partition_index(topic, *partition) {
                    let named = producer
                        .as_ref()
                        .and_then(|n| spec.producers.iter().find(|x| &x.name == n));
                    let acks = acks.or(named.map(|x| x.config.acks)).unwrap_or(Acks::All);
                    c.availability.produced[p] = true;
                    c.availability.acks_all[p] |= acks == Acks::All;
                }
            }
        }
        c.dirty.extend(0..n);
        c.consumption = Consumption::new(&c.consumers);
        for (i, (at, _)) in c.steps.clone().iter().enumerate() {
            c.queue.schedule_late(*at, Event::Step(i));
        }
        c
    }

    /// How many parts the start has ([`Cluster::start_part`]): one per
    /// [`HOST_PART_PARTITIONS`] partitions whose replicas the brokers are
    /// given, one per broker the controller registers, one per broker that
    /// bootstraps, one per client, and the checks after them.
    pub fn start_parts(&self) -> usize {
        self.host_parts() + 2 * self.brokers.len() + self.producers.len() + self.consumers.len() + 1
    }

    fn host_parts(&self) -> usize {
        self.partitions.len().div_ceil(HOST_PART_PARTITIONS)
    }

    /// Give the brokers their replicas of the `k`th run of
    /// [`HOST_PART_PARTITIONS`] partitions, in partition order.
    fn host_part(&mut self, k: usize) {
        let Cluster {
            partitions,
            brokers,
            ..
        } = self;
        let first = k * HOST_PART_PARTITIONS;
        let last = (first + HOST_PART_PARTITIONS).min(partitions.len());
        for (p, info) in partitions.iter().enumerate().take(last).skip(first) {
            for &b in &info.replicas {
                if let Some(broker) = brokers.get_mut((b as usize).wrapping_sub(1)) {
                    broker.host(p, Replica::new(p, &info.replicas));
                }
            }
        }
    }

    /// Part `k` of the start of an [`Cluster::unstarted`] world, to be run
    /// once each for `k` in `0..start_parts()`, in that order. Everything
    /// starts at t=0 as an already-running cluster: brokers are registered,
    /// unfenced and caught up with the metadata log; clients fetch metadata.
    /// (The controller schedules a leader rebalance only once an imbalance
    /// appears.) A `k` past the end does nothing.
    pub fn start_part(&mut self, k: usize) {
        let hosting = self.host_parts();
        if k < hosting {
            self.host_part(k);
            return;
        }
        let k = k - hosting;
        let b = self.brokers.len();
        let (p, n) = (self.producers.len(), self.consumers.len());
        if k < b {
            self.handle(Node::Controller, Input::Bootstrap(k as u32 + 1));
        } else if k < 2 * b {
            self.handle(
                Node::Broker((k - b) as u32 + 1),
                Input::Bootstrap((k - b) as u32 + 1),
            );
        } else if k < 2 * b + p {
            self.handle(Node::Producer((k - 2 * b) as u32), Input::Start);
        } else if k < 2 * b + p + n {
            self.handle(Node::Consumer((k - 2 * b - p) as u32), Input::Start);
        } else if k == 2 * b + p + n {
            self.after_event();
        }
    }

    fn schedule_timer(&mut self, node: Node, at: u64, timer: Timer) {
        let incarnation = self.incarnation(node);
        self.queue.schedule(
            at,
            Event::Timer {
                node,
                incarnation,
                timer,
            },
        );
    }

    fn incarnation(&self, node: Node) -> u32 {
        match node {
            Node::Broker(b) => self
                .brokers
                .get(b as usize - 1)
                .map_or(0, |x| x.incarnation),
            Node::Consumer(i) => self.consumers.get(i as usize).map_or(0, |c| c.incarnation),
            _ => 0,
        }
    }

    pub fn broker(&self, b: BrokerId) -> Option<&Broker> {
        self.brokers.get((b as usize).wrapping_sub(1))
    }

    /// Broker `b`'s `broker.rack`, if the brokers have racks.
    pub fn rack_of(&self, b: BrokerId) -> Option<&str> {
        self.racks
            .get((b as usize).wrapping_sub(1))
            .map(String::as_str)
    }

    pub fn next_event_time(&self) -> Option<u64> {
        self.queue.peek_time()
    }

    /// Process the next event. Returns false when nothing is left to do.
    pub fn step(&mut self) -> bool {
        self.step_event().is_some()
    }

    /// How far broker `node` has applied the metadata log (0 for others).
    #[inline(never)]
    fn applied_offset(&self, node: Node) -> u64 {
        match node {
            Node::Broker(b) => self.broker(b).map_or(0, |x| x.metadata_offset),
            _ => 0,
        }
    }

    /// Process one event: `None` when none is left, else whether it was a
    /// wide one, whose work spans the cluster: a scenario step such as a
    /// crash, a broker applying metadata (a push, a
    /// heartbeat's answer, the end of its costed work: any event after which
    /// its applied offset moved), or any event that touched
    /// [`WIDE_EVENT_PARTITIONS`] partitions or more. Milliseconds on 20,000
    /// partitions, where most events take microseconds.
    fn step_event(&mut self) -> Option<bool> {
        let (at, event) = self.queue.pop()?;
        self.now = self.now.max(at);
        self.events_processed += 1;
        let wide = match event {
            Event::Deliver { from, to, msg, .. } => {
                let msg = self
                    .msg_boxes
                    .0
                    .unbox(msg, Message::MetadataPush { metadata_end: 0 });
                let before = self.applied_offset(to);
                self.deliver(from, to, msg);
                self.applied_offset(to) != before
            }
            Event::Timer {
                timer: Timer::MetadataCommitted { end },
                ..
            } => {
                // One push per broker: the brokers' work comes with them.
                self.commit_metadata(end);
                false
            }
            Event::Timer {
                node,
                incarnation,
                timer,
            } => {
                let alive = match node {
                    Node::Broker(b) => self
                        .broker(b)
                        .is_some_and(|x| x.is_running() && x.incarnation == incarnation),
                    Node::Consumer(i) => self
                        .consumers
                        .get(i as usize)
                        .is_some_and(|c| c.running && c.incarnation == incarnation),
                    _ => true,
                };
                let before = self.applied_offset(node);
                if alive {
                    self.handle(node, Input::Timer(timer));
                }
                self.applied_offset(node) != before
            }
            Event::Step(i) => {
                if let Some((_, action)) = self.steps.get(i).cloned() {
                    // Steps were validated when the scenario was loaded.
                    let _ = self.apply(action);
                }
                true
            }
        };
        let checked = self.after_event();
        if self.queue.len() >= self.compact_at {
            self.drop_dead_timers();
        }
        // Any other event that touched many partitions is wide too (a
        // controller fencing a broker elects leaders for all it led).
        Some(wide || checked >= WIDE_EVENT_PARTITIONS)
    }

    /// Drop timers that can no longer do anything (timeouts of requests
    /// long answered, timers of a dead incarnation). Every fetch and request
    /// sets a 30 s timeout that is almost never needed, so in a large cluster
    /// they are most of the queue; dropping them changes nothing that runs,
    /// since a dead timer is a no-op and the others keep their order.
    fn drop_dead_timers(&mut self) {
        let Cluster {
            queue,
            brokers,
            producers,
            consumers,
            ..
        } = self;
        queue.retain(|e| match e {
            Event::Timer {
                node,
                incarnation,
                timer,
            } => match *node {
                Node::Broker(b) => brokers
                    .get((b as usize).wrapping_sub(1))
                    .is_some_and(|x| x.timer_live(*incarnation, timer)),
                Node::Producer(i) => producers
                    .get(i as usize)
                    .is_none_or(|p| p.timer_live(timer)),
                Node::Consumer(i) => consumers
                    .get(i as usize)
                    .is_none_or(|c| c.timer_live(timer)),
                Node::Controller => true,
            },
            _ => true,
        });
        self.compact_at = (self.queue.len() * 2).max(MIN_COMPACT_QUEUE);
    }

    /// Run every event due at or before `t`, then set the clock to `t`.
    pub fn run_until(&mut self, t: u64) {
        while self.queue.peek_time().is_some_and(|at| at <= t) {
            self.step();
        }
        self.now = self.now.max(t);
    }

    /// [`Self::run_until`] in slices: at most `max_events` of the events due
    /// by `t`. True once every one of them has run (the clock then reads
    /// `t`, as after `run_until`); false when the budget ran out first, or
    /// right after a wide event (`step_event`) with more due: the clock
    /// reads the last event's time and more events are due at or before
    /// `t`. Slices that add up to one `run_until(t)` process the same events
    /// in the same order (the queue alone decides what runs next), so a page
    /// that replays in slices builds the same world.
    pub fn run_until_bounded(&mut self, t: u64, max_events: u64) -> bool {
        let mut left = max_events;
        let due = |c: &Self| c.queue.peek_time().is_some_and(|at| at <= t);
        while due(self) {
            if left == 0 {
                return false;
            }
            left -= 1;
            // A wide event also ends the run, so that the caller reads its
            // clock after it: a page's chunk sized by the pace of cheap
            // events held the 20 crashes of tour 19's rack at 3 s, 20 wide
            // events in one call of ~100 ms (issue 63).
            if self.step_event() == Some(true) && due(self) {
                return false;
            }
        }
        self.now = self.now.max(t);
        true
    }

    pub fn run_for(&mut self, ms: u64) {
        let t = self.now.saturating_add(ms);
        self.run_until(t);
    }

    fn deliver(&mut self, from: Node, to: Node, msg: Message) {
        if !self.net.can_reach(from, to) {
            self.net.messages_dropped += 1;
            return;
        }
        if let Node::Broker(b) = to {
            let (process, accepting) = self
                .broker(b)
                .map_or((None, false), |x| (Some(x.process), x.accepting));
            // Only inbound requests need the socket server: answers come
            // back on connections the broker opened itself.
            let inbound = !matches!(from, Node::Controller) && msg.request_id().is_some();
            if process != Some(Process::Running) || (inbound && !accepting) {
                // A dead process refuses connections, and so does one still
                // starting up (its socket server opens only once it is
                // unfenced); a powered-off machine does not answer at all.
                if process != Some(Process::PoweredOff) {
                    if let Some(id) = msg.request_id() {
                        self.send(to, from, Message::Disconnected { id, to });
                    }
                }
                return;
            }
            if let Message::Connect { id } = msg {
                // The socket server accepts: the connection is up.
                self.send(to, from, Message::Connected { id, broker: b });
                return;
            }
        }
        self.handle(to, Input::Msg(from, msg));
    }

    fn send(&mut self, from: Node, to: Node, msg: Message) {
        if !self.net.can_reach(from, to) {
            self.net.messages_dropped += 1;
            return;
        }
        let at = self.net.delivery_time(self.now, from, to);
        let sent_at = self.now;
        self.queue.schedule(
            at,
            Event::Deliver {
                from,
                to,
                sent_at,
                msg: self.msg_boxes.0.boxed(msg),
            },
        );
    }

    /// Run one node's handler with a fresh context, then route its outputs.
    fn handle(&mut self, node: Node, input: Input) {
        let ids_before = self.next_id;
        let trace_before = self.trace.len();
        let process_before = match node {
            Node::Broker(b) => self.broker(b).map(|x| (x.process, x.accepting)),
            _ => None,
        };
        self.handle_inner(node, input);
        self.after_handle(node, ids_before, trace_before, process_before);
    }

    /// The availability accountant's look at what a handler did.
    fn after_handle(
        &mut self,
        node: Node,
        ids_before: u64,
        trace_before: usize,
        process_before: Option<(Process, bool)>,
    ) {
        let now = self.now;
        if self.next_id > ids_before && self.id_times.last().is_none_or(|e| e.1 != now) {
            self.id_times.push((ids_before + 1, now));
        }
        match node {
            Node::Broker(b) => {
                let state = self.broker(b).map(|x| (x.process, x.accepting));
                if state != process_before {
                    self.avail_brokers.push(b);
                }
                let (process, process_before) = (state.map(|x| x.0), process_before.map(|x| x.0));
                if process_before == Some(Process::Running)
                    && matches!(process, Some(Process::Crashed | Process::ShutDown))
                {
                    // The process ended: its operating system closes every
                    // client connection (a powered-off machine closes
                    // nothing: its clients find out by timeouts).
                    let clients = (0..self.producers.len() as u32)
                        .map(Node::Producer)
                        .chain((0..self.consumers.len() as u32).map(Node::Consumer));
                    for c in clients.collect::<Vec<_>>() {
                        self.send(node, c, Message::ConnectionClosed { broker: b });
                    }
                }
                // A coordinator ends a member's session: the assignment
                // history's member whose process had gone frees its partitions.
                #[cfg(group_protocols)]
                if !self.consumption.is_empty() {
                    for e in self.trace.since(trace_before) {
                        match &e.kind {
                            TraceKind::GroupMemberExpired { group, member, .. } => {
                                self.consumption.member_gone(now, group, member)
                            }
                            TraceKind::GroupMemberReplaced { group, member, .. } => self
                                .consumption
                                .member_replaced(now, group, member, &self.consumers),
                            _ => {}
                        }
                    }
                }
            }
            Node::Controller => {
                for e in self.trace.since(trace_before) {
                    if let TraceKind::BrokerFenced { broker, .. } = e.kind {
                        self.availability.fenced(now, broker);
                    }
                }
            }
            Node::Consumer(i) => {
                let i = i as usize;
                let (Some(k), Some(seen)) = (self.consumers.get(i), self.consumed_seen.get(i))
                else {
                    return;
                };
                let fresh: Vec<u64> = k
                    .consumed_records
                    .get(*seen..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|r| r.id)
                    .collect();
                self.consumed_seen[i] = k.consumed_records.len();
                for id in fresh {
                    let sent = self.sent_at(id);
                    self.availability.consumed(now.saturating_sub(sent));
                }
            }
            Node::Producer(_) => {}
        }
    }

    /// The controller writes its new records in batches of at most
    /// `sim.controller.max.records.per.batch`, each taking
    /// `sim.controller.record.write.us` per record after the previous one;
    /// a batch is pushed to the brokers once written. Work that ends within
    /// the current millisecond is visible at once.
    fn schedule_metadata_writes(&mut self) {
        let len = self.controller.metadata_log.len() as u64;
        let costs = self.config.costs;
        let now_us = self.now * 1000;
        while self.metadata_scheduled < len {
            let start = self.metadata_scheduled;
            let end = (start + costs.controller_max_records_per_batch).min(len);
            let begin_us = self.controller_busy_until_us.max(now_us);
            self.controller_busy_until_us = begin_us + (end - start) * costs.controller_record_us;
            self.metadata_scheduled = end;
            let at = self.controller_busy_until_us / 1000;
            if at <= self.now {
                self.commit_metadata(end);
            } else {
                self.queue.schedule(
                    at,
                    Event::Timer {
                        node: Node::Controller,
                        incarnation: 0,
                        timer: Timer::MetadataCommitted { end },
                    },
                );
            }
        }
    }

    /// Metadata up to `end` is written: brokers may see it, and are told.
    fn commit_metadata(&mut self, end: u64) {
        if end <= self.metadata_committed {
            return;
        }
        self.metadata_committed = end;
        for b in 1..=self.brokers.len() as u32 {
            self.send(
                Node::Controller,
                Node::Broker(b),
                Message::MetadataPush { metadata_end: end },
            );
        }
    }

    /// When the application sent record `id` (ids are handed out in time order).
    fn sent_at(&self, id: u64) -> u64 {
        let i = self.id_times.partition_point(|e| e.0 <= id);
        i.checked_sub(1)
            .and_then(|i| self.id_times.get(i))
            .map_or(0, |e| e.1)
    }

    fn handle_inner(&mut self, node: Node, input: Input) {
        let empty: [Rc<super::protocol::MetadataRecord>; 0] = [];
        let committed = (self.metadata_committed as usize).min(self.controller.metadata_log.len());
        let Cluster {
            brokers,
            controller,
            producers,
            consumers,
            trace,
            next_id,
            config,
            racks,
            partitions,
            dirty,
            grown,
            now,
            sends_buf,
            timers_buf,
            commit_values,
            buffers,
            meta_pages,
            ..
        } = self;
        macro_rules! ctx {
            ($metadata:expr) => {
                Ctx {
                    now: *now,
                    config,
                    racks,
                    partitions,
                    metadata: $metadata,
                    trace,
                    next_id,
                    sends: std::mem::take(sends_buf),
                    timers: std::mem::take(timers_buf),
                    dirty,
                    grown,
                    commit_values,
                    buffers: &mut buffers.0,
                    meta_pages,
                }
            };
        }
        let mut controller_changed = false;
        let (sends, timers) = match node {
            Node::Controller => {
                // The controller's context must not borrow its own log.
                let mut ctx = ctx!(&empty);
                match input {
                    Input::Msg(from, msg) => controller.on_message(&mut ctx, from, msg),
                    Input::Timer(t) => controller.on_timer(&mut ctx, t),
                    Input::ElectPreferred(p) => controller.elect_preferred(&mut ctx, p),
                    Input::Bootstrap(b) => {
                        // The broker's first start is its incarnation 1.
                        let incarnation =
                            brokers.get(b as usize - 1).map_or(1, |x| x.incarnation + 1);
                        controller.bootstrap_broker(&mut ctx, b, incarnation);
                    }
                    _ => {}
                }
                // Every controller event ends by checking whether a leader
                // rebalance needs scheduling (QuorumController).
                controller.maybe_schedule_rebalance(&mut ctx);
                controller_changed = true;
                (ctx.sends, ctx.timers)
            }
            Node::Broker(b) => {
                let Some(broker) = brokers.get_mut(b as usize - 1) else {
                    return;
                };
                let mut ctx = ctx!(&controller.metadata_log[..committed]);
                match input {
                    Input::Msg(from, msg) => broker.on_message(&mut ctx, from, msg),
                    Input::Timer(t) => broker.on_timer(&mut ctx, t),
                    Input::Start => broker.start(&mut ctx),
                    Input::Crash(power) => {
                        broker.crash(&mut ctx, power);
                    }
                    Input::Shutdown => broker.request_shutdown(&mut ctx),
                    Input::Bootstrap(_) => {
                        let epoch = controller
                            .brokers
                            .get(b as usize - 1)
                            .map_or(0, |s| s.broker_epoch);
                        broker.bootstrap(&mut ctx, epoch);
                    }
                    _ => {}
                }
                (ctx.sends, ctx.timers)
            }
            Node::Producer(i) => {
                let Some(p) = producers.get_mut(i as usize) else {
                    return;
                };
                let mut ctx = ctx!(&controller.metadata_log[..committed]);
                match input {
                    Input::Msg(_, msg) => p.on_message(&mut ctx, msg),
                    Input::Timer(t) => p.on_timer(&mut ctx, t),
                    Input::Start => p.start(&mut ctx),
                    Input::Send {
                        partition,
                        count,
                        acks,
                    } => {
                        let ids = (0..count).map(|_| ctx.new_id()).collect();
                        p.send(&mut ctx, partition, ids, acks, true);
                    }
                    _ => {}
                }
                (ctx.sends, ctx.timers)
            }
            Node::Consumer(i) => {
                let Some(c) = consumers.get_mut(i as usize) else {
                    return;
                };
                let mut ctx = ctx!(&controller.metadata_log[..committed]);
                match input {
                    Input::Client(kind) => c.client_step(&mut ctx, kind),
                    // A crashed consumer process reads nothing.
                    _ if !c.running => {}
                    Input::Msg(_, msg) => c.on_message(&mut ctx, msg),
                    Input::Timer(t) => c.on_timer(&mut ctx, t),
                    Input::Start => c.start(&mut ctx),
                    _ => {}
                }
                (ctx.sends, ctx.timers)
            }
        };
        let (mut sends, mut timers) = (sends, timers);
        for (to, msg) in sends.drain(..) {
            self.send(node, to, msg);
        }
        for (at, timer) in timers.drain(..) {
            self.schedule_timer(node, at, timer);
        }
        // Keep the (now empty) buffers for the next handler: no allocation per event.
        self.sends_buf = sends;
        self.timers_buf = timers;
        if controller_changed && self.controller.pending_push {
            self.controller.pending_push = false;
            self.schedule_metadata_writes();
        }
        #[cfg(group_protocols)]
        if let Node::Consumer(_) = node {
            self.consumer_event = true;
        }
        if let Node::Producer(i) = node {
            // Read, then given back emptied: no new buffer per acknowledgement.
            let mut acked = std::mem::take(&mut self.producers[i as usize].newly_acked);
            for &(p, a) in &acked {
                let sent = self.sent_at(a.id);
                self.availability
                    .acked(p, self.now, self.now.saturating_sub(sent));
                self.acked[p].push(a);
                // A new acknowledgement changes no replica: only the
                // acknowledged-records watch needs to look again.
                self.grown.push(p);
            }
            acked.clear();
            self.producers[i as usize].newly_acked = acked;
        }
    }

    /// Check what the event touched; returns how many partitions that was.
    fn after_event(&mut self) -> usize {
        #[cfg(group_protocols)]
        if std::mem::take(&mut self.consumer_event) && !self.consumption.is_empty() {
            self.consumption.observe(self.now, &self.consumers);
        }
        if !self.avail_brokers.is_empty() {
            let mut brokers = std::mem::take(&mut self.avail_brokers);
            // The partitions they lead, and those whose ISR waits for them:
            // all among the partitions they host (`hosted`; `dirty` is sorted
            // below).
            let Cluster {
                controller, dirty, ..
            } = self;
            for &b in &brokers {
                for &p in hosted(&self.brokers, b) {
                    let reg = &controller.partitions[p];
                    if reg.leader == Some(b) || reg.isr.contains(&b) {
                        dirty.push(p);
                    }
                }
            }
            brokers.clear();
            self.avail_brokers = brokers;
        }
        if self.dirty.is_empty() && self.grown.is_empty() {
            return 0;
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        let mut grown = std::mem::take(&mut self.grown);
        if self.full_checks_only {
            dirty.append(&mut grown);
        }
        dirty.sort_unstable();
        dirty.dedup();
        grown.sort_unstable();
        grown.dedup();
        // Both lists merged in partition order: a partition in `dirty` is
        // checked in full, one only in `grown` lightly. Every touched
        // partition is observed by the availability accountant and checked
        // in the same order as before the split.
        let mut checks = std::mem::take(&mut self.checks);
        checks.clear();
        let (mut i, mut j) = (0, 0);
        while i < dirty.len() || j < grown.len() {
            match (dirty.get(i), grown.get(j)) {
                (Some(&d), Some(&g)) if g < d => {
                    checks.push((g, false));
                    j += 1;
                }
                (Some(&d), g) => {
                    checks.push((d, true));
                    i += 1;
                    if g == Some(&d) {
                        j += 1;
                    }
                }
                (None, Some(&g)) => {
                    checks.push((g, false));
                    j += 1;
                }
                (None, None) => break,
            }
        }
        for &(p, _) in &checks {
            let state = self.partition_state(p);
            self.availability.observe(p, self.now, &state);
        }
        super::invariants::check(self, &checks);
        // Hand the buffers back (the check adds nothing to them): no
        // allocation per event.
        dirty.clear();
        grown.clear();
        self.dirty = dirty;
        self.grown = grown;
        let checked = checks.len();
        self.checks = checks;
        checked
    }

    /// Check every touched partition in full after each event, the light
    /// look at partitions that only grew or got acknowledgements included
    /// (for tests that compare the two).
    pub fn set_full_checks_only(&mut self, full: bool) {
        self.full_checks_only = full;
    }

    /// What the availability accountant needs to know of partition `p`.
    #[inline(never)]
    pub fn partition_state(&self, p: PartitionIndex) -> PartitionState {
        let reg = &self.controller.partitions[p];
        let leader = reg.leader.and_then(|l| self.broker(l));
        PartitionState {
            leader: reg.leader,
            leader_epoch: reg.leader_epoch,
            // A restarted process that the controller has not unfenced yet
            // takes no connection (and leads nothing): still down for writes.
            leader_up: leader.is_some_and(|b| {
                b.is_running() && b.accepting && !self.net.isolated.contains(&b.id)
            }),
            leader_applied: leader
                .and_then(|b| b.replicas.get(&p))
                .is_some_and(|r| r.is_leader() && r.leader_epoch >= reg.leader_epoch),
            isr_len: reg.isr.len() as u32,
            // The effective min ISR the leader applies (min(RF,
            // min.insync.replicas)): an RF 1 partition with
            // min.insync.replicas=2 takes acks=all writes from its one replica.
            min_insync_replicas: self.partitions[p]
                .config
                .min_insync_replicas
                .min(reg.replicas.len() as u32),
            acks_all: self.availability.acks_all[p],
            isr_member_down: reg.isr.iter().any(|&f| {
                Some(f) != reg.leader
                    && (self.net.isolated.contains(&f)
                        || self.slow.contains(&(f, p))
                        || self.broker(f).is_none_or(|x| !x.is_running()))
            }),
        }
    }

    /// A fault verb is about to hit broker `b`: the partitions it leads, and
    /// those whose ISR names it as a follower.
    fn record_fault(&mut self, action: FaultAction, b: BrokerId) {
        let (mut led, mut followed) = (Vec::new(), Vec::new());
        for &p in hosted(&self.brokers, b) {
            let r = &self.controller.partitions[p];
            if r.leader == Some(b) {
                led.push((p, r.leader_epoch));
            } else if r.leader.is_some() && r.isr.contains(&b) {
                followed.push((p, r.leader_epoch));
            }
        }
        self.availability
            .fault(self.now, action, b, &led, &followed);
        self.avail_brokers.push(b);
    }

    pub fn partition_index(&self, topic: &str, partition: u32) -> Result<PartitionIndex, String> {
        let t = self
            .topics
            .iter()
            .find(|t| t.name == topic)
            .ok_or_else(|| format!("unknown topic \"{topic}\""))?;
        t.partitions
            .get(partition as usize)
            .copied()
            .ok_or_else(|| {
                format!(
                    "topic \"{topic}\" has {} partitions; there is no partition {partition}",
                    t.partitions.len()
                )
            })
    }

    fn check_broker(&self, b: BrokerId) -> Result<(), String> {
        if b == 0 || b as usize > self.brokers.len() {
            Err(format!(
                "broker {b} does not exist (brokers are 1..={})",
                self.brokers.len()
            ))
        } else {
            Ok(())
        }
    }

    /// Check an action against this cluster without applying it.
    pub fn validate(&self, action: &Action) -> Result<(), String> {
        match action {
            Action::Produce {
                topic,
                partition,
                count,
                producer,
                ..
            } => {
                self.partition_index(topic, *partition)?;
                if *count == 0 {
                    return Err("count must be at least 1".into());
                }
                if *count > 100_000 {
                    return Err("count must be at most 100000".into());
                }
                if let Some(name) = producer {
                    if !self.producers.iter().any(|p| &p.name == name) {
                        return Err(format!("unknown producer \"{name}\""));
                    }
                }
                Ok(())
            }
            Action::Crash(b)
            | Action::PowerLoss(b)
            | Action::Restart(b)
            | Action::Shutdown(b)
            | Action::Isolate(b)
            | Action::Heal(b)
            | Action::Flush(b) => self.check_broker(*b),
            Action::Slow {
                broker,
                topic,
                partition,
            }
            | Action::Unslow {
                broker,
                topic,
                partition,
            } => {
                self.check_broker(*broker)?;
                let p = self.partition_index(topic, *partition)?;
                if !self.partitions[p].replicas.contains(broker) {
                    return Err(format!(
                        "broker {broker} holds no replica of {topic}-{partition}"
                    ));
                }
                Ok(())
            }
            Action::ElectPreferred { topic, partition } => {
                self.partition_index(topic, *partition).map(|_| ())
            }
            Action::ClientStep { kind, client } => {
                let Some(c) = self.consumers.iter().find(|c| &c.name == client) else {
                    return Err(format!("unknown consumer \"{client}\""));
                };
                if *kind == ClientStep::Commit && c.config.group_id.is_none() {
                    return Err(format!(
                        "consumer \"{client}\" has no group.id, so it has nothing to commit to"
                    ));
                }
                Ok(())
            }
        }
    }

    /// Do `action` now. Invalid actions are refused with a message, never a panic;
    /// actions that make no sense in the current state (restarting a running
    /// broker) are no-ops, as they would be on a real cluster.
    pub fn apply(&mut self, action: Action) -> Result<(), String> {
        self.validate(&action)?;
        let text = describe_action(&action);
        self.trace.push(
            self.now,
            TraceKind::Step {
                action: serde_json::to_string(&action).unwrap_or_default(),
            },
            text,
        );
        match action {
            Action::Produce {
                topic,
                partition,
                count,
                acks,
                producer,
            } => {
                let p = self.partition_index(&topic, partition)?;
                let idx = match producer {
                    Some(name) => self.producers.iter().position(|x| x.name == name),
                    None => Some(self.default_producer()),
                };
                let Some(idx) = idx else {
                    return Err("unknown producer".into());
                };
                let acks = acks.unwrap_or(self.producers[idx].config.acks);
                self.availability.produced[p] = true;
                if acks == Acks::All && !self.availability.acks_all[p] {
                    self.availability.acks_all[p] = true;
                    self.dirty.push(p);
                }
                self.handle(
                    Node::Producer(idx as u32),
                    Input::Send {
                        partition: p,
                        count,
                        acks,
                    },
                );
            }
            Action::Crash(b) | Action::PowerLoss(b) => {
                let power = matches!(action, Action::PowerLoss(_));
                if self.broker(b).is_some_and(|x| x.is_running()) {
                    let kind = if power {
                        FaultAction::PowerLoss
                    } else {
                        FaultAction::Crash
                    };
                    self.record_fault(kind, b);
                    let before: u64 = self.log_records_on(b);
                    self.handle(Node::Broker(b), Input::Crash(power));
                    let lost = before - self.log_records_on(b);
                    if power {
                        for (p, info) in self.partitions.iter().enumerate() {
                            if info.replicas.contains(&b) {
                                self.invariants.power_loss(p, b);
                            }
                        }
                        self.trace.push(
                            self.now,
                            TraceKind::BrokerPowerLoss { broker: b, records_lost: lost },
                            format!("Broker {b} lost power: {lost} record(s) not yet flushed to disk are gone; on restart it reads its high watermarks from the last checkpoint."),
                        );
                    } else {
                        self.trace.push(
                            self.now,
                            TraceKind::BrokerCrashed { broker: b },
                            format!("Broker {b}'s process crashed. Its log survives in the page cache; it stops heartbeating, and the controller will fence it after broker.session.timeout.ms={}.", self.config.broker_session_timeout_ms),
                        );
                    }
                }
            }
            Action::Restart(b) => {
                if let Some(x) = self.broker(b).filter(|x| !x.is_running()) {
                    let startup = x.startup_ms(&self.config);
                    let secs = |ms: u64| format!("{}.{:03} s", ms / 1000, ms % 1000);
                    let recovery = if x.clean_shutdown || self.config.broker_log_recovery_ms == 0 {
                        String::new()
                    } else {
                        format!(
                            ", {} of them recovering its log after the unclean shutdown (sim.broker.log.recovery.ms)",
                            secs(self.config.broker_log_recovery_ms)
                        )
                    };
                    let text = if startup == 0 {
                        format!("Broker {b} starts again: it reloads its log, reads its checkpointed high watermarks and registers with the controller.")
                    } else {
                        format!(
                            "Broker {b}'s process starts again. Its start-up (JVM, loading its logs and checkpointed high watermarks{recovery}) takes {} (sim.broker.startup.ms, measured on a real Kafka 4.4.0 cluster); then it registers with the controller. Until then it answers no one.",
                            secs(startup)
                        )
                    };
                    self.trace
                        .push(self.now, TraceKind::BrokerRestarted { broker: b }, text);
                    self.handle(Node::Broker(b), Input::Start);
                }
            }
            Action::Shutdown(b) => {
                if self.broker(b).is_some_and(|x| x.is_running()) {
                    self.record_fault(FaultAction::Shutdown, b);
                    self.handle(Node::Broker(b), Input::Shutdown);
                }
            }
            Action::Isolate(b) => {
                if !self.net.isolated.contains(&b) && self.broker(b).is_some_and(|x| x.is_running())
                {
                    self.record_fault(FaultAction::Isolate, b);
                }
                if self.net.isolated.insert(b) {
                    self.trace.push(
                        self.now,
                        TraceKind::BrokerIsolated { broker: b },
                        format!("Broker {b} is cut off from the network: it can reach nobody and nobody can reach it, the controller and clients included. It may still believe it leads."),
                    );
                }
            }
            Action::Heal(b) => {
                if self.net.isolated.remove(&b) {
                    self.avail_brokers.push(b);
                    self.trace.push(
                        self.now,
                        TraceKind::BrokerHealed { broker: b },
                        format!("Broker {b}'s network is back."),
                    );
                }
            }
            Action::Slow {
                broker,
                topic,
                partition,
            } => {
                let p = self.partition_index(&topic, partition)?;
                if !self.slow.contains(&(broker, p)) {
                    self.slow.push((broker, p));
                }
                self.dirty.push(p);
                self.sync_slow(broker);
            }
            Action::Unslow {
                broker,
                topic,
                partition,
            } => {
                let p = self.partition_index(&topic, partition)?;
                self.slow.retain(|x| *x != (broker, p));
                self.dirty.push(p);
                self.sync_slow(broker);
            }
            Action::ElectPreferred { topic, partition } => {
                let p = self.partition_index(&topic, partition)?;
                self.handle(Node::Controller, Input::ElectPreferred(p));
            }
            Action::ClientStep { kind, client } => {
                if let Some(i) = self.consumers.iter().position(|c| c.name == client) {
                    self.handle(Node::Consumer(i as u32), Input::Client(kind));
                }
            }
            Action::Flush(b) => {
                if let Some(broker) = self.brokers.get_mut(b as usize - 1) {
                    if broker.is_running() {
                        broker
                            .replicas
                            .change_where(|r| r.log.needs_flush(), |r| r.log.flush());
                    }
                }
            }
        }
        self.after_event();
        Ok(())
    }

    fn sync_slow(&mut self, b: BrokerId) {
        let slow: Vec<PartitionIndex> =
            self.slow.iter().filter(|x| x.0 == b).map(|x| x.1).collect();
        if let Some(broker) = self.brokers.get_mut(b as usize - 1) {
            broker.slow_partitions = slow;
        }
        // Wake its fetcher so an unslowed partition resumes promptly.
        if self.broker(b).is_some_and(|x| x.is_running()) {
            self.handle(Node::Broker(b), Input::Timer(Timer::FetchRetry));
        }
    }

    fn log_records_on(&self, b: BrokerId) -> u64 {
        self.broker(b).map_or(0, |x| {
            x.replicas.values().map(|r| r.log.log_end_offset()).sum()
        })
    }

    /// The built-in producer "default" used by produce steps without a producer.
    fn default_producer(&mut self) -> usize {
        if let Some(i) = self.producers.iter().position(|p| p.name == "default") {
            return i;
        }
        let idx = self.producers.len();
        let config = ProducerConfig::parse(&Default::default(), "default", None)
            .unwrap_or_else(|_| unreachable!("empty producer config always parses"));
        self.producers.push(Producer::new(
            "default".to_string(),
            idx as u32,
            Vec::new(),
            config,
            0,
            self.brokers.len() as u32,
        ));
        self.handle(Node::Producer(idx as u32), Input::Start);
        idx
    }

    /// Every message currently travelling, for the UI's animation.
    /// (sent at, arrives at, from, to, kind) of every message in flight.
    pub fn in_flight(&self) -> Vec<(u64, u64, Node, Node, &'static str)> {
        let mut v: Vec<_> = self
            .queue
            .iter()
            .filter_map(|(at, e)| match e {
                Event::Deliver {
                    from,
                    to,
                    sent_at,
                    msg,
                } => Some((*sent_at, at, *from, *to, msg.kind())),
                _ => None,
            })
            .collect();
        super::shared::sort_slim(&mut v);
        v
    }

    pub fn violations(&self) -> &[Violation] {
        &self.invariants.violations
    }
}

fn describe_action(a: &Action) -> String {
    match a {
        Action::Produce {
            topic,
            partition,
            count,
            acks,
            producer,
        } => format!(
            "Step: produce {count} record(s) to {topic}-{partition}{}{}.",
            acks.map(|a| format!(" with acks={}", a.as_str()))
                .unwrap_or_default(),
            producer
                .as_ref()
                .map(|p| format!(" from producer {p}"))
                .unwrap_or_default()
        ),
        Action::Crash(b) => format!("Step: crash broker {b}."),
        Action::PowerLoss(b) => format!("Step: power loss on broker {b}."),
        Action::Restart(b) => format!("Step: restart broker {b}."),
        Action::Shutdown(b) => format!("Step: controlled shutdown of broker {b}."),
        Action::Isolate(b) => format!("Step: isolate broker {b}."),
        Action::Heal(b) => format!("Step: heal broker {b}."),
        Action::Slow {
            broker,
            topic,
            partition,
        } => format!("Step: broker {broker} stops fetching {topic}-{partition}."),
        Action::Unslow {
            broker,
            topic,
            partition,
        } => format!("Step: broker {broker} fetches {topic}-{partition} again."),
        Action::ElectPreferred { topic, partition } => {
            format!("Step: preferred leader election for {topic}-{partition}.")
        }
        Action::Flush(b) => format!("Step: broker {b} flushes its logs to disk."),
        Action::ClientStep { kind, client } => match kind {
            ClientStep::Commit => format!("Step: consumer {client} commits its positions."),
            ClientStep::Crash => format!("Step: consumer {client}'s process crashes."),
            ClientStep::Restart => format!("Step: consumer {client} starts again."),
            ClientStep::Stall => {
                format!("Step: consumer {client}'s application stops calling poll().")
            }
            ClientStep::Resume => {
                format!("Step: consumer {client}'s application calls poll() again.")
            }
        },
    }
}

/// The partitions broker `b` holds a replica of, in partition order (its
/// replicas' keys: made by `host_part`, never removed).
/// Replica sets never change once the world is built, and a partition's
/// leader, ISR and ELR are always among its replicas
/// (`parse_initial_state`; the controller takes no ISR outside them), so
/// what a broker leads or is in sync for is found among these, not
/// among every registration.
fn hosted(brokers: &[Broker], b: BrokerId) -> &[PartitionIndex] {
    brokers
        .get((b as usize).wrapping_sub(1))
        .map_or(&[], |x| x.replicas.keys())
}
