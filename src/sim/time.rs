//! The simulated clock and the event queue.
//!
//! Time is an integer count of simulated milliseconds; nothing reads a wall
//! clock. Events are ordered by `(time, sequence)`, the sequence being the order
//! in which they were scheduled, so two events at the same millisecond always
//! run in the same order: this is what makes a run reproducible byte for byte.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct Scheduled<E> {
    at: u64,
    /// The rest of the order within a millisecond, in one word so the heap
    /// compares two integers per step (issue 27): the top bit is set for a
    /// late event (it runs after every ordinary event of the same
    /// millisecond), the other 63 bits are the scheduling sequence. Comparing
    /// `(at, order)` is comparing `(at, late, seq)`, since the sequence never
    /// reaches 2^63 (that is 9.2e18 scheduled events).
    order: u64,
    event: E,
}

/// The `order` bit of a late event.
const LATE: u64 = 1 << 63;

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.order == other.order
    }
}
impl<E> Eq for Scheduled<E> {}
impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Scheduled<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.order).cmp(&(self.at, self.order))
    }
}

#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Scheduled<E>>,
    next_seq: u64,
}

/// A queue as a world's bytes (`crate::snapshot`): its events in the heap's
/// order, built into a heap again when read. The heap's order is total
/// (time, then the sequence number every event gets), so the queue read back
/// hands out the same events in the same order.
#[cfg(world_snapshot)]
impl<E: borsh::BorshSerialize> borsh::BorshSerialize for EventQueue<E> {
    fn serialize<W: std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        borsh::BorshSerialize::serialize(self.heap.as_slice(), w)?;
        borsh::BorshSerialize::serialize(&self.next_seq, w)
    }
}

#[cfg(world_snapshot)]
impl<E: borsh::BorshDeserialize> borsh::BorshDeserialize for EventQueue<E> {
    fn deserialize_reader<R: std::io::Read>(r: &mut R) -> std::io::Result<Self> {
        let items: Vec<Scheduled<E>> = borsh::BorshDeserialize::deserialize_reader(r)?;
        Ok(EventQueue {
            heap: BinaryHeap::from(items),
            next_seq: borsh::BorshDeserialize::deserialize_reader(r)?,
        })
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn schedule(&mut self, at: u64, event: E) {
        self.push(at, false, event);
    }

    /// Schedule `event` after every ordinary event due at `at` (scenario
    /// steps: a step at t acts on the world as it is at the end of
    /// millisecond t, exactly like a user's action at t).
    pub fn schedule_late(&mut self, at: u64, event: E) {
        self.push(at, true, event);
    }

    fn push(&mut self, at: u64, late: bool, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Scheduled {
            at,
            order: if late { LATE | seq } else { seq },
            event,
        });
    }

    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|s| s.at)
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|s| (s.at, s.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Drop the pending events `keep` says no to. The others keep their time
    /// and sequence, so they run in exactly the order they would have.
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        self.heap.retain(|s| keep(&s.event));
    }

    /// Every pending event with its due time, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &E)> {
        self.heap.iter().map(|s| (s.at, &s.event))
    }
}

/// Emptied boxes kept for reuse: a message travels in a `Box` so the queue
/// moves small events, and recycling the box saves an allocation and a free
/// per delivered message. Holds no state: the cluster keeps it in a
/// `shared::Scratch`, so a snapshot starts without it.
pub struct BoxPool<T> {
    boxes: Vec<Box<T>>,
}

/// How many emptied boxes a pool keeps.
const MAX_POOLED_BOXES: usize = 1024;

impl<T> Default for BoxPool<T> {
    fn default() -> Self {
        BoxPool { boxes: Vec::new() }
    }
}

impl<T> BoxPool<T> {
    /// `value` in a box, reusing an emptied one when there is one.
    pub fn boxed(&mut self, value: T) -> Box<T> {
        match self.boxes.pop() {
            Some(mut b) => {
                *b = value;
                b
            }
            None => Box::new(value),
        }
    }

    /// Take the value out of `b`, leaving `empty` in it, and keep the box.
    pub fn unbox(&mut self, mut b: Box<T>, empty: T) -> T {
        let value = std::mem::replace(&mut *b, empty);
        if self.boxes.len() < MAX_POOLED_BOXES {
            self.boxes.push(b);
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_at_the_same_time_run_in_scheduling_order() {
        let mut q = EventQueue::default();
        q.schedule(5, "b");
        q.schedule(1, "a");
        q.schedule(5, "c");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(1, "a"), (5, "b"), (5, "c")]);
    }

    #[test]
    fn dropping_events_keeps_the_order_of_the_rest() {
        let mut q = EventQueue::default();
        for (t, e) in [(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (3, 'e'), (1, 'f')] {
            q.schedule(t, e);
        }
        q.schedule_late(1, 'g');
        q.retain(|e| !matches!(e, 'c' | 'f'));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(1, 'b'), (1, 'g'), (2, 'd'), (3, 'a'), (3, 'e')]
        );
    }

    #[test]
    fn late_events_run_after_every_ordinary_event_of_their_millisecond() {
        let mut q = EventQueue::default();
        q.schedule_late(5, "step");
        q.schedule(5, "message");
        q.schedule(6, "next");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(5, "message"), (5, "step"), (6, "next")]);
    }
}
