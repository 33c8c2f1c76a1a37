// The run's wire, checked from the JavaScript side: `wire/run.json` is generated from the Rust
// types and the core's table of answers (`crates/autoresearch/tests/wire.rs`), and read with
// `dsh-wire-shape`'s checker. `watchWire()` wraps AutoresearchRun's poll and handle so that,
// while a test drives runs in this process, every effect the core hands out must have exactly
// the fields the file lists, with their types, and every answer the core takes may carry only
// fields the file lists, with their types.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after } from 'node:test'
import { AutoresearchRun } from '../../lib/core.js'
import { answerProblems as answerProblemsOf, stepProblems, watchMachine } from '../../../../crates/wire-shape/check.mjs'

export const WIRE = JSON.parse(readFileSync(new URL('../../wire/run.json', import.meta.url), 'utf8'))

/** Problems of one effect the core handed out. */
export const effectProblems = (effect) => stepProblems(WIRE.effects, effect, 'kind')

/** Problems of one answer the core took for an effect of `kind` (none for a cancel). */
export const answerProblems = (answer, kind) =>
  answerProblemsOf(WIRE.answers, answer, 'type', kind, WIRE.effects[kind]?.answers)

/**
 * Checks every effect and every taken answer of the runs this process drives from now until
 * the test `t` (or, without it, the file) ends: the problems found, and the effect kinds and
 * answer types seen. An answer the core refuses (a test of driver misuse) is not counted.
 */
export function watchWire(t) {
  const seen = { effects: new Set(), answers: new Set() }
  const found = []
  const kinds = new WeakMap() // run -> Map(effect id -> kind)
  const kindsOf = (run) => {
    if (!kinds.has(run)) kinds.set(run, new Map())
    return kinds.get(run)
  }
  const restore = watchMachine(AutoresearchRun, {
    onStep(run, effect) {
      seen.effects.add(effect.kind)
      found.push(...effectProblems(effect))
      if (effect.id !== undefined) kindsOf(run).set(effect.id, effect.kind)
    },
    onAnswer(run, [text]) {
      const answer = JSON.parse(text)
      seen.answers.add(answer.type)
      found.push(...answerProblems(answer, kindsOf(run).get(answer.id)))
    },
  })
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
