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
//! The counter is the whole test binary's global allocator, so this file
//! holds one test: nothing else runs beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

/// Blocks freed, and blocks grown (a realloc may move the block, freeing
/// the old one).
static FREES: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        FREES.fetch_add(1, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        FREES.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
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
