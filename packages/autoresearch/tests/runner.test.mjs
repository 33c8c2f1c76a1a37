// The headless runner end to end on scratch git repositories: a real metric improves, only the
// mutable surface may change, bad specs exit 2 naming field, rule and value, list/show read the
// tracker, and the caller's checkout and branches are never touched.
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, git, makeRepo, proposer, readLines, specFile, tracker } from './support/fixture.mjs'
import { autoresearchMigrations } from '../lib/core.js'

test('run improves a real metric in a scratch repository; the caller is untouched', async (t) => {
  const { root, repo, head } = makeRepo(t)
  // The caller has uncommitted work: it must survive byte for byte.
  writeFileSync(join(repo, 'README.md'), 'caller edit in progress\n')
  const prop = proposer(root, 'return ordinal === 2 ? score + 5 : score - 2')
  const spec = specFile(root, { proposer: prop, max_experiments: 3 })
  const r = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const result = r.json
  assert.equal(result.status, 'budget-limited')
  assert.equal(result.baseline.metric, 10)
  assert.equal(result.best.metric, 6, 'candidates 1 and 3 improve, 2 regresses')
  assert.deepEqual(result.experiments.map((e) => e.decision), ['accept', 'accept', 'reject', 'accept'])
  assert.deepEqual(result.counts, {
    experiments_started: 3, experiments_completed: 3, accepted: 2, rejected: 1, superseded: 0, failed: 0, policy_violations: 0, attempts: 4,
  })
  // Progress went to stderr, one line per step.
  assert.match(r.stderr, /\[autoresearch\] baseline: score = 10/)
  assert.match(r.stderr, /candidate 2: rejected, score = 13 \(best stays 8\)/)
  // The run branch holds the best commit; its tree has the best score and only score.txt changed.
  assert.equal(git(repo, 'rev-parse', result.branch), result.best.commit)
  assert.equal(git(repo, 'show', `${result.best.commit}:score.txt`), '6')
  assert.deepEqual(git(repo, 'diff', '--name-only', head, result.best.commit).split('\n'), ['score.txt'])
  assert.equal(git(repo, 'log', '--format=%an <%ae>', '-1', result.best.commit), 'dsh-autoresearch <autoresearch@localhost>')
  // The caller's branch, HEAD and dirty file are exactly as before.
  assert.equal(git(repo, 'rev-parse', 'HEAD'), head)
  assert.equal(git(repo, 'rev-parse', 'main'), head)
  assert.equal(git(repo, 'symbolic-ref', 'HEAD'), 'refs/heads/main')
  assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), 'caller edit in progress\n')
  assert.equal(readFileSync(join(repo, 'score.txt'), 'utf8'), '10\n')
  assert.deepEqual(git(repo, 'branch', '--format=%(refname:short)').split('\n').sort(), [result.branch, 'main'].sort())
  // Durable evidence: owner-only state, the TSV export, the worktree at the best commit.
  const state = join(repo, '.git', 'dsh-autoresearch')
  assert.equal(statSync(state).mode & 0o777, 0o700)
  assert.equal(statSync(join(state, 'tracker.sqlite')).mode & 0o777, 0o600)
  const tsv = readFileSync(join(state, 'exports', `${result.run_id}.tsv`), 'utf8')
  assert.equal(tsv.trim().split('\n').length, 5)
  assert.equal(git(result.worktree, 'rev-parse', 'HEAD'), result.best.commit)
  assert.equal(git(result.worktree, 'status', '--porcelain', '--ignored'), '')
  const db = await tracker(repo)
  t.after(() => db.close())
  assert.equal(db.get('SELECT state FROM runs').state, 'budget-limited')
  assert.equal(db.get('SELECT count(*) AS n FROM locks WHERE released_at IS NULL').n, 0)
  assert.equal(db.get('PRAGMA journal_mode').journal_mode, 'wal')
})

test('a target stops the run early; the table names the status', (t) => {
  const { root, repo } = makeRepo(t)
  const spec = specFile(root, { proposer: proposer(root, 'return score - 3'), target: 5, max_experiments: 10 })
  const r = cli(['run', spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /^autoresearch run [0-9a-f-]{36}: target-reached\n/)
  assert.match(r.stdout, /best 4 at [0-9a-f]{8}, target 5/)
  assert.match(r.stdout, /candidates 2 started, 2 accepted/)
})

test('only mutable_globs may change: a candidate touching the evaluator is rejected with evidence', async (t) => {
  const { root, repo, head } = makeRepo(t)
  const log = join(root, 'eval.log')
  const prop = proposer(root, `
    if (ordinal === 1) { fs.writeFileSync('eval.mjs', 'console.log(JSON.stringify({score: -1000}))\\n'); return score - 1 }
    if (ordinal === 2) { fs.appendFileSync('README.md', 'sneaky\\n'); return score - 1 }
    return score - 1`)
  // Even a glob that covers everything leaves the evaluator protected.
  const spec = specFile(root, {
    proposer: prop, mutable_globs: ['score.txt', '*.md', '*.mjs'], exceptional_allowlists: { evaluators: ['.'] }, max_experiments: 2, max_consecutive_failures: 5,
  })
  const spec2 = specFile(root, { proposer: prop, run_tag: 'exp-2', max_experiments: 3, max_consecutive_failures: 5 }, 'spec2.json')
  const r = cli(['run', '--json', spec], { cwd: repo, env: { AR_EVAL_LOG: log } })
  assert.equal(r.status, 0, r.stderr)
  const [, first] = r.json.experiments
  assert.equal(first.state, 'policy-violation')
  assert.equal(first.failure_code, 'policy-violation')
  const db = await tracker(repo)
  t.after(() => db.close())
  const evidence = JSON.parse(db.get('SELECT evidence_json FROM experiments WHERE ordinal = 1 AND run_id = ?', r.json.run_id).evidence_json)
  assert.ok(evidence.some((e) => e.includes('eval.mjs')), JSON.stringify(evidence))
  assert.equal(readLines(log).length, 2, 'the violating candidate was never evaluated (baseline + candidate 2)')
  assert.equal(r.json.best.metric, 9, 'the -1000 of the edited evaluator never counted')
  assert.equal(git(repo, 'show', `${r.json.branch}:eval.mjs`), readFileSync(join(repo, 'eval.mjs'), 'utf8').trim())

  // A path outside the globs is a violation too, and the run goes on.
  const r2 = cli(['run', '--json', spec2], { cwd: repo, env: { AR_EVAL_LOG: log } })
  assert.equal(r2.status, 0, r2.stderr)
  assert.deepEqual(r2.json.experiments.map((e) => e.state), ['accepted', 'policy-violation', 'policy-violation', 'accepted'])
  const ev2 = db.get('SELECT evidence_json FROM experiments WHERE ordinal = 2 AND run_id = ?', r2.json.run_id).evidence_json
  assert.match(ev2, /README\.md/)
  assert.equal(git(repo, 'rev-parse', 'main'), head)
})

test('bad specs exit 2 naming the field, the rule and the value', (t) => {
  const { root, repo } = makeRepo(t)
  const spec = specFile(root, {
    proposer: { command: 'node', args: ['p.mjs'] },
    metric_direction: 'down',
    mutable_glob: ['x'],
    timeout_ms: -5,
    evaluation: { command: 'node', args: ['eval.mjs'], cwd: '../outside' },
  })
  const r = cli(['run', spec], { cwd: repo })
  assert.equal(r.status, 2)
  assert.match(r.stderr, /metric_direction: must be "minimize" or "maximize" \(got "down"\)/)
  assert.match(r.stderr, /mutable_glob: .*did you mean `mutable_globs`\?/)
  assert.match(r.stderr, /timeout_ms: .* \(got -5\)/)
  assert.match(r.stderr, /evaluation\.cwd: must not contain a \.\. segment \(got "\.\.\/outside"\)/)
  const noProposer = cli(['run', specFile(root, {}, 'np.json')], { cwd: repo })
  assert.equal(noProposer.status, 2)
  assert.match(noProposer.stderr, /proposer: is required by the headless runner/)
  const badJson = join(root, 'bad.json')
  writeFileSync(badJson, '{"objective": ')
  assert.match(cli(['run', badJson], { cwd: repo }).stderr, /\(spec\): must be valid JSON/)
  const badConfig = join(root, 'config.json')
  writeFileSync(badConfig, JSON.stringify({ maxExperiment: 3 }))
  const c = cli(['run', '--config', badConfig, spec], { cwd: repo })
  assert.equal(c.status, 2)
  assert.match(c.stderr, /invalid config: maxExperiment is not a config key; did you mean maxExperiments\? \(got 3\)/)
  assert.equal(cli(['frobnicate'], { cwd: repo }).status, 2)
  assert.equal(cli(['--help']).status, 0)
  assert.ok(!existsSync(join(repo, '.git', 'dsh-autoresearch')), 'nothing was written')
})

test('list and show read the tracker: table, TSV and JSON', (t) => {
  const { root, repo } = makeRepo(t)
  assert.match(cli(['list'], { cwd: repo }).stdout, /no autoresearch runs/)
  const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 2 })
  const run = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(run.status, 0, run.stderr)
  const id = run.json.run_id
  const list = cli(['list'], { cwd: repo })
  assert.match(list.stdout, new RegExp(`${id}  exp-1 +budget-limited +10 +8 +2  score \\(minimize\\)`))
  const listJson = cli(['list', '--json'], { cwd: repo }).stdout.trim().split('\n').map((l) => JSON.parse(l))
  assert.equal(listJson[0].run_id, id)
  assert.equal(listJson[0].lock_held, false)
  const table = cli(['show', id], { cwd: repo })
  assert.match(table.stdout, new RegExp(`autoresearch run ${id}: budget-limited`))
  const tsv = cli(['show', '--tsv', id], { cwd: repo }).stdout
  assert.equal(tsv.split('\n')[0], 'ordinal\tkind\texperiment_id\tparent_commit\tcandidate_commit\tstate\tmetric\tdecision\tfailure_code\tfailure_message\thypothesis\tn\tstddev\tselection_metric\tholdout')
  assert.equal(tsv, readFileSync(join(repo, '.git', 'dsh-autoresearch', 'exports', `${id}.tsv`), 'utf8'), 'show --tsv equals the export')
  assert.equal(cli(['show', '--json', id], { cwd: repo }).json.best.metric, 8)
  const missing = cli(['show', '00000000-0000-4000-8000-000000000000'], { cwd: repo })
  assert.equal(missing.status, 1)
  assert.match(missing.stderr, /no run 00000000-0000-4000-8000-000000000000/)
  // A second run with the same tag may start once the first released its lock.
  assert.equal(cli(['run', '--json', spec], { cwd: repo }).status, 0)
  assert.equal(cli(['list', '--tsv'], { cwd: repo }).stdout.trim().split('\n').length, 3)
})

test('list migrates a tracker of the previous schema (v1) and shows its runs', async (t) => {
  const { repo } = makeRepo(t)
  const dir = join(repo, '.git', 'dsh-autoresearch')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const { DatabaseSync } = await import('node:sqlite')
  const db = new DatabaseSync(join(dir, 'tracker.sqlite'))
  const [v1] = JSON.parse(autoresearchMigrations(0))
  db.exec(v1.sql)
  db.exec(`PRAGMA user_version = ${v1.version}`)
  db.exec(`INSERT INTO runs (run_id, repository_id, run_tag, branch, worktree, start_commit, policy_json,
    policy_sha256, state, created_at, updated_at) VALUES ('0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9', 'r', 'old',
    'autoresearch/old', '/w', '${'a'.repeat(40)}', '{}', '${'b'.repeat(64)}', 'budget-limited', 1, 1)`)
  db.close()
  const r = cli(['list'], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9.*budget-limited/)
  const after = new DatabaseSync(join(dir, 'tracker.sqlite'), { readOnly: true })
  t.after(() => after.close())
  const newest = JSON.parse(autoresearchMigrations(0)).at(-1).version
  assert.equal(Number(after.prepare('PRAGMA user_version').get().user_version), newest)
})

test("the original's runs are listed and its live locks count toward the active-run limit", async (t) => {
  const { root, repo } = makeRepo(t)
  const gitDir = join(repo, '.git')
  const runId = '11111111-2222-4333-8444-555555555555'
  const { DatabaseSync } = await import('node:sqlite')
  mkdirSync(join(gitDir, 'dsh-autoresearch', 'runs', runId), { recursive: true })
  const tracker = new DatabaseSync(join(gitDir, 'dsh-autoresearch', 'runs', runId, 'tracker.sqlite'))
  tracker.exec(`CREATE TABLE runs (run_id TEXT PRIMARY KEY, run_tag TEXT, state TEXT, branch TEXT,
    best_metric REAL, created_at TEXT, updated_at TEXT) STRICT`)
  tracker.exec(`INSERT INTO runs VALUES ('${runId}', 'legacy', 'candidate-running', 'autoresearch/legacy', 9, '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z')`)
  tracker.close()
  const locks = new DatabaseSync(join(gitDir, 'dsh-autoresearch-locks.sqlite'))
  locks.exec('CREATE TABLE active_locks (repository_id TEXT, run_tag TEXT, run_id TEXT UNIQUE, PRIMARY KEY (repository_id, run_tag))')
  locks.exec(`INSERT INTO active_locks VALUES ('r', 'legacy', '${runId}')`)
  locks.close()

  const listed = cli(['list'], { cwd: repo })
  assert.equal(listed.status, 0, listed.stderr)
  assert.match(listed.stdout, new RegExp(`${runId}\\s+legacy\\s+candidate-running.*the original dsh-autoresearch's run, not finished`))
  const refused = cli(['run', '--json', specFile(root, { proposer: proposer(root, 'return score - 1') })], { cwd: repo })
  assert.equal(refused.json.blocker.code, 'lock-unavailable')
  assert.match(refused.json.blocker.message, /original/)
  // Its files are only read.
  const again = new DatabaseSync(join(gitDir, 'dsh-autoresearch-locks.sqlite'), { readOnly: true })
  t.after(() => again.close())
  assert.equal(again.prepare('SELECT count(*) AS n FROM active_locks').get().n, 1)
})
