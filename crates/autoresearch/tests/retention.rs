//! Retention in whole runs: the core against the fake driver (real SQLite): which files the
//! cleanup at a run's start and end removes, that the rows stay and are marked, and what the
//! result says.

mod common;

use autoresearch_core as core;
use common::*;
use core::*;
use serde_json::json;

const DAY: Millis = 86_400_000;
const STATE: &str = "/repo/.git/dsh-autoresearch";
const OTHER_RUN: &str = "1c2d3e4f-5061-4728-93a4-b5c6d7e8f9a0";

fn with(retention: Retention) -> Settings {
    Settings {
        retention,
        ..settings()
    }
}

fn removed_at(w: &World, artifact: &str) -> Option<i64> {
    w.db.query_row(
        "SELECT removed_at FROM artifacts WHERE artifact_id = ?1",
        [artifact],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn a_failed_attempts_artifacts_go_as_soon_as_its_experiment_ends() {
    let settings = with(Retention {
        retain_failed_artifacts: false,
        ..settings().retention
    });
    let mut w = World::new(score_evaluator(), failing_first());
    w.write_artifacts = true;
    let mut run = Run::start(policy(json!({"max_experiments": 2})), RUN_ID, settings, NOW).unwrap();
    let r = w.drive(&mut run).unwrap();
    assert_eq!(r.status, Status::BudgetLimited);
    let attempt = format!("{RUN_ID}-candidate-1-attempt-1");
    let dir = format!("{STATE}/artifacts/{RUN_ID}/{attempt}");
    assert_eq!(
        w.removed,
        [
            format!("file {dir}/stdout.log"),
            format!("file {dir}/stderr.log")
        ]
    );
    // Before the next round was proposed, not at the end.
    let removal = w.log.iter().position(|l| l == "remove-files 2").unwrap();
    let second_round = w.log.iter().rposition(|l| l == "propose").unwrap();
    assert!(removal < second_round, "{:#?}", w.log);
    // The rows stay, marked; the successful attempts' artifacts are untouched.
    assert!(removed_at(&w, &format!("{attempt}-stdout")).is_some());
    assert!(removed_at(&w, &format!("{attempt}-stderr")).is_some());
    assert_eq!(
        removed_at(&w, &format!("{RUN_ID}-baseline-attempt-1-stdout")),
        None
    );
    assert_eq!(w.scalar::<i64>("SELECT count(*) FROM artifacts"), 6);
    let json = r.to_json(100_000);
    let flags: Vec<(String, bool)> = json["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["artifact_id"].as_str().unwrap().replace(RUN_ID, "R"),
                a["removed"] == true,
            )
        })
        .collect();
    assert_eq!(
        flags,
        [
            ("R-baseline-attempt-1-stdout".into(), false),
            ("R-baseline-attempt-1-stderr".into(), false),
            ("R-candidate-1-attempt-1-stdout".into(), true),
            ("R-candidate-1-attempt-1-stderr".into(), true),
            ("R-candidate-2-attempt-1-stdout".into(), false),
            ("R-candidate-2-attempt-1-stderr".into(), false),
        ]
    );
    assert_eq!(
        json["removed"],
        json!({"worktree": false, "tsv": false, "artifacts": 2})
    );
}

#[test]
fn with_retain_failed_artifacts_nothing_is_removed() {
    let mut w = World::new(score_evaluator(), failing_first());
    w.write_artifacts = true;
    let r = run_start_to_end(&mut w, settings(), RUN_ID, NOW);
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(w.removed, Vec::<String>::new());
    assert!(!w.log.iter().any(|l| l.starts_with("remove-")));
    assert!(r.removed.is_empty());
    assert_eq!(r.to_json(100_000).get("removed"), None);
}

fn run_start_to_end(w: &mut World, settings: Settings, run_id: &str, now: Millis) -> RunResult {
    w.clock = now;
    w.run_branch = None;
    w.rounds = 0;
    let mut run = Run::start(policy(json!({"max_experiments": 2})), run_id, settings, now).unwrap();
    w.drive(&mut run).unwrap()
}

#[test]
fn an_ended_runs_worktree_goes_without_retain_worktrees_and_its_rows_stay() {
    let settings = with(Retention {
        retain_worktrees: false,
        ..settings().retention
    });
    // A run that fails too: every ended run's worktree goes, not only a successful one's.
    let mut w = World::new(
        Box::new(|_, _| ProcessOutcome {
            exit_code: Some(1),
            quiescent: true,
            ..Default::default()
        }),
        score_proposer(vec![]),
    );
    let r = run_start_to_end(&mut w, settings, RUN_ID, NOW);
    assert_eq!(r.status, Status::BaselineBlocked);
    assert_eq!(w.removed, [format!("worktree {STATE}/worktrees/{RUN_ID}")]);
    assert!(r.removed.worktree);
    assert!(
        w.scalar::<Option<i64>>("SELECT worktree_removed_at FROM runs")
            .is_some()
    );
    assert_eq!(
        w.scalar::<String>("SELECT state FROM runs"),
        "baseline-blocked"
    );
    // A resume of the ended run reports it again, removal included, and removes nothing more.
    let again = Run::resume(
        RUN_ID,
        Default::default(),
        None,
        common::settings(),
        NOW + 1,
    );
    let r = w.drive(&mut again.unwrap()).unwrap();
    assert!(r.removed.worktree);
    assert_eq!(w.removed.len(), 1);
}

#[test]
fn the_next_runs_cleanup_removes_what_has_passed_its_retention_window() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    w.write_artifacts = true;
    let first = run_start_to_end(&mut w, settings(), RUN_ID, NOW);
    assert_eq!(first.status, Status::BudgetLimited);
    assert!(w.removed.is_empty());

    // 29 days later nothing of the first run has expired.
    let other = "2d3e4f50-6172-4839-a4b5-c6d7e8f9a0b1";
    run_start_to_end(&mut w, settings(), other, NOW + 29 * DAY);
    assert!(w.removed.is_empty(), "{:?}", w.removed);

    // 31 days later the cleanup at the third run's start removes the first run's artifacts and
    // TSV (not the second run's), before that run takes its lock.
    let before = w.log.len();
    let third = run_start_to_end(&mut w, settings(), OTHER_RUN, NOW + 31 * DAY);
    assert_eq!(third.status, Status::BudgetLimited);
    let log = &w.log[before..];
    assert_eq!(
        &log[..4],
        [
            "discover",
            "open-tracker",
            "load-retention",
            "remove-files 7"
        ]
    );
    let files: Vec<String> = w
        .removed
        .iter()
        .map(|f| f.replace(RUN_ID, "R").replace(STATE, "S"))
        .collect();
    assert_eq!(
        files,
        [
            "file S/artifacts/R/R-baseline-attempt-1/stderr.log",
            "file S/artifacts/R/R-baseline-attempt-1/stdout.log",
            "file S/artifacts/R/R-candidate-1-attempt-1/stderr.log",
            "file S/artifacts/R/R-candidate-1-attempt-1/stdout.log",
            "file S/artifacts/R/R-candidate-2-attempt-1/stderr.log",
            "file S/artifacts/R/R-candidate-2-attempt-1/stdout.log",
            "file S/exports/R.tsv",
        ]
    );
    let marked = |sql: &str| w.scalar::<i64>(sql);
    assert_eq!(
        marked(&format!(
            "SELECT count(*) FROM artifacts WHERE removed_at IS NOT NULL AND run_id = '{RUN_ID}'"
        )),
        6
    );
    assert_eq!(
        marked("SELECT count(*) FROM artifacts WHERE removed_at IS NULL"),
        12
    );
    assert_eq!(
        marked("SELECT count(*) FROM runs WHERE tsv_removed_at IS NOT NULL"),
        1
    );
    assert_eq!(marked("SELECT count(*) FROM runs"), 3);
    // The first run, shown again, says what retention removed of it.
    let shown = Run::snapshot(&w.load(RUN_ID).unwrap(), "t", settings()).unwrap();
    assert_eq!(
        (
            shown.removed.tsv,
            shown.removed.artifacts.len(),
            shown.removed.worktree
        ),
        (true, 6, false)
    );
}

#[test]
fn a_failed_removal_is_a_warning_and_the_next_cleanup_tries_again() {
    let settings = with(Retention {
        retain_worktrees: false,
        ..settings().retention
    });
    let mut w = World::new(score_evaluator(), score_proposer(vec![8.0, 7.0]));
    w.fail = Some(("remove-worktree".into(), "worktree is locked".into()));
    let r = run_start_to_end(&mut w, settings.clone(), RUN_ID, NOW);
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(
        r.warnings,
        [format!(
            "retention could not remove the worktree of run {RUN_ID}: worktree is locked"
        )]
    );
    assert!(!r.removed.worktree);
    assert!(
        w.scalar::<Option<i64>>("SELECT worktree_removed_at FROM runs")
            .is_none()
    );
    let next = run_start_to_end(&mut w, settings, OTHER_RUN, NOW + DAY);
    assert_eq!(next.status, Status::BudgetLimited);
    assert_eq!(
        w.removed,
        [
            format!("worktree {STATE}/worktrees/{RUN_ID}"),
            format!("worktree {STATE}/worktrees/{OTHER_RUN}"),
        ]
    );
}
