// pain-point-check: the DSH plugin module. This shim is the only code that knows DSH: it turns
// DSH's hooks into flat calls on one Rust gate per agent (compiled to WebAssembly) and folds the
// gate's answers back in: a veto through `ctx.tools.guard`, the check block as a notice on the
// next step. Every rule, default, threshold, marker and message lives in Rust.
import { GateStatus, LiftResult, PainPointGate, PainPointPlugin, encodeConfig, memory, validatePainPointConfig } from './core.js'
import { standardSchema } from './common/config.js'
import { createReporter, createTextWriter, createToolIds, exitCodeOf, isAgent, isUserPrompt, noticeMessage, textOf } from './common/dsh.js'

export const name = 'pain-point-check'
export const inject = ['tools']

/** Standard Schema v1: DSH runs `validate` before `apply` and prints the issues. */
export const Config = standardSchema(name, validatePainPointConfig)

/** The call's arguments as JSON text (DSH keeps unparsable arguments as their raw string). */
function argumentsJson(exec) {
  try {
    return JSON.stringify(exec.arguments ?? {}) ?? '{}'
  } catch {
    return JSON.stringify(String(exec.arguments))
  }
}

function agentId(agent) {
  return isAgent(agent) && typeof agent.id === 'string' ? agent.id : undefined
}

/** UTF-16 units of a failure's text kept from each end: about the fingerprint's 4 KiB windows,
 * so a 10 MiB output never crosses into WebAssembly whole. */
export const FAILURE_WINDOW = 4096
const NEED_TEXT = GateStatus.NeedText

/** A failed call's text (its error message, or a shell call's output) as head and tail
 * windows. */
function textWindows(result) {
  const message = result.isError === true ? result.error?.message : undefined
  const text = typeof message === 'string' && message !== '' ? message : textOf(result.content)
  if (text.length <= 2 * FAILURE_WINDOW) return [text, '']
  return [text.slice(0, FAILURE_WINDOW), text.slice(-FAILURE_WINDOW)]
}

/** Agents tracked at most: `agent/disposed` frees each one, and this bounds a host that never
 * disposes (the oldest agent without a pending gate makes room). */
export const MAX_AGENTS = 4096

export function apply(ctx, config) {
  // DSH has already validated `config`; direct callers get the same fail-loud check.
  const plugin = new PainPointPlugin(encodeConfig(config))
  if (!plugin.enabled) return

  const report = createReporter(name, () => performance.now())
  const toolId = createToolIds(plugin, PainPointPlugin.toolLimit())
  const writeText = createTextWriter(plugin, memory, FAILURE_WINDOW)
  // One gate per agent id (an agent's id is its session's id), freed on `agent/disposed`.
  const gates = new Map()
  // Agents whose gate is pending: only their `assistant/message` events cross into WebAssembly.
  const pending = new Set()
  // Agents whose gate is not idle: only their calls cross into WebAssembly before they run (an
  // idle gate allows every call without reading it).
  const guarding = new Set()
  const forget = (id) => {
    const gate = gates.get(id)
    if (gate === undefined) return
    gates.delete(id)
    pending.delete(id)
    guarding.delete(id)
    gate.free()
  }
  const gateOf = (id) => {
    let gate = gates.get(id)
    if (gate === undefined) {
      if (gates.size >= MAX_AGENTS) {
        for (const old of gates.keys()) {
          if (!pending.has(old)) {
            forget(old)
            break
          }
        }
      }
      gate = new PainPointGate()
      gates.set(id, gate)
    }
    return gate
  }
  const track = (id, gate, status = gate.status) => {
    if (status === GateStatus.Pending) pending.add(id)
    else pending.delete(id)
    if (status === GateStatus.Idle) guarding.delete(id)
    else guarding.add(id)
  }

  // The veto. A guard runs after the whole `tools/pre-execute` waterfall and no listener can
  // re-allow what it denies, so listener order cannot bypass the gate. Code Mode sub-dispatches
  // come through here too, judged by their own names.
  ctx.tools.guard((exec) => {
    try {
      const id = agentId(exec?.agent)
      if (!guarding.has(id) || typeof exec.name !== 'string') return undefined
      const gate = gateOf(id)
      const reason = gate.preExecute(plugin, toolId(exec.name), argumentsJson(exec))
      track(id, gate)
      return reason
    } catch (error) {
      report('malformed tool execution ignored; call allowed', error)
      return undefined
    }
  })

  // Every outcome, denials included (the gate recognizes its own).
  ctx.on('tools/result', (exec, result) => {
    try {
      const id = agentId(exec?.agent)
      if (id === undefined || typeof exec.name !== 'string' || result === null || typeof result !== 'object') return
      const ok = result.isError !== true
      const value = ok ? result.value : undefined
      const gate = gateOf(id)
      let status = gate.onResult(
        plugin, toolId(exec.name), argumentsJson(exec), ok,
        ok ? exitCodeOf(result) : undefined,
        typeof value?.signal === 'string',
        value?.timedOut === true,
        typeof result.error?.info?.code === 'string' ? result.error.info.code : undefined,
      )
      // A failure is counted with its text, which crosses only now.
      if (status === NEED_TEXT) status = gate.onFailureText(plugin, ...writeText(...textWindows(result)))
      track(id, gate, status)
    } catch (error) {
      report('malformed tool result ignored', error)
    }
  })

  // A user prompt resets the agent before the step; after the downstream decision, an entered
  // step carries the check block once per arming (or the escape notice).
  ctx.on('agent/pre-step', async (step, next) => {
    let id
    let gate
    try {
      id = agentId(step?.agent)
      if (id !== undefined) {
        gate = gateOf(id)
        const prompt = Array.isArray(step.messages) ? step.messages.find(isUserPrompt) : undefined
        if (prompt !== undefined) gate.userPrompt(textOf(prompt.content))
        track(id, gate)
      }
    } catch (error) {
      report('malformed pre-step event ignored', error)
      gate = undefined
    }
    const decision = await next()
    if (gate === undefined || decision?.kind !== 'enter' || !Array.isArray(decision.messages)) return decision
    try {
      const notice = gate.preStep(plugin)
      track(id, gate)
      if (notice === undefined) return decision
      const { text, summary } = JSON.parse(notice)
      return { ...decision, messages: [...decision.messages, noticeMessage(name, text, summary)] }
    } catch (error) {
      report('check block not delivered; step passed through', error)
      return decision
    }
  })

  // The model's visible reply, while its gate is pending: the three answers lift it.
  ctx.on('session/event', (session, event) => {
    if (event?.type !== 'assistant/message' || !pending.has(session?.id)) return
    try {
      if (event.data?.interrupted === true) return
      const gate = gates.get(session.id)
      const lift = gate.assistantText(plugin, textOf(event.data?.message?.content))
      if (lift !== LiftResult.NotPending) track(session.id, gate)
    } catch (error) {
      report('malformed assistant message ignored', error)
    }
  })

  ctx.on('agent/disposed', (event) => {
    const id = agentId(event?.agent)
    if (id !== undefined) forget(id)
  })
}
