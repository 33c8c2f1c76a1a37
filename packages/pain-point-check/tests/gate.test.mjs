// pain-point-check on a real Cordis context, driven in DSH's order: counting, arming, the check
// block, denials by guard, the answer that lifts, the same-direction shot, resets and the escape.
import test from 'node:test'
import assert from 'node:assert/strict'
import {
  ANSWER_EN, ANSWER_ZH, Plugin, allowed, call, captureErrors, denied, errored, execOf, exited, mount,
  notices, ok, preStep, reply, userMessage,
} from './support/harness.mjs'

const fail = (n) => () => exited(n)

/** Three failing `make` runs: the problem and two failed retries (the default failure
 * threshold, 2, inclusive). */
async function arm(tools, agent) {
  await call(tools, agent, 'bash', { command: 'make' }, fail(2))
  await call(tools, agent, 'bash', { command: 'make -k' }, fail(2))
  await call(tools, agent, 'bash', { command: 'make -j1' }, fail(2))
}

test('failing bash runs on one target arm the gate; the next step carries the check block once', async () => {
  const { ctx, tools } = await mount({})
  const agent = { id: 'a' }
  await call(tools, agent, 'bash', { command: 'make' }, fail(2))
  allowed(await call(tools, agent, 'edit', { path: 'x' }))
  await call(tools, agent, 'bash', { command: 'cargo test' }, fail(101))
  await call(tools, agent, 'bash', { command: 'make -k' }, fail(2))
  assert.equal(notices(await preStep(ctx, agent)).length, 0, 'one failed retry does not arm')
  await call(tools, agent, 'bash', { command: 'make -j1' }, fail(2))

  const first = await preStep(ctx, agent)
  const [notice] = notices(first)
  assert.ok(notice, 'the check block rides the next step')
  assert.ok(Object.isFrozen(notice) && Object.isFrozen(notice.content[0]))
  assert.equal(notice.role, 'user')
  assert.equal(notice.source.kind, 'pain-point-check', 'the producer\'s own kind (DSH 0.2 refuses `plugin`)')
  assert.equal(notice.source.form, 'notice')
  assert.ok(notice.source.summary.length <= 120)
  const text = notice.content[0].text
  assert.match(text, /^\[pain-point-check\]/)
  for (const marker of ['blocker=', 'ruled_out=', 'best_path=', '卡点=', '排除=', '性价比=']) {
    assert.ok(text.includes(marker), `check block names ${marker}`)
  }
  assert.match(text, /falsifiable/)
  assert.equal(notices(await preStep(ctx, agent)).length, 0, 'delivered once per arming')
})

test('while pending: non-investigative calls are denied with an actionable reason; investigation runs', async () => {
  const { tools } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  let ran = false
  const reason = denied(await call(tools, agent, 'edit', { path: 'src/x.rs' }, () => { ran = true; return ok() }))
  assert.equal(ran, false, 'the denied tool never ran')
  assert.match(reason, /^\[pain-point-check\]/)
  assert.match(reason, /edit/)
  assert.match(reason, /blocker=/)
  assert.match(reason, /read/, 'names the tools that still work')
  assert.ok(!reason.includes('src/x.rs'), 'never echoes the arguments')
  for (const tool of ['read', 'grep', 'glob', 'web_search', 'job_output', 'report', 'todo_write']) {
    allowed(await call(tools, agent, tool, { q: tool }))
  }
  denied(await call(tools, agent, 'bash', { command: 'ls' }))
  denied(await call(tools, agent, 'mcp__github__create_issue'))
})

test('the veto holds even when an earlier pre-execute listener allows without delegating', async () => {
  const { ctx, tools } = await mount({})
  ctx.on('tools/pre-execute', () => ({ kind: 'allow' }), { prepend: true })
  const agent = { id: 'a' }
  await arm(tools, agent)
  denied(await call(tools, agent, 'write', { path: 'y' }))
})

test('all three answers in one reply lift; the counters start from zero', async () => {
  const { ctx, tools } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  await preStep(ctx, agent)
  reply(ctx, agent, ANSWER_EN)
  allowed(await call(tools, agent, 'edit', { path: 'x' }))
  await call(tools, agent, 'bash', { command: 'make V=1' }, fail(2))
  allowed(await call(tools, agent, 'edit', { path: 'x', line: 2 }), 'one failure after the lift does not re-arm')
})

test('a partial answer keeps the gate and the next denial names what is missing', async () => {
  const { ctx, tools } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  reply(ctx, agent, 'blocker=the linker cannot find libfoo\nruled_out=a missing header file')
  const reason = denied(await call(tools, agent, 'edit'))
  assert.match(reason, /best_path/)
  assert.doesNotMatch(reason, /missing[^.]*blocker/)
})

test('quoted, fenced and placeholder answers do not lift', async () => {
  const { ctx, tools } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  for (const text of [
    '> blocker=the linker cannot find libfoo\n> ruled_out=a missing header\n> best_path=verbose linking',
    '```\nblocker=the linker cannot find libfoo\nruled_out=a missing header\nbest_path=verbose linking\n```',
    'blocker=… ruled_out=… best_path=…',
    'blocker=TBD\nruled_out=TBD\nbest_path=TBD',
  ]) {
    reply(ctx, agent, text)
    denied(await call(tools, agent, 'edit'))
  }
  reply(ctx, agent, ANSWER_EN, { interrupted: true })
  denied(await call(tools, agent, 'edit'), 'an interrupted reply does not count')
})

test('after a lift the exact arming call is denied once (same-direction shot), then runs', async () => {
  const { ctx, tools } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  reply(ctx, agent, ANSWER_EN)
  const reason = denied(await call(tools, agent, 'bash', { command: 'make -j1' }, fail(2)))
  assert.match(reason, /exact call that armed the check/)
  allowed(await call(tools, agent, 'bash', { command: 'make -j1' }, fail(2)))
})

test('a changed call after the lift ends the same-direction guard', async () => {
  const { ctx, tools } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  reply(ctx, agent, ANSWER_EN)
  allowed(await call(tools, agent, 'edit', { path: 'Makefile' }))
  allowed(await call(tools, agent, 'bash', { command: 'make -j1' }, fail(2)))
})

test('repeats of one call with the same outcome arm at repeatThreshold, key order aside', async () => {
  const { tools } = await mount({ repeatThreshold: 2, failureThreshold: 100 })
  const agent = { id: 'a' }
  await call(tools, agent, 'bash', { command: 'ls', cwd: '/w' })
  await call(tools, agent, 'read', { path: 'a' })
  await call(tools, agent, 'bash', { cwd: '/w', command: 'ls' }, fail(2))
  await call(tools, agent, 'bash', { cwd: '/w', command: 'ls' })
  await call(tools, agent, 'bash', { cwd: '/w', command: 'ls' })
  allowed(await call(tools, agent, 'bash', { command: 'ls', cwd: '/w' }), 'a different outcome broke the repeats')
  denied(await call(tools, agent, 'edit'))
})

test('waiting never counts: sleep and a job_output that waits', async () => {
  const { tools } = await mount({ repeatThreshold: 1, allowlist: ['read'] })
  const agent = { id: 'a' }
  for (let i = 0; i < 3; i++) {
    allowed(await call(tools, agent, 'bash', { command: 'sleep 5 && tail log' }))
    allowed(await call(tools, agent, 'job_output', { job_id: 'bash-1' }))
  }
  // With repeatThreshold 1 the first repeat of a counted call arms.
  await call(tools, agent, 'bash', { command: 'cat log' })
  await call(tools, agent, 'bash', { command: 'cat log' })
  denied(await call(tools, agent, 'edit'))
})

test('the failure text tells repeats apart: the same call failing differently is no repeat', async () => {
  const { tools } = await mount({ repeatThreshold: 1, failureThreshold: 100 })
  const agent = { id: 'a' }
  const failing = (output) => () => exited(1, { output })
  await call(tools, agent, 'bash', { command: 'pytest' }, failing('AssertionError: 1 != 2'))
  allowed(await call(tools, agent, 'bash', { command: 'pytest' }, failing('KeyError: x')))
  await call(tools, agent, 'bash', { command: 'pytest' }, failing('KeyError: x'))
  denied(await call(tools, agent, 'edit'))
})

test('kills and timeouts are failures; cancellations and errors of allowlisted tools are not', async () => {
  const { tools } = await mount({ failureThreshold: 1 })
  const agent = { id: 'a' }
  await call(tools, agent, 'bash', { command: 'make' }, () => errored('aborted by user', 'ABORTED'))
  await call(tools, agent, 'read', { path: 'Makefile' }, () => errored('no such file'))
  await call(tools, agent, 'bash', { command: 'make' }, () => exited(null, { signal: 'SIGKILL' }))
  allowed(await call(tools, agent, 'edit', { n: 4 }))
  await call(tools, agent, 'bash', { command: 'make -j1' }, () => exited(null, { timedOut: true }))
  denied(await call(tools, agent, 'edit', { n: 6 }))
})

test('a user prompt resets a pending gate; other agents are never gated', async () => {
  const { ctx, tools } = await mount({})
  const a = { id: 'a' }
  const b = { id: 'b' }
  await arm(tools, a)
  allowed(await call(tools, b, 'edit'))
  denied(await call(tools, a, 'edit'))
  const decision = await preStep(ctx, a, [userMessage('try a different approach')])
  assert.equal(notices(decision).length, 0, 'a reset drops the undelivered check block')
  allowed(await call(tools, a, 'edit'))
})

test('Chinese prompts get the Chinese check block and the Chinese markers lift', async () => {
  const { ctx, tools } = await mount({})
  const agent = { id: 'zh' }
  await preStep(ctx, agent, [userMessage('修复这个链接错误')])
  await arm(tools, agent)
  const [notice] = notices(await preStep(ctx, agent))
  assert.match(notice.content[0].text, /卡点/)
  assert.match(notice.content[0].text, /这个卡点仍然是当前最关键的吗/)
  reply(ctx, agent, ANSWER_ZH)
  allowed(await call(tools, agent, 'edit'))
})

test('a stuck model escapes after maxDenials refusals, with a notice', async () => {
  const { ctx, tools } = await mount({ maxDenials: 3 })
  const agent = { id: 'a' }
  await arm(tools, agent)
  await preStep(ctx, agent)
  for (let i = 0; i < 3; i++) denied(await call(tools, agent, 'edit', { i }))
  const [notice] = notices(await preStep(ctx, agent))
  assert.ok(notice, 'the escape is announced')
  assert.match(notice.content[0].text, /3/)
  allowed(await call(tools, agent, 'edit', { i: 9 }))
})

test('Code Mode: run_code passes, its sub-dispatches are judged by their own names', async () => {
  const { tools } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  const parent = execOf('run_code', agent, { code: 'await tools.bash({command:"make"})' })
  allowed(await tools.dispatch(parent, () => ok()))
  denied(await call(tools, agent, 'bash', { command: 'make' }, fail(2), { parent }))
  allowed(await call(tools, agent, 'read', { path: 'a' }, () => ok(), { parent }))
})

test('Code Mode: direct calls DSH rejects as UNKNOWN_TOOL never arm (tools/result fires without pre-execute)', async () => {
  const { ctx, tools } = await mount({ failureThreshold: 1, repeatThreshold: 1 })
  const agent = { id: 'a' }
  const unknown = errored('unknown tool "bash": only `run_code` is callable directly', 'UNKNOWN_TOOL')
  for (let i = 0; i < 3; i++) await ctx.parallel('tools/result', execOf('bash', agent, { command: 'make' }), unknown)
  assert.equal(notices(await preStep(ctx, agent)).length, 0, 'nothing armed')
  allowed(await call(tools, agent, 'edit', { path: 'x' }))
})

test('Code Mode: a program that throws on its failed nested call is not a second failure; one that fails on its own is', async () => {
  const { ctx, tools } = await mount({ counting: 'any-failure', failureThreshold: 2, repeatThreshold: 100 })
  const agent = { id: 'a' }
  const program = (callId, code) => execOf('run_code', agent, { code, description: 'p' }, { callId })
  const thrown = errored('code run failed (exception): ToolCallError: exit 2', 'CODE_RUN_FAILED')
  const p1 = program('r1', 'await tools.bash({command:"make"})')
  await call(tools, agent, 'bash', { command: 'make' }, fail(2), { parent: p1.token, rootCallId: 'r1', callId: 'r1:code:1' })
  await ctx.parallel('tools/result', p1, thrown)
  assert.equal(notices(await preStep(ctx, agent)).length, 0, 'one failure: the nested one')
  // A nested investigation call that failed still excuses its program (it threw on it).
  const p2 = program('r2', 'await tools.read({file_path:"missing"})')
  await call(tools, agent, 'read', { file_path: 'missing' }, errored('ENOENT'), { parent: p2.token, rootCallId: 'r2', callId: 'r2:code:1' })
  await ctx.parallel('tools/result', p2, thrown)
  assert.equal(notices(await preStep(ctx, agent)).length, 0, 'still one failure')
  // A program that fails with no failed nested call is a failed experiment of its own.
  await ctx.parallel('tools/result', program('r3', 'syntax error('), errored('code run failed (syntax): x', 'CODE_RUN_FAILED'))
  assert.equal(notices(await preStep(ctx, agent)).length, 1, 'the second failure arms')
})

test('the family read-only tools run while pending; memory_save does not', async () => {
  const { tools } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  for (const tool of ['memory_recall', 'memory_stats', 'resilient_fetch']) allowed(await call(tools, agent, tool, { q: tool }))
  denied(await call(tools, agent, 'memory_save', { fact: 'x' }))
})

test('extraAllowlist adds anchored wildcard patterns to the defaults', async () => {
  const { tools } = await mount({ extraAllowlist: ['mcp__docs__*'] })
  const agent = { id: 'a' }
  await arm(tools, agent)
  allowed(await call(tools, agent, 'mcp__docs__search'))
  allowed(await call(tools, agent, 'read'))
  denied(await call(tools, agent, 'mcp__docsearch'))
})

test('enabled: false registers nothing', async () => {
  const { tools } = await mount({ enabled: false })
  assert.equal(tools.guards.length, 0)
})

test('agent/disposed frees the agent; unloading the plugin removes the guard', async () => {
  const { ctx, tools, fiber } = await mount({})
  const agent = { id: 'a' }
  await arm(tools, agent)
  ctx.emit('agent/disposed', { agent })
  allowed(await call(tools, agent, 'edit'), 'a new agent with the same id starts fresh')
  await fiber.dispose()
  assert.equal(tools.guards.length, 0)
})

test('hostile shapes never throw into DSH', async (t) => {
  const errors = captureErrors(t)
  const { ctx, tools } = await mount({})
  allowed(await tools.dispatch({ name: 'bash' }, () => ok()))
  allowed(await tools.dispatch({ name: 42, agent: { id: 'a' } }, () => ok()))
  await ctx.parallel('tools/result', { name: 'bash', agent: { id: 'a' } }, null)
  await ctx.parallel('tools/result', null, null)
  ctx.emit('session/event', null, null)
  ctx.emit('session/event', { id: 'a' }, { type: 'assistant/message' })
  ctx.emit('agent/disposed', undefined)
  const entered = await ctx.waterfall('agent/pre-step', null, async () => ({ kind: 'enter', messages: [] }))
  assert.deepEqual(entered, { kind: 'enter', messages: [] })
  const rejected = await preStep(ctx, { id: 'a' }, [], () => ({ kind: 'reject' }))
  assert.deepEqual(rejected, { kind: 'reject' })
  assert.ok(errors.length <= 2, 'reported at most once a minute per kind')
})

test('a call\'s arguments are stringified once for the guard and its result; an investigation tool\'s result not at all', async () => {
  const { tools } = await mount({})
  let reads = 0
  const args = (command) => ({ toJSON: () => { reads += 1; return { command } } })
  const armed = { id: 'armed' }
  await arm(tools, armed)
  denied(await call(tools, armed, 'bash', args('make -B')))
  assert.equal(reads, 1, 'the guard and the denial\'s result share one stringify')
  await call(tools, { id: 'idle' }, 'bash', args('ls'))
  assert.equal(reads, 2, 'an idle gate reads only the result')
  await call(tools, { id: 'idle' }, 'read', args('src/x.rs'))
  assert.equal(reads, 2, 'a read\'s result changes no gate and is not reported')
})

test('a host that never disposes agents keeps at most MAX_AGENTS, never dropping a pending gate', async () => {
  const { tools } = await mount({})
  const gated = { id: 'gated' }
  await arm(tools, gated)
  const early = { id: 'early' }
  await call(tools, early, 'bash', { command: 'make' }, fail(2))
  for (let i = 0; i < Plugin.MAX_AGENTS + 10; i++) {
    await call(tools, { id: `a${i}` }, 'read', { i })
  }
  denied(await call(tools, gated, 'edit'), 'the pending gate survived the eviction')
  await call(tools, early, 'bash', { command: 'make -j1' }, fail(2))
  allowed(await call(tools, early, 'edit'), 'the idle agent was evicted: its first failure is forgotten')
})
