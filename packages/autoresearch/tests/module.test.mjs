// The module DSH imports: its exports and the Standard Schema config, with fail-loud apply.
import test from 'node:test'
import assert from 'node:assert/strict'
import * as Plugin from '../lib/index.js'

const validate = (value) => Plugin.Config['~standard'].validate(value)

test('exports name, Config and apply, and no default export', () => {
  assert.equal(Plugin.name, 'autoresearch')
  assert.equal(typeof Plugin.apply, 'function')
  assert.equal(Plugin.default, undefined)
  assert.equal(Plugin.Config['~standard'].version, 1)
})

test('the empty config is every documented default', () => {
  const { value, issues } = validate({})
  assert.equal(issues, undefined)
  assert.deepEqual(value, {
    gitExecutable: 'git',
    stateRoot: 'dsh-autoresearch',
    branchPrefix: 'autoresearch/',
    defaultMaxExperiments: 20,
    maxExperiments: 100,
    maxHandoffChars: 16384,
    defaultTimeoutMs: 900000,
    maxTimeoutMs: 3600000,
    maxParallelism: 4,
    terminationGraceMs: 5000,
    maxActiveRunsPerRepository: 1,
    maxStdoutBytes: 1048576,
    maxStderrBytes: 1048576,
    maxResultChars: 16384,
    artifactRetentionDays: 30,
    retainFailedArtifacts: true,
    retainWorktrees: true,
    cleanupWorktreesOnSuccess: false,
    exportTsv: true,
    tsvRetentionDays: 30,
    recoverRepositories: [],
  })
  assert.deepEqual(validate(undefined).value, value)
  assert.deepEqual(validate(null).value, value)
})

test('bad values name the field, the rule and the value, with a path', () => {
  assert.deepEqual(validate({ maxExperiments: 0 }).issues, [
    { path: ['maxExperiments'], message: 'maxExperiments must be an integer >= 1 (got 0)' },
  ])
  assert.deepEqual(validate({ defaultTimeoutMs: NaN }).issues, [
    { path: ['defaultTimeoutMs'], message: 'defaultTimeoutMs must be an integer >= 1000 (got NaN)' },
  ])
  assert.deepEqual(validate({ branchPrefx: 'x/' }).issues, [
    { path: ['branchPrefx'], message: 'branchPrefx is not a config key; did you mean branchPrefix? (got "x/")' },
  ])
  assert.deepEqual(validate({ defaultMaxExperiments: 50, maxExperiments: 10 }).issues.map((i) => i.path), [['defaultMaxExperiments']])
})

test('apply throws the whole message for a bad config', () => {
  assert.throws(() => Plugin.apply({}, { maxExperiments: 0 }), {
    message: 'autoresearch: invalid config: maxExperiments must be an integer >= 1 (got 0)',
  })
})
