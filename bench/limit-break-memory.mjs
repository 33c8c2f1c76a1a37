// limit-break's memory tools through the shipped driver and WebAssembly core, on synthetic stores
// of 1 000 and 10 000 facts in a scratch DSH home: the first recall (read, parse, index), warm
// recalls (the index cached), stats, and saves (the whole protocol: lock, read, temp file, fsync,
// checked rename, directory fsync, release). Prints medians and p95, each against its target.
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { emit, options } from './common.mjs'

const opt = options({ root: 'packages/limit-break', queries: 200, saves: 15 })
const lib = (file) => import(pathToFileURL(path.resolve(opt.root, 'lib', file)).href)
const { core } = await lib('core.js')
const { createMemory, storePaths } = await lib('memory.js')

/** Targets, milliseconds: warm recall p95 (the 5 ms at 1 000 facts, scaled to 10 000),
 * a save's median, and the first recall of a store. */
const TARGETS = {
  1000: { warm_p95: 5, save: 50, first: 100 },
  10000: { warm_p95: 5, save: 100, first: 1000 },
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
    const saves = []
    for (let i = 0; i < opt.saves; i++) {
      const [ms, saved] = await time(() => memory.save({ id: `bench.save.${i}`, statement: `saved fact number ${i}` }))
      if (!saved.ok) throw new Error(JSON.stringify(saved))
      saves.push(ms)
    }
    // The first recall after a save rebuilds the index from the new file; recalls within 2 s of
    // a write re-read the file and compare its content before trusting the cached index.
    const [afterSave] = await time(() => memory.recall({ query: 'saved fact' }))
    const racy = []
    for (let i = 0; i < 10; i++) racy.push((await time(() => memory.recall({ query: vocab[below(2000)] })))[0])
    const target = TARGETS[n]
    const row = {
      store_bytes: text.length,
      first_recall_ms: first,
      recall_after_save_ms: afterSave,
      warm_recall_ms: { median: pct(warm, 0.5), p95: pct(warm, 0.95) },
      racy_recall_ms: { median: pct(racy, 0.5) },
      stats_ms: stats,
      save_ms: { median: pct(saves, 0.5), p95: pct(saves, 0.95) },
      targets: target,
      ratios: {
        warm_p95: pct(warm, 0.95) / target.warm_p95,
        save: pct(saves, 0.5) / target.save,
        first: first / target.first,
      },
    }
    results[n] = row
    console.error(`${n} facts (${(text.length / 1e6).toFixed(1)} MB): first recall ${first.toFixed(1)} ms (target ${target.first}, ratio ${row.ratios.first.toFixed(2)}); warm recall median ${row.warm_recall_ms.median.toFixed(2)} ms, p95 ${row.warm_recall_ms.p95.toFixed(2)} ms (target ${target.warm_p95}, ratio ${row.ratios.warm_p95.toFixed(2)}); save median ${row.save_ms.median.toFixed(1)} ms, p95 ${row.save_ms.p95.toFixed(1)} ms (target ${target.save}, ratio ${row.ratios.save.toFixed(2)}); stats ${stats.toFixed(1)} ms; first recall after a save ${afterSave.toFixed(1)} ms, then ${row.racy_recall_ms.median.toFixed(1)} ms while within 2 s of the write`)
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}
emit(results)
