//! Rules that mutation testing (`make mutants`, the book's "Mutation testing", docs/book/src/fidelity/mutation-testing.md)
//! found unguarded: each test below is the one that fails when the rule it
//! names is broken in the code. Each states the Kafka rule in its name and
//! cites where the rule comes from (KAFKA_REPLICATION.md, or Kafka's source).
//! The worlds come from the conformance harness (a controller, or one real
//! broker, driven message by message).

#[path = "conformance/harness.rs"]
#[allow(dead_code)]
mod harness;

use failover_lab::sim::broker::Broker;
use failover_lab::sim::controller::ElectionKind;
use failover_lab::sim::io::{Ctx, Timer};
use failover_lab::sim::log::{Log, Record};
use failover_lab::sim::partition_change::{self, ChangeRequest, Elected, Election};
use failover_lab::sim::protocol::{
    BrokerId, BrokerState, ErrorCode, FetchPartition, FetchPartitionResponse, LeaderRecoveryState,
    Message, MetadataRecord, Node, PartitionRegistration,
};
use harness::{default_epoch, registration, BrokerWorld, World};

/// Run `f` on the broker of `w` with a context around `w`'s state; return
/// what it sent.
fn on_broker(w: &mut BrokerWorld, f: impl FnOnce(&mut Broker, &mut Ctx)) -> Vec<(Node, Message)> {
    let mut dirty = Vec::new();
    let racks: Vec<String> = Vec::new();
    let mut ctx = Ctx {
        now: w.now,
        config: &w.config,
        racks: &racks,
        partitions: &w.partitions,
        metadata: &w.metadata,
        trace: &mut w.trace,
        next_id: &mut w.next_id,
        sends: Vec::new(),
        timers: Vec::new(),
        dirty: &mut dirty,
        grown: &mut Vec::new(),
        commit_values: &mut Default::default(),
        buffers: &mut Default::default(),
        meta_pages: &mut Default::default(),
    };
    f(&mut w.broker, &mut ctx);
    ctx.sends
}

/// Deliver `msg` to the broker of `w`; return the partitions it marked for
/// the invariant checker's full look (`Ctx::dirty`) and for its light one
/// (`Ctx::grown`), and what it sent.
#[allow(clippy::type_complexity)]
fn touched_by(
    w: &mut BrokerWorld,
    from: Node,
    msg: Message,
) -> (Vec<usize>, Vec<usize>, Vec<(Node, Message)>) {
    let mut dirty = Vec::new();
    let mut grown = Vec::new();
    let racks: Vec<String> = Vec::new();
    let mut ctx = Ctx {
        now: w.now,
        config: &w.config,
        racks: &racks,
        partitions: &w.partitions,
        metadata: &w.metadata,
        trace: &mut w.trace,
        next_id: &mut w.next_id,
        sends: Vec::new(),
        timers: Vec::new(),
        dirty: &mut dirty,
        grown: &mut grown,
        commit_values: &mut Default::default(),
        buffers: &mut Default::default(),
        meta_pages: &mut Default::default(),
    };
    w.broker.on_message(&mut ctx, from, msg);
    let sends = ctx.sends;
    (dirty, grown, sends)
}

/// Deliver `msg` from `from` to the broker of `w` and return what it sent.
fn deliver(w: &mut BrokerWorld, from: Node, msg: Message) -> Vec<(Node, Message)> {
    on_broker(w, |b, ctx| b.on_message(ctx, from, msg))
}

/// A follower fetch for partition 0 in the leader's current epoch, answered
/// at once, with the follower's `LastFetchedEpoch` (Fetch v12+).
fn follower_fetch(
    w: &mut BrokerWorld,
    follower: BrokerId,
    fetch_offset: u64,
    last_fetched_epoch: u32,
) -> FetchPartitionResponse {
    let current_leader_epoch = w.replica().leader_epoch;
    let msg = Message::Fetch {
        id: 7,
        replica: Some(follower),
        broker_epoch: default_epoch(follower),
        max_wait_ms: 0,
        partitions: vec![FetchPartition {
            partition: 0,
            fetch_offset,
            current_leader_epoch,
            last_fetched_epoch: Some(last_fetched_epoch),
        }],
        rack_id: String::new(),
    };
    deliver(w, Node::Broker(follower), msg)
        .into_iter()
        .find_map(|(_, m)| match m {
            Message::FetchResponse { mut partitions, .. } => partitions.pop(),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no fetch response"))
}

// --- controller.rs: the effective min ISR ----------------------------------

/// KAFKA_REPLICATION.md §2 rule 1 and §3 (KIP-966): the effective min ISR is
/// `min(min.insync.replicas, replication factor)` (Kafka:
/// ReplicationControlManager's effective min ISR, tested by
/// testEligibleLeaderReplicas_EffectiveMinIsr). With `min.insync.replicas=5`
/// on three replicas, an ISR back at all three replicas is *at* min ISR, so
/// the change clears the ELR; a member that leaves is eligible again. (Removing
/// the controller's cap is an equivalent mutant, which no test can catch:
/// The book's "Mutation testing" says why; this test guards the rule's outcome.)
#[test]
fn min_insync_replicas_above_the_replication_factor_counts_as_the_replication_factor_for_the_elr() {
    let mut w = World::new(3, &[vec![1, 2, 3]], 5, true);
    w.fence(3);
    assert_eq!(w.reg(0).isr, vec![1, 2]);
    assert_eq!(w.reg(0).elr, vec![3], "two of an effective three: below");
    // Broker 3 comes back and the leader adds it: the ISR is the whole
    // assignment, at the effective min ISR of 3, and the ELR is cleared.
    w.heartbeat(3, false);
    assert!(!w.fenced(3));
    let r = w.alter_isr(&[1, 2, 3]).expect("expansion accepted");
    assert_eq!(r.isr, vec![1, 2, 3]);
    assert!(r.elr.is_empty());
}

// --- broker/isr.rs: a refused AlterPartition --------------------------------

/// KAFKA_REPLICATION.md §3 "Who changes the ISR" (KIP-497;
/// Partition.handleAlterPartitionError): the committed ISR only ever takes the
/// controller's value. Whatever the refusal — INELIGIBLE_REPLICA (proposal
/// dropped), FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION / INVALID_REQUEST
/// (kept pending until new metadata), or any other error (sent again) — the
/// leader's committed ISR stays what it was, for an expansion and a shrink
/// alike, and so does the high watermark that the committed ISR gates.
#[test]
fn a_rejected_alter_partition_never_commits_the_proposed_isr() {
    let refusals = [
        ErrorCode::IneligibleReplica,
        ErrorCode::FencedLeaderEpoch,
        ErrorCode::InvalidUpdateVersion,
        ErrorCode::InvalidRequest,
        ErrorCode::NetworkException,
    ];
    for e in refusals {
        // An expansion: follower 2 caught up to the leader's LEO (10).
        let mut w = BrokerWorld::leader(&[1, 2], &[1]);
        w.fetch_follower(2, 10, default_epoch(2));
        let (id, proposed, _) = w.isr_update();
        assert_eq!(BrokerState::ids(&proposed), vec![1, 2]);
        w.answer(id, Err(e));
        assert_eq!(
            w.isr(),
            vec![1],
            "{e}: expansion refused, ISR committed {{1}}"
        );

        // A shrink: follower 3 never fetched, follower 2 is caught up.
        let mut w = BrokerWorld::leader(&[1, 2, 3], &[1, 2, 3]);
        w.fetch_follower(2, 10, default_epoch(2));
        w.now += 30_001;
        w.fetch_follower(2, 10, default_epoch(2));
        w.maybe_shrink_isr();
        let (id, proposed, _) = w.isr_update();
        assert_eq!(BrokerState::ids(&proposed), vec![1, 2]);
        let hw = w.high_watermark();
        w.answer(id, Err(e));
        assert_eq!(w.isr(), vec![1, 2, 3], "{e}: shrink refused");
        assert_eq!(
            w.high_watermark(),
            hw,
            "{e}: broker 3 still holds the HW back"
        );
    }
}

// --- partition_change.rs: the last known leader -----------------------------

/// KIP-966 / Kafka docs "Eligible Leader Replicas": with ISR and ELR empty,
/// the controller elects the last known leader *if it is unfenced*. A fenced
/// last known leader is not elected; the partition stays offline and nothing
/// changes (KAFKA-19522, apache/kafka#20200 "avoid electing fenced
/// lastKnownLeader": PartitionChangeBuilder.canElectLastKnownLeader checks
/// isAcceptableLeader; PartitionChangeBuilderTest
/// testEligibleLeaderReplicas_NotEligibleLastKnownLeader).
#[test]
fn a_fenced_last_known_leader_is_not_elected() {
    let mut reg = registration(&[1, 2, 3], &[], None, 3, 4);
    reg.last_known_elr = vec![1];
    let before = reg.clone();
    let mut w = World::with_registration(3, reg, 2, true).acceptable(|b| b != 1);
    w.change(&[], ElectionKind::Clean);
    assert_eq!(w.reg(0), &before, "no election, no change record");
    // Once broker 1 is unfenced, the same change elects it (RECOVERING).
    w.heartbeat(1, false);
    assert_eq!(w.reg(0).leader, Some(1));
}

// --- broker/requests.rs: the leader's diverging-epoch check -----------------

/// KAFKA_REPLICATION.md §1 step 3 and §7 (KIP-279, truncate-on-fetch
/// KAFKA-10554; Partition.fetchRecords): the leader looks up
/// `(E, O) = endOffsetFor(LastFetchedEpoch)`; if `E < LastFetchedEpoch` —
/// the leader never had the follower's last epoch — *or* `O < FetchOffset`,
/// it answers with no records and `DivergingEpoch{E, O}` and does not record
/// the follower's position. Here the leader has epochs 2 (offsets 0–4) and 4
/// (5–9) and leads in 5; the follower wrote offset 3 in epoch 3, which the
/// leader never had: endOffsetFor(3) = (2, 5) with 5 ≥ the fetch offset 4, so
/// only the epoch comparison shows the divergence.
#[test]
fn a_follower_whose_last_fetched_epoch_the_leader_never_had_gets_a_diverging_epoch() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    let rep = w.broker.replicas.get_mut(&0).expect("partition 0");
    let mut log = Log::default();
    for i in 0..10 {
        log.append(Record::plain(i, if i < 5 { 2 } else { 4 }));
    }
    log.assign_epoch(5, 10);
    rep.log = log;
    assert_eq!(w.replica().log.end_offset_for(3), Some((2, 5)));

    let resp = follower_fetch(&mut w, 2, 4, 3);
    assert_eq!(resp.error, None);
    assert_eq!(resp.diverging_epoch, Some((2, 5)));
    assert!(resp.records.is_empty(), "no records past a divergence");
    assert!(
        w.isr_updates().is_empty() && w.replica().pending_isr.is_none(),
        "the follower's position is not recorded, so it is not added to the ISR"
    );
    // In the follower's own epoch lineage (epoch 4 ends at 10) it is answered.
    let resp = follower_fetch(&mut w, 2, 10, 4);
    assert_eq!(resp.diverging_epoch, None);
}

// --- controller.rs: a stale broker epoch ------------------------------------

/// ReplicationControlManager.alterPartition checks the sender's broker epoch
/// before anything else (ClusterControlManager.checkBrokerEpoch; Kafka answers
/// STALE_BROKER_EPOCH for the whole request). The lab answers
/// FENCED_LEADER_EPOCH (the book's "What is modelled"; tests/conformance
/// replication_control), after which the leader keeps its proposal pending
/// until new metadata (Partition.handleAlterPartitionError), and nothing is
/// written — even when the request's other fields would be refused otherwise
/// or accepted.
#[test]
fn an_alter_partition_from_a_stale_broker_epoch_is_refused_as_fenced_leader_epoch_before_any_other_check(
) {
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    let reg = w.reg(0).clone();
    let stale = w.epoch_of(1) - 1;
    // Otherwise valid.
    let r = w.alter_partition(1, stale, reg.leader_epoch, reg.partition_epoch, &[1, 2]);
    assert_eq!(r, Err(ErrorCode::FencedLeaderEpoch));
    // With epochs from the future (otherwise INVALID_REQUEST /
    // INVALID_UPDATE_VERSION) and an ISR without the leader.
    let r = w.alter_partition(
        1,
        stale,
        reg.leader_epoch + 1,
        reg.partition_epoch + 1,
        &[2, 3],
    );
    assert_eq!(r, Err(ErrorCode::FencedLeaderEpoch));
    assert_eq!(w.reg(0), &reg, "nothing written");
    assert_eq!(
        w.alter_partition(
            1,
            w.epoch_of(1),
            reg.leader_epoch,
            reg.partition_epoch,
            &[1, 2]
        )
        .map(|r| r.isr),
        Ok(vec![1, 2]),
        "the current broker epoch is accepted"
    );
}

// --- broker/isr.rs: the AlterPartition round trip ---------------------------

/// KIP-497 (Kafka's AlterPartitionManager; src/sim/broker/isr.rs): an ISR
/// change stays in flight until the controller answers it; one that gets no
/// answer is sent again, the same proposal (the lab re-sends after
/// ALTER_PARTITION_RETRY_MS). Only the proposal still in flight is re-sent: a
/// timer of any other, or of one already answered, sends nothing.
#[test]
fn an_unanswered_alter_partition_is_sent_again_while_it_is_in_flight() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    w.fetch_follower(2, 10, default_epoch(2));
    let (id, proposed, _) = w.isr_update();
    w.retry_timer(id);
    let (again, isr, _) = w.isr_update();
    assert_eq!((again, isr), (id, proposed), "the same proposal, again");
    w.retry_timer(id + 1);
    assert!(w.isr_updates().is_empty(), "no such proposal in flight");
    w.answer(id, Ok(registration(&[1, 2], &[1, 2], Some(1), 5, 2)));
    assert_eq!(w.isr(), vec![1, 2]);
    w.retry_timer(id);
    assert!(w.isr_updates().is_empty(), "answered: nothing left to send");
}

/// Partition.handleAlterPartitionUpdate: the leader applies the answer to the
/// proposal it has in flight and ignores any other (an answer for another
/// proposal is out of date), so a stray answer commits nothing and leaves the
/// proposal pending until its own answer arrives.
#[test]
fn an_alter_partition_answer_for_another_proposal_is_ignored() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    w.fetch_follower(2, 10, default_epoch(2));
    let (id, _, _) = w.isr_update();
    let committed = registration(&[1, 2], &[1, 2], Some(1), 5, 2);
    w.answer(id + 1, Ok(committed.clone()));
    assert_eq!(w.isr(), vec![1], "not this proposal's answer");
    assert_eq!(w.maximal_isr(), vec![1, 2], "still pending");
    w.answer(id, Ok(committed));
    assert_eq!(w.isr(), vec![1, 2]);
    assert!(w.replica().pending_isr.is_none());
}

// --- partition_change.rs: how an election is classified ---------------------

/// [`partition_change::build`] of `current` to an empty target ISR, ELR on,
/// effective min ISR 2 (Kafka's PartitionChangeBuilderTest's shape).
fn change(
    current: &PartitionRegistration,
    election: Election,
    recovered: bool,
    acceptable: &dyn Fn(BrokerId) -> bool,
) -> partition_change::Change {
    let req = ChangeRequest {
        target_isr: Vec::new(),
        election,
        elr_enabled: true,
        effective_min_isr: 2,
        unclean_shutdown: &[],
        acceptable,
        recovered,
    };
    partition_change::build(current, &req).expect("a change")
}

/// KIP-966 / Kafka docs "Eligible Leader Replicas" (PartitionChangeBuilder
/// electAnyLeader, canElectLastKnownLeader): the last known leader is the
/// choice only when the ISR *and* the ELR are empty. Any other out-of-sync
/// choice is an ordinary unclean election (`unclean.leader.election.enable`),
/// even when it happens to pick the last known leader (the ELR still names a
/// fenced member) or when the last known leader is fenced and another replica
/// is picked.
#[test]
fn only_an_empty_isr_and_elr_elect_the_last_known_leader_other_out_of_sync_choices_are_unclean() {
    // ELR {2} (fenced), last known leader 1 unfenced: unclean picks 1.
    let mut reg = registration(&[1, 2, 3], &[], None, 3, 4);
    reg.elr = vec![2];
    reg.last_known_elr = vec![1];
    let c = change(&reg, Election::Unclean, false, &|b| b == 1);
    assert_eq!(c.registration.leader, Some(1));
    assert_eq!(c.elected, Elected::Unclean, "the ELR was not empty");
    // ISR and ELR empty, last known leader 1 fenced: unclean picks 2.
    let mut reg = registration(&[1, 2, 3], &[], None, 3, 4);
    reg.last_known_elr = vec![1];
    let c = change(&reg, Election::Unclean, false, &|b| b == 2);
    assert_eq!(c.registration.leader, Some(2));
    assert_eq!(c.elected, Elected::Unclean, "not the last known leader");
    // ISR and ELR empty, last known leader 1 unfenced: that is the choice.
    let c = change(&reg, Election::Unclean, false, &|_| true);
    assert_eq!(c.elected, Elected::LastKnownLeader);
}

/// PartitionChangeBuilder.build (Kafka 4.4.0; tests/oracle.rs): an unclean
/// election sets LeaderRecoveryState RECOVERING (KIP-704), and the change's
/// target recovery state is written over it only when it differs from the
/// partition's current one — so a RECOVERED report from a partition that was
/// already RECOVERED leaves the unclean leader RECOVERING.
#[test]
fn an_unclean_leader_is_recovering_unless_the_same_change_reports_a_recovering_partition_recovered()
{
    let reg = registration(&[1, 2, 3], &[1], Some(1), 3, 4);
    let c = change(&reg, Election::Unclean, true, &|b| b == 2);
    assert_eq!(c.registration.leader, Some(2));
    assert_eq!(
        c.registration.leader_recovery_state,
        LeaderRecoveryState::Recovering
    );
}

// --- broker/fetcher.rs: which fetch responses a follower applies ------------

/// Broker 1 of [`BrokerWorld::leader`] (10 records of epoch 4) made a
/// follower of broker 2 in leader epoch 6; returns the id of the Fetch it
/// sent to broker 2.
fn follower_of_2() -> (BrokerWorld, u64) {
    let mut w = BrokerWorld::leader(&[1, 2], &[1, 2]);
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2], &[1, 2], Some(2), 6, 2),
    });
    let id = fetch_id(&w.sends).unwrap_or_else(|| panic!("a Fetch to broker 2: {:?}", w.sends));
    (w, id)
}

/// Leader 2's answer to Fetch `id`: one record of epoch 6 at offset 10.
fn one_record(w: &mut BrokerWorld, id: u64) {
    deliver(w, Node::Broker(2), answer(id, 10, 10, 1));
}

/// Leader 2's answer to Fetch `id`: `n` records of epoch 6 from `base`, and
/// its high watermark `hw`.
fn answer(id: u64, base: u64, hw: u64, n: u64) -> Message {
    let resp = FetchPartitionResponse {
        partition: 0,
        error: None,
        high_watermark: hw,
        log_end_offset: base + n,
        diverging_epoch: None,
        current_leader: Some((2, 6)),
        records: (base..base + n).map(|i| Record::plain(i, 6)).collect(),
        base_offset: base,
        preferred_read_replica: None,
        chunk: None,
    };
    Message::FetchResponse {
        id,
        partitions: vec![resp],
    }
}

/// The id of the Fetch to broker 2 among `sends`.
fn fetch_id(sends: &[(Node, Message)]) -> Option<u64> {
    sends.iter().find_map(|(to, m)| match m {
        Message::Fetch { id, .. } if *to == Node::Broker(2) => Some(*id),
        _ => None,
    })
}

/// AbstractFetcherThread: a fetcher has one Fetch in flight per leader and
/// processes the response to that request only (NetworkClient matches a
/// response to its request by correlation id); a response to anything else —
/// a fetch that already timed out, say — is dropped.
#[test]
fn a_follower_applies_only_the_response_to_its_fetch_in_flight() {
    let (mut w, id) = follower_of_2();
    one_record(&mut w, id + 1);
    assert_eq!(
        w.replica().log.log_end_offset(),
        10,
        "not the fetch in flight"
    );
    one_record(&mut w, id);
    assert_eq!(
        w.replica().log.log_end_offset(),
        11,
        "its own answer is applied"
    );
}

/// AbstractFetcherThread.processFetchRequest (KIP-320, KAFKA-7164): a
/// partition's data is processed only if its fetch state is still in the
/// leader epoch the request was built in. When the leader is re-elected in a
/// new epoch while the fetch is out — even the same broker — the answer is
/// dropped and the follower reconciles in the new epoch first.
#[test]
fn a_fetch_response_from_an_earlier_leader_epoch_is_dropped_even_from_the_same_leader() {
    let (mut w, id) = follower_of_2();
    w.publish(MetadataRecord::Partition {
        partition: 0,
        registration: registration(&[1, 2], &[1, 2], Some(2), 7, 3),
    });
    assert_eq!(w.replica().leader_epoch, 7);
    one_record(&mut w, id);
    assert_eq!(w.replica().log.log_end_offset(), 10, "sent in epoch 6");
}

/// Leader 2's OFFSET_OUT_OF_RANGE answer to Fetch `id`, its log ending at
/// `leader_leo`.
fn out_of_range(w: &mut BrokerWorld, id: u64, leader_leo: u64) {
    let resp = FetchPartitionResponse {
        partition: 0,
        error: Some(ErrorCode::OffsetOutOfRange),
        high_watermark: 0,
        log_end_offset: leader_leo,
        diverging_epoch: None,
        current_leader: Some((2, 6)),
        records: Vec::new(),
        base_offset: 0,
        preferred_read_replica: None,
        chunk: None,
    };
    let msg = Message::FetchResponse {
        id,
        partitions: vec![resp],
    };
    deliver(w, Node::Broker(2), msg);
}

/// KAFKA_REPLICATION.md §1, the follower on a response
/// (AbstractFetcherThread.handleOutOfRangeError): OFFSET_OUT_OF_RANGE with a
/// leader log that ends before the follower's truncates the follower to the
/// leader's log end; with a leader log that ends after it, nothing is
/// truncated and the follower backs off and fetches again.
#[test]
fn offset_out_of_range_truncates_a_follower_only_to_a_shorter_leader_log() {
    let (mut w, id) = follower_of_2();
    out_of_range(&mut w, id, 12);
    assert_eq!(
        w.replica().log.log_end_offset(),
        10,
        "the leader's log is longer"
    );
    let (mut w, id) = follower_of_2();
    out_of_range(&mut w, id, 10);
    assert_eq!(w.replica().log.log_end_offset(), 10);
    let (mut w, id) = follower_of_2();
    out_of_range(&mut w, id, 8);
    assert_eq!(
        w.replica().log.log_end_offset(),
        8,
        "truncated to the leader's end"
    );
}

/// KAFKA_REPLICATION.md §1: after an OFFSET_OUT_OF_RANGE from a leader whose
/// log is the longer one, the follower fetches again from its own LEO (the
/// lab after replica.fetch.backoff.ms): it does not stop following.
#[test]
fn after_offset_out_of_range_from_a_longer_leader_log_the_follower_fetches_again() {
    let (mut w, id) = follower_of_2();
    out_of_range(&mut w, id, 12);
    w.now += w.config.replica_fetch_backoff_ms;
    let sent = on_broker(&mut w, |b, ctx| b.on_timer(ctx, Timer::FetchRetry));
    let offset = sent.iter().find_map(|(to, m)| match m {
        Message::Fetch { partitions, .. } if *to == Node::Broker(2) => {
            partitions.first().map(|p| p.fetch_offset)
        }
        _ => None,
    });
    assert_eq!(offset, Some(10), "fetches again from its own LEO");
}

/// DESIGN.md "Invariants" (checked after every step): the checker looks at
/// the partitions a step marked (`Ctx::dirty`), so every change a fetch
/// response makes to a follower — its first reconciliation with the leader,
/// appended records, a new high watermark — marks the partition; a checker
/// that skipped one would miss a broken rule in that step. Records appended
/// with the HW where it was are marked for the light look (`Ctx::grown`:
/// no invariant of the replicas can find anything new there), the others
/// for the full one.
#[test]
fn every_change_a_fetch_response_makes_to_a_follower_is_seen_by_the_invariant_checker() {
    let (mut w, id) = follower_of_2();
    w.broker
        .replicas
        .get_mut(&0)
        .expect("p0")
        .log
        .high_watermark = 10;
    // Reconciled: nothing new, the same HW (10 was the leader's 10 records).
    let (dirty, grown, sent) = touched_by(&mut w, Node::Broker(2), answer(id, 10, 10, 0));
    assert_eq!((dirty, grown), (vec![0], vec![]), "first reconciliation");
    // Records appended, the HW unchanged.
    let id = fetch_id(&sent).expect("fetches on");
    let (dirty, grown, sent) = touched_by(&mut w, Node::Broker(2), answer(id, 10, 10, 2));
    assert_eq!((dirty, grown), (vec![], vec![0]), "records appended");
    // Only the HW moves.
    let id = fetch_id(&sent).expect("fetches on");
    let (dirty, grown, _) = touched_by(&mut w, Node::Broker(2), answer(id, 12, 12, 0));
    assert_eq!((dirty, grown), (vec![0], vec![]), "a new high watermark");
    assert_eq!(w.replica().log.high_watermark, 12);
}

// --- log.rs: what "the same log" means --------------------------------------

/// KAFKA_REPLICATION.md §8 ("Log Matching", the TLA+ specifications'
/// StrongIsr/WeakIsr: identical records below the HW): a record is its id,
/// its leader epoch and, for an idempotent producer, its producer id and
/// sequence (the batch header, §4). The invariant compares logs through
/// `Log::prefix_hash`, so two logs whose records differ only in the record
/// id, only in the producer id or only in the sequence number are different
/// logs.
#[test]
fn log_matching_tells_apart_records_that_differ_only_in_id_producer_id_or_sequence() {
    let idempotent = |producer_id: u32, seq: u32| Record {
        producer_id,
        seq,
        ..Record::plain(1, 0)
    };
    let log = |r: Record| {
        let mut l = Log::default();
        l.append(r);
        l.prefix_hash(1)
    };
    assert_ne!(log(idempotent(7, 0)), log(idempotent(7, 1)), "sequence");
    assert_ne!(log(idempotent(7, 3)), log(idempotent(8, 3)), "producer id");
    assert_eq!(log(idempotent(7, 3)), log(idempotent(7, 3)));
    // Record ids 1 and 4 (bits that the hash's starting value already has).
    assert_ne!(
        log(Record::plain(1, 0)),
        log(Record::plain(4, 0)),
        "record id"
    );
}

// --- log.rs / partition.rs: ISR expansion and the epoch start ---------------

/// KAFKA_REPLICATION.md §3 "Expand" (KAFKA-7128, Partition.isFollowerInSync):
/// a follower joins the ISR only when its LEO has reached the leader's HW
/// *and* the start offset of the leader's current epoch, because a new
/// leader's HW may lag the true one. Here the leader took epoch 5 at offset
/// 10 with its HW still 4: a follower at 5 is past the HW but not yet in
/// epoch 5's history, and is not proposed; at 10 it is.
#[test]
fn a_follower_joins_the_isr_only_once_it_reaches_the_start_of_the_leader_epoch() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    assert_eq!(w.replica().log.epoch_start_offset(5), Some(10));
    // The new leader's HW lags: 4 (a follower of the old leader knew no more).
    w.broker
        .replicas
        .get_mut(&0)
        .expect("p0")
        .log
        .high_watermark = 4;
    w.fetch_follower(2, 5, default_epoch(2));
    assert!(w.isr_updates().is_empty(), "LEO 5 < epoch start 10");
    w.fetch_follower(2, 10, default_epoch(2));
    let (_, isr, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&isr), vec![1, 2]);
}

// --- log.rs: producer state after truncation --------------------------------

/// KAFKA_REPLICATION.md §4 (UnifiedLog.truncateTo → the producer state is
/// reloaded from the log; ProducerStateManager.truncateAndReload): an
/// idempotent producer's state is what the log holds, so after a truncation
/// drops its last batch, its last sequence is the one of the batch still in
/// the log — the retried batch is then accepted as the next one, not taken
/// for a duplicate of the removed one (KIP-101's follower truncation followed
/// by an idempotent retry, T3 and T10).
#[test]
fn a_truncation_rebuilds_the_idempotent_producer_state_from_the_log_that_is_left() {
    let batch = |first_seq: u32, n: u32| {
        (0..n).map(move |i| Record {
            producer_id: 7,
            seq: first_seq + i,
            batch_start: i == 0,
            ..Record::plain(u64::from(first_seq + i), 0)
        })
    };
    let mut log = Log::default();
    for r in batch(0, 3).chain(batch(3, 3)) {
        log.append(r);
    }
    assert_eq!(log.producer_state(7).and_then(|p| p.last_seq()), Some(5));
    log.truncate_to(3);
    assert_eq!(
        log.producer_state(7).and_then(|p| p.last_seq()),
        Some(2),
        "the last batch left in the log"
    );
    log.truncate_to(0);
    assert!(log.producer_state(7).is_none_or(|p| p.last_seq().is_none()));
}

// --- partition.rs: the maximal ISR holds the high watermark -----------------

/// KAFKA_REPLICATION.md §2 rule 2 and KIP-497 (Partition's maximal ISR,
/// PendingExpandIsr): while an expansion is in flight, the follower being
/// added counts for the HW as if it were in the ISR — the HW waits for it even
/// once it is no longer "caught up" by time — and a replica that is neither
/// in the ISR, nor in the pending one, nor caught up does not count at all.
#[test]
fn a_pending_isr_member_holds_the_high_watermark_and_an_outsider_does_not() {
    let mut w = BrokerWorld::leader(&[1, 2, 3, 4], &[1, 2]);
    w.fetch_follower(3, 10, default_epoch(3));
    let (_, proposed, _) = w.isr_update();
    assert_eq!(
        BrokerState::ids(&proposed),
        vec![1, 2, 3],
        "3 is being added"
    );
    w.broker
        .replicas
        .get_mut(&0)
        .expect("p0")
        .log
        .append(Record::plain(10, 5));
    w.now += 30_001;
    w.fetch_follower(2, 11, default_epoch(2));
    assert_eq!(w.high_watermark(), 10, "broker 3, pending at 10, holds it");
    w.fetch_follower(3, 11, default_epoch(3));
    assert_eq!(
        w.high_watermark(),
        11,
        "broker 4 (never fetched) does not count"
    );
}

/// ProducerIdManager hands each producer its own producer id, and the
/// broker's ProducerStateManager tracks sequences per producer id: two
/// idempotent producers writing one partition never share one, so neither
/// takes the other's sequence numbers for a gap or a duplicate, and every
/// record each sends is written once.
#[test]
fn two_idempotent_producers_on_one_partition_get_distinct_producer_ids() {
    let mut l = failover_lab::Lab::from_json(
        r#"{"seed": 4, "brokers": 3,
          "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
          "clients": [
            {"type": "producer", "id": "p1", "topic": "t", "acks": "all", "records_per_sec": 20},
            {"type": "producer", "id": "p2", "topic": "t", "acks": "all", "records_per_sec": 20}],
          "run_until_ms": 5000}"#,
    )
    .unwrap();
    l.run_to_end();
    let r = l.report();
    for p in &r.producers {
        assert!(p.errors.is_empty(), "{}: {:?}", p.id, p.errors);
    }
    for d in &r.delivery {
        assert_eq!(d.written_twice.count, 0, "{}", d.producer);
        assert!(d.acked_kept.count + d.pending.count == d.sent, "{d:?}");
    }
    let log = &l.cluster.broker(1).unwrap().replicas.get(&0).unwrap().log;
    let mut pids: Vec<u32> = log.records().map(|r| r.producer_id).collect();
    pids.sort_unstable();
    pids.dedup();
    assert_eq!(pids.len(), 2, "one producer id per producer: {pids:?}");
    assert!(pids.iter().all(|p| *p != 0));
}

/// KafkaProducer: idempotence needs acks=all; with acks=1 (and
/// enable.idempotence left at its default) it is off, so the records carry
/// no producer id or sequence and a retry can write a record twice.
#[test]
fn an_acks_1_producer_is_not_idempotent() {
    let mut l = failover_lab::Lab::from_json(
        r#"{"seed": 4, "brokers": 3,
          "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
          "clients": [{"type": "producer", "id": "p1", "topic": "t", "acks": "1", "records_per_sec": 20}],
          "run_until_ms": 2000}"#,
    )
    .unwrap();
    l.run_to_end();
    let log = &l.cluster.broker(1).unwrap().replicas.get(&0).unwrap().log;
    assert!(log.log_end_offset() > 10);
    assert!(log.records().all(|r| r.producer_id == 0 && r.seq == 0));
    // The lab's produce steps may set their own acks on an otherwise
    // idempotent producer (its config: acks=all): an acks=1 send is still
    // not idempotent, an acks=all one is.
    let mut l = failover_lab::Lab::from_json(
        r#"{"seed": 4, "brokers": 3,
          "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
          "steps": [{"at_ms": 100, "produce": {"topic": "t", "partition": 0, "count": 3, "acks": "1"}},
                    {"at_ms": 500, "produce": {"topic": "t", "partition": 0, "count": 2, "acks": "all"}}],
          "run_until_ms": 1000}"#,
    )
    .unwrap();
    l.run_to_end();
    let log = &l.cluster.broker(1).unwrap().replicas.get(&0).unwrap().log;
    let pids: Vec<u32> = log.records().map(|r| r.producer_id).collect();
    assert_eq!(pids.len(), 5);
    assert!(pids[..3].iter().all(|p| *p == 0), "{pids:?}");
    assert!(pids[3..].iter().all(|p| *p != 0), "{pids:?}");
}

/// NetworkClient: a connect to a host that drops packets (isolated) fails
/// only at socket.connection.setup.timeout.ms (10 s, ±20 %); the producer
/// then gives up on that broker, asks another for metadata and reaches the
/// new leader. A setup timeout that never fired would leave it connecting to
/// the isolated broker, its records queued for good. (Producer::timer_live's
/// mutants survive this: the cluster consults it only when it compacts a
/// queue of at least MIN_COMPACT_QUEUE events, which this world never has.)
#[test]
fn a_connect_to_an_isolated_leader_times_out_and_the_producer_moves_on() {
    let mut l = failover_lab::Lab::from_json(
        r#"{"seed": 4, "brokers": 3,
          "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
          "clients": [{"type": "producer", "id": "p1", "topic": "t", "acks": "all", "records_per_sec": 20,
                       "config": {"request.timeout.ms": 3000}}],
          "steps": [{"at_ms": 2000, "isolate": 1}],
          "run_until_ms": 40000}"#,
    )
    .unwrap();
    l.cluster.run_until(12_000);
    let acked_before = l.report().producers[0].acked;
    l.run_to_end();
    let r = l.report();
    let p = &r.producers[0];
    assert!(
        p.acked > acked_before + 200,
        "writes resumed on the new leader: {acked_before} → {}",
        p.acked
    );
    assert_ne!(r.partitions[0].leader, Some(1));
}

// --- controller.rs: session expiry ------------------------------------------

fn fence_events(w: &World, b: BrokerId) -> usize {
    w.trace
        .events()
        .filter(|e| matches!(&e.kind, failover_lab::sim::trace::TraceKind::BrokerFenced { broker, .. } if *broker == b))
        .count()
}

/// KAFKA_REPLICATION.md §5 (KIP-631; BrokerHeartbeatManager tracks the
/// sessions of unfenced brokers, and QuorumController fences the one whose
/// session expired): a live broker that hosts no replica at all is fenced
/// when it misses broker.session.timeout.ms of heartbeats, like any other.
#[test]
fn a_broker_that_hosts_no_replica_is_still_fenced_when_its_session_expires() {
    let mut w = World::new(4, &[vec![1, 2, 3]], 1, true);
    assert!(!w.fenced(4));
    w.now = 8_999;
    w.session_check(4);
    assert!(!w.fenced(4), "the session still runs");
    w.now = 9_000; // last heartbeat at 0 + broker.session.timeout.ms=9000
    w.session_check(4);
    assert!(
        w.fenced(4),
        "fenced although it leads nothing and is in no ISR"
    );
    assert_eq!(fence_events(&w, 4), 1);
}

/// The same rule from the other side: a fenced broker has no session left to
/// expire, so a session check that fires after it was fenced changes
/// nothing — no second BrokerRegistrationChangeRecord, no second fencing —
/// whether it was fenced for its session (and, with ELR off, stays the last
/// member of an ISR, KAFKA_REPLICATION.md §3) or for another reason and left
/// every ISR.
#[test]
fn a_fenced_broker_is_not_fenced_again_when_an_older_session_check_fires() {
    // Fenced for its session; ELR off keeps it as the ISR's last member.
    let mut w = World::new(3, &[vec![1]], 1, false);
    w.now = 9_000;
    w.session_check(1);
    assert!(w.fenced(1));
    assert_eq!(w.reg(0).isr, vec![1], "without ELR the last member stays");
    let records = w.metadata_len();
    w.now = 20_000;
    w.session_check(1);
    assert_eq!(w.metadata_len(), records, "no second fencing record");
    assert_eq!(fence_events(&w, 1), 1);

    // Fenced by the controller (not for its session), out of every ISR.
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, true);
    w.fence(3);
    assert_eq!(w.reg(0).isr, vec![1, 2]);
    let records = w.metadata_len();
    w.now = 9_000;
    w.session_check(3);
    assert_eq!(w.metadata_len(), records, "no second fencing record");
    assert_eq!(fence_events(&w, 3), 1);
}

// --- partition.rs: the maximal ISR's size -------------------------------------

/// KIP-497 (Partition.scala's PendingExpandIsr.maximalIsr, used by
/// checkEnoughReplicasReachOffset for acks=all): while an expansion is in
/// flight the maximal ISR is the committed ISR plus the member being added,
/// so its size counts that member before the controller has answered; a
/// refused expansion leaves the committed size, and a pending shrink counts
/// the committed members once.
#[test]
fn the_maximal_isr_counts_a_pending_expansions_new_member_and_no_member_twice() {
    let mut w = BrokerWorld::leader(&[1, 2], &[1]);
    assert_eq!(w.replica().maximal_isr_len(), 1);
    w.fetch_follower(2, 10, default_epoch(2)); // caught up: expansion proposed
    let (id, proposed, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&proposed), vec![1, 2]);
    assert_eq!(w.isr(), vec![1], "committed ISR unchanged until the answer");
    assert_eq!(
        w.replica().maximal_isr_len(),
        2,
        "the pending member counts"
    );
    w.answer(id, Err(ErrorCode::IneligibleReplica));
    assert_eq!(
        w.replica().maximal_isr_len(),
        1,
        "refused: back to the committed ISR"
    );

    // A pending shrink removes nobody yet (PendingShrinkIsr.maximalIsr is the
    // committed ISR): {1,2,3} proposing {1,2} still has three.
    let mut w = BrokerWorld::leader(&[1, 2, 3], &[1, 2, 3]);
    w.fetch_follower(2, 10, default_epoch(2));
    w.now += 30_001;
    w.fetch_follower(2, 10, default_epoch(2));
    w.maybe_shrink_isr();
    let (_, proposed, _) = w.isr_update();
    assert_eq!(BrokerState::ids(&proposed), vec![1, 2]);
    assert_eq!(w.replica().maximal_isr_len(), 3, "no member counted twice");
}

// ---------------------------------------------------------------------------
// The client side (issue 59, build item 4): the group coordinator, the
// consumer and its group half, connections, and the delivery accounting.

#[path = "common/mod.rs"]
mod common;

/// One producer (acks=all, 20 records/s) and one consumer of group
/// "orders" on a one-partition topic, three brokers.
fn group_lab(config: &str, steps: &str, until: u64) -> failover_lab::Lab {
    common::lab(&format!(
        r#"{{"seed": 3, "brokers": 3, "config": {{{config}}},
          "topics": [{{"name": "t", "partitions": 1, "replication_factor": 3}}],
          "clients": [
            {{"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 20}},
            {{"type": "consumer", "id": "c", "topic": "t", "config": {{"group.id": "orders"}}}}],
          "steps": [{steps}],
          "run_until_ms": {until}}}"#
    ))
}

/// "orders"' partition of `__consumer_offsets` (GroupCoordinatorService
/// .partitionFor: Utils.abs(-1008770331) % 50 = 31) and its global index.
fn orders_offsets_partition(l: &failover_lab::Lab) -> usize {
    l.cluster
        .partitions
        .iter()
        .position(|p| p.topic == "__consumer_offsets" && p.partition == 31)
        .unwrap_or_else(|| panic!("no __consumer_offsets-31"))
}

/// A new leader of a `__consumer_offsets` partition answers the group only
/// after it has read the partition's records (CoordinatorRuntime schedules
/// the load on becoming leader; COORDINATOR_LOAD_IN_PROGRESS meanwhile,
/// KAFKA_REPLICATION.md's group-coordinator section). The lab's load costs
/// `sim.coordinator.load.ms` plus `sim.coordinator.load.us.per.record` per
/// record of the log, rounded up to the millisecond, and the narration
/// counts the commit records it read (a partition with none is not
/// narrated). Here: 300 ms + 10 ms per record.
#[test]
fn a_new_coordinator_loads_for_a_fixed_cost_plus_a_cost_per_record_and_counts_the_records_it_read()
{
    use failover_lab::sim::trace::TraceKind;
    let config = r#""sim.coordinator.load.ms": 300, "sim.coordinator.load.us.per.record": 10000"#;
    let probe = group_lab(config, "", 1);
    let op = orders_offsets_partition(&probe);
    let first = probe.cluster.partitions[op].replicas[0];
    let mut l = group_lab(
        config,
        &format!(r#"{{"at_ms": 12000, "crash": {first}}}"#),
        30_000,
    );
    l.run_to_end();
    let became: Vec<(u64, u32, u64)> = common::events(&l, |k| {
        matches!(k, TraceKind::BecameLeader { topic, partition: 31, .. } if topic == "__consumer_offsets")
    })
    .iter()
    .filter(|e| e.at_ms >= 12_000)
    .filter_map(|e| match &e.kind {
        TraceKind::BecameLeader {
            broker,
            log_end_offset,
            ..
        } => Some((e.at_ms, *broker, *log_end_offset)),
        _ => None,
    })
    .collect();
    assert_eq!(became.len(), 1, "one new leader: {became:?}");
    let (at, broker, records) = became[0];
    assert_ne!(broker, first);
    assert!(records >= 2, "two auto-commits before the crash: {records}");
    let loaded: Vec<(u64, u64, Vec<String>)> = common::events(&l, |k| {
        matches!(k, TraceKind::CoordinatorLoaded { broker: b, partition: 31, .. } if *b == broker)
    })
    .iter()
    .filter_map(|e| match &e.kind {
        TraceKind::CoordinatorLoaded {
            records, groups, ..
        } => Some((e.at_ms, *records, groups.clone())),
        _ => None,
    })
    .collect();
    assert_eq!(
        loaded,
        vec![(at + 300 + records * 10, records, vec!["orders".to_string()])],
        "became leader at {at} with {records} records"
    );
    // The other 49 offsets partitions hold no commit: their leaders (at
    // the start, and the ones elected after the crash) load nothing and
    // narrate nothing.
    let empty = common::events(
        &l,
        |k| matches!(k, TraceKind::CoordinatorLoaded { partition, .. } if *partition != 31),
    );
    assert!(empty.is_empty(), "{empty:?}");
}

/// The story of record `id` (the page's fate view) as its fate and the
/// texts of its events.
fn story_of(l: &failover_lab::Lab, id: u64) -> failover_lab::sim::delivery::Story {
    failover_lab::sim::delivery::story(&l.cluster, id)
        .unwrap_or_else(|| panic!("no story for {id}"))
}

fn has_event(s: &failover_lab::sim::delivery::Story, text: &str) -> bool {
    s.events.iter().any(|(_, t)| t.contains(text))
}

/// A record's story tells the events that decided its fate and no other
/// (delivery.rs, `story`): an acknowledged record an unclean election
/// dropped (KAFKA_REPLICATION.md §5, unclean leader election) has the
/// loss, the consumer's KIP-320 validation that found it truncated
/// (OffsetsForLeaderEpoch answered below the position: the records from
/// the divergence point up to the position), and the old leader's
/// truncation; a record kept below the divergence point, or at the
/// position the consumer had reached, has neither the loss nor the
/// validation. A pending record has a story too, and a record nobody read
/// lists no reader. Each count names at most three example ids.
#[test]
fn a_records_story_holds_the_loss_the_validation_and_the_truncation_that_decided_it_and_no_other() {
    let mut l = common::scenario_file("unclean-election.json");
    l.run_to_end();
    let d = &l.report().delivery[0];
    assert_eq!(d.topic, "orders");
    assert!(d.acked_kept.count > 3 && d.acked_lost.count > 3, "{d:?}");
    assert_eq!(d.acked_kept.examples.len(), 3, "at most three examples");
    assert_eq!(d.acked_lost.examples.len(), 3, "at most three examples");
    let lost = story_of(&l, d.acked_lost.examples[0]);
    assert_eq!(lost.fate, "acked_lost");
    assert!(
        has_event(&lost, "acknowledged record(s) of orders-0 are lost"),
        "{:?}",
        lost.events
    );
    assert!(
        has_event(&lost, "Consumer c1 validated its position"),
        "{:?}",
        lost.events
    );
    assert!(
        has_event(&lost, "Broker 1 truncated orders-0"),
        "{:?}",
        lost.events
    );
    // Kept at offset 0, below the divergence point.
    let kept = story_of(&l, d.acked_kept.examples[0]);
    assert_eq!((kept.fate, kept.acked_offset), ("acked_kept", Some(0)));
    assert!(!has_event(&kept, "are lost"), "{:?}", kept.events);
    assert!(
        !has_event(&kept, "validated its position"),
        "{:?}",
        kept.events
    );
    assert!(!has_event(&kept, "truncated"), "{:?}", kept.events);
    // The consumer's position was 299 when it validated: a record later
    // written at offset 299 was not among those it found truncated.
    let validated = l
        .cluster
        .trace
        .events()
        .find_map(|e| match &e.kind {
            failover_lab::sim::trace::TraceKind::ConsumerTruncationDetected {
                position, ..
            } => Some(*position),
            _ => None,
        })
        .expect("the consumer detected the truncation");
    let at_position = l.cluster.acked[0]
        .iter()
        .find(|a| a.offset == validated)
        .map(|a| a.id)
        .expect("a record acknowledged at the position");
    let s = story_of(&l, at_position);
    assert_eq!(s.fate, "acked_kept");
    assert!(!has_event(&s, "validated its position"), "{:?}", s.events);
    // Pending at the end: a story with nobody reading it.
    let pending = story_of(&l, d.pending.examples[0]);
    assert_eq!(pending.fate, "pending");
    assert!(pending.reads.is_empty(), "{:?}", pending.reads);
}

/// A consumer that restarts from its group's last commit reads again what
/// it read after that commit (ConsumerCoordinator.refreshCommittedOffsets
/// IfNeeded: at-least-once): a record read twice has the restart in its
/// story, a record read once does not.
#[test]
fn a_record_read_twice_has_the_consumers_restart_in_its_story_and_one_read_once_does_not() {
    let mut l = common::lab(
        r#"{"seed": 3, "brokers": 3,
          "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
          "clients": [
            {"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 20},
            {"type": "consumer", "id": "c", "topic": "t",
              "config": {"group.id": "orders", "auto.offset.reset": "earliest"}}],
          "steps": [{"at_ms": 12500, "crash_client": "c"}, {"at_ms": 15000, "restart_client": "c"}],
          "run_until_ms": 25000}"#,
    );
    l.run_to_end();
    let read: Vec<u64> = l.cluster.consumers[0]
        .consumed_records
        .iter()
        .map(|r| r.id)
        .collect();
    let times = |id: u64| read.iter().filter(|x| **x == id).count();
    let twice = *read
        .iter()
        .find(|id| times(**id) == 2)
        .expect("a record read twice");
    let once = *read
        .iter()
        .find(|id| times(**id) == 1)
        .expect("a record read once");
    let s = story_of(&l, twice);
    assert_eq!(s.reads, vec![("c".to_string(), 2)]);
    assert!(has_event(&s, "Consumer c starts again"), "{:?}", s.events);
    let s = story_of(&l, once);
    assert_eq!(s.reads, vec![("c".to_string(), 1)]);
    assert!(!has_event(&s, "starts again"), "{:?}", s.events);
}

/// A record's acknowledgement is the ProduceAcked whose offsets
/// `base..base + count` (exclusive) contain the record's offset (the
/// ProduceResponse's base offset names the batch's first record): with two
/// batches of three on one partition, offsets 2 and 3 are each in exactly
/// one. With no consumer of the topic, no committed record counts as
/// never consumed (`never_consumed` is for topics someone reads).
#[test]
fn a_records_acknowledgement_is_the_batch_whose_offsets_contain_it_and_an_unread_topic_counts_nothing_never_consumed(
) {
    let mut l = common::lab(
        r#"{"seed": 1, "brokers": 3,
      "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
      "clients": [{"type": "producer", "id": "p", "topic": "t", "acks": "all"}],
      "steps": [
        {"at_ms": 3000, "produce": {"topic": "t", "partition": 0, "count": 3, "producer": "p"}},
        {"at_ms": 4000, "produce": {"topic": "t", "partition": 0, "count": 3, "producer": "p"}}],
      "run_until_ms": 6000}"#,
    );
    l.run_to_end();
    let d = &l.report().delivery[0];
    assert_eq!(d.acked_kept.count, 6, "{d:?}");
    assert_eq!(d.never_consumed.count, 0, "no consumer reads t: {d:?}");
    for (offset, batch) in [(0, "0..2"), (2, "0..2"), (3, "3..5"), (5, "3..5")] {
        let id = l.cluster.acked[0]
            .iter()
            .find(|a| a.offset == offset)
            .map(|a| a.id)
            .unwrap_or_else(|| panic!("offset {offset} acknowledged"));
        let acks: Vec<String> = story_of(&l, id)
            .events
            .into_iter()
            .filter(|(_, t)| t.contains("got acks=all"))
            .map(|(_, t)| t)
            .collect();
        assert_eq!(acks.len(), 1, "offset {offset}: {acks:?}");
        assert!(
            acks[0].contains(&format!("at offsets {batch}")),
            "offset {offset}: {acks:?}"
        );
    }
}

/// A broker that stops leading a `__consumer_offsets` partition unloads
/// its groups (GroupCoordinatorService.onResignation, from
/// ReplicaManager's leader-to-follower transition): after the preferred
/// replica takes the partition back (auto.leader.rebalance.enable), only
/// the leader holds the group's offsets, not the broker that led it
/// meanwhile.
#[test]
fn a_broker_that_stops_leading_an_offsets_partition_unloads_its_groups() {
    let config = r#""leader.imbalance.check.interval.seconds": 5"#;
    let probe = group_lab(config, "", 1);
    let op = orders_offsets_partition(&probe);
    let first = probe.cluster.partitions[op].replicas[0];
    let mut l = group_lab(
        config,
        &format!(r#"{{"at_ms": 8000, "crash": {first}}}, {{"at_ms": 25000, "restart": {first}}}"#),
        60_000,
    );
    l.cluster.run_until(24_000);
    let interim = common::reg(&l, op)
        .leader
        .expect("a leader while the first is down");
    assert_ne!(interim, first);
    assert!(l
        .cluster
        .broker(interim)
        .is_some_and(|b| b.coordinator.contains_key(&op)));
    l.run_to_end();
    assert_eq!(
        common::reg(&l, op).leader,
        Some(first),
        "the preferred leader is back"
    );
    for b in 1..=3 {
        let holds = l
            .cluster
            .broker(b)
            .is_some_and(|x| x.coordinator.contains_key(&op));
        assert_eq!(holds, b == first, "broker {b}");
    }
}

/// After an unclean election the new leader hands out the lost records'
/// offsets again (KAFKA_REPLICATION.md §5, unclean leader election: the
/// log restarts from the new leader's end), so an offset alone does not
/// name a record's acknowledgement: the ProduceResponse a record got is the
/// one answered when the producer recorded it as acknowledged. In
/// `unclean-election.json` record 213 (acknowledged at offset 30 in epoch 0,
/// lost) and the record written at offset 30 in epoch 1 share an offset;
/// each one's story holds only its own acknowledgement, never one narrated
/// before it was acknowledged or the other's.
#[test]
fn a_records_story_holds_its_own_acknowledgement_not_one_of_a_later_record_at_the_same_offset() {
    let mut l = common::scenario_file("unclean-election.json");
    l.run_to_end();
    let mut pairs = 0;
    for ledger in l.cluster.acked.iter() {
        let all: Vec<_> = ledger.iter().cloned().collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                if a.offset != b.offset || a.producer != b.producer {
                    continue;
                }
                pairs += 1;
                let acks = |id: u64| -> Vec<(u64, String)> {
                    story_of(&l, id)
                        .events
                        .into_iter()
                        .filter(|(_, t)| t.contains("got acks="))
                        .collect()
                };
                let (first, second) = (acks(a.id), acks(b.id));
                assert!(
                    first.iter().all(|e| !second.contains(e)),
                    "records {} and {} at offset {} share {first:?} / {second:?}",
                    a.id,
                    b.id,
                    a.offset
                );
                assert!(
                    first.len() <= 1 && second.len() <= 1,
                    "{first:?} {second:?}"
                );
            }
        }
    }
    assert!(
        pairs > 0,
        "the unclean election reuses an acknowledged offset"
    );
}
