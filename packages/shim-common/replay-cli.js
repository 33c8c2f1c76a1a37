// The I/O of every package's `replay` CLI: arguments, reading and decompressing the input,
// printing. The formats and the output live in Rust (each package's Replay engine). Copied into
// each package's lib/common/ by `cargo xtask build`.
import { createReadStream, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { Readable } from 'node:stream'
import * as zlib from 'node:zlib'
import { encodeConfig } from './config.js'

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd])
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b])

/** Run files of a corpus folder: replay-event files and DSH session logs. */
const RUN_FILE = /\.jsonl(\.gz|\.zstd|\.zst)?$/

/** The longest input line read (bytes): far above any real event, low enough that a hostile line
 * is refused before it becomes one string. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024

/** The most bytes one input may decompress to: a small compressed file cannot become gigabytes. */
export const MAX_DECOMPRESSED_BYTES = 1024 * 1024 * 1024

/**
 * Runs `<command> replay [--config FILE] [EVENTS.jsonl | -] [--json | --html OUT.html]`, or
 * `<command> replay --corpus DIR [--labels FILE] [--half tune|report] [--json]` when the package
 * passes `createCorpus(configJson, half)` (its Corpus engine: `setLabels`, `wants(id)`,
 * `start(id)`, `feed(line)`, `end()`, `report(json)`).
 * `createReplay(configJson)` returns the package's Replay engine: `feed(line)` returns output
 * text or undefined and throws `line N: …`; optional `json` and `html` setters and `finish()`.
 * With `--html` (engines that have the `html` setter) nothing is printed per line: `finish()`
 * returns one self-contained page, written to the file.
 */
export async function runReplayCli({ command, usage, createReplay, createCorpus, argv = process.argv.slice(2) }) {
  const fail = (message) => {
    process.stderr.write(`${command}: ${message}\n`)
    process.exit(2)
  }
  const { config, input, json, html, corpus, labels, half } = parseArgs(argv, usage, fail)
  if (corpus === undefined) {
    if (labels !== undefined) fail('--labels needs --corpus')
    if (half !== undefined) fail('--half needs --corpus')
  } else {
    if (html !== undefined) fail('--corpus and --html cannot be combined')
    if (input !== '-') fail(`--corpus replays a folder; an events file cannot be given too (got "${input}")`)
    return replayCorpus({ command, createCorpus, config, corpus, labels, half, json, fail })
  }
  let replay
  try {
    replay = createReplay(config === undefined ? 'null' : readConfigFile(config, fail))
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(2)
  }
  if (json) replay.json = true
  if (html !== undefined) {
    if (json) fail('--json and --html cannot be combined')
    if (!('html' in Object.getPrototypeOf(replay))) fail(`--html is not supported by ${command}`)
    replay.html = true
  }

  // A reader that stops early (`| head`) is not an error.
  process.stdout.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })

  const { stream, name, decompressing } = await openInput(input, command, fail)
  const out = []
  try {
    for await (const line of lines(stream, name, fail)) {
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
  } catch (error) {
    process.stdout.write(out.join(''))
    fail(decompressing
      ? `cannot decompress ${name} (${error.message}); the lines above were read before it`
      : `cannot read ${input}: ${error.message}`)
  }
  const summary = typeof replay.finish === 'function' ? replay.finish() : undefined
  if (html !== undefined) {
    try {
      writeFileSync(html, summary ?? '')
    } catch (error) {
      fail(`cannot write --html ${html}: ${error.message}`)
    }
    process.stderr.write(`${command}: wrote ${html}\n`)
    return
  }
  process.stdout.write(out.join(''))
  if (summary !== undefined) process.stdout.write(`${summary}\n`)
}

/** The corpus folder's run files, sorted, each with its run id: the path under the folder without
 * the extension, a session log's `/session` dropped, with `/` separators. A symbolic link is never
 * followed (a link back up the tree would count runs again, or never end): each one is named on
 * standard error and skipped. */
function runFiles(dir, command, fail) {
  const files = []
  const skipped = []
  const walk = (folder) => {
    let entries
    try {
      entries = readdirSync(folder, { withFileTypes: true })
    } catch (error) {
      fail(`cannot read --corpus ${folder}: ${error.message}`)
    }
    for (const entry of entries) {
      const path = join(folder, entry.name)
      if (entry.isSymbolicLink()) {
        skipped.push(path)
      } else if (entry.isDirectory()) {
        walk(path)
      } else if (entry.isFile() && RUN_FILE.test(entry.name)) {
        const id = relative(dir, path).split(sep).join('/').replace(RUN_FILE, '').replace(/\/session$/, '')
        files.push({ path, id })
      }
    }
  }
  let root
  try {
    root = lstatSync(dir)
  } catch (error) {
    fail(`cannot read --corpus ${dir}: ${error.message}`)
  }
  if (root.isSymbolicLink()) fail(`--corpus ${dir} is a symbolic link; give the folder it points to`)
  walk(dir)
  for (const path of skipped) process.stderr.write(`${command}: skipped ${path}: a symbolic link is not followed\n`)
  return files.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

/**
 * The lines of a byte stream, decoded as UTF-8, without their `\n` (and a `\r` before it). A
 * line longer than MAX_LINE_BYTES fails naming the input and the line, before it is ever one
 * string.
 */
async function * lines(stream, name, fail) {
  const decoder = new TextDecoder()
  let pending = []
  let pendingBytes = 0
  let number = 0
  const take = (tail) => {
    const bytes = pending.length === 0 ? tail : Buffer.concat([...pending, tail])
    pending = []
    pendingBytes = 0
    number += 1
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length
    return decoder.decode(bytes.subarray(0, end))
  }
  for await (const chunk of stream) {
    let buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
    for (;;) {
      const at = buffer.indexOf(0x0a)
      if (at === -1) break
      if (pendingBytes + at > MAX_LINE_BYTES) tooLong(name, number + 1, fail)
      yield take(buffer.subarray(0, at))
      buffer = buffer.subarray(at + 1)
    }
    pendingBytes += buffer.length
    if (pendingBytes > MAX_LINE_BYTES) tooLong(name, number + 1, fail)
    if (buffer.length > 0) pending.push(Buffer.from(buffer))
  }
  if (pendingBytes > 0) yield take(Buffer.alloc(0))
}

function tooLong(name, number, fail) {
  fail(`${name}: line ${number} is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB; no event is that long, so the input is refused`)
}

async function replayCorpus({ command, createCorpus, config, corpus, labels, half, json, fail }) {
  if (createCorpus === undefined) fail(`--corpus is not supported by ${command}`)
  let replay
  try {
    replay = createCorpus(config === undefined ? 'null' : readConfigFile(config, fail), half)
    if (labels !== undefined) {
      let text
      try {
        text = readFileSync(labels, 'utf8')
      } catch (error) {
        fail(`cannot read --labels ${labels}: ${error.message}`)
      }
      replay.setLabels(text)
    }
  } catch (error) {
    process.stderr.write(`${error.message}\n`)
    process.exit(2)
  }
  const files = runFiles(corpus, command, fail)
  if (files.length === 0) fail(`--corpus ${corpus} holds no .jsonl, .jsonl.gz or .jsonl.zstd files`)
  for (const { path, id } of files) {
    if (!replay.wants(id)) continue
    const { stream, name, decompressing } = await openInput(path, command, fail)
    replay.start(id)
    try {
      for await (const line of lines(stream, path, fail)) {
        try {
          replay.feed(line)
        } catch (error) {
          fail(`${path}: ${error.message}`)
        }
      }
    } catch (error) {
      fail(decompressing ? `cannot decompress ${name} (${error.message})` : `cannot read ${path}: ${error.message}`)
    }
    replay.end()
  }
  process.stdout.write(`${replay.report(json)}\n`)
}

function parseArgs(argv, usage, fail) {
  const [verb, ...rest] = argv
  if (verb === '--help' || verb === '-h' || verb === 'help') {
    process.stdout.write(`${usage}\n`)
    process.exit(0)
  }
  if (verb !== 'replay') fail(verb === undefined ? `missing command\n${usage}` : `unknown command "${verb}"\n${usage}`)
  let config
  let input = '-'
  let inputSeen = false
  let json = false
  let html
  let corpus
  let labels
  let half
  const value = (i, option) => {
    if (rest[i + 1] === undefined) fail(`${option} needs a value`)
    return rest[i + 1]
  }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    if (arg === '--corpus') {
      corpus = value(i++, '--corpus')
    } else if (arg === '--labels') {
      labels = value(i++, '--labels')
    } else if (arg === '--half') {
      half = value(i++, '--half')
    } else if (arg === '--config') {
      if (rest[i + 1] === undefined) fail('--config needs a file')
      config = rest[++i]
    } else if (arg.startsWith('--config=')) {
      config = arg.slice('--config='.length)
    } else if (arg === '--json') {
      json = true
    } else if (arg === '--html') {
      if (rest[i + 1] === undefined) fail('--html needs an output file')
      html = rest[++i]
    } else if (arg.startsWith('--html=')) {
      html = arg.slice('--html='.length)
    } else if (arg.startsWith('-') && arg !== '-') {
      fail(`unknown option "${arg}"\n${usage}`)
    } else if (inputSeen) {
      fail(`only one events file may be given (got "${input}" and "${arg}")`)
    } else {
      input = arg
      inputSeen = true
    }
  }
  return { config, input, json, html, corpus, labels, half }
}

function readConfigFile(file, fail) {
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

/** The input as a byte stream, decompressed when it starts with the Zstandard (DSH's default
 * session log encoding) or gzip magic. */
async function openInput(input, command, fail) {
  const raw = input === '-' ? process.stdin : createReadStream(input)
  const chunks = raw[Symbol.asyncIterator]()
  let first
  try {
    first = await chunks.next()
  } catch (error) {
    fail(`cannot read ${input}: ${error.message}`)
  }
  const head = first.done ? Buffer.alloc(0) : Buffer.from(first.value)
  const bytes = Readable.from((async function* () {
    if (head.length > 0) yield head
    for (;;) {
      const next = await chunks.next()
      if (next.done) return
      yield next.value
    }
  })(), { objectMode: false })
  const name = input === '-' ? 'standard input' : input
  let decoder
  if (head.subarray(0, 4).equals(ZSTD_MAGIC)) {
    if (typeof zlib.createZstdDecompress !== 'function') {
      fail(`${name} is Zstandard-compressed (DSH's default session log encoding), and Node ${process.version} cannot decompress it: run this on Node 22.15 or newer, or decompress first (zstd -dc FILE | ${command} replay -)`)
    }
    decoder = zlib.createZstdDecompress()
  } else if (head.subarray(0, 2).equals(GZIP_MAGIC)) {
    decoder = zlib.createGunzip()
  }
  if (decoder === undefined) return { stream: bytes, name, decompressing: false }
  bytes.on('error', (error) => decoder.destroy(error))
  return { stream: capped(bytes.pipe(decoder), name, fail), name, decompressing: true }
}

/** A decompressed stream that fails once it has produced MAX_DECOMPRESSED_BYTES. */
async function * capped(stream, name, fail) {
  let total = 0
  for await (const chunk of stream) {
    total += chunk.length
    if (total > MAX_DECOMPRESSED_BYTES) {
      stream.destroy()
      fail(`${name} decompresses to more than ${MAX_DECOMPRESSED_BYTES / 1024 / 1024 / 1024} GiB; the input is refused`)
    }
    yield chunk
  }
}
