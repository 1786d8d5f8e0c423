/**
 * The durable request routes (issue 24): `POST /v1/durable/requests`
 * submits a request and answers 202 with its id at once; `GET
 * /v1/durable/requests/{id}` says where it stands; `POST
 * /v1/durable/approvals/{id}` decides an approval checkpoint (the checks
 * are `DurablePipeline.approve`'s). A request's progress is the same route
 * as any request's, `GET /v1/requests/{id}/progress`: it follows the record
 * whichever runner writes it. Without `DurablePipeline.layer` in the
 * server's context the routes answer 404.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Cause, Effect, Exit, Option } from "effect"
import { DurablePipeline } from "../../durable/internal/durableService.js"
import * as ApiError from "../ApiError.js"
import { Api, ResumeBody } from "./api.js"
import type { HandlerOptions } from "./handlers.js"
import { decodeBody, pipelineRequest, readJson } from "./requestBody.js"

const notServed = new ApiError.NotFound({
  error: {
    type: "not_found_error",
    code: "not_found",
    message: "durable requests are not served here (the agent has no DurablePipeline.layer)"
  }
})

/** The durable service, or 404. */
const durableService = Effect.flatMap(
  Effect.serviceOption(DurablePipeline),
  Option.match({ onNone: () => Effect.fail(notServed), onSome: Effect.succeed })
)

const decodeDecision = decodeBody(ResumeBody)

/** `POST /v1/durable/requests`, `GET /v1/durable/requests/{id}`, `POST /v1/durable/approvals/{id}`. */
export const durable = (options: HandlerOptions) =>
  HttpApiBuilder.group(Api, "durable", (handlers) =>
    handlers
      .handleRaw("submit", ({ request }) =>
        Effect.gen(function*() {
          const durable = yield* durableService
          const body = yield* readJson(request, options.maxBodyBytes)
          const input = yield* pipelineRequest(body, {
            maxRequestBytes: options.maxBodyBytes,
            maxMetadataBytes: options.maxBodyBytes
          })
          const requestId = yield* Effect.mapError(durable.submit(input), ApiError.fromPipelineError)
          return { requestId }
        }))
      .handle("status", ({ path }) =>
        Effect.gen(function*() {
          const durable = yield* durableService
          const polled = yield* durable.poll(path.id)
          if (Option.isNone(polled)) {
            return yield* new ApiError.NotFound({
              error: {
                type: "not_found_error",
                code: "not_found",
                message: `no durable request ${JSON.stringify(path.id)}`
              }
            })
          }
          const status = polled.value
          if (status._tag !== "Complete") return { requestId: path.id, status: "pending" as const }
          const exit = status.exit
          return Exit.isSuccess(exit)
            ? { requestId: path.id, status: "completed" as const, result: exit.value }
            : { requestId: path.id, status: "failed" as const, error: failureOf(exit.cause) }
        }))
      .handleRaw("approve", ({ path, request }) =>
        Effect.gen(function*() {
          const durable = yield* durableService
          const body = yield* Effect.flatMap(readJson(request, options.maxBodyBytes), decodeDecision)
          yield* Effect.mapError(
            durable.approve(path.id, body.decision, { planDigest: body.planDigest }),
            ApiError.fromPipelineError
          )
          return { requestId: path.id.replace(/\/approval\/[0-9]+$/, "") }
        })))

/** A failed request's reason, as its error's message. */
const failureOf = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => "the request died",
    onSome: (error) => (error instanceof Error ? error.message : String(error))
  })
