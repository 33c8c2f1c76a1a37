// pain-point-check: the DSH plugin module. This shim is the only code that knows DSH: it turns
// DSH's hooks into flat calls on one Rust gate per agent (compiled to WebAssembly) and folds the
// gate's answers back in: a veto through `ctx.tools.guard`, the check block as a notice on the
// next step. Every rule, default, threshold, marker and message lives in Rust.
import { GateStatus, LiftResult, PainPointGate, PainPointPlugin, encodeConfig, failureWindow, memory, validatePainPointConfig } from './core.js'
import { standardSchema } from './common/config.js'
import { createReporter, createTextWriter, createToolTable, exitCodeOf, isAgent, isUserPrompt, noticeMessage, textOf } from './common/dsh.js'

export const name = 'pain-point-check'
export const inject = ['tools']

/** Standard Schema v1: DSH runs `validate` before `apply` and prints the issues. */
export const Config = standardSchema(name, validatePainPointConfig)

/** The call's arguments as JSON text (DSH keeps unparsable arguments as their raw string). */
function encodeArguments(args) {
  try {
    return JSON.stringify(args ?? {}) ?? '{}'
  } catch {
    return JSON.stringify(String(args))
  }
}

/** `exec -> its arguments' JSON`, remembering the last call's: DSH hands the guard and the
 * result listener the same `exec`, so a call's arguments are encoded once, as they were when
 * the guard judged them. */
function createArgumentsJson() {
  let lastExec
  let lastArgs
  let lastJson = ''
  return (exec) => {
    if (exec !== lastExec || exec.arguments !== lastArgs) {
      lastJson = encodeArguments(exec.arguments)
      lastExec = exec
      lastArgs = exec.arguments
    }
    return lastJson
  }
}

function agentId(agent) {
  return isAgent(agent) && typeof agent.id === 'string' ? agent.id : undefined
}

/** UTF-16 units of a failure's text kept from each end: at least the bytes the fingerprint
 * reads, so a 10 MiB output never crosses into WebAssembly whole. */
export const FAILURE_WINDOW = failureWindow()
const { Idle: IDLE, Pending: PENDING, NeedText: NEED_TEXT } = GateStatus

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
  const toolOf = createToolTable(plugin, PainPointPlugin.toolLimit(), (id) => ({ readsResults: plugin.readsResults(id), codeMode: plugin.isCodeMode(id) }))
  const writeText = createTextWriter(plugin, memory)
  const argumentsJson = createArgumentsJson()
  // One gate per agent id (an agent's id is its session's id) with the status it last answered,
  // freed on `agent/disposed`. Only a pending agent's `assistant/message` events cross into
  // WebAssembly, and only a non-idle agent's calls before they run (an idle gate allows every
  // call without reading it).
  const agents = new Map()
  const forget = (id) => {
    const agent = agents.get(id)
    if (agent === undefined) return
    agents.delete(id)
    agent.gate.free()
  }
  const agentOf = (id) => {
    let agent = agents.get(id)
    if (agent === undefined) {
      if (agents.size >= MAX_AGENTS) {
        for (const [old, { status }] of agents) {
          if (status !== PENDING) {
            forget(old)
            break
          }
        }
      }
      agent = { gate: new PainPointGate(), status: IDLE }
      agents.set(id, agent)
    }
    return agent
  }

  // The veto. A guard runs after the whole `tools/pre-execute` waterfall and no listener can
  // re-allow what it denies, so listener order cannot bypass the gate. Code Mode sub-dispatches
  // come through here too, judged by their own names.
  ctx.tools.guard((exec) => {
    try {
      const agent = agents.get(agentId(exec?.agent))
      if (agent === undefined || agent.status === IDLE || typeof exec.name !== 'string') return undefined
      const reason = agent.gate.preExecute(plugin, toolOf(exec.name).id, writeText(argumentsJson(exec)))
      agent.status = agent.gate.status
      return reason
    } catch (error) {
      report('malformed tool execution ignored; call allowed', error)
      return undefined
    }
  })

  // Every outcome the gate reads, denials included (the gate recognizes its own), and calls DSH
  // rejected before pre-execute (UNKNOWN_TOOL: in Code Mode, every direct call to a tool other
  // than `run_code`), which the core ignores.
  ctx.on('tools/result', (exec, result) => {
    try {
      const id = agentId(exec?.agent)
      if (id === undefined || typeof exec.name !== 'string' || result === null || typeof result !== 'object') return
      // A Code Mode program's call (`exec.parent` set) always crosses: a failed one keeps its
      // program's own failure from counting twice. Otherwise the results of most investigation
      // tools change no gate: the core says which.
      const tool = toolOf(exec.name)
      const nested = exec.parent !== undefined
      if (!tool.readsResults && !nested) return
      const ok = result.isError !== true
      const value = ok ? result.value : undefined
      const agent = agentOf(id)
      const gate = agent.gate
      let status = gate.onResult(
        plugin, tool.id, writeText(argumentsJson(exec)), ok,
        ok ? exitCodeOf(result) : undefined,
        typeof value?.signal === 'string',
        value?.timedOut === true,
        typeof result.error?.info?.code === 'string' ? result.error.info.code : undefined,
        nested || tool.codeMode ? String(exec.rootCallId ?? exec.callId) : undefined,
        nested,
      )
      // A failure is counted with its text, which crosses only now.
      if (status === NEED_TEXT) {
        const [head, tail] = textWindows(result)
        const headLen = writeText(head)
        status = gate.onFailureText(plugin, headLen, writeText(tail, headLen))
      }
      agent.status = status
    } catch (error) {
      report('malformed tool result ignored', error)
    }
  })

  // A user prompt resets the agent before the step; after the downstream decision, an entered
  // step carries the check block once per arming (or the escape notice).
  ctx.on('agent/pre-step', async (step, next) => {
    let agent
    try {
      const id = agentId(step?.agent)
      if (id !== undefined) {
        agent = agentOf(id)
        const prompt = Array.isArray(step.messages) ? step.messages.find(isUserPrompt) : undefined
        if (prompt !== undefined) agent.gate.userPrompt(textOf(prompt.content))
        agent.status = agent.gate.status
      }
    } catch (error) {
      report('malformed pre-step event ignored', error)
      agent = undefined
    }
    const decision = await next()
    if (agent === undefined || decision?.kind !== 'enter' || !Array.isArray(decision.messages)) return decision
    try {
      const notice = agent.gate.preStep(plugin)
      agent.status = agent.gate.status
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
    if (event?.type !== 'assistant/message') return
    const agent = agents.get(session?.id)
    if (agent?.status !== PENDING) return
    try {
      if (event.data?.interrupted === true) return
      const lift = agent.gate.assistantText(plugin, textOf(event.data?.message?.content))
      if (lift !== LiftResult.NotPending) agent.status = agent.gate.status
    } catch (error) {
      report('malformed assistant message ignored', error)
    }
  })

  ctx.on('agent/disposed', (event) => {
    const id = agentId(event?.agent)
    if (id !== undefined) forget(id)
  })
}
