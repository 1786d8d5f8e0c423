/**
 * Canonical JSON (class 1 of issue 17, tampered checkpoints: what the plan
 * digest and the checkpoint MAC are computed over). One text per JSON
 * value: key order and a JSON round trip do not change it; different
 * values never share it; anything that is not JSON data is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { stringify } from "../../src/domain/internal/canonicalJson.js"
import { equals, type Json } from "../../src/domain/Json.js"
import { jsonArbitrary } from "../support/JsonArbitrary.js"

const json = jsonArbitrary(5)

/** The same value with every object's keys in a different order (reversed, or rotated by `shift`). */
const reordered = (value: Json, shift: number): Json => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map((item) => reordered(item, shift))
  const entries = Object.entries(value)
  const n = entries.length
  const rotated = n === 0 ? entries : [...entries.slice(shift % n), ...entries.slice(0, shift % n)].reverse()
  // Built from entries so that an own "__proto__" key stays a key.
  const out: Record<string, Json> = {}
  for (const [key, item] of rotated) {
    Object.defineProperty(out, key, {
      value: reordered(item, shift),
      enumerable: true,
      writable: true,
      configurable: true
    })
  }
  return out
}

/** How many leaves and keys a value has (at least 1: the value itself). */
const leaves = (value: Json): number => {
  if (value === null || typeof value !== "object") return 1
  if (Array.isArray(value)) return 1 + value.reduce((n: number, item) => n + leaves(item), 0)
  return 1 + Object.values(value).reduce((n: number, item) => n + 1 + leaves(item), 0)
}

/** The value with its `at.left`-th leaf or key (in walk order) changed; `at` counts down as the walk goes. */
const mutate = (value: Json, at: { left: number }): Json => {
  if (at.left-- === 0) {
    if (value === null) return 0
    if (typeof value === "boolean") return !value
    if (typeof value === "number") return value === 0 ? 1 : -value
    if (typeof value === "string") return `${value}x`
    return Array.isArray(value) ? [...value, null] : { ...value, "\u0000added": null }
  }
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map((item) => mutate(item, at))
  const out: Record<string, Json> = {}
  for (const [key, item] of Object.entries(value)) {
    const renamed = at.left-- === 0 ? `${key}\u0000renamed` : key
    Object.defineProperty(out, renamed, {
      value: mutate(item, at),
      enumerable: true,
      writable: true,
      configurable: true
    })
  }
  return out
}

describe("CanonicalJson", () => {
  it.prop(
    "tampered checkpoints: key order does not change the canonical text",
    [json, FastCheck.nat(7)],
    ([value, shift]) => {
      expect(stringify(reordered(value, shift))).toBe(stringify(value))
    }
  )

  it.prop(
    "tampered checkpoints: the canonical text is JSON that parses back to the same value (a JSON round trip keeps it)",
    [json],
    ([value]) => {
      const text = stringify(value)
      const parsed: Json = JSON.parse(text)
      expect(equals(parsed, value)).toBe(true)
      expect(stringify(parsed)).toBe(text)
    }
  )

  it.prop("tampered checkpoints: different values have different canonical texts", [json, json], ([a, b]) => {
    expect(stringify(a) === stringify(b)).toBe(equals(a, b))
  })

  it.prop(
    "tampered checkpoints: changing any one leaf or key of a value changes its text",
    [json, FastCheck.nat(64)],
    ([value, pick]) => {
      const count = leaves(value)
      const changed = mutate(value, { left: pick % count })
      expect(equals(changed, value)).toBe(false)
      expect(stringify(changed)).not.toBe(stringify(value))
    }
  )

  it("sorted keys (by UTF-16 code units), no whitespace, undefined members left out as JSON.stringify does", () => {
    expect(stringify({ b: 1, a: [true, null, "x"], "": { z: 0, y: -0 } })).toBe(
      "{\"\":{\"y\":0,\"z\":0},\"a\":[true,null,\"x\"],\"b\":1}"
    )
    expect(stringify({ "é": 1, "z": 2, "Z": 3, "\u{1F600}": 4, "\uFFFF": 5 })).toBe(
      `{"Z":3,"z":2,"é":1,"\u{1F600}":4,"\uFFFF":5}`
    )
    expect(stringify({ a: undefined, b: 2 })).toBe("{\"b\":2}")
    expect(stringify(JSON.parse("{\"__proto__\":{\"x\":1}}"))).toBe("{\"__proto__\":{\"x\":1}}")
    expect(stringify("line\u2028break\"")).toBe(JSON.stringify("line\u2028break\""))
    expect(stringify(1e21)).toBe("1e+21")
  })

  it("anything that is not JSON data is refused, never written some lossy way", () => {
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    for (
      const bad of [
        Number.NaN,
        Number.POSITIVE_INFINITY,
        1n,
        () => 1,
        Symbol("s"),
        undefined,
        [undefined],
        new Date(0),
        new Map(),
        cyclic
      ]
    ) {
      expect(() => stringify(bad)).toThrow(TypeError)
    }
  })
})
