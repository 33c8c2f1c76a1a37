// limit-break's memory driver: the file operations behind memory_save, memory_recall,
// memory_stats and the people CLI, performed exactly as `limit-break-memory` documents them
// ("The save protocol", "The recall cache"). Every decision — argument rules, the store format,
// whether to wait for, take over or give up on the lock, whether the cached index is still the
// file's, every answer and message — is a call into the Rust core. This file only does I/O and
// reports what it found: bytes, stat fields, error codes, the time.
import { link, mkdir, open, readdir, realpath, rename, stat, unlink } from 'node:fs/promises'
import { hostname } from 'node:os'
import { dirname, join, resolve } from 'node:path'

const WINDOWS = process.platform === 'win32'
/** Errors a rename over a file held open by a scanner or indexer gives on Windows. */
const WINDOWS_BUSY = new Set(['EPERM', 'EACCES', 'EBUSY'])
/** How long a Windows rename is retried while the target is busy. */
const RENAME_RETRY_MS = 1000

/** The store's paths under an absolute DSH home: `{ home, dir, store, lock, takeover }`. */
export function storePaths(wasm, home) {
  const layout = JSON.parse(wasm.memoryLayout())
  const dir = join(home, layout.dir)
  return {
    home, dir, store: join(dir, layout.store), lock: join(dir, layout.lock), takeover: join(dir, layout.takeover),
  }
}

/** An I/O error as one line for a message: its code and text. */
export function describe(error) {
  const message = typeof error?.message === 'string' ? error.message : String(error)
  return typeof error?.code === 'string' && !message.startsWith(error.code) ? `${error.code}: ${message}` : message
}

/** The tool's arguments as JSON text for the core (DSH passes parsed JSON). */
export function argsJson(args) {
  try {
    return JSON.stringify(args === undefined ? null : args) ?? 'null'
  } catch {
    return 'null'
  }
}

/**
 * The repository root of `cwd`: the nearest folder, `cwd` itself or one above it, holding a
 * `.git` (a folder, or a file for a worktree or submodule). `undefined` outside a repository or
 * without a `cwd`.
 */
export async function projectRoot(cwd) {
  if (typeof cwd !== 'string' || cwd === '') return undefined
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    try {
      await stat(join(dir, '.git'))
      return dir
    } catch {
      // No marker here: look one level up.
    }
    if (dirname(dir) === dir) return undefined
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The three memory tools over one store. `env` is `{ dshHomeEnv, osHome }`, only for showing the
 * path symbolically in `memory_stats`. Each method resolves to the answer object and never
 * throws for a world failure.
 */
export function createMemory(wasm, plugin, paths, env) {
  const index = new wasm.LimitBreakMemory()

  /** Reads the bytes only when the cached index may not be the file's. */
  const needsBytes = (st) => !index.isFresh(keyOf(st))

  async function save(args, project) {
    const json = argsJson(args)
    const invalid = wasm.checkSaveArgs(json)
    if (invalid !== undefined) return JSON.parse(invalid)
    const answer = await withStoreLock(
      wasm,
      paths,
      (bytes, found) => index.save(json, found && [...keyOf(found.st), found.readAt], bytes, Date.now(), project),
      { needsBytes, committed: (st) => index.committed(keyOf(st), Date.now()) },
    )
    return JSON.parse(answer)
  }

  /** Brings the cached index up to date with the file: `undefined`, or the failure's JSON text. */
  async function load() {
    let found
    try {
      found = await readStore(paths.store, needsBytes)
    } catch (error) {
      return wasm.memoryReadFailed(describe(error))
    }
    if (found === undefined) {
      index.loadMissing()
      return undefined
    }
    return found.bytes === undefined ? undefined : index.load(found.bytes, keyOf(found.st), found.readAt)
  }

  async function recall(args, project) {
    const json = argsJson(args)
    const invalid = wasm.checkRecallArgs(json)
    if (invalid !== undefined) return JSON.parse(invalid)
    const failure = await load()
    if (failure !== undefined) return JSON.parse(failure)
    return JSON.parse(index.recall(json, project))
  }

  /** The session-start brief for `project` (`''`: nothing to show), or the failure as an object. */
  async function brief(project, maxChars) {
    const failure = await load()
    if (failure !== undefined) return { failure: JSON.parse(failure) }
    return { text: index.brief(project, maxChars) }
  }

  async function stats() {
    let bytes
    let st
    try {
      const handle = await open(paths.store, 'r')
      try {
        st = await handle.stat()
        bytes = await handle.readFile()
      } finally {
        await handle.close().catch(() => {})
      }
    } catch (error) {
      if (error.code !== 'ENOENT') return JSON.parse(wasm.memoryReadFailed(describe(error)))
    }
    let lockAge
    try {
      lockAge = Math.max(0, Date.now() - (await stat(paths.lock)).mtimeMs)
    } catch {
      // No lock file: nobody is saving.
    }
    return JSON.parse(plugin.memoryStats(
      paths.store, env.dshHomeEnv, env.osHome, bytes, st?.size ?? 0, st?.mtimeMs, lockAge,
    ))
  }

  return { save, recall, brief, stats, index }
}

/** A `stat`'s file key as the core takes it: `[mtimeMs, size, ino]`. */
const keyOf = (st) => [st.mtimeMs, st.size, st.ino]

/**
 * Runs one read-modify-write of the store under its lock. `edit(bytes, found)` gets the store's
 * bytes (`undefined` when there is no file, or when `options.needsBytes(stat)` said not to read
 * them) and what was found (`{ st, readAt, bytes }`, `undefined`: no file), and returns a core
 * `LimitBreakEdit`; its bytes are committed through a temp file, fsync, a checked rename and a
 * directory fsync, then `options.committed(stat)` gets the new file's stat. Resolves to the
 * answer's JSON text; never rejects.
 */
export async function withStoreLock(wasm, paths, edit, options = {}) {
  const lock = new wasm.LimitBreakLock(globalThis.crypto.randomUUID(), process.pid, hostname())
  try {
    try {
      await mkdir(paths.dir, { recursive: true, mode: 0o700 })
    } catch (error) {
      return wasm.memoryWriteFailed(describe(error))
    }
    let acquired
    try {
      acquired = await acquire(wasm, lock, paths)
    } catch (error) {
      return wasm.memoryWriteFailed(describe(error))
    }
    if (acquired !== true) return acquired
    try {
      let found
      try {
        found = await readStore(paths.store, options.needsBytes ?? (() => true))
      } catch (error) {
        return wasm.memoryReadFailed(describe(error))
      }
      const result = await edit(found?.bytes, found)
      try {
        if (!result.ok) return result.answer
        const written = await commit(wasm, lock, paths, result.bytes, found !== undefined)
        if (written.failure !== undefined) return written.failure
        options.committed?.(written.stat)
        await sweep(wasm, lock, paths).catch(() => {})
        return result.answer
      } finally {
        result.free()
      }
    } catch (error) {
      return wasm.memoryWriteFailed(describe(error))
    } finally {
      await release(lock, paths).catch(() => {})
    }
  } finally {
    lock.free()
  }
}

/**
 * The store file from one handle, so that the key and the bytes describe the same file: its
 * `stat` (`st`), when the read started (`readAt`: the bytes are known current as of then, not as
 * of when a slow read finished, so a write during a slow read does not count as confirmed) and
 * its `bytes` when `wantsBytes(st)`; `undefined` when there is no file.
 */
async function readStore(file, wantsBytes) {
  let handle
  try {
    handle = await open(file, 'r')
  } catch (error) {
    if (error.code === 'ENOENT') return undefined
    throw error
  }
  try {
    const st = await handle.stat()
    const readAt = Date.now()
    return { st, readAt, bytes: wantsBytes(st) ? await handle.readFile() : undefined }
  } finally {
    await handle.close().catch(() => {})
  }
}

async function readFileOrUndefined(file) {
  return (await readStore(file, () => true))?.bytes
}

/** Step 2 of the protocol: `true` once the lock is ours, or the give-up answer's JSON text. */
async function acquire(wasm, lock, paths) {
  const started = performance.now()
  let attempt = 0
  for (;;) {
    let handle
    try {
      handle = await open(paths.lock, 'wx', 0o644)
    } catch (error) {
      if (!(await contended(error, paths.lock))) throw error
    }
    if (handle !== undefined) {
      try {
        await handle.writeFile(lock.recordText(Date.now()))
        await handle.sync()
        await handle.close()
      } catch (error) {
        // The lock is ours and only milliseconds old: remove it rather than leave it to go stale.
        await handle.close().catch(() => {})
        await unlink(paths.lock).catch(() => {})
        throw error
      }
      return true
    }
    let seen
    try {
      seen = await observe(paths.lock)
    } catch (error) {
      if (error.code === 'ENOENT') continue
      throw error
    }
    const decision = JSON.parse(lock.decide(
      seen.text, Math.max(0, Date.now() - seen.mtimeMs), holderOf(lock, seen.text), performance.now() - started,
      attempt, Math.random(),
    ))
    switch (decision.kind) {
      case 'wait':
        await sleep(decision.ms)
        attempt += 1
        break
      case 'steal': {
        const outcome = await takeOver(wasm, lock, paths, seen.text, performance.now() - started, attempt)
        if (outcome.answer !== undefined) return outcome.answer
        if (outcome.wait !== undefined) {
          await sleep(outcome.wait)
          attempt += 1
        }
        break
      }
      default:
        return JSON.stringify(decision.answer)
    }
  }
}

/** Whether a failed exclusive create means the lock exists (on Windows EPERM can, too). */
async function contended(error, file) {
  if (error?.code === 'EEXIST') return true
  if (WINDOWS && error?.code === 'EPERM') {
    try {
      await stat(file)
      return true
    } catch {
      return false
    }
  }
  return false
}

/** The lock's text and mtime, from one handle. */
async function observe(file) {
  const handle = await open(file, 'r')
  try {
    const st = await handle.stat()
    const text = (await handle.readFile()).toString('utf8')
    return { text, mtimeMs: st.mtimeMs }
  } finally {
    await handle.close().catch(() => {})
  }
}

/** The liveness of the process a lock or mutex names, for the core's decisions. */
function holderOf(lock, text) {
  const pid = lock.pidToProbe(text)
  return pid === undefined ? 'unknown' : probe(pid)
}

/** `process.kill(pid, 0)`: `ESRCH` means no such process; anything else (EPERM too) is alive. */
function probe(pid) {
  try {
    process.kill(pid, 0)
    return 'alive'
  } catch (error) {
    return error?.code === 'ESRCH' ? 'dead' : 'alive'
  }
}

/** Moves `from` back to `to` without ever replacing a newer `to` (`link` fails on EEXIST). */
async function putBack(from, to) {
  try {
    await link(from, to)
  } catch (error) {
    // EEXIST: a third writer already holds a lock; the displaced owner fails its commit check.
    if (error?.code !== 'EEXIST') throw error
  }
}

/**
 * Renames the lock to `aside` (a name only this writer uses), reads what moved, and deletes it
 * only if `mine(text)` says it is the lock this writer meant to remove; otherwise puts it back
 * (never over a newer lock). A lock already gone is fine.
 */
async function removeAside(lockPath, aside, mine) {
  try {
    await rename(lockPath, aside)
  } catch (error) {
    if (error?.code === 'ENOENT') return
    throw error
  }
  const moved = (await readFileOrUndefined(aside))?.toString('utf8')
  // Gone already: the post-commit sweep of another writer removed an abandoned lock's aside.
  if (moved === undefined) return
  if (!mine(moved)) await putBack(aside, lockPath)
  await unlink(aside).catch(() => {})
}

/** Removes `file` by rename-aside only if it still holds `judged` (an abandoned lock or mutex). */
function removeJudged(wasm, lock, paths, file, judged) {
  return removeAside(file, join(paths.dir, lock.stealName), (moved) => wasm.LimitBreakLock.sameLock(moved, judged))
}

/**
 * Step 2.3 `Steal`: take the take-over mutex with `O_EXCL`; under it read the lock again and
 * remove it only if it is still the lock judged abandoned (`judged`) and still abandoned; release
 * the mutex. Resolves to `{}` (try `O_EXCL` on the lock again at once), `{ wait: ms }` (another
 * writer is taking over) or `{ answer }` (gave up).
 */
async function takeOver(wasm, lock, paths, judged, waitedMs, attempt) {
  let handle
  try {
    handle = await open(paths.takeover, 'wx', 0o644)
  } catch (error) {
    if (!(await contended(error, paths.takeover))) throw error
    return takeoverBusy(wasm, lock, paths, waitedMs, attempt)
  }
  try {
    await handle.writeFile(lock.recordText(Date.now()))
    await handle.close()
  } catch (error) {
    // Ours and milliseconds old: remove it rather than leave it to go stale.
    await handle.close().catch(() => {})
    await unlink(paths.takeover).catch(() => {})
    throw error
  }
  try {
    let now
    try {
      now = await observe(paths.lock)
    } catch (error) {
      if (error.code === 'ENOENT') return {}
      throw error
    }
    const age = Math.max(0, Date.now() - now.mtimeMs)
    if (lock.stillAbandoned(judged, now.text, age, holderOf(lock, now.text))) {
      await removeJudged(wasm, lock, paths, paths.lock, judged)
    }
    return {}
  } finally {
    await removeAside(paths.takeover, join(paths.dir, lock.releaseName), (moved) => lock.owns(moved))
  }
}

/** The take-over mutex exists: wait for it, remove it when abandoned, or give up. */
async function takeoverBusy(wasm, lock, paths, waitedMs, attempt) {
  let seen
  try {
    seen = await observe(paths.takeover)
  } catch (error) {
    if (error.code === 'ENOENT') return {}
    throw error
  }
  const decision = JSON.parse(lock.decideTakeover(
    seen.text, Math.max(0, Date.now() - seen.mtimeMs), holderOf(lock, seen.text), waitedMs, attempt, Math.random(),
  ))
  switch (decision.kind) {
    case 'wait':
      return { wait: decision.ms }
    case 'steal':
      await removeMutex(wasm, lock, paths, seen.text)
      return {}
    default:
      return { answer: JSON.stringify(decision.answer) }
  }
}

/** Removes an abandoned take-over mutex: judge it once more from a fresh read, then remove-checked. */
async function removeMutex(wasm, lock, paths, judged) {
  let again
  try {
    again = await observe(paths.takeover)
  } catch (error) {
    if (error.code === 'ENOENT') return
    throw error
  }
  const age = Math.max(0, Date.now() - again.mtimeMs)
  if (lock.takeoverStillAbandoned(judged, again.text, age, holderOf(lock, again.text))) {
    await removeJudged(wasm, lock, paths, paths.takeover, judged)
  }
}

/**
 * After a commit, still holding the lock: remove what crashed or paused writers left behind
 * (aside names, temp files, an abandoned take-over mutex), as the core's `sweep` says.
 */
async function sweep(wasm, lock, paths) {
  for (const name of await readdir(paths.dir)) {
    let mtimeMs
    try {
      mtimeMs = (await stat(join(paths.dir, name))).mtimeMs
    } catch {
      continue
    }
    const action = wasm.LimitBreakLock.sweep(name, Math.max(0, Date.now() - mtimeMs))
    if (action === 'unlink') await unlink(join(paths.dir, name)).catch(() => {})
    else if (action === 'remove_mutex') {
      // Judge the text and mtime of one handle: the stat above may describe an older mutex.
      const seen = await observe(paths.takeover).catch(() => undefined)
      const age = seen === undefined ? 0 : Math.max(0, Date.now() - seen.mtimeMs)
      if (wasm.LimitBreakLock.sweep(name, age) === 'remove_mutex') await removeMutex(wasm, lock, paths, seen.text)
    }
  }
}

/** Step 7: release the lock if it is still ours. */
function release(lock, paths) {
  return removeAside(paths.lock, join(paths.dir, lock.releaseName), (moved) => lock.owns(moved))
}

/**
 * Steps 4–6: temp file (exclusive, the store's mode or 0600; a store nobody may write is
 * refused), write, fsync, stat; the commit check; rename over the store (over a symlink's
 * target); fsync that directory. Resolves to `{ stat }` (the temp file's, now the store's) when
 * committed, else `{ failure }` (its JSON text).
 */
async function commit(wasm, lock, paths, bytes, existed) {
  // A symlinked store is written through to its target: the rename replaces the target, in the
  // target's folder, and the link keeps pointing at it.
  let target = paths.store
  try {
    target = await realpath(paths.store)
  } catch {
    // No file (or a dangling link): the store is created at its own path.
  }
  const temp = join(dirname(target), lock.tempName)
  let mode = 0o600
  if (existed) {
    try {
      mode = (await stat(target)).mode & 0o777
    } catch {
      // Gone since it was read: a fresh store gets 0600.
    }
    const readOnly = wasm.refuseReadOnly(mode)
    if (readOnly !== undefined) return { failure: readOnly }
  }
  let handle
  let written
  try {
    handle = await open(temp, 'wx', mode)
    await handle.writeFile(bytes)
    await handle.sync()
    // The rename keeps the inode, size and mtime: this is the key the store will have.
    written = await handle.stat()
    await handle.close()
  } catch (error) {
    await handle?.close().catch(() => {})
    await unlink(temp).catch(() => {})
    return { failure: wasm.memoryWriteFailed(describe(error)) }
  }
  const current = (await readFileOrUndefined(paths.lock).catch(() => undefined))?.toString('utf8') ?? ''
  if (!lock.owns(current)) {
    await unlink(temp).catch(() => {})
    return { failure: lock.lockLost() }
  }
  try {
    await renameRetrying(temp, target)
  } catch (error) {
    await unlink(temp).catch(() => {})
    return { failure: wasm.memoryWriteFailed(describe(error)) }
  }
  await syncDir(dirname(target))
  return { stat: written }
}

async function renameRetrying(from, to) {
  const started = performance.now()
  for (let attempt = 0; ; attempt++) {
    try {
      return await rename(from, to)
    } catch (error) {
      if (!WINDOWS || !WINDOWS_BUSY.has(error?.code) || performance.now() - started > RENAME_RETRY_MS) throw error
      await sleep(Math.min(20 * 2 ** attempt, 200))
    }
  }
}

/** fsync of the directory, so the rename survives a power loss; some platforms refuse it. */
async function syncDir(dir) {
  let handle
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch {
    // Windows and some file systems cannot fsync a directory.
  } finally {
    await handle?.close().catch(() => {})
  }
}
