import { Session } from 'node:inspector/promises'
import { loadPlugin, mountPlugin, stream } from './common.mjs'
const Plugin = await loadPlugin('packages/research-nudge')
const ev = stream({ count: 4096, agents: 8 }).filter((e) => ['read', 'grep', 'edit', 'write', 'bash ok', 'web_search', 'web_fetch'].includes(e.kind))
const { ctx } = await mountPlugin(Plugin, {})
const hook = ctx.events._hooks['tools/post-execute'][0].callback
const D = Object.freeze({ kind: 'accept' }); const P = Promise.resolve(D); const next = () => P
async function run(n) { const t0 = process.hrtime.bigint(); for (let i = 0; i < n; i++) { const e = ev[i % ev.length]; await hook(e.exec, e.result, next) } return Number(process.hrtime.bigint() - t0) / n }
async function runNoop(n) { const h = ctx.events._hooks['tools/post-execute'][0].callback; const t0 = process.hrtime.bigint(); for (let i = 0; i < n; i++) { const e = ev[i % ev.length]; await next(e.exec, e.result, next) } return Number(process.hrtime.bigint() - t0) / n }
for (let i = 0; i < 5; i++) { await run(200000); await runNoop(200000) }
const a = [], b = []
for (let i = 0; i < 7; i++) { a.push(await run(300000)); b.push(await runNoop(300000)) }
a.sort((x, y) => x - y); b.sort((x, y) => x - y)
console.log('hook', a[3].toFixed(0), 'noop await', b[3].toFixed(0))
const session = new Session(); session.connect()
await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 10 }); await session.post('Profiler.start')
await run(2000000)
const { profile } = await session.post('Profiler.stop')
const byId = new Map(profile.nodes.map((n) => [n.id, n])); const self = new Map(); let total = 0
profile.samples.forEach((id, i) => { const { callFrame: f } = byId.get(id); const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-3).join('/')}:${f.lineNumber + 1}`; const dt = profile.timeDeltas[i] ?? 0; self.set(key, (self.get(key) ?? 0) + dt); total += dt })
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / total * 100).toFixed(1).padStart(5), k)
