/**
 * The offline embedder: the default `@effect/ai` `EmbeddingModel` (the
 * semantic cache and memory hooks use it), deterministic and without network.
 *
 * What it is: feature hashing. A text is lower-cased and split into words;
 * each word and each character trigram of each word (with word-boundary
 * marks) is hashed (FNV-1a) to one of `dimensions` coordinates, words
 * weighing more than trigrams; the sum is L2-normalised. So the
 * same text always gives the same vector, texts sharing words or word parts
 * have a higher cosine similarity than unrelated texts, and word order does
 * not matter.
 *
 * What it is NOT: a language model's embedding. It knows no synonyms
 * ("car" and "automobile" are unrelated to it) and no meaning; use an
 * embedding model (`AGENT_EMBEDDINGS=openai:<model>`) for that.
 *
 * @since 0.1.0
 */
import { EmbeddingModel } from "@effect/ai"
import { Effect, Layer } from "effect"

/**
 * The offline embedder's options.
 *
 * @since 0.1.0
 * @category models
 */
export interface OfflineOptions {
  /** The vector length. Default: 256. */
  readonly dimensions?: number | undefined
}

/**
 * @since 0.1.0
 * @category constants
 */
export const defaultDimensions = 256

const wordWeight = 1
const trigramWeight = 0.5
const wordPattern = /[\p{L}\p{N}]+/gu

const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

const add = (vector: Array<number>, feature: string, weight: number): void => {
  // Unsigned: features never cancel out, so a text with a word never embeds
  // to the zero vector (signed hashing can, in few dimensions).
  vector[fnv1a(feature) % vector.length]! += weight
}

/**
 * The offline embedding of a text: `dimensions` non-negative numbers, L2
 * norm 1 (all zeros for a text without letters or digits).
 *
 * @example
 * ```ts
 * import { Embeddings } from "effect-agent-pipeline"
 *
 * const a = Embeddings.embedOffline("weather in Paris")
 * const b = Embeddings.embedOffline("Paris weather forecast")
 * Embeddings.cosine(a, b) // ≈ 0.75: shared words
 * Embeddings.cosine(a, Embeddings.embedOffline("buy ACME shares")) // 0: nothing shared
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const embedOffline = (text: string, dimensions: number = defaultDimensions): Array<number> => {
  if (!Number.isInteger(dimensions) || dimensions < 1) {
    throw new RangeError(`dimensions must be a positive integer, got ${dimensions}`)
  }
  const vector = new Array<number>(dimensions).fill(0)
  for (const match of text.toLowerCase().matchAll(wordPattern)) {
    const word = match[0]
    add(vector, `w:${word}`, wordWeight)
    const marked = `<${word}>`
    for (let i = 0; i + 3 <= marked.length; i++) add(vector, `t:${marked.slice(i, i + 3)}`, trigramWeight)
  }
  let norm = 0
  for (const x of vector) norm += x * x
  if (norm === 0) return vector
  const scale = 1 / Math.sqrt(norm)
  return vector.map((x) => x * scale)
}

/**
 * Cosine similarity of two vectors of the same length (0 when either is all
 * zeros).
 *
 * @since 0.1.0
 * @category utils
 */
export const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  if (a.length !== b.length) throw new RangeError(`vectors of different lengths: ${a.length} and ${b.length}`)
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

/**
 * The offline embedder as an `EmbeddingModel` service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeOffline = (options: OfflineOptions = {}): Effect.Effect<EmbeddingModel.Service> => {
  const dimensions = options.dimensions ?? defaultDimensions
  return EmbeddingModel.make({
    embedMany: (inputs) =>
      Effect.sync(() => inputs.map((input, index) => ({ index, embeddings: embedOffline(input, dimensions) })))
  })
}

/**
 * The offline embedder as an `EmbeddingModel` Layer: the default embedding
 * model (`AGENT_EMBEDDINGS=offline`).
 *
 * @example
 * ```ts
 * import { EmbeddingModel } from "@effect/ai"
 * import { Effect } from "effect"
 * import { Embeddings } from "effect-agent-pipeline"
 *
 * const vector = Effect.flatMap(EmbeddingModel.EmbeddingModel, (model) => model.embed("weather in Paris")).pipe(
 *   Effect.provide(Embeddings.layerOffline())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerOffline = (options: OfflineOptions = {}): Layer.Layer<EmbeddingModel.EmbeddingModel> =>
  Layer.effect(EmbeddingModel.EmbeddingModel, makeOffline(options))
