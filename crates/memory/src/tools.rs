//! The model-visible memory tool definitions: names, descriptions, parameter schemas, the output
//! schemas DSH checks every value against, the declared timeouts and which tools may run in
//! parallel. Each is `{ name, description, parameters, outputSchema, timeoutMs,
//! concurrencySafe }`.
//!
//! DSH hands a raw JSON-Schema tool its arguments unvalidated, so the parameter schemas only
//! tell the model what to send; the rules are enforced by [`args`](crate::args). Output schemas
//! stay inside the subset DSH rc.8 enforces at registration (`type`, `properties`, `required`,
//! boolean `additionalProperties`, `items`, scalar `enum`/`const`, `oneOf`, annotations): no
//! bounds, so the bounds live in this crate.

use crate::args::{DEFAULT_LIMIT, MAX_LIMIT, MAX_SUPERSEDES, MAX_TAGS};
use crate::lock::WAIT_MS;
use serde_json::{Value, json};

/// `memory_save`'s name.
pub const MEMORY_SAVE: &str = "memory_save";
/// `memory_recall`'s name.
pub const MEMORY_RECALL: &str = "memory_recall";
/// `memory_stats`'s name.
pub const MEMORY_STATS: &str = "memory_stats";

/// Time a save may take beyond the lock wait (read, write, fsync, rename).
pub const SAVE_IO_ALLOWANCE_MS: u64 = 12_000;
/// Time a recall or stats call may take (a cold read and index of a large store).
pub const READ_TIMEOUT_MS: u64 = 20_000;

/// The three memory tools, in the order they are registered: save, recall, stats.
pub fn definitions() -> [Value; 3] {
    [memory_save(), memory_recall(), memory_stats()]
}

fn string(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// `{ ok: false, code, message }`, the failure branch every memory tool shares.
fn failure_branch() -> Value {
    json!({
        "type": "object",
        "description": "The call failed; nothing was changed. `code` is stable and dotted (memory.locked, memory.corrupt, memory.invalid, …); `message` says what to do.",
        "properties": {
            "ok": { "type": "boolean", "const": false },
            "code": { "type": "string" },
            "message": { "type": "string" },
        },
        "required": ["ok", "code", "message"],
    })
}

fn output(success: Value) -> Value {
    json!({ "oneOf": [success, failure_branch()] })
}

/// `memory_save`'s definition; its timeout outlasts the lock wait.
pub fn memory_save() -> Value {
    json!({
        "name": MEMORY_SAVE,
        "description": "Save one fact to the durable memory store that outlives this session ($DSH_HOME/memory/facts.json); later sessions see it in their memory brief and find it with memory_recall. A save with an existing id overwrites that fact whole (fields you leave out become empty); to retire facts a new one replaces, name them in `supersedes`. Use a dotted id such as `network.wikipedia.sni`; its first segment becomes the topic unless you give one. Save what was verified and will matter again (measurements, decisions, user preferences, environment quirks), one fact per call, not transient progress.",
        "parameters": {
            "type": "object",
            "properties": {
                "id": string("Stable key, by convention dotted (`build.ci.runner_memory`); saving the same id again replaces the fact."),
                "statement": string("The fact as one self-contained sentence, written so that a reader with no context understands it."),
                "value": string("The value the fact is about, if any (a number, a host, a version), as text."),
                "unit": string("Unit of `value` (ms, MiB, …)."),
                "details": string("Longer explanation: how it was measured, caveats."),
                "tags": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": format!("Free tags (at most {MAX_TAGS})."),
                },
                "source": string("Where it came from: a URL, a command, a file, `user`."),
                "topic": string("Grouping word; default: the id's first dotted segment."),
                "supersedes": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": format!("Ids of facts this one replaces (at most {MAX_SUPERSEDES}): they stay in the store, marked superseded by this id, and recall stops showing them. Use it when a fact turns out wrong or out of date."),
                },
                "scope": {
                    "type": "string",
                    "enum": ["global", "project"],
                    "description": "`project` ties the fact to the repository you are working in (its root): recall shows it only there, ranked first. Default `global`: every project.",
                },
            },
            "required": ["id", "statement"],
            "additionalProperties": false,
        },
        "outputSchema": output(json!({
            "type": "object",
            "properties": {
                "ok": { "type": "boolean", "const": true },
                "id": { "type": "string" },
                "created": { "type": "boolean", "description": "A new id." },
                "updated": { "type": "boolean", "description": "An existing fact was overwritten." },
                "facts": { "type": "integer", "description": "Facts in the store after the save." },
                "timestamp": { "type": "string" },
                "superseded": { "type": "array", "items": { "type": "string" }, "description": "The ids this save marked superseded." },
            },
            "required": ["ok", "id", "created", "updated", "facts", "timestamp"],
        })),
        "timeoutMs": WAIT_MS + SAVE_IO_ALLOWANCE_MS,
        "concurrencySafe": false,
    })
}

/// `memory_recall`'s definition.
pub fn memory_recall() -> Value {
    json!({
        "name": MEMORY_RECALL,
        "description": "Search the durable memory store that memory_save fills, across sessions. Ranked keyword search over each fact's id (dotted segments too), topic, tags, statement, details, value and unit: stemmed English words, word prefixes (`ray` finds `raytracer`), Chinese, and a small table of related terms; no embeddings, so use the words the fact would use. Omit `query` to list facts newest first; an answer that does not hold everything gives `next_offset`, the `offset` of the next page. Facts superseded by a later save and facts of other projects are hidden unless asked for. Check it when starting a task that an earlier session may have learned about.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": string("Words to look for; omit (or leave empty) to list facts."),
                "limit": {
                    "type": "integer",
                    "description": format!("How many facts at most (default {DEFAULT_LIMIT} when searching, as many as fit when listing; at most {MAX_LIMIT})."),
                },
                "offset": {
                    "type": "integer",
                    "description": "Skip this many results: pass the previous answer's `next_offset` for the next page (default 0).",
                },
                "tags": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Only facts carrying every one of these tags.",
                },
                "include_superseded": {
                    "type": "boolean",
                    "description": "Also show facts a later save superseded (default false).",
                },
                "all_projects": {
                    "type": "boolean",
                    "description": "Also show facts scoped to other projects (default false).",
                },
            },
            "additionalProperties": false,
        },
        "outputSchema": output(json!({
            "type": "object",
            "properties": {
                "ok": { "type": "boolean", "const": true },
                "mode": { "type": "string", "enum": ["search", "list"] },
                "facts": {
                    "type": "array",
                    "items": { "type": "object", "description": "A stored fact; `score` when searching." },
                },
                "count": { "type": "integer" },
                "total": { "type": "integer", "description": "Facts that matched before paging and the cut to `limit` and to the answer's size bound." },
                "offset": { "type": "integer" },
                "next_offset": { "type": "integer", "description": "Where the next page starts; absent on the last page." },
                "in_store": { "type": "integer" },
                "truncated": { "type": "boolean" },
            },
            "required": ["ok", "mode", "facts", "count", "total", "offset", "in_store", "truncated"],
        })),
        "timeoutMs": READ_TIMEOUT_MS,
        "concurrencySafe": true,
    })
}

/// `memory_stats`'s definition.
pub fn memory_stats() -> Value {
    json!({
        "name": MEMORY_STATS,
        "description": "Where the durable memory store is, how many facts it holds, its size in bytes, when it was last written, its most used tags and topics, and whether a save holds its lock.",
        "parameters": { "type": "object", "properties": {}, "additionalProperties": false },
        "outputSchema": output(json!({
            "type": "object",
            "properties": {
                "ok": { "type": "boolean", "const": true },
                "path": { "type": "string", "description": "Shown as $DSH_HOME/… or ~/…, never with the user's home spelled out." },
                "exists": { "type": "boolean" },
                "facts": { "type": "integer" },
                "bytes": { "type": "integer" },
            },
            "required": ["ok", "path", "exists", "facts", "bytes"],
        })),
        "timeoutMs": READ_TIMEOUT_MS,
        "concurrencySafe": true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_may_outwait_the_lock() {
        let [save, recall, stats] = definitions();
        assert_eq!(save["name"], MEMORY_SAVE);
        assert!(save["timeoutMs"].as_u64().unwrap() > WAIT_MS);
        assert_eq!(save["concurrencySafe"], false);
        assert_eq!(recall["concurrencySafe"], true);
        assert_eq!(stats["concurrencySafe"], true);
    }
}
