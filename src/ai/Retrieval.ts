/**
 * Retrieval through the hook runtime (seed 002 retrieval hooks, seed 003
 * operations): inside a request — a hook calling it, say a RAG hook in
 * BeforePlanning — each query is one run of the `retrieval` operation:
 * guards may deny it, `before_retrieval` transforms rewrite the query,
 * `after_retrieval` transforms filter or re-rank the documents, observers
 * see it, and every hook run is recorded on the request. Outside a request
 * it is a plain call to the `Retriever`.
 *
 * @since 0.1.0
 */
import { Effect, FiberRef } from "effect"
import type { Document } from "../domain/Operation.js"
import type { HookDenied, HookFailed } from "../domain/PipelineError.js"
import { currentRequest } from "../runtime/Operations.js"
import { type RetrievalError, Retriever } from "./Retriever.js"

/**
 * Retrieves documents for `query` (at most `limit`, default 5).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, Retrieval } from "effect-agent-pipeline"
 *
 * const rag = Hook.make({
 *   name: "rag",
 *   beforePlanning: (ctx) =>
 *     Retrieval.retrieve(ctx.request, { limit: 3 }).pipe(
 *       Effect.map((docs) => ({ enrichments: { rag_context: docs.map((d) => `- ${d.content}`).join("\n") } }))
 *     )
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const retrieve: (
  query: string,
  options?: { readonly limit?: number | undefined }
) => Effect.Effect<ReadonlyArray<Document>, RetrievalError | HookDenied | HookFailed, Retriever> = Effect.fn(
  "Retrieval.retrieve"
)(function*(query: string, options?: { readonly limit?: number | undefined }) {
  const retriever = yield* Retriever
  const limit = options?.limit ?? 5
  const request = yield* FiberRef.get(currentRequest)
  if (request === undefined) return yield* retriever.retrieve(query, limit)
  return yield* request.operations.withOperation({
    operation: "retrieval",
    coordinates: { requestId: request.requestId },
    parent: request.call,
    payload: { retriever: retriever.name, query, limit }
  })((query) => retriever.retrieve(query, limit))
})
