// `pain-point-check replay`: the event format through the real CLI.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CLI = fileURLToPath(new URL('../bin/pain-point-check.js', import.meta.url))

function replay(lines, args = []) {
  const out = spawnSync(process.execPath, [CLI, 'replay', ...args, '-'], { input: lines.join('\n'), encoding: 'utf8' })
  return { ...out, json: out.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) }
}

test('replay shows where the gate arms, denies and lifts', () => {
  const { status, json, stderr } = replay([
    '{"tool":"bash","args":{"command":"make"},"result":{"exitCode":2}}',
    '{"tool":"bash","args":{"command":"make -k"},"result":{"exitCode":2}}',
    '{"tool":"bash","args":{"command":"make -j1"},"result":{"exitCode":2}}',
    '{"step":true}',
    '{"tool":"edit","args":{"path":"x"}}',
    '{"assistant":"blocker=the linker cannot find libfoo\\nruled_out=a missing header file\\nbest_path=print the search path"}',
    '{"tool":"edit","args":{"path":"x"}}',
  ])
  assert.equal(status, 0, stderr)
  assert.deepEqual(json.map((l) => l.timeline), [[], [], ['armed (3 failed attempts at the same problem)'], ['check shown'], ['denied'], ['lifted'], []])
  assert.deepEqual(json.map((l) => l.gate), ['idle', 'idle', 'pending', 'pending', 'pending', 'probation', 'idle'])
})

const FIXTURE = fileURLToPath(new URL('../../../crates/replay/fixtures/corpus', import.meta.url))

const SAME_PROBLEM = fileURLToPath(new URL('../vectors/same-problem.config.json', import.meta.url))

test('--corpus reports a folder of runs per source and label; --half and --json', () => {
  // 0.3's counting arms on the fixture's one stuck run; the default's does not (see the README).
  const args = ['replay', '--config', SAME_PROBLEM, '--corpus', `${FIXTURE}/events`, '--labels', `${FIXTURE}/labels.json`]
  const table = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' })
  assert.equal(table.status, 0, table.stderr)
  const rows = table.stdout.split('\n').filter((l) => l.startsWith('| mini') || l.startsWith('| live'))
  assert.deepEqual(rows.map((r) => r.split(' | ').slice(0, 4).join(' | ')), [
    '| liveswe-gpt5mini | resolved | 1 | 0 % (0)',
    '| liveswe-gpt5mini | unresolved | 1 | 0 % (0)',
    '| mini-gemini3pro | resolved | 1 | 0 % (0)',
    '| mini-gemini3pro | unresolved | 1 | 100 % (1)',
  ])
  const json = spawnSync(process.execPath, [CLI, ...args, '--half', 'tune', '--json'], { encoding: 'utf8' })
  assert.equal(json.status, 0, json.stderr)
  const report = JSON.parse(json.stdout)
  assert.equal(report.half, 'tune')
  assert.equal(report.runs, 3)
  const bad = spawnSync(process.execPath, [CLI, ...args, '--half', 'all'], { encoding: 'utf8' })
  assert.equal(bad.status, 2)
  assert.match(bad.stderr, /--half must be "tune" or "report" \(got "all"\)/)
  const both = spawnSync(process.execPath, [CLI, 'replay', '--corpus', FIXTURE, 'x.jsonl'], { encoding: 'utf8' })
  assert.equal(both.status, 2)
})

test('a malformed line exits 2 naming the line and the field', () => {
  const { status, stderr } = replay(['{"tool":"bash"}', '{"tol":"bash"}'])
  assert.equal(status, 2)
  assert.match(stderr, /line 2: tol is not an event field; did you mean tool\?/)
})

test('--help prints the usage', () => {
  const out = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' })
  assert.equal(out.status, 0)
  assert.match(out.stdout, /usage: pain-point-check replay/)
})
