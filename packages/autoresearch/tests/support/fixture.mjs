// Test fixtures: scratch git repositories, evaluator and proposer programs, and the real
// dsh-autoresearch CLI run as a child process.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const CLI = fileURLToPath(new URL('../../bin/dsh-autoresearch.js', import.meta.url))
export const RUN_ID_RE = /run ([0-9a-f-]{36})/

/** A temp directory removed after the test. */
export function scratch(t, prefix = 'ar-test-') {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export function git(cwd, ...args) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } }).trim()
}

/** The evaluator: prints a log line, then `{"score": <score.txt>}`. Extra behaviour comes from
 * files outside the repository, so a candidate can never change it. */
export const EVAL_MJS = `import { readFileSync, appendFileSync } from 'node:fs'
const v = Number(readFileSync('score.txt', 'utf8').trim())
if (process.env.AR_EVAL_LOG) appendFileSync(process.env.AR_EVAL_LOG, JSON.stringify({ argv: process.argv.slice(2), v }) + '\\n')
console.log('scoring', v)
console.log(JSON.stringify({ score: v }))
`

/** A repository with score.txt (10), eval.mjs and README.md, committed on main. */
export function makeRepo(t, files = {}) {
  const root = scratch(t)
  const repo = join(root, 'repo')
  mkdirSync(repo)
  git(repo, 'init', '-q', '-b', 'main')
  git(repo, 'config', 'user.email', 'test@example.com')
  git(repo, 'config', 'user.name', 'test')
  const all = { 'score.txt': '10\n', 'eval.mjs': EVAL_MJS, 'README.md': 'hello\n', ...files }
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(join(repo, path, '..'), { recursive: true })
    writeFileSync(join(repo, path), text)
  }
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'init')
  return { root, repo, head: git(repo, 'rev-parse', 'HEAD') }
}

/** A proposer program in `root`: each round runs `body` (JS with `score`, `ordinal`, `fs`,
 * `handoff` in scope; it returns the new score, or undefined for no score edit) and reports. */
export function proposer(root, body, name = 'propose.mjs') {
  const file = join(root, name)
  writeFileSync(file, `import * as fs from 'node:fs'
const handoff = JSON.parse(fs.readFileSync(0, 'utf8'))
const ordinal = handoff.ordinal
const score = Number(fs.readFileSync('score.txt', 'utf8').trim())
const next = await (async () => { ${body} })()
if (next !== undefined) fs.writeFileSync('score.txt', next + '\\n')
console.log(JSON.stringify({ hypothesis: 'try ' + next, summary: 'round ' + ordinal }))
`)
  return { command: 'node', args: [file] }
}

/** A spec file in `root`; `extra` overrides the defaults (null removes a key). */
export function specFile(root, extra = {}, name = 'spec.json') {
  const spec = {
    objective: 'lower the score',
    mutable_globs: ['score.txt'],
    evaluation: { command: 'node', args: ['eval.mjs'] },
    metric_name: 'score',
    metric_direction: 'minimize',
    run_tag: 'exp-1',
    max_experiments: 3,
    timeout_ms: 60_000,
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === null) delete spec[k]
    else spec[k] = v
  }
  const file = join(root, name)
  writeFileSync(file, JSON.stringify(spec))
  return file
}

/** Runs the CLI to completion. */
export function cli(args, { cwd, env = {}, timeout = 120_000 } = {}) {
  const out = spawnSync(process.execPath, [CLI, ...args], {
    cwd, encoding: 'utf8', timeout, env: { ...process.env, ...env },
  })
  const lines = out.stdout.trim().split('\n')
  let json
  try {
    json = JSON.parse(lines.at(-1))
  } catch {
    json = undefined
  }
  return { status: out.status, signal: out.signal, stdout: out.stdout, stderr: out.stderr, json }
}

/** Starts the CLI in the background; `lines` collects stderr. */
export function cliAsync(args, { cwd, env = {} } = {}) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => { stdout += d })
  child.stderr.on('data', (d) => { stderr += d })
  const done = new Promise((resolve) => child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr })))
  return { child, done, stderr: () => stderr }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export async function waitFor(predicate, ms = 30_000, what = 'condition') {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const v = predicate()
    if (v) return v
    await sleep(50)
  }
  assert.fail(`timed out waiting for ${what}`)
}

/** Whether a process is alive (a zombie counts as dead). */
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0]
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** SIGKILLs every live process whose environment holds `NAME=value` (a test's own marker): it
 * needs no pid file, so it works in a test's `after` hook even once the scratch dir is gone. */
export function killCarrying(name, value) {
  const needle = `${name}=${value}\0`
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').includes(needle)) process.kill(Number(pid), 'SIGKILL')
    } catch {
      // Gone, or not ours.
    }
  }
}

export function readLines(file) {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []
}

/** The repository's tracker, read with node:sqlite. */
export async function tracker(repo) {
  const { DatabaseSync } = await import('node:sqlite')
  const db = new DatabaseSync(join(repo, '.git', 'dsh-autoresearch', 'tracker.sqlite'), { readOnly: true })
  return {
    all: (sql, ...p) => db.prepare(sql).all(...p),
    get: (sql, ...p) => db.prepare(sql).get(...p),
    close: () => db.close(),
  }
}

/** An evaluator that, the first time a candidate is evaluated (flag file absent), starts a process
 * tree that ignores SIGTERM, records every pid, and hangs; later evaluations score normally. */
const HANG_EVAL = `import { existsSync, readFileSync, appendFileSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
const v = Number(readFileSync('score.txt', 'utf8').trim())
const flag = process.env.AR_HANG_FLAG
if (flag && v < 10 && !existsSync(flag)) {
  writeFileSync(flag, 'hung once')
  const pids = process.env.AR_PIDS
  const child = spawn('sh', ['-c', 'trap "" TERM; sleep 300 & echo $! >> "$AR_PIDS"; while :; do sleep 1; done'], { stdio: 'ignore' })
  appendFileSync(pids, process.pid + '\\n' + child.pid + '\\n')
  process.on('SIGTERM', () => {})
  setInterval(() => {}, 1000)
} else {
  console.log(JSON.stringify({ score: v }))
}
`

export function hangSetup(t, extra = {}) {
  const { root, repo, head, untouched } = setup(t, { 'eval.mjs': HANG_EVAL })
  const pids = join(root, 'pids')
  const env = { AR_HANG_FLAG: join(root, 'hung'), AR_PIDS: pids }
  const config = join(root, 'config.json')
  writeFileSync(config, JSON.stringify({ terminationGraceMs: 300 }))
  const spec = specFile(root, { proposer: proposer(root, 'return score - 1'), ...extra })
  // Whatever a test leaves running (one whose host stays alive leaves its tree on purpose), or
  // an assertion leaves behind when it fails, nothing outlives the test.
  t.after(() => killCarrying('AR_PIDS', pids))
  return { root, repo, head, pids, env, config, spec, untouched }
}

/** Every file under `dir` with its SHA-256 (and every directory), sorted. */
function tree(dir) {
  const out = []
  const walk = (d, rel) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`
      if (e.isDirectory()) {
        out.push(`${path}/`)
        walk(join(d, e.name), path)
      } else {
        out.push(`${path} ${createHash('sha256').update(readFileSync(join(d, e.name))).digest('hex')}`)
      }
    }
  }
  walk(dir, '')
  return out.sort()
}

/** A folder outside the run that nothing may touch. */
function victim(root) {
  const dir = join(root, 'victim')
  mkdirSync(join(dir, 'sub'), { recursive: true })
  writeFileSync(join(dir, 'precious.txt'), 'do not delete\n')
  writeFileSync(join(dir, 'sub', 'more.txt'), 'nor this\n')
  return { dir, before: tree(dir) }
}

/** The caller's HEAD, index, staged work and reflog, as text. */
function callerState(repo) {
  return {
    head: git(repo, 'symbolic-ref', 'HEAD'),
    commit: git(repo, 'rev-parse', 'HEAD'),
    index: git(repo, 'ls-files', '--stage'),
    staged: git(repo, 'diff', '--cached', '--name-status'),
    reflog: git(repo, 'reflog', '--format=%H %gs'),
    indexBytes: createHash('sha256').update(readFileSync(join(repo, '.git', 'index'))).digest('hex'),
  }
}

/** A repository whose caller has staged work in progress, a victim folder, and the states. */
export function setup(t, files = {}) {
  const r = makeRepo(t, files)
  writeFileSync(join(r.repo, 'staged.txt'), 'staged by the caller\n')
  git(r.repo, 'add', 'staged.txt')
  const v = victim(r.root)
  let before = callerState(r.repo)
  const untouched = () => {
    assert.deepEqual(tree(v.dir), v.before, 'the victim folder is byte for byte unchanged')
    assert.deepEqual(callerState(r.repo), before, "the caller's HEAD, index and reflog are unchanged")
  }
  /** The caller changed its own repository: its state now is what must stay. */
  const snapshot = () => {
    before = callerState(r.repo)
  }
  return { ...r, victim: v.dir, untouched, snapshot }
}
