//! `holdout`: a second evaluator run on the baseline and on each kept candidate, never a sample
//! of the keep rule and never in a proposer's handoff; a kept candidate whose holdout is not
//! better than the best it replaced is reported, or with `holdout_stop` ends the run.

mod common;

use autoresearch_core as core;
use common::*;
use core::*;
use serde_json::json;

/// The holdout's value for each score: it follows the metric down to 8, then turns back up.
fn holdout_evaluator() -> Evaluator {
    Box::new(|files, _| {
        let score: f64 = files
            .get("score.txt")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(f64::NAN);
        let held = match score {
            s if s >= 8.0 => s / 2.0,
            s => 4.0 + (8.0 - s) / 4.0,
        };
        metric_out("score", held)
    })
}

fn holdout_spec(extra: serde_json::Value) -> serde_json::Value {
    let mut spec = json!({
        "max_experiments": 2,
        "holdout": {"command": "node", "args": [format!("{HOLDOUT_DIR}check.mjs")]},
    });
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    spec
}

fn holdout_world() -> World {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 6.0]));
    w.holdout = Some(holdout_evaluator());
    w
}

#[test]
fn the_holdout_measures_the_baseline_and_each_kept_candidate_and_reports_a_divergence() {
    let mut w = holdout_world();
    let mut run = start(policy(holdout_spec(json!({}))));
    let r = w.drive(&mut run).expect("report");
    assert_eq!(r.status, Status::BudgetLimited, "{:?}", r.blocker);
    let held: Vec<(&str, Option<f64>)> = r
        .experiments
        .iter()
        .map(|e| (e.outcome(), e.holdout))
        .collect();
    // 10 → 8 generalizes (holdout 5 → 4); 8 → 6 does not (holdout 4 → 4.5).
    assert_eq!(
        held,
        [
            ("baseline", Some(5.0)),
            ("kept", Some(4.0)),
            ("kept", Some(4.5))
        ]
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM attempts WHERE purpose = 'holdout'"),
        3
    );
    // Its inputs are frozen with the evaluator's.
    let provenance: String = w.scalar("SELECT provenance_json FROM runs");
    assert!(
        provenance.contains("\"/srv/holdout/check.mjs\""),
        "{provenance}"
    );
    // The holdout's command and values never reach a proposer.
    for handoff in &w.handoffs {
        assert!(
            !handoff.contains("holdout") && !handoff.contains("4.5"),
            "{handoff}"
        );
    }
    let json = r.to_json(16_384);
    expect_test::expect![[r#"{"baseline":5.0,"best":4.5,"divergences":["the holdout diverges at candidate 2: score went from 8 to 6, but the holdout from 4 to 4.5 (not better; the gain may not generalize)"]}"#]].assert_eq(&json["holdout"].to_string());
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("the holdout diverges at candidate 2"))
    );
    let text = tool::job_output(&json.to_string());
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("holdout") && !l.starts_with('{'))
        .collect();
    expect_test::expect![[r##"
        [
            "holdout (never shown to the proposer): baseline 5, best 4.5",
            "warning: the holdout diverges at candidate 2: score went from 8 to 6, but the holdout from 4 to 4.5 (not better; the gain may not generalize)",
            "#0 accepted 10 - — holdout 5",
            "#1 accepted 8 0e42dabf — holdout 4 try 8",
            "#2 accepted 6 7e82d110 — holdout 4.5 try 6",
        ]
    "##]].assert_debug_eq(&lines);
    let table: Vec<String> = r.to_table(20).lines().skip(3).map(str::to_owned).collect();
    expect_test::expect![[r#"
        [
            "holdout (never shown to the proposer): baseline 5, best 4.5",
            "warning: the holdout diverges at candidate 2: score went from 8 to 6, but the holdout from 4 to 4.5 (not better; the gain may not generalize)",
            "   #  state                     metric  decision  commit    note",
            "   0  accepted                      10  accept    -         holdout 5",
            "   1  accepted                       8  accept    0e42dabf  holdout 4 try 8",
            "   2  accepted                       6  accept    7e82d110  holdout 4.5 try 6",
        ]
    "#]].assert_debug_eq(&table);
    expect_test::expect_file!["snapshots/holdout-run.html"].assert_eq(&r.to_html());
    let tsv = w.tsv.clone().unwrap();
    let last: Vec<&str> = tsv
        .lines()
        .map(|l| l.rsplit('\t').next().unwrap())
        .collect();
    assert_eq!(last, ["holdout", "5", "4", "4.5"]);
}

#[test]
fn with_holdout_stop_a_divergence_ends_the_run_budget_limited() {
    let mut w = holdout_world();
    let spec = holdout_spec(json!({"holdout_stop": true, "max_experiments": 3}));
    let mut run = start(policy(spec));
    let r = w.drive(&mut run).expect("report");
    assert_eq!(r.status, Status::BudgetLimited);
    let blocker = r.blocker.expect("the stop's reason");
    assert_eq!(blocker.code, "holdout-diverged");
    assert!(
        blocker.message.contains("from 4 to 4.5"),
        "{}",
        blocker.message
    );
    // The third candidate never starts.
    assert_eq!(r.counts.experiments_started, 2);
}

#[test]
fn a_holdout_inside_the_worktree_or_a_stop_without_one_is_refused_naming_the_field() {
    let errors = spec::validate(
        &spec_json(json!({"holdout": {"command": "node", "args": ["held/check.mjs", "-v"]}})),
        &limits(),
    )
    .unwrap_err();
    expect_test::expect![[r#"
        [
            "holdout.args[0]: must be an absolute path outside the repository (a proposer can read every file of its worktree, and the holdout's must stay unseen) (got \"held/check.mjs\")",
        ]
    "#]].assert_debug_eq(
        &errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
    );
    let errors = spec::validate(&spec_json(json!({"holdout_stop": true})), &limits()).unwrap_err();
    expect_test::expect![[r#"
        [
            "holdout_stop: needs a holdout (got true)",
        ]
    "#]]
    .assert_debug_eq(&errors.iter().map(ToString::to_string).collect::<Vec<_>>());
    // Without a holdout the stored policy (and its hash) is what earlier versions wrote.
    let p = policy(json!({}));
    assert!(p.to_json().get("holdout").is_none() && p.to_json().get("holdout_stop").is_none());
}

#[test]
fn every_crash_point_resumes_with_each_holdout_measured_once() {
    for_every_crash_point(
        || (holdout_world(), policy(holdout_spec(json!({})))),
        |k, w, r| {
            let measured: i64 = w.scalar(
                "SELECT coalesce(max(c), 0) FROM (SELECT count(*) c FROM attempts \
                 WHERE purpose = 'holdout' AND state = 'exited' GROUP BY experiment_id)",
            );
            assert_eq!(measured, 1, "crash at {k}");
            for e in r.experiments.iter().filter(|e| e.state == "accepted") {
                assert!(e.holdout.is_some(), "crash at {k}: {e:?}");
            }
        },
    );
}

#[test]
fn a_holdout_file_changed_mid_run_is_a_provenance_mismatch() {
    let script = format!("{HOLDOUT_DIR}check.mjs");
    let world = |content: &str| {
        let mut w = holdout_world();
        let start = w.start.clone();
        w.commits
            .get_mut(&start)
            .unwrap()
            .insert(script.clone(), content.into());
        w
    };
    // Stop the run once its first candidate is kept (the baseline and candidate 1 accepted).
    let mut w = world("v1");
    let mut run = start(policy(holdout_spec(json!({}))));
    for k in 1.. {
        w = world("v1");
        run = start(policy(holdout_spec(json!({}))));
        w.crash_after = Some(k);
        assert!(
            w.drive(&mut run).is_none(),
            "the run ended before a kept candidate"
        );
        if w.scalar::<i64>("SELECT count(*) FROM experiments WHERE state = 'accepted'") == 2 {
            break;
        }
    }
    drop(run);
    // The holdout's script is edited on disk (in every tree, as a file outside the repository is).
    for files in w.commits.values_mut().chain(std::iter::once(&mut w.files)) {
        files.insert(script.clone(), "v2".into());
    }
    for (files, _) in w.trees.values_mut() {
        files.insert(script.clone(), "v2".into());
    }
    let mut run = Run::resume(RUN_ID, Default::default(), None, settings(), NOW + 1).unwrap();
    w.crash_after = None;
    let r = w.drive(&mut run).expect("report");
    let fates: Vec<(&str, Option<&str>)> = r
        .experiments
        .iter()
        .map(|e| (e.state.as_str(), e.failure_code.as_deref()))
        .collect();
    assert_eq!(
        fates,
        [
            ("accepted", None),
            ("accepted", None),
            ("policy-violation", Some("provenance-mismatch"))
        ],
        "{:?}",
        r.blocker
    );
}
