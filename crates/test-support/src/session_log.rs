//! DSH session logs (`$DSH_HOME/sessions/--<cwd>--/session-<uuid>/session.jsonl.zstd`): finding
//! one, reading it, turning its tool events into replay lines, and scrubbing it into a fixture.
//! The events are `crates/session-log`'s reading ([`logged`]); this module keeps only the frame,
//! fixture and scrub plumbing, which needs the raw lines ([`events`]).
//!
//! The file is a concatenation of independent, checksummed Zstandard frames: the first holds only
//! the `{"type":"session",…}` header line, each later one a batch of JSONL event lines. Frames are
//! located here (RFC 8878 frame layout) and (de)compressed by Node 24's `node:zlib`, the same
//! codec dsh writes with; the fixture keeps the header and batch frames as they were.

use crate::util::{self, rel};
use ::session_log::{Header, LogEvent, Reader};
use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ZSTD_MAGIC: u32 = 0xFD2F_B528;
/// `createdAt` of a scrubbed log (2026-01-01T00:00:00Z); other times keep their offset from it.
pub const SCRUBBED_EPOCH_MS: i64 = 1_767_225_600_000;

/// Node helper: `decode FILE RANGES_JSON` prints the frames' texts as a JSON array;
/// `encode FILE` reads a JSON array of texts and writes one checksummed frame per text.
const ZSTD_HELPER: &str = r#"
import { readFileSync, writeFileSync } from 'node:fs'
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib'
const [mode, file, ranges] = process.argv.slice(1)
if (mode === 'decode') {
  const bytes = readFileSync(file)
  const texts = JSON.parse(ranges).map(([start, end]) => zstdDecompressSync(bytes.subarray(start, end)).toString('utf8'))
  process.stdout.write(JSON.stringify(texts))
} else if (mode === 'encode') {
  const options = { params: { [constants.ZSTD_c_checksumFlag]: 1 } }
  const frames = JSON.parse(readFileSync(0, 'utf8')).map((text) => zstdCompressSync(Buffer.from(text, 'utf8'), options))
  writeFileSync(file, Buffer.concat(frames))
} else {
  throw new Error(`unknown mode ${mode}`)
}
"#;

/// Byte ranges of the complete Zstandard frames in `bytes` (an incomplete or foreign frame is an
/// error: a finished dsh run leaves none).
pub fn frames(bytes: &[u8]) -> Result<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    let mut at = 0;
    let need = |at: usize, n: usize| -> Result<()> {
        if at + n > bytes.len() {
            bail!("zstd frame cut short at byte {at}");
        }
        Ok(())
    };
    while at < bytes.len() {
        let start = at;
        need(at, 5)?;
        let magic = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        if magic != ZSTD_MAGIC {
            bail!("no zstd frame magic at byte {at} (found {magic:#010x})");
        }
        at += 4;
        let descriptor = bytes[at];
        at += 1;
        if descriptor & 0x08 != 0 {
            bail!("zstd frame at byte {start} sets the reserved header bit");
        }
        let single_segment = descriptor & 0x20 != 0;
        let checksum = descriptor & 0x04 != 0;
        let dictionary = [0, 1, 2, 4][usize::from(descriptor & 0x03)];
        let content_size = match descriptor >> 6 {
            0 if single_segment => 1,
            0 => 0,
            flag => 1 << flag,
        };
        at += usize::from(!single_segment) + dictionary + content_size;
        loop {
            need(at, 3)?;
            let header = u32::from(bytes[at])
                | (u32::from(bytes[at + 1]) << 8)
                | (u32::from(bytes[at + 2]) << 16);
            at += 3;
            let last = header & 1 != 0;
            let payload = match (header >> 1) & 3 {
                1 => 1, // RLE: one byte repeated
                3 => bail!("zstd block of reserved type at byte {}", at - 3),
                _ => (header >> 3) as usize,
            };
            need(at, payload)?;
            at += payload;
            if last {
                break;
            }
        }
        if checksum {
            need(at, 4)?;
            at += 4;
        }
        out.push((start, at));
    }
    Ok(out)
}

/// The texts of the frames of a `.jsonl.zstd` file (checksums verified), or the one text of a
/// plain `.jsonl`.
pub fn read_frames(node: &Path, file: &Path) -> Result<Vec<String>> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", rel(file)))?;
    if !file.to_string_lossy().ends_with(".zstd") {
        return Ok(vec![
            String::from_utf8(bytes).context("session log is not UTF-8")?,
        ]);
    }
    let ranges = frames(&bytes).with_context(|| format!("scanning {}", rel(file)))?;
    let ranges: Vec<[usize; 2]> = ranges.into_iter().map(|(s, e)| [s, e]).collect();
    let mut cmd = Command::new(node);
    cmd.args(["--input-type=module", "-e", ZSTD_HELPER, "decode"])
        .arg(file)
        .arg(serde_json::to_string(&ranges)?);
    let out = util::stdout_of(&mut cmd).with_context(|| format!("decoding {}", rel(file)))?;
    serde_json::from_str(&out).context("the zstd helper printed something else")
}

/// Writes `texts` as one checksummed zstd frame each.
pub fn write_frames(node: &Path, file: &Path, texts: &[String]) -> Result<()> {
    let mut child = Command::new(node)
        .args(["--input-type=module", "-e", ZSTD_HELPER, "encode"])
        .arg(file)
        .stdin(Stdio::piped())
        .spawn()
        .context("starting node for zstd")?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().context("node stdin")?;
        stdin.write_all(serde_json::to_string(texts)?.as_bytes())?;
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("writing {} failed ({status})", rel(file));
    }
    Ok(())
}

/// The parsed lines of all frames.
pub fn events(texts: &[String]) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for (f, text) in texts.iter().enumerate() {
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            out.push(
                serde_json::from_str(line)
                    .with_context(|| format!("frame {f} line {}: not JSON", i + 1))?,
            );
        }
    }
    Ok(out)
}

/// The newest session log dsh wrote for a run in `cwd`.
pub fn find(home: &Path, node: &Path, cwd: &Path) -> Result<PathBuf> {
    let root = home.join("sessions");
    let mut candidates = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if name == "session.jsonl.zstd" || name == "session.jsonl" {
                candidates.push(path);
            }
        }
    }
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    // Turns may share a cwd (`same_cwd`): the newest log is the last turn's.
    let mut found: Option<(std::time::SystemTime, PathBuf)> = None;
    for file in candidates {
        let texts = read_frames(node, &file)?;
        let header = header(&texts).with_context(|| format!("reading {}", rel(&file)))?;
        if header.cwd.is_some_and(|c| Path::new(&c) == cwd) {
            let modified = std::fs::metadata(&file)?.modified()?;
            if found.as_ref().is_none_or(|(newest, _)| modified > *newest) {
                found = Some((modified, file));
            }
        }
    }
    if let Some((_, file)) = found {
        return Ok(file);
    }
    bail!(
        "no session log under {} has cwd {}",
        rel(&root),
        cwd.display()
    )
}

/// One tool call as the log records it.
#[derive(Clone, Debug)]
pub struct ToolEvent {
    /// ms since the session header's `createdAt`.
    pub at_ms: i64,
    /// The tool name.
    pub name: String,
    /// The call id (also the `tool_call_id` the model sees).
    pub call_id: String,
    /// The arguments object.
    pub args: Value,
    /// The result text (an error result's without DSH's `Error: ` prefix).
    pub text: String,
    /// `isError` on the result.
    pub is_error: bool,
    /// The `[exit code: N]` marker of a successful shell result.
    pub exit_code: Option<i64>,
    /// DSH's error code of an error result, when recorded (`UNKNOWN_TOOL`, …).
    pub error_code: Option<String>,
}

/// A replay input line, or a tool call.
#[derive(Clone, Debug)]
pub enum Logged {
    /// A human prompt (`user/message` with `source.kind == "user"`).
    UserPrompt {
        /// ms since `createdAt`.
        at_ms: i64,
    },
    /// A finished tool call.
    Tool(ToolEvent),
}

/// The session header of a log's frames (its first line).
pub fn header(texts: &[String]) -> Result<Header> {
    let first = texts
        .first()
        .and_then(|text| text.lines().next())
        .context("the log is empty")?;
    let value = ::session_log::session_header(first).context("line 1 is not a session header")?;
    Header::parse(&value).map_err(|message| anyhow::anyhow!("line 1: {message}"))
}

/// The human prompts and finished tool calls of a log's frames, in order, as
/// `crates/session-log` reads them (times relative to the header's `createdAt`).
pub fn logged(texts: &[String]) -> Result<Vec<Logged>> {
    let mut lines = texts
        .iter()
        .flat_map(|text| text.lines())
        .enumerate()
        .map(|(i, line)| (i + 1, line))
        .filter(|(_, line)| !line.trim().is_empty());
    let (n, first) = lines.next().context("the log is empty")?;
    let header = ::session_log::session_header(first)
        .with_context(|| format!("line {n} is not a session header"))?;
    let mut reader = Reader::open(n, &header)?.without_assistant_text();
    let created = reader.header().created_at as i64;
    let mut out = Vec::new();
    for (n, line) in lines {
        let Some(entry) = reader.read(n, line)? else {
            continue;
        };
        let at_ms = entry.time as i64 - created;
        match entry.event {
            LogEvent::UserPrompt { .. } => out.push(Logged::UserPrompt { at_ms }),
            LogEvent::ToolResult(result) => {
                let call = result.call.with_context(|| {
                    format!(
                        "line {n}: a repaired result for {} without its call",
                        result.call_id
                    )
                })?;
                out.push(Logged::Tool(ToolEvent {
                    at_ms,
                    name: call.name,
                    call_id: result.call_id,
                    args: serde_json::from_str(&call.arguments_json).unwrap_or(Value::Null),
                    text: result.text,
                    is_error: result.is_error,
                    exit_code: result.status.exit_code,
                    error_code: result.error_code,
                }));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The replay line (`research-nudge replay` input) of a logged event: the shim's view of it.
pub fn replay_line(event: &Logged) -> String {
    match event {
        Logged::UserPrompt { at_ms } => json!({"at_ms": at_ms, "user_prompt": true}).to_string(),
        Logged::Tool(t) => {
            let mut line = Map::new();
            line.insert("at_ms".into(), json!(t.at_ms));
            line.insert("tool".into(), json!(t.name));
            if t.is_error {
                line.insert("ok".into(), json!(false));
                line.insert("error".into(), json!(t.text));
                if let Some(code) = &t.error_code {
                    line.insert("error_code".into(), json!(code));
                }
            } else if let Some(code) = t.exit_code {
                line.insert("exit_code".into(), json!(code));
                if code != 0 {
                    line.insert("error".into(), json!(t.text));
                }
            }
            if t.name == "research_nudge_snooze" {
                line.insert("args".into(), t.args.clone());
            }
            Value::Object(line).to_string()
        }
    }
}

/// What to replace when scrubbing: (absolute path as found, placeholder).
pub struct Scrub {
    /// Longest first.
    pub paths: Vec<(String, String)>,
}

impl Scrub {
    /// Placeholders for the run's cwd, its dsh home, the checkout, the temp dir and `$HOME`.
    pub fn new(cwd: &Path, home: &Path) -> Scrub {
        let mut paths = Vec::new();
        let mut add = |path: &Path, placeholder: &str| {
            for p in [Some(path.to_path_buf()), path.canonicalize().ok()]
                .into_iter()
                .flatten()
            {
                let s = p.to_string_lossy().trim_end_matches('/').to_owned();
                if s.len() > 1 && !paths.iter().any(|(q, _)| *q == s) {
                    paths.push((s, placeholder.to_owned()));
                }
            }
        };
        add(cwd, "/workspace/smoke-loop");
        add(home, "/home/user/.dsh");
        add(&crate::util::root(), "/src/research-nudge");
        // The toolchain folder (dsh's own files show in a Code Mode program's stack trace), also
        // where it really is when `.cache` is a link to another checkout's.
        add(
            &crate::util::root().join(".cache"),
            "/src/research-nudge/.cache",
        );
        let tmp = std::env::temp_dir();
        if tmp != Path::new("/tmp") {
            add(&tmp, "/tmp");
        }
        if let Some(user_home) = std::env::var_os("HOME") {
            add(Path::new(&user_home), "/home/user");
        }
        paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        Scrub { paths }
    }

    /// Scrubs every frame: paths → placeholders, UUIDs → `00000000-0000-4000-8000-<n>` in order
    /// of appearance, absolute times rebased so `createdAt` is [`SCRUBBED_EPOCH_MS`].
    pub fn frames(&self, texts: &[String]) -> Result<Vec<String>> {
        let created = header(texts)
            .context("the first frame holds no session header")?
            .created_at as i64;
        let mut uuids = HashMap::new();
        let mut out = Vec::new();
        for text in texts {
            let mut frame = String::new();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let mut value: Value = serde_json::from_str(line)?;
                self.value(&mut value, None, created, &mut uuids);
                frame.push_str(&value.to_string());
                frame.push('\n');
            }
            out.push(frame);
        }
        Ok(out)
    }

    fn value(
        &self,
        value: &mut Value,
        key: Option<&str>,
        created: i64,
        uuids: &mut HashMap<String, String>,
    ) {
        match value {
            Value::String(s) => *s = self.string(s, uuids),
            Value::Number(n) => {
                let Some(ms) = n.as_i64() else { return };
                let key = key.unwrap_or_default();
                let near = (ms - created).abs() < 86_400_000;
                if matches!(key, "createdAt" | "time" | "time0")
                    || (near && (key.ends_with("At") || key.ends_with("Time")))
                {
                    *value = json!(ms - created + SCRUBBED_EPOCH_MS);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.value(item, None, created, uuids);
                }
            }
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    self.value(v, Some(k), created, uuids);
                }
            }
            _ => {}
        }
    }

    fn string(&self, s: &str, uuids: &mut HashMap<String, String>) -> String {
        let mut s = s.to_owned();
        for (path, placeholder) in &self.paths {
            if s.contains(path.as_str()) {
                s = s.replace(path.as_str(), placeholder);
            }
        }
        replace_uuids(&s, uuids)
    }

    /// The absolute paths that must not survive scrubbing.
    pub fn leaks(&self, texts: &[String]) -> Vec<String> {
        self.paths
            .iter()
            .filter(|(path, _)| path != "/tmp" && texts.iter().any(|t| t.contains(path.as_str())))
            .map(|(path, _)| path.clone())
            .collect()
    }
}

fn is_uuid(bytes: &[u8]) -> bool {
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

fn replace_uuids(s: &str, uuids: &mut HashMap<String, String>) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i + 36 <= bytes.len() {
        let boundary_before = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let boundary_after = bytes.get(i + 36).is_none_or(|b| !b.is_ascii_alphanumeric());
        if boundary_before && boundary_after && is_uuid(&bytes[i..i + 36]) {
            out.push_str(&s[copied..i]);
            let next = uuids.len() + 1;
            let mapped = uuids
                .entry(s[i..i + 36].to_ascii_lowercase())
                .or_insert_with(|| format!("00000000-0000-4000-8000-{next:012x}"));
            out.push_str(mapped);
            i += 36;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_map_in_order_and_keep_their_surroundings() {
        let mut map = HashMap::new();
        let a = "session-6155bbbd-edb3-4a04-b444-cb3b23815e3b";
        assert_eq!(
            replace_uuids(a, &mut map),
            "session-00000000-0000-4000-8000-000000000001"
        );
        assert_eq!(
            replace_uuids(
                "x 4d58ddd2-1043-4130-9211-7bcd7a2bda97 / 6155BBBD-EDB3-4A04-B444-CB3B23815E3B",
                &mut map
            ),
            "x 00000000-0000-4000-8000-000000000002 / 00000000-0000-4000-8000-000000000001"
        );
        assert_eq!(replace_uuids("no-uuid-here", &mut map), "no-uuid-here");
    }

    #[test]
    fn frame_scanner_walks_raw_and_rle_blocks() {
        // magic, descriptor (single segment, checksum, 1-byte content size), size 3,
        // one last raw block of 3 bytes, 4 checksum bytes; then a frame with one last RLE block.
        let mut bytes = ZSTD_MAGIC.to_le_bytes().to_vec();
        bytes.extend([0x24, 3, (3 << 3) | 1, 0, 0, b'a', b'b', b'c', 1, 2, 3, 4]);
        let second = bytes.len();
        bytes.extend(ZSTD_MAGIC.to_le_bytes());
        bytes.extend([0x20, 5, (5 << 3) | 0b011, 0, 0, b'z']);
        assert_eq!(
            frames(&bytes).unwrap(),
            vec![(0, second), (second, bytes.len())]
        );
        assert!(frames(&bytes[..bytes.len() - 1]).is_err());
        assert!(frames(b"nope!").is_err());
    }

    #[test]
    fn scrub_rebases_times_and_paths() {
        let scrub = Scrub {
            paths: vec![("/abs/scratch".into(), "/workspace/smoke-loop".into())],
        };
        let texts = vec![
            "{\"type\":\"session\",\"version\":0,\"id\":\"session-6155bbbd-edb3-4a04-b444-cb3b23815e3b\",\"createdAt\":1000,\"cwd\":\"/abs/scratch\"}\n".to_owned(),
            "{\"type\":\"x\",\"seq\":0,\"time\":1500,\"data\":{\"text\":\"in /abs/scratch/app.js\",\"n\":1200}}\n".to_owned(),
        ];
        let out = scrub.frames(&texts).unwrap();
        assert!(out[0].contains("\"createdAt\":1767225600000"));
        assert!(out[0].contains("\"cwd\":\"/workspace/smoke-loop\""));
        assert!(out[0].contains("session-00000000-0000-4000-8000-000000000001"));
        assert!(out[1].contains("\"time\":1767225600500"));
        assert!(out[1].contains("/workspace/smoke-loop/app.js"));
        assert!(out[1].contains("\"n\":1200"));
        assert!(scrub.leaks(&out).is_empty());
    }

    #[test]
    fn logged_reads_prompts_and_tool_calls_through_crates_session_log() {
        let texts = vec![
            "{\"type\":\"session\",\"version\":0,\"id\":\"s\",\"createdAt\":1000,\"cwd\":\"/w\"}\n"
                .to_owned(),
            [
                r#"{"type":"user/message","seq":0,"time":1100,"data":{"source":{"kind":"user"},"content":"go"}}"#,
                r#"{"type":"tool/call","seq":1,"time":1200,"data":{"callId":"c1","name":"bash","arguments":"{\"command\":\"node app.js\"}"}}"#,
                r#"{"type":"tool/result","seq":2,"time":1300,"data":{"message":{"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"TypeError\n[exit code: 1]"}]}]}}}"#,
                r#"{"type":"user/message","seq":3,"time":1350,"data":{"source":{"kind":"plugin","plugin":"p"},"content":"note"}}"#,
            ]
            .join("\n"),
        ];
        assert_eq!(header(&texts).unwrap().cwd.as_deref(), Some("/w"));
        let logged = logged(&texts).unwrap();
        let lines: Vec<String> = logged.iter().map(replay_line).collect();
        assert_eq!(
            lines,
            [
                r#"{"at_ms":100,"user_prompt":true}"#,
                r#"{"at_ms":300,"tool":"bash","exit_code":1,"error":"TypeError\n[exit code: 1]"}"#,
            ]
        );
        let Logged::Tool(call) = &logged[1] else {
            panic!("a tool call")
        };
        assert_eq!(call.args["command"], "node app.js");
        assert_eq!(call.call_id, "c1");
    }
}
