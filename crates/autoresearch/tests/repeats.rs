//! `repeats`: the baseline evaluated that many times; a candidate screened one sample at a time
//! (at most `repeats`) and, when promising, confirmed on as many fresh samples, each evaluation
//! its own attempt (`stats::judge`); the reported metric and the next bar come from the fresh
//! samples; mean, spread, n and the screening mean in the result and the TSV; crash recovery
//! between evaluations never evaluates a sample twice.

mod common;

use autoresearch_core as core;
use common::*;
use core::*;
use serde_json::json;

/// Each experiment's outcome, screening samples and fresh samples.
fn outcomes(r: &RunResult) -> Vec<(&str, usize, usize)> {
    r.experiments
        .iter()
        .map(|e| (e.outcome(), e.samples.len(), e.confirmation.len()))
        .collect()
}

#[test]
fn a_candidate_is_screened_then_the_promising_one_is_confirmed_on_fresh_samples() {
    // Candidate 1 gains 0.1 against a spread of 0.5 (noise); candidate 2 gains 5.
    let mut w = World::new(noisy_evaluator(), score_proposer(vec![9.9, 5.0]));
    let mut run = start(policy(json!({"repeats": 3, "max_experiments": 2})));
    let r = w.drive(&mut run).expect("report");
    assert_eq!(r.status, Status::BudgetLimited);
    // Candidate 1's first sample (10.4) is worse than the bar: dropped at once. Candidate 2's
    // first (4.5) is far better: promising at once, then three fresh samples confirm it.
    assert_eq!(
        outcomes(&r),
        [("baseline", 3, 0), ("rejected", 1, 0), ("kept", 1, 3)],
        "{r:#?}"
    );
    assert_eq!(r.experiments[1].metric, Some(10.4));
    // The reported metric and the new best are the fresh samples' mean, not the screening's.
    assert_eq!(r.experiments[2].selection_metric(), Some(4.5));
    assert_eq!(r.best.as_ref().unwrap().metric, 5.0);
    assert_eq!(r.noise_floor(), Some(0.5));
    // Eight attempts, each with its own id (the DSH_AUTORESEARCH_ATTEMPT marker) and metric.
    let evaluated: Vec<&String> = w.log.iter().filter(|l| l.starts_with("evaluate")).collect();
    assert_eq!(evaluated.len(), 8);
    assert!(
        evaluated[7].ends_with("candidate-2-attempt-4"),
        "{evaluated:?}"
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM attempts WHERE purpose = 'confirm'"),
        3
    );
    let json = r.to_json(16_384);
    assert_eq!(json["repeats"], 3);
    assert_eq!(json["noise_floor"], 0.5);
    assert_eq!(json["experiments"][2]["samples"], json!([4.5]));
    assert_eq!(
        json["experiments"][2]["confirmation"],
        json!([5.0, 5.5, 4.5])
    );
    assert_eq!(json["experiments"][2]["selection_metric"], 4.5);
    assert_eq!(json["experiments"][2]["stddev"], 0.5);
    assert_eq!(json["experiments"][2]["n"], 3);
    // What the calling model reads.
    let text = tool::job_output(&json.to_string());
    let summary: Vec<&str> = text.lines().skip(1).take(8).collect();
    expect_test::expect![[r##"
        [
            "metric score (minimize): baseline 10 at fc2b2565, best 5 at fcd90b89",
            "repeats 3: up to that many screening and as many fresh confirming evaluations per candidate (mean±stddev); noise floor (baseline spread) 0.5",
            "candidates: 2 started, 1 accepted, 1 rejected, 0 failed, 0 policy violations",
            "branch autoresearch/exp-1-0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9 (your checkout is unchanged)",
            "#0 accepted 10±0.5 -",
            "#1 rejected 10.4 234a267e — try 9.9",
            "#2 accepted 5±0.5 fcd90b89 — confirmed (screened at 4.5) try 5",
            "picture: run `dsh-autoresearch show --html autoresearch-0b1c2d3e.html 0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9` in the repository",
        ]
    "##]].assert_debug_eq(&summary);
    let table: Vec<String> = r.to_table(20).lines().skip(3).map(str::to_owned).collect();
    expect_test::expect![[r#"
        [
            "repeats 3: up to that many screening and as many fresh confirming evaluations per candidate; noise floor (baseline spread) 0.5",
            "   #  state                     metric  decision  commit    note",
            "   0  accepted                  10±0.5  accept    -         ",
            "   1  rejected                    10.4  reject    234a267e  try 9.9",
            "   2  accepted                   5±0.5  accept    fcd90b89  confirmed (screened at 4.5) try 5",
        ]
    "#]].assert_debug_eq(&table);
    expect_test::expect_file!["snapshots/repeats-run.html"].assert_eq(&r.to_html());
    let tsv = w.tsv.clone().unwrap();
    let tails: Vec<&str> = tsv
        .lines()
        .map(|l| l.splitn(12, '\t').last().unwrap_or(""))
        .collect();
    expect_test::expect![[r#"
        [
            "n\tstddev\tselection_metric\tholdout",
            "3\t0.5\t\t",
            "1\t\t\t",
            "3\t0.5\t4.5\t",
        ]
    "#]]
    .assert_debug_eq(&tails);
}

#[test]
fn a_promising_candidate_its_fresh_samples_do_not_confirm_is_rejected() {
    // Against a bar of 10 ± 0.5: candidate 1 (10.5) is dropped at once; candidate 2's first
    // sample (8.5, the cycle's -0.5) screens it promising, but its fresh 9, 9.5, 8.5 fall short
    // of Welch's 2.5 % (t 2.45, 4 df): nothing is kept and the bar stays.
    let mut w = World::new(noisy_evaluator(), score_proposer(vec![10.0, 9.0]));
    let mut run = start(policy(json!({"repeats": 3, "max_experiments": 2})));
    let r = w.drive(&mut run).expect("report");
    assert_eq!(
        outcomes(&r),
        [("baseline", 3, 0), ("rejected", 1, 0), ("rejected", 1, 3)],
        "{r:#?}"
    );
    assert_eq!(r.experiments[2].metric, Some(9.0));
    assert_eq!(r.best.as_ref().unwrap().metric, 10.0);
}

#[test]
fn with_one_repeat_the_same_noise_keeps_the_no_op() {
    let mut w = World::new(noisy_evaluator(), score_proposer(vec![9.9, 5.0]));
    let mut run = start(policy(json!({"max_experiments": 2})));
    let r = w.drive(&mut run).expect("report");
    // Baseline 10 + 0.5; candidate 1: 9.9 - 0.5 looks like a gain of 1.1.
    assert_eq!(r.experiments[1].outcome(), "kept");
    assert_eq!(r.noise_floor(), None);
    assert_eq!(r.to_json(16_384)["repeats"], 1);
}

#[test]
fn a_failed_repeat_fails_the_experiment() {
    let mut w = World::new(
        Box::new(|files, n| {
            if n == 5 {
                return ProcessOutcome {
                    exit_code: Some(2),
                    quiescent: true,
                    ..Default::default()
                };
            }
            score_evaluator()(files, n)
        }),
        score_proposer(vec![8.0, 7.0]),
    );
    let mut run = start(policy(json!({"repeats": 3, "max_experiments": 2})));
    let r = w.drive(&mut run).expect("report");
    // Evaluation 5 is candidate 1's second (its exact first sample screens it promising, the
    // second is its first fresh one): it fails there, no other runs.
    assert_eq!(
        outcomes(&r),
        [("baseline", 3, 0), ("failed", 1, 0), ("kept", 1, 3)]
    );
    assert_eq!(r.experiments[1].failure_code.as_deref(), Some("exit"));
    assert_eq!(r.counts.attempts, 3 + 2 + 4);
}

#[test]
fn every_crash_point_between_repeats_resumes_without_evaluating_a_sample_twice() {
    let total = {
        let mut probe = World::new(noisy_evaluator(), score_proposer(vec![9.9, 5.0]));
        let mut r = start(policy(json!({"repeats": 3, "max_experiments": 2})));
        probe.drive(&mut r);
        probe.log.len()
    };
    for k in 1..total {
        let mut w = World::new(noisy_evaluator(), score_proposer(vec![9.9, 5.0, 4.0]));
        let mut run = start(policy(json!({"repeats": 3, "max_experiments": 2})));
        w.crash_after = Some(k);
        if w.drive(&mut run).is_some() {
            continue;
        }
        drop(run);
        let mut run = Run::resume(RUN_ID, Default::default(), None, settings(), NOW + 1).unwrap();
        w.crash_after = None;
        let r = w.drive(&mut run).expect("report");
        if r.blocker.as_ref().is_some_and(|b| b.code == "run-missing") {
            continue;
        }
        assert_eq!(r.status, Status::BudgetLimited, "crash at {k}: {r:#?}");
        for e in &r.experiments {
            let finished: i64 = w.scalar(&format!(
                "SELECT count(*) FROM attempts WHERE experiment_id = '{}' AND state = 'exited'",
                e.experiment_id
            ));
            // Every finished evaluation is one sample, screening or fresh, and none is taken
            // beyond the rule's: `repeats` for the baseline, `repeats` of each kind for a
            // candidate, and fresh ones only after a promising screening.
            let (screened, fresh) = (e.samples.len(), e.confirmation.len());
            let cap = if e.kind == "baseline" { 3 } else { 6 };
            assert!(
                finished <= cap,
                "crash at {k}: {} ran {finished}",
                e.experiment_id
            );
            if matches!(e.outcome(), "baseline" | "kept" | "rejected") {
                assert_eq!(finished as usize, screened + fresh, "crash at {k}: {e:?}");
                assert!(screened <= 3 && fresh <= 3, "crash at {k}: {e:?}");
            }
            if e.kind == "baseline" {
                assert_eq!(screened, 3, "crash at {k}: {e:?}");
            }
            if e.outcome() == "kept" {
                assert_eq!(fresh, 3, "crash at {k}: {e:?}");
            }
        }
    }
}

#[test]
fn repeats_outside_one_to_twenty_is_refused_naming_the_field() {
    for bad in [json!(0), json!(21), json!("3"), json!(2.5)] {
        let errors = spec::validate(&spec_json(json!({"repeats": bad})), &limits()).unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        expect_test::expect!["repeats: must be an integer from 1 to 20"]
            .assert_eq(&format!("{}: {}", errors[0].field, errors[0].rule));
    }
    let errors = spec::validate(
        &spec_json(json!({"environment": {"AUTORESEARCH_SLOT": "3"}})),
        &limits(),
    )
    .unwrap_err();
    expect_test::expect!["environment.AUTORESEARCH_SLOT: is set by the run (the evaluator's slot) (got \"AUTORESEARCH_SLOT\")"]
        .assert_eq(&errors[0].to_string());
    // The default is not written into the stored policy, so its hash is the earlier versions'.
    assert!(policy(json!({})).to_json().get("repeats").is_none());
    assert_eq!(policy(json!({"repeats": 20})).to_json()["repeats"], 20);
}
