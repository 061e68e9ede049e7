//! A client's connections to the brokers, as Kafka's `NetworkClient` and
//! `ClusterConnectionStates` keep them.
//!
//! A request goes out only over a *ready* connection
//! (`NetworkClient.ready`). When a connection is down the client first
//! connects; until that succeeds nothing is sent to that broker, so nothing
//! can fail: the producer's batches wait in the accumulator and the
//! consumer's partitions wait for their next fetch. That is why a crashed
//! broker does not make a producer count failed attempts:
//! - a broker whose process is down (or that has not yet opened its sockets
//!   because it is still starting: `BrokerServer.startup` enables request
//!   processing only once the controller has unfenced it) **refuses** the
//!   connection at once. The client asks for fresh metadata
//!   (`DefaultMetadataUpdater.handleServerDisconnect`) and tries again after
//!   `reconnect.backoff.ms` (50 ms), doubling per refused attempt up to
//!   `reconnect.backoff.max.ms` (1 s), with ±20 % jitter;
//! - a host that drops packets (isolated, powered off) leaves the connection
//!   **connecting** until `socket.connection.setup.timeout.ms` (10 s, doubling
//!   per timed-out attempt up to `socket.connection.setup.timeout.max.ms`,
//!   30 s, ±20 %), with no request sent meanwhile.
//!
//! Only the requests already in flight when a connection breaks fail
//! (NETWORK_EXCEPTION, one failed attempt each); a request that times out
//! closes its connection (`NetworkClient.handleTimedOutRequests`).
//!
//! The jitter comes from a hash of the client, the broker and the attempt,
//! not from a random stream, so a run stays reproducible. Simplification:
//! the clients of a scenario are already running at t=0, so they start
//! connected to every broker (as the brokers start registered).

use crate::sim::config::ConnectionConfig;
use crate::sim::io::{Ctx, Timer};
use crate::sim::protocol::{BrokerId, Message, Node};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Ready,
    /// A connect attempt (`Message::Connect` with this id) is under way.
    Connecting {
        id: u64,
    },
    /// Down; a new attempt may start at `reconnect_at`.
    Disconnected {
        reconnect_at: u64,
    },
}

#[derive(Clone, Debug)]
struct Connection {
    state: State,
    /// Refused or timed-out connects since the last success (failedAttempts).
    failed_attempts: u32,
    /// Connects that timed out since the last success (failedConnectAttempts).
    setup_timeouts: u32,
    /// When the last connect attempt started (lastConnectAttemptMs; 0 for
    /// none): leastLoadedNode connects to the node tried longest ago.
    last_attempt_ms: u64,
}

/// What a broken connection meant for the request that found it broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// It was the connect attempt: refused, nothing was sent.
    Refused,
    /// It was a request on a ready connection: it was in flight and fails.
    InFlight,
}

#[derive(Clone, Debug)]
pub struct Connections {
    /// The client's own node: the jitter's salt, and the answer address.
    client: Node,
    config: ConnectionConfig,
    by_broker: Vec<Connection>,
    /// leastLoadedNode picks so far: the salt of its random starting node.
    picks: u64,
}

impl Connections {
    pub fn new(client: Node, brokers: u32, config: ConnectionConfig) -> Self {
        Connections {
            client,
            config,
            by_broker: (0..brokers)
                .map(|_| Connection {
                    state: State::Ready,
                    failed_attempts: 0,
                    setup_timeouts: 0,
                    last_attempt_ms: 0,
                })
                .collect(),
            picks: 0,
        }
    }

    /// A process that has just started holds no connection: each is opened
    /// on first use (a dead broker then refuses it, and nothing is sent).
    pub fn none_yet(mut self) -> Self {
        for c in &mut self.by_broker {
            c.state = State::Disconnected { reconnect_at: 0 };
        }
        self
    }

    fn get(&self, b: BrokerId) -> Option<&Connection> {
        self.by_broker.get((b as usize).wrapping_sub(1))
    }

    fn get_mut(&mut self, b: BrokerId) -> Option<&mut Connection> {
        self.by_broker.get_mut((b as usize).wrapping_sub(1))
    }

    pub fn state(&self, b: BrokerId) -> Option<State> {
        self.get(b).map(|c| c.state)
    }

    pub fn is_ready(&self, b: BrokerId) -> bool {
        self.state(b) == Some(State::Ready)
    }

    /// NetworkClient.ready: true when a request may go to `b` now. When the
    /// connection is down and its backoff has passed, this starts a connect
    /// attempt (and returns false: the attempt takes a round trip).
    pub fn ready(&mut self, ctx: &mut Ctx, b: BrokerId) -> bool {
        let Some(state) = self.state(b) else {
            return false;
        };
        match state {
            State::Ready => true,
            State::Connecting { .. } => false,
            State::Disconnected { reconnect_at } => {
                if ctx.now >= reconnect_at {
                    self.connect(ctx, b);
                }
                false
            }
        }
    }

    /// Whether a connection to `b` is usable now or could be opened now
    /// (leastLoadedNode's test for a metadata request's destination).
    pub fn usable(&self, b: BrokerId, now: u64) -> bool {
        match self.state(b) {
            Some(State::Ready) => true,
            Some(State::Disconnected { reconnect_at }) => now >= reconnect_at,
            _ => false,
        }
    }

    /// NetworkClient.leastLoadedNode, for a metadata or FindCoordinator
    /// request. Counting from a random node (here drawn from a hash of the
    /// client and the pick, so a run stays reproducible): the first ready
    /// node with no request in flight; else the ready node with the fewest,
    /// skipping one whose in-flight limit is reached (`canSendRequest`).
    /// With none, the request waits while a connection is being set up
    /// (no second one is opened alongside); else a connect starts to the
    /// node whose last attempt is oldest, and the request waits for it.
    /// `in_flight(b)` is how many requests the client has out to `b`.
    pub fn least_loaded(
        &mut self,
        ctx: &mut Ctx,
        in_flight: &dyn Fn(BrokerId) -> u32,
        max_in_flight: u32,
    ) -> Option<BrokerId> {
        let n = self.by_broker.len() as u64;
        if n == 0 {
            return None;
        }
        self.picks += 1;
        let start = self.draw(0, self.picks) % n;
        let mut fewest: Option<(u32, BrokerId)> = None;
        let mut connecting = false;
        let mut can_connect: Option<(u64, BrokerId)> = None;
        for k in 0..n {
            let b = ((start + k) % n + 1) as BrokerId;
            let Some(c) = self.get(b) else {
                continue;
            };
            match c.state {
                State::Ready => {
                    let out = in_flight(b);
                    if out == 0 {
                        return Some(b);
                    }
                    if out < max_in_flight && fewest.is_none_or(|(f, _)| out < f) {
                        fewest = Some((out, b));
                    }
                }
                State::Connecting { .. } => connecting = true,
                State::Disconnected { reconnect_at } if ctx.now >= reconnect_at => {
                    if can_connect.is_none_or(|(t, _)| t > c.last_attempt_ms) {
                        can_connect = Some((c.last_attempt_ms, b));
                    }
                }
                State::Disconnected { .. } => {}
            }
        }
        if let Some((_, b)) = fewest {
            return Some(b);
        }
        if !connecting {
            if let Some((_, b)) = can_connect {
                self.ready(ctx, b);
            }
        }
        None
    }

    /// When the next connection still backing off at `now` may be tried
    /// again (one whose backoff has passed is tried by whoever needs it).
    pub fn next_reconnect_at(&self, now: u64) -> Option<u64> {
        self.by_broker
            .iter()
            .filter_map(|c| match c.state {
                State::Disconnected { reconnect_at } if reconnect_at > now => Some(reconnect_at),
                _ => None,
            })
            .min()
    }

    fn connect(&mut self, ctx: &mut Ctx, b: BrokerId) {
        let id = ctx.new_id();
        let setup = match self.get(b) {
            Some(c) => self.jittered(
                self.config.setup_timeout_ms,
                self.config.setup_timeout_max_ms,
                c.setup_timeouts,
                b,
                id,
            ),
            None => return,
        };
        if let Some(c) = self.get_mut(b) {
            c.state = State::Connecting { id };
            c.last_attempt_ms = ctx.now;
        }
        ctx.send(Node::Broker(b), Message::Connect { id });
        ctx.after(
            setup.max(1),
            Timer::ConnectionSetupTimeout { broker: b, id },
        );
    }

    /// The broker accepted connect attempt `id`. Returns true when that made
    /// the connection ready.
    pub fn on_connected(&mut self, b: BrokerId, id: u64) -> bool {
        let Some(c) = self.get_mut(b) else {
            return false;
        };
        if c.state != (State::Connecting { id }) {
            return false;
        }
        c.state = State::Ready;
        c.failed_attempts = 0;
        c.setup_timeouts = 0;
        true
    }

    /// Request (or connect attempt) `id` to `b` found the connection broken.
    /// `None` when the connection had already been marked down (a late
    /// notice for a request that already failed).
    pub fn on_disconnected(&mut self, now: u64, b: BrokerId, id: u64) -> Option<Broken> {
        let state = self.state(b)?;
        match state {
            State::Connecting { id: attempt } if attempt == id => {
                self.down(now, b, id);
                Some(Broken::Refused)
            }
            State::Ready => {
                self.down(now, b, id);
                Some(Broken::InFlight)
            }
            _ => None,
        }
    }

    /// The connect attempt `id` to `b` is still unanswered after the setup
    /// timeout. Returns true when that closed the attempt.
    pub fn on_setup_timeout(&mut self, now: u64, b: BrokerId, id: u64) -> bool {
        if self.state(b) != Some(State::Connecting { id }) {
            return false;
        }
        if let Some(c) = self.get_mut(b) {
            c.setup_timeouts += 1;
        }
        self.down(now, b, id);
        true
    }

    /// The client closes its connection to `b` (a request timed out on it).
    pub fn close(&mut self, now: u64, b: BrokerId) {
        if self.is_ready(b) {
            self.down(now, b, now);
        }
    }

    /// ClusterConnectionStates.disconnected: count the failure and back off.
    fn down(&mut self, now: u64, b: BrokerId, salt: u64) {
        let Some(failed) = self.get(b).map(|c| c.failed_attempts) else {
            return;
        };
        let wait = self.jittered(
            self.config.reconnect_backoff_ms,
            self.config.reconnect_backoff_max_ms,
            failed,
            b,
            salt,
        );
        if let Some(c) = self.get_mut(b) {
            c.failed_attempts = c.failed_attempts.saturating_add(1);
            c.state = State::Disconnected {
                reconnect_at: now + wait,
            };
        }
    }

    /// A reproducible stand-in for the client's `Random`: a hash of the
    /// client, `b` and `salt`.
    fn draw(&self, b: BrokerId, salt: u64) -> u64 {
        let node = match self.client {
            Node::Producer(i) => u64::from(i) << 1,
            Node::Consumer(i) => (u64::from(i) << 1) | 1,
            _ => 0,
        };
        let mut key = [0u8; 24];
        key[..8].copy_from_slice(&node.to_le_bytes());
        key[8..16].copy_from_slice(&u64::from(b).to_le_bytes());
        key[16..].copy_from_slice(&salt.to_le_bytes());
        xxhash_rust::xxh3::xxh3_64(&key)
    }

    /// Kafka's ExponentialBackoff(base, 2, max, 0.2): `base · 2^attempts`
    /// times a factor in [0.8, 1.2), capped at `max`.
    fn jittered(&self, base: u64, max: u64, attempts: u32, b: BrokerId, salt: u64) -> u64 {
        let term = base.saturating_mul(1u64 << attempts.min(20));
        let node = match self.client {
            Node::Producer(i) => u64::from(i) << 1,
            Node::Consumer(i) => (u64::from(i) << 1) | 1,
            _ => 0,
        };
        let mut key = [0u8; 24];
        key[..8].copy_from_slice(&node.to_le_bytes());
        key[8..16].copy_from_slice(&u64::from(b).to_le_bytes());
        key[16..].copy_from_slice(&salt.to_le_bytes());
        let h = xxhash_rust::xxh3::xxh3_64(&key);
        // factor = 0.8 + 0.4 · h / 2^64, in thousandths.
        let factor = 800 + ((u128::from(h) * 400) >> 64) as u64;
        (term.saturating_mul(factor) / 1000).min(max.max(base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::io::TestWorld;

    fn config() -> ConnectionConfig {
        ConnectionConfig {
            reconnect_backoff_ms: 50,
            reconnect_backoff_max_ms: 1_000,
            setup_timeout_ms: 10_000,
            setup_timeout_max_ms: 30_000,
        }
    }

    #[test]
    fn a_refused_connect_backs_off_exponentially_with_jitter_up_to_reconnect_backoff_max_ms() {
        // ClusterConnectionStates.updateReconnectBackoff: 50 ms · 2^(n-1),
        // ±20 %, capped at 1 s.
        let mut c = Connections::new(Node::Producer(0), 3, config());
        let mut world = TestWorld::one_partition();
        let mut waits = Vec::new();
        let mut now = 1_000;
        c.close(now, 1);
        for _ in 0..8 {
            let State::Disconnected { reconnect_at } = c.state(1).unwrap_or(State::Ready) else {
                panic!("down");
            };
            waits.push(reconnect_at - now);
            now = reconnect_at;
            let mut id = 0;
            world.at(now, |ctx| {
                assert!(!c.ready(ctx, 1), "a connect takes a round trip");
                if let Some(State::Connecting { id: a }) = c.state(1) {
                    id = a;
                }
            });
            assert_eq!(c.on_disconnected(now, 1, id), Some(Broken::Refused));
        }
        let bases = [50u64, 100, 200, 400, 800, 1000, 1000, 1000];
        for (w, b) in waits.iter().zip(bases) {
            assert!(
                *w >= b * 8 / 10 && *w <= (b * 12 / 10).min(1_000),
                "{waits:?}"
            );
        }
        assert!(waits.windows(2).take(4).all(|w| w[1] > w[0]), "{waits:?}");
    }

    #[test]
    fn a_connect_that_is_never_answered_times_out_after_socket_connection_setup_timeout_ms() {
        let mut c = Connections::new(Node::Consumer(0), 3, config());
        let mut world = TestWorld::one_partition();
        c.close(0, 2);
        let mut timer = None;
        world.at(5_000, |ctx| {
            assert!(!c.ready(ctx, 2));
            timer = ctx.timers.last().cloned();
        });
        let Some((at, Timer::ConnectionSetupTimeout { broker: 2, id })) = timer else {
            panic!("a setup timeout is scheduled: {timer:?}");
        };
        assert!((13_000..17_000).contains(&at), "10 s ± 20 %: {at}");
        assert!(c.on_setup_timeout(at, 2, id));
        assert!(!c.on_setup_timeout(at, 2, id), "only once");
        assert!(matches!(c.state(2), Some(State::Disconnected { .. })));
    }

    /// NetworkClient.leastLoadedNode: from a random start, a ready node with
    /// no request in flight at once; else the ready node with the fewest,
    /// never one at its in-flight limit; with no ready node, wait for a
    /// connect under way rather than open another; else connect to the node
    /// whose last attempt is oldest.
    #[test]
    fn least_loaded_node_prefers_idle_then_fewest_in_flight_and_opens_one_connection_at_a_time() {
        let mut world = TestWorld::one_partition();
        let mut c = Connections::new(Node::Producer(0), 3, config());
        // Start spread: over many picks every idle node comes first sometimes.
        let mut starts = std::collections::BTreeSet::new();
        for _ in 0..30 {
            world.at(0, |ctx| starts.insert(c.least_loaded(ctx, &|_| 0, 5)));
        }
        assert_eq!(starts.len(), 3, "a random start: {starts:?}");
        // Only broker 2 is idle: it, whatever the start.
        let load = |b: BrokerId| [3, 0, 1][(b - 1) as usize];
        for _ in 0..10 {
            assert_eq!(world.at(0, |ctx| c.least_loaded(ctx, &load, 5)), Some(2));
        }
        // None idle: the fewest (broker 3, with 1), skipping broker 2 at the
        // limit of 2.
        let load = |b: BrokerId| [1, 2, 1][(b - 1) as usize];
        for _ in 0..10 {
            let b = world.at(0, |ctx| c.least_loaded(ctx, &load, 2));
            assert!(matches!(b, Some(1) | Some(3)), "{b:?}");
        }
        let load = |b: BrokerId| [2, 2, 1][(b - 1) as usize];
        assert_eq!(world.at(0, |ctx| c.least_loaded(ctx, &load, 2)), Some(3));
        // Every connection down: the first pick connects to one node and
        // waits; the next ones wait for it instead of opening another.
        c.close(100, 1);
        world.at(2_000, |ctx| c.ready(ctx, 1));
        c.close(200, 2);
        c.close(300, 3);
        let connecting = |c: &Connections| {
            (1..=3)
                .filter(|b| matches!(c.state(*b), Some(State::Connecting { .. })))
                .collect::<Vec<BrokerId>>()
        };
        assert_eq!(connecting(&c), [1]);
        for _ in 0..5 {
            assert_eq!(world.at(5_000, |ctx| c.least_loaded(ctx, &|_| 0, 5)), None);
            assert_eq!(connecting(&c), [1], "one connect at a time");
        }
        // Broker 1 refused: the next connect goes to the node tried longest
        // ago (2 and 3 never were), not back to 1.
        if let Some(State::Connecting { id }) = c.state(1) {
            c.on_disconnected(5_000, 1, id);
        }
        assert_eq!(world.at(9_000, |ctx| c.least_loaded(ctx, &|_| 0, 5)), None);
        let now = connecting(&c);
        assert!(now == [2] || now == [3], "{now:?}");
    }
}
