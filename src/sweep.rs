//! Sweeps: many seeds × random, seeded fault schedules over a matrix of
//! configurations, with the invariants checked throughout.
//!
//! Each run is an ordinary scenario (so any seed can be replayed with the CLI or
//! opened in the browser): a topic with two partitions, a steady producer with
//! the configuration's `acks`, a consumer, and a fault schedule drawn from the
//! seed — crashes and restarts, isolations and heals, slow followers, controlled
//! shutdowns, and (only where the configuration does not promise durability)
//! power losses. At most `max(RF − 1, 1)` brokers are down at once: fewer
//! simultaneous failures than the ISR can absorb. At the end every broker comes
//! back and the cluster is given time to converge.
//!
//! Where the configuration promises durability (acks=all, min.insync.replicas
//! ≥ 2, clean election, RF ≥ 2) a single lost acknowledged record or invariant
//! violation is a bug in the simulation. Elsewhere losses are expected results
//! and are attributed to their cause.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::sim::trace::TraceKind;
use crate::Lab;

pub const RUN_UNTIL_MS: u64 = 45_000;
const FAULTS_UNTIL_MS: u64 = 30_000;

/// One point of the configuration matrix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepConfig {
    pub acks: String,
    pub min_insync_replicas: u32,
    pub unclean_leader_election_enable: bool,
    pub replication_factor: u32,
    /// Other settings fixed with `--set` (e.g. `sim.truncation`).
    pub extra: BTreeMap<String, Value>,
}

impl SweepConfig {
    pub fn promises_durability(&self) -> bool {
        self.acks == "all"
            && self.min_insync_replicas >= 2
            && !self.unclean_leader_election_enable
            && self.replication_factor >= 2
    }

    /// A short, parseable name: `acks=all,rf=3,min.isr=2,unclean=false`.
    pub fn key(&self) -> String {
        let mut s = format!(
            "acks={},rf={},min.isr={},unclean={}",
            self.acks,
            self.replication_factor,
            self.min_insync_replicas,
            self.unclean_leader_election_enable
        );
        for (k, v) in &self.extra {
            s.push_str(&format!(
                ",{k}={}",
                v.as_str().map_or(v.to_string(), str::to_string)
            ));
        }
        s
    }

    pub fn parse_key(key: &str) -> Result<SweepConfig, String> {
        let mut c = SweepConfig {
            acks: "all".into(),
            min_insync_replicas: 2,
            unclean_leader_election_enable: false,
            replication_factor: 3,
            extra: BTreeMap::new(),
        };
        for part in key.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("config \"{part}\": expected key=value"))?;
            c.set(k.trim(), v.trim())?;
        }
        Ok(c)
    }

    fn set(&mut self, k: &str, v: &str) -> Result<(), String> {
        let num = |v: &str| {
            v.parse::<u32>()
                .map_err(|_| format!("{k}={v}: expected a number"))
        };
        match k {
            "acks" => {
                if !["0", "1", "all", "-1"].contains(&v) {
                    return Err(format!("acks={v}: expected 0, 1 or all"));
                }
                self.acks = if v == "-1" { "all".into() } else { v.into() };
            }
            "rf" | "replication.factor" | "replication_factor" => {
                let rf = num(v)?;
                if !(1..=5).contains(&rf) {
                    return Err(format!("{k}={v}: expected 1..=5"));
                }
                self.replication_factor = rf;
            }
            "min.isr" | "min.insync.replicas" => {
                let m = num(v)?;
                if m == 0 {
                    return Err(format!("{k}={v}: must be at least 1"));
                }
                self.min_insync_replicas = m;
            }
            "unclean" | "unclean.leader.election.enable" => {
                self.unclean_leader_election_enable = match v {
                    "true" => true,
                    "false" => false,
                    _ => return Err(format!("{k}={v}: expected true or false")),
                }
            }
            other => {
                let value = json_value(v);
                self.extra.insert(other.to_string(), value);
            }
        }
        Ok(())
    }
}

/// The default matrix (acks 1/all × min ISR 1/2 × unclean on/off × RF 1–5),
/// with every `--set key=value` fixing its dimension or adding a setting.
pub fn matrix(sets: &[(String, String)]) -> Result<Vec<SweepConfig>, String> {
    let mut out = Vec::new();
    for rf in 1..=5u32 {
        for acks in ["1", "all"] {
            for min_isr in [1u32, 2] {
                for unclean in [false, true] {
                    let mut c = SweepConfig {
                        acks: acks.into(),
                        min_insync_replicas: min_isr,
                        unclean_leader_election_enable: unclean,
                        replication_factor: rf,
                        extra: BTreeMap::new(),
                    };
                    for (k, v) in sets {
                        c.set(k, v)?;
                    }
                    if !out.contains(&c) {
                        out.push(c);
                    }
                }
            }
        }
    }
    Ok(out)
}

fn pick(rng: &mut Pcg64Mcg, n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        rng.next_u64() % n
    }
}

/// The scenario of run `seed` under `cfg`: deterministic in both.
pub fn scenario(cfg: &SweepConfig, seed: u64) -> Value {
    let mut rng = Pcg64Mcg::new(0x005e_ed0f_5eed ^ (u128::from(seed) << 7) | 1);
    let rf = cfg.replication_factor;
    let brokers = rf.max(3);
    let max_down = (rf.saturating_sub(1)).max(1) as usize;
    let mut config = serde_json::Map::new();
    config.insert("min.insync.replicas".into(), json!(cfg.min_insync_replicas));
    config.insert(
        "unclean.leader.election.enable".into(),
        json!(cfg.unclean_leader_election_enable),
    );
    config.insert("replica.lag.time.max.ms".into(), json!(10_000));
    for (k, v) in &cfg.extra {
        config.insert(k.clone(), v.clone());
    }
    let assignment = crate::sim::round_robin_assignment(brokers, 2, rf);
    let mut steps = Vec::new();
    // state per broker: 0 up, 1 crashed, 2 isolated, 3 shut down
    let mut state = vec![0u8; brokers as usize + 1];
    let mut slow: Vec<(u32, u32)> = Vec::new();
    let mut t = 1_500 + pick(&mut rng, 2_000);
    while t < FAULTS_UNTIL_MS {
        let b = 1 + pick(&mut rng, u64::from(brokers)) as u32;
        let down = state.iter().filter(|s| **s != 0).count();
        let step = match (state[b as usize], pick(&mut rng, 10)) {
            (0, k) if down < max_down && k < 4 => {
                state[b as usize] = 1;
                if !cfg.promises_durability() && k == 0 {
                    json!({"at_ms": t, "power_loss": b})
                } else {
                    json!({"at_ms": t, "crash": b})
                }
            }
            (0, k) if down < max_down && k < 6 => {
                state[b as usize] = 2;
                json!({"at_ms": t, "isolate": b})
            }
            (0, 6) if down < max_down => {
                state[b as usize] = 3;
                json!({"at_ms": t, "shutdown": b})
            }
            (0, _) => {
                let p = pick(&mut rng, 2) as u32;
                if !assignment[p as usize].contains(&b) {
                    t += 300 + pick(&mut rng, 2_000);
                    continue;
                }
                if let Some(i) = slow.iter().position(|x| *x == (b, p)) {
                    slow.remove(i);
                    json!({"at_ms": t, "unslow": {"broker": b, "topic": "t", "partition": p}})
                } else {
                    slow.push((b, p));
                    json!({"at_ms": t, "slow": {"broker": b, "topic": "t", "partition": p}})
                }
            }
            (2, _) => {
                state[b as usize] = 0;
                json!({"at_ms": t, "heal": b})
            }
            (_, _) => {
                state[b as usize] = 0;
                json!({"at_ms": t, "restart": b})
            }
        };
        steps.push(step);
        t += 300 + pick(&mut rng, 5_000);
    }
    // Everything comes back; the cluster gets time to converge.
    for b in 1..=brokers {
        match state[b as usize] {
            2 => steps.push(json!({"at_ms": FAULTS_UNTIL_MS, "heal": b})),
            1 | 3 => steps.push(json!({"at_ms": FAULTS_UNTIL_MS, "restart": b})),
            _ => {}
        }
    }
    for (b, p) in slow {
        steps.push(json!({"at_ms": FAULTS_UNTIL_MS, "unslow": {"broker": b, "topic": "t", "partition": p}}));
    }
    json!({
        "name": format!("sweep seed {seed} ({})", cfg.key()),
        "description": "A random fault schedule generated by failover-lab sweep.",
        "seed": seed,
        "brokers": brokers,
        "config": Value::Object(config),
        "topics": [{"name": "t", "partitions": 2, "replication_factor": rf}],
        "clients": [
            {"type": "producer", "id": "p", "topic": "t", "acks": cfg.acks, "records_per_sec": 40,
             "config": {"request.timeout.ms": 5000, "delivery.timeout.ms": 20000}},
            {"type": "consumer", "id": "c", "topic": "t"}
        ],
        "steps": steps,
        "run_until_ms": RUN_UNTIL_MS
    })
}

/// What one run produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub seed: u64,
    pub acked: u64,
    pub lost: u64,
    pub violations: Vec<String>,
    pub loss_causes: Vec<String>,
    /// Recovery time of every fault that took leaders away and recovered.
    pub rto_ms: Vec<u64>,
    /// Summed over the partitions.
    pub unavailable_ms: u64,
    pub produce_latency_p99_ms: Option<u64>,
    /// The report's `delivery`, summed over the producers: records sent,
    /// held twice by a partition (a retry without idempotence), read twice
    /// by one consumer, committed but never read, and failed yet written.
    #[serde(default)]
    pub sent: u64,
    #[serde(default)]
    pub written_twice: u64,
    #[serde(default)]
    pub consumed_twice: u64,
    #[serde(default)]
    pub never_consumed: u64,
    #[serde(default)]
    pub failed_but_written: u64,
    /// Read more than once within one group (the delivery's `reread`: a
    /// hand-over, a restart or a reset).
    #[serde(default)]
    pub reread: u64,
    /// Never consumed because a position jumped over them (the delivery's
    /// `skip_causes`): by auto.offset.reset, and by a start at a committed
    /// offset nobody had read up to. The rest of `never_consumed` is unread.
    #[serde(default)]
    pub skipped_by_reset: u64,
    #[serde(default)]
    pub skipped_by_commit: u64,
}

/// Coarse cause of a loss, from the narrated cause in the trace.
fn cause_class(cause: &str) -> String {
    if cause.starts_with("unclean election") {
        "unclean election".into()
    } else if cause.starts_with("election of the last known leader") {
        "last known leader elected (KIP-966)".into()
    } else if cause.starts_with("acks=1") {
        "acks=1: leader died before replication".into()
    } else if cause.starts_with("power loss") {
        "power loss (unflushed records)".into()
    } else if cause.starts_with("pre-KIP-101") {
        "pre-KIP-101 truncation to the high watermark".into()
    } else {
        cause.to_string()
    }
}

pub fn run_one(cfg: &SweepConfig, seed: u64) -> Result<RunOutcome, String> {
    let text = scenario(cfg, seed).to_string();
    let mut lab = Lab::from_json(&text)?;
    lab.run_to_end();
    let report = lab.report();
    // Name the causes of records still lost at the end only: while a dead
    // leader is still registered, its unreplicated records count as lost
    // until a replica that has them is elected, and that is no loss.
    let lost_at_end: Vec<(&str, u32)> = report
        .partitions
        .iter()
        .filter(|p| p.acked_records_lost > 0)
        .map(|p| (p.topic.as_str(), p.partition))
        .collect();
    let mut loss_causes: Vec<String> = lab
        .cluster
        .trace
        .events()
        .filter_map(|e| match &e.kind {
            TraceKind::AckedRecordsLost {
                topic,
                partition,
                cause,
                ..
            } if lost_at_end.contains(&(topic.as_str(), *partition)) => Some(cause_class(cause)),
            _ => None,
        })
        .collect();
    loss_causes.sort();
    loss_causes.dedup();
    Ok(RunOutcome {
        seed,
        acked: report.producers.iter().map(|p| p.acked).sum(),
        lost: report.acked_records_lost,
        violations: report
            .invariant_violations
            .iter()
            .map(|v| v.invariant.clone())
            .collect(),
        loss_causes,
        rto_ms: report
            .availability
            .faults
            .iter()
            .filter(|f| !f.partitions.is_empty())
            .filter_map(|f| f.rto_ms)
            .collect(),
        unavailable_ms: report.availability.unavailable_ms,
        produce_latency_p99_ms: report.availability.produce_latency_ms.p99,
        sent: report.delivery.iter().map(|d| d.sent).sum(),
        written_twice: report.delivery.iter().map(|d| d.written_twice.count).sum(),
        consumed_twice: report.delivery.iter().map(|d| d.consumed_twice.count).sum(),
        never_consumed: report.delivery.iter().map(|d| d.never_consumed.count).sum(),
        reread: report.delivery.iter().map(|d| d.reread.count).sum(),
        skipped_by_reset: report
            .delivery
            .iter()
            .map(|d| d.skip_causes.reset.count)
            .sum(),
        skipped_by_commit: report
            .delivery
            .iter()
            .map(|d| d.skip_causes.commit.count)
            .sum(),
        failed_but_written: report
            .delivery
            .iter()
            .map(|d| d.failed_but_written.count)
            .sum(),
    })
}

/// p50, p99 and max of a set of values (nearest rank); nulls when empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Spread {
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub max: Option<u64>,
}

impl Spread {
    pub fn of(mut v: Vec<u64>) -> Spread {
        v.sort_unstable();
        let rank = |q: f64| {
            let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1)) - 1;
            v.get(i).copied()
        };
        Spread {
            p50: rank(0.50),
            p99: rank(0.99),
            max: v.last().copied(),
        }
    }
}

/// How long the faults of a configuration's runs cost.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SweepAvailability {
    /// Over every fault of every run that took leaders away.
    pub rto_ms: Spread,
    /// Per run, summed over partitions.
    pub unavailable_ms: Spread,
    /// Per run, the p99 produce latency.
    pub produce_latency_p99_ms: Spread,
}

/// Totals for one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigSummary {
    pub config: SweepConfig,
    pub key: String,
    pub promises_durability: bool,
    pub runs: u64,
    pub acked: u64,
    pub lost: u64,
    pub runs_with_loss: u64,
    pub violations: u64,
    pub first_seed_with_loss: Option<u64>,
    pub first_seed_with_violation: Option<u64>,
    pub loss_causes: BTreeMap<String, u64>,
    pub violation_kinds: BTreeMap<String, u64>,
    pub availability: SweepAvailability,
    /// Delivery totals over the runs (see [`RunOutcome`]): the duplicate rate
    /// is `written_twice / sent`, the skip rate `never_consumed / sent`,
    /// the re-read rate `reread / sent`, the jumped-over rate
    /// `(skipped_by_reset + skipped_by_commit) / sent`.
    pub sent: u64,
    pub written_twice: u64,
    pub consumed_twice: u64,
    pub never_consumed: u64,
    pub failed_but_written: u64,
    pub reread: u64,
    pub skipped_by_reset: u64,
    pub skipped_by_commit: u64,
}

/// Run `seeds` seeds (from `first_seed`) of every configuration on `threads`
/// threads and summarise them per configuration. `progress(done, total)` is
/// called as runs finish.
pub fn sweep(
    configs: &[SweepConfig],
    first_seed: u64,
    seeds: u64,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<ConfigSummary>, String> {
    let runs = sweep_runs(configs, first_seed, seeds, threads, progress)?;
    Ok(summarize(configs, runs))
}

/// Every run's outcome, as (configuration index, outcome), sorted by
/// configuration then seed: what a shard writes (`sweep --format jsonl`).
pub fn sweep_runs(
    configs: &[SweepConfig],
    first_seed: u64,
    seeds: u64,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<(usize, RunOutcome)>, String> {
    let jobs: Vec<(usize, u64)> = (0..configs.len())
        .flat_map(|c| (first_seed..first_seed + seeds).map(move |s| (c, s)))
        .collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, RunOutcome)>> = Mutex::new(Vec::with_capacity(jobs.len()));
    let error: Mutex<Option<String>> = Mutex::new(None);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(&(c, seed)) = jobs.get(i) else { break };
        match run_one(&configs[c], seed) {
            Ok(o) => {
                if let Ok(mut r) = results.lock() {
                    r.push((c, o));
                }
            }
            Err(e) => {
                if let Ok(mut slot) = error.lock() {
                    slot.get_or_insert(e);
                }
            }
        }
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(d, jobs.len());
    };
    if threads <= 1 {
        // On the calling thread: wasm32 (the explorer's Web Workers) has no
        // std threads, and one thread needs no scope.
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        });
    }
    if let Some(e) = error.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut results = results
        .into_inner()
        .map_err(|_| "a sweep worker panicked")?;
    results.sort_by_key(|(c, o)| (*c, o.seed));
    Ok(results)
}

/// Totals per configuration from run outcomes (any order): one sweep, or the
/// union of shards ([`merge_shards`]) — the same rows either way.
pub fn summarize(
    configs: &[SweepConfig],
    mut results: Vec<(usize, RunOutcome)>,
) -> Vec<ConfigSummary> {
    results.sort_by_key(|(c, o)| (*c, o.seed));
    let mut out: Vec<ConfigSummary> = configs
        .iter()
        .map(|c| ConfigSummary {
            config: c.clone(),
            key: c.key(),
            promises_durability: c.promises_durability(),
            runs: 0,
            acked: 0,
            lost: 0,
            runs_with_loss: 0,
            violations: 0,
            first_seed_with_loss: None,
            first_seed_with_violation: None,
            loss_causes: BTreeMap::new(),
            violation_kinds: BTreeMap::new(),
            availability: SweepAvailability::default(),
            sent: 0,
            written_twice: 0,
            consumed_twice: 0,
            never_consumed: 0,
            reread: 0,
            skipped_by_reset: 0,
            skipped_by_commit: 0,
            failed_but_written: 0,
        })
        .collect();
    let mut samples: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)> = vec![Default::default(); configs.len()];
    for (c, o) in results {
        let (rto, unavailable, latency) = &mut samples[c];
        rto.extend(&o.rto_ms);
        unavailable.push(o.unavailable_ms);
        latency.extend(o.produce_latency_p99_ms);
        let s = &mut out[c];
        s.runs += 1;
        s.acked += o.acked;
        s.lost += o.lost;
        s.sent += o.sent;
        s.written_twice += o.written_twice;
        s.consumed_twice += o.consumed_twice;
        s.never_consumed += o.never_consumed;
        s.reread += o.reread;
        s.skipped_by_reset += o.skipped_by_reset;
        s.skipped_by_commit += o.skipped_by_commit;
        s.failed_but_written += o.failed_but_written;
        if o.lost > 0 {
            s.runs_with_loss += 1;
            s.first_seed_with_loss.get_or_insert(o.seed);
        }
        if !o.violations.is_empty() {
            s.violations += o.violations.len() as u64;
            s.first_seed_with_violation.get_or_insert(o.seed);
        }
        for cause in o.loss_causes {
            *s.loss_causes.entry(cause).or_default() += 1;
        }
        for v in o.violations {
            *s.violation_kinds.entry(v).or_default() += 1;
        }
    }
    for (s, (rto, unavailable, latency)) in out.iter_mut().zip(samples) {
        s.availability = SweepAvailability {
            rto_ms: Spread::of(rto),
            unavailable_ms: Spread::of(unavailable),
            produce_latency_p99_ms: Spread::of(latency),
        };
    }
    out
}

/// One line of a shard: a configuration's key and one run's outcome.
#[derive(Serialize, Deserialize)]
pub struct ShardLine {
    pub key: String,
    pub run: RunOutcome,
}

/// The shard lines of `runs` (`sweep --format jsonl`), one JSON object a line.
pub fn shard_lines(configs: &[SweepConfig], runs: &[(usize, RunOutcome)]) -> String {
    runs.iter()
        .filter_map(|(c, o)| {
            let line = ShardLine {
                key: configs.get(*c)?.key(),
                run: o.clone(),
            };
            serde_json::to_string(&line).ok()
        })
        .map(|l| l + "\n")
        .collect()
}

/// Merge shards (each the text of a `sweep --format jsonl` output) into the
/// rows a single sweep over the union of their seeds gives. Configurations
/// keep the order of their first appearance; the same seed of the same
/// configuration in two shards is an error.
pub fn merge_shards(shards: &[(String, String)]) -> Result<Vec<ConfigSummary>, String> {
    let mut configs: Vec<SweepConfig> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    let mut runs: Vec<(usize, RunOutcome)> = Vec::new();
    let mut seen: std::collections::BTreeSet<(usize, u64)> = Default::default();
    for (name, text) in shards {
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let l: ShardLine = serde_json::from_str(line)
                .map_err(|e| format!("{name}:{}: not a sweep shard line: {e}", n + 1))?;
            let c = match keys.iter().position(|k| *k == l.key) {
                Some(c) => c,
                None => {
                    configs.push(
                        SweepConfig::parse_key(&l.key)
                            .map_err(|e| format!("{name}:{}: {e}", n + 1))?,
                    );
                    keys.push(l.key.clone());
                    keys.len() - 1
                }
            };
            if !seen.insert((c, l.run.seed)) {
                return Err(format!(
                    "{name}:{}: seed {} of {} is in more than one shard",
                    n + 1,
                    l.run.seed,
                    l.key
                ));
            }
            runs.push((c, l.run));
        }
    }
    Ok(summarize(&configs, runs))
}

/// `part` of `whole` as a percentage with two decimals ("-" of nothing).
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    let hundredths = (part as u128 * 10_000 / whole as u128) as u64;
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

/// `ms` in seconds with one decimal, exactly as `format!("{:.1}", ms as f64
/// / 1000.0)` prints it (the quotient rounded to the nearest f64, then to the
/// nearest tenth, ties to even), in integers: the trade-off explorer's wasm
/// then links no float formatting (core's, about 18 kB).
fn seconds_to_tenths(ms: u64) -> String {
    let x = ms as f64 / 1000.0;
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let (mantissa, e) = if exp == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), exp - 1075)
    };
    // 10x = 10 * mantissa * 2^e, rounded to an integer, half to even.
    let ten = 10 * mantissa as u128;
    let tenths = if e >= 0 {
        ten << e
    } else {
        let k = (-e) as u32;
        if k > 120 {
            0
        } else {
            let q = ten >> k;
            let r = ten & ((1u128 << k) - 1);
            let half = 1u128 << (k - 1);
            q + u128::from(r > half || (r == half && q % 2 == 1))
        }
    };
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// The sweep as a plain-text table.
/// Durability on the left, availability on the right: recovery time per
/// fault (p50 / max), unavailable partition-ms per run (p50 / max) and the
/// runs' p99 produce latency (p50 / max), in seconds.
pub fn table(summaries: &[ConfigSummary]) -> String {
    let mut s = format!(
        "{:<44} {:>8} {:>6} {:>10} {:>8} {:>9} {:>10} {:>15} | {:>13} {:>17} {:>17} | {:>7} {:>7} {:>8} {:>9}\n",
        "config",
        "promises",
        "runs",
        "acked",
        "lost",
        "loss runs",
        "violations",
        "first seed",
        "rto s p50/max",
        "unavail s p50/max",
        "p99 lat s p50/max",
        "dup %",
        "skip %",
        "reread %",
        "skipped %"
    );
    for c in summaries {
        let first = match (c.first_seed_with_violation, c.first_seed_with_loss) {
            (Some(v), _) => format!("violation {v}"),
            (None, Some(l)) => format!("loss {l}"),
            (None, None) => "-".into(),
        };
        let secs = |x: &Spread| {
            let f = |v: Option<u64>| v.map_or("-".to_string(), seconds_to_tenths);
            format!("{}/{}", f(x.p50), f(x.max))
        };
        let a = &c.availability;
        s.push_str(&format!(
            "{:<44} {:>8} {:>6} {:>10} {:>8} {:>9} {:>10} {:>15} | {:>13} {:>17} {:>17} | {:>7} {:>7} {:>8} {:>9}\n",
            c.key,
            if c.promises_durability { "yes" } else { "no" },
            c.runs,
            c.acked,
            c.lost,
            c.runs_with_loss,
            c.violations,
            first,
            secs(&a.rto_ms),
            secs(&a.unavailable_ms),
            secs(&a.produce_latency_p99_ms),
            percent(c.written_twice, c.sent),
            percent(c.never_consumed, c.sent),
            percent(c.reread, c.sent),
            percent(c.skipped_by_reset + c.skipped_by_commit, c.sent)
        ));
        for (cause, n) in &c.loss_causes {
            s.push_str(&format!("{:<44}   loss cause: {cause} ({n} runs)\n", ""));
        }
        for (kind, n) in &c.violation_kinds {
            s.push_str(&format!("{:<44}   violation: {kind} ({n})\n", ""));
        }
    }
    s
}

/// A config value as JSON: a whole number or a boolean when it reads as one,
/// else the text (the sweep's `--set` values, an imported config's values).
pub(crate) fn json_value(v: &str) -> Value {
    match v {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => v
            .parse::<u64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's seconds print as Rust's float formatting did, ties and
    /// near-ties included (0.25 s is "0.2", 1.05 s "1.1", 0.15 s "0.1").
    #[test]
    fn seconds_print_with_one_decimal_exactly_as_float_formatting_does() {
        let big = (0..2000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 60));
        for ms in (0..3_000_000u64)
            .chain(big)
            .chain([u64::MAX, 1 << 53, (1 << 53) + 1])
        {
            assert_eq!(
                seconds_to_tenths(ms),
                format!("{:.1}", ms as f64 / 1000.0),
                "{ms} ms"
            );
        }
        assert_eq!(seconds_to_tenths(250), "0.2");
        assert_eq!(seconds_to_tenths(150), "0.1");
        assert_eq!(seconds_to_tenths(1050), "1.1");
    }

    #[test]
    fn config_keys_round_trip() {
        let c = SweepConfig::parse_key(
            "acks=1,rf=2,min.isr=1,unclean=true,sim.truncation=high_watermark",
        )
        .unwrap();
        assert_eq!(SweepConfig::parse_key(&c.key()).unwrap(), c);
        assert!(!c.promises_durability());
        assert!(
            SweepConfig::parse_key("acks=all,rf=3,min.isr=2,unclean=false")
                .unwrap()
                .promises_durability()
        );
    }

    #[test]
    fn default_matrix_has_forty_configurations_and_set_fixes_a_dimension() {
        assert_eq!(matrix(&[]).unwrap().len(), 40);
        let m = matrix(&[("acks".into(), "all".into())]).unwrap();
        assert_eq!(m.len(), 20);
        assert!(m.iter().all(|c| c.acks == "all"));
    }

    /// One thread runs inline (the explorer's Web Workers have no threads);
    /// the outcomes and their order are the threaded sweep's.
    #[test]
    fn sweep_runs_on_one_thread_equals_the_threaded_sweep() {
        let configs = matrix(&[("rf".into(), "3".into()), ("acks".into(), "1".into())]).unwrap();
        let one = sweep_runs(&configs[..2], 5, 2, 1, &|_, _| {}).unwrap();
        let many = sweep_runs(&configs[..2], 5, 2, 3, &|_, _| {}).unwrap();
        assert_eq!(one.len(), 4);
        assert_eq!(one, many);
        assert_eq!(shard_lines(&configs, &one), shard_lines(&configs, &many));
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule() {
        let c = SweepConfig::parse_key("").unwrap();
        assert_eq!(scenario(&c, 42), scenario(&c, 42));
        assert_ne!(scenario(&c, 42), scenario(&c, 43));
    }

    /// A cause is named only for records still lost when the run ends: a
    /// leader that died with unreplicated records counts them as lost until a
    /// replica that has them is elected, and that passing count is not a loss
    /// (KAFKA_REPLICATION.md §8: acknowledged loss is judged on the final log).
    #[test]
    fn loss_causes_are_named_only_for_records_lost_at_the_end() {
        let c = SweepConfig::parse_key("acks=1,rf=2,min.isr=1,unclean=false").unwrap();
        let mut transient = 0;
        for seed in 1..=10 {
            let o = run_one(&c, seed).unwrap();
            if o.lost == 0 {
                assert!(
                    o.loss_causes.is_empty(),
                    "seed {seed}: {:?} with nothing lost",
                    o.loss_causes
                );
            } else {
                assert!(
                    !o.loss_causes.is_empty(),
                    "seed {seed}: {} lost without a cause",
                    o.lost
                );
            }
            transient += usize::from(o.lost == 0);
        }
        assert!(transient > 0);
    }
}
