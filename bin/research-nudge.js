#!/usr/bin/env node
// research-nudge replay: feeds recorded tool events through the same Rust core the plugin runs and
// prints the state after each one. This file only does I/O; the format rules live in Rust.
import { createReadStream, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { Replay, encodeConfig } from '../lib/core.js'

const USAGE = `usage: research-nudge replay [--config FILE] [EVENTS.jsonl | -]

  Replays tool events (one JSON object per line) through research-nudge's policy and prints
  one JSON state line per event. --config takes a JSON object holding the row's config.`

function fail(message) {
  process.stderr.write(`research-nudge: ${message}\n`)
  process.exit(2)
}

function parseArgs(argv) {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  if (command !== 'replay') fail(command === undefined ? `missing command\n${USAGE}` : `unknown command "${command}"\n${USAGE}`)
  let config
  let input = '-'
  let inputSeen = false
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    if (arg === '--config') {
      if (rest[i + 1] === undefined) fail('--config needs a file')
      config = rest[++i]
    } else if (arg.startsWith('--config=')) {
      config = arg.slice('--config='.length)
    } else if (arg.startsWith('-') && arg !== '-') {
      fail(`unknown option "${arg}"\n${USAGE}`)
    } else if (inputSeen) {
      fail(`only one events file may be given (got "${input}" and "${arg}")`)
    } else {
      input = arg
      inputSeen = true
    }
  }
  return { config, input }
}

function readConfigFile(file) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    fail(`cannot read --config ${file}: ${error.message}`)
  }
  try {
    return encodeConfig(JSON.parse(text))
  } catch (error) {
    fail(`--config ${file} is not valid JSON: ${error.message}`)
  }
}

const { config, input } = parseArgs(process.argv.slice(2))
let replay
try {
  replay = new Replay(config === undefined ? 'null' : readConfigFile(config))
} catch (error) {
  process.stderr.write(`${error.message}\n`)
  process.exit(2)
}

const stream = input === '-' ? process.stdin : createReadStream(input)
stream.on('error', (error) => fail(`cannot read ${input}: ${error.message}`))
const out = []
for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
  let result
  try {
    result = replay.feed(line)
  } catch (error) {
    process.stdout.write(out.join(''))
    fail(error.message)
  }
  if (result !== undefined) out.push(`${result}\n`)
  if (out.length >= 256) process.stdout.write(out.splice(0).join(''))
}
process.stdout.write(out.join(''))
