// Test harness: a real Cordis 4 context with a minimal `tools` service, the research-nudge plugin
// mounted through `ctx.plugin`, and helpers that drive the real `tools/post-execute` and
// `agent/pre-step` waterfalls the way DSH dispatches them.
import assert from 'node:assert/strict'
import { Context, Service } from '@deepseek-ai/cordis'
import * as Plugin from '../../lib/index.js'

export { Plugin }

/**
 * A stand-in for DSH's `tools` service. Like the real one, `register` runs as an effect of the
 * *calling* plugin's fiber (Cordis hands the service the caller's context), refuses a duplicate
 * name and returns a disposer, so unloading the plugin removes its tool.
 */
export class ToolsRecorder extends Service {
  constructor(ctx) {
    super(ctx, 'tools')
    this.registered = new Map()
    this.history = []
    // Tool names `schemas` offers besides the registered ones, and the scopes it was asked for.
    this.offered = []
    this.schemaScopes = []
  }

  /** Like DSH's `schemas(scope)`: one schema per tool the scope sees. */
  schemas(scope) {
    this.schemaScopes.push(scope)
    return [...this.offered, ...this.registered.keys()].map((name) => ({ name, description: '', inputSchema: {} }))
  }

  register(definition) {
    return this.ctx.effect(() => {
      const name = definition?.name
      if (this.registered.has(name)) throw new Error(`tool "${name}" is already registered`)
      this.registered.set(name, definition)
      this.history.push(definition)
      return () => {
        if (this.registered.get(name) === definition) this.registered.delete(name)
      }
    }, 'tools.register()')
  }
}

/** A root context with the recorder installed; `mount` it with a config next. */
export function createContext() {
  const ctx = new Context()
  // Constructing a Service provides it from the root fiber, which is already active.
  const tools = new ToolsRecorder(ctx)
  return { ctx, tools }
}

/** Creates a context, mounts the plugin with `config` and returns everything a test needs. */
export async function mount(config = {}) {
  const { ctx, tools } = createContext()
  const fiber = await ctx.plugin(Plugin, config)
  return { ctx, tools, fiber, snooze: tools.registered.get('research_nudge_snooze') }
}

/** Every counted call nudges (no cooldown, call threshold 1): each nudge's signals line then
 * shows the debt and counters after that call, which makes the policy observable. */
export const PROBE = Object.freeze({ maxToolCallsWithoutResearch: 1, cooldownMinutes: 0 })

let calls = 0

/** A `ToolExecution` as the DSH loop builds it. */
export function execOf(name, agent, extra = {}) {
  calls += 1
  return { name, arguments: {}, agent, token: Symbol(`call-${calls}`), callId: `call_${calls}`, ...extra }
}

export function ok(text = 'ok', value = text) {
  return { isError: false, value, content: [{ type: 'text', text }] }
}

export function failed(message) {
  return { isError: true, error: { message }, content: [{ type: 'text', text: `Error: ${message}` }] }
}

/** A bash-style result: a non-zero exit is still a *successful* tool result. */
export function exited(exitCode, output) {
  const text = `${output}\n[exit code: ${exitCode}]`
  return { isError: false, value: { exitCode, stdout: output, stderr: '' }, content: [{ type: 'text', text }] }
}

export const accept = () => ({ kind: 'accept' })

/** Runs `tools/post-execute` through the real Cordis waterfall; `inner` is the innermost next. */
export function post(ctx, exec, result, inner = accept) {
  return ctx.waterfall('tools/post-execute', exec, result, async () => inner())
}

/** Runs `agent/pre-step` through the real Cordis waterfall. */
export function preStep(ctx, step, inner = () => ({ kind: 'enter', messages: step?.messages ?? [] })) {
  return ctx.waterfall('agent/pre-step', step, async () => inner())
}

/** A tool call by `agent` that succeeds (or returns `result`), as one post-execute dispatch. */
export function call(ctx, agent, name, result = ok(), inner = accept) {
  return post(ctx, execOf(name, agent), result, inner)
}

export function userMessage(text) {
  return { role: 'user', id: 'u1', content: [{ type: 'text', text }], source: { kind: 'user' } }
}

/** The research-nudge messages a decision carries (by source). */
export function nudges(decision) {
  const contexts = decision?.additionalContexts ?? []
  return contexts.filter((m) => m?.source?.kind === 'research-nudge')
}

const SIGNALS = /\n\nCurrent signals: debt=(\d+)\/(\d+), tool_calls_since_research=(\d+), failures=(\d+), repeated_failures=(\d+)\.$/

/** The signals of the single nudge in `decision`, as numbers. Fails if there is not exactly one. */
export function signals(decision) {
  const found = nudges(decision)
  assert.equal(found.length, 1, `expected exactly one nudge, got ${found.length}`)
  const match = SIGNALS.exec(found[0].content[0].text)
  assert.ok(match, `no signals line in ${JSON.stringify(found[0].content[0].text.slice(-200))}`)
  const [, debt, threshold, calls, failures, repeated] = match.map(Number)
  return { debt, threshold, calls, failures, repeated }
}

/** Replaces `performance.now` (which the shim reads on every event) with a settable clock. */
export function fakeClock(t, start = 1_000_000) {
  const clock = { now: start, advance(ms) { clock.now += ms } }
  t.mock.method(performance, 'now', () => clock.now)
  return clock
}

/** Captures `console.error` for the rest of the test. */
export function captureErrors(t) {
  const lines = []
  t.mock.method(console, 'error', (...args) => {
    lines.push(args)
  })
  return lines
}

export const MINUTE = 60_000
