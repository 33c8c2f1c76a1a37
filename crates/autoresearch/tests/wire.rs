//! The run's wire, generated: `packages/autoresearch/wire/run.json` holds each effect's fields
//! with their JSON shapes and the inputs that answer it ([`Effect::answers`]), and each input's
//! fields, as the types serialize them (`Effect`'s serde derive is what the driver gets;
//! `Input`'s is the shape `wire::input_from_json` reads, held to it below by reading every
//! example back). The effects are an example of every kind, with and without each optional
//! field, and every effect real runs against the fake driver perform (to the end with retention,
//! cancelled mid-candidate, resumed after a crash, recovering a dead host's process groups).
//! `src/wire.md`, the table in `wire`'s docs, is rendered from the same description. `packages/autoresearch/tests/wire.test.mjs` checks the JavaScript driver against
//! the JSON file; this test fails when either file is stale (`UPDATE_EXPECT=1 cargo test -p
//! autoresearch-core --test wire` rewrites them).
//!
//! The shapes are `dsh-wire-shape`'s.

mod common;

use autoresearch_core::protocol::{InputPath, ProposalReport, SqlValue, Statement};
use autoresearch_core::wire::{input_from_json, rows_from_json};
use autoresearch_core::*;
use common::{
    NOW, RUN_ID, World, failing_first, policy, score_evaluator, score_proposer, settings, start,
};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use wire_shape::{Rules, describe, render};

/// Objects whose keys are data, not fields (a statement's parameters, the evaluator's
/// environment), and tracker rows by column as SQLite returns them (the reader takes 0/1 for a
/// flag, a null for a default): their columns listed, their values left open.
const RULES: Rules = Rules {
    maps: &["persist.statements[].params", "runEvaluator.env"],
    open: &["loaded.rows", "retention.rows"],
    any: &[],
};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// Every kind of effect, each field with a value and, where a field may be absent, again
/// without (`Effect::kind`'s match is exhaustive; a new kind then needs an example here, or
/// comes from the real runs below).
fn effects() -> Vec<Effect> {
    let id = EffectId(7);
    let s = |text: &str| text.to_owned();
    let statement = Statement {
        sql: "UPDATE runs SET state = :state, n = :n, m = :m, x = :x WHERE run_id = :run_id",
        params: vec![
            ("state", SqlValue::Text(s("running"))),
            ("n", SqlValue::Integer(5)),
            ("m", SqlValue::Real(1.5)),
            ("x", SqlValue::Null),
        ],
    };
    let terminate = |known: bool| Effect::TerminateProcessGroup {
        attempt_id: s("a-1"),
        pid: known.then_some(41),
        pgid: known.then_some(41),
        start_time: known.then(|| s("123")),
        grace_ms: 2000,
        id,
    };
    vec![
        Effect::Discover {
            repository: Some(s("/repo")),
            id,
        },
        Effect::Discover {
            repository: None,
            id,
        },
        Effect::OpenTracker {
            path: s("/repo/.git/autoresearch/tracker.sqlite"),
            id,
        },
        Effect::Persist {
            statements: vec![statement],
            id,
        },
        Effect::LoadRun {
            run_id: s("r-1"),
            id,
        },
        Effect::CreateWorktree {
            path: s("/wt"),
            branch: Some(s("autoresearch/r")),
            start_commit: s(COMMIT),
            id,
        },
        Effect::CreateWorktree {
            path: s("/wt-1"),
            branch: None,
            start_commit: s(COMMIT),
            id,
        },
        Effect::HashInputs {
            worktree: s("/wt"),
            paths: vec![
                InputPath::Worktree(s("eval.mjs")),
                InputPath::External(s("/data/set.csv")),
            ],
            id,
        },
        Effect::RunEvaluator {
            attempt_id: s("a-1"),
            argv: vec![s("node"), s("eval.mjs")],
            worktree: s("/wt"),
            commit: s(COMMIT),
            cwd: s("/wt"),
            env: BTreeMap::from([(s("DSH_AUTORESEARCH_ATTEMPT"), s("a-1"))]),
            timeout_ms: 30_000,
            grace_ms: 2000,
            stdout_cap: 65_536,
            stderr_cap: 65_536,
            artifact_dir: s("/state/a-1"),
            state_dir: s("/state"),
            id,
        },
        Effect::RunProposer {
            worktree: s("/wt"),
            argv: Some(vec![s("node"), s("propose.mjs")]),
            handoff: s("{}"),
            timeout_ms: 30_000,
            grace_ms: 2000,
            state_dir: s("/state"),
            confined: false,
            id,
        },
        Effect::RunProposer {
            worktree: s("/wt"),
            argv: None,
            handoff: s("{}"),
            timeout_ms: 30_000,
            grace_ms: 2000,
            state_dir: s("/state"),
            confined: true,
            id,
        },
        Effect::ListChanges {
            worktree: s("/wt"),
            id,
        },
        Effect::Commit {
            worktree: s("/wt"),
            parent: s(COMMIT),
            paths: vec![s("score.txt")],
            message: s("candidate 1"),
            keep_ref: s("refs/autoresearch/r/candidate-1"),
            id,
        },
        Effect::CheckoutClean {
            worktree: s("/wt"),
            commit: s(COMMIT),
            id,
        },
        Effect::FastForwardRunBranch {
            branch: s("autoresearch/r"),
            from: s(COMMIT),
            to: s(COMMIT),
            id,
        },
        terminate(true),
        terminate(false),
        Effect::TerminateProposers { grace_ms: 2000, id },
        Effect::ProbeHost { host: s("{}"), id },
        Effect::Interrupt { target: id },
        Effect::ExportTsv {
            path: s("/state/r.tsv"),
            contents: s("commit\tmetric\n"),
            id,
        },
        Effect::LoadRetention { id },
        Effect::RemoveFiles {
            files: vec![s("/state/a-1/stdout.log")],
            dirs: vec![s("/state/a-1")],
            id,
        },
        Effect::RemoveWorktree {
            path: s("/wt-1"),
            id,
        },
        Effect::Report(Box::new(report())),
    ]
}

fn report() -> RunResult {
    RunResult {
        status: Status::BudgetLimited,
        run_id: "r".into(),
        branch: String::new(),
        worktree: String::new(),
        tracker: String::new(),
        persisted: true,
        metric_name: "score".into(),
        direction: "minimize",
        target: None,
        repeats: 1,
        baseline: None,
        best: None,
        counts: Default::default(),
        experiments: Vec::new(),
        artifacts: Vec::new(),
        blocker: None,
        warnings: Vec::new(),
        removed: Removed::default(),
        state: None,
    }
}

/// Every kind of input, as for [`effects`].
fn inputs() -> Vec<Input> {
    let id = EffectId(7);
    let s = |text: &str| text.to_owned();
    let config = || {
        vec![ConfigEntry {
            origin: s("file:/repo/.git/config"),
            key: s("core.bare"),
        }]
    };
    let worktree = || WorktreeFacts {
        anomalies: vec![Anomaly {
            kind: AnomalyKind::NestedGit,
            path: s("sub/.git"),
        }],
        git_config: config(),
    };
    let outcome = |exited: bool| ProcessOutcome {
        exit_code: exited.then_some(0),
        signal: (!exited).then(|| s("SIGKILL")),
        timed_out: !exited,
        cancelled: !exited,
        quiescent: true,
        stdout_tail: s("{\"score\": 9}\n"),
        stdout_truncated: !exited,
        stderr_tail: s("warning\n"),
        artifacts: vec![ArtifactFact {
            kind: s("stdout"),
            location: s("/state/a-1/stdout.log"),
            size_bytes: 12,
            sha256: s("ab"),
            truncated: false,
        }],
        containment: s("cgroup"),
        worktree: worktree(),
    };
    let stored = rows_from_json::<StoredRows>(&json!({
        "run": {"run_id": "r", "repository_id": "x", "run_tag": "t", "branch": "b",
            "worktree": "/wt", "start_commit": COMMIT, "policy_json": "{}",
            "policy_sha256": "ab", "state": "running"},
        "experiments": [{"experiment_id": "e", "ordinal": 0, "kind": "baseline",
            "state": "accepted", "parent_commit": COMMIT}],
        "attempts": [{"attempt_id": "a", "experiment_id": "e", "ordinal": 0, "state": "running"}],
        "artifacts": [{"artifact_id": "f", "experiment_id": "e", "attempt_id": "a",
            "kind": "stdout", "location": "/state/a/stdout.log", "sha256": "ab"}],
    }))
    .unwrap();
    let retention = rows_from_json::<RetentionRows>(&json!({
        "runs": [{"run_id": "r", "state": "completed", "worktree": "/wt"}],
        "artifacts": [{"artifact_id": "f", "run_id": "r", "attempt_id": "a",
            "location": "/state/a/stdout.log"}],
    }))
    .unwrap();
    let discovered = |host: Option<String>| Input::Discovered {
        id,
        facts: RepoFacts {
            toplevel: s("/repo"),
            git_common_dir: s("/repo/.git"),
            head: s(COMMIT),
            git_config: config(),
            host,
            other_live_runs: 1,
        },
    };
    vec![
        Input::Cancel { reason: s("stop") },
        discovered(Some(s("{}"))),
        discovered(None),
        Input::Done { id },
        Input::Persisted {
            id,
            changes: vec![1, 0],
        },
        Input::Loaded {
            id,
            rows: Some(Box::new(stored)),
        },
        Input::Loaded { id, rows: None },
        Input::Retention {
            id,
            rows: retention,
        },
        Input::Hashed {
            id,
            files: vec![
                HashedFile {
                    path: s("eval.mjs"),
                    sha256: Some(s("ab")),
                },
                HashedFile {
                    path: s("gone"),
                    sha256: None,
                },
            ],
        },
        Input::Spawned {
            id,
            process: ProcessIdentity {
                pid: 41,
                pgid: 41,
                start_time: Some(s("123")),
            },
        },
        Input::Spawned {
            id,
            process: ProcessIdentity {
                pid: 41,
                pgid: 41,
                start_time: None,
            },
        },
        Input::Exited {
            id,
            outcome: outcome(true),
        },
        Input::Exited {
            id,
            outcome: outcome(false),
        },
        Input::ProposerExited {
            id,
            outcome: outcome(true),
        },
        Input::ProposerExited {
            id,
            outcome: outcome(false),
        },
        Input::Proposed {
            id,
            report: ProposalReport {
                hypothesis: s("lower by 2"),
                summary: s("edited score.txt"),
            },
        },
        Input::Changes {
            id,
            porcelain_z: s(" M score.txt\0"),
            worktree: worktree(),
        },
        Input::Committed {
            id,
            commit: s(COMMIT),
        },
        Input::HostProbed {
            id,
            alive: Some(true),
        },
        Input::HostProbed { id, alive: None },
        Input::Terminated { id, gone: true },
        Input::Failed {
            id,
            error: s("no such file"),
        },
    ]
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
    all.push((
        autoresearch_core::wire::effect_json(&interrupt),
        interrupt.answers(),
    ));
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
fn the_wire_file_and_the_docs_table_are_generated_from_the_types_and_the_table() {
    let effects = effects();
    let inputs = inputs();
    for effect in &effects {
        let value = serde_json::to_value(effect).unwrap();
        assert_eq!(value["kind"], effect.kind(), "Effect::kind is serde's tag");
        assert_eq!(
            value.get("id").and_then(Value::as_u64),
            effect.id().map(|i| i.0),
            "{}: `id` is there exactly when an answer names it",
            effect.kind()
        );
    }
    for input in &inputs {
        let value = serde_json::to_value(input).unwrap();
        assert_eq!(value["type"], input.kind(), "Input::kind is serde's tag");
        // The derived shape is what the reader reads: each example reads back as itself.
        assert_eq!(input_from_json(&value).as_ref(), Ok(input), "{value}");
    }
    // Each kind's answers, in the examples' order; the real runs' effects take the same.
    let mut takes: Vec<(&str, &[&str])> = Vec::new();
    for effect in &effects {
        if !takes.iter().any(|(kind, _)| *kind == effect.kind()) {
            takes.push((effect.kind(), effect.answers()));
        }
    }
    let real = effects_of_real_runs();
    for (effect, answers) in &real {
        let kind = effect["kind"].as_str().unwrap();
        let listed = takes.iter().find(|(k, _)| *k == kind);
        assert_eq!(
            listed.map(|(_, a)| *a),
            Some(*answers),
            "{kind} has an example"
        );
    }
    let input_kinds: BTreeSet<&str> = inputs.iter().map(Input::kind).collect();
    let answering: BTreeSet<&str> = takes
        .iter()
        .flat_map(|(_, answers)| answers.iter().copied())
        .chain(["cancel"])
        .collect();
    assert_eq!(
        answering, input_kinds,
        "every input answers some effect (cancel none), and has an example"
    );

    let examples = effects.iter().map(|e| json!(e));
    let effect_shapes = describe(
        examples.chain(real.into_iter().map(|(e, _)| e)),
        "kind",
        RULES,
    );
    let input_shapes = describe(inputs.iter().map(|i| json!(i)), "type", RULES);
    let effects = takes.iter().map(|(kind, answers)| {
        let fields = effect_shapes[*kind].clone();
        ((*kind).to_owned(), fields, json!(answers))
    });
    expect_test::expect_file!["../../../packages/autoresearch/wire/run.json"].assert_eq(
        &wire_shape::wire_file(
            "autoresearch-core Run",
            "crates/autoresearch/tests/wire.rs",
            "effects",
            effects,
            input_shapes.clone(),
        ),
    );

    let mut md = String::from("| kind | fields | answered by |\n|---|---|---|\n");
    for (kind, answers) in &takes {
        let taken: Vec<String> = answers.iter().map(|a| format!("`{a}`")).collect();
        let taken = if taken.is_empty() {
            "— (no `id`)".to_owned()
        } else {
            taken.join(", ")
        };
        md += &format!(
            "| `{kind}` | {} | {taken} |\n",
            render(effect_shapes[*kind].as_object().unwrap())
        );
    }
    md += "\nInputs (each but `cancel` names the effect's `id`):\n\n| type | fields |\n|---|---|\n";
    for (kind, fields) in &input_shapes {
        md += &format!("| `{kind}` | {} |\n", render(fields.as_object().unwrap()));
    }
    expect_test::expect_file!["../src/wire.md"].assert_eq(&md);
}

#[test]
fn the_run_refuses_an_answer_outside_the_table() {
    let mut run = start(policy(json!({})));
    let first = run.poll().unwrap();
    assert_eq!(first.kind(), "discover");
    let id = first.id().unwrap();
    let refused = run.handle(Input::Done { id }, 2).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "effect 1 (discover) expects discovered or failed, not done"
    );
    // Still outstanding, and answerable.
    assert_eq!(
        run.handle(
            Input::Failed {
                id,
                error: "no git".into()
            },
            3
        ),
        Ok(())
    );
}
