// The replay CLI on hostile input (the reader is shared by both guards' CLIs:
// lib/common/replay-cli.js): symbolic-link loops in a corpus, an over-long line, a decompression
// bomb. Each ends with exit 2 and a message naming the input, in bounded time and memory.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync, createWriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Readable } from 'node:stream'
import { createGzip } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { MAX_DECOMPRESSED_BYTES, MAX_LINE_BYTES } from '../lib/common/replay-cli.js'

const CLI = fileURLToPath(new URL('../bin/pain-point-check.js', import.meta.url))
const EVENT = '{"at_ms":0,"tool":"bash","exit_code":1,"error":"boom","args":{"command":"make"}}\n'

function run(args) {
  return spawnSync(process.execPath, [CLI, 'replay', ...args], { encoding: 'utf8', maxBuffer: 1 << 24 })
}

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'ppc-hostile-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('a corpus walk never follows a symbolic link, so a loop counts nothing twice and ends', (t) => {
  const dir = scratch(t)
  mkdirSync(join(dir, 'src', 'a'), { recursive: true })
  mkdirSync(join(dir, 'src', 'b'))
  writeFileSync(join(dir, 'src', 'a', 'run.jsonl'), EVENT)
  symlinkSync('..', join(dir, 'src', 'a', 'loop'))
  symlinkSync(join(dir, 'src', 'b'), join(dir, 'src', 'a', 'to-b'))
  symlinkSync(join(dir, 'src', 'a'), join(dir, 'src', 'b', 'to-a'))
  symlinkSync(join(dir, 'src', 'a', 'run.jsonl'), join(dir, 'src', 'b', 'copy.jsonl'))
  const out = run(['--corpus', dir, '--json'])
  assert.equal(out.status, 0, out.stderr)
  assert.equal(JSON.parse(out.stdout).runs, 1)
  const skipped = out.stderr.trim().split('\n').map((line) => line.replace(dir, 'DIR')).sort()
  assert.deepEqual(skipped, [
    'pain-point-check: skipped DIR/src/a/loop: a symbolic link is not followed',
    'pain-point-check: skipped DIR/src/a/to-b: a symbolic link is not followed',
    'pain-point-check: skipped DIR/src/b/copy.jsonl: a symbolic link is not followed',
    'pain-point-check: skipped DIR/src/b/to-a: a symbolic link is not followed',
  ])
  symlinkSync(join(dir, 'src'), join(dir, 'link'))
  const linked = run(['--corpus', join(dir, 'link')])
  assert.equal(linked.status, 2)
  assert.equal(linked.stderr, `pain-point-check: --corpus ${join(dir, 'link')} is a symbolic link; give the folder it points to\n`)
})

test('a line over the cap is refused with exit 2 naming the input and the line', (t) => {
  const dir = scratch(t)
  const file = join(dir, 'long.jsonl')
  writeFileSync(file, '{"tool":"bash","args":{"command":"make"},"result":{"exitCode":1}}\n' + 'x'.repeat(MAX_LINE_BYTES + 1) + '\n')
  const out = run([file])
  assert.equal(out.status, 2)
  assert.match(out.stderr, new RegExp(`^pain-point-check: ${file}: line 2 is longer than 16 MiB; no event is that long, so the input is refused\\n$`))
  // The same in a corpus, and for a last line without a newline.
  mkdirSync(join(dir, 'corpus'))
  writeFileSync(join(dir, 'corpus', 'r.jsonl'), 'y'.repeat(MAX_LINE_BYTES + 10))
  const corpus = run(['--corpus', join(dir, 'corpus')])
  assert.equal(corpus.status, 2)
  assert.match(corpus.stderr, /r\.jsonl: line 1 is longer than 16 MiB/)
})

test('an input that decompresses past the cap is refused with exit 2', async (t) => {
  const dir = scratch(t)
  const file = join(dir, 'bomb.jsonl.gz')
  // Lines of spaces (blank to the replay, each under the line cap) past the cap.
  const block = Buffer.alloc(8 * 1024 * 1024, 0x20)
  block[block.length - 1] = 0x0a
  const blocks = Math.ceil(MAX_DECOMPRESSED_BYTES / block.length) + 1
  await pipeline(Readable.from((function * () { for (let i = 0; i < blocks; i++) yield block })()), createGzip({ level: 1 }), createWriteStream(file))
  const out = run([file])
  assert.equal(out.status, 2, out.stderr)
  assert.equal(out.stderr, `pain-point-check: ${file} decompresses to more than 1 GiB; the input is refused\n`)
})
