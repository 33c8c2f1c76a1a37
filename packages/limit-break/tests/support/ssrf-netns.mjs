// Runs inside `unshare -rnm` (a user, network and mount namespace): the only network is a
// loopback interface this script brings up and gives private, metadata and one public-looking
// address; nothing can leave the namespace whatever the plugin does. A recording server listens
// on every address of the namespace (ports `P` and 80) and counts each TCP connection. The
// plugin, with its default config, is asked for hostile URLs; then one allowed fetch
// (allowPrivateNetwork) proves the recorder records. Prints one JSON object.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ADDRESSES_V4 = ['10.23.45.67/32', '192.168.7.7/32', '100.64.1.2/32', '169.254.169.254/32', '93.184.216.34/32']
const ADDRESSES_V6 = ['fd00::7/128', 'fd00:ec2::254/128']

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
ip('link', 'set', 'lo', 'up')
for (const a of ADDRESSES_V4) ip('addr', 'add', a, 'dev', 'lo')
for (const a of ADDRESSES_V6) ip('-6', 'addr', 'add', a, 'dev', 'lo')

// Names for the resolver: a private host, a metadata alias, a public-looking redirector, and a
// name with one public and one private address. Bind-mounted over /etc/hosts in this mount
// namespace only.
let names = true
try {
  const hosts = join(tmpdir(), `limit-break-hosts-${process.pid}`)
  writeFileSync(hosts, [
    '127.0.0.1 localhost',
    '::1 localhost',
    '10.23.45.67 intranet.example',
    '169.254.169.254 metadata.example',
    '93.184.216.34 public.example',
    '93.184.216.34 mixed.example',
    '10.23.45.67 mixed.example',
  ].join('\n') + '\n')
  execFileSync('mount', ['--bind', hosts, '/etc/hosts'], { stdio: ['ignore', 'ignore', 'pipe'] })
} catch {
  names = false
}

const connections = []
const listen = (server, port, host, opts = {}) => new Promise((resolve, reject) => {
  server.once('error', reject)
  server.listen({ port, host, ...opts }, () => resolve(server.address().port))
})
const recorder = () => {
  const server = createServer((_req, res) => res.end('LEAKED'))
  server.on('connection', (socket) => connections.push(`${socket.localAddress}:${socket.localPort}`))
  return server
}
const port = await listen(recorder(), 0, '::', { ipv6Only: false })
await listen(recorder(), 80, '::', { ipv6Only: false })

// The public-looking redirector: allowed by the guard, it points at private targets.
const redirects = []
const redirector = createServer((req, res) => {
  redirects.push(req.url)
  const to = {
    '/to-private': `http://10.23.45.67:${port}/`,
    '/to-loopback': `http://127.0.0.1:${port}/`,
    '/to-metadata': 'http://169.254.169.254/latest/meta-data/',
    '/to-file': 'file:///etc/passwd',
    '/to-intranet': `http://intranet.example:${port}/`,
  }[req.url]
  res.writeHead(302, { location: to ?? '/' })
  res.end()
})
await listen(redirector, 8080, '93.184.216.34')

const P = port
const hostile = [
  `http://127.0.0.1:${P}/`,
  `http://localhost:${P}/`,
  `http://2130706433:${P}/`,
  `http://0x7f.1:${P}/`,
  `http://0177.0.0.1:${P}/`,
  `http://127.1:${P}/`,
  `http://%31%32%37.0.0.1:${P}/`,
  `http://[::1]:${P}/`,
  `http://[::ffff:127.0.0.1]:${P}/`,
  `http://[::ffff:7f00:1]:${P}/`,
  `http://0.0.0.0:${P}/`,
  `http://[::]:${P}/`,
  `http://10.23.45.67:${P}/`,
  `http://192.168.7.7:${P}/`,
  `http://100.64.1.2:${P}/`,
  `http://[fd00::7]:${P}/`,
  'http://169.254.169.254/latest/meta-data/',
  'http://[::ffff:169.254.169.254]/latest/meta-data/',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://metadata.google.internal/computeMetadata/v1/',
  `http://user:secret@127.0.0.1:${P}/`,
  `https://127.0.0.1:${P}/`,
  'file:///etc/passwd',
  `gopher://127.0.0.1:${P}/_x`,
  `dict://127.0.0.1:${P}/info`,
  ...(names
    ? [
        `http://intranet.example:${P}/`,
        'http://metadata.example/latest/meta-data/',
        `http://mixed.example:${P}/`,
        'http://public.example:8080/to-private',
        'http://public.example:8080/to-loopback',
        'http://public.example:8080/to-metadata',
        'http://public.example:8080/to-file',
        'http://public.example:8080/to-intranet',
      ]
    : []),
]

const Plugin = await import(new URL('../../lib/index.js', import.meta.url).href)
const mount = (config) => {
  const tools = {}
  Plugin.apply({ tools: { register: (d) => { tools[d.name] = d } }, on: () => () => {} }, config)
  return tools
}
const closed = mount({})
const results = []
for (const url of hostile) {
  const started = performance.now()
  const value = await closed.resilient_fetch.execute({ url }, { signal: new AbortController().signal })
  results.push({ url, ok: value.ok, code: value.code, message: value.message, rungs: value.report?.rungs?.map((r) => `${r.rung}:${r.outcome}`), ms: Math.round(performance.now() - started) })
}
const refusedConnections = connections.length
const redirectHits = redirects.length

// The control: the same recorder, reached on purpose, records the connection.
const open = mount({ allowPrivateNetwork: true })
const control = await open.resilient_fetch.execute({ url: `http://10.23.45.67:${P}/` }, { signal: new AbortController().signal })

process.stdout.write(`${JSON.stringify({
  names,
  results,
  connectionsDuringRefusals: refusedConnections,
  recordedDuringRefusals: connections.slice(0, refusedConnections),
  redirectHits,
  control: { ok: control.ok, text: control.text, connections: connections.length - refusedConnections },
})}\n`)
process.exit(0)
