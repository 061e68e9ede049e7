//! Criterion benchmarks over the workloads of `scenarios/bench/` (issue 6): a
//! steady acks=all producer; the broker leading the most partitions crashes at
//! 20 s, restarts at 40 s; the run ends at 60 s of simulated time.
//!
//! Each sample builds the lab outside the timed region and times
//! `run_to_end()`. Speed is reported here, never asserted in a test.
//!
//! Environment knobs (used by `make bench`):
//! - `BENCH_WORKLOADS=small,medium,large` which workloads (default: all three);
//! - `BENCH_UNTIL_MS=N` caps the simulated horizon (default: the file's 60 s),
//!   for a quick run while the large workload is slow.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use failover_lab::Lab;

fn scenario_text(name: &str) -> String {
    let path = format!("{}/scenarios/bench/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn workloads(c: &mut Criterion) {
    let wanted = std::env::var("BENCH_WORKLOADS").unwrap_or_else(|_| "small,medium,large".into());
    let until: Option<u64> = std::env::var("BENCH_UNTIL_MS")
        .ok()
        .and_then(|v| v.parse().ok());
    let mut group = c.benchmark_group("workload");
    for name in ["small", "medium", "large"] {
        if !wanted.split(',').any(|w| w.trim() == name) {
            continue;
        }
        let text = scenario_text(name);
        let template = Lab::from_json(&text).unwrap_or_else(|e| panic!("{name}.json: {e}"));
        let end = until.unwrap_or(template.scenario.run_until_ms);
        // Throughput in simulated milliseconds: criterion prints "elem/s" =
        // simulated ms per wall second, i.e. 1000 × the sim-to-wall ratio.
        group.throughput(Throughput::Elements(end));
        match name {
            "small" => group
                .sample_size(30)
                .measurement_time(Duration::from_secs(5)),
            _ => group
                .sample_size(10)
                .measurement_time(Duration::from_secs(1)),
        };
        group.bench_function(format!("{name}/{}ms", end), |b| {
            b.iter_batched(
                || template.clone(),
                |mut lab| {
                    lab.cluster.run_until(end);
                    lab.cluster.events_processed
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, workloads);
criterion_main!(benches);
