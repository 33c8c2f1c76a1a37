// dsh-autoresearch's driver: performs the effects the Rust run core asks for and feeds each
// answer back, until the core reports. It decides nothing: git goes through lib/git.js, every
// process through the injected runner (lib/process.js locally, ctx.subprocess inside DSH), the
// tracker through lib/tracker.js (node:sqlite), files and hashes through node:fs and node:crypto.
// Several effects can be outstanding at once (an evaluator runs while its process evidence is
// written, a cancel interrupts it), so answers queue in an inbox and are fed one at a time.
import { createHash, randomBytes } from 'node:crypto'
import {
  closeSync, constants, createReadStream, fsyncSync, lstatSync, openSync, realpathSync, renameSync,
  rmdirSync, statSync, unlinkSync, writeSync,
} from 'node:fs'
import { dirname, join, relative, resolve, isAbsolute } from 'node:path'
import { createGit, realDirsBetween } from './git.js'
import { originalLiveRuns } from './original.js'
import { resolveProgram } from './contain.js'
import { hostAlive, hostRecord } from './process.js'
import { ensurePrivateDir, openTracker } from './tracker.js'

/** The variable marking a headless proposer's processes with its run id (so a resume can stop a
 * proposer a killed runner left behind before the core restores the worktree). */
export const PROPOSER_MARKER = 'DSH_AUTORESEARCH_PROPOSER'
/** The variable marking one proposal round's processes (its containment). */
const ROUND_MARKER = 'DSH_AUTORESEARCH_ROUND'
/** The variable the core puts in each evaluator's environment (its attempt id). */
export const ATTEMPT_MARKER = 'DSH_AUTORESEARCH_ATTEMPT'

const reasonOf = (signal) => {
  const r = signal?.reason
  if (typeof r === 'string') return r
  return r?.message ?? 'cancelled'
}

const message = (error) => String(error?.message ?? error).slice(0, 4000)

async function sha256File(path) {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW)
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(null, { fd })) hash.update(chunk)
  return hash.digest('hex')
}

/** Writes `bytes` to a new owner-only file (never through a symlink, never over a file). */
function writeNew(path, bytes) {
  const fd = openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600)
  try {
    let off = 0
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function fsyncDir(dir) {
  try {
    const fd = openSync(dir, constants.O_RDONLY)
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    // Some filesystems cannot fsync a directory.
  }
}

/** Atomic owner-only write: temp file, fsync, rename, directory fsync. */
export function writeAtomic(path, text) {
  ensurePrivateDir(dirname(path))
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    writeNew(tmp, Buffer.from(text, 'utf8'))
    renameSync(tmp, path)
  } catch (error) {
    try {
      unlinkSync(tmp)
    } catch {
      // Never written.
    }
    throw error
  }
  fsyncDir(dirname(path))
}

/** Retention's removal, inside `root` (the git common dir): each file unlinked (one already gone
 * counts as removed), then each directory removed if it is empty. Nothing is reached through a
 * symlink: unlink never follows the last one, and every directory above is checked first. */
function removeFiles(root, files, dirs) {
  for (const file of files) {
    if (!realDirsBetween(root, file)) continue
    try {
      unlinkSync(file)
    } catch (error) {
      if (error.code !== 'ENOENT') throw error
    }
  }
  for (const dir of dirs) {
    if (!realDirsBetween(root, dir)) continue
    try {
      if (lstatSync(dir).isSymbolicLink()) throw new Error(`${dir} is a symlink: not removed`)
      rmdirSync(dir)
    } catch (error) {
      if (!['ENOENT', 'ENOTEMPTY', 'EEXIST'].includes(error.code)) throw error
    }
  }
}

/** Stops processes a killed runner left behind for `runId`'s proposer. */
function reapProposers(runner, runId, graceMs) {
  return runner.terminate({ marker: [PROPOSER_MARKER, runId] }, graceMs)
}

/**
 * Each effect the run core asks for that takes an answer, performed: `(effect, d)` resolves to
 * the answer (`d` is the drive in progress: its git, runner, run, world and the helpers that keep
 * its state). `interrupt` and `report` are the drive loop's own. Exported for
 * `tests/wire.test.mjs`, which checks it against the generated `wire/run.json`.
 */
export const PERFORM = {
  async discover(e, d) {
    const facts = await d.git.discover(e.repository ?? undefined, d.callerCwd)
    d.world.gitCommonDir = facts.gitCommonDir
    const otherLiveRuns = await originalLiveRuns(facts.gitCommonDir)
    return { type: 'discovered', id: e.id, facts: { ...facts, host: hostRecord() ?? null, otherLiveRuns } }
  },
  async openTracker(e, d) {
    d.world.tracker?.close()
    d.world.tracker = await openTracker(e.path)
    return { type: 'done', id: e.id }
  },
  persist: async (e, d) => ({ type: 'persisted', id: e.id, changes: d.world.tracker.persist(e.statements) }),
  loadRun: async (e, d) => ({ type: 'loaded', id: e.id, rows: d.world.tracker.load(e.runId) }),
  async createWorktree(e, d) {
    await d.git.createWorktree({ gitCommonDir: d.world.gitCommonDir, path: e.path, branch: e.branch ?? undefined, startCommit: e.startCommit })
    return { type: 'done', id: e.id }
  },
  hashInputs: async (e, d) => ({ type: 'hashed', id: e.id, files: await d.hashInputs(e) }),
  runEvaluator: (e, d) => d.evaluate(e),
  runProposer: (e, d) => d.proposeRound(e),
  async listChanges(e, d) {
    const where = { gitCommonDir: d.world.gitCommonDir, worktree: e.worktree }
    const worktree = await d.git.inspect({ ...where, full: true })
    return { type: 'changes', id: e.id, porcelainZ: await d.git.status(where), worktree }
  },
  commit: async (e, d) => ({ type: 'committed', id: e.id, commit: await d.git.commit({ ...e, gitCommonDir: d.world.gitCommonDir }) }),
  async checkoutClean(e, d) {
    await d.git.checkoutClean({ ...e, gitCommonDir: d.world.gitCommonDir })
    return { type: 'done', id: e.id }
  },
  async fastForward(e, d) {
    await d.git.fastForward({ gitCommonDir: d.world.gitCommonDir, branch: e.branch, from: e.from, to: e.to })
    return { type: 'done', id: e.id }
  },
  probeHost: async (e) => ({ type: 'hostProbed', id: e.id, alive: hostAlive(e.host) ?? null }),
  terminateProcessGroup: async (e, d) => ({ type: 'terminated', id: e.id, gone: await d.terminateRecorded(e) }),
  terminateProposers: async (e, d) => ({ type: 'terminated', id: e.id, gone: await reapProposers(d.runner, d.run.runId, e.graceMs) }),
  async exportTsv(e) {
    writeAtomic(e.path, e.contents)
    return { type: 'done', id: e.id }
  },
  loadRetention: async (e, d) => ({ type: 'retention', id: e.id, rows: d.world.tracker.retention() }),
  async removeFiles(e, d) {
    removeFiles(d.world.gitCommonDir, e.files, e.dirs)
    return { type: 'done', id: e.id }
  },
  async removeWorktree(e, d) {
    await d.git.removeWorktree({ gitCommonDir: d.world.gitCommonDir, path: e.path })
    return { type: 'done', id: e.id }
  },
}

/**
 * Drives `run` (an AutoresearchRun) to its report.
 *
 * `io.runner` spawns processes; `io.callerCwd` resolves the spec's repository; `io.propose`
 * (inside DSH) runs a proposal round when the run has no proposer program:
 * `({worktree, handoff, timeoutMs, signal}) → {hypothesis, summary}`; `io.onProgress(text)` gets
 * the core's progress lines; `io.onStep(run)` is called after every answer the core takes;
 * `io.signal` cancels the run (its reason becomes the cancel reason).
 */
export async function drive(run, io) {
  const {
    runner, callerCwd = process.cwd(), gitExecutable = 'git', propose, onProgress = () => {},
    onStep = () => {}, signal, now = Date.now,
  } = io
  const git = io.git ?? createGit({ runner, executable: gitExecutable })
  const world = { gitCommonDir: undefined, tracker: undefined, program: undefined }
  const inbox = []
  const outstanding = new Map()
  let inFlight = 0
  let wake = () => {}
  const post = (input) => {
    inbox.push(input)
    wake()
  }
  const progress = () => {
    const text = run.takeProgress()
    if (text !== undefined) onProgress(text)
  }
  const onAbort = () => post({ type: 'cancel', reason: reasonOf(signal) })
  if (signal?.aborted) onAbort()
  else signal?.addEventListener('abort', onAbort, { once: true })

  const start = (effect) => {
    inFlight += 1
    perform(effect).then(
      (answer) => {
        inFlight -= 1
        if (answer !== undefined) post(answer)
        else wake()
      },
      (error) => {
        inFlight -= 1
        post({ type: 'failed', id: effect.id, error: message(error) })
      },
    )
  }

  const driving = {
    git, world, runner, run, callerCwd, hashInputs, terminateRecorded, proposeRound,
    evaluate: (e) => evaluate(e, post),
  }
  async function perform(e) {
    if (!Object.hasOwn(PERFORM, e.kind)) throw new Error(`unknown effect ${JSON.stringify(e.kind)}`)
    return PERFORM[e.kind](e, driving)
  }

  async function hashInputs(e) {
    return Promise.all(e.paths.map(async ({ path }) => {
      const abs = resolve(e.worktree, path)
      let st
      try {
        st = lstatSync(abs)
      } catch {
        return { path, sha256: null }
      }
      return { path, sha256: st.isFile() ? await sha256File(abs) : null }
    }))
  }

  /** The evaluator's cwd must be a real directory inside its worktree (no symlink escape). */
  function checkCwd(cwd, worktree) {
    let st
    try {
      st = statSync(cwd)
    } catch {
      throw new Error(`the evaluation cwd ${cwd} does not exist in the worktree`)
    }
    if (!st.isDirectory()) throw new Error(`the evaluation cwd ${cwd} is not a directory`)
    const rel = relative(realpathSync(worktree), realpathSync(cwd))
    if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`the evaluation cwd ${cwd} leaves the worktree`)
  }

  /** Runs one process with a timeout and an interrupt; resolves its facts. */
  async function runProcess(e, spec, onSpawned) {
    const handle = runner.spawn(spec)
    let timedOut = false
    let cancelled = false
    outstanding.set(e.id, {
      interrupt() {
        cancelled = true
        handle.spawned.then(() => handle.terminate(), () => {})
      },
    })
    try {
      try {
        await handle.spawned
      } catch (error) {
        return { spawnError: `cannot spawn ${spec.argv[0]}: ${message(error)}` }
      }
      onSpawned?.(handle)
      if (cancelled) handle.terminate()
      const timer = setTimeout(() => {
        timedOut = true
        handle.terminate()
      }, e.timeoutMs)
      const { exitCode, signal } = await handle.exited
      clearTimeout(timer)
      const done = await handle.finish()
      return { exitCode, signal, timedOut, cancelled, containment: handle.containment ?? '', ...done }
    } finally {
      outstanding.delete(e.id)
    }
  }

  /** The evaluator program, resolved once per run (a bare name on PATH's absolute entries, or an
   * absolute path; a relative path is inside the worktree, an evaluator input the core hashes)
   * and pinned by its real path and SHA-256: a later evaluation runs the same bytes or fails to
   * spawn, so code that can write outside the state directory cannot swap it between attempts.
   * The bytes are hashed again only when the file's identity (device, inode, size, times) moved. */
  async function pinnedProgram(e, env) {
    const name = e.argv[0]
    if (name.includes('/') && !isAbsolute(name)) return name
    const path = resolveProgram(name, { cwd: e.cwd, env })
    if (path === undefined) return name
    const real = realpathSync(path)
    const st = statSync(real)
    const identity = [st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs].join(':')
    const pinned = world.program
    if (pinned === undefined) {
      world.program = { path, real, identity, sha256: await sha256File(real) }
      return path
    }
    if (pinned.path === path && pinned.real === real && pinned.identity === identity) return path
    const sha256 = await sha256File(real)
    if (pinned.path !== path || pinned.real !== real || pinned.sha256 !== sha256) {
      throw new Error(`the evaluator program ${JSON.stringify(name)} changed since the run's first evaluation (${pinned.real}, sha256 ${pinned.sha256}; now ${real}, sha256 ${sha256})`)
    }
    pinned.identity = identity
    return path
  }

  async function evaluate(e, post) {
    checkCwd(e.cwd, e.worktree)
    ensurePrivateDir(e.artifactDir)
    const env = { ...runner.scrubbedParentEnv(), ...e.env }
    const program = await pinnedProgram(e, env)
    const facts = await runProcess(e, {
      argv: [program, ...e.argv.slice(1)],
      cwd: e.cwd,
      env,
      stdoutCap: e.stdoutCap,
      stderrCap: e.stderrCap,
      graceMs: e.graceMs,
      marker: [ATTEMPT_MARKER, e.attemptId],
      confine: { writable: [e.worktree], readOnly: [e.stateDir] },
    }, (handle) => post({
      type: 'spawned',
      id: e.id,
      process: { pid: handle.pid, pgid: handle.pgid, startTime: handle.startTime ?? null },
    }))
    if (facts.spawnError !== undefined) throw new Error(facts.spawnError)
    // The candidate's code ran inside the evaluator: `.git` is checked (and put back) before
    // any git command follows it.
    const worktree = world.gitCommonDir === undefined
      ? undefined
      : await git.inspect({ gitCommonDir: world.gitCommonDir, worktree: e.worktree, full: false, commit: e.commit })
    let stderrTail = facts.stderr.bytes.toString('utf8')
    const artifacts = []
    try {
      for (const [kind, stream] of [['stdout', facts.stdout], ['stderr', facts.stderr]]) {
        const location = join(e.artifactDir, `${kind}.log`)
        writeNew(location, stream.bytes)
        artifacts.push({
          kind,
          location,
          sizeBytes: stream.bytes.length,
          sha256: createHash('sha256').update(stream.bytes).digest('hex'),
          truncated: stream.truncated,
        })
      }
      fsyncDir(e.artifactDir)
    } catch (error) {
      stderrTail = `[dsh-autoresearch: artifacts not written: ${message(error)}]\n${stderrTail}`
    }
    return {
      type: 'exited',
      id: e.id,
      outcome: {
        exitCode: facts.exitCode,
        signal: facts.signal,
        timedOut: facts.timedOut,
        cancelled: facts.cancelled,
        quiescent: facts.quiescent,
        stdoutTail: facts.stdout.bytes.toString('utf8'),
        stdoutTruncated: facts.stdout.truncated,
        stderrTail,
        artifacts,
        containment: facts.containment,
        worktree,
      },
    }
  }

  async function proposeRound(e) {
    if (e.argv === null || e.argv === undefined) {
      if (propose === undefined) throw new Error('this run has no proposer program (it was started inside DSH); resume it with the autoresearch tool')
      const controller = new AbortController()
      outstanding.set(e.id, { interrupt: () => controller.abort('cancelled') })
      const timer = setTimeout(() => controller.abort('timeout'), e.timeoutMs)
      try {
        const report = await propose({ worktree: e.worktree, handoff: e.handoff, confined: e.confined, timeoutMs: e.timeoutMs, signal: controller.signal })
        return { type: 'proposed', id: e.id, report }
      } finally {
        clearTimeout(timer)
        outstanding.delete(e.id)
      }
    }
    const round = `${run.runId}-round-${e.id}`
    const facts = await runProcess(e, {
      argv: e.argv,
      cwd: e.worktree,
      // The run's marker lets a resume reap every proposer a killed runner left behind; the
      // round's own contains this one alone (a generation's proposers run side by side).
      env: { ...runner.scrubbedParentEnv(), [PROPOSER_MARKER]: run.runId, [ROUND_MARKER]: round },
      stdin: e.handoff,
      stdoutCap: 1024 * 1024,
      stderrCap: 64 * 1024,
      graceMs: e.graceMs,
      marker: [ROUND_MARKER, round],
      confine: { writable: [e.worktree], readOnly: [e.stateDir] },
    })
    if (facts.spawnError !== undefined) throw new Error(facts.spawnError)
    return {
      type: 'proposerExited',
      id: e.id,
      outcome: {
        exitCode: facts.exitCode,
        signal: facts.signal,
        timedOut: facts.timedOut,
        cancelled: facts.cancelled,
        quiescent: facts.quiescent,
        stdoutTail: facts.stdout.bytes.toString('utf8'),
        stdoutTruncated: facts.stdout.truncated,
        stderrTail: facts.stderr.bytes.toString('utf8'),
        containment: facts.containment,
      },
    }
  }

  /** Recovery: stops an interrupted attempt's group when its recorded leader is provably the same
   * process (same start time; a reused pid is left alone), and every process carrying the
   * attempt's marker (which also finds members whose leader already exited). */
  async function terminateRecorded(e) {
    let pgid
    if (e.pgid !== null && e.pid !== null && e.startTime !== null) {
      if (runner.processStartTime(e.pid) === e.startTime) pgid = e.pgid
    }
    return runner.terminate({ pgid, marker: [ATTEMPT_MARKER, e.attemptId] }, e.graceMs)
  }

  try {
    for (;;) {
      let text
      while ((text = run.poll()) !== undefined) {
        const effect = JSON.parse(text)
        if (effect.kind === 'report') continue
        if (effect.kind === 'interrupt') {
          outstanding.get(effect.target)?.interrupt()
          continue
        }
        start(effect)
      }
      progress()
      if (run.done) return
      if (inbox.length === 0) {
        if (inFlight === 0) throw new Error(`the run core is waiting with nothing outstanding (state ${run.state})`)
        await new Promise((resolve) => {
          wake = resolve
        })
        wake = () => {}
      }
      while (inbox.length > 0 && !run.done) {
        run.handle(JSON.stringify(inbox.shift()), now())
        progress()
        onStep(run)
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort)
    world.tracker?.close()
  }
}
