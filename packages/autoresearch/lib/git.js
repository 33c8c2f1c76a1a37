// dsh-autoresearch's git boundary: the git commands behind the core's git effects, run through
// the injected process runner (so inside DSH they go through ctx.subprocess). Each command's
// argv, environment, output caps, timeout and commit identity come from the core
// (`autoresearchGitCommand`, crates/autoresearch/src/git.rs); this file picks the steps and
// performs them. Commands write only the run's own worktree, the run branch and a temporary
// index; the caller's checkout and branches are never touched.
//
// A proposer or an evaluator can write anything inside the worktree, `.git` included, so git
// never discovers the repository from there: every worktree command names the worktree's admin
// directory (found under the common git dir, which they cannot write) and the work tree
// explicitly, and the `.git` link is checked, and put back, before each of them.
import { mkdtempSync, rmSync, existsSync, mkdirSync, lstatSync, readFileSync, readdirSync, writeFileSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { autoresearchGitCommand } from './core.js'

const ZERO_OID = '0000000000000000000000000000000000000000'

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** A file name for evidence: UTF-8 as is, other bytes as `\xNN`. */
function shownName(bytes) {
  let out = ''
  for (const b of bytes) out += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`
  return out
}

const isLink = (path) => {
  try {
    return lstatSync(path).isSymbolicLink()
  } catch {
    return false
  }
}

const sameFile = (a, b) => {
  try {
    return realpathSync(a) === realpathSync(b)
  } catch {
    return false
  }
}

/** `git config --list --show-origin -z` output → `[{origin, key}]`. */
function parseConfigList(stdout) {
  const fields = stdout.split('\0')
  const out = []
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i]
    const key = fields[i + 1].split('\n', 1)[0]
    if (key !== '') out.push({ origin, key })
  }
  return out
}

/** Whether every directory between `root` and `path` (both absolute, `path` inside `root`) is a
 * real directory: false when one is missing; an error when one is a symlink or another file, or
 * `path` is not inside `root`. */
export function realDirsBetween(root, path) {
  const rel = relative(root, path)
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`${path} is not inside ${root}`)
  let dir = root
  for (const part of rel.split(sep).slice(0, -1)) {
    dir = join(dir, part)
    let st
    try {
      st = lstatSync(dir)
    } catch (error) {
      if (error.code === 'ENOENT') return false
      throw error
    }
    if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`${dir} is not a directory (a symlink or another file took its place): nothing below it is touched`)
  }
  return true
}

export class GitError extends Error {}

/** `startup`: the commands run while the plugin starts (the core gives them a shorter timeout). */
export function createGit({ runner, executable = 'git', startup = false }) {
  /** Runs the core's command for `args` in the repository `gitDir` (and the work tree `workTree`;
   * a temporary index `indexFile`; a candidate's commit dated `commitDate`); resolves
   * `{code, stdout, stderr}` (text) or throws a GitError. */
  async function run(args, { cwd, gitDir, workTree, indexFile, commitDate, stdin, ok = [0] } = {}) {
    const command = JSON.parse(autoresearchGitCommand(JSON.stringify({
      executable, gitDir, workTree, args, indexFile, commitDate, startup,
    })))
    const env = {}
    for (const [key, value] of Object.entries(runner.scrubbedParentEnv())) {
      if (!key.startsWith(command.unsetPrefix)) env[key] = value
    }
    const handle = runner.spawn({
      argv: command.argv,
      cwd,
      env: { ...env, ...command.env },
      stdin,
      stdoutCap: command.stdoutCap,
      stderrCap: command.stderrCap,
      graceMs: command.graceMs,
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
    }, command.timeoutMs)
    const { exitCode, signal } = await handle.exited
    clearTimeout(timer)
    const { stdout, stderr } = await handle.finish()
    const text = {
      code: exitCode,
      stdout: stdout.bytes.toString('utf8'),
      stderr: stderr.bytes.toString('utf8').trim(),
    }
    const { shown } = command
    if (timedOut) throw new GitError(`${shown} timed out after ${command.timeoutMs} ms`)
    if (stdout.truncated) throw new GitError(`${shown} printed more than ${command.stdoutCap} bytes (git-output-limit)`)
    if (signal !== null || !ok.includes(exitCode)) {
      throw new GitError(`${shown} failed (${signal ?? `exit ${exitCode}`}): ${text.stderr.slice(-1500)}`)
    }
    return text
  }

  const line = (r) => r.stdout.trim()

  // git's worktree commands read every entry of `<common>/worktrees/` and fail on an entry another
  // one is still writing ("failed to read .../commondir"), so on one repository they run one at
  // a time.
  const worktreeTurns = new Map()
  function inTurn(gitCommonDir, work) {
    const done = (worktreeTurns.get(gitCommonDir) ?? Promise.resolve()).then(work)
    worktreeTurns.set(gitCommonDir, done.catch(() => {}))
    return done
  }

  /** The run's worktree at `path`, detached at `startCommit`, and the new branch `branch` at
   * `startCommit`. Idempotent for exactly this run's worktree and branch; anything else that
   * already exists there is an error, never overwritten. */
  async function createWorktree({ gitCommonDir, path, branch, startCommit }) {
    const git = (args, opts = {}) => run(args, { ...opts, gitDir: gitCommonDir })
    // A slot's scratch worktree has no branch of its own.
    const existing = branch === undefined
      ? startCommit
      : (await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { ok: [0, 1] })).stdout.trim()
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
  }

  /** The worktree's admin directory: the entry of `<common>/worktrees/` whose `gitdir` file
   * names `<worktree>/.git`. Neither can be written from inside the worktree. */
  const admins = new Map()
  function adminDir(gitCommonDir, worktree) {
    const key = `${gitCommonDir}\0${worktree}`
    if (admins.has(key)) return admins.get(key)
    const root = join(gitCommonDir, 'worktrees')
    const want = join(worktree, '.git')
    for (const name of existsSync(root) ? readdirSync(root) : []) {
      let named
      try {
        named = readFileSync(join(root, name, 'gitdir'), 'utf8').trim()
      } catch {
        continue
      }
      if (resolve(join(root, name), named) === want || sameFile(resolve(join(root, name), named), want)) {
        admins.set(key, join(root, name))
        return join(root, name)
      }
    }
    throw new GitError(`${worktree} is not a registered worktree of ${gitCommonDir}`)
  }

  /** The worktree at `path` is the directory git made there: not a symlink, another file, or a
   * directory reached through a symlinked parent. Candidate code can rename its worktree and put
   * a link to any folder in its place; git must never reset, clean or remove through it. */
  function checkWorktreeDir(path) {
    let st
    try {
      st = lstatSync(path)
    } catch {
      throw new GitError(`the run worktree ${path} is missing`)
    }
    const where = (() => {
      try {
        return join(realpathSync(dirname(path)), basename(path))
      } catch {
        return undefined
      }
    })()
    if (st.isSymbolicLink() || !st.isDirectory() || where === undefined || realpathSync(path) !== where) {
      throw new GitError(`the run worktree ${path} is no longer the directory git made (a symlink or another file took its place); nothing was done through it`)
    }
  }

  /** Puts the worktree's `.git` back to a file naming its admin directory when it is anything
   * else (another target, a directory, a symlink, missing); true when it had to. */
  function restoreLink(gitCommonDir, worktree) {
    const admin = adminDir(gitCommonDir, worktree)
    const link = join(worktree, '.git')
    let st
    try {
      st = lstatSync(link)
    } catch {
      st = undefined
    }
    if (st?.isFile()) {
      const m = /^gitdir: (.+?)\r?\n?$/.exec(readFileSync(link, 'utf8'))
      try {
        if (m && realpathSync(resolve(worktree, m[1])) === realpathSync(admin)) return false
      } catch {
        // A target that does not exist: restore.
      }
    }
    if (st !== undefined) rmSync(link, { recursive: st.isDirectory(), force: true })
    writeFileSync(link, `gitdir: ${admin}\n`)
    return true
  }

  /** Runs a worktree command with the git dir and work tree named, never discovered, and the
   * attributes of the checked-out commit (git 2.40+), never of files a proposer wrote: a
   * `.gitattributes` in the worktree cannot route a file through a filter, even one the
   * repository's config defines and the spec allowlists. */
  function inWorktree(gitCommonDir, worktree, args, opts = {}) {
    checkWorktreeDir(worktree)
    restoreLink(gitCommonDir, worktree)
    return run(args, { ...opts, cwd: worktree, gitDir: adminDir(gitCommonDir, worktree), workTree: worktree })
  }

  /** The repository's config as git reads it for `gitDir` (a worktree's admin dir adds its own
   * config.worktree), includes followed; our `-c` flags are left out by their origin. */
  async function configList(gitDir) {
    const r = await run(['config', '--list', '--show-origin', '-z'], { cwd: gitDir, gitDir, ok: [0, 1] })
    return parseConfigList(r.stdout).filter((e) => !e.origin.startsWith('command line:'))
  }

  /** Paths of the submodules (gitlinks) at the worktree's HEAD. */
  async function gitlinks(gitCommonDir, worktree) {
    const r = await inWorktree(gitCommonDir, worktree, ['ls-files', '--stage', '-z'])
    return r.stdout.split('\0').filter((e) => e.startsWith('160000 ')).map((e) => e.slice(e.indexOf('\t') + 1))
  }

  /** What `git status` cannot show: nested `.git` entries, names that are not UTF-8, files in
   * submodule paths. Walks without following symlinks. */
  function walk(worktree, links) {
    const found = []
    const linkSet = new Set(links)
    const visit = (rel) => {
      let entries
      try {
        entries = readdirSync(join(worktree, ...rel.map((r) => r.text)), { withFileTypes: true, encoding: 'buffer' })
      } catch {
        return
      }
      for (const entry of entries) {
        const bytes = entry.name
        let text
        try {
          text = UTF8.decode(bytes)
        } catch {
          found.push({ kind: 'undecodable-name', path: [...rel.map((r) => r.text), shownName(bytes)].join('/') })
          continue
        }
        const path = [...rel.map((r) => r.text), text].join('/')
        if (text === '.git') {
          if (rel.length > 0) found.push({ kind: 'nested-git', path })
          continue
        }
        const isDir = entry.isDirectory()
        if (linkSet.has(path)) {
          if (isDir) {
            for (const inner of readdirSync(join(worktree, path))) found.push({ kind: 'inside-gitlink', path: `${path}/${inner}` })
          }
          continue
        }
        if (isDir) visit([...rel, { text, shown: text }])
      }
    }
    visit([])
    return found
  }

  /** Tracked paths whose file in the worktree differs from `commit`'s (or is missing), compared
   * through a fresh temporary index: neither the worktree's own index nor its HEAD, which code
   * run in the worktree can rewrite, takes part. */
  async function trackedChanges(gitCommonDir, worktree, commit) {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-autoresearch-index-'))
    try {
      const indexFile = join(dir, 'index')
      await inWorktree(gitCommonDir, worktree, ['read-tree', commit], { indexFile })
      await inWorktree(gitCommonDir, worktree, ['update-index', '-q', '--refresh', '--ignore-submodules'], { indexFile, ok: [0, 1] })
      const r = await inWorktree(gitCommonDir, worktree, ['diff-files', '--name-only', '-z', '--ignore-submodules'], { indexFile })
      return r.stdout.split('\0').filter(Boolean)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  return {
    run,

    /** After a proposer or an evaluator: puts `.git` back if it changed, and says what git
     * cannot see (`full`: walk the tree too) and what the config is now. */
    async inspect({ gitCommonDir, worktree, full, commit }) {
      try {
        checkWorktreeDir(worktree)
      } catch {
        return { anomalies: [{ kind: 'worktree-replaced', path: '.' }], gitConfig: [] }
      }
      const anomalies = []
      if (restoreLink(gitCommonDir, worktree)) anomalies.push({ kind: 'git-link-changed', path: '.git' })
      if (full) anomalies.push(...walk(worktree, await gitlinks(gitCommonDir, worktree)))
      if (commit !== undefined) {
        for (const path of await trackedChanges(gitCommonDir, worktree, commit)) anomalies.push({ kind: 'tracked-changed', path })
      }
      return { anomalies, gitConfig: await configList(adminDir(gitCommonDir, worktree)) }
    },

    /** `repository` (default: the caller's cwd; relative to the caller's cwd, never the host
     * process's) → `{toplevel, gitCommonDir, head}`; read-only. */
    async discover(repository, callerCwd) {
      const dir = resolve(callerCwd, repository ?? '.')
      if (!existsSync(dir)) throw new GitError(`repository ${dir} does not exist`)
      const paths = await run(['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'], { cwd: dir })
      const [toplevel, gitCommonDir] = paths.stdout.split('\n')
      const head = line(await run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: dir }))
      return { toplevel, gitCommonDir, head, gitConfig: await configList(gitCommonDir) }
    },

    /** `createWorktree`, in its turn. */
    createWorktree(args) {
      return inTurn(args.gitCommonDir, () => createWorktree(args))
    },

    /** `git status` of the worktree, raw (`-z`). */
    async status({ gitCommonDir, worktree }) {
      return (await inWorktree(gitCommonDir, worktree, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching', '--no-renames'])).stdout
    },

    /** Commits exactly `paths` on top of `parent` in a temporary index (no branch moves), as the
     * core's fixed author with the parent's date (deterministic, replayable); checks the commit changes
     * exactly those paths; points `keepRef` at it (so no decision and no gc loses the diff); then
     * detaches the worktree at it and cleans everything else. */
    async commit({ gitCommonDir, worktree, parent, paths, message, keepRef }) {
      const dir = mkdtempSync(join(tmpdir(), 'dsh-autoresearch-index-'))
      const git = (args, opts) => inWorktree(gitCommonDir, worktree, args, opts)
      try {
        const indexFile = join(dir, 'index')
        await git(['read-tree', parent], { indexFile })
        await git(['add', '-A', '-f', '--pathspec-from-file=-', '--pathspec-file-nul'], {
          indexFile, stdin: paths.map((p) => `${p}\0`).join(''),
        })
        const tree = line(await git(['write-tree'], { indexFile }))
        const date = line(await git(['show', '-s', '--format=%ad', '--date=raw', parent]))
        const commit = line(await git(['commit-tree', tree, '-p', parent, '-m', message, '--no-gpg-sign'], {
          indexFile, commitDate: date,
        }))
        const changed = (await git(['diff-tree', '--no-commit-id', '--name-only', '-r', '-z', '--no-renames', parent, commit]))
          .stdout.split('\0').filter(Boolean).sort()
        const wanted = [...paths].sort()
        if (changed.join('\0') !== wanted.join('\0')) {
          throw new GitError(`the candidate commit changes [${changed.join(', ')}], not the validated [${wanted.join(', ')}]`)
        }
        await run(['update-ref', keepRef, commit], { gitDir: gitCommonDir })
        await this.checkoutClean({ gitCommonDir, worktree, commit })
        return commit
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },

    /** Puts the worktree exactly at `commit`, detached: tracked changes reset, every untracked
     * and ignored file removed (evaluator byproducts included), submodule paths emptied (status
     * and clean skip them). */
    async checkoutClean({ gitCommonDir, worktree, commit }) {
      if (!existsSync(worktree)) throw new GitError(`the run worktree ${worktree} is missing`)
      const git = (args) => inWorktree(gitCommonDir, worktree, args)
      await git(['reset', '--hard', '--quiet'])
      await git(['clean', '-ffdxq'])
      await git(['checkout', '--detach', '--force', '--quiet', commit])
      await git(['clean', '-ffdxq'])
      for (const path of await gitlinks(gitCommonDir, worktree)) {
        const dir = join(worktree, path)
        let st
        try {
          if (!realDirsBetween(worktree, dir)) continue
          st = lstatSync(dir)
        } catch {
          continue
        }
        if (!st.isDirectory()) {
          rmSync(dir, { force: true })
          mkdirSync(dir)
          continue
        }
        for (const inner of readdirSync(dir)) rmSync(join(dir, inner), { recursive: true, force: true })
      }
    },

    /** Moves the run branch from `from` to `to` (compare-and-swap); already at `to` is done. */
    async fastForward({ gitCommonDir, branch, from, to }) {
      const git = (args, opts = {}) => run(args, { ...opts, gitDir: gitCommonDir })
      try {
        await git(['update-ref', `refs/heads/${branch}`, to, from])
      } catch (error) {
        const now = line(await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { ok: [0, 1] }))
        if (now !== to) throw error
      }
    },

    /** The diff `from..to` as text (`show --diff`), with no external diff or textconv program. */
    async diff({ gitCommonDir, from, to }) {
      return (await run(['diff', '--no-ext-diff', '--no-textconv', from, to], { gitDir: gitCommonDir })).stdout
    },

    /** Removes the run worktree, dirty or not, in its turn. */
    removeWorktree({ gitCommonDir, path }) {
      const git = (args, opts = {}) => run(args, { ...opts, gitDir: gitCommonDir })
      return inTurn(gitCommonDir, async () => {
        if (existsSync(path) || isLink(path)) {
          checkWorktreeDir(path)
          restoreLink(gitCommonDir, path)
          await git(['worktree', 'remove', '--force', '--force', path])
        }
        await git(['worktree', 'prune'])
      })
    },
  }
}
