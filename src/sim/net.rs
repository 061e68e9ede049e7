//! The network between nodes: latency with seeded jitter, FIFO per link (as a TCP
//! connection is), and faults as data: a set of isolated brokers.
//!
//! An isolated broker can reach nobody and nobody can reach it, the controller
//! and clients included; messages to or from it are silently dropped, so the
//! sender only learns through a timeout. A message to a broker whose process is
//! down is different: the connection is refused and the sender is told at once
//! (`Message::Disconnected`), which is how a Kafka client notices a dead broker
//! quickly.

use std::collections::BTreeSet;

use super::pmap::VecMap;

use rand_core::Rng;
use rand_pcg::Pcg64Mcg;

use super::protocol::{BrokerId, Node};

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Network {
    pub latency_ms: u64,
    pub jitter_ms: u64,
    pub isolated: BTreeSet<BrokerId>,
    #[cfg_attr(
        world_snapshot,
        borsh(
            serialize_with = "crate::snapshot::rng::ser",
            deserialize_with = "crate::snapshot::rng::de"
        )
    )]
    rng: Pcg64Mcg,
    /// Last delivery time per directed link, to keep links FIFO: a dense
    /// `nodes × nodes` table (see [`Network::slot`]); links between nodes
    /// outside it, which a built cluster does not have, go to `other_links`.
    last_delivery: Vec<u64>,
    /// Brokers, producers, consumers: the shape of `last_delivery`.
    shape: (u32, u32, u32),
    other_links: VecMap<(Node, Node), u64>,
    pub messages_sent: u64,
    pub messages_dropped: u64,
}

impl Network {
    /// A network between a controller, `shape.0` brokers, `shape.1`
    /// producers and `shape.2` consumers.
    pub fn new(latency_ms: u64, jitter_ms: u64, seed: u64, shape: (u32, u32, u32)) -> Self {
        let nodes = 1 + shape.0 as usize + shape.1 as usize + shape.2 as usize;
        Network {
            latency_ms,
            jitter_ms,
            isolated: BTreeSet::new(),
            rng: Pcg64Mcg::new(0xcafe_f00d_d15e_a5e5 ^ (seed as u128) << 1 | 1),
            last_delivery: vec![0; nodes * nodes],
            shape,
            other_links: VecMap::new(),
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

    /// A node's row (and column) in `last_delivery`.
    fn slot(&self, node: Node) -> Option<usize> {
        let (b, p, c) = self.shape;
        match node {
            Node::Controller => Some(0),
            Node::Broker(i) if (1..=b).contains(&i) => Some(i as usize),
            Node::Producer(i) if i < p => Some((1 + b + i) as usize),
            Node::Consumer(i) if i < c => Some((1 + b + p + i) as usize),
            _ => None,
        }
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
        let last = match (self.slot(from), self.slot(to)) {
            (Some(a), Some(b)) => {
                let nodes = 1 + (self.shape.0 + self.shape.1 + self.shape.2) as usize;
                &mut self.last_delivery[a * nodes + b]
            }
            _ => self.other_links.or_default((from, to)),
        };
        if at < *last {
            at = *last;
        }
        *last = at;
        at
    }
}
