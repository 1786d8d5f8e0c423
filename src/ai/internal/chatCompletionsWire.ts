/**
 * The Chat Completions wire format (`POST {base}/chat/completions`), as the
 * OpenAI-compatible provider sends and reads it (issue 19).
 *
 * What is sent is typed plainly ({@link ChatRequest}). What is read is
 * decoded by lenient Schemas of exactly the fields the provider reads, so
 * that every server calling itself OpenAI-compatible decodes (vLLM, Ollama,
 * llama.cpp, LM Studio, LiteLLM, mock servers; test/fixtures/wire/):
 * unknown keys are ignored; optional keys are optional and `null` counts as
 * absent (`content` may be null, `""` or missing; `usage` may be missing);
 * `finish_reason` is any string; ids are any string; a tool call's `index`
 * is optional. No `refusal`, `logprobs`, `object` or `system_fingerprint`
 * is required — they are not read.
 */
import { Schema } from "effect"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { nullable: true })

// =============================================================================
// Requests
// =============================================================================

/**
 * A tool call the assistant made, as sent back in the conversation.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestToolCall {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; readonly arguments: string }
}

/**
 * A part of a user message that is not plain text (an image).
 *
 * @since 0.1.0
 * @category models
 */
export type ContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } }

/**
 * A message of the conversation.
 *
 * @since 0.1.0
 * @category models
 */
export type ChatMessage =
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user"; readonly content: string | ReadonlyArray<ContentPart> }
  | {
    readonly role: "assistant"
    readonly content: string
    readonly tool_calls?: ReadonlyArray<RequestToolCall>
  }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string }

/**
 * A function the model may call.
 *
 * @since 0.1.0
 * @category models
 */
export interface FunctionTool {
  readonly type: "function"
  readonly function: {
    readonly name: string
    readonly description?: string
    readonly parameters: unknown
  }
}

/**
 * Which tool the model must (or may) call.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolChoice =
  | "auto"
  | "none"
  | "required"
  | { readonly type: "function"; readonly function: { readonly name: string } }

/**
 * Structured output by JSON Schema.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonSchemaFormat {
  readonly type: "json_schema"
  readonly json_schema: {
    readonly name: string
    readonly description?: string
    readonly schema: unknown
    readonly strict: true
  }
}

/**
 * What the provider sends: the user's request settings (`temperature`,
 * `max_tokens`, …) and the fields the provider owns.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatRequest {
  readonly [setting: string]: unknown
  readonly model: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly tools?: ReadonlyArray<FunctionTool>
  readonly tool_choice?: ToolChoice
  readonly response_format?: JsonSchemaFormat
  readonly stream?: true
  readonly stream_options?: { readonly include_usage: true }
}

// =============================================================================
// Responses
// =============================================================================

/**
 * Token counts (`usage`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  prompt_tokens: optional(Schema.Number),
  completion_tokens: optional(Schema.Number),
  total_tokens: optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Usage = typeof Usage.Type

/**
 * A tool call of a buffered answer. `arguments` is JSON text (an object from
 * a server that sends one is taken as it is).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: optional(Schema.String),
  function: Schema.Struct({
    name: Schema.String,
    arguments: optional(Schema.Union(Schema.String, Schema.Record({ key: Schema.String, value: Schema.Unknown })))
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export type ToolCall = typeof ToolCall.Type

/**
 * A buffered answer (`chat.completion`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCompletion = Schema.Struct({
  id: optional(Schema.String),
  model: optional(Schema.String),
  created: optional(Schema.Number),
  // Required: every server sends it, and a body without it is not an answer.
  choices: Schema.Array(Schema.Struct({
    message: optional(Schema.Struct({
      content: optional(Schema.String),
      tool_calls: optional(Schema.Array(ToolCall))
    })),
    finish_reason: optional(Schema.String)
  })),
  usage: optional(Usage)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ChatCompletion = typeof ChatCompletion.Type

/**
 * A piece of a streamed tool call: the first piece of a call usually has its
 * `id` and `function.name`, the next ones pieces of `function.arguments`
 * (Ollama sends a whole call in one piece).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCallDelta = Schema.Struct({
  index: optional(Schema.Number),
  id: optional(Schema.String),
  function: optional(Schema.Struct({
    name: optional(Schema.String),
    arguments: optional(Schema.String)
  }))
})

/**
 * @since 0.1.0
 * @category models
 */
export type ToolCallDelta = typeof ToolCallDelta.Type

/**
 * One event of a streamed answer (`chat.completion.chunk`). The usage chunk
 * has `choices: []` (LiteLLM: a choice with an empty delta).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCompletionChunk = Schema.Struct({
  id: optional(Schema.String),
  model: optional(Schema.String),
  created: optional(Schema.Number),
  // Required (`[]` in a usage chunk): every server's chunks carry it, so an
  // event without it is something else — failed as malformed, never taken
  // for an empty answer.
  choices: Schema.Array(Schema.Struct({
    delta: optional(Schema.Struct({
      content: optional(Schema.String),
      tool_calls: optional(Schema.Array(ToolCallDelta))
    })),
    finish_reason: optional(Schema.String)
  })),
  usage: optional(Usage)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ChatCompletionChunk = typeof ChatCompletionChunk.Type

// =============================================================================
// Errors in a 200
// =============================================================================

/**
 * What an error the server sent with status 200 says: a mid-stream
 * `data: {"error": …}` event (vLLM, llama.cpp, LiteLLM, mock-llm) or a
 * buffered body that is an error.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerError {
  readonly message: string
  /** The HTTP status the error names (its `code`, when it is one), if any. */
  readonly status: number | undefined
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const statusOf = (code: unknown): number | undefined => {
  const n = typeof code === "string" && /^\d{3}$/.test(code) ? Number(code) : code
  return typeof n === "number" && Number.isInteger(n) && n >= 400 && n <= 599 ? n : undefined
}

/**
 * The error a parsed body or event is, or `undefined` when it is not one (an
 * object with an `error` and no `choices`). Reads `error` as an object
 * (`{ message, type, code }`) or a string (mock-llm: `{ error, message }`).
 *
 * @since 0.1.0
 * @category utils
 */
export const serverErrorOf = (value: unknown): ServerError | undefined => {
  if (!isRecord(value) || value["error"] === undefined || value["error"] === null || "choices" in value) {
    return undefined
  }
  const error = value["error"]
  if (isRecord(error)) {
    const message = typeof error["message"] === "string" ? error["message"] : JSON.stringify(error)
    const type = typeof error["type"] === "string" ? ` (${error["type"]})` : ""
    return { message: `${message}${type}`, status: statusOf(error["code"]) ?? statusOf(value["status"]) }
  }
  const detail = typeof value["message"] === "string" ? `: ${value["message"]}` : ""
  return { message: `${String(error)}${detail}`, status: statusOf(value["status"]) ?? statusOf(value["code"]) }
}
