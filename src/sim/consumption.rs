//! Whether each subscribing consumer group's partitions are being read: the
//! availability strip's "partitions not consumed" band (issue 64).
//!
//! Like `availability.rs`, this module only observes. A partition of a
//! subscribing group's topic is *consumed* while a member of the group whose
//! process runs has it in the assignment of its current generation and may
//! fetch it (ConsumerCoordinator: an eager member gives every partition up in
//! onJoinPrepare and fetches again after onJoinComplete; a cooperative-sticky
//! one goes on reading the partitions it keeps, KIP-429; a KIP-848 member
//! reads what it owns while it reconciles). It is *not
//! consumed* while no member reads it: before the group's first rebalance
//! completes (`group.initial.rebalance.delay.ms` included), while an eager
//! rebalance runs, and while the member that owns it has a dead process but
//! the coordinator has not yet ended its session (`session.timeout.ms`): the
//! group's assignment still gives it to that member, so nobody else reads it.
//! A member whose application stopped polling (`stall_client`) reads nothing
//! either, until it leaves after `max.poll.interval.ms` or polls again.
//!
//! The cluster calls [`Consumption::observe`] after every event a consumer
//! handled (its process's crash and restart included): only consumers change
//! what they read. Each group keeps the count over time, one entry per change.
//! Without the group protocols compiled in (the page's first-load wasm,
//! build.rs) no consumer subscribes, and the accountant is an empty shell.

#[cfg(group_protocols)]
use serde::Serialize;

use super::client::Consumer;
#[cfg(group_protocols)]
use super::protocol::PartitionIndex;

/// One subscribing group.
#[cfg(group_protocols)]
#[derive(Clone, Debug)]
pub struct GroupConsumption {
    pub group_id: String,
    /// The partitions of the topic its members subscribe to.
    partitions: Vec<PartitionIndex>,
    /// The consumers that subscribe in it (indices into the cluster's).
    members: Vec<usize>,
    /// Every change of the number of its partitions no member reads:
    /// (ms, count), one entry per ms at most, from (0, all of them).
    pub log: Vec<(u64, u32)>,
}

/// A time during which some of a group's partitions were read by nobody.
#[cfg(group_protocols)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotConsumedWindow {
    pub group: String,
    pub from_ms: u64,
    /// Null while it lasts.
    pub to_ms: Option<u64>,
    /// The most of its partitions read by nobody at once during it.
    pub max_partitions: u32,
}

/// The accountant. Owned by the cluster, cloned with it (time travel).
#[derive(Clone, Debug, Default)]
pub struct Consumption {
    #[cfg(group_protocols)]
    pub groups: Vec<GroupConsumption>,
}

#[cfg(not(group_protocols))]
impl Consumption {
    pub fn new(_consumers: &[Consumer]) -> Self {
        Consumption::default()
    }
}

#[cfg(group_protocols)]
impl Consumption {
    /// The subscribing groups of `consumers`, by `group.id`, in the order
    /// their first member appears. At time 0 no member reads anything yet.
    pub fn new(consumers: &[Consumer]) -> Self {
        let mut groups: Vec<GroupConsumption> = Vec::new();
        for (i, k) in consumers.iter().enumerate() {
            let Some(g) = k.group.as_ref().filter(|g| g.membership.is_some()) else {
                continue;
            };
            match groups.iter_mut().find(|x| x.group_id == g.group_id) {
                Some(x) => x.members.push(i),
                None => groups.push(GroupConsumption {
                    group_id: g.group_id.clone(),
                    partitions: k.topic_partitions.clone(),
                    members: vec![i],
                    log: vec![(0, k.topic_partitions.len() as u32)],
                }),
            }
        }
        Consumption { groups }
    }

    /// Whether any group subscribes (else there is nothing to observe).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Look at what every member reads now.
    pub fn observe(&mut self, now: u64, consumers: &[Consumer]) {
        for g in &mut self.groups {
            let read = |p: &PartitionIndex| {
                g.members
                    .iter()
                    .any(|&i| consumers[i].reads_assigned().contains(p))
            };
            let n = g.partitions.iter().filter(|p| !read(p)).count() as u32;
            match g.log.last_mut() {
                Some(last) if last.1 == n => {}
                Some(last) if last.0 == now => last.1 = n,
                _ => g.log.push((now, n)),
            }
        }
    }

    /// Each group's windows of partitions read by nobody, up to `now`.
    pub fn windows(&self, now: u64) -> Vec<NotConsumedWindow> {
        let mut out = Vec::new();
        for g in &self.groups {
            let mut open: Option<NotConsumedWindow> = None;
            for &(t, n) in &g.log {
                match (&mut open, n) {
                    (None, 0) => {}
                    (None, n) => {
                        open = Some(NotConsumedWindow {
                            group: g.group_id.clone(),
                            from_ms: t,
                            to_ms: None,
                            max_partitions: n,
                        })
                    }
                    (Some(w), 0) => {
                        w.to_ms = Some(t);
                        out.extend(open.take());
                    }
                    (Some(w), n) => w.max_partitions = w.max_partitions.max(n),
                }
            }
            out.extend(open.filter(|w| w.from_ms <= now));
        }
        out
    }

    /// The most partitions read by nobody at once in [from, to), summed
    /// over the groups at each moment (the strip's band).
    pub fn max_not_consumed(&self, from_ms: u64, to_ms: u64) -> u32 {
        let at = |g: &GroupConsumption, t: u64| {
            let i = g.log.partition_point(|e| e.0 <= t);
            g.log[i.saturating_sub(1)].1
        };
        let total = |t: u64| self.groups.iter().map(|g| at(g, t)).sum::<u32>();
        let mut best = total(from_ms);
        for g in &self.groups {
            let start = g.log.partition_point(|e| e.0 <= from_ms);
            for &(t, _) in g.log[start..].iter().take_while(|e| e.0 < to_ms) {
                best = best.max(total(t));
            }
        }
        best
    }
}
