#!/usr/bin/env node
// pain-point-check replay: feeds recorded events or a DSH session log through the same Rust gate
// the plugin runs. This file only names the engine; the I/O is the family's shared replay CLI,
// and the formats and the output live in Rust.
import { PainPointReplay } from '../lib/core.js'
import { runReplayCli } from '../lib/common/replay-cli.js'

const USAGE = `usage: pain-point-check replay [--config FILE] [EVENTS.jsonl | -] [--json]

  Replays events through pain-point-check's gate and shows where it would arm, deny and lift.
  The input is either the replay event format (one JSON object per line: {"tool", "args",
  "result"}, {"user"}, {"assistant"} or {"step": true}, each with an optional "agent"; prints
  one JSON line per event) or a DSH session log ($DSH_HOME/sessions/…/session.jsonl.zstd,
  .jsonl or .jsonl.gz; prints a timeline, or JSON lines with --json). --config takes a JSON
  object holding the row's config.`

await runReplayCli({ command: 'pain-point-check', usage: USAGE, createReplay: (config) => new PainPointReplay(config) })
