// The `autoresearch` DSH tool on a real Cordis context: registration, argument validation,
// the three output kinds, background jobs (handshake, output, job_kill), and whole runs whose
// proposal rounds are child agents, with DSH's subprocess service as the process runner.
import test from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRound } from '../lib/round.js'
import { Agents, Plugin, fakeSubagent, mount, parentAgent } from './support/dsh.mjs'
import { alive, cli, git, makeRepo, readLines, scratch, tracker, waitFor } from './support/fixture.mjs'
import { autoresearchToolTexts } from '../lib/core.js'
import { checkWireThroughout } from './support/wire.mjs'

checkWireThroughout()

const TEXTS = JSON.parse(autoresearchToolTexts())

function args(extra = {}) {
  return {
    objective: 'lower the score',
    mutable_globs: ['score.txt'],
    evaluation: { command: 'node', args: ['eval.mjs'] },
    metric_name: 'score',
    metric_direction: 'minimize',
    run_tag: 'tool-1',
    timeout_ms: 30_000,
    ...extra,
  }
}

/** Dummy parent tools so the round's allow list has something to intersect with. */
function parentTools(tools, names = ['read', 'write', 'edit']) {
  for (const name of names) {
    tools.register({ name, description: name, parameters: {}, output: { schema: {}, render: () => [] }, execute: async () => null })
  }
}

test('registers the tool with Rust-made schemas; the module has no default export', async () => {
  const { tools } = await mount({})
  const def = tools.get('autoresearch')
  assert.equal(def.name, 'autoresearch')
  assert.match(def.description, /isolated git worktree/)
  assert.equal(def.parameters.additionalProperties, false)
  assert.deepEqual(def.output.schema.properties.kind.enum, ['background', 'background-start-failed', 'foreground'])
  assert.equal(def.timeoutMs, undefined, 'no tool timeout: a foreground run is never cut off')
  assert.equal(Plugin.default, undefined)
  assert.deepEqual(Plugin.inject, ['tools', 'jobs', 'agents', 'subprocess'])
})

test('bad arguments are refused naming the field, the rule and the value', async (t) => {
  const { repo } = makeRepo(t)
  const { tools } = await mount({})
  const agent = parentAgent(repo)
  const r = await tools.call('autoresearch', args({ metric_direction: 'down', max_experiments: 0, mutable_glob: ['x'] }), agent)
  assert.match(r.error, /^invalid autoresearch arguments: /)
  assert.match(r.error, /metric_direction: must be "minimize" or "maximize" \(got "down"\)/)
  assert.match(r.error, /max_experiments: must be an integer from 1 to 100 \(got 0\)/)
  assert.match(r.error, /mutable_glob: unknown key; did you mean `mutable_globs`\?/)
  const p = await tools.call('autoresearch', args({ proposer: { command: 'node' } }), agent)
  assert.match(p.error, /proposer: is only for the headless runner/)
  const id = await tools.call('autoresearch', { resume_run_id: '../..' }, agent)
  assert.match(id.error, /resume_run_id: must be a lowercase UUID/)
  const none = await tools.call('autoresearch', args(), undefined)
  assert.match(none.error, /needs a calling agent/)
  // The config's limits bound the arguments.
  const small = await mount({ maxExperiments: 2, defaultMaxExperiments: 2 })
  const capped = await small.tools.call('autoresearch', args({ max_experiments: 3 }), agent)
  assert.match(capped.error, /max_experiments: must be an integer from 1 to 2 \(got 3\)/)
})

test('foreground: the run result, rendered for the model', async (t) => {
  const { repo, head } = makeRepo(t)
  const { tools } = await mount({})
  // The baseline already meets the target: no proposal round is needed.
  const r = await tools.call('autoresearch', args({ mode: 'foreground', target: 10 }), parentAgent(repo))
  assert.equal(r.error, undefined)
  assert.equal(r.value.kind, 'foreground')
  assert.equal(r.value.run.status, 'target-reached')
  assert.equal(r.value.run.best.commit, head)
  assert.equal(r.value.run.counts.experiments_started, 0)
  const text = r.content[0].text
  assert.match(text, /^autoresearch run [0-9a-f-]{36}: target-reached\nmetric score \(minimize\): baseline 10 at [0-9a-f]{8}, best 10 at [0-9a-f]{8}, target 10\n/)
  assert.match(text, /your checkout is unchanged/)
  const id = r.value.run.run_id
  assert.ok(text.endsWith(`\npicture: run \`dsh-autoresearch show --html autoresearch-${id.slice(0, 8)}.html ${id}\` in the repository\n`), text)
})

test('background: the job handshake, its output, and a start that is refused', async (t) => {
  const { repo } = makeRepo(t)
  const { tools, jobs } = await mount({})
  const agent = parentAgent(repo)
  const r = await tools.call('autoresearch', args({ target: 10 }), agent)
  assert.equal(r.value.kind, 'background')
  assert.equal(r.value.jobId, 'autoresearch-1')
  assert.match(r.value.branch, /^autoresearch\/tool-1-[0-9a-f-]{36}$/)
  assert.match(r.content[0].text, /^Started autoresearch run [0-9a-f-]{36} as background job autoresearch-1\./)
  assert.equal(jobs.jobs.get('autoresearch-1').spec.owner, agent)
  const outcome = await jobs.wait('autoresearch-1')
  assert.equal(outcome.status, 'completed')
  assert.equal(outcome.detail, 'target-reached')
  assert.match(outcome.output, /autoresearch run [0-9a-f-]{36}: target-reached[\s\S]*result JSON:\n\{"status":"target-reached"/)

  // A repository that does not exist: the job ends at once and the tool says why.
  const missing = await tools.call('autoresearch', args({ repository: 'no/such/dir' }), agent)
  assert.equal(missing.value.kind, 'background-start-failed')
  assert.equal(missing.value.reason, 'repository-unavailable')
  assert.match(missing.value.evidence.join('\n'), /does not exist/)
  // No job service capacity: nothing starts.
  jobs.refuse = 'owner already has 10 active jobs'
  const refused = await tools.call('autoresearch', args({ run_tag: 'tool-2' }), agent)
  assert.deepEqual(
    { kind: refused.value.kind, jobId: refused.value.jobId },
    { kind: 'background-start-failed', jobId: 'unregistered' },
  )
  assert.match(refused.value.reason, /owner already has 10 active jobs/)
})

test('DSH 0.2 shapes: the job is owned by the session id, its summary comes back as result, and the run works in the session\'s current directory', async (t) => {
  const { repo } = makeRepo(t)
  const elsewhere = scratch(t)
  const { tools, jobs, workingDirectory, ctx } = await mount({}, { line: '0.2' })
  // The session started elsewhere and moved into the repository since: header.cwd is the origin.
  const agent = parentAgent(elsewhere, ctx)
  workingDirectory.current.set(agent.session.id, repo)
  const r = await tools.call('autoresearch', args({ run_tag: 'v02', target: 10 }), agent)
  assert.equal(r.value.kind, 'background', r.error ?? JSON.stringify(r.value))
  assert.equal(jobs.jobs.get(r.value.jobId).spec.owner, 'parent-session')
  const outcome = await jobs.visibleTo('parent-session').wait(r.value.jobId)
  assert.equal(outcome.status, 'completed')
  assert.equal(outcome.output, undefined)
  assert.match(outcome.result, /autoresearch run [0-9a-f-]{36}: target-reached/)
  assert.ok(r.value.worktree.startsWith(join(repo, '.git')), 'the run is in the current directory\'s repository')
})

test('job_kill stops a background run: evaluator tree gone, run cancelled, lock released', async (t) => {
  const hang = `import { appendFileSync } from 'node:fs'
appendFileSync(process.env.AR_PIDS, process.pid + '\\n')
setInterval(() => {}, 1000)
`
  const { root, repo } = makeRepo(t, { 'eval.mjs': hang })
  const pids = join(root, 'pids')
  process.env.AR_PIDS = pids
  t.after(() => {
    delete process.env.AR_PIDS
    killAll(pids)
  })
  const { tools, jobs } = await mount({ terminationGraceMs: 200 })
  const r = await tools.call('autoresearch', args(), parentAgent(repo))
  assert.equal(r.value.kind, 'background')
  await waitFor(() => readLines(pids).length > 0, 20_000, 'the evaluator')
  jobs.kill(r.value.jobId, undefined, 'job_kill by the test')
  const outcome = await jobs.wait(r.value.jobId)
  assert.equal(outcome.status, 'killed')
  assert.equal(outcome.detail, 'cancelled')
  for (const pid of readLines(pids).map(Number)) assert.equal(alive(pid), false)
  const result = JSON.parse(outcome.output.slice(outcome.output.indexOf('result JSON:\n') + 13))
  assert.equal(result.blocker.message, 'job_kill by the test')
  const db = await tracker(repo)
  t.after(() => db.close())
  assert.equal(db.get('SELECT count(*) AS n FROM locks WHERE released_at IS NULL').n, 0)
  assert.equal(db.get('SELECT state FROM runs').state, 'cancelled')
})

test('a foreground run whose rounds are child agents improves the metric', async (t) => {
  const { repo, head } = makeRepo(t)
  const { tools, agents, subprocess } = await mount({})
  parentTools(tools)
  const seen = []
  agents.turn = async (child, msg) => {
    seen.push({ cwd: child.options.meta.cwd, text: msg.content[0].text, source: msg.source })
    const file = join(child.options.meta.cwd, 'score.txt')
    const score = Number(readFileSync(file, 'utf8'))
    writeFileSync(file, `${score - 3}\n`)
    const r = await child.call('autoresearch_report', { hypothesis: `lower by 3 from ${score}`, summary: 'edited score.txt' })
    assert.equal(r.concluded, true, 'the report ends the child turn')
    const after = await child.call('read', { file_path: 'score.txt' })
    assert.match(after.error, /the autoresearch round is over/)
  }
  // The dsh-subagent helpers are not installed in this repository; the round takes a stand-in.
  const sub = fakeSubagent()
  globalThis.__dshAutoresearchSubagent = sub
  t.after(() => { delete globalThis.__dshAutoresearchSubagent })
  const r = await tools.call('autoresearch', args({ mode: 'foreground', max_experiments: 2 }), parentAgent(repo))
  assert.equal(r.error, undefined, r.error)
  assert.equal(r.value.run.status, 'budget-limited')
  assert.equal(r.value.run.best.metric, 4)
  assert.equal(seen.length, 2)
  assert.ok(seen.every((s) => s.cwd === r.value.run.worktree), 'each child works in the run worktree')
  assert.match(seen[0].text, /^AUTORESEARCH PROPOSAL ROUND/)
  assert.deepEqual(seen[0].source, { kind: 'autoresearch' }, 'the producer\'s own kind (DSH 0.2 refuses `plugin`)')
  assert.equal(agents.live.size, 0, 'every child was disposed')
  assert.deepEqual(sub.calls.find((c) => c[0] === 'compose')[1], ['read', 'write', 'edit'], 'glob and grep do not exist here')
  assert.deepEqual(sub.calls.find((c) => c[0] === 'meta'), ['meta', 1, false], 'a child not seeded from the parent\'s log, as both lines take it')
  assert.ok(subprocess.spawned.some((argv) => argv[0] === 'git'), 'git ran through ctx.subprocess')
  assert.ok(subprocess.spawned.some((argv) => argv.at(-1) === 'eval.mjs'), 'the evaluator ran through ctx.subprocess')
  assert.equal(git(repo, 'rev-parse', 'main'), head)
})

test('a holdout: the child never sees its files or values, and its divergence is reported', async (t) => {
  const { root, repo } = makeRepo(t)
  const held = join(root, 'holdout')
  mkdirSync(held)
  // Follows the metric down to 8, then turns back up: 10 -> 5, 7 -> 4.25, 4 -> 5.
  writeFileSync(join(held, 'check.mjs'), `import { readFileSync } from 'node:fs'
const s = Number(readFileSync('score.txt', 'utf8'))
console.log(JSON.stringify({ score: s >= 8 ? s / 2 : 4 + (8 - s) / 4 }))
`)
  const { tools, agents } = await mount({})
  parentTools(tools, ['read', 'write', 'edit', 'glob', 'grep'])
  const seen = []
  agents.turn = async (child, msg) => {
    seen.push(msg.content[0].text)
    const refused = []
    for (const [name, a] of [['read', { file_path: join(held, 'check.mjs') }], ['read', { file_path: '../../../../../holdout/check.mjs' }],
      ['grep', { pattern: 'score', path: '/' }], ['glob', { pattern: '/**/check.mjs' }], ['write', { file_path: '~/x' }]]) {
      refused.push((await child.call(name, a)).error)
    }
    assert.ok(refused.every((e) => /this run has a holdout, so a proposal round works only inside its worktree/.test(e)), refused.join('\n'))
    // Paths inside the worktree pass the guard (this stand-in host has no read or grep to run).
    assert.doesNotMatch(String((await child.call('read', { file_path: 'score.txt' })).error), /has a holdout/)
    assert.doesNotMatch(String((await child.call('grep', { pattern: 'x', path: 'src/../' })).error), /has a holdout/)
    const file = join(child.options.meta.cwd, 'score.txt')
    writeFileSync(file, `${Number(readFileSync(file, 'utf8')) - 3}\n`)
    await child.call('autoresearch_report', { hypothesis: 'lower by 3', summary: 'edited score.txt' })
  }
  globalThis.__dshAutoresearchSubagent = fakeSubagent()
  t.after(() => { delete globalThis.__dshAutoresearchSubagent })
  const spec = args({ mode: 'foreground', max_experiments: 2, holdout: { command: 'node', args: [join(held, 'check.mjs')] } })
  const r = await tools.call('autoresearch', spec, parentAgent(repo))
  assert.equal(r.error, undefined, r.error)
  const run = r.value.run
  assert.deepEqual(run.experiments.map((e) => [e.outcome, e.holdout, e.failure_message]), [['baseline', 5, null], ['kept', 4.25, null], ['kept', 5, null]])
  assert.deepEqual(run.holdout.divergences, ['the holdout diverges at candidate 2: score went from 7 to 4, but the holdout from 4.25 to 5 (not better; the gain may not generalize)'])
  assert.ok(seen.length === 2 && seen.every((text) => !text.includes('holdout') && !text.includes('4.25')), seen.join('\n'))
})

test('a round without a report, or with a malformed one, fails that round only', async (t) => {
  const { repo } = makeRepo(t)
  const ctxTools = new Map()
  const agents = new Agents(new (await import('@deepseek-ai/cordis')).Context())
  const ctx = { tools: { get: (n) => ctxTools.get(n) }, agents }
  for (const n of ['read', 'edit']) ctxTools.set(n, {})
  const propose = createRound({ ctx, parent: parentAgent(repo), texts: TEXTS, row: {}, subagent: fakeSubagent() })
  const request = { worktree: repo, handoff: '{}', timeoutMs: 1000, signal: new AbortController().signal }
  agents.turn = async () => {}
  await assert.rejects(propose(request), /^Error: report-missing/)
  agents.turn = async (child) => {
    const r = await child.call('autoresearch_report', { hypothesis: '', summary: 'x' })
    assert.match(r.error, /hypothesis: must be a non-empty string/)
  }
  await assert.rejects(propose(request), /report-malformed: hypothesis: must be a non-empty string/)
  ctxTools.clear()
  await assert.rejects(propose(request), /capability-unavailable: the child would have no write or edit tool/)
  assert.equal(agents.live.size, 0)
  // A cancel mid-round cancels the child and rejects.
  ctxTools.set('write', {})
  const controller = new AbortController()
  agents.turn = (child) => new Promise((resolve) => setTimeout(() => {
    controller.abort('job_kill')
    resolve()
  }, 10))
  await assert.rejects(propose({ ...request, signal: controller.signal }), /job_kill/)
  assert.deepEqual(agents.created.at(-1).cancelled, { kind: 'parent' })
})

test('unloading the plugin cancels its foreground run and waits for it', async (t) => {
  const hang = "import { appendFileSync } from 'node:fs'\nappendFileSync(process.env.AR_PIDS, process.pid + '\\n')\nsetInterval(() => {}, 1000)\n"
  const { root, repo } = makeRepo(t, { 'eval.mjs': hang })
  const pids = join(root, 'pids')
  process.env.AR_PIDS = pids
  t.after(() => {
    delete process.env.AR_PIDS
    killAll(pids)
  })
  const { tools, fiber } = await mount({ terminationGraceMs: 200 })
  const call = tools.call('autoresearch', args({ mode: 'foreground' }), parentAgent(repo))
  await waitFor(() => readLines(pids).length > 0, 20_000, 'the evaluator')
  await fiber.dispose()
  const r = await call
  assert.equal(r.value.run.status, 'cancelled')
  assert.equal(r.value.run.blocker.message, 'the autoresearch plugin was unloaded')
  for (const pid of readLines(pids).map(Number)) assert.equal(alive(pid), false)
})

test('runs started by the tool are the durable runs the headless runner lists', async (t) => {
  const { repo } = makeRepo(t)
  const { tools } = await mount({})
  const r = await tools.call('autoresearch', args({ mode: 'foreground', target: 10 }), parentAgent(repo))
  assert.equal(r.value.run.persisted, true)
  const list = cli(['list', '--json'], { cwd: repo })
  assert.equal(JSON.parse(list.stdout.trim()).run_id, r.value.run.run_id)
})

/** Kills every pid a hanging evaluator recorded (a failing assertion must leave no orphan). */
function killAll(file) {
  for (const pid of readLines(file).map(Number)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Already gone (the expected case).
    }
  }
}
