/**
 * Executes one phase's validated plan as a dependency DAG with bounded
 * concurrency. Every step gets a result — succeeded (with its JSON output),
 * failed (with the tool's error) or skipped (a dependency did not succeed) —
 * and its duration. Tool failures never fail the request: synthesis reports
 * them. Each tool call is counted (`pipeline.tool.calls`, `pipeline.tool.duration`).
 */
import { Deferred, Effect } from "effect"
import { defaultMaxResultBytes } from "../../ai/internal/toolResult.js"
import { type Caller, checkOutput, type ToolCallResult } from "../../ai/ToolCalls.js"
import type { ToolRegistry } from "../../ai/ToolRegistry.js"
import type { ExecutionRecord, PhaseRecord, StepResult } from "../../domain/ExecutionRecord.js"
import type { Json, JsonObject } from "../../domain/Json.js"
import type { CallRef } from "../../domain/Operation.js"
import { referencePattern, type RoutingPlan, type RoutingStep } from "../../domain/RoutingPlan.js"
import { currentRecorder } from "../../runtime/internal/currentRecorder.js"
import type { RequestRecorder } from "../../runtime/internal/requestRecorder.js"
import { spanned } from "../../runtime/internal/spans.js"
import { elapsedMillis, millisBetween } from "../../runtime/internal/timing.js"
import { unsafeRecordToolCall } from "../../runtime/PipelineMetrics.js"

/**
 * Execution options.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteOptions {
  /** Tool calls in flight at once (default 4). */
  readonly concurrency?: number | undefined
  /**
   * How a step's tool is called (default: straight through the registry).
   * The pipeline passes the hook runtime's tool caller (`ToolCalls.make`),
   * so tool hooks fire.
   */
  readonly callTool?: Caller | undefined
  /**
   * The request phase the plan runs as: its tool calls' coordinates and
   * parent run. With it, each step's progress (the steps in flight, each
   * result as it ends) is kept in that phase's entry of the record of the
   * request the fiber works for.
   */
  readonly phase?: {
    readonly requestId: string
    readonly phase: number
    readonly parent?: CallRef | undefined
  } | undefined
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

const wholeReference = /^\{\{steps\.([A-Za-z0-9_-]{1,128})\.output((?:\.[A-Za-z0-9_-]+)*)\}\}$/

/**
 * Replaces canonical references with the referenced outputs: a value that is
 * exactly one reference becomes the referenced JSON value; a reference inside
 * a longer string becomes its text (strings as-is, other values as JSON).
 *
 * @since 0.1.0
 * @category utils
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
 * @category utils
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
  const maxResultBytes = options?.maxResultBytes ?? defaultMaxResultBytes
  const callTool: Caller = options?.callTool ??
    ((request) =>
      tools.call(request.namespace, request.agent, request.capability, request.parameters, { maxResultBytes }).pipe(
        // Checked where it enters, whichever registry answered.
        Effect.flatMap((output) => checkOutput(maxResultBytes, output)),
        Effect.match({
          onSuccess: (output): ToolCallResult => ({ status: "succeeded", output }),
          onFailure: (failure): ToolCallResult => ({ status: "failed", error: failure.message })
        })
      ))
  const phase = options?.phase
  // The record of the request the fiber works for (none outside a request, or with recording off).
  const recorder = phase === undefined ? undefined : yield* currentRecorder
  // One step depends on nothing in its plan: it runs on this fiber, with
  // no semaphore, no completion signals and no fork (a fork costs a
  // scheduler hop before the request can go on).
  const single = plan.steps.length === 1
  const semaphore = single ? undefined : yield* Effect.makeSemaphore(Math.max(1, options?.concurrency ?? 4))
  const done = new Map<string, Deferred.Deferred<StepResult>>()
  if (!single) { for (const step of plan.steps) done.set(step.step_id, yield* Deferred.make<StepResult>()) }

  const context: StepContext = {
    prior,
    done,
    semaphore,
    callTool,
    phase,
    progress: phase !== undefined && recorder?.enabled ? { recorder, phase: phase.phase } : undefined
  }
  const runStep = (step: RoutingStep): Effect.Effect<StepResult> =>
    stepBody(step, context).pipe(
      (ran) => (single ? ran : Effect.tap(ran, (result) => Deferred.succeed(done.get(step.step_id)!, result))),
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
  readonly callTool: Caller
  readonly phase: ExecuteOptions["phase"]
  /** Where step progress is recorded, with recording on. */
  readonly progress: { readonly recorder: RequestRecorder; readonly phase: number } | undefined
}

/** `record` with the latest entry of phase `phase` changed by `f`. */
const updatePhase = (phase: number, f: (entry: PhaseRecord) => PhaseRecord) => (record: ExecutionRecord) => {
  let i = record.phases.length - 1
  while (i >= 0 && record.phases[i]!.phase !== phase) i--
  if (i < 0) return record
  const phases = record.phases.slice()
  phases[i] = f(phases[i]!)
  return { ...record, phases }
}

const stepBody = Effect.fnUntraced(function*(step: RoutingStep, context: StepContext) {
  const { callTool, done, phase, prior, progress, semaphore } = context
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
  let result: StepResult
  if (blocked.length > 0) {
    result = {
      ...base,
      status: "skipped",
      error: `dependency did not succeed: ${blocked.join(", ")}`,
      startedAt,
      duration: 0
    }
  } else {
    const call = callTool({
      namespace: step.namespace,
      agent: step.agent,
      capability: step.capability,
      parameters: resolveReferences(step.parameters, outputs),
      coordinates: phase === undefined
        ? { requestId: "" }
        : { requestId: phase.requestId, phase: phase.phase, stepId: step.step_id },
      parent: phase?.parent
    })
    // With recording on, the step is in the record as running first.
    const marked = progress === undefined ? call : Effect.zipRight(
      progress.recorder.modify(updatePhase(progress.phase, (p) => ({
        ...p,
        running: [...(p.running ?? []), step.step_id]
      }))),
      call
    )
    const t0 = elapsedMillis(clock)
    const outcome = yield* (semaphore === undefined ? marked : semaphore.withPermits(1)(marked))
    const duration = millisBetween(t0, elapsedMillis(clock))
    unsafeRecordToolCall(`${step.namespace}/${step.agent}/${step.capability}`, outcome.status, duration)
    result = { ...base, ...outcome, startedAt, duration }
  }
  if (progress !== undefined) {
    yield* progress.recorder.modify(updatePhase(progress.phase, (p) => ({
      ...p,
      steps: [...p.steps, result],
      running: (p.running ?? []).filter((id) => id !== step.step_id)
    })))
  }
  return result
})
