// Cost per tool event: the real Cordis `tools/post-execute` waterfall with research-nudge mounted,
// against the same waterfall with a no-op listener, over the realistic stream of 8 agents.
// Rounds alternate which side runs first; each round's ratio and added ns compare the two sides
// of that round only, so machine noise that spans a round cancels out. `--original DIR` (a built
// copy of the original research-nudge) runs as a third side of every round, and of every group.
import { writeFileSync } from 'node:fs'
import { CLOCK, emit, loadPlugin, mountBaseline, mountPlugin, runEvents, stats, stream, options } from './common.mjs'

const opt = options({ root: 'packages/research-nudge', events: 100000, rounds: 15, config: '{}', label: 'default config', 'write-stream': '', original: '' })
const Plugin = await loadPlugin(opt.root)
const Original = opt.original ? await loadPlugin(opt.original) : undefined
const config = JSON.parse(opt.config)
const events = stream({ count: 4096, agents: 8 })
// The same stream, plainly, for the native replay (`bench/src/main.rs`).
if (opt['write-stream']) writeFileSync(opt['write-stream'], JSON.stringify({ agents: 8, events: events.map((e) => e.plain) }))
const plugin = await mountPlugin(Plugin, config)
const baseline = mountBaseline()
const original = Original && await mountPlugin(Original, config)

// Warm-up: JIT every path, fill the name cache and create the agents' trackers.
for (let i = 0; i < 3; i++) {
  await runEvents(baseline, events, opt.events)
  await runEvents(plugin, events, opt.events)
  if (original) await runEvents(original, events, opt.events)
}

const base = []
const with_ = []
const ratio = []
const added = []
const originalRatio = []
const originalAdded = []
let start = 0
for (let r = 0; r < opt.rounds; r++) {
  let b
  let p
  if (r % 2 === 0) {
    b = await runEvents(baseline, events, opt.events, start)
    p = await runEvents(plugin, events, opt.events, start)
  } else {
    p = await runEvents(plugin, events, opt.events, start)
    b = await runEvents(baseline, events, opt.events, start)
  }
  if (original) {
    // The same events, after ours; compared with this round's baseline.
    const o = await runEvents(original, events, opt.events, start)
    originalRatio.push(o / b)
    originalAdded.push(o - b)
  }
  start += opt.events
  base.push(b)
  with_.push(p)
  ratio.push(p / b)
  added.push(p - b)
}

// Where the added cost comes from: the same comparison on the stream's events of one group.
const GROUPS = {
  'successes (reads, edits, bash exit 0, research, snoozes)': (e) => !['bash exit != 0', 'tool error'].includes(e.kind),
  'bash exit != 0 (1-3 KiB of output)': (e) => e.kind === 'bash exit != 0',
  'tool errors (short message)': (e) => e.kind === 'tool error',
}
/** The same failing bash calls with ASCII-only output (the stream's marks a test runner prints
 * as `✗` become `x`): V8 then holds the text as a one-byte string, which encodes to UTF-8 far
 * faster than a two-byte one. Real outputs are both. */
function asciiOnly(e) {
  const text = Buffer.from(e.result.content[0].text.replaceAll('✗', 'x'), 'latin1').toString('latin1')
  return { ...e, result: { ...e.result, content: [{ type: 'text', text }] } }
}
const byKind = {}
const originalByKind = {}
const subsets = Object.entries(GROUPS).map(([group, pick]) => [group, events.filter(pick)])
subsets.push(['bash exit != 0, ASCII-only output', events.filter((e) => e.kind === 'bash exit != 0').map(asciiOnly)])
for (const [group, subset] of subsets) {
  const n = Math.min(opt.events, subset.length * 20)
  const p2 = await mountPlugin(Plugin, config)
  const b2 = mountBaseline()
  await runEvents(b2, subset, n)
  await runEvents(p2, subset, n)
  const o2 = original && await mountPlugin(Original, config)
  if (o2) await runEvents(o2, subset, n)
  const addedHere = []
  const originalHere = []
  for (let r = 0; r < Math.max(5, opt.rounds >> 1); r++) {
    const b = await runEvents(b2, subset, n)
    const p = await runEvents(p2, subset, n)
    addedHere.push(p - b)
    if (o2) originalHere.push(await runEvents(o2, subset, n) - b)
  }
  byKind[group] = { share: subset.length / events.length, added_ns: stats(addedHere) }
  if (o2) originalByKind[group] = { added_ns: stats(originalHere) }
}

emit({
  bench: 'tool-event',
  clock: CLOCK,
  label: opt.label,
  config,
  events_per_round: opt.events,
  agents: 8,
  mix: Object.fromEntries(events.reduce((m, e) => m.set(e.kind, (m.get(e.kind) ?? 0) + 1), new Map())),
  baseline_ns: stats(base),
  plugin_ns: stats(with_),
  ratio: stats(ratio),
  added_ns: stats(added),
  by_kind: byKind,
  ...(original && { original: { ratio: stats(originalRatio), added_ns: stats(originalAdded), by_kind: originalByKind } }),
})
