/**
 * A record's snapshots as a `Stream` (issue 21, `GET /v1/records/{id}/events`):
 * the store is read every `pollInterval` and a snapshot is emitted when its
 * `record_revision` or its lifecycle status changed. The polling itself is
 * the library's (`runtime/internal/progressPoll.ts`, also how `Progress`
 * follows a request another process runs); this is its use over the
 * `ExecutionStore`.
 *
 * The stream ends after the first snapshot whose lifecycle is not
 * `running`, when the record disappears after it was seen, or when
 * `draining` completes (the server is shutting down).
 *
 * @since 0.1.0
 */
import { identity, type Option, Stream } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import { type PollOptions, polls as pollStore } from "../../runtime/internal/progressPoll.js"
import type { ExecutionStore, ExecutionStoreError, RecordDecodeError } from "../../stores/contract/ExecutionStore.js"

export {
  /**
   * @since 0.1.0
   * @category utils
   */
  changed,
  /**
   * @since 0.1.0
   * @category utils
   */
  isFinal
} from "../../runtime/internal/progressPoll.js"

/**
 * How to watch a record.
 *
 * @since 0.1.0
 * @category models
 */
export type WatchOptions = PollOptions

/**
 * Every poll of `requestId`'s record: `Some` with a snapshot worth
 * emitting, `None` for a poll that found nothing new (an absent record, an
 * unchanged one, a store that did not answer: logged, asked again at the
 * next poll). A record that no longer decodes fails it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const polls = (
  store: ExecutionStore.Service,
  requestId: string,
  options: WatchOptions
): Stream.Stream<Option.Option<ExecutionRecord>, ExecutionStoreError | RecordDecodeError> =>
  pollStore(store, requestId, options)

/**
 * The snapshots of `requestId`'s record.
 *
 * @example
 * ```ts
 * const statuses = watch(store, "req-1", { pollInterval: "250 millis" }).pipe(
 *   Stream.map((record) => record.lifecycle?.status)
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const watch = (
  store: ExecutionStore.Service,
  requestId: string,
  options: WatchOptions
): Stream.Stream<ExecutionRecord, ExecutionStoreError | RecordDecodeError> =>
  Stream.filterMap(polls(store, requestId, options), identity)
