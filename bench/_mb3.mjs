import { loadPlugin, mountPlugin, mountBaseline, runEvents, stream, stats } from './common.mjs'
const Plugin = await loadPlugin('packages/research-nudge')
const all = stream({ count: 4096, agents: 8 })
for (const kinds of [['read'], ['edit'], ['bash ok'], ['web_search'], ['snooze']]) {
  const ev = all.filter((e) => kinds.includes(e.kind))
  const p = await mountPlugin(Plugin, {}); const b = mountBaseline()
  await runEvents(b, ev, 100000); await runEvents(p, ev, 100000)
  const added = []
  for (let r = 0; r < 7; r++) { const bb = await runEvents(b, ev, 100000); const pp = await runEvents(p, ev, 100000); added.push(pp - bb) }
  console.log(kinds.join(','), stats(added).median.toFixed(0))
}
