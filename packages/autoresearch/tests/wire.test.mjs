// The run's wire, checked from the JavaScript side: `wire/run.json` is generated from the core's
// own effect and answer shapes and its table of answers (`crates/autoresearch/tests/wire.rs`).
// Here `lib/driver.js` must perform exactly the effects that take an answer, and in a real run
// (a DSH-style run: git worktrees, an evaluator process, proposal rounds) every effect the core
// shows must have exactly the fields the file lists, and every answer the driver gives must be
// one that effect takes, with no field the file does not list.
import test from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { AutoresearchRun } from '../lib/core.js'
import { drive } from '../lib/driver.js'
import { createLocalRunner } from '../lib/process.js'
import { makeRepo } from './support/fixture.mjs'

const WIRE = JSON.parse(readFileSync(new URL('../wire/run.json', import.meta.url), 'utf8'))

test('the driver performs exactly the effects of the generated wire that take an answer', () => {
  const source = readFileSync(new URL('../lib/driver.js', import.meta.url), 'utf8')
  const perform = source.slice(source.indexOf('async function perform('), source.indexOf('default:', source.indexOf('async function perform(')))
  const performed = [...perform.matchAll(/case '([A-Za-z]+)':/g)].map((m) => m[1]).sort()
  const answered = Object.entries(WIRE.effects).filter(([, e]) => e.answers.length > 0).map(([kind]) => kind).sort()
  assert.deepEqual(performed, answered)
  // The two that take no answer are handled in the loop.
  const unanswered = Object.entries(WIRE.effects).filter(([, e]) => e.answers.length === 0).map(([kind]) => kind).sort()
  assert.deepEqual(unanswered, ['interrupt', 'report'])
  for (const kind of unanswered) assert.ok(source.includes(`effect.kind === '${kind}'`), kind)
})

test('every effect of a real run and every answer to it are on the wire', async (t) => {
  const { poll, handle } = AutoresearchRun.prototype
  const kinds = new Map()
  const seen = new Set()
  const found = []
  AutoresearchRun.prototype.poll = function () {
    const text = poll.call(this)
    if (text === undefined) return text
    const effect = JSON.parse(text)
    const shape = WIRE.effects[effect.kind]
    seen.add(effect.kind)
    if (shape === undefined) {
      found.push(`effect kind ${effect.kind} is not on the wire`)
      return text
    }
    if (effect.id !== undefined) kinds.set(effect.id, effect.kind)
    const keys = Object.keys(effect).filter((k) => k !== 'kind' && k !== 'id').sort()
    if (keys.join() !== shape.fields.join()) found.push(`${effect.kind} has fields ${keys} (the wire: ${shape.fields})`)
    return text
  }
  AutoresearchRun.prototype.handle = function (input, now) {
    const answer = JSON.parse(input)
    if (answer.type !== 'cancel') {
      const kind = kinds.get(answer.id)
      const takes = WIRE.effects[kind]?.answers ?? []
      if (!takes.includes(answer.type)) found.push(`${answer.type} does not answer ${kind} (the wire: ${takes})`)
    }
    const allowed = new Set(['type', 'id', ...(WIRE.answers[answer.type] ?? [])])
    for (const key of Object.keys(answer)) if (!allowed.has(key)) found.push(`${answer.type} answer has ${key}, not on the wire`)
    return handle.call(this, input, now)
  }
  t.after(() => Object.assign(AutoresearchRun.prototype, { poll, handle }))

  const { repo } = makeRepo(t)
  const spec = JSON.stringify({
    objective: 'lower the score',
    mutable_globs: ['score.txt'],
    evaluation: { command: 'node', args: ['eval.mjs'] },
    metric_name: 'score',
    metric_direction: 'minimize',
    run_tag: 'wire-1',
    max_experiments: 2,
    timeout_ms: 30_000,
  })
  const run = AutoresearchRun.fromSpec(spec, randomUUID(), '{}', Date.now())
  await drive(run, {
    runner: createLocalRunner(),
    callerCwd: repo,
    async propose({ worktree }) {
      const score = Number(readFileSync(join(worktree, 'score.txt'), 'utf8'))
      writeFileSync(join(worktree, 'score.txt'), `${score - 2}\n`)
      return { hypothesis: `lower by 2 from ${score}`, summary: 'edited score.txt' }
    },
  })
  assert.equal(JSON.parse(run.resultJson()).status, 'budget-limited')
  assert.deepEqual(found, [])
  assert.ok(seen.size >= 12, `a real run showed ${[...seen]}`)
})
