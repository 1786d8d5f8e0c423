/**
 * `PipelineRequest.decode` builds well-formed plain requests directly; the
 * result must be exactly the Schema's (the request contract: unknown fields
 * refused by name, a non-empty `request`, JSON `metadata`, a non-empty
 * `requestId`) — the same value for every request the Schema accepts, the
 * same `InvalidRequest` for everything else.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import { PipelineRequest } from "effect-agent-pipeline"

const bySchema = Schema.decodeUnknownEither(PipelineRequest.PipelineRequest, {
  onExcessProperty: "error",
  errors: "all"
})
const decoded = (input: unknown) => Effect.runSync(Effect.either(PipelineRequest.decode(input)))

const fieldValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(""),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.boolean(),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
  fc.dictionary(fc.constantFrom("a", "b", "__proto__"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
)

const requestLike = fc.record(
  { request: fieldValue, metadata: fieldValue, requestId: fieldValue, requestID: fieldValue },
  { requiredKeys: [] }
)

describe("PipelineRequest.decode", () => {
  it("request contract: request-shaped input (right and wrong types, misspelled fields) decodes exactly as by the Schema (property, 3000 runs)", () => {
    fc.assert(
      fc.property(requestLike, (input) => {
        const ours = decoded(input)
        const schema = bySchema(input)
        expect(Either.isRight(ours)).toBe(Either.isRight(schema))
        if (Either.isRight(ours) && Either.isRight(schema)) {
          expect(ours.right).toBeInstanceOf(PipelineRequest.PipelineRequest)
          expect({ ...ours.right }).toStrictEqual({ ...schema.right })
        }
      }),
      { numRuns: 3000 }
    )
  })

  it("request contract: a well-formed request with every field decodes to the Schema's instance", () => {
    const input = { request: "quote ACME", metadata: { user: "u1", n: [1, 2] }, requestId: "r-1" }
    const ours = decoded(input)
    const schema = bySchema(input)
    expect(Either.isRight(ours) && Either.isRight(schema) && { ...ours.right }).toStrictEqual(
      Either.isRight(schema) ? { ...schema.right } : undefined
    )
  })
})
