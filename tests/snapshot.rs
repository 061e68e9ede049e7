//! A world written as bytes and read back (`failover_lab::snapshot`, issue
//! 63: compare lanes replayed in Workers come back to the page this way)
//! runs on exactly as the world it was written from: time travel and
//! threads must not change what happens next (DESIGN.md "Determinism").

mod common;
use common::*;
use failover_lab::Lab;

fn json(lab: &Lab) -> String {
    serde_json::to_string(&lab.report()).unwrap()
}

/// `lab`'s world written and read back into a lab of the same scenario and
/// settings.
fn through_bytes(lab: &mut Lab) -> Lab {
    let bytes = lab.snapshot_bytes();
    match Lab::from_snapshot((*lab.scenario).clone(), lab.settings.clone(), &bytes) {
        Ok(l) => l,
        Err(e) => panic!(
            "{}: the world's own bytes did not read back: {e}",
            lab.scenario.name
        ),
    }
}

/// Every shipped scenario but the 20,000-partition one (tour 19, as long as
/// all the others together), written at a third and at two thirds of its
/// run: the world read back ends on the uninterrupted run's report, byte
/// for byte (trace hash included, which the trace computes again from its
/// events), and writes the same bytes the world it came from wrote.
#[test]
fn a_world_read_back_from_its_bytes_runs_on_to_the_same_report() {
    let dir = format!("{}/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| f.ends_with(".json") && f != "index.json" && !f.starts_with("tour-19"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "scenarios found: {files:?}");
    for file in &files {
        let mut whole = scenario_file(file);
        whole.run_to_end();
        let end = json(&whole);
        let mut live = scenario_file(file);
        let until = live.scenario.run_until_ms;
        for t in [until / 3, 2 * until / 3] {
            live.cluster.run_until(t);
            let mut back = through_bytes(&mut live);
            assert_eq!(back.cluster.now, live.cluster.now, "{file} at {t} ms");
            assert_eq!(
                back.cluster.trace.hash_hex(),
                live.cluster.trace.hash_hex(),
                "{file} at {t} ms: the trace read back hashes otherwise"
            );
            assert!(
                back.snapshot_bytes() == live.snapshot_bytes(),
                "{file} at {t} ms: the world read back writes other bytes"
            );
            back.run_to_end();
            assert_eq!(
                json(&back),
                end,
                "{file}: read back at {t} ms, it ended otherwise"
            );
        }
    }
}

/// A lab with settings on top of its scenario (a compare lane's) and a
/// world not started yet (the page's first frame) read back as well.
#[test]
fn a_lane_with_settings_and_an_unstarted_world_read_back_run_on_the_same() {
    let path = format!(
        "{}/scenarios/tour-13-acks1-vs-acks-all.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let set = [("acks".to_string(), "1".to_string())];
    let mut whole = Lab::from_json_with_settings(&text, &set).unwrap();
    whole.run_to_end();
    let mut lane = Lab::from_json_with_settings(&text, &set).unwrap();
    assert!(!lane.settings.is_empty());
    let mut back = through_bytes(&mut lane);
    back.run_to_end();
    assert_eq!(json(&back), json(&whole));
    lane.cluster.run_until(4_000);
    let mut back = through_bytes(&mut lane);
    back.run_to_end();
    assert_eq!(json(&back), json(&whole));
}

/// Bytes that are not a world of this scenario are refused with a reason,
/// never misread: another scenario's, cut short, or not a world at all.
#[test]
fn bytes_of_another_world_cut_short_or_of_nothing_are_refused() {
    let mut a = scenario_file("tour-1-leader-dies.json");
    a.cluster.run_until(1_000);
    let bytes = a.snapshot_bytes();
    let other = scenario_file("tour-11-mass-failover.json");
    let refuse = |s: &Lab, b: &[u8]| match Lab::from_snapshot(
        (*s.scenario).clone(),
        s.settings.clone(),
        b,
    ) {
        Ok(_) => panic!("read back"),
        Err(e) => e,
    };
    let e = refuse(&other, &bytes);
    assert!(e.contains("not this scenario's"), "{e}");
    let e = refuse(&a, &bytes[..bytes.len() / 2]);
    assert!(e.starts_with("snapshot:"), "{e}");
    let e = refuse(&a, b"{\"not\": \"a world\"}");
    assert!(e.contains("FLW1"), "{e}");
    let mut longer = bytes.clone();
    longer.push(0);
    let e = refuse(&a, &longer);
    assert!(e.contains("past the world"), "{e}");
}

/// The page reads a Worker's world back a part at a time (issue 63: tour
/// 19's in one call was a 160-200 ms task): the shell, then each broker,
/// then the trace in runs. Cut as www/compare.js `worldParts` cuts them,
/// the parts read one by one give the world read in one go, event for
/// event; a part past the world, or a world taken before it is whole, is
/// refused.
#[test]
fn a_world_read_back_a_part_at_a_time_is_the_world_read_in_one_go() {
    use failover_lab::snapshot::{WorldReader, LOG_PART_RECORDS, TRACE_PART_EVENTS};
    let mut live = scenario_file("tour-19-rack-loss-20000.json");
    // The 20,000-partition tour past its rack's crash at 3 s: runs of
    // metadata records and of trace events, 60 brokers.
    live.cluster.run_until(4_000);
    let bytes = live.snapshot_bytes();
    let mut once = through_bytes(&mut live);
    // The table, as the page reads it: little-endian u32s after 8 bytes.
    let u32_at = |at: usize| {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize
    };
    let count = u32_at(8);
    let brokers = live.scenario.spec.brokers as usize;
    let runs = live.cluster.trace.len().div_ceil(TRACE_PART_EVENTS);
    let log_runs = live
        .cluster
        .controller
        .metadata_log
        .len()
        .div_ceil(LOG_PART_RECORDS);
    assert!(
        runs >= 2 && log_runs >= 2,
        "{} trace events and {} metadata records: more than one run of each",
        live.cluster.trace.len(),
        live.cluster.controller.metadata_log.len()
    );
    assert_eq!(count, 1 + brokers + log_runs + runs);
    let mut at = 12 + 4 * count;
    let mut parts = Vec::new();
    for k in 0..count {
        let n = u32_at(12 + 4 * k);
        parts.push(if k == 0 {
            &bytes[..at + n]
        } else {
            &bytes[at..at + n]
        });
        at += n;
    }
    assert_eq!(at, bytes.len());
    let new =
        || WorldReader::new((*live.scenario).clone(), live.settings.clone(), parts[0]).unwrap();
    let mut reader = new();
    let mut done = Vec::new();
    for part in &parts[1..] {
        done.push(reader.read_part(part).unwrap());
    }
    // Whole at the last part, not before.
    assert_eq!(done.iter().filter(|d| **d).count(), 1);
    assert_eq!(done.last(), Some(&true));
    let e = reader.read_part(parts[1]).err().unwrap_or_default();
    assert!(e.contains("snapshot:"), "a part past the world: {e}");
    let mut back = reader.finish().unwrap();
    assert_eq!(back.cluster.trace.hash_hex(), live.cluster.trace.hash_hex());
    assert!(
        back.snapshot_bytes() == bytes,
        "the world read in parts writes other bytes"
    );
    back.cluster.run_until(6_000);
    once.cluster.run_until(6_000);
    assert_eq!(json(&back), json(&once));
    // Taken before its last part: refused, saying where it stopped.
    let mut short = new();
    for part in &parts[1..count - 1] {
        assert!(!short.read_part(part).unwrap());
    }
    let e = short.finish().err().unwrap_or_default();
    assert!(e.contains("cut short"), "{e}");
    // A log's or a trace's first run fed again and again: refused before
    // the log or the trace passes its count.
    let first_log = 1 + brokers;
    let first_trace = first_log + log_runs;
    for (first, what, before) in [
        (first_log, "past the metadata log", first_log),
        (first_trace, "past the world", first_trace),
    ] {
        let mut again = new();
        for part in &parts[1..before] {
            again.read_part(part).unwrap();
        }
        let runs = if first == first_log { log_runs } else { runs };
        let refused = (0..=runs).find_map(|_| again.read_part(parts[first]).err());
        assert!(
            refused.as_deref().is_some_and(|e| e.contains(what)),
            "run {first} fed {} times: {refused:?}",
            runs + 1
        );
    }
    // A trace run where a broker belongs: refused, naming the broker.
    let e = new().read_part(parts[count - 1]).err().unwrap_or_default();
    assert!(e.contains("broker 1"), "{e}");
}
