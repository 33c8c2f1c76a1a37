//! Differential test of the `mutable_globs` matcher ([`autoresearch_core::glob`]) against the
//! `globset` crate it replaced, configured exactly as `mutable_globs` configured it (literal
//! separator, backslash escapes, case-sensitive, no empty alternates), over generated patterns
//! and paths:
//!
//! - a pattern is accepted by both or by neither, with the same error message, except for the
//!   features the matcher refuses on purpose (`GlobError::is_unsupported`);
//! - an accepted pattern matches exactly the same paths (globset through a `GlobSet`, the type
//!   the surface used);
//! - a whole `MutableSurface` of several patterns agrees with one `GlobSet` of them.
//!
//! Paths whose last segment is `..` are left out: globset gives them no file name (its
//! `Candidate`), so its extension shortcut misses them (`{}..` did not match `..`), while the
//! matcher compares the whole path like globset's regex. git never reports such a path.
//!
//! Cases per property: 4096, or `PROPTEST_CASES`.

use autoresearch_core::glob::{Glob, GlobError};
use autoresearch_core::spec::path_problem;
use autoresearch_core::surface::MutableSurface;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4096)
}

fn dot_dot(path: &str) -> bool {
    path.rsplit('/').next() == Some("..")
}

fn reference(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        let glob = GlobBuilder::new(p)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| e.kind().to_string())?;
        builder.add(glob);
    }
    builder.build().map_err(|e| format!("set: {e}"))
}

/// Pattern pieces that exercise every token kind and the parser's corner cases.
fn atom() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => prop::sample::select(vec!["a", "b", "ab", ".", "-", ",", "é", "/", "x.rs"]).prop_map(str::to_owned),
        2 => Just("*".to_owned()),
        2 => Just("**".to_owned()),
        1 => Just("***".to_owned()),
        2 => Just("?".to_owned()),
        1 => prop::sample::select(vec!["/**", "**/", "/**/", "\\*", "\\,", "\\{", "\\/", "\\", "}", "!"]).prop_map(str::to_owned),
        2 => class(),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        (
            prop::collection::vec(prop::collection::vec(inner, 0..3), 1..4),
            prop::bool::weighted(0.95),
        )
            .prop_map(|(branches, closed)| {
                let body: Vec<String> = branches.into_iter().map(|b| b.concat()).collect();
                format!("{{{}{}", body.join(","), if closed { "}" } else { "" })
            })
    })
}

fn class() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "", "!", "^"]),
        prop::collection::vec(
            prop::sample::select(vec![
                "a", "b", "-", "]", "a-c", "c-a", "/", "é", ",", "{", "!", "^", "*", "a-c-e", "a--",
            ]),
            0..4,
        ),
        prop::bool::weighted(0.9),
    )
        .prop_map(|(neg, items, closed)| {
            format!("[{neg}{}{}", items.concat(), if closed { "]" } else { "" })
        })
}

fn pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(atom(), 1..6).prop_map(|v| v.concat()),
        1 => "[ab/*?{},\\[\\]!^.é\\\\-]{0,10}",
    ]
}

/// A path built by walking the pattern, so that many paths nearly or exactly match: each
/// character is kept, dropped or replaced according to `choices`.
fn derived(pattern: &str, choices: &[u8]) -> String {
    let mut out = String::new();
    for (i, c) in pattern.chars().enumerate() {
        let k = choices[i % choices.len()];
        match c {
            '*' => out.push_str(["", "a", "b/a", "/", "ab"][usize::from(k % 5)]),
            '?' => out.push_str(["a", "/", "é", "", "-"][usize::from(k % 5)]),
            '[' | ']' | '{' | '}' | ',' | '!' | '^' | '\\' if k % 3 != 0 => {}
            '-' if k % 4 == 0 => out.push('b'),
            c => out.push(c),
        }
    }
    out
}

fn paths(pattern: String) -> impl Strategy<Value = Vec<String>> {
    (
        prop::collection::vec("[ab/.é,\\-\\]\\[{}*]{0,8}", 0..4),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 1..16), 1..6),
    )
        .prop_map(move |(random, choices)| {
            let mut all = random;
            all.extend(choices.iter().map(|c| derived(&pattern, c)));
            all
        })
}

fn pattern_and_paths() -> impl Strategy<Value = (String, Vec<String>)> {
    pattern().prop_flat_map(|p| {
        let paths = paths(p.clone());
        (Just(p), paths)
    })
}

/// Compares one pattern; returns whether it was accepted by both.
fn compare(pattern: &str, paths: &[String]) -> Result<bool, TestCaseError> {
    let paths = paths.iter().filter(|p| !dot_dot(p));
    let mine = Glob::new(pattern);
    let theirs = reference(&[pattern.to_owned()]);
    match (mine, theirs) {
        (Ok(g), Ok(set)) => {
            for path in paths {
                prop_assert_eq!(
                    g.is_match(path),
                    set.is_match(path),
                    "pattern {:?} path {:?}",
                    pattern,
                    path
                );
            }
            Ok(true)
        }
        (Err(e), Ok(_)) => {
            prop_assert!(
                e.is_unsupported(),
                "refused {pattern:?} ({e}) that globset accepts"
            );
            Ok(false)
        }
        (Ok(_), Err(e)) => Err(TestCaseError::fail(format!(
            "accepted {pattern:?} that globset refuses ({e})"
        ))),
        (Err(mine), Err(theirs)) => {
            if !mine.is_unsupported() {
                prop_assert_eq!(mine.to_string(), theirs, "pattern {:?}", pattern);
            }
            Ok(false)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn glob_agrees_with_globset((pattern, paths) in pattern_and_paths()) {
        compare(&pattern, &paths)?;
    }

    #[test]
    fn surface_agrees_with_a_glob_set(
        patterns in prop::collection::vec(pattern(), 1..4),
        random in prop::collection::vec("[ab/.é,\\-]{1,8}", 0..4),
        choices in prop::collection::vec(prop::collection::vec(any::<u8>(), 1..16), 1..4),
    ) {
        let mut paths = random;
        for (i, c) in choices.iter().enumerate() {
            paths.push(derived(&patterns[i % patterns.len()], c));
        }
        match (MutableSurface::new(&patterns), reference(&patterns)) {
            (Ok(surface), Ok(set)) => {
                for path in paths.iter().filter(|p| !dot_dot(p)) {
                    prop_assert_eq!(surface.matches(path), set.is_match(path), "{:?} {:?}", patterns, path);
                }
            }
            (Ok(_), Err(e)) => prop_assert!(false, "accepted {patterns:?} that globset refuses ({e})"),
            // The surface refuses unsafe paths (leading `/`, `..`, backslashes, …) before globs.
            (Err((i, rule)), theirs) => match path_problem(&patterns[i]) {
                Some(problem) => prop_assert_eq!(rule, problem),
                None => {
                    let e = Glob::new(&patterns[i]).unwrap_err();
                    prop_assert_eq!(&rule, &e.rule());
                    if !e.is_unsupported() {
                        prop_assert_eq!(rule, format!("must be a valid glob ({})", theirs.unwrap_err()));
                    }
                }
            },
        }
    }
}

#[test]
fn known_corner_cases_agree() {
    let patterns = [
        "**",
        "**/",
        "**/**",
        "**/a",
        "a/**",
        "a/**/**",
        "a/**/**/b",
        "**/**/a",
        "a**",
        "**a",
        "a/**b",
        "a/***",
        "{**}",
        "{**/a,b}",
        "a{**/b,c}",
        "{a/**,b}",
        "{a/**}/c",
        "{a\\,**}",
        "{a\\{**}",
        "\\/**",
        "x{a,}",
        "x{}y",
        "x{,{}}y",
        "{,a}",
        "{{},a}",
        "[]]",
        "[!]]",
        "[!]",
        "[]-a]",
        "[a-]",
        "[-a]",
        "[a--]",
        "[!--]",
        "[a-c-e]",
        "[c-e-a]",
        "[z-a]",
        "[!a]",
        "[^/]",
        "[/]",
        "[é]",
        "?",
        "é?",
        "a,b",
        "a}",
        "{a",
        "a\\",
        "\\*",
        "src/*.rs",
        "*.rs",
        "**/*.rs",
        "src/**/*.rs",
    ];
    let paths: Vec<String> = [
        "",
        "/",
        "a",
        "b",
        "ab",
        "a/",
        "/a",
        "a/b",
        "a/x/b",
        "ax/b",
        "xa",
        "x",
        "xy",
        "xa",
        "a/c",
        "]",
        "-",
        "!",
        "d",
        "é",
        "éa",
        "a,b",
        "*",
        ",",
        "{",
        "a/.rs",
        ".rs",
        "x.rs",
        "src/x.rs",
        "src/a/x.rs",
        "src/",
        "a//b",
        "//",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut accepted = 0;
    for p in patterns {
        if compare(p, &paths).unwrap_or_else(|e| panic!("{e}")) {
            accepted += 1;
        }
    }
    assert!(accepted > 40, "{accepted}");
    assert_eq!(Glob::new("[é]").unwrap_err(), GlobError::NonAsciiClass('é'));
}

#[test]
fn deep_nesting_is_refused_where_globset_accepts_it() {
    let deep = "{a".repeat(40) + &"}".repeat(40);
    assert!(Glob::new(&deep).unwrap_err().is_unsupported());
    assert!(reference(&[deep]).is_ok());
}
