// `repeats` end to end through the headless runner: a real noisy evaluator (its value plus
// N(0, 1) noise), every evaluation its own attempt, DSH_AUTORESEARCH_ATTEMPT and AUTORESEARCH_SLOT, the keep rule on
// the samples, and mean, spread and n in the result and the TSV.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, makeRepo, proposer, specFile } from './support/fixture.mjs'

// The noise is seeded by the attempt id without its run id (`baseline-attempt-3`), so a run's
// figures are the same every time while each attempt draws its own.
const NOISY_EVAL = `import { appendFileSync, readFileSync } from 'node:fs'
const attempt = process.env.DSH_AUTORESEARCH_ATTEMPT
let seed = 0
for (const c of attempt.slice(37)) seed = (Math.imul(seed, 31) + c.charCodeAt(0)) >>> 0
const uniform = () => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let z = Math.imul(seed ^ (seed >>> 15), seed | 1)
  z ^= z + Math.imul(z ^ (z >>> 7), z | 61)
  return (((z ^ (z >>> 14)) >>> 0) + 0.5) / 4294967296
}
const noise = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())
appendFileSync(process.env.AR_EVAL_LOG, attempt + ' slot ' + process.env.AUTORESEARCH_SLOT + '\\n')
console.log(JSON.stringify({ score: Number(readFileSync('score.txt', 'utf8')) + noise }))
`

function noisyRun(t, repeats) {
  const { root, repo } = makeRepo(t, { 'eval.mjs': NOISY_EVAL, 'notes.txt': 'start\n' })
  // Rounds 1-3 and 5-6 change nothing the evaluator reads; round 4 lowers the score by 3 sigma.
  const prop = proposer(root, `fs.writeFileSync('notes.txt', 'round ' + ordinal + '\\n')
    return ordinal === 4 ? score - 3 : undefined`)
  const log = join(root, 'attempts.log')
  const spec = specFile(root, {
    proposer: prop, mutable_globs: ['score.txt', 'notes.txt'], max_experiments: 6, repeats,
    max_consecutive_failures: 6,
  })
  const r = cli(['run', '--json', spec], { cwd: repo, env: { AR_EVAL_LOG: log } })
  assert.equal(r.status, 0, r.stderr)
  return { result: r.json, repo, attempts: readFileSync(log, 'utf8').trim().split('\n') }
}

test('repeats 5: no-op candidates are rejected, the 3 sigma gain is kept, every sample reported', (t) => {
  const { result, repo, attempts } = noisyRun(t, 5)
  assert.deepEqual(result.experiments.map((e) => e.outcome),
    ['baseline', 'rejected', 'rejected', 'rejected', 'kept', 'rejected', 'rejected'])
  // 7 experiments x 5 evaluations, each its own attempt with its own marker.
  assert.equal(attempts.length, 35)
  assert.equal(new Set(attempts).size, 35)
  // One candidate at a time: every evaluator runs in slot 0.
  assert.ok(attempts.every((line) => line.endsWith(' slot 0')), attempts.join('\n'))
  assert.equal(result.counts.attempts, 35)
  assert.equal(result.repeats, 5)
  for (const e of result.experiments) {
    assert.equal(e.n, 5)
    assert.equal(e.samples.length, 5)
    const mean = e.samples.reduce((a, b) => a + b) / 5
    assert.ok(Math.abs(e.metric - mean) < 1e-9, `${e.metric} is the mean of ${e.samples}`)
    assert.ok(e.stddev > 0.2 && e.stddev < 2.5, `spread ${e.stddev}`)
  }
  assert.equal(result.noise_floor, result.experiments[0].stddev)
  assert.equal(result.best.experiment_id, result.experiments[4].experiment_id)
  const tsv = readFileSync(join(repo, '.git', 'dsh-autoresearch', 'exports', `${result.run_id}.tsv`), 'utf8')
  const [header, baseline] = tsv.trim().split('\n').map((l) => l.split('\t'))
  assert.deepEqual(header.slice(-2), ['n', 'stddev'])
  assert.deepEqual(baseline.slice(-2).map(Number), [5, result.noise_floor])
})

test('repeats 1: the same noise keeps no-op candidates (the original single sample)', (t) => {
  const { result, attempts } = noisyRun(t, 1)
  assert.equal(attempts.length, 7)
  const keptNoOps = result.experiments.filter((e, i) => e.outcome === 'kept' && i !== 4)
  assert.ok(keptNoOps.length >= 1, JSON.stringify(result.experiments.map((e) => [e.outcome, e.metric])))
  assert.equal(result.noise_floor, null)
})
