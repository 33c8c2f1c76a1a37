//! `cargo xtask demo`: the packed family inside the real dsh, headless turns against the built-in
//! scripted model, told as a story. research-nudge: each tool call with its research debt, the
//! request that carried the reminder, and the reminder as the model saw it. Then one scenario of
//! each other package (pain-point-check's gate, limit-break's memory and fetch, an autoresearch
//! run), request by request: what the model did and what came back.
//! No API key; the network is needed only for the one-time install from the package registries.

use crate::dsh;
use crate::smoke;
use crate::util::rel;
use anyhow::{Result, bail};
use serde_json::Value;
use test_support::harness::Timings;
use test_support::scenario::{self, Scenario};
use test_support::session_log::{Logged, ToolEvent};

/// research-nudge's loop, the demo's first story (its figures are research-nudge's alone).
const LOOP_SCENARIO: &str = "research-nudge-loop.json";

/// The scenarios the demo tells after research-nudge's loop: package, scenario file, a note.
const DEMO_SCENARIOS: [(&str, &str, &str); 4] = [
    (
        "pain-point-check",
        "pain-point-check-gate.json",
        "(research-nudge sits out in this turn; xtask/scenarios/ has them together.)",
    ),
    (
        "limit-break",
        "limit-break-memory-across-sessions.json",
        "(the transcript is the first session; the second, new session recalls the fact.)",
    ),
    (
        "limit-break",
        "limit-break-fetch-loopback.json",
        "(the row opens private addresses for this loopback site; a default row refuses it.)",
    ),
    (
        "autoresearch",
        "autoresearch-foreground.json",
        "(a foreground run: each round's proposal child is the same scripted model.)",
    ),
];

/// `cargo xtask demo`.
pub fn run(args: &[String]) -> Result<()> {
    if let Some(arg) = args.first() {
        bail!("`cargo xtask demo` takes no arguments (got `{arg}`)");
    }
    let mut timings = Timings::default();
    let harness = smoke::setup("demo", &mut timings)?;
    let story = Scenario::load(&scenario::dir().join(LOOP_SCENARIO))?;
    let (turn, summary) = timings.step("one headless turn against the scripted model", || {
        story.run(&harness)
    })?;
    let (log, logged) = harness.logged(&turn)?;
    let replay = harness.replay("research-nudge", &turn, &[], None)?;

    let threshold = config::research_nudge::RowConfig::default().debt_threshold;
    println!(
        "\n================ research-nudge demo ================\n\
         dsh {} (headless profile, DSH_HOME {}) with the family installed from {}.\n\
         The model is a script on 127.0.0.1; its requests are real dsh requests.\n\n\
         task: {}\n",
        dsh::DSH_VERSION,
        rel(&harness.home),
        rel(&crate::pack::pack_dir()),
        story.task()
    );
    println!(
        "  {:>4}  {:<5}  {:<30}  {:<30}  {:<24}  {:>5}",
        "call", "tool", "arguments", "result", "added", "debt"
    );
    let mut tools = logged.iter().filter_map(|l| match l {
        Logged::Tool(t) => Some(t),
        Logged::UserPrompt { .. } => None,
    });
    let mut nudged_call = 0;
    let mut reminder = String::new();
    let mut before = &Value::Null;
    for line in &replay {
        if line["event"] == "user_prompt" {
            before = line;
        }
        if line["event"] != "tool" {
            continue;
        }
        let Some(tool) = tools.next() else {
            bail!(
                "the replay reads more tool calls from {} than it logged",
                rel(&log)
            );
        };
        let call = line["call"].as_u64().unwrap_or(0);
        let mut note = String::new();
        if line["nudge"] == true {
            nudged_call = call;
            reminder = line["text"].as_str().unwrap_or_default().to_owned();
            note = "  <- threshold reached: nudge".into();
        }
        println!(
            "  {call:>4}  {:<5}  {:<30}  {:<30}  {:<24}  {:>5}{note}",
            tool.name,
            clip(&arguments(tool), 30),
            clip(&result(tool), 30),
            added(before, line),
            format!("{}/{threshold}", line["debt"]),
        );
        before = line;
    }
    let conversation = turn.conversation();
    let Some(carrier) = conversation
        .iter()
        .position(|r| !reminder.is_empty() && scenario::request_text(&r.body).contains(&reminder))
    else {
        bail!("no conversation request carries the replay's reminder");
    };
    println!(
        "\nThe reminder rode in model request {} of {} (a `user` message right after call {nudged_call}'s \
         result; requests 1-{carrier} had none). What the model saw:\n",
        carrier + 1,
        conversation.len(),
    );
    for line in reminder.lines() {
        println!("  | {line}");
    }
    println!("\nThe model's final answer: {}", turn.stdout.trim());
    println!(
        "\nThe same session log through the replay CLI: node {} replay {}",
        rel(
            &crate::pack::unpacked_dir(crate::packages::research_nudge())
                .join("bin")
                .join("research-nudge.js")
        ),
        rel(&log)
    );
    println!("checked ({}): {summary}\n", story.name);

    // The other packages, each in one of its release-smoke scenarios, request by request.
    for (package, file, note) in DEMO_SCENARIOS {
        let scenario = Scenario::load(&scenario::dir().join(file))?;
        let (turn, summary) = timings.step(&format!("{package}: {}", scenario.name), || {
            scenario.run(&harness)
        })?;
        println!(
            "\n================ {package} demo ================\n{}.\n{note}\n",
            scenario.about
        );
        for line in scenario::transcript(&turn) {
            println!("{line}");
        }
        println!("\nchecked: {summary}\n");
    }
    println!("seconds per step");
    print!("{}", timings.table());
    Ok(())
}

fn clip(text: &str, width: usize) -> String {
    text::clip_within(&text.replace('\n', " "), width)
}

/// The debt a call added and why, from two consecutive replay lines.
fn added(before: &Value, after: &Value) -> String {
    let n = |v: &Value, key: &str| v[key].as_i64().unwrap_or(0);
    let debt = n(after, "debt") - n(before, "debt");
    let why = if n(after, "repeated_failures") > n(before, "repeated_failures") {
        " (same failure again)"
    } else if n(after, "failures") > n(before, "failures") {
        " (failed)"
    } else {
        ""
    };
    format!("{debt:+}{why}")
}

fn arguments(tool: &ToolEvent) -> String {
    let a = &tool.args;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    match tool.name.as_str() {
        "read" => s(&a["file_path"]),
        "edit" => format!(
            "{}: {} -> {}",
            s(&a["file_path"]),
            s(&a["old_string"]),
            s(&a["new_string"])
        ),
        "bash" => match a["description"].as_str() {
            Some(what) => format!("{what}: {}", s(&a["command"])),
            None => s(&a["command"]),
        },
        _ => a.to_string(),
    }
}

fn result(tool: &ToolEvent) -> String {
    let last_line = || {
        tool.text
            .lines()
            .rev()
            .find(|l| !l.starts_with("[exit code") && !l.trim().is_empty())
            .unwrap_or_default()
            .to_owned()
    };
    if tool.is_error {
        format!("error: {}", tool.text.lines().next().unwrap_or_default())
    } else {
        match tool.exit_code {
            Some(0) => "exit 0".into(),
            Some(code) => format!("exit {code}: {}", last_line()),
            None => "ok".into(),
        }
    }
}
