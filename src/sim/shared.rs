//! Structural sharing, so a snapshot of the world is cheap (issue 14).
//!
//! The page keeps checkpoints of the whole world to seek in time. A deep copy
//! of a 20,000-partition world is over 100 MB and hundreds of milliseconds, yet
//! from one checkpoint to the next most of it does not change, and the biggest
//! parts only grow at their end (logs, the trace, the acknowledged records, the
//! metadata log). [`SharedVec`] is such an append-mostly vector: its chunks
//! of `N` write-once cells are shared by every clone, the last one included,
//! and each clone appends in place past its own length; a chunk is copied only
//! when two clones append at the same place. Per-replica state is shared with
//! copy-on-write one level up (`PartitionMap` holds `Rc<Replica>`), and tables
//! with one entry per partition are kept in [`Pages`] copied on first write.
//!
//! Nothing here changes what the simulation computes: the items, their order
//! and every answer are those of a `Vec` (the tests below check it against one).

use std::cell::OnceCell;
use std::rc::Rc;

/// Sorts `v` in ascending order with a heapsort: O(n log n) as the
/// standard library's sorts are, in a few hundred bytes of wasm per element
/// type rather than their 3–6 kB (the standard sorts were 52 kB of the
/// page's wasm before the sorts off the hot path used this). Not stable,
/// which no caller can tell: each sorts by its elements' whole `Ord`, so
/// equal elements are identical.
pub fn sort_slim<T: Ord>(v: &mut [T]) {
    fn sift<T: Ord>(v: &mut [T], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && v[child] < v[child + 1] {
                child += 1;
            }
            if v[root] >= v[child] {
                return;
            }
            v.swap(root, child);
            root = child;
        }
    }
    let n = v.len();
    for i in (0..n / 2).rev() {
        sift(v, i, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift(v, 0, end);
    }
}

/// Buffers kept for reuse that hold no state of the world (a broker's
/// emptied fetch buffers, the cluster's emptied message boxes): a clone of
/// the world (a snapshot) starts without them instead of copying them.
#[derive(Default)]
pub struct Scratch<T>(pub T);

impl<T: Default> Clone for Scratch<T> {
    fn clone(&self) -> Self {
        Scratch(T::default())
    }
}

impl<T> std::fmt::Debug for Scratch<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scratch")
    }
}

/// Emptied vectors of one element type kept for reuse, at most `MAX` of
/// them, each with room for at most `ROOM` elements: `take` hands out one
/// (empty, with the room it had), `put` takes one back. A steady run then
/// allocates none of them per event, provided `MAX` covers how many are out
/// at once; `ROOM` keeps a burst of large ones (a producer's backlog sent
/// after an outage) from staying in memory. Holds no state of the world;
/// its owners keep it in a [`Scratch`].
pub struct Spare<T, const MAX: usize = 16, const ROOM: usize = { usize::MAX }>(Vec<Vec<T>>);

impl<T, const MAX: usize, const ROOM: usize> Default for Spare<T, MAX, ROOM> {
    fn default() -> Self {
        Spare(Vec::new())
    }
}

impl<T, const MAX: usize, const ROOM: usize> Spare<T, MAX, ROOM> {
    /// An empty vector, reused when one was put back.
    pub fn take(&mut self) -> Vec<T> {
        self.0.pop().unwrap_or_default()
    }

    /// `v`, emptied, kept for the next `take` (dropped when `MAX` are kept
    /// already, or when it never had room or has more than `ROOM`).
    pub fn put(&mut self, mut v: Vec<T>) {
        if self.0.len() < MAX && (1..=ROOM).contains(&v.capacity()) {
            v.clear();
            self.0.push(v);
        }
    }
}

/// `v` as 16 lowercase hex digits, as `format!("{v:016x}")` writes it: the
/// report writes one per replica (60,000 on a 20,000-partition cluster),
/// where the formatter's padding machinery cost ~1,100 instructions each;
/// the trace hash writes its 128 bits as two.
pub fn hex16(v: u64, out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(16);
    for shift in (0..16).rev() {
        out.push(DIGITS[((v >> (shift * 4)) & 0xf) as usize] as char);
    }
}

/// `Rc::make_mut` without its weak-pointer case (nothing here makes weak
/// pointers), which keeps the page's wasm smaller: `rc`'s value, copied
/// first when a snapshot shares it.
#[inline]
pub fn cow<T: Clone>(rc: &mut Rc<T>) -> &mut T {
    if Rc::strong_count(rc) != 1 {
        unshare(rc);
    }
    match Rc::get_mut(rc) {
        Some(x) => x,
        None => unreachable!("a fresh Rc is unique"),
    }
}

/// The copy [`cow`] makes, out of line: a value is shared only until its
/// first change after a snapshot, so the caller's fast path stays small
/// enough to inline (a broker looks up a replica this way per partition of
/// every fetch).
#[cold]
#[inline(never)]
fn unshare<T: Clone>(rc: &mut Rc<T>) {
    *rc = Rc::new(T::clone(rc));
}

/// [`cow`] for a slice in its `Rc`'s own block (a page of a dense table):
/// `rc`'s items, copied first when a snapshot shares them.
#[inline]
pub fn cow_slice<T: Clone>(rc: &mut Rc<[T]>) -> &mut [T] {
    if Rc::strong_count(rc) != 1 {
        unshare_slice(rc);
    }
    match Rc::get_mut(rc) {
        Some(x) => x,
        None => unreachable!("a fresh Rc is unique"),
    }
}

#[cold]
#[inline(never)]
fn unshare_slice<T: Clone>(rc: &mut Rc<[T]>) {
    *rc = Rc::from(&rc[..]);
}

/// A vector whose chunks of `N` items are shared between clones, the last,
/// partial one included, and an append after a clone copies nothing.
///
/// Each chunk is `N` write-once cells. A clone keeps its own length, so it
/// never reads a cell past it: when one side appends, it fills the next cell
/// of the shared chunk in place, and the other side does not see it. Only
/// when a side finds its next cell already filled (the other side appended
/// there first, or this side was cut back by `truncate`) does it copy the
/// chunk's items before that cell into a chunk of its own (issue 27: logs,
/// the ledgers and the index grow at every fetch round, and copying each
/// partial chunk they grew was most of what a snapshot of a large world
/// held alone a second later).
#[derive(Debug)]
pub struct SharedVec<T, const N: usize> {
    chunks: Vec<Rc<Chunk<T, N>>>,
    len: usize,
}

/// `N` write-once cells.
type Chunk<T, const N: usize> = [OnceCell<T>; N];

fn empty_chunk<T, const N: usize>() -> Rc<Chunk<T, N>> {
    Rc::new(std::array::from_fn(|_| OnceCell::new()))
}

impl<T, const N: usize> Clone for SharedVec<T, N> {
    fn clone(&self) -> Self {
        SharedVec {
            chunks: self.chunks.clone(),
            len: self.len,
        }
    }
}

impl<T, const N: usize> Default for SharedVec<T, N> {
    fn default() -> Self {
        SharedVec {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone, const N: usize> SharedVec<T, N> {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, item: T) {
        self.push_unless_there(item, |_, _| false);
    }

    /// `push(item)`, except that a next cell already filled with an item
    /// `same` as `item` is taken as it is (see `push_matching`).
    #[inline]
    fn push_unless_there(&mut self, item: T, same: impl Fn(&T, &T) -> bool) {
        let at = self.len % N;
        if at == 0 {
            // A new chunk; a chunk past the length (left by a truncate) is
            // dropped first.
            self.chunks.truncate(self.len / N);
            self.chunks.push(empty_chunk());
        }
        let Some(last) = self.chunks.last_mut() else {
            unreachable!("a chunk was pushed above when the length was a multiple of N")
        };
        if let Err(item) = last[at].set(item) {
            if !last[at].get().is_some_and(|there| same(there, &item)) {
                // Filled by a clone (or before a truncate) with another
                // item: take the items this side has into a chunk of its own.
                let own: Chunk<T, N> = std::array::from_fn(|i| match i.cmp(&at) {
                    std::cmp::Ordering::Less => last[i].clone(),
                    std::cmp::Ordering::Equal => OnceCell::from(item.clone()),
                    std::cmp::Ordering::Greater => OnceCell::new(),
                });
                *last = Rc::new(own);
            }
        }
        self.len += 1;
    }

    /// One division finds the chunk.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        self.chunks.get(i / N).and_then(|c| c[i % N].get())
    }

    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    pub fn iter(&self) -> Iter<'_, Self> {
        self.range(0, usize::MAX)
    }

    /// The items at `from..to` (clamped to the length), in order.
    pub fn range(&self, from: usize, to: usize) -> Iter<'_, Self> {
        let back = to.min(self.len());
        Iter {
            v: self,
            front: from.min(back),
            back,
        }
    }

    /// The number of leading items `pred` holds for (they must come first,
    /// as in `slice::partition_point`).
    pub fn partition_point(&self, pred: impl Fn(&T) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid).is_some_and(&pred) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Keep the first `len` items. Chunks past the new end are dropped; the
    /// one cut in the middle stays shared, and the next append past the cut
    /// copies its kept items (the cell it would fill is still filled).
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        self.chunks.truncate(len.div_ceil(N));
        self.len = len;
    }
}

/// A [`SharedVec`] written against another one (`base`): how many of
/// `base`'s first chunks it shares, the chunks after those, and its length.
/// A checkpoint keeps a log this way against an older checkpoint's copy of
/// the same log (`crate::checkpoint`): the chunks in common are not held
/// twice, and the vector is rebuilt exactly, chunk for chunk.
#[derive(Debug)]
pub struct SharedVecDelta<T, const N: usize> {
    common: u32,
    len: u32,
    after: Box<[Rc<Chunk<T, N>>]>,
}

impl<T, const N: usize> SharedVec<T, N> {
    /// This vector written against `base` ([`SharedVecDelta`]); `None` past
    /// 2^32 items.
    pub fn delta_from(&self, base: &Self) -> Option<SharedVecDelta<T, N>> {
        let common = self
            .chunks
            .iter()
            .zip(&base.chunks)
            .take_while(|(a, b)| Rc::ptr_eq(a, b))
            .count();
        Some(SharedVecDelta {
            common: u32::try_from(common).ok()?,
            len: u32::try_from(self.len).ok()?,
            after: self.chunks[common..].iter().map(Rc::clone).collect(),
        })
    }

    /// The vector `delta` was taken from, from the `base` it was taken
    /// against: the same chunks (the same `Rc`s) and the same length.
    pub fn rebuilt(base: &Self, delta: &SharedVecDelta<T, N>) -> Self {
        let common = delta.common as usize;
        let mut chunks = Vec::with_capacity(common + delta.after.len());
        chunks.extend(base.chunks[..common].iter().map(Rc::clone));
        chunks.extend(delta.after.iter().map(Rc::clone));
        SharedVec {
            chunks,
            len: delta.len as usize,
        }
    }

    /// Whether `self` and `other` are the same chunks and length (what a
    /// rebuilt vector must be; tests and checks).
    pub fn same_as(&self, other: &Self) -> bool {
        self.len == other.len
            && self.chunks.len() == other.chunks.len()
            && self
                .chunks
                .iter()
                .zip(&other.chunks)
                .all(|(a, b)| Rc::ptr_eq(a, b))
    }
}

/// A chunk of a [`SharedVec`], handed to another vector that appends the
/// same items (a follower's log, the records its leader sent it): with it,
/// [`SharedVec::push_matching`] takes the sender's chunk where it would start
/// one of its own, and every later item of that chunk is found already in
/// place. Followers' logs thus hold no copy of their leaders' records (on the
/// 20,000-partition bench, two of every three record cells). Cells are
/// write-once, and an item is taken from a cell only when it equals the one
/// pushed, so what a vector holds is the same either way.
#[derive(Debug)]
pub struct SharedChunk<T, const N: usize>(Rc<Chunk<T, N>>);

impl<T, const N: usize> Clone for SharedChunk<T, N> {
    fn clone(&self) -> Self {
        SharedChunk(Rc::clone(&self.0))
    }
}

impl<T: Clone + PartialEq, const N: usize> SharedVec<T, N> {
    /// The first chunk that starts at an index in `from..to` (clamped to the
    /// length): where a vector appending those items starts a chunk.
    pub fn chunk_starting_in(&self, from: usize, to: usize) -> Option<SharedChunk<T, N>> {
        let c = from.div_ceil(N);
        if c >= to.min(self.len).div_ceil(N) {
            return None;
        }
        self.chunks
            .get(c)
            .map(|chunk| SharedChunk(Rc::clone(chunk)))
    }

    /// How many of this vector's chunks are `other`'s too (at the same index).
    pub fn chunks_shared_with(&self, other: &Self) -> usize {
        self.chunks
            .iter()
            .zip(&other.chunks)
            .filter(|(a, b)| Rc::ptr_eq(a, b))
            .count()
    }

    /// `push(item)`, except that an item already in place is taken rather
    /// than copied: where a chunk would start, `sent` when its first cell
    /// holds `item`; past that, a filled next cell that holds `item` (filled
    /// by a vector this chunk is shared with, or left by a truncate and now
    /// appended again). A cell holding an equal item is as good as writing
    /// it, wherever the chunk came from.
    pub fn push_matching(&mut self, item: T, sent: Option<&SharedChunk<T, N>>) {
        if self.len % N == 0 {
            if let Some(src) = sent.filter(|src| src.0[0].get() == Some(&item)) {
                // At a chunk boundary the list ends at the length (`truncate`
                // keeps `len.div_ceil(N)` chunks): the taken one goes last.
                self.chunks.push(Rc::clone(&src.0));
                self.len += 1;
                return;
            }
        }
        self.push_unless_there(item, |there, item| there == item);
    }
}

/// A vector kept in fixed-size pages of `N` items, each shared by every
/// clone and copied on its first change after one (issue 27): a snapshot
/// costs the page pointers, and what the world changes after it costs the
/// pages it touched, not a copy per item. The items of a page sit side by
/// side, so a loop over them reads memory in order.
///
/// Every page but the last holds exactly `N` items.
#[derive(Debug)]
pub struct Pages<T, const N: usize> {
    pages: Vec<Rc<Vec<T>>>,
    len: usize,
}

impl<T, const N: usize> Clone for Pages<T, N> {
    fn clone(&self) -> Self {
        Pages {
            pages: self.pages.clone(),
            len: self.len,
        }
    }
}

impl<T, const N: usize> Default for Pages<T, N> {
    fn default() -> Self {
        Pages {
            pages: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone, const N: usize> Pages<T, N> {
    /// The items of `v`, in pages.
    pub fn from_vec(v: Vec<T>) -> Self {
        Pages {
            len: v.len(),
            pages: v.chunks(N).map(|page| Rc::new(page.to_vec())).collect(),
        }
    }

    /// `len` copies of `value`.
    pub fn filled(len: usize, value: T) -> Self {
        Self::from_vec(vec![value; len])
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        self.pages.get(i / N).and_then(|page| page.get(i % N))
    }

    /// Item `i`, its page made unshared first (copied if a clone shares it).
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        cow(&mut self.pages[i / N]).get_mut(i % N)
    }

    pub fn iter(&self) -> Iter<'_, Self> {
        self.into_iter()
    }

    /// Every item made mutable: every page copied that a clone shares.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.pages.iter_mut().flat_map(|page| cow(page).iter_mut())
    }

    /// Whether page `k` of the two is one block.
    pub fn shares_page(&self, other: &Self, k: usize) -> bool {
        match (self.pages.get(k), other.pages.get(k)) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// `pages[i]` reads item `i`, panicking past the end as a slice does.
impl<T: Clone, const N: usize> std::ops::Index<usize> for Pages<T, N> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.pages[i / N][i % N]
    }
}

/// `pages[i] = x` copies item `i`'s page first if a clone shares it.
impl<T: Clone, const N: usize> std::ops::IndexMut<usize> for Pages<T, N> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut cow(&mut self.pages[i / N])[i % N]
    }
}

impl<'a, T: Clone, const N: usize> IntoIterator for &'a Pages<T, N> {
    type Item = &'a T;
    type IntoIter = Iter<'a, Pages<T, N>>;

    fn into_iter(self) -> Self::IntoIter {
        Iter {
            v: self,
            front: 0,
            back: self.len,
        }
    }
}

/// A vector that answers by index ([`SharedVec`], [`Pages`]), so that both
/// share one small iterator (a `flat_map` over pages was inlined at every
/// loop over them and cost the page's wasm kilobytes).
pub trait Indexed {
    type Item;
    fn item(&self, i: usize) -> Option<&Self::Item>;
}

impl<T: Clone, const N: usize> Indexed for SharedVec<T, N> {
    type Item = T;
    fn item(&self, i: usize) -> Option<&T> {
        self.get(i)
    }
}

impl<T: Clone, const N: usize> Indexed for Pages<T, N> {
    type Item = T;
    fn item(&self, i: usize) -> Option<&T> {
        self.get(i)
    }
}

/// The items of an [`Indexed`] vector from `front` up to `back`.
pub struct Iter<'a, V> {
    v: &'a V,
    front: usize,
    back: usize,
}

impl<'a, V: Indexed> Iterator for Iter<'a, V> {
    type Item = &'a V::Item;

    fn next(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        self.v.item(self.front - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl<'a, V: Indexed> DoubleEndedIterator for Iter<'a, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        self.v.item(self.back)
    }
}

impl<T: Clone, const N: usize> FromIterator<T> for SharedVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = SharedVec::new();
        for x in iter {
            v.push(x);
        }
        v
    }
}

/// The containers as a world's bytes (`crate::snapshot`): each holds its
/// items, not how it shares them. A vector read back shares nothing yet,
/// and holds the same items in the same order, which is all the simulation
/// reads of it (the docs above: sharing never changes an answer).
#[cfg(world_snapshot)]
mod as_bytes {
    use super::{OnceCell, Pages, Rc, Scratch, SharedChunk, SharedVec};
    use borsh::{BorshDeserialize, BorshSerialize};
    use std::io::{Read, Result, Write};

    /// A buffer kept for reuse holds no state: nothing is written, and it
    /// comes back empty.
    impl<T> BorshSerialize for Scratch<T> {
        fn serialize<W: Write>(&self, _: &mut W) -> Result<()> {
            Ok(())
        }
    }
    impl<T: Default> BorshDeserialize for Scratch<T> {
        fn deserialize_reader<R: Read>(_: &mut R) -> Result<Self> {
            Ok(Scratch(T::default()))
        }
    }

    fn write_items<'a, T: BorshSerialize + 'a, W: Write>(
        len: usize,
        items: impl Iterator<Item = &'a T>,
        w: &mut W,
    ) -> Result<()> {
        (len as u64).serialize(w)?;
        for item in items {
            item.serialize(w)?;
        }
        Ok(())
    }

    fn read_len<R: Read>(r: &mut R) -> Result<usize> {
        usize::try_from(u64::deserialize_reader(r)?)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "length too large"))
    }

    impl<T: BorshSerialize + Clone, const N: usize> BorshSerialize for SharedVec<T, N> {
        fn serialize<W: Write>(&self, w: &mut W) -> Result<()> {
            write_items(self.len(), self.iter(), w)
        }
    }
    impl<T: BorshDeserialize + Clone, const N: usize> BorshDeserialize for SharedVec<T, N> {
        fn deserialize_reader<R: Read>(r: &mut R) -> Result<Self> {
            let mut v = SharedVec::new();
            for _ in 0..read_len(r)? {
                v.push(T::deserialize_reader(r)?);
            }
            Ok(v)
        }
    }

    /// A chunk in flight (a fetch response's) keeps its filled cells.
    impl<T: BorshSerialize, const N: usize> BorshSerialize for SharedChunk<T, N> {
        fn serialize<W: Write>(&self, w: &mut W) -> Result<()> {
            for cell in self.0.iter() {
                cell.get().serialize(w)?;
            }
            Ok(())
        }
    }
    impl<T: BorshDeserialize, const N: usize> BorshDeserialize for SharedChunk<T, N> {
        fn deserialize_reader<R: Read>(r: &mut R) -> Result<Self> {
            let mut cells: Vec<OnceCell<T>> = Vec::with_capacity(N);
            for _ in 0..N {
                cells.push(match Option::<T>::deserialize_reader(r)? {
                    Some(item) => OnceCell::from(item),
                    None => OnceCell::new(),
                });
            }
            let mut cells = cells.into_iter();
            Ok(SharedChunk(Rc::new(std::array::from_fn(|_| {
                cells.next().unwrap_or_default()
            }))))
        }
    }

    impl<T: BorshSerialize + Clone, const N: usize> BorshSerialize for Pages<T, N> {
        fn serialize<W: Write>(&self, w: &mut W) -> Result<()> {
            write_items(self.len(), self.iter(), w)
        }
    }
    impl<T: BorshDeserialize + Clone, const N: usize> BorshDeserialize for Pages<T, N> {
        fn deserialize_reader<R: Read>(r: &mut R) -> Result<Self> {
            let n = read_len(r)?;
            let mut v = Vec::with_capacity(n.min(1 << 20));
            for _ in 0..n {
                v.push(T::deserialize_reader(r)?);
            }
            Ok(Pages::from_vec(v))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex16_writes_what_the_formatter_writes() {
        for v in [
            0,
            1,
            0xf,
            0x10,
            0xdead_beef,
            u64::MAX - 1,
            u64::MAX,
            0x0123_4567_89ab_cdef,
        ] {
            let mut s = String::new();
            hex16(v, &mut s);
            assert_eq!(s, format!("{v:016x}"), "{v}");
        }
    }

    /// Every operation answers as a `Vec` would, across chunk boundaries, and
    /// a clone taken before a change does not see it.
    #[test]
    fn shared_vec_behaves_as_a_vec_and_clones_are_independent() {
        let mut v: SharedVec<u32, 4> = SharedVec::new();
        let mut reference: Vec<u32> = Vec::new();
        let mut snapshots: Vec<(SharedVec<u32, 4>, Vec<u32>)> = Vec::new();
        for i in 0..300u32 {
            let x = i.wrapping_mul(2_654_435_761) % 23;
            if x < 17 {
                v.push(i);
                reference.push(i);
            } else if x < 20 {
                let to = (i as usize * 7) % (reference.len() + 1);
                v.truncate(to);
                reference.truncate(to);
            } else {
                v.truncate(0);
                reference.truncate(0);
            }
            if i % 11 == 0 {
                snapshots.push((v.clone(), reference.clone()));
            }
            assert_eq!(v.len(), reference.len());
            for k in [0, 3, 7, 100, 250] {
                assert_eq!(
                    v.partition_point(|x| *x < k),
                    reference.partition_point(|x| *x < k)
                );
            }
            assert_eq!(v.last(), reference.last());
            assert!(v.iter().eq(reference.iter()));
            for a in 0..=reference.len() + 1 {
                assert_eq!(v.get(a), reference.get(a));
                let b = (a * 3 + 1).min(reference.len() + 2);
                let want: Vec<&u32> = reference.iter().skip(a).take(b.saturating_sub(a)).collect();
                assert!(v.range(a, b).eq(want.into_iter()), "range {a}..{b}");
            }
        }
        for (s, r) in snapshots {
            assert!(s.iter().eq(r.iter()));
        }
    }

    /// Pages answer as a `Vec` does under reads and sets, across page
    /// boundaries, and a clone taken before a change keeps what it saw.
    #[test]
    fn pages_behave_as_a_vec_and_clones_are_independent() {
        let mut reference: Vec<u32> = (0..37).collect();
        let mut v: Pages<u32, 4> = Pages::from_vec(reference.clone());
        let mut snapshots: Vec<(Pages<u32, 4>, Vec<u32>)> = Vec::new();
        for i in 0..400u32 {
            let at = (i as usize * 7) % reference.len();
            if i % 2 == 0 {
                if let Some(item) = v.get_mut(at) {
                    *item = i;
                }
            } else {
                v[at] = i;
            }
            reference[at] = i;
            if i % 9 == 0 {
                snapshots.push((v.clone(), reference.clone()));
            }
            assert_eq!(v.len(), reference.len());
            assert!(v.iter().eq(reference.iter()));
            assert!(v.iter().rev().eq(reference.iter().rev()));
            for a in 0..=reference.len() + 1 {
                assert_eq!(v.get(a), reference.get(a));
            }
            assert_eq!(v.get_mut(reference.len()), None);
        }
        for (s, r) in snapshots {
            assert!(s.iter().eq(r.iter()));
        }
        assert!(Pages::<u8, 4>::filled(6, 9).iter().eq([9u8; 6].iter()));
    }

    /// A change copies only the page it falls in: the clone still shares
    /// every other page.
    #[test]
    fn a_change_copies_only_its_page() {
        let mut v: Pages<u64, 8> = Pages::from_vec((0..40).collect());
        let w = v.clone();
        if let Some(x) = v.get_mut(17) {
            *x = 1000;
        }
        let shared: Vec<bool> = (0..5)
            .map(|k| Rc::ptr_eq(&v.pages[k], &w.pages[k]))
            .collect();
        assert_eq!(shared, [true, true, false, true, true]);
        assert_eq!(w.get(17), Some(&17));
        assert_eq!(v.get(17), Some(&1000));
    }

    /// A follower's vector appending what a leader's holds, item by item as
    /// a fetch hands them over, ends up holding the leader's chunks: each
    /// from where it would start one, with the chunk it was sent.
    #[test]
    fn a_vector_appending_another_ones_items_with_its_chunks_shares_them() {
        let leader: SharedVec<u64, 4> = (0..14).collect();
        let mut follower: SharedVec<u64, 4> = SharedVec::new();
        // Fetches of 3 items at a time, each with the chunk starting among them.
        for from in (0..14).step_by(3) {
            let sent = leader.chunk_starting_in(from, from + 3);
            for i in from..(from + 3).min(14) {
                follower.push_matching(i as u64, sent.as_ref());
            }
        }
        assert!(follower.iter().eq(leader.iter()));
        for k in 0..4 {
            assert!(
                Rc::ptr_eq(&follower.chunks[k], &leader.chunks[k]),
                "chunk {k}"
            );
        }
        // Nothing starts a chunk among items 5..7, and nothing past the end.
        assert!(leader.chunk_starting_in(5, 8).is_none());
        assert!(leader.chunk_starting_in(13, 40).is_none());
        assert!(leader.chunk_starting_in(7, 9).is_some());
    }

    /// `push_matching` keeps exactly the items pushed, whatever it is sent:
    /// a chunk whose first item differs is not taken, a filled cell with
    /// another item is copied away from (the sender keeps its own), and one
    /// with the same item is taken in place.
    #[test]
    fn push_matching_holds_the_items_pushed_whatever_chunk_it_is_sent() {
        let leader: SharedVec<u64, 4> = (10..20).collect();
        let wrong = leader.chunk_starting_in(4, 8);
        let mut v: SharedVec<u64, 4> = (0..4).collect();
        // Sent a chunk whose first item is 14, pushing 4: its own chunk.
        v.push_matching(4, wrong.as_ref());
        assert!(!Rc::ptr_eq(&v.chunks[1], &leader.chunks[1]));
        // Sent a chunk whose first item is the one pushed at a boundary: taken.
        let mut w: SharedVec<u64, 4> = (0..4).collect();
        w.push_matching(14, wrong.as_ref());
        w.push_matching(15, None);
        w.push_matching(99, None);
        assert!(w.iter().eq([0, 1, 2, 3, 14, 15, 99].iter()));
        assert!(leader.iter().eq((10..20).collect::<Vec<_>>().iter()));
        assert_eq!(leader.get(6), Some(&16));
        // A truncated vector appending the same items again copies nothing.
        let mut x: SharedVec<u64, 4> = (0..10).collect();
        let keep = x.clone();
        x.truncate(6);
        x.push_matching(6, None);
        x.push_matching(7, None);
        assert!(Rc::ptr_eq(&x.chunks[1], &keep.chunks[1]));
        x.push_matching(70, None);
        assert!(x.iter().eq([0, 1, 2, 3, 4, 5, 6, 7, 70].iter()));
        assert!(keep.iter().eq((0..10).collect::<Vec<_>>().iter()));
    }

    #[test]
    fn chunks_are_shared_by_clones_and_an_append_copies_nothing() {
        let mut v: SharedVec<u64, 8> = (0..20).collect();
        let w = v.clone();
        v.push(20);
        // The partial last chunk is still shared: the append filled its next
        // cell in place, past the clone's length.
        for k in 0..3 {
            assert!(Rc::ptr_eq(&v.chunks[k], &w.chunks[k]));
        }
        assert_eq!(w.len(), 20);
        assert_eq!(w.get(20), None);
        assert_eq!(v.get(20), Some(&20));
    }

    /// Two sides appending after a clone, or appending after cutting back a
    /// shared chunk, each keep their own items.
    #[test]
    fn clones_that_append_different_items_each_keep_theirs() {
        let mut a: SharedVec<u32, 4> = (0..6).collect();
        let mut b = a.clone();
        a.push(100);
        b.push(200);
        b.push(201);
        a.truncate(5);
        a.push(300);
        assert!(a.iter().eq([0, 1, 2, 3, 4, 300].iter()));
        assert!(b.iter().eq([0, 1, 2, 3, 4, 5, 200, 201].iter()));
        // The full first chunk is still shared by both.
        assert!(Rc::ptr_eq(&a.chunks[0], &b.chunks[0]));
        let c = b.clone();
        b.truncate(2);
        b.push(7);
        assert!(c.iter().eq([0, 1, 2, 3, 4, 5, 200, 201].iter()));
        assert!(b.iter().eq([0, 1, 7].iter()));
    }

    /// `sort_slim` orders as the standard sort does, duplicates and all.
    #[test]
    fn sort_slim_agrees_with_the_standard_sort() {
        for n in 0..70u64 {
            let mut v: Vec<(u64, bool)> = (0..n)
                .map(|i| (i.wrapping_mul(2_654_435_761) % 13, i % 3 == 0))
                .collect();
            let mut want = v.clone();
            want.sort();
            sort_slim(&mut v);
            assert_eq!(v, want, "n = {n}");
        }
    }

    /// A spare vector comes back empty with the room it had; at most `MAX`
    /// are kept, and one that never had room is not kept at all.
    #[test]
    fn spares_hand_back_emptied_vectors_with_their_room_up_to_their_limit() {
        let mut spare: Spare<u64, 2> = Spare::default();
        assert_eq!(spare.take().capacity(), 0, "nothing put back yet");
        let mut v = Vec::with_capacity(40);
        v.extend([1, 2, 3]);
        spare.put(v);
        spare.put(Vec::new());
        let again = spare.take();
        assert!(again.is_empty());
        assert!(again.capacity() >= 40, "the room it had");
        assert_eq!(spare.take().capacity(), 0, "the empty one was not kept");
        for n in [10, 20, 30] {
            spare.put(Vec::with_capacity(n));
        }
        let kept: Vec<usize> = (0..3).map(|_| spare.take().capacity()).collect();
        assert!(
            kept[0] >= 20 && kept[1] >= 10,
            "the first two kept: {kept:?}"
        );
        assert_eq!(kept[2], 0, "the third was over the limit: {kept:?}");
        // With room capped, a large one goes back to the allocator.
        let mut small: Spare<u64, 4, 32> = Spare::default();
        small.put(Vec::with_capacity(32));
        small.put(Vec::with_capacity(33));
        assert_eq!(small.take().capacity(), 32, "the one within ROOM");
        assert_eq!(small.take().capacity(), 0, "the larger was not kept");
    }

    /// A vector written against an older clone of itself keeps the chunks
    /// they share as the older one's and only the chunks after them, and
    /// is rebuilt chunk for chunk; where the older clone wrote another item
    /// into a shared chunk (so this side copied it), sharing stops there.
    #[test]
    fn a_vector_written_against_an_older_clone_keeps_only_the_chunks_after_theirs() {
        let mut v: SharedVec<u32, 4> = SharedVec::new();
        (0..6).for_each(|i| v.push(i));
        let older = v.clone();
        (6..13).for_each(|i| v.push(i));
        let d = v.delta_from(&older).expect("short");
        assert_eq!((d.common, d.after.len(), d.len), (2, 2, 13));
        let back = SharedVec::rebuilt(&older, &d);
        assert!(back.same_as(&v));
        assert_eq!(
            back.iter().copied().collect::<Vec<_>>(),
            (0..13).collect::<Vec<_>>()
        );
        assert!(!older.same_as(&v));

        // The older clone appends first at index 6, in the chunk both hold:
        // this side's next push there copies that chunk.
        let mut a: SharedVec<u32, 4> = SharedVec::new();
        (0..6).for_each(|i| a.push(i));
        let mut b = a.clone();
        b.push(100);
        a.push(6);
        let d = a.delta_from(&b).expect("short");
        assert_eq!((d.common, d.after.len()), (1, 1));
        assert!(SharedVec::rebuilt(&b, &d).same_as(&a));
    }
}
