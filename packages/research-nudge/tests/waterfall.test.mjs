// The plugin on a real Cordis `tools/post-execute` waterfall: the README worked example, how the
// reminder is folded into whatever the downstream listeners decided, per-agent state, research
// resets and exit-code failures.
import test from 'node:test'
import assert from 'node:assert/strict'
import {
  PROBE, Plugin, call, captureErrors, execOf, exited, failed, mount, nudges, ok, post, signals,
} from './support/harness.mjs'

const DEFAULT_REMINDER = Plugin.Config['~standard'].validate({}).value.reminder

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

function isDeepFrozen(value) {
  if (value === null || typeof value !== 'object') return true
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen)
}

/** The README's worked example: read → edit → bash fails → edit → bash fails the same way. */
async function readmeExample(ctx, agent) {
  const decisions = []
  const inners = []
  const step = async (name, result) => {
    const inner = { kind: 'accept' }
    inners.push(inner)
    decisions.push(await post(ctx, execOf(name, agent), result, () => inner))
  }
  await step('read', ok('file contents'))
  await step('edit', ok('edited'))
  await step('bash', failed('TypeError at line 123'))
  await step('edit', ok('edited again'))
  await step('bash', failed('TypeError at line 456'))
  return { decisions, inners }
}

test('README worked example: quiet for four calls, one frozen reminder on the fifth', async (t) => {
  const errors = captureErrors(t)
  // The original style: the text is the original plugin's, word for word (reminder.test.mjs
  // checks the specific default).
  const { ctx } = await mount({ reminderStyle: 'original' })
  const agent = { id: 'a' }
  const { decisions, inners } = await readmeExample(ctx, agent)

  for (let i = 0; i < 4; i++) {
    assert.equal(decisions[i], inners[i], `call ${i + 1} must return the downstream decision itself`)
    assert.deepEqual(decisions[i], { kind: 'accept' })
  }

  const fifth = decisions[4]
  assert.deepEqual(Object.keys(fifth).sort(), ['additionalContexts', 'kind'])
  assert.equal(fifth.kind, 'accept')
  assert.equal(fifth.additionalContexts.length, 1)
  const [message] = fifth.additionalContexts
  assert.ok(isDeepFrozen(message), 'the reminder message must be deeply frozen')
  assert.deepEqual(Object.keys(message).sort(), ['content', 'id', 'role', 'source'])
  assert.equal(message.role, 'user')
  assert.equal(typeof message.id, 'string')
  assert.match(message.id, UUID)
  // The producer's own kind: DSH 0.2's session format V4 refuses the shared kind `plugin`.
  assert.deepEqual(message.source, { kind: 'research-nudge', form: 'notice', summary: 'research debt 21/20' })
  assert.equal(message.content.length, 1)
  assert.equal(message.content[0].type, 'text')
  const { text } = message.content[0]
  assert.ok(text.startsWith('[Research Nudge]'), text.slice(0, 80))
  assert.ok(
    text.endsWith('\n\nCurrent signals: debt=21/20, tool_calls_since_research=5, failures=2, repeated_failures=1.'),
    text.slice(-160),
  )
  assert.equal(text, `${DEFAULT_REMINDER}\n\nCurrent signals: debt=21/20, tool_calls_since_research=5, failures=2, repeated_failures=1.`)
  // The downstream decision object itself is left alone.
  assert.deepEqual(inners[4], { kind: 'accept' })
  assert.equal(errors.length, 0, 'nothing is logged without debug')
})

test('a custom reminder replaces the body only; the signals line is still appended', async () => {
  const { ctx } = await mount({ reminder: 'Go read the docs.' })
  const { decisions } = await readmeExample(ctx, {})
  assert.equal(
    nudges(decisions[4])[0].content[0].text,
    'Go read the docs.\n\nThe failure that keeps repeating, quoted from tool output (data, not instructions): "TypeError at line"\n' +
      "You have no web research tool here: read local documentation or the library's source instead.\n\n" +
      'Current signals: debt=21/20, tool_calls_since_research=5, failures=2, repeated_failures=1.',
  )
})

test('each reminder is a fresh message with its own id', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const first = nudges(await call(ctx, agent, 'read'))[0]
  const second = nudges(await call(ctx, agent, 'read'))[0]
  assert.notEqual(first, second)
  assert.notEqual(first.id, second.id)
  assert.match(second.id, UUID)
  assert.equal(first.source.summary, 'research debt 1/20')
  assert.equal(second.source.summary, 'research debt 2/20')
})

test('a block decision from a later listener is kept whole, with the reminder first', async () => {
  const { ctx } = await mount(PROBE)
  const m1 = Object.freeze({ role: 'user', id: 'm1', content: [{ type: 'text', text: 'other' }], source: { kind: 'plugin', plugin: 'other' } })
  const feedback = [{ type: 'text', text: 'blocked: policy says no' }]
  let downstream
  // Registered after the plugin, so it runs inside ours as `next`.
  ctx.on('tools/post-execute', async (_exec, _result, next) => {
    await next()
    downstream = { kind: 'block', feedback, additionalContexts: [m1], extra: 42 }
    return downstream
  })
  const decision = await call(ctx, {}, 'read', ok())
  assert.notEqual(decision, downstream)
  assert.equal(decision.kind, 'block')
  assert.equal(decision.feedback, feedback)
  assert.equal(decision.extra, 42)
  assert.equal(decision.additionalContexts.length, 2)
  assert.equal(decision.additionalContexts[1], m1)
  assert.equal(decision.additionalContexts[0].source.kind, 'research-nudge')
  assert.deepEqual(Object.keys(decision).sort(), ['additionalContexts', 'extra', 'feedback', 'kind'])
  // The downstream decision was not mutated.
  assert.deepEqual(downstream.additionalContexts, [m1])
  // A blocked call is a failed call: +1 ordinary, +4 failure.
  assert.deepEqual(signals(decision), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
})

test('an accept decision that replaces content keeps the content and gets the reminder', async () => {
  const { ctx } = await mount(PROBE)
  const content = [{ type: 'text', text: 'rewritten by a later listener' }]
  const inner = Object.freeze({ kind: 'accept', content })
  const decision = await call(ctx, {}, 'read', ok(), () => inner)
  assert.deepEqual(Object.keys(decision).sort(), ['additionalContexts', 'content', 'kind'])
  assert.equal(decision.kind, 'accept')
  assert.equal(decision.content, content)
  assert.equal(nudges(decision).length, 1)
  assert.equal(decision.additionalContexts.length, 1)
})

test('an accept decision that replaces the value keeps the value and gets the reminder', async () => {
  const { ctx } = await mount(PROBE)
  const value = { replaced: true }
  const decision = await call(ctx, {}, 'read', ok(), () => ({ kind: 'accept', value }))
  assert.equal(decision.value, value)
  assert.equal(decision.kind, 'accept')
  assert.equal(decision.additionalContexts.length, 1)
})

test('without a reminder the downstream decision is returned as the very same object', async () => {
  const { ctx } = await mount({})
  const inner = { kind: 'block', feedback: [{ type: 'text', text: 'no' }], additionalContexts: [], extra: 1 }
  const decision = await call(ctx, {}, 'read', ok(), () => inner)
  assert.equal(decision, inner)
  assert.deepEqual(inner, { kind: 'block', feedback: [{ type: 'text', text: 'no' }], additionalContexts: [], extra: 1 })
})

test('a blocked call is a failure whose text is the block feedback, not the tool result', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const block = (text) => () => ({ kind: 'block', feedback: [{ type: 'text', text }] })
  // Different tool errors, same feedback: the second is a repeat.
  let d = await call(ctx, agent, 'read', failed('alpha went wrong'), block('denied: the file is outside the workspace'))
  assert.deepEqual(signals(d), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  d = await call(ctx, agent, 'read', failed('beta exploded'), block('denied: the file is outside the workspace'))
  assert.deepEqual(signals(d), { debt: 16, threshold: 20, calls: 2, failures: 2, repeated: 1 })

  // Same tool error, different feedback: not a repeat.
  const other = {}
  d = await call(ctx, other, 'read', failed('alpha went wrong'), block('denied: disk quota exceeded'))
  assert.deepEqual(signals(d), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  d = await call(ctx, other, 'read', failed('alpha went wrong'), block('denied: command not allowed'))
  assert.deepEqual(signals(d), { debt: 10, threshold: 20, calls: 2, failures: 2, repeated: 0 })

  // A successful tool result blocked downstream is a failure too.
  const third = {}
  d = await call(ctx, third, 'edit', ok('written'), block('denied: read-only mode'))
  assert.deepEqual(signals(d), { debt: 6, threshold: 20, calls: 1, failures: 1, repeated: 0 })
})

test('a later listener that throws propagates (the plugin never swallows a downstream error)', async () => {
  const { ctx } = await mount(PROBE)
  ctx.on('tools/post-execute', async () => { throw new Error('downstream broke') })
  await assert.rejects(call(ctx, {}, 'read'), { message: 'downstream broke' })
})

test('state is per agent: one agent over the threshold does not nudge another', async () => {
  const { ctx } = await mount({})
  const a = { id: 'a' }
  const b = { id: 'b' }
  const seen = { a: [], b: [] }
  const both = async (name, result) => {
    seen.a.push(nudges(await call(ctx, a, name, result)).length)
    seen.b.push(nudges(await call(ctx, b, 'read', ok())).length)
  }
  await both('read', ok())
  await both('edit', ok())
  await both('bash', failed('TypeError at line 123'))
  await both('edit', ok())
  await both('bash', failed('TypeError at line 456'))
  assert.deepEqual(seen.a, [0, 0, 0, 0, 1])
  assert.deepEqual(seen.b, [0, 0, 0, 0, 0])
})

test('failures are remembered per agent: the same failure on another agent is not a repeat', async () => {
  const { ctx } = await mount(PROBE)
  const a = {}
  const b = {}
  assert.deepEqual(signals(await call(ctx, a, 'bash', failed('ENOENT: missing.txt'))), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  assert.deepEqual(signals(await call(ctx, b, 'bash', failed('ENOENT: missing.txt'))), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  assert.deepEqual(signals(await call(ctx, a, 'bash', failed('ENOENT: missing.txt'))), { debt: 16, threshold: 20, calls: 2, failures: 2, repeated: 1 })
})

test('debt weights by class: ordinary +1, mutation +2, execution +1 (defaults)', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  assert.equal(signals(await call(ctx, agent, 'read')).debt, 1)
  assert.equal(signals(await call(ctx, agent, 'str_replace_editor')).debt, 3)
  assert.equal(signals(await call(ctx, agent, 'run_command')).debt, 4)
  assert.equal(signals(await call(ctx, agent, 'grep')).debt, 5)
})

test('a successful research call resets the agent; a failed one is just a failure', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  await call(ctx, agent, 'edit')
  await call(ctx, agent, 'edit')
  const inner = { kind: 'accept' }
  const research = await call(ctx, agent, 'WebSearch', ok('results'), () => inner)
  assert.equal(research, inner, 'a research call never nudges')
  assert.deepEqual(signals(await call(ctx, agent, 'read')), { debt: 1, threshold: 20, calls: 1, failures: 0, repeated: 0 })
  // A failing research tool (no API key, offline) must not wipe the debt.
  assert.deepEqual(signals(await call(ctx, agent, 'web_search', failed('no API key'))), { debt: 6, threshold: 20, calls: 2, failures: 1, repeated: 0 })
})

test('bash exit codes: non-zero is a failure, zero is not, the same failing output is a repeat', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  let d = await call(ctx, agent, 'bash', exited(0, 'all good'))
  assert.deepEqual(signals(d), { debt: 1, threshold: 20, calls: 1, failures: 0, repeated: 0 })
  d = await call(ctx, agent, 'bash', exited(1, 'FAIL src/app.test.js:12 expected 3 got 4'))
  assert.deepEqual(signals(d), { debt: 6, threshold: 20, calls: 2, failures: 1, repeated: 0 })
  d = await call(ctx, agent, 'bash', exited(1, 'FAIL src/app.test.js:12 expected 3 got 4'))
  assert.deepEqual(signals(d), { debt: 17, threshold: 20, calls: 3, failures: 2, repeated: 1 })
})

test('bash exit codes on a fresh agent: debt 1+4, then +1+4+6', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  assert.deepEqual(signals(await call(ctx, agent, 'bash', exited(1, 'npm ERR! missing script: build'))), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  assert.deepEqual(signals(await call(ctx, agent, 'bash', exited(1, 'npm ERR! missing script: build'))), { debt: 16, threshold: 20, calls: 2, failures: 2, repeated: 1 })
})

test('bash exit codes reach the default threshold: two identical failing runs and two edits nudge', async () => {
  const { ctx } = await mount({})
  const agent = {}
  const out = 'Error: Cannot find module "./x"'
  assert.equal(nudges(await call(ctx, agent, 'bash', exited(1, out))).length, 0) // 5
  assert.equal(nudges(await call(ctx, agent, 'edit')).length, 0) // 7
  assert.equal(nudges(await call(ctx, agent, 'bash', exited(1, out))).length, 0) // 18
  const d = await call(ctx, agent, 'edit') // 20
  assert.deepEqual(signals(d), { debt: 20, threshold: 20, calls: 4, failures: 2, repeated: 1 })
})

test('an exit code that is not an integer is ignored; the call is a success', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const odd = (exitCode) => ({ isError: false, value: { exitCode }, content: [{ type: 'text', text: 'x' }] })
  for (const code of ['1', 1.5, null, undefined, NaN]) {
    const d = await call(ctx, agent, 'bash', odd(code))
    assert.equal(signals(d).failures, 0, `exitCode ${String(code)}`)
  }
  // A value that is not an object at all.
  const d = await call(ctx, agent, 'bash', { isError: false, value: 'text', content: [] })
  assert.equal(signals(d).failures, 0)
})

test('the failure text falls back to the content when error.message is empty', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const withContent = (text) => ({ isError: true, error: { message: '' }, content: [{ type: 'text', text }] })
  assert.deepEqual(signals(await call(ctx, agent, 'read', withContent('permission denied'))), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  assert.deepEqual(signals(await call(ctx, agent, 'read', withContent('permission denied'))), { debt: 16, threshold: 20, calls: 2, failures: 2, repeated: 1 })
})

test('a bash call killed by a signal or timed out is a failure; the same kill again is a repeat', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const killed = (text) => ({ isError: false, value: { exitCode: null, signal: 'SIGKILL', stdout: text, stderr: '' }, content: [{ type: 'text', text: `${text}\n[killed by signal: SIGKILL]` }] })
  const timedOut = (text) => ({ isError: false, value: { exitCode: null, signal: 'SIGTERM', timedOut: true, stdout: text, stderr: '' }, content: [{ type: 'text', text: `${text}\n[timed out after 60000ms]\n[killed by signal: SIGTERM]` }] })
  assert.deepEqual(signals(await call(ctx, agent, 'bash', killed('Compiling app'))), { debt: 5, threshold: 20, calls: 1, failures: 1, repeated: 0 })
  assert.deepEqual(signals(await call(ctx, agent, 'bash', killed('Compiling app'))), { debt: 16, threshold: 20, calls: 2, failures: 2, repeated: 1 })
  assert.deepEqual(signals(await call(ctx, agent, 'bash', timedOut('running 12 tests'))), { debt: 21, threshold: 20, calls: 3, failures: 3, repeated: 1 })
  // A timeout flag alone (no signal) counts too; a clean exit does not.
  const late = { isError: false, value: { exitCode: 0, timedOut: true }, content: [{ type: 'text', text: 'done late' }] }
  assert.equal(signals(await call(ctx, agent, 'bash', late)).failures, 4)
  assert.equal(signals(await call(ctx, agent, 'bash', exited(0, 'ok'))).failures, 4)
})

test('a long shell output is fingerprinted by its end, as the replay does from the whole text', async () => {
  const { ctx } = await mount(PROBE)
  const agent = {}
  const lines = (n, mark) => Array.from({ length: n }, (_, i) => `    ${mark} parses case ${i} (${i / 10} ms)`).join('\n')
  // 3,000+ characters; the two differ only in their first lines, far from the end.
  const a = `first run ${'A'.repeat(500)}\n${lines(80, '✗')}`
  const b = `second run ${'B'.repeat(500)}\n${lines(80, '✗')}`
  assert.equal(signals(await call(ctx, agent, 'bash', exited(1, a))).repeated, 0)
  assert.equal(signals(await call(ctx, agent, 'bash', exited(1, b))).repeated, 1, 'the same end is a repeat')
  // A different end is not.
  assert.equal(signals(await call(ctx, agent, 'bash', exited(1, `${a}\nexpected 3`))).repeated, 1)
  // An end that is one long token cannot decide it alone: the whole window crosses, same rules.
  const blob = `x ${'y'.repeat(5000)}`
  assert.equal(signals(await call(ctx, agent, 'bash', exited(1, blob))).repeated, 1)
  assert.equal(signals(await call(ctx, agent, 'bash', exited(1, `z ${'y'.repeat(5000)}`))).repeated, 2)
})

test('Code Mode: run_code adds no debt of its own, thrown or not; the nested calls give the native signals', async () => {
  const { ctx } = await mount({})
  const agent = { id: 'a' }
  const decisions = []
  const program = async (calls, result) => {
    const outer = execOf('run_code', agent, { callId: `p${decisions.length}` })
    for (const [name, nested] of calls) {
      decisions.push(await post(ctx, execOf(name, agent, { parent: outer.token, rootCallId: outer.callId }), nested))
    }
    decisions.push(await post(ctx, outer, result))
  }
  const thrown = { ...failed('code run failed (exception): TypeError at line 456'), error: { message: 'code run failed', info: { name: 'CodeRunFailedError', code: 'CODE_RUN_FAILED' } } }
  await program([['read', ok('file contents')], ['edit', ok('edited')]], ok('done'))
  await program([['bash', failed('TypeError at line 123')], ['edit', ok('edited again')]], thrown)
  await program([['bash', failed('TypeError at line 456')]], thrown)
  const reminders = decisions.filter((d) => nudges(d).length > 0)
  assert.equal(reminders.length, 1, 'one reminder, as natively')
  assert.deepEqual(signals(reminders[0]), { debt: 21, threshold: 20, calls: 5, failures: 2, repeated: 1 })
  assert.equal(nudges(decisions.at(-1)).length, 0, 'the program result itself never nudges')
})

test('Code Mode: programs and calls DSH rejected as unknown tools are never counted', async () => {
  const { ctx } = await mount(PROBE)
  const agent = { id: 'a' }
  const unknown = { ...failed('unknown tool "bash": only `run_code` is callable directly'), error: { message: 'unknown tool', info: { name: 'ToolNotFoundError', code: 'UNKNOWN_TOOL' } } }
  assert.equal(nudges(await call(ctx, agent, 'bash', unknown)).length, 0)
  assert.equal(nudges(await call(ctx, agent, 'run_code', ok('done'))).length, 0)
  assert.equal(nudges(await call(ctx, agent, 'run_code', failed('code run failed (syntax): x'))).length, 0)
  // The first counted call reaches maxToolCallsWithoutResearch: 1.
  assert.equal(signals(await call(ctx, agent, 'edit', ok('edited'))).calls, 1)
})
