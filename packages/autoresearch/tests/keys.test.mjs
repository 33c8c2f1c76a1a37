// The row keys issue 17 made real, each through the real driver on scratch git repositories:
// maxHandoffChars (the proposal prompt and the report), the proposal route (provider, model,
// maxTokens), and retention (artifactRetentionDays, retainFailedArtifacts, tsvRetentionDays,
// retainWorktrees; cleanupWorktreesOnSuccess is bug 10's test in bugs.test.mjs): what the cleanup
// at a run's start and end removes, and that the tracker rows stay, marked.
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { fileURLToPath } from 'node:url'
import { createRound, routeOverride } from '../lib/round.js'
import { Agents, Plugin, fakeSubagent, mount, parentAgent } from './support/dsh.mjs'
import { cli, git, makeRepo, proposer, specFile } from './support/fixture.mjs'
import { autoresearchToolTexts } from '../lib/core.js'
import { checkWireThroughout } from './support/wire.mjs'

checkWireThroughout()

const TEXTS = JSON.parse(autoresearchToolTexts())
const DAY_MS = 86_400_000

function args(extra = {}) {
  return {
    objective: 'lower the score',
    mutable_globs: ['score.txt'],
    evaluation: { command: 'node', args: ['eval.mjs'] },
    metric_name: 'score',
    metric_direction: 'minimize',
    run_tag: 'keys-1',
    timeout_ms: 30_000,
    mode: 'foreground',
    ...extra,
  }
}

function parentTools(tools) {
  for (const name of ['read', 'write', 'edit']) {
    tools.register({ name, description: name, parameters: {}, output: { schema: {}, render: () => [] }, execute: async () => null })
  }
}

/** The subagent stand-in, recording the route the round asks dsh-subagent to resolve. */
function recordingSubagent() {
  const sub = fakeSubagent()
  sub.requested = []
  sub.resolveChildAgentOptions = (_parent, requested, depth) => {
    sub.requested.push(requested)
    return { model: 'parent-model', ...requested, subagentDepth: depth }
  }
  return sub
}

/** Writes the row config for the runner. */
function configFile(root, row) {
  const file = join(root, 'config.json')
  writeFileSync(file, JSON.stringify(row))
  return file
}

/** The repository's tracker, writable (a test ages a run by moving its end back). */
function trackerRw(repo) {
  return new DatabaseSync(join(repo, '.git', 'dsh-autoresearch', 'tracker.sqlite'))
}

test('maxHandoffChars: the round prompt carries the whole objective and stays within the limit', async (t) => {
  const { repo } = makeRepo(t)
  const { tools, agents } = await mount({ maxHandoffChars: 10_000 })
  parentTools(tools)
  const objective = `lower the score ${'o'.repeat(7_980)}`
  const prompts = []
  agents.turn = async (child, msg) => {
    prompts.push(msg.content[0].text)
    const file = join(child.options.meta.cwd, 'score.txt')
    writeFileSync(file, `${Number(readFileSync(file, 'utf8')) - 1}\n`)
    await child.call('autoresearch_report', { hypothesis: 'h'.repeat(900), summary: 'lowered by one' })
  }
  globalThis.__dshAutoresearchSubagent = fakeSubagent()
  t.after(() => { delete globalThis.__dshAutoresearchSubagent })
  const r = await tools.call('autoresearch', args({ objective, max_experiments: 6 }), parentAgent(repo))
  assert.equal(r.error, undefined, r.error)
  assert.equal(r.value.run.status, 'budget-limited')
  const handoffs = prompts.map((p) => p.slice(p.indexOf('\n\n{') + 2, p.lastIndexOf('}\n\n') + 1))
  for (const h of handoffs) {
    assert.ok(h.length <= 10_000, `${h.length} characters`)
    assert.equal(JSON.parse(h).objective, objective, 'the objective is never cut')
  }
  // Rounds 1–3 carry the whole history (the baseline and earlier rounds, hypotheses cut to 300
  // characters); from round 4 the window halves until the whole fits.
  assert.deepEqual(handoffs.map((h) => JSON.parse(h).history.length), [1, 2, 3, 2, 2, 2])

  // A spec whose handoff cannot fit even without history is refused naming the field.
  const small = await mount({ maxHandoffChars: 4_096 })
  const refused = await small.tools.call('autoresearch', args({ objective }), parentAgent(repo))
  assert.match(refused.error, /^invalid autoresearch arguments: objective: makes the proposal handoff 8\d{3} characters before any history, and maxHandoffChars allows 4096 \(shorten objective, constraints or mutable_globs, or raise maxHandoffChars\)/)
})

test('maxHandoffChars: a longer report is refused to the child, which can shorten it', async (t) => {
  const { repo } = makeRepo(t)
  const ctxTools = new Map(['read', 'write'].map((n) => [n, {}]))
  const agents = new Agents(new (await import('@deepseek-ai/cordis')).Context())
  const ctx = { tools: { get: (n) => ctxTools.get(n) }, agents }
  const row = { maxHandoffChars: 1_024 }
  const propose = createRound({ ctx, parent: parentAgent(repo), texts: TEXTS, row, subagent: fakeSubagent() })
  const answers = []
  agents.turn = async (child) => {
    answers.push(await child.call('autoresearch_report', { hypothesis: 'h'.repeat(1_000), summary: 'long' }))
    answers.push(await child.call('autoresearch_report', { hypothesis: 'short', summary: 'short' }))
  }
  const report = await propose({ worktree: repo, handoff: '{}', timeoutMs: 1000, signal: new AbortController().signal })
  assert.equal(answers[0].error, 'the report is 1034 characters as JSON and maxHandoffChars allows 1024: shorten hypothesis or summary')
  assert.deepEqual(report, { hypothesis: 'short', summary: 'short' })
})

test('maxHandoffChars: the headless runner fails a round whose report is longer', (t) => {
  const { root, repo } = makeRepo(t)
  const prop = proposer(root, "fs.writeFileSync('score.txt', '5\\n'); console.log(JSON.stringify({ hypothesis: 'h'.repeat(2000), summary: 's' })); process.exit(0)")
  const spec = specFile(root, { proposer: prop, max_experiments: 1 })
  const r = cli(['run', '--json', '--config', configFile(root, { maxHandoffChars: 1_024 }), spec], { cwd: repo })
  const candidate = r.json.experiments[1]
  assert.equal(candidate.failure_code, 'proposer-report', r.stderr)
  assert.equal(candidate.failure_message, 'the report is 2031 characters as JSON and maxHandoffChars allows 1024: shorten hypothesis or summary')
})

test('provider, model, maxTokens: the child agent gets the route DSH subagents get', async (t) => {
  const { repo } = makeRepo(t)
  // The row's keys validate, and a bad value fails the boot naming the key.
  const ok = Plugin.Config['~standard'].validate({ provider: 'deepseek', model: 'deepseek-reasoner', maxTokens: 8192 })
  assert.equal(ok.issues, undefined)
  const bad = Plugin.Config['~standard'].validate({ maxTokens: 0, model: ' x' })
  assert.deepEqual(bad.issues.map((i) => i.message), [
    'maxTokens must be an integer >= 1 (got 0)',
    'model must be non-empty text without surrounding whitespace, CR, LF or NUL (got " x")',
  ])
  assert.equal(routeOverride({ stateRoot: 'x' }), undefined, 'absent keys: the parent route whole')
  assert.deepEqual(routeOverride({ model: 'm', maxTokens: 5 }), { model: 'm', maxTokens: 5 })

  for (const [row, requested, agentOptions] of [
    [{}, undefined, { model: 'parent-model', subagentDepth: 1 }],
    [{ model: 'deepseek-reasoner', maxTokens: 4096 }, { model: 'deepseek-reasoner', maxTokens: 4096 }, { model: 'deepseek-reasoner', maxTokens: 4096, subagentDepth: 1 }],
    [{ provider: 'other', model: 'm2' }, { provider: 'other', model: 'm2' }, { model: 'm2', provider: 'other', subagentDepth: 1 }],
  ]) {
    const { tools, agents } = await mount(row)
    parentTools(tools)
    agents.turn = async (child) => {
      writeFileSync(join(child.options.meta.cwd, 'score.txt'), '9\n')
      await child.call('autoresearch_report', { hypothesis: 'h', summary: 's' })
    }
    const sub = recordingSubagent()
    globalThis.__dshAutoresearchSubagent = sub
    const r = await tools.call('autoresearch', args({ max_experiments: 1, run_tag: `route-${agents.created.length}${Object.keys(row).length}` }), parentAgent(repo))
    delete globalThis.__dshAutoresearchSubagent
    assert.equal(r.value.run.status, 'budget-limited', r.error)
    assert.deepEqual(sub.requested, [requested])
    assert.deepEqual(agents.created[0].options.agentOptions, agentOptions)
  }
})

const REAL_SUBAGENT = fileURLToPath(new URL('../../../.cache/dsh/app/node_modules/@deepseek-ai/dsh-subagent/lib/index.js', import.meta.url))

test('provider, model, maxTokens: rc.8 dsh-subagent resolves them over the parent route', { skip: !existsSync(REAL_SUBAGENT) && 'dsh rc.8 is not installed in .cache (cargo xtask release-smoke installs it)' }, async () => {
  const sub = await import(REAL_SUBAGENT)
  const parent = { options: { provider: 'deepseek', model: 'deepseek-chat', maxTokens: 1000 } }
  assert.deepEqual(sub.resolveChildAgentOptions(parent, routeOverride({ model: 'deepseek-reasoner', maxTokens: 64 }), 2), {
    provider: 'deepseek', model: 'deepseek-reasoner', maxTokens: 64, subagentDepth: 2,
  })
  assert.deepEqual(sub.resolveChildAgentOptions(parent, routeOverride({}), 1), {
    provider: 'deepseek', model: 'deepseek-chat', maxTokens: 1000, subagentDepth: 1,
  })
})

test('retainFailedArtifacts: false removes a failed attempt\'s artifacts when its experiment ends; the rows stay, marked', (t) => {
  const { root, repo } = makeRepo(t)
  // Round 1 breaks the score (the evaluation fails), round 2 lowers it.
  const spec = specFile(root, { proposer: proposer(root, "return ordinal === 1 ? 'oops' : score - 1"), max_experiments: 2 })
  const r = cli(['run', '--json', '--config', configFile(root, { retainFailedArtifacts: false }), spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const result = r.json
  assert.deepEqual(result.experiments.map((e) => e.state), ['accepted', 'failed', 'accepted'])
  const present = result.artifacts.map((a) => [a.artifact_id.slice(37), existsSync(a.location), a.removed === true])
  assert.deepEqual(present, [
    ['baseline-attempt-1-stdout', true, false],
    ['baseline-attempt-1-stderr', true, false],
    ['candidate-1-attempt-1-stdout', false, true],
    ['candidate-1-attempt-1-stderr', false, true],
    ['candidate-2-attempt-1-stdout', true, false],
    ['candidate-2-attempt-1-stderr', true, false],
  ])
  assert.equal(existsSync(join(repo, '.git', 'dsh-autoresearch', 'artifacts', result.run_id, `${result.run_id}-candidate-1-attempt-1`)), false, 'its directory too')
  assert.deepEqual(result.removed, { worktree: false, tsv: false, artifacts: 2 })
  const db = trackerRw(repo)
  t.after(() => db.close())
  assert.equal(db.prepare('SELECT count(*) AS n FROM artifacts WHERE removed_at IS NOT NULL').get().n, 2)
  assert.equal(db.prepare('SELECT count(*) AS n FROM artifacts').get().n, 6)
  // With the default (true), the same run keeps every artifact.
  const { root: root2, repo: repo2 } = makeRepo(t)
  const kept = cli(['run', '--json', specFile(root2, { proposer: proposer(root2, "return ordinal === 1 ? 'oops' : score - 1"), max_experiments: 2 })], { cwd: repo2 })
  assert.ok(kept.json.artifacts.every((a) => existsSync(a.location)))
  assert.equal(kept.json.removed, undefined)
})

test('artifactRetentionDays and tsvRetentionDays: the next run\'s cleanup removes what has aged past them', (t) => {
  const { root, repo } = makeRepo(t)
  const config = configFile(root, { artifactRetentionDays: 30, tsvRetentionDays: 60 })
  const first = cli(['run', '--json', '--config', config, specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1 })], { cwd: repo }).json
  const state = join(repo, '.git', 'dsh-autoresearch')
  const tsv = join(state, 'exports', `${first.run_id}.tsv`)
  assert.ok(existsSync(tsv))
  const db = trackerRw(repo)
  t.after(() => db.close())
  const age = (days) => db.prepare('UPDATE runs SET terminal_at = terminal_at - ? WHERE run_id = ?').run(days * DAY_MS, first.run_id)
  const next = (tag) => cli(['run', '--json', '--config', config, specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1, run_tag: tag })], { cwd: repo })

  // 29 days on: nothing has expired.
  age(29)
  assert.equal(next('exp-2').status, 0)
  assert.ok(first.artifacts.every((a) => existsSync(a.location)))
  // 31 days on: the artifacts go (30), the TSV stays (60); the rows stay, marked.
  age(2)
  const second = next('exp-3')
  assert.equal(second.status, 0, second.stderr)
  assert.ok(first.artifacts.every((a) => !existsSync(a.location)))
  assert.equal(existsSync(join(state, 'artifacts', first.run_id)), false)
  assert.ok(existsSync(tsv))
  const marks = db.prepare('SELECT count(*) AS n FROM artifacts WHERE run_id = ? AND removed_at IS NOT NULL').get(first.run_id).n
  assert.equal(marks, first.artifacts.length)
  assert.equal(db.prepare('SELECT count(*) AS n FROM artifacts WHERE removed_at IS NOT NULL').get().n, first.artifacts.length, 'the later runs keep theirs')
  // 61 days on: the TSV goes too; `show` says what was removed.
  age(30)
  assert.equal(next('exp-4').status, 0)
  assert.equal(existsSync(tsv), false)
  assert.notEqual(db.prepare('SELECT tsv_removed_at FROM runs WHERE run_id = ?').get(first.run_id).tsv_removed_at, null)
  const shown = cli(['show', '--json', first.run_id], { cwd: repo }).json
  assert.deepEqual(shown.removed, { worktree: false, tsv: true, artifacts: first.artifacts.length })
  assert.equal(shown.status, 'budget-limited')
})

test('retainWorktrees: false removes an ended run\'s worktree; its branch, refs and rows stay', (t) => {
  const { root, repo } = makeRepo(t)
  const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), max_experiments: 1 })
  const r = cli(['run', '--json', '--config', configFile(root, { retainWorktrees: false }), spec], { cwd: repo })
  assert.equal(r.status, 0, r.stderr)
  const result = r.json
  assert.equal(existsSync(result.worktree), false)
  assert.deepEqual(result.removed, { worktree: true, tsv: false, artifacts: 0 })
  assert.equal(git(repo, 'rev-parse', result.branch), result.best.commit)
  assert.equal(git(repo, 'cat-file', '-t', result.best.commit), 'commit')
  assert.doesNotMatch(git(repo, 'worktree', 'list', '--porcelain'), new RegExp(result.run_id))
  const db = trackerRw(repo)
  t.after(() => db.close())
  const row = db.prepare('SELECT state, worktree, worktree_removed_at FROM runs').get()
  assert.equal(row.state, 'budget-limited')
  assert.equal(row.worktree, result.worktree)
  assert.notEqual(row.worktree_removed_at, null)
})
