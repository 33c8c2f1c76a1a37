// A hostile proposer's paths and file contents with the headless runner, in scratch
// repositories: a path git would refuse to commit fails that round by name (the run goes on, it
// is not blocked `git-failed`), and `show --diff` never prints a candidate's escape sequences raw.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, git, makeRepo, proposer, specFile, tracker } from './support/fixture.mjs'

/** Every file and directory under `dir`, with each file's SHA-256, sorted. */
function tree(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => {
      const path = join(e.parentPath, e.name)
      return e.isDirectory() ? `${path}/` : `${path} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
    })
    .sort()
}

test('paths git would refuse to commit fail one round each by name; the run goes on', async (t) => {
  const { root, repo } = makeRepo(t)
  // An uninitialized submodule at lib/sub: a gitlink in the tree, an empty directory on checkout.
  git(repo, 'update-index', '--add', '--cacheinfo', `160000,${git(repo, 'rev-parse', 'HEAD')},lib/sub`)
  git(repo, 'commit', '-q', '-m', 'submodule')
  const victim = join(root, 'victim')
  mkdirSync(victim)
  writeFileSync(join(victim, 'precious.txt'), 'do not delete\n')
  const victimBefore = tree(victim)
  const callerBefore = [git(repo, 'rev-parse', 'HEAD'), git(repo, 'ls-files', '--stage'), git(repo, 'status', '--porcelain')]
  const long = Array.from({ length: 19 }, (_, i) => `${i}`.padEnd(200, 'd')).join('/')
  const prop = proposer(root, `
    if (ordinal === 1) { fs.mkdirSync('src/.GIT', { recursive: true }); fs.writeFileSync('src/.GIT/config', '[core]\\n') }
    if (ordinal === 2) { fs.mkdirSync('src/git~1', { recursive: true }); fs.writeFileSync('src/git~1/HEAD', 'x\\n') }
    if (ordinal === 3) { fs.mkdirSync('src/${long}', { recursive: true }); fs.writeFileSync('src/${long}/x.txt', 'x\\n') }
    if (ordinal === 4) { fs.rmSync('lib', { recursive: true }); fs.symlinkSync(${JSON.stringify(victim)}, 'lib') }
    return score - 1`)
  const spec = specFile(root, {
    proposer: prop,
    mutable_globs: ['score.txt', 'src/**', 'lib/**'],
    exceptional_allowlists: { submodules: ['lib/sub'] },
    max_experiments: 5,
    max_consecutive_failures: 5,
  })
  const r = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.json.status, 'budget-limited', JSON.stringify(r.json.blocker))
  const db = await tracker(repo)
  const rows = db.all('SELECT state, evidence_json FROM experiments WHERE run_id = ? ORDER BY ordinal', r.json.run_id)
  db.close()
  assert.deepEqual(rows.map((e) => [e.state, JSON.parse(e.evidence_json ?? '[]').map((x) => x.slice(0, 40))]), [
    ['accepted', []],
    ['policy-violation', ['git-invalid-path: src/.GIT/config']],
    ['policy-violation', ['git-invalid-path: src/git~1/HEAD']],
    ['policy-violation', [`path-too-long: src/${long}`.slice(0, 40)]],
    ['policy-violation', ['directory-replaced: lib']],
    ['accepted', []],
  ])
  assert.equal(r.json.best.metric, 9)
  assert.deepEqual(tree(victim), victimBefore, 'the folder the symlink pointed at is unchanged')
  assert.deepEqual([git(repo, 'rev-parse', 'HEAD'), git(repo, 'ls-files', '--stage'), git(repo, 'status', '--porcelain')], callerBefore)
})

test('build, test-runner and toolchain files are protected; globs that shadow an import are refused when read', async (t) => {
  const { root, repo } = makeRepo(t)
  const files = ['src/.env', 'src/CMakeLists.txt', 'src/Makefile', 'src/build.rs', 'src/jest.config.js', 'src/node_modules/x/index.js',
    'src/nuget.config', 'src/pytest.ini', 'src/tsconfig.json', 'src/vendor/modules.txt']
  const prop = proposer(root, `
    for (const f of ${JSON.stringify(files)}) { fs.mkdirSync(f.slice(0, f.lastIndexOf('/')), { recursive: true }); fs.writeFileSync(f, 'x\\n') }
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, mutable_globs: ['score.txt', 'src/**'], max_experiments: 1 })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const db = await tracker(repo)
  const row = db.get('SELECT state, evidence_json FROM experiments WHERE run_id = ? AND ordinal = 1', r.json.run_id)
  db.close()
  assert.equal(row.state, 'policy-violation')
  assert.deepEqual(JSON.parse(row.evidence_json), files.map((f) => `protected-dependency: ${f}`))
  // A sourceless json.pyc or a json/ package beside eval.py would be imported before the stdlib's.
  const shadow = cli(['run', specFile(root, {
    proposer: prop, mutable_globs: ['*.pyc', 'json/**', '*/__init__.py'], evaluation: { command: 'python3', args: ['eval.py'] },
  }, 'shadow.json')], { cwd: repo })
  assert.equal(shadow.status, 2)
  const covers = (i, probe, glob) => `mutable_globs[${i}]: covers the evaluator's directory "." (it matches "${probe}", a file the evaluator could import before its own); narrow the glob, or name the directory in exceptional_allowlists.evaluators (got "${glob}")`
  assert.deepEqual(shadow.stderr.trim().split('\n').slice(1).map((l) => l.trim()), [
    covers(0, 'json.pyc', '*.pyc'), covers(1, 'json/__init__.py', 'json/**'), covers(2, 'json/__init__.py', '*/__init__.py'),
  ])
})

test('show --diff prints a candidate file\'s escape sequences escaped', (t) => {
  const { root, repo } = makeRepo(t)
  const prop = proposer(root, `
    fs.writeFileSync('notes.md', 'title\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eexe.txt\\ttab\\n')
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, mutable_globs: ['score.txt', 'notes.md'], max_experiments: 1 })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const diff = cli(['show', '--diff', '1', r.json.run_id], { cwd: repo })
  assert.equal(diff.status, 0, diff.stderr)
  assert.doesNotMatch(diff.stdout, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
  assert.match(diff.stdout, /^\+title\\u001b\]0;pwned\\u0007\\u001b\[2J\\u009b31m\\u202eexe\.txt\ttab$/m)
})
