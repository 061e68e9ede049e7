//! Kafka's `BrokerHeartbeatManagerTest` and `ClusterControlManagerTest`
//! (metadata/src/test/java/org/apache/kafka/controller/): sessions, fencing,
//! registration and the heartbeat state machine, against the controller.
//! Kafka's brokers 0..5 are our brokers 1..6.

use failover_lab::sim::io::Timer;

use super::harness::*;

fn session_world(brokers: u32, session_ms: u64) -> World {
    let assignment: Vec<Vec<u32>> = (1..=brokers).map(|b| vec![b]).collect();
    let mut w = World::new(brokers, &assignment, 1, false);
    w.config.broker_session_timeout_ms = session_ms;
    w
}

/// A broker the controller has never seen registers (no session to conflict with).
fn fresh_registration(w: &mut World, b: u32) -> u64 {
    w.controller.brokers[b as usize - 1].registered = false;
    w.register(b, true)
}

fn contact(w: &mut World, b: u32, at: u64) {
    w.now = at;
    w.heartbeat(b, false);
}

// Kafka: BrokerHeartbeatManagerTest.testHasValidSession
#[test]
fn a_session_is_valid_for_the_session_timeout_after_the_last_contact() {
    // Session timeout 10 ms; brokers 1 (Kafka 0) touched at 0, 2 and 3 at 5.
    let mut w = session_world(3, 10);
    contact(&mut w, 1, 0);
    contact(&mut w, 2, 5);
    contact(&mut w, 3, 5);
    w.now = 9;
    for b in 1..=3 {
        w.session_check(b);
        assert!(!w.fenced(b), "broker {b} at 9 ms");
    }
    w.now = 11;
    for b in 1..=3 {
        w.session_check(b);
    }
    assert!(w.fenced(1), "last contact 0 + 10 ms < 11 ms");
    assert!(!w.fenced(2) && !w.fenced(3));
}

// Kafka: BrokerHeartbeatManagerTest.testFindOneStaleBroker
#[test]
fn brokers_are_fenced_in_the_order_their_sessions_expire() {
    let mut w = session_world(3, 10);
    contact(&mut w, 1, 0);
    contact(&mut w, 2, 5);
    contact(&mut w, 3, 6);
    let check_all = |w: &mut World| {
        for b in 1..=3 {
            w.session_check(b);
        }
        (1..=3).filter(|b| w.fenced(*b)).collect::<Vec<_>>()
    };
    w.now = 6;
    assert!(check_all(&mut w).is_empty());
    w.now = 11;
    assert_eq!(check_all(&mut w), vec![1]);
    w.now = 31;
    assert_eq!(check_all(&mut w), vec![1, 2, 3]);
}

// Kafka: BrokerHeartbeatManagerTest.testNextCheckTimeNs
#[test]
fn the_next_session_check_is_due_at_the_oldest_contact_plus_the_session_timeout() {
    let mut w = session_world(2, 10);
    contact(&mut w, 1, 0);
    contact(&mut w, 2, 2);
    // A check before the deadline reschedules itself for last contact + timeout.
    w.now = 7;
    w.session_check(1);
    assert!(!w.fenced(1));
    assert_eq!(w.timers, vec![(10, Timer::SessionCheck { broker: 1 })]);
    w.session_check(2);
    assert_eq!(w.timers, vec![(12, Timer::SessionCheck { broker: 2 })]);
}

// Kafka: BrokerHeartbeatManagerTest.testCalculateNextBrokerState
#[test]
fn a_fenced_broker_that_has_caught_up_with_the_metadata_log_is_unfenced() {
    let mut w = session_world(1, 18_000);
    let epoch = fresh_registration(&mut w, 1);
    let reg_offset = w.controller.brokers[0].registration_offset;
    assert!(w.fenced(1));
    // Our heartbeat carries how many records the broker has replayed; Kafka's
    // carries the offset of the last one. Not yet past its registration record:
    let (fenced, _) = w.heartbeat_at_offset(1, epoch, reg_offset, false);
    assert!(fenced, "FENCED -> FENCED while behind");
    let (fenced, _) = w.heartbeat_full(1, epoch, reg_offset + 1, true, false);
    assert!(
        fenced,
        "FENCED -> FENCED while it asks to stay fenced (wantFence)"
    );
    let (fenced, _) = w.heartbeat_at_offset(1, epoch, reg_offset + 1, false);
    assert!(!fenced, "FENCED -> UNFENCED once caught up");
}

// Kafka: BrokerHeartbeatManagerTest.testCalculateNextBrokerState
#[test]
fn a_fenced_broker_that_wants_to_shut_down_may_shut_down_at_once() {
    let mut w = session_world(1, 18_000);
    let epoch = fresh_registration(&mut w, 1);
    let (fenced, shutdown_ok) = w.heartbeat_at_offset(1, epoch, 0, true);
    assert!(fenced && shutdown_ok, "FENCED -> SHUTDOWN_NOW");
}

// Kafka: BrokerHeartbeatManagerTest.testCalculateNextBrokerState
#[test]
fn an_unfenced_broker_leading_nothing_that_wants_to_shut_down_may_shut_down_at_once() {
    let mut w = World::new(2, &[vec![1, 2]], 1, false);
    let (_, shutdown_ok) = w.heartbeat(2, true);
    assert!(
        shutdown_ok,
        "UNFENCED -> SHUTDOWN_NOW when it leads nothing"
    );
}

// Kafka: BrokerHeartbeatManagerTest.testCalculateNextBrokerState
#[test]
fn an_unfenced_leader_that_wants_to_shut_down_first_enters_controlled_shutdown() {
    let mut w = World::new(2, &[vec![1, 2]], 1, false);
    let (fenced, shutdown_ok) = w.heartbeat(1, true);
    assert!(
        !fenced && !shutdown_ok,
        "UNFENCED -> CONTROLLED_SHUTDOWN while it led"
    );
    assert!(w.controller.brokers[0].in_controlled_shutdown);
    assert_eq!(w.reg(0).leader, Some(2), "leadership moved away");
}

// Kafka: ClusterControlManagerTest.testRegisterBrokerRecordVersion
#[test]
fn a_new_registration_is_fenced_and_not_in_controlled_shutdown() {
    let mut w = session_world(1, 18_000);
    let epoch = fresh_registration(&mut w, 1);
    let s = &w.controller.brokers[0];
    assert!(s.registered && s.fenced && !s.in_controlled_shutdown);
    assert_eq!(s.broker_epoch, epoch);
}

// Kafka: ClusterControlManagerTest.testReRegistrationAndBrokerEpoch[newIncarnationId=true]
#[test]
fn a_new_incarnation_gets_a_new_larger_broker_epoch() {
    let mut w = session_world(1, 18_000);
    let first = fresh_registration(&mut w, 1);
    // The old incarnation's session has expired by the time the new one registers.
    w.now = 20_000;
    let second = w.register(1, true);
    assert!(second > first, "{second} > {first}");
}

// Kafka: ClusterControlManagerTest.testReRegistrationAndBrokerEpoch[newIncarnationId=false]
// Fixed: every registration got a new broker epoch, and one from an incarnation already registered could be fenced "for a new incarnation"; the controller now amends the registration and keeps the epoch (ClusterControlManager.registerBroker)
#[test]
fn a_registration_from_the_same_incarnation_keeps_its_broker_epoch() {
    let mut w = session_world(1, 18_000);
    let first = fresh_registration(&mut w, 1);
    let incarnation = w.controller.brokers[0].incarnation;
    let again = w.register_incarnation(1, true, incarnation);
    assert_eq!(again, first, "the broker epoch remains");
    assert_eq!(w.controller.brokers[0].incarnation, incarnation);
    // Beyond Kafka's case: an unfenced ISR member that re-sends its
    // registration keeps its state and its ISR membership.
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    let epoch = w.epoch_of(2);
    let incarnation = w.controller.brokers[1].incarnation;
    let len = w.reg(0).clone();
    assert_eq!(w.register_incarnation(2, true, incarnation), epoch);
    assert!(!w.fenced(2), "the fencing state is kept");
    assert_eq!(w.reg(0), &len, "no ISR or leader change");
}

// Kafka: ClusterControlManagerTest.testReplay
#[test]
fn a_heartbeat_with_a_stale_broker_epoch_changes_nothing_and_is_told_fenced() {
    let mut w = session_world(1, 18_000);
    let epoch = fresh_registration(&mut w, 1);
    let (fenced, _) = w.heartbeat_at_offset(1, epoch + 1, u64::MAX / 2, false);
    assert!(fenced);
    assert!(w.fenced(1), "still fenced: the epoch did not match");
    let (fenced, _) = w.heartbeat_at_offset(1, epoch, u64::MAX / 2, false);
    assert!(!fenced);
    w.fence(1);
    assert!(w.fenced(1));
}

// Kafka: BrokerHeartbeatManagerTest.testCalculateNextBrokerState
#[test]
fn controlled_shutdown_is_granted_once_every_active_broker_has_replayed_the_leadership_move() {
    let mut w = World::new(3, &[vec![1, 2, 3]], 1, false);
    let (_, ok) = w.heartbeat(1, true);
    assert!(!ok, "UNFENCED -> CONTROLLED_SHUTDOWN");
    // Broker 2 replays everything; broker 3 has not reported any progress.
    w.heartbeat(2, false);
    let (_, ok) = w.heartbeat(1, true);
    assert!(
        !ok,
        "CONTROLLED_SHUTDOWN -> CONTROLLED_SHUTDOWN while an active broker lags"
    );
    w.fence(3);
    let (fenced, ok) = w.heartbeat(1, true);
    assert!(
        ok && fenced,
        "CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW once the laggard is no longer active"
    );
}
