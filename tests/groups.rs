//! Consumer groups through a failover (issue 24, first slice): the group
//! coordinator is the leader of the group's `__consumer_offsets` partition,
//! commits carry the leader epoch and survive the coordinator's broker, and
//! a consumer that restarts resumes from its last commit. Each test names
//! the Kafka class and method whose rule it checks.

mod common;
use common::*;
use failover_lab::sim::trace::TraceKind;
use failover_lab::Lab;

/// `orders`' partition of `__consumer_offsets` with Kafka's 50 partitions
/// (GroupCoordinatorService.partitionFor): Java's "orders".hashCode() is
/// -1008770331, Utils.abs gives 1008770331, and 1008770331 % 50 = 31
/// (computed outside the lab, with jshell). The sign-bit mask of
/// Utils.toPositive, which the lab once used, gives 17.
const ORDERS_GROUP_PARTITION: u32 = 31;

/// scenarios/group-coordinator-dies.json's group, "order-processor":
/// hashCode -1129616173, 1129616173 % 50 = 23 (jshell), a partition broker 3
/// leads there (the mask would give 25).
const ORDER_PROCESSOR_GROUP_PARTITION: u32 = 23;

fn offsets_index(l: &Lab, partition: u32) -> usize {
    l.cluster
        .partitions
        .iter()
        .position(|p| p.topic == "__consumer_offsets" && p.partition == partition)
        .unwrap_or_else(|| panic!("no __consumer_offsets-{partition}"))
}

fn scenario(config: &str, consumer_config: &str, steps: &str, until: u64) -> Lab {
    lab(&format!(
        r#"{{"seed": 3, "brokers": 3, "config": {{{config}}},
          "topics": [{{"name": "t", "partitions": 1, "replication_factor": 3}}],
          "clients": [
            {{"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 20}},
            {{"type": "consumer", "id": "c", "topic": "t",
              "config": {{"group.id": "orders"{consumer_config}}}}}],
          "steps": [{steps}],
          "run_until_ms": {until}}}"#
    ))
}

fn group(l: &Lab) -> &failover_lab::sim::client::GroupMember {
    l.cluster.consumers[0]
        .group
        .as_ref()
        .unwrap_or_else(|| panic!("the consumer has a group"))
}

/// GroupCoordinatorService.partitionFor + KafkaApis.getCoordinator: a group
/// belongs to partition abs(hash(group.id)) % offsets.topic.num.partitions
/// of `__consumer_offsets`, and its coordinator is that partition's leader.
#[test]
fn the_coordinator_is_the_leader_of_the_groups_hashed_offsets_partition() {
    let mut l = scenario("", "", "", 3_000);
    l.run_to_end();
    let n = l
        .cluster
        .partitions
        .iter()
        .filter(|p| p.topic == "__consumer_offsets")
        .count();
    assert_eq!(n, 50, "offsets.topic.num.partitions defaults to 50");
    let p = offsets_index(&l, ORDERS_GROUP_PARTITION);
    let leader = reg(&l, p).leader;
    assert!(leader.is_some());
    assert_eq!(group(&l).coordinator, leader);
    assert!(group(&l).offsets_fetched);
    // Only that broker holds the group: it has loaded it from the partition.
    for b in 1..=3 {
        let holds = l
            .cluster
            .broker(b)
            .is_some_and(|x| x.coordinator.contains_key(&p));
        assert_eq!(holds, Some(b) == leader, "broker {b}");
    }
}

/// ConsumerCoordinator.commitOffsetsAsync with OffsetCommit v7+ (KIP-320):
/// each committed position carries the leader epoch of the last record the
/// consumer read, and a commit is confirmed only once the offsets
/// partition's ISR has it (the coordinator's append waits for the HW).
#[test]
fn commits_carry_the_leader_epoch_of_the_last_record_read() {
    // t-0's leader (broker 1) crashes at 4 s: epoch 0 → 1 at fencing.
    let mut l = scenario("", "", r#"{"at_ms": 4000, "crash": 1}"#, 30_000);
    l.run_to_end();
    let g = group(&l);
    let c = g.committed.get(&0).copied().expect("a commit for t-0");
    assert_eq!(
        c.leader_epoch,
        Some(1),
        "the last record read was written in epoch 1"
    );
    let pos = l.cluster.consumers[0].positions.get(&0).map(|p| p.offset);
    assert!(
        pos.is_some_and(|p| p >= c.offset && p - c.offset <= 120),
        "the commit trails the position by at most one interval: {c:?} vs {pos:?}"
    );
    // The coordinator's copy is the same, and it is on the offsets
    // partition's log below the high watermark.
    let op = offsets_index(&l, ORDERS_GROUP_PARTITION);
    let coord = g.coordinator.expect("a coordinator");
    let shard = l
        .cluster
        .broker(coord)
        .unwrap()
        .coordinator
        .get(&op)
        .unwrap();
    let orders: std::rc::Rc<str> = std::rc::Rc::from("orders");
    assert_eq!(shard.groups.get(&orders).and_then(|g| g.get(&0)), Some(&c));
    let log = &replica(&l, coord, op).log;
    assert!(log.high_watermark >= 1 && log.high_watermark == log.log_end_offset());
    // Auto-commit every 5 s; the ones made while dead broker 1 was still in
    // the offsets partition's ISR could not become durable in time
    // (offsets.commit.timeout.ms) and failed, to be made again.
    assert!(g.commits >= 3, "auto-commit every 5 s: {}", g.commits);
}

/// ConsumerCoordinator.refreshCommittedOffsetsIfNeeded after a restart: a
/// consumer process that crashes loses what it read after its last commit,
/// and the new process starts from the committed offset, so those records
/// are read twice (at-least-once).
#[test]
fn a_restarted_consumer_resumes_from_its_committed_offset_and_rereads_the_rest() {
    let mut l = scenario(
        "",
        r#", "auto.commit.interval.ms": 5000"#,
        r#"{"at_ms": 12500, "crash_client": "c"}, {"at_ms": 15000, "restart_client": "c"}"#,
        25_000,
    );
    l.cluster.run_until(12_499);
    let committed = group(&l)
        .committed
        .get(&0)
        .copied()
        .expect("a commit")
        .offset;
    let read = l.cluster.consumers[0]
        .positions
        .get(&0)
        .map_or(0, |p| p.offset);
    assert!(
        read > committed,
        "it read past its commit: {read} > {committed}"
    );
    l.run_to_end();
    let c = &l.cluster.consumers[0];
    let restarted = events(&l, |k| matches!(k, TraceKind::ConsumerRestarted { .. }));
    assert_eq!(restarted.len(), 1);
    let fetched = events(
        &l,
        |k| matches!(k, TraceKind::CommittedOffsetFetched { offset: Some(o), .. } if *o == committed),
    );
    assert_eq!(
        fetched.len(),
        1,
        "the new process starts at the committed {committed}"
    );
    // Every offset in [committed, read) was consumed twice, none other.
    let mut seen = std::collections::BTreeMap::new();
    for &failover_lab::sim::client::Read {
        partition: p,
        offset: off,
        ..
    } in &c.consumed_records
    {
        *seen.entry((p, off)).or_insert(0u32) += 1;
    }
    let twice: Vec<u64> = seen
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|((_, o), _)| *o)
        .collect();
    assert_eq!(twice, (committed..read).collect::<Vec<_>>());
    assert!(seen.values().all(|n| *n <= 2));
    assert_no_violations(&l);
}

/// KafkaApis.getCoordinator + ConsumerCoordinator.markCoordinatorUnknown:
/// with the coordinator's broker dead and its offsets partition without a
/// leader (offsets.topic.replication.factor=1), FindCoordinator answers
/// COORDINATOR_NOT_AVAILABLE, commits stop, and once the partition has a
/// leader again the consumer finds it and commits resume.
#[test]
fn find_coordinator_answers_coordinator_not_available_until_the_offsets_partition_has_a_leader() {
    let probe = scenario(r#""offsets.topic.replication.factor": 1"#, "", "", 1);
    let op = offsets_index(&probe, ORDERS_GROUP_PARTITION);
    let host = probe.cluster.partitions[op].replicas[0];
    let mut l = scenario(
        r#""offsets.topic.replication.factor": 1"#,
        "",
        &format!(r#"{{"at_ms": 6000, "crash": {host}}}, {{"at_ms": 30000, "restart": {host}}}"#),
        50_000,
    );
    l.cluster.run_until(29_000);
    let g = group(&l);
    assert!(
        g.errors
            .get("COORDINATOR_NOT_AVAILABLE")
            .copied()
            .unwrap_or(0)
            >= 1,
        "errors {:?}",
        g.errors
    );
    let commits_before = g.commits;
    l.run_to_end();
    let g = group(&l);
    assert_eq!(
        g.coordinator,
        Some(host),
        "the restarted broker leads the partition again"
    );
    assert!(g.commits > commits_before, "commits resume");
    let c = g.committed.get(&0).copied().expect("a commit");
    assert!(c.offset > 500, "the last commit is recent: {c:?}");
}

/// GroupMetadataManager.loadGroupsAndOffsets: a broker that becomes leader of
/// an offsets partition reads the partition's commits before it answers for
/// the group (COORDINATOR_LOAD_IN_PROGRESS meanwhile), and what it loads is
/// what the previous coordinator had committed.
#[test]
fn a_new_coordinator_loads_the_committed_offsets_before_answering() {
    let probe = scenario("", "", "", 1);
    let op = offsets_index(&probe, ORDERS_GROUP_PARTITION);
    let first = probe.cluster.partitions[op].replicas[0];
    let mut l = scenario(
        r#""sim.coordinator.load.ms": 3000"#,
        "",
        &format!(r#"{{"at_ms": 8000, "crash": {first}}}"#),
        40_000,
    );
    l.cluster.run_until(7_990);
    let before = group(&l).committed.get(&0).copied().expect("a commit");
    l.run_to_end();
    let g = group(&l);
    let now = g.coordinator.expect("a new coordinator");
    assert_ne!(now, first);
    assert!(
        g.errors
            .get("COORDINATOR_LOAD_IN_PROGRESS")
            .copied()
            .unwrap_or(0)
            >= 1,
        "errors {:?}",
        g.errors
    );
    let loaded = events(
        &l,
        |k| matches!(k, TraceKind::CoordinatorLoaded { broker, .. } if *broker == now),
    );
    assert!(!loaded.is_empty(), "the new leader loaded the group");
    // It loaded at least the commit made before the crash.
    let latest = g.committed.get(&0).copied().expect("a commit");
    assert!(latest.offset >= before.offset);
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

fn late_group_consumer(reset: &str) -> Lab {
    // The consumer's first process dies before it reads or commits anything;
    // the second starts at 10 s, with 200 records already in the log.
    scenario(
        "",
        &format!(r#", "auto.offset.reset": "{reset}""#),
        r#"{"at_ms": 1, "crash_client": "c"}, {"at_ms": 10000, "restart_client": "c"}"#,
        15_000,
    )
}

/// SubscriptionState.resetInitializingPositions (auto.offset.reset): a group
/// with no committed offset for a partition starts at the high watermark
/// (`latest`, the default: what is already in the log is never read), at
/// the log start (`earliest`), or not at all (`none`:
/// NoOffsetForPartitionException).
#[test]
fn a_group_without_a_committed_offset_follows_auto_offset_reset() {
    let mut latest = late_group_consumer("latest");
    latest.cluster.run_until(9_999);
    let hw = replica(&latest, 1, 0).log.high_watermark;
    assert!(hw >= 190, "records before the restart: {hw}");
    latest.run_to_end();
    let c = &latest.cluster.consumers[0];
    let first = c.consumed_records.first().map(|r| r.offset);
    assert!(
        first.is_some_and(|f| f >= hw),
        "latest starts at the high watermark {hw}, not before: first read {first:?}"
    );
    let reset = events(
        &latest,
        |k| matches!(k, TraceKind::ConsumerOffsetReset { reset, offset: Some(_), .. } if reset == "latest"),
    );
    assert_eq!(reset.len(), 1);

    let mut earliest = late_group_consumer("earliest");
    earliest.run_to_end();
    let c = &earliest.cluster.consumers[0];
    assert_eq!(c.consumed_records.first().map(|r| r.offset), Some(0));
    assert!(c.consumed > hw, "earliest reads the whole log");

    let mut none = late_group_consumer("none");
    none.run_to_end();
    assert_eq!(none.cluster.consumers[0].consumed, 0);
    let stopped = events(
        &none,
        |k| matches!(k, TraceKind::ConsumerOffsetReset { reset, offset: None, .. } if reset == "none"),
    );
    assert_eq!(stopped.len(), 1, "none: an error instead of a position");
}

/// KIP-1106 (AutoOffsetResetStrategy BY_DURATION, ListOffsets by
/// timestamp): with no committed offset, `by_duration:PT3S` asks the leader
/// for the first offset whose record was sent at or after now − 3 s
/// (UnifiedLog.fetchOffsetByTimestamp on each record's CreateTime), and the
/// consumer resumes there: the 3 s before the restart are read, what came
/// earlier is not.
#[test]
fn by_duration_resets_to_the_first_record_sent_within_the_duration() {
    let mut l = late_group_consumer("by_duration:PT3S");
    l.run_to_end();
    let reset = events(&l, |k| {
        matches!(k, TraceKind::ConsumerOffsetReset { reset, offset: Some(_), .. }
            if reset == "by_duration:PT3S")
    });
    assert_eq!(reset.len(), 1);
    let (at, offset) = match &reset[0].kind {
        TraceKind::ConsumerOffsetReset { offset, .. } => (reset[0].at_ms, offset.unwrap_or(0)),
        _ => unreachable!(),
    };
    let c = &l.cluster.consumers[0];
    assert_eq!(c.consumed_records.first().map(|r| r.offset), Some(offset));
    assert!(
        offset > 100,
        "the records of the first 7 s are skipped: {offset}"
    );
    // The request went out at most one round trip (here under 20 ms) before
    // its answer at `at`, asking for records sent from 3 s before that: the
    // record at `offset` was, the one before it was not.
    let log = &replica(&l, 1, 0).log;
    let sent = |o: u64| {
        log.records_between(o, o + 1)
            .first()
            .map_or(0, |r| r.timestamp_ms)
    };
    assert!(
        sent(offset) + 3_020 >= at,
        "answered at {at}, sent {}",
        sent(offset)
    );
    assert!(
        sent(offset - 1) + 3_000 < at,
        "answered at {at}, sent {}",
        sent(offset - 1)
    );
    assert_eq!(
        c.positions.get(&0).and_then(|p| p.epoch),
        Some(0),
        "the record's epoch"
    );
}

/// KIP-1106 with nothing that recent: ListOffsets finds no record at or
/// after the time below the high watermark (UNKNOWN_OFFSET, -1), so the
/// partition stays awaiting its reset and is asked again once the request's
/// retry time (request.timeout.ms) has passed; by then a newer record exists.
#[test]
fn by_duration_with_no_record_that_recent_asks_again_after_the_request_timeout() {
    let mut l = lab(r#"{"seed": 3, "brokers": 3,
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
      "clients": [{"type": "consumer", "id": "c", "topic": "t",
                   "config": {"group.id": "orders", "auto.offset.reset": "by_duration:PT5S",
                              "request.timeout.ms": 5000}}],
      "steps": [{"at_ms": 1, "crash_client": "c"},
                {"at_ms": 2000, "produce": {"topic": "t", "partition": 0, "count": 10}},
                {"at_ms": 10000, "restart_client": "c"},
                {"at_ms": 12000, "produce": {"topic": "t", "partition": 0, "count": 5}}],
      "run_until_ms": 20000}"#);
    l.run_to_end();
    let resets: Vec<(u64, Option<u64>)> = events(&l, |_| true)
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::ConsumerOffsetReset { offset, .. } => Some((e.at_ms, *offset)),
            _ => None,
        })
        .collect();
    assert_eq!(resets.len(), 2, "{resets:?}");
    assert!(resets[0].0 >= 10_000 && resets[0].1.is_none(), "{resets:?}");
    assert!(
        resets[1].0 >= resets[0].0 + 5_000,
        "asked again after request.timeout.ms: {resets:?}"
    );
    assert_eq!(resets[1].1, Some(10), "the first record sent at 12 s");
    assert_eq!(l.cluster.consumers[0].consumed, 5);
}

/// ConsumerCoordinator.refreshCommittedOffsetsIfNeeded + KIP-320: a committed
/// offset carries its leader epoch, so after an unclean election truncated
/// the log below it, the restarted consumer's validation
/// (OffsetsForLeaderEpoch) finds that epoch ended earlier and seeks back to
/// the divergence point instead of reading from an offset that now names
/// other records.
#[test]
fn a_committed_offset_beyond_the_new_leaders_log_is_caught_by_leader_epoch_validation() {
    let mut l = lab(r#"{"seed": 8, "brokers": 3,
      "config": {"unclean.leader.election.enable": true, "replica.lag.time.max.ms": 10000,
                 "offsets.topic.num.partitions": 3},
      "topics": [{"name": "orders", "partitions": 1, "replication_factor": 2, "assignment": [[1, 2]]}],
      "clients": [{"type": "producer", "id": "p1", "topic": "orders", "acks": "all", "records_per_sec": 10},
                  {"type": "consumer", "id": "c1", "topic": "orders", "config": {"group.id": "g"}}],
      "steps": [{"at_ms": 3000, "slow": {"broker": 2, "topic": "orders", "partition": 0}},
                {"at_ms": 26000, "crash_client": "c1"},
                {"at_ms": 30000, "crash": 1},
                {"at_ms": 31000, "unslow": {"broker": 2, "topic": "orders", "partition": 0}},
                {"at_ms": 45000, "restart_client": "c1"}],
      "run_until_ms": 60000}"#);
    l.cluster.run_until(25_999);
    let committed = group(&l).committed.get(&0).copied().expect("a commit");
    assert!(committed.offset > 200, "{committed:?}");
    assert_eq!(committed.leader_epoch, Some(0));
    l.run_to_end();
    assert_eq!(reg(&l, 0).leader, Some(2), "broker 2 was elected uncleanly");
    let detected = events(&l, |k| {
        matches!(k, TraceKind::ConsumerTruncationDetected { position, divergent_offset, .. }
            if *position == committed.offset && *divergent_offset < committed.offset)
    });
    assert_eq!(detected.len(), 1, "validation catches the committed offset");
    assert_eq!(l.cluster.consumers[0].truncations_detected, 1);
}

/// scenarios/group-coordinator-dies.json: the coordinator is where the
/// offsets partition's leader is, so it moves with it (broker 3 → the new
/// leader the controller elects at fencing), the new coordinator serves the
/// commits the old one made durable, and the consumer that restarted in
/// between re-reads exactly what it had read past its last commit.
#[test]
fn the_coordinator_moves_with_its_offsets_partition_and_a_restart_rereads_past_the_commit() {
    let mut l = scenario_file("group-coordinator-dies.json");
    let op = offsets_index(&l, ORDER_PROCESSOR_GROUP_PARTITION);
    l.cluster.run_until(11_999);
    assert_eq!(group(&l).coordinator, Some(3));
    assert_eq!(reg(&l, op).leader, Some(3));
    l.cluster.run_until(13_999);
    let committed: Vec<(usize, u64)> = group(&l)
        .committed
        .values()
        .map(|o| (o.partition, o.offset))
        .collect();
    let read: u64 = committed
        .iter()
        .map(|(p, off)| {
            l.cluster.consumers[0]
                .positions
                .get(p)
                .map_or(0, |x| x.offset)
                - off
        })
        .sum();
    assert!(read > 0, "it had read past its commit when it crashed");
    l.run_to_end();
    let new_leader = reg(&l, op).leader;
    assert!(new_leader.is_some() && new_leader != Some(3));
    assert_eq!(group(&l).coordinator, new_leader);
    let loaded = events(
        &l,
        |k| matches!(k, TraceKind::CoordinatorLoaded { broker, records, .. } if Some(*broker) == new_leader && *records >= 2),
    );
    assert_eq!(loaded.len(), 1);
    assert_eq!(l.report().consumers[0].read_twice, read);
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

/// scenarios/tour-15-unclean-committed-offsets.json, lane by lane (its
/// `compare` field): the committed offset beyond the uncleanly elected
/// leader's log is validated (KIP-320, SubscriptionState.maybeCompleteValidation),
/// not reset, so `earliest` and `latest` end alike; auto.offset.reset decides
/// only in the lanes without a committed offset (enable.auto.commit=false):
/// `earliest` reads the kept start of the log twice, `latest` skips what was
/// written while the consumer was down.
#[test]
fn after_an_unclean_election_the_committed_offset_is_validated_whatever_the_reset_policy() {
    let path = format!(
        "{}/scenarios/tour-15-unclean-committed-offsets.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let lanes = failover_lab::settings::parse_compare(v["compare"].as_str().unwrap()).unwrap();
    assert_eq!(lanes.len(), 4);
    let run = |settings: &[(String, String)]| {
        let mut l = Lab::from_json_with_settings(&text, settings).unwrap();
        l.run_to_end();
        l
    };
    let labs: Vec<Lab> = lanes.iter().map(|s| run(s)).collect();
    // (truncations detected, the reset at the restart, records read twice, committed records never read)
    let fates: Vec<(u64, Option<u64>, u64, u64)> = labs
        .iter()
        .map(|l| {
            let r = l.report();
            let reset = events(l, |k| matches!(k, TraceKind::ConsumerOffsetReset { .. }))
                .into_iter()
                .filter(|e| e.at_ms > 45_000)
                .find_map(|e| match &e.kind {
                    TraceKind::ConsumerOffsetReset { offset, .. } => *offset,
                    _ => None,
                });
            let d = &r.delivery[0];
            assert_eq!(r.acked_records_lost, 269);
            (
                r.consumers[0].truncations_detected,
                reset,
                d.consumed_twice.count,
                d.never_consumed.count,
            )
        })
        .collect();
    assert_eq!(
        fates,
        vec![
            (1, None, 0, 0),
            (1, None, 0, 0),
            (0, Some(0), 30, 0),
            (0, Some(181), 0, 151)
        ]
    );
    for l in &labs[..2] {
        let detected = events(l, |k| {
            matches!(
                k,
                TraceKind::ConsumerTruncationDetected {
                    position: 249,
                    divergent_offset: 30,
                    ..
                }
            )
        });
        assert_eq!(
            detected.len(),
            1,
            "the commit 249 (epoch 0) is caught at the divergence point 30"
        );
    }
    // Lanes A and B differ only in the first reset's policy name (both at 0 in the empty log).
    let (a, b) = (labs[0].report(), labs[1].report());
    assert_eq!(
        serde_json::to_value(&a.consumers).unwrap(),
        serde_json::to_value(&b.consumers).unwrap()
    );
    assert_eq!(
        serde_json::to_value(&a.delivery).unwrap(),
        serde_json::to_value(&b.delivery).unwrap()
    );
}

/// CoordinatorPartitionWriter.append writes a commit with requiredAcks=1:
/// the coordinator does not refuse it for too few in-sync replicas, it
/// appends it and CoordinatorRuntime holds the answer until the high
/// watermark passes it, failing it after offsets.commit.timeout.ms (5 s)
/// with COORDINATOR_NOT_AVAILABLE. The timed-out records stay in the log:
/// once the ISR recovers and the high watermark passes them they take
/// effect, so a consumer that restarts afterwards resumes from the commit
/// it was told had failed (audit item 4 of issue 59).
#[test]
fn a_commit_below_min_isr_times_out_after_offsets_commit_timeout_and_takes_effect_later() {
    let config = r#""min.insync.replicas": 2"#;
    let probe = scenario(config, "", "", 1);
    let op = offsets_index(&probe, ORDERS_GROUP_PARTITION);
    let replicas = probe.cluster.partitions[op].replicas.clone();
    let (host, f1, f2) = (replicas[0], replicas[1], replicas[2]);
    // Both of the offsets partition's followers die: its ISR is soon the
    // host alone, below min.insync.replicas=2.
    let mut l = scenario(
        config,
        r#", "auto.commit.interval.ms": 5000"#,
        &format!(
            r#"{{"at_ms": 6000, "crash": {f1}}}, {{"at_ms": 6000, "crash": {f2}}},
               {{"at_ms": 24000, "crash_client": "c"}},
               {{"at_ms": 30000, "restart": {f1}}},
               {{"at_ms": 45000, "restart_client": "c"}}"#
        ),
        60_000,
    );
    l.cluster.run_until(5_999);
    let confirmed = group(&l)
        .committed
        .get(&0)
        .copied()
        .expect("a commit at 5 s");
    let leo_before = replica(&l, host, op).log.log_end_offset();
    l.cluster.run_until(23_999);
    let g = group(&l);
    let unavailable = g
        .errors
        .get("COORDINATOR_NOT_AVAILABLE")
        .copied()
        .unwrap_or(0);
    // From 6 s to 24 s: one commit attempt per offsets.commit.timeout.ms
    // (plus the retry backoff), not one per retry.backoff.ms.
    assert!((2..=4).contains(&unavailable), "errors {:?}", g.errors);
    assert_eq!(g.errors.get("NOT_ENOUGH_REPLICAS"), None);
    assert_eq!(
        g.committed.get(&0).copied(),
        Some(confirmed),
        "none confirmed"
    );
    let log = &replica(&l, host, op).log;
    assert!(
        log.log_end_offset() > leo_before,
        "the commits were appended"
    );
    assert_eq!(log.high_watermark, leo_before, "and never committed");
    // Broker f1 returns and rejoins the ISR: the HW passes the records.
    l.run_to_end();
    let log = &replica(&l, host, op).log;
    assert!(log.high_watermark >= log.log_end_offset().saturating_sub(1));
    let fetched: Vec<u64> = events(&l, |k| {
        matches!(
            k,
            TraceKind::CommittedOffsetFetched {
                offset: Some(_),
                ..
            }
        )
    })
    .iter()
    .filter(|e| e.at_ms >= 45_000)
    .filter_map(|e| match &e.kind {
        TraceKind::CommittedOffsetFetched { offset, .. } => *offset,
        _ => None,
    })
    .collect();
    assert_eq!(fetched.len(), 1, "{fetched:?}");
    assert!(
        fetched[0] > confirmed.offset,
        "the restart resumes from a commit that had timed out ({} > {})",
        fetched[0],
        confirmed.offset
    );
}

// ---------------------------------------------------------------- issue 64:
// several members per group, the classic protocol.

/// `n` consumers subscribing to topic `t` (`parts` partitions) in group
/// "orders", each with `consumer_config` added to its config
/// (`{i}` becomes the member's number).
fn members(n: usize, parts: u32, consumer_config: &str, steps: &str, until: u64) -> Lab {
    let consumers: Vec<String> = (1..=n)
        .map(|i| {
            format!(
                r#"{{"type": "consumer", "id": "c{i}", "topic": "t", "subscribe": true,
                    "config": {{"group.id": "orders"{}}}}}"#,
                consumer_config.replace("{i}", &i.to_string())
            )
        })
        .collect();
    lab(&format!(
        r#"{{"seed": 5, "brokers": 3, "config": {{}},
          "topics": [{{"name": "t", "partitions": {parts}, "replication_factor": 3}}],
          "clients": [
            {{"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 50}},
            {}],
          "steps": [{steps}],
          "run_until_ms": {until}}}"#,
        consumers.join(",\n")
    ))
}

fn member_of(l: &Lab, i: usize) -> &failover_lab::sim::client::Membership {
    l.cluster.consumers[i]
        .group
        .as_ref()
        .and_then(|g| g.membership.as_ref())
        .unwrap_or_else(|| panic!("consumer {i} is a member"))
}

/// Each member's assignment as partition numbers.
fn shares(l: &Lab) -> Vec<Vec<u32>> {
    (0..l.cluster.consumers.len())
        .map(|i| {
            member_of(l, i)
                .assignment
                .iter()
                .map(|p| l.cluster.partitions[*p].partition)
                .collect()
        })
        .collect()
}

fn kind_times(l: &Lab, f: impl Fn(&TraceKind) -> bool) -> Vec<u64> {
    events(l, f).iter().map(|e| e.at_ms).collect()
}

/// RangeAssignor.assign (via ConsumerCoordinator.onLeaderElected) and
/// GroupMetadataManager's classic join: the members of a subscribing group
/// split the topic's partitions, each n/m contiguous ones, the first n%m
/// members (by member id) one more; every partition is read by exactly one
/// member.
#[test]
fn members_of_a_subscribing_group_split_the_partitions_with_the_range_assignor() {
    let mut l = members(3, 7, "", "", 15_000);
    l.run_to_end();
    let s = shares(&l);
    let mut all: Vec<u32> = s.iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..7).collect::<Vec<_>>(), "{s:?}");
    let mut sizes: Vec<usize> = s.iter().map(Vec::len).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, vec![2, 2, 3], "{s:?}");
    for share in &s {
        assert!(
            share.windows(2).all(|w| w[1] == w[0] + 1),
            "contiguous: {s:?}"
        );
    }
    // One rebalance: all three joined within the initial delay.
    for i in 0..3 {
        assert_eq!(member_of(&l, i).generation, 1);
        assert_eq!(
            member_of(&l, i).state,
            failover_lab::sim::client::MemberState::Stable
        );
    }
    // Everyone reads: each consumer consumed from its own partitions only.
    for (i, c) in l.cluster.consumers.iter().enumerate() {
        assert!(c.consumed > 0, "c{} read nothing", i + 1);
        for &failover_lab::sim::client::Read { partition: p, .. } in &c.consumed_records {
            assert!(s[i].contains(&l.cluster.partitions[p].partition));
        }
    }
    let r = l.report();
    let v = serde_json::to_value(&r).unwrap();
    let view = &v["consumers"][0]["group"]["coordinator_view"];
    assert_eq!(view["state"], "Stable", "{view}");
    assert_eq!(view["generation"], 1);
    assert_eq!(view["members"].as_array().map(Vec::len), Some(3));
}

/// GroupMetadataManager (InitialDelayedJoin): the first rebalance of an
/// Empty group waits group.initial.rebalance.delay.ms (3 s) for more
/// members, so nothing is read before it; with the delay at 0 the members
/// read sooner.
#[test]
fn the_first_rebalance_waits_group_initial_rebalance_delay_ms() {
    let mut l = members(2, 4, "", "", 8_000);
    l.run_to_end();
    let stable = kind_times(&l, |k| matches!(k, TraceKind::GroupStable { .. }));
    assert!(!stable.is_empty());
    assert!(stable[0] >= 3_000, "stable at {stable:?}");
    let delayed_first = stable[0];
    let mut l = lab(
        r#"{"seed": 5, "brokers": 3, "config": {"group.initial.rebalance.delay.ms": 0},
          "topics": [{"name": "t", "partitions": 4, "replication_factor": 3}],
          "clients": [
            {"type": "consumer", "id": "c1", "topic": "t", "subscribe": true, "config": {"group.id": "orders"}}],
          "run_until_ms": 8000}"#,
    );
    l.run_to_end();
    let stable = kind_times(&l, |k| matches!(k, TraceKind::GroupStable { .. }));
    assert!(
        stable[0] < 1_000 && stable[0] + 2_000 < delayed_first,
        "{stable:?} vs {delayed_first}"
    );
}

/// GroupMetadataManager's session expiry (classicGroupHeartbeat's timer,
/// onExpireHeartbeat) and ConsumerCoordinator.onJoinComplete: a member whose
/// process dies keeps its partitions until session.timeout.ms (45 s) has
/// passed without a heartbeat; then the group rebalances, the survivors take
/// them over from the group's committed offsets, and what the dead member
/// read after its last commit is read again.
#[test]
fn a_dead_members_partitions_move_after_the_session_timeout_and_resume_from_the_commit() {
    let mut l = members(
        2,
        4,
        "",
        r#"{"at_ms": 12000, "crash_client": "c1"}"#,
        70_000,
    );
    l.run_to_end();
    let expired = kind_times(&l, |k| matches!(k, TraceKind::GroupMemberExpired { .. }));
    assert_eq!(expired.len(), 1, "{expired:?}");
    // Its last heartbeat went out at most heartbeat.interval.ms before the
    // crash; the session ends 45 s after the coordinator last heard it.
    assert!(
        (12_000 + 45_000 - 3_100..=12_000 + 45_000 + 100).contains(&expired[0]),
        "expired at {}",
        expired[0]
    );
    // The survivor holds every partition afterwards.
    let s = shares(&l);
    assert_eq!(s[1], vec![0, 1, 2, 3], "{s:?}");
    assert!(member_of(&l, 1).generation >= 2);
    // Nobody read c1's partitions between the crash and the expiry.
    let c1_parts: Vec<usize> = l.cluster.consumers[0]
        .consumed_records
        .iter()
        .map(|r| r.partition)
        .collect();
    let gap: Vec<u64> = kind_times(
        &l,
        |k| matches!(k, TraceKind::PartitionsAssigned { consumer, .. } if consumer == "c2"),
    );
    assert!(gap.iter().any(|t| *t > expired[0]), "{gap:?}");
    // The survivor read again what c1 had read after its last commit.
    let c1: Vec<u64> = l.cluster.consumers[0]
        .consumed_records
        .iter()
        .map(|r| r.id)
        .collect();
    let c2: Vec<u64> = l.cluster.consumers[1]
        .consumed_records
        .iter()
        .map(|r| r.id)
        .collect();
    let twice = c1.iter().filter(|id| c2.contains(id)).count();
    assert!(
        twice > 0,
        "no record read by both ({} by c1 on {:?})",
        c1.len(),
        c1_parts.len()
    );
    // ... but not more than auto.commit.interval.ms (5 s) of them, at 50/s.
    assert!(twice <= 5 * 50 + 50, "{twice} read twice");
}

/// GroupCoordinatorShard's load of the group record (classic groups are
/// replayed from __consumer_offsets, each member's heartbeat rescheduled):
/// when the coordinator's broker dies while the group is Stable, the
/// members find the new coordinator and carry on in the same generation:
/// a coordinator move alone is no rebalance.
#[test]
fn a_coordinator_move_in_a_stable_group_causes_no_rebalance() {
    // "orders" is on __consumer_offsets-31; find its leader first.
    let mut probe = members(2, 4, "", "", 10_000);
    probe.run_to_end();
    let p = offsets_index(&probe, ORDERS_GROUP_PARTITION);
    let coordinator = reg(&probe, p).leader.unwrap_or_else(|| panic!("a leader"));
    let mut l = members(
        2,
        4,
        "",
        &format!(r#"{{"at_ms": 12000, "crash": {coordinator}}}"#),
        60_000,
    );
    l.run_to_end();
    let rebalances = kind_times(&l, |k| matches!(k, TraceKind::GroupRebalanceStarted { .. }));
    assert!(rebalances.iter().all(|t| *t < 12_000), "{rebalances:?}");
    let loaded = kind_times(
        &l,
        |k| matches!(k, TraceKind::CoordinatorLoaded { groups, .. } if groups.iter().any(|g| g == "orders")),
    );
    assert!(loaded.iter().any(|t| *t > 12_000), "{loaded:?}");
    assert_eq!(member_of(&l, 0).generation, 1);
    assert_eq!(member_of(&l, 1).generation, 1);
    let new = reg(&l, p).leader;
    assert_ne!(new, Some(coordinator));
    assert_eq!(
        l.cluster.consumers[0]
            .group
            .as_ref()
            .and_then(|g| g.coordinator),
        new
    );
}

/// KIP-345 (GroupMetadataManager.classicGroupJoinToStableGroup for a known
/// group.instance.id): a static member's process that comes back within
/// session.timeout.ms takes its old place and assignment; the group does
/// not rebalance.
#[test]
fn a_static_member_restarted_within_the_session_timeout_keeps_its_assignment() {
    let steps =
        r#"{"at_ms": 12000, "crash_client": "c1"}, {"at_ms": 20000, "restart_client": "c1"}"#;
    let mut l = members(2, 4, r#", "group.instance.id": "host-{i}""#, steps, 40_000);
    l.run_to_end();
    let rebalances = kind_times(&l, |k| matches!(k, TraceKind::GroupRebalanceStarted { .. }));
    assert!(rebalances.iter().all(|t| *t < 12_000), "{rebalances:?}");
    let replaced = kind_times(&l, |k| matches!(k, TraceKind::GroupMemberReplaced { .. }));
    assert_eq!(replaced.len(), 1, "{replaced:?}");
    let s = shares(&l);
    assert_eq!(s, vec![vec![0, 1], vec![2, 3]]);
    assert!(l.cluster.consumers[0]
        .consumed_records
        .iter()
        .any(|r| r.id > 0));
    // The same member without group.instance.id: the group rebalances
    // twice (the dead member's session, then nothing more — the restarted
    // process joins as a new member).
    let mut l = members(2, 4, "", steps, 70_000);
    l.run_to_end();
    let rebalances = kind_times(&l, |k| matches!(k, TraceKind::GroupRebalanceStarted { .. }));
    assert!(rebalances.iter().any(|t| *t >= 20_000), "{rebalances:?}");
}

/// ConsumerCoordinator.onJoinPrepare: before a live member joins again it
/// commits its positions (auto-commit) and waits for the answer, then the
/// eager range assignor takes every partition away; so a partition handed
/// from one live member to another is read on from exactly where the first
/// stopped: only the dead member's uncommitted reads are read twice.
#[test]
fn a_live_member_commits_before_it_gives_up_its_partitions_so_a_handover_rereads_nothing() {
    let mut l = members(
        3,
        6,
        "",
        r#"{"at_ms": 12000, "crash_client": "c1"}"#,
        70_000,
    );
    l.run_to_end();
    let read_by = |i: usize| -> Vec<(usize, u64)> {
        l.cluster.consumers[i]
            .consumed_records
            .iter()
            .map(|r| (r.partition, r.id))
            .collect()
    };
    let (c1, c2, c3) = (read_by(0), read_by(1), read_by(2));
    // c2 and c3 each gave partitions up at the rebalance (eager) and some
    // changed hands between them.
    let revoked = events(&l, |k| matches!(k, TraceKind::PartitionsRevoked { .. }));
    assert_eq!(revoked.len(), 2, "{revoked:?}");
    let both = c2.iter().filter(|r| c3.contains(r)).count();
    assert_eq!(both, 0, "a live hand-over re-read {both} records");
    let dead_twice = c1
        .iter()
        .filter(|r| c2.contains(r) || c3.contains(r))
        .count();
    assert!(dead_twice > 0);
    // The commit went out after the rebalance began and before the revoke.
    let start = kind_times(&l, |k| matches!(k, TraceKind::GroupRebalanceStarted { .. }));
    let commits = kind_times(
        &l,
        |k| matches!(k, TraceKind::OffsetsCommitted { consumer, .. } if consumer == "c2"),
    );
    let r2 = revoked.iter().find(|e| matches!(&e.kind, TraceKind::PartitionsRevoked { consumer, .. } if consumer == "c2")).map(|e| e.at_ms).unwrap_or(0);
    let last = start[start.len() - 1];
    assert!(
        commits.iter().any(|t| *t > last && *t <= r2),
        "{commits:?}, rebalance {last}, revoke {r2}"
    );
}

/// KIP-429 (CooperativeStickyAssignor, ConsumerCoordinator.onJoinComplete):
/// with the cooperative assignor the survivors keep the partitions they
/// had and their positions (nothing revoked, nothing read twice); only the
/// dead member's partitions move.
#[test]
fn cooperative_sticky_members_keep_their_partitions_and_read_through_the_rebalance() {
    let coop = r#", "partition.assignment.strategy": "cooperative-sticky""#;
    let mut before = members(3, 6, coop, "", 11_000);
    before.run_to_end();
    let first = shares(&before);
    let mut l = members(
        3,
        6,
        coop,
        r#"{"at_ms": 12000, "crash_client": "c1"}"#,
        70_000,
    );
    l.run_to_end();
    let after = shares(&l);
    for i in 1..3 {
        for p in &first[i] {
            assert!(
                after[i].contains(p),
                "c{} lost {p}: {first:?} -> {after:?}",
                i + 1
            );
        }
    }
    let mut all: Vec<u32> = after[1].iter().chain(&after[2]).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..6).collect::<Vec<_>>());
    let revoked = events(&l, |k| matches!(k, TraceKind::PartitionsRevoked { .. }));
    assert!(revoked.is_empty(), "{revoked:?}");
    // Nothing a survivor kept is read twice: its positions were never
    // given up.
    for i in 1..3 {
        let c = &l.cluster.consumers[i];
        assert!(!c.consumed_records.is_empty());
        let dup = failover_lab::report::read_twice(c);
        assert_eq!(dup, 0, "c{} read {dup} records twice", i + 1);
    }
}

/// The same truncation under a commit without its leader epoch
/// (`sim.commit.leader.epoch` false: a client that commits offsets only,
/// KAFKA-19902): the restarted consumer cannot validate the committed
/// offset (KIP-320 needs the epoch), fetches beyond the new leader's log
/// end, gets OFFSET_OUT_OF_RANGE, and auto.offset.reset decides: `earliest`
/// reads the new leader's whole log again (the delivery's re-reads by
/// `reset`), while the commit with its epoch seeks back to the divergence
/// point and re-reads nothing.
#[test]
fn a_commit_without_its_leader_epoch_meets_a_truncation_as_offset_out_of_range() {
    let run = |epoch: bool| {
        let mut l = lab(&format!(
            r#"{{"seed": 8, "brokers": 3,
          "config": {{"unclean.leader.election.enable": true, "replica.lag.time.max.ms": 10000,
                     "offsets.topic.num.partitions": 3}},
          "topics": [{{"name": "orders", "partitions": 1, "replication_factor": 2, "assignment": [[1, 2]]}}],
          "clients": [{{"type": "producer", "id": "p1", "topic": "orders", "acks": "all", "records_per_sec": 10}},
                      {{"type": "consumer", "id": "c1", "topic": "orders",
                        "config": {{"group.id": "g", "auto.offset.reset": "earliest", "sim.commit.leader.epoch": {epoch}}}}}],
          "steps": [{{"at_ms": 3000, "slow": {{"broker": 2, "topic": "orders", "partition": 0}}}},
                    {{"at_ms": 26000, "crash_client": "c1"}},
                    {{"at_ms": 30000, "crash": 1}},
                    {{"at_ms": 31000, "unslow": {{"broker": 2, "topic": "orders", "partition": 0}}}},
                    {{"at_ms": 45000, "restart_client": "c1"}}],
          "run_until_ms": 60000}}"#
        ));
        l.run_to_end();
        l
    };
    let with = run(true);
    let without = run(false);
    assert_eq!(
        group(&without)
            .committed
            .get(&0)
            .and_then(|o| o.leader_epoch),
        None
    );
    let out_of_range = |l: &Lab| {
        events(l, |k| {
            matches!(k, TraceKind::ConsumerOffsetOutOfRange { .. })
        })
        .len()
    };
    assert_eq!(out_of_range(&with), 0);
    assert_eq!(with.cluster.consumers[0].truncations_detected, 1);
    assert!(out_of_range(&without) >= 1);
    assert_eq!(without.cluster.consumers[0].truncations_detected, 0);
    let causes = |l: &Lab| {
        let d = &l.report().delivery[0];
        (
            d.reread.count,
            d.reread_causes.reset.count,
            d.reread_causes.restart.count,
        )
    };
    // Everything the new leader kept of what c1 had read is read again.
    let (reread, by_reset, _) = causes(&without);
    assert!(by_reset > 0 && by_reset == reread, "{:?}", causes(&without));
    assert_eq!(causes(&with), (0, 0, 0), "validation re-reads nothing");
}

/// Tour 22's run with c1 restarted at 56 s instead of 52 s: by then the new
/// leader's log has grown past the epoch-less commit (349), so the fetch at
/// it is not out of range (a broker refuses only an offset past its log
/// end) and nothing tells the consumer: it reads on from 349, and what the
/// new leader wrote from the divergence point (200) up to it is never
/// consumed. The problem KIP-320 names besides the reset: "the consumer will
/// just miss whatever data had been written between the truncation point and
/// its fetch offset". The commit with its epoch is validated as in the tour.
#[test]
fn a_commit_without_its_leader_epoch_silently_skips_once_the_new_log_has_grown_past_it() {
    let path = format!(
        "{}/scenarios/tour-22-commit-without-leader-epoch.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let steps = v["steps"].as_array_mut().unwrap();
    let restart = steps
        .iter_mut()
        .find(|s| s.get("restart_client").is_some())
        .unwrap();
    restart["at_ms"] = 56_000.into();
    let run = |epoch: &str| {
        let settings = [("sim.commit.leader.epoch".to_string(), epoch.to_string())];
        let mut l = Lab::from_value_with_settings(v.clone(), &settings).unwrap();
        l.run_to_end();
        l
    };
    let (with, without) = (run("true"), run("false"));
    for l in [&with, &without] {
        assert_eq!(group(l).committed.get(&0).map(|o| o.offset), Some(349));
    }
    let kinds = |l: &Lab| {
        let n = |f: fn(&TraceKind) -> bool| events(l, f).len();
        (
            n(|k| matches!(k, TraceKind::ConsumerOffsetOutOfRange { .. })),
            n(|k| matches!(k, TraceKind::ConsumerOffsetReset { .. })),
            l.cluster.consumers[0].truncations_detected,
        )
    };
    // Without the epoch: no error, no reset (only the new group's first),
    // no truncation detected; the 149 records from 200 to 348 are skipped.
    assert_eq!(kinds(&without), (0, 1, 0));
    let d = &without.report().delivery[0];
    assert_eq!((d.never_consumed.count, d.reread.count), (149, 0));
    // With it: validated, back to 200, nothing skipped or read twice.
    assert_eq!(kinds(&with), (0, 1, 1));
    let d = &with.report().delivery[0];
    assert_eq!((d.never_consumed.count, d.reread.count), (0, 0));
}

/// The delivery's re-reads by cause: a partition handed from a dead member
/// to a live one is re-read by `rebalance` (another member of the group); a
/// consumer that restarts from its last commit re-reads by `restart`.
#[test]
fn rereads_are_told_by_cause_a_rebalance_hand_over_and_a_restart() {
    let mut l = scenario_file("group-member-dies.json");
    l.run_to_end();
    let d = &l.report().delivery[0];
    assert!(d.reread.count > 0);
    assert_eq!(d.reread_causes.rebalance.count, d.reread.count);
    assert_eq!(
        d.consumed_twice.count, 0,
        "no consumer read a record twice itself"
    );
    let mut l = scenario_file("group-coordinator-dies.json");
    l.run_to_end();
    let d = &l.report().delivery[0];
    assert!(d.reread.count > 0);
    assert_eq!(d.reread_causes.restart.count, d.reread.count);
    assert_eq!(d.reread.count, d.consumed_twice.count);
}

// ---------------------------------------------------------------- issue 64:
// the consumer group protocol of KIP-848 (group.protocol=consumer).

const KIP848: &str = r#", "group.protocol": "consumer""#;

/// GroupMetadataManager.consumerGroupHeartbeat with the UniformAssignor:
/// each join bumps the group epoch and the coordinator computes the target;
/// the members reconcile to it through their heartbeats (a partition moves
/// only after its owner gave it up), and end with disjoint shares that cover
/// the topic, every member at the group's epoch.
#[test]
fn kip848_members_reconcile_to_the_coordinators_target_assignment() {
    let mut l = members(3, 6, KIP848, "", 20_000);
    l.run_to_end();
    let s = shares(&l);
    let mut all: Vec<u32> = s.iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..6).collect::<Vec<_>>(), "{s:?}");
    assert!(s.iter().all(|x| x.len() == 2), "{s:?}");
    let v = serde_json::to_value(l.report()).unwrap();
    let view = &v["consumers"][0]["group"]["coordinator_view"];
    assert_eq!(view["state"], "Stable", "{view}");
    assert_eq!(view["generation"], 3, "three joins, three group epochs");
    for i in 0..3 {
        assert_eq!(member_of(&l, i).generation, 3, "member epoch = group epoch");
    }
    // No partition was read by two members at once: each record read once.
    assert_eq!(l.report().delivery[0].reread.count, 0);
}

/// KIP-848 session expiry (GroupMetadataManager's session timer,
/// group.consumer.session.timeout.ms = 45 s): a dead member is removed, its
/// partitions are free at once, and the survivors take them at their next
/// heartbeats; they never give up their own partitions (no group-wide
/// stop), unlike the classic protocol's eager rebalance.
#[test]
fn kip848_survivors_keep_reading_while_a_dead_members_partitions_move() {
    let crash = r#"{"at_ms": 12000, "crash_client": "c1"}"#;
    let mut l = members(3, 6, KIP848, crash, 70_000);
    l.run_to_end();
    let expired = kind_times(&l, |k| matches!(k, TraceKind::GroupMemberExpired { .. }));
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert!(
        (12_000 + 45_000 - 5_200..=12_000 + 45_000 + 200).contains(&expired[0]),
        "{expired:?}"
    );
    let revoked_after = events(&l, |k| matches!(k, TraceKind::PartitionsRevoked { .. }))
        .iter()
        .filter(|e| e.at_ms > 12_000)
        .count();
    assert_eq!(revoked_after, 0, "nobody gives anything up");
    let s = shares(&l);
    let mut all: Vec<u32> = s[1].iter().chain(&s[2]).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..6).collect::<Vec<_>>(), "{s:?}");
    let d = &l.report().delivery[0];
    assert!(
        d.reread_causes.rebalance.count > 0,
        "c1's reads past its commit"
    );
    // The classic protocol's eager rebalance: both survivors give up all.
    let mut classic = members(3, 6, "", crash, 70_000);
    classic.run_to_end();
    let revoked = events(&classic, |k| {
        matches!(k, TraceKind::PartitionsRevoked { .. })
    })
    .iter()
    .filter(|e| e.at_ms > 12_000)
    .count();
    assert_eq!(revoked, 2);
}

/// The KIP-848 group is a record of its __consumer_offsets partition: a new
/// coordinator loads members, epochs and assignments, so a coordinator move
/// leaves the group epoch as it was.
#[test]
fn kip848_a_coordinator_move_keeps_the_group_epoch() {
    let mut probe = members(2, 4, KIP848, "", 10_000);
    probe.run_to_end();
    let p = offsets_index(&probe, ORDERS_GROUP_PARTITION);
    let coordinator = reg(&probe, p).leader.unwrap_or_else(|| panic!("a leader"));
    let epoch = member_of(&probe, 0).generation;
    let mut l = members(
        2,
        4,
        KIP848,
        &format!(r#"{{"at_ms": 12000, "crash": {coordinator}}}"#),
        60_000,
    );
    l.run_to_end();
    let bumps = kind_times(&l, |k| matches!(k, TraceKind::GroupTargetAssigned { .. }));
    assert!(bumps.iter().all(|t| *t < 12_000), "{bumps:?}");
    assert_eq!(member_of(&l, 0).generation, epoch);
    assert_eq!(member_of(&l, 1).generation, epoch);
    assert_ne!(reg(&l, p).leader, Some(coordinator));
    let s = shares(&l);
    assert_eq!(s[0].len() + s[1].len(), 4, "{s:?}");
}

/// GroupCoordinatorShard's load of a classic group mid-rebalance: the join
/// phase lived only in the old coordinator's memory. When its broker dies
/// while the group gathers members (here just after a dead member's session
/// ended), the new coordinator loads the last Stable generation, the dead
/// member with it, and gives every loaded member a fresh session: the
/// survivors join again (the eager protocol: they stop reading all their
/// partitions), and the rebalance waits until the dead member's new
/// session ends, 45 s after the load.
#[test]
fn a_coordinator_dying_mid_rebalance_gives_the_dead_member_a_new_session() {
    // Where the coordinator is and when c1's session ends, without it.
    let mut probe = scenario_file("group-member-dies.json");
    probe.cluster.run_until(20_000);
    let coordinator = probe.cluster.consumers[1]
        .group
        .as_ref()
        .and_then(|g| g.coordinator);
    let coordinator = coordinator.unwrap_or_else(|| panic!("a coordinator"));
    probe.run_to_end();
    let expired = kind_times(&probe, |k| {
        matches!(k, TraceKind::GroupMemberExpired { .. })
    })[0];
    // The same run, the coordinator's broker crashing 2 ms into the rebalance.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/group-member-dies.json");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut s: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if let Some(steps) = s["steps"].as_array_mut() {
        steps.push(serde_json::json!({"at_ms": expired + 2, "crash": coordinator}));
    }
    s["run_until_ms"] = serde_json::json!(130_000);
    let mut l = lab(&s.to_string());
    l.run_to_end();
    let loaded = kind_times(&l, |k| {
        matches!(k, TraceKind::CoordinatorLoaded { groups, broker, .. }
            if *broker != coordinator && groups.iter().any(|g| g == "order-processor"))
    });
    let load = *loaded
        .iter()
        .find(|t| **t > expired)
        .unwrap_or_else(|| panic!("{loaded:?}"));
    let again = kind_times(&l, |k| matches!(k, TraceKind::GroupMemberExpired { .. }));
    assert_eq!(again.len(), 2, "{again:?}");
    assert!(
        (load + 45_000..=load + 45_100).contains(&again[1]),
        "{again:?}, load {load}"
    );
    let stable = kind_times(&l, |k| {
        matches!(k, TraceKind::GroupStable { generation: 2, .. })
    });
    assert!(stable.first().is_some_and(|t| *t >= again[1]), "{stable:?}");
    // Meanwhile both survivors had given everything up.
    let revoked: Vec<u64> = kind_times(&l, |k| matches!(k, TraceKind::PartitionsRevoked { .. }))
        .into_iter()
        .filter(|t| *t > load)
        .collect();
    assert_eq!(revoked.len(), 2, "{revoked:?}");
}

/// AbstractCoordinator's poll timer (max.poll.interval.ms): a member whose
/// application stops calling poll() keeps heartbeating (no session expiry)
/// but reads nothing; when max.poll.interval.ms has passed it leaves the
/// group (LeaveGroup), the group rebalances at once and the other member
/// takes its partitions; when the application polls again it joins again.
/// KIP-848 the same, leaving with a heartbeat of epoch -1.
#[test]
fn a_member_that_stops_polling_leaves_after_max_poll_interval_ms() {
    for protocol in ["", KIP848] {
        let config = format!(r#", "max.poll.interval.ms": 20000{protocol}"#);
        let steps =
            r#"{"at_ms": 12000, "stall_client": "c1"}, {"at_ms": 40000, "resume_client": "c1"}"#;
        let mut l = members(2, 4, &config, steps, 60_000);
        l.cluster.run_until(31_000);
        let before = member_of(&l, 0).assignment.len();
        assert_eq!(before, 2, "{protocol}: still a member until 32 s");
        let read_at_31 = l.cluster.consumers[0].consumed;
        l.cluster.run_until(33_000);
        assert!(
            member_of(&l, 0).assignment.is_empty(),
            "{protocol}: it left"
        );
        let left = kind_times(
            &l,
            |k| matches!(k, TraceKind::PartitionsRevoked { consumer, .. } if consumer == "c1"),
        );
        assert!(left.contains(&32_000), "{protocol}: {left:?}");
        l.cluster.run_until(39_000);
        assert_eq!(shares(&l)[1], vec![0, 1, 2, 3], "{protocol}: c2 reads all");
        assert_eq!(
            l.cluster.consumers[0].consumed, read_at_31,
            "{protocol}: nothing read while stalled"
        );
        l.run_to_end();
        assert!(kind_times(&l, |k| matches!(k, TraceKind::GroupMemberExpired { .. })).is_empty());
        assert_eq!(
            member_of(&l, 0).assignment.len(),
            2,
            "{protocol}: c1 joined again"
        );
        assert!(l.cluster.consumers[0].consumed > read_at_31);
    }
}

/// settings.rs: a consumer key given as a setting (`--set`, a compare lane)
/// goes into every consumer's config, so one scenario compares the two
/// group protocols: `group.protocol=consumer` runs the crash of
/// group-member-dies.json exactly as its KIP-848 twin does.
#[test]
fn a_compare_lane_can_switch_the_group_protocol() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/group-member-dies.json"),
    )
    .unwrap_or_default();
    let settings = vec![("group.protocol".to_string(), "consumer".to_string())];
    let mut lane = Lab::from_json_with_settings(&text, &settings).unwrap_or_else(|e| panic!("{e}"));
    lane.run_to_end();
    let mut twin = scenario_file("group-member-dies-consumer-protocol.json");
    twin.run_to_end();
    assert_eq!(lane.cluster.trace.hash_hex(), twin.cluster.trace.hash_hex());
    assert!(!kind_times(&lane, |k| matches!(
        k,
        TraceKind::GroupTargetAssigned { .. }
    ))
    .is_empty());
}

/// ClassicGroup's members as GroupCoordinatorShard holds them (what
/// `kafka-consumer-groups.sh --describe --members` lists, and the page's
/// group card draws): scenarios/group-member-dies.json. A member whose
/// process died stays in the group with its partitions until its session
/// ends (the heartbeat expiration of GroupMetadataManager), named with the
/// consumer that joined as it; then the group rebalances without it.
#[test]
fn the_coordinators_view_keeps_a_dead_member_with_its_partitions_until_its_session_ends() {
    let mut l = scenario_file("group-member-dies.json");
    let view = |l: &Lab| {
        let v = serde_json::to_value(l.report()).unwrap();
        v["consumers"][1]["group"]["coordinator_view"].clone()
    };
    l.cluster.run_until(30_000);
    let v = view(&l);
    assert_eq!(v["state"], "Stable", "{v}");
    assert_eq!(v["generation"], 1);
    let members = v["members"].as_array().unwrap();
    let consumers: Vec<&str> = members.iter().map(|m| m[2].as_str().unwrap()).collect();
    assert_eq!(consumers, ["c1", "c2", "c3"], "{v}");
    let c1 = &members[0];
    assert_eq!(c1[1], serde_json::json!(["orders-0", "orders-1"]), "{v}");
    // Its session ends 45 s after the coordinator last heard from it, at
    // most heartbeat.interval.ms (3 s) before the crash at 12 s.
    let ends = c1[3].as_u64().unwrap();
    assert!((54_000..=57_000).contains(&ends), "session ends at {ends}");
    l.cluster.run_until(60_000);
    let v = view(&l);
    assert_eq!(v["generation"], 2, "{v}");
    let members = v["members"].as_array().unwrap();
    let consumers: Vec<&str> = members.iter().map(|m| m[2].as_str().unwrap()).collect();
    assert_eq!(consumers, ["c2", "c3"], "{v}");
    let mut owned: Vec<String> = members
        .iter()
        .flat_map(|m| m[1].as_array().unwrap().iter())
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    owned.sort();
    assert_eq!(
        owned,
        (0..6).map(|i| format!("orders-{i}")).collect::<Vec<_>>()
    );
}

/// The availability strip's "partitions not consumed" (consumption.rs):
/// scenarios/group-member-dies.json. Nobody reads before the first
/// rebalance ends (InitialDelayedJoin's group.initial.rebalance.delay.ms);
/// from c1's crash its two partitions are read by nobody (the coordinator
/// still gives them to c1 until its session ends: GroupMetadataManager's
/// heartbeat expiration), and the eager rebalance that follows
/// (ConsumerCoordinator.onJoinPrepare revokes everything) stops all six
/// until c2 and c3 have their new assignment.
#[test]
fn partitions_are_not_consumed_until_the_first_rebalance_and_from_a_members_crash_to_the_end_of_the_next(
) {
    let mut l = scenario_file("group-member-dies.json");
    l.run_to_end();
    let r = l.report();
    let w = &r.availability.not_consumed;
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w.iter().all(|x| x.group == "order-processor"));
    let first_stable = kind_times(&l, |k| matches!(k, TraceKind::GroupStable { .. }));
    assert_eq!((w[0].from_ms, w[0].max_partitions), (0, 6), "{w:?}");
    assert!(
        w[0].to_ms
            .is_some_and(|t| t >= 3_000 && t <= first_stable[0] + 100),
        "{w:?} {first_stable:?}"
    );
    assert_eq!(w[1].from_ms, 12_000, "from the crash: {w:?}");
    let expired = kind_times(&l, |k| matches!(k, TraceKind::GroupMemberExpired { .. }));
    let to = w[1].to_ms.expect("it ended");
    assert!(to > expired[0], "{w:?} expired at {expired:?}");
    assert!(to < expired[0] + 5_000, "{w:?} expired at {expired:?}");
    assert_eq!(
        w[1].max_partitions, 6,
        "the eager rebalance stops every partition: {w:?}"
    );
    // The page's band reads the same accountant: 2 partitions while only c1's wait.
    assert_eq!(l.cluster.consumption.max_not_consumed(30_000, 30_001), 2);
    assert_eq!(l.cluster.consumption.max_not_consumed(65_000, 66_000), 0);
}

/// The same crash with cooperative-sticky (KIP-429,
/// ConsumerCoordinator.onJoinPrepare revokes nothing that stays): the
/// survivors read through the rebalance, so only the dead member's two
/// partitions are ever read by nobody after the first rebalance.
#[test]
fn with_cooperative_sticky_only_the_dead_members_partitions_go_unconsumed() {
    let coop = r#", "partition.assignment.strategy": "cooperative-sticky""#;
    let mut l = members(
        3,
        6,
        coop,
        r#"{"at_ms": 12000, "crash_client": "c1"}"#,
        70_000,
    );
    l.run_to_end();
    let w = l.report().availability.not_consumed;
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!((w[1].from_ms, w[1].max_partitions), (12_000, 2), "{w:?}");
    assert!(w[1].to_ms.is_some(), "{w:?}");
}

/// The same member's death under KIP-848 (scenarios/
/// group-member-dies-consumer-protocol.json): the coordinator's view names
/// each member's consumer and keeps c1 until group.consumer.session.timeout.ms
/// has passed since its last heartbeat; after it only c1's two partitions
/// were ever read by nobody (CurrentAssignmentBuilder moves them without a
/// group-wide stop), which the strip's band shows.
#[test]
fn kip848_a_dead_members_partitions_alone_go_unconsumed_until_its_session_ends() {
    let mut l = scenario_file("group-member-dies-consumer-protocol.json");
    l.cluster.run_until(30_000);
    let v = serde_json::to_value(l.report()).unwrap();
    let view = &v["consumers"][1]["group"]["coordinator_view"];
    assert_eq!(v["consumers"][1]["group"]["member"]["protocol"], "consumer");
    let members = view["members"].as_array().unwrap();
    let c1 = members
        .iter()
        .find(|m| m[2] == "c1")
        .unwrap_or_else(|| panic!("c1 is still a member: {view}"));
    assert!(!c1[1].as_array().unwrap().is_empty(), "{view}");
    l.run_to_end();
    let w = l.report().availability.not_consumed;
    let after_crash: Vec<_> = w.iter().filter(|x| x.from_ms >= 12_000).collect();
    assert_eq!(after_crash.len(), 1, "{w:?}");
    assert_eq!(after_crash[0].from_ms, 12_000, "{w:?}");
    assert_eq!(
        after_crash[0].max_partitions, 2,
        "no group-wide stop: {w:?}"
    );
    let expired = kind_times(&l, |k| matches!(k, TraceKind::GroupMemberExpired { .. }));
    let to = after_crash[0].to_ms.expect("it ended");
    assert!(to > 12_000 + 40_000, "{w:?} expired at {expired:?}");
}

/// A member whose application stops polling reads nothing from the stall on
/// (ConsumerNetworkThread still heartbeats for it, so it stays in the group
/// until max.poll.interval.ms): the strip's band runs from the stall to the
/// hand-over after it leaves; the classic eager rebalance stops the others'
/// partitions too, KIP-848 only the stalled member's.
#[test]
fn a_stalled_members_partitions_are_not_consumed_from_the_stall_to_the_hand_over() {
    for (protocol, most) in [("", 4), (KIP848, 2)] {
        let config = format!(r#", "max.poll.interval.ms": 20000{protocol}"#);
        let steps = r#"{"at_ms": 12000, "stall_client": "c1"}"#;
        let mut l = members(2, 4, &config, steps, 45_000);
        l.run_to_end();
        let w = l.report().availability.not_consumed;
        let stalled: Vec<_> = w.iter().filter(|x| x.from_ms >= 12_000).collect();
        assert_eq!(stalled.len(), 1, "{protocol}: {w:?}");
        assert_eq!(stalled[0].from_ms, 12_000, "{protocol}: {w:?}");
        assert!(
            stalled[0].to_ms.is_some_and(|t| t > 32_000),
            "{protocol}: {w:?}"
        );
        assert_eq!(stalled[0].max_partitions, most, "{protocol}: {w:?}");
    }
}

/// ConsumerCoordinator.onJoinComplete ("reschedule the auto commit starting
/// from now", nextAutoCommitTimer.updateAndReset) and, under KIP-848,
/// ConsumerMembershipManager's completed reconciliation
/// (CommitRequestManager.resetAutoCommitTimer): a new assignment re-arms
/// the auto-commit clock a full auto.commit.interval.ms from the moment it
/// is taken, so each member's first commit after an assignment comes 5 s
/// after it, not on a clock started with the process.
#[test]
fn auto_commit_restarts_a_full_interval_after_each_new_assignment() {
    let crash = r#"{"at_ms": 12000, "crash_client": "c1"}"#;
    for protocol in ["", KIP848] {
        let mut l = members(3, 6, protocol, crash, 75_000);
        l.run_to_end();
        let evs = events(&l, |k| {
            matches!(
                k,
                TraceKind::PartitionsAssigned { .. } | TraceKind::OffsetsCommitted { .. }
            )
        });
        let mut checked = 0;
        for member in ["c2", "c3"] {
            let mut assigned_at: Vec<u64> = Vec::new();
            let mut commits: Vec<u64> = Vec::new();
            for e in &evs {
                match &e.kind {
                    TraceKind::PartitionsAssigned { consumer, .. } if consumer == member => {
                        assigned_at.push(e.at_ms)
                    }
                    TraceKind::OffsetsCommitted { consumer, .. } if consumer == member => {
                        commits.push(e.at_ms)
                    }
                    _ => {}
                }
            }
            assert!(
                assigned_at.len() >= 2,
                "{protocol:?} {member}: {assigned_at:?}"
            );
            // The first commit after each assignment that keeps the member
            // busy for a full interval comes one interval after it.
            for (i, &a) in assigned_at.iter().enumerate() {
                let next_assignment = assigned_at.get(i + 1).copied().unwrap_or(u64::MAX);
                if next_assignment < a + 5_100 {
                    continue;
                }
                let first = commits.iter().copied().find(|&c| c > a);
                let Some(first) = first else { continue };
                assert!(
                    (a + 5_000..a + 5_100).contains(&first),
                    "{protocol:?} {member}: assigned at {a}, first commit at {first} ({commits:?})"
                );
                checked += 1;
            }
        }
        assert!(checked >= 4, "{protocol:?}: {checked} assignments checked");
    }
}

/// ConsumerCoordinator's auto-commit callback (a RetriableCommitFailedException
/// resets nextAutoCommitTimer to retry.backoff.ms; each expiry resets it to
/// the interval and tries again): while the coordinator's broker is dead a
/// classic consumer's auto-commit keeps failing and coming back, so the
/// commit that gets through starts the next interval. KIP-848's
/// CommitRequestManager queues the commit until a coordinator is known
/// instead, and its clock keeps its phase.
#[test]
fn a_failed_auto_commit_retries_after_the_backoff_and_the_one_that_gets_through_starts_the_next_interval(
) {
    let commits_of = |file: &str| {
        let path = format!(
            "{}/kafka-differential/scenarios/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut l = lab(&text);
        l.run_to_end();
        events(
            &l,
            |k| matches!(k, TraceKind::OffsetsCommitted { consumer, .. } if consumer == "c1"),
        )
        .iter()
        .map(|e| e.at_ms)
        .collect::<Vec<u64>>()
    };
    // Broker 3, the coordinator, dies at 21.5 s; its offsets partition has
    // a new leader once the controller fences it (29 s).
    let classic = commits_of("group-coordinator-dies-while-stable.json");
    let before = classic.iter().copied().filter(|&t| t < 21_500).max();
    let after: Vec<u64> = classic.iter().copied().filter(|&t| t > 21_500).collect();
    let (Some(before), [through, next, ..]) = (before, &after[..]) else {
        panic!("{classic:?}")
    };
    assert!(*through > 29_000, "{classic:?}");
    assert!(
        (through + 4_900..=through + 5_100).contains(next),
        "the interval counts from the commit that got through: {classic:?}"
    );
    assert!(
        (next - before) % 5_000 > 100 && (next - before) % 5_000 < 4_900,
        "off the old phase: {classic:?}"
    );
    let kip848 = commits_of("group-coordinator-dies-while-stable-consumer-protocol.json");
    let before = kip848.iter().copied().filter(|&t| t < 21_500).max();
    let after: Vec<u64> = kip848.iter().copied().filter(|&t| t > 21_500).collect();
    let (Some(before), [_, next, ..]) = (before, &after[..]) else {
        panic!("{kip848:?}")
    };
    let off = (next - before) % 5_000;
    assert!(
        !(100..=4_900).contains(&off),
        "KIP-848 keeps its phase: {kip848:?}"
    );
}

// ---------------------------------------------------------------- issue 64
// item 3: committed records no consumer read, told by cause.

/// The delivery's `never_consumed` counts by `skip_causes` (reset, commit,
/// unread) of the scenario file `name` under `settings`, with the checks
/// every run must pass: the causes add up, and each record is under one.
fn skip_causes(
    name: &str,
    settings: &[(&str, &str)],
    edit: impl Fn(&mut serde_json::Value),
) -> (u64, [u64; 3]) {
    let path = format!("{}/scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    let settings: Vec<(String, String)> = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut l = Lab::from_value_with_settings(v, &settings).unwrap();
    l.run_to_end();
    let d = &l.report().delivery[0];
    let s = &d.skip_causes;
    let n = [s.reset.count, s.commit.count, s.unread.count];
    assert_eq!(
        n.iter().sum::<u64>(),
        d.never_consumed.count,
        "{name}: {n:?}"
    );
    let mut ex: Vec<u64> = [&s.reset, &s.commit, &s.unread]
        .iter()
        .flat_map(|f| f.examples.clone())
        .collect();
    ex.sort_unstable();
    ex.dedup();
    assert_eq!(
        ex.len(),
        [&s.reset, &s.commit, &s.unread]
            .iter()
            .map(|f| f.examples.len())
            .sum::<usize>(),
        "a record is under one cause"
    );
    (d.never_consumed.count, n)
}

/// SubscriptionState.resetInitializingPositions and requestOffsetReset
/// (auto.offset.reset, answered by ListOffsets): `latest` puts the position
/// at the high watermark, past every record already there. Tour 20's group
/// with `latest` (Kafka's default) skips what was written while it formed
/// (six partitions reset to 30: 180 records);
/// tour 22's lane C, out of range after the unclean election, skips the 121
/// records broker 2 wrote before the reset. Both are `reset`, none `commit`.
#[test]
fn a_reset_to_latest_skips_the_records_below_the_high_watermark_it_jumps_to() {
    let (never, [reset, commit, _]) = skip_causes(
        "tour-20-member-dies.json",
        &[("auto.offset.reset", "latest")],
        |_| {},
    );
    // The group forms at 6 s: each of the six partitions resets to 30.
    assert_eq!((never, reset, commit), (180, 180, 0));
    let (_, [reset_earliest, ..]) = skip_causes("tour-20-member-dies.json", &[], |_| {});
    assert_eq!(reset_earliest, 0, "earliest skips nothing");
    let lane_c = [
        ("sim.commit.leader.epoch", "false"),
        ("auto.offset.reset", "latest"),
    ];
    let (never, n) = skip_causes("tour-22-commit-without-leader-epoch.json", &lane_c, |_| {});
    assert_eq!((never, n), (121, [121, 0, 0]));
}

/// ConsumerCoordinator.refreshCommittedOffsetsIfNeeded (OffsetFetch): a
/// consumer starts at its group's committed offset. Without the leader
/// epoch there is nothing to validate (KIP-320), so after the unclean
/// election a restart at 56 s, once the new leader's log has grown past the
/// commit (349), reads on from it: the 149 records broker 2 wrote from 200
/// are skipped by `commit`. With the epoch it seeks back to 200 and skips
/// none.
#[test]
fn a_start_at_a_commit_beyond_records_nobody_read_skips_them_by_commit_kip_320() {
    let later = |v: &mut serde_json::Value| {
        let steps = v["steps"].as_array_mut().unwrap();
        let restart = steps
            .iter_mut()
            .find(|s| s.get("restart_client").is_some())
            .unwrap();
        restart["at_ms"] = 56_000.into();
    };
    let tour = "tour-22-commit-without-leader-epoch.json";
    let without = skip_causes(tour, &[("sim.commit.leader.epoch", "false")], later);
    assert_eq!(without, (149, [0, 149, 0]));
    let with = skip_causes(tour, &[("sim.commit.leader.epoch", "true")], later);
    assert_eq!(with, (0, [0, 0, 0]));
}

/// Not every record no one read was skipped: a record no position passed
/// over is `unread` (its reader is behind, stopped or dead, or the partition
/// has no owner). In tour 20 c1 dies at 12 s and its partitions wait out
/// session.timeout.ms=45000; with earliest, what nobody read by the end was
/// not skipped. A standalone consumer crashed for good leaves everything
/// after its crash unread.
#[test]
fn records_no_position_passed_over_are_unread_not_skipped() {
    let (never, n) = skip_causes("tour-20-member-dies.json", &[], |_| {});
    assert!(never > 0);
    assert_eq!(n, [0, 0, never]);
    let (never, n) = skip_causes("tour-22-commit-without-leader-epoch.json", &[], |v| {
        v["steps"]
            .as_array_mut()
            .unwrap()
            .retain(|s| s.get("restart_client").is_none());
    });
    assert!(never > 100, "{never}");
    assert_eq!(n, [0, 0, never]);
}

/// KIP-848 static membership (GroupMetadataManager
/// .getOrMaybeSubscribeStaticConsumerGroupMember and
/// throwIfInstanceIdIsUnreleased; the client's
/// ConsumerHeartbeatRequestManager treats UNRELEASED_INSTANCE_ID as fatal):
/// a static member replaces its instance's old member only once that one
/// left with epoch -2, a clean close. A process that was killed never left,
/// so its restart within the session is refused and reads nothing, while
/// the old member keeps its partitions until its session ends, when the
/// others take them. The classic protocol's static member, killed and
/// restarted the same way, takes its place back (the test above).
#[test]
fn kip848_a_killed_static_member_cannot_rejoin_until_its_old_member_expires() {
    let steps =
        r#"{"at_ms": 12000, "crash_client": "c1"}, {"at_ms": 20000, "restart_client": "c1"}"#;
    let config = format!(r#"{KIP848}, "group.instance.id": "host-{{i}}""#);
    let mut l = members(2, 4, &config, steps, 70_000);
    l.run_to_end();
    let refused: Vec<&str> = events(&l, |k| {
        matches!(k, TraceKind::CoordinatorError { error, .. } if error == "UNRELEASED_INSTANCE_ID")
    })
    .iter()
    .map(|e| match &e.kind {
        TraceKind::CoordinatorError { consumer, .. } => consumer.as_str(),
        _ => "",
    })
    .collect();
    assert_eq!(refused, vec!["c1"], "refused once, then it stops");
    assert_eq!(
        member_of(&l, 0).state,
        failover_lab::sim::client::MemberState::Failed
    );
    let c1_read_after_restart = l.cluster.consumers[0]
        .consumed_records
        .iter()
        .filter(|r| r.incarnation > 0)
        .count();
    assert_eq!(c1_read_after_restart, 0);
    // The old member expires with its session; c2 then owns all four.
    let expired = kind_times(&l, |k| matches!(k, TraceKind::GroupMemberExpired { .. }));
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert!((45_000..=57_200).contains(&expired[0]), "{expired:?}");
    assert_eq!(shares(&l)[1], vec![0, 1, 2, 3]);
    // Without group.instance.id the restarted process joins as a new
    // member at once and reads.
    let mut l = members(2, 4, KIP848, steps, 70_000);
    l.run_to_end();
    assert!(l.cluster.consumers[0]
        .consumed_records
        .iter()
        .any(|r| r.incarnation > 0));
}

/// The assignment history the group card draws (report `groups`,
/// `consumption.rs`), on scenarios/group-member-dies.json: c1 reads
/// orders-0 and orders-1 in generation 1, its process dies at 12 s and its
/// member keeps them, unread, until the coordinator ends its session (the
/// GroupMemberExpired event); c2 then takes them in generation 2. The
/// windows a partition had no reader agree with the strip's
/// `not_consumed`.
#[test]
fn the_assignment_history_follows_a_dead_members_partitions_to_their_next_owner() {
    use failover_lab::sim::consumption::MemberPhase;
    let mut l = scenario_file("group-member-dies.json");
    l.run_to_end();
    let r = l.report();
    let g = &r.groups[0];
    assert_eq!(
        (g.group.as_str(), g.protocol),
        ("order-processor", "classic")
    );
    let lane = |c: &str| {
        let m = g
            .members
            .iter()
            .position(|m| m.0 == c)
            .unwrap_or_else(|| panic!("{c} has a lane: {:?}", g.members));
        g.changes
            .iter()
            .filter(|x| x.member == m)
            .map(|x| (x.at_ms, x.generation, x.state, x.partitions.join(",")))
            .collect::<Vec<_>>()
    };
    let c1 = lane("c1");
    let expired = kind_times(&l, |k| matches!(k, TraceKind::GroupMemberExpired { .. }));
    let tail: Vec<_> = c1.iter().rev().take(3).rev().cloned().collect();
    assert_eq!(tail[0].1, 1, "{c1:?}");
    assert_eq!(
        (tail[0].2, tail[0].3.as_str()),
        (MemberPhase::Reading, "orders-0,orders-1"),
        "{c1:?}"
    );
    assert_eq!(
        (tail[1].0, tail[1].2, tail[1].3.as_str()),
        (12_000, MemberPhase::ProcessDown, "orders-0,orders-1"),
        "its member keeps them after the crash: {c1:?}"
    );
    assert_eq!(
        (tail[2].0, tail[2].2, tail[2].3.as_str()),
        (expired[0], MemberPhase::Left, ""),
        "until its session ends: {c1:?}"
    );
    let c2 = lane("c2");
    let last = c2.last().unwrap();
    assert_eq!((last.1, last.2), (2, MemberPhase::Reading), "{c2:?}");
    assert!(
        last.3.contains("orders-0") && last.3.contains("orders-1"),
        "{c2:?}"
    );
    let took = g.changes.iter().rev().find(|x| x.at_ms == last.0).unwrap();
    assert!(took.took.contains(&"orders-0".to_string()), "{took:?}");
    // orders-0: unread until generation 1, then from the crash to c2's assignment.
    let o0: Vec<_> = g
        .unread
        .iter()
        .filter(|u| u.partition == "orders-0")
        .map(|u| (u.from_ms, u.to_ms))
        .collect();
    assert_eq!(o0[1], (12_000, Some(last.0)), "{o0:?}");
    // Each not_consumed window starts and ends where some partition's does.
    for w in &r.availability.not_consumed {
        assert!(g.unread.iter().any(|u| u.from_ms == w.from_ms), "{w:?}");
        assert!(g.unread.iter().any(|u| u.to_ms == w.to_ms), "{w:?}");
    }
}

/// A member whose application stops polling holds its partitions without
/// reading them (`not_polling`) until it leaves the group after
/// max.poll.interval.ms.
#[test]
fn the_assignment_history_marks_a_stalled_member_not_polling() {
    use failover_lab::sim::consumption::MemberPhase;
    let config = r#", "max.poll.interval.ms": 20000"#;
    let steps = r#"{"at_ms": 12000, "stall_client": "c1"}"#;
    let mut l = members(2, 4, config, steps, 45_000);
    l.run_to_end();
    let g = &l.report().groups[0];
    let stalled = g
        .changes
        .iter()
        .find(|x| x.state == MemberPhase::NotPolling)
        .unwrap_or_else(|| panic!("{:?}", g.changes));
    assert_eq!(stalled.at_ms, 12_000);
    assert_eq!(g.members[stalled.member].0, "c1");
    assert!(!stalled.partitions.is_empty());
}

/// GroupCoordinatorService.fetchOffsets: Kafka's consumers ask with
/// require_stable, and the coordinator then runs the OffsetFetch as a write
/// operation without records: it answers once the offsets partition's high
/// watermark covers what the coordinator had written before it, and after
/// offsets.commit.timeout.ms (5 s) without that, with NOT_COORDINATOR
/// (handleOffsetFetchException's remap of REQUEST_TIMED_OUT). Here a commit
/// is written while both followers of the group's offsets partition are
/// dead (still in the ISR: the HW stays), the consumer restarts before it is
/// durable, and it starts from that commit once the fenced followers leave
/// the ISR, not from the older durable one it would read at once.
#[test]
fn a_stable_offset_fetch_waits_for_the_groups_pending_commit_to_be_durable() {
    let probe = scenario("", "", "", 1);
    let op = offsets_index(&probe, ORDERS_GROUP_PARTITION);
    let replicas = probe.cluster.partitions[op].replicas.clone();
    let (leader, followers) = (replicas[0], &replicas[1..]);
    let steps = format!(
        r#"{{"at_ms": 6000, "crash": {a}}}, {{"at_ms": 6000, "crash": {b}}},
           {{"at_ms": 7000, "commit": "c"}}, {{"at_ms": 7500, "crash_client": "c"}},
           {{"at_ms": 8000, "restart_client": "c"}}"#,
        a = followers[0],
        b = followers[1]
    );
    let mut l = scenario("", r#", "auto.commit.interval.ms": 5000"#, &steps, 30_000);
    l.cluster.run_until(6_999);
    let durable = group(&l)
        .committed
        .get(&0)
        .copied()
        .expect("the 5 s auto-commit")
        .offset;
    l.cluster.run_until(7_000);
    let pending = l.cluster.consumers[0]
        .positions
        .get(&0)
        .map_or(0, |p| p.offset);
    assert!(
        pending > durable,
        "the step commits {pending}, past the durable {durable}"
    );
    l.run_to_end();
    let shrunk = events(&l, |k| {
        matches!(k, TraceKind::IsrChanged { topic, partition, isr_after, .. }
            if topic == "__consumer_offsets" && *partition == ORDERS_GROUP_PARTITION && isr_after == &vec![leader])
    });
    let durable_at = shrunk
        .first()
        .expect("the dead followers leave the ISR")
        .at_ms;
    let fetched: Vec<_> = events(&l, |k| {
        matches!(k, TraceKind::CommittedOffsetFetched { partition: 0, .. })
    })
    .into_iter()
    .filter(|e| e.at_ms > 8_000)
    .collect();
    assert_eq!(fetched.len(), 1, "{fetched:?}");
    assert!(
        matches!(fetched[0].kind, TraceKind::CommittedOffsetFetched { offset: Some(o), .. } if o == pending),
        "the restarted consumer starts at the pending commit {pending}: {:?}",
        fetched[0]
    );
    assert!(
        fetched[0].at_ms >= durable_at,
        "answered once durable ({durable_at} ms): {:?}",
        fetched[0]
    );
    // The wait outlived offsets.commit.timeout.ms once: NOT_COORDINATOR, a new lookup, a new wait.
    let g = group(&l);
    assert!(
        g.errors.get("NOT_COORDINATOR").copied().unwrap_or(0) >= 1,
        "errors {:?}",
        g.errors
    );
    assert_eq!(g.coordinator, Some(leader));
    assert_no_violations(&l);
}
