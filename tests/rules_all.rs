//! Every native rule suite in one test binary, for mutation testing (`make
//! mutants`; the book, "Mutation testing") and for `make test` (issue 61: one
//! build and link of the suites instead of twenty). Each mutant rebuilds the
//! library, and every test crate that depends on it is then compiled and
//! linked again: nineteen suites as nineteen binaries cost a mutant nineteen
//! compilations and links, one binary costs one. The suites are the same files as
//! `cargo test --test NAME` runs, each a module here under its own name; the
//! target exists only with the `mutants` feature, so a plain `cargo test`
//! never runs a suite twice. `tests/toolchain.rs` checks that this list, the
//! suites in `tests/` and `.cargo/mutants.toml` agree.
// Each suite brings its own `common` (and some `harness`) module, as it does
// when built alone.
#![allow(dead_code, unused_imports, unused_macros, clippy::duplicate_mod)]

#[path = "availability.rs"]
mod availability;
#[path = "checkpoint.rs"]
mod checkpoint;
#[path = "conformance/main.rs"]
mod conformance;
#[path = "delivery.rs"]
mod delivery;
#[path = "elr.rs"]
mod elr;
#[path = "failover.rs"]
mod failover;
#[path = "fidelity.rs"]
mod fidelity;
#[path = "fidelity3.rs"]
mod fidelity3;
#[path = "fork.rs"]
mod fork;
#[path = "fuzz.rs"]
mod fuzz;
#[path = "groups.rs"]
mod groups;
#[path = "import.rs"]
mod import;
#[path = "isr_changes.rs"]
mod isr_changes;
#[path = "kafka_recorded.rs"]
mod kafka_recorded;
#[path = "oracle.rs"]
mod oracle;
#[path = "questions.rs"]
mod questions;
#[path = "racks.rs"]
mod racks;
#[path = "replication.rs"]
mod replication;
#[path = "rules_mutants.rs"]
mod rules_mutants;
#[path = "scenarios.rs"]
mod scenarios;
#[path = "snapshot.rs"]
mod snapshot;
#[path = "staged_start.rs"]
mod staged_start;
#[path = "sweep.rs"]
mod sweep;
#[path = "truncation.rs"]
mod truncation;
