// Process trees: a hung evaluator dies at its timeout with every descendant (SIGTERM, grace,
// SIGKILL); a runner killed with SIGKILL mid-evaluation leaves a tree that `resume` stops before
// rerunning the attempt once (no orphan, no duplicated experiment); SIGTERM cancels cleanly
// (bug 7's driver half); `abandon` ends a run nobody will resume.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import {
  RUN_ID_RE, alive, cli, cliAsync, git, hangSetup, proposer, readLines, specFile, tracker, waitFor,
} from './support/fixture.mjs'
import { mount, parentAgent } from './support/dsh.mjs'
import { checkWireThroughout } from './support/wire.mjs'

checkWireThroughout()

/** Pids of live processes whose environment names this run's attempts. */
function markedProcesses(runId) {
  const found = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(`DSH_AUTORESEARCH_ATTEMPT=${runId}`) && alive(Number(name))) found.push(Number(name))
    } catch {
      // Gone or not ours.
    }
  }
  return found
}

test('a hung evaluator is killed at its timeout with its whole tree; the run goes on', async (t) => {
  const { repo, pids, env, config, spec } = hangSetup(t, { timeout_ms: 2_000, max_experiments: 2 })
  const started = Date.now()
  const r = cli(['run', '--json', '--config', config, spec], { cwd: repo, env })
  const elapsed = Date.now() - started
  assert.equal(r.status, 0, r.stderr)
  const tree = readLines(pids).map(Number)
  assert.equal(tree.length, 3, 'node evaluator, its sh child, the sleep grandchild')
  for (const pid of tree) assert.equal(alive(pid), false, `pid ${pid} survived`)
  const [, hung, next] = r.json.experiments
  assert.equal(hung.failure_code, 'timeout')
  assert.match(hung.failure_message, /timed out after 2000 ms/)
  assert.equal(next.state, 'accepted', 'the next round still ran')
  assert.ok(elapsed < 20_000, `took ${elapsed} ms`)
  const db = await tracker(repo)
  t.after(() => db.close())
  const attempt = db.get("SELECT timed_out, quiescent, signal FROM attempts WHERE attempt_id LIKE '%candidate-1-attempt-1'")
  assert.equal(attempt.timed_out, 1)
  assert.equal(attempt.quiescent, 1, 'the group was proven gone')
  assert.deepEqual(markedProcesses(r.json.run_id), [])
})

test('kill -9 of the runner mid-evaluation, then resume: the orphan tree is stopped and the attempt rerun once', async (t) => {
  const { repo, pids, env, config, spec, head } = hangSetup(t, { max_experiments: 2 })
  const runner = cliAsync(['run', '--json', '--config', config, spec], { cwd: repo, env })
  await waitFor(() => readLines(pids).length >= 3, 30_000, 'the hung evaluator tree')
  const runId = runner.stderr().match(RUN_ID_RE)[1]
  runner.child.kill('SIGKILL')
  await runner.done
  const tree = readLines(pids).map(Number)
  assert.ok(tree.every(alive), 'the evaluator tree outlived the runner (its own process group)')
  const marked = markedProcesses(runId)
  assert.ok(tree.every((pid) => marked.includes(pid)), 'every member carries the attempt marker')

  const r = cli(['resume', '--json', '--config', config, runId], { cwd: repo, env })
  assert.equal(r.status, 0, r.stderr)
  for (const pid of tree) assert.equal(alive(pid), false, `pid ${pid} survived the resume`)
  assert.deepEqual(markedProcesses(runId), [])
  assert.match(r.stderr, /candidate-1-attempt-1: making sure the interrupted evaluator's process group is gone/)
  assert.match(r.stderr, /candidate-1-attempt-2: evaluator started/)
  assert.equal(r.json.status, 'budget-limited')
  assert.equal(r.json.best.metric, 8)
  const db = await tracker(repo)
  t.after(() => db.close())
  const perOrdinal = db.all('SELECT ordinal, count(*) AS n FROM experiments GROUP BY ordinal ORDER BY ordinal')
  assert.deepEqual(perOrdinal.map((x) => [x.ordinal, x.n]), [[0, 1], [1, 1], [2, 1]], 'no duplicated experiment')
  const attempts = db.all("SELECT attempt_id, state, failure_code, quiescent FROM attempts WHERE experiment_id LIKE '%candidate-1' ORDER BY ordinal")
  assert.deepEqual(attempts.map((a) => [a.state, a.failure_code, a.quiescent]), [['interrupted', 'interrupted', 1], ['exited', null, 1]])
  assert.equal(git(repo, 'rev-parse', 'main'), head)
})

test('SIGTERM mid-candidate cancels: tree stopped, worktree back at the best, lock released', async (t) => {
  const { repo, pids, env, config, spec, head } = hangSetup(t)
  const runner = cliAsync(['run', '--json', '--config', config, spec], { cwd: repo, env })
  await waitFor(() => readLines(pids).length >= 3, 30_000, 'the hung evaluator tree')
  runner.child.kill('SIGTERM')
  const done = await runner.done
  assert.equal(done.status, 1, done.stderr)
  const result = JSON.parse(done.stdout.trim().split('\n').at(-1))
  assert.equal(result.status, 'cancelled')
  assert.equal(result.blocker.message, 'cancelled by SIGTERM')
  for (const pid of readLines(pids).map(Number)) assert.equal(alive(pid), false, `pid ${pid} survived`)
  assert.equal(result.best.commit, head, 'the baseline is still the best')
  assert.equal(git(result.worktree, 'rev-parse', 'HEAD'), head, 'the worktree is restored')
  assert.equal(git(result.worktree, 'status', '--porcelain', '--ignored'), '')
  assert.equal(git(repo, 'rev-parse', result.branch), head)
  assert.equal(result.experiments[1].state, 'cancelled')
  const db = await tracker(repo)
  t.after(() => db.close())
  assert.equal(db.get('SELECT count(*) AS n FROM locks WHERE released_at IS NULL').n, 0)
  assert.equal(db.get("SELECT count(*) AS n FROM attempts WHERE state = 'running'").n, 0)
})

test('abandon stops a dead runner\'s leftovers, cancels the run and frees its tag', async (t) => {
  const { root, repo, pids, env, config, spec } = hangSetup(t)
  const runner = cliAsync(['run', '--config', config, spec], { cwd: repo, env })
  await waitFor(() => readLines(pids).length >= 3, 30_000, 'the hung evaluator tree')
  const runId = runner.stderr().match(RUN_ID_RE)[1]
  runner.child.kill('SIGKILL')
  await runner.done
  // The tag is still held by the interrupted run.
  const blocked = cli(['run', '--json', '--config', config, specFile(root, { proposer: proposer(root, 'return score - 1') }, 'again.json')], { cwd: repo, env })
  assert.equal(blocked.json.blocker.code, 'lock-unavailable')
  assert.equal(cli(['abandon', '../x'], { cwd: repo }).status, 2)
  const r = cli(['abandon', '--json', '--config', config, '--reason', 'operator says stop', runId], { cwd: repo, env })
  assert.equal(r.status, 1, r.stderr)
  assert.equal(r.json.status, 'cancelled')
  assert.equal(r.json.blocker.message, 'operator says stop')
  for (const pid of readLines(pids).map(Number)) assert.equal(alive(pid), false)
  assert.match(cli(['list'], { cwd: repo }).stdout, new RegExp(`${runId}.*cancelled`))
  const again = cli(['run', '--json', '--config', config, specFile(root, { proposer: proposer(root, 'return score - 1') }, 'again.json')], { cwd: repo, env })
  assert.equal(again.status, 0, again.stderr)
})

test('plugin start reconciles a dead host\'s run: tree stopped, lock released, named to the model; nothing resumed', async (t) => {
  const { repo, pids, env, config, spec } = hangSetup(t)
  const runner = cliAsync(['run', '--config', config, spec], { cwd: repo, env })
  await waitFor(() => readLines(pids).length >= 3, 30_000, 'the hung evaluator tree')
  const runId = runner.stderr().match(RUN_ID_RE)[1]
  runner.child.kill('SIGKILL')
  await runner.done
  const tree = readLines(pids).map(Number)
  assert.ok(tree.every(alive), 'the evaluator tree outlived the host')

  const { prompts, fiber } = await mount({ terminationGraceMs: 300, recoverRepositories: [repo] })
  t.after(() => fiber.dispose())
  await waitFor(() => prompts.text('tool:autoresearch')?.includes(runId), 30_000, 'the note on the run')
  for (const pid of tree) assert.equal(alive(pid), false, `pid ${pid} survived the reconcile`)
  const note = prompts.text('tool:autoresearch')
  assert.match(note, /their host died/)
  assert.match(note, new RegExp(`- ${runId} \\(tag [^,]+, state candidate-running\\)`))
  assert.match(note, /resume_run_id/)
  assert.match(note, /abandon_run_id/)
  const db = await tracker(repo)
  t.after(() => db.close())
  assert.equal(db.get('SELECT count(*) AS n FROM locks WHERE released_at IS NULL').n, 0, 'the slot is free')
  const row = db.get('SELECT state, interrupted_at FROM runs')
  assert.equal(row.state, 'candidate-running', 'not resumed, not ended')
  assert.ok(row.interrupted_at > 0)

  // It resumes later from the headless runner, taking the lock again.
  const r = cli(['resume', '--json', '--config', config, runId], { cwd: repo, env })
  assert.equal(r.json.status, 'budget-limited', r.stderr)
})

test('plugin start leaves a run whose host is alive alone', async (t) => {
  const { repo, pids, env, config, spec } = hangSetup(t)
  const runner = cliAsync(['run', '--config', config, spec], { cwd: repo, env })
  t.after(() => runner.child.kill('SIGKILL'))
  await waitFor(() => readLines(pids).length >= 3, 30_000, 'the hung evaluator tree')
  const runId = runner.stderr().match(RUN_ID_RE)[1]
  const { prompts, fiber } = await mount({ terminationGraceMs: 300, recoverRepositories: [repo] })
  t.after(() => fiber.dispose())
  await waitFor(() => prompts.text('tool:autoresearch')?.includes(runId), 30_000, 'the note on the run')
  assert.match(prompts.text('tool:autoresearch'), /hold their repository lock/)
  for (const pid of readLines(pids).map(Number)) assert.ok(alive(pid), `pid ${pid} was stopped`)
  const db = await tracker(repo)
  t.after(() => db.close())
  assert.equal(db.get('SELECT count(*) AS n FROM locks WHERE released_at IS NULL').n, 1)
})

test('abandon_run_id ends a run from inside DSH: leftovers stopped, cancelled, lock released', async (t) => {
  const { repo, pids, env, config, spec } = hangSetup(t)
  const runner = cliAsync(['run', '--config', config, spec], { cwd: repo, env })
  await waitFor(() => readLines(pids).length >= 3, 30_000, 'the hung evaluator tree')
  const runId = runner.stderr().match(RUN_ID_RE)[1]
  runner.child.kill('SIGKILL')
  await runner.done
  const { tools, fiber } = await mount({ terminationGraceMs: 300 })
  t.after(() => fiber.dispose())
  const refused = await tools.call('autoresearch', { abandon_run_id: runId, run_tag: 'x' }, parentAgent(repo))
  assert.match(refused.error, /run_tag: does not go with abandon_run_id/)
  const r = await tools.call('autoresearch', { abandon_run_id: runId, repository: repo, reason: 'the user gave up' }, parentAgent(repo))
  assert.equal(r.error, undefined)
  assert.equal(r.value.kind, 'foreground')
  assert.equal(r.value.run.status, 'cancelled')
  assert.equal(r.value.run.blocker.message, 'the user gave up')
  for (const pid of readLines(pids).map(Number)) assert.equal(alive(pid), false, `pid ${pid} survived`)
  const db = await tracker(repo)
  t.after(() => db.close())
  assert.equal(db.get('SELECT count(*) AS n FROM locks WHERE released_at IS NULL').n, 0)
})
