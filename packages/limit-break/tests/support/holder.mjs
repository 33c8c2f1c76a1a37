// Takes the store lock under `home` through the plugin's driver, prints `held`, and never lets
// go: the test kills it (SIGKILL) or leaves it wedged.
import { core } from '../../lib/core.js'
import { storePaths, withStoreLock } from '../../lib/memory.js'

// Keeps the event loop alive: a pending promise alone would let the process exit.
setInterval(() => {}, 1 << 30)
const wasm = core()
const paths = storePaths(wasm, process.argv[2])
await withStoreLock(wasm, paths, () => {
  process.stdout.write('held\n')
  return new Promise(() => {})
})
