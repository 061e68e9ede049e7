//! Failover Lab: a deterministic simulation of Apache Kafka partition
//! replication and leader failover.
//!
//! Layers, data flowing one way: [`scenario`] parses and validates a scenario
//! file into a spec; [`sim`] is the pure core that runs it; [`report`] turns the
//! world into the run report and the `--describe` table; `wasm` (wasm32 only) is
//! the thin browser façade; the `failover-lab` binary is the CLI.

pub mod bench;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod view;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use scenario::Scenario;
pub use sim::{Action, Cluster};

/// A scenario loaded into a running cluster: what the CLI, the browser and the
/// tests all drive.
#[derive(Clone, Debug)]
pub struct Lab {
    pub scenario: Scenario,
    pub cluster: Cluster,
}

impl Lab {
    pub fn from_json(text: &str) -> Result<Lab, String> {
        scenario::parse(text).map(Lab::new)
    }

    pub fn new(scenario: Scenario) -> Lab {
        let cluster = Cluster::new(scenario.spec.clone());
        Lab { scenario, cluster }
    }

    /// Run to the scenario's `run_until_ms`.
    pub fn run_to_end(&mut self) {
        self.cluster.run_until(self.scenario.run_until_ms);
    }

    pub fn report(&self) -> report::Report {
        report::build(&self.cluster, &self.scenario.name)
    }

    pub fn describe(&self) -> String {
        report::describe(&self.cluster)
    }
}
