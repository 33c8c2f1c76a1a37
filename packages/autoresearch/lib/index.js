// dsh-autoresearch: the DSH plugin module. Config is validated in Rust (a Standard Schema `Config`
// DSH runs before `apply`); the autoresearch tool itself arrives with the DSH half of the package.
import { AutoresearchRun, encodeConfig, validateAutoresearchConfig } from './core.js'
import { standardSchema } from './common/config.js'

export const name = 'autoresearch'

/** Standard Schema v1: DSH runs `validate` before `apply` and prints the issues. */
export const Config = standardSchema(name, validateAutoresearchConfig)

export function apply(_ctx, config) {
  // DSH has already validated `config`; direct callers get the same fail-loud check.
  const checked = JSON.parse(validateAutoresearchConfig(encodeConfig(config)))
  if (checked.issues) {
    throw new Error(`autoresearch: invalid config: ${checked.issues.map((i) => i.message).join('; ')}`)
  }
  void AutoresearchRun
}
