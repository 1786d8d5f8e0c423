/**
 * A model whose every call is scripted: an answer, a provider failure, a
 * hang, or (for streams) deltas that may be cut off or stall. Built on
 * `ModelProvider`, so it is served as `LanguageModel` and `DirectModel`
 * like any provider; the pipeline's model policy (timeouts, retries,
 * re-asks, fallback) sees it as it would see a real one. Its calls are
 * counted, with the prompt each received.
 */
import { AiError, type LanguageModel, type Prompt, type Response } from "@effect/ai"
import { Effect, type Layer, Option, Stream } from "effect"
import { ModelProvider } from "effect-agent-pipeline"

/** One scripted call. */
export type Reply =
  | { readonly _tag: "Text"; readonly text: string; readonly inputTokens?: number; readonly outputTokens?: number }
  | { readonly _tag: "Fail"; readonly error: AiError.AiError }
  | { readonly _tag: "Hang" }
  /** A stream: its deltas, then it ends, fails (`cut`) or stalls (`stall`). */
  | { readonly _tag: "Stream"; readonly deltas: ReadonlyArray<string>; readonly then?: "end" | "cut" | "stall" }

export const text = (
  t: string,
  usage: { readonly inputTokens?: number; readonly outputTokens?: number } = {}
): Reply => ({
  _tag: "Text",
  text: t,
  ...usage
})
export const fail = (error: AiError.AiError): Reply => ({ _tag: "Fail", error })
export const hang: Reply = { _tag: "Hang" }
export const stream = (deltas: ReadonlyArray<string>, then: "end" | "cut" | "stall" = "end"): Reply => ({
  _tag: "Stream",
  deltas,
  then
})

const request = {
  method: "POST",
  url: "http://127.0.0.1/v1/responses",
  urlParams: [],
  hash: Option.none(),
  headers: {}
} as const

/** An HTTP error response, as `@effect/ai` providers report one. */
export const httpStatus = (status: number, headers: Record<string, string> = {}): AiError.AiError =>
  new AiError.HttpResponseError({
    module: "FlakyModel",
    method: "createResponse",
    reason: "StatusCode",
    request,
    response: { status, headers }
  })

/** A connection reset before any response. */
export const reset = (): AiError.AiError =>
  new AiError.HttpRequestError({
    module: "FlakyModel",
    method: "createResponse",
    reason: "Transport",
    request,
    description: "socket hang up"
  })

export interface FlakyModel {
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  /** The prompts of the calls made so far, in order, with the kind of call. */
  readonly calls: Array<{ readonly kind: "plan" | "text" | "stream"; readonly prompt: string }>
}

const promptText = (prompt: Prompt.Prompt): string =>
  prompt.content.flatMap((message) =>
    typeof message.content === "string"
      ? [message.content]
      : message.content.flatMap((part) => (part.type === "text" ? [part.text] : []))
  ).join("\n")

/** A model answering `replies` in order (an exhausted script is a defect). */
export const make = (replies: ReadonlyArray<Reply>): FlakyModel => {
  const calls: Array<{ kind: "plan" | "text" | "stream"; prompt: string }> = []
  let next = 0
  const take = (): Reply => {
    const reply = replies[next++]
    if (reply === undefined) throw new Error(`FlakyModel: script exhausted after ${replies.length} call(s)`)
    return reply
  }
  const finish = (
    reply: { readonly inputTokens?: number; readonly outputTokens?: number }
  ): Response.FinishPartEncoded => ({
    type: "finish",
    reason: "stop",
    usage: { inputTokens: reply.inputTokens, outputTokens: reply.outputTokens, totalTokens: undefined }
  })
  const layer = ModelProvider.layer(ModelProvider.make({
    generateText: (options) =>
      Effect.suspend(() => {
        calls.push({
          kind: options.responseFormat.type === "json" ? "plan" : "text",
          prompt: promptText(options.prompt)
        })
        const reply = take()
        switch (reply._tag) {
          case "Text":
            return Effect.succeed<Array<Response.PartEncoded>>([
              { type: "response-metadata", id: undefined, modelId: "flaky-1", timestamp: undefined },
              { type: "text", text: reply.text },
              finish(reply)
            ])
          case "Fail":
            return Effect.fail(reply.error)
          case "Hang":
            return Effect.never
          case "Stream":
            return Effect.dieMessage("FlakyModel: a stream reply for a buffered call")
        }
      }),
    streamText: (options) =>
      Stream.suspend(() => {
        calls.push({ kind: "stream", prompt: promptText(options.prompt) })
        const reply = take()
        if (reply._tag === "Fail") return Stream.fail(reply.error)
        if (reply._tag === "Hang") return Stream.never
        if (reply._tag !== "Stream") return Stream.dieMessage("FlakyModel: a buffered reply for a stream")
        const deltas = Stream.fromIterable(reply.deltas.map((delta, i): Response.StreamPartEncoded => ({
          type: "text-delta",
          id: `t${i}`,
          delta
        })))
        const ending: Stream.Stream<Response.StreamPartEncoded, AiError.AiError> = reply.then === "cut"
          ? Stream.fail(reset())
          : reply.then === "stall"
          ? Stream.never
          : Stream.make(finish({ inputTokens: 7, outputTokens: reply.deltas.length }))
        return Stream.concat(deltas, ending)
      })
  }))
  return { layer, calls }
}
