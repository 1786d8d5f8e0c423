/**
 * Where execution records live. Every backend enforces revision gating: a
 * snapshot whose `record_revision` is not newer than the stored one is
 * refused as `stale`, so concurrent writers can never lose the newest data
 * (C15). Normal and error records have separate retention (C16).
 *
 * @since 0.1.0
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { type ExecutionRecord, isErrorRecord } from "../domain/ExecutionRecord.js"

/**
 * A store backend failed.
 *
 * @since 0.1.0
 */
export class ExecutionStoreError extends Schema.TaggedError<ExecutionStoreError>(
  "effect-agent-pipeline/ExecutionStoreError"
)("ExecutionStoreError", {
  operation: Schema.String,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `execution store ${this.operation} failed: ${this.detail}`
  }
}

/**
 * How long records are kept: successful / suspended / running records use
 * `normal`, failed and interrupted ones use `error`. Legacy records (no
 * lifecycle) use `normal`.
 *
 * @since 0.1.0
 */
export interface RetentionSettings {
  readonly normal: Duration.DurationInput
  readonly error: Duration.DurationInput
}

/**
 * The default retention: 24 hours for normal records, 7 days for errors.
 *
 * @since 0.1.0
 */
export const defaultRetention: RetentionSettings = { normal: Duration.hours(24), error: Duration.days(7) }

/**
 * Whether a save was written or refused because a newer (or equal) revision
 * is already stored.
 *
 * @since 0.1.0
 */
export type SaveResult = "written" | "stale"

/**
 * The store service.
 *
 * @since 0.1.0
 */
export class ExecutionStore extends Context.Tag("effect-agent-pipeline/ExecutionStore")<
  ExecutionStore,
  ExecutionStore.Service
>() {}

/** @since 0.1.0 */
export declare namespace ExecutionStore {
  /** @since 0.1.0 */
  export interface Service {
    /** Writes the snapshot if its revision is newer than the stored one. */
    readonly save: (record: ExecutionRecord) => Effect.Effect<SaveResult, ExecutionStoreError>
    /** The record, unless absent or past its retention. */
    readonly get: (requestId: string) => Effect.Effect<Option.Option<ExecutionRecord>, ExecutionStoreError>
    /** Most recently written first; `limit` below 0 counts as 0. */
    readonly list: (options?: { readonly limit?: number }) => Effect.Effect<
      ReadonlyArray<ExecutionRecord>,
      ExecutionStoreError
    >
    /** Deletes records past their retention; returns how many. */
    readonly purgeExpired: Effect.Effect<number, ExecutionStoreError>
  }
}

/**
 * Retention deadline for a record saved at `now`.
 *
 * @since 0.1.0
 */
export const expiresAt = (record: ExecutionRecord, now: number, retention: RetentionSettings): number =>
  now + Duration.toMillis(isErrorRecord(record) ? retention.error : retention.normal)

interface Entry {
  readonly record: ExecutionRecord
  readonly expiresAt: number
  readonly order: number
}

/**
 * An in-memory store (unit tests, the embedded default until a SQL backend
 * is configured). Time comes from `Clock`, so `TestClock` drives retention.
 *
 * @since 0.1.0
 */
export const makeMemory = (options?: {
  readonly retention?: RetentionSettings | undefined
}): Effect.Effect<ExecutionStore.Service> =>
  Effect.sync(() => {
    const retention = options?.retention ?? defaultRetention
    // Decoded once (a DurationInput may be a string to parse).
    const millis: RetentionSettings = {
      normal: Duration.millis(Duration.toMillis(retention.normal)),
      error: Duration.millis(Duration.toMillis(retention.error))
    }
    const entries = new Map<string, Entry>()
    let order = 0
    const live = (entry: Entry | undefined, now: number): entry is Entry => entry !== undefined && entry.expiresAt > now
    return {
      // The check and the write happen in one synchronous block, so two
      // concurrent saves are serialized and the newer revision always wins.
      save: (record) =>
        Effect.map(Clock.currentTimeMillis, (now): SaveResult => {
          const current = entries.get(record.requestId)
          if (live(current, now) && current.record.recordRevision >= record.recordRevision) return "stale"
          entries.set(record.requestId, {
            record,
            expiresAt: expiresAt(record, now, millis),
            order: order++
          })
          return "written"
        }),
      get: (requestId) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const entry = entries.get(requestId)
          return live(entry, now) ? Option.some(entry.record) : Option.none()
        }),
      list: (listOptions) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const out = [...entries.values()].filter((e) => live(e, now)).sort((a, b) => b.order - a.order)
          return out.slice(0, Math.max(0, listOptions?.limit ?? out.length)).map((e) => e.record)
        }),
      purgeExpired: Effect.map(Clock.currentTimeMillis, (now) => {
        let removed = 0
        for (const [key, entry] of entries) {
          if (!live(entry, now)) {
            entries.delete(key)
            removed++
          }
        }
        return removed
      })
    }
  })

/**
 * The in-memory store as a Layer.
 *
 * @example
 * ```ts
 * import { ExecutionStore } from "effect-agent-pipeline"
 * import { Duration } from "effect"
 *
 * const StoreLive = ExecutionStore.layerMemory({
 *   retention: { normal: Duration.hours(1), error: Duration.days(1) }
 * })
 * ```
 *
 * @since 0.1.0
 */
export const layerMemory = (options?: {
  readonly retention?: RetentionSettings | undefined
}): Layer.Layer<ExecutionStore> => Layer.effect(ExecutionStore, makeMemory(options))
