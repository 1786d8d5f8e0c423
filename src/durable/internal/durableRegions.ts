/**
 * The regions of a durable request — the parts that do something, each an
 * activity of `@effect/workflow` — and the marks they leave in the record.
 * A region's start is written to the record at once, so an attempt that a
 * crash cuts short stays visible; its end writes the record before the
 * activity's result is stored, so a replay that skips the region finds its
 * evidence already there.
 */
import { Activity } from "@effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { type Context, Effect, type Schema } from "effect"
import type { Caller } from "../../ai/ToolCalls.js"
import { PipelineError } from "../../domain/PipelineError.js"
import type { RequestState } from "../../pipeline/internal/requestRecord.js"
import type { RequestStages } from "../../pipeline/internal/requestStages.js"
import { ToolCallResult } from "./durableSchemas.js"

/** The start of a region's attempt markers: `durable: <region> started (attempt n)`. */
export const startMarker = (region: string) => `durable: ${region} started (attempt `

/** Marks a region's start in the record (written at once), numbered after the attempts before it. */
const markStart = (state: RequestState, region: string) =>
  Effect.suspend(() => {
    if (!state.recorder.enabled) return Effect.void
    const marker = startMarker(region)
    const attempt = state.recorder.current().diagnostics.filter((d) => d.startsWith(marker)).length + 1
    return Effect.zipRight(
      state.recorder.modify((r) => ({ ...r, diagnostics: [...r.diagnostics, `${marker}${attempt})`] })),
      state.recorder.flush
    )
  })

/**
 * A region as an activity: its start marked, its body under the request's
 * scope, the record written before the activity's result is stored.
 */
export const makeRegion = (hookScope: RequestStages["hookScope"]) =>
<A, I>(
  state: RequestState,
  name: string,
  success: Schema.Schema<A, I>,
  body: Effect.Effect<A, PipelineError, WorkflowEngine | WorkflowInstance>
) =>
  Activity.make({
    name,
    success,
    error: PipelineError,
    execute: Effect.flatMap(Effect.context<WorkflowEngine | WorkflowInstance>(), (context) =>
      markStart(state, name).pipe(
        Effect.zipRight(hookScope(state, Effect.provide(body, context))),
        Effect.tap(() => state.recorder.flush)
      ))
  })

/**
 * Each tool call of phase `phase` as its own activity, `phase/<n>/step/<id>`
 * (the tool reads the same idempotency key in every attempt).
 */
export const stepActivities = (
  state: RequestState,
  phase: number,
  context: Context.Context<WorkflowEngine | WorkflowInstance>
) =>
(call: Caller): Caller =>
(request) => {
  const name = `phase/${phase}/step/${request.coordinates.stepId ?? ""}`
  return Activity.make({
    name,
    success: ToolCallResult,
    execute: Effect.zipRight(markStart(state, name), call(request))
  }).pipe(Effect.provide(context))
}
