/**
 * What the semantic cache remembers about a request between its hooks: the
 * scope and gate seen at lookup, the request's embedding, whether a hit the
 * gate will accept was returned, and the draft the capture hook saw.
 *
 * Bounded so it cannot leak: an entry is removed by the write hook, by the
 * request's finalizer (every exit of a managed request — failure between
 * the hooks, interruption, suspension), and past `max` entries the oldest
 * goes (direct use without a request scope).
 */
import type { Scope } from "./semanticCacheDimensions.js"

export interface Pending {
  readonly scope: Scope
  /** The gate's `cacheVary` when the request was looked up: stored with the entry. */
  readonly vary: Readonly<Record<string, string>>
  vector: ReadonlyArray<number> | undefined
  /** The response of a hit whose stored dimensions match the gate (served from the cache). */
  served: string | undefined
  draft: string | undefined
}

export interface PendingRequests {
  readonly set: (requestId: string, pending: Pending) => void
  readonly get: (requestId: string) => Pending | undefined
  /** Removes and returns. */
  readonly take: (requestId: string) => Pending | undefined
  readonly delete: (requestId: string) => void
  readonly size: () => number
}

export const makePending = (max: number): PendingRequests => {
  const map = new Map<string, Pending>()
  return {
    set: (requestId, pending) => {
      map.delete(requestId)
      map.set(requestId, pending)
      // A Map iterates in insertion order: the first key is the oldest.
      while (map.size > max) map.delete(map.keys().next().value!)
    },
    get: (requestId) => map.get(requestId),
    take: (requestId) => {
      const pending = map.get(requestId)
      map.delete(requestId)
      return pending
    },
    delete: (requestId) => void map.delete(requestId),
    size: () => map.size
  }
}
