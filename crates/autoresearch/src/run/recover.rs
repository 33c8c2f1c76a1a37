//! Recovery's own state and decisions: what a stored run must be to go on, whether its host may
//! still drive it, and which leftover processes to stop before anything else happens. It sees
//! only what it is given; `resume.rs` carries its steps out on the run.

use super::ledger::Attempt;
use crate::failure::Failure;
use crate::jcs;
use crate::protocol::{StoredRows, StoredRun};
use crate::spec::{Limits, RunPolicy, check_resume, policy_from_json};
use crate::state::RunState;
use serde_json::{Map, Value};
use std::collections::VecDeque;

/// What a resume, abandon or reconcile holds while it recovers.
#[derive(Default)]
pub(super) struct Recovery {
    /// A resume or abandon goes on without proving the run's host dead (`Run::force`).
    force: bool,
    /// The host record the run had when it was loaded (the host that ran its attempts).
    recorded_host: Option<String>,
    /// The stored rows a resume or abandon holds while the run's host is probed.
    probing: Option<Box<StoredRows>>,
    /// A reconcile found the run's host dead: recovery ends by marking it interrupted.
    reconciling: bool,
    /// Recovery stopped the run's leftover headless proposers already.
    proposers_reaped: bool,
    /// Running attempts still to stop, in order.
    to_stop: VecDeque<usize>,
}

/// A leftover process recovery stops before the run goes on.
#[derive(Debug, PartialEq)]
pub(super) enum Stop {
    /// The run's headless proposers (once).
    Proposers,
    /// An attempt's process group; `pid`, `pgid` and `start_time` only where the recorded pid
    /// means something here (else it is found by its marker and cgroup alone).
    Attempt {
        attempt: usize,
        attempt_id: String,
        pid: Option<u32>,
        pgid: Option<u32>,
        start_time: Option<String>,
    },
}

/// Why a stored run cannot go on: nothing is written.
#[derive(Debug, PartialEq)]
pub(super) struct Refusal {
    pub(super) code: Failure,
    pub(super) message: String,
    pub(super) evidence: Vec<String>,
}

fn refusal(code: Failure, message: &str, evidence: Vec<String>) -> Refusal {
    Refusal {
        code,
        message: message.to_owned(),
        evidence,
    }
}

impl Recovery {
    /// Goes on without proving the host dead.
    pub(super) fn force(&mut self) {
        self.force = true;
    }

    /// The host to probe before a resume or abandon of a run in `state` goes on: the one it
    /// records, unless the run is ended, released, already interrupted, or forced.
    pub(super) fn host_to_probe(&self, r: &StoredRun, state: RunState) -> Option<String> {
        if self.force || state.is_terminal() || !r.lock_held || r.interrupted_at.is_some() {
            return None;
        }
        r.host_json.clone()
    }

    /// Holds the stored rows while the host is probed.
    pub(super) fn hold(&mut self, rows: Box<StoredRows>) {
        self.probing = Some(rows);
    }

    /// The rows held during the probe, if a resume or abandon waits on one.
    pub(super) fn take_probing(&mut self) -> Option<Box<StoredRows>> {
        self.probing.take()
    }

    /// Remembers the host record the run was loaded with.
    pub(super) fn loaded(&mut self, recorded_host: Option<String>) {
        self.recorded_host = recorded_host;
    }

    /// Starts stopping `running` (the attempts that may still run); `reconciling` when a
    /// reconcile found the host dead.
    pub(super) fn begin(&mut self, running: VecDeque<usize>, reconciling: bool) {
        self.to_stop = running;
        self.reconciling |= reconciling;
    }

    pub(super) fn reconciling(&self) -> bool {
        self.reconciling
    }

    /// The next leftover to stop: the proposers first, then each attempt; `None` once all are.
    /// `current_host` is this driver's host record.
    pub(super) fn next_stop(
        &mut self,
        attempts: &[Attempt],
        current_host: Option<&str>,
    ) -> Option<Stop> {
        if !self.proposers_reaped {
            self.proposers_reaped = true;
            return Some(Stop::Proposers);
        }
        let attempt = self.to_stop.pop_front()?;
        let a = &attempts[attempt];
        // A recorded pid names a process only on the host, boot and PID namespace that
        // recorded it; elsewhere the attempt is found by its marker and cgroup alone.
        let process = a
            .process
            .as_ref()
            .filter(|_| same_process_space(self.recorded_host.as_deref(), current_host));
        Some(Stop::Attempt {
            attempt,
            attempt_id: a.id.clone(),
            pid: process.map(|p| p.pid),
            pgid: process.map(|p| p.pgid),
            start_time: process.and_then(|p| p.start_time.clone()),
        })
    }
}

/// A stored run checked for going on: it belongs to `repository_id`, its policy parses, matches
/// its hash and still validates, a resume's `given` keys agree with it (and supply the
/// environment values a non-terminal run needs), and its state is known.
pub(super) fn check_stored(
    rows: &StoredRows,
    repository_id: &str,
    given: Option<&Map<String, Value>>,
    limits: &Limits,
) -> Result<(RunPolicy, RunState), Refusal> {
    let r = &rows.run;
    if r.repository_id != repository_id {
        return Err(refusal(
            Failure::RepositoryMismatch,
            "the run belongs to another repository",
            vec![r.repository_id.clone()],
        ));
    }
    let stored: Value = serde_json::from_str(&r.policy_json).map_err(|e| {
        refusal(
            Failure::PolicyCorrupt,
            "the stored policy is not JSON",
            vec![e.to_string()],
        )
    })?;
    // The hash is over the JSON as stored (earlier versions stored the same policy in
    // another form, environment values in the clear among it).
    let mut policy = match policy_from_json(&stored, limits) {
        Ok(p) if jcs::canonical_sha256(&stored) == r.policy_sha256 => p,
        Ok(_) => {
            return Err(refusal(
                Failure::PolicyCorrupt,
                "the stored policy does not match its hash",
                vec![],
            ));
        }
        Err(errors) => {
            return Err(refusal(
                Failure::PolicyCorrupt,
                "the stored policy no longer validates",
                errors.iter().map(ToString::to_string).collect(),
            ));
        }
    };
    if let Some(given) = given
        && let Err(m) = check_resume(&stored, given, limits)
    {
        return Err(refusal(
            Failure::PolicyMismatch,
            "the resume spec disagrees with the stored policy; resend it unchanged or omit those keys",
            m.fields,
        ));
    }
    let Some(state) = RunState::parse(&r.state) else {
        return Err(refusal(
            Failure::StateCorrupt,
            "unknown stored run state",
            vec![r.state.clone()],
        ));
    };
    if let Some(given) = given {
        policy.supply_environment(given);
        let missing = policy.missing_environment();
        if !state.is_terminal() && !missing.is_empty() {
            return Err(refusal(
                Failure::EnvironmentValuesNeeded,
                "only hashes of the evaluator's environment values are stored; resume with \
                 the same values in `environment` (the headless runner: `resume --env NAME`, \
                 which reads NAME from its own environment)",
                missing,
            ));
        }
    }
    Ok((policy, state))
}

/// A resume's or abandon's (`verb`) refusal after probing the host recorded as `host_json`:
/// `None` when the host is dead and the run may go on.
pub(super) fn probed_refusal(alive: Option<bool>, verb: &str, host_json: &str) -> Option<Refusal> {
    let host = describe_host(host_json);
    let message = match alive {
        Some(false) => return None,
        Some(true) => format!(
            "the run is live: its host is still driving it, so nothing was changed; stop it \
             there (job_kill, or a signal to its runner), or {verb} it with force to take it \
             over anyway"
        ),
        None => format!(
            "whether the run's host is alive cannot be told from here (another machine, boot or \
             PID namespace), so nothing was changed; {verb} it with force once you know it is \
             not running"
        ),
    };
    Some(Refusal {
        code: Failure::RunLive,
        message,
        evidence: vec![host],
    })
}

/// Whether two host records (as the driver writes them: JSON with `hostname`, `bootId`, `pidNs`)
/// name one process space: the same machine, boot and PID namespace, each known.
pub(super) fn same_process_space(recorded: Option<&str>, current: Option<&str>) -> bool {
    let read = |text: Option<&str>| -> Option<[String; 3]> {
        let v: Value = serde_json::from_str(text?).ok()?;
        let field = |k: &str| {
            v.get(k)?
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        Some([field("hostname")?, field("bootId")?, field("pidNs")?])
    };
    matches!((read(recorded), read(current)), (Some(a), Some(b)) if a == b)
}

/// A stored host record as evidence: `host <name> pid <pid>` (escaped), or the raw text clipped.
fn describe_host(recorded: &str) -> String {
    let v: Option<Value> = serde_json::from_str(recorded).ok();
    let name = v
        .as_ref()
        .and_then(|v| v.get("hostname")?.as_str().map(str::to_owned));
    let pid = v.as_ref().and_then(|v| v.get("pid")?.as_u64());
    match (name, pid) {
        (Some(name), Some(pid)) => format!("host {} pid {pid}", name.escape_debug()),
        _ => format!(
            "host record {}",
            text::clip_within(&recorded.escape_debug().to_string(), 200)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ProcessIdentity;
    use serde_json::json;

    const HOST: &str =
        r#"{"hostname":"box","bootId":"b1","pidNs":"pid:[1]","pid":7,"startTime":"9"}"#;

    #[test]
    fn pids_are_trusted_only_in_one_process_space() {
        assert!(same_process_space(Some(HOST), Some(HOST)));
        let other_ns = HOST.replace("pid:[1]", "pid:[2]");
        let other_boot = HOST.replace("b1", "b2");
        let no_ns = r#"{"hostname":"box","bootId":"b1","pid":7,"startTime":"9"}"#;
        for other in [other_ns.as_str(), other_boot.as_str(), no_ns, "not json"] {
            assert!(!same_process_space(Some(HOST), Some(other)), "{other}");
            assert!(!same_process_space(Some(other), Some(HOST)), "{other}");
        }
        assert!(!same_process_space(None, Some(HOST)));
    }

    #[test]
    fn a_host_is_described_escaped() {
        assert_eq!(describe_host(HOST), "host box pid 7");
        let hostile = HOST.replace("\"box\"", "\"b\\nox\\u001b[2J\"");
        assert_eq!(describe_host(&hostile), "host b\\nox\\u{1b}[2J pid 7");
        assert_eq!(describe_host("x\ny"), "host record x\\ny");
    }

    #[test]
    fn recovery_stops_the_proposers_then_each_attempt_naming_pids_only_where_they_mean_something() {
        let attempt = |id: &str| Attempt {
            id: id.to_owned(),
            experiment: 0,
            running: true,
            interrupted: false,
            process: Some(ProcessIdentity {
                pid: 10,
                pgid: 10,
                start_time: Some("5".to_owned()),
            }),
            purpose: crate::stats::Purpose::Select,
        };
        let attempts = [attempt("a1"), attempt("a2")];
        let mut recovery = Recovery::default();
        recovery.loaded(Some(HOST.to_owned()));
        recovery.begin(VecDeque::from([1, 0]), false);
        let elsewhere = HOST.replace("b1", "b2");
        let stops: Vec<Option<Stop>> = [HOST, HOST, elsewhere.as_str(), HOST]
            .into_iter()
            .map(|here| recovery.next_stop(&attempts, Some(here)))
            .collect();
        let stop = |attempt: usize, id: &str, known: bool| {
            Some(Stop::Attempt {
                attempt,
                attempt_id: id.to_owned(),
                pid: known.then_some(10),
                pgid: known.then_some(10),
                start_time: known.then(|| "5".to_owned()),
            })
        };
        assert_eq!(
            stops,
            [
                Some(Stop::Proposers),
                stop(1, "a2", true),
                stop(0, "a1", false),
                None
            ]
        );
    }

    #[test]
    fn a_resume_probes_the_host_only_of_a_run_that_may_be_live_and_not_when_forced() {
        let run = |lock_held: u8, interrupted_at: Option<i64>| -> StoredRun {
            serde_json::from_value(json!({
                "run_id": "r", "repository_id": "x", "run_tag": "t", "branch": "b",
                "worktree": "w", "start_commit": "c", "policy_json": "{}",
                "policy_sha256": "s", "state": "ready", "lock_held": lock_held,
                "host_json": HOST, "interrupted_at": interrupted_at,
            }))
            .unwrap()
        };
        let mut recovery = Recovery::default();
        let probed = |r: &Recovery, run: &StoredRun, state| r.host_to_probe(run, state);
        assert_eq!(
            probed(&recovery, &run(1, None), RunState::Ready),
            Some(HOST.to_owned())
        );
        assert_eq!(
            probed(&recovery, &run(1, None), RunState::TargetReached),
            None
        );
        assert_eq!(probed(&recovery, &run(0, None), RunState::Ready), None);
        assert_eq!(probed(&recovery, &run(1, Some(9)), RunState::Ready), None);
        recovery.force();
        assert_eq!(probed(&recovery, &run(1, None), RunState::Ready), None);
    }

    #[test]
    fn a_live_or_unknowable_host_refuses_naming_it_and_a_dead_one_lets_the_run_go_on() {
        assert_eq!(probed_refusal(Some(false), "resume", HOST), None);
        let live = probed_refusal(Some(true), "abandon", HOST).unwrap();
        assert_eq!(
            (live.code, live.evidence),
            (Failure::RunLive, vec!["host box pid 7".to_owned()])
        );
        assert_eq!(
            live.message,
            "the run is live: its host is still driving it, so nothing was changed; stop it \
             there (job_kill, or a signal to its runner), or abandon it with force to take it \
             over anyway"
        );
        let unknown = probed_refusal(None, "resume", HOST).unwrap();
        assert_eq!(
            unknown.message,
            "whether the run's host is alive cannot be told from here (another machine, boot or \
             PID namespace), so nothing was changed; resume it with force once you know it is \
             not running"
        );
    }
}
