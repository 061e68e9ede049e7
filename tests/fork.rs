//! Forks, "what if … here?" (issue 65; src/fork.rs): a fork of a run at t is
//! the parent's scenario with the steps taken by t, the reader's actions
//! taken by t, and the new action at t. Its trace is the parent's up to the
//! new action, and the first difference between the two is computed by the
//! core.

mod common;
use common::*;

use failover_lab::fork::{first_difference, fork_scenario};
use failover_lab::sim::trace::TraceKind;
use failover_lab::Lab;
use serde_json::{json, Value};

fn file(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("scenarios/{name}")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The parent run as the page drives it: the scenario, and the reader's
/// actions applied when the run reaches their time.
fn run_with_actions(scenario: &Value, actions: &[Value], until: u64) -> Lab {
    let mut l = Lab::from_json(&scenario.to_string()).unwrap();
    for s in actions {
        let mut a = s.as_object().unwrap().clone();
        let at = a.remove("at_ms").unwrap().as_u64().unwrap();
        l.cluster.run_until(at);
        let action =
            failover_lab::scenario::parse_action(&Value::Object(a), &l.scenario.spec).unwrap();
        l.cluster.apply(action).unwrap();
    }
    l.cluster.run_until(until);
    l
}

fn run(scenario: &Value) -> Lab {
    let mut l = Lab::from_json(&scenario.to_string()).unwrap();
    l.run_to_end();
    l
}

#[test]
fn a_fork_is_the_parents_steps_before_t_then_the_new_step_at_t() {
    // leader-dies: crash 1 at 10 s, restart 1 at 30 s. The reader isolated
    // broker 3 at 4 s and healed it at 20 s, then went back to 15 s and asked
    // "what if broker 2 had crashed here?".
    let parent = file("leader-dies.json");
    let actions = [
        json!({"at_ms": 4000, "isolate": 3}),
        json!({"at_ms": 20000, "heal": 3}),
    ];
    let fork = fork_scenario(&parent, &actions, 15000, &json!({"crash": 2})).unwrap();
    assert_eq!(
        fork["steps"],
        json!([
            {"at_ms": 4000, "isolate": 3},
            {"at_ms": 10000, "crash": 1},
            {"at_ms": 15000, "crash": 2},
        ]),
        "the restart at 30 s and the heal at 20 s are the parent's future: a fork replaces it"
    );
    for key in [
        "seed",
        "brokers",
        "topics",
        "clients",
        "config",
        "run_until_ms",
    ] {
        assert_eq!(fork[key], parent[key], "{key} is the parent's");
    }
}

#[test]
fn the_fork_runs_the_parents_run_up_to_t_and_the_core_finds_where_they_part() {
    let parent = file("leader-dies.json");
    let actions = [
        json!({"at_ms": 4000, "isolate": 3}),
        json!({"at_ms": 6000, "heal": 3}),
    ];
    let t = 15000;
    let a = run_with_actions(&parent, &actions, 60000);
    let b = run(&fork_scenario(&parent, &actions, t, &json!({"crash": 2})).unwrap());
    let d = first_difference(&a.cluster.trace, &b.cluster.trace, 0).expect("the lanes part");
    // Every event before t is the same; the first difference is the new step itself.
    assert_eq!(d.at_ms, t);
    assert!(a.cluster.trace.events().take(d.index).all(|e| e.at_ms <= t));
    assert!(
        matches!(&d.b.unwrap().kind, TraceKind::Step { action } if action.contains("crash")),
        "{:?}",
        d.b
    );
    // Looking again from the divergence on finds it again; from the start, the same.
    assert_eq!(
        first_difference(&a.cluster.trace, &b.cluster.trace, d.index).map(|x| x.index),
        Some(d.index)
    );
    // A lane compared with itself never parts.
    assert!(first_difference(&a.cluster.trace, &a.cluster.trace, 0).is_none());
    // A trace that is a prefix of the other parts where it ends.
    let mut early = run_with_actions(&parent, &actions, 5000);
    early.cluster.run_until(5000);
    let p = first_difference(&early.cluster.trace, &a.cluster.trace, 0).unwrap();
    assert_eq!(p.index, early.cluster.trace.len());
    assert!(p.a.is_none() && p.b.is_some());
}

#[test]
fn the_same_fork_twice_gives_the_same_trace_hash() {
    let parent = file("leader-dies.json");
    let make = || {
        let f = fork_scenario(
            &parent,
            &[json!({"at_ms": 4000, "isolate": 3})],
            12000,
            &json!({"restart": 1}),
        )
        .unwrap();
        run(&f).report().trace_hash
    };
    assert_eq!(make(), make());
    // And differs from the parent's.
    assert_ne!(make(), run(&parent).report().trace_hash);
}

#[test]
fn a_fork_of_a_fork_keeps_both_new_steps() {
    let parent = file("leader-dies.json");
    let b = fork_scenario(&parent, &[], 12000, &json!({"crash": 2})).unwrap();
    let c = fork_scenario(&b, &[], 20000, &json!({"restart": 2})).unwrap();
    assert_eq!(
        c["steps"],
        json!([{"at_ms": 10000, "crash": 1}, {"at_ms": 12000, "crash": 2}, {"at_ms": 20000, "restart": 2}])
    );
    let (lb, lc) = (run(&b), run(&c));
    let d = first_difference(&lb.cluster.trace, &lc.cluster.trace, 0).unwrap();
    assert_eq!(d.at_ms, 20000);
    assert_no_violations(&lc);
}

#[test]
fn a_tour_fork_keeps_the_tours_scripted_steps_and_drops_the_readers_later_actions() {
    let parent = file("tour-1-leader-dies.json");
    let actions = [
        json!({"at_ms": 5000, "isolate": 2}),
        json!({"at_ms": 40000, "heal": 2}),
    ];
    let f = fork_scenario(&parent, &actions, 12000, &json!({"crash": 3})).unwrap();
    assert_eq!(
        f["steps"],
        json!([
            {"at_ms": 5000, "isolate": 2},
            {"at_ms": 10000, "crash": 1},
            {"at_ms": 12000, "crash": 3},
            {"at_ms": 30000, "restart": 1},
        ])
    );
    assert_eq!(f["tour"], parent["tour"]);
}

#[test]
fn a_bad_fork_is_refused_with_a_message() {
    let parent = file("leader-dies.json");
    let e = fork_scenario(&parent, &[], 1000, &json!({"crash": 4})).unwrap_err();
    assert!(
        e.contains("action.crash") && e.contains("brokers are 1..=3"),
        "{e}"
    );
    let e = fork_scenario(&parent, &[], 1000, &json!({"explode": 1})).unwrap_err();
    assert!(e.contains("unknown action"), "{e}");
}
