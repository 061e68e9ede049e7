//! `failover-bench`: whole-workload timings and the failover-scaling sweep of
//! issue 6 (`make bench` runs it; numbers go to the README's Performance
//! section). Speed is reported here, never asserted.
//!
//! ```sh
//! failover-bench run scenarios/bench/medium.json [--until MS]     # one JSON line
//! failover-bench scaling --partitions 1000,5000,10000,20000 \
//!     --svg docs/failover-scaling.svg --json target/bench/scaling.json
//! failover-bench snapshot scenarios/bench/large.json --at 10000,30000,60000
//! ```

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}

/// Counts live heap bytes, so `snapshot` can say what a checkpoint (a deep
/// copy of the world) costs in memory.
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static GLOBAL: failover_lab::heap::Counting = failover_lab::heap::Counting;

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::process::ExitCode;
    use std::time::Instant;

    use clap::{Parser, Subcommand};
    use failover_lab::bench::{self, Workload};
    use failover_lab::Lab;
    use serde_json::json;

    #[derive(Parser)]
    #[command(name = "failover-bench", about = "Failover Lab benchmarks (issue 6)")]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Run one scenario file to its end; print wall time, sim-to-wall
        /// ratio, events, peak memory and per-phase timings as one JSON line.
        Run {
            file: String,
            /// Override the scenario's run_until_ms.
            #[arg(long)]
            until: Option<u64>,
        },
        /// Simulated recovery time (p50, max over the partitions) against the
        /// partitions led by the crashed broker, with the `sim.` cost model.
        Rto {
            /// Comma-separated counts of partitions led by the crashed broker.
            #[arg(long, default_value = "10,100,1000,5000,10000,20000")]
            led: String,
            #[arg(long)]
            svg: Option<String>,
        },
        /// What a checkpoint costs: at each simulated time, the bytes and wall
        /// ms of one snapshot of the world (the page's `snapshot()`; shared
        /// parts are not copied), the bytes it alone still holds once the
        /// world has run on for --diverge ms (copy-on-write copies: what
        /// keeping it really costs), and how fast the core replays (events
        /// per wall ms) up to there.
        Snapshot {
            file: String,
            /// Comma-separated simulated times (ms).
            #[arg(long, default_value = "10000,30000,60000")]
            at: String,
            /// How long the world runs on before the kept snapshot is dropped.
            #[arg(long, default_value_t = 1000)]
            diverge: u64,
            /// Also keep a checkpoint this many ms before each point and
            /// write the point's checkpoint against it, as the page does
            /// (`failover_lab::checkpoint`): what it alone holds then.
            #[arg(long)]
            compact_after: Option<u64>,
        },
        /// Failover cost against the number of partitions the dead broker led.
        Scaling {
            /// Comma-separated partition counts.
            #[arg(long, default_value = "1000,5000,10000,20000")]
            partitions: String,
            #[arg(long, default_value_t = 60)]
            brokers: u32,
            #[arg(long, default_value_t = 10_000)]
            records_per_sec: u64,
            /// When broker 1 crashes (simulated ms).
            #[arg(long, default_value_t = 5_000)]
            crash_at: u64,
            /// Length of the baseline and after-fencing windows (ms).
            #[arg(long, default_value_t = 2_000)]
            window: u64,
            /// Write the plot here.
            #[arg(long)]
            svg: Option<String>,
            /// Write the figures here as JSON.
            #[arg(long)]
            json: Option<String>,
        },
    }

    /// Peak resident set size of this process (Linux `VmHWM`), in KiB.
    fn peak_rss_kib() -> Option<u64> {
        let s = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    fn ms_since(t0: Instant) -> f64 {
        t0.elapsed().as_secs_f64() * 1e3
    }

    /// A comma-separated list of numbers given to `flag`.
    fn numbers<T: std::str::FromStr>(list: &str, flag: &str) -> Result<Vec<T>, String> {
        list.split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .map_err(|_| format!("{flag}: bad number {s:?}"))
            })
            .collect()
    }

    fn run(file: &str, until: Option<u64>) -> Result<(), String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let t0 = Instant::now();
        let mut lab = Lab::from_json(&text)?;
        let setup_ms = ms_since(t0);
        let end = until.unwrap_or(lab.scenario.run_until_ms);
        let busiest = bench::busiest_leader(&lab.cluster);
        let marks: Vec<(&str, u64)> = [
            ("0-20s steady", 20_000u64),
            ("20-40s broker down", 40_000),
            ("40-60s rejoin", 60_000),
        ]
        .into_iter()
        .map(|(n, t)| (n, t.min(end)))
        .chain(std::iter::once(("rest", end)))
        .filter(|(_, t)| *t > 0)
        .collect();
        let origin = Instant::now();
        let mut clock = || ms_since(origin);
        let phases = bench::run_phases(&mut lab, &marks, &mut clock);
        let wall_ms: f64 = phases.iter().map(|p| p.wall_ms).sum();
        let report = lab.report();
        let out = json!({
            "scenario": file,
            "partitions": lab.cluster.partitions.len(),
            "brokers": lab.cluster.brokers.len(),
            "busiest_leader_at_start": busiest,
            "setup_ms": setup_ms,
            "sim_ms": lab.cluster.now,
            "wall_ms": wall_ms,
            "sim_to_wall": lab.cluster.now as f64 / wall_ms.max(1e-9),
            "events": lab.cluster.events_processed,
            "events_per_sec": lab.cluster.events_processed as f64 / (wall_ms.max(1e-9) / 1e3),
            "peak_rss_kib": peak_rss_kib(),
            "trace_hash": report.trace_hash,
            "trace_events": lab.cluster.trace.len(),
            "acked_records_lost": report.acked_records_lost,
            "invariant_violations": report.invariant_violations.len(),
            "phases": phases.iter().filter(|p| p.to_ms > p.from_ms).collect::<Vec<_>>(),
        });
        println!("{out}");
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn scaling(
        partitions: &str,
        brokers: u32,
        records_per_sec: u64,
        crash_at: u64,
        window: u64,
        svg: Option<String>,
        json_out: Option<String>,
    ) -> Result<(), String> {
        let counts: Vec<u32> = numbers(partitions, "--partitions")?;
        let mut points = Vec::new();
        for n in counts {
            let w = Workload {
                crash_at_ms: crash_at,
                restart_at_ms: crash_at + 60_000,
                run_until_ms: crash_at + 60_000,
                ..Workload::standard(brokers, n, records_per_sec)
            };
            let mut lab = Lab::from_json(&w.to_json())?;
            let t0 = Instant::now();
            let mut clock = || ms_since(t0);
            let f = bench::measure_failover(
                &mut lab,
                w.victim,
                crash_at,
                window,
                crash_at + 30_000,
                &mut clock,
            );
            let total = ms_since(t0);
            eprintln!(
                "scaling: {n} partitions, broker {} led {}: fenced at {:?} ms, fencing event {:.2} ms wall ({} elections, {} metadata records); {} s after fencing: {} events in {:.0} ms wall (steady: {} events in {:.0} ms); slowest event {:.2} ms; {:.1} s wall in all",
                f.victim,
                f.led_by_victim,
                f.fenced_at_ms,
                f.fence_event_wall_ms,
                f.fence_event_elections,
                f.fence_event_metadata_records,
                window / 1000,
                f.after_fence.events,
                f.after_fence.wall_ms,
                f.baseline.events,
                f.baseline.wall_ms,
                f.max_event_wall_ms,
                total / 1e3
            );
            points.push(f);
        }
        let caption = format!(
            "{brokers} brokers, RF 3, {records_per_sec} records/s acks=all; broker 1 crashes at {} s; native release build",
            crash_at / 1000
        );
        if let Some(path) = svg {
            std::fs::write(&path, bench::failover_svg(&points, window, &caption))
                .map_err(|e| format!("{path}: {e}"))?;
            eprintln!("scaling: wrote {path}");
        }
        let out = json!({ "caption": caption, "window_ms": window, "points": points });
        if let Some(path) = json_out {
            std::fs::write(&path, format!("{out:#}\n")).map_err(|e| format!("{path}: {e}"))?;
            eprintln!("scaling: wrote {path}");
        }
        println!("{out}");
        Ok(())
    }

    fn rto(led: &str, svg: Option<String>) -> Result<(), String> {
        let mut points = Vec::new();
        for n in numbers::<u32>(led, "--led")? {
            let t0 = Instant::now();
            let p = bench::rto_point(n, "")?;
            eprintln!(
                "rto: {} led: p50 {} ms, max {} ms (detection {} + election {} + metadata {}); {:.1} s wall",
                p.led,
                p.p50_ms,
                p.max_ms,
                p.detection_ms,
                p.election_ms,
                p.metadata_ms,
                ms_since(t0) / 1e3
            );
            points.push(p);
        }
        let caption = "3 brokers, RF 3, default sim.* costs, no producers (writable = applied)";
        if let Some(path) = svg {
            std::fs::write(&path, bench::rto_svg(&points, caption))
                .map_err(|e| format!("{path}: {e}"))?;
            eprintln!("rto: wrote {path}");
        }
        println!("{}", json!({ "caption": caption, "points": points }));
        Ok(())
    }

    /// Heap bytes one clone of `x` allocates.
    fn bytes_of<T: Clone>(x: &T) -> usize {
        let before = failover_lab::heap::live();
        let copy = x.clone();
        let n = failover_lab::heap::live().saturating_sub(before);
        drop(copy);
        n
    }

    /// The bytes dropping `x` frees.
    fn freed_by<T>(x: T) -> usize {
        let before = failover_lab::heap::live();
        drop(x);
        before.saturating_sub(failover_lab::heap::live())
    }

    /// What each big part of `c` frees when taken out of it, in bytes: the
    /// replicas (the per-round state) apart from the rest of each broker
    /// (its per-partition tables), the producers, the trace, the
    /// acknowledged records.
    fn take_apart(c: &mut failover_lab::sim::Cluster) -> serde_json::Value {
        let replicas: usize = c
            .brokers
            .iter_mut()
            .map(|b| freed_by(std::mem::take(&mut b.replicas)))
            .sum();
        json!({
            "brokers_replicas": replicas,
            "brokers": freed_by(std::mem::take(&mut c.brokers)),
            "producers": freed_by(std::mem::take(&mut c.producers)),
            "trace": freed_by(std::mem::take(&mut c.trace)),
            "acked": freed_by(std::mem::take(&mut c.acked)),
        })
    }

    fn snapshot(
        file: &str,
        at: &str,
        diverge: u64,
        compact_after: Option<u64>,
    ) -> Result<(), String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let mut lab = Lab::from_json(&text)?;
        let mut points = Vec::new();
        for t in numbers::<u64>(at, "--at")? {
            if let Some(gap) = compact_after {
                points.push(compacted(&text, t, gap, diverge)?);
                continue;
            }
            let e0 = lab.cluster.events_processed;
            let t0 = Instant::now();
            lab.cluster.run_until(t);
            let replay_ms = ms_since(t0);
            let events = lab.cluster.events_processed - e0;
            let before = failover_lab::heap::live();
            let t1 = Instant::now();
            let copy = lab.clone();
            let clone_ms = ms_since(t1);
            let bytes = failover_lab::heap::live().saturating_sub(before);
            // What each part of the world adds to a snapshot.
            let c = &lab.cluster;
            let parts = json!({
                "brokers": bytes_of(&c.brokers),
                "brokers_replicas": c.brokers.iter().map(|b| bytes_of(&b.replicas)).sum::<usize>(),
                "controller": bytes_of(&c.controller),
                "producers": bytes_of(&c.producers),
                "trace": bytes_of(&c.trace),
                "acked": bytes_of(&c.acked),
                "invariants": bytes_of(&c.invariants),
                "availability": bytes_of(&c.availability),
                "partitions": bytes_of(&c.partitions),
            });
            // Run on, then drop the snapshot: what it frees is what it alone
            // held (its copies of everything the world changed meanwhile).
            lab.cluster.run_until(t + diverge);
            // Which replicas the world copied meanwhile (the snapshot's
            // version is no longer the live one), by role, and how many of
            // those kept their log end and high watermark.
            let mut copied = json!({});
            for (snap, live) in copy.cluster.brokers.iter().zip(&lab.cluster.brokers) {
                for p in 0..lab.cluster.partitions.len() {
                    let (Some(a), Some(b)) = (snap.replicas.get(&p), live.replicas.get(&p)) else {
                        continue;
                    };
                    let role = format!("{:?}", a.role).to_lowercase();
                    let mut count = |key: String| {
                        let n = copied[&key].as_u64().unwrap_or(0);
                        copied[key] = json!(n + 1);
                    };
                    count(format!("{role}s"));
                    if !std::ptr::eq(a, b) {
                        count(format!("{role}s_copied"));
                        if a.log.log_end_offset() == b.log.log_end_offset()
                            && a.log.high_watermark == b.log.high_watermark
                        {
                            count(format!("{role}s_copied_log_and_hw_unchanged"));
                        }
                    }
                }
            }
            let kept = failover_lab::heap::live();
            let mut copy = copy;
            let mut retained_parts = take_apart(&mut copy.cluster);
            let t2 = Instant::now();
            drop(copy);
            let drop_ms = ms_since(t2);
            let retained = kept.saturating_sub(failover_lab::heap::live());
            let listed: u64 = retained_parts
                .as_object()
                .map(|o| o.values().filter_map(|v| v.as_u64()).sum())
                .unwrap_or(0);
            retained_parts["rest"] = json!(retained as u64 - listed.min(retained as u64));
            let p = json!({
                "at_ms": t,
                "snapshot_bytes": bytes,
                "retained_bytes_after_diverge": retained,
                "retained_parts_bytes": retained_parts,
                "replicas_copied_after_diverge": copied,
                "diverge_ms": diverge,
                "snapshot_ms": clone_ms,
                "snapshot_parts_bytes": parts,
                "drop_ms": drop_ms,
                "live_bytes": before,
                "events": events,
                "events_per_wall_ms": events as f64 / replay_ms.max(1e-9),
            });
            eprintln!("snapshot: {p}");
            points.push(p);
        }
        // What the live world holds at the last point, part by part (the
        // world is taken apart: nothing runs after it).
        let mut live = take_apart(&mut lab.cluster);
        live["rest"] = json!(freed_by(lab));
        println!(
            "{}",
            json!({ "scenario": file, "points": points, "live_parts_bytes_at_last": live })
        );
        Ok(())
    }

    /// `snapshot --compact-after GAP`: checkpoints at `t - gap` and `t`, the
    /// second written against the first; what the second alone holds once
    /// the world has run on `diverge` ms, against a plain snapshot's.
    fn compacted(text: &str, t: u64, gap: u64, diverge: u64) -> Result<serde_json::Value, String> {
        use failover_lab::checkpoint::Checkpoint;
        // Each kind in a world of its own, beside the same older checkpoint,
        // so what the kept one shares with the world is counted alike.
        let mut p =
            json!({ "at_ms": t, "older_at_ms": t.saturating_sub(gap), "diverge_ms": diverge });
        for compact in [false, true] {
            let mut lab = Lab::from_json(text)?;
            lab.cluster.run_until(t.saturating_sub(gap));
            let older = Checkpoint::of(&mut lab);
            lab.cluster.run_until(t);
            let mut cp = Checkpoint::of(&mut lab);
            if compact {
                let t0 = Instant::now();
                p["replicas_written_as_deltas"] = json!(cp.compact_against(&older));
                p["compact_ms"] = json!(ms_since(t0));
                let t1 = Instant::now();
                let restored = cp.restore();
                p["restore_ms"] = json!(ms_since(t1));
                drop(restored);
            } else {
                let t1 = Instant::now();
                let restored = cp.restore();
                p["restore_plain_ms"] = json!(ms_since(t1));
                drop(restored);
            }
            lab.cluster.run_until(t + diverge);
            let before = failover_lab::heap::live();
            drop(cp);
            let alone = before.saturating_sub(failover_lab::heap::live());
            p[if compact {
                "retained_bytes_compacted"
            } else {
                "retained_bytes_plain"
            }] = json!(alone);
        }
        eprintln!("snapshot: {p}");
        Ok(p)
    }

    pub fn main() -> ExitCode {
        let result = match Cli::parse().command {
            Command::Snapshot {
                file,
                at,
                diverge,
                compact_after,
            } => snapshot(&file, &at, diverge, compact_after),
            Command::Rto { led, svg } => rto(&led, svg),
            Command::Run { file, until } => run(&file, until),
            Command::Scaling {
                partitions,
                brokers,
                records_per_sec,
                crash_at,
                window,
                svg,
                json,
            } => scaling(
                &partitions,
                brokers,
                records_per_sec,
                crash_at,
                window,
                svg,
                json,
            ),
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        }
    }
}
