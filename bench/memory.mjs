// Memory: bytes per agent (WebAssembly heap and JS heap, measured over many agents), then 10^6
// events of the realistic mix over 10^4 long-lived agents with checkpoints every 10^5 events: the
// WebAssembly memory and the JS heap after a full GC must not grow with the number of events.
// Needs --expose-gc.
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { emit, loadPlugin, mountPlugin, options, runEvents, stream } from './common.mjs'

const opt = options({ root: 'packages/research-nudge', events: 1_000_000, agents: 10_000, perAgentCount: 100_000 })
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc')
const Plugin = await loadPlugin(opt.root)

async function settle() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
}

// The glue keeps its instance private, but `initSync` hands back the already initialised
// instance's exports (lib/core.js initialised it on import), and with them its memory.
const glue = await import(pathToFileURL(path.resolve(opt.root, 'pkg/research_nudge.js')).href)
const wasmMemory = glue.initSync({ module: new Uint8Array() }).memory

function snapshot() {
  return { wasm_bytes: wasmMemory.buffer.byteLength, js_heap_bytes: process.memoryUsage().heapUsed, rss_bytes: process.memoryUsage().rss }
}

// Bytes per agent: one event for each of many fresh (and kept) agents.
const { ctx: perAgentCtx } = await mountPlugin(Plugin, {})
const one = stream({ count: 1, agents: 1 })[0]
await settle()
const before = snapshot()
const kept = []
for (let i = 0; i < opt.perAgentCount; i++) {
  const agent = { id: i }
  kept.push(agent)
  await perAgentCtx.waterfall('tools/post-execute', { ...one.exec, agent, token: Symbol('t') }, one.result, async () => ({ kind: 'accept' }))
}
await settle()
const after = snapshot()
const perAgent = {
  agents: opt.perAgentCount,
  wasm_bytes: (after.wasm_bytes - before.wasm_bytes) / opt.perAgentCount,
  js_heap_bytes: (after.js_heap_bytes - before.js_heap_bytes) / opt.perAgentCount,
}
kept.length = 0

// Flat memory over 10^6 events on 10^4 agents.
const mounted = await mountPlugin(Plugin, {})
const events = stream({ count: 20_000, agents: opt.agents, seed: 7 })
const checkpoints = []
const step = opt.events / 10
for (let done = 0; done < opt.events; done += step) {
  await runEvents(mounted, events, step, done)
  await settle()
  checkpoints.push({ events: done + step, ...snapshot() })
}
const first = checkpoints[0]
const last = checkpoints[checkpoints.length - 1]
const span = last.events - first.events
const growth = (last.wasm_bytes - first.wasm_bytes + Math.max(0, last.js_heap_bytes - first.js_heap_bytes)) / span
emit({
  bench: 'memory',
  per_agent: perAgent,
  events: opt.events,
  agents: opt.agents,
  first,
  last,
  checkpoints,
  growth_bytes_per_event: growth,
  // WebAssembly memory never shrinks, so any growth after the first checkpoint would show; the
  // JS heap may wobble with GC timing, so up to 1 MiB of drift is noise, not growth.
  flat: last.wasm_bytes === first.wasm_bytes && last.js_heap_bytes - first.js_heap_bytes < 1 << 20,
})
