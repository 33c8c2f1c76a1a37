// Loads the Rust core synchronously, once, for the plugin module and the CLI alike.
import { readFileSync } from 'node:fs'
import { initSync } from '../pkg/pain_point_check.js'

const exports = initSync({ module: readFileSync(new URL('../pkg/pain_point_check_bg.wasm', import.meta.url)) })

/** The module's memory: the shim writes failure text straight into it (`textBuffer`). */
export const memory = exports.memory

export * from '../pkg/pain_point_check.js'
export { encodeConfig } from './common/config.js'
