/**
 * Structured output over Chat Completions (issue 19): how a JSON answer
 * (`responseFormat: { type: "json" }`, `LanguageModel.generateObject`, the
 * pipeline's planning) is asked for, in three modes tried in order:
 *
 * 1. `json_schema` — `response_format: { type: "json_schema", json_schema:
 *    { name, schema, strict: true } }` (OpenAI, vLLM, Ollama, llama.cpp,
 *    LM Studio; LiteLLM passes it on);
 * 2. `tool` — the schema as the parameters of one function named after the
 *    object, its call forced (`tool_choice: { type: "function", function:
 *    { name } }`); the call's arguments are the answer, whatever the finish
 *    reason (vLLM answers a named choice with `"stop"`; llama.cpp treats it
 *    as `auto`, so a model may also answer in text, which is taken as it is);
 * 3. `prompt` — no parameter at all: the schema in a system instruction
 *    asking for only the JSON object (a Markdown code fence around the
 *    answer is removed).
 *
 * A mode is left for the next when the server rejects it
 * ({@link rejects}): a 400, 422 or 501 whose body names what the mode
 * sends — `response_format` / `json_schema` / structured output for
 * `json_schema`; `tools` / `tool_choice` / tool choice / function calling
 * for `tool` (e.g. LiteLLM's "does not support parameters:
 * ['response_format']", OpenAI's "'response_format' of type 'json_schema'
 * is not supported with this model", llama.cpp's "response_format type must
 * be one of …"). Any other failure is the call's failure.
 */
import { type AiError, type LanguageModel, Tool } from "@effect/ai"
import { functionTool, type ToolFields } from "./chatCompletionsRequest.js"
import type { ReadOptions } from "./chatCompletionsResponse.js"
import type { ChatMessage, ChatRequest } from "./chatCompletionsWire.js"

/**
 * How structured output is asked for.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "json_schema" | "tool" | "prompt"

/**
 * The modes, in the order they are tried.
 *
 * @since 0.1.0
 * @category constants
 */
export const modes: ReadonlyArray<Mode> = ["json_schema", "tool", "prompt"]

/**
 * The mode tried after `mode`, if any.
 *
 * @since 0.1.0
 * @category utils
 */
export const nextMode = (mode: Mode): Mode | undefined => modes[modes.indexOf(mode) + 1]

/**
 * The later of two modes (a mode once left is never tried again).
 *
 * @since 0.1.0
 * @category utils
 */
export const laterMode = (a: Mode, b: Mode): Mode => (modes.indexOf(a) >= modes.indexOf(b) ? a : b)

/**
 * The object asked for.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectFormat {
  /** `objectName`, as a function / schema name (`[A-Za-z0-9_-]`, at most 64 characters). */
  readonly name: string
  readonly description: string | undefined
  readonly schema: unknown
}

type JsonFormat = Extract<LanguageModel.ProviderOptions["responseFormat"], { readonly type: "json" }>

/**
 * The object a JSON response format asks for.
 *
 * @since 0.1.0
 * @category constructors
 */
export const objectFormatOf = (format: JsonFormat): ObjectFormat => ({
  name: format.objectName.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "output",
  description: Tool.getDescriptionFromSchemaAst(format.schema.ast),
  schema: Tool.getJsonSchemaFromSchemaAst(format.schema.ast)
})

/**
 * The system instruction of the `prompt` mode.
 *
 * @since 0.1.0
 * @category utils
 */
export const instructionOf = (object: ObjectFormat): string =>
  `Reply with only the JSON object "${object.name}", no other text and no code fence. ` +
  `It must match this JSON Schema:\n${JSON.stringify(object.schema)}`

/** The instruction in the first system message (many chat templates take one system message, first). */
const withInstruction = (messages: ReadonlyArray<ChatMessage>, instruction: string): Array<ChatMessage> => {
  const [first, ...rest] = messages
  return first?.role === "system"
    ? [{ role: "system", content: `${first.content}\n\n${instruction}` }, ...rest]
    : [{ role: "system", content: instruction }, ...messages]
}

/**
 * What a structured request sends besides the model and the settings, and
 * how its answer is read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Structured {
  readonly fields: Pick<ChatRequest, "messages" | "tools" | "tool_choice" | "response_format">
  readonly read: ReadOptions
}

/**
 * The request fields of `mode`.
 *
 * @since 0.1.0
 * @category utils
 */
export const structured = (
  mode: Mode,
  object: ObjectFormat,
  messages: ReadonlyArray<ChatMessage>,
  tools: ToolFields
): Structured => {
  switch (mode) {
    case "json_schema":
      return {
        fields: {
          messages,
          ...tools,
          response_format: {
            type: "json_schema",
            json_schema: {
              name: object.name,
              ...(object.description === undefined ? {} : { description: object.description }),
              schema: object.schema,
              strict: true
            }
          }
        },
        read: {}
      }
    case "tool":
      return {
        fields: {
          messages,
          tools: [...(tools.tools ?? []), functionTool(object.name, object.description, object.schema)],
          tool_choice: { type: "function", function: { name: object.name } }
        },
        read: { objectTool: object.name }
      }
    case "prompt":
      return {
        fields: { messages: withInstruction(messages, instructionOf(object)), ...tools },
        read: { unfence: true }
      }
  }
}

const rejectionStatus = new Set([400, 422, 501])

const named: Readonly<Record<Mode, RegExp>> = {
  json_schema: /response_format|json_schema|json schema|structured output/i,
  tool: /\btools?\b|tool_choice|tool choice|tool call|function call/i,
  prompt: /(?!)/
}

/**
 * Whether `error` is the server refusing what `mode` sends (see the module
 * comment).
 *
 * @since 0.1.0
 * @category guards
 */
export const rejects = (error: AiError.AiError, mode: Mode): boolean =>
  error._tag === "HttpResponseError" &&
  error.reason === "StatusCode" &&
  rejectionStatus.has(error.response.status) &&
  named[mode].test(`${error.body ?? ""}\n${error.description ?? ""}`)
