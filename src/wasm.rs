//! The browser boundary: a thin `#[wasm_bindgen]` façade over [`crate::Lab`].
//! No simulation rule lives here. Errors become JS `Error`s carrying the same
//! messages as the CLI; `console_error_panic_hook` reports any panic we did not
//! foresee instead of a bare "unreachable".

use wasm_bindgen::prelude::*;

use crate::Lab;

/// Counts live heap bytes so the page can tell what a time-travel checkpoint
/// costs and keep checkpoints under a memory cap (`WasmLab.heapBytes`).
#[global_allocator]
static GLOBAL: crate::heap::Counting = crate::heap::Counting;

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
    #[cfg(feature = "web-sys-marks")]
    web_sys::console::debug_1(&"failover-lab: wasm core started".into());
}

/// A `performance.mark`/`measure` pair around `f`, from Rust (measurement
/// build `web-sys-marks` only; the page marks from JS).
#[cfg(feature = "web-sys-marks")]
fn marked<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let perf = web_sys::window().and_then(|w| w.performance());
    if let Some(p) = &perf {
        let _ = p.mark(&format!("{name}:start"));
    }
    let out = f();
    if let Some(p) = &perf {
        let _ = p.measure_with_start_mark(name, &format!("{name}:start"));
    }
    out
}

/// Views cross the boundary as JSON text parsed by the engine's `JSON.parse`:
/// one serializer (serde_json, which the core needs anyway) instead of a
/// second one per view type keeps the wasm smaller, and one large string is
/// cheaper to hand over than thousands of property sets.
/// Measured against serde-wasm-bindgen (README, "serde-wasm-bindgen and
/// web-sys"; scripts/bench-serde.sh): this way is smaller and, from a few
/// hundred objects on, faster.
#[cfg(not(feature = "swb-only"))]
fn to_js<T: serde::Serialize>(v: &T) -> Result<JsValue, JsError> {
    let text = serde_json::to_string(v).map_err(|e| JsError::new(&e.to_string()))?;
    js_sys::JSON::parse(&text).map_err(|_| JsError::new("JSON.parse failed on a view"))
}

/// The same objects built by serde-wasm-bindgen (JSON-compatible: maps as
/// plain objects, None as null), for the measurement builds only.
#[cfg(feature = "swb-compare")]
fn to_js_swb<T: serde::Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&e.to_string()))
}

#[cfg(feature = "swb-only")]
fn to_js<T: serde::Serialize>(v: &T) -> Result<JsValue, JsError> {
    to_js_swb(v)
}

/// Accept a JSON string or a plain JS object.
fn json_text(v: &JsValue) -> Result<String, JsError> {
    if let Some(s) = v.as_string() {
        return Ok(s);
    }
    js_sys::JSON::stringify(v)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| JsError::new("expected a JSON string or an object"))
}

/// A scenario from JSON text with a compare lane's `KEY=VALUE,…` settings
/// applied, and the settings as applied (`WasmLab.withSettings`).
fn with_lane_settings(
    scenario: &str,
    settings: &str,
) -> Result<(crate::Scenario, crate::Settings), JsError> {
    let v = serde_json::from_str(scenario).map_err(|e| JsError::new(&e.to_string()))?;
    let pairs = crate::settings::parse_lane(settings).map_err(|e| JsError::new(&e))?;
    Lab::scenario_with_settings(v, &pairs).map_err(|e| JsError::new(&e))
}

/// A scenario from JSON text, with a compare lane's settings applied when
/// there are any (`WasmLab.unstarted`, `WasmLab.fromSnapshot`): none, and
/// it is the scenario as written, with no settings.
#[cfg(feature = "snapshot")]
fn scenario_with_settings(
    scenario: &str,
    settings: Option<&str>,
) -> Result<(crate::Scenario, crate::Settings), JsError> {
    match settings {
        None => Ok((
            crate::scenario::parse(scenario).map_err(|e| JsError::new(&e))?,
            Default::default(),
        )),
        Some(s) => with_lane_settings(scenario, s),
    }
}

#[wasm_bindgen]
pub struct WasmLab {
    lab: Lab,
    /// The next part of the cluster's start to run (`WasmLab.unstarted`,
    /// `startParts`); None once started.
    #[cfg_attr(not(feature = "explorer"), allow(dead_code))]
    starting: Option<usize>,
}

/// A checkpoint the page seeks from (`WasmLab.checkpoint()`).
#[wasm_bindgen]
pub struct WasmCheckpoint {
    cp: crate::checkpoint::Checkpoint,
}

#[wasm_bindgen]
impl WasmCheckpoint {
    /// Keep the replicas an older checkpoint also has as its copies plus
    /// what moved since (once; returns how many replicas).
    #[wasm_bindgen(js_name = compactAgainst)]
    pub fn compact_against(&mut self, older: &WasmCheckpoint) -> u32 {
        self.cp.compact_against(&older.cp) as u32
    }

    /// The world as it was at the checkpoint, to run on from.
    pub fn restore(&self) -> WasmLab {
        WasmLab {
            lab: self.cp.restore(),
            starting: None,
        }
    }
}

#[wasm_bindgen]
impl WasmLab {
    /// Build a lab from a scenario (JSON text or object).
    #[wasm_bindgen(constructor)]
    pub fn new(scenario: JsValue) -> Result<WasmLab, JsError> {
        let text = json_text(&scenario)?;
        let lab = Lab::from_json(&text).map_err(|e| JsError::new(&e))?;
        Ok(WasmLab {
            lab,
            starting: None,
        })
    }

    /// Build a lab from scenario JSON text with compare-lane settings applied
    /// first, by the rules of
    /// the CLI's `run --set` (`settings`: `KEY=VALUE,…`; empty: none), so a
    /// lane's report equals `failover-lab run FILE --set …`, trace hash and
    /// `settings` included.
    #[wasm_bindgen(js_name = withSettings)]
    pub fn with_settings(scenario: &str, settings: &str) -> Result<WasmLab, JsError> {
        let (scenario, applied) = with_lane_settings(scenario, settings)?;
        let mut lab = Lab::new(scenario);
        lab.settings = applied;
        Ok(WasmLab {
            lab,
            starting: None,
        })
    }

    /// Whether scenario JSON text loads, with `settings` as `withSettings`
    /// takes them (none: as `new` loads it), without building its cluster:
    /// throws what `new` or `withSettings` would. The page checks a scenario
    /// before it lets go of the world it replaces, so the two are never in
    /// memory together (wasm memory never shrinks: on the 20,000-partition
    /// bench, a second world built beside the first and its checkpoints left
    /// it 60 MiB higher for good; issue 27).
    pub fn check(scenario: &str, settings: Option<String>) -> Result<(), JsError> {
        match settings {
            None => crate::scenario::parse(scenario)
                .map(drop)
                .map_err(|e| JsError::new(&e)),
            Some(s) => with_lane_settings(scenario, &s).map(drop),
        }
    }

    #[wasm_bindgen(js_name = nowMs)]
    pub fn now_ms(&self) -> f64 {
        self.lab.cluster.now as f64
    }

    #[wasm_bindgen(js_name = runUntilMs)]
    pub fn run_until_ms(&self) -> f64 {
        self.lab.scenario.run_until_ms as f64
    }

    /// Advance simulated time to `t` ms.
    #[wasm_bindgen(js_name = runUntil)]
    pub fn run_until(&mut self, t: f64) {
        if t.is_finite() && t > 0.0 {
            self.lab.cluster.run_until(t as u64);
        }
    }

    /// At most `max_events` of the events due by `t` (a long replay cut into
    /// slices that leave the page answering); true once all have run and the
    /// clock reads `t`, false when more are due (run again with the same `t`).
    #[wasm_bindgen(js_name = runUntilBounded)]
    pub fn run_until_bounded(&mut self, t: f64, max_events: f64) -> bool {
        if !t.is_finite() || t <= 0.0 {
            return true;
        }
        let budget = if max_events.is_finite() && max_events >= 1.0 {
            max_events as u64
        } else {
            1
        };
        self.lab.cluster.run_until_bounded(t as u64, budget)
    }

    #[wasm_bindgen(js_name = runFor)]
    pub fn run_for(&mut self, ms: f64) {
        if ms.is_finite() && ms > 0.0 {
            self.lab.cluster.run_for(ms as u64);
        }
    }

    /// A time-travel checkpoint of the world ([`crate::checkpoint`]): the
    /// page keeps these and replays recorded actions from the nearest one.
    pub fn checkpoint(&mut self) -> WasmCheckpoint {
        WasmCheckpoint {
            cp: crate::checkpoint::Checkpoint::of(&mut self.lab),
        }
    }

    /// Live heap bytes of the whole wasm instance (every lab and checkpoint):
    /// the page measures a checkpoint's cost as the difference around it.
    #[wasm_bindgen(js_name = heapBytes)]
    pub fn heap_bytes() -> f64 {
        crate::heap::live() as f64
    }

    /// Process one event; false when none is left.
    pub fn step(&mut self) -> bool {
        self.lab.cluster.step()
    }

    /// Apply an action written like a scenario step without `at_ms`
    /// (`{"crash": 2}`, `{"produce": {"topic": "t", "count": 5}}`), now.
    pub fn apply(&mut self, action: JsValue) -> Result<(), JsError> {
        let text = json_text(&action)?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| JsError::new(&e.to_string()))?;
        let a = crate::scenario::parse_action(&v, &self.lab.scenario.spec)
            .map_err(|e| JsError::new(&e))?;
        self.lab.cluster.apply(a).map_err(|e| JsError::new(&e))
    }

    /// The run report of SCENARIO_FORMAT.md for the current time.
    pub fn report(&self) -> Result<JsValue, JsError> {
        to_js(&self.lab.report())
    }

    pub fn describe(&self) -> String {
        self.lab.describe()
    }

    /// What became of record `id` (delivery::story), or null.
    pub fn story(&self, id: f64) -> Result<JsValue, JsError> {
        to_js(&crate::sim::delivery::story(&self.lab.cluster, id as u64))
    }

    /// The report's `delivery` section alone (the fate view; cheaper than
    /// the whole report).
    pub fn delivery(&self) -> Result<JsValue, JsError> {
        to_js(&crate::sim::delivery::build(&self.lab.cluster))
    }

    /// Trace events from index `cursor` on.
    #[wasm_bindgen(js_name = traceSince)]
    pub fn trace_since(&self, cursor: usize) -> Result<JsValue, JsError> {
        to_js(&self.lab.cluster.trace.since(cursor).collect::<Vec<_>>())
    }

    #[wasm_bindgen(js_name = traceLength)]
    pub fn trace_length(&self) -> usize {
        self.lab.cluster.trace.len()
    }

    /// Everything needed to draw one frame (detailed state for the first
    /// `max_partitions` partitions, counters for all).
    pub fn view(&self, max_partitions: usize) -> Result<JsValue, JsError> {
        #[cfg(feature = "web-sys-marks")]
        return marked("failover-lab:view", || {
            to_js(&crate::view::build(&self.lab.cluster, max_partitions))
        });
        #[cfg(not(feature = "web-sys-marks"))]
        to_js(&crate::view::build(&self.lab.cluster, max_partitions))
    }

    /// The availability strip up to now over [0, `to_ms`] in `buckets`
    /// buckets, and a recovery badge per fault.
    pub fn availability(&self, to_ms: f64, buckets: usize) -> Result<JsValue, JsError> {
        to_js(&crate::view::availability(
            &self.lab.cluster,
            to_ms.max(0.0) as u64,
            buckets,
        ))
    }

    /// [`WasmLab::view`] plus the detailed state of the partitions in `focus`
    /// (partition indexes, as in [`WasmLab::overview`]).
    #[wasm_bindgen(js_name = viewFocus)]
    pub fn view_focus(&self, max_partitions: usize, focus: Vec<u32>) -> Result<JsValue, JsError> {
        let focus: Vec<usize> = focus.into_iter().map(|p| p as usize).collect();
        to_js(&crate::view::build_selected(
            &self.lab.cluster,
            max_partitions,
            &focus,
        ))
    }

    /// Every partition at once for the canvas overview, as a `Uint32Array` of
    /// 4 words per partition index: leader (0 = none), `isr | replicas << 8 |
    /// min_isr << 16`, leader epoch, flags (see `view::FLAG_*`).
    pub fn overview(&self) -> Vec<u32> {
        crate::view::overview(&self.lab.cluster)
    }

    #[wasm_bindgen(js_name = partitionCount)]
    pub fn partition_count(&self) -> usize {
        self.lab.cluster.partitions.len()
    }

    /// [`WasmLab::describe`] limited to the first `max_partitions` lines.
    #[wasm_bindgen(js_name = describeHead)]
    pub fn describe_head(&self, max_partitions: usize) -> String {
        crate::report::describe_head(&self.lab.cluster, max_partitions)
    }

    /// The `--describe` line of partition index `p` (empty if out of range).
    #[wasm_bindgen(js_name = describePartition)]
    pub fn describe_partition(&self, p: usize) -> String {
        crate::report::describe_partition(&self.lab.cluster, p)
    }

    /// Events the core has processed so far (benchmarks).
    #[wasm_bindgen(js_name = eventsProcessed)]
    pub fn events_processed(&self) -> f64 {
        self.lab.cluster.events_processed as f64
    }

    /// The scenario as loaded (for export and the scenario picker).
    pub fn scenario(&self) -> Result<JsValue, JsError> {
        to_js(&self.lab.scenario.source)
    }

    /// The guided-tour stops of the scenario (empty when it has none).
    pub fn tour(&self) -> Result<JsValue, JsError> {
        to_js(&self.lab.scenario.tour)
    }

    #[wasm_bindgen(js_name = scenarioName)]
    pub fn scenario_name(&self) -> String {
        self.lab.scenario.name.clone()
    }

    #[wasm_bindgen(js_name = traceHash)]
    pub fn trace_hash(&self) -> String {
        self.lab.cluster.trace.hash_hex()
    }

    /// The scenario of a fork ([`crate::fork`]): `parent` (JSON text) with
    /// the steps taken by `at` and the `recorded` actions (JSON text, as
    /// steps: `[{"at_ms": 4000, "isolate": 3}]`) taken by then, plus
    /// `action` (JSON text) at `at`; JSON text.
    #[cfg(feature = "explorer")]
    pub fn fork(parent: &str, recorded: &str, at: f64, action: &str) -> Result<String, JsError> {
        let json = |t: &str| {
            serde_json::from_str::<serde_json::Value>(t).map_err(|e| JsError::new(&e.to_string()))
        };
        let (parent, recorded, action) = (json(parent)?, json(recorded)?, json(action)?);
        let steps = recorded.as_array().map_or(&[][..], |v| v.as_slice());
        let v = crate::fork::fork_scenario(&parent, steps, at.max(0.0) as u64, &action)
            .map_err(|e| JsError::new(&e))?;
        serde_json::to_string(&v).map_err(|e| JsError::new(&e.to_string()))
    }

    /// Where this lane's trace and `other`'s first differ, looking from
    /// event `from` on ([`crate::fork::first_difference`]): the index of the
    /// first event that differs, or -1 while they are the same (the events
    /// there: `traceRange`).
    pub fn divergence(&self, other: &WasmLab, from: usize) -> f64 {
        crate::fork::first_difference(&self.lab.cluster.trace, &other.lab.cluster.trace, from)
            .map_or(-1.0, |d| d.index as f64)
    }

    /// At most `count` trace events from index `from` on (a lane's event at
    /// its divergence, without the whole trace after it).
    #[wasm_bindgen(js_name = traceRange)]
    pub fn trace_range(&self, from: usize, count: usize) -> Result<JsValue, JsError> {
        to_js(
            &self
                .lab
                .cluster
                .trace
                .since(from)
                .take(count)
                .collect::<Vec<_>>(),
        )
    }
}

/// A world as bytes and back (`crate::snapshot`; the fast build only): a
/// compare lane replayed in a Worker comes back to the page this way
/// (www/lane-worker.js, issue 63).
#[cfg(world_snapshot)]
#[wasm_bindgen]
impl WasmLab {
    /// The world as bytes (a Uint8Array), for `fromSnapshot` with the same
    /// scenario text and settings. A lab whose start has not all run yet
    /// (`unstarted`) has no world to write: an Error.
    #[wasm_bindgen(js_name = snapshotBytes)]
    pub fn snapshot_bytes(&mut self) -> Result<Vec<u8>, JsError> {
        if self.starting.is_some() {
            return Err(JsError::new(
                "snapshotBytes: the world's start has not all run yet (startParts)",
            ));
        }
        Ok(self.lab.snapshot_bytes())
    }

    /// The lab `snapshotBytes` wrote, read back: `scenario` and `settings`
    /// as `unstarted` takes them (the ones the written lab was built from).
    /// Bytes of another scenario's world, of another build's layout or cut
    /// short are an Error that says which.
    #[wasm_bindgen(js_name = fromSnapshot)]
    pub fn from_snapshot(
        scenario: &str,
        settings: Option<String>,
        bytes: &[u8],
    ) -> Result<WasmLab, JsError> {
        let (scenario, applied) = scenario_with_settings(scenario, settings.as_deref())?;
        let lab = Lab::from_snapshot(scenario, applied, bytes).map_err(|e| JsError::new(&e))?;
        Ok(WasmLab {
            lab,
            starting: None,
        })
    }

    /// `fromSnapshot` a part at a time: the reader of a world whose bytes
    /// (`snapshotBytes`) begin with `head`, the header, the table of parts
    /// and the first part (www/compare.js `worldParts` cuts them); each
    /// later part goes to `readPart`, then `finish` gives the lab.
    #[wasm_bindgen(js_name = worldReader)]
    pub fn world_reader(
        scenario: &str,
        settings: Option<String>,
        head: &[u8],
    ) -> Result<WasmWorldReader, JsError> {
        let (scenario, applied) = scenario_with_settings(scenario, settings.as_deref())?;
        crate::snapshot::WorldReader::new(scenario, applied, head)
            .map(|reader| WasmWorldReader { reader })
            .map_err(|e| JsError::new(&e))
    }
}

/// A world read back from its bytes over several tasks (`WasmLab.worldReader`).
#[cfg(world_snapshot)]
#[wasm_bindgen(js_name = WorldReader)]
pub struct WasmWorldReader {
    reader: crate::snapshot::WorldReader,
}

#[cfg(world_snapshot)]
#[wasm_bindgen(js_class = WorldReader)]
impl WasmWorldReader {
    /// The next part of the world's bytes; true once the world is whole.
    #[wasm_bindgen(js_name = readPart)]
    pub fn read_part(&mut self, bytes: &[u8]) -> Result<bool, JsError> {
        self.reader.read_part(bytes).map_err(|e| JsError::new(&e))
    }

    /// The lab read back (this reader is used up); an Error before every
    /// part is in.
    pub fn finish(self) -> Result<WasmLab, JsError> {
        let lab = self.reader.finish().map_err(|e| JsError::new(&e))?;
        Ok(WasmLab {
            lab,
            starting: None,
        })
    }
}

/// What the page needs of the fast build only (www/pkg-explorer, the build
/// of the big worlds, issue 63): a world built over several tasks, and a
/// report's field alone. The page's own build (first load) goes without
/// them (lab.js falls back to `new` and `report`).
#[cfg(feature = "explorer")]
#[wasm_bindgen]
impl WasmLab {
    /// The lab `new` (no `settings`) or `withSettings` builds, with its
    /// cluster not started yet: `startParts` runs the start a few parts at
    /// a time (the page builds the 20,000-partition tour's world over
    /// several tasks, issue 63). Once `startParts` has returned true the lab
    /// is the one `new` or `withSettings` builds; until then nothing else
    /// may be asked of it.
    pub fn unstarted(scenario: &str, settings: Option<String>) -> Result<WasmLab, JsError> {
        let (scenario, applied) = scenario_with_settings(scenario, settings.as_deref())?;
        let mut lab = Lab::unstarted(scenario);
        lab.settings = applied;
        Ok(WasmLab {
            lab,
            starting: Some(0),
        })
    }

    /// Run at most `max_parts` more parts of an `unstarted` lab's start
    /// (at least one); true once it has all run (at once for a lab that
    /// was built started).
    #[wasm_bindgen(js_name = startParts)]
    pub fn start_parts(&mut self, max_parts: f64) -> bool {
        let Some(mut k) = self.starting else {
            return true;
        };
        let n = self.lab.cluster.start_parts();
        let budget = if max_parts.is_finite() && max_parts >= 1.0 {
            max_parts as usize
        } else {
            1
        };
        let end = n.min(k.saturating_add(budget));
        while k < end {
            self.lab.cluster.start_part(k);
            k += 1;
        }
        self.starting = (k < n).then_some(k);
        self.starting.is_none()
    }

    /// How many parts an `unstarted` lab's start has in all.
    #[wasm_bindgen(js_name = startPartCount)]
    pub fn start_part_count(&self) -> usize {
        self.lab.cluster.start_parts()
    }

    /// One top-level field of `report()`, built alone (`report::part`: the
    /// small fields and `availability`); undefined for the others.
    #[wasm_bindgen(js_name = reportPart)]
    pub fn report_part(&self, key: &str) -> Result<JsValue, JsError> {
        match crate::report::part(&self.lab.cluster, &self.lab.scenario.name, key) {
            Some(p) => to_js(&p),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

/// serde-wasm-bindgen twins of `view`, `report` and `traceSince`, timed
/// against them by scripts/bench-serde.sh (measurement builds only).
#[cfg(feature = "swb-compare")]
#[wasm_bindgen]
impl WasmLab {
    #[wasm_bindgen(js_name = viewSwb)]
    pub fn view_swb(&self, max_partitions: usize) -> Result<JsValue, JsError> {
        to_js_swb(&crate::view::build(&self.lab.cluster, max_partitions))
    }

    #[wasm_bindgen(js_name = reportSwb)]
    pub fn report_swb(&self) -> Result<JsValue, JsError> {
        to_js_swb(&self.lab.report())
    }

    #[wasm_bindgen(js_name = traceSinceSwb)]
    pub fn trace_since_swb(&self, cursor: usize) -> Result<JsValue, JsError> {
        to_js_swb(&self.lab.cluster.trace.since(cursor).collect::<Vec<_>>())
    }
}

/// The trade-off explorer's sweep (www/tradeoffs.html, cargo feature
/// `explorer`, built into www/pkg-explorer/ so the app's wasm does not carry
/// it). Thin wrappers over [`crate::sweep`]: each Web Worker runs
/// `sweepShard` (the CLI's `sweep_runs` + `shard_lines`, one thread) and the
/// page merges the shards with `sweepMerge` (`merge_shards`), so its rows are
/// the CLI's `sweep --format json` rows by construction.
#[cfg(feature = "explorer")]
mod explorer {
    use wasm_bindgen::prelude::*;

    use crate::sweep::{self, SweepConfig};

    /// `KEY=VALUE` items as the CLI's `sweep --set` splits them.
    fn pairs(sets: &[String]) -> Result<Vec<(String, String)>, JsError> {
        sets.iter()
            .map(|s| match s.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => {
                    Ok((k.trim().to_string(), v.trim().to_string()))
                }
                _ => Err(JsError::new(&format!("set={s}: expected KEY=VALUE"))),
            })
            .collect()
    }

    fn matrix(sets: &[String]) -> Result<Vec<SweepConfig>, JsError> {
        sweep::matrix(&pairs(sets)?).map_err(|e| JsError::new(&format!("set: {e}")))
    }

    /// A seed count or first seed from JS: a whole number ≥ 0 below 2^53.
    fn whole(v: f64, what: &str) -> Result<u64, JsError> {
        if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
            Ok(v as u64)
        } else {
            // The value is echoed only when it is whole: printing any f64
            // would link core's float formatting (about 18 kB of wasm) for
            // this one message.
            let got = if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e18 {
                format!("={}", v as i64)
            } else {
                String::new()
            };
            Err(JsError::new(&format!(
                "{what}{got}: expected a whole number ≥ 0 below 2^53"
            )))
        }
    }

    /// The configuration keys of the matrix for `sets` (`["acks=all", …]`),
    /// in the CLI's order. Every configuration's scenario is checked up front
    /// (an unknown config key or a bad value is an error naming it), so a bad
    /// `set=` fails here rather than in every worker.
    #[wasm_bindgen(js_name = sweepConfigs)]
    pub fn sweep_configs(sets: Vec<String>) -> Result<Vec<String>, JsError> {
        let configs = matrix(&sets)?;
        for c in &configs {
            crate::Lab::from_json(&sweep::scenario(c, 1).to_string())
                .map_err(|e| JsError::new(&format!("{e} (in configuration {})", c.key())))?;
        }
        Ok(configs.iter().map(SweepConfig::key).collect())
    }

    /// Runs `first_seed .. first_seed + seeds` of configuration `config` (an
    /// index into [`sweep_configs`]), as shard lines (`sweep --format jsonl`).
    #[wasm_bindgen(js_name = sweepShard)]
    pub fn sweep_shard(
        sets: Vec<String>,
        config: usize,
        first_seed: f64,
        seeds: f64,
    ) -> Result<String, JsError> {
        let configs = matrix(&sets)?;
        let cfg = configs
            .get(config)
            .ok_or_else(|| JsError::new(&format!("config {config}: out of range")))?;
        let one = std::slice::from_ref(cfg);
        let first = whole(first_seed, "first seed")?;
        let n = whole(seeds, "seeds")?;
        let runs = sweep::sweep_runs(one, first, n, 1, &|_, _| {}).map_err(|e| JsError::new(&e))?;
        Ok(sweep::shard_lines(one, &runs))
    }

    /// Shard lines (any number of shards, concatenated) → the rows of
    /// `sweep --format json`, one JSON object a line, exactly as the CLI
    /// prints them.
    #[wasm_bindgen(js_name = sweepMerge)]
    pub fn sweep_merge(shards: String) -> Result<String, JsError> {
        let rows =
            sweep::merge_shards(&[("shards".to_string(), shards)]).map_err(|e| JsError::new(&e))?;
        let mut out = String::new();
        for r in &rows {
            out.push_str(&serde_json::to_string(r).map_err(|e| JsError::new(&e.to_string()))?);
            out.push('\n');
        }
        Ok(out)
    }

    /// Bring your own cluster (issue 65): `kafka-topics.sh --describe`
    /// output (with kafka-configs.sh output and a broker.rack list, if any)
    /// → `{scenario, notes, ignored, brokers, topics, partitions}` as JSON
    /// text, within what the page runs ([`crate::import::Limits::PAGE`]).
    /// The same parser as `failover-lab import`; nothing leaves the page.
    #[wasm_bindgen(js_name = importCluster)]
    pub fn import_cluster(
        text: &str,
        records_per_sec: u32,
        acks: &str,
        consumers: bool,
    ) -> Result<String, JsError> {
        use crate::import::{import, Limits, Options};
        let opts = Options {
            records_per_sec: u64::from(records_per_sec),
            acks: acks.to_string(),
            consumers,
            ..Options::default()
        };
        let i = import(text, &opts, Limits::PAGE).map_err(|e| JsError::new(&e))?;
        serde_json::to_string(&i).map_err(|e| JsError::new(&e.to_string()))
    }

    /// The scenario of run `seed` of configuration `key`, as JSON text: what
    /// `failover-lab run --sweep-seed SEED --sweep-config KEY --emit-scenario`
    /// prints.
    #[wasm_bindgen(js_name = sweepScenario)]
    pub fn sweep_scenario(key: &str, seed: f64) -> Result<String, JsError> {
        let cfg = SweepConfig::parse_key(key).map_err(|e| JsError::new(&e))?;
        Ok(sweep::scenario(&cfg, whole(seed, "seed")?).to_string())
    }
}
