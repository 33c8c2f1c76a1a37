// dsh-autoresearch's git boundary: the git commands behind the core's git effects, run through
// the injected process runner (so inside DSH they go through ctx.subprocess). Every command is
// argv-only, with a scrubbed environment (no GIT_*, no system or global config, no hooks, no
// fsmonitor, no pager, no prompts) and an output cap. Commands write only the run's own worktree,
// the run branch and a temporary index; the caller's checkout and branches are never touched.
import { mkdtempSync, rmSync, existsSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

/** Output kept from one git command; more is an error (`git-output-limit`). */
const GIT_OUTPUT_CAP = 64 * 1024 * 1024
const GIT_TIMEOUT_MS = 300_000
const ZERO_OID = '0000000000000000000000000000000000000000'
const AUTHOR = { name: 'dsh-autoresearch', email: 'autoresearch@localhost' }

/** Flags on every command: no hooks, filesystem monitor, auto-gc, signing or path quoting. */
const HARDENING = [
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'core.untrackedCache=false',
  '-c', 'gc.auto=0',
  '-c', 'maintenance.auto=false',
  '-c', 'commit.gpgSign=false',
  '-c', 'advice.detachedHead=false',
  '-c', 'core.quotePath=false',
]

export class GitError extends Error {}

export function createGit({ runner, executable = 'git', timeoutMs = GIT_TIMEOUT_MS }) {
  const baseEnv = () => {
    const env = {}
    for (const [key, value] of Object.entries(runner.scrubbedParentEnv())) {
      if (!key.startsWith('GIT_')) env[key] = value
    }
    return {
      ...env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_PAGER: 'cat',
      GIT_OPTIONAL_LOCKS: '0',
      LC_ALL: 'C',
    }
  }

  /** Runs `git <args>`; resolves `{code, stdout, stderr}` (text) or throws a GitError. */
  async function run(args, { cwd, env = {}, stdin, ok = [0] } = {}) {
    const argv = [executable, ...HARDENING, ...args]
    const handle = runner.spawn({
      argv,
      cwd,
      env: { ...baseEnv(), ...env },
      stdin,
      stdoutCap: GIT_OUTPUT_CAP,
      stderrCap: 64 * 1024,
      graceMs: 2_000,
    })
    try {
      await handle.spawned
    } catch (error) {
      throw new GitError(`cannot run ${executable}: ${error.message}`)
    }
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      handle.terminate()
    }, timeoutMs)
    const { exitCode, signal } = await handle.exited
    clearTimeout(timer)
    const { stdout, stderr } = await handle.finish()
    const text = {
      code: exitCode,
      stdout: stdout.bytes.toString('utf8'),
      stderr: stderr.bytes.toString('utf8').trim(),
    }
    const shown = `git ${args.filter((a) => !a.startsWith('-c')).slice(0, 6).join(' ')}`
    if (timedOut) throw new GitError(`${shown} timed out after ${timeoutMs} ms`)
    if (stdout.truncated) throw new GitError(`${shown} printed more than ${GIT_OUTPUT_CAP} bytes (git-output-limit)`)
    if (signal !== null || !ok.includes(exitCode)) {
      throw new GitError(`${shown} failed (${signal ?? `exit ${exitCode}`}): ${text.stderr.slice(-1500)}`)
    }
    return text
  }

  const line = (r) => r.stdout.trim()

  return {
    run,

    /** `repository` (default: the caller's cwd; relative to the caller's cwd, never the host
     * process's) → `{toplevel, gitCommonDir, head}`; read-only. */
    async discover(repository, callerCwd) {
      const dir = resolve(callerCwd, repository ?? '.')
      if (!existsSync(dir)) throw new GitError(`repository ${dir} does not exist`)
      const paths = await run(['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'], { cwd: dir })
      const [toplevel, gitCommonDir] = paths.stdout.split('\n')
      const head = line(await run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: dir }))
      return { toplevel, gitCommonDir, head }
    },

    /** The run's worktree at `path`, detached at `startCommit`, and the new branch `branch` at
     * `startCommit`. Idempotent for exactly this run's worktree and branch; anything else that
     * already exists there is an error, never overwritten. */
    async createWorktree({ gitCommonDir, path, branch, startCommit }) {
      const git = (args, opts = {}) => run(['--git-dir', gitCommonDir, ...args], opts)
      const existing = (await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { ok: [0, 1] })).stdout.trim()
      if (existing !== '' && existing !== startCommit) {
        throw new GitError(`branch ${branch} already exists at ${existing}, not at the run's start ${startCommit}`)
      }
      if (existsSync(path)) {
        const list = (await git(['worktree', 'list', '--porcelain', '-z'])).stdout.split('\0')
        if (!list.includes(`worktree ${path}`)) throw new GitError(`${path} exists and is not a registered worktree`)
      } else {
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
        await git(['worktree', 'add', '--detach', '--quiet', path, startCommit], { cwd: dirname(path) })
      }
      if (existing === '') await git(['update-ref', `refs/heads/${branch}`, startCommit, ZERO_OID])
    },

    /** `git status` of the worktree, raw (`-z`). */
    async status(worktree) {
      return (await run(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching', '--no-renames'], { cwd: worktree })).stdout
    },

    /** Commits exactly `paths` on top of `parent` in a temporary index (no branch moves), with a
     * fixed author and the parent's date (deterministic, replayable); checks the commit changes
     * exactly those paths; then detaches the worktree at it and cleans everything else. */
    async commit({ worktree, parent, paths, message }) {
      const dir = mkdtempSync(join(tmpdir(), 'dsh-autoresearch-index-'))
      try {
        const env = { GIT_INDEX_FILE: join(dir, 'index'), GIT_LITERAL_PATHSPECS: '1' }
        await run(['read-tree', parent], { cwd: worktree, env })
        await run(['add', '-A', '-f', '--pathspec-from-file=-', '--pathspec-file-nul'], {
          cwd: worktree, env, stdin: paths.map((p) => `${p}\0`).join(''),
        })
        const tree = line(await run(['write-tree'], { cwd: worktree, env }))
        const date = line(await run(['show', '-s', '--format=%ad', '--date=raw', parent], { cwd: worktree }))
        const commit = line(await run(['commit-tree', tree, '-p', parent, '-m', message, '--no-gpg-sign'], {
          cwd: worktree,
          env: {
            ...env,
            GIT_AUTHOR_NAME: AUTHOR.name,
            GIT_AUTHOR_EMAIL: AUTHOR.email,
            GIT_COMMITTER_NAME: AUTHOR.name,
            GIT_COMMITTER_EMAIL: AUTHOR.email,
            GIT_AUTHOR_DATE: date,
            GIT_COMMITTER_DATE: date,
          },
        }))
        const changed = (await run(['diff-tree', '--no-commit-id', '--name-only', '-r', '-z', '--no-renames', parent, commit], { cwd: worktree }))
          .stdout.split('\0').filter(Boolean).sort()
        const wanted = [...paths].sort()
        if (changed.join('\0') !== wanted.join('\0')) {
          throw new GitError(`the candidate commit changes [${changed.join(', ')}], not the validated [${wanted.join(', ')}]`)
        }
        await this.checkoutClean({ worktree, commit })
        return commit
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },

    /** Puts the worktree exactly at `commit`, detached: tracked changes reset, every untracked
     * and ignored file removed (evaluator byproducts included). */
    async checkoutClean({ worktree, commit }) {
      if (!existsSync(worktree)) throw new GitError(`the run worktree ${worktree} is missing`)
      await run(['reset', '--hard', '--quiet'], { cwd: worktree })
      await run(['clean', '-ffdxq'], { cwd: worktree })
      await run(['checkout', '--detach', '--force', '--quiet', commit], { cwd: worktree })
      await run(['clean', '-ffdxq'], { cwd: worktree })
    },

    /** Moves the run branch from `from` to `to` (compare-and-swap); already at `to` is done. */
    async fastForward({ gitCommonDir, branch, from, to }) {
      const git = (args, opts = {}) => run(['--git-dir', gitCommonDir, ...args], opts)
      try {
        await git(['update-ref', `refs/heads/${branch}`, to, from])
      } catch (error) {
        const now = line(await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { ok: [0, 1] }))
        if (now !== to) throw error
      }
    },

    /** Removes the run worktree, dirty or not. */
    async removeWorktree({ gitCommonDir, path }) {
      const git = (args, opts = {}) => run(['--git-dir', gitCommonDir, ...args], opts)
      if (existsSync(path)) await git(['worktree', 'remove', '--force', '--force', path])
      await git(['worktree', 'prune'])
    },
  }
}
