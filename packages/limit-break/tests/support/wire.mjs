// limit-break's two wires from the JavaScript side: `wire/save.json` is generated from the save
// machine's types and answers (`crates/memory/tests/wire.rs`), `wire/fetch.json` from the fetch
// ladder driven through the binding (`crates/wasm-adapter/src/limit_break/fetch/tests.rs`), and
// both are read with `dsh-wire-shape`'s checker. `watch` checks every step a machine shows and
// every answer it takes against its file; `checkWireThroughout` does it for a whole test file.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after } from 'node:test'
import { answerProblems, stepProblems, watchMachine } from '../../../../crates/wire-shape/check.mjs'
import { core } from '../../lib/core.js'

const wire = (name) => JSON.parse(readFileSync(new URL(`../../wire/${name}.json`, import.meta.url), 'utf8'))
export const SAVE = wire('save')
export const FETCH = wire('fetch')

/** Problems of one step and its answer against a wire file. */
function problems(file, step, answer) {
  const out = stepProblems(file.steps, step, 'kind')
  if (answer === undefined || !Object.hasOwn(file.steps, step.kind)) return out
  return [...out, ...answerProblems(file.answers, answer, 'kind', step.kind, file.steps[step.kind].answers)]
}

/**
 * Checks every step a `Machine` shows and every answer it takes against `file` until `restore`:
 * the problems found and the step kinds seen.
 */
export function watch(Machine, file) {
  const seen = new Set()
  const found = []
  const outstanding = new WeakMap() // machine -> the step it shows
  const restore = watchMachine(Machine, {
    onStep(machine, step) {
      outstanding.set(machine, step)
      seen.add(step.kind)
      if (step.kind === 'done') found.push(...problems(file, step))
    },
    onAnswer(machine, [, input]) {
      found.push(...problems(file, outstanding.get(machine), JSON.parse(input)))
    },
  })
  return { seen, found, restore }
}

/** Watches every save and fetch the test file runs in this process; the file fails at its end if
 * any step or answer was off the wire. */
export function checkWireThroughout() {
  const wasm = core()
  const watches = [watch(wasm.LimitBreakSave, SAVE), watch(wasm.LimitBreakFetch, FETCH)]
  after(() => {
    for (const { restore } of watches) restore()
    const found = watches.flatMap(({ found }) => found)
    assert.deepEqual([...new Set(found)], [], 'every step and answer of the saves and fetches run here is on wire/*.json')
  })
}
