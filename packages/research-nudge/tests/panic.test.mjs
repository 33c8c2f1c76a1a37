// A Rust panic inside WebAssembly must never reach DSH as an exception from the plugin's listener.
//
// The shipped build has no way to panic on purpose, so this suite loads the fault-injection build:
// the same crates plus the `fault-injection` cargo feature of dsh-wasm-adapter, whose only
// addition is that observing a tool named FAULT_TOOL panics inside `AgentTracker::observe`. With
// `panic = "abort"` the panic is a WebAssembly trap (`RuntimeError: unreachable`) thrown out of
// the core. `cargo xtask build-fault` builds it into the gitignored target/pkg-fault/ (its own
// pkg/ next to a fresh copy of the real lib/), so the shim under test is the shipped shim.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { PROBE, accept, captureErrors, createContext, execOf, ok, post } from './support/harness.mjs'

const FAULT_TOOL = '__research_nudge_fault_injection_panic__'
const root = fileURLToPath(new URL('../../..', import.meta.url))

// Up to date in well under a second when nothing changed; a cold build takes about a minute.
const build = spawnSync(process.env.CARGO ?? 'cargo', ['xtask', 'build-fault'], { cwd: root, encoding: 'utf8' })
if (build.status !== 0) {
  throw new Error(`cargo xtask build-fault failed (${build.status ?? build.error}):\n${build.stdout}\n${build.stderr}`)
}
const FaultPlugin = await import(new URL('../../../target/pkg-fault/lib/index.js', import.meta.url))

async function mountFault(config) {
  const { ctx } = createContext()
  await ctx.plugin(FaultPlugin, config)
  return ctx
}

test('the fault-injection build is the real plugin: ordinary events nudge as usual', async () => {
  const ctx = await mountFault(PROBE)
  const decision = await post(ctx, execOf('bash', {}), ok())
  assert.equal(decision.additionalContexts?.length, 1)
  assert.equal(decision.additionalContexts[0].source.kind, 'research-nudge')
})

test('a panic inside WebAssembly is logged and the downstream decision passes through unchanged', async (t) => {
  const errors = captureErrors(t)
  const ctx = await mountFault(PROBE)
  const downstream = { kind: 'accept', additionalContexts: [{ role: 'user', id: 'x', content: [] }] }
  const decision = await post(ctx, execOf(FAULT_TOOL, {}), ok(), () => downstream)
  assert.equal(decision, downstream, 'the listener must return the downstream decision itself')
  assert.deepEqual(downstream, { kind: 'accept', additionalContexts: [{ role: 'user', id: 'x', content: [] }] })
  assert.equal(errors.length, 1, 'the panic is logged once')
  const [line, error] = errors[0]
  assert.match(line, /^\[research-nudge\] .*tool call passed through/)
  assert.ok(error instanceof WebAssembly.RuntimeError, `expected a WebAssembly trap, got ${error}`)
})

test('a blocked decision from downstream survives a panic too', async (t) => {
  captureErrors(t)
  const ctx = await mountFault(PROBE)
  const blocked = { kind: 'block', feedback: [{ type: 'text', text: 'denied by policy' }] }
  const decision = await post(ctx, execOf(FAULT_TOOL, {}), ok(), () => blocked)
  assert.equal(decision, blocked)
})

// With `panic = "abort"` nothing unwinds: the trap leaves the core as it was mid-call (the borrow
// flags wasm-bindgen keeps for the tracker and the plugin stay taken), so later observations throw
// inside the shim as well. They are caught like the panic: the plugin stops nudging until the
// process restarts, but it never fails or alters a tool call.
test('after a panic every later event still resolves to its downstream decision, never throws', async (t) => {
  const errors = captureErrors(t)
  const ctx = await mountFault(PROBE)
  const agents = [{}, {}, {}]
  await post(ctx, execOf(FAULT_TOOL, agents[0]), ok())
  for (let i = 0; i < 30; i++) {
    const downstream = { kind: 'accept' }
    const agent = agents[i % agents.length]
    const name = i % 10 === 5 ? FAULT_TOOL : 'bash'
    const decision = await post(ctx, execOf(name, agent), ok(), () => downstream)
    assert.equal(decision.kind, 'accept')
    // Either untouched or a spread copy with a reminder in front; never a rejection.
    if (decision !== downstream) assert.equal(decision.additionalContexts[0].source.kind, 'research-nudge')
  }
  // Reports are rate-limited: one line for the first failure within the minute.
  assert.equal(errors.length, 1)
})

test('the shipped build has no fault-injection path', async () => {
  const { ctx } = createContext()
  const Shipped = await import('../lib/index.js')
  await ctx.plugin(Shipped, PROBE)
  const decision = await post(ctx, execOf(FAULT_TOOL, {}), ok(), accept)
  // An ordinary counted call: with PROBE every counted call nudges.
  assert.equal(decision.additionalContexts?.length, 1)
})
