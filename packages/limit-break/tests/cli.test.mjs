// The people CLI, run as a process: list, show, forget, export, import and stats over the same
// store and lock as the tools; exit 0 / 1 / 2; usage on bad input.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { mount, scratch } from './support/harness.mjs'

const CLI = fileURLToPath(new URL('../bin/limit-break.js', import.meta.url))

function cli(home, ...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, DSH_HOME: home } })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

async function seeded(t) {
  const { tools, home, store } = await mount(t)
  await tools.call('memory_save', { id: 'net.proxy', statement: 'The corporate proxy is proxy.example:3128', tags: ['network'] })
  await tools.call('memory_save', { id: 'user.editor', statement: 'The user prefers vim keybindings' })
  return { tools, home, store }
}

test('list, show and export read the store the tools wrote', async (t) => {
  const { home, store } = await seeded(t)
  const list = cli(home, 'list')
  assert.equal(list.status, 0, list.stderr)
  assert.match(list.stdout, /^net\.proxy +\d{4}-\d\d-\d\dT[^ ]+Z +The corporate proxy/m)
  assert.match(list.stdout, /2 facts\n$/)
  const show = cli(home, 'show', 'user.editor')
  assert.equal(JSON.parse(show.stdout).statement, 'The user prefers vim keybindings')
  assert.equal(cli(home, 'export').stdout, await readFile(store, 'utf8'))
  const file = join(home, 'exported.json')
  assert.equal(cli(home, 'export', file).status, 0)
  assert.equal(await readFile(file, 'utf8'), await readFile(store, 'utf8'))
})

test('forget deletes under the lock; a missing id exits 1 with the core message', async (t) => {
  const { home, store, tools } = await seeded(t)
  const gone = cli(home, 'forget', 'net.proxy')
  assert.equal(gone.status, 0, gone.stderr)
  assert.deepEqual(JSON.parse(gone.stdout), { ok: true, id: 'net.proxy', removed: 1, facts: 1 })
  assert.deepEqual(JSON.parse(await readFile(store, 'utf8')).facts.map((f) => f.id), ['user.editor'])
  assert.equal((await tools.call('memory_recall', { query: 'proxy' })).value.total, 0, 'the tools see the CLI write')
  const missing = cli(home, 'forget', 'net.proxy')
  assert.equal(missing.status, 1)
  assert.equal(missing.stderr, 'limit-break: memory.not_found: no fact has the id "net.proxy"; nothing was deleted\n')
})

test('import merges another store file by policy', async (t) => {
  const { home, store } = await seeded(t)
  const other = await scratch(t)
  const incoming = join(other, 'facts.json')
  await writeFile(incoming, JSON.stringify({
    schema_version: 1,
    facts: [
      { id: 'net.proxy', statement: 'older copy', timestamp: '2000-01-01T00:00:00.000Z' },
      { id: 'new.one', statement: 'brought in', timestamp: '2030-01-01T00:00:00.000Z' },
    ],
  }))
  const merged = cli(home, 'import', incoming)
  assert.equal(merged.status, 0, merged.stderr)
  assert.deepEqual(JSON.parse(merged.stdout), { ok: true, created: ['new.one'], updated: [], skipped: [{ id: 'net.proxy', reason: 'not_newer' }], rejected: [] })
  const forced = cli(home, 'import', incoming, '--policy', 'overwrite')
  assert.deepEqual(JSON.parse(forced.stdout).updated, ['net.proxy'])
  const facts = JSON.parse(await readFile(store, 'utf8')).facts
  assert.equal(facts.find((f) => f.id === 'net.proxy').statement, 'older copy')
  const bad = cli(home, 'import', incoming, '--policy', 'sometimes')
  assert.equal(bad.status, 1)
  assert.match(bad.stderr, /--policy must be newer, overwrite or keep/)
})

test('stats print what memory_stats answers', async (t) => {
  const { home, tools } = await seeded(t)
  const printed = JSON.parse(cli(home, 'stats').stdout)
  const answered = (await tools.call('memory_stats', {})).value
  assert.deepEqual(printed, answered)
})

test('recall ranks and filters as memory_recall does, one line per fact', async (t) => {
  const { home, tools } = await seeded(t)
  await tools.call('memory_save', { id: 'net.dns', statement: 'DNS answers come through the proxy host', tags: ['dns'] })
  const lines = (out) => out.trimEnd().split('\n')
  for (const [args, cliArgs] of [
    [{ query: 'proxy' }, []],
    [{ query: 'proxy', limit: 1, offset: 1 }, ['--limit', '1', '--offset', '1']],
    [{ query: 'proxy', tags: ['dns'] }, ['--tag', 'dns']],
  ]) {
    const printed = cli(home, 'recall', args.query, ...cliArgs)
    assert.equal(printed.status, 0, printed.stderr)
    const answered = (await tools.call('memory_recall', args)).value
    const rows = answered.facts.map((f) => [f.score.toFixed(3), f.id])
    assert.deepEqual(lines(printed.stdout).slice(0, rows.length).map((l) => l.trim().split(/ +/).slice(0, 2)), rows, cliArgs.join(' '))
    assert.equal(lines(printed.stdout)[rows.length], `${rows.length} of ${answered.total} matching${args.offset ? ` (from ${args.offset})` : ''}`)
  }
  const bad = cli(home, 'recall', 'proxy', '--limit', 'many')
  assert.equal(bad.status, 1)
  assert.match(bad.stderr, /^limit-break: memory\.invalid: `limit` /)
  assert.equal(cli(home, 'recall').status, 2, 'QUERY is required')
})

test('a corrupt store fails every command with exit 1 and stays as it is', async (t) => {
  const { home, store } = await seeded(t)
  await writeFile(store, '{"facts": [')
  for (const args of [['list'], ['show', 'x'], ['export'], ['forget', 'net.proxy'], ['stats']]) {
    const r = cli(home, ...args)
    assert.equal(r.status, 1, args.join(' '))
    assert.match(r.stderr, /memory\.corrupt/)
  }
  assert.equal(await readFile(store, 'utf8'), '{"facts": [')
})

test('usage errors exit 2; --help exits 0; --home overrides $DSH_HOME', async (t) => {
  const home = await scratch(t)
  const help = cli(home, '--help')
  assert.equal(help.status, 0)
  assert.match(help.stdout, /^usage: limit-break <command>/)
  for (const args of [[], ['frobnicate'], ['show'], ['list', 'extra'], ['list', '--nope']]) {
    const r = cli(home, ...args)
    assert.equal(r.status, 2, args.join(' '))
    assert.match(r.stderr, /^limit-break: /)
  }
  const { home: other } = await seeded(t)
  const r = spawnSync(process.execPath, [CLI, 'list', '--home', other], { encoding: 'utf8', env: { ...process.env, DSH_HOME: home } })
  assert.match(r.stdout, /2 facts/)
  assert.equal(execFileSync(process.execPath, [CLI, 'list'], { encoding: 'utf8', env: { ...process.env, DSH_HOME: home } }), '0 facts\n')
})
