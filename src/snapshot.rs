//! A world as bytes, and back (issue 63, item 3: compare lanes replayed on
//! other cores).
//!
//! A checkpoint ([`crate::checkpoint`]) is a copy of the world inside one
//! wasm instance's memory; a Worker has memory of its own, so a world it ran
//! can only come back as bytes. [`Lab::snapshot_bytes`] writes the cluster
//! (every broker, client, message in flight, timer, log and the trace) with
//! borsh, a plain binary layout derived field by field from the types
//! themselves; [`Lab::from_snapshot`] reads it back into a lab of the same
//! scenario and settings, which the reader builds from their text as it
//! would for a new lab. The world read back runs on exactly as the one
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
const VERSION: u32 = 1;

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

impl Lab {
    /// The world as bytes: [`Lab::from_snapshot`] with this lab's scenario
    /// and settings reads them back.
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 << 16);
        out.extend_from_slice(MAGIC);
        // Writing to a Vec cannot fail; the world's own types write plain data.
        let _ = VERSION.serialize(&mut out);
        let _ = self.cluster.serialize(&mut out);
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
        let cluster = Cluster::deserialize_reader(&mut r).map_err(|e| format!("snapshot: {e}"))?;
        if !r.is_empty() {
            return Err(format!("snapshot: {} bytes past the world", r.len()));
        }
        let spec = &scenario.spec;
        if cluster.brokers.len() != spec.brokers as usize
            || cluster.partitions.len() != spec.partitions.len()
            || cluster.seed != spec.seed
        {
            return Err(format!(
                "snapshot: a world of {} brokers and {} partitions (seed {}), not this scenario's {} and {} (seed {})",
                cluster.brokers.len(),
                cluster.partitions.len(),
                cluster.seed,
                spec.brokers,
                spec.partitions.len(),
                spec.seed
            ));
        }
        Ok(Lab {
            scenario: Rc::new(scenario),
            cluster,
            settings,
        })
    }
}
