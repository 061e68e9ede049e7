//! Tour questions (issue 30): every shipped question's right answer is
//! computed from its run, at the next stop, and proves exactly one of its
//! choices; a setting that changes the outcome changes the answer with it.

mod common;
use common::*;
use failover_lab::question;

/// (file, stop index, value of the answer, index of the right choice).
fn answers(file: &str, settings: &[&str]) -> Vec<(usize, serde_json::Value, Vec<usize>)> {
    let path = format!("{}/scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let pairs: Vec<(String, String)> = settings
        .iter()
        .map(|s| {
            let (k, x) = s.split_once('=').unwrap();
            (k.to_string(), x.to_string())
        })
        .collect();
    failover_lab::settings::apply(&mut v, &pairs).unwrap();
    let mut l = lab(&v.to_string());
    let stops = l.scenario.tour.clone();
    let mut out = Vec::new();
    for (i, st) in stops.iter().enumerate() {
        let Some(q) = &st.question else { continue };
        let q = failover_lab::scenario::parse_question(q, "question").unwrap();
        l.cluster.run_until(stops[i + 1].at_ms);
        let report = serde_json::to_value(l.report()).unwrap();
        let value = question::eval(&q.answer, &report).unwrap();
        let right: Vec<usize> = q
            .choices
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.value == value
                    || (c.value.as_f64().is_some() && c.value.as_f64() == value.as_f64())
            })
            .map(|(j, _)| j)
            .collect();
        out.push((i, value, right));
    }
    out
}

#[test]
fn every_tour_question_is_answered_by_its_run_with_exactly_one_choice() {
    let mut asked = 0;
    for entry in std::fs::read_dir(format!("{}/scenarios", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.starts_with("tour-") {
            continue;
        }
        for (i, value, right) in answers(&name, &[]) {
            assert_eq!(
                right.len(),
                1,
                "{name} stop {}: the run answers {value}, which proves {right:?}",
                i + 1
            );
            asked += 1;
        }
    }
    assert!(asked >= 3, "{asked} questions");
}

/// Tour 4 asks what an unclean election does to records only the dead
/// leader had: with unclean.leader.election.enable=true they are lost; the
/// same tour with it off keeps them (the partition goes offline instead),
/// and the computed answer flips to the other choice. Likewise tour 8's
/// NOT_ENOUGH_REPLICAS with min.insync.replicas=1, and tour 7's loss with
/// acks=all.
#[test]
fn a_setting_that_changes_the_outcome_changes_the_computed_answer() {
    let on = answers("tour-4-unclean-election.json", &[]);
    let off = answers(
        "tour-4-unclean-election.json",
        &["unclean.leader.election.enable=false"],
    );
    assert_eq!(on[0].1, serde_json::json!(true));
    assert_eq!(off[0].1, serde_json::json!(false));
    assert_ne!(on[0].2, off[0].2);
    let one = answers(
        "tour-8-min-insync-replicas.json",
        &["min.insync.replicas=1"],
    );
    assert_eq!(
        one[0].1,
        serde_json::json!(false),
        "with min.insync.replicas=1 broker 1 acknowledges alone"
    );
    let acks_all = answers("tour-7-acks1-loses-data.json", &["acks=all"]);
    assert_eq!(
        acks_all[0].1,
        serde_json::json!(false),
        "with acks=all tour 7's record is never acknowledged, so nothing acknowledged is lost"
    );
}

#[test]
fn a_bad_answer_expression_is_refused_by_check_naming_the_stop() {
    let path = format!(
        "{}/scenarios/tour-7-acks1-loses-data.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["tour"][3]["question"]["answer"] = serde_json::json!("acked_records_lost >");
    let e = failover_lab::scenario::from_value(v.clone())
        .err()
        .unwrap_or_default();
    assert!(e.contains("tour[3].question.answer"), "{e}");
    v["tour"][3]["question"]["answer"] = serde_json::json!("acked_records_lost > 0");
    v["tour"][3]["question"]["choices"] = serde_json::json!([{"text": "only one", "value": true}]);
    let e = failover_lab::scenario::from_value(v)
        .err()
        .unwrap_or_default();
    assert!(e.contains("tour[3].question.choices: at least two"), "{e}");
}
