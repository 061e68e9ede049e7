//! `KEY=VALUE` settings applied to a scenario before it runs: the CLI's
//! `run --set` and (later) the page's compare lanes use the same rules, so a
//! lane and `failover-lab run FILE --set …` produce the same run.
//!
//! Keys, as `sweep --set` takes them:
//! - `acks`: every producer, and every produce step without its own `acks`;
//! - `rf`: every topic's replication factor — only where the scenario has no
//!   explicit assignment;
//! - the consumer keys of [`CONSUMER_KEYS`] (`auto.offset.reset`,
//!   `group.protocol`, `partition.assignment.strategy`,
//!   `sim.commit.leader.epoch`, …): into every consumer's `config`;
//! - `min.insync.replicas`, `unclean.leader.election.enable`, or any other
//!   cluster config key (including `sim.` keys): into `config`.
//!
//! A value is read as JSON when it parses (`2`, `true`, `"x"`), else as a
//! string (`all`, `leader_epoch`). The scenario is validated afterwards like
//! any other, so an unknown key or a bad value is an error naming it.

use std::collections::BTreeMap;

use serde_json::Value;

/// Split `"a=1"` items into pairs; an item without `=` is an error naming it.
pub fn parse_pairs<S: AsRef<str>>(items: &[S]) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|s| {
            let s = s.as_ref();
            match s.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => {
                    Ok((k.trim().to_string(), v.trim().to_string()))
                }
                _ => Err(format!("setting \"{s}\": expected KEY=VALUE")),
            }
        })
        .collect()
}

/// Most lanes a compare string may have (the page draws them side by side).
pub const MAX_LANES: usize = 4;

/// One lane's settings, `"acks=all, min.insync.replicas=2"` (split by `,`;
/// empty: none).
pub fn parse_lane(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                out.push((k.trim().to_string(), v.trim().to_string()))
            }
            _ => return Err(format!("setting \"{item}\": expected KEY=VALUE")),
        }
    }
    Ok(out)
}

/// A compare string, `"acks=1|acks=all,min.insync.replicas=2"`: 2 to
/// [`MAX_LANES`] lanes split by `|`, each lane's settings split by `,` (an
/// empty lane runs the scenario as it is). Returns each lane's pairs; a bad
/// lane is an error naming it.
pub fn parse_compare(text: &str) -> Result<Vec<Vec<(String, String)>>, String> {
    let mut lanes = Vec::new();
    for lane in text.split('|') {
        let pairs =
            parse_lane(lane).map_err(|e| format!("compare: lane {}: {e}", lanes.len() + 1))?;
        lanes.push(pairs);
    }
    if lanes.len() < 2 || lanes.len() > MAX_LANES {
        return Err(format!(
            "compare: expected 2 to {MAX_LANES} lanes separated by |, got {} in \"{text}\"",
            lanes.len()
        ));
    }
    Ok(lanes)
}

/// The canonical text of one lane's settings (`acks=1,min.insync.replicas=2`).
pub fn lane_text(pairs: &[(String, String)]) -> String {
    let mut out = String::new();
    for (k, v) in pairs {
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
    out
}

/// Settings that belong to the consumers (each consumer's `config`), not to
/// the cluster.
const CONSUMER_KEYS: [&str; 10] = [
    "auto.offset.reset",
    "enable.auto.commit",
    "auto.commit.interval.ms",
    "group.protocol",
    "partition.assignment.strategy",
    "group.remote.assignor",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "sim.commit.leader.epoch",
];

fn value_of(v: &str) -> Value {
    serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_string()))
}

/// Apply `settings` to the scenario `source` (a JSON object); returns the
/// settings as applied (key → value) for the report.
pub fn apply(
    source: &mut Value,
    settings: &[(String, String)],
) -> Result<BTreeMap<String, Value>, String> {
    let mut applied = BTreeMap::new();
    let Some(root) = source.as_object_mut() else {
        return Err("scenario: expected a JSON object".to_string());
    };
    for (key, raw) in settings {
        let value = value_of(raw);
        match key.as_str() {
            "acks" => {
                let acks = match &value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => String::new(),
                };
                if !matches!(acks.as_str(), "0" | "1" | "all" | "-1") {
                    return Err(format!("setting acks: \"{raw}\" is not 0, 1 or all"));
                }
                let acks = Value::String(if acks == "-1" { "all".into() } else { acks });
                if let Some(Value::Array(clients)) = root.get_mut("clients") {
                    for c in clients.iter_mut().filter_map(Value::as_object_mut) {
                        if c.get("type").and_then(Value::as_str) == Some("producer") {
                            c.insert("acks".to_string(), acks.clone());
                        }
                    }
                }
                if let Some(Value::Array(steps)) = root.get_mut("steps") {
                    for p in steps
                        .iter_mut()
                        .filter_map(|s| s.get_mut("produce"))
                        .filter_map(Value::as_object_mut)
                    {
                        p.entry("acks".to_string()).or_insert_with(|| acks.clone());
                    }
                }
                applied.insert(key.clone(), acks);
            }
            "rf" | "replication_factor" => {
                let Some(rf) = value.as_u64().filter(|n| *n > 0) else {
                    return Err(format!("setting rf: \"{raw}\" is not a positive integer"));
                };
                let Some(Value::Array(topics)) = root.get_mut("topics") else {
                    return Err("setting rf: the scenario has no topics".to_string());
                };
                for t in topics.iter_mut().filter_map(Value::as_object_mut) {
                    if t.contains_key("assignment") {
                        let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
                        return Err(format!(
                            "setting rf: topic \"{name}\" has an explicit assignment; change its replicas there"
                        ));
                    }
                    t.insert("replication_factor".to_string(), Value::from(rf));
                }
                applied.insert("rf".to_string(), Value::from(rf));
            }
            k if CONSUMER_KEYS.contains(&k) => {
                // A consumer setting goes to every consumer's own config,
                // as `acks` goes to every producer: the cluster's config
                // has no such key.
                let Some(Value::Array(clients)) = root.get_mut("clients") else {
                    return Err(format!("setting {key}: the scenario has no consumers"));
                };
                let mut any = false;
                for c in clients.iter_mut().filter_map(Value::as_object_mut) {
                    if c.get("type").and_then(Value::as_str) != Some("consumer") {
                        continue;
                    }
                    let config = c
                        .entry("config".to_string())
                        .or_insert_with(|| Value::Object(Default::default()));
                    if let Some(config) = config.as_object_mut() {
                        config.insert(key.clone(), value.clone());
                        any = true;
                    }
                }
                if !any {
                    return Err(format!("setting {key}: the scenario has no consumers"));
                }
                applied.insert(key.clone(), value);
            }
            _ => {
                let config = root
                    .entry("config".to_string())
                    .or_insert_with(|| Value::Object(Default::default()));
                let Some(config) = config.as_object_mut() else {
                    return Err("scenario: config is not an object".to_string());
                };
                config.insert(key.clone(), value.clone());
                applied.insert(key.clone(), value);
            }
        }
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Value {
        serde_json::json!({
            "brokers": 3,
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "all"}],
            "steps": [
                {"at_ms": 1, "produce": {"topic": "t", "count": 1}},
                {"at_ms": 2, "produce": {"topic": "t", "count": 1, "acks": "all"}}
            ]
        })
    }

    #[test]
    fn consumer_settings_go_to_every_consumer_not_to_the_cluster() {
        let mut s = scenario();
        if let Some(Value::Array(c)) = s.get_mut("clients") {
            c.push(serde_json::json!({"type": "consumer", "id": "c", "topic": "t"}));
        }
        let pairs = parse_pairs(&["auto.offset.reset=earliest"]).unwrap_or_default();
        let applied = apply(&mut s, &pairs).unwrap_or_default();
        assert_eq!(s["clients"][1]["config"]["auto.offset.reset"], "earliest");
        assert!(
            s["clients"][0].get("config").is_none(),
            "not the producer's"
        );
        assert!(s.get("config").is_none(), "not the cluster's");
        assert_eq!(applied["auto.offset.reset"], "earliest");
        let mut none = scenario();
        assert!(apply(&mut none, &pairs).is_err_and(|e| e.contains("no consumers")));
    }

    #[test]
    fn acks_goes_to_every_producer_and_to_produce_steps_without_their_own() {
        let mut s = scenario();
        let pairs = parse_pairs(&["acks=1"]).unwrap_or_default();
        let applied = apply(&mut s, &pairs).unwrap_or_default();
        assert_eq!(s["clients"][0]["acks"], "1");
        assert_eq!(s["steps"][0]["produce"]["acks"], "1");
        assert_eq!(
            s["steps"][1]["produce"]["acks"], "all",
            "a step's own acks stays"
        );
        assert_eq!(applied["acks"], "1");
    }

    #[test]
    fn config_keys_go_into_config_with_json_values() {
        let mut s = scenario();
        let pairs = parse_pairs(&[
            "min.insync.replicas=2",
            "unclean.leader.election.enable=true",
        ])
        .unwrap_or_default();
        apply(&mut s, &pairs).unwrap_or_default();
        assert_eq!(s["config"]["min.insync.replicas"], 2);
        assert_eq!(s["config"]["unclean.leader.election.enable"], true);
    }

    #[test]
    fn rf_with_an_explicit_assignment_is_an_error_naming_the_topic() {
        let mut s = scenario();
        s["topics"][0]["assignment"] = serde_json::json!([[1, 2, 3]]);
        let e = apply(&mut s, &[("rf".into(), "2".into())]).unwrap_err();
        assert!(e.contains("rf") && e.contains("\"t\""), "{e}");
    }

    #[test]
    fn compare_splits_lanes_by_bar_and_settings_by_comma() {
        let lanes = parse_compare(" acks=1 | acks=all, min.insync.replicas=2 ").unwrap_or_default();
        assert_eq!(lanes.len(), 2);
        assert_eq!(lane_text(&lanes[0]), "acks=1");
        assert_eq!(lane_text(&lanes[1]), "acks=all,min.insync.replicas=2");
        let lanes = parse_compare("|unclean.leader.election.enable=true").unwrap_or_default();
        assert_eq!(lanes[0], vec![], "an empty lane runs the scenario as it is");
    }

    #[test]
    fn compare_needs_two_to_four_lanes_and_names_a_bad_lane() {
        assert!(parse_compare("acks=1")
            .unwrap_err()
            .contains("2 to 4 lanes"));
        assert!(parse_compare("a=1|a=2|a=3|a=4|a=5")
            .unwrap_err()
            .contains("got 5"));
        let e = parse_compare("acks=1|acks").unwrap_err();
        assert!(e.contains("lane 2") && e.contains("acks"), "{e}");
    }

    #[test]
    fn a_setting_without_equals_or_with_a_bad_acks_is_an_error_naming_it() {
        assert!(parse_pairs(&["acks"]).unwrap_err().contains("acks"));
        let mut s = scenario();
        let e = apply(&mut s, &[("acks".into(), "2".into())]).unwrap_err();
        assert!(e.contains("acks"), "{e}");
    }
}
