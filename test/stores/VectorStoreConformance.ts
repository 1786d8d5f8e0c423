/**
 * The VectorStore conformance suite: every backend runs it (memory, SQLite
 * with `sqlite-vec`, SQLite by brute force, PostgreSQL by brute force).
 *
 * ```ts
 * import { layerMemory } from "../../src/stores/VectorStore.js"
 * import { vectorStoreConformance } from "./VectorStoreConformance.js"
 *
 * vectorStoreConformance("memory", () => Layer.orDie(layerMemory()), "memory")
 * ```
 *
 * Time is driven by `TestClock`; every test builds a fresh store from
 * `makeLayer`. The suite uses only the service interface.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, type Layer, Option, TestClock } from "effect"
import {
  type Item,
  type PutInput,
  type SearchMode,
  VectorStore,
  type VectorStoreError
} from "../../src/stores/VectorStore.js"
import { propertyRuns } from "../support/PropertyRuns.js"

/** Builds a fresh, empty store. */
export type MakeVectorStoreLayer = () => Layer.Layer<VectorStore>

const f32 = (vector: ReadonlyArray<number>) => Array.from(Float32Array.from(vector))

const item = (id: string, embedding: ReadonlyArray<number> | undefined, extra: Partial<PutInput> = {}): PutInput => ({
  collection: "facts",
  id,
  partition: "u-1",
  keys: {},
  text: `text of ${id}`,
  payload: { id },
  ...(embedding === undefined ? {} : { embedding }),
  ...extra
})

const putAll = (items: ReadonlyArray<PutInput>) =>
  Effect.flatMap(VectorStore, (store) => Effect.forEach(items, store.put, { discard: true }))

const search = (
  query: Partial<Parameters<VectorStore.Service["search"]>[0]> & { readonly vector: ReadonlyArray<number> }
) =>
  Effect.flatMap(VectorStore, (store) => store.search({ collection: "facts", partition: "u-1", limit: 10, ...query }))

const idsOf = (hits: ReadonlyArray<{ readonly item: Item }>) => hits.map((hit) => hit.item.id)

/** Below this norm a vector has no direction (the store's rule). */
const minNorm = 1e-12

/** Cosine as the reference computes it: float32 values, double arithmetic; undefined for a zero vector. */
const referenceCosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number | undefined => {
  const x = f32(a)
  const y = f32(b)
  let dot = 0
  let nx = 0
  let ny = 0
  for (let i = 0; i < x.length; i++) {
    dot += x[i]! * y[i]!
    nx += x[i]! * x[i]!
    ny += y[i]! * y[i]!
  }
  return Math.sqrt(nx) < minNorm || Math.sqrt(ny) < minNorm ? undefined : dot / Math.sqrt(nx * ny)
}

const quarter = FastCheck.integer({ min: -4, max: 4 }).map((n) => n / 4)
const fine = FastCheck.double({ min: -1, max: 1, noNaN: true, noDefaultInfinity: true })
const vectorOf = (dims: number) => FastCheck.array(FastCheck.oneof(quarter, fine), { minLength: dims, maxLength: dims })

/** Random items (dims 4, some 3, some without an embedding) in two partitions, two key dimensions. */
const stored = FastCheck.array(
  FastCheck.record({
    dims: FastCheck.constantFrom(4, 4, 4, 3, 0),
    partition: FastCheck.constantFrom("a", "b"),
    tenant: FastCheck.constantFrom("t1", "t2", undefined),
    locale: FastCheck.constantFrom("en", "fr", undefined),
    createdAt: FastCheck.integer({ min: 0, max: 5 }),
    seed: FastCheck.array(fine, { minLength: 4, maxLength: 4 }),
    quantized: vectorOf(4),
    useQuantized: FastCheck.boolean()
  }),
  { maxLength: 40 }
)
const queries = FastCheck.record({
  vector: vectorOf(4),
  limit: FastCheck.integer({ min: 1, max: 12 }),
  minScore: FastCheck.option(FastCheck.double({ min: -1, max: 1, noNaN: true }), { nil: undefined }),
  tenant: FastCheck.constantFrom("t1", "t2", undefined),
  locale: FastCheck.constantFrom("en", "fr", undefined)
})

const EPS = 1e-4

/**
 * Registers the conformance suite for one backend.
 *
 * @param name - the backend's name, shown in the describe block
 * @param makeLayer - builds a fresh, empty store
 * @param mode - how the backend must say it ranks
 */
export const vectorStoreConformance = (name: string, makeLayer: MakeVectorStoreLayer, mode: SearchMode): void => {
  describe(`VectorStore conformance: ${name}`, () => {
    it.effect(`mode: the store ranks as ${mode}`, () =>
      Effect.gen(function*() {
        expect(yield* (yield* VectorStore).mode).toBe(mode)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("put then get: the item comes back with float32 embedding; unknown ids are None", () =>
      Effect.gen(function*() {
        const store = yield* VectorStore
        yield* TestClock.setTime(1_000)
        const written = yield* store.put(
          item("f1", [0.1, 0.2, 0.3], {
            keys: { tenant: "acme", user: "u-1" },
            text: "«ünï» \u2028 \"q\"",
            payload: { a: [1, { b: null }], "": "é" }
          })
        )
        expect(written).toEqual({
          collection: "facts",
          id: "f1",
          partition: "u-1",
          keys: { tenant: "acme", user: "u-1" },
          text: "«ünï» \u2028 \"q\"",
          payload: { a: [1, { b: null }], "": "é" },
          embedding: f32([0.1, 0.2, 0.3]),
          createdAt: 1_000
        })
        expect(Option.getOrUndefined(yield* store.get({ collection: "facts", id: "f1" }))).toEqual(written)
        yield* store.put(item("plain", undefined, { createdAt: 5, expiresAt: 9_999 }))
        expect(Option.getOrUndefined(yield* store.get({ collection: "facts", id: "plain" }))).toEqual({
          ...item("plain", undefined),
          createdAt: 5,
          expiresAt: 9_999
        })
        expect(Option.isNone(yield* store.get({ collection: "facts", id: "missing" }))).toBe(true)
        expect(Option.isNone(yield* store.get({ collection: "other", id: "f1" }))).toBe(true)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("upsert: a put with an existing collection + id replaces the item (partition included); collections are apart", () =>
      Effect.gen(function*() {
        const store = yield* VectorStore
        yield* putAll([item("x", [1, 0]), item("x", [1, 0], { collection: "cache", text: "other collection" })])
        yield* store.put(item("x", [0, 1], { partition: "u-2", text: "replaced" }))
        expect(yield* store.recent({ collection: "facts", partition: "u-1", limit: 10 })).toEqual([])
        const now = yield* store.recent({ collection: "facts", partition: "u-2", limit: 10 })
        expect(now.map((i) => [i.id, i.text, i.embedding])).toEqual([["x", "replaced", [0, 1]]])
        expect(idsOf(yield* search({ partition: "u-2", vector: [0, 1] }))).toEqual(["x"])
        expect(idsOf(yield* search({ partition: "u-1", vector: [1, 0] }))).toEqual([])
        const other = yield* store.get({ collection: "cache", id: "x" })
        expect(Option.map(other, (i) => i.text)).toEqual(Option.some("other collection"))
      }).pipe(Effect.provide(makeLayer())))

    it.effect("search filters by partition and keys: only items whose keys include every given key=value", () =>
      Effect.gen(function*() {
        yield* putAll([
          item("acme-en", [1, 0], { keys: { tenant: "acme", locale: "en" } }),
          item("acme-fr", [1, 0], { keys: { tenant: "acme", locale: "fr" } }),
          item("globex", [1, 0], { keys: { tenant: "globex", locale: "en" } }),
          item("bare", [1, 0]),
          item("other-user", [1, 0], { partition: "u-2", keys: { tenant: "acme", locale: "en" } })
        ])
        const ids = (keys?: Record<string, string>) =>
          Effect.map(search({ vector: [1, 0], ...(keys === undefined ? {} : { keys }) }), (hits) => idsOf(hits).sort())
        expect(yield* ids()).toEqual(["acme-en", "acme-fr", "bare", "globex"])
        expect(yield* ids({ tenant: "acme" })).toEqual(["acme-en", "acme-fr"])
        expect(yield* ids({ tenant: "acme", locale: "en" })).toEqual(["acme-en"])
        expect(yield* ids({ tenant: "acme", locale: "de" })).toEqual([])
        expect(yield* ids({ model: "gpt" })).toEqual([])
        expect(idsOf(yield* search({ partition: "u-2", vector: [1, 0], keys: { tenant: "acme" } }))).toEqual([
          "other-user"
        ])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("dimension mismatch: items whose embedding has other dimensions (or none, or zero) are never found", () =>
      Effect.gen(function*() {
        yield* putAll([
          item("two", [1, 0]),
          item("three", [1, 0, 0]),
          item("none", undefined),
          item("zero", [0, 0])
        ])
        expect(idsOf(yield* search({ vector: [1, 0] }))).toEqual(["two"])
        expect(idsOf(yield* search({ vector: [1, 0, 0] }))).toEqual(["three"])
        expect(idsOf(yield* search({ vector: [1, 0, 0, 0] }))).toEqual([])
        // A zero query has no direction: it finds nothing.
        expect(yield* search({ vector: [0, 0] })).toEqual([])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("minScore: items scoring below it are left out; scores are cosine similarities", () =>
      Effect.gen(function*() {
        yield* putAll([
          item("same", [2, 0]),
          item("diagonal", [1, 1]),
          item("orthogonal", [0, 3]),
          item("opposite", [-1, 0])
        ])
        const all = yield* search({ vector: [1, 0] })
        expect(idsOf(all)).toEqual(["same", "diagonal", "orthogonal", "opposite"])
        const scores = all.map((hit) => hit.score)
        for (const [got, want] of scores.map((s, i) => [s, [1, Math.SQRT1_2, 0, -1][i]!] as const)) {
          expect(got).toBeCloseTo(want, 5)
        }
        expect(idsOf(yield* search({ vector: [1, 0], minScore: 0.5 }))).toEqual(["same", "diagonal"])
        expect(idsOf(yield* search({ vector: [1, 0], minScore: 0.99 }))).toEqual(["same"])
        expect(idsOf(yield* search({ vector: [1, 0], minScore: -0.5 }))).toEqual(["same", "diagonal", "orthogonal"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("ordering: best first, ties newer first then by id; limit keeps the best", () =>
      Effect.gen(function*() {
        yield* putAll([
          item("b-old", [1, 1], { createdAt: 1 }),
          item("a-new", [1, 1], { createdAt: 2 }),
          item("c-new", [1, 1], { createdAt: 2 }),
          item("best", [1, 0.9], { createdAt: 0 }),
          item("worst", [0, 1], { createdAt: 9 })
        ])
        expect(idsOf(yield* search({ vector: [1, 0.9] }))).toEqual(["best", "a-new", "c-new", "b-old", "worst"])
        expect(idsOf(yield* search({ vector: [1, 0.9], limit: 2 }))).toEqual(["best", "a-new"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("recent: newest first (ties by id), since and keys filter, limit", () =>
      Effect.gen(function*() {
        yield* putAll([
          item("e1", undefined, { createdAt: 10 }),
          item("e2", [1, 0], { createdAt: 30, keys: { kind: "error" } }),
          item("e3", undefined, { createdAt: 20 }),
          item("e0", undefined, { createdAt: 30 }),
          item("elsewhere", undefined, { createdAt: 40, partition: "u-2" })
        ])
        const store = yield* VectorStore
        const recent = (query: Partial<Parameters<VectorStore.Service["recent"]>[0]>) =>
          Effect.map(store.recent({ collection: "facts", partition: "u-1", limit: 10, ...query }), (items) =>
            items.map((i) => i.id))
        expect(yield* recent({})).toEqual(["e0", "e2", "e3", "e1"])
        expect(yield* recent({ limit: 2 })).toEqual(["e0", "e2"])
        expect(yield* recent({ since: 20 })).toEqual(["e0", "e2", "e3"])
        expect(yield* recent({ keys: { kind: "error" } })).toEqual(["e2"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("expiry: an item is live while now < expiresAt; expired items are never returned; purgeExpired deletes only them", () =>
      Effect.gen(function*() {
        const store = yield* VectorStore
        yield* putAll([
          item("short", [1, 0], { expiresAt: 1_000 }),
          item("long", [1, 0], { expiresAt: 5_000 }),
          item("forever", [1, 0])
        ])
        yield* TestClock.setTime(999)
        expect(idsOf(yield* search({ vector: [1, 0] })).sort()).toEqual(["forever", "long", "short"])
        yield* TestClock.setTime(1_000)
        expect(idsOf(yield* search({ vector: [1, 0] })).sort()).toEqual(["forever", "long"])
        expect(Option.isNone(yield* store.get({ collection: "facts", id: "short" }))).toBe(true)
        expect((yield* store.recent({ collection: "facts", partition: "u-1", limit: 10 })).map((i) => i.id).sort())
          .toEqual(["forever", "long"])
        expect(yield* store.purgeExpired).toBe(1)
        expect(yield* store.purgeExpired).toBe(0)
        yield* TestClock.setTime(6_000)
        expect(yield* store.purgeExpired).toBe(1)
        expect(idsOf(yield* search({ vector: [1, 0] }))).toEqual(["forever"])
        // A rewrite without expiry lives again.
        yield* store.put(item("short", [1, 0]))
        expect(idsOf(yield* search({ vector: [1, 0] })).sort()).toEqual(["forever", "short"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("remove by user partition: a user is forgotten across their items, nobody else's", () =>
      Effect.gen(function*() {
        const store = yield* VectorStore
        yield* putAll([
          item("u1-a", [1, 0]),
          item("u1-b", undefined, { expiresAt: 1 }),
          item("u2-a", [1, 0], { partition: "u-2" }),
          item("u1-cache", [1, 0], { collection: "cache" })
        ])
        yield* TestClock.setTime(10)
        // Expired items are removed too: forgetting leaves nothing behind.
        expect(yield* store.remove({ collection: "facts", partition: "u-1" })).toBe(2)
        expect(yield* store.purgeExpired).toBe(0)
        expect(yield* store.recent({ collection: "facts", partition: "u-1", limit: 10 })).toEqual([])
        expect(idsOf(yield* search({ partition: "u-2", vector: [1, 0] }))).toEqual(["u2-a"])
        expect(Option.isSome(yield* store.get({ collection: "cache", id: "u1-cache" }))).toBe(true)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("remove by keys, by ids (an empty list removes nothing), and a whole collection", () =>
      Effect.gen(function*() {
        const store = yield* VectorStore
        yield* putAll([
          item("k1", [1, 0], { keys: { user: "u-9", tenant: "acme" } }),
          item("k2", [1, 0], { partition: "u-2", keys: { user: "u-9" } }),
          item("k3", [1, 0], { keys: { user: "u-8" } }),
          item("k4", [1, 0], { partition: "u-3" }),
          item("k5", [1, 0], { partition: "u-3" })
        ])
        expect(yield* store.remove({ collection: "facts", keys: { user: "u-9" } })).toBe(2)
        expect(yield* store.remove({ collection: "facts", ids: [] })).toBe(0)
        expect(yield* store.remove({ collection: "facts", ids: ["k4", "nope"] })).toBe(1)
        expect(yield* store.remove({ collection: "facts", partition: "u-1", ids: ["k5"] })).toBe(0)
        expect(yield* store.remove({ collection: "other" })).toBe(0)
        expect(yield* store.remove({ collection: "facts" })).toBe(2)
        expect(yield* store.recent({ collection: "facts", partition: "u-3", limit: 10 })).toEqual([])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("validation: bad input fails with invalid_input and writes nothing", () =>
      Effect.gen(function*() {
        const store = yield* VectorStore
        const refused = <R>(effect: Effect.Effect<unknown, VectorStoreError, R>) =>
          Effect.map(Effect.flip(effect), (error) => {
            expect(error._tag).toBe("VectorStoreError")
            expect(error.reason).toBe("invalid_input")
            return error.detail
          })
        const bad: ReadonlyArray<[string, PutInput]> = [
          ["collection must not be empty", item("x", [1], { collection: "" })],
          ["id must not be empty", item("", [1])],
          ["partition must not be empty", item("x", [1], { partition: "" })],
          ["embedding[1] is not a finite number", item("x", [1, Number.NaN])],
          ["embedding[0] is not a finite number", item("x", [Number.POSITIVE_INFINITY])],
          ["embedding[0] is outside the float32 range", item("x", [1e300])],
          ["embedding has 0 dimensions", item("x", [])],
          ["embedding has 4097 dimensions", item("x", new Array(4097).fill(0.1))],
          ["text is 65537 bytes", item("x", [1], { text: "a".repeat(65_537) })],
          ["text is", item("x", [1], { text: "é".repeat(40_000) })],
          ["payload is", item("x", [1], { payload: { big: "a".repeat(262_144) } })],
          ["payload must be a JSON object", item("x", [1], { payload: JSON.parse("[1]") })],
          ["text contains a NUL character", item("x", [1], { text: "a\u0000b" })],
          ["id is not well-formed Unicode", item("x\ud800", [1])],
          ["key name", item("x", [1], { keys: { "bad key": "v" } })],
          [
            "more than 16 keys",
            item("x", [1], { keys: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) })
          ],
          ["expiresAt must be", item("x", [1], { expiresAt: 1.5 })],
          ["id is longer than 256", item("x".repeat(257), [1])]
        ]
        for (const [detail, input] of bad) expect(yield* refused(store.put(input))).toContain(detail)
        expect(yield* store.recent({ collection: "facts", partition: "u-1", limit: 10 })).toEqual([])
        expect(yield* refused(search({ vector: [1, 0], limit: 0 }))).toContain("limit")
        expect(yield* refused(search({ vector: [1, 0], limit: 1001 }))).toContain("limit")
        expect(yield* refused(search({ vector: [1, 0], minScore: 2 }))).toContain("minScore")
        expect(yield* refused(search({ vector: [Number.NaN] }))).toContain("vector[0]")
        expect(yield* refused(search({ vector: [1], partition: "" }))).toContain("partition")
        expect(yield* refused(store.recent({ collection: "facts", partition: "u-1", limit: 0 }))).toContain("limit")
        expect(yield* refused(store.get({ collection: "facts", id: "" }))).toContain("id")
        expect(yield* refused(store.remove({ collection: "" }))).toContain("collection")
        expect(yield* refused(store.remove({ collection: "facts", ids: [""] }))).toContain("id")
      }).pipe(Effect.provide(makeLayer())))

    it.effect.prop(
      "property — search equals a brute-force cosine reference over random vectors, partitions and keys",
      [stored, queries],
      ([items, query]) =>
        Effect.gen(function*() {
          const store = yield* VectorStore
          const inputs = items.map((spec, i): PutInput => {
            const vector = spec.useQuantized ? spec.quantized : spec.seed
            const keys: Record<string, string> = {}
            if (spec.tenant !== undefined) keys["tenant"] = spec.tenant
            if (spec.locale !== undefined) keys["locale"] = spec.locale
            return item(`i${i}`, spec.dims === 0 ? undefined : vector.slice(0, spec.dims), {
              partition: spec.partition,
              keys,
              createdAt: spec.createdAt
            })
          })
          yield* putAll(inputs)
          const wanted: Record<string, string> = {}
          if (query.tenant !== undefined) wanted["tenant"] = query.tenant
          if (query.locale !== undefined) wanted["locale"] = query.locale
          const hits = yield* store.search({
            collection: "facts",
            partition: "a",
            vector: query.vector,
            limit: query.limit,
            minScore: query.minScore,
            keys: wanted
          })
          const reference = new Map<string, number>()
          for (const input of inputs) {
            if (input.partition !== "a" || input.embedding?.length !== 4) continue
            if (!Object.entries(wanted).every(([k, v]) => input.keys?.[k] === v)) continue
            const score = referenceCosine(query.vector, input.embedding)
            if (score !== undefined) reference.set(input.id, score)
          }
          const min = query.minScore ?? -2
          const sure = [...reference.values()].filter((s) => s >= min + EPS).length
          const maybe = [...reference.values()].filter((s) => s >= min - EPS).length
          expect(hits.length).toBeGreaterThanOrEqual(Math.min(query.limit, sure))
          expect(hits.length).toBeLessThanOrEqual(Math.min(query.limit, maybe))
          expect(new Set(idsOf(hits)).size).toBe(hits.length)
          for (const [i, hit] of hits.entries()) {
            const want = reference.get(hit.item.id)
            expect(want, `${hit.item.id} is not a candidate`).toBeDefined()
            expect(Math.abs(hit.score - want!)).toBeLessThan(EPS)
            expect(hit.score).toBeGreaterThanOrEqual(min - EPS)
            if (i > 0) expect(hit.score).toBeLessThanOrEqual(hits[i - 1]!.score + EPS)
          }
          // Nothing better was left out.
          const returned = new Set(idsOf(hits))
          const floor = hits.length === query.limit ? hits[hits.length - 1]!.score : min
          for (const [id, score] of reference) {
            if (!returned.has(id)) expect(score, `${id} was left out`).toBeLessThan(floor + EPS)
          }
        }).pipe(Effect.provide(makeLayer())),
      { fastCheck: { numRuns: propertyRuns(200, 40) } }
    )
  })
}
