//! The save protocol as a sans-I/O machine: one read-modify-write of the store under its lock
//! (a `memory_save`, or the people CLI's `forget` and `import`), in the shape of
//! `fetch::Ladder`.
//!
//! One step is outstanding at a time. [`Save::poll`] shows it; the driver performs exactly that
//! step and answers with [`Save::handle`] (the step's id, one [`Input`], the time). Every
//! decision is made here: what a failed `open` means, whether to wait for, take over or give up
//! on the lock, what to remove and what to put back, what to sweep, how long to sleep (the
//! backoff's jitter comes from the seed the driver gives, the Windows rename retry is `Sleep`
//! steps), and every answer. A world failure (`ENOENT`, `EEXIST`, `EPERM`, …) is an [`Input`];
//! an answer for another step, or after the end, is a driver bug ([`DriverError`]).
//!
//! The order of steps is the crate's "The save protocol, step by step"; the decisions are
//! [`crate::lock`]'s.
//!
//! Steps, as JSON (`kind`, `id`, then the fields; see [`Step`]) and the answers each takes:
//!
//! | step | perform | answer with |
//! |---|---|---|
//! | `makeDir { path }` | `mkdir(path, { recursive: true, mode: 0o700 })` | `ok`, `failed` |
//! | `create { path, mode, data, sync, stat, hold }` | `open(path, "wx", mode)`, write `data` (`{ text }`, or `"edited"`: the edit's bytes), `fsync` if `sync`, `stat` the handle if `stat`, close it unless `hold` (then keep it: `done` says what becomes of it) | `created { key? }`, `failed` (the open), `writeFailed` (after the open) |
//! | `read { path }` | open, `stat` and read the text from one handle | `text { text, mtimeMs }`, `failed` |
//! | `readStore { path }` | open, `stat`, read the bytes (unless the cache holds them) from one handle | `found`, `failed` |
//! | `edit` | the edit over what `readStore` found (nothing: no file) | `edited { ok, answer }` |
//! | `stat { path }` | `stat(path)` | `stat { mtimeMs, mode }`, `failed` |
//! | `realPath { path }` | `realpath(path)` | `path { path }`, `failed` |
//! | `probe { pid }` | `process.kill(pid, 0)` | `probed { alive }` (only `ESRCH` is dead) |
//! | `rename`, `link { from, to }` | `rename(from, to)`, `link(from, to)` | `ok`, `failed` |
//! | `unlink { path }` | `unlink(path)` | `ok`, `failed` |
//! | `syncDir { path }` | open `path` read-only, `fsync`, close | `ok`, `failed` |
//! | `statHeld` | `stat` the handle `create` kept (the store, now that it is renamed) | `key { key }`, `failed` |
//! | `list { path }` | `readdir(path)` | `names { names }`, `failed` |
//! | `sleep { ms }` | wait `ms` | `ok` |
//! | `done { answer, committed? }` | answer `answer` (JSON text); `committed` is `{ key, at, held }`, the new store's `[mtimeMs, size, ino, ctimeMs]`, the time it was in place and whether the handle the `create` kept is now the store's, to be held for the cache (otherwise a kept handle is closed) | — |
//!
//! `failed` is `{ code, message }`: Node's `error.code` (`""` when it has none) and message.

use crate::driver::refuse_read_only;
use crate::failure::Failure;
use crate::lock::{
    self, Decision, LOCK_FILE, Liveness, LockRecord, Me, Observed, STORE_FILE, TAKEOVER_FILE,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;

/// Identifies a step; an answer must carry the id of the step it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepId(pub u64);

/// A file's `stat` as a cache key: `[mtimeMs, size, ino, ctimeMs]`.
pub type StatKey = [f64; 4];

/// The mode of the lock and the take-over mutex.
const LOCK_MODE: u32 = 0o644;
/// The mode of a new store (an existing store's mode is kept).
const NEW_STORE_MODE: u32 = 0o600;
/// How long a rename over a store held open by a scanner is retried on Windows.
pub const RENAME_RETRY_MS: f64 = 1_000.0;
/// Errors such a rename gives on Windows.
const WINDOWS_BUSY: [&str; 3] = ["EPERM", "EACCES", "EBUSY"];

/// What the driver must do next (see the module docs for how to perform each).
#[allow(missing_docs)] // Each field is a path, an id or a flag the module docs' table names.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Step {
    /// Create the store's directory (recursive, `0o700`).
    MakeDir { id: StepId, path: String },
    /// Create `path` exclusively with `mode`, write `data`, optionally `fsync` and `stat`;
    /// keep the handle open if `hold`.
    Create {
        id: StepId,
        path: String,
        mode: u32,
        data: Data,
        sync: bool,
        stat: bool,
        hold: bool,
    },
    /// Read a lock's (or an aside name's) text and mtime from one handle.
    Read { id: StepId, path: String },
    /// Read the store: `stat` and bytes from one handle.
    ReadStore { id: StepId, path: String },
    /// Compute the edit over what `ReadStore` found.
    Edit { id: StepId },
    /// `stat(path)`.
    Stat { id: StepId, path: String },
    /// `realpath(path)`: a symlinked store is written through to its target.
    RealPath { id: StepId, path: String },
    /// Whether process `pid` exists on this host.
    Probe { id: StepId, pid: u32 },
    /// `rename(from, to)`.
    Rename {
        id: StepId,
        from: String,
        to: String,
    },
    /// `link(from, to)`: puts a file back without ever replacing a newer one.
    Link {
        id: StepId,
        from: String,
        to: String,
    },
    /// `unlink(path)`.
    Unlink { id: StepId, path: String },
    /// `fsync` the directory `path`, so a rename in it survives a power loss.
    SyncDir { id: StepId, path: String },
    /// `stat` the handle `Create { hold }` kept: the store's key after its rename (a rename
    /// sets the ctime).
    StatHeld { id: StepId },
    /// The names in the directory `path`.
    List { id: StepId, path: String },
    /// Wait `ms` milliseconds.
    Sleep { id: StepId, ms: u64 },
    /// Finished: `answer` is the JSON text to return. Repeated by `poll`.
    Done {
        answer: String,
        committed: Option<Committed>,
    },
}

impl Step {
    /// The step's `kind` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Step::MakeDir { .. } => "makeDir",
            Step::Create { .. } => "create",
            Step::Read { .. } => "read",
            Step::ReadStore { .. } => "readStore",
            Step::Edit { .. } => "edit",
            Step::Stat { .. } => "stat",
            Step::RealPath { .. } => "realPath",
            Step::Probe { .. } => "probe",
            Step::Rename { .. } => "rename",
            Step::Link { .. } => "link",
            Step::Unlink { .. } => "unlink",
            Step::SyncDir { .. } => "syncDir",
            Step::StatHeld { .. } => "statHeld",
            Step::List { .. } => "list",
            Step::Sleep { .. } => "sleep",
            Step::Done { .. } => "done",
        }
    }

    /// The kinds of answer the step takes: the table above as code. The machine refuses any
    /// other ([`DriverError::WrongInput`]), and `packages/limit-break/wire/save.json` is generated
    /// from it and the types (`tests/wire.rs`), so the JavaScript performers are checked against
    /// the same rule.
    pub fn answers(&self) -> &'static [&'static str] {
        match self {
            Step::MakeDir { .. }
            | Step::Rename { .. }
            | Step::Link { .. }
            | Step::Unlink { .. }
            | Step::SyncDir { .. } => &["ok", "failed"],
            Step::Create { .. } => &["created", "failed", "writeFailed"],
            Step::Read { .. } => &["text", "failed"],
            Step::ReadStore { .. } => &["found", "failed"],
            Step::Edit { .. } => &["edited"],
            Step::Stat { .. } => &["stat", "failed"],
            Step::RealPath { .. } => &["path", "failed"],
            Step::Probe { .. } => &["probed"],
            Step::StatHeld { .. } => &["key", "failed"],
            Step::List { .. } => &["names", "failed"],
            Step::Sleep { .. } => &["ok"],
            Step::Done { .. } => &[],
        }
    }

    /// The step's id; `None` for `Done`, which takes no answer.
    pub fn id(&self) -> Option<StepId> {
        match self {
            Step::Done { .. } => None,
            Step::MakeDir { id, .. }
            | Step::Create { id, .. }
            | Step::Read { id, .. }
            | Step::ReadStore { id, .. }
            | Step::Edit { id }
            | Step::Stat { id, .. }
            | Step::RealPath { id, .. }
            | Step::Probe { id, .. }
            | Step::Rename { id, .. }
            | Step::Link { id, .. }
            | Step::Unlink { id, .. }
            | Step::SyncDir { id, .. }
            | Step::StatHeld { id }
            | Step::List { id, .. }
            | Step::Sleep { id, .. } => Some(*id),
        }
    }
}

/// What a `Create` step writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Data {
    /// This text (a lock record).
    Text(String),
    /// The bytes of the edit the driver computed at the `Edit` step.
    Edited,
}

/// The new store file, once renamed into place: its key and the time it was in place.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Committed {
    /// `[mtimeMs, size, ino, ctimeMs]` of the new store: of the kept handle after the rename
    /// when `held`, else of the temp file's handle after its fsync (a rename keeps all but the
    /// ctime, which only a held file's key is compared by).
    pub key: StatKey,
    /// The driver's wall clock when the rename and the directory fsync were done.
    pub at: f64,
    /// The driver kept the temp file's handle open (`Create { hold }`): it is the store's now,
    /// and held it proves, while open, that a store with this inode is this very file (see the
    /// crate docs, "The recall cache").
    pub held: bool,
}

/// What the driver found performing a step.
#[allow(missing_docs)] // As for `Step`: the module docs' table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Input {
    /// Done, nothing to report.
    Ok,
    /// The operation failed: Node's `error.code` (`""` when none) and message.
    Failed { code: String, message: String },
    /// `Create`: the file was created, but writing, syncing or closing it failed.
    WriteFailed { code: String, message: String },
    /// `Create`: created and written; `key` when the step asked for a `stat`.
    Created {
        #[serde(default)]
        key: Option<StatKey>,
    },
    /// `Read`: the text and the mtime (Unix milliseconds) from one handle.
    Text { text: String, mtime_ms: f64 },
    /// `ReadStore`: the store exists and was read (the driver keeps what it found for `Edit`).
    Found,
    /// `Edit`: whether there is something to write, and the answer's JSON text.
    Edited { ok: bool, answer: String },
    /// `Stat`.
    Stat { mtime_ms: f64, mode: u32 },
    /// `RealPath`.
    Path { path: String },
    /// `Probe`: whether the process exists (only `ESRCH` means it does not).
    Probed { alive: bool },
    /// `List`.
    Names { names: Vec<String> },
    /// `StatHeld`: `[mtimeMs, size, ino, ctimeMs]`.
    Key { key: StatKey },
}

impl Input {
    /// The answer's `kind` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Input::Ok => "ok",
            Input::Failed { .. } => "failed",
            Input::WriteFailed { .. } => "writeFailed",
            Input::Created { .. } => "created",
            Input::Text { .. } => "text",
            Input::Found => "found",
            Input::Edited { .. } => "edited",
            Input::Stat { .. } => "stat",
            Input::Path { .. } => "path",
            Input::Probed { .. } => "probed",
            Input::Names { .. } => "names",
            Input::Key { .. } => "key",
        }
    }
}

/// The driver's clock at an answer: the wall clock (Unix milliseconds, the one file mtimes use)
/// and a monotonic one (`performance.now()`) for how long the save has waited.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Now {
    /// `Date.now()`.
    pub wall: f64,
    /// `performance.now()`.
    pub mono: f64,
}

/// A driver bug: the machine's state is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverError {
    /// The save is done; no input is accepted any more.
    Finished,
    /// The answer names another step than the outstanding one.
    UnknownStep {
        /// The outstanding step.
        expected: StepId,
        /// The step the answer named.
        got: StepId,
    },
    /// The input does not answer this kind of step.
    WrongInput {
        /// The outstanding step's kind.
        step: &'static str,
    },
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverError::Finished => write!(f, "the save is already done"),
            DriverError::UnknownStep { expected, got } => write!(
                f,
                "the answer is for step {}, but step {} is outstanding",
                got.0, expected.0
            ),
            DriverError::WrongInput { step } => {
                write!(f, "that input does not answer a {step} step")
            }
        }
    }
}

impl std::error::Error for DriverError {}

/// Who saves: the owner token (fresh per save), pid and host name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    /// `crypto.randomUUID()`.
    pub token: String,
    /// `process.pid`.
    pub pid: u32,
    /// `os.hostname()`.
    pub host: String,
}

/// Where the store lives and how the platform behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The store's directory, absolute.
    pub dir: String,
    /// The path separator (`path.sep`).
    pub sep: String,
    /// Windows: `EPERM` on an exclusive create may mean the file exists, and a rename over a
    /// store a scanner holds open is retried.
    pub windows: bool,
}

/// How a removal checks what it moved aside.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Check {
    /// The very lock (or mutex) judged abandoned: the same text.
    Same(String),
    /// This writer's own lock (or mutex).
    Owns,
}

/// What comes after a part of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Then {
    /// Try the exclusive create of the lock again at once.
    Acquire,
    /// Release the take-over mutex, then acquire.
    ReleaseMutex,
    /// Rename the temp file over the store (again, on Windows).
    RenameTemp,
    /// Release the take-over mutex, then answer (the answer is set).
    ReleaseMutexAndAnswer,
    /// The next entry of the sweep.
    SweepNext,
    /// Release the lock, then answer.
    Release,
    /// Answer.
    Answer,
    /// As the reaction to an I/O failure: answer `memory.write_failed`.
    Fail,
    /// As the reaction to an I/O failure under the take-over mutex: release it, then answer
    /// `memory.write_failed`.
    ReleaseMutexAndFail,
}

/// Which file a read or a creation concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Lock,
    Mutex,
}

/// What the outstanding step's answer means.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    MakeDir,
    /// The exclusive create of the lock or the take-over mutex (`judged`: the lock judged
    /// abandoned, for the mutex).
    Create {
        which: Which,
        judged: String,
    },
    /// Windows: `EPERM` on that create; does the file exist?
    Contended {
        which: Which,
        detail: String,
    },
    /// A file this writer created could not be written: it is being removed.
    Abandon {
        which: Which,
        detail: String,
    },
    /// An existing lock (or mutex) is being read, for a first judgment.
    Observe {
        which: Which,
    },
    /// Its holder is being probed.
    ProbeHolder {
        which: Which,
        text: String,
        age: u64,
    },
    /// Under the mutex: the judged lock is being read again.
    Reread {
        judged: String,
    },
    /// Its holder is being probed.
    ProbeReread {
        judged: String,
        text: String,
        age: u64,
    },
    /// An abandoned mutex is being read again before its removal.
    RereadMutex {
        judged: String,
        then: Then,
        on_error: Then,
    },
    /// Its holder is being probed.
    ProbeRereadMutex {
        judged: String,
        text: String,
        age: u64,
        then: Then,
        on_error: Then,
    },
    /// A removal: the file is being renamed aside.
    RenameAside {
        removal: Removal,
    },
    /// The aside name is being read.
    ReadAside {
        removal: Removal,
    },
    /// The wrong file was moved: it is being put back.
    PutBack {
        removal: Removal,
    },
    /// The aside name is being unlinked.
    UnlinkAside {
        removal: Removal,
    },
    /// A backoff.
    Sleep {
        then: Then,
    },
    ReadStore,
    Edit,
    RealPath,
    StatTarget,
    WriteTemp,
    /// The temp file is being removed after a failure; then `then` with the answer set.
    UnlinkTemp {
        then: Then,
    },
    CommitCheck,
    RenameTemp,
    SyncDir,
    StatHeld,
    List,
    StatEntry {
        name: String,
    },
    SweepReadMutex {
        name: String,
    },
    SweepUnlink,
    Done,
}

/// One removal of a lock or mutex that may not be this writer's: rename aside, read, check,
/// unlink or put back.
#[derive(Clone, Debug, PartialEq)]
struct Removal {
    file: String,
    aside: String,
    check: Check,
    then: Then,
    on_error: Then,
}

/// One save's run of the protocol (see the module docs).
#[derive(Clone, Debug)]
pub struct Save {
    place: Place,
    writer: Writer,
    /// Splitmix64 state for the backoff's jitter.
    seed: u64,
    started: f64,
    attempt: u32,
    next_id: u64,
    step: Step,
    phase: Phase,
    answer: Option<String>,
    existed: bool,
    target: String,
    written: Option<StatKey>,
    committed: Option<Committed>,
    rename_started: f64,
    rename_attempt: u32,
    sweep: VecDeque<String>,
    /// The directory was made (at most once a save).
    made_dir: bool,
}

impl Save {
    /// A save in `place` by `writer`, started at `now`; `seed` is random bits for the backoff's
    /// jitter. The first step is the lock's exclusive create; the store's directory is made only
    /// when that create finds it missing.
    pub fn new(place: Place, writer: Writer, seed: u64, now: Now) -> Save {
        let mut save = Save {
            target: String::new(),
            place,
            writer,
            seed,
            started: now.mono,
            attempt: 0,
            next_id: 0,
            step: Step::Done {
                answer: String::new(),
                committed: None,
            },
            phase: Phase::Done,
            answer: None,
            existed: false,
            written: None,
            committed: None,
            rename_started: 0.0,
            rename_attempt: 0,
            sweep: VecDeque::new(),
            made_dir: false,
        };
        save.create(Which::Lock, String::new(), now);
        save
    }

    /// The outstanding step (the same one until it is answered).
    pub fn poll(&self) -> &Step {
        &self.step
    }

    /// Answers the outstanding step `id` with `input`, at `now`.
    pub fn handle(&mut self, id: StepId, input: Input, now: Now) -> Result<(), DriverError> {
        let Some(expected) = self.step.id() else {
            return Err(DriverError::Finished);
        };
        if id != expected {
            return Err(DriverError::UnknownStep { expected, got: id });
        }
        if !self.step.answers().contains(&input.kind()) {
            return Err(DriverError::WrongInput {
                step: self.step.kind(),
            });
        }
        let phase = std::mem::replace(&mut self.phase, Phase::Done);
        let result = self.advance(phase.clone(), input, now);
        if result.is_err() {
            self.phase = phase;
        }
        result
    }

    fn me(&self) -> Me<'_> {
        Me {
            token: &self.writer.token,
            pid: self.writer.pid,
            host: &self.writer.host,
        }
    }

    fn path(&self, name: &str) -> String {
        format!("{}{}{}", self.place.dir, self.place.sep, name)
    }

    fn plan(&mut self, phase: Phase, step: impl FnOnce(StepId) -> Step) {
        self.next_id += 1;
        self.step = step(StepId(self.next_id));
        self.phase = phase;
    }

    fn record(&self, now: Now) -> String {
        LockRecord {
            token: self.writer.token.clone(),
            pid: self.writer.pid,
            host: self.writer.host.clone(),
            created: millis(now.wall),
        }
        .to_text()
    }

    /// A number in `[0, 1)` (splitmix64).
    fn jitter(&mut self) -> f64 {
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / 2f64.powi(64)
    }

    fn finish(&mut self) {
        let answer = self.answer.take().unwrap_or_else(|| {
            Failure::write_failed("the save ended without an answer")
                .to_json()
                .to_string()
        });
        self.step = Step::Done {
            answer,
            committed: self.committed,
        };
        self.phase = Phase::Done;
    }

    fn answer_with(&mut self, failure: Failure) {
        self.answer = Some(failure.to_json().to_string());
    }

    /// Carries on with `then`.
    fn go(&mut self, then: Then, now: Now) {
        match then {
            Then::Acquire => self.create(Which::Lock, String::new(), now),
            Then::ReleaseMutex => self.release(Which::Mutex, Then::Acquire, Then::Fail),
            Then::ReleaseMutexAndAnswer => self.release(Which::Mutex, Then::Answer, Then::Answer),
            Then::RenameTemp => self.rename_temp(),
            Then::SweepNext => self.sweep_next(),
            Then::Release => self.release(Which::Lock, Then::Answer, Then::Answer),
            Then::Answer => self.finish(),
            Then::Fail | Then::ReleaseMutexAndFail => {
                self.fail(then, "an unexpected state".to_owned(), now)
            }
        }
    }

    /// An I/O failure `detail`, reacted to as `on_error` says.
    fn fail(&mut self, on_error: Then, detail: String, now: Now) {
        match on_error {
            Then::Fail => {
                self.answer_with(Failure::write_failed(&detail));
                self.finish();
            }
            Then::ReleaseMutexAndFail => {
                self.answer_with(Failure::write_failed(&detail));
                self.go(Then::ReleaseMutexAndAnswer, now);
            }
            other => self.go(other, now),
        }
    }

    fn which_path(&self, which: Which) -> String {
        self.path(match which {
            Which::Lock => LOCK_FILE,
            Which::Mutex => TAKEOVER_FILE,
        })
    }

    /// Step 2.1 (the lock) or 2.3 (the take-over mutex): the exclusive create.
    fn create(&mut self, which: Which, judged: String, now: Now) {
        let path = self.which_path(which);
        let text = self.record(now);
        self.plan(Phase::Create { which, judged }, |id| Step::Create {
            id,
            path,
            mode: LOCK_MODE,
            data: Data::Text(text),
            // No fsync for the lock nor the mutex: it only has to survive a crash of this
            // process (the page cache keeps it), and after a crash of the machine its holder is
            // dead anyway and its age decides.
            sync: false,
            stat: false,
            hold: false,
        });
    }

    fn read(&mut self, phase: Phase, path: String) {
        self.plan(phase, |id| Step::Read { id, path });
    }

    /// Judges what was read: the holder is probed first when its pid is worth probing.
    fn probe_or(&mut self, text: &str, probe: impl FnOnce(u32) -> Phase) -> Option<Liveness> {
        match lock::pid_to_probe(text, &self.me()) {
            Some(pid) => {
                self.plan(probe(pid), |id| Step::Probe { id, pid });
                None
            }
            None => Some(Liveness::Unknown),
        }
    }

    fn waited(&self, now: Now) -> u64 {
        millis(now.mono - self.started)
    }

    /// Step 2.3 (or the mutex's judgment): the core's decision about an existing lock or mutex.
    fn judge(&mut self, which: Which, text: String, age: u64, holder: Liveness, now: Now) {
        let observed = Observed {
            text: &text,
            age_ms: age,
            holder,
        };
        let waited = self.waited(now);
        let jitter = self.jitter();
        let decision = match which {
            Which::Lock => lock::decide(&observed, &self.me(), waited, self.attempt, jitter),
            Which::Mutex => {
                lock::decide_takeover(&observed, &self.me(), waited, self.attempt, jitter)
            }
        };
        match (decision, which) {
            (Decision::Wait { ms }, _) => {
                self.attempt += 1;
                self.plan(
                    Phase::Sleep {
                        then: Then::Acquire,
                    },
                    |id| Step::Sleep { id, ms },
                );
            }
            (Decision::GiveUp(f), _) => {
                self.answer_with(f);
                self.finish();
            }
            (Decision::Steal(_), Which::Lock) => self.create(Which::Mutex, text, now),
            (Decision::Steal(_), Which::Mutex) => {
                let path = self.path(TAKEOVER_FILE);
                self.read(
                    Phase::RereadMutex {
                        judged: text,
                        then: Then::Acquire,
                        on_error: Then::Fail,
                    },
                    path,
                );
            }
        }
    }

    /// Remove-checked `file`: rename it aside, read it, unlink it if `check` says it is the one
    /// meant, else put it back.
    fn remove(
        &mut self,
        file: String,
        aside_name: String,
        check: Check,
        then: Then,
        on_error: Then,
    ) {
        let aside = self.path(&aside_name);
        let removal = Removal {
            file: file.clone(),
            aside: aside.clone(),
            check,
            then,
            on_error,
        };
        self.plan(Phase::RenameAside { removal }, |id| Step::Rename {
            id,
            from: file,
            to: aside,
        });
    }

    /// Step 7 (or the mutex's release): remove it if it is still this writer's.
    fn release(&mut self, which: Which, then: Then, on_error: Then) {
        let file = self.which_path(which);
        let aside = lock::release_name(&self.writer.token);
        self.remove(file, aside, Check::Owns, then, on_error);
    }

    fn unlink(&mut self, phase: Phase, path: String) {
        self.plan(phase, |id| Step::Unlink { id, path });
    }

    /// The sweep's next entry, or the release when it is done.
    fn sweep_next(&mut self) {
        match self.sweep.pop_front() {
            Some(name) => {
                let path = self.path(&name);
                self.plan(Phase::StatEntry { name }, |id| Step::Stat { id, path });
            }
            None => self.release(Which::Lock, Then::Answer, Then::Answer),
        }
    }

    /// Steps 4–6 end here: the temp file is removed after a failure, then `then`.
    fn drop_temp(&mut self, failure: Failure, then: Then) {
        self.answer_with(failure);
        let temp = self.temp();
        self.unlink(Phase::UnlinkTemp { then }, temp);
    }

    fn temp(&self) -> String {
        format!(
            "{}{}{}",
            dirname(&self.target, &self.place.sep),
            self.place.sep,
            lock::temp_name(&self.writer.token)
        )
    }

    fn advance(&mut self, phase: Phase, input: Input, now: Now) -> Result<(), DriverError> {
        let wrong = |step: &'static str| Err(DriverError::WrongInput { step });
        let age = |mtime_ms: f64| millis(now.wall - mtime_ms);
        match (phase, input) {
            // 1. The directory.
            (Phase::MakeDir, Input::Ok) => self.create(Which::Lock, String::new(), now),
            (Phase::MakeDir, Input::Failed { code, message }) => {
                self.fail(Then::Fail, detail(&code, &message), now)
            }
            (Phase::MakeDir, _) => return wrong("makeDir"),

            // 2.1 and 2.3: the exclusive create of the lock or of the take-over mutex.
            (
                Phase::Create {
                    which: Which::Lock, ..
                },
                Input::Created { .. },
            ) => {
                let path = self.path(STORE_FILE);
                self.plan(Phase::ReadStore, |id| Step::ReadStore { id, path });
            }
            (
                Phase::Create {
                    which: Which::Mutex,
                    judged,
                },
                Input::Created { .. },
            ) => {
                // Under the mutex: judge the lock again from a fresh read.
                let path = self.path(LOCK_FILE);
                self.read(Phase::Reread { judged }, path);
            }
            (Phase::Create { which, .. }, Input::Failed { code, message }) => {
                if which == Which::Lock && code == "ENOENT" && !self.made_dir {
                    // 1. No directory yet: make it, once, and try again.
                    self.made_dir = true;
                    let path = self.place.dir.clone();
                    self.plan(Phase::MakeDir, |id| Step::MakeDir { id, path });
                } else if code == "EEXIST" {
                    self.contended(which);
                } else if self.place.windows && code == "EPERM" {
                    // On Windows EPERM can mean the file exists (pending deletion, or held).
                    let path = self.which_path(which);
                    let detail = detail(&code, &message);
                    self.plan(Phase::Contended { which, detail }, |id| Step::Stat {
                        id,
                        path,
                    });
                } else {
                    self.fail(Then::Fail, detail(&code, &message), now);
                }
            }
            (Phase::Create { which, .. }, Input::WriteFailed { code, message }) => {
                // Ours and milliseconds old: remove it rather than leave it to go stale.
                let path = self.which_path(which);
                let detail = detail(&code, &message);
                self.unlink(Phase::Abandon { which, detail }, path);
            }
            (Phase::Create { .. }, _) => return wrong("create"),
            (Phase::Contended { which, .. }, Input::Stat { .. }) => self.contended(which),
            (Phase::Contended { detail, .. }, Input::Failed { .. }) => {
                self.fail(Then::Fail, detail, now)
            }
            (Phase::Contended { .. }, _) => return wrong("stat"),
            (Phase::Abandon { detail, .. }, Input::Ok | Input::Failed { .. }) => {
                self.fail(Then::Fail, detail, now)
            }
            (Phase::Abandon { .. }, _) => return wrong("unlink"),

            // 2.2: an existing lock (or mutex) is read, its holder probed, and judged.
            (Phase::Observe { which, .. }, Input::Text { text, mtime_ms }) => {
                let age = age(mtime_ms);
                let probe = |_| Phase::ProbeHolder {
                    which,
                    text: text.clone(),
                    age,
                };
                if let Some(holder) = self.probe_or(&text, probe) {
                    self.judge(which, text, age, holder, now);
                }
            }
            (Phase::Observe { .. }, Input::Failed { code, .. }) if code == "ENOENT" => {
                // Gone meanwhile: try the lock again at once.
                self.go(Then::Acquire, now)
            }
            (Phase::Observe { .. }, Input::Failed { code, message }) => {
                self.fail(Then::Fail, detail(&code, &message), now)
            }
            (Phase::Observe { .. }, _) => return wrong("read"),
            (Phase::ProbeHolder { which, text, age }, Input::Probed { alive }) => {
                self.judge(which, text, age, liveness(alive), now)
            }
            (Phase::ProbeHolder { .. }, _) => return wrong("probe"),

            // 2.3, under the mutex: the lock read again; removed only if still the judged one
            // and still abandoned; then the mutex is released.
            (Phase::Reread { judged }, Input::Text { text, mtime_ms }) => {
                let age = age(mtime_ms);
                let probe = |_| Phase::ProbeReread {
                    judged: judged.clone(),
                    text: text.clone(),
                    age,
                };
                if let Some(holder) = self.probe_or(&text, probe) {
                    self.reread_judged(judged, text, age, holder);
                }
            }
            (Phase::Reread { .. }, Input::Failed { code, .. }) if code == "ENOENT" => {
                self.go(Then::ReleaseMutex, now)
            }
            (Phase::Reread { .. }, Input::Failed { code, message }) => {
                self.fail(Then::ReleaseMutexAndFail, detail(&code, &message), now)
            }
            (Phase::Reread { .. }, _) => return wrong("read"),
            (Phase::ProbeReread { judged, text, age }, Input::Probed { alive }) => {
                self.reread_judged(judged, text, age, liveness(alive))
            }
            (Phase::ProbeReread { .. }, _) => return wrong("probe"),

            // An abandoned mutex, read once more before it is removed.
            (
                Phase::RereadMutex {
                    judged,
                    then,
                    on_error,
                },
                Input::Text { text, mtime_ms },
            ) => {
                let age = age(mtime_ms);
                let probe = |_| Phase::ProbeRereadMutex {
                    judged: judged.clone(),
                    text: text.clone(),
                    age,
                    then,
                    on_error,
                };
                if let Some(holder) = self.probe_or(&text, probe) {
                    self.reread_mutex(judged, text, age, holder, then, on_error, now);
                }
            }
            (Phase::RereadMutex { then, .. }, Input::Failed { code, .. }) if code == "ENOENT" => {
                self.go(then, now)
            }
            (Phase::RereadMutex { on_error, .. }, Input::Failed { code, message }) => {
                self.fail(on_error, detail(&code, &message), now)
            }
            (Phase::RereadMutex { .. }, _) => return wrong("read"),
            (
                Phase::ProbeRereadMutex {
                    judged,
                    text,
                    age,
                    then,
                    on_error,
                },
                Input::Probed { alive },
            ) => self.reread_mutex(judged, text, age, liveness(alive), then, on_error, now),
            (Phase::ProbeRereadMutex { .. }, _) => return wrong("probe"),

            // Remove-checked: rename aside, read, unlink or put back with `link`.
            (Phase::RenameAside { removal }, Input::Ok) => {
                let path = removal.aside.clone();
                self.read(Phase::ReadAside { removal }, path);
            }
            (Phase::RenameAside { removal }, Input::Failed { code, message }) => {
                if code == "ENOENT" {
                    self.go(removal.then, now)
                } else {
                    self.fail(removal.on_error, detail(&code, &message), now)
                }
            }
            (Phase::RenameAside { .. }, _) => return wrong("rename"),
            (Phase::ReadAside { removal }, Input::Text { text, .. }) => {
                let meant = match &removal.check {
                    Check::Same(judged) => lock::same_lock(&text, judged),
                    Check::Owns => lock::owns(&text, &self.writer.token),
                };
                if meant {
                    let aside = removal.aside.clone();
                    self.unlink(Phase::UnlinkAside { removal }, aside);
                } else {
                    let (from, to) = (removal.aside.clone(), removal.file.clone());
                    self.plan(Phase::PutBack { removal }, |id| Step::Link { id, from, to });
                }
            }
            (Phase::ReadAside { removal }, Input::Failed { code, message }) => {
                if code == "ENOENT" {
                    // Gone already: another writer's sweep removed an abandoned lock's aside.
                    self.go(removal.then, now)
                } else {
                    self.fail(removal.on_error, detail(&code, &message), now)
                }
            }
            (Phase::ReadAside { .. }, _) => return wrong("read"),
            (Phase::PutBack { removal }, Input::Ok) => {
                let aside = removal.aside.clone();
                self.unlink(Phase::UnlinkAside { removal }, aside);
            }
            (Phase::PutBack { removal }, Input::Failed { code, message }) => {
                if code == "EEXIST" {
                    // A third writer already holds a lock; the displaced owner fails its
                    // commit check.
                    let aside = removal.aside.clone();
                    self.unlink(Phase::UnlinkAside { removal }, aside);
                } else {
                    self.fail(removal.on_error, detail(&code, &message), now)
                }
            }
            (Phase::PutBack { .. }, _) => return wrong("link"),
            (Phase::UnlinkAside { removal }, Input::Ok | Input::Failed { .. }) => {
                self.go(removal.then, now)
            }
            (Phase::UnlinkAside { .. }, _) => return wrong("unlink"),
            (Phase::Sleep { then }, Input::Ok) => self.go(then, now),
            (Phase::Sleep { .. }, _) => return wrong("sleep"),

            // 3. Read and apply.
            (Phase::ReadStore, Input::Found) => {
                self.existed = true;
                self.plan(Phase::Edit, |id| Step::Edit { id });
            }
            (Phase::ReadStore, Input::Failed { code, .. }) if code == "ENOENT" => {
                self.plan(Phase::Edit, |id| Step::Edit { id });
            }
            (Phase::ReadStore, Input::Failed { code, message }) => {
                self.answer_with(Failure::read_failed(&detail(&code, &message)));
                self.go(Then::Release, now);
            }
            (Phase::ReadStore, _) => return wrong("readStore"),
            (Phase::Edit, Input::Edited { ok, answer }) => {
                self.answer = Some(answer);
                if ok {
                    let path = self.path(STORE_FILE);
                    self.plan(Phase::RealPath, |id| Step::RealPath { id, path });
                } else {
                    self.go(Then::Release, now);
                }
            }
            (Phase::Edit, _) => return wrong("edit"),

            // 4. Write: a symlinked store is written through to its target, in its folder.
            (Phase::RealPath, Input::Path { path }) => self.target_found(path),
            (Phase::RealPath, Input::Failed { .. }) => self.target_found(self.path(STORE_FILE)),
            (Phase::RealPath, _) => return wrong("realPath"),
            (Phase::StatTarget, Input::Stat { mode, .. }) => match refuse_read_only(mode & 0o777) {
                Some(failure) => {
                    self.answer_with(failure);
                    self.go(Then::Release, now);
                }
                None => self.write_temp(mode & 0o777),
            },
            // Gone since it was read: a fresh store gets 0600.
            (Phase::StatTarget, Input::Failed { .. }) => self.write_temp(NEW_STORE_MODE),
            (Phase::StatTarget, _) => return wrong("stat"),
            (Phase::WriteTemp, Input::Created { key }) => {
                self.written = key;
                // 5. The commit check.
                let path = self.path(LOCK_FILE);
                self.read(Phase::CommitCheck, path);
            }
            (
                Phase::WriteTemp,
                Input::Failed { code, message } | Input::WriteFailed { code, message },
            ) => self.drop_temp(
                Failure::write_failed(&detail(&code, &message)),
                Then::Release,
            ),
            (Phase::WriteTemp, _) => return wrong("create"),
            (Phase::CommitCheck, Input::Text { text, .. })
                if lock::owns(&text, &self.writer.token) =>
            {
                self.rename_started = now.mono;
                self.rename_temp();
            }
            (Phase::CommitCheck, Input::Text { .. } | Input::Failed { .. }) => {
                // Taken over: the answer tells; this writer's lock is gone, but a release
                // checks ownership, so it is harmless.
                self.drop_temp(lock::lock_lost(), Then::Release)
            }
            (Phase::CommitCheck, _) => return wrong("read"),

            // 6. Commit.
            (Phase::RenameTemp, Input::Ok) => {
                let path = dirname(&self.target, &self.place.sep).to_owned();
                self.plan(Phase::SyncDir, |id| Step::SyncDir { id, path });
            }
            (Phase::RenameTemp, Input::Failed { code, message }) => {
                let busy = self.place.windows && WINDOWS_BUSY.contains(&code.as_str());
                if busy && now.mono - self.rename_started <= RENAME_RETRY_MS {
                    let ms = (lock::BACKOFF_START_MS << self.rename_attempt.min(4))
                        .min(lock::BACKOFF_MAX_MS);
                    self.rename_attempt += 1;
                    self.plan(
                        Phase::Sleep {
                            then: Then::RenameTemp,
                        },
                        |id| Step::Sleep { id, ms },
                    );
                } else {
                    self.drop_temp(
                        Failure::write_failed(&detail(&code, &message)),
                        Then::Release,
                    )
                }
            }
            (Phase::RenameTemp, _) => return wrong("rename"),
            // Windows and some file systems cannot fsync a directory: ignored.
            (Phase::SyncDir, Input::Ok | Input::Failed { .. }) => {
                self.committed = self.written.map(|key| Committed {
                    key,
                    at: now.wall,
                    held: false,
                });
                if self.holds() {
                    self.plan(Phase::StatHeld, |id| Step::StatHeld { id });
                } else {
                    self.list();
                }
            }
            (Phase::SyncDir, _) => return wrong("syncDir"),
            (Phase::StatHeld, Input::Key { key }) => {
                if let Some(committed) = self.committed.as_mut() {
                    committed.key = key;
                    committed.held = true;
                }
                self.list();
            }
            // Not held after all: the cache goes by the key taken before the rename.
            (Phase::StatHeld, Input::Failed { .. }) => self.list(),
            (Phase::StatHeld, _) => return wrong("statHeld"),
            (Phase::UnlinkTemp { then }, Input::Ok | Input::Failed { .. }) => self.go(then, now),
            (Phase::UnlinkTemp { .. }, _) => return wrong("unlink"),

            // 6. The sweep, still holding the lock; its failures are ignored.
            (Phase::List, Input::Names { names }) => {
                self.sweep = names.into();
                self.sweep_next();
            }
            (Phase::List, Input::Failed { .. }) => self.go(Then::Release, now),
            (Phase::List, _) => return wrong("list"),
            (Phase::StatEntry { name }, Input::Stat { mtime_ms, .. }) => {
                match lock::sweep(&name, age(mtime_ms)) {
                    lock::Sweep::Keep => self.sweep_next(),
                    lock::Sweep::Unlink => {
                        let path = self.path(&name);
                        self.unlink(Phase::SweepUnlink, path);
                    }
                    lock::Sweep::RemoveMutex => {
                        // Judge the text and mtime of one handle: the stat may describe an
                        // older mutex.
                        let path = self.path(TAKEOVER_FILE);
                        self.read(Phase::SweepReadMutex { name }, path);
                    }
                }
            }
            (Phase::StatEntry { .. }, Input::Failed { .. }) => self.sweep_next(),
            (Phase::StatEntry { .. }, _) => return wrong("stat"),
            (Phase::SweepUnlink, Input::Ok | Input::Failed { .. }) => self.sweep_next(),
            (Phase::SweepUnlink, _) => return wrong("unlink"),
            (Phase::SweepReadMutex { name }, Input::Text { text, mtime_ms }) => {
                if lock::sweep(&name, age(mtime_ms)) == lock::Sweep::RemoveMutex {
                    let path = self.path(TAKEOVER_FILE);
                    self.read(
                        Phase::RereadMutex {
                            judged: text,
                            then: Then::SweepNext,
                            on_error: Then::Release,
                        },
                        path,
                    );
                } else {
                    self.sweep_next();
                }
            }
            (Phase::SweepReadMutex { .. }, Input::Failed { .. }) => self.sweep_next(),
            (Phase::SweepReadMutex { .. }, _) => return wrong("read"),
            (Phase::Done, _) => return Err(DriverError::Finished),
        }
        Ok(())
    }

    /// The lock (or mutex) exists: read it for a first judgment (2.2).
    fn contended(&mut self, which: Which) {
        let path = self.which_path(which);
        self.read(Phase::Observe { which }, path);
    }

    /// Under the mutex: remove the lock only if it is still the judged one and still
    /// abandoned; then release the mutex.
    fn reread_judged(&mut self, judged: String, text: String, age: u64, holder: Liveness) {
        let observed = Observed {
            text: &text,
            age_ms: age,
            holder,
        };
        if lock::still_abandoned(&judged, &observed, &self.me()) {
            let file = self.path(LOCK_FILE);
            let aside = lock::steal_name(&self.writer.token);
            self.remove(
                file,
                aside,
                Check::Same(judged),
                Then::ReleaseMutex,
                Then::ReleaseMutexAndFail,
            );
        } else {
            self.release(Which::Mutex, Then::Acquire, Then::Fail);
        }
    }

    /// An abandoned mutex read again: removed only if still the judged one and still abandoned.
    #[allow(clippy::too_many_arguments)]
    fn reread_mutex(
        &mut self,
        judged: String,
        text: String,
        age: u64,
        holder: Liveness,
        then: Then,
        on_error: Then,
        now: Now,
    ) {
        let observed = Observed {
            text: &text,
            age_ms: age,
            holder,
        };
        if lock::takeover_still_abandoned(&judged, &observed, &self.me()) {
            let file = self.path(TAKEOVER_FILE);
            let aside = lock::steal_name(&self.writer.token);
            self.remove(file, aside, Check::Same(judged), then, on_error);
        } else {
            self.go(then, now);
        }
    }

    fn target_found(&mut self, target: String) {
        self.target = target;
        if self.existed {
            let path = self.target.clone();
            self.plan(Phase::StatTarget, |id| Step::Stat { id, path });
        } else {
            self.write_temp(NEW_STORE_MODE);
        }
    }

    fn write_temp(&mut self, mode: u32) {
        let path = self.temp();
        let hold = self.holds();
        self.plan(Phase::WriteTemp, |id| Step::Create {
            id,
            path,
            mode,
            data: Data::Edited,
            sync: true,
            // The rename keeps the inode, size and mtime: the key the store will have.
            stat: true,
            hold,
        });
    }

    /// Whether the driver keeps the new store's handle open for the cache. Not on Windows, where
    /// a file held open (without POSIX rename semantics) makes another writer's rename over the
    /// store fail, and where Node's inode numbers (NTFS file ids of 64 bits) may not fit a
    /// JavaScript number.
    fn holds(&self) -> bool {
        !self.place.windows
    }

    /// 6. The sweep starts: the names in the store's directory.
    fn list(&mut self) {
        let path = self.place.dir.clone();
        self.plan(Phase::List, |id| Step::List { id, path });
    }

    fn rename_temp(&mut self) {
        let (from, to) = (self.temp(), self.target.clone());
        self.plan(Phase::RenameTemp, |id| Step::Rename { id, from, to });
    }
}

/// A probe's answer as the core's liveness.
fn liveness(alive: bool) -> Liveness {
    if alive {
        Liveness::Alive
    } else {
        Liveness::Dead
    }
}

/// Non-negative whole milliseconds of a JavaScript number.
fn millis(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}

/// An I/O error as one line: its code and message (as `lib/memory.js`'s `describe` did).
fn detail(code: &str, message: &str) -> String {
    if code.is_empty() || message.starts_with(code) {
        message.to_owned()
    } else {
        format!("{code}: {message}")
    }
}

/// The folder of `path`.
fn dirname<'a>(path: &'a str, sep: &str) -> &'a str {
    match path.rfind(sep) {
        Some(0) => &path[..sep.len()],
        Some(i) => &path[..i],
        None => ".",
    }
}
