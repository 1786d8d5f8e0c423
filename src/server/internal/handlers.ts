/**
 * The endpoints' handlers, one Layer per group of the {@link Api}. Bodies
 * are read with `requestBody.ts` (bounded, then decoded by the library's
 * own decoder); library errors become `ApiError`s once, here
 * (`fromPipelineError`, `fromStoreError`). The SSE endpoints hand the
 * decoded input to the streams (`requestStream`, `recordEvents`,
 * `progressEvents`).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import type { Limits } from "../../domain/PipelineRequest.js"
import { Pipeline } from "../../pipeline/Pipeline.js"
import { CheckpointStore } from "../../stores/contract/CheckpointStore.js"
import { ExecutionStore } from "../../stores/contract/ExecutionStore.js"
import * as ApiError from "../ApiError.js"
import { Api, ResumeBody } from "./api.js"
import { chatCompletions } from "./chatCompletions.js"
import { ChatCompletionRequest } from "./chatCompletionsWire.js"
import { progressEvents } from "./progressEvents.js"
import { recordEvents } from "./recordEvents.js"
import { toListQuery, toRecordList } from "./recordQuery.js"
import { decodeBody, pipelineRequest, readJson } from "./requestBody.js"
import { requestStream } from "./requestStream.js"
import type { StreamOptions } from "./sse.js"

/** What the handlers need to know. */
export interface HandlerOptions {
  readonly maxBodyBytes: number
  readonly stream: StreamOptions
}

/**
 * The limits the server's decoder checks: nothing larger than the body can
 * arrive anyway; the agent's own (maybe smaller) limits are checked by the
 * pipeline itself, with the same typed error.
 */
const limitsOf = (options: HandlerOptions): Limits => ({
  maxRequestBytes: options.maxBodyBytes,
  maxMetadataBytes: options.maxBodyBytes
})

/** A pipeline request read from the body (the library's decoder bounds the metadata's depth). */
const readRequest = (request: Parameters<typeof readJson>[0], options: HandlerOptions) =>
  Effect.flatMap(readJson(request, options.maxBodyBytes), (body) => pipelineRequest(body, limitsOf(options)))

/** `POST /v1/requests`, `POST /v1/requests/stream`, `GET /v1/requests/{id}/progress`. */
export const requests = (options: HandlerOptions) =>
  HttpApiBuilder.group(Api, "requests", (handlers) =>
    handlers
      .handleRaw("process", ({ request }) =>
        Effect.gen(function*() {
          const input = yield* readRequest(request, options)
          const pipeline = yield* Pipeline
          return yield* Effect.mapError(pipeline.process(input), ApiError.fromPipelineError)
        }))
      .handleRaw(
        "stream",
        ({ request }) => Effect.flatMap(readRequest(request, options), (input) => requestStream(input, options.stream))
      )
      .handleRaw("progress", ({ path }) => progressEvents(path.id, options.stream)))

const decodeResume = decodeBody(ResumeBody)

/** `POST /v1/checkpoints/{id}/resume`. */
export const checkpoints = (options: HandlerOptions) =>
  HttpApiBuilder.group(
    Api,
    "checkpoints",
    (handlers) =>
      handlers.handleRaw("resume", ({ path, request }) =>
        Effect.gen(function*() {
          const body = yield* Effect.flatMap(readJson(request, options.maxBodyBytes), decodeResume)
          const pipeline = yield* Pipeline
          return yield* Effect.mapError(
            pipeline.resume(path.id, body.decision, { planDigest: body.planDigest }),
            ApiError.fromPipelineError
          )
        }))
  )

/**
 * `GET /v1/checkpoints/{id}`: the waiting plan and its digest. A stored
 * checkpoint is not verified here (a read-only viewer has no key): resume
 * verifies its seal before anything runs, so a tampered plan shown here
 * can still not be approved.
 */
export const pendingCheckpoints = HttpApiBuilder.group(
  Api,
  "pendingCheckpoints",
  (handlers) =>
    handlers.handle("get", ({ path }) =>
      Effect.gen(function*() {
        const store = yield* CheckpointStore
        const found = yield* store.get(path.id).pipe(
          Effect.catchTags({
            ExecutionStoreError: (error) => Effect.fail(ApiError.fromStoreError(error)),
            CheckpointDecodeError: () =>
              Effect.fail(
                new ApiError.Unprocessable({
                  error: {
                    type: "server_error",
                    code: "checkpoint_corrupt",
                    message: "the stored checkpoint does not decode"
                  }
                })
              )
          })
        )
        if (Option.isNone(found)) {
          return yield* new ApiError.NotFound({
            error: {
              type: "not_found_error",
              code: "not_found",
              message: `no pending checkpoint ${JSON.stringify(path.id)}`
            }
          })
        }
        const { checkpointId, createdAt, phase, plan, planDigest, reason, requestId } = found.value
        return { checkpointId, requestId, phase, reason, createdAt, plan, planDigest }
      }))
)

const notFound = (requestId: string) =>
  new ApiError.NotFound({
    error: { type: "not_found_error", code: "not_found", message: `no execution record ${JSON.stringify(requestId)}` }
  })

const badCursor = new ApiError.BadRequest({
  error: {
    type: "invalid_request_error",
    code: "malformed",
    message: "cursor is not one this server handed out",
    param: "cursor"
  }
})

/**
 * `GET /v1/records`, `GET /v1/records/{id}`, `GET /v1/records/{id}/events`.
 * The same Layer serves the full API and the read-only one (the group is
 * the same value in both).
 */
export const records = (options: HandlerOptions) =>
  HttpApiBuilder.group(Api, "records", (handlers) =>
    handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const query = yield* toListQuery(urlParams)
          const store = yield* ExecutionStore
          const page = yield* store.list(query).pipe(
            Effect.mapError((error): ApiError.ApiError =>
              query.cursor !== undefined && error.detail.startsWith("not a cursor")
                ? badCursor
                : ApiError.fromStoreError(error)
            )
          )
          return toRecordList(page)
        }))
      .handle("get", ({ path }) =>
        Effect.gen(function*() {
          const store = yield* ExecutionStore
          const found = yield* store.get(path.id).pipe(
            Effect.catchTags({
              ExecutionStoreError: (error) => Effect.fail(ApiError.fromStoreError(error)),
              RecordDecodeError: (error) => Effect.fail(ApiError.fromRecordDecodeError(error))
            })
          )
          if (Option.isNone(found)) return yield* notFound(path.id)
          return found.value
        }))
      .handleRaw("events", ({ path }) => recordEvents(path.id, options.stream)))

const decodeChat = decodeBody(ChatCompletionRequest)

/** `POST /v1/chat/completions` (buffered or `stream: true`). */
export const openai = (options: HandlerOptions) =>
  HttpApiBuilder.group(
    Api,
    "openai",
    (handlers) =>
      handlers.handleRaw("chatCompletions", ({ request }) =>
        Effect.flatMap(
          Effect.flatMap(readJson(request, options.maxBodyBytes), decodeChat),
          (body) => chatCompletions(body, options.stream)
        ))
  )
