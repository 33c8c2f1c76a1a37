// The module DSH imports: its exports, the Standard Schema config and fail-loud apply.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Plugin } from './support/harness.mjs'

const validate = (value) => Plugin.Config['~standard'].validate(value)

test('exports name, inject, Config and apply, and no default export', () => {
  assert.equal(Plugin.name, 'pain-point-check')
  assert.deepEqual(Plugin.inject, ['tools'])
  assert.equal(typeof Plugin.apply, 'function')
  assert.equal(Plugin.default, undefined)
  assert.equal(Plugin.Config['~standard'].version, 1)
})

test('the empty config is every documented default', () => {
  const { value, issues } = validate({})
  assert.equal(issues, undefined)
  assert.equal(value.failureThreshold, 2)
  assert.equal(value.repeatThreshold, 2)
  assert.deepEqual(value.allowlist.slice(0, 8), ['read', 'read_image', 'glob', 'grep', 'web_search', 'ask_user_question', 'skill', 'todo_write'])
  assert.deepEqual(validate(undefined).value, value)
  assert.deepEqual(validate(null).value, value)
})

test('bad values name the field, the rule and the value, with a path', () => {
  assert.deepEqual(validate({ failureThreshold: 0 }).issues, [
    { path: ['failureThreshold'], message: 'failureThreshold must be an integer >= 1 (got 0)' },
  ])
  assert.deepEqual(validate({ repeatThreshold: NaN }).issues, [
    { path: ['repeatThreshold'], message: 'repeatThreshold must be an integer >= 1 (got NaN)' },
  ])
  assert.deepEqual(validate({ failureTreshold: 3 }).issues, [
    { path: ['failureTreshold'], message: 'failureTreshold is not a config key; did you mean failureThreshold? (got 3)' },
  ])
  assert.deepEqual(validate({ extraAllowlist: ['read', '*'] }).issues.map((i) => i.path), [['extraAllowlist', 1]])
  const cyclic = {}
  cyclic.self = cyclic
  assert.ok(validate(cyclic).issues.length >= 1)
})

test('apply throws the whole message for a bad config', () => {
  assert.throws(() => Plugin.apply({}, { failureThreshold: 0 }), {
    message: 'pain-point-check: invalid config: failureThreshold must be an integer >= 1 (got 0)',
  })
})
