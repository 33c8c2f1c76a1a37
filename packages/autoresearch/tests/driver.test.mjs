// The driver as the DSH tool uses it: an injected process runner (every git command and the
// evaluator go through it) and an injected proposal round instead of a proposer program.
import test from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { basename, isAbsolute, join } from 'node:path'
import { AutoresearchRun } from '../lib/core.js'
import { drive } from '../lib/driver.js'
import { createLocalRunner } from '../lib/process.js'
import { git, makeRepo } from './support/fixture.mjs'
import { checkWireThroughout } from './support/wire.mjs'

checkWireThroughout()

function dshSpec(extra = {}) {
  return JSON.stringify({
    objective: 'lower the score',
    mutable_globs: ['score.txt'],
    evaluation: { command: 'node', args: ['eval.mjs'] },
    metric_name: 'score',
    metric_direction: 'minimize',
    run_tag: 'dsh-1',
    max_experiments: 2,
    timeout_ms: 30_000,
    ...extra,
  })
}

function recordingRunner() {
  const local = createLocalRunner()
  const spawns = []
  return {
    spawns,
    runner: {
      ...local,
      spawn(options) {
        spawns.push(options.argv)
        return local.spawn(options)
      },
    },
  }
}

test('every process goes through the injected runner; a DSH-style round proposes', async (t) => {
  const { repo, head } = makeRepo(t)
  const { runner, spawns } = recordingRunner()
  const handoffs = []
  const run = AutoresearchRun.fromSpec(dshSpec(), randomUUID(), '{}', Date.now())
  const lines = []
  await drive(run, {
    runner,
    callerCwd: repo,
    onProgress: (text) => lines.push(text),
    async propose({ worktree, handoff, timeoutMs, signal }) {
      assert.equal(signal.aborted, false)
      assert.equal(timeoutMs, 30_000)
      handoffs.push(JSON.parse(handoff))
      const score = Number(readFileSync(join(worktree, 'score.txt'), 'utf8'))
      writeFileSync(join(worktree, 'score.txt'), `${score - 2}\n`)
      return { hypothesis: `lower by 2 from ${score}`, summary: 'edited score.txt' }
    },
  })
  assert.equal(run.done, true)
  const result = JSON.parse(run.resultJson())
  assert.equal(result.status, 'budget-limited')
  assert.equal(result.best.metric, 6)
  assert.equal(run.jobStatus, 'completed')
  // The handoff tells the proposer the metric, direction, surface, best and the history.
  assert.equal(handoffs[0].metric_name, 'score')
  assert.equal(handoffs[0].metric_direction, 'minimize')
  assert.deepEqual(handoffs[0].mutable_globs, ['score.txt'])
  assert.equal(handoffs[1].best.metric, 8)
  assert.equal(handoffs[1].history.at(-1).hypothesis, 'lower by 2 from 10')
  // Git and the evaluator ran through the runner; no proposer program was spawned.
  assert.ok(spawns.some((argv) => argv[0] === 'git' && argv.includes('worktree')))
  // The evaluator runs as the program PATH's absolute entries name, resolved once.
  const evaluators = spawns.filter((argv) => basename(argv[0]) === 'node')
  assert.equal(evaluators.length, 3, 'baseline + 2 candidates')
  assert.ok(evaluators.every((argv) => isAbsolute(argv[0]) && argv[0] === evaluators[0][0]))
  assert.ok(lines.join('\n').includes('candidate 2: accepted'))
  assert.equal(git(repo, 'rev-parse', 'HEAD'), head)
})

test('cancelling through the signal interrupts a proposal round and ends cancelled', async (t) => {
  const { repo } = makeRepo(t)
  const controller = new AbortController()
  const run = AutoresearchRun.fromSpec(dshSpec(), randomUUID(), '{}', Date.now())
  await drive(run, {
    runner: createLocalRunner(),
    callerCwd: repo,
    signal: controller.signal,
    propose({ signal }) {
      setTimeout(() => controller.abort('job_kill'), 10)
      return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(new Error(`round ${signal.reason}`))))
    },
  })
  const result = JSON.parse(run.resultJson())
  assert.equal(result.status, 'cancelled')
  assert.equal(result.blocker.message, 'job_kill')
  assert.equal(run.jobStatus, 'killed')
  assert.equal(result.experiments[1].state, 'cancelled')
})

test('a runner that cannot start git ends the run with evidence, never a throw', async (t) => {
  const { repo } = makeRepo(t)
  const local = createLocalRunner()
  const broken = { ...local, spawn: (o) => local.spawn({ ...o, argv: ['/nonexistent/git', ...o.argv.slice(1)] }) }
  const run = AutoresearchRun.fromSpec(dshSpec(), randomUUID(), '{}', Date.now())
  await drive(run, { runner: broken, callerCwd: repo })
  const result = JSON.parse(run.resultJson())
  assert.equal(result.status, 'blocked')
  assert.equal(result.blocker.code, 'repository-unavailable')
  assert.match(result.blocker.evidence[0], /cannot run git/)
  assert.equal(result.persisted, false)
})

test('driver misuse throws with the reason; a run from the wrong spec kind is refused', () => {
  const run = AutoresearchRun.fromSpec(dshSpec(), randomUUID(), '{}', Date.now())
  const first = JSON.parse(run.poll())
  assert.equal(first.kind, 'discover')
  assert.throws(() => run.handle(JSON.stringify({ type: 'done', id: 42 }), Date.now()), /no outstanding effect 42/)
  assert.throws(() => run.handle(JSON.stringify({ type: 'done', id: first.id }), Date.now()), /effect \d+ \(discover\) expects discovered or failed, not done/)
  assert.throws(() => run.handle('not json', Date.now()), /input must be JSON/)
  assert.throws(() => AutoresearchRun.fromSpec('{"run_tag": "x"}', randomUUID(), '{}', Date.now()), /invalid spec: objective: is required/)
  assert.throws(() => AutoresearchRun.resume('../..', undefined, '{}', Date.now()), /lowercase UUID/)
  assert.throws(() => AutoresearchRun.fromSpec(dshSpec(), randomUUID(), '{"maxExperiments": 0}', Date.now()), /autoresearch: invalid config: maxExperiments/)
})
