//! Rack-aware replica placement: where the replicas of a new topic live when
//! every broker has a `broker.rack` and the scenario gives no explicit
//! assignment.
//!
//! This is the rule of Kafka's admin tooling (AdminUtils' rack-aware
//! assignment, used by `kafka-topics.sh --create` and ZooKeeper-era
//! controllers), with the start index and shift fixed at 0 as in
//! [`super::round_robin_assignment`] so a layout is reproducible:
//!
//! 1. Brokers are put in a *rack-alternated* order: racks sorted by name, then
//!    one broker from each rack in turn (lowest id first). With racks
//!    a = {1, 2}, b = {3, 4}, c = {5, 6} the order is 1, 3, 5, 2, 4, 6.
//! 2. Partition `p`'s first replica (its preferred leader) is position
//!    `p mod n` of that order, so leaders go round-robin over brokers *and*
//!    racks.
//! 3. Further replicas walk on from the leader (with the same follower shift as
//!    the rack-unaware rule, scaled by the number of racks), skipping a broker
//!    whose rack already holds a replica while some rack holds none, and a
//!    broker that already holds one while some broker holds none. So the
//!    replicas of a partition land on distinct racks whenever RF ≤ racks.
//!
//! KRaft controllers place new topics with a randomised striped placer instead;
//! its layouts cannot be reproduced from a seedless rule, which is why the lab
//! keeps the admin tool's deterministic one.

use super::protocol::BrokerId;
use super::shared::sort_slim;

/// Brokers in rack-alternated order. `racks[i]` is the rack of broker `i + 1`.
pub fn rack_alternated_brokers(racks: &[String]) -> Vec<BrokerId> {
    let mut names: Vec<&str> = racks.iter().map(String::as_str).collect();
    sort_slim(&mut names);
    names.dedup();
    // Per rack, its brokers in id order (ids are 1-based positions in `racks`).
    let by_rack: Vec<Vec<BrokerId>> = names
        .iter()
        .map(|name| {
            (1..=racks.len() as BrokerId)
                .filter(|b| racks[*b as usize - 1] == *name)
                .collect()
        })
        .collect();
    let mut order = Vec::with_capacity(racks.len());
    let mut round = 0;
    while order.len() < racks.len() {
        for brokers in &by_rack {
            if let Some(b) = brokers.get(round) {
                order.push(*b);
            }
        }
        round += 1;
    }
    order
}

/// Replica lists for `partitions` partitions of replication factor `rf` over
/// brokers `1..=racks.len()`, rack by rack (see the module documentation).
/// `rf` must not exceed the number of brokers (the scenario checks it).
pub fn rack_aware_assignment(racks: &[String], partitions: u32, rf: u32) -> Vec<Vec<BrokerId>> {
    let order = rack_alternated_brokers(racks);
    let n = order.len();
    let rack_of = |b: BrokerId| racks[b as usize - 1].as_str();
    let mut distinct_racks: Vec<&str> = racks.iter().map(String::as_str).collect();
    sort_slim(&mut distinct_racks);
    distinct_racks.dedup();
    let rack_count = distinct_racks.len();
    let rf = (rf as usize).min(n);
    let mut shift = 0usize;
    (0..partitions as usize)
        .map(|p| {
            if p > 0 && p % n == 0 {
                shift += 1;
            }
            let first = p % n;
            let leader = order[first];
            let mut replicas = vec![leader];
            let mut used_racks = vec![rack_of(leader)];
            let mut k = 0usize;
            while replicas.len() < rf {
                let step = 1 + (shift * rack_count + k) % (n - 1).max(1);
                let b = order[(first + step) % n];
                k += 1;
                let rack = rack_of(b);
                let rack_ok = !used_racks.contains(&rack) || used_racks.len() == rack_count;
                let broker_ok = !replicas.contains(&b);
                if rack_ok && broker_ok {
                    replicas.push(b);
                    if !used_racks.contains(&rack) {
                        used_racks.push(rack);
                    }
                } else if k > n * n {
                    // Cannot happen for rf ≤ brokers; never loop forever on a bug.
                    if let Some(free) = order.iter().find(|x| !replicas.contains(x)) {
                        replicas.push(*free);
                    }
                }
            }
            replicas
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn racks(spec: &[&str]) -> Vec<String> {
        spec.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn brokers_alternate_between_racks_in_rack_name_order() {
        let r = racks(&["a", "a", "b", "b", "c", "c"]);
        assert_eq!(rack_alternated_brokers(&r), vec![1, 3, 5, 2, 4, 6]);
        // Uneven racks: the smaller rack simply runs out first.
        let r = racks(&["x", "y", "x", "x"]);
        assert_eq!(rack_alternated_brokers(&r), vec![1, 2, 3, 4]);
        let r = racks(&["b", "a", "b", "a"]);
        assert_eq!(rack_alternated_brokers(&r), vec![2, 1, 4, 3]);
    }

    #[test]
    fn rack_aware_assignment_puts_replicas_on_distinct_racks_and_spreads_leaders() {
        let r = racks(&["a", "a", "b", "b", "c", "c"]);
        let a = rack_aware_assignment(&r, 12, 3);
        assert_eq!(a[0], vec![1, 3, 5]);
        for replicas in &a {
            let mut rs: Vec<&str> = replicas
                .iter()
                .map(|b| r[*b as usize - 1].as_str())
                .collect();
            rs.sort_unstable();
            assert_eq!(
                rs,
                vec!["a", "b", "c"],
                "one replica per rack: {replicas:?}"
            );
        }
        let leaders: Vec<BrokerId> = a.iter().map(|x| x[0]).collect();
        assert_eq!(leaders, vec![1, 3, 5, 2, 4, 6, 1, 3, 5, 2, 4, 6]);
        // Every broker holds the same number of replicas.
        for b in 1..=6 {
            let held = a.iter().filter(|x| x.contains(&b)).count();
            assert_eq!(held, 6, "broker {b} holds {held} replicas");
        }
        // One broker per rack: the layout is the rack-unaware one.
        let r = racks(&["a", "b", "c"]);
        assert_eq!(
            rack_aware_assignment(&r, 3, 3),
            crate::sim::round_robin_assignment(3, 3, 3)
        );
    }

    #[test]
    fn more_replicas_than_racks_fill_every_rack_first_then_reuse_racks() {
        let r = racks(&["a", "a", "b", "b"]);
        for replicas in rack_aware_assignment(&r, 8, 3) {
            let mut rs: Vec<&str> = replicas
                .iter()
                .map(|b| r[*b as usize - 1].as_str())
                .collect();
            rs.sort_unstable();
            rs.dedup();
            assert_eq!(rs, vec!["a", "b"], "both racks used: {replicas:?}");
            let mut bs = replicas.clone();
            bs.sort_unstable();
            bs.dedup();
            assert_eq!(bs.len(), 3, "distinct brokers: {replicas:?}");
        }
        // A single broker, a single rack.
        assert_eq!(
            rack_aware_assignment(&racks(&["a"]), 2, 1),
            vec![vec![1], vec![1]]
        );
    }
}
