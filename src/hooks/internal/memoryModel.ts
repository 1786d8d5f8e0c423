/**
 * The model calls the built-in memory hooks make (the event summarizer,
 * user-fact and knowledge extraction): one text completion, observed rather
 * than trusted. A call never fails the hook: it ends `returned` (with the
 * model's exact text), `error` or `timed_out`, and the caller falls back.
 * Interruption of the caller is not caught: a canceled request stops here
 * (C19).
 */
import type { LanguageModel } from "@effect/ai"
import { Duration, Effect, Either, Option } from "effect"

/** What one model call returned, as the effect records it. */
export interface ModelReply {
  readonly status: "returned" | "error" | "timed_out"
  /** The model's exact text (when `returned`). */
  readonly text?: string | undefined
  readonly error?: string | undefined
  readonly durationMs: number
}

/**
 * Asks `model` for a completion of `prompt`, bounded by `timeout` when
 * given. Only the model call is bounded: what the caller does with the
 * reply is not.
 */
export const ask = (
  model: LanguageModel.Service,
  prompt: string,
  timeout?: Duration.Duration | undefined
): Effect.Effect<ModelReply> =>
  Effect.gen(function*() {
    const started = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const call = model.generateText({ prompt }).pipe(Effect.map((response) => response.text))
    const bounded = timeout === undefined ? Effect.asSome(call) : Effect.timeoutOption(call, timeout)
    const outcome = yield* Effect.either(bounded)
    const ended = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const durationMs = Math.max(0, ended - started)
    if (Either.isLeft(outcome)) return { status: "error", error: outcome.left.message, durationMs }
    return Option.match(outcome.right, {
      onNone: (): ModelReply => ({
        status: "timed_out",
        error: `no reply within ${Duration.format(timeout ?? Duration.zero)}`,
        durationMs
      }),
      onSome: (text): ModelReply => ({ status: "returned", text, durationMs })
    })
  })

const fence = /^\s*```[a-zA-Z]*\s*\n?([\s\S]*?)\n?```\s*$/

/**
 * The JSON array a model was asked for: the whole reply, or the reply inside
 * one Markdown code fence, or the first `[` … last `]` span of it. Anything
 * else is `Left` with the reason (the caller records it and falls back).
 */
export const parseJsonArray = (text: string): Either.Either<ReadonlyArray<unknown>, string> => {
  const unfenced = fence.exec(text)?.[1] ?? text
  const candidates = [unfenced.trim()]
  const start = unfenced.indexOf("[")
  const end = unfenced.lastIndexOf("]")
  if (start >= 0 && end > start) candidates.push(unfenced.slice(start, end + 1))
  for (const candidate of candidates) {
    try {
      const parsed: unknown = JSON.parse(candidate)
      if (Array.isArray(parsed)) return Either.right(parsed)
      if (typeof parsed === "object" && parsed !== null) {
        // `{ "facts": [...] }`-style wrappers: the one array inside.
        const arrays = Object.values(parsed).filter(Array.isArray)
        if (arrays.length === 1) return Either.right(arrays[0]!)
      }
    } catch {
      // try the next candidate
    }
  }
  return Either.left(text.trim().length === 0 ? "empty reply" : "reply is not a JSON array")
}

/** Escapes text for an XML-like prompt block, so stored text cannot close or open a section. */
export const escapeXml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** `text` cut to at most `max` UTF-16 units on a code-point boundary, with `…` when cut. */
export const shorten = (text: string, max: number): { readonly text: string; readonly shortened: boolean } => {
  if (text.length <= max) return { text, shortened: false }
  let end = Math.max(0, max - 1)
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return { text: `${text.slice(0, end)}…`, shortened: true }
}

/** The message of an error of any shape. */
export const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)
