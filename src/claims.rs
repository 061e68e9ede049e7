//! Tour claims (issue 62): a tour stop's sentences, checked against the run.
//!
//! A stop may carry `claims`, each `{"says": WORDS, "check": EXPR}`: WORDS
//! are quoted verbatim from the stop's `text` (the scenario loader refuses a
//! claim whose words are not there), EXPR is an expression in the question
//! language ([`crate::question`]) that must be true at the stop. It reads
//! the run as it stands at the stop's `at_ms`:
//!
//! - the report's fields at the top (`partitions[orders-0].leader`,
//!   `availability.faults[0].rto_ms`, `delivery[0].acked_lost.count`, …);
//! - `events`: every trace event so far, as `failoverLab.trace()` gives them
//!   (`{at_ms, event, …its fields, text}`), so a time or an order a sentence
//!   states is checked too (`events[event=leader_elected&leader=2].at_ms ==
//!   19002`);
//! - `scenario`: the scenario file as written, no lane's settings applied
//!   (`scenario.config[min.insync.replicas] == 2`);
//! - in a compare tour, `lanes`: each lane's `settings`, `report` and
//!   `events` (`lanes[acks=1].report.acked_records_lost > 0`); the top's
//!   report and events are lane A's.
//!
//! `failover-lab check` evaluates every claim of a tour and fails naming
//! `tour[K].claims[i]`; `tests/claims.rs` does the same for every shipped
//! tour, and `tests/e2e/claims.test.mjs` evaluates them on the page (the
//! wasm build, `www/question.js`) at each stop.

use crate::scenario::{parse_claims, Claim};
use crate::settings::{lane_text, parse_compare};
use crate::Lab;
use serde_json::Value;

/// One claim, evaluated.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// `tour[K].claims[i]`.
    pub path: String,
    pub at_ms: u64,
    pub claim: Claim,
    /// What the check evaluated to (true when the claim holds).
    pub value: Value,
}

impl Outcome {
    pub fn holds(&self) -> bool {
        self.value == Value::Bool(true)
    }
}

/// One lane's run, stepped from stop to stop.
struct Run {
    settings: String,
    lab: Lab,
    events: Vec<Value>,
}

impl Run {
    fn to(&mut self, t: u64, with_events: bool) -> Result<Value, String> {
        self.lab.cluster.run_until(t);
        if with_events {
            for e in self.lab.cluster.trace.since(self.events.len()) {
                self.events
                    .push(serde_json::to_value(e).map_err(|e| e.to_string())?);
            }
        }
        serde_json::to_value(self.lab.report()).map_err(|e| e.to_string())
    }
}

/// What a claim at time `t` reads: lane A's report with `events` and
/// `scenario` beside it, and in a compare tour `lanes` (every lane's
/// settings, report and events). `with_events` false leaves `events` empty
/// (no claim of the tour names them: the largest tours' traces are long).
fn root(
    runs: &mut [Run],
    scenario: &Value,
    t: u64,
    compare: bool,
    with_events: bool,
) -> Result<Value, String> {
    let events = |r: &Run| {
        Value::Array(if with_events {
            r.events.clone()
        } else {
            Vec::new()
        })
    };
    let mut lanes = Vec::new();
    let mut top = Value::Null;
    for (n, r) in runs.iter_mut().enumerate() {
        let report = r.to(t, with_events)?;
        if n == 0 {
            top = report.clone();
            if let Value::Object(m) = &mut top {
                m.insert("events".into(), events(r));
                m.insert("scenario".into(), scenario.clone());
            }
        }
        if compare {
            lanes.push(
                serde_json::json!({"settings": r.settings, "report": report, "events": events(r)}),
            );
        }
    }
    if let (true, Value::Object(m)) = (compare, &mut top) {
        m.insert("lanes".into(), Value::Array(lanes));
    }
    Ok(top)
}

/// Every claim of scenario `v`'s tour, evaluated at its stop, in order. An
/// error is a scenario that does not load or a claim that does not parse.
pub fn evaluate(v: &Value) -> Result<Vec<Outcome>, String> {
    // The stops only: no cluster is built for them.
    let stops = Lab::scenario_with_settings(v.clone(), &[])?.0.tour;
    let compare = v.get("compare").and_then(Value::as_str);
    let lanes = match compare {
        Some(c) => parse_compare(c)?,
        None => vec![Vec::new()],
    };
    let mut claims = Vec::new();
    for (k, stop) in v["tour"].as_array().into_iter().flatten().enumerate() {
        if let Some(c) = stop.get("claims") {
            let text = stop["text"].as_str().unwrap_or_default();
            for (i, claim) in parse_claims(c, text, &format!("tour[{k}].claims"))?
                .into_iter()
                .enumerate()
            {
                claims.push((k, i, claim));
            }
        }
    }
    if claims.is_empty() {
        return Ok(Vec::new());
    }
    let with_events = claims.iter().any(|(_, _, c)| c.check.contains("events"));
    let mut runs = Vec::new();
    for pairs in &lanes {
        runs.push(Run {
            settings: lane_text(pairs),
            lab: Lab::from_value_with_settings(v.clone(), pairs)?,
            events: Vec::new(),
        });
    }
    let mut out = Vec::new();
    let mut at = None;
    let mut top = Value::Null;
    for (k, i, claim) in claims {
        let t = stops[k].at_ms;
        if at != Some(t) {
            top = root(&mut runs, v, t, compare.is_some(), with_events)?;
            at = Some(t);
        }
        let value = crate::question::eval(&claim.check, &top)
            .map_err(|e| format!("tour[{k}].claims[{i}].check: {e}"))?;
        out.push(Outcome {
            path: format!("tour[{k}].claims[{i}]"),
            at_ms: t,
            claim,
            value,
        });
    }
    Ok(out)
}

/// The sentences of a stop's `text` that state a fact a claim must back, as
/// byte ranges: a sentence (ended by `.`, `!` or `?` and a space, or the
/// text's end) with a digit or an error name (`NOT_LEADER_OR_FOLLOWER`), once
/// references are set aside (`Kafka 4.4.0`, `KIP-320`, `KAFKA-19902`,
/// `tour 10`, `tours 4 and 15`, `§5`).
pub fn fact_sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i <= b.len() {
        let end = i == b.len()
            || (matches!(b[i], b'.' | b'!' | b'?')
                && b.get(i + 1).is_some_and(|c| c.is_ascii_whitespace()));
        if end {
            let stop = (i + 1).min(b.len());
            if stop > start && states_a_fact(&text[start..stop]) {
                out.push((start, stop));
            }
            if i == b.len() {
                break;
            }
            start = stop;
            while start < b.len() && b[start].is_ascii_whitespace() {
                start += 1;
            }
            i = start;
            continue;
        }
        i += 1;
    }
    out
}

fn states_a_fact(sentence: &str) -> bool {
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
            .to_string()
    };
    let number = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
    };
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let mut n = 0;
    while n < words.len() {
        let w = bare(words[n]);
        n += 1;
        // "Kafka 4.4.0", "tour 10", "tours 4 and 15": references, not facts.
        if matches!(w.to_ascii_lowercase().as_str(), "kafka" | "tour" | "tours") {
            while n < words.len()
                && (number(&bare(words[n])) || matches!(words[n], "and" | "or" | "to" | "&"))
            {
                n += 1;
            }
            continue;
        }
        if w.starts_with("KIP-") || w.starts_with("KAFKA-") || words[n - 1].contains('§') {
            continue;
        }
        let error_name = w.split('_').count() >= 2
            && w.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            && w.chars().any(|c| c.is_ascii_uppercase());
        if error_name || w.chars().any(|c| c.is_ascii_digit()) {
            return true;
        }
    }
    false
}

/// The fact sentences of `text` (see [`fact_sentences`]) no claim's `says`
/// overlaps.
pub fn uncovered<'a>(text: &'a str, claims: &[Claim]) -> Vec<&'a str> {
    let spans: Vec<(usize, usize)> = claims
        .iter()
        .filter_map(|c| text.find(&c.says).map(|i| (i, i + c.says.len())))
        .collect();
    fact_sentences(text)
        .into_iter()
        .filter(|(s, e)| !spans.iter().any(|(a, b)| a < e && s < b))
        .map(|(s, e)| &text[s..e])
        .collect()
}

/// Every fact sentence of scenario `v`'s tour without a claim, as
/// (`tour[K]`, sentence).
pub fn unclaimed(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, stop) in v["tour"].as_array().into_iter().flatten().enumerate() {
        let text = stop["text"].as_str().unwrap_or_default();
        let claims = stop
            .get("claims")
            .and_then(|c| parse_claims(c, text, "claims").ok())
            .unwrap_or_default();
        for s in uncovered(text, &claims) {
            out.push((format!("tour[{k}]"), s.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(text: &str) -> Vec<&str> {
        fact_sentences(text)
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect()
    }

    #[test]
    fn a_sentence_with_a_number_or_an_error_name_states_a_fact_and_a_reference_does_not() {
        let text = "Broker 2 leads at 19.002 s. Nothing else moves. p1 gets NOT_LEADER_OR_FOLLOWER! \
                    As in tour 10 and KIP-320, Kafka 4.4.0 agrees (tours 4 and 15). Offsets 67–199?";
        assert_eq!(
            facts(text),
            vec![
                "Broker 2 leads at 19.002 s.",
                "p1 gets NOT_LEADER_OR_FOLLOWER!",
                "Offsets 67–199?"
            ]
        );
    }

    #[test]
    fn a_fact_sentence_is_covered_by_a_claim_quoting_any_of_its_words() {
        let text = "Broker 2 leads at 19.002 s. HW 67. Leader epoch 1.";
        let claim = |says: &str| Claim {
            says: says.into(),
            check: "true".into(),
        };
        assert_eq!(
            uncovered(text, &[claim("leads at 19.002"), claim("Leader epoch 1")]),
            vec!["HW 67."]
        );
    }
}
