// Shared helpers for the node benches: statistics, the plugin mount on a real Cordis context, and
// the realistic tool-event stream. Every bench prints exactly one JSON object on stdout's last
// line; `cargo xtask bench` collects them into target/bench/report.json.
import { Context, Service } from '@deepseek-ai/cordis'
import { pathToFileURL } from 'node:url'
import path from 'node:path'

/** Median, min and max of a list of numbers. */
export function stats(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  return { median, min: sorted[0], max: sorted[sorted.length - 1], runs: sorted.length }
}

/** Command-line `--key value` options. */
export function options(defaults) {
  const out = { ...defaults }
  const argv = process.argv.slice(2)
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '')
    if (!(key in out)) throw new Error(`unknown option ${argv[i]}`)
    const value = argv[++i]
    out[key] = typeof defaults[key] === 'number' ? Number(value) : value
  }
  return out
}

/** The plugin module under test: `<root>/lib/index.js` (the repo, or a variant build's copy). */
export async function loadPlugin(root) {
  return import(pathToFileURL(path.resolve(root, 'lib/index.js')).href)
}

/** The `tools` service DSH provides, reduced to `register` (run as an effect of the caller). */
class Tools extends Service {
  constructor(ctx) {
    super(ctx, 'tools')
    this.registered = new Map()
  }

  register(definition) {
    return this.ctx.effect(() => {
      this.registered.set(definition.name, definition)
      return () => this.registered.delete(definition.name)
    }, 'tools.register()')
  }
}

/** A Cordis context with research-nudge mounted through `ctx.plugin`. */
export async function mountPlugin(Plugin, config = {}) {
  const ctx = new Context()
  const tools = new Tools(ctx)
  await ctx.plugin(Plugin, config)
  const snooze = tools.registered.get('research_nudge_snooze')
  if (!snooze) throw new Error('the plugin did not register its snooze tool')
  return { ctx, execute: snooze.execute }
}

/** The baseline: the same waterfall with one listener that only calls `next()`, and a snooze tool
 * body that does nothing. */
export function mountBaseline() {
  const ctx = new Context()
  new Tools(ctx)
  ctx.on('tools/post-execute', (_exec, _result, next) => next())
  return { ctx, execute: async () => 'ok' }
}

/** A small deterministic PRNG (mulberry32), so every run sees the same stream. */
export function random(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const FILES = ['src/app.ts', 'src/lib/parse.ts', 'tests/parse.test.ts', 'README.md', 'Cargo.toml', 'src/main.rs']

function testFailure(rand, bytes) {
  const lines = []
  let size = 0
  let i = 0
  while (size < bytes) {
    const n = Math.floor(rand() * 900) + 10
    const line = i % 7 === 0
      ? `  at Object.<anonymous> (/home/dev/project/${FILES[i % FILES.length]}:${n}:${(n * 7) % 80})`
      : i % 5 === 0
        ? `AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: ${n} !== ${n + 1}`
        : `    ✗ parses case ${n} (${(n / 10).toFixed(1)} ms)`
    lines.push(line)
    size += line.length + 1
    i++
  }
  return lines.join('\n')
}

/** Kinds of tool events, with their share of the stream (per 100). */
export const MIX = [
  ['read', 30],
  ['grep', 10],
  ['edit', 15],
  ['write', 3],
  ['bash ok', 14],
  ['bash exit != 0', 10],
  ['tool error', 6],
  ['web_search', 8],
  ['web_fetch', 2],
  ['snooze', 2],
]

let calls = 0

function execOf(name, agent) {
  calls += 1
  return { name, arguments: {}, agent, token: Symbol('call'), callId: `call_${calls}` }
}

/**
 * The realistic stream: `count` tool events over `agents` agents, in the shares of [`MIX`]:
 * reads, greps, edits, writes, successful and failing bash calls (the exit code in `value`, 1–3
 * KiB of test output), tool errors, research calls and snoozes. Each event carries what the Cordis
 * waterfall passes (`exec`, `result`) and a plain description (`plain`) the native replay reads.
 */
export function stream({ count = 4096, agents = 8, seed = 42 } = {}) {
  const rand = random(seed)
  const people = Array.from({ length: agents }, (_, i) => ({ id: `agent-${i}` }))
  const table = MIX.flatMap(([kind, share]) => Array(share).fill(kind))
  const events = []
  for (let i = 0; i < count; i++) {
    const a = Math.floor(rand() * agents)
    const agent = people[a]
    const kind = table[Math.floor(rand() * table.length)]
    const file = FILES[Math.floor(rand() * FILES.length)]
    let name
    let result
    let plain
    let snoozeArgs
    switch (kind) {
      case 'read':
      case 'grep': {
        name = kind === 'read' ? 'read_file' : 'grep'
        const text = `contents of ${file}\n`.repeat(20)
        result = { isError: false, value: text, content: [{ type: 'text', text }] }
        plain = { name, ok: true }
        break
      }
      case 'edit':
      case 'write': {
        name = kind === 'edit' ? 'edit_file' : 'write_file'
        result = { isError: false, value: 'ok', content: [{ type: 'text', text: `updated ${file}` }] }
        plain = { name, ok: true }
        break
      }
      case 'bash ok': {
        name = 'bash'
        const stdout = 'all 42 tests passed\n'
        result = { isError: false, value: { exitCode: 0, stdout, stderr: '' }, content: [{ type: 'text', text: stdout }] }
        plain = { name, ok: true, exitCode: 0 }
        break
      }
      case 'bash exit != 0': {
        name = 'bash'
        const exitCode = rand() < 0.8 ? 1 : 2
        const output = testFailure(rand, 1024 + Math.floor(rand() * 2048))
        const text = `${output}\n[exit code: ${exitCode}]`
        result = { isError: false, value: { exitCode, stdout: output, stderr: '' }, content: [{ type: 'text', text }] }
        plain = { name, ok: true, exitCode, text }
        break
      }
      case 'tool error': {
        name = rand() < 0.5 ? 'edit_file' : 'read_file'
        const message = name === 'edit_file'
          ? `old_string not found in /home/dev/project/${file} (line ${Math.floor(rand() * 400)})`
          : `ENOENT: no such file or directory, open '/home/dev/project/${file}'`
        result = { isError: true, error: { message }, content: [{ type: 'text', text: `Error: ${message}` }] }
        plain = { name, ok: false, text: message }
        break
      }
      case 'web_search':
      case 'web_fetch': {
        name = kind
        const text = 'search results\n'.repeat(30)
        result = { isError: false, value: text, content: [{ type: 'text', text }] }
        plain = { name, ok: true }
        break
      }
      case 'snooze': {
        name = 'research_nudge_snooze'
        snoozeArgs = { minutes: 5 + Math.floor(rand() * 20), reason: 'making progress locally' }
        result = { isError: false, value: 'snoozed', content: [{ type: 'text', text: 'snoozed' }] }
        plain = { name, ok: true, snoozeMinutes: snoozeArgs.minutes }
        break
      }
      default:
        throw new Error(kind)
    }
    events.push({ kind, agent, exec: execOf(name, agent), result, snoozeArgs, plain: { agent: a, ...plain } })
  }
  return events
}

const DECISION = Object.freeze({ kind: 'accept' })
const inner = async () => DECISION

/** Which clock the benches report: `cpu` (this process's CPU time, the default: on a shared,
 * noisy machine it leaves out the time the process waited for a core) or `wall`. */
export const CLOCK = process.env.BENCH_CLOCK === 'wall' ? 'wall' : 'cpu'

/** This process's CPU time so far, ns. */
export function cpuNs() {
  const { user, system } = process.cpuUsage()
  return (user + system) * 1000
}

/** Runs `n` events of `events` (cycled from `start`) through the `tools/post-execute` waterfall
 * of `mounted`, as DSH dispatches them (a snooze call's tool body first); returns ns/event on
 * [`CLOCK`]. */
export async function runEvents(mounted, events, n, start = 0) {
  const { ctx, execute } = mounted
  const len = events.length
  const c0 = cpuNs()
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    const e = events[(start + i) % len]
    if (e.snoozeArgs !== undefined) await execute(e.snoozeArgs, e.exec)
    await ctx.waterfall('tools/post-execute', e.exec, e.result, inner)
  }
  const wall = Number(process.hrtime.bigint() - t0) / n
  const cpu = (cpuNs() - c0) / n
  return CLOCK === 'wall' ? wall : cpu
}

/** Prints the bench's result as the last line of stdout. */
export function emit(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
