//! Sweeps over random fault schedules: where the configuration promises
//! durability nothing acknowledged is lost and no invariant breaks; the
//! pre-KIP-101 mode breaks that promise; other configurations lose data for
//! attributed reasons. (The 10,000-seed table is in the book: docs/book/src/cost/sweep-results.md.)

use failover_lab::sweep::{matrix, sweep, SweepConfig};

fn run(sets: &[(&str, &str)], seeds: u64) -> Vec<failover_lab::sweep::ConfigSummary> {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let configs = matrix(&sets).unwrap();
    sweep(&configs, 1, seeds, 2, &|_, _| {}).unwrap()
}

#[test]
fn configurations_that_promise_durability_lose_nothing_and_break_no_invariant() {
    let out = run(
        &[
            ("acks", "all"),
            ("min.insync.replicas", "2"),
            ("unclean", "false"),
        ],
        40,
    );
    for s in out.iter().filter(|s| s.promises_durability) {
        assert_eq!(
            s.lost, 0,
            "{}: first seed {:?}",
            s.key, s.first_seed_with_loss
        );
        assert_eq!(s.violations, 0, "{}: {:?}", s.key, s.violation_kinds);
        assert!(s.acked > 0);
    }
}

#[test]
fn pre_kip_101_truncation_breaks_the_promise_in_the_same_sweep() {
    let out = run(
        &[
            ("acks", "all"),
            ("min.insync.replicas", "2"),
            ("unclean", "false"),
            ("rf", "3"),
            ("sim.truncation", "high_watermark"),
        ],
        60,
    );
    let s = &out[0];
    assert!(s.promises_durability);
    assert!(s.violations > 0, "{s:?}");
    assert!(s.first_seed_with_violation.is_some());
}

#[test]
fn losses_outside_the_promise_are_attributed_to_their_cause() {
    let out = run(
        &[("acks", "1"), ("rf", "3"), ("min.insync.replicas", "1")],
        40,
    );
    let causes: Vec<&String> = out.iter().flat_map(|s| s.loss_causes.keys()).collect();
    assert!(causes.iter().any(|c| c.starts_with("acks=1")), "{causes:?}");
    assert!(
        causes.iter().any(|c| c.starts_with("unclean election")),
        "{causes:?}"
    );
}

#[test]
fn a_sweep_seed_replays_as_an_ordinary_scenario() {
    let cfg = SweepConfig::parse_key("acks=all,rf=3,min.isr=2,unclean=false").unwrap();
    let text = failover_lab::sweep::scenario(&cfg, 7).to_string();
    let a = failover_lab::sweep::run_one(&cfg, 7).unwrap();
    let mut lab = failover_lab::Lab::from_json(&text).unwrap();
    lab.run_to_end();
    assert_eq!(lab.report().acked_records_lost, a.lost);
    assert_eq!(
        lab.report().producers.iter().map(|p| p.acked).sum::<u64>(),
        a.acked
    );
}

/// Every sweep row carries how long its faults cost: recovery times of the
/// faults that took leaders away, unavailable partition-time per run, and
/// the runs' p99 produce latency, each as p50 ≤ p99 ≤ max.
#[test]
fn sweep_rows_carry_availability_next_to_durability() {
    let out = run(
        &[
            ("acks", "all"),
            ("min.insync.replicas", "2"),
            ("unclean", "false"),
            ("rf", "3"),
        ],
        8,
    );
    let a = &out[0].availability;
    for (name, s) in [
        ("rto_ms", &a.rto_ms),
        ("unavailable_ms", &a.unavailable_ms),
        ("produce_latency_p99_ms", &a.produce_latency_p99_ms),
    ] {
        let (p50, p99, max) = (s.p50.unwrap(), s.p99.unwrap(), s.max.unwrap());
        assert!(p50 <= p99 && p99 <= max, "{name}: {s:?}");
    }
    // Random crashes and isolations of leaders are detected by the session
    // timeout (9 s), which bounds the slowest recovery from below.
    assert!(a.rto_ms.max.unwrap() >= 9_000, "{a:?}");
    let table = failover_lab::sweep::table(&out);
    assert!(table.contains("rto s p50/max"), "{table}");
    let json = serde_json::to_value(&out[0]).unwrap();
    assert!(json["availability"]["unavailable_ms"]["p99"].is_u64());
}

#[test]
fn spread_uses_nearest_rank_and_is_null_when_empty() {
    use failover_lab::sweep::Spread;
    let s = Spread::of((1..=100).rev().collect());
    assert_eq!((s.p50, s.p99, s.max), (Some(50), Some(99), Some(100)));
    assert_eq!(Spread::of(vec![]).max, None);
}

#[test]
fn shards_over_disjoint_seeds_merge_into_exactly_the_rows_of_one_sweep() {
    use failover_lab::sweep::{matrix, merge_shards, shard_lines, summarize, sweep_runs};
    let sets: Vec<(String, String)> = [("rf", "3"), ("unclean", "false"), ("min.isr", "2")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let configs = matrix(&sets).unwrap();
    assert_eq!(configs.len(), 2, "acks 1 and all");
    let quiet = |_: usize, _: usize| {};
    let all = sweep_runs(&configs, 1, 8, 2, &quiet).unwrap();
    let a = sweep_runs(&configs, 1, 3, 2, &quiet).unwrap();
    let b = sweep_runs(&configs, 4, 5, 2, &quiet).unwrap();
    let one = serde_json::to_value(summarize(&configs, all)).unwrap();
    // Shards given in either order merge to the same rows, percentiles included.
    for shards in [
        vec![
            ("a".to_string(), shard_lines(&configs, &a)),
            ("b".to_string(), shard_lines(&configs, &b)),
        ],
        vec![
            ("b".to_string(), shard_lines(&configs, &b)),
            ("a".to_string(), shard_lines(&configs, &a)),
        ],
    ] {
        let merged = serde_json::to_value(merge_shards(&shards).unwrap()).unwrap();
        if shards[0].0 == "a" {
            assert_eq!(merged, one);
        } else {
            // Configurations keep the order of their first appearance; the rows match.
            let mut m = merged.as_array().unwrap().clone();
            let mut o = one.as_array().unwrap().clone();
            m.sort_by_key(|r| r["key"].as_str().unwrap_or("").to_string());
            o.sort_by_key(|r| r["key"].as_str().unwrap_or("").to_string());
            assert_eq!(m, o);
        }
    }
    let e = merge_shards(&[
        ("a".to_string(), shard_lines(&configs, &a)),
        ("a2".to_string(), shard_lines(&configs, &a)),
    ])
    .unwrap_err();
    assert!(e.contains("more than one shard"), "{e}");
}

/// Issue 25: the leader applies the effective min ISR, min(RF,
/// min.insync.replicas), so an RF 1 partition with min.insync.replicas=2
/// takes acks=all writes from its one replica; the availability accounting
/// uses the same minimum, so the sweep's `rf=1, min.isr=2` runs are exactly
/// as available as `rf=1, min.isr=1` (they were plotted unavailable for the
/// whole run).
#[test]
fn rf_1_with_min_isr_2_is_as_available_as_min_isr_1() {
    use failover_lab::sweep::{run_one, SweepConfig};
    let two = SweepConfig::parse_key("acks=all,rf=1,min.isr=2,unclean=false").unwrap();
    let one = SweepConfig::parse_key("acks=all,rf=1,min.isr=1,unclean=false").unwrap();
    for seed in 1..=5 {
        let (a, b) = (run_one(&two, seed).unwrap(), run_one(&one, seed).unwrap());
        assert_eq!(a.unavailable_ms, b.unavailable_ms, "seed {seed}");
        assert_eq!(a.acked, b.acked, "seed {seed}");
        assert!(
            a.unavailable_ms < 60_000,
            "seed {seed}: {}",
            a.unavailable_ms
        );
    }
}
