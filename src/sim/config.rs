//! Configuration under Kafka's own names and defaults (KAFKA_REPLICATION.md §9),
//! so what a user knows about Kafka transfers both ways. Settings that belong to
//! the simulation, not to Kafka, carry a `sim.` prefix.
//!
//! Values may be written as JSON numbers/booleans or as the strings a
//! `server.properties` file would hold ("30000", "true"). Unknown keys are an
//! error: a typo must never be silently ignored.

use std::collections::BTreeMap;

use serde::Serialize;

pub type ConfigMap = BTreeMap<String, serde_json::Value>;

/// How a rejoining replica finds where its log diverges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum TruncationMode {
    /// KIP-101/KIP-279/truncate-on-fetch: by leader epoch (modern Kafka).
    LeaderEpoch,
    /// Pre-0.11: truncate to the replica's own high watermark.
    HighWatermark,
}

/// Broker/controller-wide settings (topic overrides live in [`TopicConfig`]).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ClusterConfig {
    pub replica_lag_time_max_ms: u64,
    pub replica_fetch_wait_max_ms: u64,
    pub replica_fetch_backoff_ms: u64,
    pub replica_high_watermark_checkpoint_interval_ms: u64,
    pub broker_session_timeout_ms: u64,
    pub broker_heartbeat_interval_ms: u64,
    pub auto_leader_rebalance_enable: bool,
    pub leader_imbalance_check_interval_seconds: u64,
    pub controlled_shutdown_enable: bool,
    /// `log.flush.interval.ms`; absent means Kafka leaves flushing to the OS,
    /// modelled by `sim.os.flush.interval.ms`.
    pub flush_interval_ms: u64,
    pub network_latency_ms: u64,
    pub network_jitter_ms: u64,
    pub truncation: TruncationMode,
    /// Kafka 3.7+ (KAFKA-15583): the HW does not advance while the ISR is below
    /// min.insync.replicas. `false` gives the earlier behaviour.
    pub strict_min_isr: bool,
    /// Whether a broker re-registering with a new incarnation is first handled
    /// as fenced (modern KRaft and ZooKeeper's bounced-broker handling) and
    /// turned away while the old incarnation's session is still valid
    /// (DUPLICATE_BROKER_REGISTRATION). Off, a quick restart re-registers at
    /// once and keeps its ISR memberships, as 0.10.x did.
    pub fence_on_reregistration: bool,
    /// KIP-966 eligible leader replicas (`eligible.leader.replicas.enable`).
    pub eligible_leader_replicas_enable: bool,
    /// KIP-392 `replica.selector.class`: how a leader picks the replica a
    /// consumer should read from. `None` (Kafka's default) = always the leader.
    pub replica_selector: Option<ReplicaSelector>,
    /// What mass failover costs (the book, "Mass failover costs time").
    pub costs: Costs,
    pub topic_defaults: TopicConfig,
    /// `offsets.topic.num.partitions` (50): partitions of `__consumer_offsets`.
    pub offsets_topic_num_partitions: u32,
    /// `offsets.topic.replication.factor` (3). Kafka does not lower it to
    /// fit a smaller cluster: the topic cannot be created, and no group can
    /// find its coordinator, until enough brokers exist.
    pub offsets_topic_replication_factor: u32,
    /// `sim.coordinator.load.ms` (5) + `sim.coordinator.load.us.per.record`
    /// (100): how long a new leader of an offsets partition takes to load its
    /// groups before it answers them (COORDINATOR_LOAD_IN_PROGRESS meanwhile).
    pub coordinator_load_ms: u64,
    pub coordinator_load_us_per_record: u64,
    /// `group.initial.rebalance.delay.ms` (3000): how long the coordinator
    /// waits for more members after the first joins an empty group.
    pub group_initial_rebalance_delay_ms: u64,
    /// `group.consumer.session.timeout.ms` (45000): KIP-848 groups' session
    /// timeout, set by the broker (not the client).
    pub group_consumer_session_timeout_ms: u64,
    /// `sim.broker.startup.ms` (2870): a restarted broker's start-up, from
    /// its process start to its registration request (JVM start, loading
    /// its logs, its network and metadata components). Measured on the
    /// recordings of a real Kafka 4.4.0 cluster on a 2-core machine
    /// (tests/kafka-recorded/, the book's "Checked against Kafka"): process
    /// start → unfenced, 28 restarts, 1.71–6.53 s, median 2.94 s; less half a
    /// recorder poll (50 ms, when the poll saw it) and the simulator's own
    /// ~20 ms from registration to unfencing. 0 restarts at once.
    pub broker_startup_ms: u64,
    /// `sim.broker.log.recovery.ms` (0): added to the start-up after an
    /// unclean shutdown (a crash or a power loss), for recovering the logs
    /// past their recovery point (LogLoader). The recordings show none
    /// measurable for their logs of a few hundred records (2 clean restarts
    /// 3.09 and 3.21 s, 26 unclean ones median 2.90 s); a scenario with large
    /// logs may set it.
    pub broker_log_recovery_ms: u64,
    /// Where `__consumer_offsets` lies in the partition list (first index,
    /// count), when the scenario has consumer groups; set by the scenario.
    #[serde(skip)]
    pub offsets_partitions: Option<(usize, u32)>,
}

/// The work a failover takes, in simulated microseconds (`sim.` settings;
/// the defaults are estimates, see the book's "Mass failover costs time" for their sources).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Costs {
    /// `sim.controller.record.write.us`: the controller's time per metadata
    /// record it writes (and commits).
    pub controller_record_us: u64,
    /// `sim.controller.max.records.per.batch`: records per metadata batch
    /// (QuorumController.MAX_RECORDS_PER_BATCH); a batch becomes visible to
    /// the brokers once all of it is written.
    pub controller_max_records_per_batch: u64,
    /// `sim.broker.metadata.apply.us`: a broker's time to apply one
    /// partition change of a metadata batch.
    pub broker_metadata_apply_us: u64,
    /// `sim.broker.become.leader.us`: a broker's work per partition it
    /// starts leading.
    pub broker_become_leader_us: u64,
    /// `sim.broker.become.follower.us`: a broker's work per partition it
    /// starts following (fetcher, truncation check).
    pub broker_become_follower_us: u64,
}

impl Costs {
    pub const DEFAULT: Costs = Costs {
        controller_record_us: 10,
        controller_max_records_per_batch: 10_000,
        broker_metadata_apply_us: 5,
        broker_become_leader_us: 50,
        broker_become_follower_us: 100,
    };

    fn read(r: &mut Reader) -> Result<Costs, String> {
        let d = Costs::DEFAULT;
        Ok(Costs {
            controller_record_us: r
                .u64("sim.controller.record.write.us", d.controller_record_us)?,
            controller_max_records_per_batch: r.positive(
                "sim.controller.max.records.per.batch",
                d.controller_max_records_per_batch,
            )?,
            broker_metadata_apply_us: r
                .u64("sim.broker.metadata.apply.us", d.broker_metadata_apply_us)?,
            broker_become_leader_us: r
                .u64("sim.broker.become.leader.us", d.broker_become_leader_us)?,
            broker_become_follower_us: r
                .u64("sim.broker.become.follower.us", d.broker_become_follower_us)?,
        })
    }
}

/// The `replica.selector.class` implementations Kafka ships (KIP-392).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum ReplicaSelector {
    /// `org.apache.kafka.common.replica.LeaderSelector`: always the leader,
    /// which is what an unset `replica.selector.class` does too.
    Leader,
    /// `org.apache.kafka.common.replica.RackAwareReplicaSelector`: an in-sync
    /// replica in the consumer's `client.rack`, else the leader.
    RackAware,
}

impl ReplicaSelector {
    pub const LEADER_CLASS: &'static str = "org.apache.kafka.common.replica.LeaderSelector";
    pub const RACK_AWARE_CLASS: &'static str =
        "org.apache.kafka.common.replica.RackAwareReplicaSelector";

    pub fn class_name(self) -> &'static str {
        match self {
            ReplicaSelector::Leader => Self::LEADER_CLASS,
            ReplicaSelector::RackAware => Self::RACK_AWARE_CLASS,
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct TopicConfig {
    pub min_insync_replicas: u32,
    pub unclean_leader_election_enable: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum Acks {
    #[serde(rename = "0")]
    None,
    #[serde(rename = "1")]
    Leader,
    #[serde(rename = "all")]
    All,
}

impl Acks {
    pub fn parse(v: &serde_json::Value) -> Result<Acks, String> {
        match v {
            serde_json::Value::String(s) => match s.as_str() {
                "0" => Ok(Acks::None),
                "1" => Ok(Acks::Leader),
                "all" | "-1" => Ok(Acks::All),
                other => Err(format!("\"{other}\" is not 0, 1 or all")),
            },
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(0) => Ok(Acks::None),
                Some(1) => Ok(Acks::Leader),
                Some(-1) => Ok(Acks::All),
                _ => Err(format!("{n} is not 0, 1 or -1 (all)")),
            },
            other => Err(format!("{other} is not 0, 1 or all")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Acks::None => "0",
            Acks::Leader => "1",
            Acks::All => "all",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ProducerConfig {
    pub acks: Acks,
    pub enable_idempotence: bool,
    pub delivery_timeout_ms: u64,
    pub request_timeout_ms: u64,
    pub retries: u64,
    pub retry_backoff_ms: u64,
    pub retry_backoff_max_ms: u64,
    pub max_in_flight: u32,
    pub linger_ms: u64,
    /// `batch.size` (16384 bytes): a record joins the newest batch of its
    /// partition while that batch has not been sent and has room.
    pub batch_size: u64,
    pub metadata_max_age_ms: u64,
    pub connection: ConnectionConfig,
}

/// A client's connection settings (CommonClientConfigs), used by
/// `client/connection.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ConnectionConfig {
    /// `reconnect.backoff.ms` (50).
    pub reconnect_backoff_ms: u64,
    /// `reconnect.backoff.max.ms` (1000).
    pub reconnect_backoff_max_ms: u64,
    /// `socket.connection.setup.timeout.ms` (10000).
    pub setup_timeout_ms: u64,
    /// `socket.connection.setup.timeout.max.ms` (30000).
    pub setup_timeout_max_ms: u64,
}

impl ConnectionConfig {
    fn read(r: &mut Reader) -> Result<Self, String> {
        Ok(ConnectionConfig {
            reconnect_backoff_ms: r.u64("reconnect.backoff.ms", 50)?,
            reconnect_backoff_max_ms: r.u64("reconnect.backoff.max.ms", 1_000)?,
            setup_timeout_ms: r.positive("socket.connection.setup.timeout.ms", 10_000)?,
            setup_timeout_max_ms: r.positive("socket.connection.setup.timeout.max.ms", 30_000)?,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[serde(rename_all = "snake_case")]
pub enum OffsetReset {
    Latest,
    Earliest,
    None,
    /// `by_duration:PnDTnHnMn.nS` (KIP-1106, Kafka 4.0): the first offset
    /// whose record timestamp is at most this many milliseconds old.
    ByDuration(u64),
}

impl OffsetReset {
    /// The value as Kafka spells it (`by_duration:` with milliseconds
    /// written back as seconds).
    pub fn name(self) -> String {
        match self {
            OffsetReset::Latest => "latest".into(),
            OffsetReset::Earliest => "earliest".into(),
            OffsetReset::None => "none".into(),
            OffsetReset::ByDuration(ms) if ms % 1000 == 0 => {
                format!("by_duration:PT{}S", ms / 1000)
            }
            OffsetReset::ByDuration(ms) => {
                format!("by_duration:PT{}.{:03}S", ms / 1000, ms % 1000)
            }
        }
    }
}

/// An ISO-8601 duration as `java.time.Duration.parse` reads it
/// (`PnDTnHnMn.nS`, letters in either case, each part optional but at
/// least one present), in milliseconds. Kafka refuses a negative one
/// (AutoOffsetResetStrategy), so a sign is an error here too.
pub fn parse_iso_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("\"{text}\": a negative duration is not allowed"));
    }
    // One pass over the bytes: a number, then its unit; D only before T,
    // H and M and S only after it, each at most once and in that order.
    // The milliseconds of a fraction of seconds are kept, the rest dropped.
    let (mut ms, mut n, mut digits, mut frac, mut in_frac) = (0u64, 0u64, 0u32, 0u64, 0u32);
    let (mut time, mut last, mut parts) = (false, 0u8, 0u32);
    let mut bytes = t.bytes().map(|b| b.to_ascii_uppercase());
    let mut ok = bytes.next() == Some(b'P');
    for b in bytes {
        match b {
            b'0'..=b'9' if in_frac > 0 => {
                if in_frac <= 3 {
                    frac = frac * 10 + u64::from(b - b'0');
                }
                in_frac += 1;
            }
            b'0'..=b'9' => {
                n = n.saturating_mul(10).saturating_add(u64::from(b - b'0'));
                digits += 1;
            }
            b'.' if time && digits > 0 && in_frac == 0 => in_frac = 1,
            b'T' if !time && digits == 0 => time = true,
            b'D' | b'H' | b'M' | b'S' => {
                let rank = match b {
                    b'D' => 1,
                    b'H' => 2,
                    b'M' => 3,
                    _ => 4,
                };
                if digits == 0 || (b == b'D') == time || rank <= last || (in_frac > 0 && b != b'S')
                {
                    ok = false;
                    break;
                }
                let scale = [86_400_000, 3_600_000, 60_000, 1_000][rank as usize - 1];
                while in_frac > 0 && in_frac < 4 {
                    frac *= 10;
                    in_frac += 1;
                }
                ms = ms
                    .saturating_add(n.saturating_mul(scale))
                    .saturating_add(frac);
                (n, digits, frac, in_frac, last) = (0, 0, 0, 0, rank);
                parts += 1;
            }
            _ => {
                ok = false;
                break;
            }
        }
    }
    if !ok || parts == 0 || digits > 0 || in_frac > 0 || (time && last < 2) {
        return Err(format!(
            "\"{text}\" is not an ISO-8601 duration like PT30S or P1DT2H"
        ));
    }
    Ok(ms)
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct ConsumerConfig {
    pub auto_offset_reset: OffsetReset,
    pub fetch_max_wait_ms: u64,
    pub request_timeout_ms: u64,
    pub retry_backoff_ms: u64,
    pub metadata_max_age_ms: u64,
    /// `client.rack` (KIP-392): sent with every fetch; empty means none.
    pub client_rack: Option<String>,
    pub connection: ConnectionConfig,
    /// `group.id`: with one, the consumer commits its positions to the
    /// group's coordinator and starts from what was committed.
    pub group_id: Option<String>,
    /// `enable.auto.commit` (true with a group).
    pub enable_auto_commit: bool,
    /// `auto.commit.interval.ms` (5000).
    pub auto_commit_interval_ms: u64,
    /// The consumer subscribes to its topic (`subscribe()`): its group's
    /// members share the partitions, assigned in rebalances. Without it, it
    /// reads all of the topic's partitions (`assign()`). Set by the
    /// scenario's client field `"subscribe"`, not a Kafka config key.
    pub subscribe: bool,
    /// `partition.assignment.strategy` as the lab names the assignor:
    /// `range` (RangeAssignor, the Java client's first default) or
    /// `cooperative-sticky` (CooperativeStickyAssignor, KIP-429).
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub assignment_strategy: &'static str,
    /// `session.timeout.ms` (45000): the coordinator drops a member it has
    /// not heard from for this long.
    pub session_timeout_ms: u64,
    /// `heartbeat.interval.ms` (3000).
    pub heartbeat_interval_ms: u64,
    /// `max.poll.interval.ms` (300000): also the JoinGroup's rebalance
    /// timeout.
    pub max_poll_interval_ms: u64,
    /// `group.instance.id` (KIP-345, static membership).
    pub group_instance_id: Option<String>,
    /// `group.protocol`: `classic` (the Java client's default through 4.x)
    /// or `consumer` (KIP-848).
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub group_protocol: &'static str,
    /// `group.remote.assignor` (KIP-848; none: the broker's first,
    /// `uniform`): `uniform` or `range`.
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::static_str::ser",
            deserialize_with = "crate::snapshot::static_str::de"
        )
    )]
    pub remote_assignor: &'static str,
    /// `sim.commit.leader.epoch` (true): commits carry the leader epoch of
    /// the last record read (OffsetCommit v7+, as the Java client sends
    /// them). false models a client that commits offsets without it: a
    /// restart from such a commit cannot validate it (KIP-320), so a
    /// truncation below it surfaces as OFFSET_OUT_OF_RANGE and
    /// auto.offset.reset decides (KAFKA-19902).
    pub commit_leader_epoch: bool,
}

/// A key's default as its reader states it: what [`documented_keys`] lists
/// (and the book's configuration reference shows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyDefault {
    Number(u64),
    Bool(bool),
    Text(&'static str),
    /// No value: the setting is off or absent unless given.
    Unset,
}

/// Reads typed values out of a config map, remembering which keys were used so
/// the leftovers can be reported as unknown. Natively it also notes the
/// default each key is read with, so the keys can be listed
/// ([`documented_keys`]); the wasm build leaves that out (the page never
/// lists them, and every byte counts against its size budget).
struct Reader<'a> {
    map: &'a ConfigMap,
    path: &'a str,
    used: Vec<&'static str>,
    #[cfg(not(target_arch = "wasm32"))]
    defaults: Vec<(&'static str, KeyDefault)>,
}

impl<'a> Reader<'a> {
    fn new(map: &'a ConfigMap, path: &'a str) -> Self {
        Reader {
            map,
            path,
            used: Vec::new(),
            #[cfg(not(target_arch = "wasm32"))]
            defaults: Vec::new(),
        }
    }

    /// Note `key`'s default for [`documented_keys`] (nothing in wasm).
    #[inline]
    fn note(&mut self, key: &'static str, default: KeyDefault) {
        #[cfg(not(target_arch = "wasm32"))]
        self.defaults.push((key, default));
        #[cfg(target_arch = "wasm32")]
        let _ = (key, default);
    }

    fn err(&self, key: &str, msg: impl std::fmt::Display) -> String {
        format!("{}[\"{key}\"]: {msg}", self.path)
    }

    fn raw(&mut self, key: &'static str) -> Option<&'a serde_json::Value> {
        self.used.push(key);
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn u64(&mut self, key: &'static str, default: u64) -> Result<u64, String> {
        self.note(key, KeyDefault::Number(default));
        let Some(v) = self.raw(key) else {
            return Ok(default);
        };
        let parsed = match v {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        parsed.ok_or_else(|| self.err(key, format!("{v} is not a non-negative integer")))
    }

    fn u64_opt(&mut self, key: &'static str) -> Result<Option<u64>, String> {
        if self.map.get(key).is_some_and(|v| !v.is_null()) {
            self.u64(key, 0).map(Some)
        } else {
            self.note(key, KeyDefault::Unset);
            self.used.push(key);
            Ok(None)
        }
    }

    fn positive(&mut self, key: &'static str, default: u64) -> Result<u64, String> {
        let v = self.u64(key, default)?;
        if v == 0 {
            return Err(self.err(key, "must be at least 1"));
        }
        Ok(v)
    }

    fn bool(&mut self, key: &'static str, default: bool) -> Result<bool, String> {
        self.note(key, KeyDefault::Bool(default));
        let Some(v) = self.raw(key) else {
            return Ok(default);
        };
        match v {
            serde_json::Value::Bool(b) => Ok(*b),
            serde_json::Value::String(s) if s == "true" => Ok(true),
            serde_json::Value::String(s) if s == "false" => Ok(false),
            _ => Err(self.err(key, format!("{v} is not true or false"))),
        }
    }

    /// A string value; `default` is what an absent key means, for
    /// [`documented_keys`] only (the caller's match decides).
    fn string(&mut self, key: &'static str, default: KeyDefault) -> Option<&'a str> {
        self.note(key, default);
        self.raw(key).and_then(|v| v.as_str())
    }

    fn finish(self, allowed_elsewhere: &[&str]) -> Result<(), String> {
        for key in self.map.keys() {
            if !self.used.contains(&key.as_str()) && !allowed_elsewhere.contains(&key.as_str()) {
                return Err(format!(
                    "{}: unknown config \"{key}\" (known: {})",
                    self.path,
                    self.used.join(", ")
                ));
            }
        }
        Ok(())
    }
}

impl TopicConfig {
    fn read(r: &mut Reader, defaults: &TopicConfig) -> Result<TopicConfig, String> {
        let min_insync_replicas =
            r.positive("min.insync.replicas", defaults.min_insync_replicas as u64)?;
        let min_insync_replicas = u32::try_from(min_insync_replicas)
            .map_err(|_| r.err("min.insync.replicas", "is too large"))?;
        Ok(TopicConfig {
            min_insync_replicas,
            unclean_leader_election_enable: r.bool(
                "unclean.leader.election.enable",
                defaults.unclean_leader_election_enable,
            )?,
        })
    }

    pub fn parse(map: &ConfigMap, path: &str, defaults: &TopicConfig) -> Result<Self, String> {
        let mut r = Reader::new(map, path);
        let c = Self::read(&mut r, defaults)?;
        r.finish(&[])?;
        Ok(c)
    }

    /// Non-default entries in `key=value` form, for `describe`'s `Configs:`.
    pub fn describe_configs(&self) -> String {
        let mut parts = Vec::new();
        if self.min_insync_replicas != 1 {
            parts.push(format!("min.insync.replicas={}", self.min_insync_replicas));
        }
        if self.unclean_leader_election_enable {
            parts.push("unclean.leader.election.enable=true".to_string());
        }
        parts.join(",")
    }
}

impl Default for TopicConfig {
    fn default() -> Self {
        TopicConfig {
            min_insync_replicas: 1,
            unclean_leader_election_enable: false,
        }
    }
}

impl ClusterConfig {
    pub fn parse(map: &ConfigMap, path: &str) -> Result<Self, String> {
        let mut r = Reader::new(map, path);
        let c = Self::read(&mut r)?;
        r.finish(&[])?;
        Ok(c)
    }

    fn read(r: &mut Reader) -> Result<Self, String> {
        let topic_defaults = TopicConfig::read(r, &TopicConfig::default())?;
        let log_flush = r.u64_opt("log.flush.interval.ms")?;
        let os_flush = r.positive("sim.os.flush.interval.ms", 30_000)?;
        let truncation = match r.string("sim.truncation", KeyDefault::Text("leader_epoch")) {
            None | Some("leader_epoch") => TruncationMode::LeaderEpoch,
            Some("high_watermark") => TruncationMode::HighWatermark,
            Some(other) => {
                return Err(r.err(
                    "sim.truncation",
                    format!("\"{other}\" is not leader_epoch or high_watermark"),
                ))
            }
        };
        let replica_selector = match r
            .string("replica.selector.class", KeyDefault::Unset)
            .map(str::trim)
        {
            None | Some("") => None,
            Some(ReplicaSelector::LEADER_CLASS) => Some(ReplicaSelector::Leader),
            Some(ReplicaSelector::RACK_AWARE_CLASS) => Some(ReplicaSelector::RackAware),
            Some(other) => {
                return Err(r.err(
                    "replica.selector.class",
                    format!(
                        "\"{other}\" is not a replica selector this lab models ({} or {})",
                        ReplicaSelector::RACK_AWARE_CLASS,
                        ReplicaSelector::LEADER_CLASS
                    ),
                ))
            }
        };
        if r.map
            .get("replica.selector.class")
            .is_some_and(|v| !v.is_null() && !v.is_string())
        {
            return Err(r.err("replica.selector.class", "expected a class name (a string)"));
        }
        let c = ClusterConfig {
            replica_lag_time_max_ms: r.positive("replica.lag.time.max.ms", 30_000)?,
            replica_fetch_wait_max_ms: r.u64("replica.fetch.wait.max.ms", 500)?,
            replica_fetch_backoff_ms: r.u64("replica.fetch.backoff.ms", 1_000)?,
            replica_high_watermark_checkpoint_interval_ms: r
                .positive("replica.high.watermark.checkpoint.interval.ms", 5_000)?,
            broker_session_timeout_ms: r.positive("broker.session.timeout.ms", 9_000)?,
            broker_heartbeat_interval_ms: r.positive("broker.heartbeat.interval.ms", 2_000)?,
            auto_leader_rebalance_enable: r.bool("auto.leader.rebalance.enable", true)?,
            leader_imbalance_check_interval_seconds: r
                .positive("leader.imbalance.check.interval.seconds", 300)?,
            controlled_shutdown_enable: r.bool("controlled.shutdown.enable", true)?,
            flush_interval_ms: log_flush.filter(|v| *v > 0).unwrap_or(os_flush),
            network_latency_ms: r.u64("sim.network.latency.ms", 1)?,
            network_jitter_ms: r.u64("sim.network.jitter.ms", 1)?,
            truncation,
            strict_min_isr: r.bool("sim.strict.min.isr", true)?,
            // The pre-KIP-101 mode models 0.10.x, which also predates KIP-380's
            // detection of bounced brokers.
            fence_on_reregistration: r.bool(
                "sim.fence.on.reregistration",
                truncation == TruncationMode::LeaderEpoch,
            )?,
            eligible_leader_replicas_enable: r.bool("eligible.leader.replicas.enable", true)?,
            replica_selector,
            costs: Costs::read(r)?,
            topic_defaults,
            offsets_topic_num_partitions: u32::try_from(
                r.positive("offsets.topic.num.partitions", 50)?,
            )
            .map_err(|_| r.err("offsets.topic.num.partitions", "is too large"))?,
            offsets_topic_replication_factor: u32::try_from(
                r.positive("offsets.topic.replication.factor", 3)?,
            )
            .map_err(|_| r.err("offsets.topic.replication.factor", "is too large"))?,
            coordinator_load_ms: r.u64("sim.coordinator.load.ms", 5)?,
            coordinator_load_us_per_record: r.u64("sim.coordinator.load.us.per.record", 100)?,
            group_initial_rebalance_delay_ms: r.u64("group.initial.rebalance.delay.ms", 3_000)?,
            group_consumer_session_timeout_ms: r
                .positive("group.consumer.session.timeout.ms", 45_000)?,
            broker_startup_ms: r.u64("sim.broker.startup.ms", 2_870)?,
            broker_log_recovery_ms: r.u64("sim.broker.log.recovery.ms", 0)?,
            offsets_partitions: None,
        };
        Ok(c)
    }
}

impl Default for ClusterConfig {
    fn default() -> Self {
        // An empty map always parses.
        ClusterConfig::parse(&ConfigMap::new(), "config").unwrap_or_else(|_| unreachable!())
    }
}

impl ProducerConfig {
    /// `acks` may come from the client entry (`"acks": "all"`) or from its config
    /// map; Kafka 3.0+ enables idempotence by default only together with acks=all.
    pub fn parse(map: &ConfigMap, path: &str, acks: Option<Acks>) -> Result<Self, String> {
        let mut r = Reader::new(map, path);
        let c = Self::read(&mut r, acks)?;
        r.finish(&[])?;
        Ok(c)
    }

    fn read(r: &mut Reader, acks: Option<Acks>) -> Result<Self, String> {
        let map = r.map;
        r.note("acks", KeyDefault::Text("all"));
        let acks = match r.raw("acks") {
            Some(v) => Acks::parse(v).map_err(|e| r.err("acks", e))?,
            None => acks.unwrap_or(Acks::All),
        };
        let explicit_idempotence = map.contains_key("enable.idempotence");
        let enable_idempotence = r.bool("enable.idempotence", acks == Acks::All)?;
        if enable_idempotence && acks != Acks::All && explicit_idempotence {
            return Err(r.err(
                "enable.idempotence",
                "an idempotent producer needs acks=all (Kafka rejects this combination)",
            ));
        }
        let max_in_flight = r.positive("max.in.flight.requests.per.connection", 5)?;
        if enable_idempotence && max_in_flight > 5 {
            return Err(r.err(
                "max.in.flight.requests.per.connection",
                "must be at most 5 with idempotence",
            ));
        }
        let request_timeout_ms = r.positive("request.timeout.ms", 30_000)?;
        let linger_ms = r.u64("linger.ms", 5)?;
        // KafkaProducer.configureDeliveryTimeout: delivery.timeout.ms must
        // cover linger.ms + request.timeout.ms. Set explicitly below that it
        // is a ConfigException; left unset it is raised to that sum.
        let floor = linger_ms.saturating_add(request_timeout_ms);
        let delivery_timeout_ms = if map.contains_key("delivery.timeout.ms") {
            let d = r.positive("delivery.timeout.ms", 120_000)?;
            if d < floor {
                return Err(r.err(
                    "delivery.timeout.ms",
                    format!("{d} is less than linger.ms + request.timeout.ms = {floor} (Kafka refuses it: ConfigException)"),
                ));
            }
            d
        } else {
            r.note("delivery.timeout.ms", KeyDefault::Number(120_000));
            120_000u64.max(floor)
        };
        let c = ProducerConfig {
            acks,
            enable_idempotence,
            delivery_timeout_ms,
            request_timeout_ms,
            retries: r.u64("retries", i32::MAX as u64)?,
            retry_backoff_ms: r.u64("retry.backoff.ms", 100)?,
            retry_backoff_max_ms: r.u64("retry.backoff.max.ms", 1_000)?,
            max_in_flight: max_in_flight.min(1_000) as u32,
            linger_ms,
            batch_size: r.u64("batch.size", 16_384)?,
            metadata_max_age_ms: r.positive("metadata.max.age.ms", 300_000)?,
            connection: ConnectionConfig::read(r)?,
        };
        Ok(c)
    }
}

impl ConsumerConfig {
    pub fn parse(map: &ConfigMap, path: &str) -> Result<Self, String> {
        let mut r = Reader::new(map, path);
        let c = Self::read(&mut r)?;
        r.finish(&[])?;
        Ok(c)
    }

    fn read(r: &mut Reader) -> Result<Self, String> {
        let auto_offset_reset = match r.string("auto.offset.reset", KeyDefault::Text("latest")) {
            None | Some("latest") => OffsetReset::Latest,
            Some("earliest") => OffsetReset::Earliest,
            Some("none") => OffsetReset::None,
            Some(other) => match other.strip_prefix("by_duration:") {
                Some(d) => OffsetReset::ByDuration(
                    parse_iso_duration(d).map_err(|e| r.err("auto.offset.reset", e))?,
                ),
                None => {
                    return Err(r.err(
                        "auto.offset.reset",
                        format!("\"{other}\" is not latest, earliest, none or by_duration:<ISO-8601 duration>"),
                    ))
                }
            },
        };
        let c = ConsumerConfig {
            auto_offset_reset,
            fetch_max_wait_ms: r.u64("fetch.max.wait.ms", 500)?,
            request_timeout_ms: r.positive("request.timeout.ms", 30_000)?,
            retry_backoff_ms: r.u64("retry.backoff.ms", 100)?,
            metadata_max_age_ms: r.positive("metadata.max.age.ms", 300_000)?,
            client_rack: None,
            connection: ConnectionConfig::read(r)?,
            group_id: None,
            enable_auto_commit: r.bool("enable.auto.commit", true)?,
            auto_commit_interval_ms: r.positive("auto.commit.interval.ms", 5_000)?,
            subscribe: false,
            assignment_strategy: match r
                .string("partition.assignment.strategy", KeyDefault::Text("range"))
            {
                None | Some("range") => "range",
                Some("cooperative-sticky") => "cooperative-sticky",
                Some(other) => {
                    return Err(r.err(
                        "partition.assignment.strategy",
                        format!("\"{other}\" is not range or cooperative-sticky"),
                    ))
                }
            },
            session_timeout_ms: r.positive("session.timeout.ms", 45_000)?,
            heartbeat_interval_ms: r.positive("heartbeat.interval.ms", 3_000)?,
            max_poll_interval_ms: r.positive("max.poll.interval.ms", 300_000)?,
            group_instance_id: None,
            group_protocol: "classic",
            remote_assignor: match r.string("group.remote.assignor", KeyDefault::Unset) {
                None | Some("uniform") => "uniform",
                Some("range") => "range",
                Some(other) => {
                    return Err(r.err(
                        "group.remote.assignor",
                        format!("\"{other}\" is not uniform or range"),
                    ))
                }
            },
            commit_leader_epoch: r.bool("sim.commit.leader.epoch", true)?,
        };
        let group_protocol = match r.string("group.protocol", KeyDefault::Text("classic")) {
            None | Some("classic") => "classic",
            Some("consumer") => "consumer",
            Some(other) => {
                return Err(r.err(
                    "group.protocol",
                    format!("\"{other}\" is not classic or consumer"),
                ))
            }
        };
        let c = ConsumerConfig {
            group_protocol,
            ..c
        };
        if c.heartbeat_interval_ms >= c.session_timeout_ms {
            return Err(r.err(
                "heartbeat.interval.ms",
                "must be lower than session.timeout.ms",
            ));
        }
        r.note("group.instance.id", KeyDefault::Unset);
        r.note("client.rack", KeyDefault::Unset);
        r.note("group.id", KeyDefault::Unset);
        let c = ConsumerConfig {
            client_rack: match r.raw("client.rack") {
                None => None,
                Some(serde_json::Value::String(s)) if s.trim().is_empty() => None,
                Some(serde_json::Value::String(s)) => Some(s.trim().to_string()),
                Some(other) => {
                    return Err(r.err(
                        "client.rack",
                        format!("{other} is not a rack id (a string)"),
                    ))
                }
            },
            group_id: match r.raw("group.id") {
                None => None,
                Some(serde_json::Value::String(s)) if s.trim().is_empty() => {
                    return Err(r.err("group.id", "must not be empty"))
                }
                Some(serde_json::Value::String(s)) => Some(s.trim().to_string()),
                Some(other) => {
                    return Err(r.err("group.id", format!("{other} is not a group id (a string)")))
                }
            },
            group_instance_id: match r.raw("group.instance.id") {
                None => None,
                Some(serde_json::Value::String(s)) if s.trim().is_empty() => {
                    return Err(r.err("group.instance.id", "must not be empty"))
                }
                Some(serde_json::Value::String(s)) => Some(s.trim().to_string()),
                Some(other) => {
                    return Err(r.err(
                        "group.instance.id",
                        format!("{other} is not an instance id (a string)"),
                    ))
                }
            },
            ..c
        };
        Ok(c)
    }
}

/// Where a scenario sets a config key: the top-level `config` (brokers and
/// controller, and every topic's defaults), a topic's `config`, or a
/// producer's or consumer's `config`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum KeyScope {
    Cluster,
    Topic,
    Producer,
    Consumer,
}

/// Every config key the lab reads, where a scenario may set it and the
/// default it is read with: the readers' own record of parsing an empty
/// config, so the list cannot differ from what `parse` accepts. The book's
/// configuration reference is generated from it (tests/book_reference.rs).
#[cfg(not(target_arch = "wasm32"))]
pub fn documented_keys() -> Vec<(KeyScope, &'static str, KeyDefault)> {
    let empty = ConfigMap::new();
    let mut out = Vec::new();
    let mut take = |scope: KeyScope, r: Reader| {
        let unnoted: Vec<&str> = r
            .used
            .iter()
            .copied()
            .filter(|k| !r.defaults.iter().any(|(d, _)| d == k))
            .collect();
        assert!(
            unnoted.is_empty(),
            "keys read without noting their default: {unnoted:?}"
        );
        out.extend(r.defaults.into_iter().map(|(k, d)| (scope, k, d)));
    };
    let mut r = Reader::new(&empty, "config");
    ClusterConfig::read(&mut r).unwrap_or_else(|e| unreachable!("{e}"));
    take(KeyScope::Cluster, r);
    let mut r = Reader::new(&empty, "topic");
    TopicConfig::read(&mut r, &TopicConfig::default()).unwrap_or_else(|e| unreachable!("{e}"));
    take(KeyScope::Topic, r);
    let mut r = Reader::new(&empty, "producer");
    ProducerConfig::read(&mut r, None).unwrap_or_else(|e| unreachable!("{e}"));
    take(KeyScope::Producer, r);
    let mut r = Reader::new(&empty, "consumer");
    ConsumerConfig::read(&mut r).unwrap_or_else(|e| unreachable!("{e}"));
    take(KeyScope::Consumer, r);
    out
}

/// The keys a cluster's `config` (`topic: false`) or a topic's `config`
/// (`topic: true`) reads, Kafka's and `sim.` ones alike, in reading order:
/// what an imported cluster's configs are sorted by (modelled or ignored).
pub fn keys_read(topic: bool) -> Vec<&'static str> {
    let empty = ConfigMap::new();
    let mut r = Reader::new(&empty, "config");
    let ok = if topic {
        TopicConfig::read(&mut r, &TopicConfig::default()).is_ok()
    } else {
        ClusterConfig::read(&mut r).is_ok()
    };
    if ok {
        r.used
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(json: &str) -> ConfigMap {
        serde_json::from_str(json).unwrap()
    }

    /// KIP-1106 (ConsumerConfig AUTO_OFFSET_RESET_DOC): by_duration takes an
    /// ISO-8601 duration as java.time.Duration.parse reads it; Kafka refuses
    /// a negative one.
    #[test]
    fn auto_offset_reset_by_duration_reads_iso_8601_durations() {
        for (text, ms) in [
            ("PT30S", 30_000),
            ("pt1.5s", 1_500),
            ("PT1M", 60_000),
            ("PT2H3M4.005S", 7_384_005),
            ("P1D", 86_400_000),
            ("P1DT1S", 86_401_000),
        ] {
            assert_eq!(parse_iso_duration(text), Ok(ms), "{text}");
        }
        for bad in [
            "", "P", "PT", "30S", "PT-1S", "-PT1S", "PT1X", "P1H", "PT.5S",
        ] {
            assert!(parse_iso_duration(bad).is_err(), "{bad} should be refused");
        }
        let c = ConsumerConfig::parse(&map(r#"{"auto.offset.reset":"by_duration:PT10S"}"#), "c")
            .unwrap();
        assert_eq!(c.auto_offset_reset, OffsetReset::ByDuration(10_000));
        assert_eq!(c.auto_offset_reset.name(), "by_duration:PT10S");
        let e = ConsumerConfig::parse(&map(r#"{"auto.offset.reset":"by_duration:10s"}"#), "c")
            .unwrap_err();
        assert!(
            e.contains("auto.offset.reset") && e.contains("ISO-8601"),
            "{e}"
        );
    }

    #[test]
    fn absent_keys_take_kafka_defaults() {
        let c = ClusterConfig::default();
        assert_eq!(c.replica_lag_time_max_ms, 30_000);
        assert_eq!(c.broker_session_timeout_ms, 9_000);
        assert_eq!(c.topic_defaults.min_insync_replicas, 1);
        assert!(!c.topic_defaults.unclean_leader_election_enable);
    }

    #[test]
    fn unknown_config_key_is_an_error_naming_it() {
        let e = ClusterConfig::parse(&map(r#"{"replica.lag.time.max":1}"#), "config").unwrap_err();
        assert!(e.contains("unknown config \"replica.lag.time.max\""), "{e}");
    }

    #[test]
    fn string_values_are_accepted_as_in_server_properties() {
        let c = ClusterConfig::parse(
            &map(r#"{"replica.lag.time.max.ms":"10000","unclean.leader.election.enable":"true"}"#),
            "config",
        )
        .unwrap();
        assert_eq!(c.replica_lag_time_max_ms, 10_000);
        assert!(c.topic_defaults.unclean_leader_election_enable);
    }

    #[test]
    fn replica_selector_class_accepts_kafkas_class_names_only() {
        assert_eq!(ClusterConfig::default().replica_selector, None);
        let c = ClusterConfig::parse(
            &map(r#"{"replica.selector.class":"org.apache.kafka.common.replica.RackAwareReplicaSelector"}"#),
            "config",
        )
        .unwrap();
        assert_eq!(c.replica_selector, Some(ReplicaSelector::RackAware));
        let e = ClusterConfig::parse(&map(r#"{"replica.selector.class":"RackAware"}"#), "config")
            .unwrap_err();
        assert!(
            e.starts_with("config[\"replica.selector.class\"]: \"RackAware\" is not"),
            "{e}"
        );
        let e =
            ClusterConfig::parse(&map(r#"{"replica.selector.class":3}"#), "config").unwrap_err();
        assert!(e.contains("expected a class name"), "{e}");
    }

    #[test]
    fn client_rack_is_a_consumer_setting() {
        let c = ConsumerConfig::parse(&map(r#"{"client.rack":"b"}"#), "c").unwrap();
        assert_eq!(c.client_rack.as_deref(), Some("b"));
        assert_eq!(
            ConsumerConfig::parse(&ConfigMap::new(), "c")
                .unwrap()
                .client_rack,
            None
        );
        assert!(ConsumerConfig::parse(&map(r#"{"client.rack":1}"#), "c").is_err());
    }

    #[test]
    fn idempotence_defaults_on_only_with_acks_all() {
        let p = ProducerConfig::parse(&ConfigMap::new(), "p", Some(Acks::Leader)).unwrap();
        assert!(!p.enable_idempotence);
        let p = ProducerConfig::parse(&ConfigMap::new(), "p", None).unwrap();
        assert!(p.enable_idempotence && p.acks == Acks::All);
    }
}
