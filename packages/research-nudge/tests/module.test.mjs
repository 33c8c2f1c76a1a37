// The plugin module's shape and its config contract, on its own and through Cordis.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Plugin, createContext, mount } from './support/harness.mjs'

const validate = (value) => Plugin.Config['~standard'].validate(value)

const DEFAULT_REMINDER_START = '[Research Nudge]\n\nPause and reflect before continuing:\n\n1. What problem am I trying to solve right now?'
const DEFAULT_REMINDER_END = 'If you are deliberately making progress from local evidence and do not want another reminder for a while, use the research_nudge_snooze tool.'

const DEFAULTS_WITHOUT_REMINDER = {
  enabled: true,
  debtThreshold: 20,
  maxToolCallsWithoutResearch: 15,
  maxMinutesWithoutResearch: 15,
  cooldownMinutes: 10,
  reminderBackoff: 2,
  ordinaryToolDebt: 1,
  mutationDebt: 2,
  executionDebt: 1,
  failureDebt: 4,
  repeatedFailureDebt: 6,
  maxAgentSnoozeMinutes: 60,
  researchTools: [
    'web_search', 'websearch', 'web_fetch', 'webfetch', 'search_web', 'browser_search',
    'github_search', 'search_github', 'fetch_url', 'http_get', 'docs_search', 'documentation_search',
  ],
  mutationTools: [
    'write', 'edit', 'replace', 'patch', 'create_file', 'delete_file', 'apply_patch', 'delete',
    'remove', 'rename', 'move', 'mkdir', 'rmdir', 'create_directory',
  ],
  executionTools: [
    'bash', 'sh', 'zsh', 'shell', 'terminal', 'exec', 'execute', 'run_command', 'run', 'test',
    'tests', 'pytest', 'compile', 'build', 'make', 'cargo', 'npm', 'pnpm', 'yarn', 'node', 'python',
  ],
  reminderStyle: 'specific',
  debug: false,
}

function withoutReminder(value) {
  const { reminder, ...rest } = value
  return rest
}

test('the module exports exactly name, inject, Config and apply (no default export)', () => {
  assert.deepEqual(Object.keys(Plugin).sort(), ['Config', 'apply', 'inject', 'name'])
  assert.equal('default' in Plugin, false)
  assert.equal(Plugin.name, 'research-nudge')
  assert.deepEqual(Plugin.inject, ['tools'])
  assert.equal(typeof Plugin.apply, 'function')
  assert.equal(Plugin.Config['~standard'].version, 1)
  assert.equal(Plugin.Config['~standard'].vendor, 'research-nudge')
  assert.equal(typeof Plugin.Config['~standard'].validate, 'function')
})

test('validate({}) fills every default', () => {
  const result = validate({})
  assert.deepEqual(Object.keys(result), ['value'])
  const { value } = result
  assert.deepEqual(withoutReminder(value), DEFAULTS_WITHOUT_REMINDER)
  assert.equal(value.debtThreshold, 20)
  assert.equal(value.researchTools.length, 12)
  assert.ok(value.reminder.startsWith(DEFAULT_REMINDER_START), value.reminder.slice(0, 120))
  assert.ok(value.reminder.endsWith(DEFAULT_REMINDER_END), value.reminder.slice(-200))
  assert.equal(Object.keys(value).length, 18)
})

test('a missing config (undefined or null) means all defaults', () => {
  assert.deepEqual(validate(undefined), validate({}))
  assert.deepEqual(validate(null), validate({}))
})

test('validate keeps given values and defaults the rest (whole-row replacement)', () => {
  const { value } = validate({ debtThreshold: 7, cooldownMinutes: 0.5, researchTools: ['my_search'] })
  assert.deepEqual(withoutReminder(value), {
    ...DEFAULTS_WITHOUT_REMINDER,
    debtThreshold: 7,
    cooldownMinutes: 0.5,
    researchTools: ['my_search'],
  })
})

test('validate rejects debtThreshold 0 with a path-naming message', () => {
  assert.deepEqual(validate({ debtThreshold: 0 }), {
    issues: [{ message: 'debtThreshold must be an integer >= 1 (got 0)', path: ['debtThreshold'] }],
  })
})

test('validate suggests the closest key for a misspelled one', () => {
  assert.deepEqual(validate({ debtTreshold: 5 }), {
    issues: [{ message: 'debtTreshold is not a config key; did you mean debtThreshold? (got 5)', path: ['debtTreshold'] }],
  })
})

test('validate shows values JSON cannot hold as themselves (NaN, Infinity, bigint, function)', () => {
  assert.deepEqual(validate({ debtThreshold: NaN }), {
    issues: [{ message: 'debtThreshold must be an integer >= 1 (got NaN)', path: ['debtThreshold'] }],
  })
  assert.deepEqual(validate({ cooldownMinutes: Infinity }).issues, [
    { message: 'cooldownMinutes must be a number >= 0 (got Infinity)', path: ['cooldownMinutes'] },
  ])
  assert.deepEqual(validate({ debtThreshold: 10n }).issues, [
    { message: 'debtThreshold must be an integer >= 1 (got bigint 10)', path: ['debtThreshold'] },
  ])
  assert.deepEqual(validate({ debug: () => true }).issues, [
    { message: 'debug must be true or false (got function)', path: ['debug'] },
  ])
})

test('validate rejects a config that is not an object', () => {
  assert.deepEqual(validate(5), { issues: [{ message: 'config must be an object (got 5)' }] })
  assert.deepEqual(validate('x'), { issues: [{ message: 'config must be an object (got "x")' }] })
  assert.deepEqual(validate([]), { issues: [{ message: 'config must be an object (got [])' }] })
  assert.deepEqual(validate(true), { issues: [{ message: 'config must be an object (got true)' }] })
})

test('validate reports every issue, in input order, with list indexes in the path', () => {
  assert.deepEqual(validate({ debtThreshold: 0, cooldownMinutes: -1, researchTools: ['ok', '', 3] }), {
    issues: [
      { message: 'debtThreshold must be an integer >= 1 (got 0)', path: ['debtThreshold'] },
      { message: 'cooldownMinutes must be a number >= 0 (got -1)', path: ['cooldownMinutes'] },
      { message: 'researchTools[1] must contain at least one letter or digit (got "")', path: ['researchTools', 1] },
      { message: 'researchTools[2] must be a string (got 3)', path: ['researchTools', 2] },
    ],
  })
})

test('validate never throws, even on a config JSON cannot encode (a cycle)', () => {
  const cyclic = { debtThreshold: 3 }
  cyclic.self = cyclic
  const result = validate(cyclic)
  assert.equal(result.value, undefined)
  assert.equal(result.issues.length, 1)
  // A root issue carries no path, so Cordis prints no empty "(at )".
  assert.equal(result.issues[0].path, undefined)
  assert.match(result.issues[0].message, /^config must be an object \(got unreadable value \(.*circular/s)
})

test('Cordis rejects ctx.plugin with an invalid config, before apply registers anything', async () => {
  const { ctx, tools } = createContext()
  await assert.rejects(
    async () => { await ctx.plugin(Plugin, { debtThreshold: 0 }) },
    (error) => {
      assert.equal(error.name, 'ValidationError')
      assert.ok(error.message.includes('debtThreshold must be an integer >= 1 (got 0)'), error.message)
      return true
    },
  )
  assert.equal(tools.history.length, 0)
  assert.equal(ctx.events._hooks['tools/post-execute']?.length ?? 0, 0)
})

test('Cordis hands apply the validated config with every default filled', async () => {
  const { fiber } = await mount({ debtThreshold: 7 })
  assert.deepEqual(fiber.config, validate({ debtThreshold: 7 }).value)
})

/** A bare stand-in for a context, for calling apply without Cordis. */
function bareContext() {
  const registered = []
  const listeners = []
  return {
    registered,
    listeners,
    tools: { register: (def) => { registered.push(def); return () => {} } },
    on: (name, fn) => { listeners.push(name); return () => true },
  }
}

test('apply called directly with a bad config throws the full invalid-config message', () => {
  const ctx = bareContext()
  assert.throws(() => Plugin.apply(ctx, { debtThreshold: 0 }), {
    message: 'research-nudge: invalid config: debtThreshold must be an integer >= 1 (got 0)',
  })
  assert.throws(() => Plugin.apply(ctx, { debtThreshold: 0, foo: 1 }), {
    message: 'research-nudge: invalid config: debtThreshold must be an integer >= 1 (got 0); foo is not a config key (got 1)',
  })
  assert.throws(() => Plugin.apply(ctx, 5), {
    message: 'research-nudge: invalid config: config must be an object (got 5)',
  })
  assert.deepEqual(ctx.registered, [])
  assert.deepEqual(ctx.listeners, [])
})

test('apply called directly with a config JSON cannot encode throws the invalid-config message too', () => {
  // validate() turns a cyclic config into an issue; apply() should fail just as loudly and in
  // the same words instead of leaking JSON.stringify's TypeError.
  const ctx = bareContext()
  const cyclic = {}
  cyclic.self = cyclic
  assert.throws(() => Plugin.apply(ctx, cyclic), (error) => {
    assert.match(error.message, /^research-nudge: invalid config: /)
    return true
  })
  assert.deepEqual(ctx.registered, [])
})

test('apply called directly with no config uses the defaults and registers the tool and both listeners', () => {
  const ctx = bareContext()
  Plugin.apply(ctx, undefined)
  assert.deepEqual(ctx.registered.map((d) => d.name), ['research_nudge_snooze'])
  assert.deepEqual(ctx.listeners, ['tools/post-execute', 'agent/pre-step'])
})
