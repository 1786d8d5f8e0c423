/**
 * Contribution hashes (seed 001): cyrb53 of the contribution's canonical
 * JSON text — object keys sorted, `undefined` members left out, strings
 * escaped as `JSON.stringify` escapes them; a string contribution hashed as
 * is. The runtime feeds the text to the hash without building it; these
 * properties hold it to the text built the plain way, so hashes stored in
 * records keep their meaning.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { contributionHash } from "../../src/runtime/internal/hash.js"

/** The reference: the canonical text, built. */
const canonicalText = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? String(value)
  if (Array.isArray(value)) return `[${value.map(canonicalText).join(",")}]`
  const record = value as Record<string, unknown>
  const members = Object.keys(record).sort().filter((key) => record[key] !== undefined)
  return `{${members.map((key) => `${JSON.stringify(key)}:${canonicalText(record[key])}`).join(",")}}`
}

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
  return `cyrb53:${(4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0")}`
}

const reference = (value: unknown): string => cyrb53(typeof value === "string" ? value : canonicalText(value))

// Strings rich in what JSON escapes: quotes, backslashes, control characters, lone and paired surrogates.
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      "\"",
      "\\",
      "\n",
      "\t",
      "\b",
      "\f",
      "\r",
      "\u0000",
      "\u001f",
      "\u007f",
      "\ud800",
      "\udfff",
      "😀",
      "\u2028"
    ),
    fc.char16bits()
  ),
  maxLength: 30
})
const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: "small" },
    text,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie("json"), { maxLength: 4 }),
    fc.dictionary(text, tie("json"), { maxKeys: 4 })
  )
})).json

describe("contribution hashes (seed 001)", () => {
  it("equal the hash of the canonical JSON text, for any JSON-like value (property)", () => {
    fc.assert(fc.property(value, (v) => contributionHash(v) === reference(v)), { numRuns: 5000 })
  })

  it("a string is hashed as is; as a member, as its JSON text (property)", () => {
    fc.assert(
      fc.property(text, (s) => contributionHash(s) === cyrb53(s) && contributionHash({ s }) === reference({ s })),
      { numRuns: 5000 }
    )
  })

  it("key order does not change the hash; a changed value does", () => {
    expect(contributionHash({ a: 1, b: [true, "x"] })).toBe(contributionHash({ b: [true, "x"], a: 1 }))
    expect(contributionHash({ a: 1 })).not.toBe(contributionHash({ a: 2 }))
    expect(contributionHash({ a: 1, skipped: undefined })).toBe(contributionHash({ a: 1 }))
  })

  it("a value that cannot be walked hashes its text instead of failing", () => {
    const hostile = {
      get boom() {
        throw new Error("no")
      }
    }
    expect(contributionHash(hostile)).toBe(cyrb53(String(hostile)))
  })
})
