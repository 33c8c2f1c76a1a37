// The Ray recipe (recipes/ray), run for real: a local Ray cluster on this machine, the headless
// runner at parallelism 4, and the recipe's evaluator submitting each measurement as a Ray job
// with the evaluator's AUTORESEARCH_SLOT in the job's environment: one generation's four jobs run
// on the cluster at once, one per slot.
// `cargo xtask recipe-test` installs Ray from PyPI into .cache/ray and runs this inside a
// private network and PID namespace (`unshare -n -p -f`): the cluster can reach nothing but
// loopback, and every process it leaves is gone when the namespace ends.
//
// usage: node ray-recipe.mjs RAY_BIN_DIR
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const RECIPE = fileURLToPath(new URL('../../recipes/ray/', import.meta.url))
const CLI = fileURLToPath(new URL('../../bin/dsh-autoresearch.js', import.meta.url))
/** The candidates' scores by ordinal (lower is better): one generation, in which 8 and 6 are
 * superseded by 4 and 12 is rejected. */
const SCORES = [8, 12, 6, 4]
/** Candidates at once. */
const PARALLELISM = 4
/** CPUs the local cluster offers. */
const CPUS = 4
const DASHBOARD = 'http://127.0.0.1:8265'

const rayBin = process.argv[2]
if (rayBin === undefined) {
  process.stderr.write('usage: node ray-recipe.mjs RAY_BIN_DIR\n')
  process.exit(2)
}
const env = {
  ...process.env,
  PATH: `${rayBin}${delimiter}${process.env.PATH}`,
  RAY_USAGE_STATS_ENABLED: '0',
  RAY_ADDRESS: DASHBOARD,
}
const run = (command, args, options = {}) => {
  const started = Date.now()
  const out = spawnSync(command, args, { encoding: 'utf8', env, ...options })
  if (out.error) throw out.error
  return { ...out, ms: Date.now() - started }
}
const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...env, GIT_CONFIG_NOSYSTEM: '1' } }).trim()

const root = mkdtempSync(join(tmpdir(), 'ar-ray-'))
try {
  assert.equal(run('ip', ['link', 'set', 'lo', 'up']).status, 0, 'loopback up (run me inside unshare -n)')
  const start = run(join(rayBin, 'ray'), [
    'start', '--head', '--node-ip-address=127.0.0.1', '--dashboard-host=127.0.0.1',
    `--num-cpus=${CPUS}`, '--disable-usage-stats', '--include-dashboard=true',
    `--temp-dir=${join(root, 'ray')}`,
  ])
  assert.equal(start.status, 0, start.stderr)
  console.log(`ray-recipe: a local Ray cluster started in ${start.ms} ms`)

  const repo = join(root, 'repo')
  mkdirSync(repo)
  git(repo, 'init', '-q', '-b', 'main')
  git(repo, 'config', 'user.email', 'recipe@example.com')
  git(repo, 'config', 'user.name', 'recipe')
  for (const file of ['evaluate.sh', 'measure.py', 'solution.py']) copyFileSync(join(RECIPE, file), join(repo, file))
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'init')
  const propose = join(root, 'propose.mjs')
  writeFileSync(propose, `import * as fs from 'node:fs'
const handoff = JSON.parse(fs.readFileSync(0, 'utf8'))
const next = ${JSON.stringify(SCORES)}[handoff.ordinal - 1]
fs.writeFileSync('solution.py', 'def score():\\n    return ' + next + '.0\\n')
console.log(JSON.stringify({ hypothesis: 'score ' + next, summary: 'round ' + handoff.ordinal }))
`)
  const spec = join(root, 'spec.json')
  writeFileSync(spec, JSON.stringify({
    objective: 'lower the score solution.py returns',
    mutable_globs: ['solution.py'],
    evaluation: { command: 'sh', args: ['evaluate.sh'] },
    metric_name: 'score',
    metric_direction: 'minimize',
    run_tag: 'ray',
    max_experiments: SCORES.length,
    parallelism: PARALLELISM,
    timeout_ms: 300_000,
    proposer: { command: process.execPath, args: [propose] },
  }))
  const ar = run(process.execPath, [CLI, 'run', '--json', spec], { cwd: repo, timeout: 900_000 })
  process.stderr.write(ar.stderr.split('\n').filter((l) => l.startsWith('[autoresearch]')).join('\n') + '\n')
  assert.equal(ar.status, 0, ar.stderr)
  const result = JSON.parse(ar.stdout.trim().split('\n').at(-1))
  assert.equal(result.status, 'budget-limited')
  assert.equal(result.best.metric, Math.min(...SCORES))
  assert.deepEqual(result.experiments.map((e) => e.outcome), ['baseline', 'superseded', 'rejected', 'superseded', 'kept'])
  console.log(`ray-recipe: ${SCORES.length} candidates in ${ar.ms} ms, best ${result.best.metric}`)

  // What Ray ran: one job per evaluation, each with the slot its evaluator had, the generation's
  // four side by side.
  const listed = run(join(rayBin, 'python'), ['-c', `
import json
from ray.job_submission import JobSubmissionClient
jobs = JobSubmissionClient(${JSON.stringify(DASHBOARD)}).list_jobs()
print(json.dumps([{"status": str(j.status), "slot": ((j.runtime_env or {}).get("env_vars") or {}).get("AUTORESEARCH_SLOT"), "start": j.start_time, "end": j.end_time} for j in jobs]))
`])
  assert.equal(listed.status, 0, listed.stderr)
  const jobs = JSON.parse(listed.stdout.trim().split('\n').at(-1))
  assert.equal(jobs.length, SCORES.length + 1, 'the baseline and every candidate, each one Ray job')
  assert.ok(jobs.every((j) => j.status.endsWith('SUCCEEDED')), JSON.stringify(jobs))
  const slots = [...new Set(jobs.map((j) => j.slot))].sort()
  assert.deepEqual(slots, ['0', '1', '2', '3'])
  // The baseline runs first and alone; at the generation's busiest moment several jobs ran at once.
  const candidates = [...jobs].sort((a, b) => a.start - b.start).slice(1)
  const overlapping = Math.max(...candidates.map((j) => candidates.filter((k) => k.start <= j.start && j.start < k.end).length))
  assert.ok(overlapping >= 2, `candidate jobs ran one at a time: ${JSON.stringify(candidates)}`)
  console.log(`ray-recipe: ${jobs.length} Ray jobs with AUTORESEARCH_SLOT ${slots.join(',')}; up to ${overlapping} ran at once`)
} finally {
  run(join(rayBin, 'ray'), ['stop', '--force'])
  rmSync(root, { recursive: true, force: true })
}
