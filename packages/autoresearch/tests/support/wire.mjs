// The run's wire, checked from the JavaScript side: `wire/run.json` is generated from the Rust
// types and the core's table of answers (`crates/autoresearch/tests/wire.rs`). `watchWire()`
// wraps AutoresearchRun's poll and handle so that, while a test drives runs in this process,
// every effect the core hands out must have exactly the fields the file lists, with their
// types, and every answer the core takes may carry only fields the file lists, with their types.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after } from 'node:test'
import { AutoresearchRun } from '../../lib/core.js'

export const WIRE = JSON.parse(readFileSync(new URL('../../wire/run.json', import.meta.url), 'utf8'))

const typeOf = (value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)

/**
 * Problems of `value` against a generated shape (a type name or several joined by `|`,
 * `{array}`, `{object}`, `{map}`, composite ones `nullable`). `exact`: every field of an object
 * must be there (what the core sends); otherwise a field may be left out (the reader defaults
 * it), never added.
 */
export function conform(value, shape, path, exact) {
  if (typeof shape === 'string') {
    const types = shape.split('|')
    return types.includes('any') || types.includes(typeOf(value)) ? [] : [`${path} is ${typeOf(value)}, not ${shape}`]
  }
  if (value === null) return shape.nullable ? [] : [`${path} is null, not nullable`]
  if ('array' in shape) {
    if (!Array.isArray(value)) return [`${path} is ${typeOf(value)}, not an array`]
    return value.flatMap((item, i) => conform(item, shape.array, `${path}[${i}]`, exact))
  }
  if (typeOf(value) !== 'object') return [`${path} is ${typeOf(value)}, not an object`]
  if ('map' in shape) return Object.entries(value).flatMap(([key, item]) => conform(item, shape.map, `${path}.${key}`, exact))
  return fields(value, shape.object, path, exact)
}

function fields(value, expected, path, exact) {
  const out = []
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue
    if (!Object.hasOwn(expected, key)) out.push(`${path}.${key} is not on the wire`)
    else out.push(...conform(item, expected[key], `${path}.${key}`, exact))
  }
  if (exact) {
    for (const key of Object.keys(expected)) if (!(key in value)) out.push(`${path}.${key} is missing`)
  }
  return out
}

/** Problems of one effect the core handed out. */
export function effectProblems(effect) {
  const shape = WIRE.effects[effect.kind]
  if (shape === undefined) return [`effect kind ${effect.kind} is not on the wire`]
  const { kind, ...rest } = effect
  return fields(rest, shape.fields, kind, true)
}

/** Problems of one answer the core took for an effect of `kind` (none for a cancel). */
export function answerProblems(answer, kind) {
  const shape = WIRE.answers[answer.type]
  if (shape === undefined) return [`answer type ${answer.type} is not on the wire`]
  const out = []
  if (kind !== undefined && !WIRE.effects[kind].answers.includes(answer.type)) {
    out.push(`${answer.type} does not answer ${kind} (the wire: ${WIRE.effects[kind].answers})`)
  }
  const { type, ...rest } = answer
  return [...out, ...fields(rest, shape.fields, type, false)]
}

/**
 * Checks every effect and every taken answer of the runs this process drives from now until
 * the test `t` (or, without it, the file) ends: the problems found, and the effect kinds and
 * answer types seen. An answer the core refuses (a test of driver misuse) is not counted.
 */
export function watchWire(t) {
  const { poll, handle } = AutoresearchRun.prototype
  const seen = { effects: new Set(), answers: new Set() }
  const found = []
  const kinds = new WeakMap() // run -> Map(effect id -> kind)
  const kindsOf = (run) => {
    if (!kinds.has(run)) kinds.set(run, new Map())
    return kinds.get(run)
  }
  AutoresearchRun.prototype.poll = function () {
    const text = poll.call(this)
    if (text !== undefined) {
      const effect = JSON.parse(text)
      seen.effects.add(effect.kind)
      found.push(...effectProblems(effect))
      if (effect.id !== undefined) kindsOf(this).set(effect.id, effect.kind)
    }
    return text
  }
  AutoresearchRun.prototype.handle = function (text, now) {
    const result = handle.call(this, text, now)
    const answer = JSON.parse(text)
    seen.answers.add(answer.type)
    found.push(...answerProblems(answer, kindsOf(this).get(answer.id)))
    return result
  }
  const restore = () => Object.assign(AutoresearchRun.prototype, { poll, handle })
  if (t !== undefined) t.after(restore)
  return { seen, found, restore }
}

/** Watches every run the test file drives in this process; the file fails at its end if any
 * effect or answer was off the wire. */
export function checkWireThroughout() {
  const watch = watchWire()
  after(() => {
    watch.restore()
    assert.deepEqual([...new Set(watch.found)], [], 'every effect and answer of the runs driven here is on wire/run.json')
  })
}
