// A live `kafka-topics.sh --describe` table from the core's describe() text.
// Cells that changed since the last frame flash.

import { h } from './util.js';

function fields(line) {
  return line
    .trim()
    .split('\t')
    .map((f) => {
      const i = f.indexOf(':');
      return i < 0 ? [f, ''] : [f.slice(0, i).trim(), f.slice(i + 1).trim()];
    });
}

export class DescribeTable {
  constructor(root) {
    this.root = root;
    this.text = '';
    this.prev = new Map();
  }

  update(text) {
    if (text === this.text) return;
    this.text = text;
    // The same topics and partitions as drawn (a seek, a frame): only the
    // cells whose value changed are replaced (they flash); the rest is kept.
    const rows = parse(text);
    const shape = rows.map((r) => (r.head || r.note ? r.line : r.key)).join('\n');
    if (shape === this.shape) {
      const seen = new Map();
      for (const r of rows) {
        if (r.head || r.note) continue;
        for (const [col, v] of r.cells) {
          const key = `${r.key}-${col}`;
          seen.set(key, v);
          const td = this.tds.get(key);
          if (this.prev.get(key) !== v) {
            const cell = this.cell(key, col, v);
            td.replaceWith(cell);
            this.tds.set(key, cell);
          } else if (td.classList.contains('changed')) td.classList.remove('changed');
        }
      }
      this.prev = seen;
      this.pre.textContent = text;
      return;
    }
    this.shape = shape;
    this.tds = new Map();
    const blocks = [];
    let tbody = null;
    const seen = new Map();
    for (const r of rows) {
      if (r.note) {
        blocks.push(h('p.dnote.muted', { text: r.line }));
        continue;
      }
      if (r.head) {
        blocks.push(h('div.dtopic', null, ...r.fields.map(([k, v]) => h('span', null, h('span.muted', { text: `${k}: ` }), v))));
        const table = h('table.dtable');
        table.append(h('thead', null, h('tr', null, ...COLS.map((c) => h('th', { text: c })))));
        table.append((tbody = h('tbody')));
        // Wider than a narrow element or page, the table scrolls in its own
        // box instead of widening the host (issue 62, item 7); focusable so
        // the keyboard can scroll it too.
        blocks.push(h('div.dscroll', { tabindex: '0' }, table));
        continue;
      }
      const row = h('tr', { dataset: { partition: r.key } });
      for (const [col, v] of r.cells) {
        const key = `${r.key}-${col}`;
        const cell = this.cell(key, col, v);
        this.tds.set(key, cell);
        seen.set(key, v);
        row.append(cell);
      }
      tbody.append(row);
    }
    this.prev = seen;
    this.pre = h('pre', { text: text });
    const raw = h('details.raw', null, h('summary', { text: 'raw output' }), this.pre);
    this.root.replaceChildren(h('div.dcmd', { text: '$ kafka-topics.sh --bootstrap-server localhost:9092 --describe' }), ...blocks, raw);
  }

  cell(key, col, v) {
    const cell = h('td', { text: v, dataset: { col } });
    if (this.prev.has(key) && this.prev.get(key) !== v) cell.classList.add('changed');
    if (col === 'Leader' && v === 'none') cell.classList.add('bad');
    return cell;
  }
}

const COLS = ['Partition', 'Leader', 'Replicas', 'Isr', 'Elr', 'LastKnownElr'];

/**
 * The describe text's topic lines ({head, line, fields}), partition rows
 * ({key, cells: [[col, value]]}) and notes ({note, line}): a huge cluster's
 * table ends with '(N more partitions not listed)', a sentence under the
 * table, not a topic (it was drawn as a topic named so, over an empty table).
 */
function parse(text) {
  const out = [];
  let table = false;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (line.startsWith('(')) {
      out.push({ note: true, line });
      continue;
    }
    const f = fields(line);
    if (!line.startsWith('\t') && !line.startsWith(' ')) {
      out.push({ head: true, line, fields: f });
      table = true;
      continue;
    }
    if (!table) continue;
    const m = Object.fromEntries(f);
    out.push({ key: `${m.Topic}-${m.Partition}`, cells: COLS.map((col) => [col, m[col] ?? '']) });
  }
  return out;
}
