// Per-agent state lives in WebAssembly memory behind a WeakMap entry for the agent: when the agent
// object is garbage-collected its state must be freed, so a long process with many short-lived
// agents (subagents) does not grow without bound.
import test from 'node:test'
import assert from 'node:assert/strict'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import { readFileSync } from 'node:fs'
import { initSync } from '../pkg/research_nudge.js'
import { call, failed, mount } from './support/harness.mjs'

v8.setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')

// core.js already instantiated the module; initSync hands back the same instance's exports.
const wasm = initSync({ module: readFileSync(new URL('../pkg/research_nudge_bg.wasm', import.meta.url)) })

async function settle() {
  for (let i = 0; i < 5; i++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
}

test('state of garbage-collected agents is freed (WebAssembly memory stops growing)', async () => {
  const { ctx } = await mount({})
  const AGENTS = 20_000
  const round = async () => {
    for (let i = 0; i < AGENTS; i++) await call(ctx, {}, 'bash', failed(`boom ${i}`))
    await settle()
    return wasm.memory.buffer.byteLength
  }
  const first = await round()
  await round()
  await round()
  const last = await round()
  // Each round would add several MiB if the 20 000 agents' states were kept.
  assert.ok(last - first < 1024 * 1024, `WebAssembly memory grew from ${first} to ${last} bytes`)
})
