// The wires of limit-break's two machines, checked from the JavaScript side. `wire/save.json` is
// generated from the save machine's types and table of answers (`crates/memory/tests/wire.rs`),
// `wire/fetch.json` from the fetch ladder driven through the binding and its table
// (`crates/wasm-adapter/src/limit_break/fetch/tests.rs`). Here each driver's performers must
// cover exactly its machine's step kinds, and in real saves (a first save that makes the
// directory, saves into a store, take-overs of a dead holder's and of another host's stale lock)
// and real fetches (a name resolved, rung 1, a reset that climbs to curl) every step the core
// shows must have exactly the fields its file lists, and every answer the performers give must
// be one the step takes, with no field the file does not list.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { mkdir, utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { core } from '../lib/core.js'
import dns from 'node:dns'
import { syncBuiltinESMExports } from 'node:module'
import { PERFORM as FETCH_PERFORM } from '../lib/fetch.js'
import { PERFORM, createMemory, storePaths } from '../lib/memory.js'
import { mount, scratch } from './support/harness.mjs'
import { loopbackServers } from './support/servers.mjs'

const wire = (name) => JSON.parse(readFileSync(new URL(`../wire/${name}.json`, import.meta.url), 'utf8'))
const SAVE = wire('save')
const FETCH = wire('fetch')

test('each driver\'s performers cover exactly the step kinds of its generated wire', () => {
  for (const [performers, file] of [[PERFORM, SAVE], [FETCH_PERFORM, FETCH]]) {
    const kinds = Object.keys(file.steps).filter((kind) => kind !== 'done')
    assert.deepEqual(Object.keys(performers).sort(), kinds.sort(), file.machine)
  }
})

/** Problems of one step and its answer against a wire file. */
function problems(WIRE, step, answer) {
  const out = []
  const shape = WIRE.steps[step.kind]
  if (shape === undefined) return [`step kind ${step.kind} is not on the wire`]
  const expected = [...(step.kind === 'done' ? [] : ['id']), 'kind', ...shape.fields].sort()
  const keys = Object.keys(step).sort()
  if (keys.join() !== expected.join()) out.push(`${step.kind} has fields ${keys} (the wire: ${expected})`)
  if (answer === undefined) return out
  if (!shape.answers.includes(answer.kind)) out.push(`${answer.kind} does not answer ${step.kind} (the wire: ${shape.answers})`)
  const allowed = new Set(['kind', ...(WIRE.answers[answer.kind] ?? [])])
  for (const key of Object.keys(answer)) {
    if (answer[key] !== undefined && !allowed.has(key)) out.push(`${answer.kind} answer has ${key}, not on the wire`)
  }
  return out
}

/**
 * Checks every step `Machine` shows and every answer it gets against `file` while the test runs:
 * the problems found and the step kinds seen.
 */
function watch(t, Machine, file) {
  const { poll, handle } = Machine.prototype
  const seen = new Set()
  const found = []
  let outstanding
  Machine.prototype.poll = function () {
    const text = poll.call(this)
    outstanding = JSON.parse(text)
    seen.add(outstanding.kind)
    if (outstanding.kind === 'done') found.push(...problems(file, outstanding))
    return text
  }
  Machine.prototype.handle = function (id, input, ...rest) {
    found.push(...problems(file, outstanding, JSON.parse(input)))
    return handle.call(this, id, input, ...rest)
  }
  t.after(() => Object.assign(Machine.prototype, { poll, handle }))
  return { seen, found }
}

test('every step of real saves and every answer to it are on the wire', async (t) => {
  const wasm = core()
  const plugin = new wasm.LimitBreakPlugin('{}')
  const { seen, found } = watch(t, wasm.LimitBreakSave, SAVE)

  const home = await scratch(t)
  const paths = storePaths(wasm, home)
  const memory = createMemory(wasm, plugin, paths, {})
  const save = async (id) => {
    const answer = await memory.save({ id, statement: `fact ${id}` })
    assert.equal(answer.ok, true, JSON.stringify(answer))
  }
  await save('wire.first') // no directory yet: create fails, makeDir, create again
  await save('wire.second')
  // A dead holder's lock on this host, then a stale one from another host: both taken over.
  const record = (pid, host) => `${JSON.stringify({ token: `t-${pid}`, pid, host, created: 0 })}\n`
  const leave = async (text) => {
    await writeFile(paths.lock, text)
    const old = new Date(Date.now() - 20000)
    await utimes(paths.lock, old, old)
  }
  await mkdir(paths.dir, { recursive: true })
  await leave(record(2 ** 22 + 17, hostname()))
  await save('wire.after-dead-holder')
  await leave(record(4242, 'another-host'))
  await save('wire.after-stale-lock')

  assert.deepEqual(found, [])
  // The saves went through most of the protocol; the rest (a Windows rename retry's sleep, a
  // link that puts a file back) is covered by the performer check above and the Rust fake world.
  const unseen = Object.keys(SAVE.steps).filter((kind) => !seen.has(kind)).sort()
  assert.deepEqual(unseen, ['link', 'sleep'])
})

test('every step of real fetches and every answer to it are on the wire', async (t) => {
  const servers = await loopbackServers()
  t.after(() => servers.close())
  // A name that resolves to both loopbacks (curl then gets `--resolve`, no DNS).
  const real = dns.lookup
  t.mock.method(dns, 'lookup', (host, options, callback) => {
    if (host !== 'dual.test') return real(host, options, callback)
    return callback(null, [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }])
  })
  syncBuiltinESMExports()
  t.after(() => {
    t.mock.restoreAll()
    syncBuiltinESMExports()
  })
  const { seen, found } = watch(t, core().LimitBreakFetch, FETCH)
  const { tools } = await mount(t, { allowPrivateNetwork: true })
  for (const path of ['/ok', `/reset-n?n=1&k=wire${Date.now()}`]) {
    const result = await tools.call('resilient_fetch', { url: servers.url('dual.test', path) })
    assert.equal(result.value.ok, true, JSON.stringify(result.value))
  }
  assert.deepEqual(found, [])
  assert.deepEqual([...seen].sort(), Object.keys(FETCH.steps).sort())
})
