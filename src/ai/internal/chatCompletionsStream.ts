/**
 * A streamed Chat Completions answer (`stream: true`) as `@effect/ai`
 * stream parts (issue 19), from the data of its server-sent events:
 *
 * - the first event gives the `response-metadata` part (id, model, time);
 * - `delta.content` pieces are `text-delta` parts between one `text-start`
 *   and one `text-end`;
 * - `delta.tool_calls` pieces are gathered by their `index` (a piece with a
 *   new `id` at a known index, or without an index and with an `id`, starts
 *   a new call; without either it continues the last one): `tool-params-*`
 *   parts as they come, a `tool-call` part (arguments parsed) when the
 *   answer ends. A whole call in one piece (Ollama) is a call too;
 * - the answer ends at `data: [DONE]` or at the end of the body, whichever
 *   comes first, with one `finish` part: the last `finish_reason` seen and
 *   the usage of the usage chunk (`stream_options.include_usage`), or no
 *   counts when the server sent none (mock-llm, older servers);
 * - a `data: {"error": …}` event fails the stream with the
 *   `HttpResponseError` it reports (see `reportedError`); an event that is
 *   not JSON, or not a chunk, with `MalformedOutput`.
 */
import { type AiError, IdGenerator, type Response } from "@effect/ai"
import { Effect, Either, Schema, Stream } from "effect"
import {
  finishReasonOf,
  malformedOutput,
  metadataOf,
  paramsOf,
  reportedError,
  usageOf
} from "./chatCompletionsResponse.js"
import { ChatCompletionChunk, serverErrorOf, type ToolCallDelta, type Usage } from "./chatCompletionsWire.js"

const method = "createChatCompletionStream"

interface Call {
  id: string | undefined
  name: string | undefined
  args: string
  /** `tool-params-start` sent (under `id`). */
  started: boolean
  /** How much of `args` went out as `tool-params-delta`. */
  sent: number
}

const textId = "text"

const parse = (data: string): Either.Either<unknown, unknown> => {
  try {
    return Either.right(JSON.parse(data))
  } catch (cause) {
    return Either.left(cause)
  }
}

/**
 * The parts of a streamed answer, from the data of its events.
 *
 * @since 0.1.0
 * @category utils
 */
export const partsOfStream = (
  events: Stream.Stream<string, AiError.AiError>,
  request: typeof AiError.HttpRequestDetails.Type
): Stream.Stream<Response.StreamPartEncoded, AiError.AiError, IdGenerator.IdGenerator> =>
  Stream.unwrap(Effect.map(IdGenerator.IdGenerator, (ids) => {
    let metadataSent = false
    let textOpen = false
    let finishReason: string | undefined
    let usage: Usage | undefined
    const calls: Array<Call> = []
    const byIndex = new Map<number, Call>()

    const open = (): Call => {
      const call: Call = { id: undefined, name: undefined, args: "", started: false, sent: 0 }
      calls.push(call)
      return call
    }

    const callOf = (delta: ToolCallDelta): Call => {
      if (delta.index === undefined) {
        const last = calls.at(-1)
        return last === undefined || (delta.id !== undefined && last.id !== undefined && last.id !== delta.id)
          ? open()
          : last
      }
      const known = byIndex.get(delta.index)
      if (known !== undefined && (delta.id === undefined || known.id === undefined || known.id === delta.id)) {
        return known
      }
      const call = open()
      byIndex.set(delta.index, call)
      return call
    }

    /** The start of a call's parameters, once its name is known, and the arguments not sent yet. */
    const progress = (call: Call, parts: Array<Response.StreamPartEncoded>) =>
      Effect.gen(function*() {
        if (call.name === undefined) return
        if (!call.started) {
          call.id ??= yield* ids.generateId()
          call.started = true
          parts.push({ type: "tool-params-start", id: call.id, name: call.name })
        }
        if (call.args.length > call.sent) {
          parts.push({ type: "tool-params-delta", id: call.id!, delta: call.args.slice(call.sent) })
          call.sent = call.args.length
        }
      })

    const next = (data: string) =>
      Effect.gen(function*() {
        const parsed = parse(data)
        if (Either.isLeft(parsed)) {
          return yield* malformedOutput(method, "an event of the stream is not JSON", parsed.left)
        }
        const reported = serverErrorOf(parsed.right)
        if (reported !== undefined) return yield* reportedError(reported, method, request, data)
        const decoded = Schema.decodeUnknownEither(ChatCompletionChunk)(parsed.right)
        if (Either.isLeft(decoded)) {
          return yield* malformedOutput(method, "an event of the stream is not a chat completion chunk", decoded.left)
        }
        const chunk = decoded.right
        const parts: Array<Response.StreamPartEncoded> = []
        if (!metadataSent) {
          metadataSent = true
          parts.push(metadataOf(chunk))
        }
        const choice = chunk.choices?.[0]
        const content = choice?.delta?.content
        if (content !== undefined && content !== "") {
          if (!textOpen) {
            textOpen = true
            parts.push({ type: "text-start", id: textId })
          }
          parts.push({ type: "text-delta", id: textId, delta: content })
        }
        for (const delta of choice?.delta?.tool_calls ?? []) {
          const call = callOf(delta)
          call.id ??= delta.id
          call.name ??= delta.function?.name
          call.args += delta.function?.arguments ?? ""
          yield* progress(call, parts)
        }
        if (choice?.finish_reason !== undefined) finishReason = choice.finish_reason
        if (chunk.usage !== undefined) usage = chunk.usage
        return parts
      })

    const end = Effect.gen(function*() {
      const parts: Array<Response.StreamPartEncoded> = []
      if (textOpen) parts.push({ type: "text-end", id: textId })
      for (const call of calls) {
        if (call.name === undefined) {
          return yield* malformedOutput(method, "the stream ended with a tool call that has no function name")
        }
        yield* progress(call, parts)
        const params = yield* paramsOf(call.name, call.args, method)
        parts.push({ type: "tool-params-end", id: call.id! })
        parts.push({ type: "tool-call", id: call.id!, name: call.name, params })
      }
      parts.push({
        type: "finish",
        reason: finishReasonOf(finishReason, calls.length > 0, "unknown"),
        usage: usageOf(usage)
      })
      return parts
    })

    return events.pipe(
      Stream.takeWhile((data) => data.trim() !== "[DONE]"),
      Stream.mapEffect(next),
      Stream.flattenIterables,
      Stream.concat(Stream.fromIterableEffect(end))
    )
  }))
