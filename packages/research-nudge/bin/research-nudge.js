#!/usr/bin/env node
// research-nudge replay: feeds recorded tool events or a DSH session log through the same Rust
// core the plugin runs. This file only names the engine; the I/O is the family's shared replay
// CLI, and the formats and the output live in Rust. The replay has its own WebAssembly module
// (the plugin's policy plus the replay, session-log reading and drawing), so the module DSH
// loads at boot holds only the plugin.
import { readFileSync } from 'node:fs'
import { Corpus, initSync, Replay } from '../pkg/research_nudge_cli.js'
import { runReplayCli } from '../lib/common/replay-cli.js'

initSync({ module: readFileSync(new URL('../pkg/research_nudge_cli_bg.wasm', import.meta.url)) })

const USAGE = `usage: research-nudge replay [--config FILE] [EVENTS.jsonl | -] [--json | --html OUT.html]
       research-nudge replay [--config FILE] --corpus DIR [--labels FILE] [--half tune|report] [--json]

  Replays tool events through research-nudge's policy. The input is either the replay event
  format (one JSON object per line; prints one JSON state line per event) or a DSH session log
  ($DSH_HOME/sessions/…/session.jsonl.zstd, .jsonl or .jsonl.gz; prints a timeline, or JSON
  lines with --json). --html draws the debt over the session instead (thresholds, reminders,
  holds, research resets) into one self-contained HTML file. --config takes a JSON object
  holding the row's config.

  --corpus replays every run in DIR (replay-event files, one tool call per line, or DSH session
  logs such as $DSH_HOME/sessions) and prints one table row per source and label: runs, the share
  with a reminder, reminders per run, where the first one falls, injected characters per run, and
  what followed each reminder within 5 calls. --labels maps run ids (the path under DIR without
  the extension) to labels; --half replays one fixed half.`

await runReplayCli({ command: 'research-nudge', usage: USAGE, createReplay: (config) => new Replay(config), createCorpus: (config, half) => new Corpus(config, half) })
