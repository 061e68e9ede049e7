//! Checkpoints written against older ones (`failover_lab::checkpoint`,
//! issue 27) give back exactly the world they were taken from: time travel
//! must not change what happens next (DESIGN.md "Determinism").

mod common;
use common::*;
use failover_lab::checkpoint::Checkpoint;

fn json(lab: &failover_lab::Lab) -> String {
    serde_json::to_string(&lab.report()).unwrap()
}

/// Checkpoints every `every` ms, each written against the one before it,
/// and a plain copy of the world beside each.
fn checkpoints(file: &str, every: u64) -> Vec<(Checkpoint, failover_lab::Lab)> {
    let mut world = scenario_file(file);
    let end = world.scenario.run_until_ms;
    let mut out: Vec<(Checkpoint, failover_lab::Lab)> = Vec::new();
    for t in (0..=end).step_by(every as usize) {
        world.cluster.run_until(t);
        let mut cp = Checkpoint::of(&mut world);
        if let Some((older, _)) = out.last() {
            cp.compact_against(older);
        }
        out.push((cp, world.clone()));
    }
    out
}

/// Each checkpoint, restored after the one it was written against is gone,
/// holds replica for replica what a plain copy of the world held at its
/// time (the same log chunks, the same producer state), and runs on to the
/// report the uninterrupted run gives, byte for byte. The scenarios cover
/// failovers, truncation on rejoin, unclean elections, restarts and a power
/// loss (tour 18), where replicas stop agreeing with their older copies,
/// and idempotent producers retrying through a failover, whose
/// de-duplication reads the state a rebuilt leader's log reads again from
/// its records.
#[test]
fn a_checkpoint_written_against_an_older_one_restores_the_world_exactly() {
    // (file, ms between checkpoints): the two clusters of hundreds of
    // partitions less often, to keep the test's time short.
    for (file, every) in [
        ("tour-11-mass-failover.json", 4_500),
        ("tour-3-leader-epoch.json", 700),
        ("tour-4-unclean-election.json", 700),
        ("tour-5-rejoining-leader.json", 700),
        ("tour-9-why-not-truncate-to-hw.json", 700),
        ("tour-18-rack-loss.json", 5_500),
        ("rack-failure.json", 700),
        ("producer-rediscovers-leader.json", 700),
        ("tour-7-acks1-loses-data.json", 700),
        ("tour-2-producer-finds-leader.json", 700),
    ] {
        let mut whole = scenario_file(file);
        whole.run_to_end();
        let end = json(&whole);
        let cps = checkpoints(file, every);
        let written: usize = cps.iter().map(|c| c.0.replicas_written_as_deltas()).sum();
        assert!(written > 0, "{file}: no replica was written as a delta");
        let indexed: usize = cps.iter().map(|c| parked_on(&c.1)).sum();
        assert!(indexed > 0, "{file}: no fetch was ever parked");
        // In time order: the one each was written against is dropped first.
        for (cp, plain) in cps {
            let t = cp.now();
            let mut restored = cp.restore();
            drop(cp);
            for (a, b) in restored.cluster.brokers.iter().zip(&plain.cluster.brokers) {
                assert_eq!(a.replicas.len(), b.replicas.len());
                // The checkpoint keeps no index of parked fetches: restore
                // builds the one the world had, list for list.
                assert_eq!(
                    a.fetch_waiters(),
                    b.fetch_waiters(),
                    "{file} at {t} ms: broker {}'s parked fetches were indexed otherwise",
                    a.id
                );
                for (x, y) in a.replicas.values().zip(b.replicas.values()) {
                    assert!(
                        x.same_as(y),
                        "{file} at {t} ms: broker {} partition {} was not rebuilt as it was",
                        a.id,
                        x.partition
                    );
                }
            }
            restored.run_to_end();
            assert_eq!(
                json(&restored),
                end,
                "{file}: restored at {t} ms, ran on differently"
            );
        }
    }
}

/// How many partitions of the world have a fetch parked on them.
fn parked_on(world: &failover_lab::Lab) -> usize {
    world
        .cluster
        .brokers
        .iter()
        .map(|b| {
            (0..b.replicas.len())
                .filter(|&s| !b.fetch_waiters().is_empty(s))
                .count()
        })
        .sum()
}

/// Between two checkpoints of a steady cluster every replica's log and HW
/// move, and nothing else: each one is written as a delta, and a second
/// compaction changes nothing.
#[test]
fn a_steady_clusters_replicas_are_all_written_as_deltas() {
    let mut world = scenario_file("tour-11-mass-failover.json");
    world.cluster.run_until(2_000);
    let older = Checkpoint::of(&mut world);
    world.cluster.run_until(3_000);
    let mut cp = Checkpoint::of(&mut world);
    let replicas: usize = world.cluster.brokers.iter().map(|b| b.replicas.len()).sum();
    let written = cp.compact_against(&older);
    assert!(
        written * 10 >= replicas * 9,
        "{written} of {replicas} replicas written as deltas"
    );
    assert_eq!(cp.compact_against(&older), 0);
    assert_eq!(cp.replicas_written_as_deltas(), written);
}
