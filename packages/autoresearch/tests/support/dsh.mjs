// Stand-ins for the DSH services the autoresearch tool injects, as Cordis services on a real
// Context: `tools` (register, get, guard, and a dispatcher), `jobs` (start/kill/wait with the
// dsh-jobs-local handshake: run() is called inside start(), before the id is returned),
// `subprocess` (the SubprocessRuntime shape over lib/process.js: detached groups, collected
// tails, tree termination) and `agents` (create() of scripted child agents whose turn is a JS
// function), plus a stand-in for the dsh-subagent composition helpers.
import { Context, Service } from '@deepseek-ai/cordis'
import { createLocalRunner } from '../../lib/process.js'
import * as Plugin from '../../lib/index.js'

export { Plugin }

export class Tools extends Service {
  constructor(ctx) {
    super(ctx, 'tools')
    this.defs = new Map()
    this.scoped = new Map()
    this.guards = []
  }

  register(def) {
    if (this.defs.has(def.name)) throw new Error(`tool "${def.name}" is already registered`)
    this.defs.set(def.name, def)
    return () => this.defs.delete(def.name)
  }

  get(name) {
    return this.defs.get(name)
  }

  /** Calls a tool's execute as the registry would; returns {value, content} or {error}. */
  async call(name, args, agent, signal = new AbortController().signal) {
    const def = this.defs.get(name)
    let concluded = false
    try {
      const value = await def.execute(args, { name, arguments: args, agent, signal, concludeTurn: () => { concluded = true }, deferContext() {} })
      return { value, content: def.output.render(args, value), concluded }
    } catch (error) {
      return { error: error.message }
    }
  }
}

export class Jobs extends Service {
  constructor(ctx) {
    super(ctx, 'jobs')
    this.jobs = new Map()
    this.count = 0
    this.refuse = undefined
  }

  start(spec) {
    if (this.refuse) throw new Error(this.refuse)
    const hooks = spec.run()
    this.count += 1
    const id = `${spec.kind}-${this.count}`
    this.jobs.set(id, { spec, hooks, outcome: hooks.done })
    return id
  }

  kill(id, _caller, reason) {
    this.jobs.get(id).hooks.cancel(reason)
    return 'requested'
  }

  wait(id) {
    return this.jobs.get(id).outcome
  }
}

/** The 0.2 line's job registry, as `packages/jobs/jobs/src/types.ts` (0217po/deepseek-harness)
 * declares it: `start` takes the owning session's id (a string; an Agent is refused here, as the
 * registry fences access by that id), `run(job)` gets the producer handle, a value result comes
 * back as `JobOutcome.result`, and callers read through `visibleTo(sessionId)`. */
export class JobsV02 extends Jobs {
  start(spec) {
    if (spec.owner !== undefined && typeof spec.owner !== 'string') throw new TypeError('JobSpec.owner is a SessionId')
    if (this.refuse) throw new Error(this.refuse)
    this.count += 1
    const id = `${spec.kind}-${this.count}`
    const hooks = spec.run({ id, append() {}, updateProgress() {} })
    this.jobs.set(id, { spec, hooks, outcome: hooks.done })
    return id
  }

  visibleTo(owner) {
    return { wait: (id) => (this.jobs.get(id).spec.owner === owner ? this.jobs.get(id).outcome : Promise.reject(new Error('not visible'))) }
  }
}

/** The 0.2 line's per-session working directory (`ctx.workingDirectory.get(session)`), where a
 * session's `header.cwd` stays its original project. */
export class WorkingDirectory extends Service {
  constructor(ctx) {
    super(ctx, 'workingDirectory')
    this.current = new Map()
  }

  get(session) {
    return this.current.get(session.id) ?? session.header.cwd
  }
}

/** DSH's SubprocessRuntime shape over the local runner. */
export class Subprocess extends Service {
  constructor(ctx) {
    super(ctx, 'subprocess')
    this.local = createLocalRunner()
    this.spawned = []
  }

  spawn(spec) {
    this.spawned.push(spec.argv)
    const env = {}
    for (const [k, v] of Object.entries({ ...process.env, ...spec.env })) if (v !== undefined) env[k] = v
    const stdin = typeof spec.stdio.stdin === 'object' ? spec.stdio.stdin.data : undefined
    const h = this.local.spawn({
      argv: spec.argv, cwd: spec.cwd, env, stdin,
      stdoutCap: spec.stdio.stdout.maxBytes, stderrCap: spec.stdio.stderr.maxBytes, graceMs: spec.graceMs,
    })
    let finished
    const reader = (which) => ({
      readFrom() {
        const s = finished?.[which]
        return { text: s ? s.bytes.toString('utf8') : '', nextOffset: s?.total ?? 0, lossy: s?.truncated ?? false }
      },
    })
    const done = h.spawned.then(async () => {
      const { exitCode, signal } = await h.exited
      finished = await h.finish()
      return { exitCode, signal }
    })
    const handle = {
      pid: -1,
      collected: { stdout: reader('stdout'), stderr: reader('stderr') },
      done,
      terminate: () => { h.terminate() },
      async waitForExit() {
        await done.catch(() => {})
        return true
      },
    }
    // The local runner knows the pid only after 'spawn'; DSH's handle has it synchronously.
    handle.pid = h.pid ?? -1
    return handle
  }
}

/** ctx.agents: create() runs `turn(child, message)` when the child is followed up. */
export class Agents extends Service {
  constructor(ctx) {
    super(ctx, 'agents')
    this.live = new Map()
    this.created = []
    this.turn = async () => {}
  }

  async create(options) {
    const child = new Context()
    const tools = new Tools(child)
    const guards = []
    const sections = []
    const scoped = {
      agent: { session: { id: options.sessionId } },
      tools: {
        presentAs: () => () => {},
        register: (def) => tools.register(def),
        guard: (g) => { guards.push(g); return () => {} },
        restrict: () => () => {},
      },
      get: (name) => (name === 'systemPrompt' ? { section: (s) => sections.push(s) } : undefined),
    }
    await options.setup(scoped)
    const agent = {
      id: options.sessionId,
      options,
      sections,
      guards,
      tools,
      cancelled: undefined,
      idle: Promise.resolve(),
      followup: (msg) => {
        agent.idle = this.turn(agent, msg)
      },
      whenIdle: () => agent.idle,
      cancel: (cause) => { agent.cancelled = cause },
      /** Calls a child tool through its guards, as the child's model would. */
      async call(name, args) {
        for (const g of guards) {
          const reason = g({ name, arguments: args })
          if (reason !== undefined) return { error: reason }
        }
        return tools.call(name, args, agent)
      },
    }
    this.live.set(agent.id, agent)
    this.created.push(agent)
    return { agent, dispose: async () => { this.live.delete(agent.id) } }
  }

  get(id) {
    return this.live.get(id)
  }
}

/** The dsh-subagent helpers the round calls, recording what it asked for. */
export function fakeSubagent() {
  const calls = []
  return {
    calls,
    captureDelegatedPolicyOverrides: () => ({ sandboxMode: undefined, approvalPolicy: 'never' }),
    resolveChildDepth: () => 1,
    resolveChildAgentOptions: () => ({ model: 'parent-model' }),
    // The 0.2 line's `childSessionMeta(parent, depth, isSeeded: boolean)` writes `isSeeded` into
    // a header whose validation refuses a number (packages/subagent/subagent/src/child-agent.ts);
    // rc.8 reads the same argument as a seed length and counts it only when `> 0`.
    childSessionMeta: (_parent, depth, seeded) => {
      calls.push(['meta', depth, seeded])
      if (typeof seeded !== 'boolean') throw new TypeError(`isSeeded must be a boolean (got ${typeof seeded})`)
      return { cwd: '/parent/cwd', origin: 'subagent', delegationDepth: depth, isSeeded: seeded }
    },
    appendDelegatedPolicyOverrides: (session, o) => calls.push(['policy', session.id, o.approvalPolicy]),
    applyChildComposition: (_ctx, _parent, composition) => calls.push(['compose', composition.toolFilter.allow]),
  }
}

/** `systemPrompt`: the sections a plugin adds, each rendered as DSH does (text or a function). */
export class SystemPrompt extends Service {
  constructor(ctx) {
    super(ctx, 'systemPrompt')
    this.sections = []
  }

  section(s) {
    this.sections.push(s)
    return () => {}
  }

  text(name) {
    const s = this.sections.find((x) => x.name === name)
    return typeof s?.text === 'function' ? s.text() : s?.text
  }
}

/** A real Context with the five services and the plugin mounted. */
export async function mount(config = {}, { line = 'rc.8' } = {}) {
  const ctx = new Context()
  const tools = new Tools(ctx)
  const jobs = line === '0.2' ? new JobsV02(ctx) : new Jobs(ctx)
  const workingDirectory = line === '0.2' ? new WorkingDirectory(ctx) : undefined
  const subprocess = new Subprocess(ctx)
  const agents = new Agents(ctx)
  const prompts = new SystemPrompt(ctx)
  const fiber = await ctx.plugin(Plugin, config)
  return { ctx, tools, jobs, workingDirectory, subprocess, agents, prompts, fiber }
}

/** A parent agent whose session works in `cwd` (its context `ctx`, for the services it reads). */
export function parentAgent(cwd, ctx) {
  return { id: `parent-${Math.random()}`, ctx, session: { id: 'parent-session', header: { cwd } } }
}
