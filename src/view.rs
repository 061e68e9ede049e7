//! Read-only views for drawing: everything the page needs for one frame, as
//! plain serialisable data. The page never re-derives a Kafka rule from these;
//! it only draws them.

use serde::Serialize;

use crate::report::{
    broker_state, consumer_partitions, consumer_positions, ConsumerPartitionReport,
};
use crate::sim::partition::Role;
use crate::sim::protocol::Node;
use crate::sim::Cluster;

/// At most this many log cells per replica are sent (the tail of the log).
pub const MAX_CELLS: u64 = 48;

#[derive(Serialize)]
pub struct View {
    pub now_ms: u64,
    pub brokers: Vec<BrokerView>,
    pub partitions: Vec<PartitionView>,
    pub producers: Vec<ProducerView>,
    pub consumers: Vec<ConsumerView>,
    pub messages: Vec<MessageView>,
    pub metrics: Metrics,
    pub acked_records_lost: u64,
    pub invariant_violations: usize,
    pub trace_length: usize,
    /// Partitions of `__consumer_offsets` not shown (no group of the
    /// scenario commits there); absent when there are none.
    #[serde(skip_serializing_if = "is_zero")]
    pub internal_partitions_hidden: usize,
    /// Each subscribing group's assignment history (the group card's lanes;
    /// the report's `groups`). Absent without subscribing consumers.
    #[cfg(group_protocols)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<crate::sim::consumption::GroupHistory>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Serialize)]
pub struct BrokerView {
    pub id: u32,
    pub state: &'static str,
    pub broker_epoch: u64,
    pub leader_of: usize,
    /// `broker.rack`, or null when the brokers have no racks.
    pub rack: Option<String>,
}

#[derive(Serialize)]
pub struct ReplicaView {
    pub broker: u32,
    pub role: Role,
    pub alive: bool,
    pub leader_epoch: u32,
    pub log_end_offset: u64,
    pub high_watermark: u64,
    pub epochs: Vec<(u32, u64)>,
    /// Offset of `cells[0]`.
    pub first_cell: u64,
    /// Leader epoch of each record from `first_cell` to the LEO.
    pub cells: Vec<u32>,
    pub in_isr: bool,
}

#[derive(Serialize)]
pub struct PartitionView {
    pub topic: String,
    pub partition: u32,
    pub leader: Option<u32>,
    pub leader_epoch: u32,
    pub partition_epoch: u32,
    pub replicas: Vec<u32>,
    pub isr: Vec<u32>,
    pub elr: Vec<u32>,
    pub last_known_elr: Vec<u32>,
    pub min_insync_replicas: u32,
    pub unclean_leader_election_enable: bool,
    pub offline: bool,
    pub under_replicated: bool,
    pub under_min_isr: bool,
    pub at_min_isr: bool,
    pub acked_records_lost: u64,
    pub replica_views: Vec<ReplicaView>,
    /// A partition of `__consumer_offsets` holding these groups' commits
    /// (only those are shown; absent on ordinary partitions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

#[derive(Serialize)]
pub struct ProducerView {
    pub id: String,
    pub acks: &'static str,
    pub idempotent: bool,
    pub acked: u64,
    pub failed: u64,
    pub retries: u64,
    pub in_flight: u64,
    pub queued: u64,
    pub errors: std::collections::BTreeMap<String, u64>,
    pub last_errors: Vec<(String, String)>,
}

#[derive(Serialize)]
pub struct ConsumerView {
    pub id: String,
    pub consumed: u64,
    pub truncations_detected: u64,
    pub positions: Vec<(String, u64)>,
    pub errors: std::collections::BTreeMap<String, u64>,
    /// `client.rack`, or null.
    pub client_rack: Option<String>,
    /// Per partition: the broker it reads from (KIP-392), its lag.
    pub partitions: Vec<ConsumerPartitionReport>,
    pub running: bool,
    /// Records read more than once.
    pub read_twice: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<crate::report::GroupReport>,
}

#[derive(Serialize)]
pub struct MessageView {
    pub from: String,
    pub to: String,
    pub kind: &'static str,
    pub sent_ms: u64,
    pub arrive_ms: u64,
}

/// Cumulative counters and gauges under Kafka's metric names; the page turns
/// counters into rates over its own sampling window.
#[derive(Serialize)]
#[allow(non_snake_case)]
pub struct Metrics {
    pub UnderReplicatedPartitions: usize,
    pub UnderMinIsrPartitionCount: usize,
    pub AtMinIsrPartitionCount: usize,
    pub OfflinePartitionsCount: usize,
    pub IsrShrinks: u64,
    pub IsrExpands: u64,
    pub LeaderElections: u64,
    pub UncleanLeaderElections: u64,
    pub FailedProduceRequests: u64,
    pub RecordRetries: u64,
    pub RecordErrors: u64,
    pub RecordsAcked: u64,
    pub RecordsConsumed: u64,
}

fn node_name(n: Node) -> String {
    match n {
        Node::Controller => "controller".into(),
        Node::Broker(b) => format!("broker-{b}"),
        Node::Producer(p) => format!("producer-{p}"),
        Node::Consumer(c) => format!("consumer-{c}"),
    }
}

pub fn build(c: &Cluster, max_partitions: usize) -> View {
    build_selected(c, max_partitions, &[])
}

/// [`build`] with the detailed state of the first `max_partitions` partitions
/// plus those in `focus` (partition indexes, e.g. one picked in the overview).
pub fn build_selected(c: &Cluster, max_partitions: usize, focus: &[usize]) -> View {
    // How many partitions each broker leads, in one pass over the
    // registrations (a pass per broker was 1.2 M steps a frame on the
    // 20,000-partition bench, 4.5 % of the page's time while it played).
    let mut leads = vec![0usize; c.brokers.len() + 1];
    for r in c.controller.partitions.iter() {
        if let Some(n) = r.leader.and_then(|l| leads.get_mut(l as usize)) {
            *n += 1;
        }
    }
    let brokers = (1..=c.brokers.len() as u32)
        .map(|b| BrokerView {
            id: b,
            state: broker_state(c, b),
            broker_epoch: c.controller.brokers[b as usize - 1].broker_epoch,
            leader_of: leads[b as usize],
            rack: c.rack_of(b).map(str::to_string),
        })
        .collect();
    let mut metrics = Metrics {
        UnderReplicatedPartitions: 0,
        UnderMinIsrPartitionCount: 0,
        AtMinIsrPartitionCount: 0,
        OfflinePartitionsCount: 0,
        IsrShrinks: c.controller.isr_shrinks,
        IsrExpands: c.controller.isr_expands,
        LeaderElections: c.controller.elections,
        UncleanLeaderElections: c.controller.unclean_elections,
        FailedProduceRequests: c
            .producers
            .iter()
            .map(|p| p.stats.errors.values().sum::<u64>())
            .sum(),
        RecordRetries: c.producers.iter().map(|p| p.stats.retries).sum(),
        RecordErrors: c.producers.iter().map(|p| p.stats.failed).sum(),
        RecordsAcked: c.producers.iter().map(|p| p.stats.acked).sum(),
        RecordsConsumed: c.consumers.iter().map(|k| k.consumed).sum(),
    };
    // __consumer_offsets is collapsed to the partitions the scenario's
    // groups commit to, each named with its groups.
    let mut group_partitions: Vec<(usize, String)> = c
        .consumers
        .iter()
        .filter_map(|k| k.config.group_id.clone())
        .filter_map(|g| {
            let (first, n) = c.config.offsets_partitions?;
            let p = first + crate::sim::broker::coordinator::offsets_partition_for(&g, n) as usize;
            Some((p, g))
        })
        .collect();
    crate::sim::shared::sort_slim(&mut group_partitions);
    group_partitions.dedup();
    let mut internal_partitions_hidden = 0;
    let mut partitions = Vec::new();
    for (p, info) in c.partitions.iter().enumerate() {
        let reg = &c.controller.partitions[p];
        let min_isr = (info.config.min_insync_replicas as usize).min(reg.replicas.len());
        let offline = reg.leader.is_none();
        let under_replicated = reg.isr.len() < reg.replicas.len();
        let under_min = offline || reg.isr.len() < min_isr;
        let at_min = !offline && reg.isr.len() == min_isr;
        metrics.UnderReplicatedPartitions += usize::from(under_replicated);
        metrics.UnderMinIsrPartitionCount += usize::from(under_min);
        metrics.AtMinIsrPartitionCount += usize::from(at_min);
        metrics.OfflinePartitionsCount += usize::from(offline);
        let groups: Vec<String> = group_partitions
            .iter()
            .filter(|(gp, _)| *gp == p)
            .map(|(_, g)| g.clone())
            .collect();
        if info.topic == crate::sim::OFFSETS_TOPIC {
            if groups.is_empty() && !focus.contains(&p) {
                internal_partitions_hidden += 1;
                continue;
            }
        } else if p >= max_partitions && !focus.contains(&p) {
            continue;
        }
        let replica_views = info
            .replicas
            .iter()
            .filter_map(|b| {
                let broker = c.broker(*b)?;
                let r = broker.replicas.get(&p)?;
                let leo = r.log.log_end_offset();
                let first = leo.saturating_sub(MAX_CELLS);
                Some(ReplicaView {
                    broker: *b,
                    role: if broker.is_running() {
                        r.role
                    } else {
                        Role::Unknown
                    },
                    alive: broker.is_running(),
                    leader_epoch: r.leader_epoch,
                    log_end_offset: leo,
                    high_watermark: r.log.high_watermark,
                    epochs: r.log.epochs().to_vec(),
                    first_cell: first,
                    cells: r
                        .log
                        .records_between(first, u64::MAX)
                        .iter()
                        .map(|x| x.epoch)
                        .collect(),
                    in_isr: reg.isr.contains(b),
                })
            })
            .collect();
        partitions.push(PartitionView {
            topic: info.topic.clone(),
            partition: info.partition,
            leader: reg.leader,
            leader_epoch: reg.leader_epoch,
            partition_epoch: reg.partition_epoch,
            replicas: reg.replicas.clone(),
            isr: reg.isr.clone(),
            elr: reg.elr.clone(),
            last_known_elr: reg.last_known_elr.clone(),
            min_insync_replicas: info.config.min_insync_replicas,
            unclean_leader_election_enable: info.config.unclean_leader_election_enable,
            offline,
            under_replicated,
            under_min_isr: under_min,
            at_min_isr: at_min,
            acked_records_lost: c.invariants.lost(p),
            replica_views,
            groups,
        });
    }
    let producers = c
        .producers
        .iter()
        .map(|p| (p, acks_label(p)))
        .map(|(p, acks)| ProducerView {
            id: p.name.clone(),
            acks,
            // Idempotence applies to its acks=all sends only (Kafka requires
            // acks=all for it).
            idempotent: p.config.enable_idempotence && acks.ends_with("all"),
            acked: p.stats.acked,
            failed: p.stats.failed,
            retries: p.stats.retries,
            in_flight: p.in_flight_records(),
            queued: p.queued_records(),
            errors: p.stats.errors.clone(),
            last_errors: p
                .partitions
                .iter()
                .filter_map(|(pi, s)| {
                    s.last_error.map(|e| {
                        let info = &c.partitions[pi];
                        (info.name(), e.name().to_string())
                    })
                })
                .collect(),
        })
        .collect();
    let consumers = c
        .consumers
        .iter()
        .map(|k| ConsumerView {
            id: k.name.clone(),
            consumed: k.consumed,
            truncations_detected: k.truncations_detected,
            positions: consumer_positions(c, k),
            errors: k.errors.clone(),
            client_rack: k.config.client_rack.clone(),
            partitions: consumer_partitions(c, k),
            running: k.running,
            read_twice: crate::report::read_twice(k),
            group: k.group.as_ref().map(|g| crate::report::group_report(c, g)),
        })
        .collect();
    let messages = c
        .in_flight()
        .into_iter()
        .take(500)
        .map(|(sent, at, from, to, kind)| MessageView {
            from: node_name(from),
            to: node_name(to),
            kind,
            sent_ms: sent,
            arrive_ms: at,
        })
        .collect();
    View {
        now_ms: c.now,
        brokers,
        partitions,
        producers,
        consumers,
        messages,
        metrics,
        acked_records_lost: c.invariants.total_lost(),
        invariant_violations: c.violations().len(),
        trace_length: c.trace.len(),
        internal_partitions_hidden,
        #[cfg(group_protocols)]
        groups: crate::report::group_history(c),
    }
}

// ================================================================== overview

/// Words per partition in [`overview`].
pub const OVERVIEW_STRIDE: usize = 4;
/// No leader (`Leader: none`).
pub const FLAG_OFFLINE: u32 = 1;
/// ISR smaller than the replica set.
pub const FLAG_UNDER_REPLICATED: u32 = 2;
/// ISR size equals `min.insync.replicas` (one more loss blocks acks=all).
pub const FLAG_AT_MIN_ISR: u32 = 4;
/// ISR below `min.insync.replicas` (acks=all writes are refused), or offline.
pub const FLAG_UNDER_MIN_ISR: u32 = 8;
/// A replica truncated its log within the last [`TRUNCATING_WINDOW_MS`].
pub const FLAG_TRUNCATING: u32 = 16;
/// Acknowledged records of this partition are lost.
pub const FLAG_ACKED_LOST: u32 = 32;
/// The registered leader's broker is not running normally (crashed, shut
/// down, isolated or fenced) and the controller has not moved leadership yet.
pub const FLAG_LEADER_DOWN: u32 = 64;
/// How long after a truncation a partition counts as truncating.
pub const TRUNCATING_WINDOW_MS: u64 = 2_000;

/// Every partition at once, for the canvas overview: `OVERVIEW_STRIDE` words
/// per partition index — `[leader (0 = none), isr | replicas << 8 |
/// min_isr << 16, leader_epoch, flags]`. Read-only; the flags are the same
/// facts as the detailed view's `offline` / `under_replicated` / … fields.
pub fn overview(c: &Cluster) -> Vec<u32> {
    let states: Vec<bool> = (1..=c.brokers.len() as u32)
        .map(|b| broker_state(c, b) == "running")
        .collect();
    let mut truncating = vec![false; c.partitions.len()];
    let since = c.now.saturating_sub(TRUNCATING_WINDOW_MS);
    for e in c.trace.events().rev() {
        if e.at_ms < since {
            break;
        }
        if let crate::sim::trace::TraceKind::Truncated {
            topic, partition, ..
        } = &e.kind
        {
            if let Ok(p) = c.partition_index(topic, *partition) {
                truncating[p] = true;
            }
        }
    }
    let mut out = Vec::with_capacity(c.partitions.len() * OVERVIEW_STRIDE);
    for (p, info) in c.partitions.iter().enumerate() {
        let reg = &c.controller.partitions[p];
        let min_isr = (info.config.min_insync_replicas as usize).min(reg.replicas.len());
        let offline = reg.leader.is_none();
        let mut flags = 0;
        if offline {
            flags |= FLAG_OFFLINE;
        }
        if reg.isr.len() < reg.replicas.len() {
            flags |= FLAG_UNDER_REPLICATED;
        }
        if !offline && reg.isr.len() == min_isr {
            flags |= FLAG_AT_MIN_ISR;
        }
        if offline || reg.isr.len() < min_isr {
            flags |= FLAG_UNDER_MIN_ISR;
        }
        if truncating[p] {
            flags |= FLAG_TRUNCATING;
        }
        if c.invariants.lost(p) > 0 {
            flags |= FLAG_ACKED_LOST;
        }
        if reg
            .leader
            .is_some_and(|l| !states.get(l as usize - 1).copied().unwrap_or(false))
        {
            flags |= FLAG_LEADER_DOWN;
        }
        let sizes = (reg.isr.len().min(255) as u32)
            | ((reg.replicas.len().min(255) as u32) << 8)
            | ((min_isr.min(255) as u32) << 16);
        out.extend_from_slice(&[reg.leader.unwrap_or(0), sizes, reg.leader_epoch, flags]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Action, Lab};

    const SCENARIO: &str = r#"{"name": "t", "seed": 1, "brokers": 3,
        "config": {"min.insync.replicas": 2},
        "topics": [{"name": "t", "partitions": 6, "replication_factor": 3}],
        "run_until_ms": 60000}"#;

    #[test]
    fn each_broker_view_counts_the_partitions_the_controller_names_it_leader_of() {
        let mut lab = Lab::from_json(SCENARIO).unwrap();
        lab.cluster.run_until(5_000);
        let led = |c: &Cluster, b: u32| {
            c.controller
                .partitions
                .iter()
                .filter(|r| r.leader == Some(b))
                .count()
        };
        let before = build_selected(&lab.cluster, 8, &[]);
        assert_eq!(before.brokers.iter().map(|b| b.leader_of).sum::<usize>(), 6);
        for b in &before.brokers {
            assert_eq!(b.leader_of, led(&lab.cluster, b.id), "broker {}", b.id);
        }
        // After broker 1 is fenced, its partitions are led by the others.
        lab.cluster.apply(Action::Crash(1)).unwrap();
        lab.cluster.run_until(30_000);
        let after = build_selected(&lab.cluster, 8, &[]);
        assert_eq!(after.brokers[0].leader_of, 0);
        assert_eq!(after.brokers.iter().map(|b| b.leader_of).sum::<usize>(), 6);
        for b in &after.brokers {
            assert_eq!(b.leader_of, led(&lab.cluster, b.id), "broker {}", b.id);
        }
    }

    #[test]
    fn the_overview_has_one_record_per_partition_and_shows_a_crash() {
        let mut lab = Lab::from_json(SCENARIO).unwrap();
        lab.cluster.run_until(5_000);
        let o = overview(&lab.cluster);
        assert_eq!(o.len(), 6 * OVERVIEW_STRIDE);
        for p in o.chunks(OVERVIEW_STRIDE) {
            assert!(p[0] >= 1 && p[0] <= 3);
            assert_eq!(p[1], 3 | (3 << 8) | (2 << 16));
            assert_eq!(p[3], 0);
        }
        lab.cluster.apply(Action::Crash(1)).unwrap();
        lab.cluster.run_until(5_001);
        let o = overview(&lab.cluster);
        // Before the session expires, broker 1's partitions keep a dead leader.
        assert!(o
            .chunks(OVERVIEW_STRIDE)
            .any(|p| p[0] == 1 && p[3] & FLAG_LEADER_DOWN != 0));
        lab.cluster.run_until(30_000);
        let o = overview(&lab.cluster);
        for p in o.chunks(OVERVIEW_STRIDE) {
            assert_ne!(p[0], 1, "leadership moved away from broker 1");
            assert_ne!(p[3] & FLAG_UNDER_REPLICATED, 0);
            assert_ne!(p[3] & FLAG_AT_MIN_ISR, 0);
        }
        assert_eq!(
            crate::report::describe_partition(&lab.cluster, 0),
            lab.describe().lines().nth(1).unwrap()
        );
    }
}

/// The availability strip and recovery badges (`www/render/availability.js`).
#[derive(Clone, Debug, Serialize)]
pub struct AvailabilityView {
    pub now_ms: u64,
    pub to_ms: u64,
    pub bucket_ms: u64,
    /// Cause names, in the order of each bucket's counts.
    pub causes: [&'static str; crate::sim::availability::CAUSES],
    /// Per bucket of simulated time up to now: the most partitions
    /// unavailable at once for each cause.
    pub counts: Vec<[u32; crate::sim::availability::CAUSES]>,
    /// Per bucket: the p99 produce latency of the records acknowledged in it.
    pub p99_ms: Vec<Option<u64>>,
    /// Per bucket: the most partitions of subscribing groups read by no
    /// member at once (`consumption.rs`); absent without subscribing consumers.
    #[cfg(group_protocols)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_consumed: Option<Vec<u32>>,
    pub faults: Vec<FaultBadge>,
    /// `request-latency-avg` (in µs, an integer: no float formatting in the
    /// wasm) / `-max` (ms) over every acknowledged record so far.
    pub latency_avg_us: Option<u64>,
    pub latency_max_ms: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FaultBadge {
    pub at_ms: u64,
    pub action: &'static str,
    pub brokers: Vec<u32>,
    pub partitions: usize,
    /// Partitions it stalled without leading them (an ISR follower failed).
    pub stalled: usize,
    pub rto_ms: Option<u64>,
    pub phases: Vec<PhaseBadge>,
}

/// One phase of a fault's recovery: where it starts (click to seek there),
/// how long it took so far (`null` while open), and the settings behind it.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseBadge {
    pub name: &'static str,
    pub from_ms: Option<u64>,
    pub ms: Option<u64>,
    pub setting: String,
}

pub fn availability(c: &Cluster, to_ms: u64, buckets: usize) -> AvailabilityView {
    use crate::sim::availability::Cause;
    let a = &c.availability;
    let to_ms = to_ms.max(c.now).max(1);
    let buckets = buckets.clamp(1, 2_000) as u64;
    let bucket_ms = to_ms.div_ceil(buckets).max(1);
    let filled = c.now.div_ceil(bucket_ms);
    let mut counts = Vec::new();
    let mut p99_ms = Vec::new();
    for i in 0..filled {
        let (from, to) = (i * bucket_ms, ((i + 1) * bucket_ms).min(c.now + 1));
        counts.push(a.max_counts(from, to));
        p99_ms.push(a.latency_p99(from, to));
    }
    #[cfg(group_protocols)]
    let not_consumed = (!c.consumption.is_empty()).then(|| {
        (0..filled)
            .map(|i| {
                let (from, to) = (i * bucket_ms, ((i + 1) * bucket_ms).min(c.now + 1));
                c.consumption.max_not_consumed(from, to)
            })
            .collect()
    });
    let cfg = &c.config;
    let producer = c.producers.first().map(|p| &p.config);
    let client_setting = producer.map_or_else(
        || "no producer".to_string(),
        |p| {
            format!(
                "retry.backoff.ms={}, request.timeout.ms={}, metadata.max.age.ms={}",
                p.retry_backoff_ms, p.request_timeout_ms, p.metadata_max_age_ms
            )
        },
    );
    let faults = a
        .faults()
        .iter()
        .map(|f| {
            let r = f.recovery();
            let shutdown = f
                .actions
                .iter()
                .all(|x| *x == crate::sim::availability::FaultAction::Shutdown);
            let detection = if shutdown {
                "controlled shutdown: one heartbeat (controlled.shutdown.enable=true)".to_string()
            } else {
                format!(
                    "broker.session.timeout.ms={}, broker.heartbeat.interval.ms={}",
                    cfg.broker_session_timeout_ms, cfg.broker_heartbeat_interval_ms
                )
            };
            let phase = |name, from: Option<u64>, ms: Option<u64>, setting: String| PhaseBadge {
                name,
                from_ms: from,
                ms,
                setting,
            };
            FaultBadge {
                at_ms: f.at_ms,
                action: f.actions.first().map_or("crash", |x| x.as_str()),
                brokers: f.brokers.clone(),
                partitions: f.partitions().count(),
                stalled: f.stalled_partitions().count(),
                rto_ms: r.rto_ms,
                phases: vec![
                    phase("detection", Some(f.at_ms), r.phases.detection_ms, detection),
                    phase(
                        "election",
                        r.fenced_at_ms,
                        r.phases.election_ms,
                        format!(
                            "ISR, eligible.leader.replicas.enable={}, unclean.leader.election.enable={}",
                            cfg.eligible_leader_replicas_enable,
                            cfg.topic_defaults.unclean_leader_election_enable
                        ),
                    ),
                    phase(
                        "metadata",
                        r.elected_at_ms,
                        r.phases.metadata_ms,
                        format!(
                            "sim.controller.record.write.us={}, sim.broker.metadata.apply.us={}, sim.broker.become.leader.us={}",
                            cfg.costs.controller_record_us,
                            cfg.costs.broker_metadata_apply_us,
                            cfg.costs.broker_become_leader_us
                        ),
                    ),
                    phase("client", r.applied_at_ms, r.phases.client_ms, client_setting.clone()),
                ],
            }
        })
        .collect();
    let h = &a.produce_latency;
    AvailabilityView {
        now_ms: c.now,
        to_ms,
        bucket_ms,
        causes: Cause::ALL.map(Cause::as_str),
        counts,
        p99_ms,
        #[cfg(group_protocols)]
        not_consumed,
        faults,
        latency_avg_us: a.latency_mean_us(),
        latency_max_ms: h.max(),
    }
}

/// The acks a producer's records went out with: its config's until it sends,
/// then what its sends used (a produce step may set its own acks, so a
/// compare lane's `acks=1` shows on the producer that sent with it).
fn acks_label(p: &crate::sim::client::Producer) -> &'static str {
    match p.stats.acks_sent {
        0 => p.config.acks.as_str(),
        0b001 => "0",
        0b010 => "1",
        0b100 => "all",
        0b011 => "0 and 1",
        0b101 => "0 and all",
        0b110 => "1 and all",
        _ => "0, 1 and all",
    }
}
