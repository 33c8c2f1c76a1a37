// Loads the Rust core synchronously, once, for the plugin module, the driver and the CLI alike.
import { readFileSync } from 'node:fs'
import { initSync } from '../pkg/autoresearch.js'

initSync({ module: readFileSync(new URL('../pkg/autoresearch_bg.wasm', import.meta.url)) })

export * from '../pkg/autoresearch.js'
export { encodeConfig } from './common/config.js'
