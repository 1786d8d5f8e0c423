/**
 * The ActivityStore conformance suite: every backend runs it.
 *
 * ```ts
 * import { layerMemory } from "../../src/stores/ActivityStore.js"
 * import { activityStoreConformance } from "./ActivityStoreConformance.js"
 *
 * activityStoreConformance("memory", () => layerMemory)
 * ```
 *
 * Time is driven by `TestClock` — on every backend, Redis included (the front
 * service passes the clock's time to the backend). Every test builds a fresh
 * store from `makeLayer`, so backends must not share state between builds.
 *
 * Clause: C18 — activity signals with a TTL, renewed by their owner and
 * removed on every exit; concurrent activity is listed per domain.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, type Layer, TestClock } from "effect"
import type { Json } from "../../src/domain/Json.js"
import { type ActivitySignal, ActivityStore, type Announcement } from "../../src/stores/ActivityStore.js"

/** Builds a fresh, empty store. */
export type MakeActivityStoreLayer = () => Layer.Layer<ActivityStore>

const signal = (signalId: string, domain = "ops", extra: Partial<Announcement> = {}): Announcement => ({
  signalId,
  domain,
  agent: `agent-${signalId}`,
  requestId: `request-${signalId}`,
  summary: `working on ${signalId}`,
  ...extra
})

const ids = (signals: ReadonlyArray<ActivitySignal>) => signals.map((s) => s.signalId)

/** A random program of store calls and clock moves, checked against a model. */
type Step =
  | { readonly _tag: "announce"; readonly id: number; readonly domain: number; readonly ttl: number }
  | { readonly _tag: "renew"; readonly id: number; readonly ttl: number }
  | { readonly _tag: "remove"; readonly id: number }
  | { readonly _tag: "advance"; readonly millis: number }

const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  FastCheck.record({
    _tag: FastCheck.constant("announce" as const),
    id: FastCheck.nat(5),
    domain: FastCheck.nat(1),
    ttl: FastCheck.integer({ min: 1, max: 5_000 })
  }),
  FastCheck.record({
    _tag: FastCheck.constant("renew" as const),
    id: FastCheck.nat(5),
    ttl: FastCheck.integer({ min: 1, max: 5_000 })
  }),
  FastCheck.record({ _tag: FastCheck.constant("remove" as const), id: FastCheck.nat(5) }),
  FastCheck.record({ _tag: FastCheck.constant("advance" as const), millis: FastCheck.integer({ min: 0, max: 3_000 }) })
)

/**
 * Registers the conformance suite for one backend.
 *
 * @param name - the backend's name, shown in the describe block
 * @param makeLayer - builds a fresh, empty store
 * @param propertyRuns - runs of the model-based property (fewer on slow backends)
 */
export const activityStoreConformance = (name: string, makeLayer: MakeActivityStoreLayer, propertyRuns = 40): void => {
  describe(`ActivityStore conformance: ${name}`, () => {
    it.effect("C18: an announced signal is listed in its domain with its fields, times from the Clock", () =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        yield* TestClock.adjust("1 minute")
        const data: Json = { step: 2, targets: ["a", "b"], nested: { ok: true, none: null }, empty: [], ratio: 0.25 }
        const stored = yield* store.announce(signal("s1", "ops", { data }), "30 seconds")
        expect(stored).toStrictEqual({ ...signal("s1", "ops", { data }), announcedAt: 60_000, expiresAt: 90_000 })
        expect(yield* store.listActive("ops")).toStrictEqual([stored])
        expect(yield* store.listActive("other")).toEqual([])
        // Without data, no data field comes back.
        yield* store.announce(signal("s2"), "30 seconds")
        const listed = yield* store.listActive("ops")
        expect(ids(listed)).toEqual(["s1", "s2"])
        expect("data" in listed[1]!).toBe(false)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("C18: listActive keeps to its domain, leaves out excludeSignalId, orders by announcement, honours limit", () =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        yield* store.announce(signal("c"), "1 minute")
        yield* store.announce(signal("b"), "1 minute")
        yield* TestClock.adjust("1 second")
        yield* store.announce(signal("a"), "1 minute")
        yield* store.announce(signal("x", "billing"), "1 minute")
        expect(ids(yield* store.listActive("ops"))).toEqual(["b", "c", "a"])
        expect(ids(yield* store.listActive("ops", { excludeSignalId: "c" }))).toEqual(["b", "a"])
        expect(ids(yield* store.listActive("ops", { limit: 2 }))).toEqual(["b", "c"])
        expect(ids(yield* store.listActive("ops", { limit: 0 }))).toEqual([])
        expect(ids(yield* store.listActive("billing"))).toEqual(["x"])
        expect(ids(yield* store.listActive("ops", { excludeSignalId: "missing" }))).toEqual(["b", "c", "a"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("C18: a signal expires exactly at its TTL; an expired signal cannot be renewed", () =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        yield* store.announce(signal("s"), "10 seconds")
        yield* TestClock.adjust("9999 millis")
        expect(ids(yield* store.listActive("ops"))).toEqual(["s"])
        yield* TestClock.adjust("1 millis")
        expect(yield* store.listActive("ops")).toEqual([])
        expect(yield* store.renew("s", "10 seconds")).toBe(false)
        expect(yield* store.listActive("ops")).toEqual([])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("C18: renew moves the expiry to ttl from now; renewing an unknown signal is false", () =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        yield* store.announce(signal("s"), "10 seconds")
        yield* TestClock.adjust("8 seconds")
        expect(yield* store.renew("s", "10 seconds")).toBe(true)
        yield* TestClock.adjust("9 seconds")
        const [renewed] = yield* store.listActive("ops")
        expect(renewed?.expiresAt).toBe(18_000)
        expect(renewed?.announcedAt).toBe(0)
        // A shorter renewal shortens it.
        expect(yield* store.renew("s", "1 second")).toBe(true)
        yield* TestClock.adjust("1 second")
        expect(yield* store.listActive("ops")).toEqual([])
        expect(yield* store.renew("unknown", "10 seconds")).toBe(false)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("C18: announcing an id again replaces the signal, also across domains", () =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        yield* store.announce(signal("s", "ops", { summary: "first", data: { n: 1 } }), "10 seconds")
        yield* TestClock.adjust("5 seconds")
        yield* store.announce(signal("s", "ops", { summary: "second" }), "10 seconds")
        const [replaced] = yield* store.listActive("ops")
        expect(replaced).toStrictEqual({
          ...signal("s", "ops", { summary: "second" }),
          announcedAt: 5_000,
          expiresAt: 15_000
        })
        yield* store.announce(signal("s", "billing"), "10 seconds")
        expect(yield* store.listActive("ops")).toEqual([])
        expect(ids(yield* store.listActive("billing"))).toEqual(["s"])
        // Renewal and removal follow the signal to its new domain.
        expect(yield* store.renew("s", "1 minute")).toBe(true)
        expect(yield* store.remove("s")).toBe(true)
        expect(yield* store.listActive("billing")).toEqual([])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("C18: remove deletes a signal once; removing an unknown one is false", () =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        yield* store.announce(signal("a"), "1 minute")
        yield* store.announce(signal("b"), "1 minute")
        expect(yield* store.remove("a")).toBe(true)
        expect(yield* store.remove("a")).toBe(false)
        expect(yield* store.remove("never")).toBe(false)
        expect(ids(yield* store.listActive("ops"))).toEqual(["b"])
        // A removed signal stays removed: renewal does not bring it back.
        expect(yield* store.renew("a", "1 minute")).toBe(false)
        expect(ids(yield* store.listActive("ops"))).toEqual(["b"])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("invalid calls fail with ActivityStoreError naming the operation", () =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        const zeroTtl = yield* Effect.flip(store.announce(signal("s"), 0))
        expect(zeroTtl).toMatchObject({ _tag: "ActivityStoreError", operation: "announce" })
        const emptyId = yield* Effect.flip(store.announce(signal(""), "1 second"))
        expect(emptyId.detail).toContain("signalId")
        const badRenew = yield* Effect.flip(store.renew("s", "-1 second"))
        expect(badRenew.operation).toBe("renew")
        expect(yield* store.listActive("ops")).toEqual([])
      }).pipe(Effect.provide(makeLayer())))

    it.effect("C18: concurrent announcements, renewals and removals in one domain", () =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        const all = Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, "0")}`)
        yield* Effect.forEach(all, (id) => store.announce(signal(id), "1 minute"), { concurrency: "unbounded" })
        expect(ids(yield* store.listActive("ops")).sort()).toEqual(all)
        const removed = all.filter((_, i) => i % 2 === 0)
        const kept = all.filter((_, i) => i % 2 === 1)
        yield* TestClock.adjust("50 seconds")
        yield* Effect.all([
          Effect.forEach(removed, (id) => store.remove(id), { concurrency: "unbounded" }),
          Effect.forEach(kept, (id) => store.renew(id, "1 minute"), { concurrency: "unbounded" })
        ], { concurrency: "unbounded" })
        yield* TestClock.adjust("30 seconds")
        expect(ids(yield* store.listActive("ops")).sort()).toEqual(kept)
      }).pipe(Effect.provide(makeLayer())))

    it.effect.prop(
      "C18: property — any program of announce / renew / remove / clock moves lists exactly the model's live signals",
      [FastCheck.array(step, { minLength: 1, maxLength: 30 })],
      ([steps]) =>
        Effect.gen(function*() {
          const store = yield* ActivityStore
          // The model: signal id → its domain and expiry.
          const model = new Map<string, { readonly domain: string; expiresAt: number }>()
          let now = yield* TestClock.currentTimeMillis
          const live = (domain: string) =>
            [...model.entries()].filter(([, s]) => s.domain === domain && s.expiresAt > now).map(([id]) => id).sort()
          for (const s of steps) {
            switch (s._tag) {
              case "announce": {
                const domain = `d${s.domain}`
                yield* store.announce(signal(`s${s.id}`, domain), s.ttl)
                model.set(`s${s.id}`, { domain, expiresAt: now + s.ttl })
                break
              }
              case "renew": {
                const current = model.get(`s${s.id}`)
                const expected = current !== undefined && current.expiresAt > now
                expect(yield* store.renew(`s${s.id}`, s.ttl)).toBe(expected)
                if (expected) current.expiresAt = now + s.ttl
                break
              }
              case "remove": {
                // An expired signal may or may not still be stored: only a live one must be reported.
                const current = model.get(`s${s.id}`)
                const removed = yield* store.remove(`s${s.id}`)
                if (current !== undefined && current.expiresAt > now) expect(removed).toBe(true)
                if (current === undefined) expect(removed).toBe(false)
                model.delete(`s${s.id}`)
                break
              }
              case "advance": {
                yield* TestClock.adjust(s.millis)
                now += s.millis
                break
              }
            }
            for (const domain of ["d0", "d1"]) {
              const listed = yield* store.listActive(domain)
              expect(ids(listed).sort()).toEqual(live(domain))
              for (const l of listed) expect(l.expiresAt).toBe(model.get(l.signalId)?.expiresAt)
            }
          }
        }).pipe(Effect.provide(makeLayer())),
      { fastCheck: { numRuns: propertyRuns } }
    )
  })
}
