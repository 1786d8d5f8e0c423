/**
 * `Json.clone`: a deep copy that keeps every own key — including
 * `"__proto__"`, which `JSON.parse` makes an own key of model output — as a
 * key (C8: a hook's private copy of the plan is the plan).
 */
import { describe, expect, it } from "@effect/vitest"
import { Json } from "effect-agent-pipeline"

describe("Json.clone", () => {
  it("C8: an own \"__proto__\" key is copied as a key, not turned into the prototype", () => {
    const value = JSON.parse("{\"__proto__\":{\"x\":1},\"a\":[{\"__proto__\":2}]}")
    const copy = Json.clone(value)
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(["__proto__", "a"])
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value))
    expect(Json.equals(copy, value)).toBe(true)
    expect(copy).not.toBe(value)
  })
})
