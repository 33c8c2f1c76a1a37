#!/usr/bin/env node
// dsh-autoresearch: the headless runner. It runs the same Rust run core and the same driver as the
// DSH tool, with a proposer program instead of a child agent, and local processes instead of
// DSH's subprocess service. Progress goes to stderr; the result to stdout (with --json its last
// line is the result JSON). Exit 0 when a run completed (target-reached or budget-limited), 1
// when it ended otherwise, 2 for a bad command line, config or spec (naming field, rule, value).
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import {
  AutoresearchRun, autoresearchEscapeControls, autoresearchTrackerPath, encodeConfig, isAutoresearchRunId,
  renderAutoresearchList, renderAutoresearchRun, validateAutoresearchConfig, validateAutoresearchSpec,
} from '../lib/core.js'
import { drive } from '../lib/driver.js'
import { createGit } from '../lib/git.js'
import { originalRuns } from '../lib/original.js'
import { createLocalRunner } from '../lib/process.js'
import { LIST_LIMIT, openTrackerReadOnly } from '../lib/tracker.js'

const USAGE = `usage: dsh-autoresearch run [--json] [--config FILE] SPEC.json
       dsh-autoresearch resume [--json] [--config FILE] [--repo DIR] [--env NAME]... [--force] RUN_ID
       dsh-autoresearch list [--tsv | --json] [--config FILE] [--repo DIR] [--limit N]
       dsh-autoresearch show [--tsv | --json | --html OUT.html | --diff EXPERIMENT] [--config FILE] [--repo DIR] RUN_ID
       dsh-autoresearch abandon [--json] [--config FILE] [--repo DIR] [--reason TEXT] [--force] RUN_ID

  Runs a baseline-first, keep/reject optimization loop in an isolated git worktree of the
  repository: a proposer program edits files matching mutable_globs, the evaluator measures one
  metric, strict improvements are kept on the run branch, everything is recorded in
  <git-common-dir>/dsh-autoresearch/tracker.sqlite. The caller's checkout is never touched.

  SPEC.json holds the autoresearch tool's parameters (objective, mutable_globs, evaluation
  {command, args, cwd?}, metric_name, metric_direction, run_tag, …) plus proposer {command,
  args}: a program run in the worktree with the JSON handoff on stdin that edits files and
  prints {"hypothesis": …, "summary": …} as its last stdout line. A relative repository
  resolves against the current directory.

  run      start a run (a spec with resume_run_id resumes instead)
  resume   continue an interrupted run from its durable state (stored policy and proposer)
  list     the repository's newest runs
  show     one run's experiments (table, or --tsv / --json), read-only; --html OUT.html
           draws the run as one self-contained page (metric per experiment, best so far,
           baseline band, target); --diff EXPERIMENT (its ordinal or id) prints that
           candidate's diff against its parent
  abandon  stop a run nobody will resume: leftover processes are stopped, the run is
           cancelled and its lock released

  --config FILE  a JSON object with the autoresearch row config (defaults otherwise)
  --repo DIR     the repository (default: the current directory)
  --json         print the result as JSON (the last stdout line)
  --env NAME     resume: pass this runner's own NAME to the evaluator again (only hashes of the
                 spec's environment values are stored; each must match)
  --force        resume, abandon: take the run over even when its host cannot be proven dead
                 (another machine, boot or PID namespace, or still alive); without it such a
                 run is refused (run-live) and nothing is touched

  Exit status: 0 completed (target-reached, budget-limited), 1 ended otherwise, 2 usage, config
  or spec error.`

const COMMANDS = ['run', 'resume', 'list', 'show', 'abandon']

function fail(text) {
  process.stderr.write(`dsh-autoresearch: ${text}\n`)
  process.exit(2)
}

function parse(argv) {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  if (!COMMANDS.includes(command)) fail(`unknown command "${command}"\n${USAGE}`)
  const opts = { command, format: 'table', positional: [] }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    const value = () => {
      if (rest[i + 1] === undefined) fail(`${arg} needs a value`)
      return rest[++i]
    }
    if (arg === '--json') opts.format = 'json'
    else if (arg === '--tsv') opts.format = 'tsv'
    else if (arg === '--html') {
      opts.format = 'html'
      opts.out = value()
    }
    else if (arg === '--config') opts.config = value()
    else if (arg === '--repo') opts.repo = value()
    else if (arg === '--limit') opts.limit = value()
    else if (arg === '--reason') opts.reason = value()
    else if (arg === '--diff') opts.diff = value()
    else if (arg === '--force') opts.force = true
    else if (arg === '--env') {
      const name = value()
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) fail(`--env takes a variable name (got ${JSON.stringify(name)})`)
      if (process.env[name] === undefined) fail(`--env ${name}: ${name} is not set in this environment`)
      opts.env = { ...opts.env, [name]: process.env[name] }
    }
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`)
      process.exit(0)
    } else if (arg.startsWith('-')) fail(`unknown option "${arg}"\n${USAGE}`)
    else opts.positional.push(arg)
  }
  const wants = command === 'list' ? 0 : 1
  if (opts.positional.length !== wants) {
    fail(`${command} takes ${wants === 0 ? 'no argument' : `one ${command === 'run' ? 'SPEC.json' : 'RUN_ID'}`} (got ${opts.positional.length})\n${USAGE}`)
  }
  if (opts.format === 'tsv' && !['list', 'show'].includes(command)) fail(`--tsv is for list and show`)
  if (opts.format === 'html' && command !== 'show') fail('--html is for show')
  if (opts.env !== undefined && command !== 'resume') fail('--env is for resume')
  if (opts.force && !['resume', 'abandon'].includes(command)) fail('--force is for resume and abandon')
  if (opts.diff !== undefined && (command !== 'show' || opts.format !== 'table')) fail('--diff is for show, without --tsv, --json or --html')
  if (opts.limit !== undefined && (command !== 'list' || !/^[1-9]\d{0,5}$/.test(opts.limit))) {
    fail('--limit takes a positive integer, for list')
  }
  return opts
}

function readConfig(file) {
  let value = {}
  if (file !== undefined) {
    let text
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      fail(`cannot read --config ${file}: ${error.message}`)
    }
    try {
      value = JSON.parse(text)
    } catch (error) {
      fail(`--config ${file} is not valid JSON: ${error.message}`)
    }
  }
  const json = encodeConfig(value)
  const checked = JSON.parse(validateAutoresearchConfig(json))
  if (checked.issues) fail(`invalid config: ${checked.issues.map((i) => i.message).join('; ')}`)
  return { json, row: checked.value }
}

function checkRunId(id, command) {
  // Validated before anything touches the filesystem.
  if (!isAutoresearchRunId(id)) fail(`${command}: RUN_ID must be a lowercase UUID (8-4-4-4-12 hex) (got ${JSON.stringify(id)})`)
}

const progress = (text) => {
  for (const line of text.split('\n')) process.stderr.write(`[autoresearch] ${line}\n`)
}

async function driveToEnd(run, config, opts, runner) {
  const controller = new AbortController()
  let signals = 0
  const onSignal = (name) => {
    signals += 1
    if (signals > 1) {
      process.stderr.write(`dsh-autoresearch: ${name} again; exiting now (resume the run to stop leftovers)\n`)
      process.exit(130)
    }
    process.stderr.write(`dsh-autoresearch: ${name}: cancelling the run (again to exit now)\n`)
    controller.abort(`cancelled by ${name}`)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    await drive(run, {
      runner,
      callerCwd: process.cwd(),
      gitExecutable: config.row.gitExecutable,
      onProgress: progress,
      signal: controller.signal,
    })
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
  if (opts.format === 'json') process.stdout.write(`${run.resultJson()}\n`)
  else process.stdout.write(run.resultTable(20))
  process.exitCode = run.jobStatus === 'completed' ? 0 : 1
}

async function trackerOf(opts, config, runner) {
  const git = createGit({ runner, executable: config.row.gitExecutable })
  const facts = await git.discover(opts.repo, process.cwd())
  const path = autoresearchTrackerPath(facts.gitCommonDir, config.json)
  return { git, path, gitCommonDir: facts.gitCommonDir, tracker: await openTrackerReadOnly(path) }
}

/** `show --diff`: the candidate's diff against its parent, from the commit its ref keeps. */
async function showDiff(rows, wanted, git, gitCommonDir) {
  const experiment = rows.experiments.find((e) => String(e.ordinal) === wanted || e.experiment_id === wanted)
  const problem = experiment === undefined
    ? `no experiment ${JSON.stringify(wanted)} (ordinals 0-${rows.experiments.length - 1}, or an experiment id)`
    : experiment.candidate_commit === null
      ? `experiment ${wanted} has no candidate commit (${experiment.kind === 'baseline' ? 'the baseline measures the start commit' : `its round ended ${experiment.failure_code ?? experiment.state} before committing`})`
      : undefined
  if (problem !== undefined) {
    process.stderr.write(`dsh-autoresearch: show --diff: ${problem}\n`)
    process.exitCode = 1
    return
  }
  // The diff shows what the candidate wrote: its escape sequences are shown, never run.
  process.stdout.write(autoresearchEscapeControls(await git.diff({ gitCommonDir, from: experiment.parent_commit, to: experiment.candidate_commit })))
}

async function main() {
  const opts = parse(process.argv.slice(2))
  const config = readConfig(opts.config)
  const runner = createLocalRunner()
  const [arg] = opts.positional
  switch (opts.command) {
    case 'run': {
      let text
      try {
        text = readFileSync(arg, 'utf8')
      } catch (error) {
        fail(`cannot read ${arg}: ${error.message}`)
      }
      const checked = JSON.parse(validateAutoresearchSpec(text, config.json, true))
      if (checked.errors) {
        fail(`invalid spec ${arg}:\n${checked.errors.map((e) => `  ${e.message}`).join('\n')}`)
      }
      const run = AutoresearchRun.fromSpec(text, randomUUID(), config.json, Date.now())
      process.stderr.write(`[autoresearch] run ${run.runId}\n`)
      return driveToEnd(run, config, opts, runner)
    }
    case 'resume':
    case 'abandon': {
      checkRunId(arg, opts.command)
      const run = opts.command === 'resume'
        ? AutoresearchRun.resume(arg, opts.repo, config.json, Date.now(), opts.env === undefined ? undefined : JSON.stringify(opts.env))
        : AutoresearchRun.abandon(arg, opts.reason ?? 'abandoned by the operator (dsh-autoresearch abandon)', opts.repo, config.json, Date.now())
      if (opts.force) run.force()
      return driveToEnd(run, config, opts, runner)
    }
    case 'list': {
      const { tracker, gitCommonDir } = await trackerOf(opts, config, runner)
      const rows = tracker === undefined ? [] : tracker.list(Number(opts.limit ?? LIST_LIMIT))
      tracker?.close()
      rows.push(...await originalRuns(gitCommonDir, config.row.stateRoot))
      process.stdout.write(renderAutoresearchList(JSON.stringify(rows), opts.format))
      return undefined
    }
    case 'show': {
      checkRunId(arg, 'show')
      const { git, path, gitCommonDir, tracker } = await trackerOf(opts, config, runner)
      const rows = tracker?.load(arg) ?? null
      tracker?.close()
      if (rows === null) {
        process.stderr.write(`dsh-autoresearch: no run ${arg} in this repository's tracker\n`)
        process.exitCode = 1
        return undefined
      }
      if (opts.diff !== undefined) return showDiff(rows, opts.diff, git, gitCommonDir)
      const text = renderAutoresearchRun(JSON.stringify(rows), path, config.json, opts.format)
      if (opts.out === undefined) process.stdout.write(text)
      else {
        try {
          writeFileSync(opts.out, text)
        } catch (error) {
          process.stderr.write(`dsh-autoresearch: cannot write --html ${opts.out}: ${error.message}\n`)
          process.exitCode = 1
          return undefined
        }
        process.stdout.write(`wrote ${opts.out}\n`)
      }
      return undefined
    }
    default:
      return undefined
  }
}

main().catch((error) => {
  process.stderr.write(`dsh-autoresearch: ${error?.message ?? error}\n`)
  process.exit(1)
})
