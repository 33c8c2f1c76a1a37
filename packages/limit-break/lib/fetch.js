// limit-break's fetch driver: performs the steps of `limit-break-fetch`'s ladder and reports what
// happened. It never decides: which rung runs, which address is used, how long a step may take,
// whether a redirect is followed, which failure climbs to the next rung, and what the answer says
// all come from the Rust core. Each step is performed exactly as the core documents it:
//
// - resolve: `dns.lookup(host, { all: true, verbatim: true })`, every address reported;
// - http (rung 1): one `http(s).request` with `agent: false` and a `lookup` that answers with the
//   step's vetted addresses only (the pin), no redirect following, the body read up to the cap;
// - curl (rungs 2–4): `spawn(argv[0], argv.slice(1))` with no shell, stdout read up to the cap,
//   the child killed at the step's deadline, on overflow, and when the call is aborted.
import { spawn } from 'node:child_process'
import { lookup } from 'node:dns'
import * as http from 'node:http'
import * as https from 'node:https'
import { argsJson } from './memory.js'

/** Bytes of curl's stderr kept (its tail). */
const STDERR_TAIL = 4096
/** How long the one-time `curl --version` probe may take. */
const PROBE_MS = 5000

const now = () => performance.now()

/** Whether curl runs from PATH: `curl --version` exits 0. */
export function probeCurl() {
  return new Promise((resolve) => {
    let child
    try {
      child = spawn('curl', ['--version'], { stdio: 'ignore', windowsHide: true })
    } catch {
      resolve(false)
      return
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      resolve(false)
    }, PROBE_MS)
    child.on('error', () => {
      clearTimeout(timer)
      resolve(false)
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve(code === 0)
    })
  })
}

/** A step in flight: `result` settles with `{ input, bytes? }`; `cancel()` stops the I/O. */
function running(start) {
  let settle
  const result = new Promise((resolve) => { settle = resolve })
  let done = false
  const finish = (input, bytes) => {
    if (done) return
    done = true
    settle({ input, bytes })
  }
  const cancel = start(finish)
  return { result, cancel: () => { cancel(); finish({ kind: 'timedOut' }) } }
}

function failed(error) {
  return { kind: 'failed', code: typeof error?.code === 'string' ? error.code : 'ERROR', message: String(error?.message ?? error) }
}

function resolveStep(step) {
  return running((finish) => {
    const timer = setTimeout(() => finish({ kind: 'timedOut' }), step.timeoutMs)
    lookup(step.host, { all: true, verbatim: true }, (error, addresses) => {
      clearTimeout(timer)
      if (error) finish(failed(error))
      else finish({ kind: 'resolved', addresses: addresses.map((a) => a.address) })
    })
    return () => clearTimeout(timer)
  })
}

function httpStep(step) {
  return running((finish) => {
    const pinned = step.addresses
    // The pin: whatever the name, connect only to the addresses the guard approved.
    const pin = (_hostname, options, callback) => {
      if (options?.all) callback(null, pinned)
      else callback(null, pinned[0].address, pinned[0].family)
    }
    const client = step.tls ? https : http
    const chunks = []
    let size = 0
    let request
    const timer = setTimeout(() => {
      request?.destroy()
      finish({ kind: 'timedOut' })
    }, step.timeoutMs)
    try {
      request = client.request({
        host: step.host,
        port: step.port,
        path: step.path,
        method: 'GET',
        headers: step.headers,
        agent: false,
        lookup: pin,
      })
    } catch (error) {
      clearTimeout(timer)
      finish(failed(error))
      return () => {}
    }
    request.on('error', (error) => {
      clearTimeout(timer)
      finish(failed(error))
    })
    request.on('response', (response) => {
      const head = {
        kind: 'response',
        status: response.statusCode,
        ...(typeof response.headers['content-type'] === 'string' ? { contentType: response.headers['content-type'] } : {}),
        ...(typeof response.headers.location === 'string' ? { location: response.headers.location } : {}),
      }
      const end = (complete) => {
        clearTimeout(timer)
        finish({ ...head, complete }, Buffer.concat(chunks))
      }
      response.on('data', (chunk) => {
        const room = step.maxBodyBytes - size
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room))
          size += room
          // Settle first: destroying emits `aborted`/`error`, which must not win.
          end(false)
          response.destroy()
          request.destroy()
          return
        }
        chunks.push(chunk)
        size += chunk.length
      })
      response.on('end', () => end(true))
      response.on('error', (error) => {
        clearTimeout(timer)
        finish(failed(error))
      })
      response.on('aborted', () => {
        clearTimeout(timer)
        finish({ kind: 'failed', code: 'ECONNRESET', message: 'the response was cut off' })
      })
    })
    request.end()
    return () => {
      clearTimeout(timer)
      request.destroy()
    }
  })
}

function curlStep(step) {
  return running((finish) => {
    const out = []
    let size = 0
    let complete = true
    let stderr = ''
    let child
    try {
      child = spawn(step.argv[0], step.argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true, shell: false })
    } catch (error) {
      finish(failed(error))
      return () => {}
    }
    const kill = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
    const timer = setTimeout(() => {
      kill()
      finish({ kind: 'timedOut' })
    }, step.killAfterMs)
    child.stdout.on('data', (chunk) => {
      if (!complete) return
      const room = step.maxStdoutBytes - size
      if (chunk.length > room) {
        out.push(chunk.subarray(0, room))
        size += room
        complete = false
        kill()
        return
      }
      out.push(chunk)
      size += chunk.length
    })
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)
    })
    child.on('error', (error) => {
      clearTimeout(timer)
      finish(failed(error))
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      finish({ kind: 'curl', exitCode: code, complete, stderr }, Buffer.concat(out))
    })
    return () => {
      clearTimeout(timer)
      kill()
    }
  })
}

/** Each step of the ladder, performed as the core documents it. Exported for `tests/wire.test.mjs`. */
export const PERFORM = { resolve: resolveStep, http: httpStep, curl: curlStep }

/**
 * `resilient_fetch` for one plugin: `fetch(args, signal)` resolves to the tool's value (the
 * outcome) and never rejects for a world failure. curl's presence is probed once per plugin.
 */
export function createFetch(wasm, plugin) {
  let curl
  return async function fetch(args, signal) {
    curl ??= probeCurl()
    const ladder = new wasm.LimitBreakFetch(plugin, argsJson(args), await curl, now())
    let current
    let aborted = false
    const onAbort = () => {
      aborted = true
      ladder.abort(now())
      current?.cancel()
    }
    try {
      if (signal?.aborted) onAbort()
      else signal?.addEventListener('abort', onAbort, { once: true })
      for (;;) {
        const step = JSON.parse(ladder.poll())
        if (step.kind === 'done') return step.outcome
        current = PERFORM[step.kind](step)
        const { input, bytes } = await current.result
        current = undefined
        // After an abort the ladder is done; what the step brought back is no longer wanted.
        if (aborted) continue
        ladder.handle(step.id, JSON.stringify(input), bytes, now())
      }
    } finally {
      signal?.removeEventListener('abort', onAbort)
      current?.cancel()
      ladder.free()
    }
  }
}
