/**
 * The contribution hash of a hook run (seed 001 "contribution hashes"): a
 * short, stable fingerprint of what the hook changed, so two runs that made
 * the same change can be recognised without storing the change twice.
 * cyrb53 over the value's canonical JSON text: fast, 53 bits, not
 * cryptographic.
 *
 * The text is never built: the hash takes its characters as a walk of the
 * value writes them (a 1 KiB enrichment was hashed through three copies of
 * itself — its JSON string, the canonical text, the flattened text).
 */
import { keepLatest } from "../../domain/internal/liveShapes.js"
import { flatText } from "./flatText.js"

/** cyrb53's state while characters are fed to it. */
class Cyrb53 {
  h1 = 0xdeadbeef
  h2 = 0x41c6ce57

  char(c: number): void {
    this.h1 = Math.imul(this.h1 ^ c, 2654435761)
    this.h2 = Math.imul(this.h2 ^ c, 1597334677)
  }

  /** Text written as it is. */
  raw(text: string): void {
    // The state in locals for the loop (fields read and written per character cost twice as much).
    let h1 = this.h1
    let h2 = this.h2
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      h1 = Math.imul(h1 ^ c, 2654435761)
      h2 = Math.imul(h2 ^ c, 1597334677)
    }
    this.h1 = h1
    this.h2 = h2
  }

  /** A string as `JSON.stringify` writes it: quoted, with its escapes. */
  string(text: string): void {
    this.char(34)
    let h1 = this.h1
    let h2 = this.h2
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0x20 && c !== 34 && c !== 92 && (c < 0xd800 || c > 0xdfff)) {
        h1 = Math.imul(h1 ^ c, 2654435761)
        h2 = Math.imul(h2 ^ c, 1597334677)
      } else {
        this.h1 = h1
        this.h2 = h2
        this.escaped(text, i, c)
        h1 = this.h1
        h2 = this.h2
      }
    }
    this.h1 = h1
    this.h2 = h2
    this.char(34)
  }

  private escaped(text: string, i: number, c: number): void {
    if (c >= 0xd800 && c <= 0xdfff) {
      // A surrogate pair is written as it is; a lone surrogate as `\udxxx`.
      const pairs = c <= 0xdbff
        ? i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff
        : i > 0 && text.charCodeAt(i - 1) >= 0xd800 && text.charCodeAt(i - 1) <= 0xdbff
      if (pairs) this.char(c)
      else this.raw(`\\u${c.toString(16)}`)
      return
    }
    switch (c) {
      case 34:
        return this.raw("\\\"")
      case 92:
        return this.raw("\\\\")
      case 8:
        return this.raw("\\b")
      case 9:
        return this.raw("\\t")
      case 10:
        return this.raw("\\n")
      case 12:
        return this.raw("\\f")
      case 13:
        return this.raw("\\r")
      default:
        return this.raw(`\\u${c.toString(16).padStart(4, "0")}`)
    }
  }

  digest(): string {
    let h1 = this.h1
    let h2 = this.h2
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0")
  }
}

/**
 * Feeds `value`'s canonical JSON text — object keys sorted, so equal values
 * (`Json.equals`) have equal text; `undefined` members left out — to `hash`.
 * Plain loops, no callbacks: a closure made per call would lose its
 * optimized code at every full GC that finds none alive.
 */
const canonical = (value: unknown, hash: Cyrb53): void => {
  if (typeof value === "string") return hash.string(value)
  if (value === null || typeof value !== "object") return hash.raw(JSON.stringify(value) ?? String(value))
  if (Array.isArray(value)) {
    hash.char(91)
    for (let i = 0; i < value.length; i++) {
      if (i > 0) hash.char(44)
      canonical(value[i], hash)
    }
    return hash.char(93)
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).sort()
  hash.char(123)
  let first = true
  for (const key of keys) {
    const item = record[key]
    if (item === undefined) continue
    if (!first) hash.char(44)
    hash.string(key)
    hash.char(58)
    canonical(item, hash)
    first = false
  }
  hash.char(125)
}

/**
 * `cyrb53:<14 hex digits>` of the contribution's canonical JSON text (a
 * string is hashed as is): equal contributions hash equally, whatever their
 * key order.
 */
export const contributionHash = (contribution: unknown): string => {
  const hash = keepLatest("hash", new Cyrb53())
  if (typeof contribution === "string") hash.raw(contribution)
  else {
    try {
      canonical(contribution, hash)
    } catch {
      // A value that cannot be walked (a getter that throws): its text, as before.
      const fallback = new Cyrb53()
      fallback.raw(String(contribution))
      return flatText(`cyrb53:${fallback.digest()}`)
    }
  }
  return flatText(`cyrb53:${hash.digest()}`)
}
