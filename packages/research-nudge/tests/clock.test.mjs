// Time-based behaviour through the shim's clock (`performance.now()`, read on every event):
// thresholds and cooldown boundaries are inclusive, and a clock that steps back changes nothing.
import test from 'node:test'
import assert from 'node:assert/strict'
import { MINUTE, call, execOf, fakeClock, mount, nudges, ok, post, signals } from './support/harness.mjs'

test('the cooldown suppresses reminders until exactly cooldownMinutes have passed', async (t) => {
  const clock = fakeClock(t)
  const { ctx } = await mount({ debtThreshold: 2 })
  const agent = {}
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 1)
  clock.advance(10 * MINUTE - 1)
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0, 'one millisecond before the cooldown ends')
  clock.advance(1)
  assert.deepEqual(signals(await call(ctx, agent, 'edit')), { debt: 6, threshold: 2, calls: 3, failures: 0, repeated: 0 })
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0, 'a new cooldown started')
})

test('fractional cooldown minutes are honoured to the millisecond', async (t) => {
  const clock = fakeClock(t)
  const { ctx } = await mount({ debtThreshold: 1, cooldownMinutes: 0.5 })
  const agent = {}
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
  clock.advance(29_999)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.advance(1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('the elapsed-time threshold is measured from the agent\'s first event and is inclusive', async (t) => {
  const clock = fakeClock(t)
  const { ctx } = await mount({ maxMinutesWithoutResearch: 2, cooldownMinutes: 0 })
  const agent = {}
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.advance(2 * MINUTE - 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.advance(1)
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 3, threshold: 20, calls: 3, failures: 0, repeated: 0 })
  // Research restarts the clock.
  await call(ctx, agent, 'fetch_url')
  clock.advance(2 * MINUTE - 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.advance(1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('the cooldown carries over a research reset', async (t) => {
  const clock = fakeClock(t)
  const { ctx } = await mount({ debtThreshold: 2 })
  const agent = {}
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 1)
  await call(ctx, agent, 'docs_search')
  clock.advance(MINUTE)
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0, 'debt is back over the threshold, but the cooldown holds')
  clock.advance(9 * MINUTE)
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 1)
})

test('the call-count threshold fires on exactly the N-th counted call', async () => {
  const { ctx } = await mount({ maxToolCallsWithoutResearch: 4 })
  const agent = {}
  const seen = []
  for (let i = 0; i < 4; i++) seen.push(nudges(await call(ctx, agent, 'grep')).length)
  assert.deepEqual(seen, [0, 0, 0, 1])
})

test('a clock that steps back does not end a cooldown early', async (t) => {
  const clock = fakeClock(t, 10 * MINUTE)
  const { ctx } = await mount({ debtThreshold: 1, cooldownMinutes: 5 })
  const agent = {}
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
  clock.now = 0
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.now = 10 * MINUTE + 5 * MINUTE - 1
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.now = 15 * MINUTE
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('a clock that steps back does not end a snooze early', async (t) => {
  const clock = fakeClock(t, 10 * MINUTE)
  const { ctx, snooze } = await mount({ debtThreshold: 1, cooldownMinutes: 0 })
  const agent = {}
  const exec = execOf('research_nudge_snooze', agent)
  await snooze.execute({ minutes: 3 }, exec)
  await post(ctx, exec, ok('snoozed'))
  clock.now = 0
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.now = 13 * MINUTE - 1
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.now = 13 * MINUTE
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('a clock that is not a finite number does not break the listener', async (t) => {
  const clock = fakeClock(t)
  const { ctx } = await mount({ debtThreshold: 1, cooldownMinutes: 0 })
  const agent = {}
  for (const now of [NaN, -Infinity, Infinity, -5]) {
    clock.now = now
    const d = await call(ctx, agent, 'read')
    assert.equal(nudges(d).length, 1, `clock ${now}`)
  }
})

test('unanswered reminders back the cooldown off (reminderBackoff, default 2); research answers them', async (t) => {
  const clock = fakeClock(t)
  const { ctx } = await mount({ debtThreshold: 1, maxMinutesWithoutResearch: 525600 })
  const agent = {}
  // The first reminder and the first repeat: the original 10-minute cooldown, the same text.
  const first = nudges(await call(ctx, agent, 'read'))
  assert.equal(first.length, 1)
  clock.advance(10 * MINUTE)
  const second = nudges(await call(ctx, agent, 'read'))
  assert.equal(second.length, 1)
  assert.equal(second[0].content[0].text.split('\n\nCurrent signals')[0], first[0].content[0].text.split('\n\nCurrent signals')[0])
  // Then 20 minutes, then 40.
  clock.advance(20 * MINUTE - 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0, 'the second repeat waits twice as long')
  clock.advance(1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
  clock.advance(40 * MINUTE - 1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 0)
  clock.advance(1)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
  // Research answers them: the next cooldown is the configured one again.
  await call(ctx, agent, 'web_search')
  clock.advance(10 * MINUTE)
  assert.equal(nudges(await call(ctx, agent, 'read')).length, 1)
})

test('reminderBackoff: 1 keeps the original fixed cooldown', async (t) => {
  const clock = fakeClock(t)
  const { ctx } = await mount({ debtThreshold: 1, maxMinutesWithoutResearch: 525600, reminderBackoff: 1 })
  const agent = {}
  for (let i = 0; i < 4; i++) {
    assert.equal(nudges(await call(ctx, agent, 'read')).length, 1, `reminder ${i + 1}`)
    clock.advance(10 * MINUTE)
  }
})
