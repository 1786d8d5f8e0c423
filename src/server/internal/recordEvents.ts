/**
 * `GET /v1/records/{id}/events` (issue 21): a record's changes as
 * server-sent events — `record` (the full `ExecutionRecord` encoding) at
 * once, then whenever its `record_revision` or lifecycle changes, then
 * `end` `{ status }` once the lifecycle is no longer `running`.
 *
 * The stream can also end while the request still runs; `end` then says
 * why in `reason` (an addition to the contract's `{ status }`, so a viewer
 * knows the request did not finish): `shutdown` (the server is draining),
 * `gone` (the record was deleted or passed its retention) or `store_error`
 * (the record no longer decodes).
 *
 * @since 0.1.0
 */
import type { HttpServerResponse } from "@effect/platform"
import { Effect, Option, Stream } from "effect"
import * as ExecutionRecord from "../../domain/ExecutionRecord.js"
import { ExecutionStore } from "../../stores/contract/ExecutionStore.js"
import * as ApiError from "../ApiError.js"
import { isFinal, polls } from "./recordWatch.js"
import * as Sse from "./sse.js"

/**
 * The `end` event's data.
 *
 * @since 0.1.0
 * @category models
 */
export interface End {
  readonly status: ExecutionRecord.LifecycleStatus | "unknown"
  readonly reason?: "shutdown" | "gone" | "store_error"
}

const notFound = (requestId: string) =>
  new ApiError.NotFound({
    error: { type: "not_found_error", code: "not_found", message: `no execution record for request ${requestId}` }
  })

/**
 * The stored record of `requestId`, as an SSE route starts from it: a store
 * failure or an undecodable record is its `ApiError`, no record a 404.
 *
 * @since 0.1.0
 * @category constructors
 */
export const storedRecord = (
  requestId: string
): Effect.Effect<ExecutionRecord.ExecutionRecord, ApiError.ApiError, ExecutionStore> =>
  Effect.flatMap(ExecutionStore, (store) =>
    store.get(requestId).pipe(
      Effect.catchTags({
        ExecutionStoreError: (error) => Effect.fail(ApiError.fromStoreError(error)),
        RecordDecodeError: (error) => Effect.fail(ApiError.fromRecordDecodeError(error))
      }),
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound(requestId)), onSome: Effect.succeed }))
    ))

/**
 * The SSE response of a record's changes; 404 `NotFound` when there is no
 * such record.
 *
 * @example
 * ```ts
 * // In an HttpApi handler:
 * recordEvents(path.id, { pollInterval: "250 millis", keepAlive: "15 seconds", draining: shutdown.draining })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const recordEvents: (
  requestId: string,
  options: Sse.StreamOptions
) => Effect.Effect<HttpServerResponse.HttpServerResponse, ApiError.ApiError, ExecutionStore> = Effect.fn(
  "AgentServer.recordEvents"
)(function*(requestId: string, options: Sse.StreamOptions) {
  const store = yield* ExecutionStore
  const found = yield* storedRecord(requestId)

  const events = Stream.suspend(() => {
    let last = found
    let shuttingDown = false
    let failed = false
    const draining = Effect.tap(options.draining, () => {
      shuttingDown = true
    })
    // Polls that found nothing new are the stream's idle moments (its keep-alive clock).
    const records = polls(store, requestId, { pollInterval: options.pollInterval, draining, initial: found })
      .pipe(
        Stream.mapEffect(Option.match({
          onNone: () => Effect.succeed<Sse.SseEvent | Sse.Idle>(Sse.idle),
          onSome: (record) => {
            last = record
            return Effect.map(Effect.orDie(ExecutionRecord.encode(record)), (encoded) => Sse.event("record", encoded))
          }
        })),
        Stream.catchAll((error) =>
          Stream.fromEffect(
            Effect.logWarning("record events ended: the record no longer decodes", error.message).pipe(
              Effect.annotateLogs({ requestId }),
              Effect.zipRight(Effect.sync(() => {
                failed = true
              }))
            )
          ).pipe(Stream.drain)
        )
      )
    const end = Stream.sync((): Sse.SseEvent | Sse.Idle => {
      const status = ExecutionRecord.requestCompletion(last)
      if (isFinal(last)) return Sse.event("end", { status } satisfies End)
      const reason = failed ? "store_error" : shuttingDown ? "shutdown" : "gone"
      return Sse.event("end", { status, reason } satisfies End)
    })
    return Stream.concat(records, end)
  })
  return Sse.response(events, options.keepAlive)
})
