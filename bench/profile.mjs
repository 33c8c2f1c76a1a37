// Where the time of the plugin's tool events goes: runs the realistic stream through the mounted
// plugin under V8's CPU profiler and prints the functions with the most self time (WebAssembly
// functions by name when the variant kept its name section).
import { Session } from 'node:inspector/promises'
import { loadPlugin, mountPlugin, runEvents, stream, options, emit } from './common.mjs'

const opt = options({ root: 'packages/research-nudge', events: 300000, top: 25, config: '{}' })
const Plugin = await loadPlugin(opt.root)
const events = stream({ count: 4096, agents: 8 })
const plugin = await mountPlugin(Plugin, JSON.parse(opt.config))
await runEvents(plugin, events, 50000)

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.setSamplingInterval', { interval: 50 })
await session.post('Profiler.start')
const ns = await runEvents(plugin, events, opt.events)
const { profile } = await session.post('Profiler.stop')

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const self = new Map()
let total = 0
profile.samples.forEach((id, i) => {
  const { callFrame: f } = byId.get(id)
  const where = f.url ? ` ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}` : ''
  const key = `${f.functionName || '(anonymous)'}${where}`
  const dt = profile.timeDeltas[i] ?? 0
  self.set(key, (self.get(key) ?? 0) + dt)
  total += dt
})
const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, opt.top)
  .map(([fn, us]) => ({ fn, self_percent: Math.round((us / total) * 1000) / 10 }))
for (const { fn, self_percent } of top) process.stderr.write(`${String(self_percent).padStart(5)}%  ${fn}\n`)
emit({ bench: 'profile', ns_per_event: ns, top })
