//! Benchmark helpers (issue 6): the bench workloads as scenarios, a run split
//! into timed phases, and the measurement of one broker failover.
//!
//! Nothing here is a simulation rule: it only drives a [`Lab`] and reads its
//! counters. The wall clock is passed in as a closure returning milliseconds
//! (`std::time::Instant` natively, `performance.now()` in the page), so the
//! core itself never reads one and the helpers build for wasm too.

use serde::Serialize;
use serde_json::json;

use crate::sim::protocol::BrokerId;
use crate::sim::Cluster;
use crate::Lab;

/// The shape of a bench workload: one topic, RF 3, a steady acks=all producer;
/// broker `victim` crashes at `crash_at_ms` and restarts at `restart_at_ms`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Workload {
    pub brokers: u32,
    pub partitions: u32,
    pub records_per_sec: u64,
    pub victim: BrokerId,
    pub crash_at_ms: u64,
    pub restart_at_ms: u64,
    pub run_until_ms: u64,
}

impl Workload {
    /// The issue-6 shape (crash at 20 s, restart at 40 s, end at 60 s).
    pub fn standard(brokers: u32, partitions: u32, records_per_sec: u64) -> Workload {
        Workload {
            brokers,
            partitions,
            records_per_sec,
            victim: 1,
            crash_at_ms: 20_000,
            restart_at_ms: 40_000,
            run_until_ms: 60_000,
        }
    }

    /// The workload as scenario JSON (the format of `scenarios/bench/*.json`).
    pub fn to_json(&self) -> String {
        json!({
            "name": format!(
                "Bench: {} brokers, {} partitions, {} records/s",
                self.brokers, self.partitions, self.records_per_sec
            ),
            "seed": 1,
            "brokers": self.brokers,
            "config": { "min.insync.replicas": 2 },
            "topics": [ { "name": "bench", "partitions": self.partitions, "replication_factor": 3 } ],
            "clients": [ { "type": "producer", "id": "p1", "topic": "bench", "acks": "all",
                           "records_per_sec": self.records_per_sec } ],
            "steps": [ { "at_ms": self.crash_at_ms, "crash": self.victim },
                       { "at_ms": self.restart_at_ms, "restart": self.victim } ],
            "run_until_ms": self.run_until_ms,
        })
        .to_string()
    }
}

/// The broker leading the most partitions now (ties go to the lowest id).
pub fn busiest_leader(c: &Cluster) -> Option<(BrokerId, usize)> {
    let mut led = vec![0usize; c.brokers.len() + 1];
    for reg in &c.controller.partitions {
        if let Some(l) = reg.leader {
            if let Some(n) = led.get_mut(l as usize) {
                *n += 1;
            }
        }
    }
    led.iter()
        .enumerate()
        .skip(1)
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
        .map(|(b, n)| (b as BrokerId, *n))
}

/// Partitions whose current leader is `b`.
pub fn led_by(c: &Cluster, b: BrokerId) -> usize {
    c.controller
        .partitions
        .iter()
        .filter(|r| r.leader == Some(b))
        .count()
}

/// Work done while simulated time went from `from_ms` to `to_ms`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Phase {
    pub name: String,
    pub from_ms: u64,
    pub to_ms: u64,
    pub wall_ms: f64,
    pub events: u64,
    pub leader_elections: u64,
    pub metadata_records: u64,
}

fn counters(c: &Cluster) -> (u64, u64, u64) {
    (
        c.events_processed,
        c.controller.elections + c.controller.unclean_elections,
        c.controller.metadata_log.len() as u64,
    )
}

/// Run `lab` to each `(name, t)` mark in turn and report each phase.
pub fn run_phases(
    lab: &mut Lab,
    marks: &[(&str, u64)],
    clock: &mut dyn FnMut() -> f64,
) -> Vec<Phase> {
    let mut out = Vec::new();
    for (name, t) in marks {
        let from = lab.cluster.now;
        let (e0, l0, m0) = counters(&lab.cluster);
        let w0 = clock();
        lab.cluster.run_until(*t);
        let wall = clock() - w0;
        let (e1, l1, m1) = counters(&lab.cluster);
        out.push(Phase {
            name: (*name).to_string(),
            from_ms: from,
            to_ms: lab.cluster.now,
            wall_ms: wall,
            events: e1 - e0,
            leader_elections: l1 - l0,
            metadata_records: m1 - m0,
        });
    }
    out
}

/// One broker failover, measured event by event.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Failover {
    pub partitions: usize,
    pub brokers: usize,
    pub victim: BrokerId,
    /// Partitions the victim led just before it crashed.
    pub led_by_victim: usize,
    pub crash_at_ms: u64,
    /// When the controller fenced the victim (session timeout), if it did.
    pub fenced_at_ms: Option<u64>,
    /// Wall time of the one event in which the controller fenced the broker
    /// and elected new leaders for its partitions.
    pub fence_event_wall_ms: f64,
    pub fence_event_elections: u64,
    pub fence_event_metadata_records: u64,
    /// The `window_ms` before the crash (steady state) …
    pub baseline: Phase,
    /// … and the `window_ms` from the fencing on (elections, metadata
    /// propagation, clients' NOT_LEADER_OR_FOLLOWER + metadata refresh).
    pub after_fence: Phase,
    /// Slowest single event in the window after the fencing.
    pub max_event_wall_ms: f64,
}

/// Run `lab` (whose scenario crashes `victim` at `crash_at_ms`) until
/// `window_ms` after the controller fences the victim, timing every event
/// from `window_ms` before the crash on. Gives up at `give_up_ms`.
pub fn measure_failover(
    lab: &mut Lab,
    victim: BrokerId,
    crash_at_ms: u64,
    window_ms: u64,
    give_up_ms: u64,
    clock: &mut dyn FnMut() -> f64,
) -> Failover {
    let c = &mut lab.cluster;
    let start = crash_at_ms.saturating_sub(window_ms);
    c.run_until(start);
    let (e0, l0, m0) = counters(c);
    let w0 = clock();
    // Up to the crash (exclusive): the steady-state baseline.
    while c.next_event_time().is_some_and(|t| t < crash_at_ms) {
        c.step();
    }
    let (e1, l1, m1) = counters(c);
    let baseline = Phase {
        name: "baseline".into(),
        from_ms: start,
        to_ms: crash_at_ms,
        wall_ms: clock() - w0,
        events: e1 - e0,
        leader_elections: l1 - l0,
        metadata_records: m1 - m0,
    };
    let led_by_victim = led_by(c, victim);
    let fenced = |c: &Cluster| {
        c.controller
            .brokers
            .get(victim as usize - 1)
            .is_some_and(|s| s.fenced)
    };
    let mut out = Failover {
        partitions: c.partitions.len(),
        brokers: c.brokers.len(),
        victim,
        led_by_victim,
        crash_at_ms,
        baseline,
        ..Failover::default()
    };
    // Crash → fencing, one event at a time.
    while !fenced(c) && c.next_event_time().is_some_and(|t| t <= give_up_ms) {
        let before = counters(c);
        let w = clock();
        c.step();
        let dt = clock() - w;
        if fenced(c) && c.now >= crash_at_ms {
            let after = counters(c);
            out.fenced_at_ms = Some(c.now);
            out.fence_event_wall_ms = dt;
            out.fence_event_elections = after.1 - before.1;
            out.fence_event_metadata_records = after.2 - before.2;
        }
    }
    let Some(fenced_at) = out.fenced_at_ms else {
        return out;
    };
    // The window after the fencing.
    let (e0, l0, m0) = counters(c);
    let w0 = clock();
    let end = fenced_at + window_ms;
    let mut max_event = out.fence_event_wall_ms;
    while c.next_event_time().is_some_and(|t| t < end) {
        let w = clock();
        c.step();
        max_event = max_event.max(clock() - w);
    }
    let (e1, l1, m1) = counters(c);
    out.after_fence = Phase {
        name: "after_fence".into(),
        from_ms: fenced_at,
        to_ms: end,
        wall_ms: clock() - w0 + out.fence_event_wall_ms,
        events: e1 - e0 + 1,
        leader_elections: l1 - l0 + out.fence_event_elections,
        metadata_records: m1 - m0 + out.fence_event_metadata_records,
    };
    out.max_event_wall_ms = max_event;
    out
}

/// A small two-panel SVG plot of failover measurements against the number of
/// partitions the dead broker led: the fencing event's wall time, and the
/// events processed in the window after the fencing vs. the steady baseline.
pub fn failover_svg(points: &[Failover], window_ms: u64, caption: &str) -> String {
    const W: f64 = 330.0;
    const H: f64 = 230.0;
    const L: f64 = 62.0;
    const R: f64 = 14.0;
    const T: f64 = 34.0;
    const B: f64 = 44.0;
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let nice = |v: f64| {
        if v <= 0.0 {
            return 1.0;
        }
        let m = 10f64.powf(v.log10().floor());
        [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|k| k * m)
            .find(|x| *x >= v)
            .unwrap_or(10.0 * m)
    };
    let fmt = |v: f64| {
        if v >= 1e6 {
            format!("{:.1}M", v / 1e6)
        } else if v >= 1e3 {
            format!("{:.0}k", v / 1e3)
        } else if v >= 10.0 || v == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    let xmax = nice(
        points
            .iter()
            .map(|p| p.led_by_victim as f64)
            .fold(0.0, f64::max),
    );
    let mut svg = String::new();
    let total_w = 2.0 * W + 20.0;
    svg.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total_w}\" height=\"{}\" viewBox=\"0 0 {total_w} {}\" font-family=\"system-ui, sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
        H + 22.0,
        H + 22.0
    ));
    type Series<'a> = (&'a str, &'a str, Vec<(f64, f64)>);
    let panels: [(String, Vec<Series>); 2] = [
        (
            "Fencing event: controller elections (wall ms)".into(),
            vec![(
                "wall ms",
                "#D55E00",
                points
                    .iter()
                    .map(|p| (p.led_by_victim as f64, p.fence_event_wall_ms))
                    .collect(),
            )],
        ),
        (
            format!("Events in {} s: after fencing vs steady", window_ms / 1000),
            vec![
                (
                    "after fencing",
                    "#0072B2",
                    points
                        .iter()
                        .map(|p| (p.led_by_victim as f64, p.after_fence.events as f64))
                        .collect(),
                ),
                (
                    "steady (before crash)",
                    "#999999",
                    points
                        .iter()
                        .map(|p| (p.led_by_victim as f64, p.baseline.events as f64))
                        .collect(),
                ),
            ],
        ),
    ];
    for (i, (title, series)) in panels.iter().enumerate() {
        let ox = i as f64 * (W + 20.0);
        let ymax = nice(
            series
                .iter()
                .flat_map(|s| s.2.iter().map(|p| p.1))
                .fold(0.0, f64::max),
        );
        let px = |x: f64| ox + L + x / xmax * (W - L - R);
        let py = |y: f64| T + (1.0 - y / ymax) * (H - T - B);
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"16\" font-weight=\"bold\">{}</text>\n",
            ox + 8.0,
            esc(title)
        ));
        for k in 0..=4 {
            let y = ymax * k as f64 / 4.0;
            let x = xmax * k as f64 / 4.0;
            svg.push_str(&format!(
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#e5e5e5\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#555\">{}</text>\n",
                px(0.0), px(xmax), py(y), py(y), px(0.0) - 5.0, py(y) + 4.0, fmt(y)
            ));
            svg.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n",
                px(x),
                py(0.0) + 15.0,
                fmt(x)
            ));
        }
        svg.push_str(&format!(
            "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\n<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\n",
            px(0.0), px(xmax), py(0.0), py(0.0), px(0.0), px(0.0), py(0.0), py(ymax)
        ));
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#333\">partitions led by the crashed broker</text>\n",
            px(xmax / 2.0),
            py(0.0) + 32.0
        ));
        for (k, (label, colour, pts)) in series.iter().enumerate() {
            let path: Vec<String> = pts
                .iter()
                .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
                .collect();
            svg.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>\n",
                path.join(" ")
            ));
            for (x, y) in pts {
                svg.push_str(&format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{colour}\"><title>{}: {} at {} partitions led</title></circle>\n",
                    px(*x),
                    py(*y),
                    esc(label),
                    fmt(*y),
                    x
                ));
            }
            svg.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"3\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#333\">{}</text>\n",
                px(0.0) + 8.0,
                T + 2.0 + 14.0 * k as f64,
                px(0.0) + 22.0,
                T + 6.0 + 14.0 * k as f64,
                esc(label)
            ));
        }
    }
    svg.push_str(&format!(
        "<text x=\"8\" y=\"{}\" fill=\"#555\">{}</text>\n</svg>\n",
        H + 14.0,
        esc(caption)
    ));
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_leader_of_the_round_robin_assignment_is_broker_1() {
        let lab = Lab::from_json(&Workload::standard(7, 20, 100).to_json()).unwrap();
        // 20 partitions over 7 brokers: brokers 1..=6 lead 3, broker 7 leads 2.
        assert_eq!(busiest_leader(&lab.cluster), Some((1, 3)));
    }

    #[test]
    fn a_failover_is_measured_from_the_crash_to_after_the_fencing() {
        // Brokers unfence after their first heartbeats (~2 s): crash later.
        let w = Workload {
            crash_at_ms: 5_000,
            restart_at_ms: 19_000,
            run_until_ms: 20_000,
            ..Workload::standard(3, 6, 100)
        };
        let mut lab = Lab::from_json(&w.to_json()).unwrap();
        let mut t = 0.0;
        let mut clock = || {
            t += 1.0;
            t
        };
        let f = measure_failover(&mut lab, 1, 5_000, 1_000, 20_000, &mut clock);
        assert_eq!(f.led_by_victim, 2);
        let fenced = f
            .fenced_at_ms
            .expect("the controller fences the crashed broker");
        assert!(fenced > 5_000 && fenced < 16_000, "fenced at {fenced}");
        assert!(f.fence_event_elections >= 2);
        assert!(f.after_fence.events > 0 && f.baseline.events > 0);
        let svg = failover_svg(&[f], 1_000, "test");
        assert!(svg.starts_with("<svg") && svg.contains("polyline"));
    }
}

/// One point of the RTO plot: a broker leading `led` partitions crashes.
#[derive(Clone, Debug, Serialize)]
pub struct RtoPoint {
    pub led: usize,
    pub p50_ms: u64,
    pub max_ms: u64,
    pub detection_ms: u64,
    pub election_ms: u64,
    pub metadata_ms: u64,
}

/// A three-broker, RF 3 cluster where broker 1 leads `led` partitions (no
/// producers: a partition counts as writable once its new leader applied the
/// change), broker 1 crashing at 1 s; the per-partition recovery times.
pub fn rto_point(led: u32, costs: &str) -> Result<RtoPoint, String> {
    let text = format!(
        r#"{{"name": "rto {led}", "seed": 1, "brokers": 3, "config": {{ {costs} }},
            "topics": [{{"name": "t", "partitions": {}, "replication_factor": 3}}],
            "steps": [{{"at_ms": 1000, "crash": 1}}], "run_until_ms": 14000}}"#,
        led * 3
    );
    let mut lab = crate::Lab::from_json(&text)?;
    lab.run_to_end();
    let f = lab
        .cluster
        .availability
        .faults()
        .first()
        .ok_or("no fault recorded")?;
    let mut per = f.partition_rto_ms();
    per.sort_unstable();
    let r = f.recovery();
    Ok(RtoPoint {
        led: f.partitions().count(),
        p50_ms: per
            .get(per.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(0),
        max_ms: per.last().copied().unwrap_or(0),
        detection_ms: r.phases.detection_ms.unwrap_or(0),
        election_ms: r.phases.election_ms.unwrap_or(0),
        metadata_ms: r.phases.metadata_ms.unwrap_or(0),
    })
}

/// RTO (p50, max) against the partitions the failed broker led, log x axis.
pub fn rto_svg(points: &[RtoPoint], caption: &str) -> String {
    const W: f64 = 560.0;
    const H: f64 = 300.0;
    const L: f64 = 64.0;
    const R: f64 = 16.0;
    const T: f64 = 36.0;
    const B: f64 = 58.0;
    let xs: Vec<f64> = points
        .iter()
        .map(|p| (p.led.max(1) as f64).log10())
        .collect();
    let (x0, x1) = (1.0f64, xs.iter().cloned().fold(2.0, f64::max).ceil());
    let ymax = points.iter().map(|p| p.max_ms).max().unwrap_or(1) as f64;
    let ymin = points.iter().map(|p| p.p50_ms).min().unwrap_or(0) as f64;
    let lo = (ymin / 500.0).floor() * 500.0;
    let hi = ((ymax / 500.0).ceil() * 500.0).max(lo + 500.0);
    let px = |x: f64| L + (x - x0) / (x1 - x0).max(1e-9) * (W - L - R);
    let py = |y: f64| T + (1.0 - (y - lo) / (hi - lo)) * (H - T - B);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-family=\"system-ui, sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n<text x=\"{L}\" y=\"18\" font-size=\"13\" font-weight=\"600\">Simulated recovery time after a leader crash</text>\n"
    );
    let steps = 5;
    for i in 0..=steps {
        let v = lo + (hi - lo) * i as f64 / steps as f64;
        let y = py(v);
        s.push_str(&format!("<line x1=\"{L}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.1} s</text>\n", W - R, L - 6.0, y + 4.0, v / 1000.0));
    }
    let mut d = x0 as i32;
    while d as f64 <= x1 {
        let x = px(d as f64);
        let label = match d {
            1 => "10".to_string(),
            2 => "100".into(),
            3 => "1,000".into(),
            4 => "10,000".into(),
            5 => "100,000".into(),
            _ => format!("1e{d}"),
        };
        s.push_str(&format!("<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{T}\" y2=\"{}\" stroke=\"#eee\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{label}</text>\n", H - B, H - B + 16.0));
        d += 1;
    }
    s.push_str(&format!("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">partitions led by the crashed broker (log scale)</text>\n", (L + W - R) / 2.0, H - B + 32.0));
    for (name, color, f) in [
        (
            "max",
            "#c0392b",
            (|p: &RtoPoint| p.max_ms) as fn(&RtoPoint) -> u64,
        ),
        ("p50", "#2471a3", |p: &RtoPoint| p.p50_ms),
    ] {
        let pts: Vec<String> = points
            .iter()
            .zip(&xs)
            .map(|(p, x)| format!("{:.1},{:.1}", px(*x), py(f(p) as f64)))
            .collect();
        s.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
            pts.join(" ")
        ));
        for p in &pts {
            let (a, b) = p.split_once(',').unwrap_or(("0", "0"));
            s.push_str(&format!(
                "<circle cx=\"{a}\" cy=\"{b}\" r=\"3\" fill=\"{color}\"/>"
            ));
        }
        let last = pts.last().cloned().unwrap_or_default();
        let (a, b) = last.split_once(',').unwrap_or(("0", "0"));
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" fill=\"{color}\" text-anchor=\"end\">{name}</text>\n",
            a.parse::<f64>().unwrap_or(0.0) - 6.0,
            b.parse::<f64>().unwrap_or(0.0) - 6.0
        ));
    }
    let esc = caption.replace('&', "&amp;").replace('<', "&lt;");
    s.push_str(&format!(
        "<text x=\"{L}\" y=\"{}\" fill=\"#555\">{esc}</text>\n</svg>\n",
        H - 8.0
    ));
    s
}
