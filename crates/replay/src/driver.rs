//! The replay driver: line numbers, format sniffing, the per-agent map and the error shape, the
//! same for every plugin.

use serde_json::{Map, Value};
use session_log::{Entry, Header, Reader, session_header};
use std::collections::HashMap;

/// The agent of an event line that names none.
pub const DEFAULT_AGENT: &str = "default";

/// One plugin's replay: how an input maps to its machine and what rows it prints.
///
/// The driver ([`Replay`]) calls [`Engine::open`] once if the input is a session log and then
/// [`Engine::entry`] for each of its events; otherwise [`Engine::event`] for each event line,
/// parsed to a JSON object. [`Engine::finish`] closes either.
pub trait Engine {
    /// One agent's state in the event format.
    type Agent;
    /// A session log's state (one session is one agent).
    type Session;

    /// Whether a session log's assistant replies are read (they are skipped unread otherwise).
    const ASSISTANT_TEXT: bool = true;

    /// The message for an event line that is not JSON.
    fn invalid_json(error: &serde_json::Error) -> String;

    /// The message for an event line that is JSON but not an object.
    fn not_an_object(value: &Value) -> String;

    /// A session log starts (its header is read): its state and the opening output, if any.
    fn open(&mut self, header: &Header) -> (Self::Session, Option<String>);

    /// One event of the session log, read from `line`: its output, if any.
    fn entry(&mut self, session: &mut Self::Session, line: usize, entry: Entry) -> Option<String>;

    /// One line of the event format: its output, if any, or the message naming the field (the
    /// driver prefixes `line N: `).
    fn event(
        &mut self,
        agents: &mut Agents<Self::Agent>,
        line: usize,
        fields: &Map<String, Value>,
    ) -> Result<Option<String>, String>;

    /// The closing output after the last line, if any.
    fn finish(&self, format: Format<'_, Self::Session>) -> Option<String>;
}

/// What the first non-blank line said the input is, as [`Engine::finish`] sees it.
pub enum Format<'a, S> {
    /// Nothing but blank lines (or nothing) was read.
    Empty,
    /// The event format.
    Events,
    /// A DSH session log.
    Session(&'a S),
}

/// The event format's agents, each with its own state, by name.
pub struct Agents<A> {
    by_name: HashMap<String, A>,
}

impl<A> Agents<A> {
    /// The agent an event line names (`"agent"`, default [`DEFAULT_AGENT`]), or the value that is
    /// not a string.
    pub fn name(fields: &Map<String, Value>) -> Result<&str, &Value> {
        match fields.get("agent") {
            None => Ok(DEFAULT_AGENT),
            Some(Value::String(name)) => Ok(name),
            Some(other) => Err(other),
        }
    }

    /// The agent's state, made by `new` on its first line.
    pub fn get(&mut self, name: &str, new: impl FnOnce() -> A) -> &mut A {
        self.by_name.entry(name.to_owned()).or_insert_with(new)
    }
}

/// What the first non-blank line said the input is.
enum State<S> {
    Undecided,
    Events,
    Session(Box<(Reader, S)>),
}

/// A replay over one input stream, through one plugin's [`Engine`].
pub struct Replay<E: Engine> {
    engine: E,
    agents: Agents<E::Agent>,
    line: usize,
    state: State<E::Session>,
}

impl<E: Engine> Replay<E> {
    /// A replay through `engine`, before its first line.
    pub fn with_engine(engine: E) -> Self {
        Self {
            engine,
            agents: Agents {
                by_name: HashMap::new(),
            },
            line: 0,
            state: State::Undecided,
        }
    }

    /// The plugin's engine.
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// The plugin's engine, to set its output options before the first line.
    pub fn engine_mut(&mut self) -> &mut E {
        &mut self.engine
    }

    /// Feeds the next input line; returns the output (one or more lines, without the final
    /// newline), or nothing. A malformed event line is refused as `line N: …` naming the field; a
    /// malformed session-log line as `dsh-session-log` names it.
    pub fn feed_line(&mut self, text: &str) -> Result<Option<String>, String> {
        self.line += 1;
        if text.trim().is_empty() {
            return Ok(None);
        }
        let line = self.line;
        if matches!(self.state, State::Undecided) {
            if let Some(header) = session_header(text) {
                let mut reader = Reader::open(line, &header).map_err(|e| e.to_string())?;
                if !E::ASSISTANT_TEXT {
                    reader = reader.without_assistant_text();
                }
                let (session, opening) = self.engine.open(reader.header());
                self.state = State::Session(Box::new((reader, session)));
                return Ok(opening);
            }
            self.state = State::Events;
        }
        if let State::Session(session) = &mut self.state {
            let (reader, session) = &mut **session;
            let Some(entry) = reader.read(line, text).map_err(|e| e.to_string())? else {
                return Ok(None);
            };
            return Ok(self.engine.entry(session, line, entry));
        }
        self.event(line, text)
            .map_err(|message| format!("line {line}: {message}"))
    }

    fn event(&mut self, line: usize, text: &str) -> Result<Option<String>, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| E::invalid_json(&e))?;
        let Value::Object(fields) = &value else {
            return Err(E::not_an_object(&value));
        };
        self.engine.event(&mut self.agents, line, fields)
    }

    /// The closing output after the last line, if any.
    pub fn finish(&self) -> Option<String> {
        self.engine.finish(match &self.state {
            State::Undecided => Format::Empty,
            State::Events => Format::Events,
            State::Session(session) => Format::Session(&session.1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts each agent's lines; prints `agent #n` per event and `session line N` per entry.
    struct Count;

    impl Engine for Count {
        type Agent = usize;
        type Session = usize;

        fn invalid_json(error: &serde_json::Error) -> String {
            format!("bad JSON ({error})")
        }

        fn not_an_object(value: &Value) -> String {
            format!("not an object: {value}")
        }

        fn open(&mut self, header: &Header) -> (usize, Option<String>) {
            (0, Some(format!("session {}", header.id)))
        }

        fn entry(&mut self, seen: &mut usize, line: usize, _: Entry) -> Option<String> {
            *seen += 1;
            Some(format!("session line {line}"))
        }

        fn event(
            &mut self,
            agents: &mut Agents<usize>,
            _line: usize,
            fields: &Map<String, Value>,
        ) -> Result<Option<String>, String> {
            let name = Agents::<usize>::name(fields).map_err(|v| format!("agent is {v}"))?;
            let seen = agents.get(name, || 0);
            *seen += 1;
            Ok(Some(format!("{name} #{seen}")))
        }

        fn finish(&self, format: Format<'_, usize>) -> Option<String> {
            Some(match format {
                Format::Empty => "empty".to_owned(),
                Format::Events => "events".to_owned(),
                Format::Session(seen) => format!("{seen} entries"),
            })
        }
    }

    fn run(lines: &[&str]) -> Vec<String> {
        let mut replay = Replay::with_engine(Count);
        let mut out: Vec<String> = lines
            .iter()
            .map(|line| match replay.feed_line(line) {
                Ok(out) => out.unwrap_or_else(|| "-".to_owned()),
                Err(error) => format!("error: {error}"),
            })
            .collect();
        out.extend(replay.finish());
        out
    }

    #[test]
    fn event_lines_are_numbered_per_input_and_counted_per_agent() {
        let out = run(&[
            "",
            "{}",
            r#"{"agent":"a"}"#,
            "   ",
            "{}",
            "nope",
            "[1]",
            r#"{"agent":7}"#,
        ]);
        expect_test::expect![[r#"
            [
                "-",
                "default #1",
                "a #1",
                "-",
                "default #2",
                "error: line 6: bad JSON (expected ident at line 1 column 2)",
                "error: line 7: not an object: [1]",
                "error: line 8: agent is 7",
                "events",
            ]
        "#]]
        .assert_debug_eq(&out);
    }

    #[test]
    fn a_session_header_first_makes_the_input_a_session_log() {
        let header = r#"{"type":"session","version":0,"id":"s-1","createdAt":0}"#;
        let prompt = r#"{"type":"user/message","seq":0,"time":1,"data":{"id":"u0","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}}"#;
        let skipped = r#"{"type":"turn/start","seq":1,"time":2,"data":{"turn":1}}"#;
        expect_test::expect![[r#"
            [
                "-",
                "session s-1",
                "session line 3",
                "-",
                "error: line 5: not valid JSON (expected ident at line 1 column 2)",
                "1 entries",
            ]
        "#]]
        .assert_debug_eq(&run(&["", header, prompt, skipped, "nope"]));
        // Only the first non-blank line decides: a header after an event line is an event line.
        assert_eq!(run(&["{}", header]), ["default #1", "default #2", "events"]);
        assert_eq!(run(&[]), ["empty"]);
    }
}
