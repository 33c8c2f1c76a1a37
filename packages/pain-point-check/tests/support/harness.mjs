// Test harness: a real Cordis 4 context with a `tools` service that dispatches calls in DSH's
// order (the `tools/pre-execute` waterfall, then the monotonic guards, a denial materialized as
// `Error: <reason>`, then `tools/result`), and helpers for the other hooks the plugin uses:
// the `agent/pre-step` waterfall, `session/event` and `agent/disposed`.
import assert from 'node:assert/strict'
import { Context, Service } from '@deepseek-ai/cordis'
import * as Plugin from '../../lib/index.js'

export { Plugin }

/** A stand-in for DSH's `tools` service with `guard` (rc.8 `Tools.guard`) and a dispatcher. */
export class Tools extends Service {
  constructor(ctx) {
    super(ctx, 'tools')
    this.guards = []
  }

  register() {
    throw new Error('pain-point-check registers no tool')
  }

  guard(guard) {
    return this.ctx.effect(() => {
      this.guards.push(guard)
      return () => {
        this.guards = this.guards.filter((g) => g !== guard)
      }
    }, 'tools.guard()')
  }

  /** DSH's prepareExecution order: waterfall → guards → dispatch or denial → tools/result. */
  async dispatch(exec, run) {
    const decision = await this.ctx.waterfall('tools/pre-execute', exec, async () => ({ kind: 'allow' }))
    let reason = decision.kind === 'allow' ? undefined : decision.reason
    if (reason === undefined) {
      for (const guard of this.guards) {
        reason = guard(exec)
        if (reason !== undefined) break
      }
    }
    const result = reason !== undefined
      ? { isError: true, content: [{ type: 'text', text: `Error: ${reason}` }], error: { message: reason } }
      : run()
    await this.ctx.parallel('tools/result', exec, result)
    return result
  }
}

export async function mount(config = {}) {
  const ctx = new Context()
  const tools = new Tools(ctx)
  const fiber = await ctx.plugin(Plugin, config)
  return { ctx, tools, fiber }
}

let calls = 0

export function execOf(name, agent, args = {}, extra = {}) {
  calls += 1
  return { name, arguments: args, agent, token: Symbol(`call-${calls}`), callId: `call_${calls}`, ...extra }
}

export const ok = (text = 'ok') => ({ isError: false, value: text, content: [{ type: 'text', text }] })

/** A bash-style result: a non-zero exit is still a *successful* tool result in DSH. */
export function exited(exitCode, { signal = null, timedOut = false, output = '' } = {}) {
  const value = { exitCode, signal, timedOut, stdout: output, stderr: '' }
  const status = `[exit code: ${exitCode}]`
  return { isError: false, value, content: [{ type: 'text', text: output === '' ? status : `${output}\n${status}` }] }
}

export const errored = (message, code) => ({
  isError: true,
  error: code === undefined ? { message } : { message, info: { name: code, code } },
  content: [{ type: 'text', text: `Error: ${message}` }],
})

/** Runs one call through the dispatcher; returns the result the model would see. */
export function call(tools, agent, name, args = {}, result = () => ok(), extra = {}) {
  return tools.dispatch(execOf(name, agent, args, extra), typeof result === 'function' ? result : () => result)
}

export function userMessage(text) {
  return { role: 'user', id: 'u1', content: [{ type: 'text', text }], source: { kind: 'user' } }
}

/** Runs `agent/pre-step` through the real Cordis waterfall. */
export function preStep(ctx, agent, messages = [], inner = (m) => ({ kind: 'enter', messages: m })) {
  return ctx.waterfall('agent/pre-step', { agent, messages, turn: 1, step: 1 }, async () => inner(messages))
}

/** The plugin's notices in a pre-step decision. */
export function notices(decision) {
  return (decision?.messages ?? []).filter((m) => m?.source?.kind === 'pain-point-check')
}

/** The model's visible reply, as DSH's session emits it after the append. */
export function reply(ctx, agent, text, extra = {}) {
  const event = {
    type: 'assistant/message',
    seq: 1,
    time: Date.now(),
    data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text }] }, ...extra },
  }
  ctx.emit('session/event', { id: agent.id }, event)
}

export function denied(result) {
  assert.equal(result.isError, true, `expected a denial, got ${JSON.stringify(result)}`)
  return result.error.message
}

export function allowed(result) {
  assert.notEqual(result.content?.[0]?.text?.startsWith('Error: [pain-point-check]'), true, `expected no denial, got ${JSON.stringify(result)}`)
  return result
}

export function captureErrors(t) {
  const lines = []
  t.mock.method(console, 'error', (...args) => {
    lines.push(args)
  })
  return lines
}

export const ANSWER_EN = 'blocker=the linker cannot find libfoo\nruled_out=a missing header; the include path is fine\nbest_path=print the search path with -Wl,--verbose'
export const ANSWER_ZH = '卡点=链接器找不到 libfoo 库\n排除=不是头文件缺失，include 路径正确\n性价比=用 -Wl,--verbose 打印搜索路径'
