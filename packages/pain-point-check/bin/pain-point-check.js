#!/usr/bin/env node
// pain-point-check replay: feeds recorded events or a DSH session log through the same Rust gate
// the plugin runs. This file only names the engine; the I/O is the family's shared replay CLI,
// and the formats and the output live in Rust.
import { PainPointCorpus, PainPointReplay } from '../lib/core.js'
import { runReplayCli } from '../lib/common/replay-cli.js'

const USAGE = `usage: pain-point-check replay [--config FILE] [EVENTS.jsonl | -] [--json]
       pain-point-check replay [--config FILE] --corpus DIR [--labels FILE] [--half tune|report] [--json]

  Replays events through pain-point-check's gate and shows where it would arm, deny and lift.
  The input is either the replay event format (one JSON object per line: {"tool", "args",
  "result"}, {"user"}, {"assistant"} or {"step": true}, each with an optional "agent"; prints
  one JSON line per event) or a DSH session log ($DSH_HOME/sessions/…/session.jsonl.zstd,
  .jsonl or .jsonl.gz; prints a timeline, or JSON lines with --json). --config takes a JSON
  object holding the row's config.

  --corpus replays every run in DIR (replay-event files of a trajectory corpus, one tool call per
  line, or DSH session logs such as $DSH_HOME/sessions) and prints one table row per source and
  label: runs, the share where the gate armed, arms per run, where the first one falls, denials
  and injected characters per run, and what followed each arming within 5 calls. --labels maps
  run ids (the path under DIR without the extension) to labels; --half replays one fixed half.`

await runReplayCli({ command: 'pain-point-check', usage: USAGE, createReplay: (config) => new PainPointReplay(config), createCorpus: (config, half) => new PainPointCorpus(config, half) })
