//! The decisions of the store lock protocol, as pure functions. The driver performs the file
//! operations (step by step in the crate documentation, "The save protocol"); everything it has
//! to *decide* is decided here, so every driver decides the same way.
//!
//! The lock is a file, [`LOCK_FILE`], beside `facts.json`, created with `O_CREAT | O_EXCL` and
//! holding a [`LockRecord`]: a random owner token, the holder's pid and host, and when it was
//! made. A waiter polls with a capped, jittered backoff ([`backoff_ms`]) and gives up after
//! [`WAIT_MS`] with `memory.locked`. A lock is taken over when it is [`STALE_MS`] old, or at once
//! when its holder is provably dead (same host, and the pid no longer exists). Take-overs and
//! releases go through a rename to a name only this writer uses, followed by a check of what was
//! actually moved ([`same_lock`], [`owns`]), so a late or paused writer never deletes a lock that
//! is not its own.

use crate::failure::{Code, Failure};
use crate::time::UnixMillis;
use serde_json::{Value, json};

/// The lock's file name, in the store's directory.
pub const LOCK_FILE: &str = ".facts.lock";
/// The store's file name.
pub const STORE_FILE: &str = "facts.json";
/// The store's directory, relative to the DSH home.
pub const STORE_DIR: &str = "memory";
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
    /// It is at least [`STALE_MS`] old.
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
    /// Take the lock over: rename it aside, check it with [`same_lock`], then try `O_EXCL` again.
    Steal(StealReason),
    /// Stop and answer this failure (`memory.locked`).
    GiveUp(Failure),
}

/// Decides what to do about an existing lock after waiting `waited_ms` in total and `attempt`
/// failed attempts so far, with `jitter` a random number in `[0, 1)`.
pub fn decide(
    observed: &Observed<'_>,
    me: &Me<'_>,
    waited_ms: u64,
    attempt: u32,
    jitter: f64,
) -> Decision {
    let record = LockRecord::parse(observed.text);
    if observed.age_ms >= STALE_MS {
        return Decision::Steal(StealReason::Stale);
    }
    if let Some(rec) = &record {
        let same_host = rec.host == me.host;
        if same_host && rec.pid != me.pid && observed.holder == Liveness::Dead {
            return Decision::Steal(StealReason::HolderDead);
        }
    }
    if waited_ms >= WAIT_MS {
        let who = match &record {
            Some(r) => format!(
                "process {} on {}",
                r.pid,
                if r.host.is_empty() { "?" } else { &r.host }
            ),
            None => "another writer".to_owned(),
        };
        return Decision::GiveUp(Failure::new(
            Code::Locked,
            format!(
                "the memory store is locked by {who} (lock age {:.1} s); waited {:.1} s and gave \
                 up. Nothing was saved; try again shortly. A lock older than {} s is taken over \
                 automatically.",
                observed.age_ms as f64 / 1000.0,
                waited_ms as f64 / 1000.0,
                STALE_MS / 1000
            ),
        ));
    }
    let ms = backoff_ms(attempt, jitter).min(WAIT_MS - waited_ms).max(1);
    Decision::Wait { ms }
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

/// The name a take-over renames the lock to (in the same directory).
pub fn steal_name(my_token: &str) -> String {
    format!("{LOCK_FILE}.{}.stolen", sanitize(my_token))
}

/// The name a release renames the lock to (in the same directory).
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

/// Keeps only characters safe in a file name.
fn sanitize(token: &str) -> String {
    token
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect()
}
