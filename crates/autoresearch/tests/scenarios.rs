//! Scenario tests: the run core against the fake driver in `common` (real SQLite, fake git).
//! Tests named `bug_N_…` pin the fix of bug N from the original's section 11.1.

mod common;

use autoresearch_core as core;
use common::*;
use core::jcs::sha256_hex;
use core::*;
use serde_json::json;

fn run_to_end(world: &mut World, policy: RunPolicy) -> RunResult {
    let mut run = start(policy);
    world.drive(&mut run).expect("report")
}

fn resume(world: &mut World, given: serde_json::Value, settings: Settings) -> RunResult {
    let given = given.as_object().cloned().unwrap_or_default();
    let mut run = Run::resume(RUN_ID, given, None, settings, NOW + 1_000_000).unwrap();
    world.crash_after = None;
    world.drive(&mut run).expect("report")
}

#[test]
fn keeps_strict_improvements_and_rejects_ties_and_regressions() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 9.0, 8.0]));
    let r = run_to_end(&mut w, policy(json!({})));
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.baseline.as_ref().unwrap().metric, 10.0);
    let best = r.best.clone().unwrap();
    assert_eq!(best.metric, 8.0);
    assert_eq!(best.experiment_id, format!("{RUN_ID}-candidate-1"));
    let states: Vec<&str> = r.experiments.iter().map(|e| e.state.as_str()).collect();
    assert_eq!(states, ["accepted", "accepted", "rejected", "rejected"]);
    assert_eq!(
        (
            r.counts.experiments_started,
            r.counts.accepted,
            r.counts.rejected
        ),
        (3, 1, 2)
    );
    // Only the run branch moved, to the accepted candidate; the caller's branch is untouched.
    assert_eq!(w.run_branch.as_ref().unwrap().1, best.commit);
    assert_eq!(w.caller_branch, ("main".to_owned(), w.start.clone()));
    assert_eq!(
        w.log
            .iter()
            .filter(|l| l.starts_with("fast-forward"))
            .count(),
        1
    );
    // Durable state agrees.
    assert_eq!(
        w.scalar::<String>("SELECT state FROM runs"),
        "budget-limited"
    );
    assert_eq!(w.scalar::<f64>("SELECT best_metric FROM runs"), 8.0);
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        0
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM experiments WHERE hypothesis IS NOT NULL"),
        3
    );
    let tsv = w.tsv.clone().unwrap();
    assert_eq!(tsv.lines().count(), 5);
    assert!(
        tsv.lines()
            .nth(2)
            .unwrap()
            .contains("\taccepted\t8\taccept\t"),
        "{tsv}"
    );
}

#[test]
fn transcript_of_one_accepted_round() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![7.0]));
    let r = run_to_end(&mut w, policy(json!({"max_experiments": 1})));
    assert_eq!(r.status, Status::BudgetLimited);
    let expected = [
        "discover",
        "open-tracker",
        "load-retention",
        "persist [INSERT INTO locks; INSERT INTO runs; UPDATE runs SET]",
        "create-worktree autoresearch/exp-1-0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
        "hash [\"eval.mjs\"]",
        "persist [UPDATE runs SET; UPDATE runs SET→baseline-running; INSERT INTO experiments→running; INSERT INTO attempts]",
        "evaluate [\"node\", \"eval.mjs\"] 0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9-baseline-attempt-1",
        "persist [UPDATE attempts SET]",
        "persist [UPDATE attempts SET→exited; UPDATE experiments SET→evaluated]",
        "checkout-clean",
        "persist [UPDATE experiments SET→accepted; UPDATE runs SET; UPDATE runs SET→ready]",
        "persist [INSERT INTO experiments→proposing; UPDATE runs SET→proposing]",
        "propose",
        "list-changes",
        "persist [UPDATE experiments SET; UPDATE runs SET→candidate-prepared]",
        "commit [\"score.txt\"]",
        "persist [UPDATE experiments SET]",
        "hash [\"eval.mjs\"]",
        "persist [UPDATE runs SET→candidate-running; UPDATE experiments SET→running; INSERT INTO attempts]",
        "evaluate",
        "persist [UPDATE attempts SET]",
        "persist [UPDATE attempts SET→exited; UPDATE experiments SET→evaluated; UPDATE runs SET→deciding]",
        "checkout-clean",
        "fast-forward",
        "persist [UPDATE experiments SET→accepted; UPDATE runs SET; UPDATE runs SET; UPDATE runs SET→ready]",
        "persist [UPDATE runs SET→budget-limited; UPDATE locks SET]",
        "export-tsv",
        "load-retention",
        "report budget-limited",
    ];
    assert_eq!(w.log.len(), expected.len(), "{:#?}", w.log);
    for (got, want) in w.log.iter().zip(expected) {
        assert!(
            got.starts_with(want),
            "got {got:?}, want prefix {want:?}\n{:#?}",
            w.log
        );
    }
}

#[test]
fn target_is_inclusive_and_checked_after_the_baseline() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![4.0, 1.0]));
    let r = run_to_end(&mut w, policy(json!({"target": 4})));
    assert_eq!(r.status, Status::TargetReached);
    assert_eq!(r.counts.experiments_started, 1);
    assert_eq!(r.best.unwrap().metric, 4.0);

    let mut w = World::new(score_evaluator(), score_proposer(vec![]));
    let r = run_to_end(&mut w, policy(json!({"target": 10})));
    assert_eq!(r.status, Status::TargetReached);
    assert_eq!(r.counts.experiments_started, 0);
    assert_eq!(w.rounds, 0);
}

#[test]
fn maximize_keeps_higher_metrics() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![11.0, 10.5, 12.0]));
    let r = run_to_end(&mut w, policy(json!({"metric_direction": "maximize"})));
    assert_eq!(r.best.unwrap().metric, 12.0);
    assert_eq!(r.counts.accepted, 2);
    assert_eq!(r.counts.rejected, 1);
}

#[test]
fn a_failed_baseline_blocks_the_run_and_releases_the_lock() {
    let mut w = World::new(
        Box::new(|_, _| ProcessOutcome {
            exit_code: Some(2),
            quiescent: true,
            stderr_tail: "boom".into(),
            ..Default::default()
        }),
        score_proposer(vec![]),
    );
    let r = run_to_end(&mut w, policy(json!({})));
    assert_eq!(r.status, Status::BaselineBlocked);
    assert_eq!(r.blocker.as_ref().unwrap().code, "exit");
    assert!(r.blocker.unwrap().message.contains("boom"));
    assert_eq!(
        w.scalar::<String>("SELECT state FROM runs"),
        "baseline-blocked"
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        0
    );
    assert_eq!(w.rounds, 0, "no proposal before a baseline exists");
}

#[test]
fn touching_the_evaluator_or_unlisted_paths_is_rejected_with_evidence_whatever_the_metric() {
    let proposer: Proposer = Box::new(|files, n| {
        files.insert("score.txt".into(), "0".into());
        match n {
            1 => files.insert("eval.mjs".into(), "print 0".into()),
            _ => files.insert("README.md".into(), "changed".into()),
        };
        Ok(("cheat".into(), "cheat".into()))
    });
    let mut w = World::new(score_evaluator(), proposer);
    let r = run_to_end(
        &mut w,
        policy(json!({"max_experiments": 2, "max_consecutive_failures": 5})),
    );
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.counts.policy_violations, 2);
    assert_eq!(r.best.unwrap().metric, 10.0);
    assert_eq!(w.evaluations, 1, "violating candidates are never evaluated");
    let evidence: String = w.scalar("SELECT evidence_json FROM experiments WHERE ordinal = 1");
    assert!(
        evidence.contains("protected-evaluator-input: eval.mjs"),
        "{evidence}"
    );
    let evidence: String = w.scalar("SELECT evidence_json FROM experiments WHERE ordinal = 2");
    assert!(
        evidence.contains("outside-mutable-globs: README.md"),
        "{evidence}"
    );
    assert_eq!(
        w.files, w.commits[&w.start],
        "the worktree is restored to the best commit"
    );
}

#[test]
fn failed_rounds_are_charged_and_the_run_continues_until_the_policy_stops_it() {
    let proposer: Proposer = Box::new(|files, n| match n {
        1 => Err("agent crashed".into()),
        2 => Ok(("nothing".into(), "no edit".into())),
        _ => {
            files.insert("score.txt".into(), "not a number".into());
            Ok(("break".into(), "break".into()))
        }
    });
    let mut w = World::new(score_evaluator(), proposer);
    let r = run_to_end(
        &mut w,
        policy(json!({"max_experiments": 10, "max_consecutive_failures": 3})),
    );
    assert_eq!(r.status, Status::RoundFailed);
    let codes: Vec<_> = r
        .experiments
        .iter()
        .skip(1)
        .map(|e| e.failure_code.clone().unwrap())
        .collect();
    assert_eq!(codes, ["proposer-failed", "candidate-empty", "exit"]);
    assert_eq!(r.counts.experiments_started, 3);
    assert_eq!(w.scalar::<i64>("SELECT consecutive_failures FROM runs"), 3);

    // A success in between resets the consecutive count; the budget still bounds the run.
    let proposer: Proposer = Box::new(|files, n| {
        if n % 2 == 1 {
            return Err("flaky".into());
        }
        files.insert("score.txt".into(), format!("{}", 10 - n));
        Ok(("h".into(), "s".into()))
    });
    let mut w = World::new(score_evaluator(), proposer);
    let r = run_to_end(
        &mut w,
        policy(json!({"max_experiments": 6, "max_consecutive_failures": 2})),
    );
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!((r.counts.failed, r.counts.accepted), (3, 3));
}

#[test]
fn bug_1_arguments_are_passed_exactly_with_duplicates() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![]));
    let p = policy(
        json!({"evaluation": {"command": "node", "args": ["eval.mjs", "--seed", "1", "--trials", "1", " spaced "]}, "max_experiments": 1}),
    );
    let _ = run_to_end(&mut w, p);
    let line = w.log.iter().find(|l| l.starts_with("evaluate")).unwrap();
    assert!(
        line.contains(r#"["node", "eval.mjs", "--seed", "1", "--trials", "1", " spaced "]"#),
        "{line}"
    );
    let argv: String = w.scalar("SELECT argv_json FROM attempts LIMIT 1");
    assert_eq!(
        argv,
        r#"["node","eval.mjs","--seed","1","--trials","1"," spaced "]"#
    );
}

#[test]
fn bug_2_a_dataset_label_does_not_break_provenance() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![5.0]));
    w.commits
        .get_mut(&w.start.clone())
        .unwrap()
        .insert("data/train.csv".into(), "1,2".into());
    let p = policy(
        json!({"provenance": {"dataset": "data/train.csv", "evaluator": "v1 scorer"}, "max_experiments": 1}),
    );
    let r = run_to_end(&mut w, p);
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.counts.accepted, 1, "{:?}", r.experiments);
    let prov: String = w.scalar("SELECT provenance_json FROM runs");
    assert!(
        prov.contains("\"data/train.csv\":\""),
        "the dataset file is hashed: {prov}"
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(DISTINCT provenance_sha256) FROM attempts"),
        1
    );
}

#[test]
fn bug_2_a_candidate_editing_the_dataset_is_a_violation() {
    let proposer: Proposer = Box::new(|files, _| {
        files.insert("data/train.csv".into(), "0,0".into());
        files.insert("score.txt".into(), "1".into());
        Ok(("h".into(), "s".into()))
    });
    let mut w = World::new(score_evaluator(), proposer);
    w.commits
        .get_mut(&w.start.clone())
        .unwrap()
        .insert("data/train.csv".into(), "1,2".into());
    let p = policy(
        json!({"mutable_globs": ["score.txt", "data/**"], "provenance": {"dataset": "data/train.csv"}, "max_experiments": 1}),
    );
    let r = run_to_end(&mut w, p);
    assert_eq!(r.counts.policy_violations, 1);
}

#[test]
fn bug_3_environment_values_in_the_metric_line_do_not_corrupt_it() {
    let evaluator: Evaluator = Box::new(|files, _| {
        let v = files["score.txt"].trim().to_owned();
        ProcessOutcome {
            exit_code: Some(0),
            quiescent: true,
            stdout_tail: format!("{{\"score\": {v}}}"),
            ..Default::default()
        }
    });
    let proposer: Proposer = Box::new(|files, _| {
        files.insert("score.txt".into(), "0.5".into());
        Ok(("h".into(), "s".into()))
    });
    let mut w = World::new(evaluator, proposer);
    let p = policy(
        json!({"environment": {"CUDA_VISIBLE_DEVICES": "0", "TOKEN_X": "5"}, "max_experiments": 1}),
    );
    let r = run_to_end(&mut w, p);
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.best.unwrap().metric, 0.5);
    // Durable attempt rows hold value hashes, never the values.
    let env: String = w.scalar("SELECT env_json FROM attempts LIMIT 1");
    assert!(env.contains("sha256:") && !env.contains("\"0\""), "{env}");
    let policy: String = w.scalar("SELECT policy_json FROM runs");
    let sealed = serde_json::from_str::<serde_json::Value>(&policy).unwrap()["environment"].clone();
    assert_eq!(
        sealed,
        json!({
            "CUDA_VISIBLE_DEVICES": {"sha256": sha256_hex(b"0")},
            "TOKEN_X": {"sha256": sha256_hex(b"5")},
        })
    );
}

#[test]
fn bug_3_recovery_in_deciding_uses_the_stored_raw_metric() {
    // Crash right after the candidate's outcome became durable (before the checkout).
    let mut w = World::new(score_evaluator(), score_proposer(vec![0.0]));
    let mut run = start(policy(
        json!({"max_experiments": 1, "environment": {"X": "0"}}),
    ));
    let idx = {
        let mut probe = World::new(score_evaluator(), score_proposer(vec![0.0]));
        let mut r2 = start(policy(
            json!({"max_experiments": 1, "environment": {"X": "0"}}),
        ));
        probe.drive(&mut r2);
        probe
            .log
            .iter()
            .position(|l| l.contains("→deciding"))
            .unwrap()
            + 1
    };
    w.crash_after = Some(idx);
    assert!(w.drive(&mut run).is_none());
    assert_eq!(w.scalar::<String>("SELECT state FROM runs"), "deciding");
    // Only the value's hash is stored: a resume without it, or with another value, is refused
    // before anything is written.
    let refused = resume(&mut w, json!({}), settings());
    let blocker = refused.blocker.unwrap();
    assert_eq!(
        (blocker.code.as_str(), blocker.evidence),
        ("environment-values-needed", vec!["X".to_owned()])
    );
    let wrong = resume(&mut w, json!({"environment": {"X": "1"}}), settings());
    assert_eq!(wrong.blocker.unwrap().code, "policy-mismatch");
    assert_eq!(w.scalar::<String>("SELECT state FROM runs"), "deciding");
    let r = resume(&mut w, json!({"environment": {"X": "0"}}), settings());
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.best.unwrap().metric, 0.0);
    assert_eq!(
        w.evaluations, 2,
        "no re-evaluation: the stored metric decides"
    );
}

#[test]
fn bug_4_the_result_stays_bounded_for_a_hundred_candidates() {
    let mut w = World::new(
        score_evaluator(),
        Box::new(|files, n| {
            files.insert(
                "score.txt".into(),
                format!("{}", 100.0 - f64::from(n) / 3.0),
            );
            Ok(("a long hypothesis ".repeat(20), "summary".into()))
        }),
    );
    let r = run_to_end(&mut w, policy(json!({"max_experiments": 100})));
    assert_eq!(r.counts.experiments_started, 100);
    let v = r.to_json(16_384);
    assert!(v.to_string().chars().count() <= 16_384);
    assert_eq!(v["experiments_total"], 101);
    assert_eq!(v["artifacts_total"], 0);
    assert!(!v["experiments"].as_array().unwrap().is_empty());
    assert_eq!(
        v["experiments"].as_array().unwrap().last().unwrap()["ordinal"],
        100
    );
    let small = r.to_json(2_000);
    assert!(
        small.to_string().chars().count() <= 2_000,
        "{}",
        small.to_string().len()
    );
}

#[test]
fn bug_5_a_resume_with_a_changed_policy_is_refused_without_writing() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![9.0, 8.0]));
    let mut run = start(policy(json!({})));
    w.crash_after = Some(20);
    assert!(w.drive(&mut run).is_none());
    let dump = |w: &World| -> String {
        w.scalar("SELECT group_concat(state || updated_at, ',') FROM (SELECT state, updated_at FROM runs UNION ALL SELECT state, updated_at FROM experiments UNION ALL SELECT state, started_at FROM attempts)")
    };
    let before = dump(&w);
    let r = resume(
        &mut w,
        json!({"metric_name": "latency", "objective": "lower the score"}),
        settings(),
    );
    assert_eq!(r.status, Status::Blocked);
    assert!(!r.persisted);
    let b = r.blocker.unwrap();
    assert_eq!(b.code, "policy-mismatch");
    assert_eq!(b.evidence, ["metric_name"]);
    assert_eq!(dump(&w), before, "nothing was written");
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        1,
        "the lock is untouched"
    );
    // The same run resumes fine when the spec agrees (or omits the policy).
    let r = resume(
        &mut w,
        json!({"objective": "lower the score", "max_experiments": 3}),
        settings(),
    );
    assert_eq!(r.status, Status::BudgetLimited);
}

#[test]
fn bug_6_evaluator_byproducts_never_break_acceptance() {
    let evaluator: Evaluator = Box::new(|files, _| {
        let v = files["score.txt"].trim().to_owned();
        files.insert("results.json".into(), "{}".into());
        files.insert("src/generated.txt".into(), "by the evaluator".into());
        files.insert("__pycache__/m.cache".into(), "bytes".into());
        ProcessOutcome {
            exit_code: Some(0),
            quiescent: true,
            stdout_tail: format!("{{\"score\": {v}}}"),
            ..Default::default()
        }
    });
    let mut w = World::new(evaluator, score_proposer(vec![9.0, 8.0, 7.0]));
    let r = run_to_end(&mut w, policy(json!({})));
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.counts.accepted, 3, "{:?}", r.experiments);
    let paths: Vec<String> = (1..=3)
        .map(|i| {
            w.scalar(&format!(
                "SELECT changed_paths_json FROM experiments WHERE ordinal = {i}"
            ))
        })
        .collect();
    assert!(paths.iter().all(|p| p == r#"["score.txt"]"#), "{paths:?}");
    let best = r.best.unwrap();
    assert!(!w.commits[&best.commit].contains_key("results.json"));
}

#[test]
fn bug_7_cancelling_mid_candidate_restores_the_best_and_ends_cancelled() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 1.0]));
    w.cancel_during_eval = Some(3);
    let mut run = start(policy(json!({})));
    assert!(
        w.drive(&mut run).is_none(),
        "held in the second candidate's evaluation"
    );
    assert_eq!(run.state(), RunState::CandidateRunning);
    run.handle(
        Input::Cancel {
            reason: "job_kill".into(),
        },
        NOW,
    )
    .unwrap();
    let interrupt = run.poll().unwrap();
    let Effect::Interrupt { target } = interrupt else {
        panic!("{interrupt:?}")
    };
    run.handle(
        Input::Cancel {
            reason: "again".into(),
        },
        NOW,
    )
    .unwrap();
    run.handle(
        Input::Exited {
            id: target,
            outcome: ProcessOutcome {
                cancelled: true,
                quiescent: true,
                ..Default::default()
            },
        },
        NOW,
    )
    .unwrap();
    let r = w.drive(&mut run).unwrap();
    assert_eq!(r.status, Status::Cancelled);
    assert_eq!(r.blocker.as_ref().unwrap().message, "job_kill");
    let best = r.best.unwrap();
    assert_eq!(best.metric, 8.0);
    assert_eq!(
        w.run_branch.as_ref().unwrap().1,
        best.commit,
        "the run branch stays at the best"
    );
    assert_eq!(w.files, w.commits[&best.commit], "the worktree is restored");
    assert_eq!(
        w.scalar::<String>("SELECT state FROM experiments WHERE ordinal = 2"),
        "cancelled"
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        0
    );
}

#[test]
fn cancel_before_anything_ran_and_during_a_proposal() {
    let mut run = start(policy(json!({})));
    run.handle(
        Input::Cancel {
            reason: "stop".into(),
        },
        NOW,
    )
    .unwrap();
    let mut w = World::new(score_evaluator(), score_proposer(vec![]));
    let r = w.drive(&mut run).unwrap();
    assert_eq!(r.status, Status::Cancelled);
    assert!(!r.persisted);
    assert_eq!(w.scalar::<i64>("SELECT count(*) FROM runs"), 0);
}

#[test]
fn bug_8_a_spawn_failure_is_a_recorded_outcome_and_resume_does_not_loop() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![]));
    w.fail = Some(("evaluate".into(), "ENOENT: node not found".into()));
    let r = run_to_end(&mut w, policy(json!({})));
    assert_eq!(r.status, Status::BaselineBlocked);
    assert_eq!(r.blocker.as_ref().unwrap().code, "spawn");
    assert_eq!(
        w.scalar::<String>("SELECT failure_code FROM attempts"),
        "spawn"
    );
    let evaluations = w.evaluations;
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.status, Status::BaselineBlocked);
    assert_eq!(
        w.evaluations, evaluations,
        "a finished run is reported again, not re-run"
    );
}

#[test]
fn bug_9_resume_ids_are_validated_before_any_effect() {
    for bad in [
        "../..",
        "",
        "0B1C2D3E-4F50-4617-8293-A4B5C6D7E8F9",
        "x/../../etc",
    ] {
        assert!(Run::resume(bad, Default::default(), None, settings(), NOW).is_err());
        let err = spec::validate(&json!({"resume_run_id": bad}), &limits()).unwrap_err();
        assert_eq!(err[0].field, "resume_run_id");
    }
    assert!(Run::start(policy(json!({})), "../x", settings(), NOW).is_err());
    // The repository is handed to the driver as given, to resolve against the caller's cwd.
    let mut run = Run::start(
        policy(json!({"repository": "sub/dir"})),
        RUN_ID,
        settings(),
        NOW,
    )
    .unwrap();
    assert_eq!(
        run.poll(),
        Some(Effect::Discover {
            id: EffectId(1),
            repository: Some("sub/dir".into())
        })
    );
}

#[test]
fn bug_10_worktrees_are_removed_only_after_success() {
    let settings = Settings {
        retention: Retention {
            cleanup_worktrees_on_success: true,
            ..settings().retention
        },
        ..settings()
    };
    let mut w = World::new(
        Box::new(|_, _| ProcessOutcome {
            exit_code: Some(1),
            quiescent: true,
            ..Default::default()
        }),
        score_proposer(vec![]),
    );
    let mut run = Run::start(policy(json!({})), RUN_ID, settings.clone(), NOW).unwrap();
    assert_eq!(w.drive(&mut run).unwrap().status, Status::BaselineBlocked);
    assert!(!w.log.iter().any(|l| l == "remove-worktree"));

    let mut w = World::new(score_evaluator(), score_proposer(vec![1.0]));
    let mut run = Run::start(
        policy(json!({"max_experiments": 1})),
        RUN_ID,
        settings.clone(),
        NOW,
    )
    .unwrap();
    assert_eq!(w.drive(&mut run).unwrap().status, Status::BudgetLimited);
    assert!(w.log.iter().any(|l| l == "remove-worktree"));

    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0]));
    w.cancel_during_eval = Some(2);
    let mut run = Run::start(policy(json!({})), RUN_ID, settings, NOW).unwrap();
    assert!(w.drive(&mut run).is_none());
    run.handle(
        Input::Cancel {
            reason: "stop".into(),
        },
        NOW,
    )
    .unwrap();
    let Some(Effect::Interrupt { target }) = run.poll() else {
        panic!()
    };
    run.handle(
        Input::Exited {
            id: target,
            outcome: ProcessOutcome {
                cancelled: true,
                quiescent: true,
                ..Default::default()
            },
        },
        NOW,
    )
    .unwrap();
    assert_eq!(w.drive(&mut run).unwrap().status, Status::Cancelled);
    assert!(!w.log.iter().any(|l| l == "remove-worktree"));
}

#[test]
fn recovery_marks_a_running_attempt_interrupted_and_reruns_it_once() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    let idx = {
        let mut probe = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
        let mut r2 = start(policy(json!({"max_experiments": 2})));
        probe.drive(&mut r2);
        probe
            .log
            .iter()
            .position(|l| l.starts_with("evaluate") && l.contains("candidate-1"))
            .unwrap()
            + 2
    };
    w.crash_after = Some(idx);
    assert!(w.drive(&mut run).is_none());
    drop(run);
    assert_eq!(
        w.scalar::<String>("SELECT state FROM runs"),
        "candidate-running"
    );
    assert_eq!(
        w.scalar::<i64>("SELECT pgid FROM attempts WHERE state = 'running'"),
        4002
    );
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.status, Status::BudgetLimited);
    assert!(
        w.log.iter().any(|l| l.starts_with("terminate Some(4002)")),
        "{:#?}",
        w.log
    );
    let states: String = w.scalar(&format!(
        "SELECT group_concat(ordinal || ':' || state || ':' || quiescent, ',') FROM attempts WHERE experiment_id = '{RUN_ID}-candidate-1'"
    ));
    assert_eq!(states, "1:interrupted:1,2:exited:1");
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM experiments"),
        3,
        "no duplicated experiment"
    );
    assert_eq!(r.best.unwrap().metric, 7.0);
}

/// A run crashed mid-evaluation (its attempt recorded pgid 4002), then `alive` for its host.
fn crashed_mid_candidate(alive: Option<bool>) -> World {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    w.crash_after = Some(22);
    assert!(w.drive(&mut run).is_none());
    assert_eq!(
        w.scalar::<i64>("SELECT pgid FROM attempts WHERE state = 'running'"),
        4002
    );
    w.host_alive = alive;
    w.crash_after = None;
    w.log.clear();
    w
}

#[test]
fn resume_and_abandon_refuse_a_run_whose_host_is_alive_or_unknown_and_change_nothing() {
    for (alive, says) in [
        (Some(true), "its host is still driving it"),
        (None, "cannot be told from here"),
    ] {
        let mut w = crashed_mid_candidate(alive);
        let r = resume(&mut w, json!({}), settings());
        assert_eq!(r.status, Status::Blocked);
        let blocker = r.blocker.unwrap();
        assert_eq!(blocker.code, "run-live");
        assert!(blocker.message.contains(says), "{}", blocker.message);
        assert_eq!(blocker.evidence, ["host h pid 4000"]);
        let mut abandon = Run::abandon(RUN_ID, "stop", None, settings(), NOW + 1_000_000).unwrap();
        let r = w.drive(&mut abandon).unwrap();
        assert_eq!(r.blocker.unwrap().code, "run-live");
        assert!(
            w.log.iter().all(|l| !l.starts_with("terminate")
                && !l.starts_with("checkout-clean")
                && !l.starts_with("persist")),
            "nothing signalled or written: {:#?}",
            w.log
        );
        assert_eq!(
            w.scalar::<String>("SELECT state FROM runs"),
            "candidate-running"
        );
    }
}

#[test]
fn a_host_of_another_pid_namespace_is_never_probed_and_cannot_be_told() {
    let mut w = crashed_mid_candidate(Some(false));
    w.host = Some(
        r#"{"hostname":"h","bootId":"b","pidNs":"pid:[4026532000]","pid":9,"startTime":"1"}"#
            .into(),
    );
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.blocker.unwrap().code, "run-live");
    assert!(!w.log.iter().any(|l| l == "probe-host"), "{:#?}", w.log);
}

#[test]
fn the_tools_force_reaches_the_run_and_goes_only_with_resume_or_abandon() {
    let mut w = crashed_mid_candidate(Some(true));
    let spec = json!({"abandon_run_id": RUN_ID, "force": true}).to_string();
    let request = autoresearch_core::spec::parse(&spec, &settings().limits).unwrap();
    let mut run = Run::from_request(request, RUN_ID, settings(), NOW + 1_000_000).unwrap();
    assert_eq!(w.drive(&mut run).unwrap().status, Status::Cancelled);
    let fresh = json!({
        "objective": "o", "mutable_globs": ["a"], "evaluation": {"command": "node", "args": []},
        "metric_name": "m", "metric_direction": "minimize", "run_tag": "t", "force": true,
    });
    let errors =
        autoresearch_core::spec::parse(&fresh.to_string(), &settings().limits).unwrap_err();
    assert_eq!(errors[0].field, "force");
    assert_eq!(
        errors[0].rule,
        "goes only with resume_run_id or abandon_run_id"
    );
}

#[test]
fn a_forced_abandon_takes_a_live_run_over() {
    let mut w = crashed_mid_candidate(Some(true));
    let mut abandon = Run::abandon(RUN_ID, "stop", None, settings(), NOW + 1_000_000).unwrap();
    abandon.force();
    let r = w.drive(&mut abandon).unwrap();
    assert_eq!(r.status, Status::Cancelled);
    assert!(
        w.log.iter().any(|l| l == "terminate Some(4002)"),
        "{:#?}",
        w.log
    );
    assert!(!w.log.iter().any(|l| l == "probe-host"));
}

#[test]
fn recorded_pids_are_used_only_in_the_process_space_that_recorded_them() {
    // The same boot and PID namespace: the group is terminated by its pid (and its marker).
    let mut w = crashed_mid_candidate(Some(false));
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.status, Status::BudgetLimited);
    assert!(
        w.log.iter().any(|l| l == "terminate Some(4002)"),
        "{:#?}",
        w.log
    );
    // Now from another PID namespace (forced, as its host cannot be proven dead): by marker only.
    for other in [
        r#"{"hostname":"h","bootId":"b","pidNs":"pid:[4026532000]","pid":9,"startTime":"1"}"#,
        r#"{"hostname":"h","bootId":"other-boot","pidNs":"pid:[4026531836]","pid":9,"startTime":"1"}"#,
    ] {
        let mut w = crashed_mid_candidate(None);
        w.host = Some(other.into());
        let mut run = Run::resume(
            RUN_ID,
            Default::default(),
            None,
            settings(),
            NOW + 1_000_000,
        )
        .unwrap();
        run.force();
        let r = w.drive(&mut run).unwrap();
        assert_eq!(r.status, Status::BudgetLimited);
        assert!(w.log.iter().any(|l| l == "terminate None"), "{:#?}", w.log);
        assert!(!w.log.iter().any(|l| l.starts_with("terminate Some")));
    }
}

#[test]
fn recovery_blocks_when_the_process_group_cannot_be_proven_gone_and_keeps_the_lock() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0]));
    let mut run = start(policy(json!({})));
    w.crash_after = Some(9);
    assert!(w.drive(&mut run).is_none());
    w.groups_gone = false;
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(r.blocker.as_ref().unwrap().code, "not-quiescent");
    assert!(r.blocker.unwrap().evidence[0].contains("pgid 4001"));
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        1
    );
    // Later, once the group is gone, a resume proves it and releases the lock.
    w.groups_gone = true;
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        0
    );
    assert_eq!(w.scalar::<i64>("SELECT quiescent FROM runs"), 1);
}

#[test]
fn a_second_resume_while_the_group_still_lives_reports_blocked_again() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0]));
    let mut run = start(policy(json!({})));
    w.crash_after = Some(9);
    assert!(w.drive(&mut run).is_none());
    w.groups_gone = false;
    for _ in 0..2 {
        let r = resume(&mut w, json!({}), settings());
        assert_eq!(r.status, Status::Blocked);
        assert_eq!(r.blocker.as_ref().unwrap().code, "not-quiescent");
        assert_eq!(
            w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
            1
        );
    }
}

#[test]
fn an_interrupted_proposal_is_a_charged_failed_round() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    let idx = w_index("propose");
    w.crash_after = Some(idx);
    assert!(w.drive(&mut run).is_none());
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(
        r.experiments[1].failure_code.as_deref(),
        Some("interrupted")
    );
    assert_eq!(r.counts.experiments_started, 2);
}

fn w_index(prefix: &str) -> usize {
    let mut probe = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut r = start(policy(json!({"max_experiments": 2})));
    probe.drive(&mut r);
    probe
        .log
        .iter()
        .position(|l| l.starts_with(prefix))
        .unwrap()
        + 1
}

#[test]
fn a_crash_after_the_fast_forward_converges() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    w.crash_after = Some(w_index("fast-forward"));
    assert!(w.drive(&mut run).is_none());
    assert_eq!(w.scalar::<String>("SELECT state FROM runs"), "deciding");
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.counts.accepted, 2);
}

#[test]
fn every_crash_point_resumes_to_the_same_outcome() {
    let total = {
        let mut probe = World::new(score_evaluator(), score_proposer(vec![8.0, 9.0, 7.0]));
        let mut r = start(policy(json!({})));
        probe.drive(&mut r);
        probe.log.len()
    };
    for k in 1..total {
        let mut w = World::new(
            score_evaluator(),
            score_proposer(vec![8.0, 9.0, 7.0, 6.0, 5.0]),
        );
        let mut run = start(policy(json!({})));
        w.crash_after = Some(k);
        if let Some(r) = w.drive(&mut run) {
            assert_eq!(r.status, Status::BudgetLimited);
            continue;
        }
        let r = resume(&mut w, json!({}), settings());
        if r.status == Status::Blocked && r.blocker.as_ref().unwrap().code == "run-missing" {
            // Crashed before the run row existed: no lock either (one transaction).
            assert_eq!(
                w.scalar::<i64>("SELECT count(*) FROM locks"),
                0,
                "crash at {k}"
            );
            continue;
        }
        if r.status == Status::Blocked && r.blocker.as_ref().unwrap().code == "lock-lost" {
            panic!("crash at {k}: {:?}", r.blocker);
        }
        assert_eq!(
            r.status,
            Status::BudgetLimited,
            "crash at {k}: {:?}\n{:#?}",
            r.blocker,
            w.log
        );
        assert!(r.counts.experiments_started <= 3);
        assert_eq!(
            w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
            0
        );
        assert_eq!(w.caller_branch, ("main".to_owned(), w.start.clone()));
    }
}

#[test]
fn a_second_run_with_a_live_tag_is_refused_without_writes() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0]));
    let mut run = start(policy(json!({})));
    w.crash_after = Some(10);
    assert!(w.drive(&mut run).is_none());
    w.crash_after = None;
    let mut other = Run::start(
        policy(json!({})),
        "11111111-2222-4333-8444-555555555555",
        settings(),
        NOW,
    )
    .unwrap();
    let r = w.drive(&mut other).unwrap();
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(r.blocker.unwrap().code, "lock-unavailable");
    assert!(!r.persisted);
    assert_eq!(w.scalar::<i64>("SELECT count(*) FROM runs"), 1);
}

#[test]
fn not_quiescent_evaluator_blocks_with_process_evidence() {
    let mut w = World::new(
        Box::new(|_, _| ProcessOutcome {
            exit_code: Some(0),
            quiescent: false,
            stdout_tail: "{\"score\":1}".into(),
            ..Default::default()
        }),
        score_proposer(vec![]),
    );
    let r = run_to_end(&mut w, policy(json!({})));
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(r.blocker.as_ref().unwrap().code, "not-quiescent");
    assert_eq!(w.scalar::<i64>("SELECT quiescent FROM runs"), 0);
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        1
    );
}

#[test]
fn driver_misuse_is_an_error_not_a_state() {
    let mut run = start(policy(json!({})));
    let e = run.poll().unwrap();
    assert_eq!(
        run.handle(Input::Done { id: EffectId(99) }, NOW),
        Err(DriverError::UnknownEffect(EffectId(99)))
    );
    let id = e.id().unwrap();
    assert!(matches!(
        run.handle(Input::Done { id }, NOW),
        Err(DriverError::WrongAnswer { .. })
    ));
    run.handle(
        Input::Failed {
            id,
            error: "not a git repository".into(),
        },
        NOW,
    )
    .unwrap();
    let Some(Effect::Report(r)) = run.poll() else {
        panic!()
    };
    assert_eq!(r.blocker.unwrap().code, "repository-unavailable");
    assert_eq!(
        run.handle(Input::Done { id }, NOW),
        Err(DriverError::Finished)
    );
}

#[test]
fn persist_failures_block_without_looping() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0]));
    w.fail = Some((
        "persist [INSERT INTO experiments→proposing".into(),
        "SQLITE_BUSY".into(),
    ));
    let r = run_to_end(&mut w, policy(json!({})));
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(r.blocker.unwrap().code, "persist-failed");
    assert_eq!(w.scalar::<String>("SELECT state FROM runs"), "blocked");
}

#[test]
fn abandon_terminates_the_interrupted_group_cancels_and_releases_the_lock() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    // Crash while the first candidate's evaluator runs.
    w.crash_after = Some(w_index("evaluate") + 13);
    assert!(w.drive(&mut run).is_none());
    assert_eq!(
        w.scalar::<String>("SELECT state FROM runs"),
        "candidate-running"
    );
    let evaluations = w.evaluations;
    let mut run = Run::abandon(RUN_ID, "operator gave up", None, settings(), NOW).unwrap();
    w.crash_after = None;
    let r = w.drive(&mut run).expect("report");
    assert_eq!(r.status, Status::Cancelled);
    assert_eq!(r.blocker.as_ref().unwrap().message, "operator gave up");
    assert_eq!(w.evaluations, evaluations, "nothing is evaluated");
    assert!(w.log.iter().any(|l| l.starts_with("terminate")));
    assert_eq!(w.scalar::<String>("SELECT state FROM runs"), "cancelled");
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM experiments WHERE state NOT IN ('accepted','rejected','failed','policy-violation','cancelled')"),
        0
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM attempts WHERE state = 'running'"),
        0
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        0
    );
    assert_eq!(
        w.files, w.commits[&w.start],
        "the worktree is back at the best"
    );
    // Abandoning (or resuming) a finished run writes nothing and reports it again.
    let before: i64 = w.scalar("SELECT max(updated_at) FROM runs");
    let mut again = Run::abandon(RUN_ID, "again", None, settings(), NOW + 5).unwrap();
    let r = w.drive(&mut again).expect("report");
    assert_eq!(r.status, Status::Cancelled);
    assert_eq!(r.blocker.unwrap().message, "operator gave up");
    assert_eq!(w.scalar::<i64>("SELECT max(updated_at) FROM runs"), before);
    assert!(Run::abandon("../x", "r", None, settings(), NOW).is_err());
}

/// Crashes a two-candidate run while its first candidate is evaluated.
fn crashed_mid_evaluation() -> (World, u32) {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    w.crash_after = Some(w_index("evaluate") + 13);
    assert!(w.drive(&mut run).is_none());
    w.crash_after = None;
    let evaluations = w.evaluations;
    (w, evaluations)
}

fn live_locks(w: &World) -> i64 {
    w.scalar("SELECT count(*) FROM locks WHERE released_at IS NULL")
}

#[test]
fn reconcile_stops_a_dead_hosts_leftovers_releases_the_lock_and_a_resume_takes_it_again() {
    let (mut w, evaluations) = crashed_mid_evaluation();
    assert!(
        w.scalar::<Option<String>>("SELECT host_json FROM runs")
            .is_some(),
        "the host is recorded"
    );
    let mut run = Run::reconcile(RUN_ID, None, settings(), NOW + 1).unwrap();
    let r = w.drive(&mut run).expect("report");
    assert_eq!(r.state.as_deref(), Some("candidate-running"), "not ended");
    assert!(
        r.warnings.iter().any(|n| n.contains("marked interrupted")),
        "{:?}",
        r.warnings
    );
    assert!(w.log.iter().any(|l| l.starts_with("probe-host")));
    assert!(w.log.iter().any(|l| l.starts_with("terminate")));
    assert_eq!(w.evaluations, evaluations, "nothing is evaluated");
    assert_eq!(live_locks(&w), 0, "the repository's slot is free");
    assert!(
        w.scalar::<Option<i64>>("SELECT interrupted_at FROM runs")
            .is_some()
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM attempts WHERE state = 'running'"),
        0
    );

    // A second reconcile finds nothing to do.
    let log = w.log.len();
    let mut again = Run::reconcile(RUN_ID, None, settings(), NOW + 2).unwrap();
    let r = w.drive(&mut again).expect("report");
    assert!(
        r.warnings
            .iter()
            .any(|n| n.contains("nothing to reconcile")),
        "{:?}",
        r.warnings
    );
    assert!(!w.log[log..].iter().any(|l| l.starts_with("persist")));

    // Resuming retakes the lock, clears the mark and finishes the run.
    let r = resume(&mut w, json!({}), settings());
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(
        w.scalar::<Option<i64>>("SELECT interrupted_at FROM runs"),
        None
    );
    assert_eq!(live_locks(&w), 0);
}

#[test]
fn reconcile_leaves_a_run_whose_host_is_alive_or_unknown_untouched() {
    for (alive, note) in [(Some(true), "host is alive"), (None, "cannot be told")] {
        let (mut w, _) = crashed_mid_evaluation();
        w.host_alive = alive;
        let before: i64 = w.scalar("SELECT max(updated_at) FROM runs");
        let mut run = Run::reconcile(RUN_ID, None, settings(), NOW + 1).unwrap();
        let r = w.drive(&mut run).expect("report");
        assert!(
            r.warnings.iter().any(|n| n.contains(note)),
            "{:?}",
            r.warnings
        );
        assert!(!w.log.iter().any(|l| l.starts_with("terminate")));
        assert_eq!(live_locks(&w), 1, "the lock stays");
        assert_eq!(w.scalar::<i64>("SELECT max(updated_at) FROM runs"), before);
    }
}

#[test]
fn reconcile_without_a_host_record_or_when_a_group_survives_keeps_the_lock() {
    let (mut w, _) = crashed_mid_evaluation();
    w.db.execute("UPDATE runs SET host_json = NULL", [])
        .unwrap();
    let mut run = Run::reconcile(RUN_ID, None, settings(), NOW + 1).unwrap();
    let r = w.drive(&mut run).expect("report");
    assert!(
        r.warnings.iter().any(|n| n.contains("no host record")),
        "{:?}",
        r.warnings
    );
    assert_eq!(live_locks(&w), 1);

    let (mut w, _) = crashed_mid_evaluation();
    w.groups_gone = false;
    let mut run = Run::reconcile(RUN_ID, None, settings(), NOW + 1).unwrap();
    let r = w.drive(&mut run).expect("report");
    assert!(
        r.warnings
            .iter()
            .any(|n| n.contains("could not be proven gone")),
        "{:?}",
        r.warnings
    );
    assert_eq!(live_locks(&w), 1);
    assert_eq!(
        w.scalar::<Option<i64>>("SELECT interrupted_at FROM runs"),
        None
    );
}

#[test]
fn an_interrupted_run_can_be_abandoned() {
    let (mut w, _) = crashed_mid_evaluation();
    let mut run = Run::reconcile(RUN_ID, None, settings(), NOW + 1).unwrap();
    w.drive(&mut run).expect("report");
    let mut run = Run::abandon(RUN_ID, "nobody will resume it", None, settings(), NOW + 2).unwrap();
    let r = w.drive(&mut run).expect("report");
    assert_eq!(r.status, Status::Cancelled);
    assert_eq!(w.scalar::<String>("SELECT state FROM runs"), "cancelled");
    assert_eq!(live_locks(&w), 0);
}

#[test]
fn a_snapshot_shows_a_live_run_without_writing() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    w.crash_after = Some(w_index("propose") + 12);
    assert!(w.drive(&mut run).is_none());
    let rows = w.load(RUN_ID).unwrap();
    let r = Run::snapshot(
        &rows,
        "/repo/.git/dsh-autoresearch/tracker.sqlite",
        settings(),
    )
    .unwrap();
    assert_eq!(r.state.as_deref(), Some(rows.run.state.as_str()));
    assert_eq!(r.to_json(16_384)["status"], rows.run.state.as_str());
    assert!(
        r.to_table(20).contains("not finished"),
        "{}",
        r.to_table(20)
    );
    assert_eq!(r.best.as_ref().unwrap().metric, 8.0);
    assert_eq!(r.tracker, "/repo/.git/dsh-autoresearch/tracker.sqlite");
    // A finished run's snapshot is its result.
    let done = resume(&mut w, json!({}), settings());
    let rows = w.load(RUN_ID).unwrap();
    let snap = Run::snapshot(&rows, &done.tracker, settings()).unwrap();
    assert_eq!(snap.state, None);
    assert_eq!(snap.status, done.status);
    assert_eq!(snap.to_tsv(), done.to_tsv());
    // The list query runs on the real schema.
    let n: i64 =
        w.db.query_row(
            &format!("SELECT count(*) FROM ({})", sql::LIST_RUNS),
            rusqlite::named_params! {":limit": 10},
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn git_config_that_runs_programs_refuses_the_run_unless_allowlisted_and_is_rechecked_each_round() {
    let filter = ConfigEntry {
        origin: "file:/repo/.git/config".into(),
        key: "filter.x.smudge".into(),
    };
    // At discovery: refused before anything durable.
    let mut w = World::new(score_evaluator(), score_proposer(vec![5.0, 4.0]));
    w.git_config = vec![filter.clone()];
    let r = run_to_end(&mut w, policy(json!({})));
    let b = r.blocker.unwrap();
    assert_eq!(
        (b.code.as_str(), b.evidence),
        (
            "git-config-unsafe",
            vec!["filter.x.smudge (from file:/repo/.git/config)".to_owned()]
        )
    );
    assert!(!r.persisted);
    assert_eq!(w.evaluations, 0);
    // Named in the allowlist: the run goes ahead.
    let mut w = World::new(score_evaluator(), score_proposer(vec![5.0, 4.0]));
    w.git_config = vec![filter.clone()];
    let allowed = policy(json!({"exceptional_allowlists": {"gitConfig": ["filter.x.smudge"]}}));
    assert_eq!(run_to_end(&mut w, allowed).status, Status::BudgetLimited);
    // Appearing mid-run (written during round 1): the run blocks before committing it.
    let mut w = World::new(score_evaluator(), score_proposer(vec![5.0, 4.0]));
    w.round_config = Some(vec![filter]);
    let r = run_to_end(&mut w, policy(json!({})));
    let b = r.blocker.unwrap();
    assert_eq!(b.code, "git-config-unsafe");
    assert!(r.persisted);
    assert_eq!(w.evaluations, 1, "only the baseline ran");
    assert!(
        !w.log.iter().any(|l| l.starts_with("commit")),
        "{:?}",
        w.log
    );
}

#[test]
fn what_git_status_cannot_show_fails_only_that_round() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![5.0, 4.0, 3.0]));
    w.anomalies.insert(
        1,
        vec![Anomaly {
            kind: AnomalyKind::GitLinkChanged,
            path: ".git".into(),
        }],
    );
    w.anomalies.insert(
        2,
        vec![
            Anomaly {
                kind: AnomalyKind::NestedGit,
                path: "src/sub/.git".into(),
            },
            Anomaly {
                kind: AnomalyKind::UndecodableName,
                path: "src/\\xff.txt".into(),
            },
        ],
    );
    let r = run_to_end(&mut w, policy(json!({"max_consecutive_failures": 5})));
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.counts.policy_violations, 2);
    assert_eq!(r.best.unwrap().metric, 3.0);
    let evidence: String = w.scalar("SELECT group_concat(evidence_json, ' | ') FROM experiments WHERE state = 'policy-violation'");
    expect_test::expect![[r#"["git-link-changed: .git"] | ["nested-git: src/sub/.git","undecodable-name: src/\\xff.txt"]"#]].assert_eq(&evidence);
}

#[test]
fn paths_git_would_refuse_to_commit_fail_only_that_round() {
    let proposer: Proposer = Box::new(|files, n| {
        match n {
            1 => files.insert("src/.GIT/config".into(), "[core]".into()),
            2 => files.insert(format!("src/{}x", "d/".repeat(2_000)), "x".into()),
            _ => files.insert("score.txt".into(), "3".into()),
        };
        Ok(("try".into(), "try".into()))
    });
    let mut w = World::new(score_evaluator(), proposer);
    let r = run_to_end(&mut w, policy(json!({"max_consecutive_failures": 5})));
    assert_eq!(r.status, Status::BudgetLimited, "{:?}", r.blocker);
    assert_eq!(r.counts.policy_violations, 2);
    assert_eq!(r.best.unwrap().metric, 3.0);
    let evidence: String = w.scalar(
        "SELECT group_concat(substr(evidence_json, 1, 40), ' | ') FROM experiments WHERE state = 'policy-violation'",
    );
    expect_test::expect![[
        r#"["git-invalid-path: src/.GIT/config"] | ["path-too-long: src/d/d/d/d/d/d/d/d/d/d"#
    ]]
    .assert_eq(&evidence);
}

#[test]
fn the_renderings_of_a_finished_run() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![7.0, 9.0, 4.0]));
    w.anomalies.insert(
        2,
        vec![Anomaly {
            kind: AnomalyKind::NestedGit,
            path: "src/x/.git".into(),
        }],
    );
    let r = run_to_end(&mut w, policy(json!({"max_consecutive_failures": 5})));
    expect_test::expect_file!["snapshots/finished-run.table"].assert_eq(&r.to_table(20));
    expect_test::expect_file!["snapshots/finished-run.tsv"].assert_eq(&r.to_tsv());
    expect_test::expect_file!["snapshots/finished-run.html"].assert_eq(&r.to_html());
}

#[test]
fn the_originals_live_runs_count_toward_the_active_run_limit() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0]));
    w.other_live_runs = 1;
    let r = run_to_end(&mut w, policy(json!({})));
    assert_eq!(r.status, Status::Blocked);
    let blocker = r.blocker.unwrap();
    assert_eq!(blocker.code, "lock-unavailable");
    assert!(blocker.message.contains("original"), "{}", blocker.message);
    assert!(!r.persisted, "nothing was written");
    let mut s = settings();
    s.max_active_runs_per_repository = 2;
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0]));
    w.other_live_runs = 1;
    let mut run = Run::start(policy(json!({})), RUN_ID, s, NOW).unwrap();
    assert_eq!(
        w.drive(&mut run).expect("report").status,
        Status::BudgetLimited
    );
}

#[test]
fn max_stale_experiments_ends_the_run_budget_limited_with_reason_plateau() {
    let proposals = || score_proposer(vec![8.0, 9.0, 9.5, 9.8, 7.0]);
    let spec = |extra: serde_json::Value| {
        let mut v = json!({"max_experiments": 5, "max_consecutive_failures": 5});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        policy(v)
    };
    let mut w = World::new(score_evaluator(), proposals());
    let r = run_to_end(&mut w, spec(json!({"max_stale_experiments": 3})));
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(
        r.counts.experiments_started, 4,
        "stopped before candidate 5"
    );
    let b = r.blocker.clone().unwrap();
    expect_test::expect!["plateau: 3 candidates in a row were not kept (max_stale_experiments 3)"]
        .assert_eq(&format!("{}: {}", b.code, b.message));
    assert_eq!(
        w.scalar::<String>("SELECT terminal_reason FROM runs"),
        "plateau"
    );
    assert_eq!(r.best.unwrap().metric, 8.0);
    // Without it the budget alone ends the run, and candidate 5 is kept.
    let mut w = World::new(score_evaluator(), proposals());
    let r = run_to_end(&mut w, spec(json!({})));
    assert_eq!((r.counts.experiments_started, r.blocker), (5, None));
    assert_eq!(r.best.unwrap().metric, 7.0);
    let errors =
        spec::validate(&spec_json(json!({"max_stale_experiments": 0})), &limits()).unwrap_err();
    assert_eq!(errors[0].field, "max_stale_experiments");
}
