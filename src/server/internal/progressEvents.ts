/**
 * `GET /v1/requests/{id}/progress` (issue 23): a request's progress as
 * server-sent events — `progress` (the `Progress.ProgressEvent` encoding:
 * `_tag`, its fields and a human-readable `message`) for everything the
 * request did so far, then for each change, then `end` `{ status }` once
 * its record is final. A running request in this process is followed live
 * (`Progress`), one another process runs by polling the store; a finished
 * one is replayed from its record and ends at once.
 *
 * Before the stream starts, the record is read: no record is 404
 * `NotFound`, a store that fails is its `ApiError` (as
 * `GET /v1/records/{id}/events`). `end` carries a `reason` when the stream
 * ends while the request still runs: `shutdown`, `gone` or `store_error`.
 *
 * @since 0.1.0
 */
import type { HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema, Stream } from "effect"
import * as ExecutionRecord from "../../domain/ExecutionRecord.js"
import { events as between } from "../../runtime/internal/progressDiff.js"
import { feed } from "../../runtime/internal/progressFeed.js"
import { ProgressEvent } from "../../runtime/internal/progressModel.js"
import { ExecutionStore } from "../../stores/contract/ExecutionStore.js"
import * as ApiError from "../ApiError.js"
import { type End, storedRecord } from "./recordEvents.js"
import { isFinal } from "./recordWatch.js"
import * as Sse from "./sse.js"

const encodeEvent = Schema.encodeSync(ProgressEvent)

/**
 * The SSE response of a request's progress; 404 `NotFound` when there is
 * no such record.
 *
 * @example
 * ```ts
 * // In an HttpApi handler:
 * progressEvents(path.id, { pollInterval: "250 millis", keepAlive: "15 seconds", draining: shutdown.draining })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const progressEvents: (
  requestId: string,
  options: Sse.StreamOptions
) => Effect.Effect<HttpServerResponse.HttpServerResponse, ApiError.ApiError, ExecutionStore> = Effect.fn(
  "AgentServer.progressEvents"
)(function*(requestId: string, options: Sse.StreamOptions) {
  const store = yield* ExecutionStore
  const found = yield* storedRecord(requestId)

  const events = Stream.suspend(() => {
    let last: ExecutionRecord.ExecutionRecord | undefined
    let shuttingDown = false
    let failed = false
    const draining = Effect.tap(options.draining, () => {
      shuttingDown = true
    })
    const progress = feed(requestId, {
      store,
      pollInterval: options.pollInterval,
      draining,
      initial: found
    }).pipe(
      Stream.map(Option.match({
        onNone: (): ReadonlyArray<Sse.SseEvent | Sse.Idle> => [Sse.idle],
        onSome: (record) => {
          const news = between(last, record)
          last = record
          return news.map((event) => Sse.event("progress", encodeEvent(event)))
        }
      })),
      Stream.flattenIterables,
      Stream.catchAll((error) =>
        Stream.fromEffect(
          Effect.logWarning("progress events ended: the record no longer decodes", error.message).pipe(
            Effect.annotateLogs({ requestId }),
            Effect.zipRight(Effect.sync(() => {
              failed = true
            }))
          )
        ).pipe(Stream.drain)
      )
    )
    const end = Stream.sync((): Sse.SseEvent => {
      const record = last ?? found
      const status = ExecutionRecord.requestCompletion(record)
      if (isFinal(record)) return Sse.event("end", { status } satisfies End)
      const reason = failed ? "store_error" : shuttingDown ? "shutdown" : "gone"
      return Sse.event("end", { status, reason } satisfies End)
    })
    return Stream.concat(progress, end)
  })
  return Sse.response(events, options.keepAlive)
})
