//! Forks: "what if … here?" (issue 65). A reader paused at time `t` of a run
//! asks what would have happened had something else been done there. The
//! run so far stays as lane A; the fork, lane B, is another scenario, built
//! here from A's: the same cluster, seed and config, every step A had taken
//! by `t` (its scripted steps and the reader's recorded actions alike), and
//! the new action at `t`. The core is deterministic, so B's trace is A's up
//! to `t`, event for event, and the first event where the two differ — the
//! divergence, [`first_difference`] — is where the new action's
//! consequences begin.
//!
//! What B keeps of A's future, written down because a fork could mean either:
//! a fork *replaces the future*. The reader's recorded actions after `t` and
//! the scenario's own steps after `t` are dropped from B, so B shows the one
//! change and what follows from it alone. A guided tour is the exception:
//! its scripted steps are the story the tour tells, and B keeps them (only
//! the reader's own later actions go), so the tour's next stops still read in
//! both lanes.
//!
//! A user's action at `t` and a scenario step at `t` act on the same world
//! (the end of millisecond `t`: [`crate::sim::time`]'s late events), which is
//! what lets the fork fold recorded actions into plain steps: at equal
//! times the scenario's steps come first (the page replays an action after
//! the run reaches its time), then the actions in the order they were taken,
//! then the new one.

use serde_json::{Map, Value};

use crate::sim::trace::{Trace, TraceEvent};

/// The first difference between two traces (`a` the parent lane's).
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct Divergence<'a> {
    /// Index of the first event that differs (both traces agree before it).
    pub index: usize,
    /// Simulated time of the earlier of the two differing events.
    pub at_ms: u64,
    /// Lane A's event there, `None` when its trace ends first.
    pub a: Option<&'a TraceEvent>,
    /// Lane B's event there, `None` when its trace ends first.
    pub b: Option<&'a TraceEvent>,
}

/// The scenario of a fork of `parent` at `at_ms`: the steps `parent` (a
/// scenario as JSON) and the `recorded` actions (`(at_ms, action)`, in the
/// order they were taken) had taken by `at_ms`, and `action` at `at_ms`;
/// later steps only when `parent` is a guided tour (the module doc says
/// why). The result is checked like any scenario file, so a bad action is
/// an error naming it, never a panic.
pub fn fork_scenario(
    parent: &Value,
    recorded: &[(u64, Value)],
    at_ms: u64,
    action: &Value,
) -> Result<Value, String> {
    let mut out = parent
        .as_object()
        .cloned()
        .ok_or("fork: the parent scenario must be a JSON object")?;
    let base = crate::scenario::from_value(parent.clone())?;
    // The new action is checked against the parent's cluster first, so its
    // error names the action, not a step of the scenario built here.
    crate::scenario::parse_action(action, &base.spec).map_err(|e| format!("fork: {e}"))?;
    let tour = !base.tour.is_empty();
    let mut steps: Vec<(u64, Value)> = Vec::new();
    if let Some(list) = parent.get("steps").and_then(Value::as_array) {
        for s in list {
            // Checked by from_value above: every step has a whole at_ms.
            let at = s.get("at_ms").and_then(Value::as_u64).unwrap_or(0);
            if at <= at_ms || tour {
                steps.push((at, s.clone()));
            }
        }
    }
    for (i, (at, a)) in recorded.iter().enumerate() {
        if *at <= at_ms {
            steps.push((*at, step(*at, a, &format!("fork: actions[{i}]"))?));
        }
    }
    steps.push((at_ms, step(at_ms, action, "fork: action")?));
    // Stable: equal times keep the order above.
    steps.sort_by_key(|(at, _)| *at);
    out.insert(
        "steps".into(),
        Value::Array(steps.into_iter().map(|(_, s)| s).collect()),
    );
    let verb = action
        .as_object()
        .and_then(|m| m.iter().next())
        .map(|(k, v)| match v {
            Value::Object(_) => k.replace('_', " "),
            v => format!("{} {v}", k.replace('_', " ")),
        })
        .unwrap_or_default();
    out.insert(
        "name".into(),
        Value::from(format!(
            "{} · what if {verb} at {} ms",
            base.name.split(" · what if ").next().unwrap_or(&base.name),
            at_ms
        )),
    );
    // A fork is one lane; the lanes a scenario declares belong to its parent.
    out.remove("compare");
    let forked = Value::Object(out);
    crate::scenario::from_value(forked.clone())?;
    Ok(forked)
}

/// An action (`{"crash": 2}`) as a scenario step at `at`.
fn step(at: u64, action: &Value, path: &str) -> Result<Value, String> {
    let mut m = Map::new();
    m.insert("at_ms".into(), Value::from(at));
    let a = action
        .as_object()
        .ok_or_else(|| format!("{path}: expected an action object such as {{\"crash\": 2}}"))?;
    for (k, v) in a {
        if k == "at_ms" {
            return Err(format!("{path}: at_ms belongs to the fork, not the action"));
        }
        m.insert(k.clone(), v.clone());
    }
    Ok(Value::Object(m))
}

/// The first event, at index `from` or after, where traces `a` and `b`
/// differ; an event only one of them has counts as a difference (the two
/// ran to the same time). `None`: the same so far.
pub fn first_difference<'a>(a: &'a Trace, b: &'a Trace, from: usize) -> Option<Divergence<'a>> {
    let mut ea = a.since(from);
    let mut eb = b.since(from);
    let mut i = from;
    loop {
        match (ea.next(), eb.next()) {
            (None, None) => return None,
            (Some(x), Some(y)) if x == y => i += 1,
            (x, y) => {
                let at_ms = match (x, y) {
                    (Some(x), Some(y)) => x.at_ms.min(y.at_ms),
                    (Some(e), None) | (None, Some(e)) => e.at_ms,
                    (None, None) => 0,
                };
                return Some(Divergence {
                    index: i,
                    at_ms,
                    a: x,
                    b: y,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parent() -> Value {
        json!({
            "seed": 3, "brokers": 3,
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "steps": [{"at_ms": 1000, "crash": 1}, {"at_ms": 5000, "restart": 1}],
            "run_until_ms": 8000
        })
    }

    #[test]
    fn keeps_what_was_done_by_t_and_adds_the_action_last() {
        let f = fork_scenario(
            &parent(),
            &[(2000, json!({"isolate": 2})), (6000, json!({"heal": 2}))],
            2000,
            &json!({"crash": 3}),
        )
        .unwrap();
        assert_eq!(
            f["steps"],
            json!([{"at_ms": 1000, "crash": 1}, {"at_ms": 2000, "isolate": 2}, {"at_ms": 2000, "crash": 3}])
        );
        assert_eq!(f["seed"], 3);
        assert!(f["name"]
            .as_str()
            .unwrap()
            .ends_with("what if crash 3 at 2000 ms"));
    }

    #[test]
    fn a_tour_keeps_its_scripted_future() {
        let mut p = parent();
        p["tour"] = json!([{"at_ms": 500, "text": "a stop"}]);
        let f = fork_scenario(
            &p,
            &[(6000, json!({"heal": 2}))],
            2000,
            &json!({"crash": 3}),
        )
        .unwrap();
        assert_eq!(
            f["steps"],
            json!([{"at_ms": 1000, "crash": 1}, {"at_ms": 2000, "crash": 3}, {"at_ms": 5000, "restart": 1}])
        );
    }

    #[test]
    fn a_bad_action_is_an_error_naming_it() {
        let e = fork_scenario(&parent(), &[], 10, &json!({"crash": 9})).unwrap_err();
        assert!(
            e.starts_with("fork: action.crash: 9 is out of range"),
            "{e}"
        );
        let e = fork_scenario(&parent(), &[], 10, &json!("crash")).unwrap_err();
        assert!(e.starts_with("fork: action: expected an object"), "{e}");
        let e = fork_scenario(&json!([]), &[], 10, &json!({"crash": 1})).unwrap_err();
        assert!(e.contains("JSON object"), "{e}");
    }
}
