//! What one call tried ([`Shot`]): the exact call, the **target** it experiments on, and whether
//! it only waits.
//!
//! Two failures are experiments on the same problem when their calls have the same target. A
//! shell call (any tool whose arguments hold a string `command`) targets its main command: the
//! first simple command that is neither setup (`cd`, `export`, `source`, `echo`, …) nor a
//! wrapper (`timeout 60`, `env`, `VAR=value`, `sudo`), reduced to its program and first operand,
//! where a test id loses its `::case` and `[param]` parts. So `cd /r && python -m pytest
//! tests/a.py::t1 -x 2>&1 | tail` and `pytest tests/a.py::t2` are one target (`pytest
//! tests/a.py`), while `grep foo a.py` and `grep bar b.py` are two. Another tool targets its name
//! and its `path` (or `file_path`, `file`) argument, or, without one, its exact arguments. A file
//! editor's verb in `command` (`str_replace_editor`'s `view`, `create`, `str_replace`, `insert`,
//! `undo_edit`) next to a `path` makes a file tool's call, not a shell command.
//!
//! A shell call's **script** is its main command's operand's file name (`python /r/repro.py` →
//! `repro.py`); a file tool that writes a whole file (`write`, `create`, an editor's `create`)
//! **writes** its file name. Under `no-progress` the first failed run of a script written since
//! it last ran is the expected result of a fresh reproduction, not a failed experiment.
//!
//! A call **waits** when it only lets time pass: a shell command whose main command is `sleep`
//! or `wait`, or `job_output` unless its `wait` is `false`. Waiting never counts.

use crate::FailureKeys;
use crate::args::{CallKey, Fnv, is_blank, json_hash};
use crate::json::Json;
use crate::tool::ToolFacts;
use fingerprint::Fingerprint;
use serde_json::Value;
use std::borrow::Cow;

/// One call as the gate counts it (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shot {
    pub(crate) call: CallKey,
    pub(crate) target: u64,
    pub(crate) waits: bool,
    /// A shell call (its arguments hold a `command`): it runs something, so a changed failure is
    /// progress (see [`crate::Counting::NoProgress`]).
    pub(crate) shell: bool,
    /// A shell call's script: the key of its main command's operand's file name (0: none).
    pub(crate) script: u64,
    /// A call that writes a whole file (a file tool's `write` or `create`): the key of its file
    /// name (0: none).
    pub(crate) writes: u64,
}

/// A fact of a finished call that `AgentGate::on_result` reads only for a result it counts: the
/// value itself, or a closure that makes it, so a driver can defer parsing the arguments
/// ([`Shot`]) and fingerprinting the text (`Option<Fingerprint>`) until then.
pub trait Deferred<T> {
    /// The value.
    fn get(self) -> T;
}

impl Deferred<Shot> for Shot {
    fn get(self) -> Shot {
        self
    }
}

impl Deferred<FailureKeys> for FailureKeys {
    fn get(self) -> FailureKeys {
        self
    }
}

/// A bare fingerprint: a failure without a detail, which never makes progress.
impl Deferred<FailureKeys> for Option<Fingerprint> {
    fn get(self) -> FailureKeys {
        FailureKeys {
            print: self,
            detail: None,
        }
    }
}

impl<T, F: FnOnce() -> T> Deferred<T> for F {
    fn get(self) -> T {
        self()
    }
}

/// Programs that prepare a shell command rather than run the experiment.
const SETUP: [&str; 14] = [
    "cd", "pushd", "popd", "export", "source", ".", "set", "unset", "alias", "echo", "printf",
    "true", ":", "clear",
];

/// Prefixes that run the next word as the program.
const WRAPPERS: [&str; 7] = ["env", "sudo", "time", "nohup", "command", "exec", "stdbuf"];

/// Keys naming the file a non-shell tool works on.
const PATH_KEYS: [&str; 3] = ["path", "file_path", "file"];

/// `command` values of a file editor (OpenHands' and Anthropic's `str_replace_editor`), which are
/// not shell commands when the call also names a file.
const EDITOR_COMMANDS: [&str; 6] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "undo_edit",
    "write",
];

/// Tools that write a whole file, by canonical name (DSH's `write`, SWE-agent's `create`).
const WRITE_TOOLS: [&str; 3] = ["write", "create", "write_file"];

/// The key of a path's file name, so `/repo/repro.py`, `./repro.py` and `repro.py` are one file.
fn file_key(path: &str) -> u64 {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if name.is_empty() {
        return 0;
    }
    target_hash(b'f', [name])
}

impl Shot {
    /// The shot of `name` called with parsed arguments.
    pub fn new<T: ToolFacts + ?Sized>(tool: &T, args: &Value) -> Self {
        Self::of(tool, &Json::from(args))
    }

    fn of<T: ToolFacts + ?Sized>(tool: &T, args: &Json<'_>) -> Self {
        let name = tool.name();
        let call = CallKey::new(name, json_hash(args));
        let field = |key: &str| args.get(key).and_then(Json::as_str);
        let path = PATH_KEYS.iter().find_map(|key| field(key));
        let command = field("command").or_else(|| field("cmd"));
        let editor_verb = command.filter(|verb| path.is_some() && EDITOR_COMMANDS.contains(verb));
        if let (Some(command), None) = (command, editor_verb) {
            let main = main_command(command);
            let waits = main
                .first()
                .is_some_and(|program| matches!(program.as_ref(), "sleep" | "wait"));
            return Self {
                call,
                target: target_hash(b'$', main.iter().map(Cow::as_ref)),
                waits,
                shell: true,
                script: main.get(1).map_or(0, |operand| file_key(operand)),
                writes: 0,
            };
        }
        let waits = tool.is_job_output() && args.get("wait") != Some(&Json::Bool(false));
        let target = match path {
            Some(path) => target_hash(b'/', [name, path]),
            None => call.0,
        };
        let writes_whole = editor_verb.map_or_else(
            || names::with_normalized(name, |name| WRITE_TOOLS.contains(&name)),
            |verb| verb == "create",
        );
        Self {
            call,
            target,
            waits,
            shell: false,
            script: 0,
            writes: path.filter(|_| writes_whole).map_or(0, file_key),
        }
    }

    /// The shot of `name` called with arguments given as JSON text (text that is not JSON is its
    /// own exact call and target, as in [`crate::canonical_args_hash_str`]).
    pub fn from_json<T: ToolFacts + ?Sized>(tool: &T, args_json: &str) -> Self {
        if is_blank(args_json) {
            return Self::of(tool, &Json::empty_object());
        }
        match Json::parse(args_json) {
            Ok(value) => Self::of(tool, &value),
            Err(_) => {
                let call = CallKey::new(tool.name(), crate::canonical_args_hash_str(args_json));
                Self {
                    call,
                    target: call.0,
                    waits: false,
                    shell: false,
                    script: 0,
                    writes: 0,
                }
            }
        }
    }
}

fn target_hash<'w>(tag: u8, words: impl IntoIterator<Item = &'w str>) -> u64 {
    let mut h = Fnv::new();
    h.byte(tag);
    for word in words {
        h.text(word);
    }
    h.value()
}

/// The main command of a shell command line as `[program, first operand]` (see the module docs);
/// empty when there is none. Words borrow from `command` where quoting left them as written.
pub(crate) fn main_command(command: &str) -> Vec<Cow<'_, str>> {
    for (words, stdin) in first_of_pipelines(command) {
        let mut words = words.as_slice();
        // Wrappers and variable assignments before the program.
        loop {
            match words.first().map(Cow::as_ref) {
                Some(w) if WRAPPERS.contains(&w) => {
                    words = &words[1..];
                    while words.first().is_some_and(|w| w.starts_with('-')) {
                        words = &words[1..];
                    }
                }
                Some(w) if is_assignment(w) => words = &words[1..],
                Some("timeout") => {
                    words = &words[1..];
                    while words.first().is_some_and(|w| w.starts_with('-')) {
                        words = &words[1..];
                    }
                    words = words.get(1..).unwrap_or_default();
                }
                _ => break,
            }
        }
        let Some(program) = words.first() else {
            continue;
        };
        let program = program_name(program);
        if SETUP.contains(&program.as_ref()) {
            continue;
        }
        let mut rest = &words[1..];
        let mut program = program;
        if program == "python" && rest.first().map(Cow::as_ref) == Some("-m") {
            if let Some(module) = rest.get(1) {
                program = module.clone();
                rest = &rest[2..];
            }
        }
        let mut operand = None;
        let mut i = 0;
        while i < rest.len() {
            let word = &rest[i];
            if word == "-c" || word == "-e" {
                operand = rest.get(i + 1).cloned();
                break;
            }
            if !word.starts_with('-') || word == "-" {
                operand = Some(part(word, test_file));
                break;
            }
            i += 1;
        }
        // A script on standard input (`python - <<EOF`) is told apart by its text.
        if matches!(operand.as_deref(), None | Some("-")) && stdin.is_some() {
            operand = stdin.map(Cow::Owned);
        }
        return [program].into_iter().chain(operand).collect();
    }
    Vec::new()
}

/// The part `of` picks out of `word`, borrowed from the command line when `word` is.
fn part<'a>(word: &Cow<'a, str>, of: impl FnOnce(&str) -> &str) -> Cow<'a, str> {
    match word {
        Cow::Borrowed(word) => Cow::Borrowed(of(word)),
        Cow::Owned(word) => Cow::Owned(of(word).to_owned()),
    }
}

/// `python3.11`, `/usr/bin/python3` → `python`; other programs by their file name.
fn program_name<'a>(word: &Cow<'a, str>) -> Cow<'a, str> {
    let base = part(word, |word| word.rsplit('/').next().unwrap_or(word));
    if base.starts_with("python") && base[6..].chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Cow::Borrowed("python");
    }
    base
}

/// A test id's file: `tests/a.py::T::t[1]` → `tests/a.py`.
fn test_file(word: &str) -> &str {
    let word = match word.as_bytes().windows(2).position(|pair| pair == b"::") {
        Some(at) => &word[..at],
        None => word,
    };
    match word.find('[') {
        Some(at) if at > 0 && word.ends_with(']') => &word[..at],
        _ => word,
    }
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// The word being read: a slice of the command line while it is written as it reads, its own
/// text once quotes, escapes or a line continuation make it differ.
struct Word<'a> {
    line: &'a str,
    start: usize,
    end: usize,
    own: Option<String>,
    /// Whether a word has begun (an empty quoted word `''` is a word).
    begun: bool,
}

impl<'a> Word<'a> {
    fn new(line: &'a str) -> Self {
        Self {
            line,
            start: 0,
            end: 0,
            own: None,
            begun: false,
        }
    }

    /// The char `c` written at byte `at` of the line.
    fn push_written(&mut self, at: usize, c: char) {
        if self.own.is_none() {
            if !self.begun || self.start == self.end {
                self.start = at;
                self.end = at;
            }
            if self.end == at {
                self.begun = true;
                self.end = at + c.len_utf8();
                return;
            }
        }
        self.push(c);
    }

    /// A char the word reads that the line spells otherwise (quoted or escaped).
    fn push(&mut self, c: char) {
        self.begun = true;
        self.own
            .get_or_insert_with(|| self.line[self.start..self.end].to_owned())
            .push(c);
    }

    fn begin(&mut self) {
        self.begun = true;
    }

    fn text(&self) -> &str {
        match &self.own {
            Some(own) => own,
            None => &self.line[self.start..self.end],
        }
    }

    fn take(&mut self) -> Cow<'a, str> {
        let word = match self.own.take() {
            Some(own) => Cow::Owned(own),
            None => Cow::Borrowed(&self.line[self.start..self.end]),
        };
        self.clear();
        word
    }

    fn clear(&mut self) {
        self.own = None;
        self.start = 0;
        self.end = 0;
        self.begun = false;
    }
}

/// The words of each pipeline's first simple command, in order, with the body of the
/// here-document it reads, if any. A rough shell reading: quotes and backslashes group words,
/// `&&` `||` `;` `&` and newlines end a command, `|` ends a pipeline stage (the later stages only
/// filter output), redirections and their targets are dropped, and a here-document's body is
/// taken out of the command line.
fn first_of_pipelines(command: &str) -> Vec<(Vec<Cow<'_, str>>, Option<String>)> {
    let mut commands = Vec::new();
    let mut words: Vec<Cow<'_, str>> = Vec::new();
    let mut word = Word::new(command);
    let mut skipping_stage = false;
    let mut skip_next_word = false;
    let mut heredocs: Vec<(usize, String)> = Vec::new();
    let mut bodies: Vec<(usize, String)> = Vec::new();
    let mut chars = command.char_indices().peekable();
    fn end_word<'a>(
        word: &mut Word<'a>,
        words: &mut Vec<Cow<'a, str>>,
        skip_next_word: &mut bool,
        skipping_stage: bool,
    ) {
        if word.begun {
            if *skip_next_word {
                *skip_next_word = false;
            } else if !skipping_stage {
                words.push(word.take());
            }
            word.clear();
        }
    }
    let peek =
        |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| chars.peek().map(|&(_, c)| c);
    while let Some((at, c)) = chars.next() {
        match c {
            '\'' => {
                word.begin();
                for (_, q) in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                word.begin();
                while let Some((_, q)) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some((_, next)) = chars.next() {
                                word.push(next);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                if let Some((_, next)) = chars.next() {
                    if next != '\n' {
                        word.push(next);
                    }
                }
            }
            '<' if peek(&mut chars) == Some('<') => {
                chars.next();
                end_word(&mut word, &mut words, &mut skip_next_word, skipping_stage);
                if peek(&mut chars) == Some('<') {
                    // `<<<` a here-string: its word is input, not an operand.
                    chars.next();
                    skip_next_word = true;
                    continue;
                }
                if peek(&mut chars) == Some('-') {
                    chars.next();
                }
                while peek(&mut chars).is_some_and(|c| c == ' ' || c == '\t') {
                    chars.next();
                }
                let mut delimiter = String::new();
                while let Some(d) = peek(&mut chars) {
                    if d.is_whitespace() || matches!(d, ';' | '&' | '|' | '<' | '>' | ')') {
                        break;
                    }
                    chars.next();
                    if d != '\'' && d != '"' && d != '\\' {
                        delimiter.push(d);
                    }
                }
                let owner = if skipping_stage {
                    commands.len().saturating_sub(1)
                } else {
                    commands.len()
                };
                heredocs.push((owner, delimiter));
            }
            '<' | '>' => {
                // A redirection: `2>&1`, `>out`, `< in`. A digit just before it is its fd.
                if word.begun && word.text().chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                }
                end_word(&mut word, &mut words, &mut skip_next_word, skipping_stage);
                while peek(&mut chars).is_some_and(|c| c == '>' || c == '&') {
                    chars.next();
                }
                if peek(&mut chars).is_some_and(|c| c.is_ascii_digit()) {
                    while peek(&mut chars).is_some_and(|c| c.is_ascii_digit()) {
                        chars.next();
                    }
                } else {
                    skip_next_word = true;
                }
            }
            '|' | '&' | ';' | '\n' => {
                end_word(&mut word, &mut words, &mut skip_next_word, skipping_stage);
                let pipe = c == '|' && peek(&mut chars) != Some('|');
                if matches!(peek(&mut chars), Some('|' | '&')) && c != ';' && c != '\n' {
                    chars.next();
                }
                if !skipping_stage && !words.is_empty() {
                    commands.push((std::mem::take(&mut words), None));
                }
                words.clear();
                skipping_stage = pipe;
                if c == '\n' {
                    take_heredoc_bodies(&mut chars, &mut heredocs, &mut bodies);
                }
            }
            c if c.is_whitespace() => {
                end_word(&mut word, &mut words, &mut skip_next_word, skipping_stage);
            }
            '(' | ')' | '{' | '}' if !word.begun => {}
            _ => word.push_written(at, c),
        }
    }
    end_word(&mut word, &mut words, &mut skip_next_word, skipping_stage);
    if !skipping_stage && !words.is_empty() {
        commands.push((words, None));
    }
    let mut bodies = bodies.into_iter().peekable();
    for (index, (_, read)) in commands.iter_mut().enumerate() {
        while let Some((_, body)) = bodies.next_if(|(owner, _)| *owner <= index) {
            *read = Some(body);
        }
    }
    commands
}

/// After a newline: takes the bodies of the pending here-documents, each up to its delimiter
/// line, with the index of the command that reads it.
fn take_heredoc_bodies(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    heredocs: &mut Vec<(usize, String)>,
    bodies: &mut Vec<(usize, String)>,
) {
    for (owner, delimiter) in heredocs.drain(..) {
        let mut body = String::new();
        loop {
            let mut line = String::new();
            let mut ended = false;
            for (_, c) in chars.by_ref() {
                if c == '\n' {
                    ended = true;
                    break;
                }
                line.push(c);
            }
            if line.trim() == delimiter {
                break;
            }
            body.push_str(&line);
            body.push('\n');
            if !ended {
                break;
            }
        }
        bodies.push((owner, body));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn main(command: &str) -> Vec<String> {
        main_command(command)
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    }

    fn shell(command: &str) -> Shot {
        Shot::new("bash", &json!({ "command": command }))
    }

    #[test]
    fn the_main_command_skips_setup_wrappers_redirections_and_filters() {
        expect_test::expect![[r#"
            [
                [
                    "python",
                    "reproduce.py",
                ],
                [
                    "pytest",
                    "tests/test_a.py",
                ],
                [
                    "pytest",
                    "tests/test_a.py",
                ],
                [
                    "grep",
                    "class TimeSeries",
                ],
                [
                    "python",
                    "import x; print(x)",
                ],
                [
                    "sed",
                    "s/a/b/",
                ],
                [
                    "cat",
                    "import os\n",
                ],
                [
                    "git",
                    "diff",
                ],
                [
                    "sleep",
                    "5",
                ],
                [],
                [
                    "python",
                    "print(1)\n",
                ],
                [
                    "django-admin",
                    "test",
                ],
            ]
        "#]]
        .assert_debug_eq(&[
            main("cd /testbed && python reproduce.py 2>&1 | tail -n 20"),
            main("timeout 60 python3 -m pytest tests/test_a.py::T::test_x[1] -q"),
            main("PYTHONPATH=. pytest -x tests/test_a.py"),
            main("grep -n \"class TimeSeries\" astropy/timeseries/core.py"),
            main("python -c 'import x; print(x)'"),
            main("sed -i 's/a/b/' f.py && cat f.py"),
            main("cat <<'EOF' > f.py\nimport os\nEOF\npython f.py"),
            main("echo hi; git diff --stat"),
            main("sleep 5 && tail log.txt"),
            main("cd /testbed"),
            main("cd /r && python3 - <<'PY'\nprint(1)\nPY"),
            main("env -i django-admin test"),
        ]);
    }

    #[test]
    fn targets_group_runs_of_one_test_and_separate_different_commands() {
        assert_eq!(
            shell("pytest tests/a.py::t1").target,
            shell("cd /r && python -m pytest tests/a.py::t2 -x 2>&1 | tail").target
        );
        assert_ne!(
            shell("pytest tests/a.py").call,
            shell("pytest tests/a.py -x").call
        );
        assert_ne!(shell("grep foo a.py").target, shell("grep bar b.py").target);
        assert_ne!(shell("python a.py").target, shell("python b.py").target);
        // Non-shell tools: the file they work on, else the exact call.
        let edit = |path: &str, old: &str| Shot::new("edit", &json!({"path": path, "old": old}));
        assert_eq!(edit("a.rs", "x").target, edit("a.rs", "y").target);
        assert_ne!(edit("a.rs", "x").target, edit("b.rs", "x").target);
        assert_ne!(
            Shot::new("probe", &json!({"x": 1})).target,
            Shot::new("probe", &json!({"x": 2})).target
        );
    }

    #[test]
    fn sleeping_and_job_output_wait() {
        assert!(shell("sleep 10").waits);
        assert!(shell("sleep 2 && cat out.log").waits);
        assert!(!shell("python a.py && sleep 1").waits);
        assert!(Shot::new("job_output", &json!({"job_id": "bash-1"})).waits);
        assert!(Shot::new("job_output", &json!({"job_id": "bash-1", "wait": true})).waits);
        assert!(!Shot::new("job_output", &json!({"job_id": "bash-1", "wait": false})).waits);
        assert!(!Shot::new("read", &json!({"path": "a"})).waits);
    }

    #[test]
    fn the_reading_never_panics_on_odd_text() {
        for text in [
            "", "'", "\"", "\\", "<<", "<<<", ">", "|", "&&&", "a <<EOF", "((", "2>&1",
        ] {
            let _ = main(text);
            let _ = Shot::from_json("bash", text);
        }
        assert_eq!(Shot::from_json("bash", ""), Shot::new("bash", &json!({})));
    }
}
