use super::*;

/// Fingerprint of a whole text, windowed the way callers do it.
fn fp_exit(tool: &str, exit_code: Option<i64>, text: &str) -> Option<Fingerprint> {
    let (head, tail) = Failure::windows(text);
    fingerprint(&Failure {
        tool,
        exit_code,
        head,
        tail,
    })
}

fn fp(text: &str) -> Option<Fingerprint> {
    fp_exit("bash", None, text)
}

#[track_caller]
fn assert_equivalent(a: &str, b: &str) {
    let (fa, fb) = (fp(a), fp(b));
    assert!(fa.is_some(), "no fingerprint for {a:?}");
    assert_eq!(
        fa,
        fb,
        "{a:?} and {b:?} should be equivalent (normalized {:?} vs {:?})",
        normalize(a),
        normalize(b)
    );
}

#[track_caller]
fn assert_distinct(a: &str, b: &str) {
    let (fa, fb) = (fp(a), fp(b));
    assert!(
        fa.is_some() && fb.is_some(),
        "no fingerprint for {a:?} or {b:?}"
    );
    assert_ne!(
        fa,
        fb,
        "{a:?} and {b:?} should differ (normalized {:?} vs {:?})",
        normalize(a),
        normalize(b)
    );
}

/// FNV-1a 64 of a byte string, written independently of `Fnv1a`.
fn reference_fnv(stream: &[u8]) -> u64 {
    stream.iter().fold(0xcbf29ce484222325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

/// The documented hash stream prefix: tool, separator, exit code.
fn stream_prefix(tool: &str, exit_code: Option<i64>) -> Vec<u8> {
    let mut s = tool.as_bytes().to_vec();
    s.push(0xFF);
    match exit_code {
        None => s.push(0),
        Some(c) => {
            s.push(1);
            s.extend_from_slice(&c.to_le_bytes());
        }
    }
    s
}

// ----- normalize: golden strings ------------------------------------------------------------

#[test]
fn normalize_golden_strings() {
    let cases: &[(&str, &str)] = &[
        ("TypeError at line 123", "typeerror at line #"),
        ("  a\r\n\t b \u{a0} c  \n", "a b c"),
        (
            "segfault at 0x7ffe1234 in 0XDEADBEEF",
            "segfault at 0x# in 0x#",
        ),
        ("ptr0x1f", "ptr0x#"),
        ("0x", "#x"),
        ("0xg", "#xg"),
        ("100x200", "#x#"),
        (
            "request 123E4567-e89b-12d3-A456-426614174000 failed",
            "request <uuid> failed",
        ),
        ("req-123e4567-e89b-12d3-a456-426614174000.", "req-<uuid>."),
        (
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "commit <hex>",
        ),
        ("cache_5d41402abc4b", "cache_<hex>"),
        ("deadbeef facade", "deadbeef facade"),
        ("20240102", "#"),
        ("abc1234", "abc#"),
        ("line123", "line#"),
        ("file_1.py", "file_#.py"),
        ("name_123", "name_#"),
        ("v1.2.3", "v#.#.#"),
        ("2024-01-02T03:04:05Z", "#-#-#t#:#:#z"),
        ("exit code 137", "exit code #"),
        ("/home/a/proj/src/app.py:12:5", "<dir>/app.py:#:#"),
        ("/tmp/tmp.Xy12/src/app.py", "<dir>/app.py"),
        (r"C:\Users\a\x.js", "<dir>/x.js"),
        ("./src/a.ts", "<dir>/a.ts"),
        ("../x/y", "<dir>/y"),
        ("a.ts", "a.ts"),
        ("/tmp/build-77/", "<dir>/build-#/"),
        ("foo/", "foo/"),
        (r"C:\", "c:/"),
        ("/", "/"),
        ("//", "//"),
        (r"\\", r"\\"),
        ("a / b", "a / b"),
        ("and/or 3/4", "<dir>/or <dir>/#"),
        (
            "File \"/usr/lib/python3.11/foo.py\", line 12, in <module>",
            "file \"<dir>/foo.py\", line #, in <module>",
        ),
        ("--out=/tmp/x/Y.txt", "--out=<dir>/y.txt"),
        ("https://example.com/a/b/c.js?x=1", "https:<dir>/c.js?x=#"),
        ("https://example.com/", "https:<dir>/example.com/"),
        ("/cache/5d41402abc4b2a76.json", "<dir>/<hex>.json"),
        ("Ünïcode Straße 42", "Ünïcode straße #"),
        ("/données/été/Ça.txt", "<dir>/Ça.txt"),
        ("TypeError: x is undefined", "typeerror: x is undefined"),
        ("", ""),
        (" \n\t ", ""),
    ];
    for (input, expected) in cases {
        assert_eq!(normalize(input), *expected, "normalize({input:?})");
    }
}

// ----- equivalence classes ------------------------------------------------------------------

#[test]
fn line_numbers_are_equivalent() {
    assert_equivalent("TypeError at line 123", "TypeError at line 456");
    assert_equivalent("src/app.py:12:5: error", "src/app.py:9999:1: error");
}

#[test]
fn hex_addresses_are_equivalent() {
    assert_equivalent("segfault at 0x7ffe1234", "segfault at 0xdeadbeef");
    assert_equivalent("object at 0x1", "object at 0X00007F3A2B1C0D00");
}

#[test]
fn uuids_are_equivalent() {
    assert_equivalent(
        "session 123e4567-e89b-12d3-a456-426614174000 expired",
        "session 9F0C2D4E-1B3A-4C5D-8E7F-0A1B2C3D4E5F expired",
    );
}

#[test]
fn long_hex_identifiers_are_equivalent() {
    assert_equivalent(
        "HEAD is now at 9fceb02d0ae598e95dc970b74767f19372d61af8 oops",
        "HEAD is now at 1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c oops",
    );
}

#[test]
fn timestamps_are_equivalent() {
    assert_equivalent(
        "[2024-01-02T03:04:05.123Z] ERROR boom",
        "[2025-12-31T23:59:59.9Z] ERROR boom",
    );
    assert_equivalent("at 12:01:02 PM", "at 9:59:00 PM");
}

#[test]
fn paths_with_the_same_file_name_are_equivalent() {
    assert_equivalent(
        "error in /home/a/proj/src/app.py:12:5",
        "error in /tmp/build-77/src/app.py:99:1",
    );
    assert_equivalent(
        "cannot open /tmp/tmp.Xy12ab/out.log",
        "cannot open /var/folders/zz/T/tmp.QQ/out.log",
    );
    assert_equivalent(r"at C:\Users\a\proj\x.js:1", "at ./lib/x.js:2");
    assert_equivalent("see ../x/y", "see /abs/other/y");
}

#[test]
fn digits_glued_to_words_are_equivalent() {
    assert_equivalent("failed at line123", "failed at line7");
    assert_equivalent("test file_1.py failed", "test file_22.py failed");
    assert_equivalent("no such var name_123", "no such var name_9");
    assert_equivalent("requires v1.2.3", "requires v10.0.22");
}

#[test]
fn whitespace_and_ascii_case_are_equivalent() {
    assert_equivalent(
        "TypeError:  X is\r\n\tundefined",
        "  typeerror: x IS undefined\n",
    );
}

#[test]
fn different_messages_differ() {
    assert_distinct(
        "TypeError: x is undefined",
        "ReferenceError: x is not defined",
    );
    assert_distinct("deadbeef", "cafebabe");
    assert_distinct("Straße", "STRASSE");
    assert_distinct("a.ts", "./a.ts");
}

#[test]
fn different_file_names_differ() {
    assert_distinct("cannot read /srv/a.txt", "cannot read /srv/b.txt");
    assert_distinct("error in src/app.py:1", "error in src/lib.py:1");
}

// ----- tool and exit code -------------------------------------------------------------------

#[test]
fn exit_codes_differ_when_passed_as_exit_code() {
    assert_ne!(
        fp_exit("bash", Some(1), "tests failed"),
        fp_exit("bash", Some(137), "tests failed")
    );
    assert_eq!(
        fp_exit("bash", Some(1), "3 tests failed"),
        fp_exit("bash", Some(1), "17 tests failed")
    );
    // In the text, exit codes are just numbers.
    assert_equivalent("exit code 1", "exit code 137");
}

#[test]
fn same_text_different_tool_differs() {
    assert_ne!(fp_exit("bash", None, "X"), fp_exit("grep", None, "X"));
    // The separator after the tool name keeps tool and exit code apart.
    assert_ne!(fp_exit("ab", Some(0), ""), fp_exit("a", Some(0), ""));
}

#[test]
fn none_and_some_exit_code_differ() {
    assert_ne!(
        fp_exit("bash", None, "boom"),
        fp_exit("bash", Some(0), "boom")
    );
    assert_ne!(
        fp_exit("bash", None, "boom"),
        fp_exit("bash", Some(1), "boom")
    );
}

// ----- nothing to compare -------------------------------------------------------------------

#[test]
fn empty_or_whitespace_text_without_exit_code_is_none() {
    for text in ["", " ", "\n\r\t  \u{a0}\u{2003}"] {
        assert_eq!(fp_exit("bash", None, text), None, "{text:?}");
    }
    let spaces = " ".repeat(10 * WINDOW_BYTES);
    assert_eq!(fp_exit("bash", None, &spaces), None);
    assert_eq!(
        fingerprint(&Failure {
            tool: "bash",
            exit_code: None,
            head: "  ",
            tail: "\n",
        }),
        None
    );
}

#[test]
fn empty_text_with_exit_code_is_some() {
    let a = fp_exit("bash", Some(1), "");
    let b = fp_exit("bash", Some(2), " \n");
    assert!(a.is_some());
    assert!(b.is_some());
    assert_ne!(a, b);
}

// ----- windows ------------------------------------------------------------------------------

#[test]
fn windows_keep_short_texts_whole() {
    let exact = "a".repeat(2 * WINDOW_BYTES);
    assert_eq!(Failure::windows(&exact), (exact.as_str(), ""));
    assert_eq!(Failure::windows("short"), ("short", ""));
    assert_eq!(Failure::windows(""), ("", ""));
}

#[test]
fn windows_split_long_texts() {
    let text = "h".repeat(WINDOW_BYTES) + "m" + &"t".repeat(WINDOW_BYTES);
    assert_eq!(text.len(), 2 * WINDOW_BYTES + 1);
    let (head, tail) = Failure::windows(&text);
    assert_eq!(head, "h".repeat(WINDOW_BYTES));
    assert_eq!(tail, "t".repeat(WINDOW_BYTES));
}

#[test]
fn windows_cut_on_char_boundaries() {
    let pieces = ["é", "€", "😀", "aé", "a😀", "ab😀", "abc😀"];
    for piece in pieces {
        for extra in 0..4 {
            let text = "x".repeat(extra) + &piece.repeat(3 * WINDOW_BYTES / piece.len());
            let (head, tail) = Failure::windows(&text);
            assert!(head.len() <= WINDOW_BYTES && head.len() + 3 >= WINDOW_BYTES);
            assert!(tail.len() <= WINDOW_BYTES && tail.len() + 3 >= WINDOW_BYTES);
            assert!(text.starts_with(head), "{piece:?}");
            assert!(text.ends_with(tail), "{piece:?}");
            assert!(fp(&text).is_some());
        }
    }
}

#[test]
fn fingerprint_clips_long_head_and_tail_itself() {
    let big = "🦀é".repeat(10_000) + "boom 123 at /x/y.rs";
    let (head, tail) = Failure::windows(&big);
    let clipped = fingerprint(&Failure {
        tool: "t",
        exit_code: None,
        head,
        tail,
    });
    let unclipped = fingerprint(&Failure {
        tool: "t",
        exit_code: None,
        head: &big,
        tail: &big,
    });
    assert!(clipped.is_some());
    assert_eq!(clipped, unclipped);
}

#[test]
fn ten_mib_text_equals_its_windows() {
    let big = "line 1: ok\n".repeat(10 * 1024 * 1024 / 11) + "Error: boom at /tmp/x/app.rs:7";
    assert!(big.len() >= 10 * 1024 * 1024 - 11);
    let (head, tail) = Failure::windows(&big);
    let failure = |head, tail| {
        fingerprint(&Failure {
            tool: "bash",
            exit_code: Some(1),
            head,
            tail,
        })
    };
    assert!(failure(head, tail).is_some());
    assert_eq!(failure(&big, ""), failure(head, tail));
    assert_eq!(failure(&big, &big), failure(head, tail));
    // Only the windows are read: whatever lies between them does not matter.
    let small = head.to_owned() + "\nsomething else entirely\n" + tail;
    assert_eq!(fp_exit("bash", Some(1), &small), failure(head, tail));
}

#[test]
fn texts_sharing_a_long_prefix_differ_by_their_tails() {
    let prefix = "x".repeat(5 * 1024) + "\n";
    assert_distinct(
        &(prefix.clone() + "error: A"),
        &(prefix.clone() + "error: B"),
    );
    // Also when the texts are long enough to be windowed.
    let middle = "progress line\n".repeat(2000);
    assert_distinct(
        &(prefix.clone() + &middle + "error: A"),
        &(prefix + &middle + "error: B"),
    );
}

#[test]
fn texts_sharing_a_long_suffix_differ_by_their_heads() {
    let suffix = "\nprogress line".repeat(2000);
    assert_distinct(
        &("error: A".to_owned() + &suffix),
        &("error: B".to_owned() + &suffix),
    );
}

/// Equivalent long texts whose numbers differ in length (so every raw window cut falls at a
/// different place) still get equal fingerprints.
#[test]
fn windowed_fingerprints_survive_shifted_cuts() {
    let log = |seed: u64| {
        let mut s = String::new();
        for i in 0..600_u64 {
            let n = (i * 7919 + seed * 104_729) % 100_003;
            let digits = n.to_string().repeat(1 + (n % 3) as usize);
            s.push_str(&format!(
                "test_case_{i} failed at /tmp/run-{digits}/src/mod_{n}.py:{n} after {digits}ms\n"
            ));
        }
        s
    };
    let base = fp(&log(0));
    assert!(base.is_some());
    for seed in 1..40 {
        let text = log(seed);
        assert!(text.len() > 2 * WINDOW_BYTES);
        assert_eq!(fp(&text), base, "seed {seed}");
    }
    // A tail-only failure (what shell callers pass) behaves the same.
    let tail_only = |text: &str| {
        let (head, tail) = Failure::windows(text);
        fingerprint(&Failure {
            tool: "bash",
            exit_code: Some(1),
            head: "",
            tail: if tail.is_empty() { head } else { tail },
        })
    };
    let base = tail_only(&log(0));
    for seed in 1..40 {
        assert_eq!(tail_only(&log(seed)), base, "seed {seed}");
    }
    // But a different last line is still seen.
    assert_ne!(tail_only(&(log(0) + "oops")), base);
}

// ----- the hash stream ----------------------------------------------------------------------

#[test]
fn fingerprint_is_deterministic_and_stable() {
    let a = fp_exit("bash", Some(1), "TypeError at line 1");
    let b = fp_exit("bash", Some(1), "TypeError at line 1");
    assert_eq!(a, b);
    // Pinned (computed independently: FNV-1a 64 of b"bash\xff\x01" + 1i64 LE +
    // b"typeerror at line #\xfe"); a change here changes every stored fingerprint.
    assert_eq!(a.map(Fingerprint::value), Some(0x382f_cf56_6eca_b57a));
    assert_eq!(
        Fingerprint::from_value(0x0123_4567_89ab_cdef).to_string(),
        "0123456789abcdef"
    );
}

#[test]
fn whole_text_hashes_exactly_the_normalized_stream() {
    for (tool, exit_code, text) in [
        ("bash", Some(1_i64), "TypeError at line 123"),
        ("read", None, "  ENOENT: /tmp/x/a.txt\n"),
        ("bash", Some(-1), ""),
        ("x", Some(i64::MIN), &"é 1 ".repeat(2 * WINDOW_BYTES / 5)),
    ] {
        assert!(text.len() <= 2 * WINDOW_BYTES);
        let mut stream = stream_prefix(tool, exit_code);
        stream.extend_from_slice(normalize(text).as_bytes());
        stream.push(0xFE);
        assert_eq!(
            fp_exit(tool, exit_code, text).map(Fingerprint::value),
            Some(reference_fnv(&stream)),
            "{tool} {exit_code:?}"
        );
    }
}

#[test]
fn windowed_text_hashes_the_ends_of_the_normalized_stream() {
    let text = (0..2000)
        .map(|i| format!("step {i} of /tmp/w{i}/job.sh ok"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.len() > 2 * WINDOW_BYTES);
    let normalized = normalize(&text);
    let n = normalized.len();
    let mut stream = stream_prefix("bash", None);
    stream.extend_from_slice(&normalized.as_bytes()[..KEPT_BYTES]);
    stream.push(0xFE);
    stream.extend_from_slice(&normalized.as_bytes()[n - KEPT_BYTES..]);
    assert_eq!(
        fp(&text).map(Fingerprint::value),
        Some(reference_fnv(&stream))
    );
}

// ----- robustness ---------------------------------------------------------------------------

/// Properties every normalized text has.
#[track_caller]
fn check_normalized(input: &str) {
    let n = normalize(input);
    assert!(
        !n.starts_with(' ') && !n.ends_with(' '),
        "{input:?} -> {n:?}"
    );
    assert!(!n.contains("  "), "{input:?} -> {n:?}");
    assert!(
        !n.chars().any(|c| c.is_whitespace() && c != ' '),
        "{input:?} -> {n:?}"
    );
    assert!(
        !n.bytes().any(|b| b.is_ascii_uppercase()),
        "{input:?} -> {n:?}"
    );
    // Digits survive only as the `0` of `0x#`.
    let b = n.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_digit() {
            assert!(
                c == b'0' && b[i + 1..].starts_with(b"x#"),
                "{input:?} -> {n:?}"
            );
        }
    }
    assert!(n.len() <= 4 * input.len(), "{input:?} -> {n:?}");
}

#[test]
fn tricky_inputs_never_panic() {
    let w = WINDOW_BYTES;
    let mut inputs: Vec<String> = [
        "0x",
        "0X",
        "x0x",
        " 0x",
        "0x ",
        "0x0x0x",
        "00x1",
        "0xg",
        "a0x",
        "/",
        "\\",
        "\\\\",
        "//",
        "/a/",
        "a:",
        "C:",
        "C:\\",
        ":/",
        "a:/",
        "9",
        "09",
        "1a",
        "a1",
        "_1_",
        "1.",
        ".1",
        "-1-",
        "/1/",
        "1/",
        "<dir>/",
        "<uuid>",
        "0-0-0-0-0",
        "é",
        "😀",
        "\u{a0}",
        "\u{85}",
        "\0",
        "\u{1b}[31mred\u{1b}[0m",
        "12345678-1234-1234-1234-12345678901",
        "abcdef1",
        "abcdef12",
        "abcdef12g",
        "ffffffff-ffff-ffff-ffff-ffffffffffffa",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for sep in [" ", "\n", "/", "\\", "-", "_", ".", ":", "0", "x", "é"] {
        inputs.push(sep.repeat(3 * w));
    }
    for len in [2 * w - 1, 2 * w, 2 * w + 1, 3 * w] {
        inputs.push("a".repeat(len));
        inputs.push("1".repeat(len));
        inputs.push("/".repeat(len));
        inputs.push("0x".repeat(len / 2));
        inputs.push("a b/".repeat(len / 4));
        inputs.push("é".repeat(len / 2) + &"a".repeat(len % 2));
        inputs.push("😀".repeat(len / 4) + &"a".repeat(len % 4));
    }
    for input in &inputs {
        check_normalized(input);
        let (head, tail) = Failure::windows(input);
        let _ = fp(input);
        for (h, t) in [
            (head, tail),
            (input.as_str(), input.as_str()),
            ("", input.as_str()),
        ] {
            for exit_code in [None, Some(0), Some(i64::MAX)] {
                let f = fingerprint(&Failure {
                    tool: "t",
                    exit_code,
                    head: h,
                    tail: t,
                });
                if exit_code.is_some() {
                    assert!(f.is_some());
                }
            }
        }
    }
}

#[test]
fn normalized_tokens_are_independent_of_their_neighbours() {
    // The windowing guarantee rests on this: normalizing a prefix or suffix that ends/starts at
    // whitespace yields a prefix/suffix of the whole normalized text.
    let text =
        "Error at /a/b.py:1 0xff 123e4567-e89b-12d3-a456-426614174000 line9 v1.2 C:\\x\\y.js";
    let whole = normalize(text);
    for (i, _) in text.match_indices(' ') {
        let (before, after) = (normalize(&text[..i]), normalize(&text[i + 1..]));
        assert_eq!(format!("{before} {after}"), whole);
    }
}

/// When a window yields fewer than `KEPT_BYTES` normalized bytes (mostly whitespace, long paths,
/// numbers), the token cut in two at the window edge is dropped, so a shifted cut still sees the
/// same whole tokens.
#[test]
fn low_yield_windows_drop_the_token_cut_in_two() {
    let unit = " ".repeat(200) + &"abcdefghijklmnopqrstuvwxyz".repeat(2);
    let text = |n: u32| {
        format!("error at line {n}: {} ", "x".repeat(70))
            + &unit.repeat(60)
            + &format!(" failed at line {n}: {}", "y".repeat(20))
    };
    let (a, b) = (text(1), text(10));
    for t in [&a, &b] {
        let (head, tail) = Failure::windows(t);
        // Preconditions: both cuts fall inside a word, and both windows yield little.
        let tail_start = t.len() - tail.len();
        assert!(
            t.as_bytes()[head.len() - 1..=head.len()]
                .iter()
                .all(u8::is_ascii_lowercase)
        );
        assert!(
            t.as_bytes()[tail_start - 1..=tail_start]
                .iter()
                .all(u8::is_ascii_lowercase)
        );
        assert!(normalize(head).len() < KEPT_BYTES && normalize(tail).len() < KEPT_BYTES);
    }
    // The raw windows normalize differently (the cut words differ) ...
    assert_ne!(
        normalize(Failure::windows(&a).0),
        normalize(Failure::windows(&b).0)
    );
    assert_ne!(
        normalize(Failure::windows(&a).1),
        normalize(Failure::windows(&b).1)
    );
    // ... but the fingerprints agree.
    assert_equivalent(&a, &b);
}

#[test]
fn a_shell_failure_is_decided_by_the_end_of_its_output() {
    let mut output = String::new();
    for i in 0..120 {
        output.push_str(&format!(
            "    ✗ parses case {i} ({}.{} ms)\n  at Object.<anonymous> (/home/dev/app/src/x.ts:{i}:7)\n",
            i / 10,
            i % 10
        ));
    }
    let whole = fingerprint(&Failure {
        tool: "bash",
        exit_code: Some(1),
        head: "",
        tail: &output,
    });
    let mut cut = output.len() - 1800;
    while !output.is_char_boundary(cut) {
        cut += 1;
    }
    assert_eq!(
        shell_fingerprint_from_end("bash", Some(1), &output[cut..]),
        Some(whole)
    );
    // Too short an end cannot decide it: the caller must pass more.
    let mut short = output.len() - 300;
    while !output.is_char_boundary(short) {
        short += 1;
    }
    assert_eq!(
        shell_fingerprint_from_end("bash", Some(1), &output[short..]),
        None
    );
    // Nor can an end whose last 2 KiB are one token.
    let blob = format!("start {}", "x".repeat(3000));
    assert_eq!(
        shell_fingerprint_from_end("bash", Some(1), &blob[1..]),
        None
    );
}

#[test]
fn tokens_without_letters_or_separators_collapse_only_their_digit_runs() {
    // Four dashes may be a UUID of digits: that token takes the general path.
    let text = "(12.3 ms) 1-2-3 12345678-1234-1234-1234-123456789012 1-2-3-4-5 !== 7°";
    assert_eq!(normalize(text), "(#.# ms) #-#-# <uuid> #-#-#-#-# !== #°");
    // The same from the end of a windowed shell failure, where the numeric tokens are read
    // backwards, and cut at the start of the kept bytes.
    let long = format!("{}{text}", "case 4321 (0.5 ms)\n".repeat(600));
    let other = long.replace("4321", "99");
    let (_, tail) = Failure::windows(&long);
    let (_, other_tail) = Failure::windows(&other);
    assert!(!tail.is_empty());
    let fp = |tail: &str| {
        fingerprint(&Failure {
            tool: "bash",
            exit_code: Some(1),
            head: "",
            tail,
        })
    };
    assert_eq!(fp(tail), fp(other_tail));
    assert_ne!(fp(tail), fp(&tail.replace("ms)", "s)")));
}
