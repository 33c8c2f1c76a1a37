// A writer process for the concurrency selftest: waits until a shared start time, then saves
// `count` facts `<prefix>.<i>` into the store under `home`, either through the plugin's driver
// (`locked`) or with a bare read-modify-write and no lock (`naive`, to show what the lock
// prevents). Prints the answers as one JSON line.
import { open, readFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { core } from '../../lib/core.js'
import { argsJson, createMemory, storePaths } from '../../lib/memory.js'

const [home, mode, prefix, count, startAt] = process.argv.slice(2)
const wasm = core()
const plugin = new wasm.LimitBreakPlugin('{}')
const paths = storePaths(wasm, home)
const memory = createMemory(wasm, plugin, paths, {})

async function naiveSave(args) {
  let current
  try {
    current = await readFile(paths.store)
  } catch {
    current = undefined
  }
  const edit = wasm.applySave(argsJson(args), current, Date.now())
  const temp = join(paths.dir, `.naive.${process.pid}.${Math.random()}.tmp`)
  const handle = await open(temp, 'wx')
  await handle.writeFile(edit.bytes)
  await handle.close()
  await rename(temp, paths.store)
  return JSON.parse(edit.answer)
}

const wait = Number(startAt) - Date.now()
if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
const answers = []
for (let i = 0; i < Number(count); i++) {
  const args = { id: `${prefix}.${i}`, statement: `fact ${i} saved by writer ${prefix}` }
  answers.push(mode === 'naive' ? await naiveSave(args) : await memory.save(args))
}
process.stdout.write(`${JSON.stringify({ late: wait < 0 ? -wait : 0, answers })}\n`)
