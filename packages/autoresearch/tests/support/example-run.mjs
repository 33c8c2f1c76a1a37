// A real headless run whose picture shows every mark: kept, superseded, rejected and failed
// candidates, two at a time, each measured three times with a little noise, a target, and a
// best-so-far line. `node example-run.mjs OUT.html` runs it in a
// scratch repository and draws it with `dsh-autoresearch show --html`; picture.test.mjs and
// `cargo xtask chart-test` use it.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const CLI = fileURLToPath(new URL('../../bin/dsh-autoresearch.js', import.meta.url))

/** The candidates' scores, by ordinal; `broken` makes the evaluator print no metric. Two at a
 * time: 7 beats 8 (superseded), 4 is kept while its generation-mate fails, 6 is rejected. */
export const ROUNDS = [7, 8, 'broken', 4, 6]

/** Noise in [-0.4, 0.4] from the attempt's id, so every repeat reads a little differently. */
const EVAL = `import { readFileSync } from 'node:fs'
const text = readFileSync('score.txt', 'utf8').trim()
if (text === 'broken') process.exit(3)
let h = 2166136261
for (const c of process.env.DSH_AUTORESEARCH_ATTEMPT ?? '') h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0
h = Math.imul(h ^ (h >>> 15), 0x5bd1e995) >>> 0
h = (h ^ (h >>> 13)) >>> 0
console.log(JSON.stringify({ score: Number(text) + ((h % 801) - 400) / 1000 }))
`

const PROPOSE = `import * as fs from 'node:fs'
const handoff = JSON.parse(fs.readFileSync(0, 'utf8'))
const next = ${JSON.stringify(ROUNDS)}[handoff.ordinal - 1]
fs.writeFileSync('score.txt', next + '\\n')
console.log(JSON.stringify({ hypothesis: 'score ' + next, summary: 'round ' + handoff.ordinal }))
`

function git(cwd, ...args) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } }).trim()
}

/** Runs the example in `root` (a scratch directory); returns the repository and the run id. */
export function exampleRun(root) {
  const repo = join(root, 'repo')
  mkdirSync(repo)
  git(repo, 'init', '-q', '-b', 'main')
  git(repo, 'config', 'user.email', 'example@example.com')
  git(repo, 'config', 'user.name', 'example')
  writeFileSync(join(repo, 'score.txt'), '10\n')
  writeFileSync(join(repo, 'eval.mjs'), EVAL)
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'init')
  writeFileSync(join(root, 'propose.mjs'), PROPOSE)
  const spec = join(root, 'spec.json')
  writeFileSync(spec, JSON.stringify({
    objective: 'lower the score',
    mutable_globs: ['score.txt'],
    evaluation: { command: 'node', args: ['eval.mjs'] },
    metric_name: 'score',
    metric_direction: 'minimize',
    run_tag: 'picture',
    max_experiments: ROUNDS.length,
    max_consecutive_failures: 3,
    repeats: 3,
    parallelism: 2,
    target: 3,
    timeout_ms: 60_000,
    proposer: { command: process.execPath, args: [join(root, 'propose.mjs')] },
  }))
  const run = cli(['run', '--json', spec], repo)
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1))
  return { repo, runId: result.run_id, result }
}

/** Runs the CLI in `cwd`; throws on a spawn failure, returns the output otherwise. */
export function cli(args, cwd) {
  const out = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 })
  if (out.error) throw out.error
  return out
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2]
  if (out === undefined) {
    process.stderr.write('usage: node example-run.mjs OUT.html\n')
    process.exit(2)
  }
  const root = mkdtempSync(join(tmpdir(), 'ar-picture-'))
  try {
    const { repo, runId } = exampleRun(root)
    const drawn = cli(['show', '--html', resolve(out), runId], repo)
    process.stdout.write(drawn.stdout)
    process.stderr.write(drawn.stderr)
    process.exitCode = drawn.status ?? 1
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
