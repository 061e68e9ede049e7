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
    const blocks = [];
    let table = null;
    const seen = new Map();
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      const f = fields(line);
      if (!line.startsWith('\t') && !line.startsWith(' ')) {
        blocks.push(h('div.dtopic', null, ...f.map(([k, v]) => h('span', null, h('span.muted', { text: `${k}: ` }), v))));
        table = h('table.dtable');
        const cols = ['Partition', 'Leader', 'Replicas', 'Isr', 'Elr', 'LastKnownElr'];
        table.append(h('thead', null, h('tr', null, ...cols.map((c) => h('th', { text: c })))));
        table.append(h('tbody'));
        blocks.push(table);
        continue;
      }
      if (!table) continue;
      const m = Object.fromEntries(f);
      const row = h('tr', { dataset: { partition: `${m.Topic}-${m.Partition}` } });
      for (const col of ['Partition', 'Leader', 'Replicas', 'Isr', 'Elr', 'LastKnownElr']) {
        const v = m[col] ?? '';
        const key = `${m.Topic}-${m.Partition}-${col}`;
        const cell = h('td', { text: v, dataset: { col } });
        if (this.prev.has(key) && this.prev.get(key) !== v) cell.classList.add('changed');
        if (col === 'Leader' && v === 'none') cell.classList.add('bad');
        seen.set(key, v);
        row.append(cell);
      }
      table.querySelector('tbody').append(row);
    }
    this.prev = seen;
    const pre = h('details.raw', null, h('summary', { text: 'raw output' }), h('pre', { text: text }));
    this.root.replaceChildren(h('div.dcmd', { text: '$ kafka-topics.sh --bootstrap-server localhost:9092 --describe' }), ...blocks, pre);
  }
}
