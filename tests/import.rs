//! Bring your own cluster (issue 65 item 2): a cluster's `kafka-topics.sh
//! --describe` output, imported, gives a scenario whose describe at t = 0 is
//! the pasted text again — leaders not first in their replica list, shrunken
//! ISRs, ELR and offline partitions included — and malformed input is refused
//! with its line number and what was expected there.

use failover_lab::import::{import, Imported, Limits, Options};
use failover_lab::Lab;

fn imported(text: &str) -> Imported {
    import(text, &Options::default(), Limits::LAB).unwrap_or_else(|e| panic!("{e}"))
}

/// The lab's describe at t = 0 of an imported text.
fn describe_back(text: &str) -> String {
    let i = imported(text);
    let mut lab = Lab::from_json(&i.scenario).unwrap_or_else(|e| panic!("{e}\n{}", i.scenario));
    lab.cluster.run_until(0);
    lab.describe()
}

fn refusal(text: &str) -> String {
    match import(text, &Options::default(), Limits::LAB) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// Three brokers, two topics, as Kafka 4.x prints them with broker 1 down:
/// leaders that are not their partition's first replica, shrunken ISRs, topic
/// configs the lab models, and an offline partition whose only eligible
/// leader replica is broker 1.
const THREE_BROKERS: &str = "\
Topic: orders\tTopicId: 3q2lFfyuRW2n0P6CfBDMKA\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2,unclean.leader.election.enable=true
\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\tElr: \tLastKnownElr: 
\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3\tElr: \tLastKnownElr: 
\tTopic: orders\tPartition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,2\tElr: \tLastKnownElr: 
Topic: payments\tTopicId: Zk9aQ0bXTjW3cVbE1rLm2g\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: min.insync.replicas=2
\tTopic: payments\tPartition: 0\tLeader: 3\tReplicas: 1,3\tIsr: 3\tElr: \tLastKnownElr: 
\tTopic: payments\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: \tElr: 1\tLastKnownElr: 
";
#[test]
fn three_brokers_two_topics_describe_the_same_at_t0() {
    assert_eq!(describe_back(THREE_BROKERS), THREE_BROKERS);
    let i = imported(THREE_BROKERS);
    assert_eq!((i.brokers, i.topics, i.partitions), (3, 2, 5));
    // The offline partition's eligible replica must have been down.
    assert!(
        i.scenario
            .contains("\"steps\": [{\"at_ms\": 0, \"crash\": 1}]"),
        "{}",
        i.scenario
    );
}

/// A leader not first in its replica list stays leader once the lab runs
/// (no election moves it), until Kafka's own rebalance would.
#[test]
fn an_imported_leader_stays_leader_while_the_lab_runs() {
    let text = "Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 3\tReplicas: 1,2,3\tIsr: 3,1\n";
    let mut lab = Lab::from_json(&imported(text).scenario).unwrap_or_else(|e| panic!("{e}"));
    lab.cluster.run_until(10_000);
    let r = lab.report();
    assert_eq!(r.partitions[0].leader, Some(3));
    assert_eq!(r.partitions[0].leader_epoch, 0);
    // Broker 2, out of sync when pasted, catches up (the logs start empty).
    assert_eq!(r.partitions[0].isr, vec![1, 2, 3]);
}

/// 60 brokers, 20,000 partitions: leaders spread over the replica list, ISRs
/// of one to three, ELRs and offline partitions, generated deterministically.
fn big_describe() -> String {
    let mut s = String::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let topics = [
        ("clicks", 15_000u32, "AAAAAAAAAAAAAAAAAAAAAA"),
        ("billing", 5_000, "BBBBBBBBBBBBBBBBBBBBBB"),
    ];
    for (name, count, id) in topics {
        let cfg = if name == "billing" {
            "min.insync.replicas=2"
        } else {
            ""
        };
        s.push_str(&format!("Topic: {name}\tTopicId: {id}\tPartitionCount: {count}\tReplicationFactor: 3\tConfigs: {cfg}\n"));
        for p in 0..count {
            let a = 1 + next(60) as u32;
            let b = 1 + (a + next(58) as u32) % 60;
            let mut c = 1 + (b + next(57) as u32) % 60;
            while c == a || c == b {
                c = c % 60 + 1;
            }
            let reps = [a, b, c];
            let kind = next(100);
            let join = |v: &[u32]| {
                v.iter()
                    .map(|b| b.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let (leader, isr, elr, lke): (String, Vec<u32>, Vec<u32>, Vec<u32>) = if kind < 2 {
                ("none".into(), vec![], vec![reps[1]], vec![reps[0]])
            } else {
                let l = reps[next(3) as usize];
                let mut isr = vec![l];
                for r in reps {
                    if r != l && next(4) != 0 {
                        isr.push(r);
                    }
                }
                let elr: Vec<u32> = if kind < 5 {
                    reps.iter()
                        .copied()
                        .filter(|r| !isr.contains(r))
                        .take(1)
                        .collect()
                } else {
                    vec![]
                };
                (l.to_string(), isr, elr, vec![])
            };
            s.push_str(&format!(
                "\tTopic: {name}\tPartition: {p}\tLeader: {leader}\tReplicas: {}\tIsr: {}\tElr: {}\tLastKnownElr: {}\n",
                join(&reps),
                join(&isr),
                join(&elr),
                join(&lke)
            ));
        }
    }
    s
}

#[test]
fn sixty_brokers_twenty_thousand_partitions_describe_the_same_at_t0() {
    let text = big_describe();
    let started = std::time::Instant::now();
    let i = imported(&text);
    let import_ms = started.elapsed().as_millis();
    assert_eq!((i.brokers, i.partitions), (60, 20_000));
    let mut lab = Lab::from_json(&i.scenario).unwrap_or_else(|e| panic!("{e}"));
    lab.cluster.run_until(0);
    let back = lab.describe();
    if back != text {
        let d = back.lines().zip(text.lines()).position(|(a, b)| a != b);
        panic!("first difference at line {d:?}");
    }
    eprintln!("import of 60 brokers / 20,000 partitions: {import_ms} ms");
    // The page's limit admits it; one more partition is refused, naming it.
    assert!(import(&text, &Options::default(), Limits::PAGE).is_ok());
}

#[test]
fn sizes_beyond_the_page_are_refused_with_the_limit_named() {
    let mut text =
        String::from("Topic: t\tPartitionCount: 20001\tReplicationFactor: 1\tConfigs: \n");
    for p in 0..20_001 {
        text.push_str(&format!(
            "\tTopic: t\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1\n"
        ));
    }
    let e = import(&text, &Options::default(), Limits::PAGE)
        .err()
        .unwrap_or_default();
    assert!(
        e.starts_with("20001 partitions: the page runs at most 20000 partitions"),
        "{e}"
    );
    let mut text = String::from("Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n");
    for b in 1..=101 {
        text.push_str(&format!("{b} rack-{}\n", b % 3));
    }
    let e = import(&text, &Options::default(), Limits::PAGE)
        .err()
        .unwrap_or_default();
    assert!(
        e.starts_with("101 brokers: the page runs at most 100 brokers"),
        "{e}"
    );
}

#[test]
fn older_describe_without_elr_columns_and_spaces_for_tabs_reads() {
    // Kafka 2.x–3.6: no Elr columns; a terminal's copy turned tabs to spaces.
    let text = "Topic: t  PartitionCount: 2  ReplicationFactor: 2  Configs: segment.bytes=1073741824\n    Topic: t  Partition: 0  Leader: 2  Replicas: 1,2  Isr: 2\n    Topic: t  Partition: 1  Leader: 2  Replicas: 2,1  Isr: 2,1\n";
    let back = describe_back(text);
    assert!(
        back.contains(
            "\tTopic: t\tPartition: 0\tLeader: 2\tReplicas: 1,2\tIsr: 2\tElr: \tLastKnownElr: "
        ),
        "{back}"
    );
    // The ZooKeeper era's spelling, without a space after the colon.
    let old = "Topic:t\tPartitionCount:1\tReplicationFactor:1\tConfigs:\n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n";
    assert_eq!(imported(old).partitions, 1);
    let i = imported(text);
    assert_eq!(i.ignored, vec!["topic t: segment.bytes"]);
}

#[test]
fn configs_and_racks_from_kafka_configs_and_a_rack_list() {
    let text = format!(
        "{THREE_BROKERS}\
Dynamic configs for broker 1 are:
  unclean.leader.election.enable=true sensitive=false synonyms={{DYNAMIC_BROKER_CONFIG:unclean.leader.election.enable=true, DEFAULT_CONFIG:unclean.leader.election.enable=false}}
  log.retention.hours=24 sensitive=false synonyms={{DYNAMIC_BROKER_CONFIG:log.retention.hours=24}}
Dynamic configs for broker 2 are:
  unclean.leader.election.enable=true sensitive=false synonyms={{DYNAMIC_BROKER_CONFIG:unclean.leader.election.enable=true}}
Dynamic configs for broker 3 are:
  unclean.leader.election.enable=true sensitive=false synonyms={{DYNAMIC_BROKER_CONFIG:unclean.leader.election.enable=true}}
Default configs for brokers in the cluster are:
  replica.lag.time.max.ms=10000 sensitive=false synonyms={{DYNAMIC_DEFAULT_BROKER_CONFIG:replica.lag.time.max.ms=10000}}
  min.insync.replicas=1 sensitive=false synonyms={{DEFAULT_CONFIG:min.insync.replicas=1}}
Dynamic configs for topic orders are:
  retention.ms=1000 sensitive=false synonyms={{DYNAMIC_TOPIC_CONFIG:retention.ms=1000}}
1 rack-a
2 rack-b
3 rack-c
"
    );
    let i = imported(&text);
    let v: serde_json::Value = serde_json::from_str(&i.scenario).unwrap_or_default();
    assert_eq!(v["config"]["unclean.leader.election.enable"], true);
    assert_eq!(v["config"]["replica.lag.time.max.ms"], 10_000);
    assert!(
        v["config"].get("min.insync.replicas").is_none(),
        "Kafka's default adds nothing"
    );
    assert_eq!(v["racks"]["2"], "rack-b");
    assert_eq!(
        i.ignored,
        vec!["broker: log.retention.hours", "topic orders: retention.ms"]
    );
    let lab = Lab::from_json(&i.scenario).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lab.cluster.rack_of(3), Some("rack-c"));
}

#[test]
fn broker_ids_from_zero_are_renumbered_and_said_so() {
    let text = "Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1,2\n";
    let i = imported(text);
    assert!(
        i.notes.iter().any(|n| n.contains("0 → 1, 1 → 2, 2 → 3")),
        "{:?}",
        i.notes
    );
    assert!(
        i.scenario.contains("\"assignment\": [[1, 2, 3]]"),
        "{}",
        i.scenario
    );
}

// Ten kinds of malformed input, each refused with its line and expectation.

#[test]
fn malformed_empty_input() {
    assert_eq!(
        refusal("\n  \n"),
        "line 1: expected the output of kafka-topics.sh --describe, found nothing"
    );
}

#[test]
fn malformed_a_line_of_something_else() {
    let e = refusal("Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \nError while executing topic command : Topic 'x' does not exist\n");
    assert!(
        e.starts_with("line 2: expected a line of kafka-topics.sh --describe"),
        "{e}"
    );
    assert!(
        e.contains("found \"Error while executing topic command"),
        "{e}"
    );
}

#[test]
fn malformed_partition_before_its_topic_line() {
    let e = refusal("\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n");
    assert!(
        e.starts_with("line 1: partition line of topic t comes before any topic line"),
        "{e}"
    );
}

#[test]
fn malformed_partition_under_another_topic() {
    let e = refusal("Topic: a\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n\tTopic: b\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n");
    assert_eq!(e, "line 2: expected a partition of topic a (the topic line before it, line 1), found one of topic b");
}

#[test]
fn malformed_broker_id_in_replicas() {
    let e = refusal("Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,two,3\tIsr: 1\n");
    assert_eq!(
        e,
        "line 2: Replicas: expected broker ids separated by commas (like 1,2,3), found \"1,two,3\""
    );
}

#[test]
fn malformed_missing_isr_column() {
    let e = refusal("Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\n");
    assert_eq!(e, "line 2: expected \"Isr:\" after \"Replicas:\"");
}

#[test]
fn malformed_leader_outside_the_isr() {
    let e = refusal("Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 1,3\n");
    assert_eq!(
        e,
        "line 2: Leader: broker 2 is not in the Isr 1,3 (Kafka's leader is always in sync)"
    );
    let e = refusal("Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 4\tReplicas: 1,2,3\tIsr: 1,3\n");
    assert_eq!(
        e,
        "line 2: Leader: broker 4 is not one of the replicas 1,2,3"
    );
}

#[test]
fn malformed_replica_count_against_the_replication_factor() {
    let e = refusal("Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1\n");
    assert_eq!(
        e,
        "line 2: Replicas: expected 3 replicas (ReplicationFactor: 3 on line 1), found 2"
    );
}

#[test]
fn malformed_partition_listed_twice() {
    let e = refusal("Topic: t\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n");
    assert_eq!(e, "line 3: partition t-0 is listed twice (first on line 2)");
}

#[test]
fn malformed_partition_missing_from_a_filtered_describe() {
    let e = refusal("Topic: t\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n\tTopic: t\tPartition: 2\tLeader: 1\tReplicas: 1\tIsr: 1\n");
    assert!(
        e.starts_with("line 1: PartitionCount: 3 but partition t-1 is not listed"),
        "{e}"
    );
}

#[test]
fn malformed_partition_count_and_topic_id() {
    let e = refusal("Topic: t\tPartitionCount: three\tReplicationFactor: 1\tConfigs: \n");
    assert_eq!(
        e,
        "line 1: PartitionCount: expected a whole number of at least 1, found \"three\""
    );
    let e = refusal("Topic: t\tTopicId: xyz\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n");
    assert!(
        e.starts_with("line 1: TopicId: expected 22 characters of URL-safe base64"),
        "{e}"
    );
}

#[test]
fn malformed_config_value_of_a_modelled_key() {
    let e = refusal("Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: min.insync.replicas=zero\n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n");
    assert!(e.starts_with("line 1: min.insync.replicas=zero:"), "{e}");
    let e = refusal(&format!(
        "{THREE_BROKERS}Dynamic configs for broker 1 are:\n  this is not an entry\n"
    ));
    assert!(e.starts_with("line 9: expected a config entry like"), "{e}");
}

#[test]
fn malformed_rack_list() {
    let e = refusal(&format!("{THREE_BROKERS}1 rack-a\n2 rack-b\n"));
    assert!(
        e.starts_with("line 8: broker.rack: expected a rack for every broker or none"),
        "{e}"
    );
    assert!(e.ends_with("found none for broker 3"), "{e}");
    let e = refusal(&format!("{THREE_BROKERS}1 rack-a\n1 rack-b\n"));
    assert_eq!(
        e,
        "line 9: broker 1 is given a rack twice (first on line 8)"
    );
}

/// The book's worked example: `scenarios/imported-cluster.json` is what
/// `failover-lab import examples/import/describe.txt --records-per-sec 20
/// --consumers --name …` writes, and restarting the broker the import
/// crashed does not bring the offline partition back (KIP-966: a broker back
/// from an unclean shutdown leaves every ELR).
#[test]
fn the_books_example_is_what_import_writes_and_its_offline_partition_stays_offline() {
    let root = env!("CARGO_MANIFEST_DIR");
    let text =
        std::fs::read_to_string(format!("{root}/examples/import/describe.txt")).unwrap_or_default();
    let opts = Options {
        name: Some("Imported: three brokers, broker 1 down".into()),
        records_per_sec: 20,
        consumers: true,
        ..Options::default()
    };
    let i = import(&text, &opts, Limits::PAGE).unwrap_or_else(|e| panic!("{e}"));
    let committed = std::fs::read_to_string(format!("{root}/scenarios/imported-cluster.json"))
        .unwrap_or_default();
    assert_eq!(
        i.scenario, committed,
        "regenerate with failover-lab import (the test's doc comment)"
    );
    assert_eq!(i.ignored, vec!["topic payments: retention.ms"]);
    let mut v: serde_json::Value = serde_json::from_str(&committed).unwrap_or_default();
    if let Some(steps) = v["steps"].as_array_mut() {
        steps.push(serde_json::json!({"at_ms": 20000, "restart": 1}));
    }
    let mut lab = Lab::from_json(&v.to_string()).unwrap_or_else(|e| panic!("{e}"));
    lab.run_to_end();
    let r = lab.report();
    let p = |name: &str, n: u32| {
        r.partitions
            .iter()
            .find(|x| x.topic == name && x.partition == n)
            .cloned()
    };
    let payments1 = p("payments", 1).unwrap_or_else(|| panic!("payments-1"));
    assert_eq!(payments1.leader, None, "still offline");
    let orders0 = p("orders", 0).unwrap_or_else(|| panic!("orders-0"));
    assert_eq!(
        orders0.isr,
        vec![1, 2, 3],
        "broker 1 caught up and rejoined"
    );
}

/// `failover-lab import FILE…`: the scenario on stdout (or -o), notes on
/// stderr; a refusal names the file and its own line, and exits 2.
#[test]
fn the_cli_imports_files_and_names_the_file_and_line_it_refuses() {
    let bin = env!("CARGO_BIN_EXE_failover-lab");
    let dir = std::env::temp_dir().join(format!("fl-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_default();
    let describe = dir.join("describe.txt");
    let racks = dir.join("racks.txt");
    std::fs::write(&describe, THREE_BROKERS).unwrap_or_default();
    std::fs::write(&racks, "1 a\n2 b\n3 c\n").unwrap_or_default();
    let out = std::process::Command::new(bin)
        .args(["import", "--records-per-sec", "5", "--acks", "1"])
        .arg(&describe)
        .arg(&racks)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(v["racks"]["3"], "c");
    assert_eq!(v["clients"][0]["acks"], "1");
    assert!(String::from_utf8_lossy(&out.stderr).contains("import: broker 1 crashes at t = 0"));
    std::fs::write(&racks, "1 a\n2 b\nthree c\n").unwrap_or_default();
    let out = std::process::Command::new(bin)
        .arg("import")
        .arg(&describe)
        .arg(&racks)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "error: {}, line 3: expected a line of kafka-topics.sh",
            racks.display()
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
