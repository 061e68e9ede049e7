//! What a steady run allocates (issue 27, point 1: messages and events
//! without per-event allocation). A produce request is built by the
//! producer, taken apart by the leader and answered back; its vectors (the
//! batch's record ids and send times, the request's batches and records, the
//! partitions it went to, the answer's per-partition results) go back to the
//! cluster's `io::Buffers` instead of the allocator, and the fetch path keeps
//! its own spares per broker. So once a cluster is warm, replicating a record
//! leaves nothing for the allocator to take back: this counts every block
//! the process frees (or moves, growing it) while the cluster runs a steady
//! load, and holds it below one per ten records. What it allocates and keeps
//! is the state the load builds (each replica's log grows a chunk every
//! eight records, the producer's ledger of acknowledged records a chunk
//! every sixteen), not garbage.
//!
//! It also holds what a checkpoint of the world copies: only the cluster,
//! not the scenario it was built from.
//!
//! The counters are the whole test binary's global allocator, so its tests
//! take turns (`ALONE`): nothing else runs beside the one counting.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use failover_lab::checkpoint::Checkpoint;

struct Counting;

/// Blocks freed, and blocks grown (a realloc may move the block, freeing
/// the old one).
static FREES: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated and not yet freed.
static LIVE: AtomicU64 = AtomicU64::new(0);
/// Held by the test that is counting.
static ALONE: Mutex<()> = Mutex::new(());

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        FREES.fetch_add(1, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        FREES.fetch_add(1, Ordering::Relaxed);
        LIVE.fetch_add(new_size as u64, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The bytes `make` allocates and keeps, with what it made.
fn kept_by<T>(make: impl FnOnce() -> T) -> (u64, T) {
    let before = LIVE.load(Ordering::Relaxed);
    let x = make();
    (LIVE.load(Ordering::Relaxed).saturating_sub(before), x)
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const STEADY: &str = r#"{
  "name": "steady load",
  "seed": 3,
  "brokers": 3,
  "config": { "min.insync.replicas": 2 },
  "topics": [ { "name": "t", "partitions": 30, "replication_factor": 3 } ],
  "clients": [
    { "type": "producer", "id": "all", "topic": "t", "acks": "all", "records_per_sec": 2000 },
    { "type": "producer", "id": "one", "topic": "t", "acks": "1", "records_per_sec": 1000 }
  ],
  "steps": [],
  "run_until_ms": 10000
}"#;

#[test]
fn a_warm_cluster_replicates_a_steady_load_without_garbage_per_record() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let mut lab = match failover_lab::Lab::from_json(STEADY) {
        Ok(lab) => lab,
        Err(e) => panic!("the scenario loads: {e}"),
    };
    // Warm up: every partition has its leader, its followers' fetch
    // sessions, its producer state and a few batches behind it.
    lab.cluster.run_until(4_000);
    let acked_before = lab.report().producers.iter().map(|p| p.acked).sum::<u64>();
    let before = FREES.load(Ordering::Relaxed);
    lab.cluster.run_until(6_000);
    let freed = FREES.load(Ordering::Relaxed) - before;
    let acked = lab.report().producers.iter().map(|p| p.acked).sum::<u64>() - acked_before;
    // The window saw its records through: 3,000 a second for 2 s.
    assert!(acked >= 5_900, "acknowledged in the window: {acked}");
    // Before the produce path kept its buffers: seven and a half blocks a
    // record (43,143 here). Now ~340: a fetch buffer grown for a longer
    // read, a broker's spares overflowing its sixteen, a histogram bucket.
    assert!(
        freed * 10 < acked,
        "{freed} blocks freed or grown for {acked} records acknowledged (at most one per 10 records)"
    );
}

/// A checkpoint is a copy of the cluster and nothing more: the scenario it
/// was built from never changes, and is shared. Its spec lists every
/// partition's replicas, so copying it with each checkpoint cost 1.9 MB of
/// the 20,000-partition bench's (issue 27); on the 3,000-partition bench it
/// was 296 KB. The rest of a checkpoint (a few settings) is well under 4 KB.
#[test]
fn a_checkpoint_copies_the_cluster_and_shares_the_scenario() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let text = match std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/bench/medium.json"
    )) {
        Ok(t) => t,
        Err(e) => panic!("the bench scenario reads: {e}"),
    };
    let mut lab = match failover_lab::Lab::from_json(&text) {
        Ok(lab) => lab,
        Err(e) => panic!("the scenario loads: {e}"),
    };
    lab.cluster.run_until(500);
    let (cluster, copy) = kept_by(|| lab.cluster.clone());
    drop(copy);
    // The index of parked fetches by partition is rebuilt on restore, so a
    // checkpoint keeps the cluster without it (the live world keeps its own).
    let (index, indexes) = kept_by(|| {
        let brokers = &lab.cluster.brokers;
        brokers
            .iter()
            .map(|b| b.fetch_waiters().clone())
            .collect::<Vec<_>>()
    });
    let before = indexes.clone();
    drop(indexes);
    assert!(index > 0);
    let (checkpoint, cp) = kept_by(|| Checkpoint::of(&mut lab));
    assert!(
        checkpoint + index < cluster + 4096,
        "a checkpoint keeps {checkpoint} bytes where a copy of the cluster without its {index} bytes of fetch index keeps {}",
        cluster - index
    );
    let after: Vec<_> = lab
        .cluster
        .brokers
        .iter()
        .map(|b| b.fetch_waiters().clone())
        .collect();
    assert!(after == before, "the live world's fetch index changed");
    assert!(std::rc::Rc::ptr_eq(&cp.restore().scenario, &lab.scenario));
}
