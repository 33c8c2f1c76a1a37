// dsh-autoresearch's process containment: what keeps every descendant of an evaluator or a
// headless proposer in reach, whatever it does to its session, group or environment.
//
// - `cgroup`: where this process may create cgroup v2 groups (as root, or in a delegated
//   subtree), each attempt gets its own group, named after its marker. The program is started
//   through `/bin/sh`, which moves itself into the group before it `exec`s the argv, so nothing the
//   program starts can be outside it; `cgroup.kill` (or SIGKILL per member) empties it and
//   `cgroup.events` proves it empty. A group outlives a crashed runner, so a resume finds it by
//   name.
// - `process-scan` otherwise: the process group, the marker variable, and every descendant seen
//   by polling /proc while the attempt runs. A child that leaves its session and group between two
//   polls is missed, so results made this way say containment was best effort.
//
// `DSH_AUTORESEARCH_CONTAINMENT=process-scan` forces the second (tests, or a machine where
// cgroups misbehave).
import { spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { delimiter, join, resolve } from 'node:path'

const SCAN_MS = 25
const PREFIX = 'dsh-autoresearch-'
/** Joins the group named by $0, then runs the argv; 125 says the join failed. */
const JOIN = 'echo 0 > "$0/cgroup.procs" || { echo "dsh-autoresearch: cannot join cgroup $0" >&2; exit 125; }; exec "$@"'

let support

/** The directory new groups go under, or undefined when cgroup v2 groups cannot be made here. */
export function cgroupBase() {
  if (support !== undefined) return support.base
  support = { base: undefined }
  if (process.platform !== 'linux' || process.env.DSH_AUTORESEARCH_CONTAINMENT === 'process-scan') return undefined
  try {
    const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'))
    const mount = readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[f.indexOf('-') + 1] === 'cgroup2')
    if (own === undefined || mount === undefined) return undefined
    const base = join(mount[4], own.slice(3))
    const probe = join(base, `${PREFIX}probe-${process.pid}`)
    mkdirSync(probe)
    try {
      const joined = spawnSync('/bin/sh', ['-c', JOIN, probe, 'true'], { stdio: 'ignore' })
      if (joined.status === 0 && existsSync(join(probe, 'cgroup.events'))) support.base = base
    } finally {
      rmdirSync(probe)
    }
  } catch {
    // No cgroup v2, not writable, or no /bin/sh: fall back.
  }
  return support.base
}

/** The program `execvp` would run for `name` (PATH from the child's environment), or undefined. */
function resolveProgram(name, { cwd, env }) {
  const runnable = (path) => {
    try {
      accessSync(path, constants.X_OK)
      return statSync(path).isFile()
    } catch {
      return false
    }
  }
  if (name.includes('/')) return runnable(resolve(cwd ?? '.', name)) ? resolve(cwd ?? '.', name) : undefined
  for (const dir of (env?.PATH ?? '').split(delimiter)) {
    const path = resolve(cwd ?? '.', dir === '' ? '.' : dir, name)
    if (runnable(path)) return path
  }
  return undefined
}

const safeName = (value) => `${PREFIX}${String(value).replace(/[^A-Za-z0-9._-]/g, '_')}`

function pidsOf(dir) {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number)
  } catch {
    return []
  }
}

function populated(dir) {
  try {
    return /^populated 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'))
  } catch {
    return false
  }
}

/** `/proc/<pid>/stat` split after the command name: [state, ppid, pgrp, …]; field 22 (the start
 * time) is at index 19. Undefined when the process does not exist (or there is no /proc). */
export function statFields(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

const liveStat = (pid) => {
  const f = statFields(pid)
  return f === undefined || f[0] === 'Z' || f[0] === 'X' ? undefined : f
}

/**
 * The containment of one attempt, named by its marker value (`[NAME, value]`), or undefined
 * without a marker (git commands are the runner's own). Shape: `kind`; `argv(argv, {cwd, env})`
 * (what to spawn); `started(pid)` (begin watching); `members()` (live pids); `kill(signal)`; `settle()`
 * (after everything is gone: drop the group, stop watching).
 */
export function containment(marker) {
  if (marker === undefined) return undefined
  const base = cgroupBase()
  if (base !== undefined) {
    const dir = join(base, safeName(marker[1]))
    return {
      kind: 'cgroup',
      argv(argv, where) {
        // A program that cannot be found fails to spawn as it would without the wrapper.
        const program = resolveProgram(argv[0], where)
        if (program === undefined) return argv
        mkdirSync(dir, { recursive: true })
        return ['/bin/sh', '-c', JOIN, dir, program, ...argv.slice(1)]
      },
      started() {},
      members: () => (populated(dir) ? pidsOf(dir) : []),
      kill(signal) {
        if (signal === 'SIGKILL' && existsSync(join(dir, 'cgroup.kill'))) {
          try {
            writeFileSync(join(dir, 'cgroup.kill'), '1')
            return
          } catch {
            // Fall through to one signal per member.
          }
        }
        for (const pid of pidsOf(dir)) {
          try {
            process.kill(pid, signal)
          } catch {
            // Already gone.
          }
        }
      },
      settle() {
        try {
          if (existsSync(dir)) rmdirSync(dir)
        } catch {
          // Still populated: the caller reported it as not quiescent; a resume retries.
        }
      },
    }
  }
  // process-scan: descendants by ppid, remembered with their start time (a reused pid is
  // someone else's).
  const seen = new Map()
  let timer
  const scan = () => {
    const parents = new Map()
    let names
    try {
      names = readdirSync('/proc')
    } catch {
      return
    }
    for (const name of names) {
      if (!/^\d+$/.test(name)) continue
      const f = liveStat(Number(name))
      if (f !== undefined) parents.set(Number(name), { ppid: Number(f[1]), start: f[19] })
    }
    let grew = true
    while (grew) {
      grew = false
      for (const [pid, p] of parents) {
        if (!seen.has(pid) && seen.has(p.ppid) && seen.get(p.ppid) === parents.get(p.ppid)?.start) {
          seen.set(pid, p.start)
          grew = true
        }
      }
    }
  }
  return {
    kind: 'process-scan',
    argv: (argv) => argv,
    started(pid) {
      const f = liveStat(pid)
      if (f === undefined) return
      seen.set(pid, f[19])
      scan()
      timer = setInterval(scan, SCAN_MS)
      timer.unref?.()
    },
    members() {
      scan()
      return [...seen].filter(([pid, start]) => liveStat(pid)?.[19] === start).map(([pid]) => pid)
    },
    kill(signal) {
      for (const pid of this.members()) {
        try {
          process.kill(pid, signal)
        } catch {
          // Already gone.
        }
      }
    },
    settle() {
      clearInterval(timer)
    },
  }
}
