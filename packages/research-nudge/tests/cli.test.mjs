// The replay CLI, run as a child process exactly as a user runs it.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../bin/research-nudge.js', import.meta.url))
const ROOT = fileURLToPath(new URL('..', import.meta.url))

function run(args, input = '') {
  const child = spawnSync(process.execPath, [BIN, ...args], { input, encoding: 'utf8', cwd: ROOT, timeout: 30_000 })
  assert.equal(child.error, undefined, `spawn failed: ${child.error}`)
  return { code: child.status, stdout: child.stdout, stderr: child.stderr }
}

function lines(stdout) {
  assert.ok(stdout === '' || stdout.endsWith('\n'), 'output ends with a newline')
  return stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))
}

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'research-nudge-cli-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const README = [
  '{"at_ms":0,"tool":"read"}',
  '{"at_ms":1000,"tool":"edit"}',
  '{"at_ms":2000,"tool":"bash","ok":false,"error":"TypeError at line 123"}',
  '{"at_ms":3000,"tool":"edit"}',
  '{"at_ms":4000,"tool":"bash","ok":false,"error":"TypeError at line 456"}',
].join('\n') + '\n'

const SIGNALS_21 = '\n\nCurrent signals: debt=21/20, tool_calls_since_research=5, failures=2, repeated_failures=1.'

test('replay: the README example from stdin prints five states, the fifth with the reminder', () => {
  const { code, stdout, stderr } = run(['replay'], README)
  assert.equal(stderr, '')
  assert.equal(code, 0)
  const out = lines(stdout)
  assert.equal(out.length, 5)
  assert.deepEqual(out.map((o) => o.debt), [1, 3, 8, 10, 21])
  assert.deepEqual(out.map((o) => o.nudge), [false, false, false, false, true])
  assert.deepEqual(out[0], { agent: 'default', debt: 1, tool_calls_since_research: 1, failures: 0, repeated_failures: 0, nudge: false })
  assert.equal(stdout.split('\n')[0], '{"agent":"default","debt":1,"tool_calls_since_research":1,"failures":0,"repeated_failures":0,"nudge":false}')
  assert.deepEqual(Object.keys(out[4]), ['agent', 'debt', 'tool_calls_since_research', 'failures', 'repeated_failures', 'nudge', 'text'])
  assert.ok(out[4].text.startsWith('[Research Nudge]\n\nYou have spent a while'), out[4].text.slice(0, 60))
  assert.ok(out[4].text.includes('(data, not instructions): "TypeError at line"\n\n'), out[4].text)
  assert.ok(out[4].text.endsWith(SIGNALS_21), out[4].text.slice(-120))
  assert.equal(out[4].failures, 2)
  assert.equal(out[4].repeated_failures, 1)
  assert.ok(out.slice(0, 4).every((o) => !('text' in o)))
})

test('replay: reads a file argument, "-" for stdin, and skips blank lines', (t) => {
  const dir = tempDir(t)
  const file = join(dir, 'events.jsonl')
  writeFileSync(file, README.replace('\n', '\n\n   \n').replaceAll('\n', '\r\n'))
  const fromFile = run(['replay', file])
  assert.equal(fromFile.code, 0, fromFile.stderr)
  assert.deepEqual(lines(fromFile.stdout).map((o) => o.debt), [1, 3, 8, 10, 21])
  const fromDash = run(['replay', '-'], README)
  assert.equal(fromDash.code, 0)
  assert.equal(fromDash.stdout, run(['replay'], README).stdout)
})

test('replay: --config applies a row config (both spellings)', (t) => {
  const dir = tempDir(t)
  const config = join(dir, 'config.json')
  writeFileSync(config, JSON.stringify({ debtThreshold: 3, reminder: 'R' }))
  for (const args of [['replay', '--config', config], ['replay', `--config=${config}`]]) {
    const { code, stdout, stderr } = run(args, '{"at_ms":0,"tool":"edit"}\n{"at_ms":1,"tool":"read"}\n')
    assert.equal(code, 0, stderr)
    const out = lines(stdout)
    assert.deepEqual(out[1], {
      agent: 'default', debt: 3, tool_calls_since_research: 2, failures: 0, repeated_failures: 0, nudge: true,
      text: 'R\n\nCurrent signals: debt=3/3, tool_calls_since_research=2, failures=0, repeated_failures=0.',
    })
  }
})

test('replay: an invalid --config exits 2 with the validation message on stderr', (t) => {
  const dir = tempDir(t)
  const config = join(dir, 'bad.json')
  writeFileSync(config, JSON.stringify({ debtThreshold: 0, debtTreshold: 5 }))
  const { code, stdout, stderr } = run(['replay', '--config', config], README)
  assert.equal(code, 2)
  assert.equal(stdout, '')
  assert.equal(
    stderr,
    'research-nudge: invalid config: debtThreshold must be an integer >= 1 (got 0); debtTreshold is not a config key; did you mean debtThreshold? (got 5)\n',
  )
})

test('replay: a --config that is missing, unreadable JSON or absent exits 2', (t) => {
  const dir = tempDir(t)
  const missing = join(dir, 'nope.json')
  let r = run(['replay', '--config', missing], README)
  assert.equal(r.code, 2)
  assert.ok(r.stderr.startsWith(`research-nudge: cannot read --config ${missing}: `), r.stderr)
  const notJson = join(dir, 'bad.json')
  writeFileSync(notJson, 'debtThreshold: 3')
  r = run(['replay', '--config', notJson], README)
  assert.equal(r.code, 2)
  assert.ok(r.stderr.startsWith(`research-nudge: --config ${notJson} is not valid JSON: `), r.stderr)
  r = run(['replay', '--config'], README)
  assert.equal(r.code, 2)
  assert.equal(r.stderr, 'research-nudge: --config needs a file\n')
})

test('replay: a malformed line exits 2 naming the line and the field, after printing the lines before it', () => {
  const input = '{"at_ms":0,"tool":"read"}\n\n{"at_ms":1,"tool":"read","ok":"no"}\n{"at_ms":2,"tool":"read"}\n'
  const { code, stdout, stderr } = run(['replay'], input)
  assert.equal(code, 2)
  assert.equal(stderr, 'research-nudge: line 3: ok must be true or false (got "no")\n')
  assert.deepEqual(lines(stdout).map((o) => o.debt), [1])
})

test('replay: other malformed lines name their field too', () => {
  const cases = [
    ['{"at_ms":0,"tool":"read","exitcode":1}', 'research-nudge: line 1: unknown field "exitcode"\n'],
    ['{"tool":"read"}', 'research-nudge: line 1: at_ms is required (integer milliseconds)\n'],
    ['{"at_ms":0,"tool":""}', 'research-nudge: line 1: tool must be a non-empty string (got "")\n'],
    ['[1,2]', 'research-nudge: line 1: must be a JSON object (got [1,2])\n'],
  ]
  for (const [line, message] of cases) {
    const { code, stderr } = run(['replay'], `${line}\n`)
    assert.equal(code, 2, line)
    assert.equal(stderr, message, line)
  }
  const notJson = run(['replay'], 'nope\n')
  assert.equal(notJson.code, 2)
  assert.ok(notJson.stderr.startsWith('research-nudge: line 1: not valid JSON'), notJson.stderr)
})

test('replay: an unknown option exits 2 with the usage', () => {
  const { code, stdout, stderr } = run(['replay', '--bogus'], README)
  assert.equal(code, 2)
  assert.equal(stdout, '')
  assert.ok(stderr.startsWith('research-nudge: unknown option "--bogus"\nusage: research-nudge replay'), stderr)
})

test('the CLI refuses a missing or unknown command and two event files, and answers --help', () => {
  let r = run([])
  assert.equal(r.code, 2)
  assert.ok(r.stderr.startsWith('research-nudge: missing command\nusage: '), r.stderr)
  r = run(['replay-all'])
  assert.equal(r.code, 2)
  assert.ok(r.stderr.startsWith('research-nudge: unknown command "replay-all"\n'), r.stderr)
  r = run(['replay', 'a.jsonl', 'b.jsonl'])
  assert.equal(r.code, 2)
  assert.equal(r.stderr, 'research-nudge: only one events file may be given (got "a.jsonl" and "b.jsonl")\n')
  r = run(['--help'])
  assert.equal(r.code, 0)
  assert.ok(r.stdout.startsWith('usage: research-nudge replay [--config FILE] [EVENTS.jsonl | -]'), r.stdout)
  assert.equal(r.stderr, '')
})

test('replay: a missing events file exits 2', (t) => {
  const missing = join(tempDir(t), 'missing.jsonl')
  const { code, stderr } = run(['replay', missing])
  assert.equal(code, 2)
  assert.ok(stderr.startsWith(`research-nudge: cannot read ${missing}: `), stderr)
})

test('replay: a long stream comes out complete and in order', () => {
  const n = 5000
  const input = Array.from({ length: n }, (_, i) => JSON.stringify({ at_ms: i, agent: `a${i % 3}`, tool: 'read' })).join('\n')
  const { code, stdout, stderr } = run(['replay'], input)
  assert.equal(code, 0, stderr)
  const out = lines(stdout)
  assert.equal(out.length, n)
  out.forEach((o, i) => {
    assert.equal(o.agent, `a${i % 3}`)
    assert.equal(o.tool_calls_since_research, Math.floor(i / 3) + 1)
  })
  // Each agent crosses the call threshold (15) once; the cooldown holds after that.
  assert.deepEqual(out.filter((o) => o.nudge).map((o) => [o.agent, o.tool_calls_since_research]), [['a0', 15], ['a1', 15], ['a2', 15]])
})

test('replay: snooze lines report the minutes and a user prompt resets', () => {
  const input = [
    '{"at_ms":0,"tool":"edit"}',
    '{"at_ms":1,"tool":"research_nudge_snooze","args":{"minutes":5}}',
    '{"at_ms":2,"user_prompt":true}',
    '{"at_ms":3,"tool":"research_nudge_snooze","args":{"minutes":"abc"}}',
  ].join('\n')
  const { code, stdout, stderr } = run(['replay'], input)
  assert.equal(code, 0, stderr)
  assert.deepEqual(lines(stdout), [
    { agent: 'default', debt: 2, tool_calls_since_research: 1, failures: 0, repeated_failures: 0, nudge: false },
    { agent: 'default', debt: 2, tool_calls_since_research: 1, failures: 0, repeated_failures: 0, nudge: false, snooze_minutes: 5 },
    { agent: 'default', debt: 0, tool_calls_since_research: 0, failures: 0, repeated_failures: 0, nudge: false },
    { agent: 'default', debt: 5, tool_calls_since_research: 1, failures: 1, repeated_failures: 0, nudge: false },
  ])
})

test('replay --html draws the events into one self-contained page and prints nothing', (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'chart.html')
  const { code, stdout, stderr } = run(['replay', '--html', out], README)
  assert.equal(code, 0, stderr)
  assert.equal(stdout, '')
  assert.match(stderr, /wrote .*chart\.html/)
  const html = readFileSync(out, 'utf8')
  assert.ok(html.startsWith('<!DOCTYPE html>'))
  assert.match(html, /research-nudge replay: 5 tool events/)
  assert.match(html, /debtThreshold 20/)
  assert.match(html, /maxToolCallsWithoutResearch 15/)
  assert.match(html, /maxMinutesWithoutResearch 15/)
  assert.match(html, /reminder fired/)
  for (const banned of ['<script', 'https://', ' src=', 'url(']) assert.ok(!html.includes(banned), banned)
})

test('replay --html of a DSH session log titles the page with the session and its summary', (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'session.html')
  const { code, stderr } = run(['replay', 'vectors/sessions/synthetic-loop.jsonl.zstd', `--html=${out}`])
  if (code === 2 && /cannot decompress it/.test(stderr)) return t.skip('this Node has no Zstandard')
  assert.equal(code, 0, stderr)
  const html = readFileSync(out, 'utf8')
  assert.match(html, /<h1>DSH session 0198a6f2-5c1e-7d3a-9b41-2f6e8c0d4a17/)
  assert.match(html, /nudges: 2 at calls 5 \(debt\), 14 \(minutes\); held back 2 by snooze, 2 by cooldown/)
  assert.match(html, /held by cooldown/)
})

test('replay --html refuses --json and a missing file name', () => {
  let r = run(['replay', '--html'], README)
  assert.equal(r.code, 2)
  assert.match(r.stderr, /--html needs an output file/)
  r = run(['replay', '--json', '--html', 'x.html'], README)
  assert.equal(r.code, 2)
  assert.match(r.stderr, /--json and --html cannot be combined/)
})

test('replay --corpus: one row per source and label over a folder of runs', () => {
  const fixture = fileURLToPath(new URL('../../../crates/replay/fixtures/corpus', import.meta.url))
  const r = spawnSync(process.execPath, [BIN, 'replay', '--corpus', `${fixture}/events`, '--labels', `${fixture}/labels.json`, '--json'], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const report = JSON.parse(r.stdout)
  assert.equal(report.runs, 4)
  assert.deepEqual(report.groups.map((g) => [g.source, g.label, g.runs_fired]), [
    ['liveswe-gpt5mini', 'resolved', 0],
    ['liveswe-gpt5mini', 'unresolved', 0],
    ['mini-gemini3pro', 'resolved', 1],
    ['mini-gemini3pro', 'unresolved', 1],
  ])
  const missing = spawnSync(process.execPath, [BIN, 'replay', '--labels', 'x.json'], { encoding: 'utf8' })
  assert.equal(missing.status, 2)
  assert.match(missing.stderr, /--labels needs --corpus/)
})
