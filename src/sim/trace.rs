//! The event trace: every meaningful transition of the run as data, with the
//! plain-language sentence the UI narrates.
//!
//! Routine traffic (each fetch, each HW step under steady load) is not traced;
//! what a learner asks about is: deaths, elections and epoch bumps, ISR changes,
//! truncations, client errors and rediscovery, acknowledged losses. The trace is
//! hashed as it grows, so the same scenario and seed give the same `trace_hash`
//! natively and in the browser.

use std::rc::Rc;

use serde::Serialize;
use xxhash_rust::xxh3::Xxh3;

use super::protocol::BrokerId;

#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TraceKind {
    Step {
        action: String,
    },
    BrokerCrashed {
        broker: BrokerId,
    },
    BrokerPowerLoss {
        broker: BrokerId,
        records_lost: u64,
    },
    BrokerRestarted {
        broker: BrokerId,
    },
    BrokerIsolated {
        broker: BrokerId,
    },
    BrokerHealed {
        broker: BrokerId,
    },
    BrokerShutDown {
        broker: BrokerId,
    },
    BrokerRegistered {
        broker: BrokerId,
        broker_epoch: u64,
    },
    BrokerRegistrationRejected {
        broker: BrokerId,
        error: String,
    },
    BrokerFenced {
        broker: BrokerId,
        reason: String,
    },
    BrokerUnfenced {
        broker: BrokerId,
    },
    LeaderElected {
        topic: String,
        partition: u32,
        leader: Option<BrokerId>,
        previous_leader: Option<BrokerId>,
        leader_epoch: u32,
        isr: Vec<BrokerId>,
        election: String,
    },
    IsrChanged {
        topic: String,
        partition: u32,
        isr_before: Vec<BrokerId>,
        isr_after: Vec<BrokerId>,
        partition_epoch: u32,
        by: String,
    },
    AlterPartitionRejected {
        broker: BrokerId,
        topic: String,
        partition: u32,
        error: String,
    },
    BecameLeader {
        broker: BrokerId,
        topic: String,
        partition: u32,
        leader_epoch: u32,
        log_end_offset: u64,
        high_watermark: u64,
    },
    BecameFollower {
        broker: BrokerId,
        topic: String,
        partition: u32,
        leader: Option<BrokerId>,
        leader_epoch: u32,
    },
    Truncated {
        broker: BrokerId,
        topic: String,
        partition: u32,
        from_offset: u64,
        to_offset: u64,
        records: Vec<u64>,
        reason: String,
    },
    ProduceAcked {
        producer: String,
        topic: String,
        partition: u32,
        base_offset: u64,
        count: u32,
    },
    ProduceError {
        producer: String,
        topic: String,
        partition: u32,
        error: String,
        retrying: bool,
    },
    ClientMetadataUpdated {
        client: String,
        topic: String,
        partition: u32,
        leader: Option<BrokerId>,
        leader_epoch: u32,
    },
    /// A consumer with `client.rack` starts reading a partition from another
    /// broker: a follower named by the leader (KIP-392) or the leader.
    ConsumerReadReplicaChanged {
        consumer: String,
        topic: String,
        partition: u32,
        broker: BrokerId,
        leader: bool,
    },
    /// A partition's leader names a consumer's preferred read replica
    /// (KIP-392), narrated once until the consumer next reads from a broker.
    ConsumerPreferredReplicaNamed {
        consumer: String,
        topic: String,
        partition: u32,
        broker: BrokerId,
        by: BrokerId,
    },
    /// A consumer forgets its preferred read replica (error, failed
    /// connection, out-of-range offset, or the advice expired).
    ConsumerPreferredReplicaLost {
        consumer: String,
        topic: String,
        partition: u32,
        broker: BrokerId,
        reason: String,
    },
    ConsumerOffsetOutOfRange {
        consumer: String,
        topic: String,
        partition: u32,
        position: u64,
        reset: String,
    },
    ConsumerTruncationDetected {
        consumer: String,
        topic: String,
        partition: u32,
        position: u64,
        divergent_offset: u64,
    },
    /// A new leader of a `__consumer_offsets` partition has read its commits.
    CoordinatorLoaded {
        broker: BrokerId,
        partition: u32,
        groups: Vec<String>,
        records: u64,
    },
    /// A group consumer learned which broker coordinates its group.
    CoordinatorFound {
        consumer: String,
        group: String,
        broker: BrokerId,
    },
    /// A coordinator request failed (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
    /// COORDINATOR_LOAD_IN_PROGRESS, a timeout, a broken connection).
    CoordinatorError {
        consumer: String,
        group: String,
        request: String,
        error: String,
    },
    /// The coordinator made a commit durable.
    OffsetsCommitted {
        consumer: String,
        group: String,
        offsets: Vec<(String, u64, Option<u32>)>,
    },
    /// A group consumer starts a partition from its committed offset.
    CommittedOffsetFetched {
        consumer: String,
        topic: String,
        partition: u32,
        offset: Option<u64>,
        leader_epoch: Option<u32>,
    },
    ConsumerCrashed {
        consumer: String,
    },
    /// A group consumer with no committed offset for a partition applied
    /// auto.offset.reset (`offset` null for `none`: it stops with an error).
    ConsumerOffsetReset {
        consumer: String,
        topic: String,
        partition: u32,
        reset: String,
        offset: Option<u64>,
    },
    ConsumerRestarted {
        consumer: String,
    },
    #[cfg(group_protocols)]
    /// A classic group starts gathering its members (PreparingRebalance).
    GroupRebalanceStarted {
        broker: BrokerId,
        group: String,
        reason: String,
    },
    #[cfg(group_protocols)]
    /// A classic group's join phase completed: a new generation, its
    /// members and leader (none: the group is Empty).
    GroupRebalanced {
        broker: BrokerId,
        group: String,
        generation: i32,
        members: Vec<String>,
        leader: Option<String>,
    },
    #[cfg(group_protocols)]
    /// The leader's assignment arrived: the group is Stable.
    GroupStable {
        broker: BrokerId,
        group: String,
        generation: i32,
    },
    #[cfg(group_protocols)]
    /// KIP-848: a new group epoch and the assignor's target for it.
    GroupTargetAssigned {
        broker: BrokerId,
        group: String,
        epoch: i32,
        reason: String,
    },
    #[cfg(group_protocols)]
    /// A member's session ended without a heartbeat.
    GroupMemberExpired {
        broker: BrokerId,
        group: String,
        member: String,
    },
    #[cfg(group_protocols)]
    /// A static member's new process took its old member's place.
    GroupMemberReplaced {
        broker: BrokerId,
        group: String,
        member: String,
    },
    #[cfg(group_protocols)]
    /// A member gave up partitions before rejoining (eager: all of them;
    /// cooperative: those assigned elsewhere).
    PartitionsRevoked {
        consumer: String,
        group: String,
        partitions: Vec<String>,
    },
    #[cfg(group_protocols)]
    /// A member received its assignment for a generation.
    PartitionsAssigned {
        consumer: String,
        group: String,
        generation: i32,
        partitions: Vec<String>,
    },
    AckedRecordsLost {
        topic: String,
        partition: u32,
        count: u64,
        cause: String,
    },
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct TraceEvent {
    pub at_ms: u64,
    #[serde(flatten)]
    pub kind: TraceKind,
    pub text: String,
    /// A hash of the event's line (what [`Trace`]'s hash is made of): two
    /// lanes' traces are compared event by event through it
    /// ([`crate::fork::first_difference`]), without comparing every field.
    #[serde(skip)]
    pub digest: u64,
}

#[derive(Clone)]
pub struct Trace {
    /// Shared with snapshots event by event (a snapshot copies pointers).
    events: Vec<Rc<TraceEvent>>,
    hasher: Xxh3,
    /// The line an event is written to for the hash, kept (empty, with its
    /// room) between events: no buffer grown from nothing for each of the
    /// 60,000 events a 20,000-partition cluster's first elections write.
    /// A clone of an empty vector allocates nothing, so snapshots carry none.
    line: Vec<u8>,
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("events", &self.events.len())
            .finish()
    }
}

impl Default for Trace {
    fn default() -> Self {
        Trace {
            events: Vec::new(),
            hasher: Xxh3::new(),
            line: Vec::new(),
        }
    }
}

impl Trace {
    pub fn push(&mut self, at_ms: u64, kind: TraceKind, text: String) {
        let mut event = TraceEvent {
            at_ms,
            kind,
            text,
            digest: 0,
        };
        // Serialising our own plain data cannot fail; an empty line would still
        // keep the hash deterministic. The line and its newline are hashed as
        // one piece (a streaming hash of the two pieces is the same).
        self.line.clear();
        if write_line(&mut self.line, &event).is_err() {
            self.line.clear();
        }
        self.line.push(b'\n');
        // FNV-1a: a few instructions of wasm; the time is compared as well.
        event.digest = self.line.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        self.hasher.update(&self.line);
        self.line.clear();
        self.events.push(Rc::new(event));
    }

    /// Every event, in order.
    pub fn events(&self) -> impl DoubleEndedIterator<Item = &TraceEvent> + '_ {
        self.events.iter().map(|e| &**e)
    }

    /// The events from index `cursor` on.
    pub fn since(&self, cursor: usize) -> impl Iterator<Item = &TraceEvent> + '_ {
        self.events
            .get(cursor..)
            .unwrap_or(&[])
            .iter()
            .map(|e| &**e)
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub fn hash_hex(&self) -> String {
        // `{:032x}` of the 128-bit digest, written as its two halves (no
        // 128-bit formatting code in the wasm).
        let digest = self.hasher.digest128();
        let mut hex = String::with_capacity(32);
        super::shared::hex16((digest >> 64) as u64, &mut hex);
        super::shared::hex16(digest as u64, &mut hex);
        hex
    }
}

/// A trace as a world's bytes (`crate::snapshot`): its events. The running
/// hash cannot be written out (the hasher keeps its state to itself), so
/// the trace read back hashes every event's line again, in order
/// (`extend_read`): the same bytes in the same order give the same hash.
#[cfg(world_snapshot)]
impl borsh::BorshSerialize for Trace {
    fn serialize<W: std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        borsh::BorshSerialize::serialize(&self.events, w)
    }
}

#[cfg(world_snapshot)]
impl borsh::BorshDeserialize for Trace {
    fn deserialize_reader<R: std::io::Read>(r: &mut R) -> std::io::Result<Self> {
        let mut trace = Trace::default();
        trace.extend_read(borsh::BorshDeserialize::deserialize_reader(r)?);
        Ok(trace)
    }
}

#[cfg(world_snapshot)]
impl Trace {
    /// The events in runs of at most `n` (`crate::snapshot` writes a world's
    /// trace a run a part).
    pub(crate) fn runs(&self, n: usize) -> std::slice::Chunks<'_, Rc<TraceEvent>> {
        self.events.chunks(n.max(1))
    }

    /// Events read back from a world's bytes, appended after those read
    /// before: each line is hashed again, in order, as `push` hashed it.
    pub(crate) fn extend_read(&mut self, events: Vec<Rc<TraceEvent>>) {
        let mut line = std::mem::take(&mut self.line);
        for event in &events {
            line.clear();
            if write_line(&mut line, event).is_err() {
                line.clear();
            }
            line.push(b'\n');
            self.hasher.update(&line);
        }
        line.clear();
        self.line = line;
        self.events.extend(events);
    }
}

/// An event without its text: what `serde_json` writes for it is the line up
/// to the text.
#[derive(Serialize)]
struct Head<'a> {
    at_ms: u64,
    #[serde(flatten)]
    kind: &'a TraceKind,
}

/// `event` as `serde_json` writes it, `{"at_ms":…,"event":…,…,"text":…}`:
/// all but the text as serde writes it, then the text by [`write_str`]. The
/// text is most of the line, and a 20,000-partition cluster's first
/// elections write 60,000 events before its first second.
fn write_line(line: &mut Vec<u8>, event: &TraceEvent) -> serde_json::Result<()> {
    let head = Head {
        at_ms: event.at_ms,
        kind: &event.kind,
    };
    serde_json::to_writer(&mut *line, &head)?;
    // `{…}` → `{…,"text":…}`.
    line.pop();
    line.extend_from_slice(b",\"text\":");
    write_str(line, &event.text)?;
    line.push(b'}');
    Ok(())
}

/// A JSON string as `serde_json` writes it. It escapes only control
/// characters, `"` and `\`, which a trace's text rarely holds: one pass that
/// looks for them (with no early exit, so the compiler can test many bytes
/// at once) and a plain copy when there are none, against `serde_json`'s
/// escape-table lookup and branch for every byte.
fn write_str(line: &mut Vec<u8>, s: &str) -> serde_json::Result<()> {
    let needs_escape = s.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if needs_escape {
        return serde_json::to_writer(line, s);
    }
    line.reserve(s.len() + 2);
    line.push(b'"');
    line.extend_from_slice(s.as_bytes());
    line.push(b'"');
    Ok(())
}

pub fn list(brokers: &[BrokerId]) -> String {
    let parts: Vec<String> = brokers.iter().map(|b| b.to_string()).collect();
    format!("{{{}}}", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_hash_is_the_128_bit_digest_of_its_lines_in_32_hex_digits() {
        let mut trace = Trace::default();
        let mut lines = Vec::new();
        for (at_ms, who) in [(0, "c1"), (7, "c2")] {
            let kind = TraceKind::ConsumerRestarted {
                consumer: who.to_string(),
            };
            let event = TraceEvent {
                at_ms,
                kind: kind.clone(),
                text: format!("{who} restarted"),
                digest: 0,
            };
            lines.extend(serde_json::to_vec(&event).unwrap());
            lines.push(b'\n');
            trace.push(at_ms, kind, event.text);
        }
        let mut hasher = Xxh3::new();
        hasher.update(&lines);
        assert_eq!(trace.hash_hex(), format!("{:032x}", hasher.digest128()));
        assert_eq!(trace.len(), 2);
    }

    /// A text is copied as it is only when JSON escapes none of its bytes:
    /// each byte JSON escapes alone, in pairs and at either end, against
    /// `serde_json`'s string.
    #[test]
    fn a_trace_text_is_written_as_json_writes_it_whatever_it_holds() {
        let texts = [
            "",
            "plain text, é and ~",
            "\t",
            "\u{0}",
            "\u{1f}",
            " ",
            "\"",
            "\\",
            "a\tb\nc",
            "\t\n",
            "\"\"",
            "\\\\",
            "x\u{1}",
            "\u{7f}\u{80}",
        ];
        for text in texts {
            let mut line = Vec::new();
            write_str(&mut line, text).unwrap();
            assert_eq!(line, serde_json::to_vec(text).unwrap(), "{text:?}");
        }
    }

    /// The hash's lines are what `serde_json` writes for each event, kinds
    /// with and without fields, options, lists and escapes alike: every
    /// event of the teaching scenarios (all but the 20,000-partition tour)
    /// and the four kinds none writes, written both ways.
    #[test]
    fn a_trace_line_is_the_events_json_for_every_kind_the_scenarios_write() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let mut kinds = std::collections::BTreeSet::new();
        let mut files = 0;
        // The kinds no scenario writes, by hand, with text that needs escapes.
        let by_hand = [
            TraceKind::BrokerPowerLoss {
                broker: 2,
                records_lost: 7,
            },
            TraceKind::ConsumerOffsetOutOfRange {
                consumer: "c\"1".into(),
                topic: "t".into(),
                partition: 0,
                position: 9,
                reset: "earliest".into(),
            },
            TraceKind::CoordinatorError {
                consumer: "c1".into(),
                group: "g\\".into(),
                request: "OffsetCommit".into(),
                error: "NOT_COORDINATOR".into(),
            },
            // No teaching scenario restarts a broker within its session
            // since restarts take sim.broker.startup.ms (issue 60).
            TraceKind::BrokerRegistrationRejected {
                broker: 1,
                error: "DUPLICATE_BROKER_REGISTRATION \"\t\"".into(),
            },
            // Static membership (KIP-345): no teaching scenario restarts a
            // static member.
            TraceKind::GroupMemberReplaced {
                broker: 3,
                group: "g\"".into(),
                member: "c1-7".into(),
            },
        ];
        for kind in by_hand {
            let event = TraceEvent {
                at_ms: u64::MAX,
                kind,
                text: "tab\t, quote \", newline\n, \u{1} and é".into(),
                digest: 0,
            };
            let mut line = Vec::new();
            write_line(&mut line, &event).unwrap();
            assert_eq!(line, serde_json::to_vec(&event).unwrap());
            let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
            kinds.insert(v["event"].as_str().unwrap_or("").to_string());
        }
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".json") || name.contains("20000") {
                continue;
            }
            let mut lab = crate::Lab::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
            lab.run_to_end();
            files += 1;
            let mut line = Vec::new();
            for e in lab.cluster.trace.events() {
                line.clear();
                write_line(&mut line, e).unwrap();
                let json = serde_json::to_vec(e).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&line),
                    String::from_utf8_lossy(&json),
                    "{name}"
                );
                let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
                kinds.insert(v["event"].as_str().unwrap_or("").to_string());
            }
        }
        assert!(files >= 20, "{files} scenario files");
        // Every kind there is.
        assert_eq!(kinds.len(), 42, "{kinds:?}");
    }
}
