// research-nudge: the DSH plugin module. This shim is the only code that knows DSH: it turns
// `tools/post-execute` and `agent/pre-step` events into flat calls on the Rust core (compiled to
// WebAssembly) and folds the core's reminder into the downstream decision. Every rule, default,
// threshold and message lives in Rust; nothing here decides behaviour.
import { AgentTracker, Flag, Outcome, Plugin, encodeConfig, endProbe, failureWindow, memory, validateConfig } from './core.js'
import { standardSchema } from './common/config.js'
import { createReporter, createTextWriter, createToolTable, isAgent, isUserPrompt, noticeMessage, textOf } from './common/dsh.js'

export const name = 'research-nudge'
export const inject = ['tools']

/** Standard Schema v1: DSH runs `validate` before `apply` and prints the issues. */
export const Config = standardSchema(name, validateConfig)

/** DSH's execution tokens are fresh symbols; anything else simply cannot arm a snooze. */
function canKeyWeakMap(token) {
  if (typeof token === 'symbol') return Symbol.keyFor(token) === undefined
  return token !== null && (typeof token === 'object' || typeof token === 'function')
}

// Bytes the Rust fingerprint reads from each end; slicing as many UTF-16 units always covers them.
const WINDOW = failureWindow()
const OK = Flag.Ok
const KILLED = Flag.Killed
const TIMED_OUT = Flag.TimedOut
const END_ONLY = Flag.EndOnly
const NUDGE = Outcome.Nudge
const NEED_TEXT = Outcome.NeedText
// A longer shell output crosses first as only its last this many UTF-16 units (the core says how
// many, and answers NEED_TEXT when that end does not decide).
const END_PROBE = endProbe()
// Interned tool names the core keeps before it starts afresh (then this shim's map does too).
const TOOL_LIMIT = Plugin.toolLimit()

export function apply(ctx, config) {
  // DSH has already validated `config`; direct callers get the same fail-loud check.
  const plugin = new Plugin(encodeConfig(config))
  if (!plugin.enabled) return

  const now = () => performance.now()
  const report = createReporter(name, now)
  const trackers = new WeakMap()
  const snoozes = new WeakMap()
  const trackerFor = (agent) => {
    let tracker = trackers.get(agent)
    if (tracker === undefined) {
      tracker = new AgentTracker(now())
      trackers.set(agent, tracker)
    }
    return tracker
  }
  // Read once: every getter call crosses into WebAssembly.
  const debug = plugin.debug
  const logDebug = (line) => { if (line) console.error(line) }

  const snoozeTool = JSON.parse(plugin.snoozeToolJson())
  ctx.tools.register({
    ...snoozeTool,
    output: {
      schema: { type: 'string' },
      render: (_args, value) => [{ type: 'text', text: String(value) }],
    },
    async execute(args, exec) {
      const minutes = plugin.snoozeMinutes(JSON.stringify(args ?? null) ?? 'null')
      const agent = exec?.agent
      if (!isAgent(agent)) return plugin.snoozeReply(minutes)
      // Keyed by this call's token: only our own tool body can arm a snooze.
      if (canKeyWeakMap(exec.token)) {
        if (!snoozes.has(exec.token)) pendingSnoozes += 1
        snoozes.set(exec.token, minutes)
      }
      return trackerFor(agent).snoozeReply(plugin, now(), minutes)
    },
  })

  const toolOf = createToolTable(plugin, TOOL_LIMIT)
  const writeText = createTextWriter(plugin, memory)
  // Snoozes armed by the tool body and not yet observed: most events skip the token look-up.
  let pendingSnoozes = 0
  const takeSnooze = (token) => {
    if (pendingSnoozes === 0 || !canKeyWeakMap(token) || !snoozes.has(token)) return undefined
    const minutes = snoozes.get(token)
    snoozes.delete(token)
    pendingSnoozes -= 1
    return minutes
  }

  function observe(exec, result, downstream) {
    const agent = exec?.agent
    if (!isAgent(agent)) return undefined
    const toolName = exec.name
    if (typeof toolName !== 'string' || toolName === '') throw new TypeError('tool event without a name')
    if (result === null || typeof result !== 'object') throw new TypeError(`tool "${toolName}" finished without a result`)
    const blocked = downstream?.kind === 'block'
    const ok = result.isError !== true && !blocked
    let flags = 0
    let exitCode
    if (ok) {
      flags = OK
      const value = result.value
      if (value !== null && typeof value === 'object') {
        const code = value.exitCode
        if (Number.isInteger(code)) exitCode = code
        if (typeof value.signal === 'string') flags |= KILLED
        if (value.timedOut === true) flags |= TIMED_OUT
      }
    }
    const tracker = trackerFor(agent)
    const id = toolOf(toolName).id
    let outcome
    if (ok && flags === OK && (exitCode === undefined || exitCode === 0)) {
      outcome = tracker.observe(plugin, now(), id, flags, exitCode, takeSnooze(exec.token))
    } else {
      takeSnooze(exec.token)
      // A failure: its text (the error message, or a shell call's output) is cut to the windows
      // the fingerprint reads, so a 10 MiB error never crosses into WebAssembly whole. A shell
      // failure (the result is not an error) is fingerprinted by the end of its output only.
      const message = result.isError === true ? result.error?.message : undefined
      const text = blocked
        ? textOf(downstream.feedback)
        : typeof message === 'string' && message !== '' ? message : textOf(result.content)
      const at = now()
      let head = text
      let tail = ''
      if (ok) {
        head = ''
        if (text.length > END_PROBE) {
          const endLen = writeText(text.slice(-END_PROBE))
          outcome = tracker.observeFailureText(plugin, at, id, flags | END_ONLY, exitCode, 0, endLen)
        }
        tail = text.length <= WINDOW ? text : text.slice(-WINDOW)
      } else if (text.length > 2 * WINDOW) {
        head = text.slice(0, WINDOW)
        tail = text.slice(-WINDOW)
      }
      if (outcome === undefined || outcome === NEED_TEXT) {
        const headLen = writeText(head)
        const tailLen = writeText(tail, headLen)
        // DSH's error code: a call it rejected as an unknown tool is not counted (the core says).
        const code = result.isError === true && typeof result.error?.info?.code === 'string' ? result.error.info.code : undefined
        outcome = tracker.observeFailureText(plugin, at, id, flags, exitCode, headLen, tailLen, code)
      }
    }
    if (debug) logDebug(tracker.debugLine(toolName))
    if (outcome !== NUDGE) return undefined
    return noticeMessage(name, tracker.reminder(plugin, offeredTools(agent)), tracker.summary(plugin))
  }

  // The tool names DSH offers this agent (in Code Mode, the ones its programs can call), one a
  // line; read only when a reminder fires. Undefined when the registry cannot say.
  function offeredTools(agent) {
    if (typeof ctx.tools?.schemas !== 'function') return undefined
    const schemas = ctx.tools.schemas(agent)
    return Array.isArray(schemas) ? schemas.map((schema) => String(schema?.name ?? '')).join('\n') : undefined
  }

  // Observe and enrich, never veto: delegate first so the count reflects the final outcome (a
  // call blocked downstream counts as failed), then fold the reminder into whatever came back.
  function fold(exec, result, downstream) {
    let nudge
    try {
      nudge = observe(exec, result, downstream)
    } catch (error) {
      report('malformed tool event ignored; tool call passed through', error)
    }
    if (nudge === undefined || downstream === null || typeof downstream !== 'object') return downstream
    const existing = Array.isArray(downstream.additionalContexts) ? downstream.additionalContexts : []
    return { ...downstream, additionalContexts: [nudge, ...existing] }
  }

  // Not an async function: chaining one `then` on the downstream promise costs a fraction of an
  // async function's own promise and resumption, on every tool call. The listener still always
  // returns a promise, and a downstream that throws or rejects propagates as it did.
  ctx.on('tools/post-execute', (exec, result, next) => {
    let downstream
    try {
      downstream = next()
    } catch (error) {
      return Promise.reject(error)
    }
    if (downstream !== null && (typeof downstream === 'object' || typeof downstream === 'function') && typeof downstream.then === 'function') {
      return downstream.then((decision) => fold(exec, result, decision))
    }
    return Promise.resolve(fold(exec, result, downstream))
  })

  // A human prompt starts a new task: the agent's debt, clock, cooldown and snooze start afresh.
  // Injected plugin messages (our own reminders included) have other source kinds.
  ctx.on('agent/pre-step', (step, next) => {
    try {
      const agent = step?.agent
      if (isAgent(agent) && Array.isArray(step.messages) && step.messages.some(isUserPrompt)) {
        const tracker = trackerFor(agent)
        tracker.userPrompt(plugin, now())
        if (debug) logDebug(tracker.debugLine(''))
      }
    } catch (error) {
      report('malformed pre-step event ignored; step passed through', error)
    }
    return next()
  })
}
