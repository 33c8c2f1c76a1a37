//! A small path-glob matcher: the dialect `mutable_globs` has always used (that of the `globset`
//! crate with `literal_separator` and `backslash_escape` on, case-sensitive, no empty
//! alternates), without a regex engine.
//!
//! A pattern must match the whole path; paths use `/` and are compared as UTF-8 bytes.
//!
//! | syntax | matches |
//! |---|---|
//! | `?` | one byte other than `/` |
//! | `*` | any run of bytes without `/` (also none) |
//! | `**` as a whole pattern (or `**/`) | every path |
//! | leading `**/` | nothing, or any prefix ending in `/` (`**/a` is `a`, `x/a`, `x/y/a`) |
//! | `/**/` | one `/`, or `/` … `/` (`a/**/b` is `a/b`, `a/x/b`, `a/x/y/b`) |
//! | trailing `/**` | `/` and anything after it (`src/**` is everything under `src`, not `src`) |
//! | `[abc]`, `[a-z]`, `[!a]`, `[^a]` | one byte in (or, negated, not in) the class; `]` first is literal, `-` first or last is literal; a negated class also matches `/` |
//! | `{a,b}` | either alternative; they nest; an empty alternative is dropped (`x{a,}` is `xa` only), and a group with none is empty (`x{}y` is `xy`) |
//! | `\c` | the character `c` literally |
//!
//! A `**` that is not a whole segment (`a**`, `**b`) is two `*`. Like globset, the matcher works on
//! bytes, so `?` and a negated class match one byte of a multi-byte character: for non-ASCII names
//! use `*` or an alternate. Two things globset accepts are refused instead, with their own error:
//! a non-ASCII character inside `[...]` (globset compared single UTF-8 bytes there, so `[é]` never
//! matched `é`), and alternates nested deeper than [`MAX_ALTERNATE_DEPTH`].
//!
//! Matching simulates a compiled NFA over the path's bytes, so its cost is at most pattern length
//! times path length, whatever the pattern (no backtracking).

use std::fmt;

/// The deepest `{...}` nesting a pattern may use.
pub const MAX_ALTERNATE_DEPTH: usize = 32;

/// Why a pattern is not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobError {
    /// A `[` without its `]`.
    UnclosedClass,
    /// A class range whose end is below its start (start, end).
    InvalidRange(char, char),
    /// A `}` outside any `{...}`.
    UnopenedAlternates,
    /// A `{` without its `}`.
    UnclosedAlternates,
    /// A trailing `\`.
    DanglingEscape,
    /// A non-ASCII character inside `[...]` (not supported).
    NonAsciiClass(char),
    /// `{...}` nested deeper than [`MAX_ALTERNATE_DEPTH`] (not supported).
    TooDeep,
}

impl GlobError {
    /// Whether globset accepted the pattern (a feature this matcher refuses).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, GlobError::NonAsciiClass(_) | GlobError::TooDeep)
    }

    /// The validation rule broken, as reported for the spec field.
    pub fn rule(&self) -> String {
        match self {
            GlobError::NonAsciiClass(c) => format!(
                "must use only ASCII characters inside [...] (found {c:?}; use an alternate such as {{é,è}} instead)"
            ),
            GlobError::TooDeep => {
                format!("must not nest {{...}} alternates more than {MAX_ALTERNATE_DEPTH} deep")
            }
            _ => format!("must be a valid glob ({self})"),
        }
    }
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The first five read as globset's messages did, so validation errors are unchanged.
        match self {
            GlobError::UnclosedClass => f.write_str("unclosed character class; missing ']'"),
            GlobError::InvalidRange(a, b) => write!(f, "invalid range; '{a}' > '{b}'"),
            GlobError::UnopenedAlternates => {
                f.write_str("unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)")
            }
            GlobError::UnclosedAlternates => {
                f.write_str("unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)")
            }
            GlobError::DanglingEscape => f.write_str("dangling '\\'"),
            GlobError::NonAsciiClass(c) => write!(f, "non-ASCII character {c:?} inside [...]"),
            GlobError::TooDeep => write!(
                f,
                "{{...}} alternates nested more than {MAX_ALTERNATE_DEPTH} deep"
            ),
        }
    }
}

impl std::error::Error for GlobError {}

/// A set of 256 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ByteSet([u64; 4]);

impl ByteSet {
    const EMPTY: ByteSet = ByteSet([0; 4]);
    const ALL: ByteSet = ByteSet([u64::MAX; 4]);

    fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    fn remove(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] &= !(1 << (b & 63));
    }

    fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    fn not_slash() -> ByteSet {
        let mut s = ByteSet::ALL;
        s.remove(b'/');
        s
    }
}

/// One parsed pattern element.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Literal(char),
    /// `?`.
    One,
    /// `*`.
    Star,
    /// A leading `**/` (or a whole `**`): empty, or anything ending in `/`.
    DeepPrefix,
    /// `/**` at the end of a pattern or alternative: `/` then anything.
    DeepSuffix,
    /// `/**/`: `/`, or `/` anything `/`.
    DeepMiddle,
    Class(ByteSet),
    Alternates(Vec<Vec<Node>>),
}

fn parse(pattern: &str) -> Result<Vec<Node>, GlobError> {
    // `groups[0]` holds the top-level sequence as its only branch; each open `{` adds a group
    // whose branches are its alternatives so far. Nodes go to the last branch of the last group.
    let mut groups: Vec<Vec<Vec<Node>>> = vec![vec![Vec::new()]];
    let mut chars = pattern.chars().peekable();
    // The character consumed before the current one.
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        let in_group = groups.len() > 1;
        let branch = groups.last_mut().and_then(|g| g.last_mut());
        let branch = branch.expect("every group has a branch");
        match c {
            '?' => branch.push(Node::One),
            '*' if chars.peek() != Some(&'*') => branch.push(Node::Star),
            '*' => {
                chars.next();
                let before = prev;
                let mut last = '*';
                if branch.is_empty() {
                    // `**` opening a pattern or alternative: a whole segment if `/` or the end
                    // follows (the `/` is part of it).
                    match chars.peek() {
                        None => branch.push(Node::DeepPrefix),
                        Some('/') => {
                            chars.next();
                            last = '/';
                            branch.push(Node::DeepPrefix);
                        }
                        Some(_) => branch.extend([Node::Star, Node::Star]),
                    }
                } else if before == Some('/') || (in_group && matches!(before, Some(',' | '{'))) {
                    // After `/`: a whole segment if the pattern or alternative ends here, or `/`
                    // follows. It absorbs the `/` before it (and after it, for `/**/`).
                    let at_end = match chars.peek() {
                        None => Some(true),
                        Some(',' | '}') if in_group => Some(true),
                        Some('/') => {
                            chars.next();
                            last = '/';
                            Some(false)
                        }
                        Some(_) => None,
                    };
                    match at_end {
                        None => branch.extend([Node::Star, Node::Star]),
                        Some(at_end) => {
                            let node = match branch.pop() {
                                Some(Node::DeepPrefix) => Node::DeepPrefix,
                                Some(Node::DeepSuffix) => Node::DeepSuffix,
                                _ if at_end => Node::DeepSuffix,
                                _ => Node::DeepMiddle,
                            };
                            branch.push(node);
                        }
                    }
                } else {
                    branch.extend([Node::Star, Node::Star]);
                }
                prev = Some(last);
                continue;
            }
            '[' => {
                let class = parse_class(&mut chars, &mut prev)?;
                branch.push(Node::Class(class));
                continue;
            }
            '{' => {
                if groups.len() > MAX_ALTERNATE_DEPTH {
                    return Err(GlobError::TooDeep);
                }
                groups.push(vec![Vec::new()]);
            }
            ',' if in_group => groups.last_mut().expect("in a group").push(Vec::new()),
            '}' => {
                if !in_group {
                    return Err(GlobError::UnopenedAlternates);
                }
                let group = groups.pop().expect("in a group");
                let outer = groups.last_mut().and_then(|g| g.last_mut());
                outer
                    .expect("every group has a branch")
                    .push(Node::Alternates(group));
            }
            '\\' => {
                let escaped = chars.next().ok_or(GlobError::DanglingEscape)?;
                branch.push(Node::Literal(escaped));
                prev = Some(escaped);
                continue;
            }
            c => branch.push(Node::Literal(c)),
        }
        prev = Some(c);
    }
    if groups.len() > 1 {
        return Err(GlobError::UnclosedAlternates);
    }
    Ok(groups.pop().and_then(|mut g| g.pop()).unwrap_or_default())
}

/// Parses a class after its `[`, through its `]`.
fn parse_class(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    prev: &mut Option<char>,
) -> Result<ByteSet, GlobError> {
    let negated = matches!(chars.peek(), Some('!' | '^'));
    if negated {
        chars.next();
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    let mut first = true;
    // A `-` after a member: the next character ends a range from that member's start.
    let mut dash = false;
    loop {
        let c = chars.next().ok_or(GlobError::UnclosedClass)?;
        *prev = Some(c);
        match c {
            ']' if !first => break,
            '-' if !first && !dash => dash = true,
            c if dash => {
                let last = ranges.last_mut().expect("a dash follows a member");
                last.1 = c;
                if last.1 < last.0 {
                    return Err(GlobError::InvalidRange(last.0, last.1));
                }
                dash = false;
            }
            c => ranges.push((c, c)),
        }
        first = false;
    }
    if dash {
        ranges.push(('-', '-'));
    }
    let mut set = ByteSet::EMPTY;
    for &(lo, hi) in &ranges {
        for c in [lo, hi] {
            if !c.is_ascii() {
                return Err(GlobError::NonAsciiClass(c));
            }
        }
        for b in lo as u8..=hi as u8 {
            set.insert(b);
        }
    }
    if negated {
        for w in &mut set.0 {
            *w = !*w;
        }
    }
    Ok(set)
}

/// Whether a sequence matches only the empty path and globset dropped it as an alternative (it is
/// made only of groups whose alternatives are all such sequences).
fn vacuous(nodes: &[Node]) -> bool {
    nodes
        .iter()
        .all(|n| matches!(n, Node::Alternates(alts) if alts.iter().all(|a| vacuous(a))))
}

/// One NFA instruction.
#[derive(Clone, Copy, Debug)]
enum Inst {
    /// Consume one byte in the set, then go to the next instruction.
    Byte(ByteSet),
    /// Continue at both targets.
    Split(usize, usize),
    Jump(usize),
    Match,
}

fn compile(nodes: &[Node], prog: &mut Vec<Inst>) {
    for node in nodes {
        match node {
            Node::Literal(c) => {
                let mut buf = [0; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    prog.push(byte(b));
                }
            }
            Node::One => prog.push(Inst::Byte(ByteSet::not_slash())),
            Node::Star => repeat(ByteSet::not_slash(), prog),
            Node::DeepPrefix => optional_dirs(prog),
            Node::DeepSuffix => {
                prog.push(byte(b'/'));
                repeat(ByteSet::ALL, prog);
            }
            Node::DeepMiddle => {
                prog.push(byte(b'/'));
                optional_dirs(prog);
            }
            Node::Class(set) => prog.push(Inst::Byte(*set)),
            Node::Alternates(alts) => {
                let alts: Vec<&Vec<Node>> = alts.iter().filter(|a| !vacuous(a)).collect();
                let mut jumps = Vec::new();
                for (i, alt) in alts.iter().enumerate() {
                    let split = prog.len();
                    let last = i + 1 == alts.len();
                    if !last {
                        prog.push(Inst::Split(split + 1, 0));
                    }
                    compile(alt, prog);
                    if !last {
                        jumps.push(prog.len());
                        prog.push(Inst::Jump(0));
                        prog[split] = Inst::Split(split + 1, prog.len());
                    }
                }
                let end = prog.len();
                for j in jumps {
                    prog[j] = Inst::Jump(end);
                }
            }
        }
    }
}

fn byte(b: u8) -> Inst {
    let mut set = ByteSet::EMPTY;
    set.insert(b);
    Inst::Byte(set)
}

/// Any number of bytes from `set`.
fn repeat(set: ByteSet, prog: &mut Vec<Inst>) {
    let start = prog.len();
    prog.push(Inst::Split(start + 1, start + 3));
    prog.push(Inst::Byte(set));
    prog.push(Inst::Jump(start));
}

/// Nothing, or any bytes followed by `/`.
fn optional_dirs(prog: &mut Vec<Inst>) {
    let start = prog.len();
    prog.push(Inst::Split(start + 1, start + 5));
    repeat(ByteSet::ALL, prog);
    prog.push(byte(b'/'));
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    prog: Vec<Inst>,
}

impl Glob {
    /// Parses and compiles a pattern.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let nodes = parse(pattern)?;
        let mut prog = Vec::new();
        if nodes == [Node::DeepPrefix] {
            // A whole-pattern `**` matches every path, the empty one included.
            repeat(ByteSet::ALL, &mut prog);
        } else {
            compile(&nodes, &mut prog);
        }
        prog.push(Inst::Match);
        Ok(Glob { prog })
    }

    /// Whether the whole path matches.
    pub fn is_match(&self, path: &str) -> bool {
        let n = self.prog.len();
        let mut current = States::new(n);
        let mut next = States::new(n);
        let mut stack = Vec::new();
        current.add(0, &self.prog, &mut stack);
        for (i, &b) in path.as_bytes().iter().enumerate() {
            if current.list.is_empty() {
                return false;
            }
            next.clear(i + 2);
            for &pc in &current.list {
                if matches!(self.prog[pc], Inst::Byte(set) if set.contains(b)) {
                    next.add(pc + 1, &self.prog, &mut stack);
                }
            }
            std::mem::swap(&mut current, &mut next);
        }
        current
            .list
            .iter()
            .any(|&pc| matches!(self.prog[pc], Inst::Match))
    }
}

/// The set of live instructions (only `Byte` and `Match` are listed; `Split` and `Jump` are
/// followed when adding). An instruction is visited at most once per step: `visited[pc]` holds the
/// step that last visited it.
struct States {
    list: Vec<usize>,
    visited: Vec<usize>,
    step: usize,
}

impl States {
    fn new(n: usize) -> States {
        States {
            list: Vec::new(),
            visited: vec![0; n],
            step: 1,
        }
    }

    fn clear(&mut self, step: usize) {
        self.list.clear();
        self.step = step;
    }

    fn add(&mut self, pc: usize, prog: &[Inst], stack: &mut Vec<usize>) {
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            if std::mem::replace(&mut self.visited[pc], self.step) == self.step {
                continue;
            }
            match prog[pc] {
                Inst::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Inst::Jump(a) => stack.push(a),
                Inst::Byte(_) | Inst::Match => self.list.push(pc),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        Glob::new(pattern).unwrap().is_match(path)
    }

    #[test]
    fn segments_and_separators() {
        assert!(m("src/*.rs", "src/main.rs") && !m("src/*.rs", "src/a/main.rs"));
        assert!(m("?.rs", "a.rs") && !m("?", "/") && !m("?", "é") && m("??", "é"));
        assert!(m("**", "") && m("**", "a/b") && m("**/", "a/b"));
        assert!(m("**/a", "a") && m("**/a", "x/y/a") && m("**/a", "/a") && !m("**/a", "xa"));
        assert!(m("a/**/b", "a/b") && m("a/**/b", "a/x/y/b") && !m("a/**/b", "ab"));
        assert!(m("a/**", "a/") && m("a/**", "a/x/y") && !m("a/**", "a"));
        assert!(m("a**", "abc") && !m("a**", "a/b") && m("**b", "ab") && !m("**b", "a/b"));
        assert!(m("a/**/**", "a/") && m("**/**/a", "x/a") && m("a/**/**/b", "a/b"));
    }

    #[test]
    fn classes() {
        assert!(m("[]]", "]") && m("[-a]", "-") && m("[a-]", "-") && m("[a-c]", "b"));
        assert!(m("[!a]", "/") && !m("[!a]", "a") && m("[^a]", "b") && m("[/]", "/"));
        assert!(m("[a-c-e]", "d"), "a dash after a range extends it");
        assert_eq!(
            Glob::new("[z-a]").unwrap_err(),
            GlobError::InvalidRange('z', 'a')
        );
        assert_eq!(
            Glob::new("[c-e-a]").unwrap_err(),
            GlobError::InvalidRange('c', 'a')
        );
        for bad in ["[", "[]", "[!", "[!]", "a[b"] {
            assert_eq!(
                Glob::new(bad).unwrap_err(),
                GlobError::UnclosedClass,
                "{bad}"
            );
        }
        assert!(Glob::new("[é]").unwrap_err().is_unsupported());
    }

    #[test]
    fn alternates() {
        assert!(m("{a,b}.txt", "a.txt") && m("{a,b}.txt", "b.txt") && !m("{a,b}.txt", "c.txt"));
        assert!(m("{a,{b,c}}", "c") && m("a,b", "a,b"));
        assert!(m("x{a,}", "xa") && !m("x{a,}", "x") && m("x{}y", "xy") && m("x{,{}}y", "xy"));
        assert!(m("a{**/b,c}", "ab") && m("a{**/b,c}", "ax/b") && m("{a/**,b}", "a/x"));
        assert_eq!(Glob::new("{a").unwrap_err(), GlobError::UnclosedAlternates);
        assert_eq!(Glob::new("a}").unwrap_err(), GlobError::UnopenedAlternates);
        assert_eq!(Glob::new("a\\").unwrap_err(), GlobError::DanglingEscape);
        assert!(m("\\*", "*") && !m("\\*", "a"));
        let deep = "{".repeat(MAX_ALTERNATE_DEPTH) + &"}".repeat(MAX_ALTERNATE_DEPTH);
        assert!(Glob::new(&deep).is_ok());
        let deeper = "{".repeat(MAX_ALTERNATE_DEPTH + 1);
        assert_eq!(Glob::new(&deeper).unwrap_err(), GlobError::TooDeep);
    }

    #[test]
    fn adversarial_patterns_stay_linear() {
        let pattern = "*a".repeat(200) + "b";
        let path = "a".repeat(4000);
        assert!(!m(&pattern, &path));
    }
}
