//! Failover Lab: a deterministic simulation of Apache Kafka partition
//! replication and leader failover.
//!
//! Layers, data flowing one way: [`scenario`] parses and validates a scenario
//! file into a spec; [`sim`] is the pure core that runs it; [`report`] turns the
//! world into the run report and the `--describe` table; `wasm` (wasm32 only) is
//! the thin browser façade; the `failover-lab` binary is the CLI.

pub mod bench;
pub mod checkpoint;
/// Tour claims checked against the run (native only).
#[cfg(not(target_arch = "wasm32"))]
pub mod claims;
pub mod fork;
pub mod heap;
/// Bring your own cluster: describe output → scenario (native, and the
/// page's full wasm build, which it loads on demand).
#[cfg(any(not(target_arch = "wasm32"), feature = "explorer"))]
pub mod import;
/// Tour question answers (native only: the page evaluates them in JavaScript).
#[cfg(not(target_arch = "wasm32"))]
pub mod question;
pub mod report;
pub mod scenario;
pub mod settings;
pub mod sim;
/// A world as bytes and back (native, and the wasm fast build).
#[cfg(world_snapshot)]
pub mod snapshot;
pub mod sweep;
pub mod view;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use scenario::Scenario;
pub use sim::{Action, Cluster};

use std::rc::Rc;

/// A scenario loaded into a running cluster: what the CLI, the browser and the
/// tests all drive.
#[derive(Clone, Debug)]
pub struct Lab {
    /// Shared by every copy of the world: it never changes once loaded, and
    /// its spec lists every partition's replicas, so a deep copy per
    /// checkpoint was 1.9 MB of the 20,000-partition bench's (issue 27).
    pub scenario: Rc<Scenario>,
    pub cluster: Cluster,
    /// Settings applied on top of the scenario file ([`settings`]).
    pub settings: Settings,
}

/// Settings as applied to a scenario, by key ([`settings`]).
pub type Settings = std::collections::BTreeMap<String, serde_json::Value>;

impl Lab {
    pub fn from_json(text: &str) -> Result<Lab, String> {
        scenario::parse(text).map(Lab::new)
    }

    /// Load a scenario with `KEY=VALUE` settings applied first (`run --set`).
    pub fn from_json_with_settings(
        text: &str,
        settings: &[(String, String)],
    ) -> Result<Lab, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            format!(
                "scenario is not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            )
        })?;
        Lab::from_value_with_settings(v, settings)
    }

    /// The scenario `v` becomes with `KEY=VALUE` settings applied, checked,
    /// and the settings as applied: what [`Lab::from_value_with_settings`]
    /// builds a lab from, with the same errors.
    pub fn scenario_with_settings(
        mut v: serde_json::Value,
        settings: &[(String, String)],
    ) -> Result<(Scenario, Settings), String> {
        let applied = settings::apply(&mut v, settings)?;
        Ok((scenario::from_value(v)?, applied))
    }

    /// [`Lab::from_json_with_settings`] for a scenario already parsed.
    pub fn from_value_with_settings(
        v: serde_json::Value,
        settings: &[(String, String)],
    ) -> Result<Lab, String> {
        let (scenario, applied) = Lab::scenario_with_settings(v, settings)?;
        let mut lab = Lab::new(scenario);
        lab.settings = applied;
        Ok(lab)
    }

    pub fn new(scenario: Scenario) -> Lab {
        let cluster = Cluster::new(scenario.spec.clone());
        Lab {
            scenario: Rc::new(scenario),
            cluster,
            settings: Default::default(),
        }
    }

    /// [`Lab::new`] with its cluster not started yet ([`Cluster::unstarted`]):
    /// running [`Cluster::start_part`] for every part in order makes the lab
    /// `new` makes.
    pub fn unstarted(scenario: Scenario) -> Lab {
        let cluster = Cluster::unstarted(scenario.spec.clone());
        Lab {
            scenario: Rc::new(scenario),
            cluster,
            settings: Default::default(),
        }
    }

    /// Run to the scenario's `run_until_ms`.
    pub fn run_to_end(&mut self) {
        self.cluster.run_until(self.scenario.run_until_ms);
    }

    pub fn report(&self) -> report::Report {
        let mut r = report::build(&self.cluster, &self.scenario.name);
        r.settings = self.settings.clone();
        r
    }

    pub fn describe(&self) -> String {
        report::describe(&self.cluster)
    }
}
