/**
 * The in-memory MemoryStore: one process's records, matched by words.
 * Reached as `MemoryStore.layerMemory` / `MemoryStore.makeMemory`.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { MemoryStore, type StoredRecord } from "../contract/MemoryStore.js"

const words = (text: string): ReadonlySet<string> => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])

/**
 * The in-memory score of a record that contains all the query's words: the
 * share of the record's distinct words the query names, in [0, 1] (1: the
 * record says nothing else; an empty query scores 0).
 */
const scoreOf = (terms: ReadonlySet<string>, content: ReadonlySet<string>): number =>
  content.size === 0 ? 0 : terms.size / content.size

const kindOf = (record: StoredRecord): unknown => record.metadata?.kind

/**
 * Builds an in-memory store. A query matches the records that contain all
 * its words (case-insensitive), newest first; `kinds` keeps the records
 * whose `metadata.kind` is one of them; `minScore` keeps the records whose
 * score — the share of the record's distinct words the query names, in
 * [0, 1], 0 for an empty query — is at least it. A record stored under an
 * id already in its scope replaces that record (and becomes the newest).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* MemoryStore.makeMemory
 *   yield* store.store("user:42", { id: "home", content: "Lives in Porto", metadata: { kind: "fact" } })
 *   yield* store.store("user:42", { id: "home", content: "Lives in Lisbon", metadata: { kind: "fact" } })
 *   return yield* store.load("user:42", { query: "lisbon", limit: 1, kinds: ["fact"] })
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
    load: (scope, { kinds, limit, minScore, query }) =>
      Effect.sync(() => {
        const terms = words(query)
        const allowed = kinds === undefined ? undefined : new Set(kinds)
        const found: Array<StoredRecord> = []
        const records = scopes.get(scope) ?? []
        for (let i = records.length - 1; i >= 0 && found.length < limit; i--) {
          const record = records[i]!
          if (allowed !== undefined) {
            const kind = kindOf(record)
            if (typeof kind !== "string" || !allowed.has(kind)) continue
          }
          const content = words(record.content)
          if (![...terms].every((t) => content.has(t))) continue
          if (minScore !== undefined && scoreOf(terms, content) < minScore) continue
          found.push(record)
        }
        return found
      }),
    store: (scope, record) =>
      Effect.sync(() => {
        const records = scopes.get(scope) ?? []
        if (records.length === 0) scopes.set(scope, records)
        const indexOf = (id: string) => records.findIndex((r) => r.id === id)
        let id = record.id
        if (id === undefined) {
          // A record stored under a chosen id may hold the next generated one.
          do id = `mem-${++next}`
          while (indexOf(id) >= 0)
        }
        const replaced = indexOf(id)
        if (replaced >= 0) records.splice(replaced, 1)
        records.push({ ...record, id })
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
