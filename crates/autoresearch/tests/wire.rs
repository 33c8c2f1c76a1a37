//! The run's wire, generated: `packages/autoresearch/wire/run.json` holds each effect's fields as
//! `wire::effect_json` writes them (gathered from real runs against the fake driver: to the end
//! with retention, cancelled mid-candidate, resumed after a crash, recovering a dead host's
//! process groups), the answers it takes ([`Effect::answers`], which every test's fake driver
//! also checks), and each answer's fields as `wire::input_from_json` reads them. The driver
//! (`lib/driver.js`) is checked against the file by `packages/autoresearch/tests/wire.test.mjs`;
//! this test fails when the file is stale (`UPDATE_EXPECT=1` rewrites it).

mod common;

use autoresearch_core as core;
use common::*;
use core::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// One answer of every `type`, with every field the wire reads.
fn answer_examples() -> Vec<Value> {
    let outcome = json!({
        "exitCode": 0, "signal": null, "timedOut": false, "cancelled": false, "quiescent": true,
        "stdoutTail": "METRIC score=1", "stdoutTruncated": false, "stderrTail": "",
        "artifacts": [], "containment": "process-scan", "worktree": { "anomalies": [], "gitConfig": [] },
    });
    vec![
        json!({ "type": "cancel", "reason": "job_kill" }),
        json!({ "type": "discovered", "id": 1, "facts": {
            "toplevel": "/r", "gitCommonDir": "/r/.git", "head": "0".repeat(40), "gitConfig": [],
            "host": null, "otherLiveRuns": 0 } }),
        json!({ "type": "done", "id": 1 }),
        json!({ "type": "persisted", "id": 1, "changes": [1] }),
        json!({ "type": "loaded", "id": 1, "rows": null }),
        json!({ "type": "retention", "id": 1, "rows": { "runs": [], "artifacts": [] } }),
        json!({ "type": "hashed", "id": 1, "files": [{ "path": "a", "sha256": null }] }),
        json!({ "type": "spawned", "id": 1, "process": { "pid": 2, "pgid": 2, "startTime": "9" } }),
        json!({ "type": "exited", "id": 1, "outcome": outcome }),
        json!({ "type": "proposerExited", "id": 1, "outcome": outcome }),
        json!({ "type": "proposed", "id": 1, "report": { "hypothesis": "h", "summary": "s" } }),
        json!({ "type": "changes", "id": 1, "porcelainZ": "", "worktree": { "anomalies": [], "gitConfig": [] } }),
        json!({ "type": "committed", "id": 1, "commit": "0".repeat(40) }),
        json!({ "type": "hostProbed", "id": 1, "alive": false }),
        json!({ "type": "terminated", "id": 1, "gone": true }),
        json!({ "type": "failed", "id": 1, "error": "boom" }),
    ]
}

/// The fields of an effect or answer on the wire, without `kind`/`type` and `id`.
fn fields(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !["kind", "type", "id"].contains(&k.as_str()))
        .cloned()
        .collect()
}

/// Every effect real runs against the fake driver perform, and the answers it takes.
fn effects_of_real_runs() -> Vec<(Value, &'static [&'static str])> {
    let mut all = Vec::new();
    // To the end, with failed attempts' artifacts and ended worktrees removed.
    let mut settings = settings();
    settings.retention.retain_failed_artifacts = false;
    settings.retention.retain_worktrees = false;
    // The first candidate prints no metric (its attempt fails and its artifacts go).
    let mut w = World::new(score_evaluator(), failing_first());
    w.write_artifacts = true;
    let mut run = Run::start(policy(json!({"max_experiments": 2})), RUN_ID, settings, NOW).unwrap();
    w.drive(&mut run).expect("report");
    all.append(&mut w.wire);
    // Cancelled mid-candidate: the evaluation is interrupted.
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 1.0]));
    w.cancel_during_eval = Some(3);
    let mut run = start(policy(json!({})));
    assert!(w.drive(&mut run).is_none());
    run.handle(
        Input::Cancel {
            reason: "job_kill".into(),
        },
        NOW,
    )
    .unwrap();
    let Some(Effect::Interrupt { target }) = run.poll() else {
        panic!("an interrupt")
    };
    let interrupt = Effect::Interrupt { target };
    all.push((wire::effect_json(&interrupt), interrupt.answers()));
    let cancelled = ProcessOutcome {
        cancelled: true,
        quiescent: true,
        ..Default::default()
    };
    run.handle(
        Input::Exited {
            id: target,
            outcome: cancelled,
        },
        NOW,
    )
    .unwrap();
    w.drive(&mut run).expect("report");
    all.append(&mut w.wire);
    // Crashed mid-candidate on a host now known dead, then resumed: recovery.
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    w.crash_after = Some(22);
    assert!(w.drive(&mut run).is_none());
    w.host_alive = Some(false);
    w.crash_after = None;
    let mut run = Run::resume(
        RUN_ID,
        Map::new(),
        None,
        common::settings(),
        NOW + 1_000_000,
    )
    .unwrap();
    w.drive(&mut run).expect("report");
    all.append(&mut w.wire);
    all
}

#[test]
fn the_wire_file_is_generated_from_real_runs_and_the_tables() {
    let mut answers = Map::new();
    for example in answer_examples() {
        let input = wire::input_from_json(&example).unwrap_or_else(|e| panic!("{example}: {e}"));
        assert_eq!(
            example["type"],
            input.kind(),
            "Input::kind is the wire's type"
        );
        answers.insert(input.kind().to_owned(), json!(fields(&example)));
    }
    let mut effects: Map<String, Value> = Map::new();
    for (effect, takes) in effects_of_real_runs() {
        let kind = effect["kind"].as_str().unwrap().to_owned();
        for answer in takes {
            assert!(answers.contains_key(*answer), "{answer} has an example");
        }
        let entry = effects
            .entry(kind)
            .or_insert_with(|| json!({ "fields": [], "answers": takes }));
        let mut known: BTreeSet<String> = serde_json::from_value(entry["fields"].clone()).unwrap();
        known.extend(fields(&effect));
        entry["fields"] = json!(known);
    }
    // The report is the run's end, never performed by the fake driver's `perform`.
    effects.insert(
        "report".into(),
        json!({ "fields": ["status"], "answers": [] }),
    );
    let wire = json!({
        "machine": "autoresearch-core Run (wire::effect_json, wire::input_from_json)",
        "generatedBy": "crates/autoresearch/tests/wire.rs",
        "effects": effects,
        "answers": answers,
    });
    expect_test::expect_file!["../../../packages/autoresearch/wire/run.json"].assert_eq(&format!(
        "{}\n",
        serde_json::to_string_pretty(&wire).unwrap()
    ));
}
