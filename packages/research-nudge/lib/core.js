// Loads the Rust core synchronously, once, for the plugin module and the CLI alike.
import { readFileSync } from 'node:fs'
import { initSync } from '../pkg/research_nudge.js'

initSync({ module: readFileSync(new URL('../pkg/research_nudge_bg.wasm', import.meta.url)) })

export * from '../pkg/research_nudge.js'
export { encodeConfig } from './common/config.js'
