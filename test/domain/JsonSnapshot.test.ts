/**
 * `Json.snapshot`: the one walk that reads a value from outside into a
 * checked JSON copy (class 4 of issue 17: values are checked where they
 * enter). It never throws, never recurses, reads each property once, and
 * keeps an own `"__proto__"` key a key.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { Json } from "effect-agent-pipeline"
import { jsonArbitrary } from "../support/JsonArbitrary.js"

const take = (u: unknown, options: Partial<Json.SnapshotOptions> = {}) =>
  Json.snapshot(u, { maxBytes: 1_000_000, ...options })

describe("Json.snapshot", () => {
  it("hostile values: every JSON value comes back as an equal copy that shares no object with it (property, 1000 runs)", () => {
    const objects = (u: unknown, out: Set<unknown> = new Set()): Set<unknown> => {
      if (typeof u === "object" && u !== null) {
        out.add(u)
        for (const v of Object.values(u)) objects(v, out)
      }
      return out
    }
    fc.assert(
      fc.property(jsonArbitrary(5), (value) => {
        const copied = take(value)
        expect(Either.isRight(copied)).toBe(true)
        if (Either.isLeft(copied)) return
        expect(copied.right.value).toStrictEqual(value)
        const original = objects(value)
        for (const o of objects(copied.right.value)) expect(original.has(o)).toBe(false)
      }),
      { numRuns: 1000 }
    )
  })

  it("hostile values: an own \"__proto__\" key stays a key in the copy (the prototype is never set)", () => {
    const value: unknown = JSON.parse("{\"__proto__\":{\"polluted\":true},\"a\":[{\"__proto__\":1}]}")
    const copied = take(value)
    expect(Either.isRight(copied)).toBe(true)
    if (Either.isLeft(copied)) return
    const copy = copied.right.value as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(["__proto__", "a"])
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value))
  })

  it("hostile values: each refusal names its kind, the path and why", () => {
    const getter = {}
    Object.defineProperty(getter, "g", {
      enumerable: true,
      get() {
        throw new RangeError("nope")
      }
    })
    expect(take({ a: [1, { b: 2n }] })).toEqual(
      Either.left({ kind: "not_json", path: ["a", 1, "b"], reason: "a bigint is not a JSON value" })
    )
    expect(take({ x: { g: getter } })).toEqual(
      Either.left({ kind: "unreadable", path: ["x", "g", "g"], reason: "reading it threw: RangeError: nope" })
    )
    expect(take([[[]]], { maxDepth: 2 })).toEqual(
      Either.left({ kind: "too_deep", path: [0, 0], reason: "nests deeper than 2 levels" })
    )
    expect(take({ s: "abcdef" }, { maxBytes: 10 })).toEqual(
      Either.left({ kind: "too_large", path: ["s"], reason: "is over the limit of 10 bytes" })
    )
    expect(take({ u: undefined })).toEqual(
      Either.left({ kind: "not_json", path: ["u"], reason: "undefined is not a JSON value" })
    )
    expect(take({ u: undefined, v: 1 }, { undefinedProperties: "drop" })).toEqual(
      Either.right({ value: { v: 1 }, bytes: 7 })
    )
    expect(take([undefined], { undefinedProperties: "drop" })._tag).toBe("Left")
  })

  it("hostile values: depth counts arrays and objects (the default limit is Json.maxDepth, 256), without recursion at any depth", () => {
    const nested = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown
    expect(Json.maxDepth).toBe(256)
    expect(Either.isRight(take(nested(256)))).toBe(true)
    expect(Either.isLeft(take(nested(257)))).toBe(true)
    const deep = take(nested(200_000))
    expect(Either.isLeft(deep) && deep.left.kind).toBe("too_deep")
  })

  it("hostile values: each property is read exactly once", () => {
    let reads = 0
    const value = {}
    Object.defineProperty(value, "n", { enumerable: true, get: () => ++reads })
    const copied = take({ a: value, b: value })
    expect(reads).toBe(2) // once per place it appears, never twice in one place
    expect(Either.isRight(copied) && copied.right.value).toEqual({ a: { n: 1 }, b: { n: 2 } })
  })
})

describe("Json.findNotJson / isJson never throw", () => {
  it("hostile values: a throwing getter is 'not JSON' at its path; a hole is named as a hole", () => {
    const value = { a: [1, {}] }
    Object.defineProperty(value.a[1], "x", {
      enumerable: true,
      get() {
        throw new Error("no")
      }
    })
    expect(Json.isJson(value)).toBe(false)
    expect(Json.findNotJson(value)).toEqual({ path: ["a", 1, "x"], reason: "reading it threw: Error: no" })
    // eslint-disable-next-line no-sparse-arrays
    expect(Json.findNotJson([1, , 3])).toEqual({
      path: [1],
      reason: "a hole (a missing array element) is not a JSON value"
    })
    const revoked = Proxy.revocable({}, {})
    revoked.revoke()
    expect(Json.isJson({ p: revoked.proxy })).toBe(false)
  })
})

describe("Json.formatPath", () => {
  it("joins keys and indexes; a path hundreds of keys long keeps its start and end, bounded", () => {
    expect(Json.formatPath("metadata", ["user", "tags", 2])).toBe("metadata.user.tags[2]")
    expect(Json.formatPath("", ["a", 0])).toBe("a[0]")
    const long = Json.formatPath("metadata", Array.from({ length: 5_000 }, (_, i) => (i % 2 === 0 ? "key" : i)))
    expect(long.length).toBeLessThanOrEqual(200)
    expect(long.startsWith("metadata.key[1].key")).toBe(true)
    expect(long).toContain("…(5000 keys)…")
    expect(long.endsWith("[4999]")).toBe(true)
  })
})
