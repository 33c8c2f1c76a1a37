// The run's wire from the JavaScript side: the driver's performers cover exactly the effects of
// the generated `wire/run.json` that take an answer, and real runs driven here (DSH-style rounds
// with parallel slots, a failed evaluation whose artifacts go at once, a headless proposer
// program, a cancel, a resume and an abandon of an ended run) step and answer as the file says.
// The other in-process runs of the Node tests are checked the same way (`checkWireThroughout`).
import test from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { AutoresearchRun } from '../lib/core.js'
import { PERFORM, drive } from '../lib/driver.js'
import { createLocalRunner } from '../lib/process.js'
import { makeRepo, proposer } from './support/fixture.mjs'
import { WIRE, answerProblems, effectProblems, watchWire } from './support/wire.mjs'

test('the performers cover exactly the effects that take an answer; the drive loop the rest', () => {
  const answered = Object.keys(WIRE.effects).filter((kind) => WIRE.effects[kind].answers.length > 0)
  assert.deepEqual(Object.keys(PERFORM).sort(), answered.sort())
  const own = Object.keys(WIRE.effects).filter((kind) => WIRE.effects[kind].answers.length === 0)
  assert.deepEqual(own.sort(), ['interrupt', 'report'])
  const source = readFileSync(new URL('../lib/driver.js', import.meta.url), 'utf8')
  for (const kind of own) assert.ok(source.includes(`effect.kind === '${kind}'`), `the drive loop handles ${kind}`)
})

test('the checks find an effect field off the wire, an extra answer field and a wrong type', () => {
  assert.deepEqual(effectProblems({ kind: 'loadRun', id: 1, runId: 'r', extra: 1 }), ['loadRun.extra is not on the wire'])
  assert.deepEqual(effectProblems({ kind: 'loadRun', id: 1 }), ['loadRun.runId is missing'])
  assert.deepEqual(
    answerProblems({ type: 'spawned', id: 1, process: { pid: 1, pgid: '1', cwd: '/' } }, 'runEvaluator'),
    ['spawned.process.pgid is string, not number', 'spawned.process.cwd is not on the wire'],
  )
  assert.deepEqual(answerProblems({ type: 'done', id: 1 }, 'discover'), ['done does not answer discover (the wire: discovered,failed)'])
})

const spec = (extra = {}) => JSON.stringify({
  objective: 'lower the score',
  mutable_globs: ['score.txt'],
  evaluation: { command: 'node', args: ['eval.mjs'] },
  metric_name: 'score',
  metric_direction: 'minimize',
  run_tag: `wire-${randomUUID().slice(0, 8)}`,
  max_experiments: 3,
  timeout_ms: 30_000,
  ...extra,
})

test('every effect of real runs and every answer to it are on the wire', async (t) => {
  const { seen, found } = watchWire(t)
  const { root, repo } = makeRepo(t)
  const runner = createLocalRunner()
  // DSH-style rounds, two slots side by side; the second round breaks the score (a failed
  // evaluation, whose artifacts go at once); the ended run's worktrees are removed.
  let round = 0
  const config = JSON.stringify({ retainFailedArtifacts: false, cleanupWorktreesOnSuccess: true })
  const first = AutoresearchRun.fromSpec(spec({ parallelism: 2, max_experiments: 4 }), randomUUID(), config, Date.now())
  await drive(first, {
    runner,
    callerCwd: repo,
    async propose({ worktree }) {
      round += 1
      const score = Number(readFileSync(join(worktree, 'score.txt'), 'utf8'))
      writeFileSync(join(worktree, 'score.txt'), round === 2 ? 'broken\n' : `${score - round}\n`)
      return { hypothesis: `round ${round}`, summary: 'edited score.txt' }
    },
  })
  assert.equal(JSON.parse(first.resultJson()).status, 'budget-limited')
  // A headless proposer program.
  const program = proposer(root, 'return score - 1')
  const headless = AutoresearchRun.fromSpec(spec({ proposer: program, max_experiments: 1 }), randomUUID(), '{}', Date.now())
  await drive(headless, { runner, callerCwd: repo })
  assert.equal(JSON.parse(headless.resultJson()).status, 'budget-limited')
  // A cancel during a proposal round.
  const controller = new AbortController()
  const cancelled = AutoresearchRun.fromSpec(spec(), randomUUID(), '{}', Date.now())
  await drive(cancelled, {
    runner,
    callerCwd: repo,
    signal: controller.signal,
    propose({ signal }) {
      setTimeout(() => controller.abort('job_kill'), 10)
      return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(new Error(`round ${signal.reason}`))))
    },
  })
  assert.equal(JSON.parse(cancelled.resultJson()).status, 'cancelled')
  // An ended run resumed, then abandoned: loaded and reported again.
  for (const again of [
    AutoresearchRun.resume(headless.runId, repo, '{}', Date.now()),
    AutoresearchRun.abandon(headless.runId, 'wire test', repo, '{}', Date.now()),
  ]) {
    await drive(again, { runner, callerCwd: repo })
    assert.equal(JSON.parse(again.resultJson()).status, 'budget-limited')
  }

  assert.deepEqual([...new Set(found)], [])
  // What only a crashed or dead host's run asks for is checked where the Node tests make one
  // (processes.test.mjs, through `checkWireThroughout`).
  const unseen = Object.keys(WIRE.effects).filter((kind) => !seen.effects.has(kind)).sort()
  assert.deepEqual(unseen, ['probeHost', 'terminateProcessGroup', 'terminateProposers'])
  const unanswered = Object.keys(WIRE.answers).filter((type) => !seen.answers.has(type)).sort()
  assert.deepEqual(unanswered, ['hostProbed', 'terminated'])
})
