/**
 * `@effect/ai`'s prompt and tools as Chat Completions `messages`, `tools`
 * and `tool_choice` (issue 19):
 *
 * - a system message as `{ role: "system", content }`;
 * - a user message as its text (a string: what every server takes), or as
 *   content parts when it has images (`image_url`, a URL or a data URL);
 *   other files are refused (`MalformedInput`);
 * - an assistant message as its text and its tool calls (arguments as JSON
 *   text; `content: ""` beside calls, since Ollama refuses a null content);
 *   reasoning parts are not sent back;
 * - each tool result as a `{ role: "tool", tool_call_id, content }` message
 *   (the result as JSON text);
 * - user-defined tools as functions (their parameters' JSON Schema); a
 *   provider-defined tool is refused: a Chat Completions server runs none;
 * - `toolChoice`: `auto`, `none`, `required` as they are, `{ tool }` as a
 *   named function, `{ oneOf, mode }` as the tools named (sent already
 *   filtered by `LanguageModel`) with `auto` or `required`. No tools: neither
 *   field is sent (vLLM refuses `tools: []`).
 */
import { AiError, type LanguageModel, type Prompt, Tool } from "@effect/ai"
import { Effect, Encoding } from "effect"
import type { ChatMessage, ContentPart, FunctionTool, RequestToolCall, ToolChoice } from "./chatCompletionsWire.js"

const malformed = (method: string, description: string) =>
  new AiError.MalformedInput({ module: "OpenAiCompatLanguageModel", method, description })

const imageUrl = (part: Prompt.FilePart): string => {
  if (part.data instanceof URL) return part.data.toString()
  const mediaType = part.mediaType === "image/*" ? "image/jpeg" : part.mediaType
  if (part.data instanceof Uint8Array) return `data:${mediaType};base64,${Encoding.encodeBase64(part.data)}`
  return part.data.startsWith("data:") || /^https?:\/\//.test(part.data)
    ? part.data
    : `data:${mediaType};base64,${part.data}`
}

const userMessage = (message: Prompt.UserMessage): Effect.Effect<ChatMessage, AiError.MalformedInput> => {
  const parts: Array<ContentPart> = []
  let images = false
  for (const part of message.content) {
    if (part.type === "text") {
      parts.push({ type: "text", text: part.text })
    } else if (part.mediaType.startsWith("image/")) {
      images = true
      parts.push({ type: "image_url", image_url: { url: imageUrl(part) } })
    } else {
      return Effect.fail(malformed("prepareMessages", `unsupported media type for a file: '${part.mediaType}'`))
    }
  }
  const content = images ? parts : parts.map((part) => (part.type === "text" ? part.text : "")).join("")
  return Effect.succeed({ role: "user", content })
}

const assistantMessage = (message: Prompt.AssistantMessage): ChatMessage => {
  let text = ""
  const calls: Array<RequestToolCall> = []
  for (const part of message.content) {
    if (part.type === "text") text += part.text
    else if (part.type === "tool-call" && !part.providerExecuted) {
      calls.push({
        id: part.id,
        type: "function",
        function: { name: part.name, arguments: JSON.stringify(part.params) }
      })
    }
  }
  return calls.length === 0
    ? { role: "assistant", content: text }
    : { role: "assistant", content: text, tool_calls: calls }
}

/**
 * The prompt as `messages`.
 *
 * @since 0.1.0
 * @category utils
 */
export const messagesOf = (prompt: Prompt.Prompt): Effect.Effect<Array<ChatMessage>, AiError.MalformedInput> =>
  Effect.gen(function*() {
    const messages: Array<ChatMessage> = []
    for (const message of prompt.content) {
      switch (message.role) {
        case "system":
          messages.push({ role: "system", content: message.content })
          break
        case "user":
          messages.push(yield* userMessage(message))
          break
        case "assistant":
          messages.push(assistantMessage(message))
          break
        case "tool":
          for (const part of message.content) {
            messages.push({ role: "tool", tool_call_id: part.id, content: JSON.stringify(part.result) ?? "null" })
          }
          break
      }
    }
    return messages
  })

/**
 * The `tools` and `tool_choice` fields (none when there are no tools).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolFields {
  readonly tools?: ReadonlyArray<FunctionTool>
  readonly tool_choice?: ToolChoice
}

/**
 * A function tool.
 *
 * @since 0.1.0
 * @category constructors
 */
export const functionTool = (name: string, description: string | undefined, parameters: unknown): FunctionTool => ({
  type: "function",
  function: description === undefined ? { name, parameters } : { name, description, parameters }
})

const choiceOf = (choice: LanguageModel.ProviderOptions["toolChoice"]): ToolChoice => {
  if (typeof choice === "string") return choice
  if ("tool" in choice) return { type: "function", function: { name: choice.tool } }
  return choice.mode === "required" ? "required" : "auto"
}

/**
 * The provider options' tools as {@link ToolFields}.
 *
 * @since 0.1.0
 * @category utils
 */
export const toolFieldsOf = (
  options: LanguageModel.ProviderOptions
): Effect.Effect<ToolFields, AiError.MalformedInput> =>
  Effect.suspend(() => {
    if (options.tools.length === 0) return Effect.succeed({})
    const tools: Array<FunctionTool> = []
    for (const tool of options.tools) {
      if (!Tool.isUserDefined(tool)) {
        return Effect.fail(
          malformed("prepareTools", `a Chat Completions server cannot run the provider-defined tool '${tool.name}'`)
        )
      }
      const ast = tool.parametersSchema.ast
      tools.push(
        functionTool(
          tool.name,
          tool.description ?? Tool.getDescriptionFromSchemaAst(ast),
          Tool.getJsonSchemaFromSchemaAst(ast)
        )
      )
    }
    return Effect.succeed({ tools, tool_choice: choiceOf(options.toolChoice) })
  })
