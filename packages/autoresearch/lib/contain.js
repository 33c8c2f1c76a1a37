// dsh-autoresearch's process containment: what keeps every descendant of an evaluator or a
// headless proposer in reach, whatever it does to its session, group, environment or cgroup.
//
// - `confined` (root, cgroup v2, util-linux's unshare and setpriv): each attempt gets its own
//   cgroup v2 group, named after its marker, that may have no child groups. The program starts in
//   a private mount namespace where every cgroup2 mount shows only that group (the groups above
//   it cannot be named), the run's state directory is read-only but for the attempt's own
//   worktree (another slot's worktree, the tracker and the artifacts cannot be written), and its
//   capability bounding set lacks what would undo that (mounting, ptrace, modules, raw devices).
//   So nothing it starts can leave the group: `cgroup.kill` empties it and `cgroup.events` proves
//   it empty. (Capabilities do not keep one root process from reading another's
//   `/proc/<pid>/environ`: measured, a process with fewer still reads it. So the environment
//   values are kept from proposers by the core's order instead: no evaluator runs beside one.)
// - `cgroup` (a delegated cgroup v2 subtree without those rights): the same group, but a process
//   inside can move itself to any group this user may write, so results say containment was not
//   proven.
// - `process-scan` otherwise: the process group, the marker variable, and every descendant seen
//   by polling /proc while the attempt runs. A child that leaves its session and group between two
//   polls is missed, so results made this way say containment was best effort.
//
// Whatever the kind, a pid is signalled only when it is above 1 and not this process, and a
// group only when its id is above 1 and not this process's own group: a pid read as 0 (a
// process of another PID namespace in `cgroup.procs`) is never signalled.
//
// `DSH_AUTORESEARCH_CONTAINMENT=process-scan` (or `cgroup`) forces a weaker kind (tests, or a
// machine where cgroups or namespaces misbehave).
import { spawnSync } from 'node:child_process'
import {
  accessSync, constants, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync,
} from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'

const SCAN_MS = 25
const PREFIX = 'dsh-autoresearch-'
/** Exit status of a wrapper that could not set the attempt up (the program never ran). */
const SETUP_FAILED = 125
/** Joins the group named by $0, then runs the argv. */
const JOIN = `echo 0 > "$0/cgroup.procs" || { echo "dsh-autoresearch: cannot join cgroup $0" >&2; exit ${SETUP_FAILED}; }; exec "$@"`
/**
 * Run in a fresh mount namespace: joins the group $1, makes each of the $2 paths that follow a
 * mount of its own (writable), binds the $3 paths after them read-only (recursively, so the
 * writable ones inside stay writable), shows the group in place of each of the $4 cgroup2 mounts
 * after those, then runs the argv (setpriv first).
 */
const CONFINE = `fail() { echo "dsh-autoresearch: cannot confine the attempt: $1" >&2; exit ${SETUP_FAILED}; }
cg=$1; shift
echo 0 > "$cg/cgroup.procs" || fail "cannot join cgroup $cg"
n=$1; shift
while [ "$n" -gt 0 ]; do mount --bind "$1" "$1" || fail "cannot bind $1"; shift; n=$((n - 1)); done
n=$1; shift
while [ "$n" -gt 0 ]; do
  mount --rbind "$1" "$1" && mount -o remount,bind,ro "$1" || fail "cannot make $1 read-only"; shift; n=$((n - 1))
done
n=$1; shift
while [ "$n" -gt 0 ]; do mount --bind "$cg" "$1" || fail "cannot hide $1"; shift; n=$((n - 1)); done
exec "$@"`
/** Capabilities a confined attempt never has: each would let it undo its mounts, leave its group,
 * or read and write other processes and devices. */
const DROPPED = ['sys_admin', 'sys_ptrace', 'sys_module', 'sys_rawio', 'mknod', 'sys_boot']

let support

/** This machine's containment facts, probed once: `base` (where new groups go, or undefined),
 * `mounts` (every cgroup2 mount point), `tools` (`{unshare, setpriv}` when confinement works). */
function probe() {
  if (support !== undefined) return support
  support = { base: undefined, mounts: [], tools: undefined }
  const forced = process.env.DSH_AUTORESEARCH_CONTAINMENT
  if (process.platform !== 'linux' || forced === 'process-scan') return support
  try {
    const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'))
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f[f.indexOf('-') + 1] === 'cgroup2')
      .map((f) => f[4].replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))))
    if (own === undefined || mounts.length === 0) return support
    const base = join(mounts[0], own.slice(3))
    const dir = join(base, `${PREFIX}probe-${process.pid}`)
    mkdirSync(dir)
    try {
      writeFileSync(join(dir, 'cgroup.max.descendants'), '0')
      const joined = spawnSync('/bin/sh', ['-c', JOIN, dir, 'true'], { stdio: 'ignore' })
      if (joined.status !== 0 || !existsSync(join(dir, 'cgroup.events'))) return support
      support.base = base
      support.mounts = mounts
      const tools = { unshare: onPath('unshare'), setpriv: onPath('setpriv') }
      if (forced !== 'cgroup' && tools.unshare && tools.setpriv) {
        const argv = confinedArgv(tools, dir, { writable: [], readOnly: [], mounts }, ['/bin/sh', '-c', 'mkdir "$0/x" 2>/dev/null && exit 1; exit 0', mounts[0]])
        const confined = spawnSync(argv[0], argv.slice(1), { stdio: 'ignore' })
        if (confined.status === 0) support.tools = tools
      }
    } finally {
      removeGroup(dir)
    }
  } catch {
    // No cgroup v2, not writable, or no /bin/sh: fall back.
  }
  return support
}

/** The directory new groups go under, or undefined when cgroup v2 groups cannot be made here. */
export function cgroupBase() {
  return probe().base
}

const runnable = (path) => {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** `name` found in the absolute entries of PATH (`env.PATH`, default this process's), or
 * undefined. Relative and empty entries are skipped: they name the candidate's worktree. */
export function onPath(name, env = process.env) {
  if (name.includes('/')) return undefined
  for (const dir of (env?.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue
    const path = join(dir, name)
    if (runnable(path)) return path
  }
  return undefined
}

/** The program `argv[0]` names for a child with `{cwd, env}`: a path as given (relative to
 * `cwd`), a bare name only through PATH's absolute entries; undefined when there is none. */
export function resolveProgram(name, { cwd, env }) {
  if (name.includes('/')) {
    const path = isAbsolute(name) ? name : join(cwd ?? '.', name)
    return runnable(path) ? path : undefined
  }
  return onPath(name, env)
}

/** `resolveProgram`, or an error naming the program: a bare name never runs from a relative PATH
 * entry (the worktree's own `./python3`), whatever kind of containment runs it. */
function programOf(name, where) {
  const program = resolveProgram(name, where)
  if (program === undefined) {
    throw new Error(`cannot spawn ${JSON.stringify(name)}: ${name.includes('/') ? 'no such executable file' : "not found in PATH's absolute entries"}`)
  }
  return program
}

function confinedArgv(tools, dir, { writable, readOnly, mounts }, argv) {
  return [
    tools.unshare, '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', CONFINE, 'confine', dir,
    String(writable.length), ...writable,
    String(readOnly.length), ...readOnly,
    String(mounts.length), ...mounts,
    tools.setpriv, '--bounding-set', DROPPED.map((c) => `-${c}`).join(','), '--', ...argv,
  ]
}

const safeName = (value) => `${PREFIX}${String(value).replace(/[^A-Za-z0-9._-]/g, '_')}`

/** The process group of this process (`/proc/self/stat`), or undefined. */
function ownGroup() {
  const f = statFields('self')
  return f === undefined ? undefined : Number(f[2])
}

/** Sends `signal` to `pid`, unless it is not a real other process (≤ 1, this one, not an integer). */
export function signalPid(pid, signal) {
  if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) return
  try {
    process.kill(pid, signal)
  } catch {
    // Already gone, or not ours.
  }
}

/** Sends `signal` to group `pgid`, unless it is not a real other group (≤ 1, this one's own). */
export function signalGroup(pgid, signal) {
  if (!Number.isSafeInteger(pgid) || pgid <= 1 || pgid === ownGroup()) return
  try {
    process.kill(-pgid, signal)
  } catch {
    // Already gone.
  }
}

/** A group and every group below it, deepest first; never through a symlink. */
function groupsBelow(dir) {
  const out = []
  const visit = (d) => {
    let entries
    try {
      entries = readdirSync(d, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) if (e.isDirectory()) visit(join(d, e.name))
    out.push(d)
  }
  visit(dir)
  return out
}

/** Visible pids of a group and its descendants (a pid of another PID namespace reads as 0 and is
 * left out: it is counted by `populated`, never signalled). */
function pidsOf(dir) {
  const pids = []
  for (const d of groupsBelow(dir)) {
    try {
      for (const line of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) {
        const pid = Number(line)
        if (line !== '' && pid > 1) pids.push(pid)
      }
    } catch {
      // Removed meanwhile.
    }
  }
  return pids
}

/** Whether the group or any group below it holds a process (`cgroup.events` counts the subtree). */
function populated(dir) {
  try {
    return /^populated 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'))
  } catch {
    return false
  }
}

/** Removes a group and the groups below it; true when none is left. */
function removeGroup(dir) {
  for (const d of groupsBelow(dir)) {
    try {
      rmdirSync(d)
    } catch (error) {
      if (error.code !== 'ENOENT') return false
    }
  }
  return !existsSync(dir)
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

/** A real directory (not a symlink) at `path`, or an error naming it. */
function assertDirectory(path, what) {
  const st = lstatSync(path)
  if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`${what} ${path} is not a directory (a symlink or another file took its place)`)
}

/**
 * The containment of one attempt, named by its marker value (`[NAME, value]`), or undefined
 * without a marker (git commands are the runner's own). Shape: `kind`;
 * `argv(argv, {cwd, env})` (what to spawn); `started(pid)` (begin watching); `members()` (live
 * visible pids); `occupied()` (whether anything, visible or not, is left); `kill(signal)`;
 * `settle()` (after everything is gone: drop the group, stop watching; false when the group
 * could not be removed). `confine` (`{writable, readOnly}`) names the attempt's own worktree and
 * the directories it must not write.
 */
export function containment(marker, confine = {}) {
  if (marker === undefined) return undefined
  const { base, mounts, tools } = probe()
  if (base !== undefined) {
    const dir = join(base, safeName(marker[1]))
    return {
      kind: tools === undefined ? 'cgroup' : 'confined',
      argv(argv, where) {
        const program = programOf(argv[0], where)
        if (!existsSync(dir)) {
          mkdirSync(dir)
          writeFileSync(join(dir, 'cgroup.max.descendants'), '0')
        }
        if (tools === undefined) return ['/bin/sh', '-c', JOIN, dir, program, ...argv.slice(1)]
        const writable = confine.writable ?? []
        for (const path of writable) assertDirectory(path, 'the worktree')
        return confinedArgv(tools, dir, { writable, readOnly: confine.readOnly ?? [], mounts }, [program, ...argv.slice(1)])
      },
      started() {},
      members: () => pidsOf(dir),
      occupied: () => populated(dir),
      kill(signal) {
        if (signal === 'SIGKILL' && existsSync(join(dir, 'cgroup.kill'))) {
          try {
            // Recursive: every group below is killed too.
            writeFileSync(join(dir, 'cgroup.kill'), '1')
            return
          } catch {
            // Fall through to one signal per member.
          }
        }
        for (const pid of pidsOf(dir)) signalPid(pid, signal)
      },
      settle: () => removeGroup(dir),
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
  const members = () => {
    scan()
    return [...seen].filter(([pid, start]) => liveStat(pid)?.[19] === start).map(([pid]) => pid)
  }
  return {
    kind: 'process-scan',
    argv: (argv, where) => [programOf(argv[0], where), ...argv.slice(1)],
    started(pid) {
      const f = liveStat(pid)
      if (f === undefined) return
      seen.set(pid, f[19])
      scan()
      timer = setInterval(scan, SCAN_MS)
      timer.unref?.()
    },
    members,
    occupied: () => members().length > 0,
    kill(signal) {
      for (const pid of members()) signalPid(pid, signal)
    },
    settle() {
      clearInterval(timer)
      return true
    },
  }
}
