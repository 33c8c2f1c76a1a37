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
import { createReporter, isAgent, sessionCwd } from './common/dsh.js'
import { createMemory, projectRoot, storePaths } from './memory.js'

export const name = 'limit-break'
export const inject = ['tools']

/** The system-prompt section the session-start brief is added as. */
export const BRIEF_SECTION = 'limit-break:memory-brief'

/** Standard Schema v1: DSH runs `validate` before `apply` and prints the issues. */
export const Config = standardSchema(name, (json) => core().validateLimitBreakConfig(json))

/** 16 random hex digits from the platform's secure source: a page cannot guess them. */
function frameNonce() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

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
  // The repository root of each agent's working directory, found once per agent and directory
  // (on DSH 0.2 a session can change its directory).
  const projects = new WeakMap()
  const projectOf = (agent) => {
    if (!isAgent(agent)) return Promise.resolve(undefined)
    const cwd = sessionCwd(agent)
    let known = projects.get(agent)
    if (known?.cwd !== cwd) {
      known = { cwd, found: projectRoot(cwd).catch(() => undefined) }
      projects.set(agent, known)
    }
    return known.found
  }

  if (plugin.sessionBrief) {
    // The brief is read once per agent, at its first prompt assembly (before its first model
    // request), and the same text is added to every later assembly: the system prompt stays
    // byte-identical through the session, so the host's prompt cache keeps working.
    const briefs = new WeakMap()
    ctx.on('system-prompt/assemble', async (assembly, context, next) => {
      const result = await next()
      const agent = context?.agent
      if (!isAgent(agent) || !Array.isArray(result?.sections)) return result
      try {
        let pending = briefs.get(agent)
        if (pending === undefined) {
          pending = projectOf(agent).then((project) => memory.brief(project, plugin.briefMaxChars))
          briefs.set(agent, pending)
        }
        const brief = await pending
        if (brief.failure !== undefined) report('the memory brief was left out', brief.failure.message)
        if (!brief.text) return result
        return { ...result, sections: [...result.sections, { name: BRIEF_SECTION, text: brief.text }] }
      } catch (error) {
        report('the memory brief failed', error)
        return result
      }
    })
  }

  const run = {
    memory_save: async (args, exec) => memory.save(args, await projectOf(exec?.agent)),
    memory_recall: async (args, exec) => memory.recall(args, await projectOf(exec?.agent)),
    memory_stats: () => memory.stats(),
    resilient_fetch: (args, exec) => fetchOnce(args, exec?.signal),
  }
  // A fetch result reads like a fetched page (status line, ladder, text), the page text framed
  // as data with a fresh random nonce per answer; the memory answers are their JSON.
  const renders = {
    resilient_fetch: (value) => wasm.renderFetchResult(JSON.stringify(value), frameNonce()),
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
