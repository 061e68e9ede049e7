//! How long faults cost, as the report states it (`availability`): windows
//! with their cause, recovery time per fault in four phases that add up, and
//! producer latencies. Each test is a scenario with the outcome Kafka gives.

mod common;
use common::*;
use failover_lab::sim::Action;

const LEADER_DIES: &str = r#"{
  "seed": 7, "brokers": 3,
  "config": {"min.insync.replicas": 2},
  "topics": [{"name": "orders", "partitions": 3, "replication_factor": 3}],
  "clients": [
    {"type": "producer", "id": "p1", "topic": "orders", "acks": "all", "records_per_sec": 20},
    {"type": "consumer", "id": "c1", "topic": "orders"}
  ],
  "steps": [{"at_ms": 10000, "crash": 1}],
  "run_until_ms": 40000
}"#;

fn phases_sum(f: &serde_json::Value) -> u64 {
    ["detection_ms", "election_ms", "metadata_ms", "client_ms"]
        .iter()
        .map(|k| f["phases"][k].as_u64().unwrap())
        .sum()
}

/// A crashed leader: detection is the session timeout (KAFKA_REPLICATION.md
/// §5, the controller fences after broker.session.timeout.ms), election and
/// metadata take milliseconds, and the producer's rediscovery the rest.
#[test]
fn a_crashed_leader_costs_the_session_timeout_then_a_few_milliseconds() {
    let mut l = lab(LEADER_DIES);
    l.run_to_end();
    let r = serde_json::to_value(l.report()).unwrap();
    let a = &r["availability"];
    let faults = a["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1);
    let f = &faults[0];
    assert_eq!(f["action"], "crash");
    assert_eq!(f["brokers"], serde_json::json!([1]));
    assert_eq!(f["partitions"], serde_json::json!(["orders-0"]));
    let at = f["at_ms"].as_u64().unwrap();
    let fenced = f["fenced_at_ms"].as_u64().unwrap();
    let rto = f["rto_ms"].as_u64().unwrap();
    assert_eq!(at, 10_000);
    // Fenced one session timeout after the last heartbeat before the crash.
    let detection = f["phases"]["detection_ms"].as_u64().unwrap();
    assert_eq!(detection, fenced - at);
    assert!((7_000..=9_100).contains(&detection), "{detection}");
    assert!(f["phases"]["election_ms"].as_u64().unwrap() < 10);
    assert!(f["phases"]["metadata_ms"].as_u64().unwrap() < 10);
    assert_eq!(phases_sum(f), rto, "the phases add up to the RTO");
    assert_eq!(f["writable_at_ms"].as_u64().unwrap() - at, rto);
    // orders-0 was unwritable while its leader was down, then moving.
    // orders-1 and orders-2, where broker 1 was an ISR follower, stalled
    // too: acks=all waits for every ISR member, until the controller fenced
    // broker 1 and took it out of their ISR (isr_member_down).
    let parts = a["partitions"].as_array().unwrap();
    assert_eq!(
        parts.len(),
        3,
        "orders-0 lost its leader, orders-1 and -2 stalled: {parts:?}"
    );
    assert_eq!(
        f["stalled_partitions"],
        serde_json::json!(["orders-1", "orders-2"])
    );
    assert_eq!(f["stalled_partition_count"], 2);
    for p in &parts[1..] {
        let w = p["windows"].as_array().unwrap();
        assert_eq!(w.len(), 1, "{p}");
        assert_eq!(w[0]["cause"], "isr_member_down");
        assert_eq!(w[0]["from_ms"], 10_000);
        assert_eq!(w[0]["to_ms"].as_u64().unwrap(), fenced, "{p}");
    }
    let w = parts[0]["windows"].as_array().unwrap();
    assert_eq!(w[0]["cause"], "leader_down");
    assert_eq!(w[0]["from_ms"], 10_000);
    assert_eq!(w[0]["to_ms"].as_u64().unwrap(), fenced);
    let total: u64 = w
        .iter()
        .map(|x| x["to_ms"].as_u64().unwrap() - x["from_ms"].as_u64().unwrap())
        .sum();
    assert_eq!(parts[0]["unavailable_ms"].as_u64().unwrap(), total);
    // The records held up by the failover are the slowest ones.
    let lat = &a["produce_latency_ms"];
    assert!(lat["count"].as_u64().unwrap() > 500);
    assert!(lat["p50"].as_u64().unwrap() < 50);
    assert!(lat["max"].as_u64().unwrap() >= detection);
    assert!(lat["max"].as_u64().unwrap() <= rto);
    let e2e = &a["end_to_end_latency_ms"];
    assert!(e2e["count"].as_u64().unwrap() > 500);
    assert!(e2e["max"].as_u64().unwrap() >= detection);
}

/// The same broker stopped with a controlled shutdown: the controller moves
/// its leaders on the shutdown request, so detection is a heartbeat round
/// trip, not a session timeout, and the producer barely notices.
#[test]
fn a_controlled_shutdown_of_the_same_broker_costs_almost_nothing() {
    let v = LEADER_DIES.replace(r#""crash": 1"#, r#""shutdown": 1"#);
    let mut l = lab(&v);
    l.run_to_end();
    let r = serde_json::to_value(l.report()).unwrap();
    let f = &r["availability"]["faults"][0];
    assert_eq!(f["action"], "shutdown");
    let rto = f["rto_ms"].as_u64().unwrap();
    assert!(f["phases"]["detection_ms"].as_u64().unwrap() < 20, "{f}");
    assert!(rto < 1_000, "{f}");
    assert_eq!(phases_sum(f), rto);
    let w = &r["availability"]["partitions"][0]["windows"];
    assert!(w
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["cause"] == "leader_moving"));
}

/// No replica can lead: offline, a window still open at the end (to_ms
/// null), and a fault whose RTO is null.
#[test]
fn an_offline_partition_has_an_open_window_and_no_rto() {
    let mut l = lab(r#"{
      "seed": 3, "brokers": 1,
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}],
      "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "1", "records_per_sec": 10}],
      "steps": [{"at_ms": 2000, "crash": 1}],
      "run_until_ms": 20000
    }"#);
    l.run_to_end();
    let r = serde_json::to_value(l.report()).unwrap();
    let f = &r["availability"]["faults"][0];
    assert!(
        f["rto_ms"].is_null() && f["writable_at_ms"].is_null(),
        "{f}"
    );
    assert!(f["phases"]["client_ms"].is_null());
    let w = r["availability"]["partitions"][0]["windows"]
        .as_array()
        .unwrap()
        .clone();
    let last = w.last().unwrap();
    assert_eq!(last["cause"], "offline");
    assert!(last["to_ms"].is_null());
    assert_eq!(
        r["availability"]["partitions"][0]["unavailable_ms"], 18_000,
        "from the crash to the end of the run"
    );
}

/// A follower in the ISR dies: an acks=all producer's writes wait for it
/// (isr_member_down) until the controller fences it and takes it out of the
/// ISR; then the ISR is below min.insync.replicas and the writes are refused
/// (NOT_ENOUGH_REPLICAS: below_min_isr) until it is back in the ISR. The
/// fault led nothing, but it stalled the partition: its RTO runs to the first
/// acknowledged write after that.
#[test]
fn a_dead_isr_follower_stalls_acks_all_then_the_isr_is_below_min_insync_replicas() {
    let mut l = lab(r#"{
      "seed": 5, "brokers": 3,
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": [[1, 2]],
                  "config": {"min.insync.replicas": 2}}],
      "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 10}],
      "steps": [{"at_ms": 2000, "crash": 2}, {"at_ms": 20000, "restart": 2}],
      "run_until_ms": 40000
    }"#);
    l.run_to_end();
    let r = serde_json::to_value(l.report()).unwrap();
    let ws = &r["availability"]["partitions"][0]["windows"];
    let stall = &ws[0];
    assert_eq!(stall["cause"], "isr_member_down");
    assert_eq!(stall["from_ms"], 2_000, "from the crash: {ws}");
    let w = &ws[1];
    assert_eq!(w["cause"], "below_min_isr");
    let (from, to) = (w["from_ms"].as_u64().unwrap(), w["to_ms"].as_u64().unwrap());
    assert_eq!(
        stall["to_ms"].as_u64().unwrap(),
        from,
        "one window after the other: {ws}"
    );
    assert!(
        (9_000..=11_100).contains(&from),
        "the follower is fenced: {w}"
    );
    assert!(to > 20_000, "back in the ISR after its restart: {w}");
    let f = &r["availability"]["faults"][0];
    assert_eq!(f["partitions"], serde_json::json!([]), "it led nothing");
    assert_eq!(f["stalled_partitions"], serde_json::json!(["t-0"]));
    let writable = f["writable_at_ms"].as_u64().unwrap();
    assert!(
        writable >= to,
        "writable at {writable}, after the ISR grew back at {to}"
    );
    assert_eq!(f["rto_ms"].as_u64().unwrap(), writable - 2_000);
    assert_eq!(
        phases_sum(f),
        writable - 2_000,
        "the phases add up to the RTO"
    );
}

/// A whole rack at the same millisecond is one fault. (The producer's
/// request to the isolated broker only fails after request.timeout.ms=30 s,
/// so the client phase is long.)
#[test]
fn faults_at_the_same_millisecond_count_as_one() {
    let mut l = lab(r#"{
      "seed": 2, "brokers": 3,
      "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
      "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 30}],
      "steps": [{"at_ms": 5000, "crash": 1}, {"at_ms": 5000, "isolate": 2}],
      "run_until_ms": 60000
    }"#);
    l.run_to_end();
    let r = serde_json::to_value(l.report()).unwrap();
    let faults = r["availability"]["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0]["brokers"], serde_json::json!([1, 2]));
    assert_eq!(
        faults[0]["actions"],
        serde_json::json!(["crash", "isolate"])
    );
    assert_eq!(faults[0]["partitions"], serde_json::json!(["t-0", "t-1"]));
    assert_eq!(
        phases_sum(&faults[0]),
        faults[0]["rto_ms"].as_u64().unwrap()
    );
}

/// The accountant is part of the deterministic run: a fault injected by a
/// call at a given time gives the same report as the same step in the file.
#[test]
fn a_fault_called_live_is_accounted_as_a_step_is() {
    let mut live = lab(&LEADER_DIES.replace(r#"{"at_ms": 10000, "crash": 1}"#, ""));
    live.cluster.run_until(10_000);
    live.cluster.apply(Action::Crash(1)).unwrap();
    live.cluster.run_until(40_000);
    let mut file = lab(LEADER_DIES);
    file.run_to_end();
    let a = serde_json::to_value(&live.report().availability).unwrap();
    let b = serde_json::to_value(&file.report().availability).unwrap();
    assert_eq!(a, b);
}

/// `sim.` cost settings are checked like every config key: a typo or a
/// negative time is an error that names the field.
#[test]
fn bad_cost_settings_are_errors_naming_the_field() {
    let with = |kv: &str| {
        failover_lab::Lab::from_json(&LEADER_DIES.replace(
            r#""config": {"min.insync.replicas": 2}"#,
            &format!(r#""config": {{"min.insync.replicas": 2, {kv}}}"#),
        ))
        .err()
        .unwrap_or_default()
    };
    let e = with(r#""sim.controller.record.write.ms": 10"#);
    assert!(
        e.contains("unknown config \"sim.controller.record.write.ms\""),
        "{e}"
    );
    let e = with(r#""sim.broker.become.leader.us": -5"#);
    assert!(e.contains("sim.broker.become.leader.us"), "{e}");
    assert!(e.contains("not a non-negative integer"), "{e}");
    let e = with(r#""sim.controller.max.records.per.batch": 0"#);
    assert!(e.contains("sim.controller.max.records.per.batch"), "{e}");
}

fn mass_failover(partitions: u32, costs: &str) -> serde_json::Value {
    let mut l = lab(&format!(
        r#"{{
      "seed": 9, "brokers": 4,
      "config": {{ {costs} }},
      "topics": [{{"name": "t", "partitions": {partitions}, "replication_factor": 3}}],
      "steps": [{{"at_ms": 3000, "crash": 1}}],
      "run_until_ms": 16000
    }}"#
    ));
    l.run_to_end();
    serde_json::to_value(&l.report().availability.faults[0]).unwrap()
}

/// Moving many leaders costs time: the controller writes one record per
/// moved partition (sim.controller.record.write.us each, in batches of at
/// most sim.controller.max.records.per.batch) and every broker applies the
/// changes and takes on its new roles. With the costs at zero the move is
/// as quick for 2,000 partitions as for one.
#[test]
fn mass_failover_takes_time_the_cost_settings_decide() {
    let zero = r#""sim.controller.record.write.us": 0, "sim.broker.metadata.apply.us": 0,
                  "sim.broker.become.leader.us": 0, "sim.broker.become.follower.us": 0"#;
    let free = mass_failover(2000, zero);
    let costly = mass_failover(
        2000,
        r#""sim.controller.record.write.us": 100, "sim.controller.max.records.per.batch": 100"#,
    );
    let span = |f: &serde_json::Value| {
        f["applied_at_ms"].as_u64().unwrap() - f["fenced_at_ms"].as_u64().unwrap()
    };
    let led = costly["partitions"].as_array().unwrap().len() as u64;
    assert_eq!(led, 500, "broker 1 leads a quarter of them");
    assert!(span(&free) <= 5, "free: {}", span(&free));
    // Broker 1 is in the ISR of 1,500 partitions: 1,500 records (500 with a
    // new leader) at 100 µs each, 15 batches, before the last one is seen.
    assert!(span(&costly) >= 150, "costly: {}", span(&costly));
    assert!(span(&costly) < 1_000, "costly: {}", span(&costly));
    assert_eq!(phases_sum(&costly), costly["rto_ms"].as_u64().unwrap());
}

/// The figures tour 11 states, from the tour's own file: a crash of a broker
/// leading 100 partitions costs the session timeout plus milliseconds of
/// per-partition work; a controlled shutdown moving 120 costs no detection;
/// and with ZooKeeper-era costs (about 5 ms a partition) the metadata phase
/// grows and the crash's RTO with it: the producer's connections are full of
/// acks=all writes waiting for the dead ISR member until the fencing, so its
/// metadata request goes out only then (NetworkClient.leastLoadedNode needs
/// a free slot) and meets the slower brokers (KAFKA_REPLICATION.md §5; the
/// cost model of `sim.` keys).
#[test]
fn tour_11_mass_failover_costs_detection_once_and_per_partition_work_linearly() {
    let path = format!(
        "{}/scenarios/tour-11-mass-failover.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let run = |settings: &[(&str, &str)]| {
        let pairs: Vec<(String, String)> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut l = failover_lab::Lab::from_json_with_settings(&text, &pairs).unwrap();
        l.run_to_end();
        let r = serde_json::to_value(l.report()).unwrap();
        assert_eq!(r["acked_records_lost"], 0);
        r["availability"]["faults"].as_array().unwrap().clone()
    };
    let fig = |f: &serde_json::Value| {
        let p = &f["phases"];
        (
            f["partitions"].as_array().unwrap().len(),
            f["rto_ms"].as_u64().unwrap(),
            p["detection_ms"].as_u64().unwrap(),
            p["metadata_ms"].as_u64().unwrap(),
            p["client_ms"].as_u64().unwrap(),
        )
    };
    let kraft = run(&[]);
    assert_eq!(kraft.len(), 2);
    assert_eq!(kraft[0]["action"], "crash");
    assert_eq!(fig(&kraft[0]), (100, 9036, 9001, 9, 26));
    assert_eq!(kraft[0]["applied_at_ms"], 19010);
    assert_eq!(kraft[1]["action"], "shutdown");
    assert_eq!(fig(&kraft[1]), (120, 508, 1, 9, 498));
    let zk = run(&[
        ("sim.broker.become.leader.us", "5000"),
        ("sim.broker.become.follower.us", "5000"),
    ]);
    assert_eq!(
        fig(&zk[0]).1,
        9232,
        "the crash's RTO grows with the metadata phase"
    );
    assert_eq!(fig(&zk[0]).3, 206);
    assert_eq!((fig(&zk[1]).1, fig(&zk[1]).3), (1235, 305));
}

/// The strip reads each cause's count under that cause's own name, the name
/// the report gives its windows (SCENARIO_FORMAT.md, `availability.windows[].cause`;
/// KAFKA_REPLICATION.md §5): while broker 1 is down and not yet fenced,
/// orders-0 (it led) counts under `leader_down` and orders-1 and orders-2
/// (it followed, in their ISR) under `isr_member_down`; once the new leader
/// has been found, nothing counts.
#[test]
fn the_strip_counts_each_partition_under_the_cause_the_report_names() {
    let mut l = lab(LEADER_DIES);
    l.run_to_end();
    let r = serde_json::to_value(l.report()).unwrap();
    let v = failover_lab::view::availability(&l.cluster, 40_000, 40);
    assert_eq!(v.bucket_ms, 1_000);
    let names: Vec<&str> = v.causes.to_vec();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "below_min_isr",
            "isr_member_down",
            "leader_down",
            "leader_moving",
            "offline"
        ],
        "every cause once, by the report's names"
    );
    let windows = r["availability"]["partitions"][0]["windows"][0]["cause"].clone();
    assert_eq!(windows, "leader_down");
    let at = |bucket: usize, cause: &str| {
        let i = names.iter().position(|n| *n == cause).unwrap();
        v.counts[bucket][i]
    };
    // 12–13 s: after the crash at 10 s, before the fence (~17–19 s).
    assert_eq!(at(12, "leader_down"), 1);
    assert_eq!(at(12, "isr_member_down"), 2);
    for c in ["offline", "leader_moving", "below_min_isr"] {
        assert_eq!(at(12, c), 0, "{c}");
    }
    // Before the crash and long after recovery: nothing.
    for c in &names {
        assert_eq!(at(5, c), 0, "{c} before the crash");
        assert_eq!(at(35, c), 0, "{c} after recovery");
    }
}

/// Each partition the fault took down recovers on its own clock: its RTO runs
/// from the fault to the moment that partition is writable again (its new
/// leader applied the change), and the fault's RTO is the slowest of them
/// (the four-phase RTO of the book's "How long is a partition unavailable?";
/// KAFKA_REPLICATION.md §5). With a per-record controller cost the
/// partitions' times spread out over the batches.
#[test]
fn each_partition_recovers_on_its_own_clock_and_the_faults_rto_is_the_slowest() {
    let mut l = lab(r#"{
      "seed": 9, "brokers": 4,
      "config": { "sim.controller.record.write.us": 2000, "sim.controller.max.records.per.batch": 10 },
      "topics": [{"name": "t", "partitions": 40, "replication_factor": 3}],
      "steps": [{"at_ms": 3000, "crash": 1}],
      "run_until_ms": 20000
    }"#);
    l.run_to_end();
    let faults = l.cluster.availability.faults();
    let f = &faults[0];
    let led = f.partitions().count();
    assert_eq!(led, 10, "broker 1 leads a quarter of the 40");
    let per = f.partition_rto_ms();
    assert_eq!(
        per.len(),
        led,
        "one figure per partition it led, each writable again"
    );
    let r = f.recovery();
    let fenced = r.fenced_at_ms.unwrap() - 3000;
    assert_eq!(
        per.iter().max().copied(),
        r.rto_ms,
        "the fault's RTO is the slowest partition's"
    );
    assert!(
        per.iter().all(|&ms| ms > fenced),
        "none before detection: {per:?}"
    );
    let (lo, hi) = (
        per.iter().min().copied().unwrap(),
        per.iter().max().copied().unwrap(),
    );
    assert!(
        hi > lo,
        "batches of 10 records at 2 ms each spread them: {per:?}"
    );
}
