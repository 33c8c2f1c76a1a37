// Crossing helpers the guards' shims share: a tool name crosses into WebAssembly once, and a
// failure's text is encoded straight into the module's memory. They carry values and decide
// nothing. Copied into each package's lib/common/ by `cargo xtask build`.

/** Tool name -> the core's id for it (`plugin.toolId`). Past `limit` names the core starts
 * afresh (`plugin.forgetTools`) and so does this map. */
export function createToolIds(plugin, limit) {
  const ids = new Map()
  return (toolName) => {
    let id = ids.get(toolName)
    if (id === undefined) {
      if (ids.size >= limit) {
        plugin.forgetTools()
        ids.clear()
      }
      id = plugin.toolId(toolName)
      ids.set(toolName, id)
    }
    return id
  }
}

const encoder = new TextEncoder()

/** `(head, tail) -> [headLen, tailLen]`: the two windows encoded one after the other into the
 * `bytes` bytes at `at` in `memory` (the core's text buffer), one `encodeInto` each and no
 * allocation; the view is made again when the memory grows. */
export function createTextWriter(memory, at, bytes) {
  let view = new Uint8Array(memory.buffer, at, bytes)
  return (head, tail) => {
    if (view.buffer !== memory.buffer) view = new Uint8Array(memory.buffer, at, bytes)
    const headLen = head === '' ? 0 : encoder.encodeInto(head, view).written
    const tailLen = tail === '' ? 0 : encoder.encodeInto(tail, view.subarray(headLen)).written
    return [headLen, tailLen]
  }
}
