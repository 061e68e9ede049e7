//! What each leader knows of its followers, for all the partitions a broker
//! leads, in dense pages that the world's snapshots share (issue 27).
//!
//! A leader records every follower fetch (Replica.updateFetchStateOrThrow):
//! the follower's log end, when it last fetched and last caught up, the
//! leader's log end at that fetch, the broker epoch the fetch carried. On a
//! busy cluster that changes for nearly every partition a broker leads in
//! every fetch round. Kept inside each [`Replica`](super::partition::Replica),
//! that state made the whole replica (its log's index, its ISR pointers …)
//! be copied on its first change after a snapshot, even when its log and high
//! watermark had not moved: on the 20,000-partition bench half the leaders a
//! second of running copied were copied for this alone.
//!
//! So each broker keeps the states in a [`FollowerTable`]: one
//! [`FollowerState`] per (led partition, follower), side by side in pages of
//! [`PAGE`] entries. A replica holds only its [`Lanes`] — where its followers'
//! entries are. A snapshot shares every page; a change copies the page it
//! touches (once per snapshot), not the replica. A fetch round walks a
//! broker's led partitions in order, and their lanes are laid out in that
//! order, so it reads the table front to back.
//!
//! Nothing here changes what the simulation computes: a replica reads and
//! writes its followers' states exactly as it did in its own vector.

use std::rc::Rc;

use super::partition::FollowerState;
use super::shared::cow_slice;

/// Entries per page: 64 × 48 bytes, 3 KiB copied for the first change after
/// a snapshot (a partition with more followers than this gets a page of its
/// own, as large as it needs).
pub const PAGE: usize = 64;

/// Where one replica's followers' states are in its broker's table: entries
/// `at..at + len` of page `page`, with room for `cap` (a replica that leads
/// again with as many followers or fewer reuses its room).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Lanes {
    page: u32,
    at: u16,
    len: u16,
    cap: u16,
}

impl Lanes {
    /// No followers (not leading, or never led).
    pub const NONE: Lanes = Lanes {
        page: 0,
        at: 0,
        len: 0,
        cap: 0,
    };

    pub fn len(self) -> usize {
        self.len as usize
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The same room, holding no followers (the replica stopped leading).
    pub fn emptied(self) -> Lanes {
        Lanes { len: 0, ..self }
    }
}

/// One broker's leaders' follower states, in shared pages. A page is a
/// slice in its `Rc`'s own block (one pointer to follow, not two); only the
/// last page has room left, `room` entries from its end.
#[derive(Clone, Debug, Default)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct FollowerTable {
    pages: Vec<Rc<[FollowerState]>>,
    room: usize,
}

impl FollowerTable {
    /// The states `lanes` names, in the leader's replica order.
    #[inline]
    pub fn of(&self, lanes: Lanes) -> &[FollowerState] {
        let at = lanes.at as usize;
        self.pages
            .get(lanes.page as usize)
            .and_then(|page| page.get(at..at + lanes.len()))
            .unwrap_or(&[])
    }

    /// The states `lanes` names, made writable: their page is copied first
    /// if a snapshot shares it.
    #[inline]
    pub fn of_mut(&mut self, lanes: Lanes) -> &mut [FollowerState] {
        // No followers: no page to copy for them.
        if lanes.is_empty() {
            return &mut [];
        }
        let at = lanes.at as usize;
        match self.pages.get_mut(lanes.page as usize) {
            Some(page) => cow_slice(page)
                .get_mut(at..at + lanes.len())
                .unwrap_or(&mut []),
            None => &mut [],
        }
    }

    /// Room for `states`, written there: `lanes`' own room when it is large
    /// enough, else new room at the end of the table (the old room is left
    /// unused: a replica needs more only when its replica set grew, which
    /// a reassignment does, rarely). Returns the lanes that now hold them.
    pub fn place(&mut self, lanes: Lanes, states: &[FollowerState]) -> Lanes {
        let n = states.len();
        if n == 0 {
            return lanes.emptied();
        }
        let lanes = if n <= lanes.cap as usize {
            Lanes {
                len: n as u16,
                ..lanes
            }
        } else {
            self.grow(n)
        };
        self.of_mut(lanes).clone_from_slice(states);
        lanes
    }

    /// New room for `n` states at the end of the table, in the last page
    /// when it has that much left, else in a new page.
    fn grow(&mut self, n: usize) -> Lanes {
        if self.pages.is_empty() || self.room < n {
            let size = PAGE.max(n);
            self.pages
                .push(Rc::from(vec![FollowerState::default(); size]));
            self.room = size;
        }
        let page = self.pages.len() - 1;
        let at = self.pages[page].len() - self.room;
        self.room -= n;
        // A replica has at most one follower per broker and a scenario at
        // most `scenario::MAX_BROKERS` (1,000) brokers: a page, and so every
        // offset into it, fits in a u16.
        Lanes {
            page: page as u32,
            at: at as u16,
            len: n as u16,
            cap: n as u16,
        }
    }

    /// Entries given to replicas so far, in use or not.
    pub fn placed(&self) -> usize {
        self.pages.iter().map(|p| p.len()).sum::<usize>() - self.room
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::partition::Opt64;

    fn state(broker: u32, leo: u64) -> FollowerState {
        FollowerState {
            broker,
            log_end_offset: Opt64::some(leo),
            ..FollowerState::default()
        }
    }

    #[test]
    fn each_leaders_followers_get_their_own_lanes_side_by_side() {
        let mut t = FollowerTable::default();
        let a = t.place(Lanes::NONE, &[state(2, 5), state(3, 4)]);
        let b = t.place(Lanes::NONE, &[state(1, 9), state(3, 8)]);
        assert_eq!(t.of(a), &[state(2, 5), state(3, 4)]);
        assert_eq!(t.of(b), &[state(1, 9), state(3, 8)]);
        assert_eq!(t.placed(), 4, "packed, no gaps");
        t.of_mut(a)[1].log_end_offset = Opt64::some(7);
        assert_eq!(t.of(a)[1].log_end_offset.get(), Some(7));
        assert_eq!(t.of(b), &[state(1, 9), state(3, 8)], "b untouched");
    }

    #[test]
    fn a_replica_that_leads_again_reuses_its_room_unless_it_needs_more() {
        let mut t = FollowerTable::default();
        let a = t.place(Lanes::NONE, &[state(2, 5), state(3, 4)]);
        let stopped = a.emptied();
        assert!(t.of(stopped).is_empty());
        let again = t.place(stopped, &[state(3, 6)]);
        assert_eq!(t.of(again), &[state(3, 6)]);
        assert_eq!(t.placed(), 2, "its own room, reused");
        let grown = t.place(again, &[state(2, 1), state(3, 2), state(4, 3)]);
        assert_eq!(t.of(grown), &[state(2, 1), state(3, 2), state(4, 3)]);
        assert_eq!(t.placed(), 5, "new room for three at the end");
        assert_eq!(t.place(grown, &[]), grown.emptied());
    }

    #[test]
    fn lanes_never_straddle_a_page_and_a_large_set_gets_a_page_of_its_own() {
        let mut t = FollowerTable::default();
        let mut all = Vec::new();
        for i in 0..40 {
            all.push(t.place(Lanes::NONE, &[state(1, i), state(2, i)]));
        }
        // 32 pairs fill the first page; the next pair starts a second one.
        assert_eq!(t.pages.len(), 2);
        assert_eq!(all[31].page, 0);
        assert_eq!((all[32].page, all[32].at), (1, 0));
        let big: Vec<_> = (0..100).map(|b| state(b, 1)).collect();
        let l = t.place(Lanes::NONE, &big);
        assert_eq!(t.of(l), big.as_slice());
        assert_eq!(t.pages.len(), 3);
        for (i, lanes) in all.iter().enumerate() {
            assert_eq!(t.of(*lanes)[1], state(2, i as u64));
        }
    }

    #[test]
    fn a_snapshot_keeps_its_states_while_the_live_table_changes_a_copy_of_the_page() {
        let mut t = FollowerTable::default();
        let a = t.place(Lanes::NONE, &[state(2, 5)]);
        let snapshot = t.clone();
        t.of_mut(a)[0].log_end_offset = Opt64::some(6);
        assert_eq!(snapshot.of(a)[0].log_end_offset.get(), Some(5));
        assert_eq!(t.of(a)[0].log_end_offset.get(), Some(6));
        assert!(!Rc::ptr_eq(&snapshot.pages[0], &t.pages[0]));
        // Reading does not copy.
        let again = t.clone();
        let _ = again.of(a);
        assert!(Rc::ptr_eq(&again.pages[0], &t.pages[0]));
    }
}
