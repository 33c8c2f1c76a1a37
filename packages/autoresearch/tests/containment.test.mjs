// A hostile candidate against the packed runner, second round: each attack of the containment
// issue in a scratch repository, with a victim folder outside the run that stays byte for byte
// unchanged. Attacks that need root, cgroup v2 and util-linux's unshare and setpriv (what makes an
// attempt `confined`) skip with a message where the machine has none of that.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cgroupBase, containment } from '../lib/contain.js'
import { terminate } from '../lib/process.js'
import {
  RUN_ID_RE, alive, cli, cliAsync, git, hangSetup, proposer, readLines, scratch, setup, specFile, waitFor,
} from './support/fixture.mjs'

const confined = containment(['TEST_MARKER', 'probe'])?.kind === 'confined'
const needsConfinement = confined ? false : 'needs root, cgroup v2, unshare and setpriv (an attempt cannot be confined here)'
const canUnsharePid = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']).status === 0

const groupsLeft = (runId) => readdirSync(cgroupBase()).filter((n) => n.startsWith(`dsh-autoresearch-${runId}`))

/** A proposer that, in round 1, starts a daemon that tries every way out of its cgroup (a new
 * cgroup2 mount, unmounting the one that shows only its group, a child group, the mount's root,
 * its own path), then leaves its session and environment and keeps writing -1000 into score.txt. */
function escapingProposer(root, pids) {
  const mnt = join(root, 'cgroup2-mount')
  const daemon = `mkdir -p ${mnt}; mount -t cgroup2 none ${mnt} 2>/dev/null && echo $$ > ${mnt}/cgroup.procs 2>/dev/null
for m in $(sed -n 's/.* - cgroup2 .*//;t;s/^[^ ]* [^ ]* [^ ]* [^ ]* \\([^ ]*\\) .* - cgroup2 .*/\\1/p' /proc/self/mountinfo) $(awk '{ for (i = 1; i <= NF; i++) if ($i == "-" && $(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo); do
  umount "$m" 2>/dev/null
  mkdir "$m/escape" 2>/dev/null && echo $$ > "$m/escape/cgroup.procs" 2>/dev/null
  echo $$ > "$m/cgroup.procs" 2>/dev/null
  cg=$(sed -n 's/^0:://p' /proc/self/cgroup); echo $$ > "$m$cg/cgroup.procs" 2>/dev/null
done
exec setsid env -i PATH="$PATH" sh -c 'echo $$ >> ${pids}; sleep 1; while :; do echo -1000 > score.txt 2>/dev/null; sleep 0.05; done'`
  return proposer(root, `
    if (ordinal === 1) {
      const { spawn } = await import('node:child_process')
      spawn('sh', ['-c', ${JSON.stringify(daemon)}], { detached: true, stdio: 'ignore' }).unref()
      await new Promise((r) => setTimeout(r, 500))
    }
    return score - 1`)
}

test('H1: a daemon that tries to leave its cgroup (a new mount, an unmount, a child group, the mount\'s root, its own path) dies with its attempt', { skip: needsConfinement }, (t) => {
  const { root, repo, untouched } = setup(t)
  const pids = join(root, 'pids')
  const r = cli(['run', '--json', specFile(root, { proposer: escapingProposer(root, pids), max_experiments: 2 })], { cwd: repo })
  const daemons = readLines(pids).map(Number)
  t.after(() => daemons.forEach((pid) => { try { process.kill(pid, 'SIGKILL') } catch {} }))
  assert.equal(r.status, 0, r.stderr)
  assert.equal(daemons.length, 1)
  assert.equal(alive(daemons[0]), false, 'the daemon was stopped with its attempt')
  assert.deepEqual(r.json.experiments.map((e) => e.metric), [10, 9, 8])
  assert.deepEqual(r.json.warnings ?? [], [], 'containment was proven')
  assert.deepEqual(groupsLeft(r.json.run_id), [], 'every attempt group was removed')
  untouched()
})

test('a tracked file the evaluation changes fails that attempt worktree-tampered; the run goes on', (t) => {
  const { root, repo, snapshot, untouched } = setup(t)
  const flag = join(root, 'touched-once')
  const evil = `import { existsSync, readFileSync, appendFileSync, writeFileSync } from 'node:fs'
const v = Number(readFileSync('score.txt', 'utf8').trim())
if (v === 9 && !existsSync(${JSON.stringify(flag)})) {
  writeFileSync(${JSON.stringify(flag)}, '')
  appendFileSync('README.md', 'touched\\n')
}
console.log(JSON.stringify({ score: v }))
`
  writeFileSync(join(repo, 'eval.mjs'), evil)
  git(repo, 'commit', '-qm', 'an evaluator that touches README.md once', 'eval.mjs')
  snapshot()
  const r = cli(['run', '--json', specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 2 })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const [, touched, next] = r.json.experiments
  assert.equal(touched.failure_code, 'worktree-tampered')
  assert.match(touched.failure_message, /tracked-changed: README\.md/)
  assert.equal(next.metric, 9, 'the next round starts from the restored best')
  assert.equal(git(r.json.worktree, 'status', '--porcelain'), '')
  untouched()
})

test('H2 and M1: a live run is refused by resume and abandon (naming its host), also from another PID namespace; nothing is signalled', async (t) => {
  const { repo, pids, env, config, spec, untouched } = hangSetup(t)
  const runner = cliAsync(['run', '--config', config, spec], { cwd: repo, env })
  t.after(() => runner.child.kill('SIGKILL'))
  await waitFor(() => readLines(pids).length >= 3, 30_000, 'the hung evaluator tree')
  const runId = runner.stderr().match(RUN_ID_RE)[1]
  const tree = readLines(pids).map(Number)
  const worktreeHead = () => git(repo, 'rev-parse', `refs/heads/${git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/autoresearch/')}`)
  const headBefore = worktreeHead()

  for (const command of ['resume', 'abandon']) {
    const r = cli([command, '--json', '--config', config, runId], { cwd: repo, env })
    assert.equal(r.status, 1, r.stderr)
    assert.equal(r.json.blocker.code, 'run-live')
    assert.match(r.json.blocker.message, new RegExp(`its host is still driving it.*${command} it with force`))
    assert.deepEqual(r.json.blocker.evidence, [`host ${(await import('node:os')).hostname()} pid ${runner.child.pid}`])
  }
  if (canUnsharePid) {
    for (const command of ['resume', 'abandon']) {
      const r = spawnSync('unshare', ['-p', '-f', '--mount-proc', process.execPath, join(import.meta.dirname, '../bin/dsh-autoresearch.js'), command, '--json', '--config', config, runId], {
        cwd: repo, encoding: 'utf8', env: { ...process.env, ...env },
      })
      assert.equal(r.status, 1, `exit ${r.status} ${r.signal}: ${r.stderr}`)
      const json = JSON.parse(r.stdout.trim().split('\n').at(-1))
      assert.equal(json.blocker.code, 'run-live')
      assert.match(json.blocker.message, /cannot be told from here \(another machine, boot or PID namespace\)/)
    }
  } else {
    t.diagnostic('skipped the PID-namespace half: unshare -p cannot run here')
  }
  assert.ok(alive(runner.child.pid), 'the runner was not signalled')
  for (const pid of tree) assert.ok(alive(pid), `evaluator pid ${pid} was signalled`)
  assert.equal(worktreeHead(), headBefore)

  // The operator's explicit force takes it over.
  const forced = cli(['abandon', '--json', '--force', '--config', config, runId], { cwd: repo, env })
  assert.equal(forced.json.status, 'cancelled', forced.stderr)
  for (const pid of tree) assert.equal(alive(pid), false, `pid ${pid} outlived the forced abandon`)
  untouched()
})

test('H2: DSH starting inside a PID namespace while a run is live signals neither itself nor the run', { skip: !canUnsharePid && 'unshare -p cannot run here' }, async (t) => {
  const { repo, pids, env, config, spec, untouched } = hangSetup(t)
  const runner = cliAsync(['run', '--config', config, spec], { cwd: repo, env })
  t.after(() => runner.child.kill('SIGKILL'))
  await waitFor(() => readLines(pids).length >= 3, 30_000, 'the hung evaluator tree')
  const runId = runner.stderr().match(RUN_ID_RE)[1]
  const host = join(scratch(t), 'host.mjs')
  writeFileSync(host, `import { mount } from ${JSON.stringify(new URL('./support/dsh.mjs', import.meta.url).href)}
const { prompts, fiber } = await mount({ terminationGraceMs: 300, recoverRepositories: [${JSON.stringify(repo)}] })
const deadline = Date.now() + 30000
while (!prompts.text('tool:autoresearch')?.includes(${JSON.stringify(runId)}) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
console.log(JSON.stringify(prompts.text('tool:autoresearch') ?? null))
await fiber.dispose()
`)
  const r = spawnSync('unshare', ['-p', '-f', '--mount-proc', process.execPath, host], { cwd: repo, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, `the host ended ${r.signal ?? `with ${r.status}`}: ${r.stderr}`)
  const note = JSON.parse(r.stdout.trim().split('\n').at(-1))
  assert.match(note, new RegExp(`hold their repository lock[^]*${runId}`))
  assert.ok(alive(runner.child.pid), 'the runner was not signalled')
  for (const pid of readLines(pids).map(Number)) assert.ok(alive(pid), `evaluator pid ${pid} was signalled`)
  untouched()
})

// Slot 0's candidate code writes 999 into slot 1's score.txt while slot 1 is evaluated.
const SLOW_EVAL = `import { readFileSync, appendFileSync } from 'node:fs'
await import('./hook.mjs')
await new Promise((r) => setTimeout(r, 1000))
const v = Number(readFileSync('score.txt', 'utf8').trim())
console.log(JSON.stringify({ score: v }))
`

test('M3: one slot cannot write another slot\'s worktree while it is evaluated', { skip: needsConfinement }, (t) => {
  const { root, repo, untouched } = setup(t, { 'eval.mjs': SLOW_EVAL, 'hook.mjs': '' })
  const log = join(root, 'hook.log')
  const hook = `import { writeFileSync, appendFileSync } from 'node:fs'
const target = process.cwd() + '-slot-1/score.txt'
const end = Date.now() + 2500
let outcome = 'never tried'
while (Date.now() < end) {
  try { writeFileSync(target, '999\\n'); outcome = 'written' } catch (e) { outcome = e.code }
  await new Promise((r) => setTimeout(r, 20))
}
appendFileSync(${JSON.stringify(log)}, outcome + '\\n')
`
  const prop = proposer(root, `
    if (ordinal === 1) { fs.writeFileSync('hook.mjs', ${JSON.stringify(hook)}); return 9 }
    return 8`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, max_experiments: 2, parallelism: 2, mutable_globs: ['score.txt', 'hook.mjs'] })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(readLines(log), ['EROFS'], 'the write was refused')
  const honest = r.json.experiments.find((e) => e.ordinal === 2)
  assert.equal(honest.metric, 8, 'slot 1 measured its own candidate')
  assert.equal(r.json.best.metric, 8)
  untouched()
})

test('M4: no evaluator holds the environment values while a proposer runs, so none can read them', (t) => {
  const { root, repo, untouched } = setup(t, { 'eval.mjs': SLOW_EVAL.replace("await import('./hook.mjs')\n", '') })
  const secret = randomBytes(12).toString('hex')
  const log = join(root, 'scan.log')
  const prop = proposer(root, `
    if (ordinal === 2) {
      const end = Date.now() + 4000
      let sawEvaluator = false
      let found = ''
      while (Date.now() < end && !found) {
        for (const pid of fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n))) {
          try {
            if (fs.readFileSync('/proc/' + pid + '/cmdline', 'latin1').includes('eval.mjs')) sawEvaluator = true
            const env = fs.readFileSync('/proc/' + pid + '/environ', 'latin1')
            if (env.includes('DSH_AUTORESEARCH_ATTEMPT=')) found = /AR_SECRET=([^\\0]*)/.exec(env)?.[1] ?? ''
          } catch {}
        }
        if (sawEvaluator && !found) await new Promise((r) => setTimeout(r, 300))
        if (sawEvaluator) break
        await new Promise((r) => setTimeout(r, 20))
      }
      fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ sawEvaluator, found }) + '\\n')
      console.log(JSON.stringify({ hypothesis: 'leak ' + found, summary: 'round 2' }))
      process.exit(0)
    }
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, max_experiments: 2, parallelism: 2, environment: { AR_SECRET: secret } })], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const [scan] = readLines(log).map((l) => JSON.parse(l))
  assert.deepEqual(scan, { sawEvaluator: false, found: '' }, 'no evaluator ran beside the proposer')
  assert.deepEqual(r.json.experiments.map((e) => e.metric), [10, 9, null])
  const state = join(repo, '.git', 'dsh-autoresearch')
  const files = []
  const walk = (d) => { for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name)) : files.push(join(d, e.name)) }
  walk(state)
  for (const file of files) assert.ok(!readFileSync(file).includes(secret), `the secret is in ${file}`)
  if (confined) assert.deepEqual(r.json.warnings ?? [], [])
  else assert.match(r.json.warnings.join('\n'), /environment values can be read by a process a proposer leaves running/)
  untouched()
})

test('M5: a worktree swapped for a symlink to another folder is never reset, cleaned or removed through', (t) => {
  for (const kind of [confined ? 'confined' : undefined, 'process-scan'].filter(Boolean)) {
    const hook = `import { renameSync, symlinkSync } from 'node:fs'
const wt = process.cwd()
try { renameSync(wt, wt + '.moved'); symlinkSync(process.env.AR_VICTIM, wt) } catch {}
`
    const { root, repo, victim: victimDir, untouched } = setup(t, { 'eval.mjs': SLOW_EVAL, 'hook.mjs': '' })
    const prop = proposer(root, `if (ordinal === 1) fs.writeFileSync('hook.mjs', ${JSON.stringify(hook)}); return score - 1`)
    const env = { AR_VICTIM: victimDir, ...(kind === 'process-scan' ? { DSH_AUTORESEARCH_CONTAINMENT: kind } : {}) }
    const r = cli(['run', '--json', specFile(root, { proposer: prop, max_experiments: 2, mutable_globs: ['score.txt', 'hook.mjs'] })], { cwd: repo, env })
    untouched()
    if (kind === 'confined') {
      // The state directory is read-only inside the attempt: the rename itself fails.
      assert.equal(r.status, 0, r.stderr)
      assert.deepEqual(r.json.experiments.map((e) => e.metric), [10, 9, 8])
    } else {
      assert.equal(r.status, 1, r.stderr)
      assert.equal(r.json.experiments[1].failure_code, 'worktree-tampered')
      assert.match(r.json.experiments[1].failure_message, /worktree-replaced: \./)
      assert.match(JSON.stringify(r.json.blocker), /no longer the directory git made/)
    }
  }
})

test('PATH with a relative entry: a bare evaluator command never runs the candidate\'s own program', (t) => {
  const { root, repo, untouched } = setup(t)
  const prop = proposer(root, `
    fs.writeFileSync('node', '#!/bin/sh\\necho \\'{"score": -1000}\\'\\n')
    fs.chmodSync('node', 0o755)
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, max_experiments: 1, mutable_globs: ['score.txt', 'node'] })], {
    cwd: repo, env: { PATH: `:.:${process.env.PATH}` },
  })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(r.json.experiments.map((e) => e.metric), [10, 9])
  untouched()
})

test('a pid read as 0 or 1, or this process\'s own group, is never signalled', () => {
  // A child that signals 0, 1, -0, itself and its own group, and sees an occupied group whose
  // processes it cannot see.
  const child = `import { readFileSync } from 'node:fs'
import { signalGroup, signalPid } from ${JSON.stringify(new URL('../lib/contain.js', import.meta.url).href)}
import { liveMembers } from ${JSON.stringify(new URL('../lib/process.js', import.meta.url).href)}
let got = 0
process.on('SIGTERM', () => { got += 1 })
const stat = readFileSync('/proc/self/stat', 'latin1')
const own = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
for (const pid of [0, 1, -0, -1, process.pid, Number.NaN]) signalPid(pid, 'SIGTERM')
for (const pgid of [0, 1, own, -1]) signalGroup(pgid, 'SIGTERM')
const hidden = liveMembers({ jail: { members: () => [], occupied: () => true, kill() {} } })
await new Promise((r) => setTimeout(r, 200))
console.log(JSON.stringify({ got, hidden }))
`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8' })
  assert.equal(r.status, 0, `the child ended ${r.signal ?? r.status}: ${r.stderr}`)
  assert.deepEqual(JSON.parse(r.stdout), { got: 0, hidden: [0] })
})

test('retention never removes through a symlinked artifacts/<run>: the files it points at stay', async (t) => {
  const { root, repo, untouched } = setup(t)
  const config = join(root, 'config.json')
  writeFileSync(config, JSON.stringify({ artifactRetentionDays: 30 }))
  const run = (tag) => cli(['run', '--json', '--config', config, specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1, run_tag: tag })], { cwd: repo })
  const first = run('exp-1').json
  const state = join(repo, '.git', 'dsh-autoresearch')
  // The run's artifacts directory becomes a link to a folder laid out like it.
  const bait = join(root, 'bait')
  const artifacts = join(state, 'artifacts', first.run_id)
  for (const name of readdirSync(artifacts)) {
    mkdirSync(join(bait, name), { recursive: true })
    for (const file of ['stdout.log', 'stderr.log']) writeFileSync(join(bait, name, file), 'not yours\n')
  }
  const expected = readdirSync(bait).sort()
  renameSync(artifacts, `${artifacts}.moved`)
  symlinkSync(bait, artifacts)
  const { DatabaseSync } = await import('node:sqlite')
  const db = new DatabaseSync(join(state, 'tracker.sqlite'))
  db.prepare('UPDATE runs SET terminal_at = terminal_at - ? WHERE run_id = ?').run(31 * 86_400_000, first.run_id)
  db.close()
  const second = run('exp-2')
  assert.equal(second.status, 0, second.stderr)
  assert.match(second.json.warnings.join('\n'), /retention could not remove .*is not a directory \(a symlink or another file took its place\)/)
  assert.deepEqual(readdirSync(bait).sort(), expected, 'the linked folder keeps every folder')
  for (const name of expected) assert.deepEqual(readdirSync(join(bait, name)).sort(), ['stderr.log', 'stdout.log'])
  untouched()
})

test('the evaluator program found on PATH is pinned: rewritten by a candidate, it is never run again', (t) => {
  const { root, repo, untouched } = setup(t)
  const bin = join(root, 'bin')
  mkdirSync(bin)
  const myeval = join(bin, 'myeval')
  writeFileSync(myeval, '#!/bin/sh\nexec node eval.mjs\n', { mode: 0o755 })
  const prop = proposer(root, `
    if (ordinal === 1) fs.writeFileSync(${JSON.stringify(myeval)}, '#!/bin/sh\\necho \\'{"score": -1000}\\'\\n')
    return score - 1`)
  const r = cli(['run', '--json', specFile(root, { proposer: prop, max_experiments: 2, evaluation: { command: 'myeval', args: [] } })], {
    cwd: repo, env: { PATH: `${bin}:${process.env.PATH}` },
  })
  assert.equal(r.status, 0, r.stderr)
  const [baseline, ...candidates] = r.json.experiments
  assert.equal(baseline.metric, 10)
  for (const c of candidates) {
    assert.equal(c.failure_code, 'spawn')
    assert.match(c.failure_message, /the evaluator program "myeval" changed since the run's first evaluation/)
  }
  untouched()
})

test('a group that cannot be removed is not proven gone', async () => {
  const jail = (settled) => ({ members: () => [], occupied: () => false, kill() {}, settle: () => settled })
  assert.equal(await terminate({ jail: jail(false) }, 10), false)
  assert.equal(await terminate({ jail: jail(true) }, 10), true)
})

test('weaker containment is said in the result, and with slots side by side the environment warning too', { skip: cgroupBase() === undefined && 'needs a writable cgroup v2' }, (t) => {
  const warnings = (kind, extra = {}) => {
    const { root, repo } = setup(t)
    const r = cli(['run', '--json', specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 2, ...extra })], {
      cwd: repo, env: { DSH_AUTORESEARCH_CONTAINMENT: kind },
    })
    assert.equal(r.status, 0, r.stderr)
    return r.json.warnings ?? []
  }
  const cgroup = warnings('cgroup')
  assert.equal(cgroup.length, 1)
  assert.match(cgroup[0], /^process containment is not proven here \(cgroup\)/)
  const scan = warnings('process-scan', { parallelism: 2, environment: { AR_SECRET: 'x' } })
  assert.equal(scan.length, 2)
  assert.match(scan[0], /^process containment is best effort here \(process-scan\)/)
  assert.match(scan[1], /^with parallelism above 1 the evaluator's environment values can be read by a process a proposer leaves running/)
})
