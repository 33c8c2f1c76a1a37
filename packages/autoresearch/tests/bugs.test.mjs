// The driver halves of the original's bugs (section 11.1 of the study; the core's halves are the
// `bug_N_*` scenario tests in crates/autoresearch): each runs the real CLI on a real repository.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVAL_MJS, cli, git, makeRepo, proposer, readLines, specFile, tracker } from './support/fixture.mjs'

test('bug 1: the evaluator gets its arguments exactly, duplicates, spaces and empties kept', (t) => {
  const { root, repo } = makeRepo(t)
  const log = join(root, 'eval.log')
  const args = ['eval.mjs', '--seed', '1', '--trials', '1', ' spaced ', '']
  const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1, evaluation: { command: 'node', args } })
  const r = cli(['run', '--json', spec], { cwd: repo, env: { AR_EVAL_LOG: log } })
  assert.equal(r.status, 0, r.stderr)
  for (const line of readLines(log)) assert.deepEqual(JSON.parse(line).argv, args.slice(1))
})

test('bug 3: environment values in the metric line never corrupt it; artifacts are raw and private', async (t) => {
  const evalSeed = `import { readFileSync } from 'node:fs'
const v = Number(readFileSync('score.txt', 'utf8').trim())
console.log('seed', process.env.SEED, 'token', process.env.API_TOKEN_X)
console.log(JSON.stringify({ score: v, seed: Number(process.env.SEED) }))
`
  const { root, repo } = makeRepo(t, { 'eval.mjs': evalSeed, 'score.txt': '0.9\n' })
  const spec = specFile(root, {
    proposer: proposer(root, 'return 0.5'),
    max_experiments: 1,
    environment: { SEED: '0.5', API_TOKEN_X: 'not-a-secret-here' },
  })
  const r = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.json.best.metric, 0.5)
  assert.equal(r.json.experiments[1].decision, 'accept')
  const stdout = r.json.artifacts.filter((a) => a.kind === 'stdout').at(-1)
  const bytes = readFileSync(stdout.location)
  assert.equal(bytes.toString(), 'seed 0.5 token not-a-secret-here\n{"score":0.5,"seed":0.5}\n', 'the raw stream, nothing redacted')
  assert.equal(createHash('sha256').update(bytes).digest('hex'), stdout.sha256)
  assert.equal(stdout.size_bytes, bytes.length)
  assert.equal(statSync(stdout.location).mode & 0o777, 0o600)
  assert.equal(statSync(join(stdout.location, '..')).mode & 0o777, 0o700)
  const db = await tracker(repo)
  t.after(() => db.close())
  const env = db.get('SELECT env_json FROM attempts LIMIT 1').env_json
  assert.ok(!env.includes('0.5') && !env.includes('not-a-secret-here'), env)
  assert.match(env, /"SEED":"sha256:[0-9a-f]{64}"/)
})

// A tracked edit by the evaluator fails its attempt (worktree-tampered): containment.test.mjs.
test('bug 6: evaluator byproducts (untracked, ignored) never reach a candidate', (t) => {
  const messy = `import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
const v = Number(readFileSync('score.txt', 'utf8').trim())
writeFileSync('results.json', JSON.stringify({ v }))
mkdirSync('__pycache__', { recursive: true })
writeFileSync('__pycache__/m.pyc', 'bytes')
console.log(JSON.stringify({ score: v }))
`
  const { root, repo } = makeRepo(t, { 'eval.mjs': messy, '.gitignore': '__pycache__/\n' })
  const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 3, mutable_globs: ['score.txt', 'results.json'] })
  const r = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(r.json.experiments.map((e) => e.decision), ['accept', 'accept', 'accept', 'accept'])
  for (const e of r.json.experiments.slice(1)) {
    assert.equal(git(repo, 'diff-tree', '--no-commit-id', '--name-only', '-r', e.candidate_commit), 'score.txt', 'results.json matches a glob but was never part of a proposal')
  }
  assert.equal(git(r.json.worktree, 'status', '--porcelain', '--ignored'), '', 'the worktree is clean after the last evaluation')
})

test('bug 8: spawn failures are recorded outcomes; resume reports instead of looping', async (t) => {
  const { root, repo } = makeRepo(t)
  const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), evaluation: { command: 'no-such-evaluator-xyz', args: [] } })
  const r = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(r.status, 1)
  assert.equal(r.json.status, 'baseline-blocked')
  assert.equal(r.json.blocker.code, 'spawn')
  assert.match(r.json.blocker.message, /no-such-evaluator-xyz/)
  const db = await tracker(repo)
  t.after(() => db.close())
  assert.equal(db.get('SELECT failure_code FROM attempts').failure_code, 'spawn')
  const again = cli(['resume', '--json', r.json.run_id], { cwd: repo })
  assert.equal(again.json.status, 'baseline-blocked')
  assert.equal(db.get('SELECT count(*) AS n FROM attempts').n, 1, 'nothing was re-run')

  // A candidate that deletes the evaluator's cwd fails its round; the run continues.
  const b = makeRepo(t, {
    'bench/.keep': '',
    'eval.mjs': EVAL_MJS.replace("readFileSync('score.txt'", "readFileSync(new URL('score.txt', import.meta.url)"),
  })
  const deleter = proposer(b.root, `
    if (ordinal === 1) fs.rmSync('bench', { recursive: true })
    return score - 1`)
  const spec2 = specFile(b.root, {
    proposer: deleter, max_experiments: 2, mutable_globs: ['score.txt', 'bench/**'], exceptional_allowlists: { evaluators: ['bench'] },
    evaluation: { command: 'node', args: ['../eval.mjs'], cwd: 'bench' },
  })
  const r2 = cli(['run', '--json', spec2], { cwd: b.repo })
  assert.equal(r2.status, 0, r2.stderr)
  const [, gone, next] = r2.json.experiments
  assert.equal(gone.failure_code, 'spawn')
  assert.match(gone.failure_message, /does not exist in the worktree/)
  assert.equal(next.decision, 'accept')
})

test('bug 9: run ids are checked before any file exists; a relative repository is the caller\'s', (t) => {
  const { root, repo } = makeRepo(t)
  for (const bad of ['../..', '..', 'x/../../etc', '0B1C2D3E-4F50-4617-8293-A4B5C6D7E8F9']) {
    for (const command of ['resume', 'show', 'abandon']) {
      const r = cli([command, bad], { cwd: repo })
      assert.equal(r.status, 2, `${command} ${bad}`)
      assert.match(r.stderr, /RUN_ID must be a lowercase UUID/)
    }
  }
  const resumeSpec = specFile(root, { resume_run_id: '../..', run_tag: null }, 'resume.json')
  const rs = cli(['run', resumeSpec], { cwd: repo })
  assert.equal(rs.status, 2)
  assert.match(rs.stderr, /resume_run_id: must be a lowercase UUID/)
  assert.ok(!existsSync(join(repo, '.git', 'dsh-autoresearch')), 'no state was created')
  // From the parent directory, "repository": "repo" means ./repo of the caller.
  const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1, repository: 'repo' }, 'rel.json')
  const r = cli(['run', '--json', spec], { cwd: root })
  assert.equal(r.status, 0, r.stderr)
  assert.ok(r.json.tracker.startsWith(join(repo, '.git')), r.json.tracker)
  // From a subdirectory, the repository is found upwards.
  mkdirSync(join(repo, 'deep', 'er'), { recursive: true })
  const sub = cli(['list', '--json'], { cwd: join(repo, 'deep', 'er') })
  assert.equal(JSON.parse(sub.stdout.trim()).run_id, r.json.run_id)
})

test('bug 10: cleanupWorktreesOnSuccess removes (forced) only after success; failed runs keep theirs', (t) => {
  const { root, repo } = makeRepo(t)
  const config = join(root, 'config.json')
  // retainWorktrees (true) keeps the others; retainWorktrees: false would remove every one.
  writeFileSync(config, JSON.stringify({ cleanupWorktreesOnSuccess: true }))
  const ok = cli(['run', '--json', '--config', config, specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1 })], { cwd: repo })
  assert.equal(ok.status, 0, ok.stderr)
  assert.equal(existsSync(ok.json.worktree), false)
  assert.ok(!git(repo, 'worktree', 'list').includes(ok.json.run_id))
  assert.equal(git(repo, 'rev-parse', ok.json.branch), ok.json.best.commit, 'the branch keeps the result')
  const failing = cli(['run', '--json', '--config', config, specFile(root, {
    proposer: proposer(root, 'return score - 1'), run_tag: 'exp-2', evaluation: { command: 'node', args: ['-e', 'process.exit(3)'] },
  }, 'fail.json')], { cwd: repo })
  assert.equal(failing.json.status, 'baseline-blocked')
  assert.equal(existsSync(failing.json.worktree), true, 'a failed run keeps its worktree as evidence')
})
