/**
 * The UserFacts conformance suite: the facade over every VectorStore
 * backend (memory, SQLite, PostgreSQL) behaves the same — deterministic
 * ids (re-extracting replaces), identity and relevant reads, tenants,
 * retention on the Clock, per-user forgetting, and a stored item that does
 * not decode is a typed `corrupt` error.
 *
 * ```ts
 * userFactsConformance("memory", () => Layer.orDie(VectorStore.layerMemory()))
 * ```
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, type Layer, TestClock } from "effect"
import * as UserFacts from "../../src/stores/UserFacts.js"
import { VectorStore, type VectorStoreError } from "../../src/stores/VectorStore.js"
import { propertyRuns } from "../support/PropertyRuns.js"

/** Builds a fresh, empty store. */
export type MakeLayer = () => Layer.Layer<VectorStore>

const fact = (userId: string, text: string, extra: Partial<UserFacts.PutInput> = {}): UserFacts.PutInput => ({
  userId,
  text,
  kind: "fact",
  confidence: 0.8,
  sourceRequestId: "r-1",
  ...extra
})

/** Well-formed text without NUL that is not blank (what a fact may say). */
const factText = FastCheck.string({ unit: "grapheme", minLength: 1, maxLength: 60 }).filter((t) =>
  t.trim().length > 0 && !t.includes("\u0000")
)
const arbitraryFact = FastCheck.record({
  text: factText,
  kind: FastCheck.constantFrom<UserFacts.Kind>("identity", "preference", "fact"),
  confidence: FastCheck.double({ min: 0, max: 1, noNaN: true }),
  sourceRequestId: FastCheck.string({ unit: "grapheme", maxLength: 20 }).filter((t) => !t.includes("\u0000")),
  tenant: FastCheck.option(FastCheck.constantFrom("acme", "globex"), { nil: undefined })
})

const texts = (facts: ReadonlyArray<UserFacts.UserFact>) => facts.map((f) => f.text).sort()

export const userFactsConformance = (name: string, makeLayer: MakeLayer) => {
  describe(`UserFacts conformance: ${name}`, () => {
    it.effect("put: a fact comes back typed (user, kind, confidence, source request, times)", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(1_000)
        const stored = yield* UserFacts.put(fact("u-1", "  Lives in Lisbon ", { kind: "identity", tenant: "acme" }))
        expect(stored).toEqual({
          id: UserFacts.factId("u-1", "Lives in Lisbon", "acme"),
          userId: "u-1",
          tenant: "acme",
          text: "Lives in Lisbon",
          kind: "identity",
          confidence: 0.8,
          sourceRequestId: "r-1",
          createdAt: 1_000
        })
        expect(yield* UserFacts.list("u-1")).toEqual([stored])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("the same fact re-extracted (case, spacing, trailing punctuation aside) replaces the first; another user's is apart", () =>
      Effect.gen(function*() {
        yield* UserFacts.put(fact("u-1", "Prefers EUR", { kind: "preference", confidence: 0.6 }))
        yield* TestClock.adjust(10)
        yield* UserFacts.put(
          fact("u-1", "prefers   eur.", { kind: "preference", confidence: 0.9, sourceRequestId: "r-2" })
        )
        yield* UserFacts.put(fact("u-2", "Prefers EUR", { kind: "preference" }))
        const facts = yield* UserFacts.list("u-1")
        expect(facts.map((f) => [f.text, f.confidence, f.sourceRequestId])).toEqual([["prefers   eur.", 0.9, "r-2"]])
        expect(UserFacts.factId("u-1", "Prefers EUR")).not.toBe(UserFacts.factId("u-2", "Prefers EUR"))
        expect(UserFacts.factId("u-1", "Prefers EUR")).not.toBe(UserFacts.factId("u-1", "Prefers EUR", "acme"))
        expect(yield* UserFacts.list("u-2")).toHaveLength(1)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("identity: only the user's identity facts, newest first, at most limit", () =>
      Effect.gen(function*() {
        yield* UserFacts.put(fact("u-1", "Is called Ada", { kind: "identity" }))
        yield* TestClock.adjust(1)
        yield* UserFacts.put(fact("u-1", "Prefers trains", { kind: "preference" }))
        yield* TestClock.adjust(1)
        yield* UserFacts.put(fact("u-1", "Works as a pilot", { kind: "identity" }))
        yield* UserFacts.put(fact("u-2", "Is called Bob", { kind: "identity" }))
        expect((yield* UserFacts.identity("u-1")).map((f) => f.text)).toEqual(["Works as a pilot", "Is called Ada"])
        expect((yield* UserFacts.identity("u-1", { limit: 1 })).map((f) => f.text)).toEqual(["Works as a pilot"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("relevant: best first by cosine, minScore honoured, facts without an embedding never found", () =>
      Effect.gen(function*() {
        yield* UserFacts.put(fact("u-1", "likes tea", { embedding: [1, 0] }))
        yield* UserFacts.put(fact("u-1", "likes coffee", { embedding: [0.6, 0.8] }))
        yield* UserFacts.put(fact("u-1", "likes jazz", { embedding: [0, 1] }))
        yield* UserFacts.put(fact("u-1", "no vector"))
        yield* UserFacts.put(fact("u-2", "other user's tea", { embedding: [1, 0] }))
        const hits = yield* UserFacts.relevant("u-1", { vector: [1, 0], limit: 10, minScore: 0.5 })
        expect(hits.map((h) => h.fact.text)).toEqual(["likes tea", "likes coffee"])
        expect(hits[0]!.score).toBeCloseTo(1, 5)
        expect(hits[1]!.score).toBeCloseTo(0.6, 5)
        expect((yield* UserFacts.relevant("u-1", { vector: [1, 0], limit: 1 })).map((h) => h.fact.text)).toEqual([
          "likes tea"
        ])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("tenant: reads with a tenant see only that tenant's facts; forget with a tenant removes only those", () =>
      Effect.gen(function*() {
        yield* UserFacts.put(fact("u-1", "acme fact", { tenant: "acme", embedding: [1, 0] }))
        yield* UserFacts.put(fact("u-1", "globex fact", { tenant: "globex", embedding: [1, 0] }))
        expect(texts(yield* UserFacts.list("u-1", { tenant: "acme" }))).toEqual(["acme fact"])
        expect(texts(yield* UserFacts.list("u-1"))).toEqual(["acme fact", "globex fact"])
        const hits = yield* UserFacts.relevant("u-1", { vector: [1, 0], limit: 5, tenant: "globex" })
        expect(hits.map((h) => h.fact.text)).toEqual(["globex fact"])
        expect(yield* UserFacts.forget("u-1", { tenant: "acme" })).toBe(1)
        expect(texts(yield* UserFacts.list("u-1"))).toEqual(["globex fact"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("retention: a fact with a ttl expires on the Clock; one without stays", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(10_000)
        const short = yield* UserFacts.put(fact("u-1", "visiting Rome this week", { ttl: "1 hour" }))
        expect(short.expiresAt).toBe(10_000 + 3_600_000)
        yield* UserFacts.put(fact("u-1", "speaks Portuguese"))
        yield* TestClock.adjust("59 minutes")
        expect(texts(yield* UserFacts.list("u-1"))).toEqual(["speaks Portuguese", "visiting Rome this week"])
        yield* TestClock.adjust("1 minute")
        expect(texts(yield* UserFacts.list("u-1"))).toEqual(["speaks Portuguese"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("forget: every fact of one user is gone (expired ones too), and nothing of another", () =>
      Effect.gen(function*() {
        yield* UserFacts.put(fact("u-1", "a", { kind: "identity" }))
        yield* UserFacts.put(fact("u-1", "b", { embedding: [1, 0] }))
        yield* UserFacts.put(fact("u-1", "c", { ttl: 5 }))
        yield* UserFacts.put(fact("u-2", "d"))
        yield* TestClock.adjust(10)
        expect(yield* UserFacts.forget("u-1")).toBe(3)
        expect(yield* UserFacts.list("u-1")).toEqual([])
        expect(yield* UserFacts.identity("u-1")).toEqual([])
        expect(yield* UserFacts.relevant("u-1", { vector: [1, 0], limit: 5 })).toEqual([])
        expect(texts(yield* UserFacts.list("u-2"))).toEqual(["d"])
        expect(yield* UserFacts.forget("u-1")).toBe(0)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("invalid input is refused, nothing written: empty text, confidence out of range, bad ttl, empty user", () =>
      Effect.gen(function*() {
        const refusals = [
          fact("u-1", "   "),
          fact("u-1", "x", { confidence: 1.5 }),
          fact("u-1", "x", { confidence: Number.NaN }),
          fact("u-1", "x", { ttl: -5 }),
          fact("", "x")
        ]
        for (const input of refusals) {
          const error = yield* Effect.flip(UserFacts.put(input))
          expect(error.reason).toBe("invalid_input")
        }
        expect(yield* UserFacts.list("u-1")).toEqual([])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("a stored item whose payload does not decode is a typed corrupt error, not a crash", () =>
      Effect.gen(function*() {
        const store = yield* VectorStore
        yield* store.put({
          collection: UserFacts.collection,
          id: "bad",
          partition: "u-1",
          keys: { kind: "identity" },
          text: "t",
          payload: { kind: "identity", confidence: 7 },
          embedding: [1, 0]
        })
        const reads: ReadonlyArray<Effect.Effect<unknown, VectorStoreError, VectorStore>> = [
          UserFacts.list("u-1"),
          UserFacts.identity("u-1"),
          UserFacts.relevant("u-1", { vector: [1, 0], limit: 1 })
        ]
        for (const read of reads) {
          const error = yield* Effect.flip(read)
          expect(error.reason).toBe("corrupt")
          expect(error.detail).toContain("user fact bad")
        }
      }).pipe(Effect.provide(makeLayer())))

    it.effect.prop(
      "property — a fact round-trips: what put returns is what list reads back, and re-putting its text re-spelled replaces it",
      [arbitraryFact],
      ([input]) =>
        Effect.gen(function*() {
          const stored = yield* UserFacts.put({ userId: "u-p", ...input })
          expect(stored).toMatchObject({
            userId: "u-p",
            text: input.text.trim(),
            kind: input.kind,
            confidence: input.confidence,
            sourceRequestId: input.sourceRequestId
          })
          expect(stored.tenant).toBe(input.tenant)
          expect(yield* UserFacts.list("u-p")).toEqual([stored])
          yield* UserFacts.put({ userId: "u-p", ...input, text: `  ${input.text.toUpperCase()}  ` })
          const again = yield* UserFacts.list("u-p")
          // Upper-casing can change a text's normalization (ß → SS): then it is another fact.
          const same = UserFacts.normalize(input.text.toUpperCase()) === UserFacts.normalize(input.text)
          expect(again.length).toBe(same ? 1 : 2)
        }).pipe(Effect.provide(makeLayer())),
      { fastCheck: { numRuns: propertyRuns(100, 20) } }
    )
  })
}
