// dsh-autoresearch's `parallelism` through the real headless runner, real git and real
// processes, side by side in one run:
// - wall time of 6 candidates with a 2 s evaluator at parallelism 1 and 3 (target: K = 3 takes
//   at most 0.6 x the serial time);
// - the run's own cost per candidate at K = 1, 3 and 8 with an evaluator that does nothing: wall
//   time per candidate less the proposer's and evaluator's own (measured by running them alone),
//   and the processes it starts (git commands, counted through a logging git wrapper, plus the
//   proposer and the evaluator).
// Prints a table and, on the last line, the figures as JSON.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { emit, options, stats } from './common.mjs'

const opt = options({ root: 'packages/autoresearch', sleep: 2000, candidates: 6, overhead: 8, runs: 3 })
const CLI = path.resolve(opt.root, 'bin/dsh-autoresearch.js')
const TARGET_RATIO = 0.6

const scratch = mkdtempSync(path.join(tmpdir(), 'ar-parallel-bench-'))
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }))

const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
const gitLog = path.join(scratch, 'git.log')
const gitWrapper = path.join(scratch, 'git-logged')
writeFileSync(gitWrapper, `#!/bin/sh\necho x >> '${gitLog}'\nexec '${realGit}' "$@"\n`)
chmodSync(gitWrapper, 0o755)

function git(cwd, ...args) {
  return execFileSync(realGit, args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } }).trim()
}

/** A fresh repository whose evaluator sleeps `sleepMs` and prints score.txt, and a proposer
 * that lowers the score by its ordinal (every candidate improves). */
function setup(name, sleepMs) {
  const root = path.join(scratch, name)
  const repo = path.join(root, 'repo')
  mkdirSync(repo, { recursive: true })
  git(repo, 'init', '-q', '-b', 'main')
  git(repo, 'config', 'user.email', 'bench@example.com')
  git(repo, 'config', 'user.name', 'bench')
  writeFileSync(path.join(repo, 'score.txt'), '100\n')
  writeFileSync(path.join(repo, 'eval.mjs'), `import { readFileSync } from 'node:fs'
${sleepMs > 0 ? `await new Promise((r) => setTimeout(r, ${sleepMs}))` : ''}
console.log(JSON.stringify({ score: Number(readFileSync('score.txt', 'utf8')) }))
`)
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'init')
  const propose = path.join(root, 'propose.mjs')
  writeFileSync(propose, `import * as fs from 'node:fs'
const handoff = JSON.parse(fs.readFileSync(0, 'utf8'))
const next = Number(fs.readFileSync('score.txt', 'utf8')) - handoff.ordinal
fs.writeFileSync('score.txt', next + '\\n')
console.log(JSON.stringify({ hypothesis: 'score ' + next, summary: 'round ' + handoff.ordinal }))
`)
  return { root, repo, propose }
}

/** One run of `candidates` at `parallelism`: wall milliseconds and git processes. */
function run({ parallelism, candidates, sleepMs, name }) {
  const { root, repo, propose } = setup(name, sleepMs)
  const spec = path.join(root, 'spec.json')
  writeFileSync(spec, JSON.stringify({
    objective: 'lower the score', mutable_globs: ['score.txt'],
    evaluation: { command: process.execPath, args: ['eval.mjs'] },
    proposer: { command: process.execPath, args: [propose] },
    metric_name: 'score', metric_direction: 'minimize', run_tag: name,
    max_experiments: candidates, parallelism, timeout_ms: 60_000,
  }))
  const config = path.join(root, 'row.json')
  writeFileSync(config, JSON.stringify({ maxParallelism: 16, gitExecutable: gitWrapper }))
  writeFileSync(gitLog, '')
  const started = performance.now()
  const out = spawnSync(process.execPath, [CLI, 'run', '--json', '--config', config, spec], { cwd: repo, encoding: 'utf8' })
  const ms = performance.now() - started
  if (out.status !== 0) throw new Error(`run ${name} failed (${out.status}): ${out.stderr}`)
  const result = JSON.parse(out.stdout.trim().split('\n').at(-1))
  if (result.counts.experiments_started !== candidates) throw new Error(`run ${name}: ${JSON.stringify(result.counts)}`)
  const gits = readFileSync(gitLog, 'utf8').split('\n').filter(Boolean).length
  return { ms, gits }
}

/** The proposer and evaluator alone, once each (what a candidate costs without the run). */
function ownCost() {
  const { repo, propose } = setup('own', 0)
  const t0 = performance.now()
  for (let i = 0; i < 5; i++) {
    spawnSync(process.execPath, [propose], { cwd: repo, input: JSON.stringify({ ordinal: 1 }) })
    spawnSync(process.execPath, ['eval.mjs'], { cwd: repo })
  }
  return (performance.now() - t0) / 5
}

const median = (f) => stats(Array.from({ length: opt.runs }, f)).median

const serial = median((_, i) => run({ parallelism: 1, candidates: opt.candidates, sleepMs: opt.sleep, name: `serial-${i}` }).ms)
const parallel = median((_, i) => run({ parallelism: 3, candidates: opt.candidates, sleepMs: opt.sleep, name: `k3-${i}` }).ms)
const ratio = parallel / serial

const own = ownCost()
const overhead = {}
for (const k of [1, 3, 8]) {
  const runs = Array.from({ length: opt.runs }, (_, i) => run({ parallelism: k, candidates: opt.overhead, sleepMs: 0, name: `o${k}-${i}` }))
  const ms = stats(runs.map((r) => r.ms)).median
  overhead[k] = {
    ms_per_candidate: ms / opt.overhead,
    run_ms_per_candidate: (ms - own * opt.overhead / k) / opt.overhead,
    git_per_candidate: runs[0].gits / opt.overhead,
    processes_per_candidate: runs[0].gits / opt.overhead + 2,
  }
}

const f = (x) => x.toFixed(0)
console.error(`autoresearch parallelism: ${opt.candidates} candidates, evaluator ${opt.sleep} ms, medians of ${opt.runs} runs`)
console.error(`| | wall ms | ratio | target |`)
console.error(`|---|---|---|---|`)
console.error(`| parallelism 1 | ${f(serial)} | 1.00 | |`)
console.error(`| parallelism 3 | ${f(parallel)} | ${ratio.toFixed(2)} | <= ${TARGET_RATIO} ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'} |`)
console.error(`\nper-candidate cost, ${opt.overhead} candidates, evaluator that does nothing (proposer + evaluator alone: ${f(own)} ms)`)
console.error(`| K | wall ms / candidate | run's own ms / candidate | git processes / candidate | processes / candidate |`)
console.error(`|---|---|---|---|---|`)
for (const [k, o] of Object.entries(overhead)) {
  console.error(`| ${k} | ${f(o.ms_per_candidate)} | ${f(o.run_ms_per_candidate)} | ${o.git_per_candidate.toFixed(1)} | ${o.processes_per_candidate.toFixed(1)} |`)
}
emit({
  sleep_ms: opt.sleep, candidates: opt.candidates, runs: opt.runs,
  serial_ms: serial, parallel3_ms: parallel, ratio, target_ratio: TARGET_RATIO, met: ratio <= TARGET_RATIO,
  own_ms: own, overhead,
})
