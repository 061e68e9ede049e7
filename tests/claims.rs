//! Tour claims (issue 62): every sentence of every tour that states a fact
//! is backed by a claim the run evaluates at its stop (src/claims.rs), so a
//! change to the core that changes what a tour shows fails here instead of
//! teaching something false; and a claimed number edited in the text alone
//! is refused when the scenario loads.
//!
//! Optimised like the fuzz and sweep suites (`test = false`; `make test`
//! runs it in `test-native-fast` with `--profile fast-test`): tour 19 runs
//! 20,000 partitions to each of its stops.

use failover_lab::claims;
use serde_json::Value;

fn tours() -> Vec<(String, Value)> {
    let dir = format!("{}/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("tour-") && n.ends_with(".json"))
        .map(|n| {
            let text = std::fs::read_to_string(format!("{dir}/{n}"))
                .unwrap_or_else(|e| panic!("{n}: {e}"));
            let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{n}: {e}"));
            (n, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn tour(name: &str) -> Value {
    tours()
        .into_iter()
        .find(|(n, _)| n.starts_with(name))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {name}"))
}

/// The claims of `v` that do not hold, by path.
fn false_claims(v: &Value) -> Vec<String> {
    claims::evaluate(v)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(|o| !o.holds())
        .map(|o| o.path)
        .collect()
}

#[test]
fn every_tour_claim_holds_at_its_stop_and_every_fact_sentence_has_one() {
    let mut total = 0;
    let mut problems = Vec::new();
    for (name, v) in tours() {
        let outcomes = claims::evaluate(&v).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!outcomes.is_empty(), "{name}: no claims");
        total += outcomes.len();
        for o in outcomes.iter().filter(|o| !o.holds()) {
            problems.push(format!(
                "{name}: {} says {:?}, `{}` is {}",
                o.path, o.claim.says, o.claim.check, o.value
            ));
        }
        for (stop, sentence) in claims::unclaimed(&v) {
            problems.push(format!("{name}: {stop}: no claim backs {sentence:?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(total >= 150, "{total} claims across the tours");
}

#[test]
fn a_claimed_number_changed_in_the_text_alone_is_refused_naming_the_claim() {
    let mut v = tour("tour-1-");
    let text = v["tour"][3]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("At 19.002 s"), "{text}");
    v["tour"][3]["text"] = Value::from(text.replace("19.002", "19.003"));
    let Err(err) = failover_lab::Lab::from_json(&v.to_string()) else {
        panic!("the scenario is refused");
    };
    assert!(err.contains("tour[3].claims[0].says"), "{err}");
}

/// broker.session.timeout.ms is what tour 1's times come from (the
/// controller fences a broker that missed heartbeats that long,
/// KAFKA_REPLICATION.md §2): at 6 s instead of 9 s, the claims stating
/// 19.002 s and the 9.016 s RTO are false, and the ones stating who leads
/// are not.
#[test]
fn a_rule_the_claims_depend_on_changed_makes_exactly_those_claims_false() {
    let mut v = tour("tour-1-");
    assert!(false_claims(&v).is_empty());
    failover_lab::settings::apply(
        &mut v,
        &[("broker.session.timeout.ms".into(), "6000".into())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let bad = false_claims(&v);
    for path in [
        "tour[3].claims[0]",
        "tour[4].claims[0]",
        "tour[6].claims[1]",
    ] {
        assert!(bad.contains(&path.to_string()), "{path} in {bad:?}");
    }
    assert!(!bad.contains(&"tour[6].claims[0]".to_string()), "{bad:?}");
}

/// A compare tour claims per lane: every lane it runs is named by a claim.
#[test]
fn a_compare_tour_claims_something_of_every_lane() {
    for (name, v) in tours() {
        let Some(compare) = v["compare"].as_str() else {
            continue;
        };
        let lanes =
            failover_lab::settings::parse_compare(compare).unwrap_or_else(|e| panic!("{e}"));
        let checks: Vec<String> = v["tour"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|s| s["claims"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["check"].as_str().map(str::to_string))
            .collect();
        for (i, pairs) in lanes.iter().enumerate() {
            let text = failover_lab::settings::lane_text(pairs);
            assert!(
                checks
                    .iter()
                    .any(|c| c.contains(&format!("lanes[{text}]"))
                        || c.contains(&format!("lanes[{i}]"))),
                "{name}: no claim reads lane {i} ({text})"
            );
        }
    }
}
