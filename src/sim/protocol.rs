//! The messages nodes exchange and the error codes they answer with, under
//! Kafka's names (Errors.java, the *Request.json/*Response.json schemas).
//! Only the fields that change replication behaviour are modelled; a request
//! carries a world-unique `id` so a stale response (from before a crash, or one
//! that arrives after a timeout) is recognised and dropped.

use std::rc::Rc;

use serde::Serialize;

use super::log::{LogChunk, Record};

pub type BrokerId = u32;
/// Index of a partition in the cluster's partition table.
pub type PartitionIndex = usize;

/// A node of the simulated network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum Node {
    Controller,
    Broker(BrokerId),
    Producer(u32),
    Consumer(u32),
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Node::Controller => write!(f, "controller"),
            Node::Broker(b) => write!(f, "broker {b}"),
            Node::Producer(p) => write!(f, "producer #{p}"),
            Node::Consumer(c) => write!(f, "consumer #{c}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    NotLeaderOrFollower,
    LeaderNotAvailable,
    FencedLeaderEpoch,
    UnknownLeaderEpoch,
    NotEnoughReplicas,
    NotEnoughReplicasAfterAppend,
    RequestTimedOut,
    OffsetOutOfRange,
    OutOfOrderSequenceNumber,
    InvalidUpdateVersion,
    IneligibleReplica,
    InvalidRequest,
    NetworkException,
    BrokerNotAvailable,
    DuplicateBrokerRegistration,
    /// This broker does not (or no longer) lead the group's offsets partition.
    NotCoordinator,
    /// The group's offsets partition has no leader, or a commit could not be
    /// made durable (GroupMetadataManager maps NOT_ENOUGH_REPLICAS and
    /// REQUEST_TIMED_OUT of its own append to it).
    CoordinatorNotAvailable,
    /// The new coordinator is still loading the group from its log.
    CoordinatorLoadInProgress,
    /// The group is rebalancing: the member must rejoin (JoinGroup).
    RebalanceInProgress,
    /// The member's generation is not the group's.
    IllegalGeneration,
    /// The coordinator does not know this member (its session expired).
    UnknownMemberId,
    /// A JoinGroup without a member id: the answer carries the id to join
    /// with (KIP-394).
    MemberIdRequired,
    /// KIP-848: the member's epoch is not the one the coordinator has for
    /// it: it must join again (epoch 0) and loses its partitions.
    FencedMemberEpoch,
    /// KIP-848: a commit named an epoch the member does not have.
    StaleMemberEpoch,
    /// KIP-848: a static member joins with a `group.instance.id` that a
    /// member which never left still holds (fatal to the client).
    UnreleasedInstanceId,
}

impl ErrorCode {
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::NotLeaderOrFollower => "NOT_LEADER_OR_FOLLOWER",
            ErrorCode::LeaderNotAvailable => "LEADER_NOT_AVAILABLE",
            ErrorCode::FencedLeaderEpoch => "FENCED_LEADER_EPOCH",
            ErrorCode::UnknownLeaderEpoch => "UNKNOWN_LEADER_EPOCH",
            ErrorCode::NotEnoughReplicas => "NOT_ENOUGH_REPLICAS",
            ErrorCode::NotEnoughReplicasAfterAppend => "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
            ErrorCode::RequestTimedOut => "REQUEST_TIMED_OUT",
            ErrorCode::OffsetOutOfRange => "OFFSET_OUT_OF_RANGE",
            ErrorCode::OutOfOrderSequenceNumber => "OUT_OF_ORDER_SEQUENCE_NUMBER",
            ErrorCode::InvalidUpdateVersion => "INVALID_UPDATE_VERSION",
            ErrorCode::IneligibleReplica => "INELIGIBLE_REPLICA",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::NetworkException => "NETWORK_EXCEPTION",
            ErrorCode::BrokerNotAvailable => "BROKER_NOT_AVAILABLE",
            ErrorCode::DuplicateBrokerRegistration => "DUPLICATE_BROKER_REGISTRATION",
            ErrorCode::NotCoordinator => "NOT_COORDINATOR",
            ErrorCode::CoordinatorNotAvailable => "COORDINATOR_NOT_AVAILABLE",
            ErrorCode::CoordinatorLoadInProgress => "COORDINATOR_LOAD_IN_PROGRESS",
            ErrorCode::RebalanceInProgress => "REBALANCE_IN_PROGRESS",
            ErrorCode::IllegalGeneration => "ILLEGAL_GENERATION",
            ErrorCode::UnknownMemberId => "UNKNOWN_MEMBER_ID",
            ErrorCode::MemberIdRequired => "MEMBER_ID_REQUIRED",
            ErrorCode::FencedMemberEpoch => "FENCED_MEMBER_EPOCH",
            ErrorCode::StaleMemberEpoch => "STALE_MEMBER_EPOCH",
            ErrorCode::UnreleasedInstanceId => "UNRELEASED_INSTANCE_ID",
        }
    }

    /// The errors of a group member's standing (its generation or id), not
    /// of the coordinator.
    pub fn is_member_error(self) -> bool {
        matches!(
            self,
            ErrorCode::RebalanceInProgress
                | ErrorCode::IllegalGeneration
                | ErrorCode::UnknownMemberId
                | ErrorCode::FencedMemberEpoch
                | ErrorCode::StaleMemberEpoch
        )
    }

    /// Errors after which a client must refresh its metadata before retrying.
    pub fn invalidates_metadata(self) -> bool {
        matches!(
            self,
            ErrorCode::NotLeaderOrFollower
                | ErrorCode::FencedLeaderEpoch
                | ErrorCode::LeaderNotAvailable
                | ErrorCode::NetworkException
                | ErrorCode::BrokerNotAvailable
                | ErrorCode::RequestTimedOut
        )
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// KIP-704 leader recovery state.
/// What a ListOffsets asks for: ListOffsetsRequest's timestamp, where -2 is
/// EARLIEST_TIMESTAMP, -1 LATEST_TIMESTAMP and anything else a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum OffsetSpec {
    Earliest,
    Latest,
    /// The first offset whose record's timestamp is at least this (ms).
    Timestamp(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LeaderRecoveryState {
    Recovered,
    Recovering,
}

/// One member of an ISR a leader proposes, with the broker epoch of the
/// registration it was heard from (AlterPartitionRequest's BrokerState,
/// KIP-903). `None` is Kafka's -1: the leader has not had a fetch from it in
/// its current epoch, and the controller skips the epoch check for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct BrokerState {
    pub broker_id: BrokerId,
    pub broker_epoch: Option<u64>,
}

impl BrokerState {
    /// The broker ids of a proposed ISR.
    pub fn ids(isr: &[BrokerState]) -> Vec<BrokerId> {
        isr.iter().map(|m| m.broker_id).collect()
    }
}

/// The controller's record of one partition (PartitionRegistration).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct PartitionRegistration {
    pub replicas: Vec<BrokerId>,
    pub isr: Vec<BrokerId>,
    pub leader: Option<BrokerId>,
    pub leader_epoch: u32,
    pub partition_epoch: u32,
    pub leader_recovery_state: LeaderRecoveryState,
    /// KIP-966 eligible leader replicas (empty unless ELR is enabled).
    pub elr: Vec<BrokerId>,
    pub last_known_elr: Vec<BrokerId>,
}

/// One record of the KRaft metadata log, replayed by every broker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum MetadataRecord {
    Partition {
        partition: PartitionIndex,
        registration: PartitionRegistration,
    },
    Broker {
        broker: BrokerId,
        broker_epoch: u64,
        fenced: bool,
        in_controlled_shutdown: bool,
    },
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct FetchPartition {
    pub partition: PartitionIndex,
    pub fetch_offset: u64,
    pub current_leader_epoch: u32,
    /// Epoch of the follower's last record (truncate-on-fetch, KIP-595 style).
    pub last_fetched_epoch: Option<u32>,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct FetchPartitionResponse {
    pub partition: PartitionIndex,
    pub error: Option<ErrorCode>,
    pub high_watermark: u64,
    pub log_end_offset: u64,
    pub diverging_epoch: Option<(u32, u64)>,
    pub current_leader: Option<(BrokerId, u32)>,
    pub records: Vec<Record>,
    /// Offset of `records[0]`.
    pub base_offset: u64,
    /// KIP-392: the leader tells a consumer to read from this replica instead
    /// (the answer then carries no records).
    pub preferred_read_replica: Option<BrokerId>,
    /// Not on the wire: the chunk of the leader's log that starts among
    /// `records`, so the follower's log shares it rather than copying it
    /// (`Log::append_from`; none for a consumer).
    #[serde(skip)]
    pub chunk: Option<LogChunk>,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ProduceBatch {
    pub partition: PartitionIndex,
    pub records: Vec<Record>,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ProducePartitionResponse {
    pub partition: PartitionIndex,
    pub result: Result<u64, ErrorCode>,
    pub current_leader: Option<(BrokerId, u32)>,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct PartitionMetadata {
    pub partition: PartitionIndex,
    pub leader: Option<BrokerId>,
    pub leader_epoch: u32,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(tag = "type")]
pub enum Message {
    BrokerRegistration {
        broker: BrokerId,
        clean_shutdown: bool,
        /// Which start of the process this is (Kafka's incarnation id).
        incarnation: u32,
    },
    BrokerRegistrationResponse {
        /// The new broker epoch, or DUPLICATE_BROKER_REGISTRATION while the
        /// previous incarnation still holds a valid session.
        result: Result<u64, ErrorCode>,
    },
    BrokerHeartbeat {
        broker: BrokerId,
        broker_epoch: u64,
        metadata_offset: u64,
        /// Not yet ready to be unfenced (still starting up).
        want_fence: bool,
        want_shutdown: bool,
    },
    BrokerHeartbeatResponse {
        fenced: bool,
        /// The broker has replayed the metadata log past its registration.
        caught_up: bool,
        shutdown_ok: bool,
        metadata_end: u64,
    },
    /// The controller tells brokers the metadata log now ends at `metadata_end`
    /// (the brokers' long-poll of the metadata log).
    MetadataPush {
        metadata_end: u64,
    },
    AlterPartition {
        id: u64,
        broker: BrokerId,
        broker_epoch: u64,
        partition: PartitionIndex,
        leader_epoch: u32,
        partition_epoch: u32,
        /// Each proposed member with the broker epoch the leader knows it by
        /// (AlterPartition v3+, KIP-903).
        new_isr: Vec<BrokerState>,
        /// The leader's own recovery state: a leader elected uncleanly marks
        /// itself RECOVERED when it takes over, and the controller learns it
        /// from the leader's next ISR change (KIP-704).
        leader_recovery_state: LeaderRecoveryState,
    },
    AlterPartitionResponse {
        id: u64,
        partition: PartitionIndex,
        result: Result<PartitionRegistration, ErrorCode>,
    },
    Fetch {
        id: u64,
        /// `None` for a consumer.
        replica: Option<BrokerId>,
        broker_epoch: u64,
        max_wait_ms: u64,
        partitions: Vec<FetchPartition>,
        /// A consumer's `client.rack` (Fetch v11+, KIP-392); empty when unset
        /// and for followers. Every modelled consumer speaks v11+, so its
        /// fetch always carries client metadata, and a follower may serve it.
        rack_id: String,
    },
    FetchResponse {
        id: u64,
        partitions: Vec<FetchPartitionResponse>,
    },
    Produce {
        id: u64,
        acks: super::config::Acks,
        timeout_ms: u64,
        batches: Vec<ProduceBatch>,
    },
    ProduceResponse {
        id: u64,
        partitions: Vec<ProducePartitionResponse>,
    },
    Metadata {
        id: u64,
    },
    MetadataResponse {
        id: u64,
        partitions: Vec<PartitionMetadata>,
        /// Brokers the answering broker's metadata has fenced or shutting
        /// down: not among the live nodes a client may use as a replica
        /// (Cluster.nodeIfOnline).
        offline: Vec<BrokerId>,
    },
    OffsetsForLeaderEpoch {
        id: u64,
        partition: PartitionIndex,
        current_leader_epoch: u32,
        leader_epoch: u32,
    },
    OffsetsForLeaderEpochResponse {
        id: u64,
        partition: PartitionIndex,
        result: Result<Option<(u32, u64)>, ErrorCode>,
    },
    /// The network's answer when the destination process is down: the
    /// connection was refused or reset.
    Disconnected {
        id: u64,
        to: Node,
    },
    /// A client opens a TCP connection to a broker (`client/connection.rs`).
    Connect {
        id: u64,
    },
    /// The broker's socket server accepted connect attempt `id`.
    Connected {
        id: u64,
        broker: BrokerId,
    },
    /// The broker's process ended (crash or clean stop): the operating system
    /// closed every connection to it, and each client sees its socket close.
    ConnectionClosed {
        broker: BrokerId,
    },
    /// Which broker coordinates `group` (FindCoordinator, key type GROUP).
    FindCoordinator {
        id: u64,
        group: String,
    },
    FindCoordinatorResponse {
        id: u64,
        result: Result<BrokerId, ErrorCode>,
    },
    /// Commit positions for a group (OffsetCommit). A member of a
    /// subscribing group sends its generation and member id; a consumer
    /// that assigns its partitions itself sends none.
    OffsetCommit {
        id: u64,
        group: String,
        offsets: Vec<CommittedOffset>,
        member: Option<(i32, Rc<str>)>,
    },
    OffsetCommitResponse {
        id: u64,
        result: Result<(), ErrorCode>,
    },
    /// Where a partition's log starts or ends, or the first offset at or
    /// after a time, for a consumer's auto.offset.reset.
    ListOffsets {
        id: u64,
        partition: PartitionIndex,
        current_leader_epoch: u32,
        spec: OffsetSpec,
    },
    /// The offset and the leader epoch of its record, or `None` when no
    /// record below the high watermark is that recent (Kafka's
    /// UNKNOWN_OFFSET, -1).
    ListOffsetsResponse {
        id: u64,
        partition: PartitionIndex,
        result: Result<Option<(u64, Option<u32>)>, ErrorCode>,
    },
    /// Read a group's committed positions (OffsetFetch).
    OffsetFetch {
        id: u64,
        group: String,
        partitions: Vec<PartitionIndex>,
    },
    OffsetFetchResponse {
        id: u64,
        result: Result<Vec<CommittedOffset>, ErrorCode>,
    },
    #[cfg(group_protocols)]
    /// Join a classic group (JoinGroup): the answer waits at the coordinator
    /// until the rebalance completes.
    JoinGroup {
        id: u64,
        join: Box<JoinRequest>,
    },
    #[cfg(group_protocols)]
    JoinGroupResponse {
        id: u64,
        result: Result<JoinAnswer, (ErrorCode, Option<Rc<str>>)>,
    },
    #[cfg(group_protocols)]
    /// Ask for this generation's assignment; the leader brings everyone's.
    SyncGroup {
        id: u64,
        group: String,
        generation: i32,
        member_id: Rc<str>,
        assignments: Vec<(Rc<str>, Vec<PartitionIndex>)>,
    },
    #[cfg(group_protocols)]
    SyncGroupResponse {
        id: u64,
        result: Result<Vec<PartitionIndex>, ErrorCode>,
    },
    #[cfg(group_protocols)]
    /// A classic member's heartbeat (Heartbeat, not the broker's).
    GroupHeartbeat {
        id: u64,
        group: String,
        generation: i32,
        member_id: Rc<str>,
    },
    #[cfg(group_protocols)]
    GroupHeartbeatResponse {
        id: u64,
        result: Result<(), ErrorCode>,
    },
    /// A classic member leaves its group (LeaveGroup); no answer is awaited.
    #[cfg(group_protocols)]
    LeaveGroup {
        group: String,
        member_id: Rc<str>,
    },
    /// KIP-848's one group request (ConsumerGroupHeartbeat).
    #[cfg(group_protocols)]
    ConsumerHeartbeat {
        id: u64,
        hb: Box<ConsumerHeartbeatRequest>,
    },
    #[cfg(group_protocols)]
    ConsumerHeartbeatResponse {
        id: u64,
        result: Result<ConsumerHeartbeatAnswer, ErrorCode>,
    },
}

/// A ConsumerGroupHeartbeat's fields.
#[cfg(group_protocols)]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ConsumerHeartbeatRequest {
    pub group: String,
    /// Chosen by the client (KIP-1082).
    pub member_id: Rc<str>,
    /// 0 to join.
    pub epoch: i32,
    /// `group.remote.assignor`: `uniform` or `range`.
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub assignor: &'static str,
    /// The partitions it owns now, when that changed since its last
    /// heartbeat (or it joins).
    pub owned: Option<Vec<PartitionIndex>>,
    /// The subscribed topic's partitions (the coordinator's metadata).
    pub partitions: Vec<PartitionIndex>,
    /// `group.instance.id` (static membership).
    pub instance_id: Option<Rc<str>>,
}

/// A ConsumerGroupHeartbeat's answer.
#[cfg(group_protocols)]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ConsumerHeartbeatAnswer {
    pub member_epoch: i32,
    pub heartbeat_interval_ms: u64,
    /// The partitions the member is to own now.
    pub assignment: Vec<PartitionIndex>,
}

#[cfg(group_protocols)]
/// A JoinGroup's fields (boxed: the message enum stays small).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct JoinRequest {
    pub group: String,
    /// The consumer's `client.id` (member ids start with it).
    pub client_id: Rc<str>,
    /// Empty on a first join.
    pub member_id: Rc<str>,
    /// `group.instance.id` (static membership, KIP-345).
    pub instance_id: Option<Rc<str>>,
    pub session_timeout_ms: u64,
    pub rebalance_timeout_ms: u64,
    /// The assignor it asks for (`partition.assignment.strategy`).
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub protocol: &'static str,
    /// The partitions it owns now (the subscription's ownedPartitions).
    pub owned: Vec<PartitionIndex>,
    /// The generation it owned them in.
    pub generation: i32,
}

#[cfg(group_protocols)]
/// A member as the group's leader sees it in its JoinGroup answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct JoinedMember {
    pub member_id: Rc<str>,
    pub instance_id: Option<Rc<str>>,
    pub owned: Vec<PartitionIndex>,
    pub generation: i32,
}

#[cfg(group_protocols)]
/// A JoinGroup's answer: the new generation, its leader and, for the
/// leader only, every member.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct JoinAnswer {
    pub generation: i32,
    pub member_id: Rc<str>,
    pub leader: Rc<str>,
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub protocol: &'static str,
    pub members: Vec<JoinedMember>,
}

/// One committed position: the next offset to read, and the leader epoch of
/// the last record read (OffsetCommit v7+, KIP-320), so the consumer can
/// validate it against a new leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct CommittedOffset {
    pub partition: PartitionIndex,
    pub offset: u64,
    pub leader_epoch: Option<u32>,
}

impl Message {
    /// The request id this message is a request for, if it expects an answer.
    pub fn request_id(&self) -> Option<u64> {
        match self {
            Message::AlterPartition { id, .. }
            | Message::Fetch { id, .. }
            | Message::Produce { id, .. }
            | Message::Metadata { id }
            | Message::OffsetsForLeaderEpoch { id, .. }
            | Message::FindCoordinator { id, .. }
            | Message::ListOffsets { id, .. }
            | Message::OffsetCommit { id, .. }
            | Message::OffsetFetch { id, .. }
            | Message::Connect { id } => Some(*id),
            #[cfg(group_protocols)]
            Message::JoinGroup { id, .. }
            | Message::SyncGroup { id, .. }
            | Message::GroupHeartbeat { id, .. }
            | Message::ConsumerHeartbeat { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// Short name for the UI's in-flight animation.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::BrokerRegistration { .. } => "BrokerRegistration",
            Message::BrokerRegistrationResponse { .. } => "BrokerRegistrationResponse",
            Message::BrokerHeartbeat { .. } => "BrokerHeartbeat",
            Message::BrokerHeartbeatResponse { .. } => "BrokerHeartbeatResponse",
            Message::MetadataPush { .. } => "Metadata",
            Message::AlterPartition { .. } => "AlterPartition",
            Message::AlterPartitionResponse { .. } => "AlterPartitionResponse",
            Message::Fetch { .. } => "Fetch",
            Message::FetchResponse { .. } => "FetchResponse",
            Message::Produce { .. } => "Produce",
            Message::ProduceResponse { .. } => "ProduceResponse",
            Message::Metadata { .. } => "MetadataRequest",
            Message::MetadataResponse { .. } => "MetadataResponse",
            Message::OffsetsForLeaderEpoch { .. } => "OffsetsForLeaderEpoch",
            Message::OffsetsForLeaderEpochResponse { .. } => "OffsetsForLeaderEpochResponse",
            Message::Disconnected { .. } => "Disconnected",
            Message::Connect { .. } => "Connect",
            Message::Connected { .. } => "Connected",
            Message::ConnectionClosed { .. } => "ConnectionClosed",
            Message::FindCoordinator { .. } => "FindCoordinator",
            Message::ListOffsets { .. } => "ListOffsets",
            Message::ListOffsetsResponse { .. } => "ListOffsetsResponse",
            Message::FindCoordinatorResponse { .. } => "FindCoordinatorResponse",
            Message::OffsetCommit { .. } => "OffsetCommit",
            Message::OffsetCommitResponse { .. } => "OffsetCommitResponse",
            Message::OffsetFetch { .. } => "OffsetFetch",
            Message::OffsetFetchResponse { .. } => "OffsetFetchResponse",
            #[cfg(group_protocols)]
            Message::JoinGroup { .. } => "JoinGroup",
            #[cfg(group_protocols)]
            Message::JoinGroupResponse { .. } => "JoinGroupResponse",
            #[cfg(group_protocols)]
            Message::SyncGroup { .. } => "SyncGroup",
            #[cfg(group_protocols)]
            Message::SyncGroupResponse { .. } => "SyncGroupResponse",
            #[cfg(group_protocols)]
            Message::GroupHeartbeat { .. } => "Heartbeat",
            #[cfg(group_protocols)]
            Message::GroupHeartbeatResponse { .. } => "HeartbeatResponse",
            #[cfg(group_protocols)]
            Message::ConsumerHeartbeat { .. } => "ConsumerGroupHeartbeat",
            #[cfg(group_protocols)]
            Message::LeaveGroup { .. } => "LeaveGroup",
            #[cfg(group_protocols)]
            Message::ConsumerHeartbeatResponse { .. } => "ConsumerGroupHeartbeatResponse",
        }
    }
}
