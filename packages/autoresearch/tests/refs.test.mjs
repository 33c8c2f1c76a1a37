// No lost diffs: every candidate commit keeps a ref refs/autoresearch/<run_id>/candidate-<n>, so
// `git gc --prune=now` keeps a rejected candidate's commit and `show --diff` prints it; without
// its ref the same commit is pruned (the ref is what keeps it).
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, git, makeRepo, proposer, specFile } from './support/fixture.mjs'

const exists = (repo, commit) => {
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: repo, stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

test('every candidate keeps a ref; gc keeps a rejected diff and show --diff prints it', (t) => {
  const { root, repo } = makeRepo(t)
  // 1 kept (8), 2 rejected (13), 3 rejected (12), 4 kept (7); round 5 edits nothing: no commit.
  const prop = proposer(root, 'return [undefined, score - 2, score + 5, score + 4, score - 1][ordinal]')
  const spec = specFile(root, { proposer: prop, max_experiments: 5, max_consecutive_failures: 5 })
  const r = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const { run_id: id, experiments } = r.json
  assert.deepEqual(experiments.map((e) => e.outcome), ['baseline', 'kept', 'rejected', 'rejected', 'kept', 'failed'])
  const refs = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', `refs/autoresearch/${id}/`).split('\n')
  assert.deepEqual(refs, [1, 2, 3, 4].map((n) => `refs/autoresearch/${id}/candidate-${n} ${experiments[n].candidate_commit}`))

  // Without its ref, rejected candidate 3 is unreachable: gc prunes it. Candidate 2 keeps its ref.
  git(repo, 'update-ref', '-d', `refs/autoresearch/${id}/candidate-3`)
  git(repo, 'reflog', 'expire', '--expire=now', '--all')
  git(repo, 'gc', '--quiet', '--prune=now')
  assert.equal(exists(repo, experiments[3].candidate_commit), false, 'an unreferenced candidate is pruned')
  assert.equal(exists(repo, experiments[2].candidate_commit), true, 'the ref keeps the rejected candidate')

  const diff = cli(['show', '--diff', '2', id], { cwd: repo })
  assert.equal(diff.status, 0, diff.stderr)
  assert.match(diff.stdout, /^diff --git a\/score.txt b\/score.txt\n/)
  assert.match(diff.stdout, /\n-8\n\+13\n$/)
  assert.equal(cli(['show', '--diff', experiments[2].experiment_id, id], { cwd: repo }).stdout, diff.stdout)

  const none = cli(['show', '--diff', '5', id], { cwd: repo })
  assert.equal(none.status, 1)
  assert.match(none.stderr, /show --diff: experiment 5 has no candidate commit \(its round ended candidate-empty before committing\)/)
  const unknown = cli(['show', '--diff', '9', id], { cwd: repo })
  assert.equal(unknown.status, 1)
  assert.match(unknown.stderr, /show --diff: no experiment "9" \(ordinals 0-5, or an experiment id\)/)
  assert.equal(cli(['show', '--json', '--diff', '1', id], { cwd: repo }).status, 2)
})

test('retention removes the worktree but keeps the candidate refs: show --diff still works', (t) => {
  const { root, repo } = makeRepo(t)
  const prop = proposer(root, 'return [undefined, score - 2, score + 5][ordinal]')
  const spec = specFile(root, { proposer: prop, max_experiments: 2 })
  const config = join(root, 'config.json')
  writeFileSync(config, JSON.stringify({ retainWorktrees: false }))
  const r = cli(['run', '--json', '--config', config, spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.json.removed.worktree, true)
  assert.equal(existsSync(r.json.worktree), false)
  const refs = git(repo, 'for-each-ref', '--format=%(refname:strip=3)', `refs/autoresearch/${r.json.run_id}/`)
  assert.deepEqual(refs.split('\n'), ['candidate-1', 'candidate-2'])
  const diff = cli(['show', '--config', config, '--diff', '2', r.json.run_id], { cwd: repo })
  assert.match(diff.stdout, /\n-8\n\+13\n$/)
})
