// Loads the Rust core synchronously, once, for the plugin module and the CLI alike.
import { readFileSync } from 'node:fs'
import { initSync } from '../pkg/research_nudge.js'

initSync({ module: readFileSync(new URL('../pkg/research_nudge_bg.wasm', import.meta.url)) })

export * from '../pkg/research_nudge.js'

const JS_ONLY = '\u0000js'

/** JSON text of a config as the Rust validator reads it: values JSON cannot hold become a marker
 * so an error can show them (`got NaN`) instead of a silent `null`. Never throws: a config JSON
 * cannot encode at all (a cycle) becomes one marker, which the validator then rejects. */
export function encodeConfig(value) {
  try {
    return JSON.stringify(value === undefined ? null : value, (_key, v) => {
      switch (typeof v) {
        case 'number': return Number.isFinite(v) ? v : { [JS_ONLY]: String(v) }
        case 'bigint': return { [JS_ONLY]: `bigint ${v}` }
        case 'function': return { [JS_ONLY]: 'function' }
        case 'symbol': return { [JS_ONLY]: 'symbol' }
        default: return v
      }
    })
  } catch (error) {
    return JSON.stringify({ [JS_ONLY]: `unreadable value (${error?.message ?? error})` })
  }
}
