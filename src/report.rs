//! The run report and the `kafka-topics.sh --describe` layout
//! (../shared/SCENARIO_FORMAT.md, "Run report").

use serde::Serialize;

use crate::sim::availability::{LatencySummary, Phases, Window};
use crate::sim::broker::Process;
use crate::sim::client::Consumer;
use crate::sim::invariants::Violation;
use crate::sim::Cluster;

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub scenario: String,
    pub seed: u64,
    pub end_ms: u64,
    pub trace_hash: String,
    pub brokers: Vec<BrokerReport>,
    pub partitions: Vec<PartitionReport>,
    pub producers: Vec<ProducerReport>,
    pub consumers: Vec<ConsumerReport>,
    pub acked_records_lost: u64,
    pub invariant_violations: Vec<Violation>,
    pub availability: AvailabilityReport,
    /// The fate of every record, per producer (`sim::delivery`).
    pub delivery: Vec<crate::sim::delivery::Delivery>,
    pub events_processed: u64,
    pub trace_events: usize,
    /// Per subscribing group, its assignment history: each member's
    /// holdings over time and the windows a partition had no reader
    /// (`consumption.rs`). Absent without subscribing consumers.
    #[cfg(group_protocols)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<crate::sim::consumption::GroupHistory>,
    /// The `KEY=VALUE` settings applied to the scenario (`run --set`), as
    /// applied; absent when none were.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, serde_json::Value>,
}

/// How long the faults cost (README, "Availability in the report").
#[derive(Clone, Debug, Serialize)]
pub struct AvailabilityReport {
    pub faults: Vec<FaultReport>,
    /// Partitions that were unavailable at some time, in partition order.
    pub partitions: Vec<PartitionAvailability>,
    /// Summed over every partition.
    pub unavailable_ms: u64,
    pub produce_latency_ms: LatencySummary,
    pub end_to_end_latency_ms: LatencySummary,
    /// Per subscribing group, the times some of its partitions were read by
    /// no member (its first rebalance, an eager rebalance, a member whose
    /// process died still owning its partitions until its session ends;
    /// `consumption.rs`). Absent without subscribing consumers.
    #[cfg(group_protocols)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_consumed: Vec<crate::sim::consumption::NotConsumedWindow>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FaultReport {
    pub at_ms: u64,
    /// `crash`, `power_loss`, `isolate` or `shutdown` (the first, when faults
    /// of several kinds happened in the same millisecond: see `actions`).
    pub action: &'static str,
    pub actions: Vec<&'static str>,
    pub brokers: Vec<u32>,
    pub partitions: Vec<String>,
    /// How many partitions it took away (the page's view lists only a few).
    pub partition_count: usize,
    /// The partitions it stalled without leading them: one of its brokers
    /// was an ISR follower there and an acks=all producer writes (the
    /// leader waits for every ISR member). Its recovery covers them too.
    pub stalled_partitions: Vec<String>,
    pub stalled_partition_count: usize,
    pub fenced_at_ms: Option<u64>,
    pub elected_at_ms: Option<u64>,
    /// When the last new leader had applied its election (end of `metadata_ms`).
    pub applied_at_ms: Option<u64>,
    pub writable_at_ms: Option<u64>,
    pub rto_ms: Option<u64>,
    pub phases: Phases,
}

#[derive(Clone, Debug, Serialize)]
pub struct PartitionAvailability {
    pub partition: String,
    pub unavailable_ms: u64,
    pub windows: Vec<Window>,
}

pub fn availability(c: &Cluster) -> AvailabilityReport {
    let a = &c.availability;
    let faults = fault_reports(c);
    let partitions: Vec<PartitionAvailability> = (0..c.partitions.len())
        .filter(|&p| !a.windows(p).is_empty())
        .map(|p| PartitionAvailability {
            partition: c.partitions[p].name(),
            unavailable_ms: a.unavailable_ms(p, c.now),
            windows: a.windows(p).to_vec(),
        })
        .collect();
    AvailabilityReport {
        faults,
        unavailable_ms: partitions.iter().map(|p| p.unavailable_ms).sum(),
        partitions,
        produce_latency_ms: a.produce_latency.summary(),
        end_to_end_latency_ms: a.end_to_end_latency.summary(),
        #[cfg(group_protocols)]
        not_consumed: c.consumption.windows(c.now),
    }
}

/// Every fault's recovery so far.
pub fn fault_reports(c: &Cluster) -> Vec<FaultReport> {
    c.availability
        .faults()
        .iter()
        .map(|f| {
            let r = f.recovery();
            FaultReport {
                at_ms: f.at_ms,
                action: f.actions.first().map_or("crash", |x| x.as_str()),
                actions: f.actions.iter().map(|x| x.as_str()).collect(),
                brokers: f.brokers.clone(),
                partitions: f.partitions().map(|p| c.partitions[p].name()).collect(),
                partition_count: f.partitions().count(),
                stalled_partitions: f
                    .stalled_partitions()
                    .map(|p| c.partitions[p].name())
                    .collect(),
                stalled_partition_count: f.stalled_partitions().count(),
                fenced_at_ms: r.fenced_at_ms,
                elected_at_ms: r.elected_at_ms,
                applied_at_ms: r.applied_at_ms,
                writable_at_ms: r.writable_at_ms,
                rto_ms: r.rto_ms,
                phases: r.phases,
            }
        })
        .collect()
}

#[derive(Clone, Debug, Serialize)]
pub struct BrokerReport {
    pub id: u32,
    pub state: &'static str,
    pub broker_epoch: u64,
    /// `broker.rack`, or null when the brokers have no racks.
    pub rack: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReplicaLogReport {
    pub broker: u32,
    pub log_end_offset: u64,
    pub high_watermark: u64,
    pub epochs: Vec<(u32, u64)>,
    pub log_digest: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct PartitionReport {
    pub topic: String,
    pub partition: u32,
    pub leader: Option<u32>,
    pub leader_epoch: u32,
    pub partition_epoch: u32,
    pub replicas: Vec<u32>,
    pub isr: Vec<u32>,
    pub elr: Vec<u32>,
    pub last_known_elr: Vec<u32>,
    pub high_watermark: u64,
    pub replica_logs: Vec<ReplicaLogReport>,
    pub acked_records_lost: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProducerReport {
    pub id: String,
    pub acked: u64,
    pub failed: u64,
    pub retries: u64,
    pub in_flight: u64,
    pub errors: std::collections::BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ConsumerReport {
    pub id: String,
    pub consumed: u64,
    pub truncations_detected: u64,
    pub positions: Vec<(String, u64)>,
    /// Its own requests' errors (Fetch, Metadata, ListOffsets,
    /// OffsetsForLeaderEpoch, a refused or timed-out connection), by name: the
    /// Clients panel's chips. A group's coordinator errors are `group.errors`.
    pub errors: std::collections::BTreeMap<String, u64>,
    /// `client.rack`, or null.
    pub client_rack: Option<String>,
    pub partitions: Vec<ConsumerPartitionReport>,
    /// Reads of a record this consumer had already read (the same record
    /// again: after a restart from a commit, or a reset; a new record at a
    /// truncated offset is not one).
    pub read_twice: u64,
    /// With a `group.id`: its coordinator, what it committed, its
    /// coordinator errors. Absent for a consumer without a group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<GroupReport>,
    /// False while its process is crashed (a `crash_client` step).
    pub running: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct GroupReport {
    pub group_id: String,
    /// The coordinator it knows (null while unknown).
    pub coordinator: Option<u32>,
    /// The last commit the coordinator confirmed to this consumer, per
    /// `topic-partition`: [partition, offset, leader epoch]. The consumer's
    /// own memory: empty while its process is crashed.
    pub committed: Vec<(String, u64, Option<u32>)>,
    /// The group's committed offsets as its coordinator holds them now (the
    /// broker leading the group's `__consumer_offsets` partition, as
    /// `kafka-consumer-groups.sh --describe` reads them): they outlive the
    /// consumer's process. Null while no running broker leads that partition.
    pub stored: Option<Vec<(String, u64, Option<u32>)>>,
    /// Successful commits.
    pub commits: u64,
    /// Errors of FindCoordinator, OffsetFetch and OffsetCommit (and, for a
    /// member, JoinGroup, SyncGroup and Heartbeat), by name.
    pub errors: std::collections::BTreeMap<String, u64>,
    /// A subscribing consumer's membership (absent for one that assigns its
    /// partitions itself).
    #[cfg(group_protocols)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<MemberReport>,
    /// The group as its coordinator holds it now, for a subscribing group
    /// (null while no running broker leads its offsets partition).
    #[cfg(group_protocols)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinator_view: Option<Option<CoordinatorGroupReport>>,
}

/// A classic group member as the consumer knows itself.
#[cfg(group_protocols)]
#[derive(Clone, Debug, Serialize)]
pub struct MemberReport {
    /// Empty until the coordinator gives it one.
    pub member_id: String,
    pub group_instance_id: Option<String>,
    /// -1 until a rebalance completes for it.
    pub generation: i32,
    /// `unjoined`, `joining`, `syncing` or `stable`.
    pub state: &'static str,
    /// The `topic-partition`s this generation gave it.
    pub assignment: Vec<String>,
    /// Rebalances it took part in to the end.
    pub rebalances: u32,
    /// `classic` or `consumer` (KIP-848, whose `generation` is the member epoch).
    pub protocol: &'static str,
}

/// A group as its coordinator holds it (classic, or KIP-848's consumer
/// group: then `generation` is the group epoch and there is no leader).
#[cfg(group_protocols)]
#[derive(Clone, Debug, Serialize)]
pub struct CoordinatorGroupReport {
    /// `Empty`, `PreparingRebalance`, `CompletingRebalance` or `Stable`
    /// (classic); `Empty`, `Reconciling` or `Stable` (consumer).
    pub state: &'static str,
    pub generation: i32,
    pub leader: Option<String>,
    /// [member id, assigned `topic-partition`s, the consumer that joined as
    /// it, the time its session ends unless a heartbeat comes first], in
    /// the order they joined. A member whose process died stays here, with
    /// its partitions, until that time (`session.timeout.ms`, or
    /// `group.consumer.session.timeout.ms` for the consumer protocol).
    pub members: Vec<(String, Vec<String>, String, u64)>,
}

/// Where a consumer reads one partition from, and how far behind it is.
#[derive(Clone, Debug, Serialize)]
pub struct ConsumerPartitionReport {
    /// `topic-partition`.
    pub partition: String,
    pub position: u64,
    /// The broker its next fetch goes to: the preferred read replica while
    /// the leader's advice holds (KIP-392), else the leader it knows.
    pub reading_from: Option<u32>,
    /// Whether `reading_from` is the partition's current leader.
    pub reading_from_leader: bool,
    /// The replica the leader named for it, if any (and not expired).
    pub preferred_read_replica: Option<u32>,
    /// The leader's high watermark minus the position: committed records it
    /// has not consumed yet (null while the partition is offline, or while
    /// it has no position yet).
    pub lag: Option<u64>,
    /// What it waits for before it has a position to read from: its
    /// process to start (`restart`), its group's committed offsets
    /// (`committed`), or the leader's answer for auto.offset.reset
    /// (`reset`); null once it has one.
    pub waiting: Option<&'static str>,
}

/// [`ConsumerPartitionReport`]s of consumer `k`, in partition order.
/// A consumer's position per partition, by `topic-partition` name.
pub fn consumer_positions(c: &Cluster, k: &Consumer) -> Vec<(String, u64)> {
    k.positions
        .iter()
        .map(|(p, pos)| (c.partitions[p].name(), pos.offset))
        .collect()
}

pub fn consumer_partitions(c: &Cluster, k: &Consumer) -> Vec<ConsumerPartitionReport> {
    k.positions
        .iter()
        .map(|(p, pos)| {
            let info = &c.partitions[p];
            let leader = c.controller.partitions[p].leader;
            let leader_hw = leader
                .and_then(|l| c.broker(l))
                .and_then(|b| b.replicas.get(&p))
                .map(|r| r.log.high_watermark);
            let waiting = if !k.running {
                Some("restart")
            } else if k.group.as_ref().is_some_and(|g| !g.offsets_fetched) {
                Some("committed")
            } else if pos.reset_pending {
                Some("reset")
            } else {
                None
            };
            let reading_from = k.fetch_target(p, c.now).filter(|_| waiting.is_none());
            ConsumerPartitionReport {
                partition: info.name(),
                position: pos.offset,
                reading_from,
                reading_from_leader: reading_from.is_some() && reading_from == leader,
                preferred_read_replica: pos
                    .preferred_read_replica
                    .filter(|(_, until)| *until > c.now)
                    .map(|(b, _)| b),
                lag: leader_hw
                    .filter(|_| waiting.is_none())
                    .map(|hw| hw.saturating_sub(pos.offset)),
                waiting,
            }
        })
        .collect()
}

pub fn broker_state(c: &Cluster, b: u32) -> &'static str {
    let Some(broker) = c.broker(b) else {
        return "crashed";
    };
    match broker.process {
        Process::Crashed | Process::PoweredOff => "crashed",
        Process::ShutDown => "shut_down",
        Process::Running => {
            if c.net.isolated.contains(&b) {
                "isolated"
            } else if c
                .controller
                .brokers
                .get(b as usize - 1)
                .is_none_or(|s| s.fenced)
            {
                "fenced"
            } else {
                "running"
            }
        }
    }
}

/// The report's `brokers`.
fn brokers(c: &Cluster) -> Vec<BrokerReport> {
    (1..=c.brokers.len() as u32)
        .map(|b| BrokerReport {
            id: b,
            state: broker_state(c, b),
            broker_epoch: c.controller.brokers[b as usize - 1].broker_epoch,
            rack: c.rack_of(b).map(str::to_string),
        })
        .collect()
}

/// The report's `producers`.
fn producers(c: &Cluster) -> Vec<ProducerReport> {
    c.producers
        .iter()
        .map(|p| ProducerReport {
            id: p.name.clone(),
            acked: p.stats.acked,
            failed: p.stats.failed,
            retries: p.stats.retries,
            in_flight: p.in_flight_records() + p.queued_records(),
            errors: p.stats.errors.clone(),
        })
        .collect()
}

/// The report's partition `p` (`partitions[p]`).
fn partition_report(c: &Cluster, p: usize) -> PartitionReport {
    let info = &c.partitions[p];
    let reg = &c.controller.partitions[p];
    let replica_logs: Vec<ReplicaLogReport> = info
        .replicas
        .iter()
        .filter_map(|b| {
            c.broker(*b)
                .and_then(|x| x.replicas.get(&p))
                .map(|r| (b, r))
        })
        .map(|(b, r)| ReplicaLogReport {
            broker: *b,
            log_end_offset: r.log.log_end_offset(),
            high_watermark: r.log.high_watermark,
            epochs: r.log.epochs().to_vec(),
            log_digest: {
                let mut hex = String::new();
                crate::sim::shared::hex16(r.log.digest(), &mut hex);
                hex
            },
        })
        .collect();
    let high_watermark = reg
        .leader
        .and_then(|l| replica_logs.iter().find(|x| x.broker == l))
        .map_or(0, |x| x.high_watermark);
    PartitionReport {
        topic: info.topic.clone(),
        partition: info.partition,
        leader: reg.leader,
        leader_epoch: reg.leader_epoch,
        partition_epoch: reg.partition_epoch,
        replicas: reg.replicas.clone(),
        isr: reg.isr.clone(),
        elr: reg.elr.clone(),
        last_known_elr: reg.last_known_elr.clone(),
        high_watermark,
        replica_logs,
        acked_records_lost: c.invariants.lost(p),
    }
}

/// The report's `consumers`.
fn consumers(c: &Cluster) -> Vec<ConsumerReport> {
    c.consumers
        .iter()
        .map(|k| ConsumerReport {
            id: k.name.clone(),
            consumed: k.consumed,
            truncations_detected: k.truncations_detected,
            positions: consumer_positions(c, k),
            errors: k.errors.clone(),
            client_rack: k.config.client_rack.clone(),
            partitions: consumer_partitions(c, k),
            read_twice: read_twice(k),
            group: k.group.as_ref().map(|g| group_report(c, g)),
            running: k.running,
        })
        .collect()
}

/// One top-level field of the report, built alone ([`part`]); serialized
/// as that field is in the whole report.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Part {
    Text(String),
    Count(u64),
    Brokers(Vec<BrokerReport>),
    Producers(Vec<ProducerReport>),
    Availability(Box<AvailabilityReport>),
    Partition(Option<Box<PartitionReport>>),
    Consumers(Vec<ConsumerReport>),
    Delivery(Vec<crate::sim::delivery::Delivery>),
}

/// One top-level field of [`build`]'s report built alone: the small ones,
/// `availability`, `consumers` and `delivery`, without the partitions (a
/// tour question that reads only `availability` on 20,000 partitions, a
/// compare lane's summary: issue 63). Besides the report's fields,
/// `first_partition` is its `partitions[0]` (null without partitions), all
/// a compare lane's summary reads of them. None for the others
/// (`partitions`, `invariant_violations`, …), and for `settings`, which the
/// lab adds: build the whole report for those.
pub fn part(c: &Cluster, scenario: &str, key: &str) -> Option<Part> {
    Some(match key {
        "scenario" => Part::Text(scenario.to_string()),
        "seed" => Part::Count(c.seed),
        "end_ms" => Part::Count(c.now),
        "trace_hash" => Part::Text(c.trace.hash_hex()),
        "brokers" => Part::Brokers(brokers(c)),
        "producers" => Part::Producers(producers(c)),
        "acked_records_lost" => Part::Count(c.invariants.total_lost()),
        "availability" => Part::Availability(Box::new(availability(c))),
        "first_partition" => {
            Part::Partition((!c.partitions.is_empty()).then(|| Box::new(partition_report(c, 0))))
        }
        "consumers" => Part::Consumers(consumers(c)),
        "delivery" => Part::Delivery(crate::sim::delivery::build(c)),
        "events_processed" => Part::Count(c.events_processed),
        "trace_events" => Part::Count(c.trace.len() as u64),
        _ => return None,
    })
}

pub fn build(c: &Cluster, scenario: &str) -> Report {
    let brokers = brokers(c);
    let partitions = (0..c.partitions.len())
        .map(|p| partition_report(c, p))
        .collect();
    let producers = producers(c);
    let delivery = crate::sim::delivery::build(c);
    let consumers = consumers(c);
    Report {
        scenario: scenario.to_string(),
        seed: c.seed,
        end_ms: c.now,
        trace_hash: c.trace.hash_hex(),
        brokers,
        partitions,
        producers,
        consumers,
        acked_records_lost: c.invariants.total_lost(),
        invariant_violations: {
            let mut v = c.violations().to_vec();
            // records_accounted_for: every record sent is kept, lost,
            // failed (written or not) or still pending, exactly once.
            for d in &delivery {
                if d.accounted() != d.sent {
                    v.push(crate::sim::invariants::Violation {
                        at_ms: c.now,
                        invariant: "records_accounted_for".to_string(),
                        detail: format!(
                            "producer {}: {} records sent, {} accounted for",
                            d.producer,
                            d.sent,
                            d.accounted()
                        ),
                    });
                }
            }
            v
        },
        delivery,
        availability: availability(c),
        events_processed: c.events_processed,
        trace_events: c.trace.len(),
        #[cfg(group_protocols)]
        groups: group_history(c),
        settings: Default::default(),
    }
}

fn join(v: &[u32]) -> String {
    v.iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// `kafka-topics.sh --describe` for every topic.
pub fn describe(c: &Cluster) -> String {
    describe_head(c, usize::MAX)
}

/// [`describe`] limited to the first `max_partitions` partition lines, then one
/// line saying how many were left out (the page's table for huge clusters).
pub fn describe_head(c: &Cluster, max_partitions: usize) -> String {
    let mut out = String::new();
    let mut shown = 0usize;
    for t in &c.topics {
        out.push_str(&format!(
            "Topic: {}\tTopicId: {}\tPartitionCount: {}\tReplicationFactor: {}\tConfigs: {}\n",
            t.name,
            t.topic_id,
            t.partitions.len(),
            t.replication_factor,
            t.config.describe_configs()
        ));
        for &p in &t.partitions {
            if shown >= max_partitions {
                break;
            }
            shown += 1;
            out.push_str(&describe_partition(c, p));
            out.push('\n');
        }
    }
    if shown < c.partitions.len() {
        out.push_str(&format!(
            "({} more partitions not listed)\n",
            c.partitions.len() - shown
        ));
    }
    out
}

/// One partition's line of [`describe`] (tab-led, without the newline).
pub fn describe_partition(c: &Cluster, p: usize) -> String {
    let (Some(info), Some(reg)) = (c.partitions.get(p), c.controller.partitions.get(p)) else {
        return String::new();
    };
    format!(
        "\tTopic: {}\tPartition: {}\tLeader: {}\tReplicas: {}\tIsr: {}\tElr: {}\tLastKnownElr: {}",
        info.topic,
        info.partition,
        reg.leader.map_or("none".to_string(), |l| l.to_string()),
        join(&reg.replicas),
        join(&reg.isr),
        join(&reg.elr),
        join(&reg.last_known_elr)
    )
}

/// How many of a consumer's reads were of a partition offset it had read
/// before.
/// A group consumer's group half, as the report and the view give it.
pub fn group_report(c: &Cluster, g: &crate::sim::client::GroupMember) -> GroupReport {
    GroupReport {
        group_id: g.group_id.clone(),
        coordinator: g.coordinator,
        committed: g
            .committed
            .values()
            .map(|o| (c.partitions[o.partition].name(), o.offset, o.leader_epoch))
            .collect(),
        stored: stored_offsets(c, &g.group_id),
        commits: g.commits,
        errors: g.errors.clone(),
        #[cfg(group_protocols)]
        member: g.membership.as_ref().map(|m| MemberReport {
            member_id: m.member_id.to_string(),
            group_instance_id: m.instance_id.as_ref().map(|i| i.to_string()),
            generation: m.generation,
            state: m.state.name(),
            assignment: m
                .assignment
                .iter()
                .map(|p| c.partitions[*p].name())
                .collect(),
            rebalances: m.rebalances,
            protocol: if m.kip848 { "consumer" } else { "classic" },
        }),
        #[cfg(group_protocols)]
        coordinator_view: g
            .membership
            .as_ref()
            .map(|_| coordinator_group(c, &g.group_id)),
    }
}

/// Group `group` as the leader of its `__consumer_offsets` partition holds
/// it (GroupReport::coordinator_view).
/// Group `group` as the leader of its `__consumer_offsets` partition holds
/// it (GroupReport::coordinator_view).
#[cfg(group_protocols)]
pub fn coordinator_group(c: &Cluster, group: &str) -> Option<CoordinatorGroupReport> {
    let op = crate::sim::broker::coordinator::offsets_partition_in(&c.config, group)?;
    let leader = c.controller.partitions.get(op)?.leader?;
    let b = c.broker(leader).filter(|b| b.is_running())?;
    let shard = b.coordinator.get(&op).filter(|s| s.loaded)?;
    if let Some(g) = shard
        .consumer_groups
        .iter()
        .find(|(k, _)| &***k == group)
        .map(|(_, v)| v)
    {
        return Some(CoordinatorGroupReport {
            state: g.state(),
            generation: g.epoch,
            leader: None,
            members: g
                .members
                .iter()
                .map(|m| {
                    (
                        m.member_id.to_string(),
                        m.assigned.iter().map(|p| c.partitions[*p].name()).collect(),
                        consumer_name(c, m.client),
                        m.expires_at,
                    )
                })
                .collect(),
        });
    }
    let g = shard
        .classic
        .iter()
        .find(|(k, _)| &***k == group)
        .map(|(_, v)| v)?;
    Some(CoordinatorGroupReport {
        state: g.state.name(),
        generation: g.generation,
        leader: g.leader.as_ref().map(|l| l.to_string()),
        members: g
            .members
            .iter()
            .map(|m| {
                (
                    m.member_id.to_string(),
                    m.assignment
                        .iter()
                        .map(|p| c.partitions[*p].name())
                        .collect(),
                    consumer_name(c, m.client),
                    m.expires_at,
                )
            })
            .collect(),
    })
}

/// Each subscribing group's assignment history (Report::groups, the page's group card).
#[cfg(group_protocols)]
pub fn group_history(c: &Cluster) -> Vec<crate::sim::consumption::GroupHistory> {
    c.consumption
        .history(&c.consumers, |p| c.partitions[p].name())
}

/// The consumer a group member's requests come from.
#[cfg(group_protocols)]
fn consumer_name(c: &Cluster, client: crate::sim::protocol::Node) -> String {
    match client {
        crate::sim::protocol::Node::Consumer(i) => c
            .consumers
            .get(i as usize)
            .map(|k| k.name.clone())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// Group `group`'s offsets as the leader of its `__consumer_offsets`
/// partition holds them (GroupReport::stored).
fn stored_offsets(c: &Cluster, group: &str) -> Option<Vec<(String, u64, Option<u32>)>> {
    let op = crate::sim::broker::coordinator::offsets_partition_in(&c.config, group)?;
    let leader = c.controller.partitions.get(op)?.leader?;
    let b = c.broker(leader).filter(|b| b.is_running())?;
    let offsets = b
        .coordinator
        .get(&op)
        .and_then(|shard| {
            shard
                .groups
                .iter()
                .find(|(k, _)| &***k == group)
                .map(|(_, v)| v)
        })
        .map(|g| {
            g.values()
                .map(|o| (c.partitions[o.partition].name(), o.offset, o.leader_epoch))
                .collect()
        })
        .unwrap_or_default();
    Some(offsets)
}

pub fn read_twice(k: &crate::sim::client::Consumer) -> u64 {
    // By record id, not offset: after a truncation the same offset holds
    // another record, and reading that is no duplicate.
    let mut read: Vec<u64> = k.consumed_records.iter().map(|r| r.id).collect();
    let all = read.len();
    crate::sim::shared::sort_slim(&mut read);
    read.dedup();
    (all - read.len()) as u64
}
