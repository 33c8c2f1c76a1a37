// Cold start: each run is a fresh Node process that imports the plugin module (which compiles and
// instantiates the WebAssembly synchronously) and validates a config, as DSH does before `apply`.
// The child measures from just before the import to just after validation; the parent also
// records the whole process, spawn to exit.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { emit, options, stats } from './common.mjs'

if (process.argv[2] === '--child') {
  const url = pathToFileURL(path.resolve(process.argv[3], 'lib/index.js')).href
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const Plugin = await import(url)
  const t1 = performance.now()
  const result = Plugin.Config['~standard'].validate({ debtThreshold: 12, researchTools: ['web_search', 'docs_lookup'] })
  const t2 = performance.now()
  const cpu = process.cpuUsage(cpu0)
  if (!result.value) throw new Error(`config did not validate: ${JSON.stringify(result)}`)
  process.stdout.write(`${JSON.stringify({
    import_ms: t1 - t0,
    validate_ms: t2 - t1,
    total_ms: t2 - t0,
    // CPU time of the whole process over the same span (V8's compiler threads included).
    cpu_ms: (cpu.user + cpu.system) / 1000,
    since_process_start_ms: t2,
  })}\n`)
} else {
  const opt = options({ root: 'packages/research-nudge', runs: 20 })
  const script = new URL(import.meta.url).pathname
  const inProcess = []
  const cpuMs = []
  const importMs = []
  const validateMs = []
  const processMs = []
  // One unmeasured run warms the file system cache.
  for (let i = 0; i <= opt.runs; i++) {
    const t0 = performance.now()
    const child = spawnSync(process.execPath, [script, '--child', opt.root], { encoding: 'utf8' })
    const elapsed = performance.now() - t0
    if (child.status !== 0) throw new Error(`cold-start child failed: ${child.stderr}`)
    if (i === 0) continue
    const r = JSON.parse(child.stdout.trim().split('\n').pop())
    inProcess.push(r.total_ms)
    cpuMs.push(r.cpu_ms)
    importMs.push(r.import_ms)
    validateMs.push(r.validate_ms)
    processMs.push(elapsed)
  }
  emit({
    bench: 'cold-start',
    runs: opt.runs,
    in_process_ms: stats(inProcess),
    in_process_cpu_ms: stats(cpuMs),
    import_ms: stats(importMs),
    validate_ms: stats(validateMs),
    process_ms: stats(processMs),
  })
}
