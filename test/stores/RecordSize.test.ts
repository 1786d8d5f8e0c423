/**
 * What the memory store's byte cap counts: a record's JSON size, measured by
 * a walk instead of building the text. It agrees with `Json.encodedSize` on
 * every JSON value and with `JSON.stringify` wherever no character needs
 * escaping; it leaves out what `JSON.stringify` leaves out, and ends on
 * values that are not JSON (a cycle, deep nesting).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { encodedSize } from "../../src/domain/Json.js"
import { recordSize } from "../../src/stores/internal/recordSize.js"
import { jsonArbitrary } from "../support/JsonArbitrary.js"

const utf8 = (text: string) => Buffer.byteLength(text, "utf8")

// Strings JSON.stringify writes as they are: no quotes, backslashes or control characters.
const plainString = FastCheck.string({ unit: FastCheck.constantFrom("a", "Z", "0", " ", "é", "😀", "漢", "_") })
const plainJson = FastCheck.letrec<{ json: unknown }>((tie) => ({
  json: FastCheck.oneof(
    { depthSize: "small" },
    FastCheck.constant(null),
    FastCheck.boolean(),
    FastCheck.integer(),
    FastCheck.double({ noNaN: true, noDefaultInfinity: true }),
    plainString,
    FastCheck.array(tie("json"), { maxLength: 5 }),
    FastCheck.dictionary(plainString, tie("json"), { maxKeys: 5 })
  )
})).json

describe("record size", () => {
  it.prop("record size: equals Json.encodedSize on every JSON value (property)", [jsonArbitrary(5)], ([value]) => {
    expect(recordSize(value)).toBe(encodedSize(value))
  })

  it.prop(
    "record size: equals the UTF-8 length of JSON.stringify where nothing is escaped (property)",
    [plainJson],
    ([value]) => {
      expect(recordSize(value)).toBe(utf8(JSON.stringify(value)))
    }
  )

  it("record size: undefined properties, functions and symbols are left out as JSON.stringify does", () => {
    const value = { a: 1, b: undefined, c: [undefined, () => 1], d: Symbol("s"), e: { f: undefined } }
    expect(recordSize(value)).toBe(utf8(JSON.stringify(value)))
  })

  it("record size: non-finite numbers count as null", () => {
    const value = [Number.NaN, Number.POSITIVE_INFINITY, 1]
    expect(recordSize(value)).toBe(utf8(JSON.stringify(value)))
  })

  it("record size: a cycle ends the walk instead of hanging; a shared object counts every time it appears", () => {
    const cyclic: { name: string; self?: unknown } = { name: "x" }
    cyclic.self = cyclic
    expect(recordSize(cyclic)).toBe(utf8(`{"name":"x","self":null}`))
    const shared = { big: "y".repeat(100) }
    expect(recordSize([shared, shared])).toBe(utf8(JSON.stringify([shared, shared])))
  })

  it("record size: 100,000 levels of nesting are measured without overflowing the stack", () => {
    let deep: unknown = "leaf"
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(recordSize(deep)).toBe(200_000 + 6)
  })
})
