//! Tests that run the core inside headless Chromium (wasm-bindgen-test).
//!
//! `make test` runs them with
//! `CHROMEDRIVER=/usr/bin/chromedriver \
//!  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!  cargo test --target wasm32-unknown-unknown --test web`
//! (webdriver.json in the crate root adds --no-sandbox etc. for root/CI).
#![cfg(target_arch = "wasm32")]

use failover_lab::sim::log::{Log, Record};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The log and its leader-epoch cache work in the browser as they do natively:
/// appends get consecutive offsets and endOffsetFor answers per epoch.
#[wasm_bindgen_test]
fn log_and_epoch_cache_run_in_the_browser() {
    let mut log = Log::default();
    assert_eq!(log.log_end_offset(), 0);
    assert_eq!(log.end_offset_for(0), None);

    assert_eq!(log.append(Record::plain(1, 1)), 0);
    assert_eq!(log.append(Record::plain(2, 1)), 1);
    assert_eq!(log.append(Record::plain(3, 3)), 2);
    assert_eq!(log.log_end_offset(), 3);

    // Epoch 1 ends where epoch 3 starts; the latest epoch ends at the LEO.
    assert_eq!(log.end_offset_for(1), Some((1, 2)));
    // Epoch 2 was never written: the largest epoch <= 2 is 1.
    assert_eq!(log.end_offset_for(2), Some((1, 2)));
    assert_eq!(log.end_offset_for(3), Some((3, 3)));
    // A newer epoch than this log knows is undefined.
    assert_eq!(log.end_offset_for(4), None);
}
