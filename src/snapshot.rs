//! A world as bytes, and back (issue 63, item 3: compare lanes replayed on
//! other cores).
//!
//! A checkpoint ([`crate::checkpoint`]) is a copy of the world inside one
//! wasm instance's memory; a Worker has memory of its own, so a world it ran
//! can only come back as bytes. [`Lab::snapshot_bytes`] writes the cluster
//! (every broker, client, message in flight, timer, log and the trace) with
//! borsh, a plain binary layout derived field by field from the types
//! themselves, in parts (the world's shell, each broker, the trace in runs);
//! [`Lab::from_snapshot`] reads it back into a lab of the same scenario and
//! settings, which the reader builds from their text as it would for a new
//! lab, and a [`WorldReader`] does it a part at a time (the page, over
//! several tasks). The world read back runs on exactly as the one
//! written would have: tests/snapshot.rs runs every shipped scenario but
//! the 20,000-partition tour both ways and compares the reports byte for
//! byte.
//!
//! What is not written: buffers kept for reuse (`Scratch`, they hold no
//! state), how the containers share their parts with checkpoints (a world
//! read back shares nothing yet), and the trace's running hash, which the
//! trace computes again from its events (`Trace`'s reader).
//!
//! Native builds always have it; a wasm build with the `snapshot` feature
//! only (the page's fast build): the first load does without it.

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::{Read, Result, Write};
use std::rc::Rc;

use borsh::{BorshDeserialize, BorshSerialize};

use crate::sim::cluster::Cluster;
use crate::{Lab, Scenario, Settings};

/// The bytes begin with this, then the format's version: bytes of another
/// build's layout are refused, not misread.
const MAGIC: &[u8; 4] = b"FLW1";

/// Bumped whenever a world type's fields change in a way the derive cannot
/// tell from the bytes (both sides of a snapshot are built from one source).
const VERSION: u32 = 2;

thread_local! {
    /// Names a world holds as `&'static str` (an assignor's, a protocol's):
    /// each distinct one read back is kept once for the process.
    static NAMES: RefCell<HashSet<&'static str>> = RefCell::new(HashSet::new());
}

fn intern(s: String) -> &'static str {
    NAMES.with(|names| {
        let mut names = names.borrow_mut();
        if let Some(&known) = names.get(s.as_str()) {
            return known;
        }
        let leaked: &'static str = Box::leak(s.into_boxed_str());
        names.insert(leaked);
        leaked
    })
}

/// `#[borsh(serialize_with, deserialize_with)]` of a `&'static str` field.
pub(crate) mod static_str {
    use super::*;
    pub fn ser<W: Write>(s: &&'static str, w: &mut W) -> Result<()> {
        s.serialize(w)
    }
    pub fn de<R: Read>(r: &mut R) -> Result<&'static str> {
        String::deserialize_reader(r).map(intern)
    }
}

/// The same for an `Option<&'static str>` field.
pub(crate) mod opt_static_str {
    use super::*;
    pub fn ser<W: Write>(s: &Option<&'static str>, w: &mut W) -> Result<()> {
        s.serialize(w)
    }
    pub fn de<R: Read>(r: &mut R) -> Result<Option<&'static str>> {
        Option::<String>::deserialize_reader(r).map(|s| s.map(intern))
    }
}

/// The same for the network's random number generator, whose state only
/// serde can read: written as its JSON text.
pub(crate) mod rng {
    use super::*;
    use rand_pcg::Pcg64Mcg;
    fn invalid(e: serde_json::Error) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
    }
    pub fn ser<W: Write>(rng: &Pcg64Mcg, w: &mut W) -> Result<()> {
        serde_json::to_string(rng).map_err(invalid)?.serialize(w)
    }
    pub fn de<R: Read>(r: &mut R) -> Result<Pcg64Mcg> {
        serde_json::from_str(&String::deserialize_reader(r)?).map_err(invalid)
    }
}

/// The bytes begin with [`MAGIC`], the format's [`VERSION`] and how many
/// parts follow (`u32`s, little-endian, as borsh writes them), then each
/// part's length, then the parts: the *shell* (the cluster without its
/// brokers, its controller's metadata log and its trace, then the log's
/// record count and the trace's event count as `u64`s), each broker, the
/// metadata log's records in runs of at most [`LOG_PART_RECORDS`] and the
/// trace's events in runs of at most [`TRACE_PART_EVENTS`].
/// A reader can take them a few at a time ([`WorldReader`]): the page reads
/// a Worker's 20,000-partition world back over several tasks instead of
/// one of 160-200 ms (issue 63).
const HEAD: usize = 12;

/// Trace events per part: a run's lines are hashed again as they are read,
/// a few ms on the page for this many.
pub const TRACE_PART_EVENTS: usize = 4096;

/// Metadata records per part (the 20,000-partition tour's log, in one
/// part, was most of its shell's reading).
pub const LOG_PART_RECORDS: usize = 4096;

fn invalid(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}

impl Lab {
    /// The world as bytes, in parts ([`HEAD`]): [`Lab::from_snapshot`] with
    /// this lab's scenario and settings reads them back, or a
    /// [`WorldReader`] a few parts at a time. The brokers, the metadata log
    /// and the trace are set aside while the shell is written, and put back.
    pub fn snapshot_bytes(&mut self) -> Vec<u8> {
        let c = &mut self.cluster;
        let log_runs = c.controller.metadata_log.len().div_ceil(LOG_PART_RECORDS);
        let runs = c.trace.len().div_ceil(TRACE_PART_EVENTS);
        let count = 1 + c.brokers.len() + log_runs + runs;
        let mut out = Vec::with_capacity(1 << 16);
        out.extend_from_slice(MAGIC);
        // Writing to a Vec cannot fail; the world's own types write plain data.
        let _ = VERSION.serialize(&mut out);
        let _ = (count as u32).serialize(&mut out);
        out.resize(HEAD + 4 * count, 0);
        let mut lengths = Vec::with_capacity(count);
        let mut part = |out: &mut Vec<u8>, write: &dyn Fn(&mut Vec<u8>)| {
            let from = out.len();
            write(out);
            lengths.push((out.len() - from) as u32);
        };
        let brokers = std::mem::take(&mut c.brokers);
        let log = std::mem::take(&mut c.controller.metadata_log);
        let trace = std::mem::take(&mut c.trace);
        part(&mut out, &|out| {
            let _ = c.serialize(out);
            let _ = (log.len() as u64).serialize(out);
            let _ = (trace.len() as u64).serialize(out);
        });
        c.brokers = brokers;
        c.controller.metadata_log = log;
        c.trace = trace;
        for b in &c.brokers {
            part(&mut out, &|out| {
                let _ = b.serialize(out);
            });
        }
        for run in c.controller.metadata_log.chunks(LOG_PART_RECORDS) {
            part(&mut out, &|out| {
                let _ = run.serialize(out);
            });
        }
        for run in c.trace.runs(TRACE_PART_EVENTS) {
            part(&mut out, &|out| {
                let _ = run.serialize(out);
            });
        }
        for (k, n) in lengths.iter().enumerate() {
            out[HEAD + 4 * k..HEAD + 4 * k + 4].copy_from_slice(&n.to_le_bytes());
        }
        out
    }

    /// A lab of `scenario` with `settings` (as [`Lab::scenario_with_settings`]
    /// gives them) whose world is the one `bytes` hold. Bytes of another
    /// build's layout, of another scenario's size, or cut short are an error.
    pub fn from_snapshot(
        scenario: Scenario,
        settings: Settings,
        bytes: &[u8],
    ) -> std::result::Result<Lab, String> {
        // The head (the header, the table and the shell), then each part.
        let lengths = part_lengths(bytes)?;
        let mut at = HEAD + 4 * lengths.len() + lengths[0];
        let head = bytes
            .get(..at)
            .ok_or("snapshot: the world's shell cut short")?;
        let mut reader = WorldReader::new(scenario, settings, head)?;
        for n in &lengths[1..] {
            let part = bytes
                .get(at..at + n)
                .ok_or("snapshot: the world's bytes cut short")?;
            reader.read_part(part)?;
            at += n;
        }
        reader.finish()
    }
}

/// The lengths of the parts `bytes` hold, checked against its size (the
/// header and the table must be whole, the parts may be cut short: the
/// reader of a head alone sees only the first).
fn part_lengths(bytes: &[u8]) -> std::result::Result<Vec<usize>, String> {
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or("snapshot: not a world's bytes (no FLW1 header)")?;
    let mut r = rest;
    let version = u32::deserialize_reader(&mut r).map_err(|e| format!("snapshot: {e}"))?;
    if version != VERSION {
        return Err(format!(
            "snapshot: written by format {version}, this build reads {VERSION}"
        ));
    }
    let count = u32::deserialize_reader(&mut r).map_err(|e| format!("snapshot: {e}"))? as usize;
    if count == 0 || r.len() < 4 * count {
        return Err(format!("snapshot: a table of {count} parts cut short"));
    }
    let lengths: Vec<usize> = r[..4 * count]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let whole = HEAD + 4 * count + lengths.iter().sum::<usize>();
    if bytes.len() > whole {
        return Err(format!(
            "snapshot: {} bytes past the world",
            bytes.len() - whole
        ));
    }
    Ok(lengths)
}

/// A run of a log or a trace read back from `bytes`: its items, which must
/// be some and take the `have` read so far no further than `want` (else a
/// part past `past`).
fn run<T: BorshDeserialize>(
    bytes: &[u8],
    have: usize,
    want: usize,
    what: &str,
    past: &str,
) -> std::result::Result<Vec<T>, String> {
    let items: Vec<T> =
        Vec::try_from_slice(bytes).map_err(|e| format!("snapshot: {what} from {have}: {e}"))?;
    if items.is_empty() || have + items.len() > want {
        return Err(format!("snapshot: a part past {past}"));
    }
    Ok(items)
}

/// A world read back from its bytes a part at a time ([`HEAD`]): the
/// shell when made, then each [`WorldReader::read_part`]; [`WorldReader::finish`]
/// gives the lab once every broker and trace event is in.
pub struct WorldReader {
    lab: Lab,
    log_records: usize,
    trace_events: usize,
}

impl WorldReader {
    /// The reader of a world whose bytes begin with `head`: the header, the
    /// table and the shell (at least; what follows the shell is not read).
    pub fn new(
        scenario: Scenario,
        settings: Settings,
        head: &[u8],
    ) -> std::result::Result<WorldReader, String> {
        let lengths = part_lengths(head)?;
        let from = HEAD + 4 * lengths.len();
        let shell = head
            .get(from..from + lengths[0])
            .ok_or("snapshot: the world's shell cut short")?;
        let mut r = shell;
        let read = |r: &mut &[u8]| -> Result<(Cluster, usize, usize)> {
            let c = Cluster::deserialize_reader(r)?;
            let log = u64::deserialize_reader(r)? as usize;
            let trace = u64::deserialize_reader(r)? as usize;
            if !r.is_empty() {
                return Err(invalid(format!("{} bytes past the shell", r.len())));
            }
            Ok((c, log, trace))
        };
        let (cluster, log_records, trace_events) =
            read(&mut r).map_err(|e| format!("snapshot: {e}"))?;
        let spec = &scenario.spec;
        let parts = 1
            + spec.brokers as usize
            + log_records.div_ceil(LOG_PART_RECORDS)
            + trace_events.div_ceil(TRACE_PART_EVENTS);
        if !cluster.brokers.is_empty()
            || !cluster.controller.metadata_log.is_empty()
            || cluster.partitions.len() != spec.partitions.len()
            || cluster.seed != spec.seed
            || lengths.len() != parts
        {
            return Err(format!(
                "snapshot: a world of {} partitions (seed {}) in {} parts, not this scenario's {} partitions (seed {}) and {} brokers",
                cluster.partitions.len(),
                cluster.seed,
                lengths.len(),
                spec.partitions.len(),
                spec.seed,
                spec.brokers
            ));
        }
        Ok(WorldReader {
            lab: Lab {
                scenario: Rc::new(scenario),
                cluster,
                settings,
            },
            log_records,
            trace_events,
        })
    }

    /// Whether every broker, metadata record and trace event is in.
    pub fn done(&self) -> bool {
        let c = &self.lab.cluster;
        c.brokers.len() == self.lab.scenario.spec.brokers as usize
            && c.controller.metadata_log.len() == self.log_records
            && c.trace.len() == self.trace_events
    }

    /// The next part (a broker, then the metadata log's runs, then the
    /// trace's, in the order they were written); true once the world is
    /// whole. A part past the world, or bytes that are not one, are an error.
    pub fn read_part(&mut self, bytes: &[u8]) -> std::result::Result<bool, String> {
        let c = &mut self.lab.cluster;
        let log = &mut c.controller.metadata_log;
        if c.brokers.len() < self.lab.scenario.spec.brokers as usize {
            let b = crate::sim::broker::Broker::try_from_slice(bytes)
                .map_err(|e| format!("snapshot: broker {}: {e}", c.brokers.len() + 1))?;
            c.brokers.push(b);
        } else if log.len() < self.log_records {
            let records = run(
                bytes,
                log.len(),
                self.log_records,
                "metadata records",
                "the metadata log",
            )?;
            log.extend(records);
        } else {
            let events = run(
                bytes,
                c.trace.len(),
                self.trace_events,
                "trace events",
                "the world",
            )?;
            c.trace.extend_read(events);
        }
        Ok(self.done())
    }

    /// The lab, once [`WorldReader::done`]; an error before.
    pub fn finish(self) -> std::result::Result<Lab, String> {
        if !self.done() {
            let c = &self.lab.cluster;
            return Err(format!(
                "snapshot: cut short at {} brokers, {} of {} metadata records and {} of {} trace events",
                c.brokers.len(),
                c.controller.metadata_log.len(),
                self.log_records,
                c.trace.len(),
                self.trace_events
            ));
        }
        Ok(self.lab)
    }
}
