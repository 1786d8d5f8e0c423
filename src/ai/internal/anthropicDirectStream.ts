/**
 * A streamed answer on Anthropic's direct path (anthropicDirect.ts): the
 * Messages API's events as `@effect/ai` stream parts, as
 * `@effect/ai-anthropic`'s `LanguageModel.streamText` makes them from the
 * same events for a text prompt — without decoding each chunk of parts
 * again through a Schema built for the call.
 *
 * - `message_start`: `response-metadata` (id, model); its usage gives the
 *   input tokens. `message_delta`: the output tokens and the stop reason.
 *   `message_stop`: `finish`, with the usage (no `message_stop`, no
 *   `finish`, as there).
 * - Content blocks: text and reasoning as their start / delta / end parts,
 *   a tool call's input as `tool-params-*` parts; an `error` event as an
 *   `error` part (the stream goes on, as there).
 * - What `LanguageModel` cannot decode in an answer without tools — a tool
 *   call (at its block's end), a provider tool's result — fails the stream
 *   with its `MalformedOutput`.
 *
 * Left out (the pipeline reads none of them): citation `source` parts and
 * the reasoning parts' provider metadata (the thinking signature).
 *
 * The span, when there is one, gets the response attributes
 * `@effect/ai-anthropic` adds (response id and model, finish reason, usage).
 */
import { AiError, Response, Telemetry } from "@effect/ai"
import { type AnthropicClient, AnthropicTool, type Generated } from "@effect/ai-anthropic"
import { Chunk, type Clock, DateTime, Effect, Option, Stream, type Tracer } from "effect"
import { inertSpan } from "../../runtime/internal/spans.js"

/**
 * `LanguageModel`'s failure for a part it cannot decode (with no toolkit,
 * a tool call or a tool result is not a part of a text answer). Its
 * `ParseError` is said as a description; `generateObject` reports it under
 * `generateText` too, as `LanguageModel` does.
 *
 * @since 0.1.0
 * @category utils
 */
export const undecodable = (method: string, part: string) =>
  new AiError.MalformedOutput({
    module: "LanguageModel",
    method,
    description: `the response has a ${part} part, which a call without tools cannot decode`
  })

type Event = AnthropicClient.MessageStreamEvent
type Part = Response.StreamPart<{}>

/** `@effect/ai-anthropic`'s stop reasons as finish reasons (its `resolveFinishReason`). */
const finishReasons: Readonly<Record<string, Response.FinishReason>> = {
  end_turn: "stop",
  max_tokens: "length",
  pause_turn: "pause",
  refusal: "content-filter",
  stop_sequence: "stop",
  tool_use: "tool-calls"
}

type Block =
  | { readonly type: "text" }
  | { readonly type: "reasoning" }
  | { readonly type: "tool-call"; readonly id: string }

/** The blocks whose result is a tool-result part (which an answer without tools cannot decode). */
const toolResults: ReadonlySet<string> = new Set([
  "bash_code_execution_tool_result",
  "code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "web_search_tool_result"
])

/** The state of one streamed answer. */
class Reader {
  finishReason: Response.FinishReason = "unknown"
  inputTokens: number | undefined = undefined
  outputTokens: number | undefined = undefined
  totalTokens: number | undefined = undefined
  cachedInputTokens: number | undefined = undefined
  /** The usage `message_start` reported, and the stop sequence met: the finish part's provider metadata. */
  startUsage: Generated.BetaUsage | undefined = undefined
  stopSequence: string | undefined = undefined
  readonly blocks = new Map<number, Block>()
  blockType: string | undefined = undefined

  constructor(readonly span: Tracer.Span, readonly clock: Clock.Clock) {}

  /** The parts of `event`, pushed onto `out`; or the failure `LanguageModel` reports for it. */
  read(event: Event, out: Array<Part>): AiError.AiError | undefined {
    switch (event.type) {
      case "message_start": {
        const { id, model, usage } = event.message
        this.inputTokens = usage.input_tokens
        this.cachedInputTokens = usage.cache_read_input_tokens ?? undefined
        this.startUsage = usage
        out.push(Response.makePart("response-metadata", {
          id: Option.some(id),
          modelId: Option.some(model),
          timestamp: Option.some(DateTime.unsafeMake(this.clock.unsafeCurrentTimeMillis()))
        }))
        if (this.span !== inertSpan) Telemetry.addGenAIAnnotations(this.span, { response: { id, model } })
        return undefined
      }
      case "message_delta": {
        const output = event.usage.output_tokens
        if (output !== null) this.outputTokens = output
        this.totalTokens = (this.inputTokens ?? 0) + (output ?? 0)
        if (event.delta.stop_sequence !== null) this.stopSequence = event.delta.stop_sequence
        if (event.delta.stop_reason !== null) this.finishReason = finishReasons[event.delta.stop_reason] ?? "unknown"
        return undefined
      }
      case "message_stop": {
        const usage = new Response.Usage({
          inputTokens: this.inputTokens,
          outputTokens: this.outputTokens,
          totalTokens: this.totalTokens,
          cachedInputTokens: this.cachedInputTokens
        }, true)
        out.push(Response.makePart("finish", {
          reason: this.finishReason,
          usage,
          metadata: { anthropic: { usage: this.startUsage, stopSequence: this.stopSequence } }
        }))
        if (this.span !== inertSpan) {
          Telemetry.addGenAIAnnotations(this.span, {
            response: { finishReasons: [this.finishReason] },
            usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }
          })
        }
        return undefined
      }
      case "content_block_start":
        return this.start(event, out)
      case "content_block_delta":
        return this.delta(event, out)
      case "content_block_stop": {
        const block = this.blocks.get(event.index)
        this.blockType = undefined
        if (block === undefined) return undefined
        this.blocks.delete(event.index)
        const id = String(event.index)
        if (block.type === "text") out.push(Response.makePart("text-end", { id }))
        else if (block.type === "reasoning") out.push(Response.makePart("reasoning-end", { id }))
        else return undecodable("streamText", "tool-call")
        return undefined
      }
      case "error": {
        out.push(Response.makePart("error", { error: event.error }))
        return undefined
      }
      case "ping":
        return undefined
    }
  }

  private start(event: Extract<Event, { type: "content_block_start" }>, out: Array<Part>): AiError.AiError | undefined {
    const block = event.content_block
    const id = String(event.index)
    this.blockType = block.type
    switch (block.type) {
      case "text": {
        this.blocks.set(event.index, { type: "text" })
        out.push(Response.makePart("text-start", { id }))
        return undefined
      }
      case "thinking":
      case "redacted_thinking": {
        this.blocks.set(event.index, { type: "reasoning" })
        out.push(Response.makePart("reasoning-start", { id }))
        return undefined
      }
      case "tool_use":
      case "server_tool_use": {
        const providerTool = AnthropicTool.getProviderDefinedToolName(block.name)
        // A server tool the library does not know is no part of the answer.
        if (block.type === "server_tool_use" && providerTool === undefined) return undefined
        this.blocks.set(event.index, { type: "tool-call", id: block.id })
        out.push(Response.makePart("tool-params-start", {
          id: block.id,
          name: block.type === "tool_use" ? block.name : providerTool!,
          providerName: providerTool === undefined ? undefined : block.name,
          providerExecuted: block.type === "server_tool_use"
        }))
        return undefined
      }
      default:
        return toolResults.has(block.type) ? undecodable("streamText", "tool-result") : undefined
    }
  }

  private delta(event: Extract<Event, { type: "content_block_delta" }>, out: Array<Part>): AiError.AiError | undefined {
    const id = String(event.index)
    const delta = event.delta
    switch (delta.type) {
      case "text_delta": {
        out.push(Response.makePart("text-delta", { id, delta: delta.text }))
        break
      }
      case "thinking_delta": {
        out.push(Response.makePart("reasoning-delta", { id, delta: delta.thinking }))
        break
      }
      case "signature_delta": {
        if (this.blockType === "thinking") out.push(Response.makePart("reasoning-delta", { id, delta: "" }))
        break
      }
      case "input_json_delta": {
        const block = this.blocks.get(event.index)
        if (block?.type === "tool-call") {
          out.push(Response.makePart("tool-params-delta", { id: block.id, delta: delta.partial_json }))
        }
        break
      }
    }
    return undefined
  }
}

/**
 * The parts of `events`, one chunk of events at a time (a chunk holding
 * an event `LanguageModel` cannot decode fails, as it fails there). Reads
 * one stream: make one per stream opened.
 *
 * @since 0.1.0
 * @category utils
 */
export const partsOfStream = (
  events: Stream.Stream<Event, AiError.AiError>,
  span: Tracer.Span,
  clock: Clock.Clock
): Stream.Stream<Part, AiError.AiError> => {
  const reader = new Reader(span, clock)
  return Stream.mapChunksEffect(events, (chunk) => {
    const out: Array<Part> = []
    for (const event of chunk) {
      const failure = reader.read(event, out)
      if (failure !== undefined) return Effect.fail(failure)
    }
    return Effect.succeed(Chunk.unsafeFromArray(out))
  })
}
