// Loads the Rust core synchronously, once, for the plugin module and the CLI alike.
import { readFileSync } from 'node:fs'
import { initSync } from '../pkg/research_nudge.js'

const exports = initSync({ module: readFileSync(new URL('../pkg/research_nudge_bg.wasm', import.meta.url)) })

/** The module's memory: the shim writes failure text straight into it (`Plugin.textBuffer`). */
export const memory = exports.memory

export * from '../pkg/research_nudge.js'
export { encodeConfig } from './common/config.js'
