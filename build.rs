//! One cfg, `group_protocols`: consumer groups with several members (issue
//! 64: the classic protocol's JoinGroup, SyncGroup and heartbeats, the
//! KIP-848 protocol's ConsumerGroupHeartbeat, the coordinator's group state). Native builds always have it; a wasm build has
//! it with the `groups` feature, which the page's fast build (www/pkg-explorer,
//! `explorer` implies `groups`) turns on. The page's first-load wasm leaves it
//! out to stay within its size budget, and loads the fast build for a
//! scenario whose consumers subscribe (www/lab.js).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(group_protocols)");
    println!("cargo::rustc-check-cfg=cfg(world_snapshot)");
    println!("cargo::rerun-if-changed=build.rs");
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32");
    if !wasm || std::env::var_os("CARGO_FEATURE_GROUPS").is_some() {
        println!("cargo::rustc-cfg=group_protocols");
    }
    // A world as bytes (src/snapshot.rs): native builds, and a wasm build
    // with the `snapshot` feature (the fast build).
    if !wasm || std::env::var_os("CARGO_FEATURE_SNAPSHOT").is_some() {
        println!("cargo::rustc-cfg=world_snapshot");
    }
}
