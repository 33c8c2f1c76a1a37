//! `parallelism`: candidates in generations, each in its slot's worktree, against the fake
//! driver in `common` (real SQLite, fake git).

mod common;

use autoresearch_core as core;
use common::*;
use core::*;
use serde_json::json;

/// Two generations of three. Whatever order the slots propose in, generation one holds 8, 7 and
/// 11 (from 10: 7 kept, 8 superseded, 11 rejected) and generation two 6, 7.5 and 5 (from 7).
fn two_generations() -> (World, RunPolicy) {
    let w = World::new(
        score_evaluator(),
        score_proposer(vec![8.0, 7.0, 11.0, 6.0, 7.5, 5.0]),
    );
    (w, policy(json!({"parallelism": 3, "max_experiments": 6})))
}

fn fates(r: &RunResult) -> Vec<(String, &str)> {
    let metric = |m: Option<f64>| m.map_or("-".into(), |m| m.to_string());
    r.experiments
        .iter()
        .map(|e| (metric(e.metric), e.state.as_str()))
        .collect()
}

#[test]
fn the_best_of_each_generation_is_kept_and_the_others_that_improved_are_superseded() {
    let (mut w, policy) = two_generations();
    let mut run = start(policy);
    let r = w.drive(&mut run).unwrap();
    assert_eq!(
        r.status,
        Status::BudgetLimited,
        "{:?}\n{:#?}",
        r.blocker,
        w.log
    );
    let mut by_ordinal = fates(&r);
    by_ordinal[1..4].sort();
    by_ordinal[4..7].sort();
    assert_eq!(
        by_ordinal,
        [
            ("10".into(), "accepted"),
            ("11".into(), "rejected"),
            ("7".into(), "accepted"),
            ("8".into(), "superseded"),
            ("5".into(), "accepted"),
            ("6".into(), "superseded"),
            ("7.5".into(), "rejected"),
        ]
    );
    let c = &r.counts;
    assert_eq!(
        (c.experiments_started, c.accepted, c.superseded, c.rejected),
        (6, 2, 2, 2)
    );
    let best = r.best.clone().unwrap();
    assert_eq!(best.metric, 5.0);
    assert_eq!(w.run_branch.as_ref().unwrap().1, best.commit);
    // Generation two starts from generation one's winner; a superseded one names it.
    let kept_1 = r.experiments[1..4]
        .iter()
        .find(|e| e.state == "accepted")
        .unwrap();
    for e in &r.experiments[4..] {
        assert_eq!(Some(&e.parent_commit), kept_1.candidate_commit.as_ref());
    }
    let superseded = r.experiments[1..4]
        .iter()
        .find(|e| e.state == "superseded")
        .unwrap();
    assert_eq!(
        superseded.superseded_by.as_ref(),
        Some(&kept_1.experiment_id)
    );
    // Every evaluator knew its slot; each slot above 0 had its worktree, removed at the end.
    let mut slots = w.slots.clone();
    slots.sort();
    assert_eq!(slots, ["0", "0", "0", "1", "1", "2", "2"]);
    let removed: Vec<&String> = w.removed.iter().filter(|l| l.contains("-slot-")).collect();
    assert_eq!(removed.len(), 2, "{:?}", w.removed);
    // The stored rows say the same after a reload (superseded is a rejected row naming the
    // winner), and the result says it in every rendering.
    let rows = w.load(RUN_ID).unwrap();
    let snapshot = Run::snapshot(&rows, "/t", settings()).unwrap();
    assert_eq!(fates(&snapshot), fates(&r));
    assert!(r.to_tsv().contains("\tsuperseded\t"));
}

#[test]
fn a_generation_is_cut_to_the_budget_left() {
    let mut w = World::new(score_evaluator(), score_proposer(vec![9.0, 8.0, 7.0, 6.0]));
    let mut run = start(policy(json!({"parallelism": 3, "max_experiments": 4})));
    let r = w.drive(&mut run).unwrap();
    assert_eq!(r.counts.experiments_started, 4);
    assert_eq!(r.best.unwrap().metric, 6.0);
    let mut slots = w.slots.clone();
    slots.sort();
    assert_eq!(slots, ["0", "0", "0", "1", "2"]);
}

#[test]
fn one_at_a_time_is_the_original_loop_and_stores_no_parallelism() {
    let p = policy(json!({}));
    assert_eq!(p.parallelism, 1);
    assert!(p.to_json().get("parallelism").is_none());
    let p = policy(json!({"parallelism": 2}));
    assert_eq!(p.to_json()["parallelism"], 2);
    let errors = spec::validate(&spec_json(json!({"parallelism": 5})), &limits()).unwrap_err();
    assert_eq!(
        errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["parallelism: must be an integer from 1 to 4 (got 5)"]
    );
}

#[test]
fn every_crash_point_of_a_parallel_run_resumes_without_evaluating_anything_twice() {
    for_every_crash_point(
        || {
            let (w, mut policy) = two_generations();
            // A crash interrupts a whole generation's proposals, which count as failed rounds.
            policy.max_consecutive_failures = 6;
            (w, policy)
        },
        |k, w, r| {
            assert_eq!(r.counts.experiments_started, 6, "crash at {k}");
            assert!(
                r.experiments.iter().all(|e| e.decision.is_some()),
                "crash at {k}"
            );
            // An attempt that ran to its end is never run again; an interrupted one at most once.
            let exited: i64 = w.scalar(
                "SELECT coalesce(max(c), 0) FROM (SELECT count(*) c FROM attempts \
                 WHERE state = 'exited' GROUP BY experiment_id)",
            );
            assert!(
                exited <= 1,
                "crash at {k}: an experiment evaluated {exited} times"
            );
            assert_eq!(
                w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
                0
            );
            let best = r.best.clone().unwrap();
            assert_eq!(
                w.run_branch.as_ref().unwrap().1,
                best.commit,
                "crash at {k}"
            );
            let kept_ids: Vec<&str> = r
                .experiments
                .iter()
                .filter(|e| e.kind == "candidate" && e.state == "accepted")
                .map(|e| e.experiment_id.as_str())
                .collect();
            assert!(kept_ids.len() <= 2, "crash at {k}: one kept per generation");
        },
    );
}

#[test]
fn a_cancel_interrupts_every_candidate_in_flight_and_ends_once_they_are_in() {
    let (mut w, policy) = two_generations();
    // Hold the three evaluators of generation one (the baseline is evaluation 1).
    w.cancel_during_eval = Some(2);
    let mut run = start(policy);
    assert!(w.drive(&mut run).is_none());
    assert_eq!(w.held.len(), 3);
    run.handle(
        Input::Cancel {
            reason: "job_kill".into(),
        },
        NOW,
    )
    .unwrap();
    let mut interrupted = Vec::new();
    while let Some(effect) = run.poll() {
        let Effect::Interrupt { target } = effect else {
            panic!("only interrupts while the evaluators run: {effect:?}")
        };
        interrupted.push(target);
    }
    interrupted.sort();
    assert_eq!(interrupted, w.held);
    for id in w.held.clone() {
        let outcome = ProcessOutcome {
            cancelled: true,
            quiescent: true,
            ..Default::default()
        };
        run.handle(Input::Exited { id, outcome }, NOW).unwrap();
    }
    let r = w.drive(&mut run).unwrap();
    assert_eq!(r.status, Status::Cancelled);
    assert_eq!(r.counts.experiments_started, 3);
    assert!(
        r.experiments[1..]
            .iter()
            .all(|e| e.decision.as_deref() == Some("fail"))
    );
    assert_eq!(r.best.unwrap().metric, 10.0);
    assert_eq!(w.run_branch.as_ref().unwrap().1, w.start);
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM attempts WHERE state = 'running'"),
        0
    );
}

#[test]
fn one_candidate_blocking_the_run_waits_for_the_others_before_it_ends() {
    let (mut w, policy) = two_generations();
    w.fail = Some(("commit".into(), "disk full".into()));
    let mut run = start(policy);
    let r = w.drive(&mut run).unwrap();
    assert_eq!(r.status, Status::Blocked);
    assert_eq!(r.blocker.unwrap().code, "git-failed");
    assert!(run.poll().is_none(), "the report is the last effect");
    assert!(r.experiments.iter().all(|e| e.decision.is_some()));
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM attempts WHERE state = 'running'"),
        0
    );
    assert_eq!(
        w.scalar::<i64>("SELECT count(*) FROM locks WHERE released_at IS NULL"),
        0
    );
}

#[test]
fn a_slot_worktree_git_refuses_blocks_the_run_and_the_table_shows_gits_words() {
    let (mut w, policy) = two_generations();
    let line = format!("create-worktree {RUN_ID}-slot-2");
    w.fail = Some((
        line,
        "fatal: failed to read .git/worktrees/x/commondir".into(),
    ));
    let r = w.drive(&mut start(policy)).unwrap();
    assert_eq!(r.status, Status::Blocked);
    expect_test::expect_file!["snapshots/slot-blocked.table"].assert_eq(&r.to_table(20));
}

#[test]
fn a_tie_goes_to_the_lower_ordinal_and_the_plateau_counts_whole_generations() {
    // Generation one: 8 kept, 11 rejected; its generation-mate is not stale after the kept one,
    // so max_stale_experiments 1 lets generation two (12, 13) run, and ends the run after it.
    let mut w = World::new(
        score_evaluator(),
        score_proposer(vec![8.0, 11.0, 12.0, 13.0]),
    );
    let p = policy(json!({"parallelism": 2, "max_experiments": 6, "max_stale_experiments": 1}));
    let r = w.drive(&mut start(p)).unwrap();
    assert_eq!(r.status, Status::BudgetLimited);
    assert_eq!(r.blocker.unwrap().code, "plateau");
    assert_eq!(r.counts.experiments_started, 4);

    // Two equal means: the lower ordinal is kept, the other is superseded by it.
    let mut w = World::new(score_evaluator(), score_proposer(vec![7.0, 7.0]));
    let r = w
        .drive(&mut start(policy(
            json!({"parallelism": 2, "max_experiments": 2}),
        )))
        .unwrap();
    assert_eq!(
        fates(&r)[1..],
        [("7".into(), "accepted"), ("7".into(), "superseded")]
    );
    assert_eq!(
        r.experiments[2].superseded_by.as_ref(),
        Some(&r.experiments[1].experiment_id)
    );
}

/// [`two_generations`] with `repeats` 3 and an evaluator noisy by ±0.5.
fn two_noisy_generations() -> (World, RunPolicy) {
    let w = World::new(
        noisy_evaluator(),
        score_proposer(vec![8.0, 7.0, 11.0, 6.0, 7.5, 5.0]),
    );
    let policy = policy(json!({"parallelism": 3, "max_experiments": 6, "repeats": 3}));
    (w, policy)
}

/// Per generation: the ordinals that got fresh samples, and the kept one.
fn confirmed_and_kept(r: &RunResult) -> Vec<(Vec<u32>, Option<u32>)> {
    r.experiments
        .iter()
        .filter(|e| e.kind == "candidate")
        .fold(Vec::new(), |mut generations, e| {
            let g = (e.ordinal as usize - 1) / 3;
            if generations.len() <= g {
                generations.push((Vec::new(), None));
            }
            if !e.confirmation.is_empty() {
                generations[g].0.push(e.ordinal);
            }
            if e.state == "accepted" {
                generations[g].1 = Some(e.ordinal);
            }
            generations
        })
}

#[test]
fn with_repeats_a_generation_confirms_only_its_best_screened_candidate_on_fresh_samples() {
    let (mut w, policy) = two_noisy_generations();
    let mut run = start(policy);
    let r = w.drive(&mut run).unwrap();
    assert_eq!(r.status, Status::BudgetLimited, "{:?}", r.blocker);
    // Generation one: 11 is dropped, 8 and 7 screen promising, 7 (the better) alone is
    // confirmed and kept, 8 is superseded. Generation two, against 7's fresh samples: 7.5 is
    // dropped, 6 and 5 screen promising, 5 alone is confirmed and kept.
    let screened: Vec<String> = r
        .experiments
        .iter()
        .map(|e| {
            let (n, fresh) = (e.samples.len(), e.confirmation.len());
            format!("#{} {} screened {n} fresh {fresh}", e.ordinal, e.state)
        })
        .collect();
    expect_test::expect![[r##"
        [
            "#0 accepted screened 3 fresh 0",
            "#1 superseded screened 1 fresh 0",
            "#2 accepted screened 1 fresh 3",
            "#3 rejected screened 1 fresh 0",
            "#4 superseded screened 3 fresh 0",
            "#5 rejected screened 1 fresh 0",
            "#6 accepted screened 1 fresh 3",
        ]
    "##]]
    .assert_debug_eq(&screened);
    assert_eq!(
        confirmed_and_kept(&r),
        [(vec![2], Some(2)), (vec![6], Some(6))]
    );
    let kept = &r.experiments[2];
    assert_eq!(kept.metric, Some(stats::mean(&kept.confirmation)));
    // The fresh samples were taken in the kept candidate's own slot worktree (slot 1).
    let fresh_in_slot_1 = w
        .log
        .iter()
        .filter(|l| l.starts_with("evaluate") && l.contains("candidate-2-attempt-"))
        .count();
    assert_eq!(
        fresh_in_slot_1,
        kept.samples.len() + kept.confirmation.len()
    );
}

#[test]
fn every_crash_point_of_a_parallel_run_with_repeats_resumes_without_an_extra_sample() {
    for_every_crash_point(
        || {
            let (w, mut policy) = two_noisy_generations();
            policy.max_consecutive_failures = 6;
            (w, policy)
        },
        |k, w, r| {
            for e in &r.experiments {
                let exited: i64 = w.scalar(&format!(
                    "SELECT count(*) FROM attempts WHERE experiment_id = '{}' AND state = 'exited'",
                    e.experiment_id
                ));
                let sampled = e.samples.len() + e.confirmation.len();
                if e.failure_code.is_none() {
                    assert_eq!(exited as usize, sampled, "crash at {k}: {e:?}");
                }
                assert!(
                    e.samples.len() <= 3 && e.confirmation.len() <= 3,
                    "crash at {k}: {e:?}"
                );
            }
            for (confirmed, kept) in confirmed_and_kept(r) {
                assert!(confirmed.len() <= 1, "crash at {k}: {confirmed:?}");
                assert!(kept.is_none_or(|o| confirmed == [o]), "crash at {k}");
            }
            assert_eq!(
                w.run_branch.as_ref().unwrap().1,
                r.best.clone().unwrap().commit,
                "crash at {k}"
            );
        },
    );
}
