/**
 * README "The request": JSON from the wire through the one decode function.
 */
// #region readme
import { Effect } from "effect"
import { Pipeline, PipelineRequest } from "effect-agent-pipeline"

// body: unknown, e.g. a parsed HTTP request body.
export const answer = (body: unknown) =>
  Effect.gen(function*() {
    // Unknown fields, non-JSON metadata, oversized input → InvalidRequest
    // with the first failing path and a one-line detail.
    const request = yield* PipelineRequest.decode(body)
    const pipeline = yield* Pipeline.Pipeline
    return yield* pipeline.process(request)
  })
// #endregion readme
