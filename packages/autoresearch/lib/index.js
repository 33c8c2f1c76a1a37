// dsh-autoresearch: the DSH plugin module. This shim is the only code that knows DSH: it
// registers the `autoresearch` tool, runs each run through the shared driver (lib/driver.js) with
// DSH's subprocess service as the process runner and a child agent per proposal round
// (lib/round.js), as a dsh-jobs background job by default or in the foreground. Validation,
// every decision, text and rendering are Rust's (lib/core.js).
import { randomUUID } from 'node:crypto'
import {
  AutoresearchRun, autoresearchInterruptedNote, autoresearchJobOutput, autoresearchToolTexts,
  autoresearchTrackerPath, encodeConfig, renderAutoresearchOutput, validateAutoresearchConfig,
  validateAutoresearchSpec,
} from './core.js'
import { standardSchema } from './common/config.js'
import { createReporter, jobsShapes, sessionCwd } from './common/dsh.js'
import { drive } from './driver.js'
import { createDshRunner } from './dsh-runner.js'
import { createGit } from './git.js'
import { createLocalRunner } from './process.js'
import { originalRuns } from './original.js'
import { createRound } from './round.js'
import { openTrackerReadOnly } from './tracker.js'

export const name = 'autoresearch'
export const inject = ['tools', 'jobs', 'agents', 'subprocess']

/** Standard Schema v1: DSH runs `validate` before `apply` and prints the issues. */
export const Config = standardSchema(name, validateAutoresearchConfig)

const message = (error) => String(error?.message ?? error)

/** Runs started in this process, by run id: a second driver on the same run is refused. */
const active = new Map()

export function apply(ctx, config) {
  // DSH has already validated `config`; direct callers get the same fail-loud check.
  const checked = JSON.parse(validateAutoresearchConfig(encodeConfig(config)))
  if (checked.issues) {
    throw new Error(`autoresearch: invalid config: ${checked.issues.map((i) => i.message).join('; ')}`)
  }
  const row = checked.value
  const configJson = JSON.stringify(row)
  const texts = JSON.parse(autoresearchToolTexts())
  const report = createReporter(name, () => performance.now())
  const runner = createDshRunner(ctx.subprocess)
  const owned = new Set()
  let interrupted

  /** Drives one run to its end; resolves once its processes are settled. */
  function driveOwned(run, parent, callerCwd, controller, onStep) {
    const promise = drive(run, {
      runner,
      callerCwd,
      gitExecutable: row.gitExecutable,
      propose: createRound({ ctx, parent, texts, row }),
      onStep,
      onProgress: () => {},
      signal: controller.signal,
    }).finally(() => {
      active.delete(run.runId)
      owned.delete(entry)
    })
    const entry = { controller, promise, run }
    active.set(run.runId, entry)
    owned.add(entry)
    return promise
  }

  async function execute(args, exec) {
    const specJson = JSON.stringify(args ?? {})
    const spec = JSON.parse(validateAutoresearchSpec(specJson, configJson, false))
    if (spec.errors) {
      throw new Error(`invalid autoresearch arguments: ${spec.errors.map((e) => e.message).join('; ')}`)
    }
    const parent = exec.agent
    if (parent === undefined) throw new Error('autoresearch needs a calling agent: each proposal round is a child agent of the caller')
    const runId = spec.ok.kind === 'fresh' ? randomUUID() : spec.ok.runId
    const running = active.get(runId)
    if (running !== undefined && spec.ok.kind === 'abandon') {
      // Driven by this process: cancelling it is abandoning it (its processes stop, the lock goes).
      running.controller.abort(`cancelled: ${args.reason ?? 'abandoned with abandon_run_id'}`)
      await running.promise.catch(() => {})
      return { kind: 'foreground', run: JSON.parse(running.run.resultJson()) }
    }
    if (running !== undefined) throw new Error(`run ${runId} is already active in this process; wait for it with job_output or stop it with job_kill`)
    const callerCwd = sessionCwd(parent) ?? process.cwd()
    const run = AutoresearchRun.fromSpec(specJson, runId, configJson, Date.now())
    const controller = new AbortController()

    if (spec.ok.mode === 'foreground') {
      const onAbort = () => controller.abort(`cancelled: ${message(exec.signal?.reason ?? 'the call was aborted')}`)
      exec.signal?.addEventListener('abort', onAbort, { once: true })
      try {
        await driveOwned(run, parent, callerCwd, controller)
      } finally {
        exec.signal?.removeEventListener('abort', onAbort)
      }
      return { kind: 'foreground', run: JSON.parse(run.resultJson()) }
    }

    // Background: the job exists before any work starts; the work starts once its id is known.
    let open
    const gate = new Promise((resolve) => {
      open = resolve
    })
    let ready
    const started = new Promise((resolve) => {
      ready = resolve
    })
    const onStep = (r) => {
      if (r.done || r.state !== 'initializing') ready()
    }
    let jobId
    const shapes = jobsShapes(ctx.jobs)
    try {
      jobId = ctx.jobs.start({
        kind: 'autoresearch',
        label: `autoresearch ${spec.ok.runTag ?? `resume ${runId}`}`,
        owner: shapes.owner(parent),
        outputLimitBytes: row.maxResultChars * 4 + 8192,
        run() {
          const done = gate
            .then(() => driveOwned(run, parent, callerCwd, controller, onStep))
            .then(
              () => shapes.outcome(run.jobStatus, run.status, autoresearchJobOutput(run.resultJson())),
              (error) => {
                report('a background run failed', error)
                return shapes.outcome('failed', `internal error: ${message(error)}`, run.resultJson())
              },
            )
            .finally(ready)
          return {
            cancel(reason) {
              controller.abort(reason ?? 'job_kill')
            },
            done,
          }
        },
      })
    } catch (error) {
      return {
        kind: 'background-start-failed', jobId: 'unregistered', runId, status: 'failed',
        reason: `the job could not start: ${message(error)}`, evidence: [],
      }
    }
    open()
    await started
    const result = JSON.parse(run.resultJson())
    if (run.done && !result.persisted) {
      // Refused before anything durable existed (no repository, lock taken, bad resume).
      return {
        kind: 'background-start-failed', jobId, runId, status: run.status === 'cancelled' ? 'cancelled' : 'failed',
        reason: result.blocker?.code ?? result.status,
        evidence: [result.blocker?.message, ...(result.blocker?.evidence ?? [])].filter(Boolean),
      }
    }
    return {
      kind: 'background', runId, jobId, branch: result.branch, worktree: result.worktree, tracker: result.tracker,
    }
  }

  ctx.tools.register({
    name: texts.name,
    description: texts.description,
    parameters: texts.parameters,
    output: {
      schema: texts.outputSchema,
      render: (_args, value) => [{ type: 'text', text: renderAutoresearchOutput(JSON.stringify(value)) }],
    },
    execute,
  })

  const sectionText = () => (interrupted === undefined ? texts.guidance : `${texts.guidance}\n\n${interrupted}`)
  const prompts = ctx.get('systemPrompt')
  prompts?.section({ name: 'tool:autoresearch', order: 116.25, text: sectionText })

  // Recovery on start: in this directory's repository and those the config names, a run whose
  // host is provably dead has its leftover processes stopped and its lock released, and is
  // marked interrupted; every unfinished run is then named to the model with how to resume or
  // abandon it. Nothing is resumed by itself.
  const recovery = reconcileAll(row, configJson).then((note) => {
    interrupted = note
  }, (error) => report('recovery on start failed', error))
  // The first request of a session already sees what recovery found.
  ctx.on('system-prompt/assemble', async (_assembly, _context, next) => {
    await recovery
    const result = await next()
    if (!Array.isArray(result?.sections)) return result
    const sections = result.sections.map((s) => (s?.name === 'tool:autoresearch' ? { ...s, text: sectionText() } : s))
    return { ...result, sections }
  })

  // Unload or HMR: cancel this fiber's runs and wait until their processes are settled.
  ctx.effect(() => async () => {
    await recovery
    const entries = [...owned]
    for (const entry of entries) entry.controller.abort('the autoresearch plugin was unloaded')
    await Promise.allSettled(entries.map((entry) => entry.promise))
  }, 'autoresearch runs')
}

/** Reconciles the unfinished runs of every repository recovery covers; the model's note on them. */
async function reconcileAll(row, configJson) {
  const runner = createLocalRunner()
  const git = createGit({ runner, executable: row.gitExecutable, startup: true })
  const notes = []
  for (const repository of [undefined, ...row.recoverRepositories]) {
    let facts
    try {
      facts = await git.discover(repository, process.cwd())
    } catch {
      continue // Not a repository (DSH may run outside one).
    }
    const path = autoresearchTrackerPath(facts.gitCommonDir, configJson)
    const unfinished = listRuns(await openTrackerReadOnly(path))
      .filter((r) => r.lock_held && r.interrupted_at == null && !active.has(r.run_id))
    for (const r of unfinished) {
      const run = AutoresearchRun.reconcile(r.run_id, facts.toplevel, configJson, Date.now())
      await drive(run, {
        runner, callerCwd: facts.toplevel, gitExecutable: row.gitExecutable, onProgress: () => {},
      })
    }
    const rows = [...listRuns(await openTrackerReadOnly(path)), ...await originalRuns(facts.gitCommonDir, row.stateRoot)]
    const note = autoresearchInterruptedNote(JSON.stringify(rows))
    if (note !== undefined) notes.push(repository === undefined ? note : `${note}\n(repository ${facts.toplevel})`)
  }
  return notes.length === 0 ? undefined : notes.join('\n\n')
}

function listRuns(tracker) {
  if (tracker === undefined) return []
  try {
    return tracker.list(20)
  } finally {
    tracker.close()
  }
}
