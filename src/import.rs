//! Bring your own cluster (issue 65): the text a Kafka operator already has —
//! `kafka-topics.sh --describe`, optionally `kafka-configs.sh --describe
//! --entity-type brokers` / `--entity-type topics` and a `broker.rack` list —
//! becomes a scenario with that topology: brokers, racks, topics, partitions,
//! replicas in order, the current leaders, ISR and ELR (a topic's
//! `initial_state`, so a leader that is not first in its replica list stays
//! leader), and the configs the lab models. Configs it does not model are
//! listed by name as ignored, never guessed at.
//!
//! The formats read are the tools' own:
//!
//! ```text
//! Topic: orders    TopicId: 3q2l…    PartitionCount: 3    ReplicationFactor: 3    Configs: min.insync.replicas=2
//!     Topic: orders    Partition: 0    Leader: 2    Replicas: 1,2,3    Isr: 2,3    Elr:     LastKnownElr:
//! Dynamic configs for broker 1 are:
//!   unclean.leader.election.enable=true sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:…}
//! ```
//!
//! Fields are found by their labels, so tabs turned into spaces by a
//! terminal's copy, a describe from before Kafka 3.7 (no `Elr` columns), the
//! old `Topic:orders` spelling without a space, `Leader: none` (offline) and
//! `Elr: N/A` all read. Anything else is refused with its line number and what
//! was expected there. Nothing here panics; the same code runs in the CLI
//! (`failover-lab import`) and in the page (the full wasm build), so nothing
//! pasted leaves the browser.

use crate::sweep::json_value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::scenario::{MAX_BROKERS, MAX_BROKER_PARTITIONS, MAX_PARTITIONS};
use crate::sim::config::keys_read;
use crate::sim::protocol::BrokerId;

/// The largest cluster a page runs: the size of its largest tour (tour 19,
/// 60 brokers and 20,000 partitions).
pub const PAGE_MAX_PARTITIONS: usize = 20_000;
pub const PAGE_MAX_BROKERS: usize = 100;

/// How big an imported cluster may be, and who says so.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_brokers: usize,
    pub max_partitions: usize,
    /// Named in the refusal ("the page", "the lab").
    pub who: &'static str,
}

impl Limits {
    pub const LAB: Limits = Limits {
        max_brokers: MAX_BROKERS as usize,
        max_partitions: MAX_PARTITIONS as usize,
        who: "the lab",
    };
    pub const PAGE: Limits = Limits {
        max_brokers: PAGE_MAX_BROKERS,
        max_partitions: PAGE_MAX_PARTITIONS,
        who: "the page",
    };
}

/// The short form's choices: load and clients the describe output cannot
/// tell.
#[derive(Clone, Debug)]
pub struct Options {
    pub name: Option<String>,
    pub seed: u64,
    /// Records a second of one producer per topic (0: no producers).
    pub records_per_sec: u64,
    /// `"0"`, `"1"` or `"all"`.
    pub acks: String,
    /// One consumer per topic, reading all its partitions.
    pub consumers: bool,
    pub run_until_ms: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            name: None,
            seed: 1,
            records_per_sec: 0,
            acks: "all".to_string(),
            consumers: false,
            run_until_ms: 60_000,
        }
    }
}

/// An imported cluster: the scenario as JSON text, and what the import
/// changed or left out, in words.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Imported {
    pub scenario: String,
    pub notes: Vec<String>,
    /// Configs not modelled, by name (`topic orders: cleanup.policy`).
    pub ignored: Vec<String>,
    pub brokers: u32,
    pub topics: usize,
    pub partitions: usize,
}

type R<T> = Result<T, String>;

/// `line N: message`, the form of every refusal.
fn at(line: usize, msg: impl std::fmt::Display) -> String {
    format!("line {line}: {msg}")
}

/// Shorten what was found for a message (whole characters, at most 60).
fn found(s: &str) -> String {
    let t: String = s.trim().chars().take(60).collect();
    if t.len() < s.trim().len() {
        format!("\"{t}…\"")
    } else {
        format!("\"{t}\"")
    }
}

const LABELS: &[&str] = &[
    "Topic",
    "TopicId",
    "PartitionCount",
    "ReplicationFactor",
    "Configs",
    "Partition",
    "Leader",
    "Replicas",
    "Isr",
    "Adding Replicas",
    "Removing Replicas",
    "Elr",
    "LastKnownElr",
    "MarkedForDeletion",
];

/// The label a word starts (`Isr:`, `Topic:orders`), and the rest of the word.
fn label_of(word: &str) -> Option<(&'static str, &str)> {
    LABELS.iter().find_map(|l| {
        let rest = word.strip_prefix(l)?.strip_prefix(':')?;
        Some((*l, rest))
    })
}

/// A describe line's fields by label, in order; `None` when the line does not
/// start with one.
fn fields(line: &str) -> Option<Vec<(&'static str, String)>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        // Two-word labels of a reassignment in progress.
        let two = if (w == "Adding" || w == "Removing") && i + 1 < words.len() {
            label_of(&format!("{w} {}", words[i + 1]))
                .map(|(l, rest)| (l, rest.to_string()))
                .filter(|(l, _)| l.contains(' '))
        } else {
            None
        };
        if let Some((l, rest)) = two {
            out.push((l, rest));
            i += 2;
            continue;
        }
        match label_of(w) {
            Some((l, rest)) => out.push((l, rest.to_string())),
            None => {
                let (_, v) = out.last_mut()?;
                if !v.is_empty() {
                    v.push(' ');
                }
                v.push_str(w);
            }
        }
        i += 1;
    }
    Some(out)
}

fn get<'a>(f: &'a [(&'static str, String)], label: &str) -> Option<&'a str> {
    f.iter().find(|(l, _)| *l == label).map(|(_, v)| v.as_str())
}

/// A required field of a line.
fn need<'a>(f: &'a [(&'static str, String)], label: &str, line: usize, after: &str) -> R<&'a str> {
    get(f, label).ok_or_else(|| at(line, format!("expected \"{label}:\" {after}")))
}

fn count(v: &str, label: &str, line: usize) -> R<u32> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            at(
                line,
                format!(
                    "{label}: expected a whole number of at least 1, found {}",
                    found(v)
                ),
            )
        })
}

/// `1,2,3` (empty allowed when `may_be_empty`; `N/A` reads as empty).
fn ids(v: &str, label: &str, line: usize, may_be_empty: bool) -> R<Vec<u32>> {
    let t = v.trim();
    if t.is_empty() || t == "N/A" {
        if may_be_empty {
            return Ok(Vec::new());
        }
        return Err(at(
            line,
            format!("{label}: expected broker ids separated by commas, found nothing"),
        ));
    }
    let mut out: Vec<u32> = Vec::new();
    for part in t.split(',') {
        let b = part.trim().parse::<u32>().map_err(|_| {
            at(
                line,
                format!(
                    "{label}: expected broker ids separated by commas (like 1,2,3), found {}",
                    found(t)
                ),
            )
        })?;
        if out.contains(&b) {
            return Err(at(line, format!("{label}: broker {b} appears twice")));
        }
        out.push(b);
    }
    Ok(out)
}

fn join(v: &[u32]) -> String {
    v.iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

struct Partition {
    line: usize,
    replicas: Vec<u32>,
    leader: Option<u32>,
    isr: Vec<u32>,
    elr: Vec<u32>,
    last_known_elr: Vec<u32>,
}

struct Topic {
    line: usize,
    name: String,
    topic_id: Option<String>,
    partition_count: u32,
    replication_factor: u32,
    /// `Configs:` entries (and `kafka-configs.sh` ones), key → (value, line).
    configs: BTreeMap<String, (String, usize)>,
    partitions: BTreeMap<u32, Partition>,
}

/// Which entity a `kafka-configs.sh --describe` section is about.
#[derive(Clone, PartialEq)]
enum Section {
    Broker(u32),
    BrokerDefault,
    Topic(String),
}

/// What was read, before it becomes a scenario.
#[derive(Default)]
struct Parsed {
    topics: Vec<Topic>,
    /// Broker configs: key → (broker or None for the cluster default) → (value, line).
    broker_configs: BTreeMap<String, BTreeMap<Option<u32>, (String, usize)>>,
    /// Topic configs from `kafka-configs.sh`, by topic name.
    topic_configs: BTreeMap<String, BTreeMap<String, (String, usize)>>,
    racks: BTreeMap<u32, (String, usize)>,
    notes: Vec<String>,
}

/// `Dynamic configs for broker 1 are:` and its kin (Kafka 2.x onwards), or
/// the one-line form of the ZooKeeper era (`Configs for topic 'x' are k=v,…`).
fn config_header(line: &str) -> Option<(Section, Option<&str>)> {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("Configs for ") {
        // Configs for topic 'orders' are min.insync.replicas=2,…
        let (what, tail) = rest.split_once(" are")?;
        let (kind, name) = what.split_once(' ')?;
        let name = name.trim().trim_matches('\'');
        let section = match kind {
            "topic" | "topics" => Section::Topic(name.to_string()),
            "broker" | "brokers" if name == "<default>" || name.is_empty() => {
                Section::BrokerDefault
            }
            "broker" | "brokers" => Section::Broker(name.parse().ok()?),
            _ => return None,
        };
        return Some((section, Some(tail.trim())));
    }
    if t.starts_with("Default configs for brokers") && t.ends_with("are:") {
        return Some((Section::BrokerDefault, None));
    }
    for source in ["Dynamic", "All", "Static"] {
        let Some(rest) = t
            .strip_prefix(source)
            .and_then(|r| r.strip_prefix(" configs for "))
            .and_then(|r| r.strip_suffix(" are:"))
        else {
            continue;
        };
        let (kind, name) = rest.split_once(' ')?;
        return match kind {
            "topic" => Some((Section::Topic(name.trim().to_string()), None)),
            "broker" if name.trim() == "<default>" => Some((Section::BrokerDefault, None)),
            "broker" => Some((Section::Broker(name.trim().parse().ok()?), None)),
            _ => None,
        };
    }
    None
}

/// One `  key=value sensitive=false synonyms={SOURCE:key=value, …}` entry:
/// its key, value, and whether the value is Kafka's own default (its first
/// synonym's source is DEFAULT_CONFIG), which the lab already uses.
fn config_entry(t: &str) -> Option<(String, String, bool)> {
    let t = t.trim();
    let (kv, tail) = match t.rfind(" sensitive=") {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let (k, v) = kv.split_once('=')?;
    if k.is_empty() || k.contains(char::is_whitespace) {
        return None;
    }
    let default = tail
        .split_once("synonyms={")
        .is_some_and(|(_, s)| s.starts_with("DEFAULT_CONFIG:"));
    Some((k.to_string(), v.trim().to_string(), default))
}

/// A `broker.rack` list line: `1 rack-a`, `1=rack-a`, `1: rack-a`,
/// `broker 1 rack-a` or `broker.rack 1 rack-a`.
fn rack_line(t: &str) -> Option<(u32, String)> {
    let t = t.trim();
    let t = t
        .strip_prefix("broker.rack")
        .or_else(|| t.strip_prefix("broker"))
        .unwrap_or(t)
        .trim_start_matches([' ', '\t', ':', '=']);
    let end = t.find(|c: char| !c.is_ascii_digit())?;
    let id: u32 = t[..end].parse().ok()?;
    let rest = t[end..]
        .trim_start_matches([' ', '\t', ':', '=', ','])
        .trim();
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return None;
    }
    Some((id, rest.to_string()))
}

fn parse(text: &str) -> R<Parsed> {
    let mut p = Parsed::default();
    let mut section: Option<(Section, usize)> = None;
    let mut saw_any = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches('\r');
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with("SLF4J:") {
            continue;
        }
        saw_any = true;
        let indented = line.starts_with([' ', '\t']);
        // Inside a kafka-configs.sh section, indented lines are its entries.
        if let (true, Some((s, _))) = (indented, &section) {
            if !t.starts_with("Topic:") {
                let (k, v, default) = config_entry(t).ok_or_else(|| {
                    at(n, format!("expected a config entry like \"  min.insync.replicas=2 sensitive=false synonyms={{…}}\", found {}", found(t)))
                })?;
                add_config(&mut p, s, k, v, default, n);
                continue;
            }
        }
        section = None;
        if let Some((s, one_line)) = config_header(t) {
            if let Some(list) = one_line {
                // The ZooKeeper era's one-line form.
                if !list.is_empty() {
                    for kv in split_configs(list) {
                        let (k, v) = kv.split_once('=').ok_or_else(|| {
                            at(
                                n,
                                format!(
                                    "expected key=value pairs separated by commas, found {}",
                                    found(&kv)
                                ),
                            )
                        })?;
                        add_config(
                            &mut p,
                            &s,
                            k.trim().to_string(),
                            v.trim().to_string(),
                            false,
                            n,
                        );
                    }
                }
            } else {
                section = Some((s, n));
            }
            continue;
        }
        match fields(t) {
            Some(f) if get(&f, "Partition").is_some() => partition_line(&mut p, &f, n)?,
            Some(f) if get(&f, "PartitionCount").is_some() => topic_line(&mut p, &f, n)?,
            Some(f) if f.first().is_some_and(|(l, _)| *l == "Topic") => {
                return Err(at(n, format!("expected \"PartitionCount:\" on a topic line or \"Partition:\" on a partition line, found {}", found(t))))
            }
            _ => match rack_line(t) {
                Some((b, rack)) => {
                    if let Some((_, first)) = p.racks.get(&b) {
                        return Err(at(n, format!("broker {b} is given a rack twice (first on line {first})")));
                    }
                    p.racks.insert(b, (rack, n));
                }
                None => {
                    return Err(at(
                        n,
                        format!(
                            "expected a line of kafka-topics.sh --describe (\"Topic: …\tPartitionCount: …\" or \"\tTopic: …\tPartition: …\"), of kafka-configs.sh --describe (\"Dynamic configs for broker 1 are:\") or a broker.rack line (\"1 rack-a\"), found {}",
                            found(t)
                        ),
                    ))
                }
            },
        }
    }
    if !saw_any {
        return Err(at(
            1,
            "expected the output of kafka-topics.sh --describe, found nothing",
        ));
    }
    if p.topics.is_empty() {
        return Err(at(
            text.lines().count().max(1),
            "expected at least one topic line (\"Topic: …\tPartitionCount: …\") of kafka-topics.sh --describe, found none",
        ));
    }
    Ok(p)
}

/// `Configs:` as kafka-topics.sh prints them: `k=v,k=v`, where a value may
/// itself hold commas (`cleanup.policy=compact,delete`): a piece without `=`
/// belongs to the value before it.
fn split_configs(list: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for piece in list.split(',') {
        match out.last_mut() {
            Some(prev) if !piece.contains('=') => {
                prev.push(',');
                prev.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
    }
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

fn add_config(p: &mut Parsed, s: &Section, k: String, v: String, default: bool, n: usize) {
    // Kafka's defaults are the lab's: a value at its default adds nothing.
    if default {
        return;
    }
    match s {
        Section::Broker(b) if k == "broker.rack" => {
            p.racks.entry(*b).or_insert((v, n));
        }
        Section::Broker(b) => {
            p.broker_configs
                .entry(k)
                .or_default()
                .insert(Some(*b), (v, n));
        }
        Section::BrokerDefault => {
            p.broker_configs.entry(k).or_default().insert(None, (v, n));
        }
        Section::Topic(t) => {
            p.topic_configs
                .entry(t.clone())
                .or_default()
                .insert(k, (v, n));
        }
    }
}

fn topic_line(p: &mut Parsed, f: &[(&'static str, String)], n: usize) -> R<()> {
    let name = need(f, "Topic", n, "at the start of a topic line")?
        .trim()
        .to_string();
    check_topic_name(&name, n)?;
    if let Some(t) = p.topics.iter().find(|t| t.name == name) {
        return Err(at(
            n,
            format!("topic {name} is described twice (first on line {})", t.line),
        ));
    }
    let topic_id = match get(f, "TopicId").map(str::trim) {
        None | Some("") => None,
        Some(id) => {
            if id.len() != 22
                || !id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(at(n, format!("TopicId: expected 22 characters of URL-safe base64 (like 3q2lFfyuRW2n0P6CfBDMKA), found {}", found(id))));
            }
            Some(id.to_string())
        }
    };
    let partition_count = count(
        need(f, "PartitionCount", n, "on a topic line")?,
        "PartitionCount",
        n,
    )?;
    let replication_factor = count(
        need(f, "ReplicationFactor", n, "after \"PartitionCount:\"")?,
        "ReplicationFactor",
        n,
    )?;
    let mut configs = BTreeMap::new();
    for kv in split_configs(get(f, "Configs").unwrap_or("")) {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            at(
                n,
                format!(
                    "Configs: expected key=value pairs separated by commas, found {}",
                    found(&kv)
                ),
            )
        })?;
        configs.insert(k.trim().to_string(), (v.trim().to_string(), n));
    }
    p.topics.push(Topic {
        line: n,
        name,
        topic_id,
        partition_count,
        replication_factor,
        configs,
        partitions: BTreeMap::new(),
    });
    Ok(())
}

fn check_topic_name(name: &str, n: usize) -> R<()> {
    if name.is_empty()
        || name.len() > 249
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    {
        return Err(at(n, format!("Topic: {} is not a legal topic name (ASCII letters, digits, '.', '_', '-', at most 249)", found(name))));
    }
    Ok(())
}

fn partition_line(p: &mut Parsed, f: &[(&'static str, String)], n: usize) -> R<()> {
    let name = need(f, "Topic", n, "on a partition line")?
        .trim()
        .to_string();
    let Some(topic) = p.topics.last_mut() else {
        return Err(at(n, format!("partition line of topic {name} comes before any topic line (\"Topic: {name}\tPartitionCount: …\")")));
    };
    if topic.name != name {
        return Err(at(n, format!("expected a partition of topic {} (the topic line before it, line {}), found one of topic {name}", topic.name, topic.line)));
    }
    let pv = need(f, "Partition", n, "")?.trim();
    let partition: u32 = pv.parse().map_err(|_| {
        at(
            n,
            format!(
                "Partition: expected a partition number, found {}",
                found(pv)
            ),
        )
    })?;
    if partition >= topic.partition_count {
        return Err(at(
            n,
            format!(
                "Partition: {partition} is beyond PartitionCount: {} on line {}",
                topic.partition_count, topic.line
            ),
        ));
    }
    if let Some(first) = topic.partitions.get(&partition) {
        return Err(at(
            n,
            format!(
                "partition {name}-{partition} is listed twice (first on line {})",
                first.line
            ),
        ));
    }
    let lv = need(f, "Leader", n, "after \"Partition:\"")?.trim();
    let leader = match lv {
        "none" | "-1" => None,
        _ => Some(lv.parse::<u32>().map_err(|_| {
            at(
                n,
                format!("Leader: expected a broker id or none, found {}", found(lv)),
            )
        })?),
    };
    let mut replicas = ids(
        need(f, "Replicas", n, "after \"Leader:\"")?,
        "Replicas",
        n,
        false,
    )?;
    let mut isr = ids(need(f, "Isr", n, "after \"Replicas:\"")?, "Isr", n, true)?;
    let mut elr = ids(get(f, "Elr").unwrap_or(""), "Elr", n, true)?;
    let mut last_known_elr = ids(
        get(f, "LastKnownElr").unwrap_or(""),
        "LastKnownElr",
        n,
        true,
    )?;
    // A reassignment in progress: its replica list holds the target's new
    // replicas too; the lab takes the assignment it is moving from.
    let adding = ids(
        get(f, "Adding Replicas").unwrap_or(""),
        "Adding Replicas",
        n,
        true,
    )?;
    if !adding.is_empty() {
        replicas.retain(|b| !adding.contains(b));
        for l in [&mut isr, &mut elr, &mut last_known_elr] {
            l.retain(|b| !adding.contains(b));
        }
        p.notes.push(format!(
            "line {n}: {name}-{partition} is being reassigned; the lab takes its replicas before the move ({}) and leaves out the adding replicas {}",
            join(&replicas),
            join(&adding)
        ));
    }
    if replicas.len() != topic.replication_factor as usize {
        return Err(at(
            n,
            format!(
                "Replicas: expected {} replicas (ReplicationFactor: {} on line {}), found {}",
                topic.replication_factor,
                topic.replication_factor,
                topic.line,
                replicas.len()
            ),
        ));
    }
    for (label, list) in [
        ("Isr", &isr),
        ("Elr", &elr),
        ("LastKnownElr", &last_known_elr),
    ] {
        if let Some(b) = list.iter().find(|b| !replicas.contains(b)) {
            return Err(at(
                n,
                format!(
                    "{label}: broker {b} is not one of the replicas {}",
                    join(&replicas)
                ),
            ));
        }
    }
    if let Some(l) = leader {
        if !replicas.contains(&l) {
            return Err(at(
                n,
                format!(
                    "Leader: broker {l} is not one of the replicas {}",
                    join(&replicas)
                ),
            ));
        }
        if !isr.contains(&l) {
            return Err(at(
                n,
                format!(
                    "Leader: broker {l} is not in the Isr {} (Kafka's leader is always in sync)",
                    join(&isr)
                ),
            ));
        }
    } else if isr.len() > 1 {
        return Err(at(n, format!("Isr: an offline partition (Leader: none) keeps at most its last in-sync replica, found {}", join(&isr))));
    }
    if let Some(b) = elr.iter().find(|b| isr.contains(b)) {
        return Err(at(
            n,
            format!(
                "Elr: broker {b} is in the Isr too (eligible leader replicas are out of the ISR)"
            ),
        ));
    }
    topic.partitions.insert(
        partition,
        Partition {
            line: n,
            replicas,
            leader,
            isr,
            elr,
            last_known_elr,
        },
    );
    Ok(())
}

/// Import `text` (describe output, and optionally configs and a rack list,
/// in one text) into a scenario, within `limits`.
pub fn import(text: &str, opts: &Options, limits: Limits) -> R<Imported> {
    let mut p = parse(text)?;
    let mut notes = std::mem::take(&mut p.notes);
    let mut ignored: Vec<String> = Vec::new();

    // Every partition listed, none missing.
    let mut total = 0usize;
    for t in &p.topics {
        if let Some(missing) = (0..t.partition_count).find(|i| !t.partitions.contains_key(i)) {
            return Err(at(t.line, format!(
                "PartitionCount: {} but partition {}-{missing} is not listed (paste the whole --describe output, not a filtered one such as --under-replicated-partitions)",
                t.partition_count, t.name
            )));
        }
        total += t.partition_count as usize;
    }
    // The lab creates __consumer_offsets itself for consumers with a group.
    if let Some(i) = p
        .topics
        .iter()
        .position(|t| t.name == crate::sim::OFFSETS_TOPIC)
    {
        let t = p.topics.remove(i);
        total -= t.partition_count as usize;
        notes.push(format!("line {}: {} left out: the lab creates Kafka's offsets topic itself for consumers with a group.id", t.line, t.name));
        if p.topics.is_empty() {
            return Err(at(
                t.line,
                "expected a topic besides __consumer_offsets, found none",
            ));
        }
    }

    // Broker ids: the lab numbers its brokers 1..=N.
    let mut seen: Vec<u32> = p
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .values()
                .flat_map(|x| x.replicas.iter().copied())
        })
        .chain(p.racks.keys().copied())
        .chain(
            p.broker_configs
                .values()
                .flat_map(|m| m.keys().flatten().copied()),
        )
        .collect();
    crate::sim::shared::sort_slim(&mut seen);
    seen.dedup();
    let keep = seen.first().is_some_and(|&b| b >= 1)
        && seen
            .last()
            .is_some_and(|&b| (b as usize) <= 2 * seen.len() && (b as usize) <= limits.max_brokers);
    let brokers = if keep {
        seen.last().copied().unwrap_or(1)
    } else {
        seen.len() as u32
    };
    let map = |b: u32| -> BrokerId {
        if keep {
            b
        } else {
            seen.binary_search(&b).map_or(0, |i| i as u32 + 1)
        }
    };
    if !keep {
        let pairs: Vec<String> = seen
            .iter()
            .take(12)
            .map(|&b| format!("{b} → {}", map(b)))
            .collect();
        notes.push(format!(
            "broker ids renumbered 1..={} in order, as the lab numbers its brokers: {}{}",
            seen.len(),
            pairs.join(", "),
            if seen.len() > 12 { ", …" } else { "" }
        ));
    } else if (brokers as usize) > seen.len() {
        let idle: Vec<String> = (1..=brokers)
            .filter(|b| seen.binary_search(b).is_err())
            .map(|b| b.to_string())
            .collect();
        notes.push(format!(
            "broker{} {} hold{} no replica: running and idle in the lab",
            if idle.len() == 1 { "" } else { "s" },
            idle.join(", "),
            if idle.len() == 1 { "s" } else { "" }
        ));
    }

    // Sizes, each refused with its limit named.
    if brokers as usize > limits.max_brokers {
        return Err(format!(
            "{brokers} brokers: {} runs at most {} brokers{}",
            limits.who,
            limits.max_brokers,
            hint(limits)
        ));
    }
    if total > limits.max_partitions {
        return Err(format!(
            "{total} partitions: {} runs at most {} partitions{}",
            limits.who,
            limits.max_partitions,
            hint(limits)
        ));
    }
    if total as u64 * u64::from(brokers) > MAX_BROKER_PARTITIONS {
        return Err(format!("{total} partitions × {brokers} brokers: the lab runs at most {MAX_BROKER_PARTITIONS} broker-partitions"));
    }

    // Configs: what the lab models goes into the scenario, the rest is named.
    let topic_keys = keys_read(true);
    let cluster_keys: Vec<&str> = keys_read(false)
        .into_iter()
        .filter(|k| !k.starts_with("sim."))
        .collect();
    let mut cluster_config: BTreeMap<String, Value> = BTreeMap::new();
    for (k, by_broker) in &p.broker_configs {
        if !cluster_keys.contains(&k.as_str()) {
            ignored.push(format!("broker: {k}"));
            continue;
        }
        let per_broker: Vec<&(String, usize)> = by_broker
            .iter()
            .filter(|(b, _)| b.is_some())
            .map(|(_, v)| v)
            .collect();
        let value = if per_broker.is_empty() {
            by_broker.get(&None)
        } else if per_broker.iter().all(|v| v.0 == per_broker[0].0)
            && (per_broker.len() == seen.len()
                || by_broker.get(&None).is_none_or(|d| d.0 == per_broker[0].0))
        {
            Some(per_broker[0])
        } else {
            ignored.push(format!(
                "broker: {k} (it differs between brokers; the lab has one broker config)"
            ));
            continue;
        };
        if let Some((v, line)) = value {
            check_value(k, v, false, *line)?;
            cluster_config.insert(k.clone(), json_value(v));
        }
    }

    let mut racks: BTreeMap<String, Value> = BTreeMap::new();
    if !p.racks.is_empty() {
        let missing: Vec<String> = (1..=brokers)
            .filter(|b| !p.racks.iter().any(|(x, _)| map(*x) == *b))
            .map(|b| b.to_string())
            .collect();
        if missing.is_empty() {
            for (b, (r, _)) in &p.racks {
                racks.insert(map(*b).to_string(), Value::from(r.as_str()));
            }
        } else {
            let line = p.racks.values().map(|(_, l)| *l).min().unwrap_or(1);
            return Err(at(line, format!(
                "broker.rack: expected a rack for every broker or none (Kafka refuses a rack-aware cluster where only some have one), found none for broker{} {}",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            )));
        }
    }

    // Offline partitions: their eligible replicas must be down, or the
    // controller would have elected one; they start crashed.
    let mut down: Vec<BrokerId> = Vec::new();
    for t in &p.topics {
        for x in t.partitions.values() {
            if x.leader.is_none() {
                down.extend(x.isr.iter().chain(&x.elr).map(|b| map(*b)));
            }
        }
    }
    crate::sim::shared::sort_slim(&mut down);
    down.dedup();
    if !down.is_empty() {
        notes.push(format!(
            "broker{} {} crash{} at t = 0: {} an offline partition's last in-sync or eligible replica, which the controller would have elected had it been up",
            if down.len() == 1 { "" } else { "s" },
            down.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", "),
            if down.len() == 1 { "es" } else { "" },
            if down.len() == 1 { "it is" } else { "each is" }
        ));
    }

    let mut out = String::with_capacity(total * 48 + 1024);
    let name = opts.name.clone().unwrap_or_else(|| {
        format!(
            "Imported cluster: {brokers} broker{}, {} topic{}, {total} partition{}",
            if brokers == 1 { "" } else { "s" },
            p.topics.len(),
            if p.topics.len() == 1 { "" } else { "s" },
            if total == 1 { "" } else { "s" }
        )
    });
    let js = |v: &Value| v.to_string();
    out.push_str("{\n");
    let _ = writeln!(out, "  \"name\": {},", js(&Value::from(name)));
    let _ = writeln!(out, "  \"description\": \"Imported from kafka-topics.sh --describe output: the leaders, ISR and ELR as they stood, with empty logs.\",");
    let _ = writeln!(out, "  \"seed\": {},", opts.seed);
    let _ = writeln!(out, "  \"brokers\": {brokers},");
    if !racks.is_empty() {
        let _ = writeln!(
            out,
            "  \"racks\": {},",
            js(&Value::Object(racks.into_iter().collect()))
        );
    }
    if !cluster_config.is_empty() {
        let _ = writeln!(
            out,
            "  \"config\": {},",
            js(&Value::Object(cluster_config.into_iter().collect()))
        );
    }
    out.push_str("  \"topics\": [");
    for (ti, t) in p.topics.iter().enumerate() {
        let mut configs = t.configs.clone();
        if let Some(extra) = p.topic_configs.get(&t.name) {
            configs.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let mut tconfig = serde_json::Map::new();
        for (k, (v, line)) in &configs {
            if topic_keys.contains(&k.as_str()) {
                check_value(k, v, true, *line)?;
                tconfig.insert(k.clone(), json_value(v));
            } else {
                ignored.push(format!("topic {}: {k}", t.name));
            }
        }
        out.push_str(if ti == 0 { "\n" } else { ",\n" });
        let _ = write!(out, "    {{\"name\": {}", js(&Value::from(t.name.as_str())));
        if let Some(id) = &t.topic_id {
            let _ = write!(out, ", \"topic_id\": {}", js(&Value::from(id.as_str())));
        }
        let _ = write!(out, ", \"replication_factor\": {}", t.replication_factor);
        if !tconfig.is_empty() {
            let _ = write!(out, ", \"config\": {}", js(&Value::Object(tconfig)));
        }
        out.push_str(",\n     \"assignment\": [");
        for (i, x) in t.partitions.values().enumerate() {
            let r: Vec<String> = x.replicas.iter().map(|b| map(*b).to_string()).collect();
            let _ = write!(out, "{}[{}]", if i == 0 { "" } else { ", " }, r.join(", "));
        }
        out.push_str("],\n     \"initial_state\": [");
        let list = |v: &[u32]| {
            v.iter()
                .map(|b| map(*b).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (i, x) in t.partitions.values().enumerate() {
            out.push_str(if i == 0 { "\n       " } else { ",\n       " });
            let _ = write!(
                out,
                "{{\"leader\": {}, \"isr\": [{}]",
                x.leader.map_or("null".to_string(), |l| map(l).to_string()),
                list(&x.isr)
            );
            if !x.elr.is_empty() {
                let _ = write!(out, ", \"elr\": [{}]", list(&x.elr));
            }
            if !x.last_known_elr.is_empty() {
                let _ = write!(out, ", \"last_known_elr\": [{}]", list(&x.last_known_elr));
            }
            out.push('}');
        }
        out.push_str("]}");
    }
    out.push_str("\n  ],\n");
    let mut clients: Vec<String> = Vec::new();
    for t in &p.topics {
        let tn = js(&Value::from(t.name.as_str()));
        if opts.records_per_sec > 0 {
            clients.push(format!(
                "{{\"type\": \"producer\", \"id\": {}, \"topic\": {tn}, \"acks\": {}, \"records_per_sec\": {}}}",
                js(&Value::from(format!("producer-{}", t.name))),
                js(&Value::from(opts.acks.as_str())),
                opts.records_per_sec
            ));
        }
        if opts.consumers {
            clients.push(format!(
                "{{\"type\": \"consumer\", \"id\": {}, \"topic\": {tn}}}",
                js(&Value::from(format!("consumer-{}", t.name)))
            ));
        }
    }
    if !clients.is_empty() {
        let _ = writeln!(
            out,
            "  \"clients\": [\n    {}\n  ],",
            clients.join(",\n    ")
        );
    }
    if !down.is_empty() {
        let steps: Vec<String> = down
            .iter()
            .map(|b| format!("{{\"at_ms\": 0, \"crash\": {b}}}"))
            .collect();
        let _ = writeln!(out, "  \"steps\": [{}],", steps.join(", "));
    }
    let _ = writeln!(out, "  \"run_until_ms\": {}", opts.run_until_ms);
    out.push_str("}\n");
    if !ignored.is_empty() {
        notes.push(format!("not modelled, ignored: {}", ignored.join(", ")));
    }
    Ok(Imported {
        scenario: out,
        notes,
        ignored,
        brokers,
        topics: p.topics.len(),
        partitions: total,
    })
}

fn hint(limits: Limits) -> String {
    if limits.who == "the page" {
        format!(
            " (the CLI's failover-lab import runs up to {} partitions and {} brokers)",
            Limits::LAB.max_partitions,
            Limits::LAB.max_brokers
        )
    } else {
        String::new()
    }
}

/// A modelled config's value, checked by the core's own reader so the
/// refusal names the line it came from.
fn check_value(key: &str, v: &str, topic: bool, line: usize) -> R<()> {
    let mut m = crate::sim::config::ConfigMap::new();
    m.insert(key.to_string(), json_value(v));
    let r = if topic {
        crate::sim::config::TopicConfig::parse(&m, "config", &Default::default()).map(|_| ())
    } else {
        crate::sim::config::ClusterConfig::parse(&m, "config").map(|_| ())
    };
    r.map_err(|e| {
        at(
            line,
            format!(
                "{key}={v}: {}",
                e.trim_start_matches(&format!("config[\"{key}\"]: "))
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_found_with_tabs_or_spaces_and_without_a_space_after_the_colon() {
        let f = fields("Topic:orders\tPartitionCount:3 ReplicationFactor: 3 Configs: a=1,b=2")
            .unwrap_or_default();
        assert_eq!(get(&f, "Topic"), Some("orders"));
        assert_eq!(get(&f, "PartitionCount"), Some("3"));
        assert_eq!(get(&f, "Configs"), Some("a=1,b=2"));
        let f = fields("Topic: t Partition: 0 Leader: 1 Replicas: 1,2 Isr: 1 Adding Replicas: 2 Removing Replicas: Elr: N/A").unwrap_or_default();
        assert_eq!(get(&f, "Adding Replicas"), Some("2"));
        assert_eq!(get(&f, "Removing Replicas"), Some(""));
        assert_eq!(get(&f, "Elr"), Some("N/A"));
    }

    #[test]
    fn configs_with_commas_in_values_stay_whole() {
        assert_eq!(
            split_configs("cleanup.policy=compact,delete,min.insync.replicas=2"),
            vec!["cleanup.policy=compact,delete", "min.insync.replicas=2"]
        );
    }

    #[test]
    fn config_entries_at_kafkas_default_are_told_apart() {
        let e = config_entry("  min.insync.replicas=1 sensitive=false synonyms={DEFAULT_CONFIG:min.insync.replicas=1}");
        assert_eq!(e, Some(("min.insync.replicas".into(), "1".into(), true)));
        let e = config_entry("  min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:min.insync.replicas=2, DEFAULT_CONFIG:min.insync.replicas=1}");
        assert_eq!(e, Some(("min.insync.replicas".into(), "2".into(), false)));
    }

    #[test]
    fn rack_lines_take_several_spellings() {
        for l in [
            "1 rack-a",
            "1=rack-a",
            "1: rack-a",
            "broker 1 rack-a",
            "broker.rack 1 rack-a",
        ] {
            assert_eq!(rack_line(l), Some((1, "rack-a".into())), "{l}");
        }
        assert_eq!(rack_line("rack-a 1"), None);
    }
}
