//! A scripted model on 127.0.0.1 for real dsh turns: OpenAI-style streaming chat completions
//! (what dsh's DeepSeek adapter speaks) and DeepSeek's Anthropic-style search endpoint (what the
//! `web_search` tool calls), recording every request.
//!
//! - `POST …/chat/completions` with a non-empty `tools` array is a step of the conversation: it
//!   gets the next [`Reply`] of the script (a final text once the script is used up), streamed as
//!   SSE `chat.completion.chunk`s (`delta.tool_calls` with the arguments split over two chunks,
//!   or `delta.content` in a few pieces), a `finish_reason`, `usage`, then `data: [DONE]`.
//! - A chat completion without `tools` is dsh's session-title request: a plain-text title.
//! - `POST …/messages` is a web search (set `DEEPSEEK_SEARCH_BASE_URL` to the mock): one
//!   `web_search_tool_result` with a single result.
//!
//! Each connection gets one response and `connection: close`.

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The text of the session-title reply.
pub const TITLE: &str = "Research nudge smoke session";
/// The final text once the script is used up.
pub const DONE: &str = "Done.";
/// The search result every web search returns.
pub const SEARCH_URL: &str = "https://example.org/docs/typeerror";

/// One scripted model turn.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Call one tool with these arguments, after some visible text when `text` is not empty.
    Tool {
        /// The tool name as offered in `tools`.
        name: String,
        /// The arguments object.
        args: Value,
        /// Visible reply text streamed before the call (empty: none).
        text: String,
    },
    /// Answer with text (ends the turn).
    Text(String),
    /// `reply`, served to the first conversation request whose JSON body contains `text`:
    /// agents that talk to the model at the same time (a generation's child agents) each get
    /// their own replies whatever order their requests arrive in.
    When {
        /// Text the request must contain.
        text: String,
        /// What it gets.
        reply: Box<Reply>,
    },
}

impl Reply {
    /// Whether this reply may answer a request with this body text.
    fn serves(&self, body: &str) -> bool {
        match self {
            Reply::When { text, .. } => body.contains(text.as_str()),
            _ => true,
        }
    }

    /// A tool call.
    pub fn tool(name: &str, args: Value) -> Reply {
        Reply::Tool {
            name: name.to_owned(),
            args,
            text: String::new(),
        }
    }
}

/// One request the mock received.
#[derive(Clone, Debug)]
pub struct Request {
    /// The request path.
    pub path: String,
    /// The JSON body (`Null` when it was not JSON).
    pub body: Value,
}

impl Request {
    /// A conversation step: a chat completion offering tools.
    pub fn is_conversation(&self) -> bool {
        self.path.ends_with("/chat/completions")
            && self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }
}

#[derive(Default)]
struct State {
    script: std::collections::VecDeque<Reply>,
    requests: Vec<Request>,
    steps: usize,
    errors: Vec<String>,
}

/// A running mock; stops when dropped.
pub struct MockModel {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl MockModel {
    /// Listens on an ephemeral loopback port and serves `script`.
    pub fn start(script: Vec<Reply>) -> Result<MockModel> {
        let listener =
            TcpListener::bind("127.0.0.1:0").context("binding the mock model to 127.0.0.1")?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            script: script.into(),
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let accept = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let state = Arc::clone(&state);
                    std::thread::spawn(move || {
                        if let Err(e) = serve(stream, &state) {
                            lock(&state).errors.push(format!("{e:#}"));
                        }
                    });
                }
            })
        };
        Ok(MockModel {
            addr,
            state,
            stop,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:<port>` (dsh appends `/chat/completions`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A base for `DEEPSEEK_SEARCH_BASE_URL` (dsh appends `/messages`).
    pub fn search_base_url(&self) -> String {
        format!("http://{}/anthropic/v1", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.state).requests.clone()
    }

    /// Problems serving requests (malformed HTTP and the like).
    pub fn errors(&self) -> Vec<String> {
        lock(&self.state).errors.clone()
    }

    /// Scripted replies not yet consumed.
    pub fn unused(&self) -> usize {
        lock(&self.state).script.len()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(handle) = self.accept.take() {
            let _ = handle.join();
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Reads one HTTP/1.1 request, records it, writes the response, closes.
fn serve(stream: TcpStream, state: &Mutex<State>) -> Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(()); // a bare connect (our own wake-up)
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut length = 0usize;
    let mut chunked = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            bail!("connection closed inside the headers of {method} {path}");
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().context("bad content-length")?,
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                _ => {}
            }
        }
    }
    let body = if chunked {
        read_chunked(&mut reader)?
    } else {
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let request = Request { path, body };

    let (status, content_type, payload) = if method != "POST" {
        (
            404,
            "application/json",
            json!({"error": "not found"}).to_string(),
        )
    } else if request.path.ends_with("/chat/completions") {
        let model = request.body["model"].as_str().unwrap_or("mock").to_owned();
        let reply = if request.is_conversation() {
            let mut state = lock(state);
            state.steps += 1;
            let step = state.steps;
            let body = request.body.to_string();
            let reply = match state.script.iter().position(|r| r.serves(&body)) {
                Some(i) => match state.script.remove(i) {
                    Some(Reply::When { reply, .. }) => *reply,
                    other => other.unwrap_or_else(|| Reply::Text(DONE.to_owned())),
                },
                None => Reply::Text(DONE.to_owned()),
            };
            (step, reply)
        } else {
            (0, Reply::Text(TITLE.to_owned()))
        };
        (200, "text/event-stream", sse(&model, reply.0, &reply.1))
    } else if request.path.ends_with("/messages") {
        (200, "application/json", search_result(&request.body))
    } else {
        (
            404,
            "application/json",
            json!({"error": "not found"}).to_string(),
        )
    };
    lock(state).requests.push(request);

    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{payload}",
        if status == 200 { "OK" } else { "Not Found" },
        payload.len()
    )?;
    stream.flush()?;
    let _ = stream.shutdown(Shutdown::Both);
    Ok(())
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
            .context("bad chunk size")?;
        if size == 0 {
            let mut end = String::new();
            reader.read_line(&mut end)?;
            return Ok(body);
        }
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk)?;
        chunk.truncate(size);
        body.extend(chunk);
    }
}

/// Splits `text` into `parts` pieces on char boundaries (fewer when it is short).
fn pieces(text: &str, parts: usize) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let per = chars.len().div_ceil(parts).max(1);
    let mut out = Vec::new();
    let mut start = 0;
    for chunk in chars.chunks(per) {
        let end = chunk.last().map_or(start, |(i, c)| i + c.len_utf8());
        out.push(&text[start..end]);
        start = end;
    }
    if out.is_empty() {
        out.push("");
    }
    out
}

/// The SSE body for one reply.
fn sse(model: &str, step: usize, reply: &Reply) -> String {
    let id = format!("chatcmpl-mock-{step}");
    let chunk = |delta: Value, finish: Value, usage: Option<Value>| {
        let mut c = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let Some(usage) = usage {
            c["usage"] = usage;
        }
        format!("data: {c}\n\n")
    };
    let usage = json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120});
    let mut out = String::new();
    match reply {
        Reply::When { reply, .. } => return sse(model, step, reply),
        Reply::Tool { name, args, text } => {
            let arguments = args.to_string();
            if !text.is_empty() {
                out += &chunk(
                    json!({"role": "assistant", "content": ""}),
                    Value::Null,
                    None,
                );
                for piece in pieces(text, 3) {
                    out += &chunk(json!({"content": piece}), Value::Null, None);
                }
            }
            out += &chunk(
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "index": 0, "id": format!("call_{step}"), "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]}),
                Value::Null,
                None,
            );
            for piece in pieces(&arguments, 2) {
                out += &chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                    Value::Null,
                    None,
                );
            }
            out += &chunk(json!({}), json!("tool_calls"), Some(usage));
        }
        Reply::Text(text) => {
            out += &chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
                None,
            );
            for piece in pieces(text, 3) {
                out += &chunk(json!({"content": piece}), Value::Null, None);
            }
            out += &chunk(json!({}), json!("stop"), Some(usage));
        }
    }
    out + "data: [DONE]\n\n"
}

/// An Anthropic-style message with one native web-search result.
fn search_result(body: &Value) -> String {
    let query = body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    json!({
        "id": "msg_mock_search",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "stop_reason": "end_turn",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_mock", "name": "web_search", "input": {"query": query}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_mock", "content": [
                {"type": "web_search_result", "url": SEARCH_URL, "title": "TypeError reference", "page_age": "2026-01-01"}
            ]},
            {"type": "text", "text": "A TypeError is thrown when a value is not of the expected type.",
             "citations": [{"type": "web_search_result_location", "url": SEARCH_URL,
                            "title": "TypeError reference", "cited_text": "A TypeError is thrown when a value is not of the expected type."}]}
        ],
        "usage": {"input_tokens": 10, "output_tokens": 10},
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One chat-completions request to the mock; the whole response.
    fn post(mock: &MockModel, body: &str) -> String {
        let mut s = TcpStream::connect(mock.addr).unwrap();
        write!(
            s,
            "POST /chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn pieces_cover_the_text_on_char_boundaries() {
        for text in ["", "a", "héllo wörld", "{\"file_path\":\"app.js\"}"] {
            for parts in 1..5 {
                assert_eq!(pieces(text, parts).concat(), text);
                assert!(pieces(text, parts).len() <= parts.max(1));
            }
        }
    }

    #[test]
    fn serves_script_then_title_then_done() {
        let mock = MockModel::start(vec![Reply::tool("read", json!({"file_path": "a"}))]).unwrap();
        let post = |body: &str| post(&mock, body);
        let tools = r#"{"model":"m","tools":[{"type":"function"}],"messages":[]}"#;
        let first = post(tools);
        assert!(first.contains(r#""name":"read""#), "{first}");
        assert!(first.contains("\"finish_reason\":\"tool_calls\""));
        assert!(first.ends_with("data: [DONE]\n\n"));
        // The title arrives in pieces; put them back together.
        let title: String = post(r#"{"model":"m","messages":[]}"#)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter_map(|c| {
                c["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(title, TITLE);
        assert!(post(tools).contains("\"finish_reason\":\"stop\""));
        let requests = mock.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests.iter().filter(|r| r.is_conversation()).count(), 2);
        assert_eq!(mock.unused(), 0);
    }

    #[test]
    fn a_when_step_goes_to_the_request_that_names_it() {
        let when = |text: &str, file: &str| Reply::When {
            text: text.into(),
            reply: Box::new(Reply::tool("read", json!({"file_path": file}))),
        };
        let mock = MockModel::start(vec![
            when("slot-a", "a"),
            when("slot-b", "b"),
            Reply::Text("parent".into()),
        ])
        .unwrap();
        let post = |mark: &str| {
            let body =
                format!(r#"{{"model":"m","tools":[{{"type":"function"}}],"messages":["{mark}"]}}"#);
            post(&mock, &body)
        };
        // B asks first and still gets its own step; a request naming neither gets the next
        // step without a condition.
        assert!(post("slot-b").contains(r#"\"b\""#));
        assert!(post("parent").contains("\"finish_reason\":\"stop\""));
        assert!(post("slot-a").contains(r#"\"a\""#));
        assert_eq!(mock.unused(), 0);
    }
}
