// Tour question answers (issue 30): the expression language of src/question.rs
// (its doc comment is the grammar), evaluated over report(). A path walks the
// report; `[key]` on an array is an index (`[-1]` the last) or the element
// whose id, producer, settings or topic-partition is key, else the first whose
// fields meet `field OP value&…`; `[?cond]` lists every element meeting cond;
// `'a' in 'abc'` is a substring test; a missing field is null. Tour claims
// (src/claims.rs) use the same language.

const OPS = ['==', '!=', '>=', '<=', '&&', '||', '>', '<'];

function lex(src) {
  const out = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const last = out[out.length - 1];
    let m;
    if (/\s/.test(c)) i++;
    else if ((m = /^-?\d+(\.\d+)?/.exec(src.slice(i))) && !(c === '-' && !/\d/.test(src[i + 1] || ''))) {
      out.push({ num: Number(m[0]) });
      i += m[0].length;
    } else if (c === "'" || c === '"') {
      const j = src.indexOf(c, i + 1);
      if (j < 0) throw new Error('unterminated string');
      out.push({ str: src.slice(i + 1, j) });
      i = j + 1;
    } else if ((m = /^[A-Za-z_]\w*/.exec(src.slice(i)))) {
      out.push({ name: m[0] });
      i += m[0].length;
    } else if (c === '[' && last && ((last.name && last.name !== 'in') || 'key' in last)) {
      const j = src.indexOf(']', i);
      if (j < 0) throw new Error('unclosed [');
      out.push({ key: src.slice(i + 1, j).trim() });
      i = j + 1;
    } else {
      const op = OPS.find((o) => src.startsWith(o, i)) || ('.,[]'.includes(c) ? c : null);
      if (!op) throw new Error(`unexpected '${c}'`);
      out.push({ op });
      i += op.length;
    }
  }
  return out;
}

function parse(src) {
  const t = lex(src);
  let at = 0;
  const peek = () => t[at];
  const binary = (ops, sub) => {
    let left = sub();
    while (peek() && ops.includes(peek().op)) left = { op: t[at++].op, a: left, b: sub() };
    return left;
  };
  const operand = () => {
    const k = t[at++];
    if (!k) throw new Error('unexpected end');
    if ('num' in k) return { lit: k.num };
    if ('str' in k) return { lit: k.str };
    if (k.op === '[') {
      const list = [];
      if (peek()?.op === ']') at++;
      else
        for (;;) {
          list.push(expr());
          const s = t[at++];
          if (s?.op === ',') continue;
          if (s?.op === ']') break;
          throw new Error('expected , or ] in a list');
        }
      return { list };
    }
    if (!k.name) throw new Error(`unexpected ${JSON.stringify(k)}`);
    if (k.name === 'true' || k.name === 'false') return { lit: k.name === 'true' };
    if (k.name === 'null') return { lit: null };
    const path = [[false, k.name]];
    for (;;) {
      if (peek()?.op === '.') {
        at++;
        const f = t[at++];
        if (!f?.name) throw new Error('expected a field name after .');
        path.push([false, f.name]);
      } else if (peek() && 'key' in peek()) path.push([true, t[at++].key]);
      else break;
    }
    return { path };
  };
  const cmp = () => {
    const left = operand();
    const k = peek();
    const op = k && (k.op && !['&&', '||', '.', ',', '[', ']'].includes(k.op) ? k.op : k.name === 'in' ? 'in' : null);
    if (!op) return left;
    at++;
    return { op, a: left, b: operand() };
  };
  const expr = () => binary(['||'], () => binary(['&&'], cmp));
  const e = expr();
  if (at < t.length) throw new Error(`unexpected ${JSON.stringify(t[at])} after the expression`);
  return e;
}

const same = (x, y) => (typeof x === 'number' && typeof y === 'number' ? x === y : JSON.stringify(x) === JSON.stringify(y));
const truthy = (v) => v !== null && v !== false && v !== 0 && v !== undefined;

// Whether array element e meets cond: `field OP value` conditions joined by
// `&`, OP one of = != > >= < <= (as src/question.rs's meets).
const COND_OPS = ['!=', '>=', '<=', '=', '>', '<'];
function meets(e, cond) {
  return cond.split('&').every((c) => {
    let i = 0;
    let op = null;
    for (; i < c.length && !op; i++) op = COND_OPS.find((o) => c.startsWith(o, i)) ?? null;
    if (!op || e == null || typeof e !== 'object') return false;
    i -= 1;
    const v = e[c.slice(0, i).trim()];
    const want = c.slice(i + op.length).trim();
    if (v === undefined) return false;
    const eq = typeof v === 'string' ? v === want : (typeof v === 'number' && want !== '' && Number(want) === v) || JSON.stringify(v) === want;
    const ord = (f) => typeof v === 'number' && want !== '' && !Number.isNaN(Number(want)) && f(v, Number(want));
    switch (op) {
      case '=': return eq;
      case '!=': return !eq;
      case '>': return ord((x, y) => x > y);
      case '>=': return ord((x, y) => x >= y);
      case '<': return ord((x, y) => x < y);
      default: return ord((x, y) => x <= y);
    }
  });
}

function step(v, key, name) {
  if (Array.isArray(v) && key) {
    if (name.startsWith('?')) return v.filter((e) => meets(e, name.slice(1)));
    if (/^-?\d+$/.test(name)) return v[Number(name) < 0 ? v.length + Number(name) : Number(name)];
    return (
      v.find((e) => e && (`${e.topic}-${e.partition}` === name || e.id === name || e.producer === name || e.settings === name)) ??
      (/[=<>]/.test(name) ? v.find((e) => meets(e, name)) : undefined)
    );
  }
  return v == null || typeof v !== 'object' ? undefined : v[name];
}

function evalExpr(e, root) {
  if ('lit' in e) return e.lit;
  if (e.list) return e.list.map((x) => evalExpr(x, root));
  if (e.path) {
    let cur = root;
    for (const [key, name] of e.path) {
      if (!key && name === 'length' && (Array.isArray(cur) || typeof cur === 'string')) return [...cur].length;
      cur = step(cur, key, name);
      if (cur === undefined) return null;
    }
    return cur;
  }
  const x = evalExpr(e.a, root);
  const y = evalExpr(e.b, root);
  const num = typeof x === 'number' && typeof y === 'number';
  switch (e.op) {
    case '==': return same(x, y);
    case '!=': return !same(x, y);
    case '>': return num && x > y;
    case '>=': return num && x >= y;
    case '<': return num && x < y;
    case '<=': return num && x <= y;
    case 'in': return typeof x === 'string' && typeof y === 'string' ? y.includes(x) : Array.isArray(y) && y.some((v) => same(x, v));
    case '&&': return truthy(x) && truthy(y);
    default: return truthy(x) || truthy(y);
  }
}

/** The value of answer expression `src` over `report`. Throws on a bad expression. */
export function evaluate(src, report) {
  return evalExpr(parse(src), report);
}

/** The indices of `question`'s choices whose value equals its answer over `report`. */
export function rightChoices(question, report) {
  const v = evaluate(question.answer, report);
  return { value: v, right: question.choices.map((c, i) => (same(c.value, v) ? i : -1)).filter((i) => i >= 0) };
}
