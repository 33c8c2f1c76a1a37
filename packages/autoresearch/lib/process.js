// dsh-autoresearch's local process runner: every program (git, the evaluator, the headless
// proposer) runs without a shell in its own process group (a detached spawn), its output kept as
// a bounded tail. An evaluator or proposer (a spawn with a marker) is also contained
// (lib/contain.js: its own cgroup v2 group where the machine allows one, descendants watched
// through /proc otherwise), and stopping it means SIGTERM, a grace period, then SIGKILL to its
// group, its containment and every process carrying the marker variable, until none is left
// (zombies count as gone). The DSH plugin passes a runner of the same shape built on
// ctx.subprocess; the driver never spawns anything itself. Decisions (what a failure means) are
// the Rust core's.
import { spawn as nodeSpawn } from 'node:child_process'
import { readFileSync, readdirSync, readlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { containment, signalGroup, signalPid, statFields } from './contain.js'

const POLL_MS = 25
/** How long a SIGKILLed group may take to vanish before it counts as not provably gone. */
const KILL_WAIT_MS = 5_000
/** How long output may keep arriving after the group is gone (pipes held by the dead). */
const DRAIN_MS = 2_000

/** Names never passed on to a child: DSH's own variables and anything that looks like a secret
 * (the same idea as DSH's subprocess provider). */
const SENSITIVE = /(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)($|_)/i

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The parent environment minus `DSH_*` and secret-looking names. */
export function scrubbedParentEnv(env = process.env) {
  const out = {}
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || key.startsWith('DSH_') || SENSITIVE.test(key)) continue
    out[key] = value
  }
  return out
}

/** The start time (`/proc/<pid>/stat` field 22) of a live process, as text. */
export function processStartTime(pid) {
  const fields = statFields(pid)
  return fields === undefined || fields[0] === 'Z' || fields[0] === 'X' ? undefined : fields[19]
}

/** This host as a run records it: `{hostname, bootId, pidNs, pid, startTime}` as JSON (what
 * makes a pid name one process), or undefined without /proc (then no later host can prove it
 * dead). */
export function hostRecord() {
  const startTime = processStartTime(process.pid)
  if (startTime === undefined) return undefined
  return JSON.stringify({
    hostname: hostname(), bootId: bootId(), pidNs: pidNamespace(), pid: process.pid, startTime,
  })
}

/** Whether the process a run's host record names (`pid`, `startTime`) is alive here: the core
 * asks only about records of this machine, boot and PID namespace; undefined for a record that
 * names no process. */
export function hostAlive(recorded) {
  let host
  try {
    host = JSON.parse(recorded)
  } catch {
    return undefined
  }
  if (!Number.isSafeInteger(host?.pid) || host.pid <= 1) return undefined
  return processStartTime(host.pid) === host.startTime
}

/** This process's PID namespace (`pid:[4026531836]`), or undefined. */
function pidNamespace() {
  try {
    return readlinkSync('/proc/self/ns/pid')
  } catch {
    return undefined
  }
}

function bootId() {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  } catch {
    return undefined
  }
}

const hasProc = () => {
  try {
    readdirSync('/proc/self')
    return true
  } catch {
    return false
  }
}

/** Live (not zombie) processes in group `pgid`, in containment `jail`, or carrying `marker`
 * (`[NAME, value]`) in their environment; `[0]` stands for a containment that is occupied by
 * processes this one cannot see. Without /proc only the group is checked, with `kill(-pgid, 0)`. */
export function liveMembers({ pgid, marker, jail }) {
  const contained = jail?.members() ?? []
  if (contained.length > 0) return contained
  if (jail?.occupied()) return [0]
  if (!hasProc()) {
    if (pgid === undefined || pgid <= 1) return []
    try {
      process.kill(-pgid, 0)
      return [pgid]
    } catch (error) {
      return error.code === 'EPERM' ? [pgid] : []
    }
  }
  const needle = marker === undefined ? undefined : Buffer.from(`${marker[0]}=${marker[1]}\0`)
  const found = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    if (pid <= 1 || pid === process.pid) continue
    const fields = statFields(pid)
    if (fields === undefined || fields[0] === 'Z' || fields[0] === 'X') continue
    if (pgid !== undefined && pgid > 1 && Number(fields[2]) === pgid) {
      found.push(pid)
      continue
    }
    if (needle !== undefined) {
      try {
        const environ = readFileSync(`/proc/${pid}/environ`)
        if (environ.indexOf(needle) === 0 || environ.indexOf(Buffer.concat([Buffer.from('\0'), needle])) >= 0) found.push(pid)
      } catch {
        // Another user's process, or it just exited.
      }
    }
  }
  return found
}

function signalAll({ pgid, marker, jail }, signal) {
  jail?.kill(signal)
  if (pgid !== undefined) signalGroup(pgid, signal)
  if (marker !== undefined) {
    for (const pid of liveMembers({ marker })) signalPid(pid, signal)
  }
}

async function waitGone(target, ms) {
  const deadline = Date.now() + ms
  for (;;) {
    if (liveMembers(target).length === 0) return true
    if (Date.now() >= deadline) return false
    await sleep(POLL_MS)
  }
}

/** Stops a group (and marked strays): SIGTERM, up to `graceMs` for it to go, then SIGKILL.
 * Resolves whether everything is provably gone. */
export async function terminate(target, graceMs) {
  // A recovery names only the marker: the containment is found again by it.
  const t = { ...target, jail: target.jail ?? containment(target.marker) }
  let gone = liveMembers(t).length === 0
  if (!gone) {
    signalAll(t, 'SIGTERM')
    gone = await waitGone(t, graceMs)
  }
  if (!gone) {
    signalAll(t, 'SIGKILL')
    gone = await waitGone(t, KILL_WAIT_MS)
  }
  // A group that cannot be removed is not proven empty (a child group, or a process in it).
  return gone && (t.jail?.settle() ?? true)
}

/** A byte sink keeping the last `cap` bytes and counting all of them. */
function tail(cap) {
  const chunks = []
  let kept = 0
  let total = 0
  return {
    push(chunk) {
      total += chunk.length
      chunks.push(chunk)
      kept += chunk.length
      while (chunks.length > 1 && kept - chunks[0].length >= cap) kept -= chunks.shift().length
    },
    result() {
      const all = Buffer.concat(chunks)
      const bytes = all.length > cap ? all.subarray(all.length - cap) : all
      return { bytes, truncated: total > cap, total }
    },
  }
}

/**
 * The local runner. `spawn(options)` starts `argv` (no shell) in `cwd` with exactly `env`, in its
 * own process group, stdin fed with `stdin` (a string) or ignored, and returns a handle:
 * `pid`, `pgid`, `startTime`, `containment` (`cgroup`, `process-scan`, or undefined for a spawn
 * without a marker), `spawned` (rejects with the spawn error), `exited` (leader exit
 * `{exitCode, signal}`), `terminate()` (the group and the `marker` strays; resolves gone),
 * `finish()` (after the leader exits: stop leftovers, drain output; resolves `{quiescent,
 * stdout, stderr}` with each `{bytes, truncated, total}`).
 */
export function createLocalRunner() {
  return {
    kind: 'local',
    scrubbedParentEnv,
    processStartTime,
    liveMembers,
    terminate,
    spawn(options) {
      const { cwd, env, stdin, stdoutCap, stderrCap, graceMs, marker, confine } = options
      const jail = containment(marker, confine)
      const argv = jail?.argv(options.argv, { cwd, env }) ?? options.argv
      const child = nodeSpawn(argv[0], argv.slice(1), {
        cwd,
        env,
        detached: true,
        stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        windowsHide: true,
      })
      const out = tail(stdoutCap)
      const err = tail(stderrCap)
      child.stdout.on('data', (c) => out.push(c))
      child.stderr.on('data', (c) => err.push(c))
      let closed = false
      const closedP = new Promise((resolve) => child.on('close', () => {
        closed = true
        resolve()
      }))
      const spawned = new Promise((resolve, reject) => {
        child.once('spawn', resolve)
        child.once('error', reject)
      })
      const exited = new Promise((resolve) => {
        child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }))
        child.once('error', () => resolve({ exitCode: null, signal: null, spawnFailed: true }))
      })
      if (stdin !== undefined) {
        child.stdin.on('error', () => {})
        spawned.then(() => child.stdin.end(stdin), () => {})
      }
      const handle = {
        get pid() {
          return child.pid
        },
        get pgid() {
          return child.pid
        },
        startTime: undefined,
        containment: jail?.kind,
        spawned: spawned.then(() => {
          handle.startTime = processStartTime(child.pid)
          jail?.started(child.pid)
        }),
        exited,
        target() {
          return { pgid: child.pid, marker, jail }
        },
        terminate() {
          if (child.pid === undefined) return Promise.resolve(true)
          return terminate(handle.target(), graceMs)
        },
        async finish() {
          await exited
          let quiescent = true
          if (child.pid !== undefined) quiescent = await terminate(handle.target(), graceMs)
          else jail?.settle()
          if (!closed) {
            let timer
            await Promise.race([closedP, new Promise((resolve) => { timer = setTimeout(resolve, DRAIN_MS) })])
            clearTimeout(timer)
          }
          if (!closed) {
            child.stdout.destroy()
            child.stderr.destroy()
          }
          return { quiescent, stdout: out.result(), stderr: err.result() }
        },
      }
      return handle
    },
  }
}
