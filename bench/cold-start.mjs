// Cold start: each run is a fresh Node process that imports the plugin module (which compiles and
// instantiates the WebAssembly synchronously) and validates a config, as DSH does before `apply`.
// The child measures from just before the import to just after validation; the parent also
// records the whole process, spawn to exit.
//
// `--host DIR` (DSH's install, `.cache/dsh/app`) is the variant in a real host: before the clock
// starts the child loads Cordis and DSH's heavy modules from DIR (the agent loop, tools, LLM,
// app boot) and makes a Cordis context with a `tools` service, as a booting DSH has them; the
// clock then covers import + instantiate + validate + apply (`ctx.plugin(Plugin, config)`), each
// phase reported on its own.
//
// `--original DIR` (a built copy of the original research-nudge) alternates each run's child with
// one of the original's, the first of each pair alternating, and reports the original's figures
// and the ratio of each pair next to ours.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { emit, options, stats } from './common.mjs'

/** What a booting DSH has loaded before it imports its plugins. */
const HOST_MODULES = [
  '@deepseek-ai/dsh-base',
  '@deepseek-ai/dsh-tools',
  '@deepseek-ai/dsh-llm',
  '@deepseek-ai/dsh-agent',
  '@deepseek-ai/dsh-agent-loop',
  '@deepseek-ai/dsh-app-boot',
  '@deepseek-ai/dsh-headless',
]

const CONFIG = { debtThreshold: 12, researchTools: ['web_search', 'docs_lookup'] }

async function host(dir) {
  const req = createRequire(path.join(dir, 'package.json'))
  const load = (name) => import(pathToFileURL(req.resolve(name)).href)
  const { Context, Service } = await load('@deepseek-ai/cordis')
  for (const name of HOST_MODULES) await load(name)
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
  const ctx = new Context()
  const tools = new Tools(ctx)
  return { ctx, tools }
}

if (process.argv[2] === '--child') {
  const url = pathToFileURL(path.resolve(process.argv[3], 'lib/index.js')).href
  const hostDir = process.argv[4]
  const mounted = hostDir ? await host(hostDir) : undefined
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const Plugin = await import(url)
  const t1 = performance.now()
  const result = Plugin.Config['~standard'].validate(CONFIG)
  const t2 = performance.now()
  if (!result.value) throw new Error(`config did not validate: ${JSON.stringify(result)}`)
  let t3 = t2
  if (mounted) {
    await mounted.ctx.plugin(Plugin, result.value)
    t3 = performance.now()
    if (!mounted.tools.registered.has('research_nudge_snooze')) throw new Error('apply registered no snooze tool')
  }
  const cpu = process.cpuUsage(cpu0)
  process.stdout.write(`${JSON.stringify({
    import_ms: t1 - t0,
    validate_ms: t2 - t1,
    apply_ms: t3 - t2,
    total_ms: t3 - t0,
    // CPU time of the whole process over the same span (V8's compiler threads included).
    cpu_ms: (cpu.user + cpu.system) / 1000,
    since_process_start_ms: t3,
  })}\n`)
} else {
  const opt = options({ root: 'packages/research-nudge', runs: 20, host: '', original: '' })
  const script = new URL(import.meta.url).pathname
  const empty = () => ({ total: [], cpu: [], import: [], validate: [], apply: [], process: [] })
  const sides = [['ours', opt.root, empty()]]
  if (opt.original) sides.push(['original', opt.original, empty()])
  // One unmeasured run of each side warms the file system cache.
  for (let i = 0; i <= opt.runs; i++) {
    for (let k = 0; k < sides.length; k++) {
      const [, root, rows] = sides[(i + k) % sides.length]
      const t0 = performance.now()
      const args = [script, '--child', root]
      if (opt.host) args.push(opt.host)
      const child = spawnSync(process.execPath, args, { encoding: 'utf8' })
      const elapsed = performance.now() - t0
      if (child.status !== 0) throw new Error(`cold-start child failed: ${child.stderr}`)
      if (i === 0) continue
      const r = JSON.parse(child.stdout.trim().split('\n').pop())
      rows.total.push(r.total_ms)
      rows.cpu.push(r.cpu_ms)
      rows.import.push(r.import_ms)
      rows.validate.push(r.validate_ms)
      rows.apply.push(r.apply_ms)
      rows.process.push(elapsed)
    }
  }
  const figures = (rows) => ({
    in_process_ms: stats(rows.total),
    in_process_cpu_ms: stats(rows.cpu),
    import_ms: stats(rows.import),
    validate_ms: stats(rows.validate),
    apply_ms: stats(rows.apply),
    process_ms: stats(rows.process),
  })
  const [[, , ours], original] = sides
  emit({
    bench: 'cold-start',
    host: opt.host ? 'dsh modules loaded first' : 'bare node',
    runs: opt.runs,
    ...figures(ours),
    ...(original && {
      original: figures(original[2]),
      ratio_to_original: stats(ours.total.map((t, i) => t / original[2].total[i])),
    }),
  })
}
