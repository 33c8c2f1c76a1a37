// The replay CLI is documented as running "exactly the policy the plugin runs". Feed the same
// event sequence to the plugin (through the real waterfall) and to `research-nudge replay`, and
// compare the state after every event, including long and non-ASCII failure texts, which the
// shim windows in UTF-16 units while the replay engine windows whole texts in UTF-8 bytes.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PROBE, execOf, fakeClock, mount, nudges, post, signals } from './support/harness.mjs'

const SNOOZE = 'research_nudge_snooze'
const SNOOZE_ARGS = Object.freeze({ minutes: 1, reason: 'parity' })
// Half a minute between events: a one-minute snooze silences exactly the next event.
const STEP_MS = 30_000
const BIN = fileURLToPath(new URL('../bin/research-nudge.js', import.meta.url))

/** A small deterministic PRNG (mulberry32). */
function random(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// Mostly a few local tools, so equivalent failures repeat; research and snoozes now and then.
const TOOLS = [
  'bash', 'bash', 'bash', 'bash', 'bash', 'bash', 'read', 'read', 'edit', 'write_file', 'cargo',
  'run_tests', 'grep', 'web_search', 'mcp__brave__brave_web_search', 'research_nudge_snooze',
]

function texts(pick) {
  const long = (fill, n) => fill.repeat(n)
  return [
    () => 'TypeError at line 123',
    () => `TypeError at line ${Math.floor(pick() * 1000)}`,
    () => 'ReferenceError: x is not defined',
    () => `Error: ENOENT /tmp/build-${Math.floor(pick() * 99)}/src/app.py:12:5`,
    () => `${long('a', 5000)} middle ${Math.floor(pick() * 1e6)} ${long('b', 5000)}`,
    () => `${long('é', 3000)} failure at line ${Math.floor(pick() * 100)}`,
    () => `${long('é', 6000)} failure`,
    () => `${long('\u{1F600}', 2100 + Math.floor(pick() * 4))} boom`,
    () => `x${long('\u{1F600}', 5000)}`,
    () => `${long('ab ', 3000)}${long('\u{1F600}', 1)}${long('cd ', 3000)}`,
    () => ' \n ',
  ]
}

function scenario(seed, length) {
  const pick = random(seed)
  const choose = (list) => list[Math.floor(pick() * list.length)]
  const makers = texts(pick)
  const events = []
  for (let i = 0; i < length; i++) {
    const tool = choose(TOOLS)
    const roll = pick()
    if (roll < 0.35) events.push({ tool, ok: true })
    else if (roll < 0.75) events.push({ tool, ok: false, text: choose(makers)() })
    else events.push({ tool, ok: true, exit: choose([0, 1, 1, 2, 137]), text: choose(makers)() })
  }
  return events
}

function replay(events, config, t) {
  const dir = mkdtempSync(join(tmpdir(), 'research-nudge-parity-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const configFile = join(dir, 'config.json')
  writeFileSync(configFile, JSON.stringify(config))
  const input = events.map((e, i) => JSON.stringify({
    at_ms: i * STEP_MS,
    tool: e.tool,
    ...(e.tool === SNOOZE ? { args: SNOOZE_ARGS } : {}),
    ...(e.ok ? {} : { ok: false }),
    ...(e.text !== undefined ? { error: e.text } : {}),
    ...(e.exit !== undefined ? { exit_code: e.exit } : {}),
  })).join('\n')
  const child = spawnSync(process.execPath, [BIN, 'replay', '--config', configFile], { input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  assert.equal(child.status, 0, child.stderr)
  return child.stdout.trim().split('\n').map((line) => JSON.parse(line))
}

async function plugin(events, config, t) {
  const clock = fakeClock(t)
  const start = clock.now
  const { ctx, snooze } = await mount(config)
  const agent = {}
  const out = []
  for (const [i, e] of events.entries()) {
    clock.now = start + i * STEP_MS
    const exec = execOf(e.tool, agent, { arguments: SNOOZE_ARGS })
    // As in DSH, a snooze call's body runs before its post-execute (unless the call failed).
    if (e.tool === SNOOZE && e.ok) await snooze.execute(SNOOZE_ARGS, exec)
    const result = e.ok
      ? { isError: false, value: e.exit === undefined ? 'ok' : { exitCode: e.exit }, content: [{ type: 'text', text: e.text ?? 'ok' }] }
      : { isError: true, error: { message: e.text }, content: [{ type: 'text', text: `Error: ${e.text}` }] }
    const decision = await post(ctx, exec, result)
    out.push(nudges(decision).length === 0 ? null : signals(decision))
  }
  return out
}

for (const seed of [1, 2, 3]) {
  test(`plugin and replay agree on every state (random scenario, seed ${seed})`, async (t) => {
    const events = scenario(seed, 150)
    const config = { ...PROBE, reminder: 'R' }
    const fromReplay = replay(events, config, t)
    const fromPlugin = await plugin(events, config, t)
    assert.equal(fromReplay.length, events.length)
    fromReplay.forEach((r, i) => {
      const label = `event ${i + 1}: ${JSON.stringify({ ...events[i], text: events[i].text?.slice(0, 40) })}`
      const p = fromPlugin[i]
      assert.equal(p !== null, r.nudge, `${label}: nudge`)
      if (p !== null) {
        assert.deepEqual(
          { debt: p.debt, calls: p.calls, failures: p.failures, repeated: p.repeated },
          { debt: r.debt, calls: r.tool_calls_since_research, failures: r.failures, repeated: r.repeated_failures },
          label,
        )
      }
    })
  })
}

test('plugin and replay agree on long and non-ASCII failures repeated back to back', async (t) => {
  const long = (fill, n) => fill.repeat(n)
  const pairs = [
    [`${long('a', 5000)} middle 1 ${long('b', 5000)}`, `${long('a', 5000)} middle 999999 ${long('b', 5000)}`],
    [`${long('é', 3000)} failure at line 1`, `${long('é', 3000)} failure at line 22`],
    [`${long('é', 6000)} failure`, `${long('é', 6001)} failure`],
    [`${long('\u{1F600}', 2100)} boom`, `${long('\u{1F600}', 2103)} boom`],
    [`x${long('\u{1F600}', 5000)}`, `x${long('\u{1F600}', 5001)}`],
    [`${long('ab ', 3000)}\u{1F600}${long('cd ', 3000)}`, `${long('ab ', 3001)}\u{1F600}${long('cd ', 2999)}`],
  ]
  const events = []
  for (const [first, second] of pairs) {
    events.push({ tool: 'bash', ok: false, text: first }, { tool: 'bash', ok: false, text: second })
    events.push({ tool: 'bash', ok: true, exit: 1, text: first }, { tool: 'bash', ok: true, exit: 1, text: second })
    events.push({ tool: 'web_search', ok: true })
  }
  const config = { ...PROBE, reminder: 'R' }
  const fromReplay = replay(events, config, t)
  const fromPlugin = await plugin(events, config, t)
  const repeatsReplay = fromReplay.map((r) => r.repeated_failures)
  const repeatsPlugin = fromPlugin.map((p) => (p === null ? 0 : p.repeated))
  assert.deepEqual(repeatsPlugin, repeatsReplay)
  // And each second text of a pair is recognised as the same failure as the first.
  assert.deepEqual(repeatsPlugin, pairs.flatMap(() => [0, 1, 1, 2, 0]))
  assert.deepEqual(fromPlugin.map((p) => p?.debt ?? 0), fromReplay.map((r) => r.debt))
})
