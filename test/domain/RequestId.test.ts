/**
 * The `RequestId` rule (class 4 of issue 17: a `requestId` with NUL bytes,
 * `../../` or 100,000 characters was accepted): 1–200 bytes of printable
 * UTF-8, no whitespace, no control or format characters, no `/` or `\`,
 * not `.` or `..` — one rule for the Schema, `RequestId.make` and
 * `requestIdProblem`.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Schema } from "effect"
import { PipelineContext } from "effect-agent-pipeline"

const utf8 = new TextEncoder()

/** The rule, stated again code point by code point, independently of the implementation's regex. */
const follows = (id: string): boolean => {
  if (id.length === 0 || id === "." || id === "..") return false
  if (utf8.encode(id).length > 200) return false
  for (const char of id) {
    if (char === "/" || char === "\\") return false
    if (/^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}]$/u.test(char) || /^\s$/.test(char)) return false
  }
  return true
}

const characters = fc.oneof(
  fc.constantFrom(
    "a",
    "Z",
    "0",
    "-",
    "_",
    ".",
    ":",
    "/",
    "\\",
    " ",
    "\t",
    "\n",
    "\u0000",
    "\u007f",
    "\u0085",
    "\u00a0",
    "\u200b",
    "\u202e",
    "\u2028",
    "\ufeff",
    "\ud800",
    "\udc00",
    "😀",
    "é",
    "€",
    "注",
    "\ue000"
  ),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 })
)
const candidateIds = fc.oneof(
  fc.array(characters, { maxLength: 12 }).map((cs) => cs.join("")),
  fc.string({ unit: "grapheme", maxLength: 80 }),
  fc.integer({ min: 190, max: 210 }).map((n) => "x".repeat(n)),
  fc.integer({ min: 60, max: 70 }).map((n) => "€".repeat(n)),
  fc.constantFrom(".", "..", "...", "./a", "a/..", "a..b")
)

describe("PipelineContext.RequestId", () => {
  it("hostile values: an id is accepted exactly when it follows the documented rule — by the Schema, RequestId.make and requestIdProblem alike (property, 3000 runs)", () => {
    const is = Schema.is(PipelineContext.RequestId)
    fc.assert(
      fc.property(candidateIds, (id) => {
        const ok = follows(id)
        expect(is(id)).toBe(ok)
        expect(PipelineContext.requestIdProblem(id) === undefined).toBe(ok)
        if (ok) expect(PipelineContext.RequestId.make(id)).toBe(id)
        else expect(() => PipelineContext.RequestId.make(id)).toThrow()
      }),
      { numRuns: 3000 }
    )
  })

  it("the generated ids the pipeline makes follow the rule", () => {
    expect(follows(crypto.randomUUID())).toBe(true)
    expect(PipelineContext.maxRequestIdBytes).toBe(200)
  })
})
