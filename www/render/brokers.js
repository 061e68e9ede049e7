// The cluster map: the KRaft controller, the brokers (state, leaderships),
// the clients, and the messages in flight between them, as SVG. Clicking a
// broker calls onBrokerClick(id, anchorElement). With `fit: true` the drawing
// takes the width of its container (text stays at its natural size) and, when
// narrow, puts the clients on a row under the brokers.

import { s, STATE_LABEL, setText, reducedMotion } from './util.js';

const MAP_W = 800;
const MAP_H = 176;
const MSG_COLOURS = {
  Fetch: '#56B4E9',
  FetchResponse: '#56B4E9',
  Produce: '#E69F00',
  ProduceResponse: '#E69F00',
  BrokerHeartbeat: '#CC79A7',
  BrokerHeartbeatResponse: '#CC79A7',
  Metadata: '#F0E442',
  MetadataRequest: '#F0E442',
  MetadataResponse: '#F0E442',
  AlterPartition: '#009E73',
  AlterPartitionResponse: '#009E73',
  OffsetsForLeaderEpoch: '#D55E00',
  OffsetsForLeaderEpochResponse: '#D55E00',
};
const MAX_DOTS = 90;
// Above this many brokers, a row of full broker cards gets too narrow to read:
// the brokers become a grid of small tiles (id and state colour; the state and
// leaderships are in each tile's tooltip and in the describe table).
const TILE_ABOVE = 12;
const TILE_W = 40;
const TILE_H = 26;
const TILE_GAP = 6;
/** On tiles, a rack's label above its band, and the space between bands. */
const RACK_LABEL = 15;
const RACK_GAP = 8;

/** Brokers grouped by rack (rack name, then id) when they have racks. */
function byRack(brokers) {
  if (!brokers.some((b) => b.rack)) return brokers;
  return [...brokers].sort((a, b) => (a.rack || '').localeCompare(b.rack || '') || a.id - b.id);
}

export class BrokerMap {
  constructor(root, { onBrokerClick, fit = false }) {
    this.root = root;
    this.onBrokerClick = onBrokerClick;
    this.fit = fit;
    this.W = MAP_W;
    this.H = MAP_H;
    this.key = '';
    this.dots = new Map();
  }

  layout(view) {
    if (this.fit) {
      this.W = Math.max(300, Math.min(MAP_W, Math.round(this.root.clientWidth || MAP_W)));
      if (this.W < 620) return this.stackedLayout(view);
    }
    const W = this.W;
    this.H = MAP_H;
    const n = view.brokers.length;
    if (n > TILE_ABOVE) {
      // Clients sit at the sides: leave room only where there are some.
      return this.tileLayout(view, view.producers.length ? 140 : 20, W - (view.consumers.length ? 140 : 20), true);
    }
    const pos = new Map();
    pos.set("controller", { x: W / 2, y: 24, w: 190, h: 38 });
    const left = 140;
    const right = W - 140;
    const bw = Math.min(150, ((right - left) / n) * 0.86);
    byRack(view.brokers).forEach((b, i) => {
      const x = n === 1 ? W / 2 : left + bw / 2 + (i * (right - left - bw)) / (n - 1);
      pos.set(`broker-${b.id}`, { x, y: 116, w: bw, h: 66 });
    });
    const side = (list, prefix, x) =>
      list.forEach((c, i) => {
        const y = 116 + (i - (list.length - 1) / 2) * 44;
        pos.set(`${prefix}-${i}`, { x, y, w: 104, h: 38, name: c.id });
      });
    side(view.producers, 'producer', 62);
    side(view.consumers, 'consumer', W - 62);
    return pos;
  }

  /**
   * Many brokers: the controller on top, the brokers as a grid of tiles in
   * rows between `left` and `right`, the clients at the sides (`sides`) or in
   * a row under the grid.
   */
  tileLayout(view, left, right, sides) {
    const W = this.W;
    const n = view.brokers.length;
    const pos = new Map();
    pos.set('controller', { x: W / 2, y: 22, w: Math.min(190, W - 20), h: 36 });
    const cols = Math.max(1, Math.min(n, Math.floor((right - left + TILE_GAP) / (TILE_W + TILE_GAP))));
    // With broker.rack, each rack is a band of its own rows under its label
    // (tour 18's three racks of twenty), as the cards' rack frames are;
    // without, one band. In a band the tiles spread evenly over its rows
    // (60 brokers: 4 rows of 15, not 12 + 12 + 12 + 12 + 12).
    const ordered = byRack(view.brokers);
    const groups = [];
    for (const b of ordered) {
      const g = groups.at(-1);
      if (g && g.rack === (b.rack ?? null)) g.brokers.push(b);
      else groups.push({ rack: b.rack ?? null, brokers: [b] });
    }
    const labelled = groups.some((g) => g.rack);
    const top = 62;
    let y = top;
    let widest = 0;
    const bands = [];
    for (const g of groups) {
      const m = g.brokers.length;
      const rows = Math.ceil(m / cols);
      const perRow = Math.ceil(m / rows);
      if (labelled) y += RACK_LABEL;
      g.brokers.forEach((b, i) => {
        const row = Math.floor(i / perRow);
        const inRow = Math.min(perRow, m - row * perRow);
        const rowW = inRow * TILE_W + (inRow - 1) * TILE_GAP;
        const x0 = (left + right) / 2 - rowW / 2;
        const col = i - row * perRow;
        pos.set(`broker-${b.id}`, {
          x: x0 + col * (TILE_W + TILE_GAP) + TILE_W / 2,
          y: y + row * (TILE_H + TILE_GAP) + TILE_H / 2,
          w: TILE_W,
          h: TILE_H,
          tile: true,
        });
      });
      const w = perRow * (TILE_W + TILE_GAP) - TILE_GAP;
      const bottom = y + rows * (TILE_H + TILE_GAP) - TILE_GAP;
      if (g.rack) bands.push({ rack: g.rack, x: (left + right) / 2, y: y - RACK_LABEL, w, bottom });
      widest = Math.max(widest, w);
      y = bottom + TILE_GAP + (labelled ? RACK_GAP : 0);
    }
    const gridBottom = y - TILE_GAP - (labelled ? RACK_GAP : 0);
    this.grid = { x: (left + right) / 2, y: top, w: widest, bottom: gridBottom, bands };
    const clients = [
      ...view.producers.map((c, i) => [`producer-${i}`, c.id, 'producer']),
      ...view.consumers.map((c, i) => [`consumer-${i}`, c.id, 'consumer']),
    ];
    const mid = (top + gridBottom) / 2;
    if (sides) {
      const side = (list, x) =>
        list.forEach(([key, name], i) => pos.set(key, { x, y: mid + (i - (list.length - 1) / 2) * 44, w: 104, h: 38, name }));
      side(clients.filter((c) => c[2] === 'producer'), 62);
      side(clients.filter((c) => c[2] === 'consumer'), W - 62);
      this.H = Math.max(gridBottom + 12, MAP_H);
    } else {
      const cw = Math.min(104, clients.length ? ((W - 16) / clients.length) * 0.9 : 104);
      clients.forEach(([key, name], i) => {
        const x = clients.length === 1 ? W / 2 : 8 + cw / 2 + (i * (W - 16 - cw)) / (clients.length - 1);
        pos.set(key, { x, y: gridBottom + 32, w: cw, h: 34, name });
      });
      this.H = gridBottom + (clients.length ? 56 : 12);
    }
    return pos;
  }

  /** Narrow containers: controller, then brokers across the width, then clients. */
  stackedLayout(view) {
    const W = this.W;
    const n = view.brokers.length;
    if (n > TILE_ABOVE) return this.tileLayout(view, 8, W - 8, false);
    const pos = new Map();
    pos.set('controller', { x: W / 2, y: 22, w: Math.min(190, W - 20), h: 36 });
    const bw = Math.min(150, ((W - 16) / n) * 0.9);
    byRack(view.brokers).forEach((b, i) => {
      const x = n === 1 ? W / 2 : 8 + bw / 2 + (i * (W - 16 - bw)) / (n - 1);
      pos.set(`broker-${b.id}`, { x, y: 104, w: bw, h: 66 });
    });
    const clients = [
      ...view.producers.map((c, i) => [`producer-${i}`, c.id]),
      ...view.consumers.map((c, i) => [`consumer-${i}`, c.id]),
    ];
    const cw = Math.min(104, clients.length ? ((W - 16) / clients.length) * 0.9 : 104);
    clients.forEach(([key, name], i) => {
      const x = clients.length === 1 ? W / 2 : 8 + cw / 2 + (i * (W - 16 - cw)) / (clients.length - 1);
      pos.set(key, { x, y: 184, w: cw, h: 34, name });
    });
    this.H = clients.length ? 204 : 142;
    return pos;
  }

  /** Rebuild on the next update (the container was resized). */
  resize() {
    this.key = '';
  }

  build(view) {
    this.grid = null;
    this.pos = this.layout(view);
    this.root.replaceChildren();
    const svg = s('svg', {
      viewBox: `0 0 ${this.W} ${this.H}`,
      class: this.grid ? 'map tiles' : 'map',
      // A group, not an image: it holds the focusable broker buttons.
      role: 'group',
      'aria-label': 'Cluster map: controller, brokers and clients',
    });
    const links = s('g', { class: 'links' });
    const nodes = s('g', { class: 'nodes' });
    this.dotLayer = s('g', { class: 'dots' });
    svg.append(links, nodes, this.dotLayer);
    const c = this.pos.get('controller');
    this.brokerEls = new Map();
    const ordered = byRack(view.brokers);
    if (this.grid) {
      // One link to the grid, and a frame around it, instead of one per broker.
      const g = this.grid;
      links.append(s('line', { x1: c.x, y1: c.y + c.h / 2, x2: g.x, y2: g.y - 8, class: 'link' }));
      links.append(s('rect', { x: g.x - g.w / 2 - 8, y: g.y - 8, width: g.w + 16, height: g.bottom - g.y + 16, rx: 10, class: 'tile-frame' }));
      for (const band of g.bands) {
        const x = band.x - band.w / 2 - 4;
        links.append(
          s('g', { class: 'rack', 'data-rack': band.rack },
            s('rect', { x, y: band.y, width: band.w + 8, height: band.bottom - band.y + 4, rx: 8 }),
            s('text', { x: x + 6, y: band.y + 10, text: `rack ${band.rack}` }),
          ),
        );
      }
    }
    for (const b of this.grid ? [] : view.brokers) {
      const p = this.pos.get(`broker-${b.id}`);
      links.append(s('line', { x1: c.x, y1: c.y + c.h / 2, x2: p.x, y2: p.y - p.h / 2, class: 'link' }));
    }
    for (let i = 0; i < (this.grid ? 0 : ordered.length - 1); i++) {
      const a = this.pos.get(`broker-${ordered[i].id}`);
      const b = this.pos.get(`broker-${ordered[i + 1].id}`);
      links.append(s('line', { x1: a.x + a.w / 2, y1: a.y, x2: b.x - b.w / 2, y2: b.y, class: 'link' }));
    }
    // Racks (broker.rack): a labelled frame around each rack's brokers (a
    // row of cards; on tiles, the bands drawn above, and each tile's tooltip).
    for (let i = this.grid ? ordered.length : 0; i < ordered.length; ) {
      const rack = ordered[i].rack;
      let j = i;
      while (j + 1 < ordered.length && ordered[j + 1].rack === rack) j++;
      if (rack) {
        const first = this.pos.get(`broker-${ordered[i].id}`);
        const last = this.pos.get(`broker-${ordered[j].id}`);
        const x = first.x - first.w / 2 - 4;
        const y = first.y - first.h / 2 - 13;
        links.append(
          s('g', { class: 'rack', 'data-rack': rack },
            s('rect', { x, y, width: last.x + last.w / 2 + 4 - x, height: first.h + 17, rx: 12 }),
            s('text', { x: x + 8, y: y + 10, text: `rack ${rack}` }),
          ),
        );
      }
      i = j + 1;
    }
    // Controller.
    nodes.append(
      s('g', { class: 'node controller' },
        s('rect', { x: c.x - c.w / 2, y: c.y - c.h / 2, width: c.w, height: c.h, rx: 8 }),
        s('text', { x: c.x, y: c.y - 2, class: 'title', text: 'KRaft controller' }),
        s('text', { x: c.x, y: c.y + 12, class: 'sub', text: 'active · separate node' }),
      ),
    );
    for (const b of view.brokers) {
      const p = this.pos.get(`broker-${b.id}`);
      const g = s('g', {
        class: 'node broker',
        tabindex: 0,
        role: 'button',
        'data-broker': b.id,
        'data-rack': b.rack ?? undefined,
        'aria-haspopup': 'menu',
        // Tiles show only the id: their name says more (and starts with it).
        // Cards are named by their visible text (axe: label-content-name-mismatch).
        'aria-label': this.grid ? `${b.id}: broker ${b.id}${b.rack ? ` (rack ${b.rack})` : ''}, open its actions` : undefined,
        onclick: (e) => this.onBrokerClick(b.id, g, e),
        onkeydown: (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            e.stopPropagation();
            this.onBrokerClick(b.id, g, e);
          }
        },
      });
      if (p.tile) {
        const rect = s('rect', { x: p.x - p.w / 2, y: p.y - p.h / 2, width: p.w, height: p.h, rx: 5 });
        const label = s('text', { x: p.x, y: p.y + 4, class: 'title', text: String(b.id) });
        const tip = s('title');
        const crown = s('text', { x: p.x + p.w / 2 - 5, y: p.y - p.h / 2 + 8, class: 'crown', text: '' });
        g.classList.add('tile');
        g.append(rect, label, crown, tip);
        nodes.append(g);
        this.brokerEls.set(b.id, { g, tip, crown, tile: true });
        continue;
      }
      const rect = s('rect', { x: p.x - p.w / 2, y: p.y - p.h / 2, width: p.w, height: p.h, rx: 10 });
      const title = s('text', { x: p.x, y: p.y - 14, class: "title", text: `Broker ${b.id}` });
      const state = s('text', { x: p.x, y: p.y + 3, class: "state" });
      const lead = s('text', { x: p.x, y: p.y + 20, class: "sub" });
      const narrow = p.w < 110;
      const crown = narrow
        ? s('text', { x: p.x + p.w / 2 - 7, y: p.y - p.h / 2 + 4, class: 'crown', text: '' }) // on the corner, clear of the title
        : s('text', { x: p.x + p.w / 2 - 12, y: p.y - 20, class: 'crown', text: '' });
      g.append(rect, title, state, lead, crown);
      nodes.append(g);
      this.brokerEls.set(b.id, { g, state, lead, crown, narrow });
    }
    const client = (key, label, cls) => {
      const p = this.pos.get(key);
      nodes.append(
        s('g', { class: `node client ${cls}` },
          s('rect', { x: p.x - p.w / 2, y: p.y - p.h / 2, width: p.w, height: p.h, rx: 19 }),
          s('text', { x: p.x, y: p.y - 2, class: 'title', text: p.name }),
          s('text', { x: p.x, y: p.y + 12, class: 'sub', text: label }),
        ),
      );
    };
    view.producers.forEach((_, i) => client(`producer-${i}`, 'producer', 'producer'));
    view.consumers.forEach((_, i) => client(`consumer-${i}`, 'consumer', 'consumer'));
    this.root.append(svg);
  }

  /** Draw one frame. `speed` is sim ms per wall ms (for message animation). */
  /** Its width, read by the host before the frame writes anything (no forced layout); unset, read when needed. */
  measure() {
    this.width = this.root.clientWidth;
  }

  /**
   * `history`: the map is rebuilt when it changes (another run); `generation`
   * (a seek too): the messages in flight start over.
   */
  update(view, speed, history, generation = history) {
    const key = `${history}|${view.brokers.length}|${view.producers.length}|${view.consumers.length}|${this.fit ? Math.round(this.width ?? this.root.clientWidth) : ''}`;
    if (key !== this.key) {
      this.key = key;
      this.dots.clear();
      this.build(view);
    } else if (generation !== this.dotsGen) {
      for (const d of this.dots.values()) d.el.remove();
      this.dots.clear();
    }
    this.dotsGen = generation;
    const leads = new Map();
    for (const p of view.partitions) {
      if (p.leader == null) continue;
      if (!leads.has(p.leader)) leads.set(p.leader, []);
      leads.get(p.leader).push(`${p.topic}-${p.partition}`);
    }
    for (const b of view.brokers) {
      const el = this.brokerEls.get(b.id);
      el.g.dataset.state = b.state;
      if (el.tile) {
        const leads = b.leader_of === 0 ? 'leads nothing' : `leads ${b.leader_of} partition${b.leader_of === 1 ? '' : 's'}`;
        setText(el.tip, `Broker ${b.id}${b.rack ? ` (rack ${b.rack})` : ''}: ${STATE_LABEL[b.state] || b.state}, ${leads}. Click for actions.`);
        setText(el.crown, b.leader_of > 0 ? '★' : '');
        continue;
      }
      setText(el.state, STATE_LABEL[b.state] || b.state);
      const names = leads.get(b.id) || [];
      let text;
      if (el.narrow) text = b.leader_of === 0 ? '' : `leader ×${b.leader_of}`;
      else if (b.leader_of === 0) text = 'leads nothing';
      else if (names.length === b.leader_of && names.length <= 2) text = `leads ${names.join(', ')}`;
      else text = `leads ${b.leader_of} partition${b.leader_of === 1 ? '' : 's'}`;
      setText(el.lead, text);
      setText(el.crown, b.leader_of > 0 ? '★' : '');
    }
    this.animate(view, speed);
  }

  animate(view, speed) {
    const wall = performance.now();
    // prefers-reduced-motion: no messages in flight, only the state changes.
    if (reducedMotion()) {
      if (this.dots.size) {
        for (const d of this.dots.values()) d.el.remove();
        this.dots.clear();
      }
      return;
    }
    for (const m of view.messages) {
      const k = `${m.from}|${m.to}|${m.kind}|${m.sent_ms}|${m.arrive_ms}`;
      if (this.dots.has(k) || this.dots.size >= MAX_DOTS) continue;
      const a = this.pos.get(m.from);
      const b = this.pos.get(m.to);
      if (!a || !b) continue;
      const simWall = speed > 0 ? (m.arrive_ms - m.sent_ms) / speed : 0;
      const dur = Math.min(4000, Math.max(700, simWall));
      // Requests and responses travel on slightly different lanes.
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const len = Math.hypot(dx, dy) || 1;
      const lane = m.from < m.to ? 5 : -5;
      const ox = (-dy / len) * lane;
      const oy = (dx / len) * lane;
      const el = s('circle', { r: 4.2, fill: MSG_COLOURS[m.kind] || '#ccc', class: 'dot' });
      el.append(s('title', { text: `${m.kind}: ${m.from} → ${m.to}` }));
      this.dotLayer.append(el);
      this.dots.set(k, { el, a: { x: a.x + ox, y: a.y + oy }, b: { x: b.x + ox, y: b.y + oy }, start: wall, dur });
    }
    for (const [k, d] of this.dots) {
      const p = (wall - d.start) / d.dur;
      if (p >= 1) {
        d.el.remove();
        this.dots.delete(k);
        continue;
      }
      d.el.setAttribute('cx', d.a.x + (d.b.x - d.a.x) * p);
      d.el.setAttribute('cy', d.a.y + (d.b.y - d.a.y) * p);
    }
  }

  /** Keep dots moving while paused. */
  tick() {
    if (this.dots.size) this.animate({ messages: [] }, 0);
  }
}

export const MESSAGE_LEGEND = [
  ['Fetch', '#56B4E9'],
  ['Produce', '#E69F00'],
  ['Heartbeat', '#CC79A7'],
  ['Metadata', '#F0E442'],
  ['AlterPartition', '#009E73'],
  ['OffsetsForLeaderEpoch', '#D55E00'],
];

/** The broker menu's module (render/broker-menu.js), fetched when a menu first opens. */
export const loadBrokerMenu = () => import(new URL('./broker-menu.js', import.meta.url).href);
