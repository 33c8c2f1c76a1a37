// Turning the plugin off, unloading and reconfiguring it, `agent/pre-step` resets, and debug logs.
import test from 'node:test'
import assert from 'node:assert/strict'
import {
  MINUTE, PROBE, Plugin, call, captureErrors, createContext, execOf, failed, fakeClock, mount, nudges,
  ok, post, preStep, signals, userMessage,
} from './support/harness.mjs'

const NAME = 'research_nudge_snooze'

test('enabled: false registers neither a listener nor the tool', async (t) => {
  const errors = captureErrors(t)
  const { ctx, tools, fiber } = await mount({ enabled: false, debtThreshold: 1, maxToolCallsWithoutResearch: 1, cooldownMinutes: 0 })
  assert.equal(tools.registered.size, 0)
  assert.equal(tools.history.length, 0)
  assert.deepEqual(fiber.getEffects(), [])
  assert.equal(ctx.events._hooks['tools/post-execute']?.length ?? 0, 0)
  assert.equal(ctx.events._hooks['agent/pre-step']?.length ?? 0, 0)
  const agent = {}
  for (let i = 0; i < 30; i++) {
    const inner = { kind: 'accept' }
    assert.equal(await call(ctx, agent, 'bash', failed('same failure'), () => inner), inner)
  }
  assert.equal(errors.length, 0)
})

test('an enabled plugin owns exactly the tool and the two listeners', async () => {
  const { fiber } = await mount({})
  assert.deepEqual(fiber.getEffects().map((e) => e.label).sort(), [
    'ctx.on("agent/pre-step")',
    'ctx.on("tools/post-execute")',
    'tools.register()',
  ])
})

test('unloading the plugin removes its listeners and its tool', async () => {
  const { ctx, tools, fiber } = await mount(PROBE)
  const agent = {}
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
  await fiber.dispose()
  assert.equal(tools.registered.size, 0)
  const inner = { kind: 'accept' }
  assert.equal(await call(ctx, agent, 'read', ok(), () => inner), inner)
})

test('a config update re-applies the plugin: one tool, the new settings, fresh per-agent state', async () => {
  const { ctx, tools, fiber } = await mount(PROBE)
  const agent = {}
  assert.deepEqual(signals(await call(ctx, agent, 'edit')), { debt: 2, threshold: 20, calls: 1, failures: 0, repeated: 0 })
  await fiber.update({ ...PROBE, debtThreshold: 9, maxAgentSnoozeMinutes: 5 })
  assert.deepEqual([...tools.registered.keys()], [NAME])
  assert.equal(tools.history.length, 2)
  assert.equal(tools.registered.get(NAME).parameters.properties.minutes.description, 'Minutes to snooze (default 5, capped at 5).')
  assert.deepEqual(signals(await call(ctx, agent, 'edit')), { debt: 2, threshold: 9, calls: 1, failures: 0, repeated: 0 })
  assert.equal(ctx.events._hooks['tools/post-execute'].length, 1)
})

test('a user-sourced message in agent/pre-step starts the agent afresh', async () => {
  const { ctx } = await mount({ debtThreshold: 5 })
  const agent = { id: 'a' }
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0) // 2
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0) // 4
  const inner = { kind: 'enter', messages: [] }
  const step = { agent, messages: [userMessage('new task')], turn: 2, step: 1 }
  assert.equal(await preStep(ctx, step, () => inner), inner)
  // Without the reset the next edit (6 >= 5) would nudge; now the full threshold is needed again.
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0) // 2
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0) // 4
  assert.deepEqual(signals(await call(ctx, agent, 'edit')), { debt: 6, threshold: 5, calls: 3, failures: 0, repeated: 0 })
})

test('a user prompt also forgets repeated failures', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  await call(ctx, agent, 'bash', failed('TypeError: x is undefined'))
  await preStep(ctx, { agent, messages: [userMessage('try again')] })
  assert.deepEqual(signals(await call(ctx, agent, 'bash', failed('TypeError: x is undefined'))), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
})

test('a plugin-sourced message (our own reminder included) does not reset', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const d = await call(ctx, agent, 'edit')
  const [reminder] = nudges(d)
  const other = { role: 'user', id: 'x', content: [{ type: 'text', text: 'notice' }], source: { kind: 'plugin', plugin: 'repeat-tool-reminder', form: 'notice' } }
  const noSource = { role: 'user', id: 'y', content: [{ type: 'text', text: 'hi' }] }
  const inner = { kind: 'enter', messages: [reminder, other, noSource] }
  assert.equal(await preStep(ctx, { agent, messages: [reminder, other, noSource] }, () => inner), inner)
  assert.deepEqual(signals(await call(ctx, agent, 'edit')), { debt: 4, threshold: 20, calls: 2, failures: 0, repeated: 0 })
})

test('one user message among plugin messages is enough to reset', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  await call(ctx, agent, 'edit')
  const plugin = { role: 'user', id: 'p', content: [], source: { kind: 'plugin', plugin: 'x' } }
  await preStep(ctx, { agent, messages: [plugin, null, userMessage('steer')] })
  assert.deepEqual(signals(await call(ctx, agent, 'edit')), { debt: 2, threshold: 20, calls: 1, failures: 0, repeated: 0 })
})

test('a user prompt resets only that agent', async () => {
  const { ctx } = await mount(PROBE)
  const a = {}
  const b = {}
  await call(ctx, a, 'edit')
  await call(ctx, b, 'edit')
  await preStep(ctx, { agent: a, messages: [userMessage('hi')] })
  assert.equal(signals(await call(ctx, a, 'edit')).debt, 2)
  assert.equal(signals(await call(ctx, b, 'edit')).debt, 4)
})

test('a user prompt also clears the snooze and the cooldown', async () => {
  const { ctx, snooze } = await mount({ debtThreshold: 3 })
  const agent = {}
  await call(ctx, agent, 'edit')
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 1) // 4 >= 3; cooldown starts
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0) // cooldown
  await preStep(ctx, { agent, messages: [userMessage('next task')] })
  await call(ctx, agent, 'edit')
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 1, 'the cooldown was cleared')

  const exec = execOf(NAME, agent)
  await snooze.execute({ minutes: 60 }, exec)
  await post(ctx, exec, ok('snoozed'))
  await preStep(ctx, { agent, messages: [userMessage('another task')] })
  await call(ctx, agent, 'edit')
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 1, 'the snooze was cleared')
})

test('a user prompt restarts the elapsed-time clock at the prompt', async (t) => {
  const clock = fakeClock(t)
  const { ctx } = await mount({ maxMinutesWithoutResearch: 1 })
  const agent = {}
  await preStep(ctx, { agent, messages: [userMessage('go')] })
  clock.advance(MINUTE - 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.advance(1)
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 2, threshold: 20, calls: 2, failures: 0, repeated: 0 })
  // A new prompt starts the clock again.
  await preStep(ctx, { agent, messages: [userMessage('again')] })
  clock.advance(MINUTE - 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
})

test('pre-step always returns what next() returned, for any step', async (t) => {
  const errors = captureErrors(t)
  const { ctx } = await mount({})
  const agent = {}
  const steps = [
    { agent, messages: [userMessage('hi')] },
    { agent, messages: [] },
    { agent, messages: 'not a list' },
    { agent: null, messages: [userMessage('hi')] },
    { agent: 'agent', messages: [userMessage('hi')] },
    { messages: [userMessage('hi')] },
    {},
    null,
    undefined,
  ]
  for (const step of steps) {
    for (const decision of [{ kind: 'reject' }, { kind: 'enter', messages: [] }]) {
      assert.equal(await preStep(ctx, step, () => decision), decision, JSON.stringify(step))
    }
  }
  assert.equal(errors.length, 0)
})

test('a pre-step event that throws while being read is logged once and passes through', async (t) => {
  const errors = captureErrors(t)
  const { ctx } = await mount({})
  const hostile = { agent: {}, get messages() { throw new Error('boom') } }
  const inner = { kind: 'enter', messages: [] }
  assert.equal(await preStep(ctx, hostile, () => inner), inner)
  assert.equal(await preStep(ctx, hostile, () => inner), inner)
  assert.equal(errors.length, 1)
  assert.match(errors[0][0], /^\[research-nudge\] malformed pre-step event ignored\b/)
  assert.equal(errors[0][1].message, 'boom')
})

test('debug: true logs resets, snoozes and queued reminders to stderr with the prefix', async (t) => {
  const errors = captureErrors(t)
  const { ctx, snooze } = await mount({ debtThreshold: 3, debug: true })
  const agent = {}
  await call(ctx, agent, 'read') // counted: no line
  await call(ctx, agent, 'edit') // 3 >= 3: nudge queued
  await call(ctx, agent, 'WebSearch') // research reset
  const exec = execOf(NAME, agent)
  await snooze.execute({ minutes: 4 }, exec)
  await post(ctx, exec, ok('snoozed'))
  const again = execOf(NAME, agent)
  await snooze.execute({ minutes: 1 }, again)
  await post(ctx, again, ok('snoozed'))
  await preStep(ctx, { agent, messages: [userMessage('next')] })
  await preStep(ctx, { agent, messages: [] }) // nothing to log
  assert.deepEqual(errors.map((args) => args.join(' ')), [
    '[research-nudge] threshold reached; nudge queued',
    '[research-nudge] research reset by WebSearch',
    '[research-nudge] agent snoozed nudges for 4m',
    '[research-nudge] snooze ignored: an active snooze lasts longer',
    '[research-nudge] new user prompt; research debt reset',
  ])
})

test('without debug nothing is logged for ordinary operation', async (t) => {
  const errors = captureErrors(t)
  const { ctx, snooze } = await mount({ debtThreshold: 3 })
  const agent = {}
  await call(ctx, agent, 'edit')
  await call(ctx, agent, 'edit')
  await call(ctx, agent, 'web_search')
  const exec = execOf(NAME, agent)
  await snooze.execute({}, exec)
  await post(ctx, exec, ok('snoozed'))
  await preStep(ctx, { agent, messages: [userMessage('next')] })
  assert.deepEqual(errors, [])
})

test('mounting the plugin without a config uses the defaults', async () => {
  const { ctx, tools } = createContext()
  const fiber = await ctx.plugin(Plugin)
  assert.equal(fiber.config.debtThreshold, 20)
  assert.deepEqual([...tools.registered.keys()], [NAME])
})

test('a second instance in the same context fails loudly and leaves the first one alone', async () => {
  const { ctx, tools } = await mount(PROBE)
  await assert.rejects(async () => { await ctx.plugin(Plugin, PROBE) }, { message: 'tool "research_nudge_snooze" is already registered' })
  assert.equal(ctx.events._hooks['tools/post-execute'].length, 1)
  assert.equal(ctx.events._hooks['agent/pre-step'].length, 1)
  assert.equal(tools.registered.size, 1)
  // The surviving instance counts each call once.
  const agent = {}
  assert.equal(signals(await call(ctx, agent, 'read')).debt, 1)
  assert.equal(signals(await call(ctx, agent, 'read')).debt, 2)
})
