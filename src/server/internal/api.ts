/**
 * The server's routes declared once as data (DESIGN §7): each endpoint with
 * its payload, success and error Schemas, so `/openapi.json` is derived from
 * them. Request bodies are declared here for the document but read by the
 * handlers themselves (`handleRaw` + `requestBody.ts`): the library's own
 * decoder refuses unknown fields, oversized and over-deep input with its
 * typed errors, and a body that is not JSON gets the stable error body.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Predicate, Schema } from "effect"
import { PipelineResult } from "../../domain/AgentResponse.js"
import { Completed, Rejected, Suspended } from "../../domain/AgentResponse.js"
import { HexDigest } from "../../domain/Checkpoint.js"
import { ExecutionRecord, LifecycleStatus, RecordMode } from "../../domain/ExecutionRecord.js"
import { JsonObject } from "../../domain/Json.js"
import { RoutingPlan } from "../../domain/RoutingPlan.js"
import * as ApiError from "../ApiError.js"
import { ChatCompletion, ChatCompletionRequest } from "./chatCompletionsWire.js"

/** A `text/event-stream` body (written by the handler, documented here). */
const EventStream = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description: "Server-sent events: `id`, `event` and one `data:` line of JSON per event"
})

const id = HttpApiSchema.param("id", Schema.String)

/**
 * The body of `POST /v1/requests` (the encoded `PipelineRequest`; the
 * handler reads it with the library's decoder, which refuses other fields).
 */
export const RequestBody = Schema.Struct({
  request: Schema.NonEmptyString,
  metadata: Schema.optional(JsonObject),
  requestId: Schema.optional(Schema.String.annotations({ description: "A fresh UUID when absent" }))
}).annotations({ identifier: "RequestBody" })

/** The body of `POST /v1/checkpoints/{id}/resume`. */
export const ResumeBody = Schema.Struct({
  decision: Schema.Literal("approve", "reject"),
  planDigest: Schema.String.annotations({ description: "The digest of the plan the approver saw" })
}).annotations({ identifier: "ResumeBody" })

/**
 * The body of `GET /v1/checkpoints/{id}`: what an approver needs to see —
 * the plan waiting for approval and its digest — and nothing else of the
 * checkpoint (not the request's metadata, its enrichments, earlier phases
 * or the MAC).
 */
export const PendingCheckpoint = Schema.Struct({
  checkpointId: Schema.String,
  requestId: Schema.String,
  phase: Schema.Int,
  reason: Schema.String,
  createdAt: Schema.Finite,
  plan: RoutingPlan,
  planDigest: HexDigest
}).annotations({ identifier: "PendingCheckpoint" })

/** A record's completion as the list filters it. */
export const ListedStatus = Schema.Union(LifecycleStatus, Schema.Literal("unknown"))

/** One row of `GET /v1/records`. */
export const RecordSummary = Schema.Struct({
  requestId: Schema.String,
  status: ListedStatus,
  mode: RecordMode,
  startedAt: Schema.optional(Schema.Finite),
  endedAt: Schema.optional(Schema.Finite),
  request: Schema.String.annotations({ description: "The request text's first 200 characters" }),
  models: Schema.Array(Schema.String),
  hookCount: Schema.Int,
  decisions: Schema.Int.annotations({
    description: "Hook invocations that decided something other than continue"
  }),
  checkpointId: Schema.optional(Schema.String),
  traceId: Schema.optional(Schema.String)
}).annotations({ identifier: "RecordSummary" })

/** A decoded {@link RecordSummary}. */
export type RecordSummary = typeof RecordSummary.Type

/** The body of `GET /v1/records`. */
export const RecordList = Schema.Struct({
  records: Schema.Array(RecordSummary),
  undecodable: Schema.Int.annotations({ description: "Stored records on this page that do not decode" }),
  next: Schema.optional(Schema.String.annotations({ description: "The cursor of the next page" }))
}).annotations({ identifier: "RecordList" })

/** The query of `GET /v1/records` (each parameter is checked by the handler). */
export const RecordQuery = Schema.Struct({
  status: Schema.optional(Schema.String.annotations({ description: "A comma-separated list of statuses" })),
  hook: Schema.optional(Schema.String.annotations({ description: "Only records with a run of this hook" })),
  startedFrom: Schema.optional(Schema.String.annotations({ description: "Epoch milliseconds, inclusive" })),
  startedBefore: Schema.optional(Schema.String.annotations({ description: "Epoch milliseconds, exclusive" })),
  limit: Schema.optional(Schema.String.annotations({ description: "Records per page (at most 1000)" })),
  cursor: Schema.optional(Schema.String.annotations({ description: "The `next` of the previous page" }))
})

const eventStreamContent = {
  "text/event-stream": {
    schema: { type: "string", description: "With `stream: true`: `chat.completion.chunk` events, then `data: [DONE]`" }
  }
}

/** An operation whose 200 answer may also be an event stream. */
const withEventStream = (operation: Record<string, unknown>): Record<string, unknown> => {
  const responses = Predicate.isRecord(operation["responses"]) ? operation["responses"] : {}
  const ok = Predicate.isRecord(responses["200"]) ? responses["200"] : {}
  const content = Predicate.isRecord(ok["content"]) ? ok["content"] : {}
  return { ...operation, responses: { ...responses, "200": { ...ok, content: { ...content, ...eventStreamContent } } } }
}

/** `POST /v1/requests`, its streaming twin, and a request's progress (`GET /v1/requests/{id}/progress`). */
export class Requests extends HttpApiGroup.make("requests")
  .add(
    HttpApiEndpoint.post("process", "/v1/requests")
      .setPayload(RequestBody)
      .addSuccess(Schema.Union(Completed, Suspended))
  )
  .add(
    HttpApiEndpoint.post("stream", "/v1/requests/stream")
      .setPayload(RequestBody)
      .addSuccess(EventStream)
  )
  .add(HttpApiEndpoint.get("progress")`/v1/requests/${id}/progress`.addSuccess(EventStream))
{}

/** `POST /v1/checkpoints/{id}/resume`. */
export class Checkpoints extends HttpApiGroup.make("checkpoints")
  .add(
    HttpApiEndpoint.post("resume")`/v1/checkpoints/${id}/resume`
      .setPayload(ResumeBody)
      .addSuccess(PipelineResult)
  )
{}

/**
 * `GET /v1/checkpoints/{id}`: the plan a suspended request waits with. A
 * read, so the read-only viewer serves it too (without the resume route).
 */
export class PendingCheckpoints extends HttpApiGroup.make("pendingCheckpoints")
  .add(HttpApiEndpoint.get("get")`/v1/checkpoints/${id}`.addSuccess(PendingCheckpoint))
{}

/** A durable request's submission: its id (its progress: `GET /v1/requests/{id}/progress`). */
export const DurableSubmitted = Schema.Struct({ requestId: Schema.String }).annotations({
  identifier: "DurableSubmitted"
})

/** Where a durable request stands, and its result once it has ended. */
export const DurableStatus = Schema.Struct({
  requestId: Schema.String,
  status: Schema.Literal("pending", "completed", "failed").annotations({
    description: "`pending`: running, or awaiting an approval or a runner"
  }),
  result: Schema.optional(Schema.Union(Completed, Rejected)),
  error: Schema.optional(Schema.String.annotations({ description: "Why it failed" }))
}).annotations({ identifier: "DurableStatus" })

/**
 * Durable requests (`effect-agent-pipeline/durable`), when the agent has
 * `DurablePipeline.layer`: submit, status, and the decision on an approval
 * checkpoint (`<requestId>/approval/<phase>`).
 */
export class Durable extends HttpApiGroup.make("durable")
  .add(
    HttpApiEndpoint.post("submit", "/v1/durable/requests")
      .setPayload(RequestBody)
      .addSuccess(DurableSubmitted, { status: 202 })
  )
  .add(HttpApiEndpoint.get("status")`/v1/durable/requests/${id}`.addSuccess(DurableStatus))
  .add(
    HttpApiEndpoint.post("approve")`/v1/durable/approvals/${id}`
      .setPayload(ResumeBody)
      .addSuccess(DurableSubmitted, { status: 202 })
  )
{}

/** The records: list, one, and its live events. */
export class Records extends HttpApiGroup.make("records")
  .add(HttpApiEndpoint.get("list", "/v1/records").setUrlParams(RecordQuery).addSuccess(RecordList))
  .add(HttpApiEndpoint.get("get")`/v1/records/${id}`.addSuccess(ExecutionRecord))
  .add(HttpApiEndpoint.get("events")`/v1/records/${id}/events`.addSuccess(EventStream))
{}

/** The OpenAI-compatible `POST /v1/chat/completions`. */
export class OpenAi extends HttpApiGroup.make("openai")
  .add(
    HttpApiEndpoint.post("chatCompletions", "/v1/chat/completions")
      .setPayload(ChatCompletionRequest)
      .addSuccess(ChatCompletion)
      // One Schema per status: the `stream: true` answer is added to the document here.
      .annotate(OpenApi.Transform, withEventStream)
  )
{}

const withErrors = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  api
    .addError(ApiError.BadRequest)
    .addError(ApiError.Unauthorized)
    .addError(ApiError.NotFound)
    .addError(ApiError.Conflict)
    .addError(ApiError.PayloadTooLarge)
    .addError(ApiError.Unprocessable)
    .addError(ApiError.TooManyRequests)
    .addError(ApiError.InternalError)
    .addError(ApiError.Unavailable)

const decodeErrorRef = "#/components/schemas/HttpApiDecodeError"

/** A 400 answer without the platform's decode error, which the server answers as `BadRequest`. */
const withoutDecodeError = (response: unknown): unknown => {
  if (!Predicate.isRecord(response) || !Predicate.isRecord(response["content"])) return response
  const json = response["content"]["application/json"]
  if (!Predicate.isRecord(json) || !Predicate.isRecord(json["schema"])) return response
  const anyOf = json["schema"]["anyOf"]
  if (!Array.isArray(anyOf)) return response
  const kept = anyOf.filter((member) => !(Predicate.isRecord(member) && member["$ref"] === decodeErrorRef))
  const schema = kept.length === 1 ? kept[0] : { ...json["schema"], anyOf: kept }
  return {
    ...response,
    description: "The request body, a parameter or a decision is malformed, or nests too deep",
    content: { ...response["content"], "application/json": { ...json, schema } }
  }
}

/**
 * The document as the server answers: every 400 is a `BadRequest` (the
 * platform's own decode error is mapped to it), so its schema is left out.
 */
const documentAsAnswered = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = Predicate.isRecord(spec["paths"]) ? spec["paths"] : {}
  const mapped: Record<string, unknown> = {}
  for (const [path, operations] of Object.entries(paths)) {
    if (!Predicate.isRecord(operations)) continue
    const byMethod: Record<string, unknown> = {}
    for (const [method, operation] of Object.entries(operations)) {
      byMethod[method] = Predicate.isRecord(operation) && Predicate.isRecord(operation["responses"])
        ? {
          ...operation,
          responses: { ...operation["responses"], "400": withoutDecodeError(operation["responses"]["400"]) }
        }
        : operation
    }
    mapped[path] = byMethod
  }
  const components = Predicate.isRecord(spec["components"]) ? spec["components"] : {}
  const schemas = Predicate.isRecord(components["schemas"]) ? { ...components["schemas"] } : {}
  delete schemas["HttpApiDecodeError"]
  delete schemas["Issue"]
  return { ...spec, paths: mapped, components: { ...components, schemas } }
}

const documented = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) => withErrors(api).annotate(OpenApi.Title, "effect-agent-pipeline").annotate(OpenApi.Transform, documentAsAnswered)

/** Every route: what `AgentServer.layer` serves. */
export class Api extends documented(
  HttpApi.make("agent-pipeline").add(Requests).add(Checkpoints).add(PendingCheckpoints).add(Records).add(OpenAi)
    .add(Durable)
) {}

/** The read-only routes: what the viewer serves over a store. */
export class ReadApi extends documented(HttpApi.make("agent-pipeline").add(PendingCheckpoints).add(Records)) {}
