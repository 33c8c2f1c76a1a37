// Reads a patch file (stdin) with the js-yaml and the schema DSH's include loads it with, and prints
// {document, value, values, keys} (the positions of every value and key by JSON Pointer, as
// [line, column], 1-based, columns in characters) or {error: {line, col, reason}}.
// The positions come from js-yaml's own `listener`: every node it composes opens and closes there.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

const app = createRequire(process.argv.at(-1))
const includePath = app.resolve('@deepseek-ai/cordis-plugin-include')
const { entryListSchema } = await import(pathToFileURL(includePath))
const yaml = createRequire(includePath)('js-yaml')
const input = readFileSync(0, 'utf8')

function at (position) {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < position; i++) {
    if (input.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return [line, [...input.slice(lineStart, position)].length + 1]
}

// js-yaml opens a value before it skips the separation space in front of it.
function contentFrom (position) {
  let i = position
  for (;;) {
    const c = input[i]
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\ufeff') i++
    else if (c === '#') while (i < input.length && input[i] !== '\n') i++
    else return i
  }
}

function followedByColon (position) {
  let i = position
  while (input[i] === ' ' || input[i] === '\t') i++
  return input[i] === ':'
}

const roots = []
const stack = []
function listener (event, state) {
  if (event === 'open') {
    stack.push({ start: state.position, children: [] })
    return
  }
  const node = stack.pop()
  node.kind = state.kind
  node.result = state.result
  node.end = state.position
  ;(stack.length ? stack[stack.length - 1].children : roots).push(node)
}

const values = {}
const keys = {}
function place (node, pointer) {
  // A block context first tries to read a mapping key, so a node may hold the same node once more.
  while (node.children.length === 1 && node.children[0].result === node.result) node = node.children[0]
  values[pointer] = at(contentFrom(node.start))
  if (node.kind === 'sequence') {
    node.children.forEach((child, index) => place(child, `${pointer}/${index}`))
  } else if (node.kind === 'mapping') {
    let key = null
    for (const child of node.children) {
      if (child.kind === 'scalar' && followedByColon(child.end)) {
        key = `${pointer}/${String(child.result).replaceAll('~', '~0').replaceAll('/', '~1')}`
        keys[key] = values[key] = at(contentFrom(child.start))
      } else if (key !== null) {
        // An empty value stays at its key.
        if (child.kind) place(child, key)
        key = null
      }
    }
  }
}

let value
try {
  value = yaml.load(input, { schema: entryListSchema, listener })
} catch (error) {
  if (!(error instanceof yaml.YAMLException)) throw error
  const [line, col] = error.mark ? at(error.mark.position) : [1, 1]
  process.stdout.write(JSON.stringify({ error: { line, col, reason: error.reason } }))
  process.exit(0)
}
const document = roots.length === 1 && Boolean(roots[0].kind)
if (document) place(roots[0], '')
// JSON has no NaN or infinities: they become what String() prints, so the schema names them.
const json = (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)
process.stdout.write(JSON.stringify({ document, value: value ?? null, values, keys }, json))
