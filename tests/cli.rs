//! The real CLI binary: formats, exit codes, error messages.

use std::process::Command;

fn cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_failover-lab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the CLI runs")
}

#[test]
fn run_prints_the_json_report_with_every_contract_field() {
    let out = cli(&["run", "scenarios/leader-dies.json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "scenario",
        "seed",
        "end_ms",
        "trace_hash",
        "brokers",
        "partitions",
        "producers",
        "consumers",
        "acked_records_lost",
        "invariant_violations",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let p = &v["partitions"][0];
    for key in [
        "topic",
        "partition",
        "leader",
        "leader_epoch",
        "replicas",
        "isr",
        "high_watermark",
        "replica_logs",
    ] {
        assert!(p.get(key).is_some(), "missing partitions[].{key}");
    }
    let log = &p["replica_logs"][0];
    for key in [
        "broker",
        "log_end_offset",
        "high_watermark",
        "epochs",
        "log_digest",
    ] {
        assert!(log.get(key).is_some(), "missing replica_logs[].{key}");
    }
    assert_eq!(v["end_ms"], 60000);
}

#[test]
fn describe_prints_the_kafka_topics_layout() {
    let out = cli(&["run", "scenarios/leader-dies.json", "--format", "describe"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("Topic: orders\tTopicId: "));
    assert!(lines[0]
        .ends_with("PartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2"));
    assert_eq!(
        lines[1],
        "\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 1,2,3\tElr: \tLastKnownElr: "
    );
}

#[test]
fn trace_format_narrates_the_failover() {
    let out = cli(&["run", "scenarios/leader-dies.json", "--format", "trace"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("elected broker 2 from ISR {2,3}"));
    assert!(text.contains("leader epoch 0 → 1"));
}

#[test]
fn a_broken_scenario_exits_2_with_one_message_naming_the_field() {
    let dir = std::env::temp_dir().join(format!("fl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.json");
    std::fs::write(
        &f,
        r#"{"brokers": 3, "topics": [{"name": "orders", "replication_factor": 4}]}"#,
    )
    .unwrap();
    let out = cli(&["run", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.trim(),
        "error: topics[0].replication_factor: 4 exceeds the 3 brokers"
    );
    let out = cli(&["run", "no/such/file.json"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The value a message quotes is cut at 40 bytes, never inside a character
/// (then it is quoted whole): a long text with an "é" across byte 40 used to
/// panic the CLI (and abort the page's wasm) instead of naming the field.
#[test]
fn a_long_wrong_value_is_quoted_cut_at_a_character_boundary_not_a_panic() {
    let dir = std::env::temp_dir().join(format!("fl-cli-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for pad in 36..42 {
        let f = dir.join(format!("bad-{pad}.json"));
        let text = format!("{}éééééé", "a".repeat(pad));
        std::fs::write(&f, format!(r#"{{"brokers": "{text}"}}"#)).unwrap();
        let out = cli(&["run", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "pad {pad}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("error: brokers: expected a non-negative integer, found \"aaa"),
            "pad {pad}: {err}"
        );
        let quoted = err.trim_end();
        assert!(
            quoted.ends_with('…') || quoted.ends_with(&format!("{text}\"")),
            "pad {pad}: {err}"
        );
    }
}

#[test]
fn a_closed_output_pipe_ends_the_cli_quietly_without_a_panic() {
    use std::process::Stdio;
    // The trace is written whole; the report (json) as it is serialised.
    for format in ["trace", "json"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_failover-lab"))
            .args(["run", "scenarios/leader-dies.json", "--format", format])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the CLI starts");
        // Close our end of the pipe before the CLI writes, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.is_empty(), "--format {format}: {err}");
        assert!(out.status.success(), "--format {format}: {:?}", out.status);
    }
}

#[test]
fn run_set_applies_settings_reports_them_and_equals_the_edited_scenario() {
    // acks=1 on the unclean-election scenario: the same run as editing the
    // file by hand, down to the trace hash, and the report says what was set.
    let out = cli(&[
        "run",
        "scenarios/unclean-election.json",
        "--set",
        "acks=1",
        "--set",
        "min.insync.replicas=1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["settings"]["acks"], "1");
    assert_eq!(v["settings"]["min.insync.replicas"], 1);
    let text = std::fs::read_to_string(format!(
        "{}/scenarios/unclean-election.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut s: serde_json::Value = serde_json::from_str(&text).unwrap();
    for c in s["clients"].as_array_mut().unwrap() {
        if c["type"] == "producer" {
            c["acks"] = "1".into();
        }
    }
    for st in s["steps"].as_array_mut().unwrap() {
        if let Some(p) = st.get_mut("produce").and_then(|p| p.as_object_mut()) {
            p.entry("acks").or_insert("1".into());
        }
    }
    s["config"]["min.insync.replicas"] = 1.into();
    let mut by_hand = failover_lab::Lab::from_json(&s.to_string()).unwrap();
    by_hand.run_to_end();
    assert_eq!(v["trace_hash"], by_hand.report().trace_hash);
    let plain = cli(&["run", "scenarios/unclean-election.json"]);
    let p: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(p.get("settings").is_none(), "no settings, no field");
}

#[test]
fn run_set_with_an_unknown_key_or_a_bad_value_exits_2_naming_it() {
    for (set, named) in [
        ("no.such.key=1", "no.such.key"),
        ("acks=7", "acks"),
        ("min.insync.replicas=abc", "min.insync.replicas"),
        ("acks", "acks"),
    ] {
        let out = cli(&["run", "scenarios/leader-dies.json", "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{set}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named), "{set}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn sweep_shards_written_as_jsonl_merge_into_the_single_sweeps_rows() {
    let dir = std::env::temp_dir().join(format!("failover-lab-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let common = [
        "sweep",
        "--set",
        "rf=3",
        "--set",
        "min.isr=2",
        "--set",
        "unclean=false",
        "--set",
        "acks=all",
        "--threads",
        "1",
    ];
    let shard = |first: &str, seeds: &str, file: &str| {
        let mut args = common.to_vec();
        args.extend(["--first-seed", first, "--seeds", seeds, "--format", "jsonl"]);
        let out = cli(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).lines().count(),
            seeds.parse::<usize>().unwrap()
        );
        let path = dir.join(file);
        std::fs::write(&path, &out.stdout).unwrap();
        path.to_string_lossy().to_string()
    };
    let a = shard("1", "2", "a.jsonl");
    let b = shard("3", "3", "b.jsonl");
    let merged = cli(&["sweep-merge", &a, &b, "--format", "json"]);
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let mut args = common.to_vec();
    args.extend(["--first-seed", "1", "--seeds", "5", "--format", "json"]);
    let single = cli(&args);
    assert_eq!(
        String::from_utf8_lossy(&merged.stdout),
        String::from_utf8_lossy(&single.stdout)
    );
    let bad = cli(&["sweep-merge", &a, &a]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("more than one shard"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scenario_with_compare_lanes_runs_as_it_is_and_each_lane_is_its_set() {
    // `run` of a file with "compare" ignores the lanes: the report is the
    // scenario's own run, with no settings; `--set` with a lane's settings is
    // that lane (what the page's compare mode shows).
    let file = "scenarios/tour-12-unclean-acceptable.json";
    let plain = cli(&["run", file]);
    assert!(plain.status.success());
    let p: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(p.get("settings").is_none());
    let text = std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut s: serde_json::Value = serde_json::from_str(&text).unwrap();
    s.as_object_mut().unwrap().remove("compare");
    let mut without = failover_lab::Lab::from_json(&s.to_string()).unwrap();
    without.run_to_end();
    assert_eq!(p["trace_hash"], without.report().trace_hash);
    let lane_b = cli(&["run", file, "--set", "unclean.leader.election.enable=true"]);
    let b: serde_json::Value = serde_json::from_slice(&lane_b.stdout).unwrap();
    assert_eq!(b["acked_records_lost"], 269, "lane B's unclean election");
    assert_eq!(
        p["acked_records_lost"], 0,
        "the file as it is (lane A's setting is the default)"
    );
}

#[test]
fn check_names_a_compare_lane_that_cannot_run() {
    let dir = std::env::temp_dir().join(format!("failover-lab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad-lane.json");
    std::fs::write(
        &f,
        r#"{"brokers": 3, "topics": [{"name": "t", "replication_factor": 3}], "compare": "acks=1|min.insync.replica=2"}"#,
    )
    .unwrap();
    let out = cli(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("compare: lane B (min.insync.replica=2)")
            && err.contains("min.insync.replica"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// KafkaProducer.configureDeliveryTimeout: an explicit delivery.timeout.ms
/// below linger.ms + request.timeout.ms is a ConfigException; `check`
/// refuses it with exit 2 and names the key.
#[test]
fn check_refuses_a_delivery_timeout_below_linger_plus_request_timeout_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("failover-lab-cli-timeout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("short-delivery-timeout.json");
    std::fs::write(
        &file,
        r#"{"seed": 1, "brokers": 3,
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "all",
                         "records_per_sec": 10,
                         "config": {"delivery.timeout.ms": 1000, "linger.ms": 5}}],
            "run_until_ms": 1000}"#,
    )
    .unwrap();
    let out = cli(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("delivery.timeout.ms"), "{err}");
    assert!(err.contains("30005"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 30, point 5: `check` refuses a tour question whose answer
/// expression does not parse, with exit 2, naming the stop and the field.
#[test]
fn check_refuses_a_bad_question_answer_naming_the_stop() {
    let dir = std::env::temp_dir().join(format!("failover-lab-cli-q-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = format!(
        "{}/scenarios/tour-7-acks1-loses-data.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let good = cli(&[
        "check",
        &format!(
            "{}/scenarios/tour-7-acks1-loses-data.json",
            env!("CARGO_MANIFEST_DIR")
        ),
    ]);
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    v["tour"][3]["question"]["answer"] = serde_json::json!("acked_records_lost >");
    let f = dir.join("bad-question.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let out = cli(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tour[3].question.answer"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `failover-lab check` runs a tour to each stop and evaluates its claims
/// (issue 62): one that is false, or a fact sentence with none, fails the
/// check (exit 1) naming `tour[K].claims[i]` or the sentence.
#[test]
fn check_evaluates_a_tours_claims_and_names_a_false_one_and_an_unbacked_sentence() {
    let out = cli(&["check", "scenarios/tour-1-leader-dies.json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("claims true, 0 fact sentences without a claim"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/tour-1-leader-dies.json"
    ))
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["tour"][3]["claims"][2]["check"] =
        "events[event=leader_elected&partition=0].leader == 3".into();
    v["tour"][4]["claims"] = serde_json::json!([]);
    let dir = std::env::temp_dir().join(format!("fl-claims-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tour.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let out = cli(&["check", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tour[3].claims[2] (at 19004 ms) is false"),
        "{stderr}"
    );
    assert!(stderr.contains("\"elects broker 2\""), "{stderr}");
    assert!(stderr.contains("tour[4]: no claim backs"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
