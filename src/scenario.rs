//! Scenario files (../shared/SCENARIO_FORMAT.md): parse and validate JSON into a
//! [`ClusterSpec`]. Users write these by hand, so every mistake becomes one
//! message naming the field (`topics[0].replication_factor: 4 exceeds the 3
//! brokers`); unknown fields are errors; nothing here panics.

use serde_json::{Map, Value};

use crate::sim::cluster::ClientStep;
use crate::sim::cluster::{ConsumerSpec, ProducerSpec};
use crate::sim::config::{
    Acks, ClusterConfig, ConfigMap, ConsumerConfig, ProducerConfig, TopicConfig,
};
use crate::sim::protocol::{BrokerId, PartitionRegistration};
use crate::sim::{
    rack_aware_assignment, round_robin_assignment, Action, ClusterSpec, PartitionInfo, TopicInfo,
    OFFSETS_TOPIC,
};

pub const MAX_BROKERS: u64 = 1_000;
pub const MAX_PARTITIONS: u64 = 100_000;
pub const MAX_BROKER_PARTITIONS: u64 = 20_000_000;

/// A validated scenario: its metadata and the spec a cluster is built from.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub run_until_ms: u64,
    pub spec: ClusterSpec,
    /// The scenario as given (for export and the UI).
    pub source: Value,
    /// Narrated stops of a guided tour, in time order (optional).
    pub tour: Vec<TourStop>,
    /// Compare lanes the page opens this scenario in (`"compare"`, optional):
    /// each lane's settings as `KEY=VALUE,…` ([`crate::settings`]). The CLI's
    /// `run` ignores it and runs the scenario as it is.
    pub compare: Vec<String>,
}

/// One stop of a guided tour: at `at_ms` the page pauses and shows `text`,
/// highlighting what to look at.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TourStop {
    pub at_ms: u64,
    pub title: String,
    pub text: String,
    /// What to highlight: `broker:N`, `partition:TOPIC-P`, `replica:N:TOPIC-P`,
    /// `hw:TOPIC-P`, `producer:ID`, `consumer:ID`, `describe`, `narration`, `metrics`.
    pub highlight: Vec<String>,
    /// A question asked at this stop, before the lab plays on; answered at
    /// the next stop by the run itself. Kept as written (checked as a
    /// [`Question`] by the native build; the page reads it as JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<Value>,
}

/// A multiple-choice question (issue 30): the right choice is the one whose
/// `value` equals what `answer`, an expression over the report
/// (crate::question), evaluates to at the next stop, so a change to the core
/// that changes the outcome changes the answer instead of teaching a wrong one.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Clone, Debug, serde::Serialize)]
pub struct Question {
    pub text: String,
    pub choices: Vec<Choice>,
    pub answer: String,
    /// Highlights that point at the evidence when the answer is shown.
    pub evidence: Vec<String>,
}

#[cfg(not(target_arch = "wasm32"))]
#[derive(Clone, Debug, serde::Serialize)]
pub struct Choice {
    pub text: String,
    pub value: Value,
}

type R<T> = Result<T, String>;

fn obj<'a>(v: &'a Value, path: &str) -> R<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| format!("{path}: expected an object, found {}", kind(v)))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn field(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn check_keys(m: &Map<String, Value>, path: &str, allowed: &[&str]) -> R<()> {
    for k in m.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(format!(
                "{}: unknown field (expected one of: {})",
                field(path, k),
                allowed.join(", ")
            ));
        }
    }
    Ok(())
}

fn uint(v: &Value, path: &str, min: u64, max: u64) -> R<u64> {
    let n = v
        .as_u64()
        .ok_or_else(|| format!("{path}: expected a non-negative integer, found {}", show(v)))?;
    if n < min || n > max {
        return Err(format!("{path}: {n} is out of range {min}..={max}"));
    }
    Ok(n)
}

/// `v` as JSON, cut after 40 bytes; whole when byte 40 falls inside a
/// character (a value may be any text, and slicing there would panic).
fn show(v: &Value) -> String {
    let s = v.to_string();
    match s.get(..40) {
        Some(head) if s.len() > 40 => format!("{head}…"),
        _ => s,
    }
}

fn string(v: &Value, path: &str) -> R<String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{path}: expected a string, found {}", kind(v)))
}

fn config_map(v: Option<&Value>, path: &str) -> R<ConfigMap> {
    match v {
        None => Ok(ConfigMap::new()),
        Some(v) => {
            let m = obj(v, path)?;
            Ok(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        }
    }
}

/// Parse and validate a scenario from JSON text.
pub fn parse(text: &str) -> R<Scenario> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "scenario is not valid JSON (line {}, column {}): {e}",
            e.line(),
            e.column()
        )
    })?;
    from_value(v)
}

/// The values of a scenario's optional `level`, from the first question a
/// newcomer asks to the ones a principal engineer does.
pub const LEVELS: [&str; 4] = ["junior", "mid", "senior", "principal"];

pub fn from_value(v: Value) -> R<Scenario> {
    from_value_lanes(v, true)
}

/// [`from_value`]; `lanes`: also read and check `"compare"` (a lane's own
/// scenario is checked without it).
fn from_value_lanes(v: Value, lanes: bool) -> R<Scenario> {
    let m = obj(&v, "scenario")?;
    check_keys(
        m,
        "",
        &[
            "name",
            "description",
            "seed",
            "brokers",
            "racks",
            "config",
            "topics",
            "clients",
            "steps",
            "run_until_ms",
            "tour",
            "compare",
            "level",
        ],
    )?;
    // `level`: who the scenario's question is for (the page's welcome groups
    // the tours by it); the simulation ignores it.
    if let Some(l) = m.get("level") {
        let l = string(l, "level")?;
        if !LEVELS.contains(&l.as_str()) {
            return Err(format!(
                "level: \"{l}\" must be one of {}",
                LEVELS.join(", ")
            ));
        }
    }
    let name = match m.get("name") {
        Some(n) => string(n, "name")?,
        None => "Untitled scenario".to_string(),
    };
    let description = match m.get("description") {
        Some(d) => string(d, "description")?,
        None => String::new(),
    };
    let seed = match m.get("seed") {
        Some(s) => uint(s, "seed", 0, u64::MAX)?,
        None => 1,
    };
    let brokers = uint(
        m.get("brokers")
            .ok_or("brokers: required (the number of brokers)")?,
        "brokers",
        1,
        MAX_BROKERS,
    )? as u32;
    let racks = parse_racks(m.get("racks"), brokers)?;
    let mut config = ClusterConfig::parse(&config_map(m.get("config"), "config")?, "config")?;

    let topics_v = m
        .get("topics")
        .ok_or("topics: required (at least one topic)")?
        .as_array()
        .ok_or("topics: expected an array")?;
    if topics_v.is_empty() {
        return Err("topics: at least one topic is required".into());
    }
    let mut topics: Vec<TopicInfo> = Vec::new();
    let mut partitions: Vec<PartitionInfo> = Vec::new();
    let mut initial_states = Vec::new();
    for (ti, tv) in topics_v.iter().enumerate() {
        let path = format!("topics[{ti}]");
        let tm = obj(tv, &path)?;
        check_keys(
            tm,
            &path,
            &[
                "name",
                "partitions",
                "replication_factor",
                "assignment",
                "config",
                "topic_id",
                "initial_state",
            ],
        )?;
        let tname = string(
            tm.get("name")
                .ok_or_else(|| format!("{path}.name: required"))?,
            &format!("{path}.name"),
        )?;
        if tname.is_empty()
            || tname.len() > 249
            || !tname
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
        {
            return Err(format!(
                "{path}.name: \"{tname}\" is not a legal topic name (ASCII letters, digits, '.', '_', '-', at most 249)"
            ));
        }
        if topics.iter().any(|t| t.name == tname) {
            return Err(format!("{path}.name: topic \"{tname}\" is defined twice"));
        }
        if tname == OFFSETS_TOPIC {
            return Err(format!(
                "{path}.name: \"{OFFSETS_TOPIC}\" is Kafka's internal offsets topic; the lab creates it for consumers with a group.id"
            ));
        }
        let assignment: Option<Vec<Vec<BrokerId>>> = match tm.get("assignment") {
            None => None,
            Some(a) => {
                let apath = format!("{path}.assignment");
                let arr = a
                    .as_array()
                    .ok_or_else(|| format!("{apath}: expected an array of replica lists"))?;
                let mut out = Vec::new();
                for (pi, rv) in arr.iter().enumerate() {
                    let rpath = format!("{apath}[{pi}]");
                    let ra = rv
                        .as_array()
                        .ok_or_else(|| format!("{rpath}: expected an array of broker ids"))?;
                    let mut reps = Vec::new();
                    for (ri, bv) in ra.iter().enumerate() {
                        let b = uint(bv, &format!("{rpath}[{ri}]"), 1, brokers as u64)? as BrokerId;
                        if reps.contains(&b) {
                            return Err(format!("{rpath}: broker {b} appears twice"));
                        }
                        reps.push(b);
                    }
                    if reps.is_empty() {
                        return Err(format!("{rpath}: a partition needs at least one replica"));
                    }
                    out.push(reps);
                }
                Some(out)
            }
        };
        let nparts = match tm.get("partitions") {
            Some(p) => uint(p, &format!("{path}.partitions"), 1, MAX_PARTITIONS)? as u32,
            None => assignment.as_ref().map_or(1, |a| a.len() as u32),
        };
        let rf = match tm.get("replication_factor") {
            Some(r) => {
                let rf = uint(r, &format!("{path}.replication_factor"), 1, u64::MAX)?;
                if rf > brokers as u64 {
                    return Err(format!(
                        "{path}.replication_factor: {rf} exceeds the {brokers} brokers"
                    ));
                }
                rf as u32
            }
            None => assignment
                .as_ref()
                .and_then(|a| a.first())
                .map_or(1, |r| r.len() as u32),
        };
        let assignment = match assignment {
            Some(a) => {
                if a.len() != nparts as usize {
                    return Err(format!(
                        "{path}.assignment: has {} replica lists for {nparts} partitions",
                        a.len()
                    ));
                }
                for (pi, r) in a.iter().enumerate() {
                    if r.len() != rf as usize {
                        return Err(format!(
                            "{path}.assignment[{pi}]: has {} replicas, replication_factor is {rf}",
                            r.len()
                        ));
                    }
                }
                a
            }
            None if racks.is_empty() => round_robin_assignment(brokers, nparts, rf),
            None => rack_aware_assignment(&racks, nparts, rf),
        };
        if partitions.len() as u64 + nparts as u64 > MAX_PARTITIONS {
            return Err(format!(
                "{path}.partitions: more than {MAX_PARTITIONS} partitions in all"
            ));
        }
        let tconfig = TopicConfig::parse(
            &config_map(tm.get("config"), &format!("{path}.config"))?,
            &format!("{path}.config"),
            &config.topic_defaults,
        )?;
        let topic_id_given = topic_as_it_stands(
            tm,
            &path,
            &assignment,
            &config,
            partitions.len(),
            &topics,
            &mut initial_states,
        )?;
        let mut idxs = Vec::new();
        for (pi, reps) in assignment.into_iter().enumerate() {
            idxs.push(partitions.len());
            partitions.push(PartitionInfo {
                topic: tname.clone(),
                topic_index: ti,
                partition: pi as u32,
                replicas: reps,
                config: tconfig.clone(),
            });
        }
        topics.push(TopicInfo {
            topic_id: topic_id_given.unwrap_or_else(|| topic_id(&tname, seed)),
            name: tname,
            replication_factor: rf,
            partitions: idxs,
            config: tconfig,
        });
    }

    // Every broker caches metadata for every partition: bound the product.
    if partitions.len() as u64 * u64::from(brokers) > MAX_BROKER_PARTITIONS {
        return Err(format!(
            "topics: {} partitions × {brokers} brokers exceeds the simulator's limit of {MAX_BROKER_PARTITIONS} broker-partitions",
            partitions.len()
        ));
    }
    let mut producers = Vec::new();
    let mut consumers = Vec::new();
    if let Some(cv) = m.get("clients") {
        let arr = cv.as_array().ok_or("clients: expected an array")?;
        let mut ids: Vec<String> = Vec::new();
        for (ci, c) in arr.iter().enumerate() {
            let path = format!("clients[{ci}]");
            let cm = obj(c, &path)?;
            let ty = string(
                cm.get("type").ok_or_else(|| {
                    format!("{path}.type: required (\"producer\" or \"consumer\")")
                })?,
                &format!("{path}.type"),
            )?;
            let id = string(
                cm.get("id").ok_or_else(|| format!("{path}.id: required"))?,
                &format!("{path}.id"),
            )?;
            if id.is_empty() || ids.contains(&id) || id == "default" {
                return Err(format!(
                    "{path}.id: \"{id}\" must be non-empty, unique, and not \"default\""
                ));
            }
            ids.push(id.clone());
            let topic_name = string(
                cm.get("topic")
                    .ok_or_else(|| format!("{path}.topic: required"))?,
                &format!("{path}.topic"),
            )?;
            let topic = topics
                .iter()
                .position(|t| t.name == topic_name)
                .ok_or_else(|| format!("{path}.topic: unknown topic \"{topic_name}\""))?;
            let cfg = config_map(cm.get("config"), &format!("{path}.config"))?;
            match ty.as_str() {
                "producer" => {
                    check_keys(
                        cm,
                        &path,
                        &["type", "id", "topic", "acks", "records_per_sec", "config"],
                    )?;
                    let acks = match cm.get("acks") {
                        Some(a) => Some(Acks::parse(a).map_err(|e| format!("{path}.acks: {e}"))?),
                        None => None,
                    };
                    let records_per_sec = match cm.get("records_per_sec") {
                        Some(r) => uint(r, &format!("{path}.records_per_sec"), 0, 1_000_000)?,
                        None => 0,
                    };
                    producers.push(ProducerSpec {
                        name: id,
                        topic: Some(topic),
                        config: ProducerConfig::parse(&cfg, &format!("{path}.config"), acks)?,
                        records_per_sec,
                    });
                }
                "consumer" => {
                    check_keys(cm, &path, &["type", "id", "topic", "subscribe", "config"])?;
                    let mut config = ConsumerConfig::parse(&cfg, &format!("{path}.config"))?;
                    config.subscribe = match cm.get("subscribe") {
                        None => false,
                        Some(serde_json::Value::Bool(b)) => *b,
                        Some(other) => {
                            return Err(format!("{path}.subscribe: {other} is not true or false"))
                        }
                    };
                    if config.subscribe && !cfg!(group_protocols) {
                        return Err(format!(
                            "{path}.subscribe: this build of the lab has no classic consumer groups (the page's first-load wasm leaves them out; the page loads its full build for such a scenario)"
                        ));
                    }
                    if config.group_protocol == "consumer" && !config.subscribe {
                        return Err(format!(
                            "{path}.config[\"group.protocol\"]: \"consumer\" (KIP-848) is for a consumer that subscribes; add \"subscribe\": true"
                        ));
                    }
                    if config.subscribe && config.group_id.is_none() {
                        return Err(format!(
                            "{path}.subscribe: a consumer that subscribes needs a group.id in its config (its group assigns it partitions)"
                        ));
                    }
                    if let Some(g) = &config.group_id {
                        if let Some((other, c)) = consumers
                            .iter()
                            .map(|c: &ConsumerSpec| (c, &c.config))
                            .find(|(_, c)| c.group_id.as_ref() == Some(g))
                        {
                            if c.subscribe != config.subscribe {
                                return Err(format!(
                                    "{path}.subscribe: consumer \"{}\" of group \"{g}\" {} subscribe; the consumers of one group either all subscribe or all assign their partitions",
                                    other.name,
                                    if c.subscribe { "does" } else { "does not" }
                                ));
                            }
                            if config.subscribe && other.topic != topic {
                                return Err(format!(
                                    "{path}.topic: the members of group \"{g}\" subscribe to one topic, \"{}\"",
                                    topics[other.topic].name
                                ));
                            }
                            if config.subscribe && c.group_protocol != config.group_protocol {
                                return Err(format!(
                                    "{path}.config[\"group.protocol\"]: the members of group \"{g}\" use one protocol, \"{}\"",
                                    c.group_protocol
                                ));
                            }
                            if config.subscribe
                                && c.assignment_strategy != config.assignment_strategy
                            {
                                return Err(format!(
                                    "{path}.config[\"partition.assignment.strategy\"]: the members of group \"{g}\" use one assignor, \"{}\"",
                                    c.assignment_strategy
                                ));
                            }
                        }
                    }
                    consumers.push(ConsumerSpec {
                        name: id,
                        topic,
                        config,
                    });
                }
                other => {
                    return Err(format!(
                        "{path}.type: \"{other}\" is not \"producer\" or \"consumer\""
                    ))
                }
            }
        }
    }

    // __consumer_offsets (GroupCoordinator): created when a consumer has a
    // group.id, with offsets.topic.num.partitions partitions placed like any
    // topic. Kafka does not shrink offsets.topic.replication.factor to fit
    // the cluster; it cannot create the topic, so say so here.
    if consumers.iter().any(|c| c.config.group_id.is_some()) {
        let n = config.offsets_topic_num_partitions;
        let rf = config.offsets_topic_replication_factor;
        if rf > brokers {
            return Err(format!(
                "config[\"offsets.topic.replication.factor\"]: {rf} exceeds the {brokers} brokers: Kafka cannot create {OFFSETS_TOPIC} and no group finds a coordinator (set it to at most {brokers})"
            ));
        }
        if partitions.len() as u64 + u64::from(n) > MAX_PARTITIONS {
            return Err(format!(
                "config[\"offsets.topic.num.partitions\"]: more than {MAX_PARTITIONS} partitions in all"
            ));
        }
        let assignment = if racks.is_empty() {
            round_robin_assignment(brokers, n, rf)
        } else {
            rack_aware_assignment(&racks, n, rf)
        };
        let ti = topics.len();
        let tconfig = config.topic_defaults.clone();
        let first = partitions.len();
        let mut idxs = Vec::new();
        for (pi, reps) in assignment.into_iter().enumerate() {
            idxs.push(partitions.len());
            partitions.push(PartitionInfo {
                topic: OFFSETS_TOPIC.to_string(),
                topic_index: ti,
                partition: pi as u32,
                replicas: reps,
                config: tconfig.clone(),
            });
        }
        topics.push(TopicInfo {
            topic_id: topic_id(OFFSETS_TOPIC, seed),
            name: OFFSETS_TOPIC.to_string(),
            replication_factor: rf,
            partitions: idxs,
            config: tconfig,
        });
        config.offsets_partitions = Some((first, n));
        if partitions.len() as u64 * u64::from(brokers) > MAX_BROKER_PARTITIONS {
            return Err(format!(
                "config[\"offsets.topic.num.partitions\"]: {} partitions × {brokers} brokers exceeds the simulator's limit of {MAX_BROKER_PARTITIONS} broker-partitions",
                partitions.len()
            ));
        }
    }

    let mut steps = Vec::new();
    if let Some(sv) = m.get("steps") {
        let arr = sv.as_array().ok_or("steps: expected an array")?;
        for (si, s) in arr.iter().enumerate() {
            let path = format!("steps[{si}]");
            let action = parse_step(s, &path, brokers, &topics, &partitions, &producers)?;
            let action = match action {
                (at, Action::ClientStep { kind, client }) => {
                    match consumers.iter().find(|c| c.name == client) {
                        None => {
                            return Err(format!(
                                "{path}.{}: unknown consumer \"{client}\" (declare it under clients)",
                                kind.key()
                            ))
                        }
                        Some(c) if kind == ClientStep::Commit && c.config.group_id.is_none() => {
                            return Err(format!(
                                "{path}.commit: consumer \"{client}\" has no group.id, so it has nothing to commit to"
                            ))
                        }
                        Some(_) => (at, Action::ClientStep { kind, client }),
                    }
                }
                a => a,
            };
            steps.push(action);
        }
    }
    let run_until_ms = match m.get("run_until_ms") {
        Some(r) => uint(r, "run_until_ms", 0, 86_400_000)?,
        None => steps.iter().map(|s| s.0).max().unwrap_or(0) + 30_000,
    };
    let tour = match m.get("tour") {
        None => Vec::new(),
        Some(t) => parse_tour(t, run_until_ms)?,
    };
    let compare = match m.get("compare") {
        Some(c) if lanes => parse_compare_field(&v, c)?,
        _ => Vec::new(),
    };
    Ok(Scenario {
        tour,
        compare,
        name,
        description,
        run_until_ms,
        spec: ClusterSpec {
            seed,
            brokers,
            racks,
            config,
            topics,
            partitions,
            producers,
            consumers,
            steps,
            initial_states,
        },
        source: v,
    })
}

/// A topic's `topic_id` and `initial_state` (an imported cluster as it
/// stands, [`crate::import`]): the id to keep, and each partition's
/// registration at t=0 pushed to `out` by partition index (`first` is the
/// topic's first). The page's first-load wasm leaves them out, as it does
/// consumer groups: it loads its full build for such a scenario
/// (www/lab.js needsFullBuild).
#[cfg(any(not(target_arch = "wasm32"), feature = "explorer"))]
fn topic_as_it_stands(
    tm: &Map<String, Value>,
    path: &str,
    assignment: &[Vec<BrokerId>],
    config: &ClusterConfig,
    first: usize,
    topics: &[TopicInfo],
    initial_states: &mut Vec<(usize, PartitionRegistration)>,
) -> R<Option<String>> {
    if let Some(sv) = tm.get("initial_state") {
        let spath = format!("{path}.initial_state");
        let arr = sv.as_array().ok_or_else(|| {
            format!("{spath}: expected an array with one {{leader, isr}} per partition")
        })?;
        if arr.len() != assignment.len() {
            return Err(format!(
                "{spath}: has {} entries for {} partitions",
                arr.len(),
                assignment.len()
            ));
        }
        for (pi, (ev, reps)) in arr.iter().zip(assignment).enumerate() {
            let reg = parse_initial_state(ev, &format!("{spath}[{pi}]"), reps, config)?;
            initial_states.push((first + pi, reg));
        }
    }
    match tm.get("topic_id") {
        None => Ok(None),
        Some(v) => {
            let id = string(v, &format!("{path}.topic_id"))?;
            if id.len() != 22
                || !id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(format!(
                    "{path}.topic_id: \"{id}\" is not a Kafka topic id (22 characters of URL-safe base64, as kafka-topics.sh prints it)"
                ));
            }
            if topics.iter().any(|t| t.topic_id == id) {
                return Err(format!("{path}.topic_id: \"{id}\" is given to two topics"));
            }
            Ok(Some(id))
        }
    }
}

#[cfg(not(any(not(target_arch = "wasm32"), feature = "explorer")))]
fn topic_as_it_stands(
    tm: &Map<String, Value>,
    path: &str,
    _: &[Vec<BrokerId>],
    _: &ClusterConfig,
    _: usize,
    _: &[TopicInfo],
    _: &mut Vec<(usize, PartitionRegistration)>,
) -> R<Option<String>> {
    match ["topic_id", "initial_state"].iter().find(|k| tm.contains_key(**k)) {
        Some(k) => Err(format!("{path}.{k}: this build of the lab has no imported clusters (the page loads its full build for such a scenario)")),
        None => Ok(None),
    }
}

/// One partition's `initial_state`: its registration at t=0 as a
/// `kafka-topics.sh --describe` showed it (an imported cluster). Checked as
/// the controller would have kept it: the leader is a replica in the ISR
/// (or none: offline), ISR and ELR are distinct replicas, apart.
#[cfg(any(not(target_arch = "wasm32"), feature = "explorer"))]
fn parse_initial_state(
    v: &Value,
    path: &str,
    replicas: &[BrokerId],
    config: &ClusterConfig,
) -> R<PartitionRegistration> {
    let m = obj(v, path)?;
    check_keys(
        m,
        path,
        &["leader", "leader_epoch", "isr", "elr", "last_known_elr"],
    )?;
    let list = |key: &str| -> R<Vec<BrokerId>> {
        let p = format!("{path}.{key}");
        let Some(lv) = m.get(key) else {
            return Ok(Vec::new());
        };
        let arr = lv
            .as_array()
            .ok_or_else(|| format!("{p}: expected an array of broker ids"))?;
        let mut out: Vec<BrokerId> = Vec::new();
        for (i, bv) in arr.iter().enumerate() {
            let b = uint(bv, &format!("{p}[{i}]"), 1, u64::from(u32::MAX))? as BrokerId;
            if !replicas.contains(&b) {
                return Err(format!(
                    "{p}[{i}]: broker {b} holds no replica of this partition (replicas {})",
                    join_ids(replicas)
                ));
            }
            if out.contains(&b) {
                return Err(format!("{p}: broker {b} appears twice"));
            }
            out.push(b);
        }
        Ok(out)
    };
    let leader = match m.get("leader") {
        None => {
            return Err(format!(
                "{path}.leader: required (a broker id, or null when offline)"
            ))
        }
        Some(Value::Null) => None,
        Some(lv) => Some(uint(lv, &format!("{path}.leader"), 1, u64::from(u32::MAX))? as BrokerId),
    };
    if !m.contains_key("isr") {
        return Err(format!("{path}.isr: required"));
    }
    let isr = list("isr")?;
    let elr = list("elr")?;
    let last_known_elr = list("last_known_elr")?;
    if let Some(l) = leader {
        if !isr.contains(&l) {
            return Err(format!(
                "{path}.leader: broker {l} is not in the ISR {} (a leader is always in sync)",
                join_ids(&isr)
            ));
        }
    } else if isr.len() > 1 {
        return Err(format!(
            "{path}.isr: an offline partition (leader null) keeps at most its last ISR member, not {}",
            join_ids(&isr)
        ));
    }
    if let Some(b) = elr.iter().find(|b| isr.contains(b)) {
        return Err(format!("{path}.elr: broker {b} is in the ISR too"));
    }
    if !config.eligible_leader_replicas_enable && (!elr.is_empty() || !last_known_elr.is_empty()) {
        return Err(format!(
            "{path}.elr: eligible leader replicas need eligible.leader.replicas.enable (it is false)"
        ));
    }
    let leader_epoch = match m.get("leader_epoch") {
        Some(e) => uint(e, &format!("{path}.leader_epoch"), 0, i32::MAX as u64)? as u32,
        None => 0,
    };
    Ok(PartitionRegistration {
        replicas: replicas.to_vec(),
        isr,
        leader,
        leader_epoch,
        partition_epoch: 0,
        leader_recovery_state: crate::sim::protocol::LeaderRecoveryState::Recovered,
        elr,
        last_known_elr,
    })
}

#[cfg(any(not(target_arch = "wasm32"), feature = "explorer"))]
fn join_ids(ids: &[BrokerId]) -> String {
    let s: Vec<String> = ids.iter().map(|b| b.to_string()).collect();
    format!("{{{}}}", s.join(","))
}

/// `"racks": {"1": "a", "2": "b", "3": "c"}`: each broker's `broker.rack`.
/// Every broker gets one or none does (Kafka refuses a rack-aware assignment
/// when only some brokers have a rack). Returns one rack per broker, in id
/// order, or nothing.
fn parse_racks(v: Option<&Value>, brokers: u32) -> R<Vec<String>> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let m = v.as_object().ok_or_else(|| {
        format!(
            "racks: expected an object of broker id to rack, like {{\"1\": \"a\", \"2\": \"b\"}}, found {}",
            kind(v)
        )
    })?;
    if m.is_empty() {
        return Ok(Vec::new());
    }
    let mut racks: Vec<Option<String>> = vec![None; brokers as usize];
    for (key, rv) in m {
        let path = format!("racks.{key}");
        let b = key
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("{path}: \"{key}\" is not a broker id"))?;
        if b == 0 || b > brokers as u64 {
            return Err(format!(
                "{path}: broker {b} does not exist (brokers are 1..={brokers})"
            ));
        }
        let rack = string(rv, &path)?;
        let rack = rack.trim();
        if rack.is_empty() {
            return Err(format!("{path}: a rack id must not be empty"));
        }
        let slot = &mut racks[b as usize - 1];
        if slot.is_some() {
            return Err(format!("{path}: broker {b} is given a rack twice"));
        }
        *slot = Some(rack.to_string());
    }
    let missing: Vec<String> = racks
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_none())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "racks: broker{} {} {} no rack; give every broker a rack or leave racks out (Kafka refuses a rack-aware assignment when only some brokers have one)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "has" } else { "have" }
        ));
    }
    Ok(racks.into_iter().flatten().collect())
}

/// `"compare": "acks=1|acks=all"`: the lanes of the page's compare mode. Each
/// lane's settings must apply to this scenario (the scenario with them applied
/// is validated like any other), so a lane that cannot run is an error here,
/// naming the lane and the key. The wasm build checks only the syntax: the
/// page builds every lane when it opens compare mode (Lab.checkLanes in
/// www/lab.js), which reports the same error, and the deep check would cost
/// the page's download budget a few hundred bytes.
fn parse_compare_field(scenario: &Value, c: &Value) -> R<Vec<String>> {
    let text = string(c, "compare")?;
    let lanes = crate::settings::parse_compare(&text)?;
    #[cfg(not(target_arch = "wasm32"))]
    for (i, pairs) in lanes.iter().enumerate() {
        let mut lane = scenario.clone();
        crate::settings::apply(&mut lane, pairs)
            .and_then(|_| from_value_lanes(lane, false))
            .map_err(|e| {
                let label = crate::settings::lane_text(pairs);
                format!("compare: lane {} ({label}): {e}", LANE_NAMES[i])
            })?;
    }
    #[cfg(target_arch = "wasm32")]
    let _ = scenario;
    Ok(lanes
        .iter()
        .map(|l| crate::settings::lane_text(l))
        .collect())
}

/// Lanes are named A, B, C, D (as the page labels them).
#[cfg(not(target_arch = "wasm32"))]
const LANE_NAMES: [&str; 4] = ["A", "B", "C", "D"];

fn parse_tour(v: &Value, run_until_ms: u64) -> R<Vec<TourStop>> {
    let arr = v.as_array().ok_or("tour: expected an array of stops")?;
    let mut out: Vec<TourStop> = Vec::new();
    for (i, sv) in arr.iter().enumerate() {
        let path = format!("tour[{i}]");
        let m = obj(sv, &path)?;
        check_keys(
            m,
            &path,
            &["at_ms", "title", "text", "highlight", "question", "claims"],
        )?;
        let at_ms = uint(
            m.get("at_ms")
                .ok_or_else(|| format!("{path}.at_ms: required"))?,
            &format!("{path}.at_ms"),
            0,
            run_until_ms,
        )?;
        if out.last().is_some_and(|p| p.at_ms > at_ms) {
            return Err(format!("{path}.at_ms: stops must be in time order"));
        }
        let title = match m.get("title") {
            Some(t) => string(t, &format!("{path}.title"))?,
            None => String::new(),
        };
        let text = string(
            m.get("text")
                .ok_or_else(|| format!("{path}.text: required"))?,
            &format!("{path}.text"),
        )?;
        let highlight = match m.get("highlight") {
            None => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(j, h)| string(h, &format!("{path}.highlight[{j}]")))
                .collect::<R<Vec<_>>>()?,
            Some(other) => {
                return Err(format!(
                    "{path}.highlight: expected a string or an array of strings, found {}",
                    kind(other)
                ))
            }
        };
        let question = m.get("question").cloned();
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(q) = &question {
            parse_question(q, &format!("{path}.question"))?;
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(c) = m.get("claims") {
            parse_claims(c, &text, &format!("{path}.claims"))?;
        }
        out.push(TourStop {
            at_ms,
            title,
            text,
            highlight,
            question,
        });
    }
    if out.last().is_some_and(|s| s.question.is_some()) {
        return Err(format!(
            "tour[{}].question: the last stop cannot ask (the answer is shown at the next stop)",
            out.len() - 1
        ));
    }
    Ok(out)
}

#[cfg(not(target_arch = "wasm32"))]
fn strings(v: Option<&Value>, path: &str) -> R<Vec<String>> {
    match v {
        None => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(j, h)| string(h, &format!("{path}[{j}]")))
            .collect(),
        Some(other) => Err(format!(
            "{path}: expected an array of strings, found {}",
            kind(other)
        )),
    }
}

/// A tour stop's claim (issue 62): `says`, words of the stop's text, are
/// backed by `check`, an expression in the question language
/// ([`crate::question`]) that must be true at the stop (over the run's
/// report, its `events` and, in a compare tour, its `lanes`; see
/// [`crate::claims`]).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Clone, Debug, serde::Serialize)]
pub struct Claim {
    pub says: String,
    pub check: String,
}

/// Check a stop's `claims` (native builds): each one's `says` must be words
/// of the stop's `text`, as written, and its `check` a valid expression.
#[cfg(not(target_arch = "wasm32"))]
pub fn parse_claims(v: &Value, text: &str, path: &str) -> R<Vec<Claim>> {
    let list = v
        .as_array()
        .ok_or_else(|| format!("{path}: expected an array of {{says, check}}"))?;
    let mut out = Vec::new();
    for (j, c) in list.iter().enumerate() {
        let cp = format!("{path}[{j}]");
        let m = obj(c, &cp)?;
        check_keys(m, &cp, &["says", "check"])?;
        let get = |k: &str| {
            m.get(k)
                .ok_or_else(|| format!("{cp}.{k}: required"))
                .and_then(|x| string(x, &format!("{cp}.{k}")))
        };
        let (says, check) = (get("says")?, get("check")?);
        if says.trim().is_empty() || !text.contains(&says) {
            return Err(format!(
                "{cp}.says: {says:?} is not in the stop's text (a claim quotes the words it backs)"
            ));
        }
        crate::question::check(&check).map_err(|e| format!("{cp}.check: {e}"))?;
        out.push(Claim { says, check });
    }
    Ok(out)
}

/// Check a stop's `question` (native builds: `failover-lab check`, the tests).
#[cfg(not(target_arch = "wasm32"))]
pub fn parse_question(v: &Value, path: &str) -> R<Question> {
    let m = obj(v, path)?;
    check_keys(m, path, &["text", "choices", "answer", "evidence"])?;
    let req = |k: &str| m.get(k).ok_or_else(|| format!("{path}.{k}: required"));
    let text = string(req("text")?, &format!("{path}.text"))?;
    let answer = string(req("answer")?, &format!("{path}.answer"))?;
    crate::question::check(&answer).map_err(|e| format!("{path}.answer: {e}"))?;
    let list = req("choices")?
        .as_array()
        .ok_or_else(|| format!("{path}.choices: expected an array"))?;
    if list.len() < 2 {
        return Err(format!("{path}.choices: at least two choices"));
    }
    let mut choices = Vec::new();
    for (j, c) in list.iter().enumerate() {
        let cp = format!("{path}.choices[{j}]");
        let cm = obj(c, &cp)?;
        check_keys(cm, &cp, &["text", "value"])?;
        let value = cm
            .get("value")
            .cloned()
            .ok_or_else(|| format!("{cp}.value: required"))?;
        if choices.iter().any(|x: &Choice| x.value == value) {
            return Err(format!("{cp}.value: two choices have the value {value}"));
        }
        choices.push(Choice {
            text: string(
                cm.get("text")
                    .ok_or_else(|| format!("{cp}.text: required"))?,
                &format!("{cp}.text"),
            )?,
            value,
        });
    }
    Ok(Question {
        text,
        choices,
        answer,
        evidence: strings(m.get("evidence"), &format!("{path}.evidence"))?,
    })
}

const ACTIONS: &[&str] = &[
    "produce",
    "crash",
    "power_loss",
    "restart",
    "shutdown",
    "isolate",
    "heal",
    "slow",
    "unslow",
    "elect_preferred",
    "flush",
    "commit",
    "crash_client",
    "restart_client",
    "stall_client",
    "resume_client",
];

fn parse_step(
    s: &Value,
    path: &str,
    brokers: u32,
    topics: &[TopicInfo],
    partitions: &[PartitionInfo],
    producers: &[ProducerSpec],
) -> R<(u64, Action)> {
    let m = obj(s, path)?;
    let at = uint(
        m.get("at_ms")
            .ok_or_else(|| format!("{path}.at_ms: required"))?,
        &format!("{path}.at_ms"),
        0,
        86_400_000,
    )?;
    let actions: Vec<&String> = m.keys().filter(|k| *k != "at_ms").collect();
    if actions.len() != 1 {
        return Err(format!(
            "{path}: a step has at_ms and exactly one action ({}), found {}",
            ACTIONS.join(", "),
            if actions.is_empty() {
                "none".to_string()
            } else {
                actions
                    .iter()
                    .map(|a| a.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    let key = actions[0].as_str();
    let v = &m[key];
    let apath = format!("{path}.{key}");
    let broker = |v: &Value, p: &str| -> R<BrokerId> {
        uint(v, p, 1, brokers as u64)
            .map(|b| b as BrokerId)
            .map_err(|e| format!("{e} (brokers are 1..={brokers})"))
    };
    let topic_partition = |m: &Map<String, Value>, p: &str| -> R<(String, u32)> {
        let t = string(
            m.get("topic")
                .ok_or_else(|| format!("{p}.topic: required"))?,
            &format!("{p}.topic"),
        )?;
        let ti = topics
            .iter()
            .find(|x| x.name == t)
            .ok_or_else(|| format!("{p}.topic: unknown topic \"{t}\""))?;
        let part = match m.get("partition") {
            Some(v) => uint(
                v,
                &format!("{p}.partition"),
                0,
                ti.partitions.len() as u64 - 1,
            )? as u32,
            None => 0,
        };
        Ok((t, part))
    };
    let action = match key {
        "crash" => Action::Crash(broker(v, &apath)?),
        "power_loss" => Action::PowerLoss(broker(v, &apath)?),
        "restart" => Action::Restart(broker(v, &apath)?),
        "shutdown" => Action::Shutdown(broker(v, &apath)?),
        "isolate" => Action::Isolate(broker(v, &apath)?),
        "heal" => Action::Heal(broker(v, &apath)?),
        "flush" => Action::Flush(broker(v, &apath)?),
        "commit" | "crash_client" | "restart_client" | "stall_client" | "resume_client" => {
            Action::ClientStep {
                kind: match key {
                    "commit" => ClientStep::Commit,
                    "crash_client" => ClientStep::Crash,
                    "stall_client" => ClientStep::Stall,
                    "resume_client" => ClientStep::Resume,
                    _ => ClientStep::Restart,
                },
                client: string(v, &apath)?,
            }
        }
        "produce" => {
            let pm = obj(v, &apath)?;
            check_keys(
                pm,
                &apath,
                &["topic", "partition", "count", "acks", "producer"],
            )?;
            let (topic, partition) = topic_partition(pm, &apath)?;
            let count = match pm.get("count") {
                Some(c) => uint(c, &format!("{apath}.count"), 1, 100_000)? as u32,
                None => 1,
            };
            let acks = match pm.get("acks") {
                Some(a) => Some(Acks::parse(a).map_err(|e| format!("{apath}.acks: {e}"))?),
                None => None,
            };
            let producer = match pm.get("producer") {
                Some(p) => {
                    let name = string(p, &format!("{apath}.producer"))?;
                    if !producers.iter().any(|x| x.name == name) {
                        return Err(format!(
                            "{apath}.producer: unknown producer \"{name}\" (declare it under clients)"
                        ));
                    }
                    Some(name)
                }
                None => None,
            };
            Action::Produce {
                topic,
                partition,
                count,
                acks,
                producer,
            }
        }
        "slow" | "unslow" => {
            let pm = obj(v, &apath)?;
            check_keys(pm, &apath, &["broker", "topic", "partition"])?;
            let b = broker(
                pm.get("broker")
                    .ok_or_else(|| format!("{apath}.broker: required"))?,
                &format!("{apath}.broker"),
            )?;
            let (topic, partition) = topic_partition(pm, &apath)?;
            let holds = topics
                .iter()
                .find(|t| t.name == topic)
                .and_then(|t| t.partitions.get(partition as usize))
                .is_some_and(|&pi| partitions[pi].replicas.contains(&b));
            if !holds {
                return Err(format!(
                    "{apath}.broker: broker {b} holds no replica of {topic}-{partition}"
                ));
            }
            if key == "slow" {
                Action::Slow {
                    broker: b,
                    topic,
                    partition,
                }
            } else {
                Action::Unslow {
                    broker: b,
                    topic,
                    partition,
                }
            }
        }
        "elect_preferred" => {
            let pm = obj(v, &apath)?;
            check_keys(pm, &apath, &["topic", "partition"])?;
            let (topic, partition) = topic_partition(pm, &apath)?;
            Action::ElectPreferred { topic, partition }
        }
        other => {
            return Err(format!(
                "{path}.{other}: unknown action (expected one of: {})",
                ACTIONS.join(", ")
            ))
        }
    };
    Ok((at, action))
}

/// A stable, Kafka-looking topic id (22 characters of URL-safe base64).
fn topic_id(name: &str, seed: u64) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut h = xxhash_rust::xxh3::xxh3_128_with_seed(name.as_bytes(), seed);
    (0..22)
        .map(|_| {
            let c = ALPHABET[(h & 63) as usize] as char;
            h >>= 6;
            c
        })
        .collect()
}

/// Parse one action written as a scenario step without `at_ms`
/// (`{"crash": 2}`), against an already loaded scenario. Used by the browser
/// API and any script that drives a running lab.
pub fn parse_action(v: &Value, spec: &ClusterSpec) -> R<Action> {
    let mut m = obj(v, "action")?.clone();
    m.insert("at_ms".to_string(), Value::from(0u64));
    parse_step(
        &Value::Object(m),
        "action",
        spec.brokers,
        &spec.topics,
        &spec.partitions,
        &spec.producers,
    )
    .map(|(_, a)| a)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"brokers": 3, "topics": [{"name": "t", "replication_factor": 3}]}"#;

    #[test]
    fn level_is_one_of_four_and_optional() {
        let ok = r#"{"brokers": 1, "topics": [{"name": "t"}], "level": "senior"}"#;
        assert!(from_value(serde_json::from_str(ok).unwrap()).is_ok());
        let bad = r#"{"brokers": 1, "topics": [{"name": "t"}], "level": "expert"}"#;
        let e = from_value(serde_json::from_str(bad).unwrap())
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("level:"), "{e}");
        let bad = r#"{"brokers": 1, "topics": [{"name": "t"}], "level": 3}"#;
        let e = from_value(serde_json::from_str(bad).unwrap())
            .err()
            .unwrap_or_default();
        assert!(e.starts_with("level"), "{e}");
    }

    #[test]
    fn minimal_scenario_takes_defaults() {
        let s = parse(MINIMAL).unwrap();
        assert_eq!(s.spec.partitions.len(), 1);
        assert_eq!(s.spec.partitions[0].replicas, vec![1, 2, 3]);
        assert_eq!(s.run_until_ms, 30_000);
    }

    fn err(json: &str) -> String {
        parse(json).unwrap_err()
    }

    #[test]
    fn replication_factor_above_broker_count_names_the_field() {
        let e = err(r#"{"brokers": 3, "topics": [{"name": "orders", "replication_factor": 4}]}"#);
        assert_eq!(e, "topics[0].replication_factor: 4 exceeds the 3 brokers");
    }

    #[test]
    fn unknown_fields_are_errors() {
        let e = err(r#"{"brokers": 3, "topicz": [], "topics": [{"name": "t"}]}"#);
        assert!(e.starts_with("topicz: unknown field"), "{e}");
        let e = err(r#"{"brokers": 3, "topics": [{"name": "t", "replicas": 3}]}"#);
        assert!(e.starts_with("topics[0].replicas: unknown field"), "{e}");
    }

    #[test]
    fn step_with_two_actions_or_bad_broker_is_rejected() {
        let e = err(
            r#"{"brokers": 3, "topics": [{"name": "t"}], "steps": [{"at_ms": 1, "crash": 1, "heal": 1}]}"#,
        );
        assert!(
            e.starts_with("steps[0]: a step has at_ms and exactly one action"),
            "{e}"
        );
        let e = err(
            r#"{"brokers": 3, "topics": [{"name": "t"}], "steps": [{"at_ms": 1, "crash": 7}]}"#,
        );
        assert!(
            e.starts_with("steps[0].crash: 7 is out of range 1..=3"),
            "{e}"
        );
    }

    #[test]
    fn racks_name_every_broker_or_none() {
        let s = parse(
            r#"{"brokers": 3, "racks": {"1": "a", "2": "b", "3": "c"}, "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}]}"#,
        )
        .unwrap();
        assert_eq!(s.spec.racks, vec!["a", "b", "c"]);
        let e = err(r#"{"brokers": 3, "racks": {"1": "a", "2": "b"}, "topics": [{"name": "t"}]}"#);
        assert!(e.starts_with("racks: broker 3 has no rack;"), "{e}");
        let e = err(r#"{"brokers": 3, "racks": {"1": "a", "4": "b"}, "topics": [{"name": "t"}]}"#);
        assert_eq!(e, "racks.4: broker 4 does not exist (brokers are 1..=3)");
        let e = err(r#"{"brokers": 3, "racks": {"one": "a"}, "topics": [{"name": "t"}]}"#);
        assert_eq!(e, "racks.one: \"one\" is not a broker id");
        let e = err(r#"{"brokers": 1, "racks": {"1": 7}, "topics": [{"name": "t"}]}"#);
        assert_eq!(e, "racks.1: expected a string, found a number");
        let e = err(r#"{"brokers": 1, "racks": {"1": " "}, "topics": [{"name": "t"}]}"#);
        assert_eq!(e, "racks.1: a rack id must not be empty");
        let e = err(r#"{"brokers": 1, "racks": ["a"], "topics": [{"name": "t"}]}"#);
        assert!(e.starts_with("racks: expected an object"), "{e}");
        let e = err(r#"{"brokers": 2, "racks": {"1": "a", "01": "b"}, "topics": [{"name": "t"}]}"#);
        assert_eq!(e, "racks.1: broker 1 is given a rack twice");
    }

    #[test]
    fn racks_without_an_assignment_place_replicas_rack_by_rack() {
        let s = parse(
            r#"{"brokers": 4, "racks": {"1": "a", "2": "a", "3": "b", "4": "b"},
                "topics": [{"name": "t", "partitions": 2, "replication_factor": 2}]}"#,
        )
        .unwrap();
        assert_eq!(s.spec.partitions[0].replicas, vec![1, 3]);
        assert_eq!(s.spec.partitions[1].replicas, vec![3, 2]);
        // An explicit assignment wins.
        let s = parse(
            r#"{"brokers": 2, "racks": {"1": "a", "2": "b"},
                "topics": [{"name": "t", "assignment": [[2, 1]]}]}"#,
        )
        .unwrap();
        assert_eq!(s.spec.partitions[0].replicas, vec![2, 1]);
    }

    #[test]
    fn broken_json_reports_line_and_column() {
        let e = err("{\"brokers\": 3,\n \"topics\": [}");
        assert!(e.starts_with("scenario is not valid JSON (line 2"), "{e}");
    }

    #[test]
    fn explicit_assignment_must_match_partitions_and_rf() {
        let e = err(
            r#"{"brokers": 3, "topics": [{"name": "t", "partitions": 2, "replication_factor": 2, "assignment": [[1,2]]}]}"#,
        );
        assert!(e.contains("has 1 replica lists for 2 partitions"), "{e}");
    }

    #[test]
    fn acks_accepts_strings_and_numbers() {
        for acks in [r#""all""#, "-1", r#""1""#, "0"] {
            let json = format!(
                r#"{{"brokers": 1, "topics": [{{"name": "t"}}], "clients": [{{"type": "producer", "id": "p", "topic": "t", "acks": {acks}}}]}}"#
            );
            parse(&json).unwrap();
        }
        let e = err(
            r#"{"brokers": 1, "topics": [{"name": "t"}], "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": 2}]}"#,
        );
        assert!(e.starts_with("clients[0].acks:"), "{e}");
    }

    #[test]
    fn compare_lanes_are_parsed_and_each_lane_is_validated_against_the_scenario() {
        let s = parse(
            r#"{"brokers": 3, "topics": [{"name": "t", "replication_factor": 3}],
               "compare": "unclean.leader.election.enable=false | unclean.leader.election.enable=true,min.insync.replicas=1"}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.compare,
            vec![
                "unclean.leader.election.enable=false",
                "unclean.leader.election.enable=true,min.insync.replicas=1"
            ]
        );
        assert!(
            !s.spec.config.topic_defaults.unclean_leader_election_enable,
            "the scenario itself runs without the lanes' settings"
        );
        let e = err(r#"{"brokers": 3, "topics": [{"name": "t"}], "compare": "acks=1|fo.o=2"}"#);
        assert!(e.starts_with("compare: lane B (fo.o=2): config"), "{e}");
        assert!(e.contains("fo.o"), "{e}");
        let e = err(r#"{"brokers": 3, "topics": [{"name": "t"}], "compare": "acks=1"}"#);
        assert!(e.contains("2 to 4 lanes"), "{e}");
        let e = err(r#"{"brokers": 3, "topics": [{"name": "t"}], "compare": ["acks=1"]}"#);
        assert!(e.starts_with("compare:"), "{e}");
        let e = err(r#"{"brokers": 3, "topics": [{"name": "t"}], "compare": "acks=2|acks=1"}"#);
        assert!(e.contains("lane A") && e.contains("acks"), "{e}");
    }

    #[test]
    fn tour_stops_are_validated_and_kept_in_order() {
        let s = parse(
            r#"{"brokers": 1, "topics": [{"name": "t"}], "run_until_ms": 9000,
               "tour": [{"at_ms": 10, "title": "a", "text": "x", "highlight": "broker:1"},
                        {"at_ms": 20, "text": "y", "highlight": ["hw:t-0", "describe"]}]}"#,
        )
        .unwrap();
        assert_eq!(s.tour.len(), 2);
        assert_eq!(s.tour[1].highlight, vec!["hw:t-0", "describe"]);
        let e = err(
            r#"{"brokers": 1, "topics": [{"name": "t"}], "tour": [{"at_ms": 20, "text": "a"}, {"at_ms": 10, "text": "b"}]}"#,
        );
        assert_eq!(e, "tour[1].at_ms: stops must be in time order");
    }
}
