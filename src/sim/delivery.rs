//! The fate of every record: for each producer, where each record it sent
//! ended up, read from the cluster as it stands (the report's `delivery`).
//!
//! Every record sent is in exactly one of five places, so they add up to
//! `sent` (the `records_accounted_for` check):
//! - `acked_kept`: acknowledged, and the partition still has it;
//! - `acked_lost`: acknowledged, and the partition no longer has it (the
//!   same rule as the `no_acked_record_lost` invariant: not in the current
//!   leader's log at its offset, or, while the partition is offline, in no
//!   replica's log);
//! - `failed_not_written`: send() failed and no consumer can read it: no
//!   log has it, or only above the high watermark, where a read_uncommitted
//!   consumer does not read and a new leader may still truncate it;
//! - `failed_but_written`: send() failed, yet the partition has it below a
//!   holder log's high watermark: visible to consumers although the
//!   application was told it failed;
//! - `pending`: neither answered nor given up yet (queued or in flight).
//!
//! Across those: `written_twice` (the partition holds the record more than
//! once: a retry without idempotence), `consumed` (read by at least one
//! consumer), `consumed_twice` (read again by the same consumer: a restart
//! from an older commit, a reset), and `never_consumed` (committed below
//! the high watermark, but no consumer of the topic read it, for instance
//! skipped by `auto.offset.reset=latest`), told by cause in `skip_causes`:
//! a position that jumped over it by a reset or by a committed offset, or
//! no jump at all (not read yet). acks=0 records have no offset:
//! they count as `acked_kept` if the partition has them and `acked_lost` if
//! not.

use serde::Serialize;

use super::client::{Jump, JumpCause};
use super::cluster::Cluster;

/// How many example record ids each count lists.
const EXAMPLES: usize = 3;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Fate {
    pub count: u64,
    /// A few of the record ids.
    pub examples: Vec<u64>,
}

impl Fate {
    fn add(&mut self, id: u64) {
        self.count += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(id);
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Delivery {
    pub producer: String,
    pub topic: String,
    pub sent: u64,
    pub acked_kept: Fate,
    pub acked_lost: Fate,
    pub failed_not_written: Fate,
    pub failed_but_written: Fate,
    pub pending: Fate,
    pub written_twice: Fate,
    pub consumed: Fate,
    pub consumed_twice: Fate,
    pub never_consumed: Fate,
    /// Read more than once by the consumers of one group (or by one consumer
    /// without a group): what the application processed twice. Unlike
    /// `consumed_twice` it counts a partition handed from one member to
    /// another, which re-reads what the first read after its last commit.
    pub reread: Fate,
    /// `reread` by cause (each record counted under one).
    pub reread_causes: RereadCauses,
    /// `never_consumed` by cause (each record counted under one).
    pub skip_causes: SkipCauses,
}

/// Why a committed record was never consumed: which move of a consumer's
/// position passed over it, if any (client `Jump`s).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct SkipCauses {
    /// auto.offset.reset (latest or by_duration) put a position past it: a
    /// group's first start without a committed offset, or a position out of
    /// range (SubscriptionState's reset, answered by ListOffsets).
    pub reset: Fate,
    /// A consumer started (a restart, a rebalance's new owner) at a
    /// committed offset beyond it that nobody had read up to: a commit
    /// without its leader epoch, unvalidated (KIP-320), in a log truncated
    /// and grown again past it.
    pub commit: Fate,
    /// No position passed over it: its reader is behind, stopped or dead,
    /// or the partition has no owner.
    pub unread: Fate,
}

/// Why a record was read again (the fate of every record, issue 64).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct RereadCauses {
    /// Another member of the group read it again after a rebalance handed
    /// it the partition from the last commit (or a member got the partition
    /// back from an older commit).
    pub rebalance: Fate,
    /// The same consumer read it again after its process restarted from
    /// the last commit.
    pub restart: Fate,
    /// The same consumer read it again after a reset or a seek moved its
    /// position back (auto.offset.reset after OFFSET_OUT_OF_RANGE).
    pub reset: Fate,
}

impl Delivery {
    /// The five places a record can be add up to what was sent.
    pub fn accounted(&self) -> u64 {
        self.acked_kept.count
            + self.acked_lost.count
            + self.failed_not_written.count
            + self.failed_but_written.count
            + self.pending.count
    }
}

/// What the cluster says of one record id, as bits of a byte (`Ids`).
const HELD: u8 = 1; // a holder log has it
const TWICE: u8 = 2; // one holder log has it more than once
const COMMITTED: u8 = 4; // below the HW of a holder log that has it
const READ: u8 = 8; // a consumer read it
const READ_TWICE: u8 = 16; // one consumer read it more than once
const LOST: u8 = 32; // acknowledged and lost (`invariants::lost_records`)
const HERE: u8 = 64; // seen in the log or consumer being scanned

/// A byte of flags per record id. Ids come from the cluster's one counter,
/// so they are dense: one pass over what the cluster holds marks each id,
/// where sorted vectors of ids and their binary searches were a sort per
/// log (taking them out made a sweep's work 3 % smaller).
#[derive(Default)]
struct Ids(Vec<u8>);

impl Ids {
    fn get(&self, id: u64) -> u8 {
        self.0.get(id as usize).copied().unwrap_or(0)
    }

    fn mark(&mut self, id: u64, bits: u8) {
        let i = id as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, 0);
        }
        self.0[i] |= bits;
    }

    /// Marks each id `ids()` yields with its bits, and with `again` when it
    /// yields it more than once (the scan's own `HERE` bit, cleared after).
    fn scan<I: Iterator<Item = (u64, u8)>>(&mut self, ids: impl Fn() -> I, again: u8) {
        for (id, once) in ids() {
            let seen = self.get(id) & HERE;
            self.mark(id, once | HERE | if seen != 0 { again } else { 0 });
        }
        for (id, _) in ids() {
            self.0[id as usize] &= !HERE;
        }
    }
}

pub fn build(c: &Cluster) -> Vec<Delivery> {
    let mut ids = Ids::default();
    // What the partitions hold: each holder log's ids, with the copies in
    // one log and whether a copy is below that log's high watermark.
    for p in 0..c.partitions.len() {
        for log in super::invariants::holder_logs(c, p) {
            let hw = log.high_watermark;
            ids.scan(
                || {
                    log.records().enumerate().map(move |(off, r)| {
                        (
                            r.id,
                            if (off as u64) < hw {
                                HELD | COMMITTED
                            } else {
                                HELD
                            },
                        )
                    })
                },
                TWICE,
            );
        }
    }
    // Who read what: ids read by any consumer, and ids one consumer read
    // more than once.
    let mut consumed_topics: Vec<usize> = Vec::new();
    for k in &c.consumers {
        if let Some(p) = k.topic_partitions.first() {
            consumed_topics.push(c.partitions[*p].topic_index);
        }
        ids.scan(
            || k.consumed_records.iter().map(|r| (r.id, READ)),
            READ_TWICE,
        );
    }
    let rereads = rereads(c);
    let skips = skips(c, &ids);
    for p in 0..c.partitions.len() {
        for (_, id, _) in super::invariants::lost_records(c, p) {
            ids.mark(id, LOST);
        }
    }
    let has = |id: u64, bit: u8| ids.get(id) & bit != 0;
    let mut out = Vec::new();
    for (i, prod) in c.producers.iter().enumerate() {
        let topic_index = prod
            .topic_partitions
            .first()
            .map(|p| c.partitions[*p].topic_index);
        let mut d = Delivery {
            producer: prod.name.clone(),
            topic: topic_index
                .and_then(|t| c.topics.get(t))
                .map(|t| t.name.clone())
                .unwrap_or_default(),
            sent: prod.stats.sent,
            ..Default::default()
        };
        let mut mine: Vec<u64> = Vec::new();
        for ledger in &c.acked {
            for a in ledger.iter().filter(|a| a.producer == i as u32) {
                mine.push(a.id);
                if has(a.id, LOST) {
                    d.acked_lost.add(a.id);
                } else {
                    d.acked_kept.add(a.id);
                }
            }
        }
        for id in &prod.stats.acks0_ids {
            mine.push(*id);
            if has(*id, HELD) {
                d.acked_kept.add(*id);
            } else {
                d.acked_lost.add(*id);
            }
        }
        for id in &prod.stats.failed_ids {
            mine.push(*id);
            if has(*id, COMMITTED) {
                d.failed_but_written.add(*id);
            } else {
                d.failed_not_written.add(*id);
            }
        }
        for id in prod.pending_ids() {
            mine.push(id);
            d.pending.add(id);
        }
        crate::sim::shared::sort_slim(&mut mine);
        let read = topic_index.is_some_and(|t| consumed_topics.contains(&t));
        for id in mine {
            if has(id, TWICE) {
                d.written_twice.add(id);
            }
            if has(id, READ) {
                d.consumed.add(id);
            } else if read && has(id, COMMITTED) {
                d.never_consumed.add(id);
                let s = &mut d.skip_causes;
                match skips.get(id) {
                    1 => s.reset.add(id),
                    2 => s.commit.add(id),
                    _ => s.unread.add(id),
                }
            }
            if has(id, READ_TWICE) {
                d.consumed_twice.add(id);
            }
            if let Ok(i) = rereads.binary_search_by(|r| r.0.cmp(&id)) {
                d.reread.add(id);
                match rereads[i].1 {
                    Cause::Rebalance => d.reread_causes.rebalance.add(id),
                    Cause::Restart => d.reread_causes.restart.add(id),
                    Cause::Reset => d.reread_causes.reset.add(id),
                }
            }
        }
        out.push(d);
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
enum Cause {
    Rebalance,
    Restart,
    Reset,
}

/// Every record read more than once within one group (a consumer without
/// a group is a group of its own), with the cause, sorted by id. The second
/// read decides: from a position a reset or seek set, a reset; else by
/// another member, a rebalance's hand-over; else by a later start of the
/// same process, a restart; else a rebalance that gave the partition back
/// from an older commit.
fn rereads(c: &Cluster) -> Vec<(u64, Cause)> {
    // (group key, id, consumer, incarnation, after_reset) of every read.
    let mut reads: Vec<(&str, u64, usize, u32, bool)> = Vec::new();
    for (i, k) in c.consumers.iter().enumerate() {
        let key = k
            .group
            .as_ref()
            .map_or(k.name.as_str(), |g| g.group_id.as_str());
        reads.extend(
            k.consumed_records
                .iter()
                .map(|r| (key, r.id, i, r.incarnation, r.after_reset)),
        );
    }
    // Stable: a consumer's reads stay in the order it made them.
    reads.sort_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0)));
    let mut out: Vec<(u64, Cause)> = Vec::new();
    for same in reads.chunk_by(|a, b| a.0 == b.0 && a.1 == b.1) {
        let Some(first) = same.first() else {
            continue;
        };
        let Some(cause) = same[1..]
            .iter()
            .map(|r| {
                if r.4 {
                    Cause::Reset
                } else if r.2 != first.2 {
                    Cause::Rebalance
                } else if r.3 != first.3 {
                    Cause::Restart
                } else {
                    Cause::Rebalance
                }
            })
            .next()
        else {
            continue;
        };
        if out.last().is_none_or(|l| l.0 != first.1) {
            out.push((first.1, cause));
        }
    }
    out
}

/// The skip cause of every committed record no consumer read that a
/// consumer's position jumped over, by id: 1 a reset, 2 a commit (0 none).
/// A jump to `to` passes over a record below `to` that was sent by then (one
/// sent later came into a log the position had not passed) and not below
/// where it moved forward from; of several, the earliest decides. Only
/// partitions with jumps are scanned, and nothing is sorted (the first-load
/// wasm pays for every sort it instantiates).
fn skips(c: &Cluster, ids: &Ids) -> Ids {
    let mut by_partition: Vec<Vec<&Jump>> = c.partitions.iter().map(|_| Vec::new()).collect();
    for j in c.consumers.iter().flat_map(|k| &k.jumps) {
        by_partition[j.partition].push(j);
    }
    let mut out = Ids::default();
    for (p, js) in by_partition
        .iter()
        .enumerate()
        .filter(|(_, js)| !js.is_empty())
    {
        for log in super::invariants::holder_logs(c, p) {
            let hw = log.high_watermark as usize;
            for (o, r) in log.records().take(hw).enumerate() {
                let o = o as u64;
                if ids.get(r.id) & READ != 0 || out.get(r.id) != 0 {
                    continue;
                }
                let first = js
                    .iter()
                    .filter(|j| {
                        o < j.to
                            && r.timestamp_ms <= j.at_ms
                            && j.from.is_none_or(|f| f <= o || f > j.to)
                    })
                    .min_by_key(|j| j.at_ms);
                if let Some(j) = first {
                    out.mark(r.id, if j.cause == JumpCause::Reset { 1 } else { 2 });
                }
            }
        }
    }
    out
}

/// One replica's copy of a record: the broker, the offset, the leader epoch
/// it was written in, and whether it is below that replica's high watermark.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Copy {
    pub broker: u32,
    pub offset: u64,
    pub epoch: u32,
    pub committed: bool,
}

/// What became of one record (the page's fate view): who sent it, where it
/// stands among the five places of [`Delivery`], which replicas hold it, who
/// read it how many times, and the narrated events that decided it.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Story {
    pub id: u64,
    pub producer: String,
    pub topic: String,
    pub partition: Option<u32>,
    /// `acked_kept`, `acked_lost`, `failed_not_written`,
    /// `failed_but_written` or `pending`.
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub fate: &'static str,
    /// Its CreateTime, when a replica still has it.
    pub sent_ms: Option<u64>,
    /// The offset its acknowledgement named (acks=1 and all).
    pub acked_offset: Option<u64>,
    pub copies: Vec<Copy>,
    /// (consumer, times read).
    pub reads: Vec<(String, u32)>,
    /// (time, narration) of the events that touched it: its acknowledgement,
    /// truncations that removed it, losses counted on its partition after it
    /// was acknowledged, consumers that found it truncated, restarts of a
    /// consumer that read it twice.
    pub events: Vec<(u64, String)>,
}

/// The story of record `id`, or `None` if no producer sent such a record.
pub fn story(c: &Cluster, id: u64) -> Option<Story> {
    use super::trace::TraceKind as K;
    let acked = c
        .acked
        .iter()
        .enumerate()
        .find_map(|(p, l)| l.iter().find(|a| a.id == id).map(|a| (p, a)));
    let (pi, fate_of) = match acked {
        Some((_, a)) => (a.producer as usize, None),
        None => {
            let i = c.producers.iter().position(|p| {
                p.stats.failed_ids.contains(&id)
                    || p.stats.acks0_ids.contains(&id)
                    || p.pending_ids().contains(&id)
            })?;
            let p = &c.producers[i];
            let f = if p.stats.acks0_ids.contains(&id) {
                ("acked_kept", "acked_lost")
            } else if p.stats.failed_ids.contains(&id) {
                ("failed_but_written", "failed_not_written")
            } else {
                ("pending", "pending")
            };
            (i, Some(f))
        }
    };
    let prod = c.producers.get(pi)?;
    // Every replica's copies, and the partition (the acknowledged one, else
    // the first that holds it).
    let mut copies = Vec::new();
    let mut sent_ms = None;
    let mut partition = acked.map(|(p, _)| p);
    for p in 0..c.partitions.len() {
        if partition.is_some_and(|q| q != p) {
            continue;
        }
        for b in &c.partitions[p].replicas {
            let Some(r) = c.broker(*b).and_then(|x| x.replicas.get(&p)) else {
                continue;
            };
            for (off, rec) in r.log.records().enumerate().filter(|(_, r)| r.id == id) {
                copies.push(Copy {
                    broker: *b,
                    offset: off as u64,
                    epoch: rec.epoch,
                    committed: (off as u64) < r.log.high_watermark,
                });
                sent_ms.get_or_insert(rec.timestamp_ms);
                partition.get_or_insert(p);
            }
        }
    }
    // Below a holder log's high watermark: what a consumer can read.
    let in_holder = |p: usize| {
        super::invariants::holder_logs(c, p).iter().any(|l| {
            l.records()
                .take(l.high_watermark as usize)
                .any(|r| r.id == id)
        })
    };
    let fate = match (acked, fate_of) {
        (Some((p, _)), _) => {
            let lost = super::invariants::lost_records(c, p)
                .iter()
                .any(|x| x.1 == id);
            if lost {
                "acked_lost"
            } else {
                "acked_kept"
            }
        }
        (None, Some((held, not))) => {
            if partition.is_some_and(in_holder) {
                held
            } else {
                not
            }
        }
        (None, None) => "pending",
    };
    let reads: Vec<(String, u32)> = c
        .consumers
        .iter()
        .filter_map(|k| {
            let n = k.consumed_records.iter().filter(|r| r.id == id).count() as u32;
            (n > 0).then(|| (k.name.clone(), n))
        })
        .collect();
    let info = partition.map(|p| &c.partitions[p]);
    let here =
        |topic: &str, part: u32| info.is_some_and(|i| i.topic == topic && i.partition == part);
    let offset = acked.map(|(_, a)| a.offset);
    let offsets: Vec<u64> = copies.iter().map(|x| x.offset).chain(offset).collect();
    let events = c
        .trace
        .events()
        .filter(|e| match &e.kind {
            K::ProduceAcked {
                producer,
                topic,
                partition,
                base_offset,
                count,
            } => {
                *producer == prod.name
                    && here(topic, *partition)
                    && acked.is_some_and(|(_, a)| {
                        a.at_ms == e.at_ms
                            && a.offset >= *base_offset
                            && a.offset < base_offset + *count as u64
                    })
            }
            K::Truncated { records, .. } => records.contains(&id),
            // A consumer that read it more than once restarted from an older
            // commit in between.
            K::ConsumerRestarted { consumer } => reads.iter().any(|(k, n)| k == consumer && *n > 1),
            K::AckedRecordsLost {
                topic, partition, ..
            } => fate == "acked_lost" && here(topic, *partition),
            K::ConsumerTruncationDetected {
                topic,
                partition,
                position,
                divergent_offset,
                ..
            } => {
                here(topic, *partition)
                    && offsets
                        .iter()
                        .any(|o| o >= divergent_offset && o < position)
            }
            _ => false,
        })
        .map(|e| (e.at_ms, e.text.clone()))
        .collect();
    Some(Story {
        id,
        producer: prod.name.clone(),
        topic: info.map(|i| i.topic.clone()).unwrap_or_default(),
        partition: info.map(|i| i.partition),
        fate,
        sent_ms,
        acked_offset: offset,
        copies,
        reads,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `written_twice` and `consumed_twice` are about one log or one
    /// consumer: an id in two logs (a leader and its follower) once each is
    /// held, not held twice; an id one log holds twice is; and what one scan
    /// saw does not carry over to the next.
    #[test]
    fn an_id_counts_twice_only_when_one_log_or_consumer_has_it_twice() {
        let mut ids = Ids::default();
        let leader = [(3, HELD | COMMITTED), (5, HELD)];
        let follower = [(3, HELD), (5, HELD), (5, HELD), (9, HELD)];
        ids.scan(|| leader.into_iter(), TWICE);
        ids.scan(|| follower.into_iter(), TWICE);
        assert_eq!(ids.get(3), HELD | COMMITTED, "in two logs once each");
        assert_eq!(ids.get(5), HELD | TWICE, "twice in the follower's log");
        assert_eq!(ids.get(9), HELD);
        assert_eq!(ids.get(4), 0, "in no log");
        assert_eq!(ids.get(1 << 40), 0, "past every id seen");
        ids.scan(|| [(9, READ)].into_iter(), READ_TWICE);
        ids.scan(|| [(9, READ), (3, READ), (3, READ)].into_iter(), READ_TWICE);
        assert_eq!(
            ids.get(9),
            HELD | READ,
            "read once by each of two consumers"
        );
        assert_eq!(ids.get(3), HELD | COMMITTED | READ | READ_TWICE);
    }
}
