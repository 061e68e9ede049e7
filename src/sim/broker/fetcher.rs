//! The replica fetcher: one long-polling Fetch per leader broker, carrying
//! `CurrentLeaderEpoch` and `LastFetchedEpoch`, appending what comes back and
//! truncating on a `DivergingEpoch` answer (AbstractFetcherThread,
//! KAFKA_REPLICATION.md §1, §7).

use std::rc::Rc;

use crate::sim::config::TruncationMode;
use crate::sim::io::{Ctx, Timer};
use crate::sim::partition::Role;
use crate::sim::pmap::VecMap;
use crate::sim::protocol::*;

use super::{trace_truncation, Broker, REPLICA_SOCKET_TIMEOUT_MS};
use crate::sim::client::connection::{Connections, State};
use crate::sim::config::ConnectionConfig;

/// The replica fetcher's NetworkClient (ReplicaFetcherBlockingSend): no
/// reconnect backoff, the broker's `socket.connection.setup.timeout.ms`
/// (10 s) and `.max.ms` (30 s) defaults.
const FETCH_CONNECTION: ConnectionConfig = ConnectionConfig {
    reconnect_backoff_ms: 0,
    reconnect_backoff_max_ms: 0,
    setup_timeout_ms: 10_000,
    setup_timeout_max_ms: 30_000,
};

impl Broker {
    /// The fetch to `leader` got no answer within `replica.socket.timeout.ms`:
    /// NetworkClient closes the connection it went on (the next fetch
    /// connects again), and the fetcher backs off.
    pub(super) fn fetch_timed_out(&mut self, ctx: &mut Ctx, leader: BrokerId, id: u64) {
        if self
            .fetch_in_flight
            .get(&(leader as usize))
            .is_some_and(|f| f.0 == id)
        {
            let me = self.id;
            let conns = self.fetch_connections.get_or_insert_with(|| {
                Box::new(Connections::new(Node::Broker(me), 0, FETCH_CONNECTION))
            });
            conns.ensure(leader);
            conns.close(ctx.now, leader);
        }
        self.fetch_failed(ctx, leader, id);
    }

    /// `leader` refused request or connect attempt `id` (its process is
    /// down). A refused connect fails the fetch it was for at once
    /// (NetworkClientUtils.awaitReady): back off, as for a failed fetch.
    pub(super) fn fetch_disconnected(&mut self, ctx: &mut Ctx, leader: BrokerId, id: u64) {
        let connecting = self
            .fetch_connections
            .as_deref()
            .is_some_and(|c| c.state(leader) == Some(State::Connecting { id }));
        if connecting {
            if let Some(c) = self.fetch_connections.as_deref_mut() {
                c.on_disconnected(ctx.now, leader, id);
            }
            self.back_off_leader(ctx, leader);
            return;
        }
        self.fetch_failed(ctx, leader, id);
    }

    /// The fetch to `leader` timed out or its connection broke: back off.
    pub(super) fn fetch_failed(&mut self, ctx: &mut Ctx, leader: BrokerId, id: u64) {
        if self
            .fetch_in_flight
            .get(&(leader as usize))
            .is_some_and(|f| f.0 == id)
        {
            self.fetch_in_flight.remove(&(leader as usize));
            self.fetch_idle.push(leader);
            self.back_off_leader(ctx, leader);
            self.send_fetches(ctx);
        }
    }

    pub(super) fn back_off_leader(&mut self, ctx: &mut Ctx, leader: BrokerId) {
        let until = ctx.now + ctx.config.replica_fetch_backoff_ms;
        // A partition fenced by its leader stays out of the fetcher until
        // new metadata for it arrives.
        self.replicas.change_where(
            |r| {
                r.role == Role::Follower
                    && r.leader == Some(leader)
                    && r.fetch_backoff_until != until
                    && r.fetch_backoff_until != u64::MAX
            },
            |r| r.fetch_backoff_until = until,
        );
        ctx.after(ctx.config.replica_fetch_backoff_ms, Timer::FetchRetry);
    }

    /// One Fetch per leader broker, for every partition followed from it.
    pub(super) fn send_fetches(&mut self, ctx: &mut Ctx) {
        if !self.is_running() || !self.registered {
            return;
        }
        if self.followed_stale {
            self.followed_stale = false;
            let mut followed: VecMap<BrokerId, Vec<PartitionIndex>> = VecMap::new();
            for r in self.replicas.values() {
                match r.leader {
                    // A follower's leader is another broker (apply_partition
                    // makes a replica it leads a leader).
                    Some(leader) if r.role == Role::Follower => {
                        followed.or_default(leader).push(r.partition)
                    }
                    _ => {}
                }
            }
            self.followed = Rc::new(followed);
            self.fetch_all = true;
        }
        // Only leaders with no fetch in flight get one, and those are the
        // ones in `fetch_idle` (unless `fetch_all`): looking at them alone,
        // in id order (the map's), sends exactly what a walk over every
        // followed leader would, without walking 59 leaders per answer on
        // the 60-broker bench.
        let spare = std::mem::take(&mut self.spares.0.leaders);
        let mut idle = std::mem::replace(&mut self.fetch_idle, spare);
        if std::mem::take(&mut self.fetch_all) {
            idle.clear();
            idle.extend(self.followed.iter().map(|(&leader, _)| leader));
        } else {
            idle.sort_unstable();
            idle.dedup();
        }
        // Sent leader by leader in the map's order, as soon as each request is
        // built (the same order of ids, messages and timers as building them
        // all first, without a vector of requests per call).
        for &leader in &idle {
            let Some(parts) = self.followed.get(&leader) else {
                continue;
            };
            if self.fetch_in_flight.contains_key(&(leader as usize)) {
                continue;
            }
            let mut partitions = self.spares.0.fetch_parts.take();
            partitions.reserve(parts.len());
            for p in parts {
                let Some(r) = self.replicas.get(p) else {
                    continue;
                };
                if r.fetch_backoff_until > ctx.now || self.slow_partitions.contains(p) {
                    continue;
                }
                let last_fetched_epoch = match ctx.config.truncation {
                    TruncationMode::LeaderEpoch => r.log.last_record_epoch(),
                    TruncationMode::HighWatermark => None,
                };
                partitions.push(FetchPartition {
                    partition: r.partition,
                    fetch_offset: r.log.log_end_offset(),
                    current_leader_epoch: r.leader_epoch,
                    last_fetched_epoch,
                });
            }
            // A connection closed after a timeout is opened again first.
            let up = self.fetch_connections.as_deref_mut().is_none_or(|c| {
                c.ensure(leader);
                c.ready(ctx, leader)
            });
            if partitions.is_empty() || !up {
                self.spares.0.fetch_parts.put(partitions);
                // Still idle: looked at again next time.
                self.fetch_idle.push(leader);
                continue;
            }
            let id = ctx.new_id();
            let mut sent = self.spares.0.sent.take();
            sent.extend(
                partitions
                    .iter()
                    .map(|fp| (fp.partition, fp.current_leader_epoch)),
            );
            self.fetch_in_flight.insert(leader as usize, (id, sent));
            ctx.send(
                Node::Broker(leader),
                Message::Fetch {
                    id,
                    replica: Some(self.id),
                    broker_epoch: self.broker_epoch,
                    max_wait_ms: ctx.config.replica_fetch_wait_max_ms,
                    partitions,
                    rack_id: String::new(),
                },
            );
            ctx.after(
                REPLICA_SOCKET_TIMEOUT_MS,
                Timer::FetchTimeout { leader, id },
            );
        }
        idle.clear();
        self.spares.0.leaders = idle;
    }

    pub(super) fn handle_fetch_response(
        &mut self,
        ctx: &mut Ctx,
        leader: BrokerId,
        id: u64,
        mut partitions: Vec<FetchPartitionResponse>,
    ) {
        match self.fetch_in_flight.get(&(leader as usize)) {
            Some((want, _)) if *want == id => {}
            _ => return,
        }
        let Some((_, sent)) = self.fetch_in_flight.remove(&(leader as usize)) else {
            return;
        };
        self.fetch_idle.push(leader);
        let mut retry_later = false;
        // Partitions whose log or HW changed: consumers parked here may now
        // have something to read (KIP-392 follower fetching).
        let mut changed = std::mem::take(&mut self.spares.0.changed);
        changed.clear();
        // The leader answers the partitions in the order they were asked
        // for: look first just after the last one found (a search of the
        // whole request per partition cost 361 M instructions a simulated
        // second after the rack loss on the 20,000-partition bench).
        let mut next = 0;
        for mut resp in partitions.drain(..) {
            let p = resp.partition;
            let found = match sent.get(next) {
                Some(s) if s.0 == p => Some(next),
                _ => sent.iter().position(|s| s.0 == p),
            };
            let Some(i) = found else {
                continue;
            };
            next = i + 1;
            let sent_epoch = sent[i].1;
            let me = self.id;
            let Some(slot) = self.replicas.slot_of(p) else {
                continue;
            };
            let Some(rep) = self.replicas.at(slot) else {
                continue;
            };
            if rep.role != Role::Follower
                || rep.leader != Some(leader)
                || rep.leader_epoch != sent_epoch
            {
                continue;
            }
            // Read before writing. An answer without an error or a divergence
            // is used only at this replica's log end; there, one with no
            // records, after this epoch's first append, and with the HW the
            // replica already has changes nothing, and leaves the replica
            // shared with any snapshot rather than copied (issue 27: 41% of
            // the follower copies a snapshot of the large bench held a second
            // later).
            if resp.error.is_none() && resp.diverging_epoch.is_none() {
                let leo = rep.log.log_end_offset();
                if resp.base_offset != leo {
                    continue;
                }
                if resp.records.is_empty()
                    && rep.reconciled
                    && resp.high_watermark.min(leo) == rep.log.high_watermark
                {
                    self.spares.0.records.put(resp.records);
                    changed.push(p);
                    continue;
                }
            }
            let Some(rep) = self.replicas.at_mut(slot) else {
                continue;
            };
            match resp.error {
                None => {}
                Some(ErrorCode::OffsetOutOfRange) => {
                    let leo = rep.log.log_end_offset();
                    if resp.log_end_offset < leo {
                        changed.push(p);
                        let removed = rep.log.truncate_to(resp.log_end_offset);
                        let to = resp.log_end_offset;
                        trace_truncation(
                            ctx,
                            me,
                            p,
                            leo,
                            to,
                            &removed,
                            format!("OFFSET_OUT_OF_RANGE: the leader's log ends at {to}, before this replica's"),
                        );
                    } else {
                        rep.fetch_backoff_until = ctx.now + ctx.config.replica_fetch_backoff_ms;
                        retry_later = true;
                    }
                    continue;
                }
                Some(ErrorCode::FencedLeaderEpoch) => {
                    // AbstractFetcherThread.onPartitionFenced: the leader is in
                    // a newer epoch than the one this fetch carried, which is
                    // this replica's own; the partition is marked failed and
                    // is fetched again only once new metadata for it arrives
                    // (make_follower clears the mark).
                    rep.fetch_backoff_until = u64::MAX;
                    continue;
                }
                Some(_) => {
                    rep.fetch_backoff_until = ctx.now + ctx.config.replica_fetch_backoff_ms;
                    retry_later = true;
                    continue;
                }
            }
            if let Some((epoch, end)) = resp.diverging_epoch {
                let t = rep.truncation_point(epoch, end);
                let from = rep.log.log_end_offset();
                let removed = rep.log.truncate_to(t.to);
                ctx.touch(p);
                changed.push(p);
                if !removed.is_empty() {
                    trace_truncation(
                        ctx,
                        me,
                        p,
                        from,
                        t.to,
                        &removed,
                        format!(
                            "the leader says epoch {epoch} ends at offset {end} (DivergingEpoch); this replica's own records from {} on were written in a diverging history",
                            t.to
                        ),
                    );
                }
                continue;
            }
            // At this replica's log end (checked above), and something moved:
            // records, the first append of this epoch, or the HW.
            let (old_leo, old_hw) = (rep.log.log_end_offset(), rep.log.high_watermark);
            for r in resp.records.drain(..) {
                rep.log.append_from(r, resp.chunk.as_ref());
            }
            self.spares.0.records.put(resp.records);
            let leo = rep.log.log_end_offset();
            let hw = resp.high_watermark.min(leo);
            // Records written at the log end of a reconciled replica whose HW
            // stays at or below where the log ended: the invariant checker's
            // light look (`Ctx::touch_grown`); a HW or reconciliation that
            // moves is a change like any other.
            if rep.reconciled && hw == old_hw && old_hw <= old_leo {
                ctx.touch_grown(p);
            } else {
                ctx.touch(p);
            }
            rep.reconciled = true;
            rep.log.high_watermark = hw;
            changed.push(p);
        }
        self.spares.0.responses.put(partitions);
        self.spares.0.sent.put(sent);
        for &p in &changed {
            self.wake_fetches(ctx, p);
        }
        self.spares.0.changed = changed;
        if retry_later {
            ctx.after(ctx.config.replica_fetch_backoff_ms, Timer::FetchRetry);
        }
        self.send_fetches(ctx);
    }
}
