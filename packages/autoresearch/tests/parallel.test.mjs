// `parallelism` end to end through the headless runner, with real git and real processes: each
// candidate of a generation has its own proposer process and evaluator in its own worktree, with
// AUTORESEARCH_SLOT; the evaluators of a generation run at the same time; the best is kept, the
// other improvers are superseded and stay on refs; slot worktrees are gone when the run ends; a
// kill -9 or a SIGTERM with a generation in flight leaves no process and loses nothing.
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createGit } from '../lib/git.js'
import { createLocalRunner } from '../lib/process.js'
import { RUN_ID_RE, alive, cli, cliAsync, git, killCarrying, makeRepo, proposer, readLines, specFile, tracker, waitFor } from './support/fixture.mjs'

// Logs each evaluation (its slot, cwd and time span). A candidate's evaluator waits (up to 20 s)
// until all three evaluators of its generation have started: run one at a time, they would
// each wait in vain and log it.
const BARRIER_EVAL = `import { appendFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
const start = Date.now()
const attempt = process.env.DSH_AUTORESEARCH_ATTEMPT
const n = Number(/candidate-(\\d+)-attempt/.exec(attempt)?.[1] ?? 0)
let together = null
if (n > 0) {
  const generation = Math.floor((n - 1) / 3)
  const dir = process.env.AR_BARRIER
  writeFileSync(join(dir, generation + '-' + n), '')
  const here = () => readdirSync(dir).filter((f) => f.startsWith(generation + '-')).length
  while (here() < 3 && Date.now() - start < 20000) await new Promise((r) => setTimeout(r, 20))
  together = here() === 3
}
const v = Number(readFileSync('score.txt', 'utf8').trim())
appendFileSync(process.env.AR_EVAL_LOG, JSON.stringify({
  attempt, slot: process.env.AUTORESEARCH_SLOT, cwd: process.cwd(), start, end: Date.now(), v, together,
}) + '\\n')
console.log(JSON.stringify({ score: v }))
`

// By ordinal: generation 1 (from 10) 8, 7, 11; generation 2 (from 7) 6, 7.5, 5.
const SCORES = { 1: 8, 2: 7, 3: 11, 4: 6, 5: 7.5, 6: 5 }

test('parallelism 3: two generations, the best of each kept, the other improvers superseded', (t) => {
  const { root, repo } = makeRepo(t, { 'eval.mjs': BARRIER_EVAL })
  const prop = proposer(root, `fs.appendFileSync(${JSON.stringify(join(root, 'handoffs.log'))},
      JSON.stringify({ ordinal, cwd: process.cwd(), generation: handoff.generation }) + '\\n')
    return (${JSON.stringify(SCORES)})[ordinal]`)
  const log = join(root, 'evaluations.log')
  const spec = specFile(root, { proposer: prop, max_experiments: 6, parallelism: 3 })
  const barrier = join(root, 'barrier')
  mkdirSync(barrier)
  const r = cli(['run', '--json', spec], { cwd: repo, env: { AR_EVAL_LOG: log, AR_BARRIER: barrier } })
  assert.equal(r.status, 0, r.stderr + JSON.stringify(r.json?.blocker))
  const result = r.json
  assert.deepEqual(result.experiments.map((e) => e.outcome),
    ['baseline', 'superseded', 'kept', 'rejected', 'superseded', 'rejected', 'kept'])
  assert.deepEqual(result.experiments.map((e) => e.metric), [10, 8, 7, 11, 6, 7.5, 5])
  assert.equal(result.experiments[1].superseded_by, result.experiments[2].experiment_id)
  assert.deepEqual(
    [result.counts.accepted, result.counts.superseded, result.counts.rejected], [2, 2, 2])
  // Generation two starts from generation one's winner.
  for (const e of result.experiments.slice(4)) {
    assert.equal(git(repo, 'rev-parse', `${e.candidate_commit}^`), result.experiments[2].candidate_commit)
  }
  assert.equal(git(repo, 'rev-parse', result.branch), result.best.commit)

  const evaluations = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  const candidate = (e) => Number(/candidate-(\d+)-attempt/.exec(e.attempt)?.[1] ?? 0)
  for (const e of evaluations) {
    const n = candidate(e)
    assert.equal(e.slot, String(n === 0 ? 0 : (n - 1) % 3), e.attempt)
    // Slot 0 works in the run's worktree, slot s in its own.
    assert.equal(e.cwd.endsWith(`-slot-${e.slot}`), e.slot !== '0', e.cwd)
  }
  // Each generation's three evaluators were running at the same time.
  for (const generation of [[1, 2, 3], [4, 5, 6]]) {
    const spans = evaluations.filter((e) => generation.includes(candidate(e)))
    assert.equal(spans.length, 3)
    assert.ok(spans.every((e) => e.together), `generation ${generation} ran one at a time: ${JSON.stringify(spans)}`)
  }
  const handoffs = readFileSync(join(root, 'handoffs.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  assert.deepEqual(handoffs.map((h) => [h.ordinal, h.generation.slot, h.generation.candidates]).sort((a, b) => a[0] - b[0]),
    [[1, 0, 3], [2, 1, 3], [3, 2, 3], [4, 0, 3], [5, 1, 3], [6, 2, 3]])

  // Every candidate stays on its ref; no slot worktree outlives the run.
  const refs = git(repo, 'for-each-ref', '--format=%(refname)', `refs/autoresearch/${result.run_id}/`).split('\n')
  assert.equal(refs.length, 6)
  const worktrees = git(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))
  assert.deepEqual(worktrees.filter((w) => w.includes('-slot-')), [])
  assert.equal(worktrees.length, 2, worktrees.join('\n'))
  // The table and TSV say superseded too.
  const show = cli(['show', result.run_id], { cwd: repo })
  assert.match(show.stdout, /2 accepted, 2 rejected, 2 superseded/)
})

test('parallelism above the row limit is refused, naming the field, the rule and the value', (t) => {
  const { root, repo } = makeRepo(t)
  const spec = specFile(root, { parallelism: 5, max_experiments: 1 })
  const refused = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(refused.status, 2)
  assert.match(refused.stderr, /parallelism: must be an integer from 1 to 4 \(got 5\)/)
  // The row's maxParallelism raises the limit.
  const config = join(root, 'row.json')
  writeFileSync(config, JSON.stringify({ maxParallelism: 8 }))
  const prop = proposer(root, 'return score - 1')
  const allowed = specFile(root, { parallelism: 5, max_experiments: 1, proposer: prop }, 'spec5.json')
  const r = cli(['run', '--json', '--config', config, allowed], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.json.best.metric, 9)
})

// The first evaluation of each candidate starts a process tree that ignores SIGTERM, records its
// pids and hangs; a rerun scores normally.
const HANG_ONCE_EVAL = `import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
const n = /candidate-(\\d+)-attempt/.exec(process.env.DSH_AUTORESEARCH_ATTEMPT)?.[1]
const flag = process.env.AR_HANG_FLAG + '-' + n
if (n !== undefined && !existsSync(flag)) {
  writeFileSync(flag, 'hung once')
  const child = spawn('sh', ['-c', 'trap "" TERM; sleep 300 & echo $! >> "$AR_PIDS"; while :; do sleep 1; done'], { stdio: 'ignore' })
  appendFileSync(process.env.AR_PIDS, process.pid + '\\n' + child.pid + '\\n')
  process.on('SIGTERM', () => {})
  setInterval(() => {}, 1000)
} else {
  console.log(JSON.stringify({ score: Number(readFileSync('score.txt', 'utf8').trim()) }))
}
`

/** A repository whose candidates hang on their first evaluation, run two at a time; whatever a
 * failing assertion leaves behind, nothing outlives the test. */
function hangingGeneration(t, maxExperiments) {
  const { root, repo, head } = makeRepo(t, { 'eval.mjs': HANG_ONCE_EVAL })
  const pids = join(root, 'pids')
  const env = { AR_HANG_FLAG: join(root, 'hung'), AR_PIDS: pids }
  // Whatever a test leaves running (one whose host stays alive leaves its tree on purpose), or
  // an assertion leaves behind when it fails, nothing outlives the test.
  t.after(() => killCarrying('AR_PIDS', pids))
  const config = join(root, 'config.json')
  writeFileSync(config, JSON.stringify({ terminationGraceMs: 300 }))
  const prop = proposer(root, 'return score - ordinal')
  const spec = specFile(root, { proposer: prop, max_experiments: maxExperiments, parallelism: 2 })
  return { repo, head, pids, env, config, spec }
}

test('kill -9 of the runner with a generation in flight, then resume: both trees stopped, each attempt rerun once', async (t) => {
  const { repo, pids, env, config, spec } = hangingGeneration(t, 2)
  const runner = cliAsync(['run', '--json', '--config', config, spec], { cwd: repo, env })
  await waitFor(() => readLines(pids).length >= 6, 30_000, 'both hung evaluator trees')
  const runId = runner.stderr().match(RUN_ID_RE)[1]
  runner.child.kill('SIGKILL')
  await runner.done
  const trees = readLines(pids).map(Number)
  assert.ok(trees.every(alive), 'the trees outlived the runner')

  const r = cli(['resume', '--json', '--config', config, runId], { cwd: repo, env })
  assert.equal(r.status, 0, r.stderr)
  for (const pid of trees) assert.equal(alive(pid), false, `pid ${pid} survived the resume`)
  assert.deepEqual(r.json.experiments.map((e) => e.outcome), ['baseline', 'superseded', 'kept'])
  assert.equal(r.json.best.metric, 8)
  const db = await tracker(repo)
  t.after(() => db.close())
  const perOrdinal = db.all('SELECT ordinal, count(*) AS n FROM experiments GROUP BY ordinal ORDER BY ordinal')
  assert.deepEqual(perOrdinal.map((x) => [x.ordinal, x.n]), [[0, 1], [1, 1], [2, 1]], 'no duplicated experiment')
  for (const n of [1, 2]) {
    const attempts = db.all(`SELECT state, failure_code FROM attempts WHERE experiment_id LIKE '%candidate-${n}' ORDER BY ordinal`)
    assert.deepEqual(attempts.map((a) => [a.state, a.failure_code]), [['interrupted', 'interrupted'], ['exited', null]], `candidate ${n}`)
  }
})

test('SIGTERM with a generation in flight cancels: both trees stopped, worktree back at the best, no slot worktree left', async (t) => {
  const { repo, head, pids, env, config, spec } = hangingGeneration(t, 4)
  const runner = cliAsync(['run', '--json', '--config', config, spec], { cwd: repo, env })
  await waitFor(() => readLines(pids).length >= 6, 30_000, 'both hung evaluator trees')
  runner.child.kill('SIGTERM')
  const done = await runner.done
  assert.equal(done.status, 1, done.stderr)
  const result = JSON.parse(done.stdout.trim().split('\n').at(-1))
  assert.equal(result.status, 'cancelled')
  for (const pid of readLines(pids).map(Number)) assert.equal(alive(pid), false, `pid ${pid} survived`)
  assert.deepEqual(result.experiments.map((e) => e.state), ['accepted', 'cancelled', 'cancelled'])
  assert.equal(git(result.worktree, 'rev-parse', 'HEAD'), head, 'the worktree is restored')
  assert.equal(git(result.worktree, 'status', '--porcelain', '--ignored'), '')
  const worktrees = git(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))
  assert.deepEqual(worktrees.filter((w) => w.includes('-slot-')), [])
  const db = await tracker(repo)
  t.after(() => db.close())
  assert.equal(db.get("SELECT count(*) AS n FROM attempts WHERE state = 'running'").n, 0)
  assert.equal(db.get('SELECT count(*) AS n FROM locks WHERE released_at IS NULL').n, 0)
})

// git's `worktree add` reads every entry of `.git/worktrees/` and fails on one that another add is
// still writing; eight adds at once hit that within a few tries. The git boundary makes them take
// turns.
test('worktree commands on one repository take turns: eight slot worktrees made and removed at once', async (t) => {
  const { root, repo, head } = makeRepo(t)
  const local = createLocalRunner()
  let inFlight = 0
  let most = 0
  const runner = {
    ...local,
    spawn(options) {
      const handle = local.spawn(options)
      if (!options.argv.includes('worktree')) return handle
      most = Math.max(most, ++inFlight)
      handle.exited.then(() => inFlight--)
      return handle
    },
  }
  const boundary = createGit({ runner })
  const gitCommonDir = join(repo, '.git')
  const paths = Array.from({ length: 8 }, (_, s) => join(root, 'worktrees', `run-slot-${s + 1}`))
  await Promise.all(paths.map((path) => boundary.createWorktree({ gitCommonDir, path, startCommit: head })))
  assert.equal(most, 1)
  for (const path of paths) assert.equal(git(path, 'rev-parse', 'HEAD'), head)
  await Promise.all(paths.map((path) => boundary.removeWorktree({ gitCommonDir, path })))
  assert.equal(most, 1)
  assert.deepEqual(paths.filter((path) => existsSync(path)), [])
  assert.equal(git(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1)
})
