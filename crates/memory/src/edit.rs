//! The writes: save (upsert), forget and import. Each takes the store text as the driver read it
//! (`None` when the file does not exist) and returns the text to write, or a [`Failure`]; a corrupt
//! store or one of another schema version is refused, never overwritten.

use crate::args::{SaveArgs, Scope, parse_save_args};
use crate::failure::{Code, Failure};
use crate::store::{Fact, ID_BIT, PROJECT, SCOPE, SUPERSEDED_AT, SUPERSEDED_BY, Store};
use crate::time::{UnixMillis, iso8601};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The result of a save: the new file text and what to answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    /// The complete new store text, to be written through a temp file and a rename.
    pub text: String,
    /// The saved fact's id.
    pub id: String,
    /// `true` if the id was new, `false` if an existing fact was overwritten.
    pub created: bool,
    /// Facts in the store after the save.
    pub count: usize,
    /// The timestamp stamped on the fact.
    pub timestamp: String,
    /// The ids this save marked superseded.
    pub superseded: Vec<String>,
}

impl Saved {
    /// The tool answer: `{ ok: true, id, created, updated, facts, timestamp, superseded? }`
    /// (`created` and `updated` are both present, exactly one of them `true`; `superseded` only
    /// when the save superseded facts).
    pub fn answer(&self) -> Value {
        let mut v = json!({
            "ok": true,
            "id": self.id,
            "created": self.created,
            "updated": !self.created,
            "facts": self.count,
            "timestamp": self.timestamp,
        });
        if !self.superseded.is_empty() {
            v["superseded"] = json!(self.superseded);
        }
        v
    }
}

/// The topic a save uses when none is given: the id's first dotted segment, or `""` for an id
/// without a dot.
pub fn derive_topic(id: &str) -> String {
    match id.split_once('.') {
        Some((first, _)) => first.trim().to_owned(),
        None => String::new(),
    }
}

impl Store {
    /// Writes or overwrites the fact `args.id`, stamped `timestamp`, scoped to `project` when
    /// `args.scope` is `project`; returns `true` if it was new (see [`plan_upsert`]).
    pub fn upsert(&mut self, args: &SaveArgs, timestamp: &str, project: Option<&str>) -> bool {
        let mut edited = BTreeMap::new();
        let created = plan_upsert(self, &mut edited, args, timestamp, project);
        self.apply(edited.into_iter().collect());
        created
    }

    /// Applies edits as a [`SavePlan`] lists them: each replaces the fact at its position, or
    /// appends it at the position one past the last.
    pub fn apply(&mut self, edits: Vec<(usize, Fact)>) {
        for (i, fact) in edits {
            match self.facts.get_mut(i) {
                Some(slot) => *slot = fact,
                None => self.facts.push(fact),
            }
        }
    }
}

/// Into `edited` (position → new fact), the upsert of `args.id` into `store`, on top of the
/// edits already there: overwriting replaces the whole fact (fields not given become `""` /
/// `[]`, a scope not given is global again, a superseded mark is cleared), keeps its position in
/// the file and keeps keys this crate does not know. A hand-edited store can hold an id more
/// than once: every copy is overwritten, each keeping its own unknown keys. A new id is appended.
/// Returns `true` if the id was new.
fn plan_upsert(
    store: &Store,
    edited: &mut BTreeMap<usize, Fact>,
    args: &SaveArgs,
    timestamp: &str,
    project: Option<&str>,
) -> bool {
    let topic = args.topic.clone().unwrap_or_else(|| derive_topic(&args.id));
    let mut slots: Vec<usize> = store
        .facts
        .iter()
        .enumerate()
        .filter(|(_, f)| f.id == args.id)
        .map(|(i, _)| i)
        .collect();
    let created = slots.is_empty();
    if created {
        slots.push(store.facts.len());
    }
    for i in slots {
        let mut slot = edited
            .remove(&i)
            .or_else(|| store.facts.get(i).cloned())
            .unwrap_or_default();
        // The id is the same one, so an id the file wrote as a number stays one.
        let numeric = slot.numeric & ID_BIT;
        let mut extra = std::mem::take(&mut slot.extra);
        for key in [SUPERSEDED_BY, SUPERSEDED_AT, SCOPE, PROJECT] {
            extra.shift_remove(key);
        }
        if let (Scope::Project, Some(root)) = (args.scope, project) {
            extra.insert(SCOPE.into(), Value::from(Scope::Project.as_str()));
            extra.insert(PROJECT.into(), Value::from(root));
        }
        let fact = Fact {
            id: args.id.clone(),
            topic: topic.clone(),
            statement: args.statement.clone(),
            value: args.value.clone(),
            unit: args.unit.clone(),
            details: args.details.clone(),
            source: args.source.clone(),
            timestamp: timestamp.to_owned(),
            tags: args.tags.clone(),
            extra,
            numeric,
        };
        edited.insert(i, fact);
    }
    created
}

/// Into `edited`, every fact with one of `ids` marked superseded by `by` at `timestamp`; the
/// ids that name no fact are the error.
fn plan_supersede(
    store: &Store,
    edited: &mut BTreeMap<usize, Fact>,
    ids: &[String],
    by: &str,
    timestamp: &str,
) -> Result<(), Failure> {
    let missing: Vec<&String> = ids
        .iter()
        .filter(|id| !store.facts.iter().any(|f| &f.id == *id))
        .collect();
    if !missing.is_empty() {
        return Err(Failure::new(
            Code::NotFound,
            format!(
                "`supersedes` names no stored fact for {}; nothing was saved. Recall the \
                 facts first to get their exact ids.",
                missing
                    .iter()
                    .map(|id| Value::from(id.as_str()).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    for (i, fact) in store.facts.iter().enumerate() {
        if ids.contains(&fact.id) {
            let mut fact = fact.clone();
            fact.extra.insert(SUPERSEDED_BY.into(), Value::from(by));
            fact.extra
                .insert(SUPERSEDED_AT.into(), Value::from(timestamp));
            edited.insert(i, fact);
        }
    }
    Ok(())
}

/// What a save changes in a store, worked out without touching it, so that a cached store and
/// its index can take the same edits in place (the recall cache) as a parsed file does
/// ([`apply_save`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SavePlan {
    /// `(position, new fact)`, positions ascending; a position one past the last appends.
    pub edits: Vec<(usize, Fact)>,
    /// `true` if the id was new.
    pub created: bool,
    /// Facts in the store after the save.
    pub count: usize,
    /// The timestamp stamped on the fact.
    pub timestamp: String,
}

impl SavePlan {
    /// The answer for `args` once the plan's text is written (see [`Saved::answer`]).
    pub fn saved(&self, args: &SaveArgs, text: String) -> Saved {
        Saved {
            text,
            id: args.id.clone(),
            created: self.created,
            count: self.count,
            timestamp: self.timestamp.clone(),
            superseded: args.supersedes.clone(),
        }
    }
}

/// Refuses `scope: "project"` for an agent whose working directory is in no repository.
pub fn check_scope(args: &SaveArgs, project: Option<&str>) -> Result<(), Failure> {
    if args.scope == Scope::Project && project.is_none() {
        return Err(Failure::new(
            Code::Invalid,
            "`scope` \"project\" ties a fact to the repository the agent works in, but its \
             working directory is in no repository (no .git in it or above it); save it \
             without `scope` to keep it for every project",
        ));
    }
    Ok(())
}

/// `memory_save`'s edits of `store` (already parsed, checked by [`check_scope`]) at `now`, for
/// an agent whose working directory is in the repository `project` (`None`: in none); refuses a
/// store of another schema version and `supersedes` naming no fact.
pub fn plan_save(
    store: &Store,
    args: &SaveArgs,
    now: UnixMillis,
    project: Option<&str>,
) -> Result<SavePlan, Failure> {
    store.check_writable()?;
    let timestamp = iso8601(now);
    let mut edited = BTreeMap::new();
    plan_supersede(store, &mut edited, &args.supersedes, &args.id, &timestamp)?;
    let created = plan_upsert(store, &mut edited, args, &timestamp, project);
    Ok(SavePlan {
        edits: edited.into_iter().collect(),
        created,
        count: store.facts.len() + usize::from(created),
        timestamp,
    })
}

/// `memory_save`: applies `args` to the current store text (`None`: no file yet) at `now`, for
/// an agent whose working directory is in the repository `project` (`None`: in none).
pub fn apply_save(
    current: Option<&str>,
    args: &SaveArgs,
    now: UnixMillis,
    project: Option<&str>,
) -> Result<Saved, Failure> {
    check_scope(args, project)?;
    let mut store = Store::parse_for_write(current)?;
    let plan = plan_save(&store, args, now, project)?;
    store.apply(plan.edits.clone());
    Ok(plan.saved(args, store.to_text()))
}

/// The result of a forget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forgotten {
    /// The new store text.
    pub text: String,
    /// How many facts had the id (more than one only in a hand-edited store).
    pub removed: usize,
    /// Facts left.
    pub count: usize,
}

impl Forgotten {
    /// The answer for a forget of `id`: `{ ok: true, id (trimmed), removed, facts }`.
    pub fn answer(&self, id: &str) -> Value {
        json!({ "ok": true, "id": id.trim(), "removed": self.removed, "facts": self.count })
    }
}

/// Deletes every fact whose id is `id` (after trimming). `memory.not_found` if there is none.
pub fn forget(current: Option<&str>, id: &str) -> Result<Forgotten, Failure> {
    let mut store = Store::parse_for_write(current)?;
    let id = id.trim();
    let before = store.facts.len();
    store.facts.retain(|f| f.id != id);
    let removed = before - store.facts.len();
    if removed == 0 {
        return Err(Failure::new(
            Code::NotFound,
            format!(
                "no fact has the id {}; nothing was deleted",
                Value::from(id)
            ),
        ));
    }
    Ok(Forgotten {
        text: store.to_text(),
        removed,
        count: store.facts.len(),
    })
}

/// How an import treats an incoming fact whose id the store already has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportPolicy {
    /// Replace only when the incoming timestamp is later (ISO-8601 strings compare in time order).
    NewerWins,
    /// Always replace.
    Overwrite,
    /// Never replace.
    KeepExisting,
}

impl ImportPolicy {
    /// The policy a people CLI's `--policy` names: `newer`, `overwrite` or `keep`.
    pub fn parse(name: &str) -> Result<ImportPolicy, Failure> {
        match name {
            "newer" => Ok(ImportPolicy::NewerWins),
            "overwrite" => Ok(ImportPolicy::Overwrite),
            "keep" => Ok(ImportPolicy::KeepExisting),
            other => Err(Failure::new(
                Code::Invalid,
                format!(
                    "--policy must be newer, overwrite or keep (got {})",
                    Value::from(other)
                ),
            )),
        }
    }
}

/// Why an incoming fact was not imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// The store already holds exactly this fact.
    Identical,
    /// The store's copy is as new or newer ([`ImportPolicy::NewerWins`]).
    NotNewer,
    /// The store already has the id ([`ImportPolicy::KeepExisting`]).
    Exists,
    /// The incoming fact has a blank id.
    NoId,
    /// The incoming file holds the id more than once; only the first copy counts.
    Duplicate,
}

impl SkipReason {
    /// A stable word for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Identical => "identical",
            SkipReason::NotNewer => "not_newer",
            SkipReason::Exists => "exists",
            SkipReason::NoId => "no_id",
            SkipReason::Duplicate => "duplicate",
        }
    }
}

/// The result of an import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The new store text.
    pub text: String,
    /// Ids added.
    pub created: Vec<String>,
    /// Ids replaced.
    pub updated: Vec<String>,
    /// Incoming facts left out, with why (a blank id is reported as `""`).
    pub skipped: Vec<(String, SkipReason)>,
    /// Incoming facts `memory_save` would refuse, with its message: an import applies the
    /// same rules as a save.
    pub rejected: Vec<(String, String)>,
}

impl Imported {
    /// A report: `{ ok: true, created: [...], updated: [...], skipped: [{ id, reason }],
    /// rejected: [{ id, message }] }`.
    pub fn answer(&self) -> Value {
        json!({
            "ok": true,
            "created": self.created,
            "updated": self.updated,
            "skipped": self.skipped.iter()
                .map(|(id, r)| json!({ "id": id, "reason": r.as_str() }))
                .collect::<Vec<_>>(),
            "rejected": self.rejected.iter()
                .map(|(id, message)| json!({ "id": id, "message": message }))
                .collect::<Vec<_>>(),
        })
    }
}

/// Merges the facts of `incoming` (another store's text) into `current`. Incoming facts keep
/// their own timestamps and unknown keys; the current store's unknown top-level keys are kept and
/// the incoming file's are ignored. An incoming store only needs to be readable, whatever its
/// `schema_version`.
pub fn import(
    current: Option<&str>,
    incoming: &str,
    policy: ImportPolicy,
) -> Result<Imported, Failure> {
    let mut store = Store::parse_for_write(current)?;
    let incoming = Store::parse(incoming).map_err(|f| {
        Failure::new(
            Code::Invalid,
            format!("the file to import is not a store: {}", f.message),
        )
    })?;
    let mut out = Imported {
        text: String::new(),
        created: Vec::new(),
        updated: Vec::new(),
        skipped: Vec::new(),
        rejected: Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    for mut fact in incoming.facts {
        fact.id = fact.id.trim().to_owned();
        if fact.id.is_empty() {
            out.skipped.push((String::new(), SkipReason::NoId));
            continue;
        }
        if let Err(refusal) = parse_save_args(&save_args_of(&fact)) {
            out.rejected.push((fact.id, refusal.message));
            continue;
        }
        if !seen.insert(fact.id.clone()) {
            out.skipped.push((fact.id, SkipReason::Duplicate));
            continue;
        }
        match store.position(&fact.id) {
            None => {
                out.created.push(fact.id.clone());
                store.facts.push(fact);
            }
            Some(i) => {
                let old = &store.facts[i];
                let skip = if *old == fact {
                    Some(SkipReason::Identical)
                } else {
                    match policy {
                        ImportPolicy::Overwrite => None,
                        ImportPolicy::KeepExisting => Some(SkipReason::Exists),
                        ImportPolicy::NewerWins if fact.timestamp > old.timestamp => None,
                        ImportPolicy::NewerWins => Some(SkipReason::NotNewer),
                    }
                };
                match skip {
                    Some(reason) => out.skipped.push((fact.id, reason)),
                    None => {
                        out.updated.push(fact.id.clone());
                        store.facts[i] = fact;
                    }
                }
            }
        }
    }
    out.text = store.to_text();
    Ok(out)
}

/// The `memory_save` arguments that would have saved `fact`, for checking an import by the
/// save's rules.
fn save_args_of(fact: &Fact) -> Value {
    json!({
        "id": fact.id,
        "statement": fact.statement,
        "value": fact.value,
        "unit": fact.unit,
        "details": fact.details,
        "source": fact.source,
        "tags": fact.tags,
        "topic": fact.topic,
    })
}
