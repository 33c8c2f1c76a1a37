// limit-break's memory driver: the file operations behind memory_save, memory_recall,
// memory_stats and the people CLI. A save (and the CLI's forget and import) is the core's
// sans-I/O machine `LimitBreakSave`: this file performs each step it asks for (`PERFORM`, a table
// like lib/fetch.js's) and reports what happened; recall follows "The recall cache" of
// `limit-break-memory`. Every decision — argument rules, the store format, whether to wait for,
// take over or give up on the lock, what to remove, sweep or retry, whether the cached index is
// still the file's, every answer and message — is the Rust core's. This file only does I/O and
// reports what it found: bytes, stat fields, error codes, the time.
import {
  close, closeSync, fstatSync, fsync, linkSync, mkdirSync, openSync, read, readdirSync, readFileSync, realpathSync,
  renameSync, statSync, unlinkSync, writeSync,
} from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { promisify } from 'node:util'
import { hostname } from 'node:os'
import { dirname, join, resolve, sep } from 'node:path'

const WINDOWS = process.platform === 'win32'

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

/**
 * The three memory tools over one store. `env` is `{ dshHomeEnv, osHome }`, only for showing the
 * path symbolically in `memory_stats`. Each method resolves to the answer object and never
 * throws for a world failure.
 */
export function createMemory(wasm, plugin, paths, env) {
  const index = new wasm.LimitBreakMemory()
  /**
   * The store this process last committed, its file descriptor kept open while the cache relies
   * on it (`index.holds`): while it is open its inode cannot be reused, which is what lets the
   * cache trust a store with its key (the core's crate docs, "Why a file this process holds is
   * not read again").
   */
  let held

  /** Keeps `fd` (a file just committed; by default the one held) while the cache holds it; closes any other. */
  function keepHeld(fd = held) {
    const kept = index.holds ? fd : undefined
    for (const other of new Set([held, fd])) if (other !== kept) closeLater(other)
    held = kept
  }

  /** Reads the bytes only when the cached index may not be the file's. */
  const needsBytes = (st) => !index.isFresh(keyOf(st))

  /**
   * The saves of this cache, one after another: the cache holds one save's text at a time, from
   * its edit until its driver reports how the write ended (the lock alone would let the next
   * save edit between this one's release and that report).
   */
  let saving = Promise.resolve()

  function save(args, project) {
    const done = saving.then(() => saveNow(args, project))
    saving = done.catch(() => {})
    return done
  }

  async function saveNow(args, project) {
    const json = argsJson(args)
    const invalid = wasm.checkSaveArgs(json)
    if (invalid !== undefined) return JSON.parse(invalid)
    const answer = await withStoreLock(
      wasm,
      paths,
      (bytes, found) => {
        const answer = index.save(json, found && [...keyOf(found.st), found.readAt], bytes, Date.now(), project)
        // The text to write stays in the cache: written from where it lies.
        return { ok: index.saved, answer, span: () => index.savedSpan() }
      },
      {
        needsBytes,
        committed: (key, at, fd) => {
          index.committed(key, at, fd !== undefined)
          keepHeld(fd)
        },
      },
    )
    return JSON.parse(answer)
  }

  /**
   * Brings the cached index up to date with the file, unless `unread(stat)` says the file is not
   * to be read (then the cache is left as it is): `undefined`, or the failure's JSON text.
   */
  async function load(unread = () => false) {
    let found
    try {
      found = await readStore(paths.store, (st) => !unread(st) && needsBytes(st))
    } catch (error) {
      return wasm.memoryReadFailed(describe(error))
    }
    if (found === undefined) {
      index.loadMissing()
      keepHeld()
      return undefined
    }
    if (found.bytes === undefined) return undefined
    const failure = index.load(found.bytes, keyOf(found.st), found.readAt)
    keepHeld()
    return failure
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
    // A store too large to read whole is briefed from its last bytes (the core's rule).
    let size
    let tailBytes
    const failure = await load((st) => {
      size = st.size
      tailBytes = wasm.memoryBriefTailRead(size)
      return tailBytes !== undefined
    })
    if (failure !== undefined) return { failure: JSON.parse(failure) }
    if (tailBytes === undefined) return { text: index.brief(project, maxChars) }
    let tail
    try {
      tail = await readTail(paths.store, tailBytes)
    } catch (error) {
      return { failure: JSON.parse(wasm.memoryReadFailed(describe(error))) }
    }
    return { text: wasm.memoryBriefOfTail(tail, size, project, maxChars) }
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

/**
 * A `stat`'s file key as the core takes it: `[mtimeMs, size, ino, ctimeMs]`. Every key comes
 * from `fstatSync`: Node's asynchronous `stat` can round the same nanoseconds to the next double
 * (at today's times two doubles are 0.24 µs apart), and keys are compared for equality.
 */
const keyOf = (st) => [st.mtimeMs, st.size, st.ino, st.ctimeMs]

/**
 * Runs one read-modify-write of the store under its lock: drives the core's `LimitBreakSave`
 * machine, performing each step it asks for (`PERFORM`). `edit(bytes, found)` gets the store's
 * bytes (`undefined` when there is no file, or when `options.needsBytes(stat)` said not to read
 * them) and what was found (`{ st, readAt, bytes }`, `undefined`: no file), and returns a core
 * `LimitBreakEdit` (or the like: `ok`, `answer` and `span()`, where the text to write lies in the
 * core's memory). At the end `options.committed(key, at, fd)` gets the new file's
 * `[mtimeMs, size, ino, ctimeMs]` and when it was in place (no key when nothing was written),
 * and the new file's open descriptor when the core said to hold it (the caller closes it once
 * its cache no longer needs it; without `options.committed` it is closed here). Resolves to the
 * answer's JSON text; never rejects.
 */
export async function withStoreLock(wasm, paths, edit, options = {}) {
  const seed = Math.floor(Math.random() * 2 ** 53)
  const save = new wasm.LimitBreakSave(
    paths.dir, sep, WINDOWS, globalThis.crypto.randomUUID(), process.pid, hostname(), seed, Date.now(), performance.now(),
  )
  const job = { wasm, edit, needsBytes: options.needsBytes ?? (() => true), found: undefined, edited: undefined, kept: undefined }
  let committed = null
  try {
    for (;;) {
      const step = JSON.parse(save.poll())
      if (step.kind === 'done') {
        committed = step.committed
        return step.answer
      }
      let input
      try {
        input = await PERFORM[step.kind](step, job)
      } catch (error) {
        input = failed(error)
      }
      save.handle(step.id, JSON.stringify(input), Date.now(), performance.now())
    }
  } catch (error) {
    // A driver bug (the machine refused an answer): the lock, if taken, goes stale.
    return wasm.memoryWriteFailed(describe(error))
  } finally {
    const kept = committed?.held && options.committed !== undefined ? job.kept : undefined
    if (job.kept !== kept) closeLater(job.kept)
    options.committed?.(committed?.key, committed?.at, kept)
    job.edited?.free?.()
    save.free()
  }
}

const OK = { kind: 'ok' }

function failed(error) {
  return { kind: 'failed', code: typeof error?.code === 'string' ? error.code : '', message: String(error?.message ?? error) }
}

const fsyncAsync = promisify(fsync)

/**
 * Each step of the save machine, performed as the core documents it (`limit_break::memory`).
 * Exported for `tests/wire.test.mjs`, which checks it against the generated `wire/save.json`.
 *
 * The steps on names and small files (the lock, a `stat`, a rename) are synchronous calls: each
 * takes microseconds on a local disk, while a trip through the thread pool and back costs more,
 * and far more on a busy machine, where every return to the event loop waits its turn (a save
 * is some fifteen such steps, and the lock is held all along). What waits for the disk (the
 * fsyncs, reading a store another process wrote) and the backoff stay asynchronous. On a
 * network file system each synchronous step holds the event loop for a round trip.
 */
export const PERFORM = {
  makeDir: (step) => { mkdirSync(step.path, { recursive: true, mode: 0o700 }); return OK },
  create: async (step, job) => {
    const fd = openSync(step.path, 'wx', step.mode)
    let kept = false
    try {
      if (step.data === 'edited') writeSpan(fd, job.wasm, job.edited.span())
      else writeAll(fd, Buffer.from(step.data.text))
      if (step.sync) await fsyncAsync(fd)
      const key = step.stat ? keyOf(fstatSync(fd)) : undefined
      if (step.hold) {
        job.kept = fd
        kept = true
      }
      return { kind: 'created', key }
    } catch (error) {
      return { ...failed(error), kind: 'writeFailed' }
    } finally {
      if (!kept) closeSync(fd)
    }
  },
  read: (step) => {
    const fd = openSync(step.path, 'r')
    try {
      return { kind: 'text', text: readFileSync(fd, 'utf8'), mtimeMs: fstatSync(fd).mtimeMs }
    } finally {
      closeSync(fd)
    }
  },
  readStore: async (step, job) => {
    job.found = await readStore(step.path, job.needsBytes)
    return job.found === undefined ? { kind: 'failed', code: 'ENOENT', message: 'no store file' } : { kind: 'found' }
  },
  edit: async (_step, job) => {
    try {
      job.edited = await job.edit(job.found?.bytes, job.found)
      return { kind: 'edited', ok: job.edited.ok, answer: job.edited.answer }
    } catch (error) {
      return { kind: 'edited', ok: false, answer: job.wasm.memoryWriteFailed(describe(error)) }
    }
  },
  stat: (step) => {
    const st = statSync(step.path)
    return { kind: 'stat', mtimeMs: st.mtimeMs, mode: st.mode }
  },
  realPath: (step) => ({ kind: 'path', path: realpathSync(step.path) }),
  probe: (step) => ({ kind: 'probed', alive: alive(step.pid) }),
  rename: (step) => { renameSync(step.from, step.to); return OK },
  link: (step) => { linkSync(step.from, step.to); return OK },
  unlink: (step) => { unlinkSync(step.path); return OK },
  statHeld: (_step, job) => ({ kind: 'key', key: keyOf(fstatSync(job.kept)) }),
  syncDir: async (step) => {
    const fd = openSync(step.path, 'r')
    try {
      await fsyncAsync(fd)
    } finally {
      closeSync(fd)
    }
    return OK
  },
  list: (step) => ({ kind: 'names', names: readdirSync(step.path) }),
  sleep: (step) => new Promise((resolve) => setTimeout(() => resolve(OK), step.ms)),
}

/**
 * How the store's bytes are read: `read(fd, buffer, offset, length, position)` in the thread
 * pool. Exported for `tests/memory.test.mjs`, which slows it down.
 */
export const STORE_READ = { read: promisify(read) }

/**
 * The whole file behind `fd`, whose `stat` said `size` bytes: read into one buffer of that size
 * (`readFile` reads 512 KiB at a time into buffers it then joins), and on until the end if the
 * file has grown since.
 */
async function readAll(fd, size) {
  let buffer = Buffer.allocUnsafe(Math.max(size, 1))
  let length = 0
  for (;;) {
    if (length === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)])
    const { bytesRead } = await STORE_READ.read(fd, buffer, length, buffer.length - length, length)
    if (bytesRead === 0) return buffer.subarray(0, length)
    length += bytesRead
  }
}

/**
 * Writes the bytes at `span` (`[pointer, length]` in the core's memory) to `fd` from a view of
 * that memory, not a copy. The view is valid only until the next call into the core (which may
 * free the text or grow the memory), so it is made here and written with synchronous writes:
 * nothing else runs in between. Only the fsync after it waits for the disk.
 */
function writeSpan(fd, wasm, span) {
  if (span === undefined) throw new Error('the edit has no text to write')
  writeAll(fd, new Uint8Array(wasm.wasmMemory().buffer, span[0], span[1]))
}

/**
 * Closes `fd` (`undefined`: nothing) in the thread pool, not waited for: closing the last handle
 * of a replaced store frees its blocks, work nobody waits on.
 */
function closeLater(fd) {
  if (fd !== undefined) close(fd, () => {})
}

/** Writes all of `bytes` to `fd` from its start, synchronously. */
function writeAll(fd, bytes) {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at, at)
}

/** The last `length` bytes of the file at `path` (fewer when it has shrunk meanwhile). */
async function readTail(path, length) {
  const handle = await open(path, 'r')
  try {
    const { size } = await handle.stat()
    const buffer = Buffer.alloc(Math.min(length, size))
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, size - buffer.length)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close().catch(() => {})
  }
}

/** `process.kill(pid, 0)`: `ESRCH` means no such process; anything else (EPERM too) is alive. */
function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error?.code !== 'ESRCH'
  }
}

/**
 * The store file from one descriptor, so that the key and the bytes describe the same file: its
 * `stat` (`st`), when the read started (`readAt`: the bytes are known current as of then, not as
 * of when a slow read finished, so a write during a slow read does not count as confirmed) and
 * its `bytes` when `wantsBytes(st)`; `undefined` when there is no file. Opened, `stat`ed and
 * closed with synchronous calls (see `PERFORM`); only the bytes are read in the thread pool.
 */
async function readStore(file, wantsBytes) {
  let fd
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    if (error.code === 'ENOENT') return undefined
    throw error
  }
  try {
    const st = fstatSync(fd)
    const readAt = Date.now()
    return { st, readAt, bytes: wantsBytes(st) ? await readAll(fd, st.size) : undefined }
  } finally {
    closeSync(fd)
  }
}

