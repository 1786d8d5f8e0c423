/**
 * The in-memory MemoryStore: one process's records, matched by words.
 * Reached as `MemoryStore.layerMemory` / `MemoryStore.makeMemory`.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { MemoryStore, type StoredRecord } from "../contract/MemoryStore.js"

const words = (text: string): ReadonlyArray<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/**
 * Builds an in-memory store: a query matches the records that contain all
 * its words (case-insensitive), newest first.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* MemoryStore.makeMemory
 *   yield* store.store("user:42", { content: "Trades from Lisbon" })
 *   return yield* store.load("user:42", "lisbon", 1)
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<MemoryStore.Service> = Effect.sync(() => {
  const scopes = new Map<string, Array<StoredRecord>>()
  let next = 0
  return MemoryStore.of({
    load: (scope, query, limit) =>
      Effect.sync(() => {
        const terms = words(query)
        const records = scopes.get(scope) ?? []
        const matching = records.filter((r) => {
          const content = new Set(words(r.content))
          return terms.every((t) => content.has(t))
        })
        return matching.slice().reverse().slice(0, Math.max(0, limit))
      }),
    store: (scope, record) =>
      Effect.sync(() => {
        const id = `mem-${++next}`
        const records = scopes.get(scope)
        const stored: StoredRecord = { ...record, id }
        if (records === undefined) scopes.set(scope, [stored])
        else records.push(stored)
        return id
      })
  })
})

/**
 * The in-memory store as a Layer.
 *
 * @example
 * ```ts
 * import { Agent, MemoryStore } from "effect-agent-pipeline"
 * import { Layer } from "effect"
 *
 * const AgentLive = Agent.layerOffline({ tools: [] }).pipe(Layer.provideMerge(MemoryStore.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<MemoryStore> = Layer.effect(MemoryStore, makeMemory)
