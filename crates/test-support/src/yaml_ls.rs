//! A client for `yaml-language-server --stdio` (the server behind VS Code's YAML extension),
//! speaking LSP JSON-RPC the way an editor does, for `cargo xtask editor-test`: `initialize`,
//! answers the server's `workspace/configuration` pull with the settings the README recommends,
//! `didOpen` each file, and collects `textDocument/publishDiagnostics`.

use crate::util::{rel, root};
use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The server's entry point inside `node_modules`.
const SERVER: &str = "node_modules/yaml-language-server/bin/yaml-language-server";
/// Longest wait for one answer or for a file's diagnostics.
const TIMEOUT: Duration = Duration::from_secs(60);
/// How long to keep listening after the last file's diagnostics, for late re-validations.
const SETTLE: Duration = Duration::from_millis(500);

/// One diagnostic as an editor shows it: 1-based line and column (UTF-16 units, as LSP counts).
#[derive(Debug)]
pub struct Diagnostic {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub col: usize,
    /// The server's message.
    pub message: String,
    /// Who found it (`YAML`, the schema's name).
    pub source: String,
}

/// How long each phase took.
#[derive(Clone, Default)]
pub struct Timings {
    /// Start and `initialize`.
    pub initialize: Duration,
    /// The settings pull.
    pub configure: Duration,
    /// Every file's diagnostics.
    pub diagnose: Duration,
}

/// A running server and the client side of its JSON-RPC connection.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Result<Value, String>>,
    stderr: Arc<Mutex<String>>,
    next_id: i64,
    settings: Value,
    configuration_pulls: usize,
    diagnostics: HashMap<String, Vec<Value>>,
    /// How long each phase took.
    pub timings: Timings,
}

impl Server {
    /// Starts the devDependency's server on `node` and initializes it.
    pub fn start(node: &Path) -> Result<Self> {
        let server = root().join(SERVER);
        if !server.is_file() {
            bail!(
                "{} is missing; it comes with `npm ci` (devDependency yaml-language-server)",
                rel(&server)
            );
        }
        let mut child = Command::new(node)
            .arg(&server)
            .arg("--stdio")
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {} --stdio", rel(&server)))?;
        let stdin = child.stdin.take().context("server stdin")?;
        let stdout = child.stdout.take().context("server stdout")?;
        let mut stderr_pipe = child.stderr.take().context("server stderr")?;

        let (sender, incoming) = mpsc::channel();
        thread::spawn(move || read_messages(stdout, &sender));
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr_pipe.read_to_string(&mut text);
            if let Ok(mut all) = sink.lock() {
                all.push_str(&text);
            }
        });

        let settings = json!({
            "yaml": {
                "validate": true,
                "hover": false,
                "completion": false,
                "format": { "enable": false },
                "customTags": [config::EDITOR_CUSTOM_TAG],
                "schemaStore": { "enable": false },
                "kubernetesCRDStore": { "enable": false },
                "schemas": {},
            }
        });
        Ok(Server {
            child,
            stdin,
            incoming,
            stderr,
            next_id: 0,
            settings,
            configuration_pulls: 0,
            diagnostics: HashMap::new(),
            timings: Timings::default(),
        })
    }

    /// Initializes the server, opens `files` and returns the server version and each file's
    /// diagnostics.
    /// The server's version and each file's diagnostics, in order.
    pub fn diagnose(&mut self, files: &[PathBuf]) -> Result<(String, Vec<Vec<Diagnostic>>)> {
        let started = Instant::now();
        let root_uri = file_uri(&root())?;
        let initialized = self.request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "clientInfo": { "name": "cargo xtask editor-test" },
                "rootUri": root_uri,
                "workspaceFolders": [{ "uri": root_uri, "name": "research-nudge" }],
                "capabilities": {
                    "workspace": { "configuration": true, "workspaceFolders": true },
                    "textDocument": { "publishDiagnostics": { "relatedInformation": false } },
                },
                "initializationOptions": {},
            }),
        )?;
        let version = initialized["serverInfo"]["version"]
            .as_str()
            .unwrap_or("(unknown version)")
            .to_owned();
        self.notify("initialized", json!({}))?;
        self.timings.initialize = started.elapsed();

        // The server pulls its settings with `workspace/configuration` once initialized; a
        // `textDocument/codeLens` answer waits until it has applied them.
        let started = Instant::now();
        self.wait_for(|s| s.configuration_pulls > 0, "the settings pull")?;
        self.request(
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": format!("{root_uri}/none.yml") } }),
        )?;
        self.timings.configure = started.elapsed();

        let started = Instant::now();
        let mut uris = Vec::new();
        for path in files {
            let path = std::path::absolute(path)
                .with_context(|| format!("resolving {}", path.display()))?;
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", rel(&path)))?;
            let uri = file_uri(&path)?;
            self.notify(
                "textDocument/didOpen",
                json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": text } }),
            )?;
            uris.push(uri);
        }
        self.wait_for(
            |s| uris.iter().all(|uri| s.diagnostics.contains_key(uri)),
            "diagnostics for every file",
        )?;
        let settle_until = Instant::now() + SETTLE;
        self.pump_until(settle_until)?;
        self.timings.diagnose = started.elapsed() - SETTLE;

        let reports = uris
            .iter()
            .map(|uri| {
                let mut list: Vec<Diagnostic> = self.diagnostics[uri]
                    .iter()
                    .map(|d| Diagnostic {
                        line: d["range"]["start"]["line"].as_u64().unwrap_or(0) as usize + 1,
                        col: d["range"]["start"]["character"].as_u64().unwrap_or(0) as usize + 1,
                        message: d["message"].as_str().unwrap_or("").to_owned(),
                        source: d["source"].as_str().unwrap_or("").to_owned(),
                    })
                    .collect();
                list.sort_by(|a, b| (a.line, a.col, &a.message).cmp(&(b.line, b.col, &b.message)));
                list
            })
            .collect();
        Ok((version, reports))
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        let body = serde_json::to_vec(message)?;
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len())?;
        self.stdin.write_all(&body)?;
        self.stdin.flush().context("writing to the language server")
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<()> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = self.receive(deadline, method)?;
            if message.get("method").is_none() && message["id"] == id {
                if let Some(error) = message.get("error") {
                    bail!("{method} failed: {error}");
                }
                return Ok(message["result"].clone());
            }
            self.handle(message)?;
        }
    }

    /// Handles messages until `done` holds.
    fn wait_for(&mut self, done: impl Fn(&Self) -> bool, what: &str) -> Result<()> {
        let deadline = Instant::now() + TIMEOUT;
        while !done(self) {
            let message = self.receive(deadline, what)?;
            self.handle(message)?;
        }
        Ok(())
    }

    /// Handles messages until `until`.
    fn pump_until(&mut self, until: Instant) -> Result<()> {
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(Ok(message)) => self.handle(message)?,
                Ok(Err(error)) => bail!("{error}{}", self.stderr_tail()),
                Err(RecvTimeoutError::Timeout) => return Ok(()),
                Err(RecvTimeoutError::Disconnected) => bail!("the language server went away"),
            }
        }
    }

    fn receive(&mut self, deadline: Instant, what: &str) -> Result<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(Ok(message)) => Ok(message),
            Ok(Err(error)) => bail!("{error} while waiting for {what}{}", self.stderr_tail()),
            Err(_) => bail!(
                "no answer from the language server within {}s while waiting for {what}{}",
                TIMEOUT.as_secs(),
                self.stderr_tail()
            ),
        }
    }

    /// Answers the server's requests and records its notifications.
    fn handle(&mut self, message: Value) -> Result<()> {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return Ok(()); // a late answer to a request nobody waits for
        };
        match (method, message.get("id")) {
            ("workspace/configuration", Some(id)) => {
                let items = message["params"]["items"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let answers: Vec<Value> = items
                    .iter()
                    .map(|item| match item["section"].as_str() {
                        Some(section) => self.settings.get(section).cloned().unwrap_or(Value::Null),
                        None => self.settings.clone(),
                    })
                    .collect();
                self.configuration_pulls += 1;
                let id = id.clone();
                self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": answers }))
            }
            (_, Some(id)) => {
                // registerCapability, workDoneProgress/create, …: accept and ignore.
                let id = id.clone();
                self.send(&json!({ "jsonrpc": "2.0", "id": id, "result": null }))
            }
            ("textDocument/publishDiagnostics", None) => {
                let uri = message["params"]["uri"].as_str().unwrap_or("").to_owned();
                let list = message["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                self.diagnostics.insert(uri, list);
                Ok(())
            }
            _ => Ok(()), // logMessage, telemetry, …
        }
    }

    fn stderr_tail(&self) -> String {
        let text = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            let start = text.char_indices().rev().nth(2000).map_or(0, |(i, _)| i);
            format!("\nserver stderr:\n{}", &text[start..])
        }
    }

    /// `shutdown` and `exit`, then makes sure the process is gone.
    /// Shuts the server down.
    pub fn stop(mut self) {
        let polite = self
            .request("shutdown", Value::Null)
            .and_then(|_| self.notify("exit", Value::Null));
        let deadline = Instant::now() + Duration::from_secs(5);
        if polite.is_ok() {
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads `Content-Length`-framed JSON-RPC messages until the stream ends.
fn read_messages(stdout: impl Read, sender: &mpsc::Sender<Result<Value, String>>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) => {
                    let _ = sender.send(Err("the language server closed its output".to_owned()));
                    return;
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = sender.send(Err(format!("reading from the language server: {e}")));
                    return;
                }
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let Some(length) = length else {
            let _ = sender.send(Err("a message without Content-Length".to_owned()));
            return;
        };
        let mut body = vec![0; length];
        if let Err(e) = reader.read_exact(&mut body) {
            let _ = sender.send(Err(format!("reading a message body: {e}")));
            return;
        }
        let message =
            serde_json::from_slice(&body).map_err(|e| format!("a message is not JSON: {e}"));
        if sender.send(message).is_err() {
            return;
        }
    }
}

/// A `file://` URI for an absolute path, percent-encoding all but unreserved characters and `/`.
fn file_uri(path: &Path) -> Result<String> {
    let text = path
        .to_str()
        .ok_or_else(|| anyhow!("{} is not UTF-8", path.display()))?;
    let mut uri = String::from("file://");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    Ok(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/a b/c#d/é.yml")).expect("utf-8"),
            "file:///a%20b/c%23d/%C3%A9.yml"
        );
    }

    #[test]
    fn messages_are_framed_by_content_length() {
        let body = r#"{"jsonrpc":"2.0","method":"x"}"#;
        let stream = format!(
            "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{body}content-length: 2\r\n\r\n{{}}",
            body.len()
        );
        let (sender, receiver) = mpsc::channel();
        read_messages(stream.as_bytes(), &sender);
        let messages: Vec<_> = receiver.try_iter().collect();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[0].as_ref().expect("first")["method"], "x");
        assert_eq!(messages[1].as_ref().expect("second"), &json!({}));
        assert!(messages[2].is_err());
    }
}
