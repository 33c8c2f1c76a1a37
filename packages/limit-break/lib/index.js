// limit-break: the DSH plugin module. This shim is the only code that knows DSH: it registers the
// tools whose definitions (names, descriptions, schemas, timeouts) come from the Rust core and
// routes each call to its driver (lib/memory.js for the memory tools, lib/fetch.js for
// resilient_fetch), which performs the I/O the core asks for. Every rule, default, limit,
// decision and message lives in Rust.
//
// Importing this module has no side effects: no file is read, no process spawned and no
// WebAssembly compiled until DSH validates the config or calls `apply`.
import { homedir } from 'node:os'
import { resolve, sep } from 'node:path'
import { core, encodeConfig } from './core.js'
import { standardSchema } from './common/config.js'
import { createReporter } from './common/dsh.js'
import { createMemory, storePaths } from './memory.js'

export const name = 'limit-break'
export const inject = ['tools']

/** Standard Schema v1: DSH runs `validate` before `apply` and prints the issues. */
export const Config = standardSchema(name, (json) => core().validateLimitBreakConfig(json))

/** The answer for a failure no driver could describe (a bug, or a trap inside WebAssembly,
 * after which the core cannot be asked for a message). */
function internalFailure(tool, error) {
  const detail = typeof error?.message === 'string' ? error.message : String(error)
  return { ok: false, code: 'limit-break.internal', message: `${tool} failed unexpectedly: ${detail}` }
}

export function apply(ctx, config) {
  const wasm = core()
  // DSH has already validated `config`; direct callers get the same fail-loud check.
  const plugin = new wasm.LimitBreakPlugin(encodeConfig(config))
  if (!plugin.enabled) return

  const report = createReporter(name, () => performance.now())
  const dshHomeEnv = process.env.DSH_HOME
  const osHome = homedir()
  const paths = storePaths(wasm, resolve(plugin.dshHome(dshHomeEnv, osHome, sep)))
  const memory = createMemory(wasm, plugin, paths, { dshHomeEnv, osHome })
  // lib/fetch.js (node:http, node:https: tens of milliseconds to load) is imported by the first
  // resilient_fetch call, not when DSH imports the plugin.
  let fetch
  const fetchOnce = async (args, signal) => {
    fetch ??= import('./fetch.js').then(({ createFetch }) => createFetch(wasm, plugin))
    return (await fetch)(args, signal)
  }
  const run = {
    memory_save: (args) => memory.save(args),
    memory_recall: (args) => memory.recall(args),
    memory_stats: () => memory.stats(),
    resilient_fetch: (args, exec) => fetchOnce(args, exec?.signal),
  }
  // A fetch result reads like a fetched page (status line, ladder, text); the memory answers
  // are their JSON.
  const renders = {
    resilient_fetch: (value) => wasm.renderFetchResult(JSON.stringify(value)),
  }
  const asJson = (value) => JSON.stringify(value, null, 2)

  for (const tool of JSON.parse(plugin.toolsJson())) {
    const perform = run[tool.name]
    const render = renders[tool.name] ?? asJson
    ctx.tools.register({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      output: {
        schema: tool.outputSchema,
        render: (_args, value) => [{ type: 'text', text: render(value) }],
      },
      timeoutMs: tool.timeoutMs,
      ...(tool.concurrencySafe ? { isConcurrencySafe: () => true } : {}),
      async execute(args, exec) {
        try {
          return await perform(args, exec)
        } catch (error) {
          report(`${tool.name} failed unexpectedly`, error)
          return internalFailure(tool.name, error)
        }
      },
    })
  }
}
