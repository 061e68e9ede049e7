//! The answer expressions of tour questions (issue 30): a small language over
//! the run report, so a question's right answer is computed from the run.
//!
//! ```text
//! expr    := and ('||' and)*
//! and     := cmp ('&&' cmp)*
//! cmp     := operand (('==' | '!=' | '>' | '>=' | '<' | '<=' | 'in') operand)?
//! operand := number | 'string' | "string" | true | false | null
//!          | '[' expr (',' expr)* ']' | path
//! path    := name ('.' name | '[' key ']')*
//! ```
//!
//! A path walks the report: `acked_records_lost`, `partitions[orders-0].leader`,
//! `producers[p1].errors.NOT_LEADER_OR_FOLLOWER`, `partitions[orders-0].isr.length`.
//! `[key]` on an array is an index, or the element whose `id`, `producer`,
//! `settings` (a compare lane: `lanes[acks=1].report.acked_records_lost`) or
//! `topic-partition` is `key`; else the first element whose fields match
//! `key` as `field=value` pairs joined by `&`
//! (`events[event=leader_elected&leader=2].at_ms`). `[?field=value&…]` is the
//! list of every such element (`producers[p1].events[?…].length`), `[-1]` the
//! last element. `'text' in x` on two strings is "x contains text". A
//! missing field is null. The page evaluates the
//! same language in JavaScript (www/question.js); tests/questions.rs checks
//! every shipped question here, tests/e2e/questions.test.mjs on the page.

use serde_json::Value;
use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Name(String),
    Key(String),
    Op(&'static str),
    Dot,
    Comma,
    Open,
    Close,
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '-' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let s = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '.') {
                i += 1;
            }
            let text: String = b[s..i].iter().collect();
            out.push(Tok::Num(
                text.parse().map_err(|_| format!("bad number {text}"))?,
            ));
        } else if c == '\'' || c == '"' {
            let s = i + 1;
            i = s;
            while i < b.len() && b[i] != c {
                i += 1;
            }
            if i >= b.len() {
                return Err("unterminated string".into());
            }
            out.push(Tok::Str(b[s..i].iter().collect()));
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Tok::Name(b[s..i].iter().collect()));
        } else if c == '['
            && (matches!(out.last(), Some(Tok::Key(_)))
                || matches!(out.last(), Some(Tok::Name(n)) if n != "in"))
        {
            // A path's [key]: everything up to the closing bracket.
            let s = i + 1;
            i = s;
            while i < b.len() && b[i] != ']' {
                i += 1;
            }
            if i >= b.len() {
                return Err("unclosed [".into());
            }
            out.push(Tok::Key(
                b[s..i].iter().collect::<String>().trim().to_string(),
            ));
            i += 1;
        } else {
            let two: String = b[i..(i + 2).min(b.len())].iter().collect();
            let (tok, n) = match (two.as_str(), c) {
                ("==", _) => (Tok::Op("=="), 2),
                ("!=", _) => (Tok::Op("!="), 2),
                (">=", _) => (Tok::Op(">="), 2),
                ("<=", _) => (Tok::Op("<="), 2),
                ("&&", _) => (Tok::Op("&&"), 2),
                ("||", _) => (Tok::Op("||"), 2),
                (_, '>') => (Tok::Op(">"), 1),
                (_, '<') => (Tok::Op("<"), 1),
                (_, '.') => (Tok::Dot, 1),
                (_, ',') => (Tok::Comma, 1),
                (_, '[') => (Tok::Open, 1),
                (_, ']') => (Tok::Close, 1),
                _ => return Err(format!("unexpected '{c}'")),
            };
            out.push(tok);
            i += n;
        }
    }
    Ok(out)
}

/// A parsed expression.
#[derive(Clone, Debug)]
enum Expr {
    Lit(Value),
    List(Vec<Expr>),
    /// Path steps: a field name, or a `[key]`.
    Path(Vec<(bool, String)>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }
    fn binary(
        &mut self,
        ops: &[&'static str],
        sub: fn(&mut Self) -> Result<Expr, String>,
    ) -> Result<Expr, String> {
        let mut left = sub(self)?;
        while let Some(Tok::Op(o)) = self.peek() {
            let Some(op) = ops.iter().find(|x| *x == o).copied() else {
                break;
            };
            self.at += 1;
            left = Expr::Bin(op, Box::new(left), Box::new(sub(self)?));
        }
        Ok(left)
    }
    fn or(&mut self) -> Result<Expr, String> {
        self.binary(&["||"], Self::and)
    }
    fn and(&mut self) -> Result<Expr, String> {
        self.binary(&["&&"], Self::cmp)
    }
    fn cmp(&mut self) -> Result<Expr, String> {
        let left = self.operand()?;
        let op = match self.peek() {
            Some(Tok::Op(o)) if !matches!(*o, "&&" | "||") => *o,
            Some(Tok::Name(n)) if n == "in" => "in",
            _ => return Ok(left),
        };
        self.at += 1;
        Ok(Expr::Bin(op, Box::new(left), Box::new(self.operand()?)))
    }
    fn operand(&mut self) -> Result<Expr, String> {
        match self.next() {
            Some(Tok::Num(n)) => Ok(Expr::Lit(Value::from(n))),
            Some(Tok::Str(s)) => Ok(Expr::Lit(Value::String(s))),
            Some(Tok::Open) => {
                let mut items = Vec::new();
                if self.peek() != Some(&Tok::Close) {
                    loop {
                        items.push(self.or()?);
                        match self.next() {
                            Some(Tok::Comma) => continue,
                            Some(Tok::Close) => break,
                            _ => return Err("expected , or ] in a list".into()),
                        }
                    }
                } else {
                    self.at += 1;
                }
                Ok(Expr::List(items))
            }
            Some(Tok::Name(n)) => match n.as_str() {
                "true" => Ok(Expr::Lit(Value::Bool(true))),
                "false" => Ok(Expr::Lit(Value::Bool(false))),
                "null" => Ok(Expr::Lit(Value::Null)),
                _ => {
                    let mut steps = vec![(false, n)];
                    loop {
                        match self.peek() {
                            Some(Tok::Dot) => {
                                self.at += 1;
                                match self.next() {
                                    Some(Tok::Name(f)) => steps.push((false, f)),
                                    _ => return Err("expected a field name after .".into()),
                                }
                            }
                            Some(Tok::Key(k)) => {
                                let k = k.clone();
                                self.at += 1;
                                steps.push((true, k));
                            }
                            _ => break,
                        }
                    }
                    Ok(Expr::Path(steps))
                }
            },
            Some(t) => Err(format!("unexpected {t:?}")),
            None => Err("unexpected end".into()),
        }
    }
}

fn parse(src: &str) -> Result<Expr, String> {
    let mut p = Parser {
        toks: lex(src)?,
        at: 0,
    };
    let e = p.or()?;
    if p.at < p.toks.len() {
        return Err(format!(
            "unexpected {:?} after the expression",
            p.toks[p.at]
        ));
    }
    Ok(e)
}

/// Check an answer expression's syntax (`failover-lab check`).
pub fn check(src: &str) -> Result<(), String> {
    parse(src).map(|_| ())
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

/// Whether array element `e` meets `cond`: `field OP value` conditions
/// joined by `&`, OP one of `= != > >= < <=` (a value compares as text, or
/// as a number when both are numbers; `>`… only as numbers).
fn meets(e: &Value, cond: &str) -> bool {
    cond.split('&').all(|c| {
        let Some((i, op)) = c.char_indices().find_map(|(i, _)| {
            ["!=", ">=", "<=", "=", ">", "<"]
                .into_iter()
                .find(|op| c[i..].starts_with(op))
                .map(|op| (i, op))
        }) else {
            return false;
        };
        let (field, want) = (c[..i].trim(), c[i + op.len()..].trim());
        let Some(v) = e.get(field) else {
            return false;
        };
        let eq = match v {
            Value::String(s) => s == want,
            _ => {
                want.parse::<f64>()
                    .ok()
                    .is_some_and(|w| Some(w) == v.as_f64())
                    || serde_json::to_string(v).is_ok_and(|t| t == want)
            }
        };
        let ord = |f: fn(f64, f64) -> bool| match (v.as_f64(), want.parse::<f64>()) {
            (Some(x), Ok(y)) => f(x, y),
            _ => false,
        };
        match op {
            "=" => eq,
            "!=" => !eq,
            ">" => ord(|x, y| x > y),
            ">=" => ord(|x, y| x >= y),
            "<" => ord(|x, y| x < y),
            _ => ord(|x, y| x <= y),
        }
    })
}

fn step<'a>(v: &'a Value, key: bool, name: &str) -> Option<Cow<'a, Value>> {
    match v {
        Value::Array(a) if key => {
            // `[?cond]`: every element that meets cond (a list).
            if let Some(cond) = name.strip_prefix('?') {
                return Some(Cow::Owned(Value::Array(
                    a.iter().filter(|e| meets(e, cond)).cloned().collect(),
                )));
            }
            if let Ok(i) = name.parse::<i64>() {
                // `[-1]`: the last element.
                let i = if i < 0 { a.len() as i64 + i } else { i };
                return usize::try_from(i)
                    .ok()
                    .and_then(|i| a.get(i))
                    .map(Cow::Borrowed);
            }
            a.iter()
                .find(|e| {
                    let tp = match (e.get("topic").and_then(Value::as_str), e.get("partition")) {
                        (Some(t), Some(p)) => format!("{t}-{p}"),
                        _ => String::new(),
                    };
                    tp == name
                        || e.get("id").and_then(Value::as_str) == Some(name)
                        || e.get("producer").and_then(Value::as_str) == Some(name)
                        || e.get("settings").and_then(Value::as_str) == Some(name)
                })
                // `[field=value&…]`: the first element that meets it.
                .or_else(|| {
                    a.iter()
                        .find(|e| name.contains(['=', '<', '>']) && meets(e, name))
                })
                .map(Cow::Borrowed)
        }
        _ => v.get(name).map(Cow::Borrowed),
    }
}

/// Follow path `steps` from `cur` (`.length` of a list or a string is its length).
fn walk(cur: &Value, steps: &[(bool, String)]) -> Value {
    let Some(((key, name), rest)) = steps.split_first() else {
        return cur.clone();
    };
    if !key && name == "length" {
        match cur {
            Value::Array(a) => return Value::from(a.len()),
            Value::String(t) => return Value::from(t.chars().count()),
            _ => {}
        }
    }
    match step(cur, *key, name) {
        Some(Cow::Borrowed(v)) => walk(v, rest),
        Some(Cow::Owned(v)) => walk(&v, rest),
        None => Value::Null,
    }
}

fn eval_expr(e: &Expr, root: &Value) -> Value {
    match e {
        Expr::Lit(v) => v.clone(),
        Expr::List(items) => Value::Array(items.iter().map(|x| eval_expr(x, root)).collect()),
        Expr::Path(steps) => walk(root, steps),
        Expr::Bin(op, a, b) => {
            let (x, y) = (eval_expr(a, root), eval_expr(b, root));
            let truthy = |v: &Value| {
                !matches!(v, Value::Null | Value::Bool(false)) && v.as_f64() != Some(0.0)
            };
            let ord = |f: fn(f64, f64) -> bool| match (num(&x), num(&y)) {
                (Some(p), Some(q)) => f(p, q),
                _ => false,
            };
            Value::Bool(match *op {
                "==" => same(&x, &y),
                "!=" => !same(&x, &y),
                ">" => ord(|p, q| p > q),
                ">=" => ord(|p, q| p >= q),
                "<" => ord(|p, q| p < q),
                "<=" => ord(|p, q| p <= q),
                "in" => match (&x, &y) {
                    (Value::String(part), Value::String(whole)) => whole.contains(part.as_str()),
                    _ => y.as_array().is_some_and(|l| l.iter().any(|v| same(&x, v))),
                },
                "&&" => truthy(&x) && truthy(&y),
                _ => truthy(&x) || truthy(&y),
            })
        }
    }
}

/// Evaluate `src` over `report` (the run report as JSON).
pub fn eval(src: &str, report: &Value) -> Result<Value, String> {
    Ok(eval_expr(&parse(src)?, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Value {
        serde_json::json!({
            "acked_records_lost": 3,
            "partitions": [
                {"topic": "orders", "partition": 0, "leader": 2, "isr": [2, 3]},
                {"topic": "orders", "partition": 1, "leader": null, "isr": []}
            ],
            "producers": [{"id": "p1", "errors": {"NOT_LEADER_OR_FOLLOWER": 2}}],
            "lanes": [
                {"settings": "acks=1", "report": {"acked_records_lost": 1}},
                {"settings": "acks=all", "report": {"acked_records_lost": 0}}
            ]
        })
    }

    #[test]
    fn paths_comparisons_lists_and_logic_evaluate_over_the_report() {
        let r = report();
        for (src, want) in [
            ("acked_records_lost", serde_json::json!(3)),
            ("acked_records_lost > 0", serde_json::json!(true)),
            ("partitions[orders-0].leader", serde_json::json!(2)),
            ("partitions[orders-0].leader in [2, 3]", serde_json::json!(true)),
            ("partitions[orders-1].leader == null", serde_json::json!(true)),
            ("partitions[orders-0].isr.length", serde_json::json!(2)),
            ("partitions[1].isr.length >= 1 || acked_records_lost == 3", serde_json::json!(true)),
            ("producers[p1].errors.NOT_LEADER_OR_FOLLOWER > 1 && partitions[orders-0].leader != 3", serde_json::json!(true)),
            ("producers[p1].errors.UNKNOWN", serde_json::json!(null)),
            ("partitions[orders-9].leader", serde_json::json!(null)),
            ("'a' == \"a\"", serde_json::json!(true)),
            ("lanes[acks=all].report.acked_records_lost", serde_json::json!(0)),
            ("lanes[1].settings", serde_json::json!("acks=all")),
            (
                "[lanes[acks=1].report.acked_records_lost > 0, lanes[acks=all].report.acked_records_lost > 0]",
                serde_json::json!([true, false]),
            ),
            ("[acked_records_lost > 0, 1] == [true, 1]", serde_json::json!(true)),
            ("partitions[orders-0].isr == [2, 3]", serde_json::json!(true)),
            ("partitions[orders-0].isr == [3, 2]", serde_json::json!(false)),
            ("partitions[leader=2].isr", serde_json::json!([2, 3])),
            ("partitions[topic=orders&partition=1].isr.length", serde_json::json!(0)),
            ("partitions[?topic=orders].length", serde_json::json!(2)),
            ("partitions[?leader=3].length", serde_json::json!(0)),
            ("partitions[?partition>=1].length", serde_json::json!(1)),
            ("partitions[?partition<1&leader!=3].length", serde_json::json!(1)),
            ("partitions[partition>0].leader", serde_json::json!(null)),
            ("partitions[leader!=2].partition", serde_json::json!(1)),
            ("partitions[-1].partition", serde_json::json!(1)),
            ("partitions[-3].partition", serde_json::json!(null)),
            ("'LEADER' in producers[0].errors.x || 'rder' in 'orders'", serde_json::json!(true)),
            ("'x' in 'orders'", serde_json::json!(false)),
            ("lanes[acks=1].settings.length", serde_json::json!(6)),
        ] {
            assert_eq!(eval(src, &r), Ok(want), "{src}");
        }
    }

    #[test]
    fn bad_expressions_are_refused_with_a_reason() {
        for bad in [
            "", "a ==", "a b", "[1, 2", "'open", "x.", "a = 1", "p[0", "1 $ 2",
        ] {
            assert!(check(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(check("partitions[orders-0].leader in [2, 3]").is_ok());
    }
}
