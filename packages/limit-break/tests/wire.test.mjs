// The save machine's wire, checked from the JavaScript side: `wire/save.json` is generated from
// the Rust types and the machine's table of answers (`crates/memory/tests/wire.rs`). Here the
// performers must cover exactly its step kinds, and in real saves (a first save that makes the
// directory, saves into a store, a take-over of a dead holder's lock and of another host's stale
// one) every step the core shows must have exactly the fields the file lists, and every answer
// the performers give must be one the step takes, with no field the file does not list.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { mkdir, utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { core } from '../lib/core.js'
import { PERFORM, createMemory, storePaths } from '../lib/memory.js'
import { scratch } from './support/harness.mjs'

const WIRE = JSON.parse(readFileSync(new URL('../wire/save.json', import.meta.url), 'utf8'))

test('the performers cover exactly the step kinds of the generated wire', () => {
  const kinds = Object.keys(WIRE.steps).filter((kind) => kind !== 'done')
  assert.deepEqual(Object.keys(PERFORM).sort(), kinds.sort())
})

/** Problems of one step and its answer against the wire file. */
function problems(step, answer) {
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

test('every step of real saves and every answer to it are on the wire', async (t) => {
  const wasm = core()
  const plugin = new wasm.LimitBreakPlugin('{}')
  const { poll, handle } = wasm.LimitBreakSave.prototype
  const seen = new Set()
  const found = []
  let outstanding
  wasm.LimitBreakSave.prototype.poll = function () {
    const text = poll.call(this)
    outstanding = JSON.parse(text)
    seen.add(outstanding.kind)
    if (outstanding.kind === 'done') found.push(...problems(outstanding))
    return text
  }
  wasm.LimitBreakSave.prototype.handle = function (id, input, wall, mono) {
    found.push(...problems(outstanding, JSON.parse(input)))
    return handle.call(this, id, input, wall, mono)
  }
  t.after(() => Object.assign(wasm.LimitBreakSave.prototype, { poll, handle }))

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
  const unseen = Object.keys(WIRE.steps).filter((kind) => !seen.has(kind)).sort()
  assert.deepEqual(unseen, ['link', 'sleep'])
})
