#!/usr/bin/env node
// limit-break: the people CLI over the memory store the tools write. The same Rust core and the
// same lock protocol as the plugin: `forget` and `import` take the store lock like a save, and
// every output and message comes from the core. This file parses arguments and does I/O.
import { readFile, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { resolve, sep } from 'node:path'
import { core } from '../lib/core.js'
import { createMemory, describe, projectRoot, storePaths, withStoreLock } from '../lib/memory.js'

const USAGE = `usage: limit-break <command> [--home DIR]

  Reads and edits the fact store that dsh-limit-break's memory tools write
  ($DSH_HOME/memory/facts.json).

  list                    one line per fact (id, last saved, statement), then a count
  show ID                 one fact, all its fields, as JSON
  forget ID               delete the fact ID (takes the store lock, like a save)
  export [FILE]           the whole store, as a save would write it, to FILE or stdout
  import FILE [--policy newer|overwrite|keep]
                          merge the facts of another store file (takes the store lock);
                          for an id both hold: newer (default) keeps the later timestamp,
                          overwrite takes the file's, keep keeps the store's
  stats                   what memory_stats answers, as JSON
  recall QUERY [--tag T]... [--limit N] [--offset N] [--include-superseded] [--all-projects]
                          search the facts as memory_recall does (the same ranking and
                          filters, the current directory's repository as the project):
                          one line per fact (score, id, statement), then the count

  --home DIR              the DSH home (default: $DSH_HOME, else ~/.dsh)

  Exit status: 0 done, 1 the command failed (the reason is on stderr), 2 bad usage.`

function fail(message, status = 2) {
  process.stderr.write(`limit-break: ${message}\n`)
  process.exit(status)
}

function parse(argv) {
  const positional = []
  let home = ''
  let policy = 'newer'
  const recall = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      if (argv[i + 1] === undefined) fail(`${arg} needs a value\n${USAGE}`)
      return argv[++i]
    }
    if (arg === '--help' || arg === '-h' || arg === 'help') {
      process.stdout.write(`${USAGE}\n`)
      process.exit(0)
    } else if (arg === '--home') home = value()
    else if (arg.startsWith('--home=')) home = arg.slice('--home='.length)
    else if (arg === '--policy') policy = value()
    else if (arg.startsWith('--policy=')) policy = arg.slice('--policy='.length)
    else if (arg === '--tag') recall.tags = [...(recall.tags ?? []), value()]
    else if (arg === '--limit' || arg === '--offset') recall[arg.slice(2)] = number(value())
    else if (arg === '--include-superseded') recall.include_superseded = true
    else if (arg === '--all-projects') recall.all_projects = true
    else if (arg.startsWith('-') && arg !== '-') fail(`unknown option "${arg}"\n${USAGE}`)
    else positional.push(arg)
  }
  return { positional, home, policy, recall }
}

/** A number argument as a number when it reads as one, else as given (the core names the rule). */
const number = (text) => (/^\d+$/.test(text) ? Number(text) : text)

/** Prints an answer: its text on success, its message on failure (exit 1). */
function finish(answerJson, text) {
  const answer = JSON.parse(answerJson)
  if (answer.ok !== true) fail(`${answer.code}: ${answer.message}`, 1)
  if (text !== undefined) process.stdout.write(text)
}

/** A read-only command: `read(bytes)` returns a core edit whose text is the output. */
async function readOnly(paths, read) {
  let bytes
  try {
    bytes = await readFile(paths.store)
  } catch (error) {
    if (error.code !== 'ENOENT') fail(`cannot read ${paths.store}: ${describe(error)}`, 1)
  }
  const result = read(bytes)
  try {
    return { answer: result.answer, text: result.bytes }
  } finally {
    result.free()
  }
}

async function main() {
  const { positional, home, policy, recall } = parse(process.argv.slice(2))
  const [command, ...rest] = positional
  const arity = { list: [0, 0], show: [1, 1], forget: [1, 1], export: [0, 1], import: [1, 1], stats: [0, 0], recall: [1, 1] }
  if (command === undefined) fail(`missing command\n${USAGE}`)
  if (arity[command] === undefined) fail(`unknown command "${command}"\n${USAGE}`)
  const [min, max] = arity[command]
  if (rest.length < min || rest.length > max) fail(`${command} takes ${min === max ? min : `${min} to ${max}`} argument(s)\n${USAGE}`)

  const wasm = core()
  const plugin = new wasm.LimitBreakPlugin(JSON.stringify({ dshHome: home }))
  const dshHomeEnv = process.env.DSH_HOME
  const osHome = homedir()
  const paths = storePaths(wasm, resolve(plugin.dshHome(dshHomeEnv, osHome, sep)))

  switch (command) {
    case 'list': {
      const { answer, text } = await readOnly(paths, (bytes) => wasm.listFacts(bytes))
      return finish(answer, text)
    }
    case 'show': {
      const { answer, text } = await readOnly(paths, (bytes) => wasm.showFact(bytes, rest[0]))
      return finish(answer, text)
    }
    case 'export': {
      const { answer, text } = await readOnly(paths, (bytes) => wasm.exportFacts(bytes))
      if (rest[0] === undefined || rest[0] === '-') return finish(answer, text)
      finish(answer)
      try {
        await writeFile(rest[0], text)
      } catch (error) {
        fail(`cannot write ${rest[0]}: ${describe(error)}`, 1)
      }
      return undefined
    }
    case 'forget': {
      const answer = await withStoreLock(wasm, paths, (current) => wasm.forgetFact(current, rest[0]))
      return finish(answer, `${answer}\n`)
    }
    case 'import': {
      let incoming
      try {
        incoming = await readFile(rest[0])
      } catch (error) {
        fail(`cannot read ${rest[0]}: ${describe(error)}`, 1)
      }
      const answer = await withStoreLock(wasm, paths, (current) => wasm.importFacts(current, incoming, policy))
      return finish(answer, `${answer}\n`)
    }
    case 'stats': {
      const answer = await createMemory(wasm, plugin, paths, { dshHomeEnv, osHome }).stats()
      return finish(JSON.stringify(answer), `${JSON.stringify(answer, null, 2)}\n`)
    }
    case 'recall': {
      const project = await projectRoot(process.cwd()).catch(() => undefined)
      const memory = createMemory(wasm, plugin, paths, { dshHomeEnv, osHome })
      const answer = JSON.stringify(await memory.recall({ ...recall, query: rest[0] }, project))
      return finish(answer, wasm.recallLines(answer))
    }
  }
  return undefined
}

process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})
await main()
