// The SSRF refusals end to end, where nothing can escape even if the code were wrong: inside
// `unshare -rnm` (user, network and mount namespaces), whose only interface is a loopback this
// test brings up with private, metadata and public-looking addresses, a recording server on every
// one of them, and names bound over /etc/hosts in that namespace only. The policy itself is
// tested as pure Rust in crates/fetch; this shows the shipped driver sends nothing for it.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('./support/ssrf-netns.mjs', import.meta.url))
const REFUSALS = new Set(['fetch.blocked', 'fetch.invalid_input', 'fetch.invalid_url', 'fetch.redirect_refused'])

test('hostile URLs are refused inside a sealed network namespace, and nothing reaches the recorder', (t) => {
  const run = spawnSync('unshare', ['-rnm', process.execPath, SCRIPT], { encoding: 'utf8', timeout: 120000 })
  if (run.error || (run.status !== 0 && /unshare|Operation not permitted|Invalid argument|No such file/i.test(run.stderr ?? ''))) {
    const reason = run.error?.message ?? run.stderr.trim().split('\n')[0]
    console.log(`ssrf.test.mjs: skipped, no user+network namespace here (${reason})`)
    t.skip(`unshare -rnm is unavailable: ${reason}`)
    return
  }
  assert.equal(run.status, 0, run.stderr)
  const out = JSON.parse(run.stdout)
  for (const r of out.results) {
    assert.equal(r.ok, false, `${r.url} was fetched`)
    assert.ok(REFUSALS.has(r.code), `${r.url}: ${r.code} ${r.message}`)
    t.diagnostic(`${r.code.padEnd(22)} ${r.url}  ${r.message}`)
  }
  assert.ok(out.results.length >= 25)
  assert.equal(out.connectionsDuringRefusals, 0, `connections reached the recorder: ${out.recordedDuringRefusals.join(', ')}`)
  if (out.names) {
    assert.equal(out.redirectHits, 5, 'each public-looking redirector was asked once and its private target never')
  } else {
    t.diagnostic('the /etc/hosts bind mount was refused: the name and redirect cases were not run')
  }
  assert.equal(out.control.ok, true, 'the control fetch (allowPrivateNetwork) works')
  assert.equal(out.control.connections, 1, 'the recorder records')
})
