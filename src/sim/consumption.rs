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
//!
//! The same look also keeps each group's *assignment history* (the group
//! card's lanes, issue 64): per member (a member id of a consumer's
//! process), every change of the partitions it holds, the generation
//! (KIP-848: member epoch) it holds them in, and whether it reads them;
//! and per partition, the windows during which no member read it. A member
//! whose process died keeps its partitions in the coordinator's group until
//! its session ends ([`Consumption::member_gone`], from the coordinator's
//! GroupMemberExpired), which is why its lane goes on after the crash.

#[cfg(group_protocols)]
use serde::Serialize;
#[cfg(group_protocols)]
use std::rc::Rc;

use super::client::Consumer;
#[cfg(group_protocols)]
use super::protocol::PartitionIndex;

/// One subscribing group.
#[cfg(group_protocols)]
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct GroupConsumption {
    pub group_id: String,
    /// The partitions of the topic its members subscribe to.
    partitions: Vec<PartitionIndex>,
    /// The consumers that subscribe in it (indices into the cluster's).
    members: Vec<usize>,
    /// Every change of the number of its partitions no member reads:
    /// (ms, count), one entry per ms at most, from (0, all of them).
    pub log: Vec<(u64, u32)>,
    /// One lane per member id, in the order they appeared.
    lanes: Vec<MemberLane>,
    /// Per consumer of `members`: the lane of the member its process is now.
    current: Vec<Option<usize>>,
    /// Per partition of `partitions`: the windows no member read it,
    /// (from, to), to = None while it lasts.
    unread: Vec<Vec<(u64, Option<u64>)>>,
}

/// What a member does with the partitions it holds (the report's
/// `groups[].changes[].state`).
#[cfg(group_protocols)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum MemberPhase {
    /// In the group's protocol but not (or no longer) in a generation: it
    /// holds nothing (a first join, an eager rebalance's rejoin).
    Joining,
    /// A member of the current generation that holds nothing.
    Idle,
    /// Its process runs, the application polls, and it fetches what it holds.
    Reading,
    /// It holds partitions but does not fetch them yet: it is rebalancing
    /// (an eager member before onPartitionsRevoked, waiting for its commit).
    Rebalancing,
    /// It holds partitions but the application stopped polling (`stall_client`).
    NotPolling,
    /// Its process is down; the coordinator keeps it, with its partitions,
    /// until its session ends.
    ProcessDown,
    /// No longer in the group: its session ended, it left, or another
    /// process took its place. Its partitions are free.
    Left,
}

#[cfg(group_protocols)]
#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct MemberLane {
    /// Index into the cluster's consumers.
    consumer: usize,
    member_id: Rc<str>,
    /// (ms, generation or member epoch, partitions held, phase), one per change.
    changes: Vec<(u64, i32, Vec<PartitionIndex>, MemberPhase)>,
}

#[cfg(group_protocols)]
impl MemberLane {
    /// Called after every consumer event: allocates only for a change.
    fn push(&mut self, now: u64, generation: i32, held: &[PartitionIndex], phase: MemberPhase) {
        match self.changes.last_mut() {
            Some(l) if l.1 == generation && l.2 == held && l.3 == phase => {}
            // A joining member's new generation is no change of what it
            // holds: its assignment's change will carry it.
            Some(l) if phase == MemberPhase::Joining && l.3 == phase && held.is_empty() => {}
            // Two changes in one millisecond are one.
            Some(l) if l.0 == now => *l = (now, generation, held.to_vec(), phase),
            _ => self.changes.push((now, generation, held.to_vec(), phase)),
        }
    }

    fn ended(&self) -> bool {
        self.changes
            .last()
            .is_some_and(|l| l.3 == MemberPhase::Left)
    }
}

/// A subscribing group's assignment over time (the report's `groups[]`,
/// the page's group card).
#[cfg(group_protocols)]
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct GroupHistory {
    pub group: String,
    /// `classic` or `consumer` (KIP-848: `generation` is the member epoch).
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub protocol: &'static str,
    /// The lanes, one per member id: [consumer, member id], in the order
    /// they appeared (a consumer's later processes after its earlier ones).
    pub members: Vec<(String, String)>,
    /// Every change of what a member holds, in time order.
    pub changes: Vec<AssignmentChange>,
    /// The windows during which a partition was read by no member, in
    /// partition order, then time.
    pub unread: Vec<UnreadWindow>,
}

/// From `at_ms` on, member `members[member]` holds `partitions` (until its
/// next change).
#[cfg(group_protocols)]
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct AssignmentChange {
    pub at_ms: u64,
    /// Index into the group's `members`.
    pub member: usize,
    /// Generation (classic) or member epoch (consumer protocol); -1 or 0
    /// before its first.
    pub generation: i32,
    pub state: MemberPhase,
    pub partitions: Vec<String>,
    /// Held now and not before.
    pub took: Vec<String>,
    /// Held before and not now.
    pub gave_up: Vec<String>,
}

#[cfg(group_protocols)]
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct UnreadWindow {
    pub partition: String,
    pub from_ms: u64,
    /// Null while it lasts.
    pub to_ms: Option<u64>,
}

/// A time during which some of a group's partitions were read by nobody.
#[cfg(group_protocols)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
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
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
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
                    lanes: Vec::new(),
                    current: Vec::new(),
                    unread: vec![vec![(0, None)]; k.topic_partitions.len()],
                }),
            }
        }
        for g in &mut groups {
            g.current = vec![None; g.members.len()];
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
            let mut n = 0;
            for (p, windows) in g.partitions.iter().zip(&mut g.unread) {
                let unread = !read(p);
                n += unread as u32;
                match (windows.last_mut(), unread) {
                    (Some((from, to @ None)), false) => {
                        if *from == now {
                            // Unread for no time at all: no window.
                            windows.pop();
                        } else {
                            *to = Some(now);
                        }
                    }
                    (Some((_, Some(_))) | None, true) => windows.push((now, None)),
                    _ => {}
                }
            }
            match g.log.last_mut() {
                Some(last) if last.1 == n => {}
                Some(last) if last.0 == now => last.1 = n,
                _ => g.log.push((now, n)),
            }
            g.observe_members(now, consumers);
        }
    }

    /// The coordinator removed `member` from `group` (its session ended):
    /// a member whose process had already gone on (crashed, or rejoined as
    /// another member) gives its partitions up now. A member whose process
    /// still runs learns it from its next request, and its own lane says so.
    pub fn member_gone(&mut self, now: u64, group: &str, member: &str) {
        for g in self.groups.iter_mut().filter(|g| g.group_id == group) {
            for (i, l) in g.lanes.iter_mut().enumerate() {
                if &*l.member_id == member && !l.ended() && !g.current.contains(&Some(i)) {
                    let generation = l.changes.last().map_or(-1, |c| c.1);
                    l.push(now, generation, &[], MemberPhase::Left);
                }
            }
        }
    }

    /// A static member's new process came back as `fresh` (KIP-345; the
    /// coordinator names a member `<client id>-<n>`, and a consumer's client
    /// id is its name): the same consumer's earlier members whose process
    /// had gone are replaced.
    pub fn member_replaced(&mut self, now: u64, group: &str, fresh: &str, consumers: &[Consumer]) {
        let Some((name, _)) = fresh.rsplit_once('-') else {
            return;
        };
        for g in self.groups.iter_mut().filter(|g| g.group_id == group) {
            for (i, l) in g.lanes.iter_mut().enumerate() {
                if consumers[l.consumer].name == name && !l.ended() && !g.current.contains(&Some(i))
                {
                    let generation = l.changes.last().map_or(-1, |c| c.1);
                    l.push(now, generation, &[], MemberPhase::Left);
                }
            }
        }
    }

    /// Each group's assignment history up to now.
    pub fn history(
        &self,
        consumers: &[Consumer],
        partition_name: impl Fn(PartitionIndex) -> String,
    ) -> Vec<GroupHistory> {
        self.groups
            .iter()
            .map(|g| g.history(consumers, &partition_name))
            .collect()
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

#[cfg(group_protocols)]
impl GroupConsumption {
    /// Each member's holdings now, a change pushed to its lane when they differ.
    fn observe_members(&mut self, now: u64, consumers: &[Consumer]) {
        for (j, &i) in self.members.iter().enumerate() {
            let k = &consumers[i];
            let m = k
                .group
                .as_ref()
                .and_then(|g| g.membership.as_ref())
                .filter(|m| k.running && !m.member_id.is_empty());
            if let Some(l) = self.current[j] {
                let lane = &mut self.lanes[l];
                if m.is_none_or(|m| m.member_id != lane.member_id) {
                    // The process moved on: crashed (the coordinator keeps
                    // its member until the session ends), or it is another
                    // member now (it left, or was told it is unknown).
                    let (generation, held) = lane
                        .changes
                        .last()
                        .map_or((-1, Vec::new()), |c| (c.1, c.2.clone()));
                    if k.running {
                        lane.push(now, generation, &[], MemberPhase::Left);
                    } else {
                        lane.push(now, generation, &held, MemberPhase::ProcessDown);
                    }
                    self.current[j] = None;
                }
            }
            let Some(m) = m else {
                continue;
            };
            let l = *self.current[j].get_or_insert_with(|| {
                self.lanes.push(MemberLane {
                    consumer: i,
                    member_id: m.member_id.clone(),
                    changes: Vec::new(),
                });
                self.lanes.len() - 1
            });
            let held = &m.assignment;
            let phase = if held.is_empty() {
                let joined = if m.kip848 {
                    m.generation > 0
                } else {
                    m.generation > 0 && m.state == crate::sim::client::MemberState::Stable
                };
                if joined {
                    MemberPhase::Idle
                } else {
                    MemberPhase::Joining
                }
            } else if !k.reads_assigned().is_empty() {
                MemberPhase::Reading
            } else if k.stalled_since.is_some() {
                MemberPhase::NotPolling
            } else {
                MemberPhase::Rebalancing
            };
            self.lanes[l].push(now, m.generation, held, phase);
        }
    }

    fn history(
        &self,
        consumers: &[Consumer],
        name: &impl Fn(PartitionIndex) -> String,
    ) -> GroupHistory {
        let names = |ps: &[PartitionIndex]| ps.iter().map(|&p| name(p)).collect::<Vec<_>>();
        let kip848 = self.members.iter().any(|&i| {
            consumers[i]
                .group
                .as_ref()
                .and_then(|g| g.membership.as_ref())
                .is_some_and(|m| m.kip848)
        });
        let mut changes = Vec::new();
        for (member, lane) in self.lanes.iter().enumerate() {
            let mut before: &[PartitionIndex] = &[];
            for (at_ms, generation, held, state) in &lane.changes {
                changes.push(AssignmentChange {
                    at_ms: *at_ms,
                    member,
                    generation: *generation,
                    state: *state,
                    partitions: names(held),
                    took: names(
                        &held
                            .iter()
                            .filter(|p| !before.contains(p))
                            .copied()
                            .collect::<Vec<_>>(),
                    ),
                    gave_up: names(
                        &before
                            .iter()
                            .filter(|p| !held.contains(p))
                            .copied()
                            .collect::<Vec<_>>(),
                    ),
                });
                before = held;
            }
        }
        // In time order; a stable sort keeps lane order within a millisecond.
        changes.sort_by_key(|c| c.at_ms);
        GroupHistory {
            group: self.group_id.clone(),
            protocol: if kip848 { "consumer" } else { "classic" },
            members: self
                .lanes
                .iter()
                .map(|l| (consumers[l.consumer].name.clone(), l.member_id.to_string()))
                .collect(),
            changes,
            unread: self
                .partitions
                .iter()
                .zip(&self.unread)
                .flat_map(|(&p, w)| {
                    w.iter().map(move |&(from_ms, to_ms)| UnreadWindow {
                        partition: name(p),
                        from_ms,
                        to_ms,
                    })
                })
                .collect(),
        }
    }
}
