// A hostile proposer (and candidate code run by the evaluator) with the headless runner, in
// scratch repositories: whatever they write inside the worktree, git never works on another
// repository or folder, never runs a program for them, nothing they start outlives its attempt,
// and the caller's checkout and a victim folder outside the run stay byte for byte as they were.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { alive, cli, git, proposer, readLines, scratch, setup, specFile, tracker } from './support/fixture.mjs'

async function evidenceOf(repo, runId) {
  const db = await tracker(repo)
  try {
    return db.all('SELECT ordinal, state, failure_code, evidence_json FROM experiments WHERE run_id = ? ORDER BY ordinal', runId)
      .map((e) => ({ ordinal: e.ordinal, state: e.state, code: e.failure_code, evidence: JSON.parse(e.evidence_json ?? '[]') }))
  } finally {
    db.close()
  }
}

test('.git pointed at the caller\'s own git dir: a violation, restored; the caller is untouched', async (t) => {
  const { root, repo, untouched } = setup(t)
  const prop = proposer(root, `
    if (ordinal === 1) fs.writeFileSync('.git', 'gitdir: ../../..\\n')
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, max_experiments: 2 })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.json.status, 'budget-limited')
  const [, first, second] = await evidenceOf(repo, r.json.run_id)
  assert.deepEqual(first, { ordinal: 1, state: 'policy-violation', code: 'policy-violation', evidence: ['git-link-changed: .git'] })
  assert.equal(second.state, 'accepted', 'the run went on')
  assert.match(readFileSync(join(r.json.worktree, '.git'), 'utf8'), /^gitdir: .*\/worktrees\/[^/]+\n$/)
  assert.equal(git(r.json.worktree, 'rev-parse', 'HEAD'), r.json.best.commit)
  untouched()
})

/** A crafted git dir in the worktree: the best commit as HEAD, the caller's objects as an
 * alternate, `core.worktree` at the victim, and a smudge/clean filter that writes a marker. */
const CRAFT = (victimDir, marker) => `
    const admin = fs.readFileSync('.git', 'utf8').slice(8).trim()
    const head = fs.readFileSync(admin + '/HEAD', 'utf8').trim()
    const common = fs.readFileSync(admin + '/commondir', 'utf8').trim()
    const objects = (common.startsWith('/') ? common : admin + '/' + common) + '/objects'
    fs.mkdirSync('src/evil.git/objects/info', { recursive: true })
    fs.mkdirSync('src/evil.git/refs', { recursive: true })
    fs.mkdirSync('src/evil.git/info', { recursive: true })
    fs.writeFileSync('src/evil.git/HEAD', head + '\\n')
    fs.writeFileSync('src/evil.git/objects/info/alternates', objects + '\\n')
    fs.writeFileSync('src/evil.git/config', '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ${victimDir}\\n[filter "x"]\\n\\tsmudge = touch ${marker}\\n\\tclean = touch ${marker}\\n')
    fs.writeFileSync('src/evil.git/info/attributes', '* filter=x\\n')
    fs.writeFileSync('.git', 'gitdir: src/evil.git\\n')`

test('a crafted git dir with core.worktree and filters: nothing deleted, nothing run', async (t) => {
  const { root, repo, victim: victimDir, untouched } = setup(t, { 'src/keep.txt': 'x\n' })
  const marker = join(root, 'pwned')
  const prop = proposer(root, `
    if (ordinal === 1) { ${CRAFT(victimDir, marker)} }
    return score - 1`)
  const spec = specFile(root, { proposer: prop, mutable_globs: ['score.txt', 'src/**'], max_experiments: 2 })
  const r = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const [, first, second] = await evidenceOf(repo, r.json.run_id)
  assert.equal(first.state, 'policy-violation')
  assert.deepEqual(first.evidence, ['git-link-changed: .git'])
  assert.equal(second.state, 'accepted')
  assert.equal(existsSync(marker), false, 'no filter ran')
  assert.equal(existsSync(join(r.json.worktree, 'src', 'evil.git')), false, 'the crafted dir was cleaned away')
  untouched()
})

test('candidate code run by the evaluator rewrites .git: that attempt fails, the worktree is restored', async (t) => {
  const sneaky = `import { readFileSync, writeFileSync } from 'node:fs'
const v = Number(readFileSync('score.txt', 'utf8').trim())
if (v < 10) writeFileSync('.git', 'gitdir: ../../..\\n')
console.log(JSON.stringify({ score: v }))
`
  const { root, repo, untouched } = setup(t, { 'eval.mjs': sneaky })
  const r = cli(['run', '--json', specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1 })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const [, first] = r.json.experiments
  assert.equal(first.failure_code, 'worktree-tampered')
  assert.match(first.failure_message, /git-link-changed: \.git/)
  assert.equal(r.json.best.metric, 10, 'the tampering candidate was not kept')
  untouched()
})

test('repository config that defines a filter refuses the run; allowlisted, a proposer .gitattributes is still a violation', async (t) => {
  const { root, repo, untouched, snapshot } = setup(t)
  const marker = join(root, 'pwned')
  git(repo, 'config', 'filter.x.clean', `sh -c 'touch ${marker}; cat'`)
  git(repo, 'config', 'filter.x.smudge', `sh -c 'touch ${marker}; cat'`)
  snapshot()
  const prop = proposer(root, `
    fs.writeFileSync('.gitattributes', '* filter=x\\n')
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, mutable_globs: ['score.txt', '.gitattributes'], max_experiments: 1 })], { cwd: repo })
  assert.equal(r.status, 1)
  assert.equal(r.json.blocker.code, 'git-config-unsafe')
  assert.deepEqual(r.json.blocker.evidence, [
    `filter.x.clean (from file:${join(repo, '.git', 'config')})`,
    `filter.x.smudge (from file:${join(repo, '.git', 'config')})`,
  ])
  assert.equal(existsSync(join(repo, '.git', 'dsh-autoresearch', 'worktrees')), false, 'refused before any worktree')
  const allowed = specFile(root, {
    proposer: prop, mutable_globs: ['score.txt', '.gitattributes'], max_experiments: 1,
    exceptional_allowlists: { gitConfig: ['filter.x.clean', 'filter.x.smudge'] },
  }, 'allowed.json')
  const r2 = cli(['run', '--json', allowed], { cwd: repo })
  assert.equal(r2.status, 0, r2.stderr)
  const [, first] = await evidenceOf(repo, r2.json.run_id)
  assert.deepEqual([first.state, first.evidence], ['policy-violation', ['protected-git: .gitattributes']])
  assert.equal(existsSync(marker), false, 'git add never saw the attributes')
  untouched()
})

test('a daemon that leaves its session and environment dies with its attempt', async (t) => {
  const pids = join(scratch(t), 'pids')
  // The proposer starts a daemon (setsid env -i) that keeps rewriting score.txt to -1000.
  const { root, repo, untouched } = setup(t)
  const daemon = `sleep 1; while :; do echo -1000 > score.txt 2>/dev/null; sleep 0.05; done`
  const prop = proposer(root, `
    if (ordinal === 1) {
      const { spawn } = await import('node:child_process')
      const c = spawn('setsid', ['env', '-i', 'PATH=' + process.env.PATH, 'sh', '-c', 'echo $$ >> ${pids}; ${daemon}'], { detached: true, stdio: 'ignore' })
      c.unref()
      await new Promise((r) => setTimeout(r, 300))
    }
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, max_experiments: 2 })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const daemons = readLines(pids).map(Number)
  t.after(() => daemons.forEach((pid) => { try { process.kill(pid, 'SIGKILL') } catch {} }))
  assert.equal(daemons.length, 1)
  assert.equal(alive(daemons[0]), false, 'the daemon was stopped with its attempt')
  assert.equal(r.json.best.metric, 8, 'no metric the daemon wrote was kept')
  assert.deepEqual(r.json.experiments.map((e) => e.metric), [10, 9, 8])
  assert.deepEqual(r.json.warnings ?? [], [], 'containment was proven (a cgroup per attempt)')
  untouched()
})

test('without cgroups the result says containment was best effort', (t) => {
  const { root, repo } = setup(t)
  const r = cli(['run', '--json', specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1 })], {
    cwd: repo, env: { DSH_AUTORESEARCH_CONTAINMENT: 'process-scan' },
  })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.json.warnings.length, 1)
  assert.match(r.json.warnings[0], /^process containment is best effort here \(process-scan\)/)
})

test('an evaluator grandchild that escapes with setsid is killed (cgroup)', (t) => {
  const pids = join(scratch(t), 'pids')
  const evil = `import { readFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
const v = Number(readFileSync('score.txt', 'utf8').trim())
spawn('sh', ['-c', 'setsid env -i sh -c "echo \\\\$\\\\$ >> ${pids}; sleep 300" &'], { stdio: 'ignore' })
await new Promise((r) => setTimeout(r, 300))
console.log(JSON.stringify({ score: v }))
`
  const { root, repo, untouched } = setup(t, { 'eval.mjs': evil })
  const r = cli(['run', '--json', specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1 })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const escaped = readLines(pids).map(Number)
  t.after(() => escaped.forEach((pid) => { try { process.kill(pid, 'SIGKILL') } catch {} }))
  assert.equal(escaped.length, 2, 'one per evaluation')
  for (const pid of escaped) assert.equal(alive(pid), false, `pid ${pid} outlived its attempt`)
  untouched()
})

test('environment values never reach the state root (random values, several runs)', async (t) => {
  for (let round = 0; round < 3; round++) {
    const { root, repo } = setup(t)
    const env = {}
    for (let i = 0; i < 6; i++) {
      // Printable, quotes and non-ASCII included; long enough not to occur by chance.
      env[`SECRET_${i}`] = `${randomBytes(12).toString('base64')}"é✓${randomBytes(6).toString('hex')}`
    }
    const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 2, environment: env })
    const r = cli(['run', '--json', spec], { cwd: repo })
    assert.equal(r.status, 0, r.stderr)
    const state = join(repo, '.git', 'dsh-autoresearch')
    const files = []
    const walk = (d) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name)
        if (e.isDirectory()) walk(p)
        else if (e.isFile()) files.push(p)
      }
    }
    walk(state)
    assert.ok(files.some((f) => f.endsWith('tracker.sqlite')))
    for (const file of files) {
      const bytes = readFileSync(file)
      for (const [name, value] of Object.entries(env)) {
        assert.equal(bytes.indexOf(Buffer.from(value)), -1, `${name}'s value is in ${file}`)
      }
    }
    // The values did reach the evaluator, and a resume must bring them again.
    const db = await tracker(repo)
    const policy = JSON.parse(db.get('SELECT policy_json FROM runs').policy_json)
    db.close()
    assert.deepEqual(Object.keys(policy.environment), Object.keys(env))
    assert.equal(policy.environment.SECRET_0.sha256, createHash('sha256').update(env.SECRET_0).digest('hex'))
  }
})

test('a resume gets environment values with --env; without them it is refused naming them', async (t) => {
  const check = `import { readFileSync } from 'node:fs'
if (process.env.TOKEN !== 'let-me-in') { console.error('wrong token'); process.exit(3) }
const v = Number(readFileSync('score.txt', 'utf8').trim())
if (process.env.AR_STOP && v < 10) { process.kill(process.ppid, 'SIGKILL'); setInterval(() => {}, 1000) }
console.log(JSON.stringify({ score: v }))
`
  const { root, repo } = setup(t, { 'eval.mjs': check })
  const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1, environment: { TOKEN: 'let-me-in' } })
  // The evaluator kills the runner during the candidate: the run is left to resume.
  const first = cli(['run', '--json', spec], { cwd: repo, env: { AR_STOP: '1' } })
  assert.equal(first.signal, 'SIGKILL')
  const runId = first.stderr.match(/run ([0-9a-f-]{36})/)[1]
  const refused = cli(['resume', '--json', runId], { cwd: repo })
  assert.equal(refused.status, 1)
  assert.equal(refused.json.blocker.code, 'environment-values-needed')
  assert.deepEqual(refused.json.blocker.evidence, ['TOKEN'])
  const wrong = cli(['resume', '--json', '--env', 'TOKEN', runId], { cwd: repo, env: { TOKEN: 'guess' } })
  assert.equal(wrong.json.blocker.code, 'policy-mismatch')
  const ok = cli(['resume', '--json', '--env', 'TOKEN', runId], { cwd: repo, env: { TOKEN: 'let-me-in' } })
  assert.equal(ok.status, 0, ok.stderr)
  assert.equal(ok.json.best.metric, 9)
})

test('protected paths: ecosystems\' manifests at any depth; globs over the evaluator\'s directory refused up front', async (t) => {
  const { root, repo, untouched } = setup(t, { 'src/lib.txt': 'a\n' })
  const files = ['src/Cargo.toml', 'src/go.mod', 'src/go.sum', 'src/pyproject.toml', 'src/requirements-dev.txt', 'src/poetry.lock', 'src/uv.lock', 'src/Gemfile.lock', 'src/npm-shrinkwrap.json', 'src/.npmrc']
  const prop = proposer(root, `
    for (const f of ${JSON.stringify(files)}) fs.writeFileSync(f, 'x\\n')
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, mutable_globs: ['score.txt', 'src/**'], max_experiments: 1 })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const [, first] = await evidenceOf(repo, r.json.run_id)
  assert.equal(first.state, 'policy-violation')
  assert.deepEqual(first.evidence, files.sort().map((f) => `protected-dependency: ${f}`))
  // json.py beside eval.py would shadow the module the evaluator imports: refused when read.
  const shadow = cli(['run', specFile(root, {
    proposer: prop, mutable_globs: ['**/*.py'], evaluation: { command: 'python3', args: ['eval.py'] },
  }, 'shadow.json')], { cwd: repo })
  assert.equal(shadow.status, 2)
  assert.match(shadow.stderr, /mutable_globs\[0\]: covers the evaluator's directory "\." \(it matches "json\.py", a file the evaluator could import before its own\); narrow the glob, or name the directory in exceptional_allowlists\.evaluators \(got "\*\*\/\*\.py"\)/)
  assert.match(shadow.stderr, /mutable_globs\[0\]: covers dependency files \(setup\.py, conftest\.py, sitecustomize\.py, usercustomize\.py\)/)
  untouched()
})

test('submodule paths, nested repositories and undecodable names fail one round each; the run goes on', async (t) => {
  const { root, repo, untouched, snapshot } = setup(t)
  // An uninitialized submodule at lib/sub (a gitlink in the tree, an empty directory on checkout).
  git(repo, 'update-index', '--add', '--cacheinfo', `160000,${git(repo, 'rev-parse', 'HEAD')},lib/sub`)
  git(repo, 'commit', '-q', '-m', 'submodule')
  git(repo, 'add', 'staged.txt')
  snapshot()
  const log = join(root, 'eval.log')
  const prop = proposer(root, `
    if (fs.readdirSync('lib/sub').length > 0) throw new Error('a byproduct reached the proposer: ' + fs.readdirSync('lib/sub'))
    if (ordinal === 1) fs.writeFileSync('lib/sub/x.py', 'print(1)\\n')
    if (ordinal === 2) { fs.mkdirSync('lib/nested'); (await import('node:child_process')).execFileSync('git', ['init', '-q', 'lib/nested']) }
    if (ordinal === 3) fs.writeFileSync(Buffer.from('lib/caf\\xe9.txt', 'latin1'), 'x')
    return score - 1`)
  const evaluator = `import { readFileSync, writeFileSync, existsSync } from 'node:fs'
if (existsSync('lib/sub')) writeFileSync('lib/sub/byproduct.txt', 'left by the evaluator')
const v = Number(readFileSync('score.txt', 'utf8').trim())
console.log(JSON.stringify({ score: v }))
`
  writeFileSync(join(root, 'eval-sub.mjs'), evaluator)
  const spec = specFile(root, {
    proposer: prop, mutable_globs: ['score.txt', 'lib/**'], max_experiments: 4, max_consecutive_failures: 5,
    evaluation: { command: 'node', args: [join(root, 'eval-sub.mjs')] },
  })
  const r = cli(['run', '--json', spec], { cwd: repo, env: { AR_EVAL_LOG: log } })
  assert.equal(r.status, 0, r.stderr)
  const rows = await evidenceOf(repo, r.json.run_id)
  assert.deepEqual(rows.map((e) => [e.state, e.evidence]), [
    ['accepted', []],
    ['policy-violation', ['inside-gitlink: lib/sub/x.py']],
    ['policy-violation', ['nested-git: lib/nested/.git']],
    ['policy-violation', ['undecodable-name: lib/caf\\xe9.txt']],
    ['accepted', []],
  ])
  assert.equal(r.json.best.metric, 9)
  assert.deepEqual(readdirSync(join(r.json.worktree, 'lib', 'sub')), [], 'the submodule path is empty again')
  untouched()
})

test('escape sequences in proposer text never reach the terminal raw', (t) => {
  const { root, repo } = setup(t)
  const file = join(root, 'ansi.mjs')
  writeFileSync(file, `import * as fs from 'node:fs'
fs.readFileSync(0)
const score = Number(fs.readFileSync('score.txt', 'utf8').trim())
fs.writeFileSync('score.txt', (score - 1) + '\\n')
console.log(JSON.stringify({ hypothesis: 'x\\u001b]0;pwned\\u0007\\u009b2J\\u202e', summary: 'y\\u001b[31mred' }))
`)
  const spec = specFile(root, { proposer: { command: 'node', args: [file] }, max_experiments: 1 })
  const r = cli(['run', '--json', spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  for (const out of [r.stdout, r.stderr, cli(['show', r.json.run_id], { cwd: repo }).stdout, cli(['list'], { cwd: repo }).stdout,
    cli(['show', '--tsv', r.json.run_id], { cwd: repo }).stdout]) {
    assert.doesNotMatch(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
  }
  assert.equal(r.json.experiments[1].hypothesis, 'x\u001b]0;pwned\u0007\u009b2J\u202e', 'the JSON still decodes to the text')
  assert.match(cli(['show', r.json.run_id], { cwd: repo }).stdout, /x\\u001b\]0;pwned\\u0007\\u009b2J\\u202e/)
})
