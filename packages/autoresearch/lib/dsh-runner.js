// dsh-autoresearch's process runner inside DSH: the driver's runner interface on top of
// ctx.subprocess (its local provider spawns detached, one process group per child, and stops a
// tree with SIGTERM, grace, SIGKILL). An evaluator is contained as the local runner contains it
// (lib/contain.js), and quiescence is double-checked with lib/process.js's scan of that
// containment and of the processes carrying the attempt's marker variable.
import { containment } from './contain.js'
import { liveMembers, processStartTime, scrubbedParentEnv, sleep, terminate } from './process.js'

const EXIT_WAIT_MS = 5_000

/** `subprocess` is DSH's SubprocessRuntime (`ctx.subprocess`). */
export function createDshRunner(subprocess) {
  return {
    kind: 'dsh',
    scrubbedParentEnv,
    processStartTime,
    liveMembers,
    terminate,
    spawn(options) {
      const { cwd, env, stdin, stdoutCap, stderrCap, graceMs, marker, confine } = options
      const jail = containment(marker, confine)
      const argv = jail?.argv(options.argv, { cwd, env }) ?? options.argv
      // The driver passes the complete environment it wants; ambient variables it left out are
      // tombstoned, so DSH's own base cannot add them back (a GIT_DIR, say).
      const spec = { ...env }
      for (const key of Object.keys(process.env)) if (!(key in spec)) spec[key] = undefined
      const handle = subprocess.spawn({
        argv,
        cwd,
        env: spec,
        stdio: {
          stdin: stdin === undefined ? 'ignore' : { data: stdin },
          stdout: { maxBytes: stdoutCap },
          stderr: { maxBytes: stderrCap },
        },
        graceMs: Math.max(1, graceMs),
      })
      const pid = handle.pid
      const failed = pid === undefined || pid < 0
      const exited = handle.done.then(
        (o) => ({ exitCode: o.exitCode, signal: o.signal }),
        () => ({ exitCode: null, signal: null, spawnFailed: true }),
      )
      if (!failed) jail?.started(pid)
      const target = () => ({ pgid: failed ? undefined : pid, marker, jail })
      const read = (reader, cap) => {
        if (reader === undefined) return { bytes: Buffer.alloc(0), truncated: false, total: 0 }
        const { text, lossy } = reader.readFrom(0)
        let bytes = Buffer.from(text, 'utf8')
        if (bytes.length > cap) bytes = bytes.subarray(bytes.length - cap)
        return { bytes, truncated: lossy, total: bytes.length }
      }
      const self = {
        pid,
        pgid: pid,
        startTime: failed ? undefined : processStartTime(pid),
        containment: jail?.kind,
        spawned: failed
          ? handle.done.then(() => { throw new Error('spawn failed') })
          : Promise.resolve(),
        exited,
        target,
        async terminate() {
          if (failed) return true
          handle.terminate()
          const bound = AbortSignal.timeout(graceMs + EXIT_WAIT_MS)
          const treeGone = await handle.waitForExit(bound).catch(() => false)
          return (await terminate(target(), graceMs)) && treeGone
        },
        async finish() {
          await exited
          let quiescent = true
          if (!failed) {
            if (liveMembers(target()).length > 0) handle.terminate()
            const bound = AbortSignal.timeout(graceMs + EXIT_WAIT_MS)
            const treeGone = await handle.waitForExit(bound).catch(() => false)
            quiescent = treeGone && (await terminate(target(), graceMs))
          }
          await sleep(0)
          return {
            quiescent,
            stdout: read(handle.collected.stdout, stdoutCap),
            stderr: read(handle.collected.stderr, stderrCap),
          }
        },
      }
      return self
    },
  }
}
