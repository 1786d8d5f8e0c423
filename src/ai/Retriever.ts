/**
 * The retrieval seam (seed 002 retrieval hooks): a retriever answers a
 * query with documents. Hooks and agents call it through
 * `Retrieval.retrieve`, which runs each query as one run of the `retrieval`
 * operation (guards, `before_retrieval` / `after_retrieval` transforms,
 * observers); a real vector or keyword index is one Layer swap. The
 * in-memory retriever scores documents by the query words they contain.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { Document } from "../domain/Operation.js"

/**
 * The retriever failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class RetrievalError extends Schema.TaggedError<RetrievalError>("effect-agent-pipeline/RetrievalError")(
  "RetrievalError",
  { retriever: Schema.String, detail: Schema.String, cause: Schema.optional(Schema.Defect) }
) {
  override get message(): string {
    return `retriever ${this.retriever} failed: ${this.detail}`
  }
}

/**
 * The retriever service.
 *
 * @since 0.1.0
 * @category services
 */
export class Retriever extends Context.Tag("effect-agent-pipeline/Retriever")<Retriever, Retriever.Service>() {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace Retriever {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Its name in call snapshots and records. */
    readonly name: string
    /** At most `limit` documents for `query`, best first. */
    readonly retrieve: (query: string, limit: number) => Effect.Effect<ReadonlyArray<Document>, RetrievalError>
  }
}

const words = (text: string): ReadonlyArray<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/**
 * A retriever over a fixed list of documents: a document's score is the
 * share of the query's distinct words it contains; documents without any
 * are not returned.
 *
 * @example
 * ```ts
 * import { Retriever } from "effect-agent-pipeline"
 *
 * const DocsLive = Retriever.layerMemory([
 *   { id: "d1", content: "ACME reports quarterly results on Friday" },
 *   { id: "d2", content: "The weather in Lisbon is mild in spring" }
 * ])
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (documents: ReadonlyArray<Document>, name = "memory"): Retriever.Service => {
  const indexed = documents.map((document) => ({ document, words: new Set(words(document.content)) }))
  return {
    name,
    retrieve: (query, limit) =>
      Effect.sync(() => {
        const terms = [...new Set(words(query))]
        if (terms.length === 0) return []
        return indexed
          .map(({ document, words }) => ({ document, score: terms.filter((t) => words.has(t)).length / terms.length }))
          .filter((hit) => hit.score > 0)
          .sort((a, b) => b.score - a.score)
          .slice(0, Math.max(0, limit))
          .map(({ document, score }) => ({ ...document, score }))
      })
  }
}

/**
 * The in-memory retriever as a Layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (documents: ReadonlyArray<Document>, name?: string): Layer.Layer<Retriever> =>
  Layer.succeed(Retriever, makeMemory(documents, name))
