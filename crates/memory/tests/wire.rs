//! The save machine's wire, generated: `packages/limit-break/wire/save.json` holds each step's
//! fields and the answers it takes ([`Step::answers`]), and each answer's fields, as the types
//! serialize them. `lib/memory.js`'s performers are checked against that file by
//! `packages/limit-break/tests/wire.test.mjs`; this test fails when the file is stale
//! (`UPDATE_EXPECT=1 cargo test -p limit-break-memory --test wire` rewrites it).

use limit_break_memory::save::{Committed, Data, Input, Step, StepId};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// One step of every kind (`Step::kind` and `Step::answers` match exhaustively, so a new kind
/// comes with its name and answers; the count check below then asks for its example).
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
    ]
}

/// One answer of every kind.
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
        Input::Names { names: Vec::new() },
        Input::Key {
            key: [1.0, 2.0, 3.0, 4.0],
        },
    ]
}

/// The fields of a serialized step or answer, without `kind` and `id`.
fn fields(value: Value) -> Vec<String> {
    let Value::Object(object) = value else {
        panic!("not an object: {value}")
    };
    object
        .keys()
        .filter(|k| *k != "kind" && *k != "id")
        .cloned()
        .collect()
}

#[test]
fn the_wire_file_is_generated_from_the_types_and_the_table() {
    let inputs = inputs();
    let input_kinds: BTreeSet<&str> = inputs.iter().map(Input::kind).collect();
    assert_eq!(
        input_kinds.len(),
        inputs.len(),
        "one example per answer kind"
    );
    let mut answers = Map::new();
    for input in &inputs {
        let value = serde_json::to_value(input).unwrap();
        assert_eq!(value["kind"], input.kind(), "Input::kind is serde's tag");
        answers.insert(input.kind().to_owned(), json!(fields(value)));
    }
    let steps = steps();
    let step_kinds: BTreeSet<&str> = steps.iter().map(Step::kind).collect();
    assert_eq!(step_kinds.len(), steps.len(), "one example per step kind");
    let mut by_kind = Map::new();
    for step in &steps {
        let value = serde_json::to_value(step).unwrap();
        assert_eq!(value["kind"], step.kind(), "Step::kind is serde's tag");
        for answer in step.answers() {
            assert!(input_kinds.contains(answer), "{answer} is no answer kind");
        }
        by_kind.insert(
            step.kind().to_owned(),
            json!({ "fields": fields(value), "answers": step.answers() }),
        );
    }
    let wire = json!({
        "machine": "limit-break-memory save::Save",
        "generatedBy": "crates/memory/tests/wire.rs",
        "steps": by_kind,
        "answers": answers,
    });
    expect_test::expect_file!["../../../packages/limit-break/wire/save.json"].assert_eq(&format!(
        "{}\n",
        serde_json::to_string_pretty(&wire).unwrap()
    ));
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
