// DSH object helpers every plugin shim of the family shares, and the guards' crossing helpers (a
// tool name crosses into WebAssembly once; text is encoded straight into the module's
// memory). They read and build values and decide nothing. One module, not two: each ES
// module costs a host's cold start about half a millisecond. Copied into each package's
// lib/common/ by `cargo xtask build`.

const REPORT_INTERVAL_MS = 60_000

/** Logs event problems at most once a minute, counting what it held back, so a broken event
 * source cannot flood stderr. */
export function createReporter(plugin, now) {
  let lastAt = -Infinity
  let held = 0
  return (what, error) => {
    const at = now()
    if (at - lastAt < REPORT_INTERVAL_MS) {
      held += 1
      return
    }
    const more = held > 0 ? ` (${held} more since the last report)` : ''
    console.error(`[${plugin}] ${what}${more}:`, error)
    lastAt = at
    held = 0
  }
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

/** A user message shaped as DSH's `createUserMessage` makes it: frozen, with a fresh id. Its
 * source kind is the producer's own name: DSH 0.2's session format V4 refuses the shared kind
 * `plugin` (producers declare their own, `packages/core/session` and `packages/llm/llm` of the
 * 0.2 line), and rc.8 renders any kind with `form: 'notice'` as a notice labelled by the kind
 * (`contextProvenance` and `contextForm` in rc.8's `dsh-client-runtime`). */
export function noticeMessage(producer, text, summary) {
  return deepFreeze({
    content: [{ type: 'text', text }],
    source: { kind: producer, form: 'notice', summary },
    role: 'user',
    // Web Crypto's randomUUID (the same v4 generator as node:crypto's): loading node:crypto at
    // import time took ~5 ms of a plugin's cold start; the global loads it on first use.
    id: globalThis.crypto.randomUUID(),
  })
}

/** The directory an agent's session works in now. DSH 0.2 keeps it in a per-session service
 * (`ctx.workingDirectory.get(session)`; its `header.cwd` is only the session's original project:
 * `packages/core/session/src/types.ts` and the working-directory service of the 0.2 line); rc.8
 * has no such service and the header's `cwd` is the directory. */
export function sessionCwd(agent) {
  const service = agent?.ctx?.get?.('workingDirectory')
  const current = typeof service?.get === 'function' ? service.get(agent.session) : undefined
  return typeof current === 'string' ? current : agent?.session?.header?.cwd
}

/** The shapes of `ctx.jobs` on the running DSH line. The 0.2 line's registry (it has
 * `visibleTo`) fences a job by its owner's session id and hands a value result out as
 * `JobOutcome.result` (`packages/jobs/jobs/src/types.ts` of 0.2); rc.8's takes the owning Agent
 * and `JobOutcome.output`. */
export function jobsShapes(jobs) {
  const sessionOwned = typeof jobs?.visibleTo === 'function'
  return {
    owner: (agent) => (sessionOwned ? agent.session?.id ?? agent.session?.header?.id : agent),
    outcome: (status, detail, text) => (sessionOwned ? { status, detail, result: text } : { status, detail, output: text }),
  }
}

export function isAgent(agent) {
  return agent !== null && (typeof agent === 'object' || typeof agent === 'function')
}

/** The text blocks of a content array (or a plain string), joined by newlines. */
export function textOf(blocks) {
  if (typeof blocks === 'string') return blocks
  if (!Array.isArray(blocks)) return ''
  let text = ''
  for (const block of blocks) {
    if (block?.type === 'text' && typeof block.text === 'string') text += (text ? '\n' : '') + block.text
  }
  return text
}

/** Whether a `user/message` (or a pre-step inbox item) was typed by a person. */
export function isUserPrompt(message) {
  return message?.source?.kind === 'user'
}

/** The exit code a shell-style tool reported in its value (DSH reports a non-zero exit as a
 * success: `value.exitCode`), when it is an integer. */
export function exitCodeOf(result) {
  const code = result.value?.exitCode
  return Number.isInteger(code) ? code : undefined
}

/** Tool name -> the core's entry for it, made once per name: `{ id }` (`plugin.toolId`) and
 * what `describe(id)` adds. Past `limit` names the core starts afresh (`plugin.forgetTools`) and
 * so does this map. */
export function createToolTable(plugin, limit, describe = () => undefined) {
  const tools = new Map()
  return (toolName) => {
    let tool = tools.get(toolName)
    if (tool === undefined) {
      if (tools.size >= limit) {
        plugin.forgetTools()
        tools.clear()
      }
      const id = plugin.toolId(toolName)
      tool = { id, ...describe(id) }
      tools.set(toolName, tool)
    }
    return tool
  }
}

const encoder = new TextEncoder()

/** `(text, offset = 0) -> bytes written`: `text` encoded as UTF-8 into the core's text buffer
 * (`plugin.textBuffer`) in `memory`, `offset` bytes in, with one `encodeInto` and no
 * allocation. The buffer grows, keeping what is in it, when `text` might not fit; the view is
 * made again when the memory grows. */
export function createTextWriter(plugin, memory) {
  let size = 0
  let at = 0
  let view = new Uint8Array(0)
  return (text, offset = 0) => {
    if (text === '') return 0
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const end = offset + 3 * text.length
    if (end > size) {
      size = Math.max(end, 2 * size)
      at = plugin.textBuffer(size)
      view = new Uint8Array(memory.buffer, at, size)
    } else if (view.buffer !== memory.buffer) {
      view = new Uint8Array(memory.buffer, at, size)
    }
    return encoder.encodeInto(text, offset === 0 ? view : view.subarray(offset)).written
  }
}
