//! Kafka's `SenderTest` and `RecordAccumulatorTest` (clients/src/test/java/org/
//! apache/kafka/clients/producer/internals/), the cases about retries, backoff,
//! delivery timeout and metadata refresh, against our `Producer` driven the way
//! Kafka's tests drive the Sender with a MockClient: we hand it responses and
//! advance its timers by hand. Partition 0 starts led by broker 1 in leader
//! epoch 0; `retry.backoff.ms` is Kafka's default 100.

use failover_lab::sim::client::Producer;
use failover_lab::sim::config::{
    Acks, ClusterConfig, ConnectionConfig, ProducerConfig, TopicConfig,
};
use failover_lab::sim::io::{Ctx, Timer};
use failover_lab::sim::protocol::{
    BrokerId, ErrorCode, Message, MetadataRecord, Node, PartitionMetadata, ProducePartitionResponse,
};
use failover_lab::sim::trace::Trace;
use failover_lab::sim::PartitionInfo;

fn config(idempotent: bool) -> ProducerConfig {
    ProducerConfig {
        acks: Acks::All,
        enable_idempotence: idempotent,
        delivery_timeout_ms: 120_000,
        request_timeout_ms: 30_000,
        retries: i32::MAX as u64,
        retry_backoff_ms: 100,
        retry_backoff_max_ms: 1_000,
        max_in_flight: 5,
        linger_ms: 0,
        batch_size: 16_384,
        metadata_max_age_ms: 300_000,
        connection: ConnectionConfig {
            reconnect_backoff_ms: 50,
            reconnect_backoff_max_ms: 1_000,
            setup_timeout_ms: 10_000,
            setup_timeout_max_ms: 30_000,
        },
    }
}

struct Client {
    cluster: ClusterConfig,
    partitions: Vec<PartitionInfo>,
    trace: Trace,
    next_id: u64,
    now: u64,
    producer: Producer,
    /// Every message the producer sent: (time, to, message).
    sent: Vec<(u64, Node, Message)>,
    /// Timers not fired yet: (due, seq, timer).
    timers: Vec<(u64, u64, Timer)>,
    seq: u64,
}

impl Client {
    /// A started producer whose metadata says broker 1 leads partition 0.
    fn new(config: ProducerConfig) -> Client {
        let partitions = vec![PartitionInfo {
            topic: "foo".to_string(),
            topic_index: 0,
            partition: 0,
            replicas: vec![1, 2, 3],
            config: TopicConfig::default(),
        }];
        let producer = Producer::new("p".to_string(), 0, vec![0], config, 0, 3);
        let mut c = Client {
            cluster: ClusterConfig::default(),
            partitions,
            trace: Trace::default(),
            next_id: 0,
            now: 0,
            producer,
            sent: Vec::new(),
            timers: Vec::new(),
            seq: 0,
        };
        c.with(|p, ctx| p.start(ctx));
        c.metadata_response(Some(1), 0);
        // Past the start-up metadata request's rate limit (retry.backoff.ms).
        c.advance_to(1_000);
        c
    }

    fn with(&mut self, f: impl FnOnce(&mut Producer, &mut Ctx)) {
        self.run(Box::new(f));
    }

    #[allow(clippy::type_complexity)]
    fn run(&mut self, f: Box<dyn FnOnce(&mut Producer, &mut Ctx) + '_>) {
        let metadata: Vec<std::rc::Rc<MetadataRecord>> = Vec::new();
        let racks: Vec<String> = Vec::new();
        let mut dirty = Vec::new();
        let mut ctx = Ctx {
            now: self.now,
            config: &self.cluster,
            racks: &racks,
            partitions: &self.partitions,
            metadata: &metadata,
            trace: &mut self.trace,
            next_id: &mut self.next_id,
            sends: Vec::new(),
            timers: Vec::new(),
            dirty: &mut dirty,
            grown: &mut Vec::new(),
            commit_values: &mut Default::default(),
            buffers: &mut Default::default(),
            meta_pages: &mut Default::default(),
        };
        f(&mut self.producer, &mut ctx);
        let (sends, timers) = (ctx.sends, ctx.timers);
        let mut connects = Vec::new();
        for (to, m) in sends {
            if let (Node::Broker(broker), Message::Connect { id }) = (to, &m) {
                connects.push(Message::Connected { id: *id, broker });
            }
            self.sent.push((self.now, to, m));
        }
        for (due, t) in timers {
            self.seq += 1;
            self.timers.push((due, self.seq, t));
        }
        // Like Kafka's MockClient, a connect succeeds at once.
        for m in connects {
            self.run(Box::new(move |p: &mut Producer, ctx: &mut Ctx| {
                p.on_message(ctx, m)
            }));
        }
    }

    /// Fire every timer due up to `t`, in order, then stand at `t`.
    fn advance_to(&mut self, t: u64) {
        loop {
            self.timers.sort_by_key(|(due, seq, _)| (*due, *seq));
            let Some(pos) = self.timers.iter().position(|(due, _, _)| *due <= t) else {
                break;
            };
            let (due, _, timer) = self.timers.remove(pos);
            self.now = self.now.max(due);
            if self.producer.timer_live(&timer) {
                self.with(|p, ctx| p.on_timer(ctx, timer));
            }
        }
        self.now = t;
    }

    fn last_request(&self, f: impl Fn(&Message) -> Option<u64>) -> Option<u64> {
        self.sent.iter().rev().find_map(|(_, _, m)| f(m))
    }

    fn metadata_response(&mut self, leader: Option<BrokerId>, epoch: u32) {
        let id = self
            .last_request(|m| match m {
                Message::Metadata { id } => Some(*id),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no metadata request"));
        let msg = Message::MetadataResponse {
            id,
            partitions: vec![PartitionMetadata {
                partition: 0,
                leader,
                leader_epoch: epoch,
            }],
            offline: Vec::new(),
        };
        self.with(|p, ctx| p.on_message(ctx, msg));
    }

    fn send(&mut self, n: u64) {
        let ids: Vec<u64> = (0..n).map(|i| 1_000 + self.now * 10 + i).collect();
        self.with(|p, ctx| p.send(ctx, 0, ids, Acks::All, false));
    }

    /// Produce requests sent so far: (time, broker, id).
    fn produces(&self) -> Vec<(u64, Node, u64)> {
        self.sent
            .iter()
            .filter_map(|(t, to, m)| match m {
                Message::Produce { id, .. } => Some((*t, *to, *id)),
                _ => None,
            })
            .collect()
    }

    fn metadata_requests(&self) -> usize {
        self.sent
            .iter()
            .filter(|(_, _, m)| matches!(m, Message::Metadata { .. }))
            .count()
    }

    fn last_produce(&self) -> u64 {
        self.produces()
            .last()
            .map(|p| p.2)
            .unwrap_or_else(|| panic!("no produce request"))
    }

    fn respond(&mut self, result: Result<u64, ErrorCode>, current_leader: Option<(BrokerId, u32)>) {
        let id = self.last_produce();
        let msg = Message::ProduceResponse {
            id,
            partitions: vec![ProducePartitionResponse {
                partition: 0,
                result,
                current_leader,
            }],
        };
        self.with(|p, ctx| p.on_message(ctx, msg));
    }

    fn disconnect(&mut self) {
        let id = self.last_produce();
        let msg = Message::Disconnected {
            id,
            to: Node::Broker(1),
        };
        self.with(|p, ctx| p.on_message(ctx, msg));
    }
}

// Kafka: SenderTest.testRetries
#[test]
fn a_disconnected_produce_is_retried_and_succeeds() {
    let mut c = Client::new(ProducerConfig {
        retries: 1,
        ..config(false)
    });
    c.send(1);
    assert_eq!(c.produces().len(), 1);
    let before = c.metadata_requests();
    c.disconnect();
    assert!(
        c.metadata_requests() > before,
        "a broken connection asks for new metadata"
    );
    c.metadata_response(Some(1), 0);
    c.advance_to(c.now + 100);
    assert_eq!(c.produces().len(), 2, "retried");
    c.respond(Ok(0), None);
    assert_eq!(c.producer.stats.acked, 1);
    assert_eq!(c.producer.stats.failed, 0);
}

// Kafka: SenderTest.testRetries
#[test]
fn a_produce_fails_once_its_retries_are_used_up() {
    let mut c = Client::new(ProducerConfig {
        retries: 1,
        ..config(false)
    });
    c.send(1);
    c.disconnect();
    c.advance_to(c.now + 100);
    assert_eq!(c.produces().len(), 2);
    c.disconnect();
    c.advance_to(c.now + 10_000);
    assert_eq!(c.produces().len(), 2, "no third attempt");
    assert_eq!(c.producer.stats.failed, 1);
    assert_eq!(c.producer.stats.acked, 0);
}

// Kafka: SenderTest.testExpiredBatchDoesNotRetry
#[test]
fn a_batch_past_its_delivery_timeout_is_failed_not_retried_on_an_error() {
    let mut c = Client::new(ProducerConfig {
        delivery_timeout_ms: 1_500,
        ..config(false)
    });
    c.send(1);
    c.now += 1_500;
    c.respond(Err(ErrorCode::NotLeaderOrFollower), None);
    c.advance_to(c.now + 10_000);
    assert_eq!(c.produces().len(), 1, "not retried");
    assert_eq!(c.producer.stats.failed, 1);
}

// Kafka: SenderTest.testInflightBatchesExpireOnDeliveryTimeout
#[test]
fn an_in_flight_batch_expires_at_its_delivery_timeout_without_waiting_for_an_answer() {
    let mut c = Client::new(ProducerConfig {
        delivery_timeout_ms: 1_500,
        ..config(false)
    });
    c.send(1);
    c.advance_to(c.now + 1_501);
    assert_eq!(
        c.producer.stats.failed, 1,
        "expired at 1.5 s, not at the 30 s request timeout"
    );
}

// Kafka: SenderTest.testWhenProduceResponseReturnsWithALeaderShipChangeErrorAndNewLeaderInformation
#[test]
fn a_not_leader_error_with_a_current_leader_hint_updates_the_metadata_at_once() {
    for error in [ErrorCode::NotLeaderOrFollower, ErrorCode::FencedLeaderEpoch] {
        let mut c = Client::new(config(true));
        c.send(1);
        c.respond(Err(error), Some((2, 1)));
        assert_eq!(c.producer.known_leader(0), Some((Some(2), 1)), "{error}");
    }
}

// Kafka: SenderTest.testWhenProduceResponseReturnsWithALeaderShipChangeErrorButNoNewLeaderInformation
#[test]
fn a_not_leader_error_without_a_hint_keeps_the_metadata_and_requests_a_refresh() {
    for error in [ErrorCode::NotLeaderOrFollower, ErrorCode::FencedLeaderEpoch] {
        let mut c = Client::new(config(true));
        c.send(1);
        let before = c.metadata_requests();
        c.respond(Err(error), None);
        assert_eq!(c.producer.known_leader(0), Some((Some(1), 0)), "{error}");
        assert_eq!(
            c.metadata_requests(),
            before + 1,
            "{error}: metadata update requested"
        );
    }
}

// Kafka: RecordAccumulatorTest.testReadyAndDrainWhenABatchIsBeingRetried
// Kafka: RecordAccumulatorTest.testRetryBackoff
#[test]
fn a_retried_batch_waits_retry_backoff_when_the_leader_has_not_changed() {
    let mut c = Client::new(config(true));
    c.send(1);
    c.respond(Err(ErrorCode::NotEnoughReplicas), None);
    let failed_at = c.now;
    c.advance_to(failed_at + 50);
    assert_eq!(c.produces().len(), 1, "not ready before retry.backoff.ms");
    c.advance_to(failed_at + 100);
    assert_eq!(
        c.produces().len(),
        2,
        "ready once retry.backoff.ms has passed"
    );
    assert_eq!(c.produces()[1].1, Node::Broker(1));
}

// Kafka: RecordAccumulatorTest.testReadyAndDrainWhenABatchIsBeingRetried
// Kafka: SenderTest.testWhenProduceResponseReturnsWithALeaderShipChangeErrorAndNewLeaderInformation
#[test]
fn a_retried_batch_goes_to_a_new_leader_without_waiting_retry_backoff() {
    let mut c = Client::new(config(true));
    c.send(1);
    c.respond(Err(ErrorCode::NotLeaderOrFollower), Some((2, 1)));
    let at = c.now;
    c.advance_to(at + 1);
    let p = c.produces();
    assert_eq!(p.len(), 2);
    assert_eq!(p[1].1, Node::Broker(2));
    assert!(
        p[1].0 <= at + 1,
        "resent at {} ms, the error came at {at} ms",
        p[1].0
    );
}

// Kafka: RecordAccumulatorTest.testExponentialRetryBackoff
#[test]
fn retry_backoff_doubles_per_attempt_up_to_its_maximum() {
    // Kafka adds ±20 % jitter; we take the exact value, inside Kafka's bounds.
    let mut c = Client::new(config(true));
    c.send(1);
    let mut waits = Vec::new();
    for _ in 0..6 {
        c.respond(Err(ErrorCode::NotEnoughReplicas), None);
        let failed_at = c.now;
        let n = c.produces().len();
        let mut t = failed_at;
        while c.produces().len() == n {
            t += 1;
            c.advance_to(t);
        }
        waits.push(t - failed_at);
    }
    assert_eq!(waits, vec![100, 200, 400, 800, 1_000, 1_000]);
    for (i, w) in waits.iter().enumerate() {
        let exp = (100u64 << i).min(1_000);
        assert!(
            *w * 10 >= exp * 8 && *w * 10 <= exp * 12,
            "attempt {}: {w}",
            i + 1
        );
    }
}

// Kafka: RecordAccumulatorTest.testExpiredBatches
#[test]
fn a_batch_that_never_got_out_expires_at_its_delivery_timeout() {
    let mut c = Client::new(ProducerConfig {
        delivery_timeout_ms: 3_200,
        ..config(false)
    });
    // No leader known: the batch waits in the accumulator.
    c.with(|p, _| {
        p.set_leader(0, (None, 1));
    });
    let created = c.now;
    c.send(2);
    assert!(c.produces().is_empty());
    c.advance_to(created + 3_199);
    c.with(|p, ctx| p.pump(ctx));
    assert_eq!(c.producer.stats.failed, 0);
    c.advance_to(created + 3_200);
    c.with(|p, ctx| p.pump(ctx));
    assert_eq!(c.producer.stats.failed, 2);
    assert!(c.produces().is_empty());
}
