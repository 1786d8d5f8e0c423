/**
 * A record's snapshots read from a store every `pollInterval` (issue 21):
 * how a request running in another process is followed, and the server's
 * `GET /v1/records/{id}/events`. A snapshot is emitted when its
 * `record_revision` or its lifecycle status changed. A running request's
 * recorder writes its record at least every 500 ms while it changes
 * (`LeaseKeeper`), whatever the store, so polling sees it progress.
 *
 * The polls end after the first snapshot whose lifecycle is not `running`
 * (legacy records without lifecycle end at once), when the record
 * disappears after it was seen (deleted or past retention), or when
 * `draining` completes. Before the record is first seen, an absent record
 * is waited for: a streamed request's record is created just after its
 * stream opens. The store is anything with an `ExecutionStore`'s `get`; a
 * read failing with an `ExecutionStoreError` (the store did not answer) is
 * retried at the next poll, any other failure ends the polls with it.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option, Predicate, Stream } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"

/**
 * What is polled: an `ExecutionStore` (its `get`) or anything like it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordSource<E> {
  readonly get: (requestId: string) => Effect.Effect<Option.Option<ExecutionRecord>, E>
}

/**
 * A read failure that is retried at the next poll: the store did not answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Unanswered {
  readonly _tag: "ExecutionStoreError"
  readonly message: string
}

/**
 * How to poll a record.
 *
 * @since 0.1.0
 * @category models
 */
export interface PollOptions {
  readonly pollInterval: Duration.DurationInput
  /** Completes when the polls should end (server shutdown). */
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
 * Whether a snapshot is its request's last (the request no longer runs).
 *
 * @since 0.1.0
 * @category utils
 */
export const isFinal = (record: ExecutionRecord): boolean => record.lifecycle?.status !== "running"

const unanswered = (error: unknown): error is Unanswered => Predicate.isTagged(error, "ExecutionStoreError")

/**
 * One read of `requestId`'s record: the record if any, `"unanswered"` when
 * the store did not answer (logged: a warning the first time of a
 * `warned` pair, debug after).
 *
 * @since 0.1.0
 * @category constructors
 */
export const readOnce = <E>(
  store: RecordSource<E>,
  requestId: string,
  warned: { value: boolean }
): Effect.Effect<Option.Option<ExecutionRecord> | "unanswered", E> =>
  Effect.catchAll(
    store.get(requestId),
    (error): Effect.Effect<"unanswered", E> => {
      if (!unanswered(error)) return Effect.fail(error)
      // One warning per follower: a store that is down would otherwise log at every poll.
      const log = warned.value
        ? Effect.logDebug("record poll failed", error.message)
        : Effect.logWarning("record poll failed; retrying at the next poll", error.message)
      warned.value = true
      return Effect.as(Effect.annotateLogs(log, { requestId }), "unanswered" as const)
    }
  )

/**
 * Every poll of `requestId`'s record: `Some` with a snapshot worth
 * emitting, `None` for a poll that found nothing new (an absent record, an
 * unchanged one, a store that did not answer). A stream writer uses the
 * `None`s as its clock for keep-alives, so an idle stream needs no timer
 * of its own.
 *
 * @since 0.1.0
 * @category constructors
 */
export const polls = <E>(
  store: RecordSource<E>,
  requestId: string,
  options: PollOptions
): Stream.Stream<Option.Option<ExecutionRecord>, E> =>
  Stream.suspend(() => {
    const interval = Duration.decode(options.pollInterval)
    let last: ExecutionRecord | undefined
    let ended = false
    let pending = options.initial
    let polled = false
    const warned = { value: false }

    // The next poll's news, or the end (`Option.none()` as the failure).
    const next: Effect.Effect<Option.Option<ExecutionRecord>, Option.Option<E>> = Effect.gen(
      function*() {
        if (ended) return yield* Effect.fail(Option.none())
        let found: Option.Option<ExecutionRecord> | "unanswered"
        if (pending !== undefined) {
          found = Option.some(pending)
          pending = undefined
        } else {
          // The first read is at once; every later one a poll interval after the previous.
          if (polled) yield* Effect.sleep(interval)
          found = yield* Effect.mapError(readOnce(store, requestId, warned), Option.some)
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
