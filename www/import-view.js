// "Import your cluster" (issue 65): paste the output of kafka-topics.sh
// --describe (and, below it, kafka-configs.sh --describe output or a
// broker.rack list), choose the load in a short form, and the lab runs that
// cluster: its brokers, racks, topics, replicas, leaders, ISR and ELR at
// t = 0. The text is read by the core's own parser (src/import.rs, the same
// as `failover-lab import`) in the full wasm build, fetched with this module
// the first time the dialog opens; nothing pasted leaves the browser.
// sharebar.js and the welcome open it; no first load fetches it.

import { h } from './render/util.js';

// The three brokers and two topics of the book's chapter (docs/book/src/guide/import.md).
const EXAMPLE = [
  'Topic: orders\tTopicId: 3q2lFfyuRW2n0P6CfBDMKA\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2',
  '\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\tElr: \tLastKnownElr: ',
  '\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3\tElr: \tLastKnownElr: ',
  '\tTopic: orders\tPartition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,2\tElr: \tLastKnownElr: ',
  'Topic: payments\tTopicId: Zk9aQ0bXTjW3cVbE1rLm2g\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: min.insync.replicas=2,retention.ms=604800000',
  '\tTopic: payments\tPartition: 0\tLeader: 3\tReplicas: 1,3\tIsr: 3\tElr: \tLastKnownElr: ',
  '\tTopic: payments\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: \tElr: 1\tLastKnownElr: ',
  '1 rack-a',
  '2 rack-b',
  '3 rack-c',
  '',
].join('\n');

const CSS = `
dialog.import { background: var(--panel); color: var(--text); border: 1px solid var(--line); border-radius: 10px; width: min(940px, 94vw); max-height: 92vh; padding: 16px 20px 14px; box-shadow: 0 12px 40px rgb(0 0 0 / .45); }
dialog.import::backdrop { background: rgb(5 10 20 / .6); }
.import h2 { font-size: 17px; margin: 0 0 4px; color: var(--strong); text-transform: none; letter-spacing: 0; }
.import p { margin: 0 0 10px; max-width: 90ch; color: var(--muted); line-height: 1.45; }
.import code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; color: var(--text); }
.import .ilabel { display: flex; justify-content: space-between; align-items: baseline; font-weight: 600; margin-bottom: 4px; }
.import textarea { box-sizing: border-box; width: 100%; min-height: 230px; resize: vertical; font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; tab-size: 8; white-space: pre; overflow: auto; background: var(--bg); color: var(--text); border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
.import textarea:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
.import textarea[aria-invalid=true] { border-color: var(--bad); }
.import fieldset { display: flex; flex-wrap: wrap; gap: 10px 22px; align-items: center; border: 1px solid var(--line); border-radius: 6px; margin: 10px 0 0; padding: 8px 12px 10px; }
.import legend { color: var(--muted); padding: 0 4px; }
.import fieldset label { display: inline-flex; align-items: center; gap: 6px; }
.import input[type=number] { width: 7em; }
.import .ierr { color: var(--bad-text); margin: 10px 0 0; font-weight: 600; white-space: pre-wrap; }
.import .ierr:empty, .import .idone:empty { display: none; }
.import .idone { margin: 10px 0 0; padding: 8px 10px; border-left: 3px solid var(--good); background: var(--panel2); border-radius: 4px; }
.import .idone ul { margin: 4px 0 0; padding-left: 18px; color: var(--muted); }
.import .ibtns { display: flex; gap: 8px; justify-content: flex-end; margin-top: 12px; }
.import .ilink { background: none; border: 0; padding: 0; color: var(--accent); cursor: pointer; font: inherit; font-weight: 400; }
.import .ilink:hover { text-decoration: underline; }
`;

let core;
/** The full build's importCluster (fetched once). */
const loadCore = () => (core ??= import(new URL('./fast-wasm.js', import.meta.url).href).then(async (m) => {
  await m.default();
  if (!m.importCluster) throw new Error('this copy of the lab has no importer (its full build, www/pkg-explorer, is missing)');
  return m;
}));

/** Select line `n` (1-based) of `ta`, scrolled into view. */
function selectLine(ta, n) {
  const lines = ta.value.split('\n');
  const start = lines.slice(0, n - 1).reduce((s, l) => s + l.length + 1, 0);
  ta.focus();
  ta.setSelectionRange(start, start + (lines[n - 1] ?? '').length);
  const lh = parseFloat(getComputedStyle(ta).lineHeight) || 17;
  ta.scrollTop = Math.max(0, (n - 4) * lh);
}

/** Open the dialog over the page; a successful import replaces `app`'s lab. */
export function showImport(app) {
  if (!document.getElementById('import-css')) document.head.append(h('style', { id: 'import-css', text: CSS }));
  document.getElementById('import-dialog')?.remove();
  const text = h('textarea', {
    id: 'import-text', rows: 14, spellcheck: 'false', autocomplete: 'off', wrap: 'off',
    'aria-describedby': 'import-help import-error',
    placeholder: 'Topic: orders\tTopicId: …\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: …\n\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\tElr: \tLastKnownElr: ',
  });
  const rate = h('input', { type: 'number', id: 'import-rate', min: 0, max: 100000, step: 1, value: 0 });
  const acks = h('select', { id: 'import-acks' }, ...['all', '1', '0'].map((a) => h('option', { value: a, text: a })));
  const consumers = h('input', { type: 'checkbox', id: 'import-consumers' });
  const err = h('div.ierr', { id: 'import-error', role: 'alert' });
  const done = h('div.idone', { id: 'import-done', role: 'status' });
  const go = h('button.primary', { type: 'submit', id: 'import-go' }, 'Import');
  const close = h('button', { type: 'button', id: 'import-cancel', onclick: () => dialog.close() }, 'Cancel');
  const form = h('form', { onsubmit: (e) => { e.preventDefault(); run(); } },
    h('div.ilabel', null, h('label', { for: 'import-text', text: 'Describe output' }),
      h('button.ilink', { type: 'button', id: 'import-example', onclick: () => { text.value = EXAMPLE; text.focus(); } }, 'Paste an example')),
    text,
    h('fieldset', null, h('legend', { text: 'Load' }),
      h('label', null, 'Producers, records/s each', rate),
      h('label', null, 'acks', acks),
      h('label', null, consumers, 'A consumer per topic')),
    err, done,
    h('div.ibtns', null, close, go));
  const dialog = h('dialog.import', { id: 'import-dialog', 'aria-labelledby': 'import-title' },
    h('h2', { id: 'import-title', text: 'Import your cluster' }),
    h('p', { id: 'import-help' },
      'Paste the output of ', h('code', { text: 'kafka-topics.sh --describe' }), '. Below it you may add ',
      h('code', { text: 'kafka-configs.sh --describe --entity-type brokers' }), ' (or ', h('code', { text: 'topics' }),
      ') output and a broker.rack list, one ', h('code', { text: '1 rack-a' }),
      ' a line. Leaders, ISR and ELR start as pasted; logs start empty. The text is read here, in your browser: nothing is sent anywhere.'),
    form);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  text.focus();

  let loaded = false;
  async function run() {
    if (loaded) return dialog.close();
    err.textContent = '';
    done.replaceChildren();
    text.removeAttribute('aria-invalid');
    go.disabled = true;
    go.textContent = 'Reading…';
    try {
      const m = await loadCore();
      const t0 = performance.now();
      const out = JSON.parse(m.importCluster(text.value, Math.max(0, Math.min(100000, Math.floor(Number(rate.value) || 0))), acks.value, consumers.checked));
      const ms = Math.round(performance.now() - t0);
      await app.lab.prepare(out.scenario);
      app.pause();
      app.load(out.scenario);
      const name = JSON.parse(out.scenario).name;
      app.setScenarioFile(null, `${name} (imported)`);
      dialog.dataset.importMs = String(ms);
      loaded = true;
      done.replaceChildren(
        h('strong', { text: `Loaded ${out.brokers} brokers, ${out.topics} topic${out.topics === 1 ? '' : 's'}, ${out.partitions} partition${out.partitions === 1 ? '' : 's'}` }),
        ` (read in ${ms} ms). The lab is paused at t = 0: press play, or crash a broker.`,
        out.notes.length ? h('ul', null, ...out.notes.map((n) => h('li', { text: n }))) : null);
      close.hidden = true;
      go.textContent = 'Done';
      go.disabled = false;
      go.focus();
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      err.textContent = msg;
      text.setAttribute('aria-invalid', 'true');
      go.textContent = 'Import';
      go.disabled = false;
      const line = /^line (\d+):/.exec(msg);
      if (line) selectLine(text, Number(line[1]));
      else text.focus();
    }
  }
  return dialog;
}
