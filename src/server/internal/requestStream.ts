/**
 * `POST /v1/requests/stream` (issue 21): one request as server-sent events —
 * `started`, the synthesis `token`s as `Pipeline.stream` yields them,
 * `progress` derived from the request's record as it changes, then exactly
 * one terminal event (`completed`, `suspended` or `rejected`) and the end.
 *
 * The body is decoded before the response starts, so a malformed request is
 * a 4xx JSON `ApiError`, never a broken stream; so is a `requestId` that
 * already names a record (a request that races for it past this check is
 * still refused, inside the stream, as `rejected` 409).
 *
 * Progress comes from the request's record as `Progress` follows it
 * (`progressFeed`): live from its recorder when the request records in this
 * process — as it always does here, so a slow tool's `tool_started` arrives
 * while the tool runs — and from store polls otherwise; merged with the
 * tokens. The feed's moments without news are also when keep-alive
 * comments go out (no timer of its own). The terminal event is held until
 * the pipeline's stream has ended — by then the request's record is
 * finalized — and the final record's progress is sent first, so no change
 * between the last snapshot and the end is lost. A client that disconnects
 * interrupts the response's fiber, and with it the request: its record ends
 * `interrupted`, keeping the tokens already delivered. Shutdown does not
 * cut a request stream short: it runs to its terminal event, within the
 * server's drain timeout.
 *
 * @since 0.1.0
 */
import { HttpApiSchema, type HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Either, Option, Schema, Stream } from "effect"
import { Completed, Suspended } from "../../domain/AgentResponse.js"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import { InvalidRequest } from "../../domain/PipelineError.js"
import * as PipelineRequest from "../../domain/PipelineRequest.js"
import { RequestId } from "../../domain/RequestId.js"
import { Pipeline } from "../../pipeline/Pipeline.js"
import { feed } from "../../runtime/internal/progressFeed.js"
import { ExecutionStore } from "../../stores/contract/ExecutionStore.js"
import * as ApiError from "../ApiError.js"
import { diff } from "./progress.js"
import { isFinal } from "./recordWatch.js"
import * as Sse from "./sse.js"

/** What the stream is made of before progress is derived. */
type Item =
  | { readonly _tag: "Event"; readonly event: Sse.SseEvent }
  | { readonly _tag: "Snapshot"; readonly record: ExecutionRecord }
  | { readonly _tag: "Terminal"; readonly event: Sse.SseEvent }
  | { readonly _tag: "Idle" }

interface Progressed {
  readonly last: ExecutionRecord | undefined
  readonly done: boolean
}

/**
 * The `rejected` event's data: the error's status and its `ApiError` body.
 *
 * @since 0.1.0
 * @category encoding
 */
export const rejectedData = (error: ApiError.ApiError) => {
  const schema = ApiError.all.find((errorClass) => error instanceof errorClass)
  const status = schema === undefined ? 500 : HttpApiSchema.getStatusError(schema)
  return { status, _tag: error._tag, error: error.error }
}

const internalError = new ApiError.InternalError({
  error: { type: "server_error", code: "internal", message: "the request failed on the server" }
})

const encodeCompleted = Schema.encode(Completed)
const encodeSuspended = Schema.encode(Suspended)

/**
 * Derives progress from snapshots (only newer ones), passes the other
 * events through, and drops whatever comes after the terminal event.
 */
const step = (state: Progressed, item: Item): readonly [Progressed, ReadonlyArray<Sse.SseEvent | Sse.Idle>] => {
  if (state.done) return [state, []]
  switch (item._tag) {
    case "Idle":
      return [state, [Sse.idle]]
    case "Event":
      return [state, [item.event]]
    case "Terminal":
      return [{ ...state, done: true }, [item.event]]
    case "Snapshot": {
      const last = state.last
      // A snapshot taken before the final read can arrive after it: never go back. The
      // first final snapshot is news even at a revision the store numbered lower.
      if (
        last !== undefined && item.record.recordRevision <= last.recordRevision &&
        (isFinal(last) || !isFinal(item.record))
      ) return [state, []]
      const events = diff(last, item.record).map((p) => Sse.event("progress", p))
      return [{ ...state, last: item.record }, events]
    }
  }
}

/**
 * The SSE response of one streamed request.
 *
 * @example
 * ```ts
 * // In an HttpApi handler:
 * requestStream(payload, { pollInterval: "250 millis", keepAlive: "15 seconds", draining: shutdown.draining })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const requestStream: (
  input: PipelineRequest.Input,
  options: Sse.StreamOptions
) => Effect.Effect<HttpServerResponse.HttpServerResponse, ApiError.ApiError, Pipeline | ExecutionStore> = Effect.fn(
  "AgentServer.requestStream"
)(function*(input: PipelineRequest.Input, options: Sse.StreamOptions) {
  const pipeline = yield* Pipeline
  const store = yield* ExecutionStore
  const decoded = yield* Effect.mapError(PipelineRequest.decode(input), ApiError.fromPipelineError)
  const requestId = decoded.requestId ?? RequestId.make(globalThis.crypto.randomUUID())
  if (decoded.requestId !== undefined) {
    // A store that cannot answer does not refuse the request here: the pipeline decides.
    const existing = yield* Effect.either(store.get(requestId))
    if (Either.isRight(existing) && Option.isSome(existing.right)) {
      return yield* Effect.fail(ApiError.fromPipelineError(
        new InvalidRequest({
          reason: "request_id_in_use",
          path: "requestId",
          detail: `"${requestId}" already names a stored execution record`
        })
      ))
    }
  }
  const request = new PipelineRequest.PipelineRequest({
    request: decoded.request,
    metadata: decoded.metadata,
    requestId
  }, { disableValidation: true })

  const run = Stream.suspend(() => {
    let terminal: Sse.SseEvent | undefined
    const hold = (event: Sse.SseEvent) =>
      Effect.sync(() => {
        terminal = event
      })
    const pipelineEvents: Stream.Stream<Item> = pipeline.stream(request).pipe(
      Stream.mapEffect((event): Effect.Effect<Option.Option<Item>> => {
        switch (event._tag) {
          case "Token":
            return Effect.succeed(Option.some({ _tag: "Event", event: Sse.event("token", { text: event.text }) }))
          case "Completed":
            return Effect.as(
              Effect.flatMap(Effect.orDie(encodeCompleted(event)), (data) => hold(Sse.event("completed", data))),
              Option.none()
            )
          case "Suspended":
            return Effect.as(
              Effect.flatMap(Effect.orDie(encodeSuspended(event)), (data) => hold(Sse.event("suspended", data))),
              Option.none()
            )
        }
      }),
      Stream.filterMap((item) => item),
      Stream.catchAllCause((cause) =>
        Either.match(Cause.failureOrCause(cause), {
          onLeft: (error) =>
            Stream.fromEffect(hold(Sse.event("rejected", rejectedData(ApiError.fromPipelineError(error))))).pipe(
              Stream.drain
            ),
          onRight: (other) =>
            Cause.isInterruptedOnly(other) ? Stream.failCause(other) : Stream.fromEffect(
              Effect.zipRight(
                Effect.logError("streamed request failed", other).pipe(Effect.annotateLogs({ requestId })),
                hold(Sse.event("rejected", rejectedData(internalError)))
              )
            ).pipe(Stream.drain)
        })
      )
    )
    // Runs once the pipeline's stream has ended (and so finalized the record).
    const final: Stream.Stream<Item> = Stream.fromIterableEffect(Effect.gen(function*() {
      const items: Array<Item> = []
      const found = yield* Effect.either(store.get(requestId))
      if (Either.isRight(found) && Option.isSome(found.right)) {
        items.push({ _tag: "Snapshot", record: found.right.value })
      }
      items.push({ _tag: "Terminal", event: terminal ?? Sse.event("rejected", rejectedData(internalError)) })
      return items
    }))
    const idleItem: Item = { _tag: "Idle" }
    // Moments without news are the stream's idle moments (its keep-alive clock).
    const snapshots: Stream.Stream<Item> = feed(requestId, { store, pollInterval: options.pollInterval }).pipe(
      Stream.map(Option.match({ onNone: () => idleItem, onSome: (record): Item => ({ _tag: "Snapshot", record }) })),
      // A record that no longer decodes only stops the progress; the final read decides the end.
      Stream.catchAll(() => Stream.empty),
      // Once the watch ended, idle moments still come (the request may run on without a record).
      Stream.concat(Stream.repeatEffect(Effect.as(Effect.sleep(options.pollInterval), idleItem)))
    )
    return Stream.concat(Sse.mergeLeft(pipelineEvents, snapshots), final)
  })

  const started: Item = { _tag: "Event", event: Sse.event("started", { requestId }) }
  const initial: Progressed = { last: undefined, done: false }
  const events = Stream.concat(Stream.make(started), run).pipe(
    Stream.mapAccum(initial, step),
    Stream.flattenIterables
  )
  return Sse.response(events, options.keepAlive)
})
