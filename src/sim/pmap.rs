//! Maps keyed by partition index, for the hot paths of large clusters.
//!
//! A broker of the 20,000-partition bench workload hosts about 1,000 replicas
//! and looks one up for every partition of every Fetch and Produce; with a
//! `BTreeMap` that search was the largest single cost of a run. Both maps here
//! answer a lookup with one index, and iterate in ascending key order exactly as
//! a `BTreeMap` would, so swapping one for the other keeps every run's trace.
//!
//! - [`PartitionMap`]: few entries out of many partitions (a broker's replicas).
//!   A dense table of slots points into a sorted vector of entries; inserting a
//!   key above every other is O(1), anywhere else O(n) (maps are filled once,
//!   in key order, when the cluster is built).
//! - [`DenseMap`]: any subset of the partitions, one `Option` per partition
//!   (a client's per-partition state; there are few clients).
//! - [`VecMap`]: a few entries under any ordered key (requests in flight,
//!   parked operations), a sorted vector.
//! - [`Waiters`]: a short list of request ids per replica slot (the fetches
//!   parked on each partition a broker hosts), two inline.
//! - [`SparseWaiters`]: the same lists where nearly all are empty (the
//!   produces parked on them), only the ids that are there.

use std::rc::Rc;

use crate::sim::shared::cow;

use super::protocol::PartitionIndex;

const NONE: u32 = u32::MAX;

/// Values sit behind an `Rc`, so a clone of the map (a snapshot of the
/// world) copies pointers, and a value is copied only when it is first
/// changed afterwards (copy-on-write, `shared::cow`). The key index (`slot`,
/// `keys`) changes only when a key comes or goes, so clones share it too.
/// Loops over every value that change only some use
/// [`PartitionMap::change_where`] (or [`PartitionMap::at`] and
/// [`PartitionMap::at_mut`]).
///
/// Per-value copy-on-write, not pages of values (issue 27, measured): on
/// tour 11 (600 partitions) a snapshot kept 250 simulated ms alone held
/// 2.8 MB with it and 3.7 MB with the replicas in shared pages of 32, since
/// a page is copied whole for one changed replica; on the 20,000-partition
/// bench, where nearly every replica changes within a second, pages saved
/// nothing either.
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct PartitionMap<V> {
    /// By partition index: the entry's position in `keys`/`values`, or `NONE`.
    slot: Rc<Vec<u32>>,
    keys: Rc<Vec<PartitionIndex>>,
    #[cfg_attr(
        world_snapshot,
        borsh(bound(deserialize = "V: borsh::BorshDeserialize + Clone"))
    )]
    values: Vec<Rc<V>>,
}

impl<V> Default for PartitionMap<V> {
    fn default() -> Self {
        PartitionMap {
            slot: Rc::default(),
            keys: Rc::default(),
            values: Vec::new(),
        }
    }
}

impl<V: Clone> PartitionMap<V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The position of `p`'s entry (stable until the next insert or remove).
    #[inline]
    pub fn slot_of(&self, p: PartitionIndex) -> Option<usize> {
        match self.slot.get(p) {
            Some(&s) if s != NONE => Some(s as usize),
            _ => None,
        }
    }

    pub fn get(&self, p: &PartitionIndex) -> Option<&V> {
        self.slot_of(*p).map(|s| &*self.values[s])
    }

    /// `p`'s value, made unshared first (copied if a snapshot shares it).
    #[inline]
    pub fn get_mut(&mut self, p: &PartitionIndex) -> Option<&mut V> {
        self.slot_of(*p).map(|s| cow(&mut self.values[s]))
    }

    /// The value at position `s` (`0..len()`, in key order).
    #[inline]
    pub fn at(&self, s: usize) -> Option<&V> {
        self.values.get(s).map(|v| &**v)
    }

    /// The value at position `s`, made unshared first.
    #[inline]
    pub fn at_mut(&mut self, s: usize) -> Option<&mut V> {
        self.values.get_mut(s).map(cow)
    }

    pub fn contains_key(&self, p: &PartitionIndex) -> bool {
        self.slot_of(*p).is_some()
    }

    /// The shared value at position `s`, as a clone of the map holds it
    /// (checkpoints written against each other, `crate::checkpoint`).
    pub fn rc_at(&self, s: usize) -> Option<&Rc<V>> {
        self.values.get(s)
    }

    /// Put `v` at position `s` (which must exist) as it is, shared.
    pub fn set_rc_at(&mut self, s: usize, v: Rc<V>) {
        if let Some(at) = self.values.get_mut(s) {
            *at = v;
        }
    }

    /// Whether `other` has the same keys, at the same positions.
    pub fn same_keys(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.keys, &other.keys) || self.keys == other.keys
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn insert(&mut self, p: PartitionIndex, v: V) -> Option<V> {
        if let Some(s) = self.slot_of(p) {
            let old = std::mem::replace(&mut self.values[s], Rc::new(v));
            return Some(Rc::unwrap_or_clone(old));
        }
        let slot = cow(&mut self.slot);
        if slot.len() <= p {
            slot.resize(p + 1, NONE);
        }
        let at = self.keys.partition_point(|k| *k < p);
        cow(&mut self.keys).insert(at, p);
        self.values.insert(at, Rc::new(v));
        self.renumber(at);
        None
    }

    pub fn remove(&mut self, p: &PartitionIndex) -> Option<V> {
        let s = self.slot_of(*p)?;
        cow(&mut self.slot)[*p] = NONE;
        cow(&mut self.keys).remove(s);
        let v = self.values.remove(s);
        self.renumber(s);
        Some(Rc::unwrap_or_clone(v))
    }

    fn renumber(&mut self, from: usize) {
        let slot = cow(&mut self.slot);
        for (i, k) in self.keys.iter().enumerate().skip(from) {
            slot[*k] = i as u32;
        }
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.values.iter().map(|v| &**v)
    }

    /// Apply `change` to every value `wants` holds for, copying only those
    /// (a timer's loop over every replica that changes only some).
    pub fn change_where(&mut self, wants: impl Fn(&V) -> bool, mut change: impl FnMut(&mut V)) {
        for v in self.values.iter_mut() {
            if wants(v) {
                change(cow(v));
            }
        }
    }

    /// Every value made mutable (each copied if a snapshot shares it): for
    /// changes to all of them (a crash). Loops that change only some use
    /// [`PartitionMap::change_where`].
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> + '_ {
        self.values.iter_mut().map(cow)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&PartitionIndex, &V)> + '_ {
        self.keys.iter().zip(self.values.iter().map(|v| &**v))
    }
    /// The keys, in partition order.
    pub fn keys(&self) -> &[PartitionIndex] {
        &self.keys
    }
}

/// One optional value per partition, iterated in partition order.
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct DenseMap<V> {
    values: Vec<Option<V>>,
    len: usize,
}

impl<V> Default for DenseMap<V> {
    fn default() -> Self {
        DenseMap {
            values: Vec::new(),
            len: 0,
        }
    }
}

impl<V> DenseMap<V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, p: &PartitionIndex) -> Option<&V> {
        self.values.get(*p).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, p: &PartitionIndex) -> Option<&mut V> {
        self.values.get_mut(*p).and_then(Option::as_mut)
    }

    pub fn contains_key(&self, p: &PartitionIndex) -> bool {
        self.get(p).is_some()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn cell(&mut self, p: PartitionIndex) -> &mut Option<V> {
        if self.values.len() <= p {
            self.values.resize_with(p + 1, || None);
        }
        &mut self.values[p]
    }

    pub fn insert(&mut self, p: PartitionIndex, v: V) -> Option<V> {
        let old = self.cell(p).replace(v);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    pub fn remove(&mut self, p: &PartitionIndex) -> Option<V> {
        let old = self.values.get_mut(*p).and_then(Option::take);
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// `p`'s value, inserting `V::default()` first when there is none
    /// (`BTreeMap::entry(p).or_default()`).
    pub fn or_default(&mut self, p: PartitionIndex) -> &mut V
    where
        V: Default,
    {
        if self.get(&p).is_none() {
            self.len += 1;
        }
        self.cell(p).get_or_insert_with(V::default)
    }

    pub fn clear(&mut self) {
        self.values.clear();
        self.len = 0;
    }

    pub fn iter(&self) -> impl Iterator<Item = (PartitionIndex, &V)> + '_ {
        self.values
            .iter()
            .enumerate()
            .filter_map(|(p, v)| v.as_ref().map(|v| (p, v)))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (PartitionIndex, &mut V)> + '_ {
        self.values
            .iter_mut()
            .enumerate()
            .filter_map(|(p, v)| v.as_mut().map(|v| (p, v)))
    }

    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.values.iter().filter_map(Option::as_ref)
    }
}

impl<V> FromIterator<(PartitionIndex, V)> for DenseMap<V> {
    fn from_iter<I: IntoIterator<Item = (PartitionIndex, V)>>(iter: I) -> Self {
        let mut m = DenseMap::new();
        for (p, v) in iter {
            m.insert(p, v);
        }
        m
    }
}

impl<V> std::ops::Index<&PartitionIndex> for DenseMap<V> {
    type Output = V;

    /// Panics when `p` has no value, as `BTreeMap`'s index does (tests only;
    /// the simulation uses `get`).
    fn index(&self, p: &PartitionIndex) -> &V {
        match self.get(p) {
            Some(v) => v,
            None => panic!("no value for partition {p}"),
        }
    }
}

/// A small map in key order: a sorted vector, searched by bisection. For the
/// maps of in-flight requests and parked operations (tens of entries, keyed by
/// ids that mostly arrive in increasing order), it iterates as a `BTreeMap`
/// would at a fraction of the code a `BTreeMap` instantiation costs the wasm.
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct VecMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap {
            entries: Vec::new(),
        }
    }
}

impl<K: Ord, V> VecMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    fn find(&self, k: &K) -> Result<usize, usize> {
        // Ids grow, so the newest entry is the likeliest and the last.
        match self.entries.last() {
            Some((last, _)) if last < k => Err(self.entries.len()),
            _ => self.entries.binary_search_by(|(x, _)| x.cmp(k)),
        }
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        self.find(k).ok().map(|i| &self.entries[i].1)
    }

    pub fn contains_key(&self, k: &K) -> bool {
        self.find(k).is_ok()
    }

    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.find(k).ok().map(|i| &mut self.entries[i].1)
    }

    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        match self.find(&k) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, v)),
            Err(i) => {
                self.entries.insert(i, (k, v));
                None
            }
        }
    }

    pub fn remove(&mut self, k: &K) -> Option<V> {
        self.find(k).ok().map(|i| self.entries.remove(i).1)
    }

    /// Room for `n` entries before the first reallocation.
    pub fn with_capacity(n: usize) -> Self {
        VecMap {
            entries: Vec::with_capacity(n),
        }
    }

    /// `k`'s value, inserting `V::default()` first when there is none.
    pub fn or_default(&mut self, k: K) -> &mut V
    where
        V: Default,
    {
        self.or_insert_with(k, V::default)
    }

    /// `k`'s value, inserting `make()` first when there is none.
    pub fn or_insert_with(&mut self, k: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&k) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (k, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> + '_ {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// Keep only the entries `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }

    pub fn into_values(self) -> impl Iterator<Item = V> {
        self.entries.into_iter().map(|(_, v)| v)
    }

    /// Room for `n` more entries.
    pub fn reserve(&mut self, n: usize) {
        self.entries.reserve(n);
    }

    /// Every entry, in key order, taken out; the map keeps its room.
    pub fn drain(&mut self) -> impl Iterator<Item = (K, V)> + '_ {
        self.entries.drain(..)
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

/// The ids of the requests parked on each partition a broker hosts, by the
/// replica's slot, in the order they parked (ids are never 0).
///
/// A leader's partition has its followers' fetches parked on it nearly all
/// the time, two at replication factor 3, and most other lists are empty; a
/// `Vec` per slot cost 24 bytes plus a heap block for each, all deep-copied
/// by every snapshot. Here the first two ids of each list sit inline in one
/// dense array that a snapshot copies with one `memcpy`, and only a longer
/// list (a consumer's fetch beside both followers, a higher replication
/// factor) keeps the remainder in a short side list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Waiters {
    /// The first two ids of each slot's list; 0 where there is none. The
    /// second place is empty unless the first is taken, and it carries
    /// [`MORE`] when `rest` holds more ids of that slot.
    first: Vec<[u64; 2]>,
    /// `(slot, id)` for the ids after a list's first two, in list order.
    rest: Vec<(usize, u64)>,
}

/// Set on a slot's second id when its list goes on in `Waiters::rest` (ids
/// come from a counter and never reach it), so only those lists look there.
const MORE: u64 = 1 << 63;

impl Waiters {
    /// Room for `slots` lists (new ones empty).
    pub fn resize(&mut self, slots: usize) {
        self.first.resize(slots, [0; 2]);
        self.rest.retain(|e| e.0 < slots);
    }

    /// Whether nothing is parked on slot `s` (or there is no such slot).
    pub fn is_empty(&self, s: usize) -> bool {
        self.first.get(s).is_none_or(|f| f[0] == 0)
    }

    /// Park `id` at the end of slot `s`'s list.
    pub fn push(&mut self, s: usize, id: u64) {
        let Some(f) = self.first.get_mut(s) else {
            return;
        };
        if f[0] == 0 {
            f[0] = id;
        } else if f[1] == 0 {
            f[1] = id;
        } else {
            f[1] |= MORE;
            self.rest.push((s, id));
        }
    }

    /// Take `id` off slot `s`'s list, if it is there (an id is on a list
    /// at most once: a request names each partition once).
    pub fn remove(&mut self, s: usize, id: u64) {
        let Some(&[a, b]) = self.first.get(s) else {
            return;
        };
        if id == 0 {
            return;
        }
        if b & MORE == 0 {
            // Two at most, all in the pair (the usual case: one call per
            // partition of every fetch answered).
            if a == id {
                self.first[s] = [b, 0];
            } else if b == id {
                self.first[s] = [a, 0];
            }
            return;
        }
        // Longer than two (rare): the side list keeps the tail in order.
        let second = b & !MORE;
        if a == id || second == id {
            // The pair closes up, and the tail's head moves into it.
            let Some(i) = self.rest.iter().position(|e| e.0 == s) else {
                return;
            };
            let (_, next) = self.rest.remove(i);
            let more = if self.rest[i..].iter().any(|e| e.0 == s) {
                MORE
            } else {
                0
            };
            self.first[s] = if a == id {
                [second, next | more]
            } else {
                [a, next | more]
            };
        } else if let Some(i) = self.rest.iter().position(|&e| e == (s, id)) {
            self.rest.remove(i);
            if !self.rest.iter().any(|e| e.0 == s) {
                self.first[s][1] = second;
            }
        }
    }

    /// Copy slot `s`'s list to the end of `into`, leaving it as it is.
    #[inline]
    pub fn read(&self, s: usize, into: &mut Vec<u64>) {
        let Some(&[a, b]) = self.first.get(s) else {
            return;
        };
        if a == 0 {
            return;
        }
        into.push(a);
        if b & !MORE != 0 {
            into.push(b & !MORE);
        }
        if b & MORE != 0 {
            for &(slot, x) in &self.rest {
                if slot == s {
                    into.push(x);
                }
            }
        }
    }

    /// Move slot `s`'s list to the end of `into`, leaving it empty.
    #[inline]
    pub fn take(&mut self, s: usize, into: &mut Vec<u64>) {
        self.read(s, into);
        let Some(f) = self.first.get_mut(s) else {
            return;
        };
        let [_, b] = std::mem::take(f);
        if b & MORE != 0 {
            self.rest.retain(|e| e.0 != s);
        }
    }

    /// Replace slot `s`'s list with `ids`.
    pub fn set(&mut self, s: usize, ids: &[u64]) {
        if s >= self.first.len() {
            return;
        }
        if !self.is_empty(s) {
            self.take(s, &mut Vec::new());
        }
        for &id in ids {
            self.push(s, id);
        }
    }

    /// Empty every list.
    pub fn clear(&mut self) {
        self.first.fill([0; 2]);
        self.rest.clear();
    }
}

/// [`Waiters`] for lists that are empty nearly all the time: the produces
/// parked on each partition a broker hosts. A produce with acks=all waits
/// only until its partitions' high watermarks cover it, a few ms, and only
/// on the partitions it wrote to; follower slots never have one. Two inline
/// ids per slot held 16 bytes for each of the 60,000 replicas of the large
/// bench, deep-copied by every checkpoint (issue 27), where a few dozen ids
/// are parked at any moment. Here only the parked ids are kept, sorted by
/// slot (each slot's in the order they parked), and found by binary search.
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct SparseWaiters {
    /// `(slot, id)`, by slot; a slot's ids in the order they parked.
    entries: Vec<(usize, u64)>,
    /// How many slots there are (`resize`): a slot past them is empty and
    /// takes no id, as in [`Waiters`].
    slots: usize,
}

impl SparseWaiters {
    /// Room for `slots` lists (the ids of slots past them are dropped).
    pub fn resize(&mut self, slots: usize) {
        self.slots = slots;
        self.entries.retain(|e| e.0 < slots);
    }

    /// Where slot `s`'s ids start in `entries` (or would).
    fn start(&self, s: usize) -> usize {
        self.entries.partition_point(|e| e.0 < s)
    }

    /// Where slot `s`'s ids are in `entries`.
    fn span(&self, s: usize) -> std::ops::Range<usize> {
        let from = self.start(s);
        from..from + self.entries[from..].partition_point(|e| e.0 == s)
    }

    /// Whether nothing is parked on slot `s` (or there is no such slot).
    /// Asked whenever a leader's high watermark moves, so it looks once:
    /// at the first id of a slot at or after `s`.
    pub fn is_empty(&self, s: usize) -> bool {
        self.entries.get(self.start(s)).is_none_or(|e| e.0 != s)
    }

    /// Park `id` at the end of slot `s`'s list.
    pub fn push(&mut self, s: usize, id: u64) {
        if s < self.slots {
            let at = self.entries.partition_point(|e| e.0 <= s);
            self.entries.insert(at, (s, id));
        }
    }

    /// Take `id` off slot `s`'s list, if it is there.
    pub fn remove(&mut self, s: usize, id: u64) {
        let span = self.span(s);
        if let Some(i) = self.entries[span.clone()].iter().position(|e| e.1 == id) {
            self.entries.remove(span.start + i);
        }
    }

    /// Copy slot `s`'s list to the end of `into`, leaving it as it is.
    pub fn read(&self, s: usize, into: &mut Vec<u64>) {
        into.extend(self.entries[self.span(s)].iter().map(|e| e.1));
    }

    /// Move slot `s`'s list to the end of `into`, leaving it empty.
    pub fn take(&mut self, s: usize, into: &mut Vec<u64>) {
        let span = self.span(s);
        into.extend(self.entries.drain(span).map(|e| e.1));
    }

    /// Replace slot `s`'s list with `ids`.
    pub fn set(&mut self, s: usize, ids: &[u64]) {
        if s < self.slots {
            let span = self.span(s);
            self.entries.splice(span, ids.iter().map(|&id| (s, id)));
        }
    }

    /// Empty every list.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The maps behave as a BTreeMap under the same inserts and removes,
    /// iteration order included.
    #[test]
    fn partition_maps_agree_with_a_btreemap() {
        let ops: Vec<(bool, usize)> = (0..400u64)
            .map(|i| {
                let x = i.wrapping_mul(2_654_435_761) % 97;
                (x % 3 != 0, (x * 7 % 89) as usize)
            })
            .collect();
        let mut reference = BTreeMap::new();
        let mut sparse = PartitionMap::new();
        let mut dense = DenseMap::new();
        let mut small = VecMap::new();
        for (n, (insert, p)) in ops.into_iter().enumerate() {
            if insert {
                assert_eq!(small.insert(p, n), reference.get(&p).copied());
                assert_eq!(sparse.insert(p, n), reference.get(&p).copied());
                assert_eq!(dense.insert(p, n), reference.insert(p, n));
            } else {
                assert_eq!(small.remove(&p), reference.get(&p).copied());
                assert_eq!(sparse.remove(&p), reference.get(&p).copied());
                assert_eq!(dense.remove(&p), reference.remove(&p));
            }
            let want: Vec<(usize, usize)> = reference.iter().map(|(k, v)| (*k, *v)).collect();
            let got: Vec<(usize, usize)> = sparse.iter().map(|(k, v)| (*k, *v)).collect();
            assert_eq!(got, want);
            let got: Vec<(usize, usize)> = dense.iter().map(|(k, v)| (k, *v)).collect();
            assert_eq!(got, want);
            let got: Vec<(usize, usize)> = small.iter().map(|(k, v)| (*k, *v)).collect();
            assert_eq!(got, want);
            assert_eq!(small.len(), reference.len());
            assert_eq!(sparse.len(), reference.len());
            assert_eq!(dense.len(), reference.len());
            for k in 0..100 {
                assert_eq!(sparse.get(&k), reference.get(&k));
                assert_eq!(dense.get(&k), reference.get(&k));
                assert_eq!(small.get(&k), reference.get(&k));
            }
        }
    }

    /// Both kinds of waiters keep each slot's ids in the order they parked,
    /// as a vector per slot would, through pushes, takes and replacements of
    /// any length.
    #[test]
    fn waiters_agree_with_a_vector_per_slot() {
        agrees_with_a_vector_per_slot::<Waiters>();
        agrees_with_a_vector_per_slot::<SparseWaiters>();
    }

    /// The lists' operations, for the test to drive either kind.
    trait Lists: Default + Clone {
        fn resize(&mut self, slots: usize);
        fn is_empty(&self, s: usize) -> bool;
        fn push(&mut self, s: usize, id: u64);
        fn remove(&mut self, s: usize, id: u64);
        fn read(&self, s: usize, into: &mut Vec<u64>);
        fn take(&mut self, s: usize, into: &mut Vec<u64>);
        fn set(&mut self, s: usize, ids: &[u64]);
        fn clear(&mut self);
    }

    macro_rules! lists {
        ($t:ty) => {
            impl Lists for $t {
                fn resize(&mut self, slots: usize) {
                    <$t>::resize(self, slots)
                }
                fn is_empty(&self, s: usize) -> bool {
                    <$t>::is_empty(self, s)
                }
                fn push(&mut self, s: usize, id: u64) {
                    <$t>::push(self, s, id)
                }
                fn remove(&mut self, s: usize, id: u64) {
                    <$t>::remove(self, s, id)
                }
                fn read(&self, s: usize, into: &mut Vec<u64>) {
                    <$t>::read(self, s, into)
                }
                fn take(&mut self, s: usize, into: &mut Vec<u64>) {
                    <$t>::take(self, s, into)
                }
                fn set(&mut self, s: usize, ids: &[u64]) {
                    <$t>::set(self, s, ids)
                }
                fn clear(&mut self) {
                    <$t>::clear(self)
                }
            }
        };
    }
    lists!(Waiters);
    lists!(SparseWaiters);

    fn agrees_with_a_vector_per_slot<W: Lists>() {
        let slots = 5;
        let mut reference: Vec<Vec<u64>> = vec![Vec::new(); slots];
        let mut waiters = W::default();
        waiters.resize(slots);
        let mut id = 0u64;
        for i in 0..600u64 {
            let x = i.wrapping_mul(2_654_435_761) % 101;
            let s = (x % slots as u64) as usize;
            match x % 7 {
                0 => {
                    let mut got = vec![99];
                    waiters.take(s, &mut got);
                    let mut want = vec![99];
                    want.append(&mut reference[s]);
                    assert_eq!(got, want);
                }
                1 => {
                    let ids: Vec<u64> = (0..x % 5).map(|k| 1000 + i * 10 + k).collect();
                    waiters.set(s, &ids);
                    reference[s] = ids;
                }
                _ => {
                    id += 1;
                    waiters.push(s, id);
                    reference[s].push(id);
                    // Every other id parked takes one off another slot's
                    // list (its first, its second, its last or one between,
                    // by turns), and an id that is on no list changes nothing.
                    let t = (s + 2) % slots;
                    if id % 2 == 0 && !reference[t].is_empty() {
                        let n = reference[t].len();
                        let k = [0, 1.min(n - 1), n - 1, n / 2][(id / 2 % 4) as usize];
                        waiters.remove(t, reference[t][k]);
                        reference[t].remove(k);
                    }
                    waiters.remove(t, 1 << 40);
                }
            }
            for (k, want) in reference.iter().enumerate() {
                assert_eq!(waiters.is_empty(k), want.is_empty());
                let mut read = vec![7];
                waiters.read(k, &mut read);
                assert_eq!(read[0], 7);
                assert_eq!(&read[1..], want, "reading leaves the list as it was");
                let mut copy = waiters.clone();
                let mut got = Vec::new();
                copy.take(k, &mut got);
                assert_eq!(&got, want);
            }
        }
        assert!(waiters.is_empty(slots), "a slot past the end is empty");
        waiters.push(slots, 1 << 41);
        waiters.set(slots, &[1 << 42]);
        assert!(waiters.is_empty(slots), "a slot past the end takes no id");
        // Fewer slots drop the last ones' lists; grown again, they are empty
        // and fill afresh.
        let last = slots - 1;
        waiters.set(0, &[1 << 40, 1 << 39, 1 << 38]);
        waiters.set(last, &[1 << 43, 1 << 44, 1 << 45]);
        let lists = |w: &W| {
            (0..last)
                .map(|k| {
                    let mut v = Vec::new();
                    w.read(k, &mut v);
                    v
                })
                .collect::<Vec<_>>()
        };
        let kept = lists(&waiters);
        waiters.resize(last);
        waiters.resize(slots);
        assert!(waiters.is_empty(last), "a dropped slot comes back empty");
        assert_eq!(lists(&waiters), kept, "the other slots keep their lists");
        let ids = [1 << 46, 1 << 47, 1 << 48];
        ids.iter().for_each(|&id| waiters.push(last, id));
        let mut got = Vec::new();
        waiters.read(last, &mut got);
        assert_eq!(got, ids, "and holds only what was pushed since");
        waiters.clear();
        assert!((0..slots).all(|k| waiters.is_empty(k)));
    }
}
