/**
 * `POST /v1/chat/completions` (issue 21): an agent behind OpenAI's Chat
 * Completions protocol, so existing clients can talk to it.
 *
 * - The last `user` message is the request; the messages before it become
 *   `metadata.conversation_turns` (`{ role, content }`, `developer` as
 *   `system`), which the pipeline turns into `conversation_history` (the
 *   `ConversationHistoryPreparer`). Messages after the last user message
 *   (a client's own tool round-trips) are not sent to the agent.
 * - `user` becomes `metadata.user_id`; `metadata` is the request's
 *   metadata. Both `conversation_turns` and `user_id` from the body's
 *   fields win over the same keys in `metadata`.
 * - Buffered: one `chat.completion` (`id` `chatcmpl-<requestId>`, `model`
 *   echoed, `finish_reason: "stop"`). `usage` sums the token counts of the
 *   request's recorded model calls (plans, re-asks and synthesis); zeros
 *   when the provider reported none or model calls are not recorded.
 * - `stream: true`: a role chunk, a content chunk per token, a final chunk
 *   with `finish_reason`, a usage chunk (no choices) with
 *   `stream_options.include_usage`, then `data: [DONE]`. Streamed deltas
 *   are the model's draft; when AfterSynthesis hooks changed the answer,
 *   the final chunk's `agent.response` carries the final text.
 * - A suspended request (HITL approval) answers normally, with content
 *   saying which checkpoint waits, and the extension field `agent`
 *   (`status: "suspended"`, `checkpointId`, `planDigest`) for clients that
 *   know it; every answer carries `agent.requestId` and `agent.status`.
 * - Errors: before a stream starts, the `ApiError` with its status (its
 *   body's `error` is OpenAI's error object, so the client raises
 *   `APIError` with our message); inside a stream, one
 *   `data: {"error": …}` frame and the end (no `[DONE]`).
 *
 * @since 0.1.0
 */
import { HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Effect, Either, Option, Schema, Stream } from "effect"
import type { Completed, Suspended } from "../../domain/AgentResponse.js"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import type { Json, JsonObject } from "../../domain/Json.js"
import * as PipelineRequest from "../../domain/PipelineRequest.js"
import { RequestId } from "../../domain/RequestId.js"
import { Pipeline } from "../../pipeline/Pipeline.js"
import { ExecutionStore } from "../../stores/contract/ExecutionStore.js"
import * as ApiError from "../ApiError.js"
import * as Wire from "./chatCompletionsWire.js"
import * as Sse from "./sse.js"

const badRequest = (message: string, param: string) =>
  new ApiError.BadRequest({ error: { type: "invalid_request_error", code: "malformed", message, param } })

const internalError = new ApiError.InternalError({
  error: { type: "server_error", code: "internal", message: "the request failed on the server" }
})

/** The turn's text for the conversation history. */
const turnOf = (message: Wire.Message): JsonObject => ({
  role: message.role === "developer" ? "system" : message.role,
  content: Wire.contentText(message.content)
})

/** The pipeline request a chat body asks for. */
const toInput = (body: Wire.ChatCompletionRequest, requestId: string) => {
  const messages = body.messages
  let last = -1
  messages.forEach((message, index) => {
    if (message.role === "user") last = index
  })
  const user = messages[last]
  if (user === undefined) return Either.left(badRequest("messages must contain a user message", "messages"))
  const request = Wire.contentText(user.content)
  if (request.length === 0) {
    return Either.left(badRequest("the last user message has no text", `messages[${last}].content`))
  }
  const metadata: Record<string, Json> = { ...body.metadata }
  if (last > 0) metadata.conversation_turns = messages.slice(0, last).map(turnOf)
  if (body.user !== undefined) metadata.user_id = body.user
  return Either.right({ request, metadata, requestId })
}

/** Token counts of the record's model calls; zeros when none were reported. */
export const usageOf = (record: Option.Option<ExecutionRecord>): Wire.Usage => {
  let prompt = 0
  let completion = 0
  if (Option.isSome(record)) {
    for (const call of record.value.modelCalls ?? []) {
      prompt += call.usage?.inputTokens ?? 0
      completion += call.usage?.outputTokens ?? 0
    }
  }
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

const suspendedText = (suspended: Suspended) =>
  `This request is waiting for approval (checkpoint ${suspended.checkpoint.checkpointId}). ` +
  `Approve or reject it at POST /v1/checkpoints/${suspended.checkpoint.checkpointId}/resume.`

const extensionOf = (result: Completed | Suspended): Wire.AgentExtension =>
  result._tag === "Completed"
    ? { requestId: result.response.requestId, status: "completed" }
    : {
      requestId: result.requestId,
      status: "suspended",
      checkpointId: result.checkpoint.checkpointId,
      planDigest: result.checkpoint.planDigest
    }

const encodeCompletion = Schema.encode(Wire.ChatCompletion)
const encodeChunk = Schema.encode(Wire.ChatCompletionChunk)

/**
 * The answer to a chat completions body: JSON, or with `stream: true` an
 * SSE stream of chunks.
 *
 * @since 0.1.0
 * @category constructors
 */
export const chatCompletions: (
  body: Wire.ChatCompletionRequest,
  options: Sse.StreamOptions
) => Effect.Effect<HttpServerResponse.HttpServerResponse, ApiError.ApiError, Pipeline | ExecutionStore> = Effect.fn(
  "AgentServer.chatCompletions"
)(function*(body: Wire.ChatCompletionRequest, options: Sse.StreamOptions) {
  const pipeline = yield* Pipeline
  const store = yield* ExecutionStore
  const requestId = RequestId.make(globalThis.crypto.randomUUID())
  const input = yield* toInput(body, requestId)
  const request = yield* Effect.mapError(PipelineRequest.decode(input), ApiError.fromPipelineError)
  const id = `chatcmpl-${requestId}`
  const created = Math.floor((yield* Clock.currentTimeMillis) / 1000)
  const model = body.model
  // The finished record (written when the request ended); absent if the store cannot say.
  const record = Effect.map(Effect.option(store.get(requestId)), Option.flatten)

  if (body.stream !== true) {
    const result = yield* Effect.mapError(pipeline.process(request), ApiError.fromPipelineError)
    const usage = usageOf(yield* record)
    const content = result._tag === "Completed" ? result.response.response : suspendedText(result)
    const completion = yield* Effect.orDie(encodeCompletion({
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{
        index: 0,
        message: { role: "assistant", content, refusal: null },
        logprobs: null,
        finish_reason: "stop"
      }],
      usage,
      agent: extensionOf(result)
    }))
    return HttpServerResponse.unsafeJson(completion)
  }

  const includeUsage = body.stream_options?.include_usage === true
  const chunk = (
    choices: ReadonlyArray<Wire.ChatCompletionChunk["choices"][number]>,
    extra: { readonly usage?: Wire.Usage | null; readonly agent?: Wire.AgentExtension } = {}
  ) =>
    Effect.map(
      Effect.orDie(encodeChunk({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices,
        ...(includeUsage ? { usage: null } : {}),
        ...extra
      })),
      (encoded) => Sse.dataFrame(JSON.stringify(encoded))
    )
  const delta = (content: string) => chunk([{ index: 0, delta: { content }, logprobs: null, finish_reason: null }])
  const errorFrame = (error: ApiError.ApiError) =>
    Sse.dataFrame(JSON.stringify({ _tag: error._tag, error: error.error }))

  const frames = Stream.suspend(() => {
    let streamed = ""
    const answer = pipeline.stream(request).pipe(
      Stream.mapEffect((event) => {
        switch (event._tag) {
          case "Token":
            streamed += event.text
            return delta(event.text)
          case "Suspended":
            return Effect.zipWith(
              delta(suspendedText(event)),
              chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }], { agent: extensionOf(event) }),
              (a, b) => a + b
            )
          case "Completed": {
            const final = event.response.response
            const agent: Wire.AgentExtension = final === streamed
              ? extensionOf(event)
              : { ...extensionOf(event), response: final }
            return chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }], { agent })
          }
        }
      })
    )
    // After the pipeline's stream ended: its record is final, so its usage is complete.
    const tail = Stream.fromEffect(Effect.gen(function*() {
      const usage = includeUsage ? yield* chunk([], { usage: usageOf(yield* record) }) : ""
      return usage + Sse.dataFrame("[DONE]")
    }))
    return Stream.concat(answer, tail).pipe(
      Stream.catchAllCause((cause) =>
        Either.match(Cause.failureOrCause(cause), {
          onLeft: (error) => Stream.make(errorFrame(ApiError.fromPipelineError(error))),
          onRight: (other) =>
            Cause.isInterruptedOnly(other) ? Stream.failCause(other) : Stream.fromEffect(
              Effect.as(
                Effect.logError("chat completion stream failed", other).pipe(Effect.annotateLogs({ requestId })),
                errorFrame(internalError)
              )
            )
        })
      )
    )
  })
  const role = chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }])
  return Sse.stream(Stream.concat(Stream.fromEffect(role), frames), options.keepAlive)
})
