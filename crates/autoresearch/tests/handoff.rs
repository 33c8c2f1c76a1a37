//! `maxHandoffChars` in whole runs: the proposal handoff keeps the whole objective and never
//! passes the limit (the history shortens), a spec whose handoff cannot fit is refused before
//! anything starts, and a report longer than the limit fails its round.

mod common;

use autoresearch_core as core;
use common::*;
use core::*;
use serde_json::{Value, json};

fn limited(max_handoff_chars: usize) -> Settings {
    Settings {
        max_handoff_chars,
        ..settings()
    }
}

#[test]
fn the_handoff_keeps_the_whole_objective_and_shortens_its_history_to_fit() {
    let objective = "o".repeat(spec::MAX_OBJECTIVE_CHARS);
    let policy = policy(json!({"objective": objective, "max_experiments": 12}));
    let max = 12_000;
    // Every round's hypothesis is long, so the history needs shortening.
    let proposer: Proposer = Box::new(|files, n| {
        files.insert("score.txt".into(), format!("{}\n", 20 + n));
        Ok(("h".repeat(1_000), format!("round {n}")))
    });
    let mut w = World::new(score_evaluator(), proposer);
    let mut run = Run::start(policy, RUN_ID, limited(max), NOW).unwrap();
    let r = w.drive(&mut run).unwrap();
    assert_eq!(r.status, Status::BudgetLimited);
    let sizes: Vec<(usize, usize)> = w
        .handoffs
        .iter()
        .map(|h| {
            let v: Value = serde_json::from_str(h).unwrap();
            assert_eq!(
                v["objective"],
                objective.as_str(),
                "the objective travels whole"
            );
            assert!(h.chars().count() <= max, "{}", h.chars().count());
            (
                v["ordinal"].as_u64().unwrap() as usize,
                v["history"].as_array().unwrap().len(),
            )
        })
        .collect();
    // The first rounds carry their whole history; later ones only what fits.
    assert_eq!(
        sizes,
        [
            (1, 1),
            (2, 2),
            (3, 3),
            (4, 4),
            (5, 5),
            (6, 6),
            (7, 7),
            (8, 8),
            (9, 5),
            (10, 5),
            (11, 5),
            (12, 5)
        ]
    );
}

#[test]
fn a_spec_whose_handoff_cannot_fit_is_refused_naming_the_field() {
    let policy = policy(json!({"objective": "o".repeat(3_000)}));
    let Err(e) = Run::start(policy.clone(), RUN_ID, limited(2_048), NOW) else {
        panic!("a handoff over the limit started");
    };
    expect_test::expect![[r#"invalid spec: objective: makes the proposal handoff 3548 characters before any history, and maxHandoffChars allows 2048 (shorten objective, constraints or mutable_globs, or raise maxHandoffChars) (got "oooooooooooooooooooooooooooooooooooooooooooooooooooooooooo…)"#]]
    .assert_eq(&e.to_string());
    // The limit is inclusive.
    assert!(Run::start(policy.clone(), RUN_ID, limited(3_547), NOW).is_err());
    assert!(Run::start(policy, RUN_ID, limited(3_548), NOW).is_ok());
}

#[test]
fn a_report_longer_than_the_limit_fails_its_round() {
    let proposer: Proposer = Box::new(|files, n| {
        files.insert("score.txt".into(), format!("{}\n", 9 - n));
        let summary = if n == 1 {
            "s".repeat(2_000)
        } else {
            "short".into()
        };
        Ok((format!("round {n}"), summary))
    });
    let mut w = World::new(score_evaluator(), proposer);
    let mut run = Run::start(
        policy(json!({"max_experiments": 2})),
        RUN_ID,
        limited(2_000),
        NOW,
    )
    .unwrap();
    let r = w.drive(&mut run).unwrap();
    let first = &r.experiments[1];
    assert_eq!(
        (first.state.as_str(), first.failure_code.as_deref()),
        ("failed", Some("proposer-report"))
    );
    expect_test::expect!["the report is 2037 characters as JSON and maxHandoffChars allows 2000: shorten hypothesis or summary"]
        .assert_eq(first.failure_message.as_deref().unwrap());
    assert_eq!(r.experiments[2].state, "accepted");
}
