/**
 * The in-memory ExecutionStore: one process's records, bounded by count and
 * by size, swept as it is written to. Reached as `ExecutionStore.layerMemory`
 * / `ExecutionStore.makeMemory`; it runs the SQL backends' conformance suite.
 *
 * A record is kept as its stored body (one string, `internal/memoryEntry.ts`)
 * and decoded when it is read: a third of its object graph on the heap.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, Either, Layer, Option } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import { mergeStoredEvidence } from "../../domain/internal/recordMerge.js"
import {
  type CreateResult,
  defaultPageSize,
  defaultRetention,
  ExecutionStore,
  ExecutionStoreError,
  expiresAt,
  type ListQuery,
  maxPageSize,
  type RecordPage,
  type RetentionSettings,
  type SaveResult,
  type UpdateResult
} from "../contract/ExecutionStore.js"
import { MemoryCaps } from "../internal/memoryCaps.js"
import { attempt, type Entry, entryOf, recordOf } from "../internal/memoryEntry.js"
import { checkMemoryOptions, memoryBounds as bounds } from "../internal/memoryOptions.js"
import { abandoned, decodeCursor, encodeCursor, hookNamesOf, pageSize } from "../internal/recordQuery.js"
import { markSynchronous } from "../internal/synchronousStores.js"

/**
 * How many records the memory store keeps by default.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxRecords = 10_000

/**
 * How many bytes of records the memory store keeps by default: 64 MiB of
 * stored bodies (UTF-8 bytes of each record's compact text, about its heap
 * size). A record of 16 hooks and two full model calls takes about 5 KB, so
 * the 10,000 records of `defaultMaxRecords` bind first; this cap bounds
 * large records (64 of 1 MB). At both caps: about 64 MiB plus a few hundred
 * bytes per record (twice the bodies for text beyond Latin-1).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxBytes = 67_108_864

/**
 * The ranges the memory store accepts for `maxRecords` and `maxBytes` (both
 * ends included).
 *
 * @since 0.1.0
 * @category constants
 */
export const memoryBounds: {
  readonly maxRecords: { readonly min: number; readonly max: number }
  readonly maxBytes: { readonly min: number; readonly max: number }
} = bounds

/**
 * Options of the in-memory store.
 *
 * - `retention`: see {@link RetentionSettings} (default {@link defaultRetention};
 *   each a positive duration of at most 3650 days)
 * - `maxRecords`: at most this many records are kept (default 10,000; an
 *   integer from 1 to 10,000,000)
 * - `maxBytes`: at most this many bytes of records are kept, measured as
 *   each record's stored body (its compact encoded text, in UTF-8 bytes)
 *   when it is written (default 64 MiB; an integer from 1 to 16 GiB)
 * - `sweepEvery`: how often, on the `Clock`, expired records are deleted and
 *   ownerless running records marked abandoned (default 1 minute; positive,
 *   at most 24 hours, or `Duration.infinity` for never — the caller then
 *   runs `purgeExpired` and `sweepAbandoned`). The memory store sweeps as it
 *   is written to — on the first write once the period has passed — so it
 *   holds no timer (an idle process can exit) and never grows between
 *   sweeps without a write.
 *
 * Past either cap, the oldest finished records are evicted first, until the
 * store is back under both (a finished record the caps cannot hold beside
 * the running records — larger than `maxBytes` on its own or with them — is
 * not kept, and nothing older is evicted for it). Running records are never
 * evicted (their request still writes to them): they count toward the caps,
 * so only running records — as many as requests in flight — can hold the
 * store over a cap. Options out of range fail the store's construction with
 * an {@link ExecutionStoreError} (`operation: "open"`) naming the option.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  readonly retention?: RetentionSettings | undefined
  readonly maxRecords?: number | undefined
  readonly maxBytes?: number | undefined
  readonly sweepEvery?: Duration.DurationInput | undefined
}

/** The memory store over checked options. */
const memoryStore = (options: MemoryOptions | undefined): ExecutionStore.Service => {
  const retention = options?.retention ?? defaultRetention
  // Decoded once (a DurationInput may be a string to parse).
  const millis: RetentionSettings = {
    normal: Duration.millis(Duration.toMillis(retention.normal)),
    error: Duration.millis(Duration.toMillis(retention.error))
  }
  const maxRecords = options?.maxRecords ?? defaultMaxRecords
  const maxBytes = options?.maxBytes ?? defaultMaxBytes
  const sweepEvery = Duration.toMillis(options?.sweepEvery ?? Duration.minutes(1))
  let sweepAt: number | undefined
  // In creation order (a Map keeps insertion order; an update keeps its place).
  const entries = new Map<string, Entry>()
  const caps = new MemoryCaps(maxRecords, maxBytes)
  let sequence = 0
  const live = (entry: Entry | undefined, now: number): entry is Entry => entry !== undefined && entry.expiresAt > now
  const remove = (key: string, entry: Entry): void => {
    entries.delete(key)
    caps.count(entry, -1)
  }
  const overCap = (): boolean => caps.over(entries.size)
  const evictOverflow = (written: string): void => {
    if (!overCap()) return
    // A finished record the caps can never hold beside the running records
    // goes first, so older records are not evicted for its sake.
    const own = entries.get(written)
    if (own !== undefined && caps.cannotHold(own)) {
      remove(written, own)
      if (!overCap()) return
    }
    for (const [key, entry] of entries) {
      if (entry.status !== "running") {
        remove(key, entry)
        if (!overCap()) return
      }
    }
  }
  const store = (record: ExecutionRecord, now: number, previous: Entry | undefined, pure = true): void => {
    const kept = previous !== undefined && previous.expiresAt > now
    const entry = entryOf(record, {
      pure,
      expiresAt: expiresAt(record, now, millis),
      sequence: kept ? previous.sequence : sequence + 1,
      storedAt: kept ? previous.storedAt : now
    })
    if (!kept) sequence++
    if (previous !== undefined) {
      // An expired record gives up its place (and its id's sequence); a kept one is replaced in place.
      if (kept) caps.count(previous, -1)
      else remove(record.requestId, previous)
    }
    entries.set(record.requestId, entry)
    caps.count(entry, 1)
    // A new record can pass the count cap; any write — a record that grew — the byte cap.
    evictOverflow(record.requestId)
  }
  const purge = (now: number): number => {
    let removed = 0
    for (const [key, entry] of entries) {
      if (!live(entry, now)) {
        remove(key, entry)
        removed++
      }
    }
    return removed
  }
  const markAbandoned = (now: number): number => {
    let marked = 0
    for (const entry of [...entries.values()]) {
      const lease = entry.lease
      if (!live(entry, now) || lease === undefined || lease > now) continue
      // Written by the sweep: no writer's own snapshot.
      store(abandoned(recordOf(entry), now), now, entry, false)
      marked++
    }
    return marked
  }
  /** The sweep, on a write once its period has passed. */
  const sweepIfDue = (now: number): void => {
    if (sweepAt === undefined) sweepAt = now + sweepEvery
    if (now < sweepAt) return
    sweepAt = now + sweepEvery
    purge(now)
    markAbandoned(now)
  }
  // `decoded`: records the hook filter decoded, for the page they are returned in.
  const matches = (entry: Entry, query: ListQuery, decoded: Map<Entry, ExecutionRecord>): boolean => {
    if (query.status !== undefined && !query.status.includes(entry.status)) return false
    const startedAt = entry.startedAt
    if (query.startedFrom !== undefined && startedAt < query.startedFrom) return false
    if (query.startedBefore !== undefined && startedAt >= query.startedBefore) return false
    if (query.hook !== undefined) {
      const record = recordOf(entry)
      if (!hookNamesOf(record).includes(query.hook)) return false
      decoded.set(entry, record)
    }
    return true
  }
  // Every check and its write happen in one synchronous block, so
  // concurrent writers are serialized and the newer revision always wins.
  // Defined once per store and bound per call: an arrow made per call loses
  // its optimized code whenever a full GC finds none alive.
  const createAt = (record: ExecutionRecord, now: number): CreateResult => {
    sweepIfDue(now)
    const current = entries.get(record.requestId)
    if (live(current, now)) return "exists"
    store(record, now, current)
    return "created"
  }
  const saveAt = (record: ExecutionRecord, now: number): SaveResult => {
    sweepIfDue(now)
    const current = entries.get(record.requestId)
    if (!live(current, now)) {
      store(record, now, current)
      return "written"
    }
    if (current.revision >= record.recordRevision) return "stale"
    // A writer's snapshots are cumulative: over its own (or over a record
    // without hook runs) there is nothing to merge, and nothing to decode.
    if (!current.hasRuns || (record.writer !== undefined && current.pure && current.writerId === record.writer.id)) {
      store(record, now, current)
      return "written"
    }
    const merged = mergeStoredEvidence(recordOf(current), record)
    store(merged, now, current, merged === record)
    return "written"
  }
  return markSynchronous(ExecutionStore.of({
    // Bound, not arrows per call: see `createAt`.
    create: (record) => Effect.flatMap(Clock.currentTimeMillis, attempt(createAt.bind(undefined, record))),
    save: (record) => Effect.flatMap(Clock.currentTimeMillis, attempt(saveAt.bind(undefined, record))),
    update: (requestId, f) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        attempt((now): UpdateResult => {
          const current = entries.get(requestId)
          if (!live(current, now)) return "missing"
          const next = f(recordOf(current))
          if (next === undefined) return "unchanged"
          const recordRevision = Math.max(current.revision + 1, next.recordRevision)
          store({ ...next, recordRevision }, now, current, false)
          return "written"
        })
      ),
    get: (requestId) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = entries.get(requestId)
        return live(entry, now) ? Option.some(recordOf(entry)) : Option.none()
      }),
    list: (query = {}) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const before = query.cursor === undefined ? Infinity : decodeCursor(query.cursor)
        if (before === undefined) {
          return Effect.fail(new ExecutionStoreError({ operation: "list", detail: `not a cursor: ${query.cursor}` }))
        }
        const size = pageSize(query.limit, defaultPageSize, maxPageSize)
        const page: Array<Entry> = []
        const decoded = new Map<Entry, ExecutionRecord>()
        let more = false
        // Newest first: walk the creation order backwards.
        const all = [...entries.values()]
        for (let i = all.length - 1; i >= 0; i--) {
          const entry = all[i]!
          if (entry.sequence >= before || !live(entry, now) || !matches(entry, query, decoded)) continue
          if (page.length === size) {
            more = true
            break
          }
          page.push(entry)
        }
        const last = page[page.length - 1]
        return Effect.succeed<RecordPage>({
          records: page.map((e) => decoded.get(e) ?? recordOf(e)),
          undecodable: [],
          next: more && last !== undefined ? encodeCursor(last.sequence) : undefined
        })
      }),
    purgeExpired: Effect.map(Clock.currentTimeMillis, purge),
    sweepAbandoned: Effect.map(Clock.currentTimeMillis, markAbandoned)
  }))
}

/**
 * Builds an in-memory store. Records are kept encoded: what `get` returns is
 * equal to what was saved, a new object on every read. A record must not be
 * mutated after it was saved (its encoding is remembered with it). Options
 * out of range fail with an {@link ExecutionStoreError} (`operation: "open"`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ExecutionStore } from "effect-agent-pipeline"
 *
 * // Left(ExecutionStoreError: execution store open failed: invalid option maxRecords: must be an integer from 1 to 10000000)
 * const refused = Effect.either(ExecutionStore.makeMemory({ maxRecords: 0 }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export function makeMemory(): Effect.Effect<ExecutionStore.Service>
export function makeMemory(
  options: MemoryOptions | undefined
): Effect.Effect<ExecutionStore.Service, ExecutionStoreError>
export function makeMemory(options?: MemoryOptions): Effect.Effect<ExecutionStore.Service, ExecutionStoreError> {
  return Effect.suspend(() =>
    Either.match(checkMemoryOptions(options), {
      onLeft: ({ detail, option }) =>
        Effect.fail(
          new ExecutionStoreError({
            operation: "open",
            detail: option === "" ? `invalid options: ${detail}` : `invalid option ${option}: ${detail}`
          })
        ),
      onRight: () => Effect.sync(() => memoryStore(options))
    })
  )
}

/**
 * The in-memory store as a Layer: bounded by count and by size, evicting
 * the oldest finished records first, and swept by itself as it is written
 * to (see {@link MemoryOptions}). Options out of range fail the Layer with
 * an {@link ExecutionStoreError} (`operation: "open"`); without options it
 * cannot fail.
 *
 * @example
 * ```ts
 * import { ExecutionStore } from "effect-agent-pipeline"
 * import { Duration } from "effect"
 *
 * const StoreLive = ExecutionStore.layerMemory({
 *   retention: { normal: Duration.hours(1), error: Duration.days(1) },
 *   maxRecords: 5_000,
 *   maxBytes: 32 * 1024 * 1024
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export function layerMemory(): Layer.Layer<ExecutionStore>
export function layerMemory(options: MemoryOptions | undefined): Layer.Layer<ExecutionStore, ExecutionStoreError>
export function layerMemory(options?: MemoryOptions): Layer.Layer<ExecutionStore, ExecutionStoreError> {
  return Layer.effect(ExecutionStore, makeMemory(options))
}
