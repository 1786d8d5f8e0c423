/**
 * A buffered Chat Completions answer as `@effect/ai` response parts (issue
 * 19), and what a streamed one shares with it: the finish reason, the token
 * usage, the response's metadata, a tool call's arguments, and the failures.
 *
 * - `choices[0].message.content` (a string; null, `""` or missing is no
 *   text) is a `text` part; each tool call a `tool-call` part (its
 *   arguments parsed as JSON, `""` as `{}`); `usage.prompt_tokens` /
 *   `completion_tokens` / `total_tokens` the finish part's usage.
 * - A body that is not JSON of this shape is `MalformedOutput` (the
 *   provider's fault: the pipeline retries it); a 200 whose body is an error
 *   (`{"error": …}`) is the `HttpResponseError` it reports.
 * - Structured output by forced tool call: the arguments of a call to the
 *   object's function are the answer's text (whatever the finish reason — a
 *   server answering a named `tool_choice` with `"stop"` included).
 */
import { AiError, IdGenerator, type Response, Tool } from "@effect/ai"
import { Effect, Either, Schema } from "effect"
import { moduleName } from "./chatCompletionsClient.js"
import { ChatCompletion, type ServerError, serverErrorOf, type Usage } from "./chatCompletionsWire.js"

const finishReasons: Readonly<Record<string, Response.FinishReason>> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool-calls",
  function_call: "tool-calls",
  content_filter: "content-filter",
  error: "error"
}

/**
 * The finish reason a server's `finish_reason` maps to. None: `tool-calls`
 * when there were calls, else `stop` for a whole answer, `unknown` for a
 * stream that ended without saying why.
 *
 * @since 0.1.0
 * @category utils
 */
export const finishReasonOf = (
  reason: string | undefined,
  hasToolCalls: boolean,
  fallback: Response.FinishReason
): Response.FinishReason => {
  const mapped = reason === undefined ? undefined : finishReasons[reason]
  if (mapped !== undefined) return mapped
  if (hasToolCalls) return "tool-calls"
  return reason === undefined ? fallback : "other"
}

/**
 * The finish part's usage (every count undefined when the server sent none).
 *
 * @since 0.1.0
 * @category utils
 */
export const usageOf = (usage: Usage | undefined): typeof Response.Usage.Encoded => {
  const inputTokens = usage?.prompt_tokens
  const outputTokens = usage?.completion_tokens
  const totalTokens = usage?.total_tokens ??
    (inputTokens !== undefined && outputTokens !== undefined ? inputTokens + outputTokens : undefined)
  return { inputTokens, outputTokens, totalTokens }
}

/**
 * The `response-metadata` part of an answer or of a stream's first event.
 *
 * @since 0.1.0
 * @category utils
 */
export const metadataOf = (
  answer: {
    readonly id?: string | undefined
    readonly model?: string | undefined
    readonly created?: number | undefined
  }
): Response.ResponseMetadataPartEncoded => {
  const at = answer.created === undefined ? undefined : new Date(answer.created * 1000)
  return {
    type: "response-metadata",
    ...(answer.id === undefined ? {} : { id: answer.id }),
    ...(answer.model === undefined ? {} : { modelId: answer.model }),
    ...(at === undefined || Number.isNaN(at.getTime()) ? {} : { timestamp: at.toISOString() })
  }
}

/**
 * A failure to read what the server sent.
 *
 * @since 0.1.0
 * @category constructors
 */
export const malformedOutput = (method: string, description: string, cause?: unknown): AiError.MalformedOutput =>
  new AiError.MalformedOutput({
    module: moduleName,
    method,
    description,
    ...(cause === undefined ? {} : { cause })
  })

/**
 * The error a server reported inside a 200 (a mid-stream event, a body):
 * `HttpResponseError` with the status the error names (vLLM, llama.cpp and
 * LiteLLM name one: a 5xx is then transient like any 5xx), else the
 * response's 200; its body is what the server sent.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reportedError = (
  error: ServerError,
  method: string,
  request: typeof AiError.HttpRequestDetails.Type,
  body: string
): AiError.HttpResponseError =>
  new AiError.HttpResponseError({
    module: moduleName,
    method,
    reason: "StatusCode",
    request,
    response: { status: error.status ?? 200, headers: {} },
    body,
    description: `the server reported an error: ${error.message}`
  })

/**
 * A tool call's arguments, parsed (`""` or none is `{}`).
 *
 * @since 0.1.0
 * @category utils
 */
export const paramsOf = (
  name: string,
  args: string | Readonly<Record<string, unknown>> | undefined,
  method: string
): Effect.Effect<unknown, AiError.MalformedOutput> =>
  typeof args === "object"
    ? Effect.succeed(args)
    : args === undefined || args.trim() === ""
    ? Effect.succeed({})
    : Effect.try({
      try: () => Tool.unsafeSecureJsonParse(args),
      catch: (cause) => malformedOutput(method, `the arguments of a call to '${name}' are not JSON`, cause)
    })

const argumentsText = (args: string | Readonly<Record<string, unknown>> | undefined): string =>
  typeof args === "object" ? JSON.stringify(args) : args ?? ""

const method = "createChatCompletion"

/**
 * How an answer is read: `objectTool` names the function whose call is the
 * structured output (forced tool call), `unfence` strips a Markdown code
 * fence around an answer that was asked to be only JSON.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadOptions {
  readonly objectTool?: string | undefined
  readonly unfence?: boolean | undefined
}

const fenced = /^\s*```[\w-]*\s*\n([\s\S]*?)\n?\s*```\s*$/

/**
 * A buffered answer's body as response parts.
 *
 * @since 0.1.0
 * @category utils
 */
export const partsOf = (
  body: unknown,
  request: typeof AiError.HttpRequestDetails.Type,
  options: ReadOptions = {}
): Effect.Effect<Array<Response.PartEncoded>, AiError.AiError, IdGenerator.IdGenerator> =>
  Effect.gen(function*() {
    const reported = serverErrorOf(body)
    if (reported !== undefined) {
      return yield* reportedError(reported, method, request, JSON.stringify(body))
    }
    const decoded = Schema.decodeUnknownEither(ChatCompletion)(body)
    if (Either.isLeft(decoded)) {
      return yield* malformedOutput(method, "the answer is not a chat completion", decoded.left)
    }
    const answer = decoded.right
    const choice = answer.choices?.[0]
    const parts: Array<Response.PartEncoded> = [metadataOf(answer)]
    const calls = choice?.message?.tool_calls ?? []
    const objectCall = options.objectTool === undefined
      ? undefined
      : calls.find((call) => call.function.name === options.objectTool)
    let text = choice?.message?.content
    if (objectCall !== undefined) text = argumentsText(objectCall.function.arguments)
    else if (text !== undefined && options.unfence === true) text = text.replace(fenced, "$1")
    if (text !== undefined && (text !== "" || calls.length === 0)) parts.push({ type: "text", text })
    let hasToolCalls = false
    for (const call of calls) {
      if (call === objectCall) continue
      hasToolCalls = true
      const id = call.id ?? (yield* Effect.flatMap(IdGenerator.IdGenerator, (ids) => ids.generateId()))
      const params = yield* paramsOf(call.function.name, call.function.arguments, method)
      parts.push({ type: "tool-call", id, name: call.function.name, params })
    }
    parts.push({
      type: "finish",
      reason: finishReasonOf(choice?.finish_reason, hasToolCalls, "stop"),
      usage: usageOf(answer.usage)
    })
    return parts
  })
