//! Property-based fuzzing (proptest; cargo-fuzz needs a nightly toolchain this
//! project does not have): scenario files and random action sequences through
//! the public API never panic — every mistake is a clean `Err`.
//!
//! `make test` runs a bounded number of cases; run longer by hand with
//! `PROPTEST_CASES=20000 cargo test --release --test fuzz`.

use failover_lab::scenario;
use failover_lab::Lab;
use proptest::prelude::*;
use serde_json::{json, Value};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

fn shipped() -> Vec<Value> {
    let dir = format!("{}/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "json") {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    if let Ok(v) = serde_json::from_str(&text) {
                        out.push(v);
                    }
                }
            }
        }
    }
    out
}

/// A JSON value of any shape, with the numbers that tend to break code.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            Just(0i64),
            Just(-1),
            Just(1),
            Just(3),
            Just(i64::MAX),
            Just(i64::MIN),
            any::<i64>()
        ]
        .prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z._0-9]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z._]{1,10}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every path to a value inside `v`.
fn paths(v: &Value, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let mut p = prefix.clone();
                p.push(k.clone());
                paths(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let mut p = prefix.clone();
                p.push(i.to_string());
                paths(x, p, out);
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut cur = v;
    for k in path {
        cur = match cur {
            Value::Object(m) => m.get_mut(k)?,
            Value::Array(a) => a.get_mut(k.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Load, and if valid run briefly; a panic fails the property.
fn load_and_run(v: &Value) {
    if let Ok(s) = scenario::from_value(v.clone()) {
        let mut lab = Lab::new(s);
        let end = lab.scenario.run_until_ms.min(15_000);
        lab.cluster.run_until(end);
        let _ = lab.report();
        let _ = lab.describe();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics_the_parser(text in "\\PC{0,200}") {
        let _ = scenario::parse(&text);
    }

    #[test]
    fn arbitrary_json_never_panics_the_parser(v in any_json()) {
        let _ = scenario::from_value(v);
    }

    #[test]
    fn mutated_shipped_scenarios_load_or_fail_cleanly(
        which in 0usize..64,
        picks in prop::collection::vec((0usize..10_000, any_json(), 0u8..3), 1..4),
    ) {
        let all = shipped();
        prop_assume!(!all.is_empty());
        let mut v = all[which % all.len()].clone();
        for (pick, replacement, op) in picks {
            let mut ps = Vec::new();
            paths(&v, Vec::new(), &mut ps);
            let path = ps[pick % ps.len()].clone();
            match op {
                // replace a value with anything
                0 => { if let Some(x) = at_mut(&mut v, &path) { *x = replacement; } }
                // delete a key
                1 => {
                    if let Some((last, parent)) = path.split_last() {
                        if let Some(Value::Object(m)) = at_mut(&mut v, parent) { m.remove(last); }
                    }
                }
                // add an unknown key
                _ => { if let Some(Value::Object(m)) = at_mut(&mut v, &path) { m.insert("bogus.key".into(), replacement); } }
            }
        }
        load_and_run(&v);
    }

    #[test]
    fn random_action_sequences_through_the_api_never_panic(
        which in 0usize..64,
        actions in prop::collection::vec((0u8..12, -2i64..9, "[a-z]{0,6}", -1i64..5, 0u64..20_000), 1..12),
    ) {
        let all = shipped();
        prop_assume!(!all.is_empty());
        let v = all[which % all.len()].clone();
        let Ok(s) = scenario::from_value(v) else { return Ok(()); };
        let topic = s.spec.topics[0].name.clone();
        let mut lab = Lab::new(s);
        for (kind, broker, name, partition, wait) in actions {
            let t = if name.is_empty() { topic.clone() } else { name };
            let a = match kind {
                0 => json!({"crash": broker}),
                1 => json!({"power_loss": broker}),
                2 => json!({"restart": broker}),
                3 => json!({"shutdown": broker}),
                4 => json!({"isolate": broker}),
                5 => json!({"heal": broker}),
                6 => json!({"slow": {"broker": broker, "topic": t, "partition": partition}}),
                7 => json!({"unslow": {"broker": broker, "topic": t, "partition": partition}}),
                8 => json!({"elect_preferred": {"topic": t, "partition": partition}}),
                9 => json!({"produce": {"topic": t, "partition": partition, "count": broker * 7, "acks": "all"}}),
                10 => json!({"flush": broker}),
                _ => json!({"crash": broker, "heal": broker}),
            };
            if let Ok(action) = scenario::parse_action(&a, &lab.scenario.spec) {
                let _ = lab.cluster.apply(action);
            }
            lab.cluster.run_for(wait);
        }
        let r = lab.report();
        prop_assert!(r.partitions.iter().all(|p| p.replica_logs.iter().all(|l| l.high_watermark <= l.log_end_offset)));
    }
}
