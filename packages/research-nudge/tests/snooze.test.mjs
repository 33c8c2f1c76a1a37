// The research_nudge_snooze tool: its registered definition, its body, and how a snooze is armed
// by the post-execute event of the very call whose body ran.
import test from 'node:test'
import assert from 'node:assert/strict'
import {
  MINUTE, PROBE, call, execOf, failed, fakeClock, mount, nudges, ok, post, signals,
} from './support/harness.mjs'

const NAME = 'research_nudge_snooze'
const reply = (n) => `Research Nudge reminders snoozed for ${n === 1 ? '1 minute' : `${n} minutes`}. Accumulated debt will continue to be tracked.`

/** The whole snooze call as DSH runs it: the tool body, then post-execute with the same exec. */
async function snoozeCall(ctx, snooze, agent, args, inner = () => ({ kind: 'accept' })) {
  const exec = execOf(NAME, agent, { arguments: args })
  const text = await snooze.execute(args, exec)
  const downstream = inner()
  const decision = await post(ctx, exec, ok(text), () => downstream)
  return { text, decision, downstream, exec }
}

test('the snooze tool is registered with a raw JSON-Schema definition', async () => {
  const { tools, snooze } = await mount({})
  assert.deepEqual([...tools.registered.keys()], [NAME])
  assert.equal(snooze.name, NAME)
  assert.equal(
    snooze.description,
    'Temporarily suppress Research Nudge reminders when local investigation is making useful progress. This does not erase accumulated research debt.',
  )
  assert.deepEqual(snooze.parameters, {
    type: 'object',
    properties: {
      minutes: { type: 'number', description: 'Minutes to snooze (default 30, capped at 60).' },
      reason: { type: 'string', description: 'Brief reason for snoozing, for the agent transcript only.' },
    },
    additionalProperties: false,
  })
  assert.deepEqual(snooze.output.schema, { type: 'string' })
  assert.deepEqual(snooze.output.render({ minutes: 5 }, 'snoozed!'), [{ type: 'text', text: 'snoozed!' }])
  assert.equal(typeof snooze.execute, 'function')
  // Lossless JSON, as DSH requires for the prompt projection.
  assert.deepEqual(JSON.parse(JSON.stringify(snooze.parameters)), snooze.parameters)
})

test('the definition states the cap when it is below the default', async () => {
  const { snooze } = await mount({ maxAgentSnoozeMinutes: 20 })
  assert.equal(snooze.parameters.properties.minutes.description, 'Minutes to snooze (default 20, capped at 20).')
})

test('execute answers with the minutes it will apply: default 30, clamped to 1..cap', async () => {
  const { snooze } = await mount({})
  const agent = {}
  const run = (args) => snooze.execute(args, execOf(NAME, agent, { arguments: args }))
  assert.equal(await run({ minutes: 5 }), reply(5))
  assert.equal(await run({}), reply(30))
  assert.equal(await run({ reason: 'making progress locally' }), reply(30))
  assert.equal(await run({ minutes: 1 }), reply(1))
  assert.equal(await run({ minutes: 1.9 }), reply(1))
  assert.equal(await run({ minutes: 0 }), reply(1))
  assert.equal(await run({ minutes: -5 }), reply(1))
  assert.equal(await run({ minutes: 999 }), reply(60))
})

test('execute caps the default at maxAgentSnoozeMinutes', async () => {
  const { snooze } = await mount({ maxAgentSnoozeMinutes: 20 })
  assert.equal(await snooze.execute({}, execOf(NAME, {})), reply(20))
  assert.equal(await snooze.execute({ minutes: 45 }, execOf(NAME, {})), reply(20))
})

test('execute rejects bad arguments with a message the model can act on', async () => {
  const { snooze } = await mount({})
  const run = (args) => snooze.execute(args, execOf(NAME, {}, { arguments: args }))
  await assert.rejects(run({ minutes: 'abc' }), { message: 'minutes must be a number (got "abc")' })
  await assert.rejects(run({ minutes: null }), { message: 'minutes must be a number (got null)' })
  await assert.rejects(run({ minutes: true }), { message: 'minutes must be a number (got true)' })
  await assert.rejects(run({ reason: 5 }), { message: 'reason must be a string (got 5)' })
  await assert.rejects(run({ duration: 5 }), { message: 'duration is not an argument of research_nudge_snooze (expected minutes, reason)' })
})

test('execute with arguments that are not an object rejects with a message, never hangs', async () => {
  const { snooze } = await mount({})
  const run = (args) => snooze.execute(args, execOf(NAME, {}, { arguments: args }))
  await assert.rejects(run('raw text'), { message: 'arguments must be a JSON object (got "raw text")' })
  await assert.rejects(run(42), { message: 'arguments must be a JSON object (got 42)' })
  await assert.rejects(run([]), { message: 'arguments must be a JSON object (got [])' })
  await assert.rejects(run(10n), (error) => typeof error?.message === 'string' && error.message.length > 0)
  const cyclic = {}
  cyclic.self = cyclic
  await assert.rejects(run(cyclic), (error) => typeof error?.message === 'string' && error.message.length > 0)
  // Non-finite minutes can only come from a JS caller; they must fail, not arm anything.
  await assert.rejects(run({ minutes: NaN }), { message: /^minutes must be a/ })
  // No arguments at all means the defaults, as for `{}`.
  assert.equal(await run(null), reply(30))
  assert.equal(await run(undefined), reply(30))
})

test('a snooze suppresses reminders for that agent while debt keeps accumulating', async (t) => {
  const clock = fakeClock(t)
  const { ctx, snooze } = await mount({ debtThreshold: 3, cooldownMinutes: 0 })
  const agent = {}
  const { text, decision, downstream } = await snoozeCall(ctx, snooze, agent, { minutes: 5 })
  assert.equal(text, reply(5))
  assert.equal(decision, downstream, 'the snooze call itself returns the downstream decision untouched')
  assert.equal(decision.additionalContexts, undefined)

  for (let i = 0; i < 5; i++) {
    clock.advance(30_000)
    assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0, `edit ${i + 1} during the snooze`)
  }
  // 5 minutes after the snooze (2.5 have passed): still quiet until exactly the end.
  clock.advance(5 * MINUTE - 150_000 - 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0, 'one millisecond before the snooze ends')
  clock.advance(1)
  const d = await call(ctx, agent, 'read')
  assert.deepEqual(signals(d), { debt: 12, threshold: 3, calls: 7, failures: 0, repeated: 0 })
})

test('the snooze call itself records no debt and adds no context', async (t) => {
  const clock = fakeClock(t)
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  const { decision, downstream } = await snoozeCall(ctx, snooze, agent, { minutes: 1 })
  assert.equal(decision, downstream)
  clock.advance(MINUTE)
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 1, threshold: 20, calls: 1, failures: 0, repeated: 0 })
})

test('a snooze on one agent does not silence another', async () => {
  const { ctx, snooze } = await mount({ debtThreshold: 3, cooldownMinutes: 0 })
  const a = { id: 'a' }
  const b = { id: 'b' }
  await snoozeCall(ctx, snooze, a, { minutes: 5 })
  assert.equal(nudges(await call(ctx, a, 'edit')).length, 0)
  assert.equal(nudges(await call(ctx, a, 'edit')).length, 0)
  assert.equal(nudges(await call(ctx, b, 'edit')).length, 0)
  assert.deepEqual(signals(await call(ctx, b, 'edit')), { debt: 4, threshold: 3, calls: 2, failures: 0, repeated: 0 })
  assert.equal(nudges(await call(ctx, a, 'edit')).length, 0)
})

test('a failed snooze call arms nothing and counts as a failed ordinary call (+1 +4)', async () => {
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  const exec = execOf(NAME, agent, { arguments: { minutes: 5 } })
  assert.equal(await snooze.execute({ minutes: 5 }, exec), reply(5))
  // The call still failed afterwards (e.g. a tools/execute wrapper turned it into an error).
  const d = await post(ctx, exec, failed('snooze failed'))
  assert.deepEqual(signals(d), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 6, threshold: 20, calls: 2, failures: 1, repeated: 0 })
})

test('a snooze call whose arguments were rejected counts as a failure and arms nothing', async () => {
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  const exec = execOf(NAME, agent, { arguments: { minutes: 'abc' } })
  await assert.rejects(snooze.execute({ minutes: 'abc' }, exec))
  const d = await post(ctx, exec, failed('minutes must be a number (got "abc")'))
  assert.deepEqual(signals(d), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('a snooze call blocked downstream arms nothing and counts as a failure', async () => {
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  const { decision } = await snoozeCall(ctx, snooze, agent, { minutes: 5 }, () => ({ kind: 'block', feedback: [{ type: 'text', text: 'not now' }] }))
  assert.equal(decision.kind, 'block')
  assert.deepEqual(signals(decision), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('with researchTools matching "search" and "snooze", a failed snooze is still not research', async () => {
  const { ctx, snooze } = await mount({ ...PROBE, researchTools: ['search', 'snooze'] })
  const agent = {}
  await call(ctx, agent, 'edit')
  const exec = execOf(NAME, agent, { arguments: {} })
  await snooze.execute({}, exec)
  const d = await post(ctx, exec, failed('boom'))
  assert.deepEqual(signals(d), { debt: 7, threshold: 20, calls: 2, failures: 1, repeated: 0 })
  // A successful snooze under the same config snoozes, it does not reset the debt.
  const { decision } = await snoozeCall(ctx, snooze, agent, { minutes: 5 })
  assert.equal(decision.additionalContexts, undefined)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0, 'snoozed, not reset-and-nudged')
  // And a real research tool still resets under this config.
  assert.equal(nudges(await call(ctx, agent, 'web_search')).length, 0)

  // A successful snooze-named result that armed nothing is not research either: it is counted.
  const fresh = {}
  await call(ctx, fresh, 'edit')
  const d2 = await post(ctx, execOf(NAME, fresh), ok(reply(30)))
  assert.deepEqual(signals(d2), { debt: 3, threshold: 20, calls: 2, failures: 0, repeated: 0 })
})

test('a successful snooze post-execute whose token never went through execute arms nothing', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const d = await post(ctx, execOf(NAME, agent, { arguments: { minutes: 30 } }), ok(reply(30)))
  // Not armed: it is counted like any other successful ordinary call, and the next call nudges.
  assert.deepEqual(signals(d), { debt: 1, threshold: 20, calls: 1, failures: 0, repeated: 0 })
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 2, threshold: 20, calls: 2, failures: 0, repeated: 0 })
})

test('only the post-execute carrying the same token arms the snooze', async () => {
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  const executed = execOf(NAME, agent, { arguments: { minutes: 5 } })
  await snooze.execute({ minutes: 5 }, executed)
  // Another snooze-named event with a different token: not armed.
  const stranger = execOf(NAME, agent, { arguments: { minutes: 5 } })
  assert.equal(nudges(await post(ctx, stranger, ok(reply(5)))).length, 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
  // The real one arms it; a second delivery of the same token arms nothing more.
  const inner = { kind: 'accept' }
  assert.equal(await post(ctx, executed, ok(reply(5)), () => inner), inner)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
})

test('a token delivered to another tool name does not snooze', async () => {
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  const exec = execOf(NAME, agent)
  await snooze.execute({}, exec)
  assert.equal(nudges(await post(ctx, { ...exec, name: 'read' }, ok())).length, 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('a shorter re-snooze never shortens an active one, and says so', async (t) => {
  const clock = fakeClock(t)
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  assert.equal((await snoozeCall(ctx, snooze, agent, { minutes: 30 })).text, reply(30))
  clock.advance(10 * MINUTE)
  const second = await snoozeCall(ctx, snooze, agent, { minutes: 5 })
  assert.equal(
    second.text,
    'Research Nudge reminders are already snoozed for 20 minutes; that longer snooze stays. Accumulated debt will continue to be tracked.',
  )
  assert.equal(second.decision, second.downstream)
  clock.advance(15 * MINUTE)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0, '25 minutes in: the 30-minute snooze holds')
  clock.advance(5 * MINUTE)
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 2, threshold: 20, calls: 2, failures: 0, repeated: 0 })
})

test('a longer re-snooze extends the active one', async (t) => {
  const clock = fakeClock(t)
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  await snoozeCall(ctx, snooze, agent, { minutes: 5 })
  clock.advance(4 * MINUTE)
  assert.equal((await snoozeCall(ctx, snooze, agent, { minutes: 10 })).text, reply(10))
  clock.advance(9 * MINUTE)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.advance(MINUTE)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('research during a snooze resets the debt but keeps the snooze', async (t) => {
  const clock = fakeClock(t)
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  await call(ctx, agent, 'edit')
  await snoozeCall(ctx, snooze, agent, { minutes: 2 })
  await call(ctx, agent, 'edit')
  await call(ctx, agent, 'web_fetch')
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.advance(2 * MINUTE)
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 2, threshold: 20, calls: 2, failures: 0, repeated: 0 })
})

test('a snooze without an agent answers but arms nothing', async () => {
  const { ctx, snooze } = await mount(PROBE)
  assert.equal(await snooze.execute({ minutes: 7 }, execOf(NAME, undefined)), reply(7))
  assert.equal(await snooze.execute({ minutes: 7 }, undefined), reply(7))
  assert.equal(await snooze.execute({ minutes: 7 }, {}), reply(7))
  const agent = {}
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('a snooze whose token cannot key a WeakMap still answers instead of failing the call', async () => {
  // DSH mints a fresh Symbol per call, but the tool body should not fail the model's call (with
  // "Invalid value used as weak map key") just because a caller passed another kind of token.
  const { snooze } = await mount({})
  for (const token of ['call-1', 7, Symbol.for('registered')]) {
    assert.equal(await snooze.execute({ minutes: 5 }, execOf(NAME, {}, { token })), reply(5), `token ${String(token)}`)
  }
})

test('one execute arms one snooze: a second post-execute with the same token arms nothing', async (t) => {
  const clock = fakeClock(t)
  const { ctx, snooze } = await mount(PROBE)
  const agent = {}
  const { exec } = await snoozeCall(ctx, snooze, agent, { minutes: 1 })
  clock.advance(MINUTE)
  const again = await post(ctx, exec, ok(reply(1)))
  assert.deepEqual(signals(again), { debt: 1, threshold: 20, calls: 1, failures: 0, repeated: 0 })
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})
