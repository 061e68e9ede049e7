// The page's export and import (sharebar.js fetches this module on the first
// click): the scenario with your actions folded in and the trace as files,
// and a scenario file read by the file picker or dropped on the page.

/** The trace as the CLI prints it (`failover-lab run FILE --format trace`). */
export function traceText(events) {
  return events.map((e) => `${String(e.at_ms).padStart(8)} ms  ${e.text}\n`).join('');
}

function download(name, text, type = 'application/json') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function slug(text) {
  return String(text || 'scenario').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 48) || 'scenario';
}

/** Download scenario `s` (your actions already folded in) as JSON. */
export function exportScenario(s) {
  download(`${slug(s.name)}.json`, `${JSON.stringify(s, null, 2)}\n`);
}

/** Download the trace of `lab` so far, as the CLI prints it or as JSON lines. */
export function exportTrace(lab, kind) {
  const events = lab.traceSince(0);
  const name = `${slug(lab.name())}-trace-${lab.now()}ms`;
  if (kind === 'jsonl') download(`${name}.jsonl`, events.map((e) => JSON.stringify(e)).join('\n') + '\n', 'application/x-ndjson');
  else download(`${name}.txt`, traceText(events), 'text/plain');
}

/** Load a scenario file into `app`; a bad file shows a message and keeps the lab. */
export async function importFile(app, file) {
  let text;
  try {
    text = await file.text();
  } catch (e) {
    app.showError(`Could not read ${file.name}: ${e.message}`);
    return false;
  }
  try {
    await app.lab.prepare(text);
    app.load(text);
  } catch (e) {
    app.showError(`${file.name}: ${e.message}`);
    return false;
  }
  app.setScenarioFile(null, `${app.lab.name()} (imported)`);
  if (!app.tour.active) app.play();
  return true;
}
