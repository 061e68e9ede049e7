//! Same scenario + seed ⇒ the same trace, byte for byte (DESIGN.md "Determinism").

mod common;
use common::*;

#[test]
fn same_scenario_and_seed_give_the_same_trace_hash_run_after_run() {
    let a = {
        let mut l = scenario_file("leader-dies.json");
        l.run_to_end();
        l.report()
    };
    let b = {
        let mut l = scenario_file("leader-dies.json");
        l.run_to_end();
        l.report()
    };
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn a_different_seed_changes_network_timing_and_so_the_trace() {
    let mut a = scenario_file("leader-dies.json");
    let mut spec = a.scenario.clone();
    spec.spec.seed += 1;
    let mut b = failover_lab::Lab::new(spec);
    a.run_to_end();
    b.run_to_end();
    assert_ne!(a.report().trace_hash, b.report().trace_hash);
}

#[test]
fn a_cloned_world_replays_identically_which_is_what_time_travel_relies_on() {
    let mut a = scenario_file("leader-dies.json");
    a.cluster.run_until(12_000);
    let mut b = a.clone();
    a.run_to_end();
    b.run_to_end();
    assert_eq!(a.report().trace_hash, b.report().trace_hash);
}
