//! Arbitrary JSON → `config::validate`, as the WASM adapter runs it on a row config.
//!
//! Half the inputs are raw bytes parsed as JSON text (the adapter's path), half are JSON values
//! built from the fuzz input with the real key names, near misses, boundary numbers and the JS
//! shim's `{"\u0000js": …}` marker, so the validator's deeper branches are reached quickly.
//!
//! The properties are `crates/config/tests/checks/mod.rs`, shared with the crate's proptest
//! (`crates/config/tests/properties.rs`): one source, asserted here (a violation is a crash).
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Number, Value};

#[path = "../../crates/config/tests/checks/mod.rs"]
mod checks;

const KEYS: &[&str] = &[
    "enabled",
    "debtThreshold",
    "maxToolCallsWithoutResearch",
    "maxMinutesWithoutResearch",
    "cooldownMinutes",
    "reminderBackoff",
    "ordinaryToolDebt",
    "mutationDebt",
    "executionDebt",
    "failureDebt",
    "repeatedFailureDebt",
    "maxAgentSnoozeMinutes",
    "researchTools",
    "mutationTools",
    "executionTools",
    "reminder",
    "debug",
    // near misses and oddities
    "debtthreshold",
    "enable",
    "cooldown_minutes",
    "",
    "\u{0}js",
];

const NUMBERS: &[f64] = &[
    0.0,
    1.0,
    -1.0,
    0.5,
    20.0,
    1e3,
    1_000_000.0,
    1_000_001.0,
    525_600.0,
    525_600.5,
    10_080.0,
    10_081.0,
    4_294_967_295.0,
    4_294_967_296.0,
    1e300,
    -0.0,
    1e-320,
];

const STRINGS: &[&str] = &[
    "web_search",
    "WebFetch",
    "bash",
    "",
    " ",
    "_-_",
    "\u{a0}",
    "é",
    "x",
    "write",
    "undefined",
    "NaN",
    "Infinity",
    "function",
    "bigint 12",
];

fn value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let pick = if depth == 0 {
        u.int_in_range(0..=6)?
    } else {
        u.int_in_range(0..=9)?
    };
    Ok(match pick {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(*u.choose(NUMBERS)?),
        3 => match Number::from_f64(u.arbitrary()?) {
            Some(n) => Value::Number(n),
            None => Value::Null,
        },
        4 => Value::from(u.arbitrary::<i64>()?),
        5 => Value::from(*u.choose(STRINGS)?),
        6 => Value::from(u.arbitrary::<String>()?),
        7 => {
            // The JS shim's marker for values JSON cannot hold.
            let mut object = Map::new();
            object.insert("\u{0}js".into(), Value::from(*u.choose(STRINGS)?));
            Value::Object(object)
        }
        8 => {
            let len = u.int_in_range(0..=4)?;
            Value::Array(
                (0..len)
                    .map(|_| value(u, depth - 1))
                    .collect::<Result<_>>()?,
            )
        }
        _ => object(u, depth - 1)?,
    })
}

fn object(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let len = u.int_in_range(0..=6)?;
    let mut map = Map::new();
    for _ in 0..len {
        let key = if u.ratio(7, 8)? {
            (*u.choose(KEYS)?).to_owned()
        } else {
            u.arbitrary()?
        };
        map.insert(key, value(u, depth)?);
    }
    Ok(Value::Object(map))
}

fn input(data: &[u8]) -> Option<Value> {
    let (&mode, rest) = data.split_first()?;
    if mode & 1 == 0 {
        serde_json::from_str(std::str::from_utf8(rest).ok()?).ok()
    } else {
        let mut u = Unstructured::new(rest);
        if mode & 2 == 0 {
            object(&mut u, 2).ok()
        } else {
            value(&mut u, 3).ok()
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some(value) = input(data) {
        checks::check(&value);
    }
});
