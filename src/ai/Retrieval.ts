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
import { Effect, Option } from "effect"
import type { Document } from "../domain/Operation.js"
import type { HookDenied, HookFailed } from "../domain/PipelineError.js"
import * as RequestScope from "../runtime/RequestScope.js"
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
 */
export const retrieve = (
  query: string,
  options?: { readonly limit?: number | undefined }
): Effect.Effect<ReadonlyArray<Document>, RetrievalError | HookDenied | HookFailed, Retriever> =>
  Effect.gen(function*() {
    const retriever = yield* Retriever
    const limit = options?.limit ?? 5
    const request = yield* RequestScope.current
    if (Option.isNone(request) || !request.value.operations.observes("retrieval")) {
      return yield* retriever.retrieve(query, limit)
    }
    const { call: parent, operations, recorder, requestId } = request.value
    const call = yield* operations.call("retrieval", {
      coordinates: { requestId },
      parent,
      payload: { retriever: retriever.name, query, limit }
    })
    return yield* operations.run(
      call,
      recorder,
      Effect.gen(function*() {
        const rewritten = yield* operations.transform("before_retrieval", call, query, recorder)
        const documents = yield* retriever.retrieve(rewritten, limit)
        return yield* operations.transform("after_retrieval", call, documents, recorder)
      })
    )
  })
