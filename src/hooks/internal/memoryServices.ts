/**
 * What the built-in memory hooks run on, resolved once when they are built
 * (seed 000 §8.2: the builders are "gated on which backends you
 * configured"): the vector store is required; an embedding model and a
 * language model are optional — given in the options, else taken from the
 * context when present. The hooks close over what was found, so they need
 * nothing at request time and the hooks that need a missing backend are
 * simply not built.
 */
import { EmbeddingModel, LanguageModel } from "@effect/ai"
import { Duration, Effect, Option, Schema } from "effect"
import { id } from "../../domain/ErrorId.js"
import { VectorStore } from "../../stores/VectorStore.js"

/**
 * The memory hooks' options are invalid (a number out of range, an empty
 * name, a backend a requested hook needs is missing).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidMemoryOptions extends Schema.TaggedError<InvalidMemoryOptions>(id("InvalidMemoryOptions"))(
  "InvalidMemoryOptions",
  { option: Schema.String, detail: Schema.String }
) {
  override get message(): string {
    return `invalid memory option ${this.option}: ${this.detail}`
  }
}

/** The backends the hooks were built with. */
export interface MemoryServices {
  readonly vectors: VectorStore.Service
  readonly embeddings: Option.Option<EmbeddingModel.Service>
  readonly model: Option.Option<LanguageModel.Service>
}

/** Explicit backends; the ones left out are taken from the context when there. */
export interface BackendOptions {
  readonly embeddings?: EmbeddingModel.Service | undefined
  readonly model?: LanguageModel.Service | undefined
}

/** Resolves the backends: the options first, then the context. */
export const resolve = (options: BackendOptions): Effect.Effect<MemoryServices, never, VectorStore> =>
  Effect.gen(function*() {
    const vectors = yield* VectorStore
    const embeddings = options.embeddings !== undefined
      ? Option.some(options.embeddings)
      : yield* Effect.serviceOption(EmbeddingModel.EmbeddingModel)
    const model = options.model !== undefined
      ? Option.some(options.model)
      : yield* Effect.serviceOption(LanguageModel.LanguageModel)
    return { vectors, embeddings, model }
  })

/** A whole number in `[min, max]`, or the default when absent. */
export const wholeNumber = (
  option: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number
): Effect.Effect<number, InvalidMemoryOptions> => {
  const n = value ?? fallback
  return Number.isInteger(n) && n >= min && n <= max
    ? Effect.succeed(n)
    : Effect.fail(new InvalidMemoryOptions({ option, detail: `must be a whole number in ${min}..${max}, got ${n}` }))
}

/** A number in `[min, max]`, or the default when absent. */
export const between = (
  option: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number
): Effect.Effect<number, InvalidMemoryOptions> => {
  const n = value ?? fallback
  return Number.isFinite(n) && n >= min && n <= max
    ? Effect.succeed(n)
    : Effect.fail(new InvalidMemoryOptions({ option, detail: `must be a number in ${min}..${max}, got ${n}` }))
}

/** A non-empty name, or the default when absent. */
export const name = (option: string, value: string | undefined, fallback: string) =>
  typeof (value ?? fallback) === "string" && (value ?? fallback).length > 0
    ? Effect.succeed(value ?? fallback)
    : Effect.fail(new InvalidMemoryOptions({ option, detail: "must be a non-empty string" }))

/** A positive duration in milliseconds, or the default when absent. */
export const duration = (
  option: string,
  value: Duration.DurationInput | undefined,
  fallback: Duration.DurationInput
): Effect.Effect<Duration.Duration, InvalidMemoryOptions> => {
  const decoded = Duration.decodeUnknown(value ?? fallback)
  return Option.isSome(decoded) && Duration.toMillis(decoded.value) >= 1 && Duration.isFinite(decoded.value)
    ? Effect.succeed(decoded.value)
    : Effect.fail(new InvalidMemoryOptions({ option, detail: "must be a finite duration of at least 1 ms" }))
}
