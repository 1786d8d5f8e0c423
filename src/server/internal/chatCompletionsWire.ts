/**
 * The wire shapes of the OpenAI-compatible `POST /v1/chat/completions`
 * (issue 21): the request body an OpenAI client sends, the buffered
 * `chat.completion` answer and the streamed `chat.completion.chunk`s. The
 * shapes follow the official `openai` client's types
 * (`openai/resources/chat/completions`), restricted to what an agent can
 * honour: one choice, text content.
 *
 * Excess keys: OpenAI clients commonly send sampling and output options
 * (`temperature`, `top_p`, `max_tokens`, `max_completion_tokens`,
 * `presence_penalty`, `frequency_penalty`, `stop`, `seed`, `logit_bias`,
 * `logprobs`, `top_logprobs`, `response_format`, `tools`, `tool_choice`,
 * `parallel_tool_calls`, `store`, `service_tier`, `reasoning_effort`, …).
 * The agent's own configuration decides models, tools and sampling, so
 * these are accepted and ignored — the Schema does not name them and
 * decoding drops unknown keys. The one exception is `n`: more than one
 * choice cannot be served, so `n` other than 1 is refused (400) rather
 * than silently answered with one choice.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { JsonObject } from "../../domain/Json.js"

/**
 * A text content part (`{ type: "text", text }`). Image, audio and file
 * parts are refused: the agent reads text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})

/**
 * A message's content: a string, or a list of text parts (joined without a
 * separator, as OpenAI concatenates them).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Content = Schema.Union(Schema.String, Schema.Array(TextPart))

/**
 * @since 0.1.0
 * @category models
 */
export type Content = typeof Content.Type

/**
 * One message of the conversation. `developer` is the newer clients' name
 * for `system` and is treated as such. An assistant message that only
 * called tools has `content: null`; its `tool_calls` are accepted and not
 * replayed (the agent plans its own tools).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Union(
  Schema.Struct({
    role: Schema.Literal("system", "developer"),
    content: Content,
    name: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    role: Schema.Literal("user"),
    content: Content,
    name: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    role: Schema.Literal("assistant"),
    content: Schema.optional(Schema.NullOr(Content)),
    name: Schema.optional(Schema.String),
    refusal: Schema.optional(Schema.NullOr(Schema.String))
  }),
  Schema.Struct({
    role: Schema.Literal("tool"),
    content: Content,
    tool_call_id: Schema.String
  })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Message = typeof Message.Type

/**
 * `stream_options`: only `include_usage` has a meaning here
 * (`include_obfuscation` is accepted and ignored — no obfuscation is added).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamOptions = Schema.Struct({
  include_usage: Schema.optional(Schema.NullOr(Schema.Boolean))
})

/**
 * The request body. `model` is echoed back (the agent's configuration picks
 * the real models); `user` becomes `metadata.user_id`; `metadata` is the
 * request's metadata (a JSON object, checked with the same size and depth
 * limits as `POST /v1/requests`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCompletionRequest = Schema.Struct({
  model: Schema.String,
  messages: Schema.NonEmptyArray(Message),
  stream: Schema.optional(Schema.NullOr(Schema.Boolean)),
  stream_options: Schema.optional(Schema.NullOr(StreamOptions)),
  user: Schema.optional(Schema.String),
  metadata: Schema.optional(Schema.NullOr(JsonObject)),
  n: Schema.optional(Schema.NullOr(Schema.Literal(1)))
}).annotations({ identifier: "ChatCompletionRequest" })

/**
 * @since 0.1.0
 * @category models
 */
export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

/**
 * Token counts, as OpenAI reports them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  total_tokens: Schema.Int
})

/**
 * @since 0.1.0
 * @category models
 */
export type Usage = typeof Usage.Type

/**
 * The extension field `agent` on a response: what OpenAI's shape has no
 * place for. `status` is `completed` or `suspended`; a suspended request
 * carries the checkpoint to resume (`POST /v1/checkpoints/{id}/resume`) and
 * the plan digest the approver must echo. `response`, on a streamed
 * answer's final chunk only, is the final text when AfterSynthesis hooks
 * changed it after its draft was streamed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AgentExtension = Schema.Struct({
  requestId: Schema.String,
  status: Schema.Literal("completed", "suspended"),
  checkpointId: Schema.optional(Schema.String),
  planDigest: Schema.optional(Schema.String),
  response: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type AgentExtension = typeof AgentExtension.Type

/**
 * The buffered answer: `object: "chat.completion"`, one choice.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCompletion = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Tuple(Schema.Struct({
    index: Schema.Literal(0),
    message: Schema.Struct({
      role: Schema.Literal("assistant"),
      content: Schema.String,
      refusal: Schema.Null
    }),
    logprobs: Schema.Null,
    finish_reason: Schema.Literal("stop")
  })),
  usage: Usage,
  agent: AgentExtension
}).annotations({ identifier: "ChatCompletion" })

/**
 * @since 0.1.0
 * @category models
 */
export type ChatCompletion = typeof ChatCompletion.Type

/**
 * One streamed choice delta.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChunkChoice = Schema.Struct({
  index: Schema.Literal(0),
  delta: Schema.Struct({
    role: Schema.optional(Schema.Literal("assistant")),
    content: Schema.optional(Schema.String)
  }),
  logprobs: Schema.Null,
  finish_reason: Schema.NullOr(Schema.Literal("stop"))
})

/**
 * A streamed chunk: `object: "chat.completion.chunk"`. The usage chunk
 * (with `stream_options.include_usage`) has no choices; the final chunk
 * carries the `agent` extension.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCompletionChunk = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion.chunk"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Array(ChunkChoice),
  usage: Schema.optional(Schema.NullOr(Usage)),
  agent: Schema.optional(AgentExtension)
}).annotations({ identifier: "ChatCompletionChunk" })

/**
 * @since 0.1.0
 * @category models
 */
export type ChatCompletionChunk = typeof ChatCompletionChunk.Type

/**
 * The text of a message's content.
 *
 * @since 0.1.0
 * @category utils
 */
export const contentText = (content: Content | null | undefined): string =>
  content === null || content === undefined
    ? ""
    : typeof content === "string"
    ? content
    : content.map((part) => part.text).join("")
