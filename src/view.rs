//! Read-only views for drawing: everything the page needs for one frame, as
//! plain serialisable data. The page never re-derives a Kafka rule from these;
//! it only draws them.

use serde::Serialize;

use crate::report::broker_state;
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
}

#[derive(Serialize)]
pub struct BrokerView {
    pub id: u32,
    pub state: &'static str,
    pub broker_epoch: u64,
    pub leader_of: usize,
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
    pub min_insync_replicas: u32,
    pub unclean_leader_election_enable: bool,
    pub offline: bool,
    pub under_replicated: bool,
    pub under_min_isr: bool,
    pub at_min_isr: bool,
    pub acked_records_lost: u64,
    pub replica_views: Vec<ReplicaView>,
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
    let brokers = (1..=c.brokers.len() as u32)
        .map(|b| BrokerView {
            id: b,
            state: broker_state(c, b),
            broker_epoch: c.controller.brokers[b as usize - 1].broker_epoch,
            leader_of: c
                .controller
                .partitions
                .iter()
                .filter(|r| r.leader == Some(b))
                .count(),
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
        if p >= max_partitions {
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
                    cells: r.log.records()[first as usize..]
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
            min_insync_replicas: info.config.min_insync_replicas,
            unclean_leader_election_enable: info.config.unclean_leader_election_enable,
            offline,
            under_replicated,
            under_min_isr: under_min,
            at_min_isr: at_min,
            acked_records_lost: c.invariants.lost(p),
            replica_views,
        });
    }
    let producers = c
        .producers
        .iter()
        .map(|p| ProducerView {
            id: p.name.clone(),
            acks: p.config.acks.as_str(),
            idempotent: p.config.enable_idempotence,
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
                        let info = &c.partitions[*pi];
                        (
                            format!("{}-{}", info.topic, info.partition),
                            e.name().to_string(),
                        )
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
            positions: k
                .positions
                .iter()
                .map(|(p, pos)| {
                    let info = &c.partitions[*p];
                    (format!("{}-{}", info.topic, info.partition), pos.offset)
                })
                .collect(),
            errors: k.errors.clone(),
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
    }
}
