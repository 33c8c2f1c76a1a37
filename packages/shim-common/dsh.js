// DSH object helpers every plugin shim of the family shares. They read and build DSH shapes and
// decide nothing. Copied into each package's lib/common/ by `cargo xtask build`.

const REPORT_INTERVAL_MS = 60_000

/** Logs event problems at most once a minute, counting what it held back, so a broken event
 * source cannot flood stderr. */
export function createReporter(plugin, now) {
  let lastAt = -Infinity
  let held = 0
  return (what, error) => {
    const at = now()
    if (at - lastAt < REPORT_INTERVAL_MS) {
      held += 1
      return
    }
    const more = held > 0 ? ` (${held} more since the last report)` : ''
    console.error(`[${plugin}] ${what}${more}:`, error)
    lastAt = at
    held = 0
  }
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}

/** A user message shaped as DSH's `createUserMessage` makes it: frozen, with a fresh id. */
export function noticeMessage(plugin, text, summary) {
  return deepFreeze({
    content: [{ type: 'text', text }],
    source: { kind: 'plugin', plugin, form: 'notice', summary },
    role: 'user',
    // Web Crypto's randomUUID (the same v4 generator as node:crypto's): loading node:crypto at
    // import time took ~5 ms of a plugin's cold start; the global loads it on first use.
    id: globalThis.crypto.randomUUID(),
  })
}

export function isAgent(agent) {
  return agent !== null && (typeof agent === 'object' || typeof agent === 'function')
}

/** The text blocks of a content array (or a plain string), joined by newlines. */
export function textOf(blocks) {
  if (typeof blocks === 'string') return blocks
  if (!Array.isArray(blocks)) return ''
  let text = ''
  for (const block of blocks) {
    if (block?.type === 'text' && typeof block.text === 'string') text += (text ? '\n' : '') + block.text
  }
  return text
}

/** Whether a `user/message` (or a pre-step inbox item) was typed by a person. */
export function isUserPrompt(message) {
  return message?.source?.kind === 'user'
}

/** The exit code a shell-style tool reported in its value (DSH reports a non-zero exit as a
 * success: `value.exitCode`), when it is an integer. */
export function exitCodeOf(result) {
  const code = result.value?.exitCode
  return Number.isInteger(code) ? code : undefined
}
