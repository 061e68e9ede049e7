//! What a node's handler may do to the world: send messages, set timers, append
//! to the trace. Handlers receive a [`Ctx`], write their outputs into it and the
//! cluster routes them afterwards, so every state machine stays a function of
//! (state, input, time) → (state, outputs), in the manner of Stateright's actors.

use std::rc::Rc;

use super::config::ClusterConfig;
use super::log::Record;
use super::protocol::{
    BrokerId, CommittedOffset, Message, MetadataRecord, Node, PartitionIndex, ProduceBatch,
    ProducePartitionResponse,
};
use super::shared::Spare;
use super::trace::{Trace, TraceKind};
use super::PartitionInfo;

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum Timer {
    // broker
    /// The lifecycle manager's next registration or heartbeat; only the
    /// latest one scheduled is live.
    Heartbeat {
        seq: u64,
    },
    IsrCheck,
    HighWatermarkCheckpoint,
    Flush,
    FetchTimeout {
        leader: BrokerId,
        id: u64,
    },
    FetchRetry,
    DelayedFetchExpire {
        id: u64,
    },
    DelayedProduceExpire {
        id: u64,
    },
    AlterPartitionRetry {
        partition: PartitionIndex,
        id: u64,
    },
    /// The broker has done the work of applying metadata up to `end`
    /// (the `sim.broker.*` costs).
    MetadataApplied {
        end: u64,
    },
    // controller
    SessionCheck {
        broker: BrokerId,
    },
    LeaderRebalance,
    /// The controller has written the metadata batch ending at `end`
    /// (the `sim.controller.*` costs): it is visible to the brokers.
    MetadataCommitted {
        end: u64,
    },
    /// A new coordinator has read `partition` of `__consumer_offsets` (as
    /// leader in `leader_epoch`) and answers its groups from now on.
    CoordinatorLoaded {
        partition: PartitionIndex,
        leader_epoch: u32,
    },
    /// The coordinator of offsets partition `partition` checks its classic
    /// groups: sessions that ended, join phases that are due.
    GroupTick {
        partition: PartitionIndex,
        leader_epoch: u32,
    },
    // clients
    ProducerTick,
    Send,
    RequestTimeout {
        id: u64,
    },
    MetadataRefresh,
    ConsumerPoll,
    /// A group consumer's `auto.commit.interval.ms` has passed, on the
    /// clock armed `seq`-th (a new assignment re-arms it: the older clock's
    /// timer is then stale).
    AutoCommit {
        seq: u32,
    },
    /// A classic group member's `heartbeat.interval.ms` has passed.
    MemberHeartbeat,
    /// `max.poll.interval.ms` after the application stopped calling poll()
    /// at `since`.
    MaxPollExpired {
        since: u64,
    },
    /// A connect attempt to `broker` still unanswered after
    /// `socket.connection.setup.timeout.ms` gives up.
    ConnectionSetupTimeout {
        broker: BrokerId,
        id: u64,
    },
}

pub struct Ctx<'a> {
    pub now: u64,
    pub config: &'a ClusterConfig,
    /// `broker.rack` of broker `i + 1` (static broker config, known to all).
    pub racks: &'a [String],
    pub partitions: &'a [PartitionInfo],
    pub metadata: &'a [Rc<MetadataRecord>],
    pub trace: &'a mut Trace,
    pub next_id: &'a mut u64,
    pub sends: Vec<(Node, Message)>,
    pub timers: Vec<(u64, Timer)>,
    /// Partitions whose state changed, for the invariant checker.
    pub dirty: &'a mut Vec<PartitionIndex>,
    /// Partitions where a leader only wrote at its log end, above its HW
    /// ([`Ctx::touch_grown`]): the checker's light look.
    pub grown: &'a mut Vec<PartitionIndex>,
    /// The values of the records of `__consumer_offsets`, by record id.
    pub commit_values: &'a mut CommitValues,
    /// Emptied vectors of the produce path, shared by every node.
    pub buffers: &'a mut Buffers,
    /// The metadata-cache pages the brokers share.
    pub meta_pages: &'a mut super::broker::MetaPages,
}

/// Emptied vectors of the produce path, kept for the next request. A produce
/// request is built by a producer, taken apart by a broker and answered back,
/// so what one node empties another fills next: the cluster keeps one set
/// for all of them (in a `shared::Scratch`, so a snapshot starts without
/// it) and lends it to each handler in its [`Ctx`]. A steady run allocates
/// none of these per record: each kind keeps up to [`IN_FLIGHT`] (a
/// producer tick of the large bench starts ~50 batches, each out for a
/// round trip), of up to [`ROOM`] elements each.
#[derive(Default)]
pub struct Buffers {
    /// A batch's records as a request carries them.
    pub records: Spare<Record, IN_FLIGHT, ROOM>,
    /// A request's batches.
    pub batches: Spare<ProduceBatch, IN_FLIGHT, ROOM>,
    /// A response's per-partition answers.
    pub answers: Spare<ProducePartitionResponse, IN_FLIGHT, ROOM>,
    /// A producer's record ids and send times (a batch's, a tick's).
    pub ids: Spare<u64, IN_FLIGHT, ROOM>,
    /// The partitions a request went to.
    pub partitions: Spare<PartitionIndex, IN_FLIGHT, ROOM>,
}

/// How many emptied vectors of each kind [`Buffers`] keeps.
pub const IN_FLIGHT: usize = 1024;
/// The most elements a vector [`Buffers`] keeps has room for: steady load
/// sends a record or a few per batch, while a backlog drained after an
/// outage sends batches of up to `batch.size` (~1,000 records), which
/// would otherwise stay, up to 1,024 of them (32 MB of records), after the
/// burst.
pub const ROOM: usize = 64;

/// A log holds record ids only, so what each record of `__consumer_offsets`
/// says (a group's committed position for one partition) is kept here, by
/// record id, written once when the coordinator appends it. Ids are never
/// reused within a run, so the map only grows; a replica's log decides
/// which of these records exist for it.
pub type CommitValues = super::pmap::VecMap<u64, OffsetsRecord>;

/// A record of `__consumer_offsets`: a group's committed offset for one
/// partition, or a classic group's membership and assignment.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum OffsetsRecord {
    Commit(std::rc::Rc<str>, CommittedOffset),
    #[cfg(group_protocols)]
    ConsumerGroup(
        std::rc::Rc<str>,
        std::rc::Rc<super::broker::consumer_group::ConsumerGroup>,
    ),
    #[cfg(group_protocols)]
    Group(
        std::rc::Rc<str>,
        std::rc::Rc<super::broker::classic_group::GroupSnapshot>,
    ),
}

impl<'a> Ctx<'a> {
    pub fn send(&mut self, to: Node, msg: Message) {
        self.sends.push((to, msg));
    }

    pub fn after(&mut self, delay_ms: u64, timer: Timer) {
        self.timers.push((self.now + delay_ms, timer));
    }

    pub fn new_id(&mut self) -> u64 {
        *self.next_id += 1;
        *self.next_id
    }

    pub fn trace(&mut self, kind: TraceKind, text: String) {
        self.trace.push(self.now, kind, text);
    }

    pub fn touch(&mut self, p: PartitionIndex) {
        self.dirty.push(p);
    }

    /// `p` changed only by records a replica wrote at its log end, with its
    /// HW at or below where the log ended before: no invariant of the
    /// replicas can find anything new there (see `invariants::check`), so
    /// only the acknowledged-records watch looks again. Anything else that
    /// changes `p` in the same event touches it with [`Ctx::touch`].
    pub fn touch_grown(&mut self, p: PartitionIndex) {
        self.grown.push(p);
    }

    /// Broker `b`'s `broker.rack`, if the brokers have racks.
    pub fn rack_of(&self, b: BrokerId) -> Option<&'a str> {
        self.racks
            .get((b as usize).wrapping_sub(1))
            .map(String::as_str)
    }

    /// `topic-partition` as Kafka prints it.
    pub fn tp(&self, p: PartitionIndex) -> String {
        self.partitions[p].name()
    }
}

/// A world for unit tests that call one node's handlers by hand: one topic
/// `t` with one partition on brokers 1–3, Kafka's default config.
#[cfg(test)]
pub(crate) struct TestWorld {
    pub config: ClusterConfig,
    pub partitions: Vec<PartitionInfo>,
    pub trace: Trace,
    /// `racks[b - 1]` is broker b's `broker.rack` (none by default).
    pub racks: Vec<String>,
    next_id: u64,
    dirty: Vec<PartitionIndex>,
    grown: Vec<PartitionIndex>,
    buffers: Buffers,
}

#[cfg(test)]
impl TestWorld {
    pub fn one_partition() -> Self {
        TestWorld {
            config: ClusterConfig::default(),
            partitions: vec![PartitionInfo {
                topic: "t".to_string(),
                topic_index: 0,
                partition: 0,
                replicas: vec![1, 2, 3],
                config: super::config::TopicConfig::default(),
            }],
            trace: Trace::default(),
            racks: Vec::new(),
            next_id: 1,
            dirty: Vec::new(),
            grown: Vec::new(),
            buffers: Buffers::default(),
        }
    }

    /// Run `f` with a context at time `now` (its sends and timers dropped).
    pub fn at<R>(&mut self, now: u64, f: impl FnOnce(&mut Ctx) -> R) -> R {
        let mut ctx = Ctx {
            now,
            config: &self.config,
            racks: &self.racks,
            partitions: &self.partitions,
            metadata: &[],
            trace: &mut self.trace,
            next_id: &mut self.next_id,
            sends: Vec::new(),
            timers: Vec::new(),
            dirty: &mut self.dirty,
            grown: &mut self.grown,
            commit_values: &mut Default::default(),
            buffers: &mut self.buffers,
            meta_pages: &mut Default::default(),
        };
        f(&mut ctx)
    }
}
