//! Helpers shared by the scenario tests.
#![allow(dead_code)]

use failover_lab::sim::partition::Replica;
use failover_lab::sim::protocol::PartitionRegistration;
use failover_lab::sim::trace::{TraceEvent, TraceKind};
use failover_lab::Lab;

pub fn lab(json: &str) -> Lab {
    match Lab::from_json(json) {
        Ok(l) => l,
        Err(e) => panic!("scenario did not load: {e}"),
    }
}

pub fn scenario_file(name: &str) -> Lab {
    let path = format!("{}/scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    lab(&text)
}

pub fn replica(lab: &Lab, broker: u32, partition: usize) -> &Replica {
    lab.cluster
        .broker(broker)
        .and_then(|b| b.replicas.get(&partition))
        .unwrap_or_else(|| panic!("broker {broker} has no replica of partition {partition}"))
}

pub fn reg(lab: &Lab, partition: usize) -> &PartitionRegistration {
    &lab.cluster.controller.partitions[partition]
}

pub fn ids(lab: &Lab, broker: u32, partition: usize) -> Vec<u64> {
    replica(lab, broker, partition)
        .log
        .records()
        .map(|r| r.id)
        .collect()
}

pub fn digest(lab: &Lab, broker: u32, partition: usize) -> u64 {
    replica(lab, broker, partition).log.digest()
}

pub fn events<'a>(lab: &'a Lab, f: impl Fn(&TraceKind) -> bool + 'a) -> Vec<&'a TraceEvent> {
    lab.cluster.trace.events().filter(|e| f(&e.kind)).collect()
}

pub fn truncations(lab: &Lab, broker: u32) -> Vec<(u64, u64)> {
    events(
        lab,
        |k| matches!(k, TraceKind::Truncated { broker: b, .. } if *b == broker),
    )
    .iter()
    .map(|e| match &e.kind {
        TraceKind::Truncated {
            from_offset,
            to_offset,
            ..
        } => (*from_offset, *to_offset),
        _ => unreachable!(),
    })
    .collect()
}

pub fn no_duplicates(v: &[u64]) -> bool {
    let mut s = v.to_vec();
    s.sort_unstable();
    let n = s.len();
    s.dedup();
    s.len() == n
}

pub fn assert_no_violations(lab: &Lab) {
    let v = lab.cluster.violations();
    assert!(v.is_empty(), "invariant violations: {v:#?}");
}
