//! `repeats`: every experiment evaluated that many times, each its own attempt; the keep rule
//! over the samples (`stats::improves`); mean, spread and n in the result and the TSV; crash
//! recovery between repeats never evaluates a sample twice.

mod common;

use autoresearch_core as core;
use common::*;
use core::*;
use serde_json::json;

/// `score.txt`'s number plus a fixed offset cycling +0.5, -0.5, 0 per evaluation (spread 0.5).
fn noisy_evaluator() -> Evaluator {
    let mut score = score_evaluator();
    Box::new(move |files, n| {
        let mut out = score(files, n);
        let offset = [0.0, 0.5, -0.5][(n % 3) as usize];
        let value: f64 = out
            .stdout_tail
            .rsplit(": ")
            .next()
            .and_then(|v| v.trim().trim_end_matches('}').parse().ok())
            .unwrap_or(f64::NAN);
        if value.is_finite() {
            out = metric_out("score", value + offset);
        }
        out
    })
}

#[test]
fn each_experiment_is_evaluated_repeats_times_and_only_a_significant_gain_is_kept() {
    // Candidate 1 gains 0.1 against a spread of 0.5 (noise); candidate 2 gains 5.
    let mut w = World::new(noisy_evaluator(), score_proposer(vec![9.9, 5.0]));
    let mut run = start(policy(json!({"repeats": 3, "max_experiments": 2})));
    let r = w.drive(&mut run).expect("report");
    assert_eq!(r.status, Status::BudgetLimited);
    let outcomes: Vec<(&str, usize)> = r
        .experiments
        .iter()
        .map(|e| (e.outcome(), e.samples.len()))
        .collect();
    assert_eq!(
        outcomes,
        [("baseline", 3), ("rejected", 3), ("kept", 3)],
        "{r:#?}"
    );
    assert!((r.experiments[1].metric.unwrap() - 9.9).abs() < 1e-9);
    assert_eq!(r.best.as_ref().unwrap().metric, 5.0);
    assert_eq!(r.noise_floor(), Some(0.5));
    // Nine attempts, each with its own id (the DSH_AUTORESEARCH_ATTEMPT marker) and metric.
    let evaluated: Vec<&String> = w.log.iter().filter(|l| l.starts_with("evaluate")).collect();
    assert_eq!(evaluated.len(), 9);
    assert!(
        evaluated[8].ends_with("candidate-2-attempt-3"),
        "{evaluated:?}"
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(DISTINCT attempt_id) FROM attempts WHERE metric IS NOT NULL"),
        9
    );
    let json = r.to_json(16_384);
    assert_eq!(json["repeats"], 3);
    assert_eq!(json["noise_floor"], 0.5);
    assert_eq!(json["experiments"][2]["samples"], json!([5.5, 4.5, 5.0]));
    assert_eq!(json["experiments"][2]["stddev"], 0.5);
    assert_eq!(json["experiments"][2]["n"], 3);
    // What the calling model reads.
    let text = tool::job_output(&json.to_string());
    let summary: Vec<&str> = text.lines().skip(1).take(8).collect();
    expect_test::expect![[r##"
        [
            "metric score (minimize): baseline 10 at fc2b2565, best 5 at fcd90b89",
            "3 evaluations per experiment (mean±stddev); noise floor (baseline spread) 0.5",
            "candidates: 2 started, 1 accepted, 1 rejected, 0 failed, 0 policy violations",
            "branch autoresearch/exp-1-0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9 (your checkout is unchanged)",
            "#0 accepted 10±0.5 -",
            "#1 rejected 9.9±0.5 234a267e — try 9.9",
            "#2 accepted 5±0.5 fcd90b89 — try 5",
            "picture: run `dsh-autoresearch show --html autoresearch-0b1c2d3e.html 0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9` in the repository",
        ]
    "##]].assert_debug_eq(&summary);
    let table: Vec<String> = r.to_table(20).lines().skip(3).map(str::to_owned).collect();
    expect_test::expect![[r#"
        [
            "3 evaluations per experiment; noise floor (baseline spread) 0.5",
            "   #  state                     metric  decision  commit    note",
            "   0  accepted                  10±0.5  accept    -         ",
            "   1  rejected                 9.9±0.5  reject    234a267e  try 9.9",
            "   2  accepted                   5±0.5  accept    fcd90b89  try 5",
        ]
    "#]]
    .assert_debug_eq(&table);
    expect_test::expect_file!["snapshots/repeats-run.html"].assert_eq(&r.to_html());
    let tsv = w.tsv.clone().unwrap();
    assert!(tsv.lines().next().unwrap().ends_with("\tn\tstddev"));
    assert!(tsv.lines().nth(1).unwrap().ends_with("\t3\t0.5"), "{tsv}");
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
    let outcomes: Vec<(&str, usize)> = r
        .experiments
        .iter()
        .map(|e| (e.outcome(), e.samples.len()))
        .collect();
    // Evaluation 5 is candidate 1's second: it fails there, its third never runs.
    assert_eq!(outcomes, [("baseline", 3), ("failed", 1), ("kept", 3)]);
    assert_eq!(r.experiments[1].failure_code.as_deref(), Some("exit"));
    assert_eq!(r.counts.attempts, 3 + 2 + 3);
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
            assert!(
                finished <= 3,
                "crash at {k}: {} ran {finished}",
                e.experiment_id
            );
            if matches!(e.outcome(), "baseline" | "kept" | "rejected") {
                assert_eq!(e.samples.len(), 3, "crash at {k}: {e:?}");
                assert_eq!(finished, 3, "crash at {k}: {e:?}");
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
