//! Checkpoints for time travel, written against each other (issue 27).
//!
//! The page keeps copies of the world to seek from ([`Checkpoint`]). A copy
//! shares everything with the world when it is taken, and then holds alone
//! whatever the world changes afterwards. On a 20,000-partition cluster
//! nearly every replica changes within a second or two (every follower
//! appends, every HW moves), so each checkpoint ends up holding a copy of
//! every replica: its whole block (the log's index, the ISR, the epoch
//! cache's handle …) for a change of a few counters.
//!
//! So a checkpoint keeps a replica that an older checkpoint also has, and
//! that agrees with it on everything that moves with metadata rather than
//! with fetches (role, epochs, ISR and replica list, a pending ISR change,
//! lanes, the epoch cache), as that older copy plus what moved: the log's
//! end, HW, whole hash, flush and checkpoint offsets, and the chunks of
//! records past the ones they share ([`ReplicaDelta`], 56 bytes natively).
//! Its own copy is let go. A video codec does the
//! same with its frames: each one stored as the changes from a frame kept
//! whole. Here the "frame kept whole" is per replica, and is whatever copy
//! the older checkpoint holds (possibly one it keeps against a still older
//! one): a delta names the very block it was written against, so it never
//! depends on that older checkpoint still being kept.
//!
//! [`Checkpoint::restore`] builds the world back exactly: every replica is
//! field for field what it was (its log's chunks the same shared chunks), so
//! the world runs on as it would have (tests/checkpoint.rs runs restored
//! checkpoints to the end and compares the reports byte for byte).

use std::rc::Rc;

use crate::sim::partition::{Replica, ReplicaDelta};
use crate::Lab;

/// A copy of a lab to seek from. A compacted checkpoint's world is not a
/// world to run (some replicas' slots hold older copies); only
/// [`Checkpoint::restore`] reads it.
#[derive(Debug)]
pub struct Checkpoint {
    lab: Lab,
    /// `(broker index, slot, delta)`: the replica at that slot of that
    /// broker's map is the slot's (older) copy with `delta` applied.
    deltas: Vec<(u32, u32, ReplicaDelta)>,
    compacted: bool,
}

/// Set every broker's index of parked fetches aside, or put it back (a
/// second call), while the world is copied: see [`Checkpoint::of`].
#[inline(never)]
fn set_indexes_aside(brokers: &mut [crate::sim::broker::Broker]) {
    for broker in brokers {
        broker.set_fetch_waiters_aside();
    }
}

impl Checkpoint {
    /// A checkpoint of `live` as it is now (it shares everything with it).
    ///
    /// It keeps no index of parked fetches: restore builds that again from
    /// the fetches. The live world lends its indexes out while it is copied
    /// (so it is taken `&mut`), rather than the copy making its own and
    /// dropping them: on the 20,000-partition bench those sixty freed blocks,
    /// in the middle of every checkpoint's copy, fragmented the page's heap
    /// enough to leave wasm memory at 544–550 MiB, over the 512 MiB goal,
    /// where lending left it at 486 MiB (issue 27).
    pub fn of(live: &mut Lab) -> Checkpoint {
        set_indexes_aside(&mut live.cluster.brokers);
        let lab = live.clone();
        set_indexes_aside(&mut live.cluster.brokers);
        Checkpoint {
            lab,
            deltas: Vec::new(),
            compacted: false,
        }
    }

    /// Simulated time of the checkpoint.
    pub fn now(&self) -> u64 {
        self.lab.cluster.now
    }

    /// How many replicas this checkpoint keeps as deltas.
    pub fn replicas_written_as_deltas(&self) -> usize {
        self.deltas.len()
    }

    /// Keep every replica that `older` has a different copy of, and that
    /// agrees with it on what rarely moves, as that copy plus a delta,
    /// letting this checkpoint's own copy go. Done once: a second call
    /// changes nothing. Returns how many replicas were written as deltas.
    pub fn compact_against(&mut self, older: &Checkpoint) -> usize {
        if self.compacted {
            return 0;
        }
        self.compacted = true;
        let mine = self.lab.cluster.brokers.iter_mut();
        for (b, (broker, theirs)) in mine.zip(&older.lab.cluster.brokers).enumerate() {
            // A restarted broker builds its partitions anew: its slots need
            // not be the older one's.
            if !broker.replicas.same_keys(&theirs.replicas) {
                continue;
            }
            for s in 0..broker.replicas.len() {
                let (Some(own), Some(base)) = (broker.replicas.rc_at(s), theirs.replicas.rc_at(s))
                else {
                    continue;
                };
                if Rc::ptr_eq(own, base) {
                    continue;
                }
                if let Some(delta) = ReplicaDelta::of(own, base) {
                    let base = Rc::clone(base);
                    broker.replicas.set_rc_at(s, base);
                    self.deltas.push((b as u32, s as u32, delta));
                }
            }
        }
        self.deltas.shrink_to_fit();
        self.deltas.len()
    }

    /// The lab as it was when the checkpoint was taken, to run on from.
    pub fn restore(&self) -> Lab {
        let mut lab = self.lab.clone();
        for (b, s, delta) in &self.deltas {
            let Some(broker) = lab.cluster.brokers.get_mut(*b as usize) else {
                continue;
            };
            let s = *s as usize;
            if let Some(base) = broker.replicas.rc_at(s) {
                let replica: Replica = delta.apply(base);
                broker.replicas.set_rc_at(s, Rc::new(replica));
            }
        }
        for broker in &mut lab.cluster.brokers {
            broker.rebuild_fetch_waiters();
        }
        lab
    }
}
