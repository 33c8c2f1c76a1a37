//! The save protocol ([`save::Save`]) against a fake file system, a fake clock and fake
//! processes: several writers' steps interleaved by a seeded scheduler, so the concurrency cases
//! the Node tests could only run on real time and real processes (two writers on one stale lock,
//! a killed holder, an abandoned take-over mutex, a paused holder, a Windows rename over a store
//! a scanner holds open) replay deterministically, and a property test covers the interleavings
//! of two and three writers with crashes and pauses.
//!
//! What every run must show:
//! - **no lost update**: when a writer renames its temp file over the store, the store is exactly
//!   the one it read (nobody committed in between), so the final store holds every committed fact;
//! - when no writer was paused past the stale age, every writer that did not crash answers `ok`;
//! - a writer ends, with `ok` or `memory.locked`, and leaves no file of its own behind.

use limit_break_memory::lock::{self, LOCK_FILE, LockRecord, STORE_FILE, TAKEOVER_FILE};
use limit_break_memory::save::{Data, Input, Now, Place, Save, Step, Writer};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const DIR: &str = "/home/memory";
const HOST: &str = "box";
/// How long one step takes on the fake clock.
const STEP_MS: f64 = 1.0;

#[derive(Clone, Debug)]
struct File {
    text: String,
    mtime: f64,
    ino: u64,
    mode: u32,
}

/// One writer: its machine, what its driver holds, and what became of it.
struct Actor {
    /// Made at its first step, so it starts at its `wake` time.
    save: Option<Save>,
    seed: u64,
    token: String,
    pid: u32,
    fact: String,
    /// What `readStore` found (`None`: no store).
    found: Option<String>,
    edited: Option<String>,
    /// The fake monotonic time before which it does not run (a `sleep` step, or a pause).
    wake: f64,
    crashed: bool,
    paused: bool,
    answer: Option<serde_json::Value>,
}

struct World {
    /// Whether the store's directory exists (a file put there makes it).
    dir: bool,
    files: BTreeMap<String, File>,
    next_ino: u64,
    wall: f64,
    mono: f64,
    alive: BTreeSet<u32>,
    /// Windows: a rename over the store fails with `EPERM` until this time (a scanner holds it).
    store_held_until: f64,
    actors: Vec<Actor>,
    /// Facts in the order their writers committed.
    committed: Vec<String>,
    windows: bool,
    /// A take-over mutex was left by a dead holder: the residual the crate docs name ("What is
    /// left") may follow.
    abandoned_mutex: bool,
}

fn path(name: &str) -> String {
    format!("{DIR}/{name}")
}

fn failed(code: &str) -> Input {
    Input::Failed {
        code: code.to_owned(),
        message: format!("{code}: fake"),
    }
}

impl World {
    fn new(writers: usize, windows: bool) -> World {
        let mut world = World {
            dir: false,
            files: BTreeMap::new(),
            next_ino: 1,
            wall: 1_800_000_000_000.0,
            mono: 0.0,
            alive: BTreeSet::new(),
            store_held_until: 0.0,
            actors: Vec::new(),
            committed: Vec::new(),
            windows,
            abandoned_mutex: false,
        };
        for i in 0..writers {
            let token = format!("writer-{i}");
            let pid = 100 + i as u32;
            world.alive.insert(pid);
            world.actors.push(Actor {
                save: None,
                seed: 7 + i as u64,
                token,
                pid,
                fact: format!("fact of writer {i}"),
                found: None,
                edited: None,
                wake: 0.0,
                crashed: false,
                paused: false,
                answer: None,
            });
        }
        world
    }

    fn now(&self) -> Now {
        Now {
            wall: self.wall,
            mono: self.mono,
        }
    }

    fn tick(&mut self, ms: f64) {
        self.wall += ms;
        self.mono += ms;
    }

    /// A file another process left: a lock record of `pid` on `host`, last written `age_ms` ago.
    fn leave(&mut self, name: &str, token: &str, pid: u32, host: &str, age_ms: f64) {
        let record = LockRecord {
            token: token.to_owned(),
            pid,
            host: host.to_owned(),
            created: (self.wall - age_ms) as u64,
        };
        self.put(&path(name), record.to_text(), 0o644, self.wall - age_ms);
    }

    fn put(&mut self, path: &str, text: String, mode: u32, mtime: f64) {
        self.dir = true;
        let ino = self.next_ino;
        self.next_ino += 1;
        self.files.insert(
            path.to_owned(),
            File {
                text,
                mtime,
                ino,
                mode,
            },
        );
    }

    fn store(&self) -> Option<String> {
        self.files.get(&path(STORE_FILE)).map(|f| f.text.clone())
    }

    fn runnable(&self) -> Vec<usize> {
        (0..self.actors.len())
            .filter(|&i| {
                let a = &self.actors[i];
                a.answer.is_none() && !a.crashed && a.wake <= self.mono
            })
            .collect()
    }

    fn waiting(&self) -> Option<f64> {
        self.actors
            .iter()
            .filter(|a| a.answer.is_none() && !a.crashed)
            .map(|a| a.wake)
            .reduce(f64::min)
    }

    /// Actor `i`'s machine, made now if it has not started.
    fn save(&mut self, i: usize) -> &mut Save {
        let now = self.now();
        let place = Place {
            dir: DIR.to_owned(),
            sep: "/".to_owned(),
            windows: self.windows,
        };
        let a = &mut self.actors[i];
        let writer = Writer {
            token: a.token.clone(),
            pid: a.pid,
            host: HOST.to_owned(),
        };
        a.save
            .get_or_insert_with(|| Save::new(place, writer, a.seed, now))
    }

    /// Performs actor `i`'s outstanding step and answers it.
    fn perform(&mut self, i: usize) {
        let step = self.save(i).poll().clone();
        let input = match &step {
            Step::Done { answer, committed } => {
                let answer: serde_json::Value = serde_json::from_str(answer).unwrap();
                assert_eq!(
                    committed.is_some(),
                    answer["ok"] == true,
                    "a save commits exactly when it answers ok: {answer}"
                );
                self.actors[i].answer = Some(answer);
                return;
            }
            Step::MakeDir { .. } => {
                self.dir = true;
                Input::Ok
            }
            Step::SyncDir { .. } => Input::Ok,
            Step::Create {
                path,
                mode,
                data,
                sync,
                stat,
                ..
            } => {
                // Only the new store is fsynced; a lock or mutex needs the page cache alone.
                assert_eq!(*sync, *data == Data::Edited, "{path}");
                if !self.dir {
                    failed("ENOENT")
                } else if self.files.contains_key(path) {
                    failed("EEXIST")
                } else {
                    let text = match data {
                        Data::Text(text) => text.clone(),
                        Data::Edited => self.actors[i].edited.clone().expect("an edit"),
                    };
                    let len = text.len() as f64;
                    self.put(path, text, *mode, self.wall);
                    let f = &self.files[path];
                    Input::Created {
                        key: stat.then_some([f.mtime, len, f.ino as f64]),
                    }
                }
            }
            Step::Read { path, .. } => match self.files.get(path) {
                Some(f) => Input::Text {
                    text: f.text.clone(),
                    mtime_ms: f.mtime,
                },
                None => failed("ENOENT"),
            },
            Step::ReadStore { path, .. } => {
                self.actors[i].found = self.files.get(path).map(|f| f.text.clone());
                match self.actors[i].found {
                    Some(_) => Input::Found,
                    None => failed("ENOENT"),
                }
            }
            Step::Edit { .. } => {
                let a = &mut self.actors[i];
                a.edited = Some(format!("{}{}\n", a.found.as_deref().unwrap_or(""), a.fact));
                Input::Edited {
                    ok: true,
                    answer: r#"{"ok":true}"#.to_owned(),
                }
            }
            Step::Stat { path, .. } => match self.files.get(path) {
                Some(f) => Input::Stat {
                    mtime_ms: f.mtime,
                    mode: f.mode,
                },
                None => failed("ENOENT"),
            },
            Step::RealPath { path, .. } => match self.files.get(path) {
                Some(_) => Input::Path { path: path.clone() },
                None => failed("ENOENT"),
            },
            Step::Probe { pid, .. } => Input::Probed {
                alive: self.alive.contains(pid),
            },
            Step::Rename { from, to, .. } => {
                if !self.files.contains_key(from) {
                    failed("ENOENT")
                } else if *to == path(STORE_FILE) && self.mono < self.store_held_until {
                    failed("EPERM")
                } else {
                    if *to == path(STORE_FILE) {
                        let a = &self.actors[i];
                        assert_eq!(
                            self.store(),
                            a.found,
                            "lost update: {} renames over a store it did not read",
                            a.token
                        );
                        self.committed.push(a.fact.clone());
                    }
                    let file = self.files.remove(from).unwrap();
                    self.files.insert(to.clone(), file);
                    Input::Ok
                }
            }
            Step::Link { from, to, .. } => {
                match (self.files.get(from), self.files.contains_key(to)) {
                    (None, _) => failed("ENOENT"),
                    (Some(_), true) => failed("EEXIST"),
                    (Some(f), false) => {
                        let f = f.clone();
                        self.files.insert(to.clone(), f);
                        Input::Ok
                    }
                }
            }
            Step::Unlink { path, .. } => match self.files.remove(path) {
                Some(_) => Input::Ok,
                None => failed("ENOENT"),
            },
            Step::List { path, .. } => Input::Names {
                names: self
                    .files
                    .keys()
                    .filter_map(|p| p.strip_prefix(&format!("{path}/")))
                    .map(str::to_owned)
                    .collect(),
            },
            Step::Sleep { ms, .. } => {
                self.actors[i].wake = self.mono + *ms as f64;
                Input::Ok
            }
        };
        let id = step.id().expect("a step with an id");
        let now = self.now();
        self.save(i)
            .handle(id, input, now)
            .expect("the fake driver answers the outstanding step");
    }

    /// Whether pausing actor `i` now keeps to the protocol's assumptions: not while it holds the
    /// take-over mutex (A2), and not between its commit check and its rename (the documented
    /// window of microseconds).
    fn may_pause(&self, i: usize) -> bool {
        let a = &self.actors[i];
        let holds_mutex = self
            .files
            .get(&path(TAKEOVER_FILE))
            .is_some_and(|f| lock::owns(&f.text, &a.token));
        let renaming = matches!(
            a.save.as_ref().map(Save::poll),
            Some(Step::Rename { to, .. }) if *to == path(STORE_FILE)
        );
        !holds_mutex && !renaming
    }

    /// Runs every actor to its end, choosing who moves next with `rng`; `crash` kills an actor
    /// at its n-th step, `pause` stops one at its n-th step for longer than the stale age.
    fn run(&mut self, rng: &mut Rng, crash: Option<(usize, u32)>, pause: Option<(usize, u32)>) {
        let mut steps = vec![0u32; self.actors.len()];
        for _ in 0..200_000 {
            let runnable = self.runnable();
            if runnable.is_empty() {
                match self.waiting() {
                    Some(wake) => {
                        self.tick((wake - self.mono).max(STEP_MS));
                        continue;
                    }
                    None => return,
                }
            }
            let i = runnable[rng.below(runnable.len())];
            steps[i] += 1;
            if crash == Some((i, steps[i])) {
                let token = &self.actors[i].token;
                self.abandoned_mutex |= self
                    .files
                    .get(&path(TAKEOVER_FILE))
                    .is_some_and(|f| lock::owns(&f.text, token));
                self.actors[i].crashed = true;
                self.alive.remove(&self.actors[i].pid);
                continue;
            }
            if pause == Some((i, steps[i])) && self.may_pause(i) {
                self.actors[i].paused = true;
                self.actors[i].wake = self.mono + lock::STALE_MS as f64 + 1_000.0;
                continue;
            }
            self.perform(i);
            self.tick(STEP_MS);
        }
        panic!("the writers did not finish in 200,000 steps");
    }

    /// The invariants every finished run keeps.
    fn check(&self) {
        let someone_paused = self.actors.iter().any(|a| a.paused);
        let displaced = lock::lock_lost().to_json()["message"].clone();
        let store = self.store().unwrap_or_default();
        let lines: Vec<&str> = store.lines().collect();
        assert_eq!(lines, self.committed, "the store is every commit, in order");
        for a in &self.actors {
            if a.crashed {
                continue;
            }
            let answer = a.answer.as_ref().expect("every live writer ends");
            let ok = answer["ok"] == true;
            assert_eq!(
                ok,
                self.committed.contains(&a.fact),
                "{} answered {answer} but its fact {} committed",
                a.token,
                if ok { "was not" } else { "was" }
            );
            if !ok {
                assert_eq!(answer["code"], "memory.locked", "{}: {answer}", a.token);
            }
            // Waiting on a paused holder may end in `memory.locked` (8 s before the lock is
            // stale); the residual of an abandoned mutex may displace a writer.
            let residual = self.abandoned_mutex && answer["message"] == displaced;
            assert!(
                ok || someone_paused || residual,
                "{} answered {answer} though no writer paused",
                a.token
            );
            for (p, f) in &self.files {
                let left_mutex = self.abandoned_mutex && *p == path(TAKEOVER_FILE);
                assert!(
                    left_mutex || (!p.contains(&a.token) && !lock::owns(&f.text, &a.token)),
                    "{} left {p} behind",
                    a.token
                );
            }
        }
    }
}

/// Splitmix64: the scheduler's choices, fixed by a seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

fn answers(world: &World) -> Vec<String> {
    world
        .actors
        .iter()
        .map(|a| match &a.answer {
            Some(v) if v["ok"] == true => "ok".to_owned(),
            Some(v) => v["code"].as_str().unwrap_or("?").to_owned(),
            None => "crashed".to_owned(),
        })
        .collect()
}

#[test]
fn two_writers_on_one_stale_lock_both_commit_through_one_take_over() {
    for seed in 0..200 {
        let mut world = World::new(2, false);
        world.leave(LOCK_FILE, "gone", 9, "another-host", 16_000.0);
        world.run(&mut Rng(seed), None, None);
        world.check();
        assert_eq!(answers(&world), ["ok", "ok"], "seed {seed}");
    }
}

#[test]
fn a_killed_holder_is_taken_over_at_once_and_its_debris_swept_later() {
    let mut world = World::new(2, false);
    world.leave(LOCK_FILE, "killed", 77, HOST, 0.0);
    world.put(
        &path(&lock::temp_name("killed")),
        "half".to_owned(),
        0o600,
        world.wall - 20_000.0,
    );
    world.run(&mut Rng(1), None, None);
    world.check();
    assert_eq!(answers(&world), ["ok", "ok"]);
    // Well under the 15 s a lock takes to go stale: the dead pid was proof enough.
    assert!(world.mono < 1_000.0, "took {} ms", world.mono);
    let names: Vec<&String> = world.files.keys().collect();
    assert_eq!(
        names,
        [&path(STORE_FILE)],
        "the killed holder's temp file is swept"
    );
}

#[test]
fn an_abandoned_take_over_mutex_is_removed_and_the_dead_lock_taken_over() {
    // Two writers: every interleaving commits both.
    for seed in 0..500 {
        let mut world = abandoned_mutex(2);
        world.run(&mut Rng(seed), None, None);
        world.check();
        assert_eq!(answers(&world), ["ok", "ok"], "seed {seed}");
        assert!(
            !world.files.contains_key(&path(TAKEOVER_FILE)),
            "seed {seed}"
        );
    }
    // Three writers: the residual the crate docs name ("What is left"). Two writers removing the
    // one abandoned mutex can let two take-overs overlap; then a winner's lock may be displaced
    // (it fails its commit check and answers `memory.locked`), or a mutex is left behind. Nothing
    // is lost in any interleaving (`check`). How often, over 1,000 interleavings chosen uniformly
    // at random step by step:
    let (mut displaced, mut left_mutex) = (0, 0);
    for seed in 0..1_000 {
        let mut world = abandoned_mutex(3);
        world.run(&mut Rng(seed), None, None);
        world.check();
        let answers = answers(&world);
        assert!(
            answers.contains(&"ok".to_owned()),
            "seed {seed}: {answers:?}"
        );
        if answers.iter().any(|a| a != "ok") {
            displaced += 1;
        }
        if world.files.contains_key(&path(TAKEOVER_FILE)) {
            left_mutex += 1;
        }
    }
    // A mutex left behind is a live writer's: the next save waits 5 s and removes it.
    expect_test::expect!["displaced a writer in 1, left a mutex in 13"].assert_eq(&format!(
        "displaced a writer in {displaced}, left a mutex in {left_mutex}"
    ));
}

/// A lock whose holder was killed, and a take-over mutex whose holder was killed mid take-over.
fn abandoned_mutex(writers: usize) -> World {
    let mut world = World::new(writers, false);
    world.leave(LOCK_FILE, "killed", 77, HOST, 0.0);
    world.leave(TAKEOVER_FILE, "killed-mid-take-over", 78, HOST, 0.0);
    world.abandoned_mutex = true;
    world
}

#[test]
fn a_holder_paused_past_the_stale_age_loses_its_lock_and_saves_nothing() {
    // Writer 0 alone first, so it holds the lock when it pauses at its fourth step (it has read
    // the store and is about to edit it); writer 1 comes 9 s later, waits until the lock is 15 s old, takes it over and
    // commits.
    let mut world = World::new(2, false);
    world.actors[1].wake = 9_000.0;
    world.run(&mut Rng(0), None, Some((0, 4)));
    world.check();
    assert!(world.actors[0].paused);
    assert_eq!(answers(&world), ["memory.locked", "ok"]);
    assert_eq!(world.committed, ["fact of writer 1"]);
}

#[test]
fn a_waiter_gives_up_after_eight_seconds_on_a_live_holder_of_another_host() {
    let mut world = World::new(1, false);
    world.leave(LOCK_FILE, "busy", 9, "another-host", 0.0);
    world.run(&mut Rng(0), None, None);
    assert_eq!(answers(&world), ["memory.locked"]);
    let waited = world.mono;
    assert!(
        (lock::WAIT_MS as f64..lock::WAIT_MS as f64 + 300.0).contains(&waited),
        "waited {waited} ms"
    );
    assert!(world.store().is_none());
}

#[test]
fn on_windows_a_rename_over_a_store_a_scanner_holds_is_retried_as_sleep_steps() {
    let mut world = World::new(1, true);
    world.put(&path(STORE_FILE), "earlier\n".to_owned(), 0o600, world.wall);
    world.committed.push("earlier".to_owned());
    world.store_held_until = 300.0;
    world.run(&mut Rng(0), None, None);
    world.check();
    assert_eq!(answers(&world), ["ok"]);
    assert_eq!(world.store().unwrap(), "earlier\nfact of writer 0\n");

    // Held past the retry's second: the save fails and puts nothing in place.
    let mut world = World::new(1, true);
    world.store_held_until = 5_000.0;
    world.put(&path(STORE_FILE), String::new(), 0o600, world.wall);
    world.run(&mut Rng(0), None, None);
    assert_eq!(answers(&world), ["memory.write_failed"]);
    assert_eq!(world.store().unwrap(), "");
    assert_eq!(
        world.files.len(),
        1,
        "the temp file is removed and the lock released"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Two or three writers, any interleaving, optionally a stale or dead lock left behind, one
    /// writer killed at any step, one paused at any step: no update is lost, every writer that
    /// was neither killed nor paused commits, and nobody leaves a file of its own behind.
    #[test]
    fn any_interleaving_of_two_or_three_writers_loses_no_update(
        writers in 2usize..=3,
        seed: u64,
        left in 0u8..3,
        crash in proptest::option::of((0usize..3, 1u32..40)),
        pause in proptest::option::of((0usize..3, 1u32..40)),
    ) {
        let mut world = World::new(writers, false);
        match left {
            1 => world.leave(LOCK_FILE, "gone", 9, "another-host", 16_000.0),
            2 => world.leave(LOCK_FILE, "killed", 77, HOST, 0.0),
            _ => {}
        }
        let crash = crash.filter(|(i, _)| *i < writers);
        let pause = pause.filter(|(i, _)| *i < writers && Some(*i) != crash.map(|c| c.0));
        world.run(&mut Rng(seed), crash, pause);
        world.check();
    }
}
