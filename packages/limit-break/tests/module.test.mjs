// The module DSH imports: its exports, no import-time side effects, the Standard Schema config,
// fail-loud apply, `enabled: false`, and the tool definitions as DSH's registry takes them.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Plugin, mount, schemaViolations } from './support/harness.mjs'

const validate = (value) => Plugin.Config['~standard'].validate(value)
const INDEX = fileURLToPath(new URL('../lib/index.js', import.meta.url))

test('exports name, inject, Config and apply, and no default export', () => {
  assert.equal(Plugin.name, 'limit-break')
  assert.deepEqual(Plugin.inject, ['tools'])
  assert.equal(typeof Plugin.apply, 'function')
  assert.equal(Plugin.default, undefined)
  assert.equal(Plugin.Config['~standard'].version, 1)
})

test('importing compiles no WebAssembly and reads no .wasm file; the first validation does', () => {
  const script = `
    import fs from 'node:fs'
    import { syncBuiltinESMExports } from 'node:module'
    let modules = 0
    const Module = WebAssembly.Module
    WebAssembly.Module = function (...args) { modules += 1; return new Module(...args) }
    const reads = []
    const readFileSync = fs.readFileSync
    fs.readFileSync = (file, ...rest) => { if (String(file).endsWith('.wasm')) reads.push(String(file)); return readFileSync(file, ...rest) }
    syncBuiltinESMExports()
    const m = await import(${JSON.stringify(new URL(`file://${INDEX}`).href)})
    const before = { modules, reads: reads.length }
    m.Config['~standard'].validate({})
    process.stdout.write(JSON.stringify({ before, after: { modules, reads: reads.length } }))
  `
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }))
  assert.deepEqual(out.before, { modules: 0, reads: 0 })
  assert.deepEqual(out.after, { modules: 1, reads: 1 })
})

test('the empty config is every documented default', () => {
  const { value, issues } = validate({})
  assert.equal(issues, undefined)
  assert.equal(value.enabled, true)
  assert.equal(value.dshHome, '')
  assert.equal(value.allowPrivateNetwork, false)
  assert.equal(value.fetchTimeoutMs, 30000)
  assert.equal(value.maxBodyBytes, 2097152)
  assert.equal(value.maxTextChars, 20000)
  assert.deepEqual(validate(undefined).value, value)
  assert.deepEqual(validate(null).value, value)
})

test('bad values name the field, the rule and the value, with a path', () => {
  assert.deepEqual(validate({ enabled: 'yes' }).issues, [
    { path: ['enabled'], message: 'enabled must be true or false (got "yes")' },
  ])
  assert.deepEqual(validate({ dshHome: NaN }).issues, [
    { path: ['dshHome'], message: 'dshHome must be a string (got NaN)' },
  ])
  assert.deepEqual(validate({ rungTimeoutMs: 100 }).issues, [
    { path: ['rungTimeoutMs'], message: 'rungTimeoutMs must be an integer >= 500 (got 100)' },
  ])
  assert.deepEqual(validate({ enabeld: false }).issues, [
    { path: ['enabeld'], message: 'enabeld is not a config key; did you mean enabled? (got false)' },
  ])
})

test('apply throws the whole message for a bad config', () => {
  assert.throws(() => Plugin.apply({}, { enabled: 1 }), {
    message: 'limit-break: invalid config: enabled must be true or false (got 1)',
  })
})

test('enabled: false registers no tool', async (t) => {
  const { tools } = await mount(t, { enabled: false })
  assert.equal(tools.defs.size, 0)
})

test('the four tools register with schemas in the subset DSH enforces', async (t) => {
  const { tools } = await mount(t)
  assert.deepEqual([...tools.defs.keys()], ['memory_save', 'memory_recall', 'memory_stats', 'resilient_fetch'])
  for (const name of tools.defs.keys()) {
    const def = tools.defs.get(name)
    assert.ok(def, name)
    assert.deepEqual(schemaViolations(def.output.schema), [], name)
    assert.equal(def.parameters.type, 'object')
    assert.ok(def.description.length > 80)
    assert.ok(def.timeoutMs > 0)
  }
  assert.equal(tools.defs.get('memory_save').isConcurrencySafe, undefined, 'saves run exclusively')
  assert.equal(tools.defs.get('memory_recall').isConcurrencySafe({}), true)
  assert.equal(tools.defs.get('memory_stats').isConcurrencySafe({}), true)
  assert.ok(tools.defs.get('memory_save').timeoutMs > 8000, 'a save may wait out the lock')
  const fetch = tools.defs.get('resilient_fetch')
  assert.equal(fetch.isConcurrencySafe({}), true)
  assert.ok(fetch.timeoutMs > 30000, 'DSH\'s timeout outlives the ladder\'s own 30 s deadline')
  assert.deepEqual(fetch.parameters.required, ['url'])
  assert.match(fetch.description, /refused/)
})

test('the fetch tool\'s description and timeout follow the row config', async (t) => {
  const { tools } = await mount(t, { allowPrivateNetwork: true, fetchTimeoutMs: 5000, rungTimeoutMs: 2000, maxTextChars: 5000 })
  const fetch = tools.defs.get('resilient_fetch')
  assert.match(fetch.description, /allowed by this profile's config/)
  assert.match(fetch.description, /at most 5000 characters/)
  assert.ok(fetch.timeoutMs > 5000 && fetch.timeoutMs < 30000)
})

test('disposing the plugin unregisters its tools', async (t) => {
  const { tools, fiber } = await mount(t)
  assert.equal(tools.defs.size, 4)
  await fiber.dispose()
  assert.equal(tools.defs.size, 0)
})
