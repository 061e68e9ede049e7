//! The book's conformance table (docs/book/src/fidelity/conformance.md), generated from the citations in this
//! directory's test files so it cannot go stale: every test is preceded by
//! `// Kafka: Class.method` lines (the Kafka cases it ports, `[variant]` for
//! one parameter of a parameterised case), optionally `// Difference: …`
//! (kept, with its reason), `// Fixed: …` (found by the case and fixed in the
//! core) and `#[ignore = "…"]` (Kafka's outcome, waiting for a fix).
//! `NOT_PORTED` lists the Kafka cases of the same classes we do not port,
//! with the reason. Citations and names are checked by hand against
//! [`KAFKA_TRUNK`]; the tests below check that no case is both ported and
//! listed as not ported.
//!
//! `cargo test --test conformance` fails when the chapter differs from the
//! generated table; `UPDATE_CONFORMANCE=1 cargo test --test conformance
//! book_table` rewrites it.

use std::collections::BTreeMap;

/// The Kafka test sources the citations were read from.
const KAFKA_TRUNK: &str = "apache/kafka trunk at `bcd3191` (2025-11-21)";

const SOURCES: &[(&str, &str)] = &[
    (
        "partition_change_builder.rs",
        include_str!("partition_change_builder.rs"),
    ),
    (
        "replication_control.rs",
        include_str!("replication_control.rs"),
    ),
    ("broker_lifecycle.rs", include_str!("broker_lifecycle.rs")),
    ("partition.rs", include_str!("partition.rs")),
    ("epoch_cache.rs", include_str!("epoch_cache.rs")),
    ("fetcher.rs", include_str!("fetcher.rs")),
    ("producer.rs", include_str!("producer.rs")),
];

/// Kafka cases of the classes above that we do not port: (class, methods, reason).
const NOT_PORTED: &[(&str, &str, &str)] = &[
    ("PartitionChangeBuilderTest", "testReassignmentRearrangesReplicas, testIsrEnlargementCompletesReassignment, testRevertReassignment, testRemovingReplicaReassignment, testAddingReplicaReassignment, testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders", "replica reassignment is not modelled"),
    ("PartitionChangeBuilderTest", "testKeepsDirectoriesAfterReassignment, testUpdateDirectories", "log directories are not modelled"),
    ("PartitionChangeBuilderTest", "testLeaderEpochBumpOnIsrShrink", "metadata versions before 3.6 (a shrink bumped the leader epoch, KAFKA-15021) are not modelled"),
    ("PartitionChangeBuilderTest", "testLeaderEpochBumpOnNewReplicaSetDisjoint, testNoLeaderEpochBumpOnEmptyTargetIsr", "they drive the builder's reassignment path (target replicas); replica reassignment is not modelled"),
    ("PartitionChangeBuilderTest", "testEligibleLeaderReplicas_ElrCanBeElected[lastKnownLeaderEnabled=false], testEligibleLeaderReplicas_IsrCanShrinkToZero[lastKnownLeaderEnabled=false]", "useLastKnownLeaderInBalancedRecovery=false is not modelled; we model Kafka's default (true), whose variants are ported"),
    ("PartitionChangeBuilderTest", "testChangeRecordIsNoOp", "record encoding (tagged fields), not a replication rule"),
    ("ReplicationControlManagerTest", "topic/partition creation, deletion, configs, policies, describers (testCreateTopics*, testDeleteTopics, testEligibleLeaderReplicas_DeleteTopic, testKRaftClusterDescriber, …)", "admin operations; topics are fixed by the scenario"),
    ("ReplicationControlManagerTest", "testAlterPartitionHandleUnknownTopicIdOrName", "topic ids and names are not part of our requests"),
    ("ReplicationControlManagerTest", "testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions[dynamic_cluster], testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions[dynamic_node], testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions[dynamic_topic]", "dynamic configs and the periodic unclean-election task (unclean.leader.election.interval.ms) that serves them are not modelled"),
    ("ClusterControlManagerTest", "testRegistrationWithIncorrectClusterId, testRegistrationWithUnsupported*, testRegisterControlWithUnsupportedMetadataVersion, testReRegistrationWithCleanShutdownDetection, testUnregister, testPlaceReplicas, testRegistrationsToRecords, testRegisterWithDuplicateDirectoryId, testHasOnlineDir, testDefaultDir, testBrokerContactTimesAreUpdatedOnClusterControlActivation, testReplayRegisterBrokerRecord, testReplayBrokerRegistrationChangeRecord", "cluster ids, features, directories, record replay and controller failover are not modelled"),
    ("BrokerHeartbeatManagerTest", "testMetadataOffsetComparator, testUsableBrokerIterator, testControlledShutdownOffsetIsOnlyUpdatedOnce, testTouchThrowsExceptionUnlessRegistered", "internal data structures and bookkeeping of Kafka's implementation"),
    ("BrokerHeartbeatManagerTest", "testHasValidSession", "not ported in this pass: it asks the session by (broker id, broker epoch); our controller keeps one session per broker id, and the epoch half is what testDuplicateBrokerRegistration* check through registration"),
    ("BrokerHeartbeatTrackerTest", "testUpdateContactTime, testMaybeRemoveExpiredWithEmptyTracker, testHasValidSessionIsTrueForKnownBroker, testHasValidSessionIsFalseForUnknownBroker, testHasValidSessionIsFalseForUnknownBrokerEpoch, testIsExpiredIsFalseForPreviousTime", "the tracker's own API (contact times by broker id and epoch, a clock that goes backwards); our controller keeps one contact time per broker"),
    ("PartitionTest", "testAlterIsrNewLeaderElected", "NEW_LEADER_ELECTED comes only from a reassignment, which is not modelled"),
    ("PartitionTest", "testAlterIsrUnknownTopic", "topics are fixed by the scenario: the controller never answers UNKNOWN_TOPIC_OR_PARTITION (the broker would keep the proposal pending, as for INVALID_REQUEST)"),
    ("PartitionTest", "testPartitionShouldRetryAlterPartitionRequest, testSingleInFlightAlterIsr", "not ported in this pass: they count the AlterPartitionManager's queued requests; our leader keeps one proposal per partition in flight and re-sends it on a timer"),
    ("PartitionTest", "testTopicIdAndPartitionMetadataFileForLeader, future-replica and log-directory cases", "topic-id files and log directories are not modelled"),
    ("LeaderEpochFileCacheTest", "shouldPreserveResetOffsetOnClearEarliestIfOneExists, shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs, shouldNotClearAnythingIfOffsetToEarly, shouldNotClearAnythingIfOffsetToFirstOffset, shouldRetainLatestEpochOnClearAllEarliest, shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest, shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2, shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset, shouldClearEarliestOnEmptyCache, shouldWriteCheckpointOnTruncation", "truncation from the start (retention, log start offset) is not modelled"),
    ("LeaderEpochFileCacheTest", "testPreviousEpoch, testFindPreviousEpoch, testFindPreviousEntry, testFindNextEpoch, shouldFetchEpochForGivenOffset", "look-ups used by tiered storage and KRaft snapshots, not by replication"),
    ("LeaderEpochFileCacheTest", "shouldReturnUndefinedOffsetIfUndefinedEpochRequested, shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested, shouldNotResetEpochHistoryHeadIfUndefinedPassed, shouldNotResetEpochHistoryTailIfUndefinedPassed", "our epochs and offsets are unsigned: a follower without an epoch sends none rather than -1"),
    ("LeaderEpochFileCacheTest", "shouldClearAllEntries", "deleting a log is not modelled"),
    ("ReplicaFetcherThreadTest", "shouldSendLatestRequestVersionsByDefault, shouldHandleExceptionFromBlockingSend, shouldNotFetchLeaderEpochOnFirstFetchWithTruncateOnFetch, testTruncateOnFetchDoesNotUpdateHighWatermark, testLagIsUpdatedWhenNoRecords, testBuildFetch, testLocalFetchCompletionIfHighWatermarkUpdated, reassignment-metrics and shutdown cases", "request versions, the blocking sender, metrics and fetch sessions are not modelled, or not ported in this pass (the truncate-on-fetch rules they share are ported from AbstractFetcherThreadTest)"),
    ("AbstractFetcherThreadTest", "testReplicateBatchesUpToLeaderEpoch", "its mock leader's log holds a batch from an epoch after the leader's own (5 while leading in 4), which the leader must not return; our leader's log holds only records of its own epoch or earlier ones, so the filtering the case checks has nothing to filter"),
    ("AbstractFetcherThreadTest", "testFollowerFetchOutOfRangeLow, testFencedOffsetResetAfterOutOfRange, testEmptyFollowerFetch* (tiered storage)", "they need a leader log start offset above 0 (retention, tiered storage), which is not modelled"),
    ("AbstractFetcherThreadTest", "testTruncationSkippedIfNoEpochChange, testTruncateToHighWatermarkDuringRemovePartitions, testTruncationOnFetchSkippedIfPartitionRemoved, testTruncateToEpochEndOffsetsDuringRemovePartitions, testTruncationThrowsExceptionIfLeaderReturnsPartitionsNotRequestedInFetchEpochs, testParameterizedLeaderEpochChangeDuringFetchEpochsFromLeader, testRetryAfterUnknownLeaderEpochInLatestOffsetFetch", "the separate OffsetsForLeaderEpoch round (fetch-epochs phase) of the mock fetcher; our follower truncates on fetch only (KAFKA-10554), and partitions are never removed from a fetcher"),
    ("AbstractFetcherThreadTest", "testDelay, testPartitionsInError, testUnknownLeaderEpochInTruncation, testUnknownLeaderEpochWhileFetching, testCorruptMessage, testFetcherThreadHandlingPartitionFailure*, testMaybeUpdateTopicIds, metrics cases", "not ported in this pass (fetcher-thread states, back-off and error handling; corrupt records and topic ids are not modelled)"),
    ("SenderTest", "transactions, idempotent sequence bookkeeping (testIdempotence*, testEpochBump*, testCorrectHandlingOf*, testUnknownProducer*, …), metrics, quotas, authorization, batch splitting (testTooLargeBatchesAreSafelyRemoved, testExpiredBatchDoesNotSplitOnMessageTooLargeError), buffer pool (testNoBufferReuseWhenBatchExpires, testNoDoubleDeallocation)", "transactions, record sizes, batch splitting and buffer memory are not modelled; idempotent sequences are modelled only as the broker's de-duplication"),
    ("SenderTest", "testSendInOrder, testWhenFirstBatchExpireNoSendSecondBatchIfGuaranteeOrder", "not ported in this pass: ordering with max.in.flight=1 is covered by the scenario tests"),
    ("RecordAccumulatorTest", "linger, memory, partitioners, splitting, draining per node (testLinger, testAppendLarge*, testPartialDrain, testStressfulSituation, testSplit*, testUniformBuiltInPartitioner, …)", "the linger.ms wait, buffer memory, partitioners and batch splitting are not modelled; appending to an open batch up to batch.size is (tests/fidelity3.rs: records_join_the_open_batch_and_expire_with_it)"),
];

#[derive(Default)]
struct ClassRow {
    cases: BTreeMap<String, bool>, // case -> every test citing it runs (not ignored)
    tests: usize,
    differences: Vec<String>,
    fixed: Vec<String>,
    ignored: Vec<String>,
}

struct Parsed {
    classes: BTreeMap<String, ClassRow>,
    tests: usize,
}

fn parse() -> Parsed {
    let mut classes: BTreeMap<String, ClassRow> = BTreeMap::new();
    let mut tests = 0;
    for (file, text) in SOURCES {
        let mut cites: Vec<(String, String)> = Vec::new();
        let mut diffs: Vec<String> = Vec::new();
        let mut fixes: Vec<String> = Vec::new();
        let mut ignore: Option<String> = None;
        let mut is_test = false;
        for line in text.lines() {
            let l = line.trim();
            if let Some(c) = l.strip_prefix("// Kafka: ") {
                let (class, method) = c
                    .split_once('.')
                    .unwrap_or_else(|| panic!("{file}: bad citation {c}"));
                cites.push((class.to_string(), method.to_string()));
            } else if let Some(d) = l.strip_prefix("// Difference: ") {
                diffs.push(d.to_string());
            } else if let Some(f) = l.strip_prefix("// Fixed: ") {
                fixes.push(f.to_string());
            } else if l == "#[test]" {
                is_test = true;
            } else if let Some(r) = l.strip_prefix("#[ignore = \"") {
                ignore = Some(r.trim_end_matches("\"]").to_string());
            } else if l.starts_with("fn ") && is_test {
                let name = l[3..].split('(').next().unwrap_or("").to_string();
                assert!(!cites.is_empty(), "{file}: test {name} cites no Kafka case");
                tests += 1;
                let mut seen_class = Vec::new();
                for (class, method) in &cites {
                    let row = classes.entry(class.clone()).or_default();
                    let runs = row.cases.entry(method.clone()).or_insert(true);
                    *runs &= ignore.is_none();
                    if !seen_class.contains(class) {
                        seen_class.push(class.clone());
                        row.tests += 1;
                        let method = cites
                            .iter()
                            .filter(|(c, _)| c == class)
                            .map(|(_, m)| m.as_str())
                            .collect::<Vec<_>>()
                            .join("`, `");
                        for d in &diffs {
                            row.differences.push(format!("`{method}` (`{name}`): {d}"));
                        }
                        for f in &fixes {
                            row.fixed.push(format!("`{method}` (`{name}`): {f}"));
                        }
                        if let Some(r) = &ignore {
                            row.ignored.push(format!("`{method}` (`{name}`): {r}"));
                        }
                    }
                }
                cites.clear();
                diffs.clear();
                fixes.clear();
                ignore = None;
                is_test = false;
            }
        }
    }
    Parsed { classes, tests }
}

pub fn render() -> String {
    let p = parse();
    let mut out = String::new();
    let total: usize = p.classes.values().map(|r| r.cases.len()).sum();
    let passing: usize = p
        .classes
        .values()
        .map(|r| r.cases.values().filter(|v| **v).count())
        .sum();
    out.push_str(&format!(
        "{total} Kafka test cases ({KAFKA_TRUNK}) ported as {} tests of ours; {passing} pass, {} are ignored (the test states Kafka's outcome and waits for a fix).\n\n",
        p.tests,
        total - passing
    ));
    out.push_str(
        "| Kafka test class | cases ported | passing | ignored | our tests | differences kept |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (class, r) in &p.classes {
        let pass = r.cases.values().filter(|v| **v).count();
        out.push_str(&format!(
            "| `{class}` | {} | {pass} | {} | {} | {} |\n",
            r.cases.len(),
            r.cases.len() - pass,
            r.tests,
            r.differences.len()
        ));
    }
    out.push_str("\nDifferences these cases found and this issue fixed in the core:\n\n");
    for (class, r) in &p.classes {
        for f in &r.fixed {
            out.push_str(&format!("- `{class}`: {f}\n"));
        }
    }
    out.push_str("\nDifferences kept, with their reason:\n\n");
    for (class, r) in &p.classes {
        for d in &r.differences {
            out.push_str(&format!("- `{class}`: {d}\n"));
        }
    }
    out.push_str(
        "\nIgnored (the test states Kafka's outcome and is `#[ignore]`d until the fix lands):\n\n",
    );
    let mut waiting = 0;
    for (class, r) in &p.classes {
        for i in &r.ignored {
            waiting += 1;
            out.push_str(&format!("- `{class}`: {i}\n"));
        }
    }
    if waiting == 0 {
        out.push_str("- none\n");
    }
    out.push_str("\nNot ported (out of scope, or not in this pass):\n\n");
    for (class, methods, reason) in NOT_PORTED {
        out.push_str(&format!("- `{class}`: {methods} — {reason}\n"));
    }
    out
}

const BEGIN: &str = "<!-- conformance-table:begin (generated by tests/conformance/table.rs) -->\n";
const END: &str = "<!-- conformance-table:end -->";
/// The book's chapter that shows the table (docs/book, built into www/book/).
const CHAPTER: &str = "docs/book/src/fidelity/conformance.md";

#[test]
fn book_table_matches_the_tests() {
    let path = format!("{}/{CHAPTER}", env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let table = render();
    let (Some(b), Some(e)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!("{CHAPTER} lacks the conformance table markers");
    };
    let current = &readme[b + BEGIN.len()..e];
    if current != table {
        if std::env::var_os("UPDATE_CONFORMANCE").is_some() {
            let updated = format!("{}{table}{}", &readme[..b + BEGIN.len()], &readme[e..]);
            std::fs::write(&path, updated).unwrap_or_else(|e| panic!("{path}: {e}"));
        } else {
            panic!(
                "{CHAPTER}'s conformance table is stale; run `UPDATE_CONFORMANCE=1 cargo test --test conformance book_table`.\nGenerated:\n{table}"
            );
        }
    }
}

#[test]
fn at_least_eighty_kafka_cases_are_ported_and_each_cites_a_known_class() {
    let p = parse();
    let total: usize = p.classes.values().map(|r| r.cases.len()).sum();
    assert!(total >= 80, "only {total} Kafka cases ported");
    for class in p.classes.keys() {
        assert!(class.ends_with("Test"), "{class} is not a Kafka test class");
    }
}

/// The method names a `NOT_PORTED` entry lists (its prose and wildcards left
/// out).
fn not_ported_names(methods: &str) -> Vec<String> {
    methods
        .split(',')
        .map(|m| m.trim().trim_start_matches('(').trim_end_matches(')'))
        .filter(|m| {
            (m.starts_with("test") || m.starts_with("should"))
                && !m.contains('*')
                && !m.contains(' ')
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn no_kafka_case_is_both_ported_and_listed_as_not_ported() {
    let p = parse();
    for (class, methods, _) in NOT_PORTED {
        let Some(row) = p.classes.get(*class) else {
            continue;
        };
        for name in not_ported_names(methods) {
            assert!(
                !row.cases.contains_key(&name),
                "{class}.{name} is ported and listed as not ported"
            );
        }
    }
}
