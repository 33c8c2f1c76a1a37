// The Node tests' half of `dsh-wire-shape`: what a JavaScript driver is shown and answers,
// checked against a generated wire file (`{steps or effects: {kind: {fields, answers}},
// answers: {kind: {fields}}}`, each field with its shape, as `src/lib.rs` describes them).
// Test code only: no package ships it.

const typeOf = (value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)

/**
 * Problems of `value` at `path` against a shape. `exact`: every field of an object must be
 * there (what a machine shows); otherwise a field may be left out (the reader defaults it),
 * never added.
 */
export function conform(value, shape, path, exact) {
  if (shape.oneOf !== undefined) {
    if (shape.oneOf.some((alternative) => conform(value, alternative, path, exact).length === 0)) return []
    return [`${path} is none of ${JSON.stringify(shape.oneOf)}`]
  }
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
  return fieldProblems(value, shape.object, path, exact)
}

/** Problems of an object's fields against `{field: shape}` (an `undefined` field is absent). */
export function fieldProblems(value, fields, path, exact) {
  const out = []
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue
    if (!Object.hasOwn(fields, key)) out.push(`${path}.${key} is not on the wire`)
    else out.push(...conform(item, fields[key], `${path}.${key}`, exact))
  }
  if (exact) {
    for (const key of Object.keys(fields)) if (value[key] === undefined) out.push(`${path}.${key} is missing`)
  }
  return out
}

/** Problems of a step a machine showed (tagged by `tag`) against `steps`, the file's steps. */
export function stepProblems(steps, step, tag) {
  const { [tag]: kind, ...rest } = step
  if (!Object.hasOwn(steps, kind)) return [`step kind ${kind} is not on the wire`]
  return fieldProblems(rest, steps[kind].fields, kind, true)
}

/**
 * Problems of an answer (tagged by `tag`) against `answers`, the file's answers, and, when the
 * step it answers is known (`stepKind`, which `takes` those kinds), of its kind.
 */
export function answerProblems(answers, answer, tag, stepKind, takes) {
  const { [tag]: kind, ...rest } = answer
  if (!Object.hasOwn(answers, kind)) return [`answer kind ${kind} is not on the wire`]
  const out = []
  if (stepKind !== undefined && !takes.includes(kind)) out.push(`${kind} does not answer ${stepKind} (the wire: ${takes})`)
  return [...out, ...fieldProblems(rest, answers[kind].fields, kind, false)]
}

/**
 * Watches every machine of the class `Machine` (a wasm-bindgen class with `poll` and `handle`)
 * until the returned function restores it: `onStep(machine, step)` gets each step `poll` shows,
 * parsed, and `onAnswer(machine, args)` the arguments of each `handle` the machine took (one it
 * refused, a test of driver misuse, is not passed on).
 */
export function watchMachine(Machine, { onStep, onAnswer }) {
  const { poll, handle } = Machine.prototype
  Machine.prototype.poll = function () {
    const text = poll.call(this)
    if (text !== undefined) onStep(this, JSON.parse(text))
    return text
  }
  Machine.prototype.handle = function (...args) {
    const result = handle.call(this, ...args)
    onAnswer(this, args)
    return result
  }
  return () => Object.assign(Machine.prototype, { poll, handle })
}
