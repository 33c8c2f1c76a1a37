// Failure text size: the cost of one failing tool event through the mounted plugin (the shim cuts
// the head and tail windows before crossing into WebAssembly) at 1 KiB, 64 KiB, 1 MiB and 10 MiB
// of error text, against the no-op baseline on the same events. Past the bounded windows the cost
// must stay flat.
import { CLOCK, emit, loadPlugin, mountBaseline, mountPlugin, options, runEvents, stats } from './common.mjs'

const opt = options({ root: 'packages/research-nudge', rounds: 15, only: '' })
const Plugin = await loadPlugin(opt.root)

const SIZES = [['1 KiB', 1 << 10], ['64 KiB', 64 << 10], ['1 MiB', 1 << 20], ['10 MiB', 10 << 20]]
  .filter(([label]) => opt.only === '' || label === opt.only)

/** A failure text of about `bytes` characters shaped like test output. */
function failureText(bytes, salt) {
  const lines = []
  let size = 0
  let i = 0
  while (size < bytes) {
    const n = (i * 7919 + salt * 104729) % 900 + 10
    const line = i % 7 === 0
      ? `  at Object.<anonymous> (/home/dev/project/src/app.ts:${n}:${(n * 7) % 80})`
      : i % 7 === 3
        ? `AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: ${n} !== ${n + 1}`
        : `    ✗ parses case ${n} (${(n / 10).toFixed(1)} ms)`
    lines.push(line)
    size += line.length + 1
    i++
  }
  return lines.join('\n').slice(0, bytes)
}

const agents = Array.from({ length: 8 }, (_, i) => ({ id: `agent-${i}` }))
const rows = []
for (const [label, bytes] of SIZES) {
  // Four distinct texts per size, as bash results with a non-zero exit code and as tool errors.
  const texts = [0, 1, 2, 3].map((salt) => failureText(bytes, salt))
  const events = texts.flatMap((text, t) => agents.map((agent, a) => {
    const exec = { name: 'bash', arguments: {}, agent, token: Symbol('call'), callId: `c${t}${a}` }
    const result = (t + a) % 2 === 0
      ? { isError: false, value: { exitCode: 1, stdout: text, stderr: '' }, content: [{ type: 'text', text }] }
      : { isError: true, error: { message: text }, content: [{ type: 'text', text: `Error: ${text}` }] }
    return { exec, result }
  }))
  // Research nudges are irrelevant here; a high threshold keeps the stream on the observe path.
  const plugin = await mountPlugin(Plugin, { debtThreshold: 1_000_000, maxToolCallsWithoutResearch: 1_000_000 })
  const baseline = mountBaseline()
  const n = bytes >= 1 << 20 ? 4000 : 20000
  for (let i = 0; i < 2; i++) {
    await runEvents(baseline, events, n)
    await runEvents(plugin, events, n)
  }
  const base = []
  const withPlugin = []
  const ratio = []
  const added = []
  for (let r = 0; r < opt.rounds; r++) {
    let b
    let p
    if (r % 2 === 0) {
      b = await runEvents(baseline, events, n)
      p = await runEvents(plugin, events, n)
    } else {
      p = await runEvents(plugin, events, n)
      b = await runEvents(baseline, events, n)
    }
    base.push(b)
    withPlugin.push(p)
    ratio.push(p / b)
    added.push(p - b)
  }
  rows.push({
    label,
    bytes,
    events_per_round: n,
    baseline_ns: stats(base),
    plugin_ns: stats(withPlugin),
    ratio: stats(ratio),
    added_ns: stats(added),
  })
}

// Flat past the windows: the added cost at 1 MiB and 10 MiB stays within 1.5x of 64 KiB's
// (plus 1 µs of slack for noise on a shared machine).
const past = rows.filter((r) => r.bytes >= 64 << 10).map((r) => r.added_ns.median)
const flat = past.length < 2 || Math.max(...past) <= 1.5 * Math.min(...past) + 1000
emit({ bench: 'failure-size', clock: CLOCK, sizes: rows, flat })
