/**
 * The contribution hash of a hook run (seed 001 "contribution hashes"): a
 * short, stable fingerprint of what the hook changed, so two runs that made
 * the same change can be recognised without storing the change twice.
 * cyrb53 over the value's canonical JSON text: fast, 53 bits, not
 * cryptographic.
 */
import { flatText } from "./flatText.js"

const cyrb53 = (text: string): string => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0")
}

/** JSON text with object keys sorted, so equal values (`Json.equals`) have equal text. */
// Plain loops, no callbacks: a closure made per call would lose its
// optimized code at every full GC that finds none alive.
const canonical = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? String(value)
  if (Array.isArray(value)) {
    let text = "["
    for (let i = 0; i < value.length; i++) text += (i === 0 ? "" : ",") + canonical(value[i])
    return text + "]"
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).sort()
  let text = "{"
  let first = true
  for (const key of keys) {
    const item = record[key]
    if (item === undefined) continue
    text += (first ? "" : ",") + JSON.stringify(key) + ":" + canonical(item)
    first = false
  }
  return text + "}"
}

/**
 * `cyrb53:<14 hex digits>` of the contribution's canonical JSON text (a
 * string is hashed as is): equal contributions hash equally, whatever their
 * key order.
 */
export const contributionHash = (contribution: unknown): string => {
  let text: string
  try {
    text = typeof contribution === "string" ? contribution : canonical(contribution)
  } catch {
    text = String(contribution)
  }
  return flatText(`cyrb53:${cyrb53(text)}`)
}
