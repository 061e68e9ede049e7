//! Same scenario + seed ⇒ the same trace, byte for byte (DESIGN.md "Determinism").

mod common;
use common::*;

#[test]
fn same_scenario_and_seed_give_the_same_trace_hash_run_after_run() {
    let a = {
        let mut l = scenario_file("leader-dies.json");
        l.run_to_end();
        l.report()
    };
    let b = {
        let mut l = scenario_file("leader-dies.json");
        l.run_to_end();
        l.report()
    };
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn a_different_seed_changes_network_timing_and_so_the_trace() {
    let mut a = scenario_file("leader-dies.json");
    let mut spec = (*a.scenario).clone();
    spec.spec.seed += 1;
    let mut b = failover_lab::Lab::new(spec);
    a.run_to_end();
    b.run_to_end();
    assert_ne!(a.report().trace_hash, b.report().trace_hash);
}

#[test]
fn a_cloned_world_replays_identically_which_is_what_time_travel_relies_on() {
    let mut a = scenario_file("leader-dies.json");
    a.cluster.run_until(12_000);
    let mut b = a.clone();
    a.run_to_end();
    b.run_to_end();
    assert_eq!(a.report().trace_hash, b.report().trace_hash);
}

/// Snapshots share the unchanged parts of the world (copy-on-write replicas,
/// chunked logs and ledgers, issue 14): running the world on — appends,
/// truncations, HW checkpoints, crashes, restarts — must leave a snapshot
/// exactly as it was. Each snapshot, run on to the end later, gives the same
/// report as the world itself and as a fresh run stopped at its time.
#[test]
fn a_snapshot_is_untouched_by_the_world_running_on_after_it() {
    for file in [
        "tour-3-leader-epoch.json",
        "tour-11-mass-failover.json",
        "tour-9-why-not-truncate-to-hw.json",
    ] {
        let mut world = scenario_file(file);
        let mut whole = scenario_file(file);
        whole.run_to_end();
        let end = serde_json::to_string(&whole.report()).unwrap();
        let mut snapshots = Vec::new();
        for t in (0..whole.report().end_ms).step_by(6_000) {
            world.cluster.run_until(t);
            snapshots.push((t, world.clone()));
        }
        world.run_to_end();
        assert_eq!(serde_json::to_string(&world.report()).unwrap(), end);
        for (t, snap) in snapshots {
            let mut fresh = scenario_file(file);
            fresh.cluster.run_until(t);
            assert_eq!(
                serde_json::to_string(&snap.report()).unwrap(),
                serde_json::to_string(&fresh.report()).unwrap(),
                "{file}: the snapshot at {t} ms changed after it was taken"
            );
            let mut snap = snap;
            snap.run_to_end();
            assert_eq!(
                serde_json::to_string(&snap.report()).unwrap(),
                end,
                "{file}: the snapshot at {t} ms did not replay to the same end"
            );
        }
    }
}

/// The page replays a long seek in slices of a few thousand events
/// (`runUntilBounded`, issue 63) so it answers input meanwhile: slices that
/// stop anywhere, even between two events of the same millisecond, must
/// build the world one `run_until` builds, event for event.
#[test]
fn a_replay_cut_into_bounded_slices_builds_the_same_world_as_one_run() {
    for (file, budgets) in [
        ("leader-dies.json", [1u64, 7, 500]),
        ("tour-11-mass-failover.json", [13, 997, 4096]),
    ] {
        let mut whole = scenario_file(file);
        let end = whole.scenario.run_until_ms;
        whole.cluster.run_until(end);
        for budget in budgets {
            let mut sliced = scenario_file(file);
            let mut slices = 0u64;
            while !sliced.cluster.run_until_bounded(end, budget) {
                slices += 1;
                assert!(
                    sliced.cluster.now <= end,
                    "a slice never runs past its target"
                );
            }
            assert!(
                slices > 0,
                "{file}: a budget of {budget} events cut the run"
            );
            assert_same_world(&sliced, &whole, &format!("{file}, slices of {budget}"));
        }
    }
}

/// A bounded run (the page's chunks, issue 63) ends a chunk right after a
/// wide event, whose work spans the cluster: a scenario step, a broker
/// applying metadata, a controller event that wrote records for
/// `WIDE_EVENT_PARTITIONS` partitions or more (a broker fenced, its
/// partitions' leaders elected). Stepped alongside one event at a time, no
/// chunk holds such an event before its last; on a world too small for the
/// last rule, every chunk but the final one ends with such an event (a
/// cheap one never ends it); and the chunks build the world one `run_until`
/// builds.
#[test]
fn a_bounded_run_stops_after_each_wide_event_and_builds_the_same_world() {
    use failover_lab::sim::cluster::WIDE_EVENT_PARTITIONS;
    let applied = |c: &failover_lab::sim::Cluster| -> Vec<u64> {
        c.brokers.iter().map(|b| b.metadata_offset).collect()
    };
    for name in ["leader-dies.json", "tour-11-mass-failover.json"] {
        let mut whole = scenario_file(name);
        let end = whole.scenario.run_until_ms;
        whole.cluster.run_until(end);
        let mut sliced = scenario_file(name);
        let mut stepped = scenario_file(name);
        let mut stops = Vec::new();
        let (mut updates, mut big_writes) = (0, 0);
        // With fewer partitions than that in all, no event touches that
        // many: every wide event is a step or shows in what is observed here.
        let small = sliced.cluster.partitions.len() < WIDE_EVENT_PARTITIONS;
        assert!(small || name != "leader-dies.json");
        loop {
            let done = sliced.cluster.run_until_bounded(end, u64::MAX);
            let n = sliced.cluster.events_processed - stepped.cluster.events_processed;
            let mut last_wide = false;
            for i in 1..=n {
                let (before, log) = (
                    applied(&stepped.cluster),
                    stepped.cluster.controller.metadata_log.len(),
                );
                assert!(stepped.cluster.step());
                let after = applied(&stepped.cluster);
                let moved = before.iter().zip(&after).filter(|(a, b)| a != b).count();
                let wrote = stepped.cluster.controller.metadata_log.len() - log;
                let wide = moved > 0 || wrote >= WIDE_EVENT_PARTITIONS;
                assert!(
                    !wide || i == n,
                    "{name}: the chunk ending at {} ms went on after event {i} of {n} \
                     (at {} ms: {moved} broker update(s), {wrote} records written)",
                    sliced.cluster.now,
                    stepped.cluster.now
                );
                updates += moved;
                big_writes += usize::from(wrote >= WIDE_EVENT_PARTITIONS);
                last_wide = wide;
            }
            if done {
                break;
            }
            let at = sliced.cluster.now;
            // And a cheap event never ends one: the page's chunks stay as
            // long as their budget.
            assert!(
                !small || last_wide || sliced.cluster.steps.iter().any(|s| s.0 == at),
                "{name}: a chunk of {n} events ended at {at} ms after an event that was not wide"
            );
            stops.push(at);
        }
        for (at, action) in &sliced.cluster.steps {
            assert!(
                stops.contains(at),
                "{name}: the run stopped after the step at {at} ms ({action:?}): {stops:?}"
            );
        }
        let brokers = sliced.cluster.brokers.len();
        assert!(
            updates >= 2 * brokers,
            "{name}: the brokers applied metadata: {updates} updates"
        );
        if name.contains("mass") {
            assert!(
                big_writes > 0,
                "{name}: a controller event wrote for many partitions"
            );
        }
        assert_same_world(&sliced, &whole, name);
    }
}

/// A run cut into bounded slices ended where one `run_until` ended: the
/// same clock, the same events, the same trace.
fn assert_same_world(sliced: &failover_lab::Lab, whole: &failover_lab::Lab, label: &str) {
    assert_eq!(sliced.cluster.now, whole.cluster.now, "{label}");
    assert_eq!(
        sliced.cluster.events_processed, whole.cluster.events_processed,
        "{label}"
    );
    assert_eq!(
        sliced.report().trace_hash,
        whole.report().trace_hash,
        "{label}"
    );
}

/// A broker's fault looks only at the partitions it hosts (`cluster.rs`'s
/// `hosted`), which is every partition it can lead or be in sync for only
/// because the controller never puts a broker into a leader, ISR or ELR
/// that is not one of the partition's replicas (KAFKA_REPLICATION.md §3: an
/// AlterPartition whose ISR is not ⊆ replicas is INVALID_REQUEST; §5:
/// elections pick among the replicas). Every shipped scenario but the
/// 20,000-partition one, and sweep runs with unclean elections, keep it
/// after every event.
#[test]
fn a_partitions_leader_isr_and_elr_stay_among_its_replicas_after_every_event() {
    let runs = shipped_scenarios_and_sweeps(&[
        ("acks=all,rf=3,min.isr=2,unclean=false", 3),
        ("acks=1,rf=3,min.isr=1,unclean=true", 7),
    ]);
    let mut elected = 0;
    for (name, text) in &runs {
        let mut l = lab(text);
        let end = l.scenario.run_until_ms;
        while l.cluster.next_event_time().is_some_and(|t| t <= end) {
            l.cluster.step();
            for (p, reg) in l.cluster.controller.partitions.iter().enumerate() {
                let among = |b: &u32| reg.replicas.contains(b);
                assert!(
                    reg.leader.iter().all(among)
                        && reg.isr.iter().all(among)
                        && reg.elr.iter().all(among)
                        && reg.last_known_elr.iter().all(among),
                    "{name} at {} ms: partition {p}'s {reg:?}",
                    l.cluster.now
                );
                elected += usize::from(reg.leader_epoch > 0);
            }
        }
    }
    assert!(elected > 0, "no run moved a leader");
}

/// The invariant checker looks only lightly at a partition that an event
/// changed by a leader's write at its log end or by acknowledgements
/// (`invariants::check`). Every shipped scenario (but one), and sweep runs with
/// unclean elections and acks=1 losses, give the same report — violations,
/// losses, trace — as a run that checks every touched partition in full.
/// Weak alone: their violations are found by checks in full that the
/// cluster itself asks for (a broker's start or stop, a controller's
/// change), so even every handler's touch made light passes here; the
/// lemma that makes the light look sound is
/// `invariants::tests::writing_at_the_end_finds_nothing_new`, which fails
/// on a write the light look may not take.
#[test]
fn the_light_check_of_grown_partitions_reports_what_the_full_check_reports() {
    let texts = shipped_scenarios_and_sweeps(&[
        ("acks=all,rf=3,min.isr=2,unclean=false", 1),
        ("acks=all,rf=3,min.isr=2,unclean=false", 42),
        ("acks=1,rf=3,min.isr=1,unclean=true", 5),
        ("acks=1,rf=3,min.isr=1,unclean=true", 7),
    ]);
    let (mut violations, mut lost) = (0, 0);
    for (name, text) in &texts {
        let mut light = lab(text);
        let mut full = lab(text);
        full.cluster.set_full_checks_only(true);
        light.run_to_end();
        full.run_to_end();
        let (a, b) = (light.report(), full.report());
        violations += b.invariant_violations.len();
        lost += b.acked_records_lost;
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap(),
            "{name}"
        );
    }
    // The comparison means something only if the full check finds things.
    assert!(violations > 0, "no run had a violation to compare");
    assert!(lost > 0, "no run lost an acknowledged record");
}

/// Every scenarios/*.json but the 20,000-partition tour (tens of seconds a
/// run; the identity script compares large.json's reports with main's), as
/// (path, text), in path order, then the sweep's scenario of each (settings
/// key, seed).
fn shipped_scenarios_and_sweeps(sweeps: &[(&str, u64)]) -> Vec<(String, String)> {
    let dir = format!("{}/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut texts: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| !p.display().to_string().contains("20000"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.display().to_string(), text)
        })
        .collect();
    texts.sort();
    for &(key, seed) in sweeps {
        let cfg = failover_lab::sweep::SweepConfig::parse_key(key).unwrap();
        let text = failover_lab::sweep::scenario(&cfg, seed).to_string();
        texts.push((format!("sweep {key} seed {seed}"), text));
    }
    texts
}
