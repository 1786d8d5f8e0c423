/**
 * A request's record as it changes, for `Progress` and the server's
 * streams (issue 23): followed live when the request records in this
 * process — each change of its recorder, taken when the follower is ready
 * for it (changes in between are coalesced: the next snapshot shows them
 * all) — and read from the store every `pollInterval` otherwise (a request
 * another process runs, a finished one). A polling follower switches to
 * the live recorder as soon as one registers for the request, so a stream
 * opened before its request starts follows it live from its first change.
 *
 * Ends after the first final snapshot (the record is finalized), as the
 * polls do (`progressPoll.ts`), or when `draining` completes. Emits `None`
 * for moments without news (a poll that found nothing new, a live request
 * silent for a poll interval): a stream writer's keep-alive clock.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option, Stream } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import { changed, isFinal, readOnce, type RecordSource } from "./progressPoll.js"
import { type LiveRecord, lookup, registered } from "./progressRegistry.js"

/**
 * How to follow a request.
 *
 * @since 0.1.0
 * @category models
 */
export interface FeedOptions<E> {
  /** Where a request that does not record in this process is read from. */
  readonly store?: RecordSource<E> | undefined
  readonly pollInterval: Duration.DurationInput
  /** Completes when the feed should end (server shutdown). */
  readonly draining?: Effect.Effect<void> | undefined
  /** A snapshot the caller already read from the store: emitted first unless the request is live. */
  readonly initial?: ExecutionRecord | undefined
}

/**
 * Whether a live recorder records the request a stored snapshot is of (the
 * same id could be another pipeline's request, over another store).
 */
const sameRequest = (live: ExecutionRecord, known: ExecutionRecord | undefined): boolean =>
  known === undefined ||
  (known.lifecycle?.startedAt === live.lifecycle?.startedAt && known.lifecycle?.owner === live.lifecycle?.owner)

/**
 * The snapshots of `requestId`'s record (`None`: a moment without news).
 *
 * @since 0.1.0
 * @category constructors
 */
export const feed = <E>(
  requestId: string,
  options: FeedOptions<E>
): Stream.Stream<Option.Option<ExecutionRecord>, E> =>
  Stream.suspend(() => {
    const interval = Duration.decode(options.pollInterval)
    const store = options.store
    const warned = { value: false }
    let last: ExecutionRecord | undefined
    let ended = false
    let pending = options.initial
    let polled = false
    // The live recorder followed, once found; `dirty`: it changed since its last snapshot.
    let source: LiveRecord | undefined
    let stop: (() => void) | undefined
    let dirty = false
    let wake: (() => void) | undefined

    const detach = () => {
      stop?.()
      stop = undefined
    }
    const attached = (): LiveRecord | undefined => {
      if (source !== undefined || ended) return source
      const found = lookup(requestId)
      if (found === undefined || !sameRequest(found.current(), last ?? pending)) return undefined
      source = found
      dirty = true
      stop = found.listen(() => {
        dirty = true
        const resume = wake
        wake = undefined
        resume?.()
      })
      return source
    }
    const nextChange = Effect.async<void>((resume) => {
      if (dirty) return resume(Effect.void)
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })
    const news = (record: ExecutionRecord): Option.Option<ExecutionRecord> => {
      if (!changed(last, record)) return Option.none()
      last = record
      if (isFinal(record)) {
        ended = true
        detach()
      }
      return Option.some(record)
    }

    const next: Effect.Effect<Option.Option<ExecutionRecord>, Option.Option<E>> = Effect.suspend(
      () => {
        if (ended) return Effect.fail(Option.none())
        const live = attached()
        if (live !== undefined) {
          return Effect.map(dirty ? Effect.void : Effect.race(nextChange, Effect.sleep(interval)), () => {
            if (!dirty) return Option.none()
            dirty = false
            return news(live.current())
          })
        }
        return poll
      }
    )

    const poll: Effect.Effect<Option.Option<ExecutionRecord>, Option.Option<E>> = Effect.gen(
      function*() {
        let found: Option.Option<ExecutionRecord> | "unanswered" = Option.none()
        if (pending !== undefined) {
          found = Option.some(pending)
          pending = undefined
        } else {
          // The first read is at once; a later one a poll interval after the previous, or
          // as soon as the request starts recording in this process (then it is followed live).
          if (polled) {
            // (A registration this follower does not take — another request's — only waits.)
            yield* lookup(requestId) === undefined
              ? Effect.race(Effect.sleep(interval), registered(requestId))
              : Effect.sleep(interval)
            if (attached() !== undefined) return yield* next
          }
          if (store !== undefined) found = yield* Effect.mapError(readOnce(store, requestId, warned), Option.some)
        }
        polled = true
        if (found === "unanswered") return Option.none()
        if (Option.isNone(found)) {
          if (last === undefined) return Option.none()
          // Seen, then gone (deleted or past retention): the end.
          return yield* Effect.fail(Option.none())
        }
        return news(found.value)
      }
    )

    const all = Stream.repeatEffectOption(next).pipe(Stream.ensuring(Effect.sync(detach)))
    return options.draining === undefined ? all : Stream.interruptWhen(all, options.draining)
  })
