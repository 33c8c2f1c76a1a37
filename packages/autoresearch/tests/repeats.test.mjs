// `repeats` end to end through the headless runner: a real noisy evaluator (its value plus
// N(0, 1) noise), every evaluation its own attempt, DSH_AUTORESEARCH_ATTEMPT and AUTORESEARCH_SLOT, the keep rule
// (screen, then confirm on fresh samples) alone and with four candidates at once, and mean,
// spread, n and the screening mean in the result and the TSV.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
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

function noisyRun(t, { repeats, parallelism = 1, candidates = 6, gainAt = 4, holdout = false }) {
  const { root, repo } = makeRepo(t, { 'eval.mjs': NOISY_EVAL, 'notes.txt': 'start\n' })
  // The holdout, outside the repository: the same noise around 5 for the starting score and 6
  // below it, so the planted gain does not generalize.
  const check = join(root, 'holdout.mjs')
  writeFileSync(check, NOISY_EVAL.replace("Number(readFileSync('score.txt', 'utf8'))", "(Number(readFileSync('score.txt', 'utf8')) >= 10 ? 5 : 6)"))
  // Every round but \`gainAt\` changes nothing the evaluator reads; that one lowers the score by
  // 3 sigma.
  const prop = proposer(root, `fs.writeFileSync('notes.txt', 'round ' + ordinal + '\\n')
    return ordinal === ${gainAt} ? score - 3 : undefined`)
  const log = join(root, 'attempts.log')
  const spec = specFile(root, {
    proposer: prop, mutable_globs: ['score.txt', 'notes.txt'], max_experiments: candidates,
    repeats, parallelism, max_consecutive_failures: 6,
    ...holdout ? { holdout: { command: 'node', args: [check] } } : {},
  })
  const r = cli(['run', '--json', spec], { cwd: repo, env: { AR_EVAL_LOG: log }, timeout: 600_000 })
  assert.equal(r.status, 0, r.stderr)
  return { result: r.json, repo, attempts: readFileSync(log, 'utf8').trim().split('\n') }
}

test('repeats 5 with a holdout: the kept gain that does not generalize is reported', (t) => {
  const { result, repo } = noisyRun(t, { repeats: 5, candidates: 3, gainAt: 2, holdout: true })
  assert.deepEqual(result.experiments.map((e) => e.outcome), ['baseline', 'rejected', 'kept', 'rejected'])
  const kept = result.experiments[2]
  assert.ok(result.experiments[0].holdout < 5.9 && kept.holdout > 5.1, JSON.stringify(result.holdout))
  assert.equal(result.holdout.divergences.length, 1)
  assert.match(result.holdout.divergences[0], /^the holdout diverges at candidate 2: score went from 9\.794 to 7\.073, but the holdout from 5\.153 to 6\.023 /)
  // Each holdout ran `repeats` times, on the baseline and on the kept candidate only.
  assert.equal(result.counts.attempts, result.experiments.reduce((n, e) => n + e.samples.length + e.confirmation.length, 0) + 10)
  const table = cli(['show', result.run_id], { cwd: repo }).stdout
  assert.match(table, /\nwarning: the holdout diverges at candidate 2/)
})

const mean = (xs) => xs.reduce((a, b) => a + b) / xs.length

test('repeats 5: no-op candidates are rejected, the 3 sigma gain is confirmed and kept, every sample reported', (t) => {
  const { result, repo, attempts } = noisyRun(t, { repeats: 5 })
  assert.deepEqual(result.experiments.map((e) => e.outcome),
    ['baseline', 'rejected', 'rejected', 'rejected', 'kept', 'rejected', 'rejected'])
  // Every evaluation is its own attempt with its own marker, fewer than 7 x 5: a candidate is
  // screened one sample at a time and only a promising one is confirmed on fresh samples.
  const sampled = result.experiments.reduce((n, e) => n + e.samples.length + e.confirmation.length, 0)
  assert.equal(attempts.length, sampled)
  assert.equal(new Set(attempts).size, sampled)
  assert.ok(sampled < 35, `${sampled} evaluations`)
  // One candidate at a time: every evaluator runs in slot 0.
  assert.ok(attempts.every((line) => line.endsWith(' slot 0')), attempts.join('\n'))
  assert.equal(result.counts.attempts, sampled)
  assert.equal(result.repeats, 5)
  assert.equal(result.experiments[0].samples.length, 5)
  for (const e of result.experiments) {
    const reported = e.confirmation.length > 0 ? e.confirmation : e.samples
    assert.equal(e.n, reported.length)
    assert.ok(Math.abs(e.metric - mean(reported)) < 1e-9, `${e.metric} is the mean of ${reported}`)
    assert.ok(e.samples.length >= 1 && e.samples.length <= 5)
  }
  const kept = result.experiments[4]
  assert.equal(kept.confirmation.length, 5)
  assert.equal(kept.selection_metric, mean(kept.samples))
  assert.equal(result.best.metric, kept.metric)
  assert.equal(result.noise_floor, result.experiments[0].stddev)
  assert.equal(result.best.experiment_id, kept.experiment_id)
  const tsv = readFileSync(join(repo, '.git', 'dsh-autoresearch', 'exports', `${result.run_id}.tsv`), 'utf8')
  const rows = tsv.trim().split('\n').map((l) => l.split('\t'))
  assert.deepEqual(rows[0].slice(-4), ['n', 'stddev', 'selection_metric', 'holdout'])
  assert.deepEqual(rows[1].slice(-4), ['5', String(result.noise_floor), '', ''])
  assert.deepEqual(rows[5].slice(-3, -1).map(Number), [kept.stddev, kept.selection_metric])
})

test('parallelism 4, repeats 5: 20 generations of four no-ops keep none, a planted 3 sigma gain is kept', (t) => {
  const { result, attempts } = noisyRun(t, { repeats: 5, parallelism: 4, candidates: 84, gainAt: 82 })
  const kept = result.experiments.filter((e) => e.outcome === 'kept')
  assert.deepEqual(kept.map((e) => e.ordinal), [82], JSON.stringify(result.experiments.map((e) => [e.ordinal, e.outcome, e.metric])))
  // At most one candidate of a generation is confirmed, on its own slot's fresh samples.
  for (let g = 0; g < 21; g++) {
    const confirmed = result.experiments.filter((e) => e.kind === 'candidate' &&
      Math.floor((e.ordinal - 1) / 4) === g && e.confirmation.length > 0)
    assert.ok(confirmed.length <= 1, `generation ${g + 1}: ${confirmed.map((e) => e.ordinal)}`)
  }
  assert.ok(attempts.some((line) => line.endsWith(' slot 3')))
  const perCandidate = (attempts.length - 5) / 84
  assert.ok(perCandidate < 5, `${perCandidate} evaluations per candidate`)
})

test('repeats 1: the same noise keeps no-op candidates (the original single sample)', (t) => {
  const { result, attempts } = noisyRun(t, { repeats: 1 })
  assert.equal(attempts.length, 7)
  const keptNoOps = result.experiments.filter((e, i) => e.outcome === 'kept' && i !== 4)
  assert.ok(keptNoOps.length >= 1, JSON.stringify(result.experiments.map((e) => [e.outcome, e.metric])))
  assert.equal(result.noise_floor, null)
})
