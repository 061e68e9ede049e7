//! The page builds a big world over several tasks (issue 63): an unstarted
//! cluster, then its start a few parts at a time (`Cluster::unstarted`,
//! `Cluster::start_part`, `WasmLab.unstarted`/`startParts`). That must be the
//! world `Lab::new` builds, event for event. And a tour question that reads
//! one field of the report gets it built alone (`report::part`), which must
//! equal that field of the whole report.

mod common;
use common::*;
use failover_lab::Lab;

fn scenario(name: &str) -> failover_lab::Scenario {
    let path = format!("{}/scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    failover_lab::scenario::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn report_json(l: &Lab) -> String {
    serde_json::to_string(&l.report()).unwrap_or_default()
}

#[test]
fn a_world_started_part_by_part_is_the_world_new_builds() {
    for file in [
        "leader-dies.json",
        "tour-11-mass-failover.json",
        "tour-19-rack-loss-20000.json",
    ] {
        let s = scenario(file);
        let mut whole = Lab::new(s.clone());
        let mut parts = Lab::unstarted(s);
        let n = parts.cluster.start_parts();
        assert!(n > 2, "{file}: {n} parts");
        for k in 0..n {
            parts.cluster.start_part(k);
        }
        // A part past the end does nothing.
        parts.cluster.start_part(n);
        assert_eq!(report_json(&whole), report_json(&parts), "{file} at 0");
        let t = if file.starts_with("tour-19") {
            3_000
        } else {
            whole.scenario.run_until_ms
        };
        whole.cluster.run_until(t);
        parts.cluster.run_until(t);
        assert_eq!(
            whole.cluster.events_processed, parts.cluster.events_processed,
            "{file}"
        );
        assert_eq!(report_json(&whole), report_json(&parts), "{file} at {t}");
    }
}

#[test]
fn an_unstarted_world_is_not_yet_the_started_one() {
    // What the parts do is needed: without them the world differs (the
    // test above compares something that the start changes).
    let s = scenario("leader-dies.json");
    let whole = Lab::new(s.clone());
    let parts = Lab::unstarted(s);
    assert_ne!(report_json(&whole), report_json(&parts));
}

/// Most of a big world's building is making its replicas (60,000 on the
/// 20,000-partition tour): they come in the start's first parts, at most
/// `HOST_PART_PARTITIONS` partitions' worth each, not in `unstarted`'s one
/// call.
#[test]
fn a_big_worlds_replicas_are_made_a_bounded_run_of_partitions_per_part() {
    use failover_lab::sim::cluster::HOST_PART_PARTITIONS;
    let mut l = Lab::unstarted(scenario("tour-19-rack-loss-20000.json"));
    let hosted = |l: &Lab| -> usize { l.cluster.brokers.iter().map(|b| b.replicas.len()).sum() };
    assert_eq!(hosted(&l), 0, "unstarted makes no replica");
    let partitions = l.cluster.partitions.len();
    let rf = l.cluster.partitions[0].replicas.len();
    let mut k = 0;
    while hosted(&l) < partitions * rf {
        let before = hosted(&l);
        l.cluster.start_part(k);
        let made = hosted(&l) - before;
        assert!(
            made > 0 && made <= HOST_PART_PARTITIONS * rf,
            "part {k} made {made} replicas"
        );
        k += 1;
    }
    assert_eq!(k, partitions.div_ceil(HOST_PART_PARTITIONS));
}

#[test]
fn a_report_field_built_alone_equals_that_field_of_the_whole_report() {
    for (file, t) in [
        ("tour-11-mass-failover.json", 12_000),
        ("leader-dies.json", 20_000),
        // A consumer in a group, past its unclean election: `consumers` and
        // `delivery` with something in them.
        ("tour-15-unclean-committed-offsets.json", 40_000),
    ] {
        let mut l = scenario_file(file);
        l.cluster.run_until(t);
        let whole = serde_json::to_value(l.report()).unwrap_or_default();
        let keys = [
            "scenario",
            "seed",
            "end_ms",
            "trace_hash",
            "brokers",
            "producers",
            "acked_records_lost",
            "availability",
            "consumers",
            "delivery",
            "events_processed",
            "trace_events",
        ];
        for key in keys {
            let part = failover_lab::report::part(&l.cluster, &l.scenario.name, key)
                .and_then(|p| serde_json::to_value(p).ok());
            assert_eq!(part.as_ref(), whole.get(key), "{file}: {key}");
        }
        assert!(
            whole["availability"]["faults"]
                .as_array()
                .is_some_and(|f| !f.is_empty()),
            "{file}: a fault to compare"
        );
        if file.starts_with("tour-15") {
            let group = &whole["consumers"][0]["group"];
            assert!(
                group.is_object(),
                "{file}: a consumer in a group to compare"
            );
            assert!(
                whole["delivery"].as_array().is_some_and(|d| !d.is_empty()),
                "{file}: a delivery to compare"
            );
        }
        // A compare lane's summary reads the first partition alone.
        let first = failover_lab::report::part(&l.cluster, &l.scenario.name, "first_partition")
            .and_then(|p| serde_json::to_value(p).ok());
        assert_eq!(
            first.as_ref(),
            whole["partitions"].get(0),
            "{file}: first_partition"
        );
        assert!(
            first.is_some_and(|f| f.is_object()),
            "{file}: a first partition"
        );
        // The big ones are not built alone.
        for key in ["partitions", "invariant_violations", "settings", "nope"] {
            assert!(
                failover_lab::report::part(&l.cluster, &l.scenario.name, key).is_none(),
                "{key}"
            );
        }
    }
}
