//! Tidy: no import cycles between the files of any crate of the workspace, and the binding crate
//! (`crates/wasm-adapter`) kept to a size a reader takes in.
//!
//! A file depends on another when its code or its docs name an item there: `crate::a::b`,
//! `super::x`, a submodule's `child::x`, or a name the crate root re-exports from a module
//! (`crate::Name`). The crate root's own `pub use` lines and `mod` declarations are its index,
//! not dependencies; `tests` modules (and `#[cfg(test)] mod tests { … }` blocks) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("lib" | "main" | "mod")
    ) {
        parts.pop();
    }
    parts
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `a::b::c` segments starting at `text` (after a `crate::`/`super::`/`child::` head).
fn path_segments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let ident: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if ident.is_empty() {
            break;
        }
        rest = &rest[ident.len()..];
        out.push(ident);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    out
}

/// The code of a file without non-doc comments, `#[cfg(test)] mod tests { … }` and (for the root)
/// its `pub use` index.
fn relevant(text: &str, root: bool) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let doc = trimmed.starts_with("///") || trimmed.starts_with("//!");
        if trimmed.starts_with("//") && !doc {
            continue;
        }
        if root && trimmed.starts_with("pub use ") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Names the root re-exports (`pub use a::{B, C as D};`, `pub use a::B;`), by their module.
fn reexports(root_text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let joined = root_text.replace('\n', " ");
    for stmt in joined.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.rsplit(" as ").next().unwrap_or("").trim();
            let name = name.rsplit("::").next().unwrap_or(name);
            if !name.is_empty() && name != "*" {
                out.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    out
}

fn edges(src: &Path) -> (BTreeSet<Module>, BTreeSet<(Module, Module)>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Module, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let known: BTreeSet<Module> = modules.keys().cloned().collect();
    let root_text = modules
        .get(&Vec::new())
        .map(|f| std::fs::read_to_string(f).unwrap())
        .unwrap_or_default();
    let reexported = reexports(&root_text);
    let mut out = BTreeSet::new();
    for (module, file) in &modules {
        if module.last().is_some_and(|m| m == "tests") {
            continue;
        }
        let text = relevant(&std::fs::read_to_string(file).unwrap(), module.is_empty());
        let resolve = |base: Module, segs: &[String]| -> Option<Module> {
            if base.is_empty()
                && let Some(m) = segs.first().and_then(|s| reexported.get(s))
            {
                return Some(vec![m.clone()]);
            }
            (0..=segs.len()).rev().find_map(|i| {
                let mut cand = base.clone();
                cand.extend(segs[..i].iter().cloned());
                known.contains(&cand).then_some(cand)
            })
        };
        let text_chars = text.as_str();
        for (i, _) in text_chars.match_indices("::") {
            // The identifier before `::`, not itself preceded by `::` or an identifier char.
            let before = &text_chars[..i];
            let head: String = before
                .chars()
                .rev()
                .take_while(|&c| is_ident(c))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if head.is_empty() {
                continue;
            }
            let start = i - head.len();
            if text_chars[..start].ends_with("::") {
                continue;
            }
            let after = &text_chars[i + 2..];
            let mut segs: Vec<String> = if let Some(list) = after.strip_prefix('{') {
                // `use crate::{a, b::c}`: each first segment.
                let inner = list.split('}').next().unwrap_or("");
                inner
                    .split(',')
                    .filter_map(|s| path_segments(s.trim()).into_iter().next())
                    .collect()
            } else {
                vec![path_segments(after).join("::")]
            };
            segs.retain(|s| !s.is_empty());
            for seg in segs {
                let segs: Vec<String> = seg.split("::").map(str::to_owned).collect();
                let target = match head.as_str() {
                    "crate" => resolve(Vec::new(), &segs),
                    "super" => {
                        let mut base = module.clone();
                        base.pop();
                        let mut segs = segs.as_slice();
                        while segs.first().is_some_and(|s| s == "super") {
                            base.pop();
                            segs = &segs[1..];
                        }
                        resolve(base, segs)
                    }
                    child => {
                        let mut cand = module.clone();
                        cand.push(child.to_owned());
                        known.contains(&cand).then_some(cand)
                    }
                };
                if let Some(t) = target
                    && &t != module
                    && t.last().is_none_or(|m| m != "tests")
                {
                    out.insert((module.clone(), t));
                }
            }
        }
    }
    (known, out)
}

/// Strongly connected components with more than one file.
fn cycles(nodes: &BTreeSet<Module>, edges: &BTreeSet<(Module, Module)>) -> Vec<Vec<Module>> {
    let reach = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for (a, b) in edges {
                if *a == n && seen.insert(b.clone()) {
                    stack.push(b.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&Module, BTreeSet<Module>> =
        nodes.iter().map(|n| (n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in nodes {
        if done.contains(n) || !reachable[n].contains(n) {
            continue;
        }
        let comp: Vec<Module> = nodes
            .iter()
            .filter(|m| reachable[n].contains(*m) && reachable[*m].contains(n))
            .cloned()
            .collect();
        done.extend(comp.iter().cloned());
        if comp.len() > 1 {
            out.push(comp);
        }
    }
    out
}

#[test]
fn no_import_cycles_between_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut sources = vec![root.join("xtask/src")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        sources.push(entry.unwrap().path().join("src"));
    }
    sources.sort();
    let show = |m: &Module| {
        if m.is_empty() {
            "(root)".to_owned()
        } else {
            m.join("/")
        }
    };
    let mut found = Vec::new();
    for src in &sources {
        let (nodes, edges) = edges(src);
        for comp in cycles(&nodes, &edges) {
            let inner: Vec<String> = edges
                .iter()
                .filter(|(a, b)| comp.contains(a) && comp.contains(b))
                .map(|(a, b)| format!("{} -> {}", show(a), show(b)))
                .collect();
            found.push(format!(
                "{}: {}",
                src.strip_prefix(root).unwrap().display(),
                inner.join(", ")
            ));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The most lines `crates/wasm-adapter/src` may hold outside its tests (`tests.rs` files and
/// `#[cfg(test)] mod tests { … }` blocks): every line counts, docs and blank lines too. The
/// adapter only binds; logic that makes it grow belongs in a core. Lower it when the adapter
/// shrinks.
const ADAPTER_MAX_LINES: usize = 2_500;

#[test]
fn the_adapter_stays_small() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(&root.join("crates/wasm-adapter/src"), &mut files);
    let mut lines = 0;
    for file in files.iter().filter(|f| !f.ends_with("tests.rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        let code = match text.find("#[cfg(test)]\nmod tests {") {
            Some(i) => &text[..i],
            None => &text,
        };
        lines += code
            .lines()
            .filter(|line| line.trim() != "#[cfg(test)]" && line.trim() != "mod tests;")
            .count();
    }
    assert!(
        lines <= ADAPTER_MAX_LINES,
        "crates/wasm-adapter/src holds {lines} non-test lines, more than {ADAPTER_MAX_LINES}: \
         move logic into a core"
    );
}
