// `dsh-autoresearch show --html`: a real run drawn as one self-contained page. The page's
// rendering is pinned by the core's snapshot (crates/autoresearch/tests/snapshots); its pixels
// by `cargo xtask chart-test`.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { cli, exampleRun, ROUNDS } from './support/example-run.mjs'
import { scratch } from './support/fixture.mjs'

test('show --html draws every experiment of a real run into the named file', (t) => {
  const root = scratch(t)
  const { repo, runId, result } = exampleRun(root)
  assert.equal(result.status, 'budget-limited')
  const out = join(root, 'run.html')
  const drawn = cli(['show', '--html', out, runId], repo)
  assert.equal(drawn.status, 0, drawn.stderr)
  assert.equal(drawn.stdout, `wrote ${out}\n`)
  const page = readFileSync(out, 'utf8')
  const fates = [...page.matchAll(/<tr><td>(\d+)<\/td><td>[^<]*<\/td><td>(\w+)<\/td>/g)].map((m) => `${m[1]} ${m[2]}`)
  assert.deepEqual(fates, ['0 baseline', '1 kept', '2 superseded', '3 failed', '4 kept', '5 rejected'])
  assert.equal(fates.length, ROUNDS.length + 1)
  for (const banned of ['<script', 'https://', ' src=', 'url(']) assert.ok(!page.includes(banned), banned)
})

test('--html names what is wrong: another command, a missing value, a path it cannot write', (t) => {
  const root = scratch(t)
  const { repo, runId } = exampleRun(root)
  const other = cli(['list', '--html', join(root, 'x.html')], repo)
  assert.equal(other.status, 2)
  assert.match(other.stderr, /--html is for show/)
  const missing = cli(['show', runId, '--html'], repo)
  assert.equal(missing.status, 2)
  assert.match(missing.stderr, /--html needs a value/)
  const unwritable = cli(['show', '--html', join(root, 'no', 'such', 'dir.html'), runId], repo)
  assert.equal(unwritable.status, 1)
  assert.match(unwritable.stderr, /cannot write --html .*dir\.html: ENOENT/)
})
