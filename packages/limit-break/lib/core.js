// Loads the Rust core on first use, once, for the plugin module and the CLI alike. Importing the
// plugin module compiles nothing and touches no file: the first `Config` validation, `apply` or
// CLI command does.
import { readFileSync } from 'node:fs'
import * as glue from '../pkg/limit_break.js'

let loaded = false

/** The core's exports; the first call compiles and instantiates the WebAssembly module. */
export function core() {
  if (!loaded) {
    glue.initSync({ module: readFileSync(new URL('../pkg/limit_break_bg.wasm', import.meta.url)) })
    loaded = true
  }
  return glue
}

export { encodeConfig } from './common/config.js'
