//! The model-visible tool definitions: names, descriptions, parameter schemas, the output schemas
//! DSH checks every value against, the declared timeouts and which tools may run in parallel.
//!
//! DSH hands a raw JSON-Schema tool its arguments unvalidated, so the parameter schemas only
//! tell the model what to send; the rules are enforced by the cores ([`memory::args`]). Output
//! schemas stay inside the subset rc.8 enforces at registration (`type`, `properties`,
//! `required`, boolean `additionalProperties`, `items`, scalar `enum`/`const`, `oneOf`,
//! annotations): no bounds, so the bounds live in the cores.

use config::limit_break::RowConfig;
use fetch::input::MAX_URL_LEN;
use fetch::ladder::CURL_KILL_GRACE_MS;
use memory::args::{DEFAULT_LIMIT, MAX_LIMIT, MAX_TAGS};
use memory::lock::WAIT_MS;
use serde_json::{Value, json};

/// `memory_save`'s name.
pub const MEMORY_SAVE: &str = "memory_save";
/// `memory_recall`'s name.
pub const MEMORY_RECALL: &str = "memory_recall";
/// `memory_stats`'s name.
pub const MEMORY_STATS: &str = "memory_stats";
/// `resilient_fetch`'s name.
pub const RESILIENT_FETCH: &str = "resilient_fetch";

/// Time a fetch may take beyond its own deadline before DSH's timeout policy steps in: the last
/// curl's kill grace and the rendering.
const FETCH_ALLOWANCE_MS: u64 = 4_000;

/// Time a save may take beyond the lock wait (read, write, fsync, rename).
const SAVE_IO_ALLOWANCE_MS: u64 = 12_000;
/// Time a recall or stats call may take (a cold read and index of a large store).
const READ_TIMEOUT_MS: u64 = 20_000;

/// Every tool the row registers, in order.
pub fn definitions(row: &RowConfig) -> Value {
    json!([
        memory_save(),
        memory_recall(),
        memory_stats(),
        resilient_fetch(row)
    ])
}

fn string(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// `{ ok: false, code, message }`, the failure branch every tool shares.
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

fn memory_save() -> Value {
    json!({
        "name": MEMORY_SAVE,
        "description": "Save one fact to the durable memory store that outlives this session ($DSH_HOME/memory/facts.json); later sessions find it with memory_recall. A save with an existing id overwrites that fact whole (fields you leave out become empty). Use a dotted id such as `network.wikipedia.sni`; its first segment becomes the topic unless you give one. Save what was verified and will matter again (measurements, decisions, user preferences, environment quirks), one fact per call, not transient progress.",
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
            },
            "required": ["ok", "id", "created", "updated", "facts", "timestamp"],
        })),
        "timeoutMs": WAIT_MS + SAVE_IO_ALLOWANCE_MS,
        "concurrencySafe": false,
    })
}

fn memory_recall() -> Value {
    json!({
        "name": MEMORY_RECALL,
        "description": "Search the durable memory store that memory_save fills, across sessions. Ranked keyword search over each fact's id (dotted segments too), topic, tags, statement, details, value and unit: stemmed English words, word prefixes (`ray` finds `raytracer`), Chinese, and a small table of related terms; no embeddings, so use the words the fact would use. Omit `query` to list facts in file order. Check it when starting a task that an earlier session may have learned about.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": string("Words to look for; omit (or leave empty) to list facts."),
                "limit": {
                    "type": "integer",
                    "description": format!("How many facts at most (default {DEFAULT_LIMIT} when searching, all when listing; at most {MAX_LIMIT})."),
                },
                "tags": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Only facts carrying every one of these tags.",
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
                "total": { "type": "integer", "description": "Facts that matched before the cut to `limit` and to the answer's size bound." },
                "in_store": { "type": "integer" },
                "truncated": { "type": "boolean" },
            },
            "required": ["ok", "mode", "facts", "count", "total", "in_store", "truncated"],
        })),
        "timeoutMs": READ_TIMEOUT_MS,
        "concurrencySafe": true,
    })
}

fn memory_stats() -> Value {
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

fn resilient_fetch(row: &RowConfig) -> Value {
    let settings = row.fetch_settings();
    let private = if settings.allow_private_network {
        "Loopback and private addresses are allowed by this profile's config; cloud metadata addresses are always refused."
    } else {
        "Loopback, private, link-local and cloud metadata addresses (however spelled, and whatever a name resolves to) are refused."
    };
    json!({
        "name": RESILIENT_FETCH,
        "description": format!(
            "Fetch an http(s) URL with GET and return its text; HTML becomes readable text unless `format` is \"raw\". When the plain request fails at the transport level (connection reset, refused, timed out, TLS handshake), it climbs a ladder instead of giving up: curl over IPv6, curl over IPv4, then a sibling host of the same service whose certificate still verifies (a Wikipedia article via the Wikimedia API). The result says which rung answered and what each rung did. Any HTTP status is an answer, not a failure. Certificates are always verified and no proxy is used. {private} Reads at most {} bytes and returns at most {} characters; redirects are followed (at most {}) and checked hop by hop.",
            settings.max_body_bytes, settings.max_text_chars, settings.max_redirects,
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "url": string(&format!("Absolute http:// or https:// URL (at most {MAX_URL_LEN} bytes).")),
                "format": {
                    "type": "string",
                    "enum": ["text", "raw"],
                    "description": "`text` (default): HTML converted to readable text, other text types as served. `raw`: the decoded body as served, HTML included.",
                },
            },
            "required": ["url"],
            "additionalProperties": false,
        },
        "outputSchema": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "ok": { "type": "boolean", "const": true },
                        "url": { "type": "string" },
                        "finalUrl": { "type": "string", "description": "The URL that answered, after redirects (the sibling's on rung 4)." },
                        "status": { "type": "integer" },
                        "contentType": { "description": "The Content-Type as served, or null." },
                        "text": { "type": "string" },
                        "truncated": { "type": "boolean" },
                        "bytes": { "type": "integer", "description": "Body bytes read." },
                        "report": report_schema(),
                    },
                    "required": ["ok", "url", "finalUrl", "status", "text", "truncated", "bytes", "report"],
                },
                {
                    "type": "object",
                    "description": "No answer. `code`: fetch.invalid_input, fetch.invalid_url, fetch.blocked, fetch.redirect_refused, fetch.too_many_redirects, fetch.unsupported_content, fetch.failed, fetch.timeout or fetch.aborted.",
                    "properties": {
                        "ok": { "type": "boolean", "const": false },
                        "code": { "type": "string" },
                        "message": { "type": "string" },
                        "report": report_schema(),
                    },
                    "required": ["ok", "code", "message", "report"],
                },
            ],
        },
        "timeoutMs": settings.deadline_ms + CURL_KILL_GRACE_MS + FETCH_ALLOWANCE_MS,
        "concurrencySafe": true,
    })
}

fn report_schema() -> Value {
    json!({
        "type": "object",
        "description": "Which rung answered and what every rung did.",
        "properties": {
            "answered": { "description": "fetch, curl-ipv6, curl-ipv4, sibling, or null." },
            "curl": { "type": "string", "enum": ["available", "missing"] },
            "rungs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "rung": { "type": "string", "enum": ["fetch", "curl-ipv6", "curl-ipv4", "sibling"] },
                        "outcome": { "type": "string", "enum": ["answered", "failed", "skipped", "refused"] },
                        "ms": { "type": "integer" },
                    },
                    "required": ["rung", "outcome", "ms"],
                },
            },
            "notes": { "type": "array", "items": { "type": "string" } },
        },
        "required": ["answered", "curl", "rungs", "notes"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keywords rc.8 accepts in an output schema (`dsh-tools` `checkSchemaNode`).
    const SUBSET: &[&str] = &[
        "type",
        "oneOf",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "description",
        "title",
    ];

    fn walk(schema: &Value, at: &str, out: &mut Vec<String>) {
        let Some(map) = schema.as_object() else {
            out.push(format!("{at} is not an object"));
            return;
        };
        for (key, value) in map {
            if !SUBSET.contains(&key.as_str()) {
                out.push(format!("{at}.{key}"));
            }
            match key.as_str() {
                "properties" => {
                    for (name, child) in value.as_object().into_iter().flatten() {
                        walk(child, &format!("{at}.{name}"), out);
                    }
                }
                "items" => walk(value, &format!("{at}[]"), out),
                "oneOf" => {
                    for (i, child) in value.as_array().into_iter().flatten().enumerate() {
                        walk(child, &format!("{at}|{i}"), out);
                    }
                }
                _ => {}
            }
        }
        if map.contains_key("type") && map.contains_key("oneOf") {
            out.push(format!("{at} has both type and oneOf"));
        }
    }

    #[test]
    fn schemas_stay_inside_what_dsh_accepts() {
        let defs = definitions(&RowConfig::default());
        let mut names = Vec::new();
        for def in defs.as_array().unwrap() {
            let name = def["name"].as_str().unwrap();
            names.push(name);
            let mut bad = Vec::new();
            walk(&def["outputSchema"], name, &mut bad);
            walk(&def["parameters"], name, &mut bad);
            assert!(bad.is_empty(), "{name}: outside the subset: {bad:?}");
            assert_eq!(def["parameters"]["type"], "object");
            assert!(def["description"].as_str().unwrap().len() > 80);
            assert!(def["timeoutMs"].as_u64().unwrap() > 0);
        }
        assert_eq!(
            names,
            [MEMORY_SAVE, MEMORY_RECALL, MEMORY_STATS, RESILIENT_FETCH]
        );
    }

    #[test]
    fn a_save_may_outwait_the_lock() {
        let defs = definitions(&RowConfig::default());
        assert!(defs[0]["timeoutMs"].as_u64().unwrap() > WAIT_MS);
        assert_eq!(defs[0]["concurrencySafe"], false);
        assert_eq!(defs[1]["concurrencySafe"], true);
    }

    #[test]
    fn the_fetch_tool_states_its_caps_and_outlives_its_deadline() {
        let row = RowConfig::default();
        let def = &definitions(&row)[3];
        let description = def["description"].as_str().unwrap();
        assert!(description.contains("at most 2097152 bytes"));
        assert!(description.contains("at most 20000 characters"));
        assert!(description.contains("are refused"));
        assert!(def["timeoutMs"].as_u64().unwrap() > u64::from(row.fetch_timeout_ms));
        let open = RowConfig {
            allow_private_network: true,
            ..RowConfig::default()
        };
        assert!(
            definitions(&open)[3]["description"]
                .as_str()
                .unwrap()
                .contains("allowed by this profile's config")
        );
    }
}
