// limit-break's memory tools through the shipped driver and WebAssembly core, on synthetic stores
// of 1 000 and 10 000 facts in a scratch DSH home: the first recall (read, parse, index), warm
// recalls (the index cached), stats, and saves (the whole protocol: lock, stat, temp file, fsync,
// checked rename, directory fsync, release), each followed by a recall. The saves run twice in
// the same process: first with the cache bypassed, as before the cached store (each save reads,
// parses and re-serialises the file, `applySave`; a second cache rebuilds its index from the file
// for the recall after it), then through the cached store. Also the disk's share: writing the
// same bytes through a temp file, fsync, rename and directory fsync, with nothing else. Prints
// medians and p95, each against its target. Then the session brief on stores of 1 000, 10 000 and
// 100 000 facts: its time before the session's first request (an upper bound of the event-loop
// time it takes: the wall time, awaits included), against 20 ms, and the same brief with the
// store read in full (the core's read limit turned off), as it was before the limit.
import { closeSync, fsync, openSync, renameSync, writeSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { emit, options } from './common.mjs'

const opt = options({ root: 'packages/limit-break', queries: 200, saves: 15 })
const lib = (file) => import(pathToFileURL(path.resolve(opt.root, 'lib', file)).href)
const { core } = await lib('core.js')
const { argsJson, createMemory, storePaths, withStoreLock } = await lib('memory.js')

/** Targets, milliseconds: warm recall p95 (the 5 ms at 1 000 facts, scaled to 10 000),
 * a save's median, and the first recall of a store. */
const TARGETS = {
  1000: { warm_p95: 5, save: 20, after_save: 20, first: 100 },
  10000: { warm_p95: 5, save: 20, after_save: 20, first: 1000 },
}

/** xorshift64*, so every run measures the same stores and queries. */
function rng(seed) {
  let s = BigInt(seed) | 1n
  return (n) => {
    s ^= s >> 12n
    s ^= (s << 25n) & 0xffffffffffffffffn
    s ^= s >> 27n
    return Number(((s * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn) % BigInt(n))
  }
}

const REAL = ['network', 'proxy', 'build', 'release', 'cache', 'timeout', 'database', 'server', 'deploy', 'render',
  'memory', 'latency', 'config', 'token', 'session', 'backup', 'schedule', 'port', 'mirror', 'error', 'retry', 'lock']
const SYLLABLES = ['ka', 'to', 'ri', 'men', 'sol', 'var', 'pex', 'lo', 'dra', 'qui', 'zen', 'bor']

function vocabulary(below, n) {
  const words = [...REAL]
  while (words.length < n) {
    let w = ''
    for (let k = 2 + below(3); k > 0; k--) w += SYLLABLES[below(SYLLABLES.length)]
    words.push(w)
  }
  return words
}

function sentence(below, vocab, n) {
  const out = []
  for (let i = 0; i < n; i++) out.push(vocab[below(2) ? below(200) : below(vocab.length)])
  return out.join(' ')
}

function storeText(n) {
  const below = rng(0x9e3779b9 + n)
  const vocab = vocabulary(below, 20000)
  const facts = []
  for (let i = 0; i < n; i++) {
    const id = `${vocab[below(22)]}.${vocab[below(2000)]}.${vocab[below(vocab.length)]}${i}`
    facts.push({
      id,
      topic: id.split('.')[0],
      statement: sentence(below, vocab, 14),
      value: String(below(10000)),
      unit: 'ms',
      details: sentence(below, vocab, 24),
      source: 'synthetic',
      timestamp: '2026-11-01T00:00:00.000Z',
      tags: [vocab[below(40)], vocab[below(400)]],
    })
  }
  return { text: `${JSON.stringify({ schema_version: 1, facts }, null, 2)}\n`, vocab, below }
}

function pct(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

async function time(f) {
  const t0 = performance.now()
  const out = await f()
  return [performance.now() - t0, out]
}

const fsyncAsync = promisify(fsync)
const wasm = core()
const plugin = new wasm.LimitBreakPlugin('{}')
const results = {}
for (const n of [1000, 10000]) {
  const home = await mkdtemp(path.join(tmpdir(), 'limit-break-bench-'))
  try {
    const paths = storePaths(wasm, home)
    await mkdir(paths.dir, { recursive: true })
    const { text, vocab, below } = storeText(n)
    await writeFile(paths.store, text)
    // Written an hour ago, as a store usually is: the index cache trusts its stat key at once.
    const hourAgo = new Date(Date.now() - 3600e3)
    await utimes(paths.store, hourAgo, hourAgo)
    const memory = createMemory(wasm, plugin, paths, {})
    const [first, answer] = await time(() => memory.recall({ query: 'network proxy timeout' }))
    if (!answer.ok) throw new Error(JSON.stringify(answer))
    const warm = []
    for (let i = 0; i < opt.queries; i++) {
      const query = i % 3 === 0 ? `what is the ${vocab[below(200)]} ${vocab[below(vocab.length)]}`
        : i % 3 === 1 ? `${vocab[below(22)]} ${vocab[below(2000)]}` : vocab[below(vocab.length)].slice(0, 3)
      warm.push((await time(() => memory.recall({ query })))[0])
    }
    const stats = (await time(() => memory.stats()))[0]
    const recallSaved = () => memory.recall({ query: 'saved fact' })

    // Before: every save reads, parses and re-serialises the store; the recall after it (in a
    // cache that held the previous version) reads the file again, parses it and rebuilds the index.
    const before = createMemory(wasm, plugin, paths, {})
    await before.recall({ query: 'warm' })
    const beforeSaves = []
    const beforeAfterSave = []
    for (let i = 0; i < opt.saves; i++) {
      const json = argsJson({ id: `bench.before.${i}`, statement: `saved fact number ${i}` })
      const [ms, saved] = await time(() => withStoreLock(wasm, paths, (bytes) => wasm.applySave(json, bytes, Date.now())))
      if (!JSON.parse(saved).ok) throw new Error(saved)
      beforeSaves.push(ms)
      beforeAfterSave.push((await time(() => before.recall({ query: 'saved fact' })))[0])
    }

    // The cached store. Its first save follows the other writer's saves above: a full read.
    const [afterOtherWriter] = await time(() => memory.save({ id: 'bench.save.first', statement: 'saved fact first' }))
    await recallSaved()
    const saves = []
    const afterSaves = []
    for (let i = 0; i < opt.saves; i++) {
      const [ms, saved] = await time(() => memory.save({ id: `bench.save.${i}`, statement: `saved fact number ${i}` }))
      if (!saved.ok) throw new Error(JSON.stringify(saved))
      saves.push(ms)
      // Within 2 s of the write, so the file is read and compared with the cached text.
      afterSaves.push((await time(recallSaved))[0])
    }
    // A save 2 s after the last write: the stat alone proves the file is the cached text.
    const idleSaves = []
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2100))
      idleSaves.push((await time(() => memory.save({ id: `bench.idle.${i}`, statement: 'saved after a pause' })))[0])
    }
    const racy = []
    for (let i = 0; i < 10; i++) racy.push((await time(() => memory.recall({ query: vocab[below(2000)] })))[0])

    // The disk's share of a save: the same bytes, temp file, fsync, rename, directory fsync, each
    // call made as the driver makes it (synchronous open, write, rename and close; the fsyncs in
    // the thread pool). Also with the new file kept open and the one it replaced closed only
    // after, as the driver does (then the rename does not free the old file's blocks, the close
    // does, after the answer).
    // One loop after the other: alternating them, a plain rename would replace a file the other
    // loop holds, and leave the freeing of its blocks to the other loop's fsync.
    const bytes = await readFile(paths.store)
    const disk = []
    const diskHolding = []
    for (const holding of [false, true]) {
      let held
      for (let i = 0; i < opt.saves; i++) {
        const [ms, fd] = await time(async () => {
          const temp = `${paths.store}.bench-disk`
          const fd = openSync(temp, 'wx', 0o600)
          for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at, at)
          await fsyncAsync(fd)
          if (!holding) closeSync(fd)
          renameSync(temp, paths.store)
          const dir = openSync(paths.dir, 'r')
          await fsyncAsync(dir)
          closeSync(dir)
          return holding ? fd : undefined
        })
        if (held !== undefined) closeSync(held)
        held = fd
        ;(holding ? diskHolding : disk).push(ms)
      }
      if (held !== undefined) closeSync(held)
    }
    const target = TARGETS[n]
    const median = (v) => pct(v, 0.5)
    const row = {
      store_bytes: text.length,
      first_recall_ms: first,
      warm_recall_ms: { median: pct(warm, 0.5), p95: pct(warm, 0.95) },
      racy_recall_ms: { median: pct(racy, 0.5) },
      stats_ms: stats,
      save_ms: { median: median(saves), p95: pct(saves, 0.95) },
      save_idle_ms: { median: median(idleSaves), max: Math.max(...idleSaves) },
      save_after_other_writer_ms: afterOtherWriter,
      recall_after_save_ms: { median: median(afterSaves), p95: pct(afterSaves, 0.95) },
      before: {
        save_ms: { median: median(beforeSaves), p95: pct(beforeSaves, 0.95) },
        recall_after_save_ms: { median: median(beforeAfterSave), p95: pct(beforeAfterSave, 0.95) },
      },
      disk_write_ms: { median: median(disk), holding_median: median(diskHolding) },
      targets: target,
      ratios: {
        warm_p95: pct(warm, 0.95) / target.warm_p95,
        save: median(saves) / target.save,
        after_save: median(afterSaves) / target.after_save,
        first: first / target.first,
      },
      to_before: {
        save: median(saves) / median(beforeSaves),
        after_save: median(afterSaves) / median(beforeAfterSave),
      },
    }
    // What `cargo xtask bench` prints: [what, ms, target ms or null, ratio to target or null].
    row.table = [
      ['first recall (read, parse, index)', first, target.first, row.ratios.first],
      ['warm recall p95', row.warm_recall_ms.p95, target.warm_p95, row.ratios.warm_p95],
      ['save median (whole protocol)', median(saves), target.save, row.ratios.save],
      ['  before (cache bypassed), same run', median(beforeSaves), null, null],
      ['  the disk alone (write, fsync, rename)', median(disk), null, null],
      // The goal relative to the disk: a save within 1.5x of writing the same bytes.
      ['  save against 1.5x the disk alone', median(saves), 1.5 * median(disk), median(saves) / (1.5 * median(disk))],
      ['  the disk alone, the replaced file closed after', median(diskHolding), null, null],
      ['  2 s after the last write (no read)', median(idleSaves), null, null],
      ['recall right after a save, median', median(afterSaves), target.after_save, row.ratios.after_save],
      ['  before (cache bypassed), same run', median(beforeAfterSave), null, null],
    ]
    results[n] = row
    const f = (v) => v.toFixed(1)
    console.error(`${n} facts (${(text.length / 1e6).toFixed(1)} MB): first recall ${f(first)} ms; warm recall median ${row.warm_recall_ms.median.toFixed(2)} ms, p95 ${row.warm_recall_ms.p95.toFixed(2)} ms; save median ${f(median(saves))} ms, p95 ${f(pct(saves, 0.95))} ms (before ${f(median(beforeSaves))} ms, ${row.to_before.save.toFixed(2)}x; the disk alone ${f(median(disk))} ms, with the replaced file closed after ${f(median(diskHolding))} ms; 2 s after the last write ${f(median(idleSaves))} ms; after another writer ${f(afterOtherWriter)} ms); recall right after a save median ${f(median(afterSaves))} ms, p95 ${f(pct(afterSaves, 0.95))} ms (before ${f(median(beforeAfterSave))} ms, ${row.to_before.after_save.toFixed(2)}x); stats ${f(stats)} ms; racy recall ${f(row.racy_recall_ms.median)} ms`)
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}
/** Median milliseconds of `rounds` briefs, each by a fresh driver (nothing cached, as at a
 * session's start), through `wasm`. */
async function briefMs(wasm, paths, rounds) {
  const ms = []
  for (let i = 0; i < rounds; i++) {
    const memory = createMemory(wasm, plugin, paths, {})
    const [t, brief] = await time(() => memory.brief(undefined, 4000))
    if (typeof brief.text !== 'string' || brief.text === '') throw new Error(JSON.stringify(brief))
    ms.push(t)
  }
  return pct(ms, 0.5)
}

const BRIEF_TARGET_MS = 20
const readInFull = new Proxy(wasm, { get: (target, key) => (key === 'memoryBriefTailRead' ? () => undefined : target[key]) })
for (const n of [1000, 10000, 100000]) {
  const home = await mkdtemp(path.join(tmpdir(), 'limit-break-bench-'))
  try {
    const paths = storePaths(wasm, home)
    await mkdir(paths.dir, { recursive: true })
    const { text } = storeText(n)
    await writeFile(paths.store, text)
    const brief = await briefMs(wasm, paths, 9)
    const full = await briefMs(readInFull, paths, n > 10000 ? 3 : 9)
    const row = (results[n] ??= { store_bytes: text.length, table: [] })
    row.brief_ms = { median: brief, target: BRIEF_TARGET_MS, ratio: brief / BRIEF_TARGET_MS, read_in_full: full }
    row.table.push(
      ['session brief, median (wall time)', brief, BRIEF_TARGET_MS, brief / BRIEF_TARGET_MS],
      ['  the store read in full (no limit)', full, null, null],
    )
    console.error(`${n} facts (${(text.length / 1e6).toFixed(1)} MB): session brief median ${brief.toFixed(2)} ms; read in full ${full.toFixed(1)} ms`)
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}
emit(results)
