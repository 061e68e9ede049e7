//! The network between nodes: latency with seeded jitter, FIFO per link (as a TCP
//! connection is), and faults as data: a set of isolated brokers.
//!
//! An isolated broker can reach nobody and nobody can reach it, the controller
//! and clients included; messages to or from it are silently dropped, so the
//! sender only learns through a timeout. A message to a broker whose process is
//! down is different: the connection is refused and the sender is told at once
//! (`Message::Disconnected`), which is how a Kafka client notices a dead broker
//! quickly.

use std::collections::{BTreeMap, BTreeSet};

use rand_core::Rng;
use rand_pcg::Pcg64Mcg;

use super::protocol::{BrokerId, Node};

#[derive(Clone, Debug)]
pub struct Network {
    pub latency_ms: u64,
    pub jitter_ms: u64,
    pub isolated: BTreeSet<BrokerId>,
    rng: Pcg64Mcg,
    /// Last delivery time per directed link, to keep links FIFO.
    last_delivery: BTreeMap<(Node, Node), u64>,
    pub messages_sent: u64,
    pub messages_dropped: u64,
}

impl Network {
    pub fn new(latency_ms: u64, jitter_ms: u64, seed: u64) -> Self {
        Network {
            latency_ms,
            jitter_ms,
            isolated: BTreeSet::new(),
            rng: Pcg64Mcg::new(0xcafe_f00d_d15e_a5e5 ^ (seed as u128) << 1 | 1),
            last_delivery: BTreeMap::new(),
            messages_sent: 0,
            messages_dropped: 0,
        }
    }

    pub fn is_isolated(&self, node: Node) -> bool {
        matches!(node, Node::Broker(b) if self.isolated.contains(&b))
    }

    /// Whether a message can currently travel from `a` to `b`.
    pub fn can_reach(&self, a: Node, b: Node) -> bool {
        !self.is_isolated(a) && !self.is_isolated(b)
    }

    /// The time a message sent now from `from` to `to` arrives.
    pub fn delivery_time(&mut self, now: u64, from: Node, to: Node) -> u64 {
        self.messages_sent += 1;
        let jitter = if self.jitter_ms == 0 {
            0
        } else {
            self.rng.next_u64() % (self.jitter_ms + 1)
        };
        let mut at = now + self.latency_ms + jitter;
        let last = self.last_delivery.entry((from, to)).or_insert(0);
        if at < *last {
            at = *last;
        }
        *last = at;
        at
    }
}
