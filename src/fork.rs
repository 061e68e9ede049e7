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
#[derive(Debug, PartialEq)]
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
/// scenario as JSON) and the `recorded` actions (scenario steps, `{"at_ms":
/// 4000, "isolate": 3}`, in the order they were taken) had taken by
/// `at_ms`, and `action` (`{"crash": 2}`) at `at_ms`; later steps only when
/// `parent` is a guided tour (the module doc says why). The result is
/// checked like any scenario file, so a bad action is an error naming it,
/// never a panic.
pub fn fork_scenario(
    parent: &Value,
    recorded: &[Value],
    at_ms: u64,
    action: &Value,
) -> Result<Value, String> {
    let m = parent
        .as_object()
        .ok_or("fork: the parent scenario must be a JSON object")?;
    let time = |s: &Value| s.get("at_ms").and_then(Value::as_u64);
    let tour = m
        .get("tour")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let mut steps: Vec<(u64, Value)> = Vec::new();
    if let Some(list) = m.get("steps").and_then(Value::as_array) {
        for s in list {
            // A step without a whole at_ms is kept for the check below to name.
            let at = time(s).unwrap_or(0);
            if at <= at_ms || tour {
                steps.push((at, s.clone()));
            }
        }
    }
    let mut later: Vec<(u64, Value)> = Vec::new();
    for (i, s) in recorded.iter().enumerate() {
        let at =
            time(s).ok_or_else(|| format!("fork: actions[{i}]: expected a step with at_ms"))?;
        if at <= at_ms {
            later.push((at, s.clone()));
        }
    }
    let mut new = Map::new();
    new.insert("at_ms".into(), Value::from(at_ms));
    let a = action
        .as_object()
        .ok_or("fork: action: expected an action object such as {\"crash\": 2}")?;
    for (k, v) in a {
        new.insert(k.clone(), v.clone());
    }
    later.push((at_ms, Value::Object(new)));
    // Each after every step at or before its time (the scenario's steps at
    // equal times run first, in file order; then the actions, in order).
    let mut mine = 0;
    for (at, s) in later {
        let pos = steps
            .iter()
            .rposition(|(t, _)| *t <= at)
            .map_or(0, |p| p + 1);
        mine = pos;
        steps.insert(pos, (at, s));
    }
    let verb = a
        .iter()
        .next()
        .map(|(k, v)| match v.as_u64() {
            Some(b) => format!("{k} {b}"),
            None => k.clone(),
        })
        .unwrap_or_default();
    let name = m
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("Untitled scenario");
    let mut out = Map::new();
    for (k, v) in m {
        // A fork is one lane; the lanes a scenario declares belong to its parent.
        if k != "compare" && k != "steps" && k != "name" {
            out.insert(k.clone(), v.clone());
        }
    }
    out.insert(
        "name".into(),
        Value::from(format!("{name} · what if {verb} at {at_ms} ms")),
    );
    out.insert(
        "steps".into(),
        Value::Array(steps.into_iter().map(|(_, s)| s).collect()),
    );
    let forked = Value::Object(out);
    // The new action's mistakes are named as the action's, not as a step's.
    let at = format!("steps[{mine}]");
    crate::scenario::from_value(forked.clone()).map_err(|e| match e.strip_prefix(at.as_str()) {
        Some(rest) => format!("fork: action{rest}"),
        None => format!("fork: {e}"),
    })?;
    Ok(forked)
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
            // The same line (time, kind, text) hashes the same.
            (Some(x), Some(y)) if x.digest == y.digest && x.at_ms == y.at_ms => i += 1,
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
            &[
                json!({"at_ms": 2000, "isolate": 2}),
                json!({"at_ms": 6000, "heal": 2}),
            ],
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
            &[json!({"at_ms": 6000, "heal": 2})],
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
        assert!(
            e.starts_with("fork: action: expected an action object"),
            "{e}"
        );
        let e = fork_scenario(&json!([]), &[], 10, &json!({"crash": 1})).unwrap_err();
        assert!(e.contains("JSON object"), "{e}");
    }
}
