// The wires of limit-break's two machines, checked from the JavaScript side (`support/wire.mjs`
// reads `wire/save.json` and `wire/fetch.json`). Here each driver's performers must
// cover exactly its machine's step kinds, and in real saves (a first save that makes the
// directory, saves into a store, take-overs of a dead holder's and of another host's stale lock)
// and real fetches (a name resolved, rung 1, a reset that climbs to curl) every step the core
// shows must have exactly the fields its file lists, with their types, and every answer the
// performers give must be one the step takes, with no field the file does not list and each
// field of its type.
import test from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { core } from '../lib/core.js'
import dns from 'node:dns'
import { syncBuiltinESMExports } from 'node:module'
import { PERFORM as FETCH_PERFORM } from '../lib/fetch.js'
import { PERFORM, createMemory, storePaths } from '../lib/memory.js'
import { mount, scratch } from './support/harness.mjs'
import { loopbackServers } from './support/servers.mjs'
import { FETCH, SAVE, watch } from './support/wire.mjs'

test('each driver\'s performers cover exactly the step kinds of its generated wire', () => {
  for (const [performers, file] of [[PERFORM, SAVE], [FETCH_PERFORM, FETCH]]) {
    const kinds = Object.keys(file.steps).filter((kind) => kind !== 'done')
    assert.deepEqual(Object.keys(performers).sort(), kinds.sort(), file.machine)
  }
})

test('every step of real saves and every answer to it are on the wire', async (t) => {
  const wasm = core()
  const plugin = new wasm.LimitBreakPlugin('{}')
  const { seen, found, restore } = watch(wasm.LimitBreakSave, SAVE)
  t.after(restore)

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
  const { seen, found, restore } = watch(core().LimitBreakFetch, FETCH)
  t.after(restore)
  const { tools } = await mount(t, { allowPrivateNetwork: true })
  for (const path of ['/ok', `/reset-n?n=1&k=wire${Date.now()}`]) {
    const result = await tools.call('resilient_fetch', { url: servers.url('dual.test', path) })
    assert.equal(result.value.ok, true, JSON.stringify(result.value))
  }
  assert.deepEqual(found, [])
  assert.deepEqual([...seen].sort(), Object.keys(FETCH.steps).sort())
})
