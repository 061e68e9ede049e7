// The speed-optimised build of the core (issue 63): www/pkg-explorer, built
// by scripts/build-wasm.sh at opt-level 3 with the explorer's sweeps. Loaded
// on demand (lab.js initFastWasm) by a lab that runs a big scenario; the
// page's first load never fetches it. Its own module so that the bundle
// (scripts/build-bundle.mjs) can point the glue at the wasm from dist/.
export { default, WasmLab, importCluster } from './pkg-explorer/failover_lab.js';
