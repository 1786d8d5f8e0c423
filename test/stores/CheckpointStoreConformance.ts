/**
 * The CheckpointStore conformance suite: every backend runs it.
 *
 * ```ts
 * import { layerMemory } from "../../src/stores/CheckpointStore.js"
 * import { checkpointStoreConformance } from "./CheckpointStoreConformance.js"
 *
 * checkpointStoreConformance("memory", () => layerMemory)
 * ```
 *
 * Time is driven by `TestClock`; every test builds a fresh store from
 * `makeLayer`, so backends must not share state between layer builds (a SQL
 * backend should hand out a fresh schema / table prefix per build). The
 * suite uses only the service interface.
 *
 * The contract: a resume claims a checkpoint under a lease; while the lease
 * holds (`now < expiresAt`) every other claim — the holder's own included —
 * is `AlreadyClaimed`; the holder `complete`s (deletes) or `release`s (frees)
 * it; a claim whose lease ran out can be claimed by another owner, and from
 * then on the old owner can neither complete nor release it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Array as Arr, Duration, Effect, Either, FastCheck, type Layer, Option, Schema, TestClock } from "effect"
import { type Checkpoint, Sealed } from "../../src/domain/Checkpoint.js"
import * as CheckpointKey from "../../src/stores/CheckpointKey.js"
import { CheckpointStore, type ClaimResult } from "../../src/stores/CheckpointStore.js"
import { propertyRuns } from "../support/PropertyRuns.js"

/** Builds a fresh, empty store. */
export type MakeCheckpointStoreLayer = () => Layer.Layer<CheckpointStore>

/** The key the suite seals its checkpoints with. */
const key = CheckpointKey.makeRandom()
const decodeUnsealed = Schema.decodeUnknownSync(Sealed.omit("planDigest"))

/** A checkpoint as the pipeline saves one (decoded from its wire form, then sealed). */
const makeCheckpoint = (checkpointId: string, reason = "trades need a human"): Checkpoint =>
  key.seal(decodeUnsealed({
    checkpointId,
    requestId: `request-of-${checkpointId}`,
    request: "Buy 10 shares of ACME",
    metadata: { user: { id: "u-1", tags: ["a", "b"] } },
    enrichments: { rag_context: "limits apply" },
    phase: 1,
    plan: {
      steps: [{
        step_id: "t1",
        namespace: "demo-tools",
        agent: "trading-service",
        capability: "execute_trade",
        parameters: { symbol: "ACME", quantity: 10, side: "buy" }
      }],
      terminal: true
    },
    priorPhases: [],
    reason,
    createdAt: 1_000
  }))

const LEASE = Duration.minutes(5)
const LEASE_MS = Duration.toMillis(LEASE)

const claimAs = (checkpointId: string, owner: string, leaseFor: Duration.DurationInput = LEASE) =>
  Effect.flatMap(CheckpointStore, (store) => store.claim(checkpointId, { owner, leaseFor }))

/** The claim a `Claimed` result holds (fails the test for any other result). */
const claimed = (result: ClaimResult) => {
  if (result._tag !== "Claimed") throw new Error(`expected Claimed, got ${result._tag}`)
  return result
}

/** Claimants (2..16, with distinct owner names) and, per claimant, how many times it yields before claiming. */
const races = FastCheck.integer({ min: 2, max: 16 }).chain((n) =>
  FastCheck.tuple(
    FastCheck.shuffledSubarray(Arr.range(1, n), { minLength: n, maxLength: n }),
    FastCheck.array(FastCheck.nat(4), { minLength: n, maxLength: n })
  )
)

/**
 * Registers the conformance suite for one backend.
 *
 * @param name - the backend's name, shown in the describe block
 * @param makeLayer - builds a fresh, empty store
 */
export const checkpointStoreConformance = (name: string, makeLayer: MakeCheckpointStoreLayer): void => {
  describe(`CheckpointStore conformance: ${name}`, () => {
    it.effect("get of an unknown id is None; save then get returns the checkpoint", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        expect(Option.isNone(yield* store.get("missing"))).toBe(true)
        const checkpoint = makeCheckpoint("c1")
        yield* store.save(checkpoint)
        expect(Option.getOrUndefined(yield* store.get("c1"))).toEqual(checkpoint)
        expect(Option.isNone(yield* store.get("missing"))).toBe(true)
        expect(Option.isNone(yield* store.get(""))).toBe(true)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("tampered checkpoints: a checkpoint's seal survives the store — what get and claim return verifies with the key that sealed it", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        const checkpoint = key.seal(decodeUnsealed({
          checkpointId: "sealed",
          requestId: "r-sealed",
          request: "Buy 10 shares of ACME — «ünïcödé» \u2028 and \"quotes\"",
          // Parsed, so "__proto__" is an own key, as it is in wire JSON.
          metadata: JSON.parse(
            "{\"z\":1,\"a\":[0.1,-0,1e21,{\"\":null,\"__proto__\":\"kept\"}],\"nested\":{\"b\":true}}"
          ),
          enrichments: { rag_context: "limits apply", extra: { n: 2 } },
          phase: 2,
          plan: {
            steps: [{
              step_id: "t2",
              namespace: "demo-tools",
              agent: "trading-service",
              capability: "execute_trade",
              parameters: { symbol: "ACME", quantity: 10, side: "buy" },
              implicit_deps: ["q1"]
            }],
            reasoning: "the quote was fine"
          },
          priorPhases: [{
            phase: 1,
            plan: {
              steps: [{ step_id: "q1", namespace: "demo-tools", agent: "stock-service", capability: "stock_quote" }]
            },
            steps: [{
              step_id: "q1",
              namespace: "demo-tools",
              agent: "stock-service",
              capability: "stock_quote",
              status: "succeeded",
              output: { price: 12.5 },
              startedAt: 10,
              duration: 3
            }]
          }],
          reason: "trades need a human",
          createdAt: 1_234
        }))
        expect(Either.isRight(key.verify(checkpoint))).toBe(true)
        yield* store.save(checkpoint)
        const read = Option.getOrThrow(yield* store.get("sealed"))
        expect(key.verify(read)).toEqual(Either.right(read))
        const held = claimed(yield* claimAs("sealed", "a"))
        expect(key.verify(held.checkpoint)).toEqual(Either.right(held.checkpoint))
        expect(held.checkpoint.planDigest).toBe(checkpoint.planDigest)
        // Another key does not verify it.
        expect(Either.isLeft(CheckpointKey.makeRandom().verify(read))).toBe(true)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("claim of an unknown id is NotFound, and claims nothing", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        expect((yield* claimAs("missing", "a"))._tag).toBe("NotFound")
        yield* store.save(makeCheckpoint("other"))
        expect((yield* claimAs("missing", "a"))._tag).toBe("NotFound")
        expect(yield* store.complete("missing", "a")).toBe(false)
        expect(yield* store.release("missing", "a")).toBe(false)
        // The other checkpoint was not touched.
        expect((yield* claimAs("other", "b"))._tag).toBe("Claimed")
      }).pipe(Effect.provide(makeLayer())))

    it.effect("claim returns the checkpoint and a claim that holds for leaseFor from the Clock's now", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* TestClock.setTime(10_000)
        const checkpoint = makeCheckpoint("c")
        yield* store.save(checkpoint)
        const result = claimed(yield* claimAs("c", "owner-a", "90 seconds"))
        expect(result.checkpoint).toEqual(checkpoint)
        expect(result.claim).toEqual({ owner: "owner-a", expiresAt: 10_000 + 90_000 })
        // A claimed checkpoint is still readable.
        expect(Option.getOrUndefined(yield* store.get("c"))).toEqual(checkpoint)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("claim → complete deletes the checkpoint: get is None and a new claim is NotFound", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("c"))
        claimed(yield* claimAs("c", "a"))
        expect(yield* store.complete("c", "a")).toBe(true)
        expect(Option.isNone(yield* store.get("c"))).toBe(true)
        expect((yield* claimAs("c", "b"))._tag).toBe("NotFound")
        // Completing twice finds nothing.
        expect(yield* store.complete("c", "a")).toBe(false)
        expect(yield* store.release("c", "a")).toBe(false)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("claim → release → claim again works, for another owner too, with a fresh lease", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("c"))
        claimed(yield* claimAs("c", "a"))
        expect(yield* store.release("c", "a")).toBe(true)
        // A released checkpoint is still there, and claimable at once.
        expect(Option.isSome(yield* store.get("c"))).toBe(true)
        yield* TestClock.adjust("1 minute")
        const again = claimed(yield* claimAs("c", "b"))
        expect(again.claim).toEqual({ owner: "b", expiresAt: 60_000 + LEASE_MS })
        // Releasing twice: the first release freed it; "a" holds nothing now.
        expect(yield* store.release("c", "a")).toBe(false)
        expect(yield* store.complete("c", "a")).toBe(false)
        expect((yield* claimAs("c", "a"))._tag).toBe("AlreadyClaimed")
        expect(yield* store.release("c", "b")).toBe(true)
        expect((yield* claimAs("c", "a"))._tag).toBe("Claimed")
      }).pipe(Effect.provide(makeLayer())))

    it.effect("a live claim refuses every other claim, its own owner's included: AlreadyClaimed names the holder", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(5_000)
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("c"))
        claimed(yield* claimAs("c", "a"))
        const expected = { _tag: "AlreadyClaimed", owner: "a", expiresAt: 5_000 + LEASE_MS }
        expect(yield* claimAs("c", "b")).toMatchObject(expected)
        expect(yield* claimAs("c", "a")).toMatchObject(expected)
        // A refused claim does not extend or take over the lease.
        yield* TestClock.adjust("4 minutes")
        expect(yield* claimAs("c", "b")).toMatchObject(expected)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("only the holder can complete or release: another owner's complete and release change nothing", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("c"))
        // Nobody holds an unclaimed checkpoint.
        expect(yield* store.complete("c", "a")).toBe(false)
        expect(yield* store.release("c", "a")).toBe(false)
        expect(Option.isSome(yield* store.get("c"))).toBe(true)
        claimed(yield* claimAs("c", "a"))
        expect(yield* store.complete("c", "intruder")).toBe(false)
        expect(yield* store.release("c", "intruder")).toBe(false)
        expect(Option.isSome(yield* store.get("c"))).toBe(true)
        expect(yield* claimAs("c", "b")).toMatchObject({ _tag: "AlreadyClaimed", owner: "a" })
      }).pipe(Effect.provide(makeLayer())))

    it.effect("claims are per checkpoint", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("x"))
        yield* store.save(makeCheckpoint("y"))
        claimed(yield* claimAs("x", "a"))
        claimed(yield* claimAs("y", "b"))
        expect(yield* store.complete("x", "a")).toBe(true)
        expect(Option.isSome(yield* store.get("y"))).toBe(true)
        expect(yield* claimAs("y", "c")).toMatchObject({ _tag: "AlreadyClaimed", owner: "b" })
      }).pipe(Effect.provide(makeLayer())))

    it.effect("an expired claim can be re-claimed by another owner; the old owner can no longer complete or release", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("c"))
        const first = claimed(yield* claimAs("c", "a", "1 minute"))
        expect(first.claim.expiresAt).toBe(60_000)

        // 1 ms before its expiry, the lease still holds.
        yield* TestClock.adjust(59_999)
        expect(yield* claimAs("c", "b")).toMatchObject({ _tag: "AlreadyClaimed", owner: "a", expiresAt: 60_000 })

        // At its expiry, it no longer does: another owner claims it.
        yield* TestClock.adjust(1)
        const second = claimed(yield* claimAs("c", "b"))
        expect(second.claim).toEqual({ owner: "b", expiresAt: 60_000 + LEASE_MS })

        // The stale owner cannot delete or free the new claim.
        expect(yield* store.complete("c", "a")).toBe(false)
        expect(yield* store.release("c", "a")).toBe(false)
        expect(Option.isSome(yield* store.get("c"))).toBe(true)
        expect(yield* claimAs("c", "a")).toMatchObject({ _tag: "AlreadyClaimed", owner: "b" })

        // The new holder still can.
        expect(yield* store.complete("c", "b")).toBe(true)
        expect(Option.isNone(yield* store.get("c"))).toBe(true)
      }).pipe(Effect.provide(makeLayer())))

    it.effect("an owner whose lease ran out, and whom nobody re-claimed, still holds the claim (complete and release work)", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("late-complete"))
        yield* store.save(makeCheckpoint("late-release"))
        claimed(yield* claimAs("late-complete", "a", "1 minute"))
        claimed(yield* claimAs("late-release", "a", "1 minute"))
        yield* TestClock.adjust("10 minutes")
        expect(yield* store.complete("late-complete", "a")).toBe(true)
        expect(Option.isNone(yield* store.get("late-complete"))).toBe(true)
        expect(yield* store.release("late-release", "a")).toBe(true)
        expect((yield* claimAs("late-release", "b"))._tag).toBe("Claimed")
      }).pipe(Effect.provide(makeLayer())))

    it.effect("an expired claim can be re-claimed by its own owner, with a fresh lease", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("c"))
        claimed(yield* claimAs("c", "a", "1 minute"))
        yield* TestClock.adjust("2 minutes")
        const again = claimed(yield* claimAs("c", "a", "1 minute"))
        expect(again.claim).toEqual({ owner: "a", expiresAt: 180_000 })
      }).pipe(Effect.provide(makeLayer())))

    it.effect("save of an existing id replaces the checkpoint, unclaimed", () =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        yield* store.save(makeCheckpoint("c", "first"))
        claimed(yield* claimAs("c", "a"))
        const replacement = makeCheckpoint("c", "second")
        yield* store.save(replacement)
        expect(Option.getOrUndefined(yield* store.get("c"))).toEqual(replacement)
        expect(claimed(yield* claimAs("c", "b")).checkpoint).toEqual(replacement)
      }).pipe(Effect.provide(makeLayer())))

    it.effect.prop(
      "property — concurrent claims in random interleavings: exactly one is Claimed, every other is AlreadyClaimed naming it",
      [races],
      ([[owners, yields]]) =>
        Effect.gen(function*() {
          const store = yield* CheckpointStore
          yield* store.save(makeCheckpoint("contended"))
          const results = yield* Effect.forEach(
            owners,
            (n, i) =>
              Effect.gen(function*() {
                for (let k = 0; k < (yields[i] ?? 0); k++) yield* Effect.yieldNow()
                const owner = `owner-${n}`
                return [owner, yield* claimAs("contended", owner)] as const
              }),
            { concurrency: "unbounded" }
          )
          const winners = results.filter(([, result]) => result._tag === "Claimed")
          expect(winners).toHaveLength(1)
          const [winner, won] = winners[0]!
          const claim = claimed(won).claim
          expect(claim).toEqual({ owner: winner, expiresAt: LEASE_MS })
          for (const [owner, result] of results) {
            if (owner === winner) continue
            expect(result).toMatchObject({ _tag: "AlreadyClaimed", owner: winner, expiresAt: claim.expiresAt })
          }
          // Only the winner settles it.
          const settled = yield* Effect.forEach(owners, (n) => store.complete("contended", `owner-${n}`), {
            concurrency: "unbounded"
          })
          expect(settled.filter((done) => done)).toHaveLength(1)
          expect(Option.isNone(yield* store.get("contended"))).toBe(true)
        }).pipe(Effect.provide(makeLayer())),
      { fastCheck: { numRuns: propertyRuns(100) } }
    )

    it.effect.prop(
      "property — claim races over rounds: each round has one winner; its release lets exactly one claimant of the next round win",
      [races, FastCheck.integer({ min: 1, max: 5 })],
      ([[owners, yields], rounds]) =>
        Effect.gen(function*() {
          const store = yield* CheckpointStore
          yield* store.save(makeCheckpoint("c"))
          const winners: Array<string> = []
          for (let round = 0; round < rounds; round++) {
            const results = yield* Effect.forEach(
              owners,
              (n, i) =>
                Effect.gen(function*() {
                  for (let k = 0; k < ((yields[i] ?? 0) + round) % 5; k++) yield* Effect.yieldNow()
                  return [`owner-${n}`, yield* claimAs("c", `owner-${n}`)] as const
                }),
              { concurrency: "unbounded" }
            )
            const won = results.filter(([, result]) => result._tag === "Claimed").map(([owner]) => owner)
            expect(won).toHaveLength(1)
            winners.push(won[0]!)
            // Losers cannot free the winner's claim; the winner can.
            for (const [owner] of results) {
              if (owner !== won[0]) expect(yield* store.release("c", owner)).toBe(false)
            }
            expect(yield* store.release("c", won[0]!)).toBe(true)
          }
          expect(winners).toHaveLength(rounds)
          expect(Option.isSome(yield* store.get("c"))).toBe(true)
        }).pipe(Effect.provide(makeLayer())),
      { fastCheck: { numRuns: propertyRuns(50) } }
    )
  })
}
