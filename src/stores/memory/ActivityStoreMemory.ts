/**
 * The in-memory activity signal backend: one process's signals. Reached as
 * `ActivityStore.layerMemory` (front and backend) or
 * `ActivityStore.layerStoreMemory` (the backend alone); it runs the same
 * conformance suite as the SQL and Redis backends.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { type ActivitySignal, ActivitySignalStore, type ActivityStore, layer } from "../contract/ActivityStore.js"

/**
 * Builds the in-memory backend. Expired signals are dropped as new ones
 * arrive.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 *
 * const store = ActivityStore.make.pipe(
 *   Effect.provideServiceEffect(ActivityStore.ActivitySignalStore, ActivityStore.makeStoreMemory)
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeStoreMemory: Effect.Effect<ActivitySignalStore.Service> = Effect.sync(() => {
  const signals = new Map<string, ActivitySignal>()
  return ActivitySignalStore.of({
    put: (signal, now) =>
      Effect.sync(() => {
        for (const [id, stored] of signals) if (stored.expiresAt <= now) signals.delete(id)
        signals.set(signal.signalId, signal)
      }),
    extend: (signalId, expiresAt, now) =>
      Effect.sync(() => {
        const stored = signals.get(signalId)
        if (stored === undefined || stored.expiresAt <= now) return false
        signals.set(signalId, { ...stored, expiresAt })
        return true
      }),
    delete: (signalId) => Effect.sync(() => signals.delete(signalId)),
    list: (domain, now) =>
      Effect.sync(() => [...signals.values()].filter((s) => s.domain === domain && s.expiresAt > now))
  })
})

/**
 * The in-memory backend alone, for `ActivityStore.layer`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 *
 * const ActivityLive = ActivityStore.layer.pipe(Layer.provide(ActivityStore.layerStoreMemory))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStoreMemory: Layer.Layer<ActivitySignalStore> = Layer.effect(ActivitySignalStore, makeStoreMemory)

/**
 * An activity store in memory: signals are shared by the requests of one
 * process (use the SQL or Redis backend to coordinate several processes).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ActivityStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* ActivityStore.ActivityStore
 *   yield* store.announce(
 *     { signalId: "bot-a/r1", domain: "payments", agent: "bot-a", requestId: "r1", summary: "restarting the gateway" },
 *     "30 seconds"
 *   )
 *   return yield* store.listActive("payments") // [the signal], until it expires or is removed
 * }).pipe(Effect.provide(ActivityStore.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ActivityStore> = layer.pipe(Layer.provide(layerStoreMemory))
