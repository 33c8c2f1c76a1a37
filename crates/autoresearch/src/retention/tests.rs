use super::*;
use crate::protocol::RetentionRun;

const DIR: &str = "/r/.git/dsh-autoresearch";
const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
const B: &str = "bbbbbbbb-0000-4000-8000-000000000002";
const NOW: u64 = 100 * DAY_MS;

fn keep_all() -> Retention {
    Retention {
        artifact_retention_days: 30,
        retain_failed_artifacts: true,
        retain_worktrees: true,
        cleanup_worktrees_on_success: false,
        tsv_retention_days: 30,
    }
}

/// A run that ended `days_ago` days before `NOW`, in `state`.
fn ended(run_id: &str, state: &str, days_ago: u64) -> RetentionRun {
    RetentionRun {
        run_id: run_id.into(),
        state: state.into(),
        worktree: layout::worktree_path(DIR, run_id),
        terminal_at: Some(i64::try_from(NOW - days_ago * DAY_MS).unwrap()),
        worktree_removed_at: None,
        tsv_removed_at: None,
        lock_held: false,
    }
}

/// The stdout artifact of `run_id`'s attempt `n` (failed with `failure` when given).
fn artifact(run_id: &str, n: u32, failure: Option<&str>) -> RetentionArtifact {
    let attempt_id = format!("{run_id}-candidate-{n}-attempt-1");
    RetentionArtifact {
        artifact_id: format!("{attempt_id}-stdout"),
        location: format!(
            "{}/stdout.log",
            layout::attempt_artifacts_dir(DIR, run_id, &attempt_id)
        ),
        run_id: run_id.into(),
        attempt_id,
        attempt_failure_code: failure.map(str::to_owned),
    }
}

fn rows(runs: Vec<RetentionRun>, artifacts: Vec<RetentionArtifact>) -> RetentionRows {
    RetentionRows { runs, artifacts }
}

/// The plan as lines: what each removal removes.
fn shown(plan: &[Removal]) -> Vec<String> {
    plan.iter()
        .map(|r| match r {
            Removal::Files {
                files, dirs, tsv, ..
            } => format!(
                "files {} | dirs {}{}",
                files.join(" "),
                dirs.join(" "),
                if *tsv { " | tsv" } else { "" }
            ),
            Removal::Worktree { path, .. } => format!("worktree {path}"),
        })
        .collect()
}

#[test]
fn keeping_everything_removes_nothing_until_the_windows_pass() {
    let r = rows(
        vec![ended(A, "budget-limited", 29), ended(B, "round-failed", 1)],
        vec![artifact(A, 1, None), artifact(B, 1, Some("exit"))],
    );
    assert_eq!(plan(&r, &keep_all(), DIR, NOW), vec![]);
}

#[test]
fn artifacts_and_tsv_go_once_the_run_ended_that_many_days_ago() {
    let r = rows(
        vec![ended(A, "budget-limited", 30), ended(B, "cancelled", 10)],
        vec![
            artifact(A, 1, None),
            artifact(A, 2, Some("exit")),
            artifact(B, 1, None),
        ],
    );
    let retention = Retention {
        tsv_retention_days: 10,
        ..keep_all()
    };
    let a = format!("{DIR}/artifacts/{A}");
    let b = format!("{DIR}/exports/{B}.tsv");
    assert_eq!(
        shown(&plan(&r, &retention, DIR, NOW)),
        vec![
            format!(
                "files {a}/{A}-candidate-1-attempt-1/stdout.log {a}/{A}-candidate-2-attempt-1/stdout.log {DIR}/exports/{A}.tsv | dirs {a}/{A}-candidate-1-attempt-1 {a}/{A}-candidate-2-attempt-1 {a} | tsv"
            ),
            format!("files {b} | dirs  | tsv"),
        ]
    );
}

#[test]
fn failed_attempts_artifacts_go_at_once_without_retain_failed_artifacts() {
    let r = rows(
        vec![ended(A, "round-failed", 0)],
        vec![artifact(A, 1, None), artifact(A, 2, Some("timeout"))],
    );
    let retention = Retention {
        retain_failed_artifacts: false,
        ..keep_all()
    };
    let plan = plan(&r, &retention, DIR, NOW);
    let Removal::Files {
        artifact_ids, tsv, ..
    } = &plan[0]
    else {
        panic!("{plan:?}")
    };
    assert_eq!(artifact_ids, &[format!("{A}-candidate-2-attempt-1-stdout")]);
    assert!(!tsv);
    assert_eq!(plan.len(), 1);
}

#[test]
fn worktrees_go_without_retain_worktrees_or_after_success_with_cleanup() {
    let r = rows(
        vec![ended(A, "target-reached", 0), ended(B, "blocked", 0)],
        vec![],
    );
    let all = Retention {
        retain_worktrees: false,
        ..keep_all()
    };
    assert_eq!(
        shown(&plan(&r, &all, DIR, NOW)),
        vec![
            format!("worktree {DIR}/worktrees/{A}"),
            format!("worktree {DIR}/worktrees/{B}")
        ]
    );
    let success_only = Retention {
        cleanup_worktrees_on_success: true,
        ..keep_all()
    };
    assert_eq!(
        shown(&plan(&r, &success_only, DIR, NOW)),
        vec![format!("worktree {DIR}/worktrees/{A}")]
    );
}

#[test]
fn live_unfinished_removed_and_foreign_paths_are_never_touched() {
    let remove_all = Retention {
        artifact_retention_days: 1,
        retain_failed_artifacts: false,
        retain_worktrees: false,
        cleanup_worktrees_on_success: true,
        tsv_retention_days: 1,
    };
    // A terminal run whose lock is held (its processes are not proven gone) is live.
    let live = RetentionRun {
        lock_held: true,
        ..ended(A, "blocked", 90)
    };
    let running = RetentionRun {
        terminal_at: None,
        ..ended(B, "ready", 90)
    };
    let r = rows(
        vec![live, running],
        vec![artifact(A, 1, Some("exit")), artifact(B, 1, Some("exit"))],
    );
    assert_eq!(plan(&r, &remove_all, DIR, NOW), vec![]);

    // Already removed: nothing again. A worktree or artifact path that is not the run's own
    // (a tampered row) is left alone.
    let done = RetentionRun {
        worktree_removed_at: Some(1),
        tsv_removed_at: Some(1),
        ..ended(A, "cancelled", 90)
    };
    let foreign = RetentionRun {
        worktree: "/home/me/project".into(),
        tsv_removed_at: Some(1),
        ..ended(B, "cancelled", 90)
    };
    let mut escaping = artifact(B, 1, None);
    escaping.location = "/home/me/.ssh/id_ed25519".into();
    let mut dotted = artifact(B, 2, None);
    dotted.attempt_id = "..".into();
    dotted.location = format!("{DIR}/artifacts/{B}/../stdout.log");
    let bad_id = RetentionRun {
        run_id: "../..".into(),
        ..ended("x", "cancelled", 90)
    };
    let r = rows(vec![done, foreign, bad_id], vec![escaping, dotted]);
    assert_eq!(plan(&r, &remove_all, DIR, NOW), vec![]);
}

#[test]
fn each_removal_marks_its_rows_and_records_itself_in_the_result() {
    let files = Removal::Files {
        run_id: A.into(),
        files: vec![],
        dirs: vec![],
        artifact_ids: vec!["x-stdout".into()],
        tsv: true,
    };
    let marks: Vec<(&str, Vec<String>)> = files
        .marks(7)
        .into_iter()
        .chain(
            Removal::Worktree {
                run_id: A.into(),
                path: String::new(),
            }
            .marks(7),
        )
        .map(|s| {
            (
                s.sql,
                s.params.iter().map(|(n, v)| format!("{n}={v:?}")).collect(),
            )
        })
        .collect();
    assert_eq!(
        marks,
        vec![
            (
                sql::MarkArtifactRemoved::SQL,
                vec![
                    "now=Integer(7)".into(),
                    "artifact_id=Text(\"x-stdout\")".into()
                ]
            ),
            (
                sql::MarkTsvRemoved::SQL,
                vec!["now=Integer(7)".into(), format!("run_id=Text(\"{A}\")")]
            ),
            (
                sql::MarkWorktreeRemoved::SQL,
                vec!["now=Integer(7)".into(), format!("run_id=Text(\"{A}\")")]
            ),
        ]
    );
    let mut removed = Removed::default();
    files.record(&mut removed);
    assert!(removed.tsv && !removed.worktree && removed.artifacts.contains("x-stdout"));
    assert_eq!(
        files.what(),
        format!("1 artifact file(s) and the TSV export of run {A}")
    );
}
