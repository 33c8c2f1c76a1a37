//! The save machine's wire, generated: `packages/limit-break/wire/save.json` holds each step's
//! fields with their JSON shapes (`dsh-wire-shape`'s) and the answers it takes
//! ([`Step::answers`]), and each answer's fields, as the types serialize them. `lib/memory.js`'s
//! performers are checked against that file by `packages/limit-break/tests/wire.test.mjs`; this
//! test fails when the file is stale (`UPDATE_EXPECT=1 cargo test -p limit-break-memory --test
//! wire` rewrites it), and when the module docs' table of steps names other fields or answers.

use limit_break_memory::save::{Committed, Data, Input, Step, StepId};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use wire_shape::{Rules, braced_fields, describe};

/// One step of every kind, and again where a field may be absent or take another form
/// (`Step::kind` and `Step::answers` match exhaustively, so a new kind comes with its name and
/// answers; the docs' table check below then asks for its example).
fn steps() -> Vec<Step> {
    let id = StepId(1);
    let path = || "/home/memory/facts.json".to_owned();
    vec![
        Step::MakeDir { id, path: path() },
        Step::Create {
            id,
            path: path(),
            mode: 0o600,
            data: Data::Edited,
            sync: true,
            stat: true,
            hold: true,
        },
        Step::Create {
            id,
            path: path(),
            mode: 0o644,
            data: Data::Text("{}".to_owned()),
            sync: false,
            stat: false,
            hold: false,
        },
        Step::Read { id, path: path() },
        Step::ReadStore { id, path: path() },
        Step::Edit { id },
        Step::Stat { id, path: path() },
        Step::RealPath { id, path: path() },
        Step::Probe { id, pid: 7 },
        Step::Rename {
            id,
            from: path(),
            to: path(),
        },
        Step::Link {
            id,
            from: path(),
            to: path(),
        },
        Step::Unlink { id, path: path() },
        Step::SyncDir { id, path: path() },
        Step::StatHeld { id },
        Step::List { id, path: path() },
        Step::Sleep { id, ms: 5 },
        Step::Done {
            answer: "{}".to_owned(),
            committed: Some(Committed {
                key: [1.0, 2.0, 3.0, 4.0],
                at: 4.0,
                held: true,
            }),
        },
        Step::Done {
            answer: "{}".to_owned(),
            committed: None,
        },
    ]
}

/// One answer of every kind, and again where a field may be absent.
fn inputs() -> Vec<Input> {
    let failure = || ("ENOENT".to_owned(), "no such file".to_owned());
    vec![
        Input::Ok,
        Input::Failed {
            code: failure().0,
            message: failure().1,
        },
        Input::WriteFailed {
            code: failure().0,
            message: failure().1,
        },
        Input::Created {
            key: Some([1.0, 2.0, 3.0, 4.0]),
        },
        Input::Created { key: None },
        Input::Text {
            text: "{}".to_owned(),
            mtime_ms: 1.0,
        },
        Input::Found,
        Input::Edited {
            ok: true,
            answer: "{}".to_owned(),
        },
        Input::Stat {
            mtime_ms: 1.0,
            mode: 0o600,
        },
        Input::Path {
            path: "/".to_owned(),
        },
        Input::Probed { alive: true },
        Input::Names {
            names: vec!["facts.json".to_owned()],
        },
        Input::Key {
            key: [1.0, 2.0, 3.0, 4.0],
        },
    ]
}

/// A step in the docs' table: its fields, and each answer it names with its fields if written.
type Documented = (Vec<String>, BTreeMap<String, Option<Vec<String>>>);

/// The module docs' table: each step kind's fields (without `id`) and the answers it names, with
/// the fields of those written with theirs (`created { key? }`).
fn documented() -> BTreeMap<String, Documented> {
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    };
    let mut out = BTreeMap::new();
    for row in include_str!("../src/save.rs").lines() {
        let Some(row) = row.strip_prefix("//! | `") else {
            continue;
        };
        let row = format!("`{row}");
        let cells: Vec<&str> = row.split(" | ").collect();
        // Prose in parentheses (the `probe` row's "only `ESRCH` is dead") names no answer.
        let mut depth = 0;
        let answered: String = cells[2]
            .chars()
            .filter(|c| {
                depth += i32::from(*c == '(');
                let keep = depth == 0;
                depth -= i32::from(*c == ')');
                keep
            })
            .collect();
        let answers: BTreeMap<String, Option<Vec<String>>> = ticked(&answered)
            .iter()
            .map(|answer| {
                let name = answer.split(' ').next().unwrap().to_owned();
                (name, answer.contains('{').then(|| braced_fields(answer)))
            })
            .collect();
        // `rename`, `link { from, to }`: the fields written last are every one's.
        let steps = ticked(cells[0]);
        let fields = steps.last().map(|s| braced_fields(s)).unwrap_or_default();
        for step in &steps {
            let kind = step.split(' ').next().unwrap().to_owned();
            out.insert(kind, (fields.clone(), answers.clone()));
        }
    }
    out
}

#[test]
fn the_wire_file_is_generated_from_the_types_and_the_table() {
    let inputs = inputs();
    for input in &inputs {
        assert_eq!(
            json!(input)["kind"],
            input.kind(),
            "Input::kind is serde's tag"
        );
    }
    let input_kinds: BTreeSet<&str> = inputs.iter().map(Input::kind).collect();
    let answers = describe(inputs.iter().map(|i| json!(i)), "kind", Rules::default());
    let steps = steps();
    for step in &steps {
        assert_eq!(
            json!(step)["kind"],
            step.kind(),
            "Step::kind is serde's tag"
        );
        for answer in step.answers() {
            assert!(input_kinds.contains(answer), "{answer} is no answer kind");
        }
    }
    // Each kind's answers, in the examples' order.
    let mut takes: Vec<(&str, &[&str])> = Vec::new();
    for step in &steps {
        if !takes.iter().any(|(kind, _)| *kind == step.kind()) {
            takes.push((step.kind(), step.answers()));
        }
    }
    let answers_of = |kind: &str| takes.iter().find(|(k, _)| *k == kind).unwrap().1;
    let described = describe(steps.iter().map(|s| json!(s)), "kind", Rules::default());

    // The module docs' table says the same.
    let names = |fields: &Value| -> Vec<String> {
        fields
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "id")
            .cloned()
            .collect()
    };
    for (kind, (fields, taken)) in documented() {
        assert_eq!(
            fields,
            names(&described[&kind]),
            "the docs' fields of {kind}"
        );
        let table: Vec<&str> = answers_of(&kind).to_vec();
        assert_eq!(
            taken.keys().map(String::as_str).collect::<BTreeSet<_>>(),
            table.iter().copied().collect(),
            "the docs' answers to {kind}"
        );
        for (answer, fields) in taken {
            if let Some(fields) = fields {
                assert_eq!(
                    fields,
                    names(&answers[&answer]),
                    "the docs' fields of {answer}"
                );
            }
        }
    }
    assert_eq!(
        documented()
            .keys()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        takes.iter().map(|(kind, _)| *kind).collect(),
        "the docs name every step, and every step has an example"
    );

    let steps = described.into_iter().map(|(kind, fields)| {
        let takes = json!(answers_of(&kind));
        (kind, fields, takes)
    });
    expect_test::expect_file!["../../../packages/limit-break/wire/save.json"].assert_eq(
        &wire_shape::wire_file(
            "limit-break-memory save::Save",
            "crates/memory/tests/wire.rs",
            "steps",
            steps,
            answers,
        ),
    );
}

#[test]
fn the_machine_refuses_an_answer_outside_the_table() {
    use limit_break_memory::save::{Now, Place, Save, Writer};
    let now = Now {
        wall: 1.0,
        mono: 1.0,
    };
    let mut machine = Save::new(
        Place {
            dir: "/home/memory".to_owned(),
            sep: "/".to_owned(),
            windows: false,
        },
        Writer {
            token: "t".to_owned(),
            pid: 7,
            host: "box".to_owned(),
        },
        1,
        now,
    );
    let step = machine.poll().clone();
    assert_eq!(step.kind(), "create");
    let id = step.id().unwrap();
    // A `probed` answer is no answer to a `create`: refused, and the step stays outstanding.
    let refused = machine.handle(id, Input::Probed { alive: true }, now);
    assert_eq!(
        refused.unwrap_err().to_string(),
        "that input does not answer a create step"
    );
    assert_eq!(machine.poll(), &step);
}
