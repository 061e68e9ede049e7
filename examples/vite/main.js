// The element installed as a package and bundled by Vite: the import defines
// <failover-lab>; Vite turns the package's new URL('./…', import.meta.url)
// references (the wasm, style.css) into hashed assets. The scenario file is
// an asset too (?url), so no public/ folder is needed.
import 'failover-lab-element';
import scenario from 'failover-lab-element/scenarios/tour-1-leader-dies.json?url';

document.getElementById('lab').setAttribute('scenario', scenario);
