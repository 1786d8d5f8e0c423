/**
 * A record's snapshots as a `Stream` (issue 21, `GET /v1/records/{id}/events`
 * and the progress of `POST /v1/requests/stream`): the store is read every
 * `pollInterval` and a snapshot is emitted when its `record_revision` or
 * its lifecycle status changed. A running request's recorder writes its
 * record at least every 500 ms while it changes (`LeaseKeeper`), whatever
 * the store, so polling sees a live request progress — in this process or
 * another one sharing the store.
 *
 * The stream ends after the first snapshot whose lifecycle is not
 * `running` (legacy records without lifecycle end at once), when the
 * record disappears after it was seen (deleted or past retention), or when
 * `draining` completes (the server is shutting down). Before the record is
 * first seen, an absent record is waited for: a streamed request's record
 * is created just after the stream opens.
 *
 * @since 0.1.0
 */
import { Duration, Effect, identity, Option, Stream } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import type { ExecutionStore, RecordDecodeError } from "../../stores/contract/ExecutionStore.js"

/**
 * How to watch a record.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchOptions {
  readonly pollInterval: Duration.DurationInput
  /** Completes when the watch should end (server shutdown). */
  readonly draining?: Effect.Effect<void> | undefined
  /** A snapshot the caller already read: emitted first, without a store read. */
  readonly initial?: ExecutionRecord | undefined
}

/**
 * Whether `next` is news after `last`.
 *
 * @since 0.1.0
 * @category utils
 */
export const changed = (last: ExecutionRecord | undefined, next: ExecutionRecord): boolean =>
  last === undefined || last.recordRevision !== next.recordRevision ||
  last.lifecycle?.status !== next.lifecycle?.status

/**
 * Whether a snapshot ends the watch.
 *
 * @since 0.1.0
 * @category utils
 */
export const isFinal = (record: ExecutionRecord): boolean => record.lifecycle?.status !== "running"

/**
 * Every poll of `requestId`'s record: `Some` with a snapshot worth
 * emitting, `None` for a poll that found nothing new (an absent record, an
 * unchanged one, a store that did not answer). A stream writer uses the
 * `None`s as its clock for keep-alives, so an idle stream needs no timer
 * of its own. Ends as {@link watch} does.
 *
 * @since 0.1.0
 * @category constructors
 */
export const polls = (
  store: ExecutionStore.Service,
  requestId: string,
  options: WatchOptions
): Stream.Stream<Option.Option<ExecutionRecord>, RecordDecodeError> =>
  Stream.suspend(() => {
    const interval = Duration.decode(options.pollInterval)
    let last: ExecutionRecord | undefined
    let ended = false
    let pending = options.initial
    let polled = false
    let warned = false

    const read: Effect.Effect<Option.Option<ExecutionRecord> | "unanswered", RecordDecodeError> = Effect.catchTag(
      store.get(requestId),
      "ExecutionStoreError",
      (error) => {
        // One warning per watch: a store that is down would otherwise log at every poll.
        const log = warned
          ? Effect.logDebug("record poll failed", error.message)
          : Effect.logWarning("record poll failed; retrying at the next poll", error.message)
        warned = true
        return Effect.as(Effect.annotateLogs(log, { requestId }), "unanswered" as const)
      }
    )

    // The next poll's news, or the end (`Option.none()` as the failure).
    const next: Effect.Effect<Option.Option<ExecutionRecord>, Option.Option<RecordDecodeError>> = Effect.gen(
      function*() {
        if (ended) return yield* Effect.fail(Option.none())
        let found: Option.Option<ExecutionRecord> | "unanswered"
        if (pending !== undefined) {
          found = Option.some(pending)
          pending = undefined
        } else {
          // The first read is at once; every later one a poll interval after the previous.
          if (polled) yield* Effect.sleep(interval)
          found = yield* Effect.mapError(read, Option.some)
        }
        polled = true
        if (found === "unanswered") return Option.none()
        if (Option.isNone(found)) {
          if (last === undefined) return Option.none()
          return yield* Effect.fail(Option.none())
        }
        const record = found.value
        if (!changed(last, record)) return Option.none()
        last = record
        if (isFinal(record)) ended = true
        return Option.some(record)
      }
    )

    const all = Stream.repeatEffectOption(next)
    return options.draining === undefined ? all : Stream.interruptWhen(all, options.draining)
  })

/**
 * The snapshots of `requestId`'s record. A store that fails to answer a
 * poll is asked again at the next one (logged); a record that no longer
 * decodes fails the stream with its `RecordDecodeError`.
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
): Stream.Stream<ExecutionRecord, RecordDecodeError> => Stream.filterMap(polls(store, requestId, options), identity)
