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
//!   **connecting** until `socket.connection.setup.timeout.ms` (10 s) has
//!   passed, with no request sent meanwhile.
//!
//! Both waits are Kafka's `ExponentialBackoff(base, 2, max, 0.2)`
//! ([`exponential_backoff`]): the exponent stops where `base · 2^e` reaches
//! `max`, the ±20 % jitter applies after that and the result is capped at
//! `max`, so a capped wait lies between 80 % and 100 % of the maximum.
//! `ClusterConnectionStates.disconnected` ([`Attempts`]) grows the reconnect
//! backoff on every disconnect, and the set-up timeout (up to
//! `socket.connection.setup.timeout.max.ms`, 30 s) on every disconnect while
//! *connecting*: a refusal counts as much as a timed-out attempt. A
//! disconnect from a ready connection, or a success, starts the set-up
//! timeout over. An attempt has timed out once strictly more than its
//! set-up timeout has passed (`isConnectionSetupTimeout`).
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
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
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

/// The two counters `ClusterConnectionStates` keeps per node: they are the
/// exponents of its reconnect backoff and of its connection set-up timeout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Attempts {
    /// Disconnects since the last success (`failedAttempts`).
    pub failed_attempts: u32,
    /// Disconnects while connecting since the connection was last ready or
    /// dropped from ready (`failedConnectAttempts`).
    pub failed_connect_attempts: u32,
}

impl Attempts {
    /// `ClusterConnectionStates.ready`: both start over.
    pub fn on_ready(&mut self) {
        *self = Attempts::default();
    }

    /// `ClusterConnectionStates.disconnected`: returns the reconnect
    /// backoff's exponent (the failures before this one). While connecting
    /// (refused or timed out alike) the set-up timeout grows; after ready it
    /// starts over.
    pub fn on_disconnected(&mut self, was_connecting: bool) -> u32 {
        let exponent = self.failed_attempts;
        self.failed_attempts = self.failed_attempts.saturating_add(1);
        if was_connecting {
            self.failed_connect_attempts = self.failed_connect_attempts.saturating_add(1);
        } else {
            self.failed_connect_attempts = 0;
        }
        exponent
    }
}

/// Kafka's `ExponentialBackoff(base, 2, max, 0.2).backoff(attempts)`, with
/// the jitter factor taken from `draw` (uniform over u64): the term
/// `base · 2^attempts`, no larger than `max` (Kafka caps the exponent at
/// log2(max / base)), times a factor in [0.8, 1.2), capped at `max`. Kafka
/// lowers `base` to `max` when it is larger, and with `max ≤ base` answers
/// that, unjittered.
pub fn exponential_backoff(base: u64, max: u64, attempts: u32, draw: u64) -> u64 {
    if max <= base {
        return max;
    }
    let term = backoff_term(base, max, attempts);
    // factor = 0.8 + 0.4 · draw / 2^64, in thousandths.
    let factor = 800 + ((u128::from(draw) * 400) >> 64) as u64;
    (term.saturating_mul(factor) / 1000).min(max)
}

/// The un-jittered term of [`exponential_backoff`]: `base · 2^attempts`,
/// no larger than `max`.
fn backoff_term(base: u64, max: u64, attempts: u32) -> u64 {
    base.saturating_mul(1u64 << attempts.min(40)).min(max)
}

/// Every value [`exponential_backoff`] (and Kafka's `ExponentialBackoff`)
/// can give for `attempts`, as an inclusive range.
pub fn backoff_bounds(base: u64, max: u64, attempts: u32) -> (u64, u64) {
    if max <= base {
        return (max, max);
    }
    let term = backoff_term(base, max, attempts);
    if term == 0 {
        return (0, 0);
    }
    // floor(0.8 · term) .. the largest integer below 1.2 · term, capped.
    (term * 4 / 5, ((term * 6 - 1) / 5).min(max))
}

/// `ClusterConnectionStates.isConnectionSetupTimeout`: an attempt started at
/// `started` has timed out once strictly more than `timeout` has passed.
pub fn setup_timed_out(started: u64, timeout: u64, now: u64) -> bool {
    now.saturating_sub(started) > timeout
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
struct Connection {
    state: State,
    attempts: Attempts,
    /// When the last connect attempt started (lastConnectAttemptMs; 0 for
    /// none): leastLoadedNode connects to the node tried longest ago.
    last_attempt_ms: u64,
}

/// What a broken connection meant for the request that found it broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub enum Broken {
    /// It was the connect attempt: refused, nothing was sent.
    Refused,
    /// It was a request on a ready connection: it was in flight and fails.
    InFlight,
}

#[derive(Clone, Debug)]
#[cfg_attr(world_snapshot, derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
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
                    attempts: Attempts::default(),
                    last_attempt_ms: 0,
                })
                .collect(),
            picks: 0,
        }
    }

    /// Room for brokers up to `b`, their connections ready (a connection
    /// table made before the cluster's size was known grows on first use).
    pub fn ensure(&mut self, b: BrokerId) {
        while self.by_broker.len() < b as usize {
            self.by_broker.push(Connection {
                state: State::Ready,
                attempts: Attempts::default(),
                last_attempt_ms: 0,
            });
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
                c.attempts.failed_connect_attempts,
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
        // The first instant at which setup_timed_out holds.
        ctx.after(setup + 1, Timer::ConnectionSetupTimeout { broker: b, id });
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
        c.attempts.on_ready();
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
        let Some(mut attempts) = self.get(b).map(|c| c.attempts) else {
            return;
        };
        let was_connecting = matches!(self.state(b), Some(State::Connecting { .. }));
        let exponent = attempts.on_disconnected(was_connecting);
        let wait = self.jittered(
            self.config.reconnect_backoff_ms,
            self.config.reconnect_backoff_max_ms,
            exponent,
            b,
            salt,
        );
        if let Some(c) = self.get_mut(b) {
            c.attempts = attempts;
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

    /// [`exponential_backoff`] with a reproducible draw (see [`Self::draw`]).
    fn jittered(&self, base: u64, max: u64, attempts: u32, b: BrokerId, salt: u64) -> u64 {
        exponential_backoff(base, max, attempts, self.draw(b, salt))
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
    fn a_refused_connect_grows_the_setup_timeout_and_at_the_cap_the_jitter_gives_80_to_100_percent_of_the_max(
    ) {
        // Kafka's ClusterConnectionStates.disconnected grows the connection
        // set-up timeout (updateConnectionSetupTimeout) on any disconnect
        // while CONNECTING, a refusal included, and resets it after READY;
        // its ExponentialBackoff caps the exponent at log2(max / base) and
        // jitters after that, so a capped value is 80–100 % of the maximum.
        let mut c = Connections::new(Node::Producer(0), 3, config());
        let mut world = TestWorld::one_partition();
        let mut now = 1_000;
        c.close(now, 1);
        let mut timeouts = Vec::new();
        for _ in 0..40 {
            let State::Disconnected { reconnect_at } = c.state(1).unwrap_or(State::Ready) else {
                panic!("down");
            };
            now = reconnect_at;
            let mut found = None;
            world.at(now, |ctx| {
                assert!(!c.ready(ctx, 1));
                found = ctx.timers.last().cloned();
            });
            let Some((at, Timer::ConnectionSetupTimeout { broker: 1, id })) = found else {
                panic!("a setup timeout is scheduled: {found:?}");
            };
            timeouts.push(at - now - 1);
            // Refused at once: the broker's process is down.
            assert_eq!(c.on_disconnected(now, 1, id), Some(Broken::Refused));
        }
        // The first attempt after the drop from READY: 10 s ± 20 %; after one
        // refusal 20 s ± 20 %; from then on capped at 30 s.
        assert!((8_000..12_000).contains(&timeouts[0]), "{timeouts:?}");
        assert!((16_000..24_000).contains(&timeouts[1]), "{timeouts:?}");
        let capped = &timeouts[2..];
        assert!(
            capped.iter().all(|t| (24_000..=30_000).contains(t)),
            "{timeouts:?}"
        );
        assert!(
            capped.iter().any(|t| *t < 29_000),
            "at the cap the jitter still lowers the timeout: {timeouts:?}"
        );
        for attempts in 0..8 {
            let (lo, hi) = backoff_bounds(10_000, 30_000, attempts);
            for draw in [0, u64::MAX / 3, u64::MAX / 2, u64::MAX] {
                let v = exponential_backoff(10_000, 30_000, attempts, draw);
                assert!(
                    (lo..=hi).contains(&v),
                    "{attempts} {draw}: {v} not in {lo}..={hi}"
                );
            }
        }
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

    /// ExponentialBackoff's jitter: the term times a factor drawn
    /// uniformly from [1 - 0.2, 1 + 0.2) (`jitter` 0.2): the lowest draw
    /// gives 80 % of the term, the middle one the term itself, the highest
    /// just under 120 %; capped at the max.
    #[test]
    fn the_jitter_factor_spans_80_to_120_percent_of_the_term() {
        let half = 1u64 << 63;
        assert_eq!(exponential_backoff(1_000, 100_000, 0, 0), 800);
        assert_eq!(exponential_backoff(1_000, 100_000, 0, half), 1_000);
        assert_eq!(exponential_backoff(1_000, 100_000, 0, u64::MAX), 1_199);
        assert_eq!(exponential_backoff(1_000, 100_000, 2, half), 4_000);
        assert_eq!(exponential_backoff(1_000, 1_100, 0, u64::MAX), 1_100);
    }

    /// `backoff_bounds` is every value Kafka's ExponentialBackoff can give:
    /// from the floor of 80 % of the term to the largest integer below
    /// 120 % of it (`(long) (term * factor)`, factor in [0.8, 1.2)),
    /// capped at the max.
    #[test]
    fn the_backoff_bounds_run_from_80_percent_to_just_below_120_percent_of_the_term() {
        assert_eq!(backoff_bounds(1_000, 100_000, 0), (800, 1_199));
        assert_eq!(backoff_bounds(10_000, 30_000, 1), (16_000, 23_999));
        assert_eq!(backoff_bounds(10_000, 30_000, 2), (24_000, 30_000));
        assert_eq!(backoff_bounds(5, 100, 0), (4, 5));
    }

    /// Each client's jitter is its own (every Kafka client seeds its own
    /// `Random` for ExponentialBackoff): two producers, two consumers, and
    /// a producer and a consumer of the same index never share a draw for
    /// the same broker and attempt.
    #[test]
    fn each_client_draws_its_own_jitter() {
        let clients = [
            Node::Producer(0),
            Node::Producer(1),
            Node::Consumer(0),
            Node::Consumer(1),
        ];
        let draws: std::collections::BTreeSet<u64> = clients
            .iter()
            .map(|n| Connections::new(*n, 3, config()).draw(1, 7))
            .collect();
        assert_eq!(draws.len(), clients.len(), "{draws:?}");
    }

    /// NetworkClient.leastLoadedNode keeps the first node it meets with
    /// the fewest requests in flight (`currInflight < inflight`, strict) and
    /// the first that may connect with the oldest last attempt
    /// (`lastConnectAttemptMs(found) > lastConnectAttemptMs(node)`, strict),
    /// counting from its random start; a node at its in-flight limit is
    /// never picked (`canSendRequest`), and a node still backing off is not
    /// one that may connect (`canConnect`).
    #[test]
    fn least_loaded_node_keeps_the_first_of_equals_and_never_a_node_at_its_limit_or_backing_off() {
        let mut world = TestWorld::one_partition();
        let client = Node::Consumer(0);
        let mut c = Connections::new(client, 3, config());
        // The random start of the next pick, seen by a copy with every node
        // idle: the first node it meets.
        let start_of = |c: &Connections, world: &mut TestWorld| {
            let mut copy = c.clone();
            world.at(0, |ctx| copy.least_loaded(ctx, &|_| 0, 5))
        };
        for _ in 0..10 {
            let first = start_of(&c, &mut world);
            assert_eq!(world.at(0, |ctx| c.least_loaded(ctx, &|_| 1, 5)), first);
        }
        let load = |b: BrokerId| [1, 3, 2][(b - 1) as usize];
        for _ in 0..10 {
            assert_eq!(world.at(0, |ctx| c.least_loaded(ctx, &load, 5)), Some(1));
        }
        for _ in 0..5 {
            assert_eq!(world.at(0, |ctx| c.least_loaded(ctx, &|_| 2, 2)), None);
        }
        assert!((1..=3).all(|b| c.is_ready(b)), "no connect alongside");
        // Every node down, none tried yet: the connect goes to the first
        // node of the random order.
        for _ in 0..10 {
            let mut down = Connections::new(client, 3, config()).none_yet();
            down.picks = c.picks;
            let first = start_of(&c, &mut world).unwrap_or(0);
            c.picks += 1;
            assert_eq!(world.at(0, |ctx| down.least_loaded(ctx, &|_| 0, 5)), None);
            assert!(
                matches!(down.state(first), Some(State::Connecting { .. })),
                "{first}"
            );
        }
        // Broker 1 was tried longest ago but still backs off; broker 2 may
        // connect: it is the one.
        let mut c = Connections::new(client, 3, config());
        for (b, reconnect_at, last) in [(0, 10_000, 100), (1, 0, 5_000), (2, 10_000, 200)] {
            c.by_broker[b].state = State::Disconnected { reconnect_at };
            c.by_broker[b].last_attempt_ms = last;
        }
        assert_eq!(world.at(6_000, |ctx| c.least_loaded(ctx, &|_| 0, 5)), None);
        assert!(matches!(c.state(2), Some(State::Connecting { .. })));
        assert!(matches!(c.state(1), Some(State::Disconnected { .. })));
    }

    /// The next wake for a reconnect is the earliest backoff still running:
    /// a connection whose backoff ends now may be tried now by whoever
    /// needs it (ClusterConnectionStates.connectionDelay is 0 then).
    #[test]
    fn the_next_reconnect_is_the_earliest_backoff_still_running() {
        let mut c = Connections::new(Node::Producer(0), 3, config());
        c.by_broker[0].state = State::Disconnected { reconnect_at: 500 };
        c.by_broker[1].state = State::Disconnected { reconnect_at: 800 };
        assert_eq!(c.next_reconnect_at(0), Some(500));
        assert_eq!(c.next_reconnect_at(499), Some(500));
        assert_eq!(c.next_reconnect_at(500), Some(800));
        assert_eq!(c.next_reconnect_at(800), None);
    }

    /// isConnectionSetupTimeout: an attempt has timed out once strictly
    /// more than its set-up timeout has passed, so its timer fires at the
    /// first millisecond past it, not at it.
    #[test]
    fn a_connect_attempt_times_out_at_the_first_millisecond_past_its_setup_timeout() {
        let mut world = TestWorld::one_partition();
        for b in 1..=3 {
            let mut c = Connections::new(Node::Producer(0), 3, config()).none_yet();
            let timer = world.at(1_000, |ctx| {
                c.ready(ctx, b);
                ctx.timers.last().cloned()
            });
            let Some((at, Timer::ConnectionSetupTimeout { broker, id })) = timer else {
                panic!("a setup timeout is scheduled: {timer:?}");
            };
            assert_eq!(broker, b);
            let setup = c.jittered(10_000, 30_000, 0, b, id);
            assert_eq!(at, 1_000 + setup + 1);
            assert!(setup_timed_out(1_000, setup, at));
            assert!(!setup_timed_out(1_000, setup, at - 1));
        }
    }

    /// ClusterConnectionStates tracks one connection per node: a late
    /// disconnect notice for an earlier attempt does not close the attempt
    /// now under way.
    #[test]
    fn a_late_notice_for_an_earlier_attempt_leaves_the_current_attempt_alone() {
        let mut world = TestWorld::one_partition();
        let mut c = Connections::new(Node::Producer(0), 3, config()).none_yet();
        world.at(0, |ctx| c.ready(ctx, 1));
        let Some(State::Connecting { id }) = c.state(1) else {
            panic!("connecting");
        };
        assert_eq!(c.on_disconnected(0, 1, id + 1_000), None);
        assert_eq!(c.state(1), Some(State::Connecting { id }));
        assert_eq!(c.on_disconnected(0, 1, id), Some(Broken::Refused));
    }

    /// leastLoadedNode's destination test (`isReady` or `canConnect`, via
    /// ClusterConnectionStates): a connection is usable when it is ready or
    /// its reconnect backoff is over, never while a connect is under way or
    /// the backoff still runs.
    #[test]
    fn a_connection_is_usable_when_ready_or_its_backoff_is_over_never_while_connecting() {
        let mut world = TestWorld::one_partition();
        let mut c = Connections::new(Node::Producer(0), 3, config());
        assert!(c.usable(1, 0), "ready");
        c.close(1_000, 1);
        let Some(State::Disconnected { reconnect_at }) = c.state(1) else {
            panic!("closed");
        };
        assert!(reconnect_at > 1_000);
        assert!(!c.usable(1, reconnect_at - 1), "backing off");
        assert!(c.usable(1, reconnect_at), "backoff over");
        world.at(reconnect_at, |ctx| c.ready(ctx, 1));
        assert!(matches!(c.state(1), Some(State::Connecting { .. })));
        assert!(!c.usable(1, reconnect_at + 1), "connecting");
        assert!(c.usable(2, reconnect_at), "the others stay ready");
    }

    /// NetworkClient.handleDisconnections / ClusterConnectionStates
    /// .disconnected: a ready connection that breaks under a request is
    /// closed (the request fails as a disconnect, `Broken::InFlight`) and
    /// the next connect waits for the reconnect backoff.
    #[test]
    fn a_ready_connection_broken_under_a_request_is_marked_down_and_backs_off() {
        let mut c = Connections::new(Node::Producer(0), 3, config());
        assert_eq!(c.state(2), Some(State::Ready));
        assert_eq!(c.on_disconnected(5_000, 2, 7), Some(Broken::InFlight));
        let Some(State::Disconnected { reconnect_at }) = c.state(2) else {
            panic!("down after the break: {:?}", c.state(2));
        };
        assert!((5_040..=5_060).contains(&reconnect_at), "{reconnect_at}");
        assert_eq!(c.on_disconnected(5_001, 2, 7), None, "already down");
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
