//! Producer and consumer clients (KAFKA_REPLICATION.md §4, §6).
//!
//! Both keep a metadata cache (leader and leader epoch per partition), dropping
//! answers older than what they already know (KIP-320). After
//! NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH or a broken connection they
//! refresh it, use the `CurrentLeader` hint when the broker gave one (KIP-951),
//! and retry with exponential backoff (`retry.backoff.ms` → `retry.backoff.max.ms`)
//! for as long as `delivery.timeout.ms` allows.
//!
//! The producer numbers records per partition when idempotent (producer id +
//! sequence), so a retried batch that the old leader had already written is
//! recognised as a duplicate and answered with its original offset, never
//! written twice. It keeps at most `max.in.flight.requests.per.connection`
//! batches in flight per partition and, when idempotent, re-sends them in order
//! after an error.
//!
//! The consumer reads below the high watermark from the leader, remembers the
//! leader epoch of the last record it consumed, and after a leader change
//! validates its position with OffsetsForLeaderEpoch: if the new leader's log
//! ends that epoch before the position, the log was truncated under it.
//!
//! Follower fetching (KIP-392): every fetch carries the consumer's
//! `client.rack`. When the leader answers with a preferred read replica, the
//! consumer fetches that partition from the named follower until the advice
//! expires (`metadata.max.age.ms`, as the Java consumer does) or the follower
//! fails it: an error, a broken connection or OFFSET_OUT_OF_RANGE makes it
//! forget the replica and go back to the leader, which may name a new one.
//! The position is never reset by such a failure, so nothing is skipped or
//! read twice.
//!
//! One file per client: `producer` (batching, acks, idempotence, retries) and
//! `consumer` (positions, epoch validation, follower fetching).

pub mod connection;
mod consumer;
#[cfg(group_protocols)]
mod consumer_member;
mod group;
pub mod idempotence;
pub mod membership;
mod producer;

pub use consumer::{Consumer, ConsumerPosition, Jump, JumpCause, Read};
pub use group::GroupMember;
pub use membership::{MemberState, Membership};

use crate::sim::io::Ctx;
use crate::sim::pmap::DenseMap;
use crate::sim::protocol::{BrokerId, PartitionIndex};
use crate::sim::trace::TraceKind;
pub use producer::{Acked, AckedLedger, Batch, Producer, ProducerPartition, ProducerStats};

/// Exponential backoff: `base` doubling per failed attempt, capped at `max`.
fn backoff(base: u64, max: u64, attempts: u32) -> u64 {
    let shift = attempts.saturating_sub(1).min(20);
    (base.saturating_mul(1u64 << shift)).min(max.max(base))
}

/// A client applies a leader learned from metadata or from a CurrentLeader
/// hint (KIP-951), unless it is older than what its cache holds (KIP-320).
/// A change resets the metadata refresh backoff and, unless it is the first
/// thing known of the partition, is narrated: "{role} {name} refreshed its
/// metadata: … (leader epoch N){then}".
#[allow(clippy::too_many_arguments)]
fn learn_leader(
    ctx: &mut Ctx,
    metadata: &mut DenseMap<(Option<BrokerId>, u32)>,
    refreshes: &mut u32,
    role: &str,
    name: &str,
    then: &str,
    p: PartitionIndex,
    leader: Option<BrokerId>,
    leader_epoch: u32,
) {
    let known = metadata.get(&p).copied();
    if known.is_some_and(|(_, e)| leader_epoch < e) || known == Some((leader, leader_epoch)) {
        return;
    }
    *refreshes = 0;
    metadata.insert(p, (leader, leader_epoch));
    if known.is_some_and(|(l, e)| l.is_some() || e < leader_epoch) {
        let info = &ctx.partitions[p];
        ctx.trace(
            TraceKind::ClientMetadataUpdated {
                client: name.to_string(),
                topic: info.topic.clone(),
                partition: info.partition,
                leader,
                leader_epoch,
            },
            format!(
                "{role} {name} refreshed its metadata: {} is now led by {} (leader epoch {leader_epoch}){then}",
                ctx.tp(p),
                leader.map_or("nobody".to_string(), |l| format!("broker {l}"))
            ),
        );
    }
}
