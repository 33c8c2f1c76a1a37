//! The decisions of the store lock protocol, as pure functions. The driver performs the file
//! operations (step by step in the crate documentation, "The save protocol"); everything it has
//! to *decide* is decided here, so every driver decides the same way.
//!
//! The lock is a file, [`LOCK_FILE`], beside `facts.json`, created with `O_CREAT | O_EXCL` and
//! holding a [`LockRecord`]: a random owner token, the holder's pid and host, and when it was
//! made. A waiter polls with a capped, jittered backoff ([`backoff_ms`]) and gives up after
//! [`WAIT_MS`] with `memory.locked`. A lock is taken over when it is [`STALE_MS`] old, or at once
//! when its holder is provably dead (same host, and the pid no longer exists).
//!
//! Take-overs are serialized by a second, short-lived lock, the take-over mutex
//! [`TAKEOVER_FILE`]: a writer that judged the lock abandoned first creates the mutex with
//! `O_EXCL`, then judges the lock *again* from a fresh read ([`still_abandoned`]) and only then
//! removes it; it releases the mutex and competes for the lock with `O_EXCL` like any writer.
//! Without the mutex, two writers judging one stale lock at the same moment could both act on
//! it, and the slower one would move the faster one's fresh lock aside. A mutex abandoned for
//! [`TAKEOVER_STALE_MS`] (a take-over is milliseconds of work) is removed by whoever finds it
//! ([`decide_takeover`]).
//!
//! Removals of a lock or mutex that may not be one's own (take-overs, releases) go through a
//! rename to a name only this writer uses, followed by a check of what was actually moved
//! ([`same_lock`], [`owns`]), so a late or paused writer never deletes a lock that is not its
//! own. Files a crash leaves behind (aside names, temp files, an abandoned mutex) are swept by the
//! next committing writer ([`sweep`]).

use crate::failure::{Code, Failure};
use crate::time::UnixMillis;
use serde_json::{Value, json};

/// The lock's file name, in the store's directory.
pub const LOCK_FILE: &str = ".facts.lock";
/// The store's file name.
pub const STORE_FILE: &str = "facts.json";
/// The store's directory, relative to the DSH home.
pub const STORE_DIR: &str = "memory";
/// The take-over mutex's file name, in the store's directory: held (created with `O_EXCL`) by
/// the one writer currently taking an abandoned lock over.
pub const TAKEOVER_FILE: &str = ".facts.lock.takeover";

/// The store layout under the DSH home, as `{ "dir", "store", "lock", "takeover" }` (names).
pub fn layout_json() -> Value {
    json!({
        "dir": STORE_DIR,
        "store": STORE_FILE,
        "lock": LOCK_FILE,
        "takeover": TAKEOVER_FILE,
    })
}

/// A take-over mutex at least this old (by its file's mtime) is abandoned and may be removed; a
/// take-over holds it for milliseconds.
pub const TAKEOVER_STALE_MS: u64 = 5_000;
/// How long a writer waits for the lock before answering `memory.locked`.
pub const WAIT_MS: u64 = 8_000;
/// A lock at least this old (by its file's mtime) is abandoned and may be taken over.
pub const STALE_MS: u64 = 15_000;
/// First backoff between attempts.
pub const BACKOFF_START_MS: u64 = 20;
/// Largest backoff between attempts.
pub const BACKOFF_MAX_MS: u64 = 200;

/// What a lock file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockRecord {
    /// A random token unique to one save (e.g. `crypto.randomUUID()`); identifies the owner.
    pub token: String,
    /// The holder's process id.
    pub pid: u32,
    /// The holder's host name (`os.hostname()`); pids mean nothing across hosts.
    pub host: String,
    /// When the lock was made, Unix milliseconds.
    pub created: UnixMillis,
}

impl LockRecord {
    /// The lock file's content: one line of JSON.
    pub fn to_text(&self) -> String {
        let mut s = json!({
            "token": self.token,
            "pid": self.pid,
            "host": self.host,
            "created": self.created,
            "created_iso": crate::time::iso8601(self.created),
        })
        .to_string();
        s.push('\n');
        s
    }

    /// Reads a lock file's content; `None` if it is empty, partly written or not ours.
    pub fn parse(text: &str) -> Option<LockRecord> {
        let v: Value = serde_json::from_str(text.trim()).ok()?;
        Some(LockRecord {
            token: v.get("token")?.as_str()?.to_owned(),
            pid: u32::try_from(v.get("pid")?.as_u64()?).ok()?,
            host: v
                .get("host")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            created: v.get("created").and_then(Value::as_u64).unwrap_or(0),
        })
    }
}

/// Who is asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Me<'a> {
    /// This save's owner token.
    pub token: &'a str,
    /// This process's pid.
    pub pid: u32,
    /// This host's name.
    pub host: &'a str,
}

/// Whether the process named in a lock still exists, as the driver found out
/// (`process.kill(pid, 0)`: success or `EPERM` → alive, `ESRCH` → dead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// The pid exists (maybe reused by another process: not proof the holder lives).
    Alive,
    /// No process has that pid: the holder is dead.
    Dead,
    /// Not checked (another host, or no pid in the lock).
    Unknown,
}

impl Liveness {
    /// The liveness a driver names: `alive`, `dead`, anything else unknown (not probed).
    pub fn from_name(name: &str) -> Liveness {
        match name {
            "alive" => Liveness::Alive,
            "dead" => Liveness::Dead,
            _ => Liveness::Unknown,
        }
    }
}

/// The pid the driver should probe for liveness: the lock's pid if the lock is readable, was made
/// on this host, and is not this process's. `None`: pass [`Liveness::Unknown`].
pub fn pid_to_probe(lock_text: &str, me: &Me<'_>) -> Option<u32> {
    let rec = LockRecord::parse(lock_text)?;
    (rec.host == me.host && rec.pid != me.pid && rec.pid != 0).then_some(rec.pid)
}

/// An existing lock, as the driver observed it after `O_EXCL` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed<'a> {
    /// The lock file's content, as read.
    pub text: &'a str,
    /// `now − mtime` of the lock file in milliseconds (0 if the mtime is in the future).
    pub age_ms: u64,
    /// The holder's liveness (see [`pid_to_probe`]).
    pub holder: Liveness,
}

/// Why a lock may be taken over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealReason {
    /// It is old enough: [`STALE_MS`] for the lock, [`TAKEOVER_STALE_MS`] for the take-over
    /// mutex.
    Stale,
    /// Its holder was on this host and no longer exists.
    HolderDead,
}

/// What to do about an existing lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Sleep this long, then try `O_EXCL` again.
    Wait {
        /// Milliseconds to sleep (never past the deadline, at least 1).
        ms: u64,
    },
    /// Take the lock (or the abandoned take-over mutex) over; see [`decide`] and
    /// [`decide_takeover`] for the steps.
    Steal(StealReason),
    /// Stop and answer this failure (`memory.locked`).
    GiveUp(Failure),
}

impl Decision {
    /// The decision as the JSON a driver switches on: `{"kind":"wait","ms"}`,
    /// `{"kind":"steal","reason":"stale"|"holder_dead"}` or `{"kind":"give_up","answer":{…}}`.
    pub fn to_json(&self) -> Value {
        match self {
            Decision::Wait { ms } => json!({ "kind": "wait", "ms": ms }),
            Decision::Steal(reason) => json!({
                "kind": "steal",
                "reason": match reason {
                    StealReason::Stale => "stale",
                    StealReason::HolderDead => "holder_dead",
                },
            }),
            Decision::GiveUp(f) => json!({ "kind": "give_up", "answer": f.to_json() }),
        }
    }
}

/// Why `observed` may be taken over, if it may: it is at least `stale_ms` old, or its holder
/// was on this host, is not this process, and no longer exists.
fn abandoned(observed: &Observed<'_>, me: &Me<'_>, stale_ms: u64) -> Option<StealReason> {
    if observed.age_ms >= stale_ms {
        return Some(StealReason::Stale);
    }
    let rec = LockRecord::parse(observed.text)?;
    (rec.host == me.host && rec.pid != me.pid && observed.holder == Liveness::Dead)
        .then_some(StealReason::HolderDead)
}

/// Decides what to do about an existing lock after waiting `waited_ms` in total and `attempt`
/// failed attempts so far, with `jitter` a random number in `[0, 1)`.
///
/// `Steal` means: take the take-over mutex and re-judge under it (see [`decide_takeover`] and
/// [`still_abandoned`]); never remove the lock on this judgment alone.
pub fn decide(
    observed: &Observed<'_>,
    me: &Me<'_>,
    waited_ms: u64,
    attempt: u32,
    jitter: f64,
) -> Decision {
    if let Some(reason) = abandoned(observed, me, STALE_MS) {
        return Decision::Steal(reason);
    }
    if waited_ms >= WAIT_MS {
        return Decision::GiveUp(Failure::new(
            Code::Locked,
            format!(
                "the memory store is locked by {} (lock age {:.1} s); waited {:.1} s and gave \
                 up. Nothing was saved; try again shortly. A lock older than {} s is taken over \
                 automatically.",
                holder_name(observed.text),
                observed.age_ms as f64 / 1000.0,
                waited_ms as f64 / 1000.0,
                STALE_MS / 1000
            ),
        ));
    }
    Decision::Wait {
        ms: wait_ms(waited_ms, attempt, jitter),
    }
}

/// Decides what to do when creating the take-over mutex failed because it exists: `observed` is
/// the mutex (its text is a [`LockRecord`] too). `Wait`: another writer is taking the lock over;
/// sleep, then start over at `O_EXCL` on the lock. `Steal`: the mutex is abandoned
/// ([`TAKEOVER_STALE_MS`] old, or its holder provably dead); read it once more and, if it is
/// still the same text, remove it by rename-aside and check, then start over. `GiveUp`: waited
/// [`WAIT_MS`] in total.
pub fn decide_takeover(
    observed: &Observed<'_>,
    me: &Me<'_>,
    waited_ms: u64,
    attempt: u32,
    jitter: f64,
) -> Decision {
    if let Some(reason) = abandoned(observed, me, TAKEOVER_STALE_MS) {
        return Decision::Steal(reason);
    }
    if waited_ms >= WAIT_MS {
        return Decision::GiveUp(Failure::new(
            Code::Locked,
            format!(
                "the memory lock was abandoned, and {} has been taking it over for {:.1} s; \
                 waited {:.1} s and gave up. Nothing was saved; try again shortly.",
                holder_name(observed.text),
                observed.age_ms as f64 / 1000.0,
                waited_ms as f64 / 1000.0,
            ),
        ));
    }
    Decision::Wait {
        ms: wait_ms(waited_ms, attempt, jitter),
    }
}

/// Under the take-over mutex: whether the lock as read *now* (`now`, with a fresh age and
/// liveness probe) is still the very lock judged abandoned before (`judged_text`) and still
/// abandoned. Only then does the driver remove it. Tokens are unique, so once that lock is gone
/// no later lock has its text; and while the mutex is held no other writer removes a lock.
pub fn still_abandoned(judged_text: &str, now: &Observed<'_>, me: &Me<'_>) -> bool {
    same_lock(now.text, judged_text) && abandoned(now, me, STALE_MS).is_some()
}

/// Before removing an abandoned take-over mutex: whether the mutex as read again *now* is still
/// the one judged abandoned (`judged_text`) and still abandoned. A fresh age matters for an
/// empty mutex: one a crash left between `O_EXCL` and its write looks like one just created.
pub fn takeover_still_abandoned(judged_text: &str, now: &Observed<'_>, me: &Me<'_>) -> bool {
    same_lock(now.text, judged_text) && abandoned(now, me, TAKEOVER_STALE_MS).is_some()
}

/// Who holds a lock (or the mutex), for a message.
fn holder_name(text: &str) -> String {
    match LockRecord::parse(text) {
        Some(r) => format!(
            "process {} on {}",
            r.pid,
            if r.host.is_empty() { "?" } else { &r.host }
        ),
        None => "another writer".to_owned(),
    }
}

/// The next backoff, never past the [`WAIT_MS`] deadline, at least 1 ms.
fn wait_ms(waited_ms: u64, attempt: u32, jitter: f64) -> u64 {
    backoff_ms(attempt, jitter)
        .min(WAIT_MS.saturating_sub(waited_ms))
        .max(1)
}

/// Backoff before attempt `attempt + 1`: 20 ms doubling to a 200 ms cap, scaled by
/// `0.75 + 0.5 × jitter` so waiters spread out.
pub fn backoff_ms(attempt: u32, jitter: f64) -> u64 {
    let base = BACKOFF_START_MS
        .saturating_mul(1u64 << attempt.min(16))
        .min(BACKOFF_MAX_MS);
    let j = if jitter.is_finite() {
        jitter.clamp(0.0, 1.0)
    } else {
        0.5
    };
    ((base as f64) * (0.75 + 0.5 * j)).round().max(1.0) as u64
}

/// Whether the lock text the driver just read (or renamed aside) is this owner's.
/// Used before committing the rename of the new store, and when releasing.
pub fn owns(lock_text: &str, my_token: &str) -> bool {
    LockRecord::parse(lock_text).is_some_and(|r| r.token == my_token)
}

/// Whether a lock renamed aside during a take-over is the very lock that was judged (same
/// content); if not, the driver moved a fresh lock and must put it back.
pub fn same_lock(renamed_text: &str, judged_text: &str) -> bool {
    renamed_text == judged_text
}

/// The name a take-over renames the lock, or an abandoned take-over mutex, to (in the same
/// directory). One writer uses it for one removal at a time.
pub fn steal_name(my_token: &str) -> String {
    format!("{LOCK_FILE}.{}.stolen", sanitize(my_token))
}

/// The name a release renames the lock, or this writer's take-over mutex, to (in the same
/// directory). One writer uses it for one release at a time.
pub fn release_name(my_token: &str) -> String {
    format!("{LOCK_FILE}.{}.released", sanitize(my_token))
}

/// The temp file a save writes before renaming it over the store (in the same directory).
pub fn temp_name(my_token: &str) -> String {
    format!(".{STORE_FILE}.{}.tmp", sanitize(my_token))
}

/// The failure when this writer's lock was taken over before it committed (it paused longer than
/// [`STALE_MS`], or a writer taking over a stale lock at the same moment moved it aside): the
/// new store was not written.
pub fn lock_lost() -> Failure {
    Failure::new(
        Code::Locked,
        format!(
            "another writer took the memory lock over before this save could commit (the save \
             held it for more than {} s, or a concurrent take-over of a stale lock displaced it); \
             to avoid overwriting that writer's changes nothing was saved. Try again.",
            STALE_MS / 1000
        ),
    )
}

/// What the sweep does with one entry of the store's directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Not ours, or not old enough: leave it.
    Keep,
    /// Debris of a crashed or paused writer (an aside name or a temp file at least
    /// [`STALE_MS`] old): unlink it.
    Unlink,
    /// A take-over mutex at least [`STALE_MS`] old: remove it the checked way, as an abandoned
    /// mutex is removed when found by a take-over (read, rename aside, check [`same_lock`]).
    RemoveMutex,
}

impl Sweep {
    /// The name a driver switches on: `keep`, `unlink` or `remove_mutex`.
    pub fn name(self) -> &'static str {
        match self {
            Sweep::Keep => "keep",
            Sweep::Unlink => "unlink",
            Sweep::RemoveMutex => "remove_mutex",
        }
    }
}

/// The sweep a writer runs while it holds the lock, after committing: for each entry `name` of
/// the store's directory whose mtime is `age_ms` old, what to do. Only this protocol's own
/// names qualify, and only once they are at least [`STALE_MS`] old: a live writer uses an aside
/// or temp name for milliseconds, and a temp file that old belongs to a writer whose lock was
/// taken over (its commit check or rename fails; nothing is lost). The lock itself, `facts.json`
/// and every other name are kept.
pub fn sweep(name: &str, age_ms: u64) -> Sweep {
    if age_ms < STALE_MS {
        return Sweep::Keep;
    }
    if name == TAKEOVER_FILE {
        return Sweep::RemoveMutex;
    }
    let aside = name
        .strip_prefix(LOCK_FILE)
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| {
            rest.strip_suffix(".stolen")
                .or_else(|| rest.strip_suffix(".released"))
        });
    let temp = name
        .strip_prefix('.')
        .and_then(|rest| rest.strip_prefix(STORE_FILE))
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| rest.strip_suffix(".tmp"));
    // The names `steal_name`, `release_name` and `temp_name` make: a sanitized token between
    // a fixed prefix and suffix.
    match aside.or(temp) {
        Some(token) if is_token(token) => Sweep::Unlink,
        _ => Sweep::Keep,
    }
}

/// Whether `s` could be a sanitized token: non-empty, at most 64 safe characters.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Keeps only characters safe in a file name.
fn sanitize(token: &str) -> String {
    token
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect()
}
