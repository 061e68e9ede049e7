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
//! `topic-partition` is `key`. A missing field is null. The page evaluates the
//! same language in JavaScript (www/question.js); tests/questions.rs checks
//! every shipped question here, tests/e2e/questions.test.mjs on the page.

use serde_json::Value;

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
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn step<'a>(v: &'a Value, key: bool, name: &str) -> Option<&'a Value> {
    match v {
        Value::Array(a) if key => name
            .parse::<usize>()
            .ok()
            .and_then(|i| a.get(i))
            .or_else(|| {
                a.iter().find(|e| {
                    let tp = match (e.get("topic").and_then(Value::as_str), e.get("partition")) {
                        (Some(t), Some(p)) => format!("{t}-{p}"),
                        _ => String::new(),
                    };
                    tp == name
                        || e.get("id").and_then(Value::as_str) == Some(name)
                        || e.get("producer").and_then(Value::as_str) == Some(name)
                        || e.get("settings").and_then(Value::as_str) == Some(name)
                })
            }),
        _ => v.get(name),
    }
}

fn eval_expr(e: &Expr, root: &Value) -> Value {
    match e {
        Expr::Lit(v) => v.clone(),
        Expr::List(items) => Value::Array(items.iter().map(|x| eval_expr(x, root)).collect()),
        Expr::Path(steps) => {
            let mut cur = root;
            for (key, name) in steps {
                if !key && name == "length" {
                    if let Value::Array(a) = cur {
                        return Value::from(a.len());
                    }
                }
                match step(cur, *key, name) {
                    Some(v) => cur = v,
                    None => return Value::Null,
                }
            }
            cur.clone()
        }
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
                "in" => y.as_array().is_some_and(|l| l.iter().any(|v| same(&x, v))),
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
