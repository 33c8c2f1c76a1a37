// The original dsh-autoresearch's state, read-only: its per-run trackers
// (`<git-common-dir>/<stateRoot>/runs/<run-id>/tracker.sqlite`) and its shared lock database
// (`<git-common-dir>/dsh-autoresearch-locks.sqlite`). `list` shows its runs and every new run
// counts its live locks toward maxActiveRunsPerRepository, so a live original run is never raced.
// Nothing here writes; a file that cannot be read is skipped. Every query comes from the core,
// built for the columns each file has.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { autoresearchOriginalQuery, autoresearchSql } from './core.js'

const SQL = JSON.parse(autoresearchSql())

const LOCKS = 'dsh-autoresearch-locks.sqlite'

async function open(path) {
  if (!existsSync(path)) return undefined
  try {
    const { DatabaseSync } = await import('node:sqlite')
    const db = new DatabaseSync(path, { readOnly: true })
    db.exec(SQL.readOnlyPragmas)
    return db
  } catch {
    return undefined
  }
}

/** The core's query over `table` of `db`, for the columns it has. */
function query(db, table, columnsSql) {
  const columns = db.prepare(columnsSql).all().map((c) => c.name)
  return db.prepare(autoresearchOriginalQuery(table, JSON.stringify(columns)))
}

/** The run ids holding a live lock in the original's lock database. */
async function liveLocks(gitCommonDir) {
  const db = await open(join(gitCommonDir, LOCKS))
  if (db === undefined) return new Set()
  try {
    return new Set(query(db, 'active_locks', SQL.originalLockColumns).all().map((r) => r.run_id))
  } catch {
    return new Set()
  } finally {
    db.close()
  }
}

/** The original's live runs in this repository: they count toward the active-run limit. */
export async function originalLiveRuns(gitCommonDir) {
  return (await liveLocks(gitCommonDir)).size
}

/** The original's runs, as `list` rows (`origin: "original"`), newest first. */
export async function originalRuns(gitCommonDir, stateRoot) {
  const dir = join(gitCommonDir, stateRoot, 'runs')
  let ids = []
  try {
    ids = readdirSync(dir)
  } catch {
    return []
  }
  const live = await liveLocks(gitCommonDir)
  const rows = []
  for (const id of ids) {
    const db = await open(join(dir, id, 'tracker.sqlite'))
    if (db === undefined) continue
    try {
      for (const r of query(db, 'runs', SQL.originalRunColumns).all()) {
        rows.push({ ...r, origin: 'original', lock_held: live.has(r.run_id) ? 1 : 0 })
      }
    } catch {
      // Not a tracker this can read.
    } finally {
      db.close()
    }
  }
  const time = (r) => (typeof r.created_at === 'number' ? r.created_at : Date.parse(r.created_at) || 0)
  return rows.sort((a, b) => time(b) - time(a))
}
