//! KIP-966 eligible leader replicas (`eligible.leader.replicas.enable`): the
//! "last replica standing" case (vector T9) with and without ELR.

mod common;
use common::*;
use failover_lab::sim::trace::TraceKind;

fn t9(elr: bool) -> failover_lab::Lab {
    let json = format!(
        r#"{{
      "seed": 6, "brokers": 3,
      "config": {{"min.insync.replicas": 2, "sim.os.flush.interval.ms": 600000,
                 "eligible.leader.replicas.enable": {elr}}},
      "topics": [{{"name": "t", "partitions": 1, "replication_factor": 3}}],
      "clients": [{{"type": "producer", "id": "p", "topic": "t", "acks": "all", "records_per_sec": 20,
                   "config": {{"request.timeout.ms": 2000}}}}],
      "steps": [
        {{"at_ms": 4000, "isolate": 1}},
        {{"at_ms": 15000, "flush": 3}},
        {{"at_ms": 22000, "isolate": 2}},
        {{"at_ms": 40000, "power_loss": 3}},
        {{"at_ms": 42000, "restart": 3}},
        {{"at_ms": 45000, "heal": 1}},
        {{"at_ms": 45000, "heal": 2}}
      ],
      "run_until_ms": 80000
    }}"#
    );
    lab(&json)
}

#[test]
fn replicas_dropped_while_the_isr_is_below_min_isr_stay_eligible() {
    let mut l = t9(true);
    l.cluster.run_until(39_000);
    let r = reg(&l, 0);
    assert_eq!(r.isr, vec![3]);
    assert_eq!(
        r.elr,
        vec![2],
        "broker 2 left the ISR under min ISR: still eligible"
    );
    assert!(l.describe().contains("Isr: 3\tElr: 2\tLastKnownElr: "));
}

#[test]
fn elr_member_is_elected_after_the_last_isr_member_restarts_uncleanly_and_nothing_is_lost() {
    let mut l = t9(true);
    l.cluster.run_until(46_900);
    // Broker 3 restarted at 42 s, but its previous incarnation's session is
    // still valid: the controller turns the new registration away and keeps
    // broker 3 as the (silent) leader until the session expires.
    let r = reg(&l, 0);
    assert_eq!(r.leader, Some(3));
    assert_eq!(r.isr, vec![3]);
    assert_eq!(r.elr, vec![2]);
    let rejected = events(
        &l,
        |k| matches!(k, TraceKind::BrokerRegistrationRejected { broker: 3, error } if error == "DUPLICATE_BROKER_REGISTRATION"),
    );
    assert!(!rejected.is_empty());
    l.run_to_end();
    let r = reg(&l, 0);
    assert_eq!(r.leader, Some(2), "elected from the ELR");
    let from_elr = events(
        &l,
        |k| matches!(k, TraceKind::LeaderElected { election, .. } if election == "eligible_leader_replica"),
    );
    assert_eq!(from_elr.len(), 1);
    assert_eq!(l.report().acked_records_lost, 0);
    assert_eq!(
        digest(&l, 2, 0),
        digest(&l, 3, 0),
        "broker 3 recovered from broker 2"
    );
    assert_no_violations(&l);
}

#[test]
fn without_elr_the_same_faults_lose_committed_records() {
    let mut l = t9(false);
    l.run_to_end();
    assert_eq!(
        reg(&l, 0).leader,
        Some(3),
        "the lone ISR member is re-elected"
    );
    assert!(l.report().acked_records_lost > 0);
}

fn elr_scenario(enable: bool) -> failover_lab::Lab {
    let mut l = scenario_file("elr-avoids-unclean-election.json");
    let mut v = l.scenario.source.clone();
    v["config"]["eligible.leader.replicas.enable"] = serde_json::Value::Bool(enable);
    l = lab(&v.to_string());
    l.run_to_end();
    l
}

#[test]
fn with_elr_the_eligible_replica_leads_instead_of_an_unclean_election() {
    let l = elr_scenario(true);
    assert_eq!(l.cluster.controller.unclean_elections, 0);
    let e = events(
        &l,
        |k| matches!(k, TraceKind::LeaderElected { leader: Some(2), election, .. } if election == "eligible_leader_replica"),
    );
    assert_eq!(e.len(), 1);
    assert_eq!(l.report().acked_records_lost, 0);
    assert_no_violations(&l);
}

#[test]
fn without_elr_the_controller_elects_the_out_of_sync_replica_uncleanly_and_loses_records() {
    let l = elr_scenario(false);
    assert_eq!(l.cluster.controller.unclean_elections, 1);
    let e = events(
        &l,
        |k| matches!(k, TraceKind::LeaderElected { leader: Some(1), election, .. } if election == "unclean"),
    );
    assert_eq!(e.len(), 1);
    assert!(l.report().acked_records_lost > 0);
}
