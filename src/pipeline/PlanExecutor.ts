/**
 * Executes one phase's validated plan as a dependency DAG with bounded
 * concurrency. Every step gets a result — succeeded (with its JSON output),
 * failed (with the tool's error) or skipped (a dependency did not succeed) —
 * and its duration. Tool failures never fail the request: synthesis reports
 * them. Each tool call is counted (`pipeline.tool.calls`, `pipeline.tool.duration`).
 *
 * @since 0.1.0
 */
import { Deferred, Effect } from "effect"
import { DEFAULT_MAX_RESULT_BYTES } from "../ai/internal/toolResult.js"
import { checkOutput, type ToolCallResult } from "../ai/ToolCalls.js"
import type { ToolRegistry } from "../ai/ToolRegistry.js"
import type { StepResult } from "../domain/ExecutionRecord.js"
import type { Json, JsonObject } from "../domain/Json.js"
import { referencePattern, type RoutingPlan, type RoutingStep } from "../domain/RoutingPlan.js"
import { spanned } from "../runtime/internal/spans.js"
import { elapsedMillis } from "../runtime/internal/timing.js"
import { unsafeRecordToolCall } from "../runtime/PipelineMetrics.js"

/**
 * Execution options.
 *
 * @since 0.1.0
 */
export interface ExecuteOptions {
  /** Tool calls in flight at once (default 4). */
  readonly concurrency?: number | undefined
  /**
   * How a step's tool is called (default: straight through the registry).
   * The pipeline passes the hook runtime's tool caller, so tool hooks fire.
   */
  readonly callTool?: ((step: RoutingStep, parameters: JsonObject) => Effect.Effect<ToolCallResult>) | undefined
  /** Called with each step's result as soon as the step ends (the record's progress). */
  readonly onStepEnd?: ((result: StepResult) => Effect.Effect<void>) | undefined
  /**
   * The largest tool result, in UTF-8 bytes of JSON text, when tools are
   * called straight through the registry (default 1 MiB): larger, or not
   * JSON, fails the step with `invalid_result`.
   */
  readonly maxResultBytes?: number | undefined
}

const pick = (value: Json | undefined, path: string): Json | undefined => {
  if (path === "") return value
  let current: Json | undefined = value
  for (const key of path.slice(1).split(".")) {
    if (current === null || typeof current !== "object") return undefined
    current = Array.isArray(current) ? current[Number(key)] : (current as JsonObject)[key]
  }
  return current
}

/** A tool call's outcome as `pipeline.tool.calls` tags it. */
const toolOutcome = { Succeeded: "succeeded", Failed: "failed", Denied: "denied" } as const

const wholeReference = /^\{\{steps\.([A-Za-z0-9_-]{1,128})\.output((?:\.[A-Za-z0-9_-]+)*)\}\}$/

/**
 * Replaces canonical references with the referenced outputs: a value that is
 * exactly one reference becomes the referenced JSON value; a reference inside
 * a longer string becomes its text (strings as-is, other values as JSON).
 *
 * @since 0.1.0
 */
export const resolveReferences = (parameters: JsonObject, outputs: ReadonlyMap<string, Json>): JsonObject => {
  const resolve = (value: Json): Json => {
    if (typeof value === "string") {
      if (!value.includes("{{")) return value
      const whole = wholeReference.exec(value)
      if (whole) return pick(outputs.get(whole[1]!), whole[2] ?? "") ?? null
      return value.replace(referencePattern(), (_m, id: string, path: string) => {
        const v = pick(outputs.get(id), path ?? "")
        return v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v)
      })
    }
    if (Array.isArray(value)) return value.map(resolve)
    if (value !== null && typeof value === "object") {
      const out: Record<string, Json> = {}
      for (const [k, v] of Object.entries(value)) out[k] = resolve(v)
      return out
    }
    return value
  }
  const out: Record<string, Json> = {}
  for (const [k, v] of Object.entries(parameters)) out[k] = resolve(v)
  return out
}

/**
 * Runs a plan. `prior` holds earlier phases' results (for `implicit_deps`).
 *
 * @since 0.1.0
 */
export const execute: (
  tools: ToolRegistry.Service,
  plan: RoutingPlan,
  prior: ReadonlyMap<string, StepResult>,
  options?: ExecuteOptions
) => Effect.Effect<ReadonlyArray<StepResult>> = Effect.fnUntraced(function*(
  tools: ToolRegistry.Service,
  plan: RoutingPlan,
  prior: ReadonlyMap<string, StepResult>,
  options?: ExecuteOptions
) {
  if (plan.steps.length === 0) return []
  const maxResultBytes = options?.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES
  const callTool = options?.callTool ??
    ((step: RoutingStep, parameters: JsonObject) =>
      tools.call(step.namespace, step.agent, step.capability, parameters, { maxResultBytes }).pipe(
        // Checked where it enters, whichever registry answered.
        Effect.flatMap((output) => checkOutput(maxResultBytes, output)),
        Effect.match({
          onSuccess: (output): ToolCallResult => ({ _tag: "Succeeded", output }),
          onFailure: (failure): ToolCallResult => ({ _tag: "Failed", error: failure.message })
        })
      ))
  // One step depends on nothing in its plan: it runs on this fiber, with
  // no semaphore, no completion signals and no fork (a fork costs a
  // scheduler hop before the request can go on).
  const single = plan.steps.length === 1
  const semaphore = single ? undefined : yield* Effect.makeSemaphore(Math.max(1, options?.concurrency ?? 4))
  const done = new Map<string, Deferred.Deferred<StepResult>>()
  if (!single) { for (const step of plan.steps) done.set(step.step_id, yield* Deferred.make<StepResult>()) }

  const steps: StepContext = { prior, done, semaphore, callTool }
  const runStep = (step: RoutingStep): Effect.Effect<StepResult> =>
    stepBody(step, steps).pipe(
      (ran) => (single ? ran : Effect.tap(ran, (result) => Deferred.succeed(done.get(step.step_id)!, result))),
      (ran) => (options?.onStepEnd === undefined ? ran : Effect.tap(ran, options.onStepEnd)),
      spanned("pipeline.step", {
        captureStackTrace: false,
        attributes: {
          "pipeline.step.id": step.step_id,
          "pipeline.step.tool": `${step.namespace}/${step.agent}/${step.capability}`
        }
      })
    )

  if (single) return [yield* runStep(plan.steps[0]!)]
  return yield* Effect.forEach(plan.steps, runStep, { concurrency: "unbounded" })
})

/** What one step of a plan run reads. */
interface StepContext {
  readonly prior: ReadonlyMap<string, StepResult>
  readonly done: ReadonlyMap<string, Deferred.Deferred<StepResult>>
  readonly semaphore: Effect.Semaphore | undefined
  readonly callTool: (step: RoutingStep, parameters: JsonObject) => Effect.Effect<ToolCallResult>
}

// Defined once, not per step: a generator created per call loses its
// optimized code whenever a full GC finds none in flight.
const stepBody = Effect.fnUntraced(function*(step: RoutingStep, { callTool, done, prior, semaphore }: StepContext) {
  const outputs = new Map<string, Json>()
  const blocked: Array<string> = []
  for (const dep of step.depends_on) {
    const r = yield* Deferred.await(done.get(dep)!)
    if (r.status === "succeeded") outputs.set(dep, r.output ?? null)
    else blocked.push(dep)
  }
  for (const dep of step.implicit_deps) {
    const r = prior.get(dep)
    if (r?.status === "succeeded") outputs.set(dep, r.output ?? null)
    else blocked.push(dep)
  }
  // One read of the clock service; the times themselves are read synchronously.
  const clock = yield* Effect.clock
  const startedAt = clock.unsafeCurrentTimeMillis()
  const base = { step_id: step.step_id, namespace: step.namespace, agent: step.agent, capability: step.capability }
  if (blocked.length > 0) {
    return {
      ...base,
      status: "skipped",
      error: `dependency did not succeed: ${blocked.join(", ")}`,
      startedAt,
      duration: 0
    } as const
  }
  const parameters = resolveReferences(step.parameters, outputs)
  const t0 = elapsedMillis(clock)
  const outcome =
    yield* (semaphore === undefined ? callTool(step, parameters) : semaphore.withPermits(1)(callTool(step, parameters)))
  const duration = elapsedMillis(clock) - t0
  unsafeRecordToolCall(`${step.namespace}/${step.agent}/${step.capability}`, toolOutcome[outcome._tag], duration)
  switch (outcome._tag) {
    case "Succeeded":
      return { ...base, status: "succeeded", output: outcome.output, startedAt, duration } as const
    case "Failed":
      return { ...base, status: "failed", error: outcome.error, startedAt, duration } as const
    case "Denied":
      return { ...base, status: "denied", error: outcome.error, startedAt, duration } as const
  }
})
