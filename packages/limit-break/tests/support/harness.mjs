// Test harness: a real Cordis 4 context with a `tools` service that registers and dispatches like
// DSH rc.8's registry: `register` requires `output { schema, render }` and an output schema in
// the enforced subset; a call snapshots the returned value as lossless JSON (no undefined, NaN,
// ±Infinity, -0, sparse arrays or class instances), validates it against the output schema,
// renders it, and turns a thrown exception into an `Error: <message>` result.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context, Service } from '@deepseek-ai/cordis'
import * as Plugin from '../../lib/index.js'

export { Plugin }

const SUBSET = new Set(['type', 'oneOf', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'description', 'title'])

/** Violations of rc.8's output-schema subset (the keywords `checkSchemaNode` accepts). */
export function schemaViolations(schema, path = 'schema') {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [`${path} must be a schema object`]
  const out = []
  for (const key of Object.keys(schema)) if (!SUBSET.has(key)) out.push(`${path}.${key} is not supported`)
  if ('type' in schema && 'oneOf' in schema) out.push(`${path} has both type and oneOf`)
  if (Array.isArray(schema.type)) out.push(`${path}.type must be a single type`)
  for (const [name, child] of Object.entries(schema.properties ?? {})) out.push(...schemaViolations(child, `${path}.properties.${name}`))
  if (schema.items !== undefined) out.push(...schemaViolations(schema.items, `${path}.items`))
  for (const [i, child] of (schema.oneOf ?? []).entries()) out.push(...schemaViolations(child, `${path}.oneOf[${i}]`))
  return out
}

/** Whether `value` is lossless JSON, as rc.8's snapshot demands. */
export function losslessProblems(value, path = 'value') {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return []
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? [] : [`${path} is ${value}`]
  if (Array.isArray(value)) {
    const out = []
    for (let i = 0; i < value.length; i++) {
      if (!Object.hasOwn(value, i)) out.push(`${path}[${i}] is a hole`)
      else out.push(...losslessProblems(value[i], `${path}[${i}]`))
    }
    return out
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.entries(value).flatMap(([k, v]) => losslessProblems(v, `${path}.${k}`))
  }
  return [`${path} is not JSON (${typeof value})`]
}

/** Violations of `value` against a subset schema (enough of rc.8's `validateJsonSchemaValue`). */
export function valueViolations(schema, value, path = 'value') {
  if (schema.oneOf) {
    const matches = schema.oneOf.filter((branch) => valueViolations(branch, value, path).length === 0).length
    return matches === 1 ? [] : [`${path} must match exactly one oneOf branch (matched ${matches})`]
  }
  const out = []
  switch (schema.type) {
    case undefined: return []
    case 'object':
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${path} must be an object`]
      for (const key of schema.required ?? []) if (value[key] === undefined) out.push(`missing ${path}.${key}`)
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        if (value[key] !== undefined) out.push(...valueViolations(child, value[key], `${path}.${key}`))
      }
      if (schema.additionalProperties === false) {
        for (const key of Object.keys(value)) if (!(key in (schema.properties ?? {}))) out.push(`${path}.${key} is not declared`)
      }
      return out
    case 'array':
      if (!Array.isArray(value)) return [`${path} must be an array`]
      return schema.items ? value.flatMap((item, i) => valueViolations(schema.items, item, `${path}[${i}]`)) : []
    case 'integer': if (!Number.isInteger(value)) out.push(`${path} must be an integer`); break
    case 'number': if (typeof value !== 'number') out.push(`${path} must be a number`); break
    case 'string': if (typeof value !== 'string') out.push(`${path} must be a string`); break
    case 'boolean': if (typeof value !== 'boolean') out.push(`${path} must be a boolean`); break
    case 'null': if (value !== null) out.push(`${path} must be null`); break
    default: out.push(`${path}: unknown type ${schema.type}`)
  }
  if ('const' in schema && value !== schema.const) out.push(`${path} must be ${JSON.stringify(schema.const)}`)
  if (schema.enum && !schema.enum.includes(value)) out.push(`${path} must be one of ${schema.enum.join(', ')}`)
  return out
}

/** A stand-in for DSH's `tools` service: `register` and a dispatcher with rc.8's checks. */
export class Tools extends Service {
  constructor(ctx) {
    super(ctx, 'tools')
    this.defs = new Map()
  }

  register(definition) {
    const { name, output } = definition
    if (output === undefined || typeof output !== 'object' || typeof output.render !== 'function') {
      throw new TypeError(`tool "${name}" must declare output { schema, render, presentationMeta? }`)
    }
    const bad = schemaViolations(output.schema)
    if (bad.length) throw new Error(`unsupported JSON schema: ${bad.join('; ')}`)
    if (definition.timeoutMs !== undefined && !(Number.isFinite(definition.timeoutMs) && definition.timeoutMs > 0)) {
      throw new TypeError(`tool "${name}" timeoutMs must be a positive finite number`)
    }
    return this.ctx.effect(() => {
      if (this.defs.has(name)) throw new Error(`tool "${name}" is already registered`)
      this.defs.set(name, definition)
      return () => this.defs.delete(name)
    }, 'tools.register()')
  }

  /** Runs a call the way DSH does; returns `{ isError, value?, content, error? }`. */
  async call(name, args = {}, { signal = new AbortController().signal, agent } = {}) {
    const tool = this.defs.get(name)
    assert.ok(tool, `no tool ${name} (registered: ${[...this.defs.keys()].join(', ')})`)
    let value
    try {
      value = await tool.execute(args, { signal, callId: 'call_1', name, arguments: args, ...(agent ? { agent } : {}) })
    } catch (error) {
      return { isError: true, error: { message: error.message }, content: [{ type: 'text', text: `Error: ${error.message}` }] }
    }
    const lossless = losslessProblems(value)
    assert.deepEqual(lossless, [], `${name} returned a value rc.8 cannot snapshot`)
    const detached = JSON.parse(JSON.stringify(value))
    assert.deepEqual(valueViolations(tool.output.schema, detached), [], `${name} returned a value outside its output schema: ${JSON.stringify(detached).slice(0, 400)}`)
    const content = tool.output.render(args, Object.freeze(detached))
    return { isError: false, value: detached, content }
  }
}

/** Mounts the plugin on a fresh Cordis context with `DSH_HOME` pointing at a scratch folder. */
export async function mount(t, config = {}) {
  const home = await scratch(t)
  const saved = process.env.DSH_HOME
  process.env.DSH_HOME = home
  t.after(() => {
    if (saved === undefined) delete process.env.DSH_HOME
    else process.env.DSH_HOME = saved
  })
  const ctx = new Context()
  const tools = new Tools(ctx)
  const fiber = await ctx.plugin(Plugin, config)
  return { ctx, tools, fiber, home, store: join(home, 'memory', 'facts.json'), lock: join(home, 'memory', '.facts.lock') }
}

/** An agent as the shim reads one: its session header's working directory. */
export function agentIn(cwd) {
  return { id: `agent-${cwd}`, session: { header: { cwd } } }
}

/** An agent as the DSH 0.2 line has it: its session started in `origin` (`header.cwd`) and its
 * per-session working-directory service (`ctx.get('workingDirectory').get(session)`) says where
 * it works now; `moveTo` changes that, as `ctx.workingDirectory.set` does there. */
export function agentV02(origin, current) {
  const session = { id: `session-${origin}`, header: { cwd: origin } }
  let now = current
  const service = { get: (s) => (s === session ? now : s.header.cwd) }
  return {
    id: `agent-${origin}`,
    session,
    ctx: { get: (name) => (name === 'workingDirectory' ? service : undefined) },
    moveTo(dir) {
      now = dir
    },
  }
}

/** Runs DSH's `system-prompt/assemble` waterfall for `agent` over an assembly of one section,
 * as the agent loop does before each model request; resolves to the assembly. */
export function assemble(ctx, agent) {
  const assembly = { sections: [{ name: 'harness:identity', text: 'You are an AI agent.' }], contexts: [], tools: [], variables: {} }
  return ctx.waterfall('system-prompt/assemble', assembly, { agent }, () => Promise.resolve(assembly))
}

/** A fresh folder removed after the test. */
export async function scratch(t) {
  const dir = await mkdtemp(join(tmpdir(), 'limit-break-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

export function captureErrors(t) {
  const lines = []
  t.mock.method(console, 'error', (...args) => {
    lines.push(args)
  })
  return lines
}
