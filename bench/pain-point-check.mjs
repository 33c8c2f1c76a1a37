// pain-point-check's cost per tool call on a real Cordis context: the guard (after the
// `tools/pre-execute` waterfall) plus the `tools/result` listener, against a baseline with a no-op
// guard and a no-op result listener, in the same process and round. The stream is 8 agents
// running a realistic mix (successes, failing shell runs, repeated calls, investigation calls),
// so gates arm, deny and (with a reply that answers) lift. Also: cold start (import + validate).
// `--before DIR` also measures the package at DIR (an earlier checkout's) in the same rounds.
import { Context, Service } from '@deepseek-ai/cordis'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { CLOCK, cpuNs, emit, options, random, stats } from './common.mjs'

const opt = options({ root: 'packages/pain-point-check', before: '', calls: 100000, rounds: 15, runs: 20, child: '' })

if (opt.child) {
  // One cold start: import (compile + instantiate the WebAssembly) and validate, as DSH does.
  const t0 = performance.now()
  const Plugin = await import(pathToFileURL(path.resolve(opt.child, 'lib/index.js')).href)
  const t1 = performance.now()
  const result = Plugin.Config['~standard'].validate({ failureThreshold: 3, extraAllowlist: ['mcp__docs__*'] })
  const t2 = performance.now()
  if (!result.value) throw new Error(JSON.stringify(result))
  process.stdout.write(`${JSON.stringify({ import_ms: t1 - t0, validate_ms: t2 - t1, total_ms: t2 - t0 })}\n`)
  process.exit(0)
}

class Tools extends Service {
  constructor(ctx) {
    super(ctx, 'tools')
    this.guards = []
  }

  guard(guard) {
    return this.ctx.effect(() => {
      this.guards.push(guard)
      return () => { this.guards = this.guards.filter((g) => g !== guard) }
    }, 'tools.guard()')
  }
}

/** A Cordis context with the package at `root` mounted, or the baseline (no-op guard and
 * result listener) without one. */
async function setup(root) {
  const ctx = new Context()
  const tools = new Tools(ctx)
  if (root) {
    const Plugin = await import(pathToFileURL(path.resolve(root, 'lib/index.js')).href)
    await ctx.plugin(Plugin, {})
  } else {
    tools.guard(() => undefined)
    ctx.on('tools/result', () => {})
  }
  return { ctx, tools }
}

const NAMES = ['read', 'grep', 'edit', 'bash', 'bash', 'write', 'glob', 'bash']
const ANSWER = 'blocker=the test runner cannot load the fixture\nruled_out=a path typo: the file exists\nbest_path=print the loader search path'

// What a file read returns: a successful call's text can be large (28 KiB here).
const LARGE_OUTPUT = Array.from({ length: 400 }, (_, i) => `line ${i}: fn parse_${i}(input: &str) -> Result<Token, Error> { todo!() }`).join('\n')

/** The call mix; with `large`, every successful call's text is [`LARGE_OUTPUT`]. */
function stream(n, large = false) {
  const rand = random(42)
  const out = []
  for (let i = 0; i < n; i++) {
    const agent = { id: `agent-${Math.floor(rand() * 8)}` }
    const name = NAMES[Math.floor(rand() * NAMES.length)]
    const failing = name === 'bash' && rand() < 0.3
    const args = { command: `cmd ${Math.floor(rand() * 4)}`, path: `src/f${Math.floor(rand() * 6)}.rs` }
    const result = failing
      ? { isError: false, value: { exitCode: 1, signal: null, timedOut: false }, content: [{ type: 'text', text: '[exit code: 1]' }] }
      : { isError: false, value: 'ok', content: [{ type: 'text', text: large ? LARGE_OUTPUT : 'ok' }] }
    out.push({ exec: { name, arguments: args, agent, token: Symbol('t'), callId: `c${i}` }, result, reply: rand() < 0.02 })
  }
  return out
}

/** ns per call on [`CLOCK`]. */
async function drive({ ctx, tools }, events) {
  const c0 = cpuNs()
  const t0 = process.hrtime.bigint()
  for (const { exec, result, reply } of events) {
    let reason
    for (const guard of tools.guards) {
      reason = guard(exec)
      if (reason !== undefined) break
    }
    const final = reason === undefined ? result : { isError: true, content: [{ type: 'text', text: `Error: ${reason}` }], error: { message: reason } }
    ctx.emit('tools/result', exec, final)
    if (reply) {
      ctx.emit('session/event', { id: exec.agent.id }, { type: 'assistant/message', data: { message: { content: [{ type: 'text', text: ANSWER }] } } })
    }
  }
  const wall = Number(process.hrtime.bigint() - t0) / events.length
  return CLOCK === 'wall' ? wall : (cpuNs() - c0) / events.length
}

const sides = [['baseline', ''], ['plugin', opt.root]]
if (opt.before) sides.push(['before', opt.before])

/** ns per call of every side over `events`, against the baseline of the same round. */
async function measure(events, rounds) {
  const ns = Object.fromEntries(sides.map(([side]) => [side, []]))
  // Warm-up: JIT every path.
  for (const [, root] of sides) await drive(await setup(root), events)
  for (let round = 0; round < rounds; round++) {
    // A fresh context per round, so every round starts with no gates; the side that goes first
    // rotates.
    const mounted = await Promise.all(sides.map(([, root]) => setup(root)))
    for (let k = 0; k < sides.length; k++) {
      const i = (round + k) % sides.length
      ns[sides[i][0]].push(await drive(mounted[i], events))
    }
  }
  const against = (side) => ({
    [side]: stats(ns[side]),
    [`${side}_added`]: stats(ns[side].map((p, i) => p - ns.baseline[i])),
    [`${side}_ratio`]: stats(ns[side].map((p, i) => p / ns.baseline[i])),
  })
  const plugin = against('plugin')
  const perCall = { baseline: stats(ns.baseline), plugin: plugin.plugin, added: plugin.plugin_added, ratio: plugin.plugin_ratio }
  if (opt.before) Object.assign(perCall, against('before'))
  return perCall
}

const perCall = await measure(stream(opt.calls), opt.rounds)
// The same mix with large successful outputs, fewer calls (each carries 28 KiB).
const largeOutputs = await measure(stream(Math.max(1000, opt.calls >> 3), true), Math.max(5, opt.rounds >> 1))

const cold = []
for (let i = 0; i <= opt.runs; i++) {
  const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--child', opt.root], { encoding: 'utf8' })
  if (child.status !== 0) throw new Error(`cold-start child failed: ${child.stderr}`)
  if (i > 0) cold.push(JSON.parse(child.stdout.trim().split('\n').pop()).total_ms)
}

emit({
  bench: 'pain-point-check',
  clock: CLOCK,
  calls: opt.calls,
  per_call_ns: perCall,
  large_outputs_per_call_ns: { output_chars: LARGE_OUTPUT.length, ...largeOutputs },
  cold_start_ms: stats(cold),
})
