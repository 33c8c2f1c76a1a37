// dsh-autoresearch's tracker: one SQLite database per repository state root, through node:sqlite
// (loaded lazily, so the module and `--help` also load on Nodes without it). Every statement and
// migration comes from the Rust core; this file only opens the file owner-only, runs the pragmas
// (WAL, synchronous FULL, foreign keys, busy timeout), migrates inside BEGIN IMMEDIATE, and runs
// each persist as one BEGIN IMMEDIATE transaction, answering each statement's change count.
import { chmodSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import { autoresearchMigrations, autoresearchSql } from './core.js'

const SQL = JSON.parse(autoresearchSql())
/** The newest runs `list` shows by default. */
export const LIST_LIMIT = 50

let sqlite
async function loadSqlite() {
  if (sqlite === undefined) {
    try {
      sqlite = await import('node:sqlite')
    } catch (error) {
      throw new Error(`dsh-autoresearch needs node:sqlite (Node ^22.13 or >=24; this is Node ${process.versions.node}): ${error.message}`)
    }
  }
  return sqlite
}

/** Creates `dir` and its missing parents owner-only; refuses a symlink or a non-directory. */
export function ensurePrivateDir(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const st = lstatSync(dir)
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory (a symlink or a file is in the way)`)
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new Error(`${dir} belongs to another user`)
  }
  chmodSync(dir, 0o700)
}

function privateFiles(path) {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600)
    } catch {
      // Not created yet.
    }
  }
}

/** A bound value from the core's wire form: `["int", "5"]`, `["real", 1.5]`, `["text", "s"]`,
 * `null`. Integers bind as BigInt, so STRICT INTEGER columns get integers. */
function bindValue(value) {
  if (value === null) return null
  const [type, v] = value
  if (type === 'int') return BigInt(v)
  if (type === 'real') return v
  if (type === 'text') return v
  throw new Error(`unknown SQL value type ${JSON.stringify(type)}`)
}

class Tracker {
  constructor(db, path) {
    this.db = db
    this.path = path
    this.statements = new Map()
  }

  prepare(sql) {
    let st = this.statements.get(sql)
    if (st === undefined) {
      st = this.db.prepare(sql)
      this.statements.set(sql, st)
    }
    return st
  }

  /** One transaction; resolves each statement's change count. */
  persist(statements) {
    this.db.exec('BEGIN IMMEDIATE')
    try {
      const changes = statements.map(({ sql, params }) => {
        const bound = {}
        for (const [name, value] of Object.entries(params)) bound[`:${name}`] = bindValue(value)
        return Number(this.prepare(sql).run(bound).changes)
      })
      this.db.exec('COMMIT')
      privateFiles(this.path)
      return changes
    } catch (error) {
      try {
        this.db.exec('ROLLBACK')
      } catch {
        // The failed statement already rolled the transaction back.
      }
      throw error
    }
  }

  /** The rows of one run as the core reads them, or null. */
  load(runId) {
    const p = { ':run_id': runId }
    const run = this.prepare(SQL.loadRun).get(p)
    if (run === undefined) return null
    return {
      run,
      experiments: this.prepare(SQL.loadExperiments).all(p),
      attempts: this.prepare(SQL.loadAttempts).all(p),
      artifacts: this.prepare(SQL.loadArtifacts).all(p),
    }
  }

  /** The retention cleanup's rows: ended runs with something left to remove, their artifacts. */
  retention() {
    return {
      runs: this.prepare(SQL.listRetentionRuns).all(),
      artifacts: this.prepare(SQL.listRetentionArtifacts).all(),
    }
  }

  list(limit = LIST_LIMIT) {
    return this.prepare(SQL.listRuns).all({ ':limit': BigInt(limit) })
  }

  close() {
    this.db.close()
  }
}

/** Opens (creating owner-only, migrating) the tracker at `path`. */
export async function openTracker(path) {
  const { DatabaseSync } = await loadSqlite()
  ensurePrivateDir(dirname(path))
  if (!existsSync(path)) {
    try {
      closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600))
    } catch (error) {
      if (error.code !== 'EEXIST') throw error
    }
  }
  if (lstatSync(path).isSymbolicLink()) throw new Error(`${path} is a symlink`)
  const db = new DatabaseSync(path)
  try {
    db.exec(SQL.pragmas)
    db.exec('BEGIN IMMEDIATE')
    try {
      const current = Number(db.prepare('PRAGMA user_version').get().user_version)
      for (const m of JSON.parse(autoresearchMigrations(current))) {
        db.exec(m.sql)
        db.exec(`PRAGMA user_version = ${Number(m.version)}`)
      }
      db.exec('COMMIT')
    } catch (error) {
      db.exec('ROLLBACK')
      throw error
    }
  } catch (error) {
    db.close()
    throw error
  }
  privateFiles(path)
  return new Tracker(db, path)
}

/** Opens an existing tracker read-only (for `list` and `show`); undefined when there is none.
 * An older schema is migrated first (the queries read the current one). */
export async function openTrackerReadOnly(path) {
  if (!existsSync(path)) return undefined
  const { DatabaseSync } = await loadSqlite()
  let db = new DatabaseSync(path, { readOnly: true })
  db.exec(SQL.readOnlyPragmas)
  const version = Number(db.prepare('PRAGMA user_version').get().user_version)
  if (version === 0) {
    db.close()
    return undefined
  }
  if (JSON.parse(autoresearchMigrations(version)).length > 0) { // throws for a newer schema
    db.close()
    ;(await openTracker(path)).close()
    db = new DatabaseSync(path, { readOnly: true })
    db.exec(SQL.readOnlyPragmas)
  }
  return new Tracker(db, path)
}
