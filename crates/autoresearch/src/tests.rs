// `settings` serves the integration tests.
#[allow(dead_code)]
#[path = "../tests/common/fixture.rs"]
mod fixture;

use crate::jcs::{canonical, number};
use crate::metric::{ParseError, parse_metric, parse_report};
use crate::protocol::InputPath;
use crate::run::{RunState, transition_allowed};
use crate::spec::{self, Request, check_resume, suggest};
use crate::sql;
use crate::surface::{self, CandidateCheck, MutableSurface, WorktreeChanges, parse_status_z};
use fixture::limits;
use serde_json::json;

fn fresh(v: serde_json::Value) -> crate::RunPolicy {
    match spec::validate(&v, &limits()).unwrap() {
        Request::Fresh { policy, .. } => *policy,
        other => panic!("{other:?}"),
    }
}

fn minimal() -> serde_json::Value {
    json!({
        "objective": "speed up",
        "mutable_globs": ["src/**/*.rs"],
        "evaluation": {"command": "cargo", "args": ["run", "--bin", "bench"]},
        "metric_name": "ms",
        "metric_direction": "minimize",
        "run_tag": "t1"
    })
}

fn errors(v: serde_json::Value) -> Vec<String> {
    spec::validate(&v, &limits())
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect()
}

// ----- canonical JSON -----

#[test]
fn jcs_matches_the_rfc_8785_example() {
    let input = r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}"#;
    let v: serde_json::Value = serde_json::from_str(input).unwrap();
    assert_eq!(
        canonical(&v),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
}

#[test]
fn jcs_numbers_follow_ecmascript() {
    let cases: &[(f64, &str)] = &[
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-1.5, "-1.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.2345e-7, "1.2345e-7"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (9007199254740993.0, "9007199254740992"),
        (0.1 + 0.2, "0.30000000000000004"),
    ];
    for (f, want) in cases {
        assert_eq!(number(*f), *want, "{f:e}");
    }
}

#[test]
fn jcs_sorts_keys_by_utf16_code_units() {
    // U+1F600 (surrogates D83D DE00) sorts before U+FB33 in UTF-16, after it in UTF-8/chars.
    let v = json!({"\u{fb33}": 1, "\u{1f600}": 2, "a": 3, "B": 4});
    assert_eq!(
        canonical(&v),
        "{\"B\":4,\"a\":3,\"\u{1f600}\":2,\"\u{fb33}\":1}"
    );
}

// ----- metric parsing -----

#[test]
fn metric_reads_the_final_line_only() {
    assert_eq!(
        parse_metric("warmup\n{\"score\": 0.5, \"ms\": 3}\n", "score", false),
        Ok(0.5)
    );
    assert_eq!(
        parse_metric("{\"score\": 9}\r\n{\"score\": 2}\r\n\r\n", "score", false),
        Ok(2.0)
    );
    assert_eq!(
        parse_metric("{\"score\":-1e3}", "score", false),
        Ok(-1000.0)
    );
}

#[test]
fn metric_refuses_what_is_not_one_finite_number() {
    let bad: &[(&str, ParseError)] = &[
        ("", ParseError::Empty),
        ("  \n\n", ParseError::Empty),
        (
            "{\"score\": 1}\ndone",
            ParseError::NotAnObject("done".into()),
        ),
        ("[1]", ParseError::NotAnObject("[1]".into())),
        ("{\"other\": 1}", ParseError::MissingKey("score".into())),
        ("{\"score\": \"1\"}", ParseError::NotANumber("score".into())),
        ("{\"score\": null}", ParseError::NotANumber("score".into())),
        (
            "{\"score\": 1, \"score\": 2}",
            ParseError::DuplicateKey("score".into()),
        ),
    ];
    for (out, err) in bad {
        assert_eq!(
            parse_metric(out, "score", false).as_ref(),
            Err(err),
            "{out:?}"
        );
    }
    // Past a double's range: named as such, not "not a JSON object"; elsewhere it is no error.
    expect_test::expect![[r#"key "score" on the final line is a number out of range (1e309: not a finite 64-bit float)"#]]
    .assert_eq(&parse_metric("{\"score\": 1e309}", "score", false).unwrap_err().to_string());
    assert_eq!(
        parse_metric("{\"score\": -1e999}", "score", false),
        Err(ParseError::OutOfRange("score".into(), "-1e999".into()))
    );
    assert_eq!(
        parse_metric("{\"ms\": 1e309, \"score\": 2}", "score", false),
        Ok(2.0)
    );
    assert_eq!(
        parse_metric("{\"score\": 1}", "score", true),
        Err(ParseError::TruncatedLine)
    );
    assert_eq!(
        parse_metric("...tail\n{\"score\": 1}", "score", true),
        Ok(1.0)
    );
    assert_eq!(ParseError::TruncatedLine.code().as_str(), "output-limit");
}

#[test]
fn proposer_report_needs_hypothesis_and_summary() {
    let r = parse_report(
        "thinking\n{\"hypothesis\": \"h\", \"summary\": \"s\"}\n",
        false,
    )
    .unwrap();
    assert_eq!((r.hypothesis.as_str(), r.summary.as_str()), ("h", "s"));
    assert_eq!(
        parse_report("{\"hypothesis\": \"h\"}", false),
        Err(ParseError::MissingKey("summary".into()))
    );
    assert_eq!(
        parse_report("{\"hypothesis\": \" \", \"summary\": \"s\"}", false),
        Err(ParseError::BadField("hypothesis".into()))
    );
}

// ----- spec validation -----

#[test]
fn a_minimal_spec_takes_the_defaults() {
    let p = fresh(minimal());
    assert_eq!(
        (p.timeout_ms, p.max_experiments, p.max_consecutive_failures),
        (900_000, 20, 3)
    );
    assert_eq!(p.evaluation.cwd, ".");
    assert_eq!(p.target, None);
    let again = spec::policy_from_json(&p.to_json(), &limits()).unwrap();
    assert_eq!(again, p, "the durable JSON round-trips");
    assert_eq!(again.sha256(), p.sha256());
}

#[test]
fn errors_name_the_field_the_rule_and_the_value() {
    let mut v = minimal();
    v["evaluation"]["cwd"] = json!("../outside");
    v["metric_direction"] = json!("down");
    v["timeout_ms"] = json!(0);
    v["max_experiments"] = json!(101);
    v["environment"] = json!({"DSH_TOKEN": "x", "OK": "a\u{0}b", "1BAD": "v"});
    v["mutable_globs"] = json!(["/etc/passwd", "src/[a"]);
    v["target"] = json!("5");
    let e = errors(v);
    let want = [
        "evaluation.cwd: must not contain a .. segment (got \"../outside\")",
        "metric_direction: must be \"minimize\" or \"maximize\" (got \"down\")",
        "timeout_ms: must be an integer from 1 to 3600000 (got 0)",
        "max_experiments: must be an integer from 1 to 100 (got 101)",
        "environment.DSH_TOKEN: the DSH_ prefix is reserved (got \"DSH_TOKEN\")",
        "environment.OK: value must be a string without NUL",
        "environment.1BAD: key must match ^[A-Za-z_][A-Za-z0-9_]*$ (got \"1BAD\")",
        "mutable_globs[0]: must be relative (no leading /) (got \"/etc/passwd\")",
        "target: must be a finite number (got \"5\")",
    ];
    for w in want {
        assert!(
            e.iter().any(|x| x.starts_with(w)),
            "missing {w:?} in {e:#?}"
        );
    }
}

#[test]
fn unknown_keys_get_a_did_you_mean() {
    let mut v = minimal();
    v["mutable_glob"] = json!(["x"]);
    v["evaluation"]["shell"] = json!(true);
    v["timeoutMs"] = json!(5);
    let e = errors(v);
    assert!(
        e.contains(&"mutable_glob: unknown key; did you mean `mutable_globs`?".to_owned()),
        "{e:#?}"
    );
    assert!(
        e.contains(&"evaluation.shell: unknown key".to_owned()),
        "{e:#?}"
    );
    assert!(
        e.contains(&"timeoutMs: unknown key; did you mean `timeout_ms`?".to_owned()),
        "{e:#?}"
    );
    assert_eq!(
        suggest("objectve", &["objective", "target"]),
        Some("objective")
    );
    assert_eq!(suggest("zzz", &["objective"]), None);
    // A key or a value the spec chose is one escaped line: no ESC, OSC, line break or override.
    let mut v = minimal();
    v["x\u{1b}]0;pwned\u{7}\nmutable_globs: ok"] = json!(1);
    v["environment"] = json!({"A\nB": "v"});
    v["run_tag"] = json!("t\u{202e}1\u{9b}");
    expect_test::expect![[r#"
        [
            "x\\u001b]0;pwned\\u0007\\u000amutable_globs: ok: unknown key",
            "run_tag: must match ^[a-z0-9][a-z0-9._-]*$, contain no \"..\", not end in \".\" and have at most 64 characters (got \"t\\u202e1\\u009b\")",
            "environment.A\\u000aB: key must match ^[A-Za-z_][A-Za-z0-9_]*$ (got \"A\\nB\")",
        ]
    "#]]
    .assert_debug_eq(&errors(v));
}

#[test]
fn exactly_one_of_run_tag_and_resume_run_id() {
    let mut v = minimal();
    v["resume_run_id"] = json!("0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9");
    assert!(errors(v.clone())[0].contains("mutually exclusive"));
    v.as_object_mut().unwrap().remove("run_tag");
    assert!(matches!(
        spec::validate(&v, &limits()),
        Ok(Request::Resume { .. })
    ));
    v.as_object_mut().unwrap().remove("resume_run_id");
    assert!(errors(v)[0].starts_with("run_tag: exactly one"));
    for bad in ["Upper", "a..b", "dot.", "-lead", "x.lock", ""] {
        let mut v = minimal();
        v["run_tag"] = json!(bad);
        assert!(errors(v)[0].starts_with("run_tag:"), "{bad}");
    }
}

#[test]
fn arguments_are_kept_exactly_and_only_nul_is_refused() {
    let mut v = minimal();
    v["evaluation"]["args"] = json!(["-n", "1", "-n", "1", " x ", "a\nb", ""]);
    assert_eq!(
        fresh(v.clone()).evaluation.argv.args,
        ["-n", "1", "-n", "1", " x ", "a\nb", ""]
    );
    v["evaluation"]["args"] = json!(["a\u{0}"]);
    assert!(errors(v)[0].starts_with("evaluation.args[0]: must be a string without NUL"));
}

#[test]
fn resume_keys_must_match_the_stored_policy() {
    let p = fresh(minimal());
    let stored = p.to_json();
    let given = json!({"objective": "speed up", "timeout_ms": 900000})
        .as_object()
        .cloned()
        .unwrap();
    assert_eq!(check_resume(&stored, &given, &limits()), Ok(()));
    let given = json!({"objective": "slow down", "max_experiments": 20, "target": 3})
        .as_object()
        .cloned()
        .unwrap();
    assert_eq!(
        check_resume(&stored, &given, &limits()).unwrap_err().fields,
        ["objective", "target"]
    );
}

// ----- mutable surface -----

#[test]
fn globs_use_globset_semantics_with_a_literal_separator() {
    let s = MutableSurface::new(&[
        "src/*.rs".into(),
        "lib/**".into(),
        "{a,b}.txt".into(),
        "src".into(),
    ])
    .unwrap();
    assert!(s.matches("src/main.rs"));
    assert!(!s.matches("src/nested/main.rs"));
    assert!(s.matches("lib/x/y/z.js"));
    assert!(s.matches("a.txt") && s.matches("b.txt") && !s.matches("c.txt"));
    assert!(s.matches("src") && !s.matches("other/src/main.rs"));
    assert!(MutableSurface::new(&["src/[a".into()]).is_err());
}

#[test]
fn evaluator_inputs_are_the_command_arguments_and_labels() {
    let p = fresh(json!({
        "objective": "o", "mutable_globs": ["src/**"], "metric_name": "m", "metric_direction": "maximize", "run_tag": "t",
        "evaluation": {"command": "./bin/eval.sh", "args": ["--data=../data/x.csv", "-v", "model.py", "/abs/tool", "7", "../../escape"], "cwd": "bench"}
    }));
    let got = surface::evaluator_inputs(
        &p.evaluation.argv.command,
        &p.evaluation.argv.args,
        &p.evaluation.cwd,
        &["data/labels.json", "label text"],
    );
    assert_eq!(
        got,
        [
            InputPath::Worktree("bench/bin/eval.sh".into()),
            InputPath::Worktree("bench/model.py".into()),
            InputPath::Worktree("data/labels.json".into()),
            InputPath::Worktree("data/x.csv".into()),
            InputPath::External("../../escape".into()).clone(),
            InputPath::External("/abs/tool".into()),
        ]
        .into_iter()
        .map(|x| match x {
            InputPath::External(e) if e == "../../escape" =>
                InputPath::External("bench/../../escape".into()),
            other => other,
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
}

#[test]
fn status_parsing_and_candidate_checks() {
    let out =
        " M src/a.rs\0?? src/new.rs\0R  src/to.rs\0src/from.rs\0!! target/x.o\0 D src/gone.rs\0";
    let c = parse_status_z(out).unwrap();
    assert_eq!(
        c.changed,
        [
            "src/a.rs",
            "src/from.rs",
            "src/gone.rs",
            "src/new.rs",
            "src/to.rs"
        ]
    );
    assert_eq!(c.ignored, ["target/x.o"]);
    assert!(parse_status_z("garbage").is_err());

    let s = MutableSurface::new(&["**".into()]).unwrap();
    let inputs = [InputPath::Worktree("eval.py".into())];
    let allow = spec::Allowlists::default();
    let check = |paths: &[&str], allow: &spec::Allowlists| {
        let changes = WorktreeChanges {
            changed: paths.iter().map(|p| p.to_string()).collect(),
            ignored: vec![],
        };
        surface::check_candidate(&changes, &s, &inputs, allow)
    };
    assert_eq!(check(&[], &allow), CandidateCheck::Empty);
    assert_eq!(
        check(&["src/a.rs"], &allow),
        CandidateCheck::Valid(vec!["src/a.rs".into()])
    );
    let CandidateCheck::Violation(v) = check(
        &["eval.py", "package.json", ".git/hooks/x", "ok.rs"],
        &allow,
    ) else {
        panic!()
    };
    let reasons: Vec<_> = v.iter().map(|v| (v.path.as_str(), v.reason)).collect();
    assert_eq!(
        reasons,
        [
            ("eval.py", "protected-evaluator-input"),
            ("package.json", "protected-dependency"),
            (".git/hooks/x", "protected-git")
        ]
    );
    let allow = spec::Allowlists {
        dependencies: vec!["package.json".into()],
        evaluators: vec!["eval.py".into()],
        ..Default::default()
    };
    assert!(matches!(
        check(&["eval.py", "package.json"], &allow),
        CandidateCheck::Valid(_)
    ));
}

// ----- SQL -----

#[test]
fn migrations_are_planned_by_version() {
    assert_eq!(sql::migration_plan(0).unwrap(), sql::migrations());
    assert!(sql::migration_plan(sql::SCHEMA_VERSION).unwrap().is_empty());
    assert_eq!(
        sql::migration_plan(sql::SCHEMA_VERSION + 1),
        Err(sql::SchemaTooNew {
            found: sql::SCHEMA_VERSION + 1
        })
    );
    assert!(
        sql::migrations()
            .windows(2)
            .all(|w| w[0].version < w[1].version)
    );
}

#[test]
fn every_table_is_strict_and_statements_use_named_parameters() {
    let v1 = &sql::migrations()[0].sql;
    for table in [
        "runs",
        "experiments",
        "attempts",
        "artifacts",
        "locks",
        "run_transitions",
    ] {
        let start = v1.find(&format!("CREATE TABLE {table} (")).unwrap();
        let end = start + v1[start..].find(";").unwrap();
        assert!(v1[start..end].contains(") STRICT"), "{table}");
    }
    // Reads take their run id or limit by name; the retention lists take none.
    for st in sql::READS {
        assert!(!st.contains('?'), "positional parameter in {st}");
        for name in sql::parameter_names(st) {
            assert!(["run_id", "limit"].contains(&name), "{name} in {st}");
        }
    }
    for (st, fields) in sql::WRITES {
        assert!(!st.contains('?'), "positional parameter in {st}");
        assert_eq!(sql::parameter_names(st), *fields, "{st}");
    }
    assert_eq!(
        sql::parameter_names("a = :x AND b = :y_2 OR c = :x"),
        ["x", "y_2"]
    );
}

#[test]
fn the_originals_queries_follow_the_columns_its_files_have() {
    let names = |c: &[&str]| c.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        sql::original_live_locks(&names(&["run_id", "released_at"])),
        "SELECT run_id FROM active_locks WHERE released_at IS NULL"
    );
    assert_eq!(
        sql::original_live_locks(&names(&["run_id", "acquired_at"])),
        "SELECT run_id FROM active_locks"
    );
    assert_eq!(
        sql::original_runs(&names(&["updated_at", "objective", "run_id", "state"])),
        "SELECT run_id, state, updated_at FROM runs"
    );
}

#[test]
fn every_open_waits_the_same_busy_timeout() {
    assert_eq!(sql::READ_ONLY_PRAGMAS, "PRAGMA busy_timeout = 5000;");
    assert_eq!(
        sql::PRAGMAS,
        "PRAGMA journal_mode = WAL;\nPRAGMA synchronous = FULL;\nPRAGMA foreign_keys = ON;\n\
         PRAGMA busy_timeout = 5000;"
    );
}

#[test]
fn the_sql_transition_table_equals_the_rust_one() {
    let v1 = &sql::migrations()[0].sql;
    let values = &v1[v1.find("INSERT INTO run_transitions").unwrap()..];
    let values = &values[..values.find(";").unwrap()];
    let mut pairs = Vec::new();
    for chunk in values.split('(').skip(2) {
        let inner = &chunk[..chunk.find(')').unwrap()];
        let names: Vec<&str> = inner
            .split(',')
            .map(|s| s.trim().trim_matches('\''))
            .collect();
        pairs.push((
            RunState::parse(names[0]).unwrap(),
            RunState::parse(names[1]).unwrap(),
        ));
    }
    for from in RunState::ALL {
        for to in RunState::ALL {
            assert_eq!(
                transition_allowed(from, to),
                pairs.contains(&(from, to)),
                "{from:?} -> {to:?}"
            );
        }
    }
    for s in RunState::ALL.into_iter().filter(|s| s.is_terminal()) {
        assert!(RunState::ALL.iter().all(|t| !transition_allowed(s, *t)));
    }
}

#[test]
fn a_glob_covering_the_evaluators_directory_or_a_manifest_is_refused_up_front() {
    let errors = |globs: serde_json::Value, extra: serde_json::Value| -> Vec<String> {
        let mut v = minimal();
        v["mutable_globs"] = globs;
        v["evaluation"] = json!({"command": "python3", "args": ["bench/eval.py"]});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        match spec::validate(&v, &limits()) {
            Ok(_) => vec![],
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    };
    expect_test::expect![[r#"
        [
            "mutable_globs[0]: covers the evaluator's directory \".\" (it matches \"json.py\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"**/*.py\")",
            "mutable_globs[0]: covers dependency files (setup.py, conftest.py, sitecustomize.py, usercustomize.py); narrow the glob, or name each in exceptional_allowlists.dependencies (got \"**/*.py\")",
            "mutable_globs[1]: covers dependency files (package.json, package-lock.json, npm-shrinkwrap.json, deno.json, tsconfig.json and 4 more); narrow the glob, or name each in exceptional_allowlists.dependencies (got \"*.json\")",
            "mutable_globs[2]: covers the evaluator's directory \".\" (it matches \"json.py\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"*\")",
            "mutable_globs[2]: covers dependency files (package.json, package-lock.json, npm-shrinkwrap.json, pnpm-lock.yaml, pnpm-workspace.yaml and 68 more); narrow the glob, or name each in exceptional_allowlists.dependencies (got \"*\")",
        ]
    "#]]
    .assert_debug_eq(&errors(json!(["**/*.py", "*.json", "*", "src/**", "bench/model.py"]), json!({})));
    // Literal files and other directories are fine; the allowlists re-permit by name.
    assert_eq!(
        errors(
            json!(["src/**", "bench/model.py", "bench/data/*.csv"]),
            json!({})
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(
            json!(["bench/*.py", "*.lock"]),
            json!({"exceptional_allowlists": {"evaluators": ["bench"], "dependencies": [
                "yarn.lock", "poetry.lock", "uv.lock", "pdm.lock", "composer.lock", "deno.lock", "Cargo.lock",
                "Pipfile.lock", "Gemfile.lock", "bun.lock",
            ]}})
        ),
        Vec::<String>::new()
    );
}

#[test]
fn globs_that_shadow_a_module_the_evaluator_imports_are_refused_when_the_spec_is_read() {
    let mut v = minimal();
    v["evaluation"] = json!({"command": "python3", "args": ["eval.py"]});
    v["mutable_globs"] = json!([
        "*.pyc",
        "json/**",
        "*/__init__.py",
        "**/__pycache__/**",
        "*.so",
        "*/index.js",
        "*.pm",
        "*/init.lua",
        "src/**",
    ]);
    expect_test::expect![[r#"
        [
            "mutable_globs[0]: covers the evaluator's directory \".\" (it matches \"json.pyc\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"*.pyc\")",
            "mutable_globs[1]: covers the evaluator's directory \".\" (it matches \"json/__init__.py\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"json/**\")",
            "mutable_globs[2]: covers the evaluator's directory \".\" (it matches \"json/__init__.py\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"*/__init__.py\")",
            "mutable_globs[3]: covers the evaluator's directory \".\" (it matches \"__pycache__/util.cpython-313.pyc\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"**/__pycache__/**\")",
            "mutable_globs[4]: covers the evaluator's directory \".\" (it matches \"json.cpython-313-x86_64-linux-gnu.so\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"*.so\")",
            "mutable_globs[5]: covers the evaluator's directory \".\" (it matches \"util/index.js\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"*/index.js\")",
            "mutable_globs[6]: covers the evaluator's directory \".\" (it matches \"util.pm\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"*.pm\")",
            "mutable_globs[7]: covers the evaluator's directory \".\" (it matches \"util/init.lua\", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got \"*/init.lua\")",
        ]
    "#]]
    .assert_debug_eq(&errors(v.clone()));
    v["exceptional_allowlists"] = json!({"evaluators": ["."]});
    assert!(
        spec::validate(&v, &limits()).is_ok(),
        "the allowlist re-permits"
    );
}

#[test]
fn paths_git_would_refuse_to_commit_fail_the_round_by_name() {
    for path in [
        "src/.GIT/config",
        "src/.Git",
        "src/git~1/HEAD",
        "src/GIT~1",
        "src/.git. /x",
        "src/.git .. ",
        "src/.git::$INDEX_ALLOCATION/x",
        "src/.git:stream",
        "src/a\\.git\\config",
        "src/.g\u{200c}it/config",
        "src/.GIT\u{feff}",
        "src/\u{200e}.git\u{206f}/x",
        "src/.GITMODULES",
        "src/.gitmodules. ",
        "src/gitmod~1",
        "src/GITMOD~4",
        "src/gi7eba~1",
        "src/gi7e~123",
        "src/.gitmodules\u{200d}",
        "src/./x",
        "src/../x",
        "src//x",
        "src/",
    ] {
        assert!(surface::git_refuses(path), "{path:?}");
    }
    for path in [
        "src/.github/x.yml",
        "src/.gitx",
        "src/my.git/x",
        "src/git",
        "src/git~2/x",
        "src/.gitignore",
        "src/.gitmodulesx",
        "src/gitmod~5",
        "src/gi7eba~0",
        "src/gi7ebax~1",
        "src/...",
        "src/.g\u{200b}it",
        "src/\u{130}.git",
    ] {
        assert!(!surface::git_refuses(path), "{path:?}");
    }
    let s = MutableSurface::new(&["src/**".into(), "vendor/**".into()]).unwrap();
    let long = format!("src/{}", "d/".repeat(600) + "x");
    let mut changed: Vec<String> = [
        "src/.GIT/config",
        "src/git~1/HEAD",
        "src/ok.rs",
        "vendor",
        "vendor/sub",
        "vendor-x",
        long.as_str(),
    ]
    .map(str::to_owned)
    .to_vec();
    changed.sort();
    let changes = WorktreeChanges {
        changed,
        ignored: vec![],
    };
    let allow = spec::Allowlists {
        submodules: vec!["vendor/sub".into()],
        ..Default::default()
    };
    let CandidateCheck::Violation(v) = surface::check_candidate(&changes, &s, &[], &allow) else {
        panic!()
    };
    let reasons: Vec<_> = v
        .iter()
        .map(|v| (text::clip_within(&v.path, 12), v.reason))
        .collect();
    expect_test::expect![[r#"
        [
            (
                "src/.GIT/co…",
                "git-invalid-path",
            ),
            (
                "src/d/d/d/d…",
                "path-too-long",
            ),
            (
                "src/git~1/H…",
                "git-invalid-path",
            ),
            (
                "vendor",
                "directory-replaced",
            ),
            (
                "vendor-x",
                "outside-mutable-globs",
            ),
        ]
    "#]]
    .assert_debug_eq(&reasons);
}

#[test]
fn dependency_and_git_files_are_protected_at_any_depth() {
    for path in [
        "Cargo.toml",
        "crates/x/Cargo.toml",
        "go.mod",
        "svc/go.sum",
        "pyproject.toml",
        "requirements.txt",
        "requirements-dev.txt",
        "deps/constraints.txt",
        "poetry.lock",
        "uv.lock",
        "Gemfile.lock",
        "npm-shrinkwrap.json",
        ".npmrc",
        "web/package.json",
        ".cargo/config.toml",
        "a/.cargo/config",
        "pytest.ini",
        "src/Directory.Build.props",
        "Directory.Build.targets",
        "nuget.config",
        "NUGET.CONFIG",
        "svc/vendor/modules.txt",
        "node_modules/left-pad/index.js",
        "web/node_modules/.bin/jest",
        "Makefile",
        "makefile",
        "lib/GNUmakefile",
        "CMakeLists.txt",
        "crates/x/build.rs",
        "tsconfig.json",
        "web/tsconfig.build.json",
        "babel.config.js",
        ".babelrc",
        ".babelrc.json",
        "jest.config.ts",
        "vitest.config.mts",
        "vite.config.js",
        ".python-version",
        ".nvmrc",
        ".node-version",
        ".ruby-version",
        ".tool-versions",
        ".envrc",
        ".env",
        "svc/.env.local",
    ] {
        assert!(surface::is_dependency_file(path), "{path}");
    }
    for path in surface::DEPENDENCY_EXAMPLES {
        assert!(surface::is_dependency_file(path), "{path}");
    }
    for path in [
        "src/main.rs",
        "requirements.md",
        "config.toml",
        "cargo/config",
        "notes/requirements",
        "src/build.rs.bak",
        "src/environment.py",
        "docs/modules.txt",
        "vendor/github.com/x/y.go",
        "src/node_modules.rs",
        "tsconfig.yaml",
        "jest.setup.js",
    ] {
        assert!(!surface::is_dependency_file(path), "{path}");
    }
    for path in [
        ".git",
        "a/.git",
        "a/.git/config",
        ".gitattributes",
        "src/.gitattributes",
        "lib/.gitmodules",
        ".lfsconfig",
    ] {
        assert!(surface::is_git_path(path), "{path}");
    }
    for path in ["src/evil.git", ".github/x.yml", "gitattributes"] {
        assert!(!surface::is_git_path(path), "{path}");
    }
}

#[test]
fn terminal_output_escapes_controls_and_bidi_but_keeps_json_valid() {
    let hostile = "ok\u{1b}]0;pwned\u{7}\u{9b}2J\u{202e}txt.exe\ttab\nline\u{7f}";
    expect_test::expect![[r#"ok\u001b]0;pwned\u0007\u009b2J\u202etxt.exe	tab
line\u007f"#]]
    .assert_eq(&crate::escape::escape_controls(hostile));
    let json = serde_json::json!({ "h": hostile }).to_string();
    let escaped = crate::escape::escape_controls(&json);
    assert!(!escaped.chars().any(|c| c.is_control()), "{escaped:?}");
    let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
    assert_eq!(back["h"], hostile);
}

#[test]
fn tracker_text_is_one_escaped_line_in_the_recovery_note_and_the_list() {
    let tag = "t\n- r9 (tag x, state ready)\u{1b}]0;pwned\u{7}\u{202e}\t";
    let rows = json!([
        {"run_id": "r1", "run_tag": tag, "state": "candidate-running"},
        {"run_id": "o1", "run_tag": tag, "origin": "original", "lock_held": 1},
    ]);
    let note = crate::tool::interrupted_note(&rows.to_string()).unwrap();
    expect_test::expect![[r#"
        # autoresearch: unfinished runs
        These runs are unfinished and hold their repository lock (another host may still drive them, or it cannot be proven dead). Resume one only when the user asks, with resume_run_id; end one with abandon_run_id:
        - r1 (tag t\u000a- r9 (tag x, state ready)\u001b]0;pwned\u0007\u202e\u0009, state candidate-running)

        These runs of the original dsh-autoresearch hold a lock in this repository; they count toward maxActiveRunsPerRepository and only the original can resume them:
        - o1 (tag t\u000a- r9 (tag x, state ready)\u001b]0;pwned\u0007\u202e\u0009)"#]]
    .assert_eq(&note);
    let rows: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_value(rows).unwrap();
    for format in ["table", "tsv", "json"] {
        let out = crate::list::render(&rows, format).unwrap();
        assert_eq!(
            out.lines().count(),
            3 - usize::from(format == "json"),
            "{format}: {out}"
        );
        assert!(
            !out.chars()
                .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}'),
            "{format}: {out:?}"
        );
        let broken_line = if format == "json" {
            "t\\n- r9"
        } else {
            "t\\u000a- r9"
        };
        assert!(out.contains(broken_line), "{format}: {out}");
    }
}

#[test]
fn failure_codes_are_distinct_kebab_case_names() {
    use crate::failure::Failure;
    let names: std::collections::BTreeSet<&str> = Failure::ALL.iter().map(|f| f.as_str()).collect();
    assert_eq!(names.len(), Failure::ALL.len());
    for name in names {
        assert!(
            name.split('-')
                .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
            "{name}"
        );
    }
}

#[test]
fn the_driver_contract_is_a_leaf() {
    let source = include_str!("protocol.rs");
    assert!(
        !source.contains("crate::"),
        "protocol.rs names another module"
    );
}
