// dsh-autoresearch's proposal round inside DSH: one child agent per round, created through
// ctx.agents with the parent's route and preset (dsh-subagent's composition helpers; the row's
// provider, model and maxTokens override the route as DSH's subagent tool's agentOptions do), bound to
// the run's worktree as its cwd, restricted to read/write/edit/glob/grep (those that exist) plus
// a child-scoped autoresearch_report tool. The report ends the round; a guard refuses every later
// call; the child is always disposed. The texts and the report check are Rust's.
import { randomUUID } from 'node:crypto'
import { autoresearchOutsideWorktree, autoresearchRoundOver, autoresearchRoundPrompt, checkAutoresearchReport } from './core.js'

const PLUGIN = 'autoresearch'
/** How long a disposed child may take to leave the agent registry. */
const DISPOSE_WAIT_MS = 5_000

/** The dsh-subagent composition helpers, from the profile's DSH installation (a peer). The test
 * suite, which has no DSH installed, puts a stand-in on `globalThis.__dshAutoresearchSubagent`. */
const loadSubagent = async () => globalThis.__dshAutoresearchSubagent ?? import('@deepseek-ai/dsh-subagent')

/** The row's route keys as dsh-subagent's `requested` AgentOptions (undefined: the parent's). */
export function routeOverride(row) {
  const route = {}
  for (const key of ['provider', 'model', 'maxTokens']) if (row[key] !== undefined) route[key] = row[key]
  return Object.keys(route).length === 0 ? undefined : route
}

function pluginMessage(text) {
  const message = {
    content: [{ type: 'text', text }],
    // The producer's own kind, as shim-common's noticeMessage explains.
    source: { kind: PLUGIN },
    role: 'user',
    id: randomUUID(),
  }
  Object.freeze(message.content[0])
  Object.freeze(message.content)
  Object.freeze(message.source)
  return Object.freeze(message)
}

/**
 * Builds the `propose` function the driver calls for a run started by `parent` (the calling
 * agent): `({worktree, handoff, timeoutMs, signal}) → {hypothesis, summary}`; it throws with a
 * code-prefixed message when the round yields no report.
 * `row` is the validated row config (its `provider`, `model` and `maxTokens` are the child's route
 * where set); `subagent` may replace the dsh-subagent module (tests); `texts` are
 * autoresearchToolTexts().
 */
export function createRound({ ctx, parent, texts, row, subagent = loadSubagent }) {
  const configJson = JSON.stringify(row)
  const route = routeOverride(row)
  return async function propose({ worktree, handoff, confined, signal }) {
    signal?.throwIfAborted()
    let sub
    try {
      sub = typeof subagent === 'function' ? await subagent() : subagent
    } catch (error) {
      throw new Error(`capability-unavailable: @deepseek-ai/dsh-subagent cannot be loaded (${error.message})`)
    }
    const allow = texts.childTools.filter((name) => ctx.tools.get(name, parent) !== undefined)
    if (!allow.includes('write') && !allow.includes('edit')) {
      throw new Error(`capability-unavailable: the child would have no write or edit tool (visible: ${allow.join(', ') || 'none'})`)
    }
    const policy = sub.captureDelegatedPolicyOverrides(parent)
    const depth = sub.resolveChildDepth(parent, undefined)
    const agentOptions = sub.resolveChildAgentOptions(parent, route, depth)
    // Not seeded from the parent's log: `false` is what both lines take (rc.8's third parameter
    // is a seed length, `> 0` to count; the 0.2 line's is `isSeeded: boolean`, and its header
    // validation throws on a number: `packages/subagent/subagent/src/child-agent.ts`).
    const meta = { ...sub.childSessionMeta(parent, depth, false), cwd: worktree }
    const round = { report: undefined, error: undefined }
    const reportTool = {
      ...texts.report,
      output: {
        schema: { type: 'object', properties: { accepted: { type: 'boolean' } }, required: ['accepted'], additionalProperties: true },
        render: (_args, value) => [{ type: 'text', text: value.message }],
      },
      async execute(args, exec) {
        if (round.report !== undefined) throw new Error('the round already has its report')
        const checked = JSON.parse(checkAutoresearchReport(JSON.stringify(args ?? null), configJson))
        if (checked.error !== undefined) {
          round.error = `report-malformed: ${checked.error}`
          throw new Error(checked.error)
        }
        round.report = checked.ok
        exec.concludeTurn()
        return { accepted: true, message: texts.reportAccepted }
      },
    }
    const handle = await ctx.agents.create({
      sessionId: randomUUID(),
      meta,
      agentOptions,
      signal,
      setup(childCtx) {
        sub.appendDelegatedPolicyOverrides(childCtx.agent.session, policy)
        sub.applyChildComposition(childCtx, parent, { toolFilter: { allow } })
        childCtx.tools.presentAs('native')
        childCtx.tools.register(reportTool)
        childCtx.get('systemPrompt')?.section({ name: 'autoresearch:round', order: 190, text: texts.childSection })
        childCtx.tools.guard((exec) => {
          if (round.report !== undefined && exec.name !== texts.report.name) return autoresearchRoundOver(String(exec.name))
          if (!confined) return undefined
          try {
            return autoresearchOutsideWorktree(String(exec.name), JSON.stringify(exec.arguments ?? null)) || undefined
          } catch (error) {
            // Confinement fails closed: arguments that cannot be read cannot be judged.
            return `\`${String(exec.name)}\` refused: its arguments cannot be read (${error.message})`
          }
        })
      },
    })
    const agent = handle.agent
    const onAbort = () => {
      try {
        agent.cancel({ kind: 'parent' })
      } catch {
        // Already idle or disposed.
      }
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      await agent.followup(pluginMessage(autoresearchRoundPrompt(handoff)))
      await agent.whenIdle()
      signal?.throwIfAborted()
      if (round.report === undefined) {
        throw new Error(round.error ?? 'report-missing: the child agent ended its turn without calling autoresearch_report')
      }
      return round.report
    } finally {
      signal?.removeEventListener('abort', onAbort)
      await handle.dispose()
      const deadline = Date.now() + DISPOSE_WAIT_MS
      while (ctx.agents.get(agent.id) !== undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      if (ctx.agents.get(agent.id) !== undefined) {
        // The core reads a thrown round as a failed round; a child that lingers is reported.
        throw new Error(`not-quiescent: the child agent ${agent.id} is still registered after dispose`)
      }
    }
  }
}
