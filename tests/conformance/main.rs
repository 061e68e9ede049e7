//! Conformance: Kafka's own unit tests, case by case, as tests of the
//! simulator (issue 17). One module per area; each test cites the Kafka test
//! class and method it ports in a `// Kafka:` comment, and `table` turns those
//! citations into the book's table (docs/book/src/fidelity/conformance.md).

mod harness;

mod broker_lifecycle;
mod epoch_cache;
mod fetcher;
mod partition;
mod partition_change_builder;
mod producer;
mod replication_control;
mod table;
