// Hostile and malformed event shapes: the listener never throws, never changes the downstream
// decision for them, and reports problems at most once a minute.
import test from 'node:test'
import assert from 'node:assert/strict'
import {
  MINUTE, PROBE, call, captureErrors, execOf, exited, failed, fakeClock, mount, nudges, ok, post,
  signals,
} from './support/harness.mjs'

const MiB = 1024 * 1024

/** Posts one event and checks that the downstream decision comes back as the same object. */
async function passesThrough(ctx, exec, result, label) {
  const inner = { kind: 'block', feedback: [{ type: 'text', text: 'downstream' }], extra: label }
  const decision = await post(ctx, exec, result, () => inner)
  assert.equal(decision, inner, `${label}: the downstream decision must come back untouched`)
}

test('events without a usable agent are ignored silently', async (t) => {
  const errors = captureErrors(t)
  const { ctx } = await mount(PROBE)
  for (const agent of [null, undefined, 'agent-a', 42, true, Symbol('agent')]) {
    await passesThrough(ctx, execOf('read', agent), ok(), `agent ${String(agent)}`)
    await passesThrough(ctx, execOf('bash', agent), failed('boom'), `failed, agent ${String(agent)}`)
  }
  for (const exec of [null, undefined, {}, 'read', 42, { name: 'read' }]) {
    await passesThrough(ctx, exec, ok(), `exec ${JSON.stringify(exec)}`)
  }
  assert.deepEqual(errors, [])
})

test('malformed events from a real agent pass through and are reported', async (t) => {
  const errors = captureErrors(t)
  const { ctx } = await mount(PROBE)
  const agent = {}
  const cases = [
    ['empty name', execOf('', agent), ok()],
    ['numeric name', execOf(42, agent), ok()],
    ['missing name', { agent, token: Symbol('t'), callId: 'c' }, ok()],
    ['undefined result', execOf('read', agent), undefined],
    ['null result', execOf('read', agent), null],
    ['string result', execOf('read', agent), 'ok'],
  ]
  for (const [label, exec, result] of cases) await passesThrough(ctx, exec, result, label)
  assert.equal(errors.length, 1, 'reported once, then rate-limited')
  assert.equal(errors[0][0], '[research-nudge] malformed tool event ignored; tool call passed through:')
  assert.ok(errors[0][1] instanceof TypeError)
  assert.equal(errors[0][1].message, 'tool event without a name')
  // None of them was counted.
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 1, threshold: 20, calls: 1, failures: 0, repeated: 0 })
})

test('odd but usable results are counted, and the downstream decision is preserved', async (t) => {
  const errors = captureErrors(t)
  const { ctx } = await mount(PROBE)
  const agent = {}
  const inner = () => ({ kind: 'accept', content: [{ type: 'text', text: 'kept' }] })
  // isError without an error object: a failure with no text.
  let d = await call(ctx, agent, 'read', { isError: true }, inner)
  assert.deepEqual(d.content, [{ type: 'text', text: 'kept' }])
  assert.deepEqual(signals(d), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  // Content that is not an array (a bare string is read as text; anything else as no text).
  d = await call(ctx, agent, 'read', { isError: true, error: { message: '' }, content: 'bare string' }, inner)
  assert.equal(signals(d).failures, 2)
  d = await call(ctx, agent, 'read', { isError: true, error: {}, content: { type: 'text', text: 'x' } }, inner)
  assert.equal(signals(d).failures, 3)
  d = await call(ctx, agent, 'read', { isError: true, error: { message: 42 }, content: [null, 7, { type: 'text' }, { type: 'image' }] }, inner)
  assert.equal(signals(d).failures, 4)
  // A success with no content or value at all.
  d = await call(ctx, agent, 'read', {}, inner)
  assert.deepEqual(signals(d), { debt: 21, threshold: 20, calls: 5, failures: 4, repeated: 0 })
  assert.deepEqual(errors, [])
})

test('an empty failure text is never a repeat', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  assert.equal(signals(await call(ctx, agent, 'read', { isError: true })).repeated, 0)
  assert.equal(signals(await call(ctx, agent, 'read', { isError: true })).repeated, 0)
})

test('a 10 MiB error message is handled quickly and still counts as a failure', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const huge = `Error: out of memory\n${'x'.repeat(10 * MiB)}\n    at main (/srv/app.js:1:1)`
  const started = performance.now()
  const d = await call(ctx, agent, 'bash', failed(huge))
  const elapsed = performance.now() - started
  assert.ok(elapsed < 1000, `took ${elapsed.toFixed(0)} ms`)
  assert.deepEqual(signals(d), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  // The same huge failure again is a repeat.
  assert.equal(signals(await call(ctx, agent, 'bash', failed(huge))).repeated, 1)
})

test('10 MiB of failing output, in one block or in many, is quick and counts as a failure', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const big = 'npm ERR! '.repeat(10 * MiB / 9)
  let started = performance.now()
  let d = await call(ctx, agent, 'bash', exited(1, big))
  assert.ok(performance.now() - started < 1000, 'exit-code output')
  assert.equal(signals(d).failures, 1)

  const blocks = Array.from({ length: 100_000 }, (_, i) => ({ type: 'text', text: `line ${i} ${'y'.repeat(100)}` }))
  started = performance.now()
  d = await call(ctx, agent, 'read', { isError: true, error: { message: '' }, content: blocks })
  assert.ok(performance.now() - started < 1000, 'many content blocks')
  assert.equal(signals(d).failures, 2)
})

test('a failure text of astral characters, cut inside a surrogate pair, does not throw', async (t) => {
  const errors = captureErrors(t)
  const { ctx } = await mount(PROBE)
  const agent = {}
  let failures = 0
  for (const prefix of ['', 'a', '\u{1F600}a']) {
    const text = prefix + '\u{1F600}'.repeat(MiB)
    failures += 1
    assert.equal(signals(await call(ctx, agent, 'read', failed(text))).failures, failures)
  }
  assert.deepEqual(errors, [])
})

test('malformed events are reported at most once a minute, with a count of what was held back', async (t) => {
  const clock = fakeClock(t)
  const errors = captureErrors(t)
  const { ctx } = await mount({})
  const agent = {}
  await passesThrough(ctx, execOf('', agent), ok(), 'first')
  assert.equal(errors.length, 1)
  for (let i = 0; i < 50; i++) {
    clock.advance(1000) // 50 s in all: still inside the minute
    await passesThrough(ctx, execOf('read', agent), null, `held ${i}`)
  }
  assert.equal(errors.length, 1, '50 more malformed events log nothing more within the minute')
  clock.advance(MINUTE - 50_000 - 1)
  await passesThrough(ctx, execOf('read', agent), undefined, 'one ms early')
  assert.equal(errors.length, 1)
  clock.advance(1)
  await passesThrough(ctx, execOf('read', agent), null, 'a minute later')
  assert.equal(errors.length, 2)
  assert.equal(errors[1][0], '[research-nudge] malformed tool event ignored; tool call passed through (51 more since the last report):')
  assert.equal(errors[1][1].message, 'tool "read" finished without a result')
  // The count starts over after a report.
  clock.advance(MINUTE)
  await passesThrough(ctx, execOf('', agent), ok(), 'next minute')
  assert.equal(errors[2][0], '[research-nudge] malformed tool event ignored; tool call passed through:')
})

test('each mounted plugin has its own report budget', async (t) => {
  const errors = captureErrors(t)
  const first = await mount({})
  const second = await mount({})
  await passesThrough(first.ctx, execOf('', {}), ok(), 'first plugin')
  await passesThrough(second.ctx, execOf('', {}), ok(), 'second plugin')
  assert.equal(errors.length, 2)
})

test('a hostile downstream decision is returned as is even when a reminder is due', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  for (const inner of [undefined, null, 'accept', 42]) {
    const decision = await call(ctx, agent, 'read', ok(), () => inner)
    assert.equal(decision, inner)
  }
  // additionalContexts that is not a list is replaced by a list holding the reminder.
  const d = await call(ctx, agent, 'read', ok(), () => ({ kind: 'accept', additionalContexts: 'nope' }))
  assert.equal(d.additionalContexts.length, 1)
  assert.equal(nudges(d).length, 1)
})

test('exec getters that throw are contained and reported', async (t) => {
  const errors = captureErrors(t)
  const { ctx } = await mount(PROBE)
  const exec = { get agent() { throw new Error('agent getter') }, name: 'read', token: Symbol('t') }
  await passesThrough(ctx, exec, ok(), 'agent getter')
  assert.equal(errors.length, 1)
  assert.equal(errors[0][1].message, 'agent getter')
})
