// Config plumbing every plugin of the family shares: the JSON encoding the Rust validators read,
// and the Standard Schema v1 object DSH calls before `apply`. Copied into each package's
// lib/common/ by `cargo xtask build` (one source, zero runtime dependencies).

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

/** Standard Schema v1 around a Rust validator (`validateJson(configJson) -> resultJson`). DSH runs
 * `validate` before `apply` and prints the issues, each with its path. */
export function standardSchema(vendor, validateJson) {
  const validate = (value) => {
    try {
      return JSON.parse(validateJson(encodeConfig(value)))
    } catch (error) {
      return { issues: [{ message: `config could not be read (${error?.message ?? error})`, path: [] }] }
    }
  }
  return Object.freeze({ '~standard': Object.freeze({ version: 1, vendor, validate }) })
}
