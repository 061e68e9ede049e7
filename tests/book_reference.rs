//! The book's generated reference pages (docs/book/src/reference/), made from
//! the code so they cannot drift from it:
//!
//! - `config.md`: every config key the core reads, where a scenario sets it,
//!   and its default, from `sim::config::documented_keys()` (the config
//!   readers' own record of parsing an empty config), with a one-line meaning
//!   per key from [`MEANING`] below. A key the core gains without a meaning,
//!   or a meaning for a key it no longer reads, fails the test.
//! - `cli-help.md`: `failover-lab --help`, each subcommand's `--help`, and
//!   `failover-bench`'s, as the binaries print them.
//!
//! `cargo test --test book_reference` fails when a committed page differs
//! from what the code generates; `UPDATE_BOOK=1 cargo test --test
//! book_reference` rewrites the pages.

use std::process::Command;

use failover_lab::sim::config::{documented_keys, KeyDefault, KeyScope};

/// What each key does, in a line. Kafka's keys keep Kafka's meaning (and the
/// lab's default is Kafka's); `sim.` keys belong to the simulation.
const MEANING: &[(&str, &str)] = &[
    ("min.insync.replicas", "the fewest in-sync replicas an acks=all write needs; below it the leader answers NOT_ENOUGH_REPLICAS (and, since Kafka 3.7, the high watermark stops)"),
    ("unclean.leader.election.enable", "elect a replica outside the ISR when no in-sync replica is alive: available again at once, and what only the old leader had is lost"),
    ("log.flush.interval.ms", "fsync every partition's log this often; unset (Kafka's default) leaves it to the operating system, `sim.os.flush.interval.ms`"),
    ("sim.os.flush.interval.ms", "with `log.flush.interval.ms` unset, how often the OS writes dirty pages back; a power loss loses what it had not written"),
    ("sim.truncation", "`leader_epoch` (KIP-101/279, today's Kafka) or `high_watermark` (before 0.11: a restarted follower truncates to its own HW)"),
    ("replica.selector.class", "how a leader picks the replica a consumer should read from (KIP-392): unset or `org.apache.kafka.common.replica.LeaderSelector` keeps consumers on the leader, `org.apache.kafka.common.replica.RackAwareReplicaSelector` sends them to an in-sync replica in their `client.rack`"),
    ("replica.lag.time.max.ms", "a follower that has not caught up to the leader's log end for this long leaves the ISR (checked every half of it)"),
    ("replica.fetch.wait.max.ms", "how long a leader holds a follower's fetch when there is nothing new (the long poll)"),
    ("replica.fetch.backoff.ms", "how long a follower waits before fetching again after a fetch error"),
    ("replica.high.watermark.checkpoint.interval.ms", "how often a broker writes its replicas' high watermarks to disk; after a power loss a replica starts from the last checkpoint"),
    ("broker.session.timeout.ms", "the controller fences a broker it has not heard a heartbeat from for this long: the detection phase of a crash"),
    ("broker.heartbeat.interval.ms", "how often a running broker heartbeats to the controller"),
    ("auto.leader.rebalance.enable", "move leadership back to each partition's preferred replica when it is in sync again"),
    ("leader.imbalance.check.interval.seconds", "how long after an imbalance appears the rebalance runs"),
    ("controlled.shutdown.enable", "a broker shutting down asks the controller to move its leaders first (the `shutdown` step)"),
    ("sim.network.latency.ms", "one-way latency of every message"),
    ("sim.network.jitter.ms", "extra uniform jitter per message, from the seeded RNG; links stay FIFO"),
    ("sim.strict.min.isr", "the Kafka 3.7+ rule (KAFKA-15583): the HW does not advance while the ISR is below `min.insync.replicas`; `false` is the earlier behaviour, where NOT_ENOUGH_REPLICAS_AFTER_APPEND can occur"),
    ("sim.broker.startup.ms", "a restarted broker's start-up, from its process start to its registration request (JVM, loading its logs); the median of the restarts recorded on a real Kafka 4.4.0 cluster (1.7–6.5 s to unfenced, median 2.94 s, less the recorder's poll and the lab's own unfencing); `0` restarts at once"),
    ("sim.broker.log.recovery.ms", "added to the start-up after an unclean shutdown (crash or power loss), for recovering the logs past their recovery point; the recordings' small logs show none"),
    ("sim.fence.on.reregistration", "a broker re-registering with a new incarnation is first handled as fenced and refused while its old session is valid (KIP-380 era); its default is `false` when `sim.truncation=high_watermark`, as in 0.10"),
    ("eligible.leader.replicas.enable", "KIP-966 eligible leader replicas, on in new Kafka 4.1+ clusters: replicas that left the ISR while it was below `min.insync.replicas` stay electable"),
    ("sim.controller.record.write.us", "the controller's time per metadata record it writes (simulated µs; an estimate)"),
    ("sim.controller.max.records.per.batch", "records per metadata batch (Kafka's QuorumController.MAX_RECORDS_PER_BATCH); a batch becomes visible once all of it is written"),
    ("sim.broker.metadata.apply.us", "a broker's time per partition change in a metadata batch it applies (simulated µs; an estimate)"),
    ("sim.broker.become.leader.us", "a broker's work per partition it starts leading (simulated µs; an estimate)"),
    ("sim.broker.become.follower.us", "a broker's work per partition it starts following: fetcher, truncation check (simulated µs; an estimate)"),
    ("offsets.topic.num.partitions", "partitions of `__consumer_offsets`, created when a consumer has a `group.id`"),
    ("offsets.topic.replication.factor", "replication factor of `__consumer_offsets`; as in Kafka, never lowered to fit a smaller cluster"),
    ("sim.coordinator.load.ms", "a new group coordinator's fixed time to load its groups (COORDINATOR_LOAD_IN_PROGRESS meanwhile)"),
    ("sim.coordinator.load.us.per.record", "plus this much per record of its offsets partition (simulated µs)"),
    ("acks", "`0`, `1` or `all` (also `-1`): how many replicas must have a record before the producer is told it is written; a client entry's `acks` sets it too"),
    ("enable.idempotence", "producer id and sequence numbers, so a retry is never written twice; Kafka's default is on, which needs acks=all (on with acks=all, off otherwise unless set, and refused with other acks)"),
    ("max.in.flight.requests.per.connection", "unanswered requests per broker connection (at most 5 with idempotence)"),
    ("request.timeout.ms", "how long a client waits for an answer before it gives the request up and closes the connection"),
    ("linger.ms", "how long a producer may wait to fill a batch (not waited for here: a batch goes as soon as it may)"),
    ("delivery.timeout.ms", "a record not acknowledged this long after it was sent fails; at least `linger.ms` + `request.timeout.ms` (a lower value set explicitly is refused, an unset one is raised to it)"),
    ("retries", "how often a failed produce is retried within `delivery.timeout.ms`"),
    ("retry.backoff.ms", "the first wait before a retry"),
    ("retry.backoff.max.ms", "the most a retry backoff grows to (exponential, with jitter)"),
    ("batch.size", "bytes per batch; a record joins its partition's newest unsent batch while it has room (the lab counts 16 bytes a record, 61 a batch header)"),
    ("metadata.max.age.ms", "a client refreshes its metadata at least this often, errors or not"),
    ("reconnect.backoff.ms", "the first wait before reconnecting to a broker after a refused or closed connection (±20 %)"),
    ("reconnect.backoff.max.ms", "the most that wait doubles to"),
    ("socket.connection.setup.timeout.ms", "how long a connect to a host that does not answer stays pending before it fails (±20 %)"),
    ("socket.connection.setup.timeout.max.ms", "the most that timeout doubles to on consecutive failures"),
    ("auto.offset.reset", "where a consumer without a committed offset starts: `latest` (the high watermark), `earliest`, `none` (an error), or `by_duration:PT30S` (KIP-1106)"),
    ("fetch.max.wait.ms", "how long a leader holds a consumer's fetch when there is nothing new to read"),
    ("enable.auto.commit", "a group consumer commits its positions every `auto.commit.interval.ms`"),
    ("auto.commit.interval.ms", "how often the auto-commit runs"),
    ("group.initial.rebalance.delay.ms", "how long a rebalance that starts in an empty group waits for more members, again after each that joins, within the rebalance timeout"),
    ("partition.assignment.strategy", "the assignor of a subscribing group: `range` (eager) or `cooperative-sticky` (KIP-429)"),
    ("session.timeout.ms", "a member not heard from for this long is removed from its group, which rebalances"),
    ("heartbeat.interval.ms", "how often a member heartbeats to its coordinator; lower than `session.timeout.ms`"),
    ("max.poll.interval.ms", "a member's rebalance timeout: how long the coordinator waits for it to join again"),
    ("group.protocol", "a subscribing group's protocol: `classic` (JoinGroup/SyncGroup, the Java client's default through 4.x) or `consumer` (KIP-848: ConsumerGroupHeartbeat, the coordinator assigns)"),
    ("group.remote.assignor", "KIP-848: the coordinator's assignor, `uniform` (the broker's default) or `range`"),
    ("group.consumer.session.timeout.ms", "KIP-848: the coordinator removes a member not heard from for this long (a broker setting)"),
    ("sim.commit.leader.epoch", "commits carry the leader epoch of the last record read; false models a client that commits without it (no KIP-320 validation on restart)"),
    ("group.instance.id", "static membership (KIP-345): a restart within the session keeps the member's place and assignment"),
    ("client.rack", "the consumer's rack, sent with every fetch, for follower fetching (KIP-392)"),
    ("group.id", "the consumer's group: it then commits its positions to the group's coordinator and starts from what was committed"),
];

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn show(d: KeyDefault) -> String {
    match d {
        KeyDefault::Number(n) => format!("`{n}`"),
        KeyDefault::Bool(b) => format!("`{b}`"),
        KeyDefault::Text(t) => format!("`{t}`"),
        KeyDefault::Unset => "unset".to_string(),
    }
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Markdown's `code` spans as HTML (the table is HTML, where Markdown is not
/// parsed).
fn code_spans(s: &str) -> String {
    html(s)
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_string()
            }
        })
        .collect()
}

fn config_page() -> String {
    let keys = documented_keys();
    let meaning = |k: &str| MEANING.iter().find(|(m, _)| *m == k).map(|(_, v)| *v);
    let missing: Vec<&str> = keys
        .iter()
        .map(|(_, k, _)| *k)
        .filter(|k| meaning(k).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "config keys without a meaning in tests/book_reference.rs MEANING: {missing:?}"
    );
    let stale: Vec<&str> = MEANING
        .iter()
        .map(|(k, _)| *k)
        .filter(|m| !keys.iter().any(|(_, k, _)| k == m))
        .collect();
    assert!(
        stale.is_empty(),
        "MEANING in tests/book_reference.rs describes keys the core no longer reads: {stale:?}"
    );
    let mut out = String::from(
        "<!-- Generated by tests/book_reference.rs from sim::config::documented_keys(); \
         do not edit. Regenerate: UPDATE_BOOK=1 cargo test --test book_reference -->\n\
         # Configuration keys\n\n\
         Every key a scenario may set, where it goes, and its default. Kafka's own keys \
         keep Kafka's names and defaults, so a setting you know transfers both ways; keys \
         with a `sim.` prefix belong to the simulation. Values may be JSON numbers and \
         booleans or the strings a `server.properties` file would hold (`\"30000\"`, \
         `\"true\"`). An unknown key is an error naming it, never ignored.\n\n\
         This page is generated from the core's config readers \
         (`sim::config::documented_keys()`), so it lists exactly what they accept; \
         `cargo test --test book_reference` fails when it is out of date, and \
         `UPDATE_BOOK=1 cargo test --test book_reference` regenerates it. The CLI's \
         `run --set KEY=VALUE` and compare lanes take these keys too: `acks` goes to every \
         producer, `auto.offset.reset`, `enable.auto.commit` and `auto.commit.interval.ms` \
         to every consumer, any other key to the top-level `config`; `rf` sets every \
         topic's replication factor (`src/settings.rs`; [The CLI](cli.md)).\n",
    );
    for (scope, title, where_) in [
        (KeyScope::Cluster, "Brokers and controller", "the scenario's top-level `\"config\"`; `min.insync.replicas` and `unclean.leader.election.enable` there are every topic's default"),
        (KeyScope::Topic, "Topics", "a topic's `\"config\"`, overriding the top-level value for that topic"),
        (KeyScope::Producer, "Producers", "a producer client's `\"config\"`"),
        (KeyScope::Consumer, "Consumers", "a consumer client's `\"config\"`"),
    ] {
        // An HTML table, not Markdown's: keys break only at their dots
        // (<wbr>), and the stylesheet gives the key column its width.
        out.push_str(&format!(
            "\n## {title}\n\nSet in {where_}.\n\n<table class=\"config-keys\">\n<thead><tr><th>key</th><th>default</th><th>meaning</th></tr></thead>\n<tbody>\n"
        ));
        for (s, k, d) in &keys {
            if *s == scope {
                out.push_str(&format!(
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
                    html(k).replace('.', ".<wbr>"),
                    code_spans(&show(*d)),
                    code_spans(meaning(k).unwrap_or_default())
                ));
            }
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out
}

fn help(bin: &str, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(args)
        .env("COLUMNS", "100")
        .output()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    assert!(out.status.success(), "{bin} {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

fn cli_page() -> String {
    let lab = env!("CARGO_BIN_EXE_failover-lab");
    let bench = env!("CARGO_BIN_EXE_failover-bench");
    let mut out = String::from(
        "<!-- Generated by tests/book_reference.rs from the binaries' --help; do not edit. \
         Regenerate: UPDATE_BOOK=1 cargo test --test book_reference -->\n\
         # Every subcommand's --help\n\n\
         What `failover-lab` and `failover-bench` print for `--help`, generated from the \
         binaries themselves (`cargo test --test book_reference` fails when this page is \
         out of date; `UPDATE_BOOK=1 cargo test --test book_reference` regenerates it). \
         [The CLI](cli.md) explains the commands with examples.\n",
    );
    let mut section = |title: &str, bin: &str, args: &[&str]| {
        out.push_str(&format!(
            "\n## `{title}`\n\n```text\n{}```\n",
            help(bin, args)
        ));
    };
    section("failover-lab --help", lab, &["--help"]);
    for sub in ["run", "check", "sweep", "sweep-merge", "import"] {
        section(&format!("failover-lab {sub} --help"), lab, &[sub, "--help"]);
    }
    section("failover-bench --help", bench, &["--help"]);
    for sub in ["run", "rto", "snapshot", "scaling"] {
        section(
            &format!("failover-bench {sub} --help"),
            bench,
            &[sub, "--help"],
        );
    }
    out
}

fn check(page: &str, generated: String) {
    let path = format!("{ROOT}/docs/book/src/reference/{page}");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == generated {
        return;
    }
    if std::env::var_os("UPDATE_BOOK").is_some() {
        std::fs::write(&path, generated).unwrap_or_else(|e| panic!("{path}: {e}"));
    } else {
        panic!(
            "docs/book/src/reference/{page} differs from what the code generates; \
             regenerate it with `UPDATE_BOOK=1 cargo test --test book_reference`"
        );
    }
}

#[test]
fn the_config_reference_lists_every_key_the_core_reads_with_its_default() {
    check("config.md", config_page());
}

#[test]
fn the_cli_reference_is_what_the_binaries_print_for_help() {
    check("cli-help.md", cli_page());
}

/// The generator reads the defaults the parser applies: a few spot checks
/// against Kafka's documented defaults, so a broken generator cannot pass.
#[test]
fn documented_defaults_are_kafkas() {
    let keys = documented_keys();
    let get = |scope: KeyScope, key: &str| {
        keys.iter()
            .find(|(s, k, _)| *s == scope && *k == key)
            .map(|(_, _, d)| *d)
            .unwrap_or_else(|| panic!("{key} is not listed"))
    };
    assert_eq!(
        get(KeyScope::Cluster, "broker.session.timeout.ms"),
        KeyDefault::Number(9000)
    );
    assert_eq!(
        get(KeyScope::Cluster, "replica.lag.time.max.ms"),
        KeyDefault::Number(30000)
    );
    assert_eq!(
        get(KeyScope::Cluster, "unclean.leader.election.enable"),
        KeyDefault::Bool(false)
    );
    assert_eq!(get(KeyScope::Producer, "acks"), KeyDefault::Text("all"));
    assert_eq!(
        get(KeyScope::Producer, "delivery.timeout.ms"),
        KeyDefault::Number(120000)
    );
    assert_eq!(
        get(KeyScope::Consumer, "auto.offset.reset"),
        KeyDefault::Text("latest")
    );
    assert_eq!(get(KeyScope::Consumer, "group.id"), KeyDefault::Unset);
}

/// Every field of a run report, one level into its arrays and objects (not into `settings`, whose keys are the settings applied), is
/// named in the report chapter (docs/book/src/reference/report.md), so a
/// field the report gains is documented there too. The runs cover a
/// consumer group (tour 14) and applied settings (`--set`).
#[test]
fn the_report_chapter_names_every_report_field() {
    let page =
        std::fs::read_to_string(format!("{ROOT}/docs/book/src/reference/report.md")).unwrap();
    let lab = env!("CARGO_BIN_EXE_failover-lab");
    let mut missing = std::collections::BTreeSet::new();
    for args in [
        vec!["run", "scenarios/tour-14-coordinator-dies.json"],
        vec![
            "run",
            "scenarios/tour-1-leader-dies.json",
            "--set",
            "acks=1",
        ],
    ] {
        let out = Command::new(lab)
            .args(&args)
            .current_dir(ROOT)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut names = Vec::new();
        for (k, v) in report.as_object().unwrap() {
            names.push(k.clone());
            // `settings` holds the applied KEY=VALUE pairs, not fields.
            if k == "settings" {
                continue;
            }
            let first = match v {
                serde_json::Value::Array(a) => a.first().cloned(),
                o @ serde_json::Value::Object(_) => Some(o.clone()),
                _ => None,
            };
            if let Some(serde_json::Value::Object(o)) = first {
                names.extend(o.keys().cloned());
            }
        }
        for n in names {
            if !page.contains(&format!("`{n}`")) {
                missing.insert(n);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/book/src/reference/report.md does not name these report fields: {missing:?}"
    );
}
