// Loopback servers for the fetch tests: one handler listening on 127.0.0.1 and on ::1 at the same
// port, recording every connection and request, with routes that answer, reset, redirect, stall,
// flood and send broken UTF-8.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

/** The extraction fixture pages (crates/fetch/tests/pages), served at `/pages/<file>`. */
export const FIXTURE_PAGES = new URL('../../../../crates/fetch/tests/pages/', import.meta.url)

/** Starts the pair; resolves to `{ port, hits, connections, url(host, path), close() }`. */
export async function loopbackServers() {
  const hits = []
  const connections = []
  const counters = new Map()
  const sockets = new Set()
  const count = (key) => {
    const n = (counters.get(key) ?? 0) + 1
    counters.set(key, n)
    return n
  }
  const reset = (req) => req.socket.resetAndDestroy()
  /** 5 MiB of `a`, as text/plain, written as fast as the client reads. */
  const flood = (res) => {
    const size = 5 * 1024 * 1024
    res.on('error', () => {})
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': size })
    const chunk = Buffer.alloc(64 * 1024, 'a')
    let sent = 0
    const pump = () => {
      while (sent < size) {
        sent += chunk.length
        if (!res.write(chunk)) return res.once('drain', pump)
      }
      res.end()
      return undefined
    }
    return pump()
  }

  const handler = (req, res) => {
    const url = new URL(req.url, 'http://x')
    const family = req.socket.localAddress.includes(':') ? 'v6' : 'v4'
    hits.push({ path: url.pathname, search: url.search, family, ua: req.headers['user-agent'], accept: req.headers.accept })
    const key = url.searchParams.get('k') ?? url.pathname
    const text = (status, body, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })
      res.end(body)
    }
    switch (url.pathname) {
      case '/ok': return text(200, `ok over ${family}`)
      case '/reset': return reset(req)
      case '/reset-n': {
        // Resets the first `n` requests of this key, then answers.
        const n = Number(url.searchParams.get('n') ?? 1)
        return count(key) <= n ? reset(req) : text(200, `answered request ${counters.get(key)} over ${family}`)
      }
      case '/reset-then-hang':
        if (count(key) === 1) return reset(req)
        return undefined // never answers
      case '/hang': return undefined
      case '/not-found': return text(404, 'no such page')
      case '/page.html':
        return text(200, '<!doctype html><html><head><title>T</title><style>p{}</style><script>alert(1)</script></head><body><nav>menu</nav><h1>Heading</h1><p>First <b>para</b>graph.</p><ul><li>one</li><li>two</li></ul></body></html>', 'text/html; charset=utf-8')
      case '/big': return flood(res)
      case '/pages/article-with-chrome.html':
      case '/pages/sphinx-requests-support.html':
      case '/pages/hidden-injection.html':
      case '/pages/unsure-advertisement.html':
      case '/pages/wcxb-forum-0575.html':
        return text(200, readFileSync(new URL(url.pathname.slice('/pages/'.length), FIXTURE_PAGES), 'utf8'), 'text/html; charset=utf-8')
      case '/big-after-reset': return count(key) === 1 ? reset(req) : flood(res)
      case '/bad-utf8': {
        const body = Buffer.concat([Buffer.from('caf'), Buffer.from([0xc3]), Buffer.from(' ok '), Buffer.from([0xff, 0xfe]), Buffer.from(' end')])
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': body.length })
        return res.end(body)
      }
      case '/image': {
        const body = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0])
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length })
        return res.end(body)
      }
      default: {
        const redirect = url.pathname.match(/^\/redirect\/(\d+)$/)
        if (redirect) {
          const left = Number(redirect[1])
          res.writeHead(302, { location: left > 1 ? `/redirect/${left - 1}` : '/ok' })
          return res.end()
        }
        if (url.pathname === '/redirect-to') {
          res.writeHead(302, { location: url.searchParams.get('to') })
          return res.end()
        }
        return text(404, 'unknown route')
      }
    }
  }

  const servers = [createServer(handler), createServer(handler)]
  for (const server of servers) {
    server.on('connection', (socket) => {
      const record = { family: socket.localAddress.includes(':') ? 'v6' : 'v4', closedAt: undefined }
      connections.push(record)
      sockets.add(socket)
      socket.on('close', () => {
        record.closedAt = performance.now()
        sockets.delete(socket)
      })
    })
  }
  const listen = (server, port, host) => new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve(server.address().port))
  })
  const port = await listen(servers[0], 0, '127.0.0.1')
  await listen(servers[1], port, '::1')
  return {
    port,
    hits,
    connections,
    url: (host, path) => `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`,
    close: () => {
      for (const socket of sockets) socket.destroy()
      return Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
    },
  }
}
