//! The pure simulation core: no wasm-bindgen, no I/O, no wall clock, no global
//! RNG. Advanced only by [`Cluster::step`] and [`Cluster::run_until`].
//!
//! Module map (one concept each): `time` (clock and event queue), `net`
//! (latency, isolation), `log` (one replica's log and epoch cache), `partition`
//! (a replica's role and the leader-side rules), `placement` (rack-aware
//! replica assignment), `assignor` (consumer-group partition assignors),
//! `broker` (state and lifecycle; `broker::requests`:
//! Produce/Fetch handling and the purgatory, `broker::fetcher`: the replica
//! fetcher, `broker::metadata`: the metadata publisher, `broker::isr`: ISR
//! shrink and AlterPartition), `controller`, `client` (`client::producer`,
//! `client::consumer`), `protocol` (messages and error codes),
//! `cluster` (the world and its fault verbs), `availability` and
//! `consumption` (what faults cost: partitions not writable, partitions of a
//! subscribing group not read), `invariants`, `trace`.

pub mod assignor;
pub mod availability;
pub mod broker;
pub mod client;
pub mod cluster;
pub mod config;
pub mod consumption;
pub mod controller;
pub mod delivery;
pub mod followers;
pub mod invariants;
pub mod io;
pub mod log;
pub mod net;
pub mod partition;
pub mod partition_change;
pub mod placement;
pub mod pmap;
pub mod protocol;
pub mod shared;
pub mod time;
pub mod trace;

/// Kafka's internal topic of committed offsets (GroupCoordinator).
pub const OFFSETS_TOPIC: &str = "__consumer_offsets";

use serde::Serialize;

pub use cluster::{Action, Cluster, ClusterSpec};
use config::TopicConfig;
pub use placement::rack_aware_assignment;
use protocol::{BrokerId, PartitionIndex};

/// Static facts about one partition.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct PartitionInfo {
    pub topic: String,
    pub topic_index: usize,
    pub partition: u32,
    pub replicas: Vec<BrokerId>,
    pub config: TopicConfig,
}

impl PartitionInfo {
    /// `topic-partition`, as Kafka prints it.
    pub fn name(&self) -> String {
        self.tp().to_string()
    }

    /// The same, written only where it is formatted into a message: no
    /// string of its own (a 20,000-partition cluster's first elections name
    /// 60,000 replicas in their trace).
    pub fn tp(&self) -> Tp<'_> {
        Tp(&self.topic, self.partition)
    }
}

/// `topic-partition`, formatted only when a message needs it.
#[derive(Clone, Copy, Debug)]
pub struct Tp<'a>(&'a str, u32);

impl std::fmt::Display for Tp<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.0, self.1)
    }
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct TopicInfo {
    pub name: String,
    pub topic_id: String,
    pub replication_factor: u32,
    pub partitions: Vec<PartitionIndex>,
    pub config: TopicConfig,
}

/// Kafka's rack-unaware replica assignment (AdminUtils.assignReplicasToBrokers)
/// with a fixed start index and shift of 0, so the layout is reproducible:
/// leaders go round-robin over brokers, followers are shifted by one more
/// position each time the partitions wrap around the brokers.
pub fn round_robin_assignment(brokers: u32, partitions: u32, rf: u32) -> Vec<Vec<BrokerId>> {
    let n = brokers as usize;
    let mut shift = 0usize;
    (0..partitions as usize)
        .map(|p| {
            if p > 0 && p % n == 0 {
                shift += 1;
            }
            let first = p % n;
            let mut replicas = vec![first as BrokerId + 1];
            for j in 0..rf as usize - 1 {
                let idx = (first + 1 + (shift + j) % (n - 1).max(1)) % n;
                replicas.push(idx as BrokerId + 1);
            }
            replicas
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_assignment_spreads_leaders_round_robin_as_kafka_does() {
        assert_eq!(
            round_robin_assignment(3, 3, 3),
            vec![vec![1, 2, 3], vec![2, 3, 1], vec![3, 1, 2]]
        );
        let a = round_robin_assignment(5, 10, 3);
        for r in &a {
            let mut s = r.clone();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), 3, "replicas on distinct brokers: {r:?}");
        }
        let leaders: Vec<u32> = a.iter().map(|r| r[0]).collect();
        assert_eq!(leaders, vec![1, 2, 3, 4, 5, 1, 2, 3, 4, 5]);
        // after wrapping around, the follower shift changes
        assert_ne!(a[0][1..], a[5][1..]);
    }
}
