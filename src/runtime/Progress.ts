/**
 * A request's progress as a `Stream` (issue 23, seed 004 "Progress
 * Tracking"): a phase started, a tool call started or ended, a hook run
 * started or ended — each a typed event with a human-readable `message`.
 *
 * A request that records in this process is followed live, from its
 * recorder's changes (a slow tool's {@link ToolStarted} arrives while the
 * tool runs); nothing is done for a request nobody follows. A request
 * another process runs (or one that finished) is read from the store every
 * `pollInterval` — its recorder writes it at least every 500 ms while it
 * changes. Either way the events are ordered and complete (every
 * {@link ToolEnded} follows its {@link ToolStarted}, every
 * {@link HookEnded} its {@link HookStarted}), and the stream ends once the
 * request's record is finalized. A stream opened before its request starts
 * waits for it (the server's `POST /v1/requests/stream` opens it so); one
 * for an id that never records waits until interrupted.
 *
 * @since 0.1.0
 */
import { type Duration, type Effect, identity, Stream } from "effect"
import type { ExecutionRecord } from "../domain/ExecutionRecord.js"
import { events as diffEvents } from "./internal/progressDiff.js"
import { feed } from "./internal/progressFeed.js"
import type { ProgressEvent } from "./internal/progressModel.js"
import type { RecordSource } from "./internal/progressPoll.js"

export {
  /**
   * @since 0.1.0
   * @category schemas
   */
  HookEnded,
  /**
   * @since 0.1.0
   * @category schemas
   */
  HookStarted,
  /**
   * @since 0.1.0
   * @category schemas
   */
  PhaseStarted,
  /**
   * @since 0.1.0
   * @category schemas
   */
  ProgressEvent,
  /**
   * @since 0.1.0
   * @category schemas
   */
  ToolEnded,
  /**
   * @since 0.1.0
   * @category schemas
   */
  ToolStarted
} from "./internal/progressModel.js"

export type {
  /**
   * @since 0.1.0
   * @category models
   */
  RecordSource
} from "./internal/progressPoll.js"

/**
 * How long a store-polling follower waits between reads by default.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPollInterval: Duration.DurationInput = "250 millis"

/**
 * How to follow a request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<E = never> {
  /**
   * Where a request that does not record in this process is read from —
   * an `ExecutionStore` (the one its pipeline writes). Without it only
   * requests recording in this process are followed. A read the store does
   * not answer (`ExecutionStoreError`) is retried at the next poll; any
   * other failure (a record that no longer decodes) fails the stream.
   */
  readonly store?: RecordSource<E> | undefined
  /** Between store reads (default {@link defaultPollInterval}). */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** Ends the stream when it completes (e.g. a server's shutdown). */
  readonly draining?: Effect.Effect<void> | undefined
}

/**
 * `requestId`'s execution record each time it changed (changes a live
 * follower was not ready for are coalesced into the next snapshot), ending
 * with its final snapshot.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ExecutionStore, Progress } from "effect-agent-pipeline"
 *
 * const statuses = Effect.map(ExecutionStore.ExecutionStore, (store) =>
 *   Progress.snapshots("req-1", { store }).pipe(Stream.map((record) => record.lifecycle?.status))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const snapshots = <E = never>(requestId: string, options?: Options<E>): Stream.Stream<ExecutionRecord, E> =>
  Stream.filterMap(
    feed(requestId, {
      store: options?.store,
      pollInterval: options?.pollInterval ?? defaultPollInterval,
      draining: options?.draining
    }),
    identity
  )

/**
 * The progress from one snapshot of a record (`undefined`: none yet) to a
 * newer one, in the order it happened. Pure: {@link events} is this over
 * {@link snapshots}.
 *
 * @example
 * ```ts
 * import { Progress } from "effect-agent-pipeline"
 * import type { ExecutionRecord } from "effect-agent-pipeline"
 *
 * declare const record: ExecutionRecord.ExecutionRecord
 * const messages = Progress.between(undefined, record).map((event) => event.message)
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const between: (previous: ExecutionRecord | undefined, next: ExecutionRecord) => Array<ProgressEvent> =
  diffEvents

/**
 * `requestId`'s progress events, live or polled, until its record is
 * finalized.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { ExecutionStore, Progress } from "effect-agent-pipeline"
 *
 * const printProgress = (requestId: string) =>
 *   Effect.flatMap(ExecutionStore.ExecutionStore, (store) =>
 *     Progress.events(requestId, { store }).pipe(
 *       Stream.runForEach((event) => Effect.log(event.message))
 *     ))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const events = <E = never>(requestId: string, options?: Options<E>): Stream.Stream<ProgressEvent, E> =>
  snapshots(requestId, options).pipe(
    Stream.mapAccum(nothingYet, (last, record): readonly [ExecutionRecord | undefined, Array<ProgressEvent>] => [
      record,
      between(last, record)
    ]),
    Stream.flattenIterables
  )

const nothingYet: ExecutionRecord | undefined = undefined
