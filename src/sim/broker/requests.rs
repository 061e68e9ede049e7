//! The leader's request handling: Produce and Fetch as ReplicaManager answers
//! them, and the purgatory where they wait (DelayedProduce for acks=all,
//! DelayedFetch for long polls) (KAFKA_REPLICATION.md §1–4, KIP-392).

use crate::sim::config::{Acks, ReplicaSelector};
use crate::sim::io::{Ctx, Timer};
use crate::sim::log::{Log, Record};
use crate::sim::partition::{Replica, Role};
use crate::sim::protocol::*;

use super::isr::propose_isr;
use super::{Broker, ParkedAnswer, ParkedFetch, ParkedProduce};
use crate::sim::shared::Spare;

/// Partition.isReplicaIsrEligible against this broker's metadata cache: `b`
/// is unfenced, not in controlled shutdown, and `fetched_with` — the broker
/// epoch its last fetch carried — is the epoch of its registration as the
/// metadata says (KIP-903). A follower that restarted and fetches with an
/// epoch this broker has not replayed yet is not eligible, nor is one whose
/// old fetch state still carries the previous incarnation's epoch.
pub(super) fn isr_eligible(
    ineligible: &[BrokerId],
    epochs: &[(BrokerId, u64)],
    b: BrokerId,
    fetched_with: u64,
) -> bool {
    !ineligible.contains(&b) && broker_epoch_of(epochs, b) == Some(fetched_with)
}

/// Broker `b`'s epoch in a metadata cache's list of registrations. Each
/// broker appears at most once in it (a registration replaces its broker's
/// entry), and brokers usually register in id order, so `b`'s entry is
/// looked for first at position `b - 1`: found there, it is the only entry
/// for `b` and so the one a search from the front would find; otherwise the
/// list is searched. On the 60-broker bench this turned a scan of ~30
/// entries per fetched partition into one comparison.
#[inline]
pub(super) fn broker_epoch_of(epochs: &[(BrokerId, u64)], b: BrokerId) -> Option<u64> {
    match epochs.get((b as usize).wrapping_sub(1)) {
        Some(&(id, e)) if id == b => Some(e),
        _ => epochs.iter().find(|e| e.0 == b).map(|e| e.1),
    }
}

impl Broker {
    pub(super) fn handle_produce(
        &mut self,
        ctx: &mut Ctx,
        from: Node,
        id: u64,
        acks: Acks,
        timeout_ms: u64,
        mut batches: Vec<ProduceBatch>,
    ) {
        let mut done = ctx.buffers.answers.take();
        let mut waiting = self.spares.0.waiting.take();
        for batch in batches.drain(..) {
            let p = batch.partition;
            let hint = self.leader_hint(p);
            let result = self.append_as_leader(ctx, p, acks, &batch.records);
            ctx.buffers.records.put(batch.records);
            match result {
                Err(e) => done.push(ProducePartitionResponse {
                    partition: p,
                    result: Err(e),
                    current_leader: hint,
                }),
                Ok((base, required)) => {
                    let hw = self.replicas.get(&p).map_or(0, |r| r.log.high_watermark);
                    if acks != Acks::All || hw >= required {
                        // min.insync.replicas only concerns acks=all.
                        let result = if acks == Acks::All {
                            self.ack_result(ctx, p, base)
                        } else {
                            Ok(base)
                        };
                        done.push(ProducePartitionResponse {
                            partition: p,
                            result,
                            current_leader: None,
                        });
                    } else {
                        waiting.push((p, required, base));
                    }
                }
            }
        }
        ctx.buffers.batches.put(batches);
        if waiting.is_empty() {
            // Answered at once: the buffer goes back for the next produce.
            self.spares.0.waiting.put(std::mem::take(&mut waiting));
        }
        if acks == Acks::None {
            // No response to acks=0; on any error the broker closes the
            // connection instead, which makes the client refresh its metadata
            // (KafkaApis.handleProduceRequest, NetworkClient).
            if done.iter().any(|r| r.result.is_err()) {
                let me = self.node();
                ctx.send(from, Message::Disconnected { id, to: me });
            }
            ctx.buffers.answers.put(done);
            return;
        }
        if waiting.is_empty() {
            ctx.send(
                from,
                Message::ProduceResponse {
                    id,
                    partitions: done,
                },
            );
            return;
        }
        let key = ctx.new_id();
        for (p, _, _) in &waiting {
            if let Some(s) = self.replicas.slot_of(*p) {
                self.produce_waiters.push(s, key);
            }
        }
        self.parked_produces.insert(
            key,
            ParkedProduce {
                from,
                id,
                waiting,
                done,
                answer: ParkedAnswer::Produce,
            },
        );
        ctx.after(timeout_ms, Timer::DelayedProduceExpire { id: key });
    }

    /// Partition.checkEnoughReplicasReachOffset once the HW covers the batch.
    pub(super) fn ack_result(
        &self,
        ctx: &Ctx,
        p: PartitionIndex,
        base: u64,
    ) -> Result<u64, ErrorCode> {
        let Some(r) = self.replicas.get(&p) else {
            return Err(ErrorCode::NotLeaderOrFollower);
        };
        let min_isr = r.effective_min_isr(ctx.partitions[p].config.min_insync_replicas);
        if r.maximal_isr_len() < min_isr {
            Err(ErrorCode::NotEnoughReplicasAfterAppend)
        } else {
            Ok(base)
        }
    }

    /// KRaftMetadataCache.getAliveBrokerEpoch: broker `b`'s epoch as this
    /// broker's metadata holds it, when `b` is registered and unfenced.
    pub(super) fn alive_broker_epoch(&self, b: BrokerId) -> Option<u64> {
        if self.meta_fenced.contains(&b) {
            return None;
        }
        broker_epoch_of(&self.meta_broker_epochs, b)
    }

    /// The current leader an error answer names (KIP-951): the leader this
    /// broker's metadata knows, if that is another broker. A produce is
    /// refused with NOT_LEADER_OR_FOLLOWER only by a broker that does not
    /// lead, and KafkaApis names the leader for that error alone, so a
    /// leader's own refusals (NOT_ENOUGH_REPLICAS …) carry no hint.
    pub(super) fn leader_hint(&self, p: PartitionIndex) -> Option<(BrokerId, u32)> {
        match self.meta_leaders.get(p) {
            Some((Some(l), e)) if *l != self.id => Some((*l, *e)),
            _ => None,
        }
    }

    /// Append a batch as leader. Returns (base offset, offset the HW must reach).
    pub(super) fn append_as_leader(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        acks: Acks,
        records: &[Record],
    ) -> Result<(u64, u64), ErrorCode> {
        let me = self.id;
        let Some(rep) = self.replicas.get_mut(&p) else {
            return Err(ErrorCode::NotLeaderOrFollower);
        };
        if !rep.is_leader() {
            return Err(ErrorCode::NotLeaderOrFollower);
        }
        let cfg = &ctx.partitions[p].config;
        if acks == Acks::All && rep.isr.len() < rep.effective_min_isr(cfg.min_insync_replicas) {
            return Err(ErrorCode::NotEnoughReplicas);
        }
        let Some(first) = records.first().copied() else {
            return Err(ErrorCode::InvalidRequest);
        };
        let count = records.len() as u64;
        if first.producer_id != 0 {
            let last_seq = first.seq + count as u32 - 1;
            if let Some(state) = rep.log.producer_state(first.producer_id) {
                let dup = state
                    .batches()
                    .find(|b| b.first_seq == first.seq && b.last_seq == last_seq)
                    .copied();
                if let Some(dup) = dup {
                    // A retry of a batch already in the log: answer with its
                    // offsets. Partition.appendRecordsToLeader still tries to
                    // advance the high watermark after it, as after any append.
                    let offsets = (dup.base_offset, dup.base_offset + count);
                    if self.advance_high_watermark_after_append(ctx, p) {
                        self.complete_parked_produces(ctx, p);
                    }
                    return Ok(offsets);
                }
                let expected = state.last_seq().map_or(0, |s| s.wrapping_add(1));
                if first.seq != expected {
                    return Err(ErrorCode::OutOfOrderSequenceNumber);
                }
            }
            // A producer this log holds no state for (a new leader that never
            // saw its batches, or state lost with a truncated tail) is
            // accepted at any sequence (ProducerAppendInfo.checkSequence: no
            // current producer epoch).
        }
        let base = rep.log.log_end_offset();
        let epoch = rep.leader_epoch;
        // The leader stamps its epoch on the batch (its partitionLeaderEpoch)
        // and writes it as the producer built it, batch boundary included.
        for r in records {
            rep.log.append(Record { epoch, ..*r });
        }
        let _ = me;
        // Written at the log end, above the HW: the invariant checker only
        // needs its light look (a HW this moves is touched below).
        if rep.log.high_watermark <= base {
            ctx.touch_grown(p);
        } else {
            ctx.touch(p);
        }
        let moved = self.advance_high_watermark_after_append(ctx, p);
        self.wake_fetches(ctx, p);
        if moved {
            self.complete_parked_produces(ctx, p);
        }
        Ok((base, base + count))
    }

    /// Partition.maybeIncrementLeaderHW after an append; true when it moved
    /// (the caller then completes the parked acks=all produces).
    fn advance_high_watermark_after_append(&mut self, ctx: &mut Ctx, p: PartitionIndex) -> bool {
        let (ineligible, epochs) = (&self.meta_ineligible, &self.meta_broker_epochs);
        let followers = &self.followers;
        let Some(rep) = self.replicas.get_mut(&p) else {
            return false;
        };
        let eligible_fn = |b: BrokerId, e: u64| isr_eligible(ineligible, epochs, b, e);
        let cfg = &ctx.partitions[p].config;
        let moved = rep.maybe_increment_high_watermark(
            followers,
            ctx.now,
            ctx.config.replica_lag_time_max_ms,
            cfg.min_insync_replicas,
            ctx.config.strict_min_isr,
            &eligible_fn,
        );
        if moved {
            ctx.touch(p);
        }
        moved
    }

    pub(super) fn complete_parked_produces(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        if self
            .replicas
            .slot_of(p)
            .is_none_or(|s| self.produce_waiters.is_empty(s))
        {
            // No produce parked on `p` (acks=1 and follower partitions).
            return;
        }
        // The produces still waiting on `p` are compacted to the front of
        // the same buffer, in order (no second vector per completion).
        let mut keys = self.take_produce_waiters(p);
        let hw = self.replicas.get(&p).map_or(0, |r| r.log.high_watermark);
        let mut kept = 0;
        for i in 0..keys.len() {
            let key = keys[i];
            let Some(mut parked) = self.parked_produces.remove(&key) else {
                continue;
            };
            // Its partitions still waiting, compacted in place too.
            let mut waits_on_p = false;
            let mut n = 0;
            for j in 0..parked.waiting.len() {
                let (wp, required, base) = parked.waiting[j];
                if wp == p && hw >= required {
                    // A stable OffsetFetch writes nothing: only the HW counts.
                    let result = match parked.answer {
                        ParkedAnswer::StableOffsetFetch { .. } => Ok(base),
                        _ => self.ack_result(ctx, p, base),
                    };
                    parked.done.push(ProducePartitionResponse {
                        partition: p,
                        result,
                        current_leader: None,
                    });
                } else {
                    waits_on_p |= wp == p;
                    parked.waiting[n] = parked.waiting[j];
                    n += 1;
                }
            }
            parked.waiting.truncate(n);
            if waits_on_p && (kept == 0 || keys[kept - 1] != key) {
                keys[kept] = key;
                kept += 1;
            }
            self.answer_or_repark(ctx, key, parked);
        }
        keys.truncate(kept);
        if let Some(s) = self.replicas.slot_of(p) {
            // Produces parked on `p` while these completed (the coordinator's
            // own appends) are kept only when none of these still waits.
            if !keys.is_empty() {
                self.produce_waiters.set(s, &keys);
            }
        }
        self.spares.0.keys.put(keys);
    }

    pub(super) fn fail_parked_produces(
        &mut self,
        ctx: &mut Ctx,
        p: PartitionIndex,
        error: ErrorCode,
    ) {
        let keys = self.take_produce_waiters(p);
        let hint = self.leader_hint(p);
        for key in keys {
            let Some(mut parked) = self.parked_produces.remove(&key) else {
                continue;
            };
            let (failed, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut parked.waiting)
                .into_iter()
                .partition(|w| w.0 == p);
            for _ in failed {
                parked.done.push(ProducePartitionResponse {
                    partition: p,
                    result: Err(error),
                    current_leader: hint,
                });
            }
            parked.waiting = rest;
            self.answer_or_repark(ctx, key, parked);
        }
    }

    /// A parked produce is answered once none of its partitions still waits
    /// for the high watermark; otherwise it goes back into the purgatory.
    fn answer_or_repark(&mut self, ctx: &mut Ctx, key: u64, mut parked: ParkedProduce) {
        if parked.waiting.is_empty() {
            let waiting = std::mem::take(&mut parked.waiting);
            self.spares.0.waiting.put(waiting);
            self.answer_parked(ctx, parked);
        } else {
            self.parked_produces.insert(key, parked);
        }
    }

    /// Send a parked request's answer: a ProduceResponse, for the
    /// coordinator's own append the OffsetCommitResponse, for a stable
    /// OffsetFetch the OffsetFetchResponse.
    pub(super) fn answer_parked(&mut self, ctx: &mut Ctx, parked: ParkedProduce) {
        let failed = parked.done.iter().find_map(|r| r.result.err());
        match parked.answer {
            ParkedAnswer::Commit(pending) => {
                let result = failed.map_or(Ok(()), Err);
                self.finish_commit(ctx, parked.from, parked.id, &pending, result);
            }
            ParkedAnswer::StableOffsetFetch { group, partitions } => self
                .finish_stable_offset_fetch(
                    ctx,
                    parked.from,
                    parked.id,
                    &group,
                    &partitions,
                    failed,
                ),
            ParkedAnswer::Produce => ctx.send(
                parked.from,
                Message::ProduceResponse {
                    id: parked.id,
                    partitions: parked.done,
                },
            ),
        }
    }

    // ---------------------------------------------------------------- leader: fetch

    pub(super) fn handle_fetch(
        &mut self,
        ctx: &mut Ctx,
        mut parked: ParkedFetch,
        max_wait_ms: u64,
    ) {
        let has_data = self.fetch_would_return(ctx, &parked, true);
        if has_data || max_wait_ms == 0 {
            self.answer_fetch(ctx, parked, false);
            return;
        }
        // Long poll (replica.fetch.wait.max.ms / fetch.max.wait.ms): park until
        // something is appended, or the wait expires. Followers' positions are
        // recorded now, as Kafka does on the first read.
        if let Some(replica) = parked.replica {
            for fp in &parked.partitions {
                self.record_follower_position(ctx, replica, parked.broker_epoch, fp);
            }
            parked.positions_recorded = true;
        }
        let key = ctx.new_id();
        super::wait_on(&mut self.fetch_waiters, &self.replicas, key, &parked);
        let parked = self.spares.0.parked.boxed(parked);
        self.parked_fetches.insert(key, parked);
        ctx.after(max_wait_ms, Timer::DelayedFetchExpire { id: key });
    }

    /// Whether an answer is due: data, an error, or a divergence; on
    /// `arrival` also a preferred read replica to name (see
    /// [`Broker::partition_would_return`]).
    pub(super) fn fetch_would_return(
        &self,
        ctx: &Ctx,
        parked: &ParkedFetch,
        arrival: bool,
    ) -> bool {
        parked
            .partitions
            .iter()
            .any(|fp| self.partition_would_return(ctx, parked, fp, arrival))
    }

    /// [`Broker::fetch_would_return`] for one partition of the fetch.
    /// `arrival` is ReplicaManager.fetchMessages deciding whether to answer
    /// a fetch at once; otherwise it is DelayedFetch.tryComplete asking
    /// whether a parked one can complete (its cases A–H).
    fn partition_would_return(
        &self,
        ctx: &Ctx,
        parked: &ParkedFetch,
        fp: &FetchPartition,
        arrival: bool,
    ) -> bool {
        {
            let Some(r) = self.replicas.get(&fp.partition) else {
                return true;
            };
            if parked.replica.is_none() && serves_consumer_as_follower(r, fp) {
                // Records below this follower's own HW, or an offset past its
                // log: answer now. Otherwise wait for its HW to move.
                return fp.fetch_offset < r.log.high_watermark
                    || fp.fetch_offset > r.log.log_end_offset();
            }
            if !r.is_leader() || fp.current_leader_epoch != r.leader_epoch {
                return true;
            }
            if arrival
                && parked.replica.is_none()
                && self
                    .preferred_read_replica(ctx, r, fp.fetch_offset, &parked.rack_id)
                    .is_some()
            {
                // A redirect is answered at once (ReplicaManager does not
                // delay a fetch that names a preferred read replica). A fetch
                // already parked is not: DelayedFetch.tryComplete has no such
                // case, so one parked before a follower of the consumer's
                // rack (re)joined the ISR waits for records below the HW or
                // its fetch.max.wait.ms, and names the replica then.
                return true;
            }
            let end = if parked.replica.is_some() {
                r.log.log_end_offset()
            } else {
                r.log.high_watermark
            };
            if fp.fetch_offset != end {
                return true;
            }
            if let Some(lfe) = fp.last_fetched_epoch {
                match r.log.end_offset_for(lfe) {
                    None => return true,
                    Some((e, o)) if e < lfe || o < fp.fetch_offset => return true,
                    _ => {}
                }
            }
            false
        }
    }

    /// Something changed on partition `p` (its log end, its HW, its leader):
    /// complete the fetches parked on it that now have an answer, as
    /// DelayedFetch.tryComplete does — a follower's fetch reads to the log
    /// end, so only new records (or an error, a new epoch, a divergence)
    /// complete it, not a HW that moved; a consumer's fetch reads to the HW.
    pub(super) fn wake_fetches(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        let Some(slot) = self.replicas.slot_of(p) else {
            return;
        };
        if self.fetch_waiters.is_empty(slot) {
            // Nothing parked on `p` (a follower's partitions, mostly).
            return;
        }
        // A copy of the list to walk; a fetch that returns is taken off it
        // (and off its other partitions' lists) by `unpark_fetch`, so those
        // still waiting keep their order, and any parked meanwhile follow.
        let mut keys = self.spares.0.keys.take();
        self.fetch_waiters.read(slot, &mut keys);
        for &key in &keys {
            let Some(parked) = self.parked_fetches.get(&key) else {
                continue;
            };
            // Whether the fetch would return is a pure "any partition": ask
            // the partition that changed first, it is the likely one.
            let woken = parked
                .partitions
                .iter()
                .find(|fp| fp.partition == p)
                .is_some_and(|fp| self.partition_would_return(ctx, parked, fp, false));
            if woken || self.fetch_would_return(ctx, parked, false) {
                if let Some(parked) = self.unpark_fetch(key) {
                    self.answer_fetch(ctx, parked, false);
                }
            }
        }
        self.spares.0.keys.put(keys);
    }

    /// Take parked fetch `key` out of the purgatory, and off the waiting
    /// list of each of its partitions (answered through one of them, it
    /// would otherwise stay on the others' until a wake skipped it: 2.3 MB
    /// of such ids at 30 s on the large bench), keeping its box for the next
    /// fetch that parks.
    pub(super) fn unpark_fetch(&mut self, key: u64) -> Option<ParkedFetch> {
        let parked = self.parked_fetches.remove(&key)?;
        for fp in &parked.partitions {
            if let Some(s) = self.replicas.slot_of(fp.partition) {
                self.fetch_waiters.remove(s, key);
            }
        }
        Some(self.spares.0.parked.unbox(parked, ParkedFetch::EMPTY))
    }

    /// Partition.updateFollowerFetchState for a fetch the leader accepted:
    /// the callers have checked its leader epoch, its offset and its last
    /// fetched epoch (read_partition answers any failure with an error or a
    /// divergence and records nothing; handle_fetch parks only a fetch that
    /// would not return, which passed the same checks).
    pub(super) fn record_follower_position(
        &mut self,
        ctx: &mut Ctx,
        replica: BrokerId,
        broker_epoch: u64,
        fp: &FetchPartition,
    ) {
        let p = fp.partition;
        let me = self.id;
        let my_epoch = self.broker_epoch;
        // Disjoint field borrows: no copy of the metadata cache per partition.
        let (ineligible, epochs) = (&self.meta_ineligible, &self.meta_broker_epochs);
        let eligible = |b: BrokerId, e: u64| isr_eligible(ineligible, epochs, b, e);
        // The replica is read, not written: its followers' states are in
        // the broker's table, so a snapshot keeps sharing it.
        let Some(rep) = self.replicas.get(&p) else {
            return;
        };
        debug_assert!(rep.is_leader() && fp.current_leader_epoch == rep.leader_epoch);
        let table = &mut self.followers;
        let moved =
            rep.record_follower_fetch(table, replica, fp.fetch_offset, broker_epoch, ctx.now);
        // ISR expansion (Partition.maybeExpandIsr): this follower only.
        if rep.pending_isr.is_none() && rep.should_join_isr(table, replica, &eligible) {
            let mut new_isr = rep.isr.to_vec();
            new_isr.push(replica);
            if let Some(rep) = self.replicas.get_mut(&p) {
                propose_isr(ctx, me, my_epoch, &self.followers, rep, &new_isr);
            }
        }
        if moved {
            // What the leader knows of a follower is not something the
            // invariants read; a HW this moves is touched below.
            self.after_leader_state_change(ctx, p);
        }
    }

    /// Try to advance the HW; complete produce requests and consumer fetches it unblocks.
    pub(super) fn after_leader_state_change(&mut self, ctx: &mut Ctx, p: PartitionIndex) {
        let (ineligible, epochs) = (&self.meta_ineligible, &self.meta_broker_epochs);
        let eligible = |b: BrokerId, e: u64| isr_eligible(ineligible, epochs, b, e);
        // Asked of the shared replica first: one whose HW stays put is not
        // copied away from a snapshot.
        let Some(slot) = self.replicas.slot_of(p) else {
            return;
        };
        let next = self.replicas.at(slot).and_then(|rep| {
            rep.next_high_watermark(
                &self.followers,
                ctx.now,
                ctx.config.replica_lag_time_max_ms,
                ctx.partitions[p].config.min_insync_replicas,
                ctx.config.strict_min_isr,
                &eligible,
            )
        });
        if let Some(hw) = next {
            if let Some(rep) = self.replicas.at_mut(slot) {
                rep.log.high_watermark = hw;
            }
            ctx.touch(p);
            self.complete_parked_produces(ctx, p);
            self.wake_fetches(ctx, p);
        }
    }

    pub(super) fn answer_fetch(&mut self, ctx: &mut Ctx, parked: ParkedFetch, expired: bool) {
        let _ = expired;
        let mut out = self.spares.0.responses.take();
        out.reserve(parked.partitions.len());
        // Whether the fetch comes from an older incarnation of its follower
        // depends on the fetch alone, not on the partition: asked once per
        // fetch rather than once per partition (reading a partition changes
        // no metadata, so every partition would get the same answer).
        let zombie = self.zombie_fetch(parked.replica, parked.broker_epoch);
        for fp in &parked.partitions {
            out.push(self.read_partition(
                ctx,
                parked.replica.filter(|_| !parked.positions_recorded),
                parked.replica,
                parked.broker_epoch,
                zombie,
                &parked.rack_id,
                fp,
            ));
        }
        ctx.send(
            parked.from,
            Message::FetchResponse {
                id: parked.id,
                partitions: out,
            },
        );
        self.spares.0.fetch_parts.put(parked.partitions);
    }

    /// Replica.updateFetchStateOrThrow's zombie test (kafka-server 4.4.0): a
    /// follower's fetch carrying an older broker epoch than the leader's
    /// metadata holds for that follower, registered and unfenced
    /// (KRaftMetadataCache.getAliveBrokerEpoch), comes from an older
    /// incarnation. What the leader last heard from the follower does not
    /// decide.
    fn zombie_fetch(&self, replica: Option<BrokerId>, broker_epoch: u64) -> bool {
        replica.is_some_and(|b| {
            broker_epoch > 0 && self.alive_broker_epoch(b).is_some_and(|e| e > broker_epoch)
        })
    }

    /// Leader-side processing of one partition of a Fetch (§1 steps 1–4).
    /// `zombie` is [`Broker::zombie_fetch`] of the fetch.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_partition(
        &mut self,
        ctx: &mut Ctx,
        record_for: Option<BrokerId>,
        replica: Option<BrokerId>,
        broker_epoch: u64,
        zombie: bool,
        rack_id: &str,
        fp: &FetchPartition,
    ) -> FetchPartitionResponse {
        let p = fp.partition;
        let mut resp = FetchPartitionResponse {
            partition: p,
            error: None,
            high_watermark: 0,
            log_end_offset: 0,
            diverging_epoch: None,
            current_leader: None,
            records: Vec::new(),
            base_offset: fp.fetch_offset,
            preferred_read_replica: None,
            chunk: None,
        };
        let error = match self.replicas.get(&p) {
            None => Some(ErrorCode::NotLeaderOrFollower),
            Some(r) if replica.is_none() && serves_consumer_as_follower(r, fp) => None,
            Some(r) if !r.is_leader() => Some(ErrorCode::NotLeaderOrFollower),
            Some(r) if fp.current_leader_epoch < r.leader_epoch => {
                Some(ErrorCode::FencedLeaderEpoch)
            }
            Some(r) if fp.current_leader_epoch > r.leader_epoch => {
                Some(ErrorCode::UnknownLeaderEpoch)
            }
            // Partition.updateFollowerFetchState: a follower the leader does
            // not know as a replica (one a reassignment is adding, that the
            // leader has not heard of yet) gets UNKNOWN_LEADER_EPOCH when its
            // fetch names a leader epoch, as ours always do: it retries
            // without refreshing its metadata.
            Some(r) if replica.is_some_and(|b| !r.replicas.contains(&b)) => {
                Some(ErrorCode::UnknownLeaderEpoch)
            }
            // Replica.updateFetchStateOrThrow (kafka-server 4.4.0): a fetch
            // carrying an older broker epoch than the leader's metadata holds
            // for the follower, registered and unfenced
            // (KRaftMetadataCache.getAliveBrokerEpoch), comes from an older
            // incarnation (a zombie): it is refused with NOT_LEADER_OR_FOLLOWER
            // and leaves the follower's state alone. What the leader last
            // heard from the follower does not decide.
            Some(_) if zombie => Some(ErrorCode::NotLeaderOrFollower),
            _ => None,
        };
        if let Some(e) = error {
            resp.error = Some(e);
            resp.current_leader = self.leader_hint(p).or_else(|| {
                self.replicas
                    .get(&p)
                    .filter(|r| r.is_leader())
                    .map(|r| (self.id, r.leader_epoch))
            });
            return resp;
        }
        let Some(r) = self.replicas.get(&p) else {
            return resp;
        };
        if !r.is_leader() {
            // KIP-392: a follower serves a consumer from its own log, below
            // its own high watermark, which trails the leader's until its
            // next fetch response.
            let (hw, leo) = (r.log.high_watermark, r.log.log_end_offset());
            resp.high_watermark = hw;
            resp.log_end_offset = leo;
            if fp.fetch_offset > leo {
                resp.error = Some(ErrorCode::OffsetOutOfRange);
            } else if fp.fetch_offset < hw {
                resp.records =
                    read_records(&mut self.spares.0.records, &r.log, fp.fetch_offset, hw);
            }
            return resp;
        }
        // Snapshot before the read: the follower learns a HW this fetch moves
        // from its next fetch response.
        resp.high_watermark = r.log.high_watermark;
        resp.log_end_offset = r.log.log_end_offset();
        resp.current_leader = Some((self.id, r.leader_epoch));
        let Some(follower) = replica else {
            if let Some(b) = self.preferred_read_replica(ctx, r, fp.fetch_offset, rack_id) {
                // KIP-392: no records, only where to read from.
                resp.preferred_read_replica = Some(b);
                return resp;
            }
            // A consumer reads only below the HW (read_uncommitted).
            let hw = r.log.high_watermark;
            if fp.fetch_offset > r.log.log_end_offset() {
                resp.error = Some(ErrorCode::OffsetOutOfRange);
            } else if fp.fetch_offset < hw {
                resp.records =
                    read_records(&mut self.spares.0.records, &r.log, fp.fetch_offset, hw);
            }
            return resp;
        };
        if let Some(lfe) = fp.last_fetched_epoch {
            match r.log.end_offset_for(lfe) {
                None => {
                    resp.error = Some(ErrorCode::OffsetOutOfRange);
                    return resp;
                }
                Some((e, o)) if e < lfe || o < fp.fetch_offset => {
                    resp.diverging_epoch = Some((e, o));
                    return resp;
                }
                _ => {}
            }
        }
        if fp.fetch_offset > r.log.log_end_offset() {
            resp.error = Some(ErrorCode::OffsetOutOfRange);
            return resp;
        }
        let leo = r.log.log_end_offset();
        resp.records = read_records(&mut self.spares.0.records, &r.log, fp.fetch_offset, leo);
        if !resp.records.is_empty() {
            resp.chunk = r.log.chunk_starting_in(fp.fetch_offset, leo);
        }
        if record_for == Some(follower) {
            self.record_follower_position(ctx, follower, broker_epoch, fp);
        }
        resp
    }

    /// KIP-392 on the leader: the replica a consumer in rack `rack_id` should
    /// read from, when it is not the leader itself (ReplicaManager's
    /// findPreferredReadReplica with the rack-aware selector). Candidates are
    /// followers in the ISR, not fenced, whose log reaches the fetch offset and
    /// whose `broker.rack` is the consumer's `client.rack`; the most caught-up
    /// one wins (highest LEO, then most recently caught up, then lowest id).
    /// `None` without a selector, without a client rack, or when the leader is
    /// itself in that rack or no follower there qualifies.
    pub(super) fn preferred_read_replica(
        &self,
        ctx: &Ctx,
        r: &Replica,
        fetch_offset: u64,
        rack_id: &str,
    ) -> Option<BrokerId> {
        if ctx.config.replica_selector != Some(ReplicaSelector::RackAware) || rack_id.is_empty() {
            return None;
        }
        if !r.is_leader() || ctx.rack_of(self.id) == Some(rack_id) {
            return None;
        }
        r.followers(&self.followers)
            .iter()
            .filter(|f| r.isr.contains(&f.broker) && !self.meta_ineligible.contains(&f.broker))
            .filter(|f| {
                f.log_end_offset
                    .get()
                    .is_some_and(|leo| leo >= fetch_offset)
            })
            .filter(|f| ctx.rack_of(f.broker) == Some(rack_id))
            .max_by(|a, b| {
                a.log_end_offset
                    .cmp(&b.log_end_offset)
                    .then(a.last_caught_up_ms.cmp(&b.last_caught_up_ms))
                    .then(b.broker.cmp(&a.broker))
            })
            .map(|f| f.broker)
    }
}

/// The records of `log` at offsets `from..to`, in an emptied buffer from
/// `spares` when there are any (the follower gives the buffer back once it
/// has appended them).
#[inline]
fn read_records(spares: &mut Spare<Record>, log: &Log, from: u64, to: u64) -> Vec<Record> {
    if from >= to.min(log.log_end_offset()) {
        return Vec::new();
    }
    copy_records(spares, log, from, to)
}

#[inline(never)]
fn copy_records(spares: &mut Spare<Record>, log: &Log, from: u64, to: u64) -> Vec<Record> {
    let mut out = spares.take();
    log.copy_records_between(from, to, &mut out);
    out
}

/// Whether this replica, as a follower, serves a consumer's fetch itself
/// (KIP-392). Since Fetch v11 a consumer's fetch carries client metadata, and
/// a follower answers it from its own log whatever `replica.selector.class`
/// says: the selector only decides, on the leader, where to send consumers.
/// The epochs must match; a consumer with another epoch gets the lab's usual
/// NOT_LEADER_OR_FOLLOWER and refreshes its metadata.
fn serves_consumer_as_follower(r: &Replica, fp: &FetchPartition) -> bool {
    r.role == Role::Follower && fp.current_leader_epoch == r.leader_epoch
}
