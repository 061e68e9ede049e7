//! Partition assignors: which member of a consumer group reads which
//! partition. The lab's groups subscribe to one topic, every member to the
//! same one, so each assignor here takes the members and the topic's
//! partition count and returns each member's partitions (aligned with the
//! input, sorted ascending).
//!
//! Four of Kafka 4.4.0's assignors, each checked against Kafka's own class by
//! the vectors in `tests/oracle/*_assignor.jsonl` (`make oracle`,
//! `tests/oracle.rs`):
//!
//! - [`range`]: the classic client-side `RangeAssignor`: members in order,
//!   contiguous ranges, the first `n % m` members one partition more.
//! - [`cooperative_sticky`]: the client-side `CooperativeStickyAssignor`
//!   (KIP-429): keep what each member owned up to its quota, hand the rest
//!   out round-robin, and leave out a partition that changes owner (its old
//!   owner revokes it first; the next rebalance assigns it).
//! - [`uniform`]: the KIP-848 server-side `UniformAssignor`: keep owned
//!   partitions up to each member's quota, fill the members below it.
//! - [`server_range`]: the KIP-848 server-side `RangeAssignor`, which for a
//!   homogeneous group is the classic range rule.
//!
//! The sticky and uniform assignors walk the group in the iteration order of
//! the Java `HashMap` their callers build (member id → subscription), and the
//! uniform one keeps "the first `quota`" of a member's partitions in the
//! order of its `HashSet`; both orders decide who keeps what, so
//! [`java_hash_order`] reproduces them.

use std::cmp::Ordering;

use crate::sim::broker::coordinator::java_string_hash;

/// One group member as the assignors see it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Member {
    /// The member id the coordinator gave it.
    pub member_id: String,
    /// `group.instance.id` of a static member (KIP-345).
    pub instance_id: Option<String>,
    /// The partitions it owns now: the client's `ownedPartitions`, or the
    /// server's current target assignment (disjoint between members there).
    pub owned: Vec<u32>,
    /// The generation it owned them in (client-side sticky only);
    /// `DEFAULT_GENERATION` (-1) when it has none.
    pub generation: i32,
}

/// Kafka's `AbstractStickyAssignor.DEFAULT_GENERATION`.
pub const DEFAULT_GENERATION: i32 = -1;

impl Member {
    /// A member that owns nothing yet.
    pub fn new(member_id: &str) -> Self {
        Member {
            member_id: member_id.to_string(),
            instance_id: None,
            owned: Vec::new(),
            generation: DEFAULT_GENERATION,
        }
    }
}

/// The range assignors' member order (`AbstractPartitionAssignor.MemberInfo
/// .compareTo`, and the server `RangeAssignor.sortMemberIds`): static members
/// first, by `group.instance.id`, then the others by member id.
fn range_order(a: &Member, b: &Member) -> Ordering {
    match (&a.instance_id, &b.instance_id) {
        (Some(x), Some(y)) => java_cmp(x, y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => java_cmp(&a.member_id, &b.member_id),
    }
}

/// `String.compareTo`: by UTF-16 code units (differs from `str`'s byte
/// order only outside the Basic Multilingual Plane).
fn java_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

fn ranges(members: &[Member], partitions: u32) -> Vec<Vec<u32>> {
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| range_order(&members[a], &members[b]));
    let m = members.len() as u32;
    let mut out = vec![Vec::new(); members.len()];
    let mut next = 0;
    for (k, &i) in order.iter().enumerate() {
        let len = partitions / m + u32::from((k as u32) < partitions % m);
        out[i] = (next..next + len).collect();
        next += len;
    }
    out
}

/// Kafka's classic client-side `org.apache.kafka.clients.consumer.RangeAssignor`
/// (`assignPartitions`, no racks): members sorted static-first (by
/// `group.instance.id`) then by member id; each gets `n / m` contiguous
/// partitions and the first `n % m` one more. Owned partitions play no part.
pub fn range(members: &[Member], partitions: u32) -> Vec<Vec<u32>> {
    ranges(members, partitions)
}

/// Kafka's KIP-848 server-side
/// `org.apache.kafka.coordinator.group.assignor.RangeAssignor`
/// (`assignHomogeneousGroup`): in 4.4.0 a homogeneous group gets the classic
/// range rule, members sorted as [`range`] sorts them; the current
/// assignment is not consulted.
pub fn server_range(members: &[Member], partitions: u32) -> Vec<Vec<u32>> {
    ranges(members, partitions)
}

/// The order a Java `HashMap` (or `HashSet`) iterates keys inserted in the
/// given order, given their `hashCode`s and its table size: by bucket
/// (`(h ^ h >>> 16) & (capacity - 1)`), and within a bucket in insertion
/// order (a resize splits buckets but keeps that order). Not modelled: a
/// bucket reaching eight keys, where Java resizes early (or, from 64
/// buckets, makes a tree); the lab's groups are far smaller.
pub fn java_hash_order(hashes: &[i32], capacity: usize) -> Vec<usize> {
    let bucket = |h: i32| ((h ^ ((h as u32) >> 16) as i32) as u32 as usize) & (capacity - 1);
    let mut order: Vec<usize> = (0..hashes.len()).collect();
    order.sort_by_key(|&i| bucket(hashes[i]));
    order
}

/// The table size of `new HashMap<>()` after `n` puts (16, doubled whenever
/// the size passes three quarters of it).
fn put_capacity(n: usize) -> usize {
    let mut cap = 16;
    while n * 4 > cap * 3 {
        cap *= 2;
    }
    cap
}

/// The table size of `new HashSet<>(collection)` with `n` elements:
/// `max((int) (n / .75f) + 1, 16)` rounded up to a power of two.
fn copy_capacity(n: usize) -> usize {
    (((n as f32 / 0.75) as usize) + 1)
        .max(16)
        .next_power_of_two()
}

/// The members in the iteration order of a `HashMap` keyed by member id and
/// filled in the slice's order.
fn member_map_order(members: &[Member]) -> Vec<usize> {
    let hashes: Vec<i32> = members
        .iter()
        .map(|m| java_string_hash(&m.member_id))
        .collect();
    java_hash_order(&hashes, put_capacity(members.len()))
}

/// Kafka's `org.apache.kafka.clients.consumer.CooperativeStickyAssignor`
/// for a homogeneous group (`AbstractStickyAssignor.allSubscriptionsEqual`,
/// `ConstrainedAssignmentBuilder`, then `CooperativeStickyAssignor
/// .adjustAssignment`), `members` in the order the group leader received
/// them.
///
/// A partition two members claim goes to the higher generation; claimed in
/// the same generation, neither keeps it. Each member then keeps its lowest
/// owned partitions up to its quota (`n / m`, or one more while fewer than
/// `n % m` members have it), in the leader's map order; the rest are handed
/// out round-robin to the members below quota (sorted by member id), then one
/// each to those at the minimum. A partition that so changes owner is left
/// out of this round: its owner revokes it first (KIP-429).
pub fn cooperative_sticky(members: &[Member], partitions: u32) -> Vec<Vec<u32>> {
    let m = members.len();
    let n = partitions as usize;
    if m == 0 {
        return Vec::new();
    }
    let order = member_map_order(members);

    // Claims, in map order: the higher generation wins a partition claimed
    // twice; a same-generation double claim voids it for everyone.
    let mut claimant: Vec<Option<usize>> = vec![None; n];
    let mut doubly_claimed = vec![false; n];
    let mut owned: Vec<Vec<u32>> = vec![Vec::new(); m];
    for &i in &order {
        let generation = members[i].generation;
        for &p in members[i].owned.iter().filter(|&&p| p < partitions) {
            let slot = p as usize;
            match claimant[slot] {
                None => {
                    owned[i].push(p);
                    claimant[slot] = Some(i);
                }
                Some(j) => {
                    let other = members[j].generation;
                    if generation >= other {
                        owned[j].retain(|&q| q != p);
                        claimant[slot] = Some(i);
                        if generation == other {
                            doubly_claimed[slot] = true;
                        } else {
                            owned[i].push(p);
                        }
                    }
                }
            }
        }
    }

    // Keep owned partitions up to the quota.
    let min_quota = n / m;
    let max_quota = n.div_ceil(m);
    let expected_over = n % m;
    let mut over = 0;
    let mut assignment: Vec<Vec<u32>> = vec![Vec::new(); m];
    let mut revoked = vec![false; n];
    let mut taken = vec![false; n];
    let mut under_min: Vec<usize> = Vec::new();
    let mut at_min: Vec<usize> = Vec::new();
    for &i in &order {
        let mut own = std::mem::take(&mut owned[i]);
        own.sort_unstable();
        own.retain(|&p| !doubly_claimed[p as usize]);
        let keep = if own.len() < min_quota {
            under_min.push(i);
            own.len()
        } else if own.len() >= max_quota && over < expected_over {
            over += 1;
            if over == expected_over {
                at_min.clear();
            }
            max_quota
        } else {
            if over < expected_over {
                at_min.push(i);
            }
            min_quota
        };
        for &p in &own[keep..] {
            revoked[p as usize] = true;
        }
        for &p in &own[..keep] {
            taken[p as usize] = true;
        }
        own.truncate(keep);
        assignment[i] = own;
    }

    // Round-robin the rest: members below the minimum (by member id) until
    // they reach it, then those at the minimum, one each.
    let by_id = |a: &usize, b: &usize| java_cmp(&members[*a].member_id, &members[*b].member_id);
    under_min.sort_by(by_id);
    at_min.sort_by(by_id);
    let mut transferring: Vec<(u32, usize)> = Vec::new();
    let mut cursor = 0;
    for p in (0..partitions).filter(|&p| !taken[p as usize]) {
        let i = if cursor < under_min.len() {
            cursor += 1;
            under_min[cursor - 1]
        } else if !under_min.is_empty() {
            cursor = 1;
            under_min[0]
        } else if !at_min.is_empty() {
            at_min.remove(0)
        } else {
            break; // Kafka: IllegalStateException; unreachable with p < n.
        };
        assignment[i].push(p);
        if revoked[p as usize] || doubly_claimed[p as usize] {
            transferring.push((p, i));
        }
        // Reaching the minimum moves a member to the back of those that may
        // take one more (Kafka also counts members reaching the maximum, for
        // its log only).
        if assignment[i].len() == min_quota {
            cursor -= 1;
            under_min.remove(cursor);
            at_min.push(i);
        }
    }

    // Cooperative: a partition moving between members is revoked first.
    for (p, i) in transferring {
        assignment[i].retain(|&q| q != p);
    }
    for a in &mut assignment {
        a.sort_unstable();
    }
    assignment
}

/// Kafka's KIP-848 server-side
/// `org.apache.kafka.coordinator.group.assignor.UniformAssignor` for a
/// homogeneous group (`UniformHomogeneousAssignmentBuilder`), with each
/// member's current assignment in `owned` (disjoint between members).
///
/// In the coordinator's member-map order, each member's quota is `n / m`,
/// plus one while some of the `n % m` extra partitions are left; it keeps
/// that many of its partitions (the first in its `HashSet`'s order) and the
/// rest are freed. A member that then falls short of a quota with the extra
/// gives the extra back if the members still to come can take all the
/// extras left. Unowned partitions (ascending), then the freed ones, fill
/// the members below quota in the same order.
pub fn uniform(members: &[Member], partitions: u32) -> Vec<Vec<u32>> {
    let m = members.len();
    if m == 0 {
        return Vec::new();
    }
    let mut owned_by_someone = vec![false; partitions as usize];
    for p in members.iter().flat_map(|mb| &mb.owned) {
        if let Some(slot) = owned_by_someone.get_mut(*p as usize) {
            *slot = true;
        }
    }
    let mut unassigned: Vec<u32> = (0..partitions)
        .filter(|&p| !owned_by_someone[p as usize])
        .collect();
    let min_quota = partitions as usize / m;
    let mut extra = partitions as usize % m;
    let mut assignment: Vec<Vec<u32>> = vec![Vec::new(); m];
    let mut unfilled: Vec<(usize, usize)> = Vec::new();
    for (k, i) in member_map_order(members).into_iter().enumerate() {
        let mut quota = min_quota;
        let mut takes_extra = extra > 0;
        if takes_extra {
            quota += 1;
        }
        let mut own = members[i].owned.clone();
        own.sort_unstable();
        let hashes: Vec<i32> = own.iter().map(|&p| p as i32).collect();
        let set_order = java_hash_order(&hashes, copy_capacity(own.len()));
        for k in set_order {
            if assignment[i].len() < quota {
                assignment[i].push(own[k]);
            } else {
                unassigned.push(own[k]);
            }
        }
        // A member short of its quota leaves the extra partition to a later
        // one while enough members remain to take every extra partition:
        // the extras go to members that already hold them.
        if assignment[i].len() < quota && takes_extra && m - k > extra {
            quota -= 1;
            takes_extra = false;
        }
        if assignment[i].len() < quota {
            unfilled.push((i, quota - assignment[i].len()));
        }
        if takes_extra {
            extra -= 1;
        }
    }
    let mut next = unassigned.into_iter();
    for (i, remaining) in unfilled {
        assignment[i].extend(next.by_ref().take(remaining));
    }
    for a in &mut assignment {
        a.sort_unstable();
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(ids: &[&str]) -> Vec<Member> {
        ids.iter().map(|id| Member::new(id)).collect()
    }

    fn owning(id: &str, owned: &[u32], generation: i32) -> Member {
        Member {
            owned: owned.to_vec(),
            generation,
            ..Member::new(id)
        }
    }

    #[test]
    fn range_gives_the_first_members_one_extra_partition() {
        let a = range(&group(&["c", "a", "b"]), 7);
        assert_eq!(a, vec![vec![5, 6], vec![0, 1, 2], vec![3, 4]]);
    }

    #[test]
    fn range_orders_static_members_first_by_instance_id() {
        let mut members = group(&["a", "b", "c"]);
        members[2].instance_id = Some("i-1".to_string());
        members[1].instance_id = Some("i-0".to_string());
        assert_eq!(
            range(&members, 3),
            vec![vec![2], vec![0], vec![1]],
            "b (i-0), c (i-1), then a"
        );
    }

    #[test]
    fn range_leaves_members_beyond_the_partition_count_empty() {
        let a = range(&group(&["a", "b", "c"]), 2);
        assert_eq!(a, vec![vec![0], vec![1], vec![]]);
    }

    #[test]
    fn server_range_ignores_the_current_assignment() {
        let members = vec![owning("b", &[0, 1], 1), owning("a", &[2, 3], 1)];
        assert_eq!(server_range(&members, 4), vec![vec![2, 3], vec![0, 1]]);
    }

    #[test]
    fn cooperative_sticky_keeps_owned_partitions_when_a_member_leaves() {
        // c left: its partitions 4 and 5 go to a and b at once (no owner
        // to revoke them from); a and b keep theirs.
        let members = vec![owning("a", &[0, 1], 3), owning("b", &[2, 3], 3)];
        let a = cooperative_sticky(&members, 6);
        assert_eq!(a[0][..2], [0, 1]);
        assert_eq!(a[1][..2], [2, 3]);
        assert_eq!(a[0].len() + a[1].len(), 6);
    }

    #[test]
    fn cooperative_sticky_revokes_before_a_joining_member_gets_a_partition() {
        let members = vec![owning("a", &[0, 1, 2, 3], 3), Member::new("b")];
        let a = cooperative_sticky(&members, 4);
        // a keeps its quota; 2 and 3 move to b, so this round leaves them out.
        assert_eq!(a, vec![vec![0, 1], vec![]]);
        // The next round (a has revoked them) hands them to b.
        let next = vec![owning("a", &[0, 1], 4), owning("b", &[], 4)];
        assert_eq!(cooperative_sticky(&next, 4), vec![vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn cooperative_sticky_gives_a_doubly_claimed_partition_to_the_newer_generation() {
        let members = vec![owning("a", &[0], 2), owning("b", &[0], 3)];
        let a = cooperative_sticky(&members, 2);
        assert_eq!(a[1], vec![0]);
    }

    #[test]
    fn cooperative_sticky_withholds_a_partition_claimed_twice_in_one_generation() {
        let members = vec![owning("a", &[0], 3), owning("b", &[0], 3)];
        let a = cooperative_sticky(&members, 2);
        assert!(!a.iter().flatten().any(|&p| p == 0), "{a:?}");
    }

    #[test]
    fn uniform_keeps_owned_partitions_up_to_the_quota() {
        let members = vec![owning("a", &[0, 1, 2], 0), owning("b", &[3], 0)];
        let a = uniform(&members, 4);
        assert_eq!(a, vec![vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn uniform_gives_the_extra_partition_to_a_member_that_already_holds_it() {
        // 3 partitions, 2 members: one of them gets 2. a comes first in the
        // coordinator's map but owns nothing, so b keeps both of its own.
        let members = vec![Member::new("a"), owning("b", &[0, 1], 0)];
        assert_eq!(uniform(&members, 3), vec![vec![2], vec![0, 1]]);
    }

    #[test]
    fn uniform_balances_to_within_one_partition() {
        let a = uniform(&group(&["a", "b", "c"]), 10);
        let mut sizes: Vec<usize> = a.iter().map(Vec::len).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![3, 3, 4]);
    }

    #[test]
    fn java_hash_order_walks_buckets_then_insertion_order() {
        // 17 and 1 share bucket 1 of 16; 17 was inserted first.
        assert_eq!(java_hash_order(&[17, 2, 1], 16), vec![0, 2, 1]);
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
    }
}
