/**
 * The BeforePlanning stage (seed 000 §4.1, §6; C4–C6): hooks run in
 * registration order, each seeing a snapshot of the enrichments accumulated
 * so far, returning changes and optionally a short-circuit. The first
 * accepted short-circuit wins and later hooks are not called. Every change to
 * an enrichment is recorded as a `planning_enrichment:<key>` effect with the
 * exact before/after values.
 *
 * A hook's result is read once, where it enters, into checked copies:
 * enrichments and short-circuit payloads as JSON values (at most
 * `Json.maxDepth` levels; each enrichment measured on the way for
 * `maxEnrichmentBytes`), tool entries rebuilt from their fields and
 * described. A value that is not JSON (a `bigint`, a cycle, a `Date`…) or
 * that throws when read (a getter, a Proxy) fails only that hook run with
 * `invalid_result` — a result that is not the stage's shape at all with
 * `wrong_shape` — under its failure policy; nothing of it is applied.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import type * as ToolRegistry from "../ai/ToolRegistry.js"
import type { JsonObject } from "../domain/Json.js"
import type { HookContractError, HookFailed } from "../domain/PipelineError.js"
import { currentRecorder } from "../runtime/internal/currentRecorder.js"
import * as Stage from "../runtime/internal/stage.js"
import type { Participant } from "../runtime/Subscription.js"
import type { StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"
import {
  type AcceptedShortCircuit,
  type Accumulated,
  judge,
  snapshot,
  type Step
} from "./internal/enrichmentJudgement.js"
import * as ShortCircuit from "./ShortCircuit.js"

/**
 * The accepted short-circuit that ended BeforePlanning: which hook, what
 * kind, why (`authoritative` or `cache_match`) and its payload.
 *
 * @since 0.1.0
 * @category models
 */
export type { AcceptedShortCircuit }

/**
 * The stage's outcome.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly enrichments: JsonObject
  readonly shortCircuit?: AcceptedShortCircuit | undefined
  /** Tools hooks added for this request (`extra_tools`). */
  readonly tools?: ReadonlyArray<ToolRegistry.ToolEntry<never>> | undefined
}

/**
 * What the stage needs besides the request: the short-circuit gate, the
 * enrichment size limit and the registered tools (a hook may not add one
 * that is already there).
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  readonly gate: ShortCircuit.PipelineGate
  readonly maxEnrichmentBytes: number
  readonly hasTool: (namespace: string, agent: string, capability: string) => boolean
}

/**
 * The stage service.
 *
 * @since 0.1.0
 * @category services
 */
export class BeforePlanning extends Context.Tag("effect-agent-pipeline/BeforePlanning")<
  BeforePlanning,
  BeforePlanning.Service
>() {}

/**
 * The types of the {@link BeforePlanning} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace BeforePlanning {
  /**
   * The BeforePlanning stage: how many hooks it runs, and a run over a request.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly hookCount: number
    /**
     * Runs the hooks. `maxEnrichmentBytes` bounds the JSON size of all
     * enrichments together; a hook whose changes would exceed it fails open.
     */
    readonly run: (request: StageRequest, options: RunOptions) => Effect.Effect<Outcome, HookContractError | HookFailed>
  }
}

/**
 * A BeforePlanning handler, its requirements provided.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = NonNullable<Hook.Hook<never>["beforePlanning"]>

/** What a short-circuit accepted or refused adds besides its record: the decision metric, a diagnostic. */
const stepTaken = (step: Step, state: Accumulated, hookName: string) => {
  switch (step._tag) {
    case "Continue":
      return step.rejectedReason === undefined
        ? false
        : Effect.as(ShortCircuit.recordDecisionMetric("cache", step.rejectedReason, "rejected"), false)
    case "ShortCircuit":
      state.shortCircuit = step.accepted
      return Effect.gen(function*() {
        yield* ShortCircuit.recordDecisionMetric(step.accepted.kind, step.accepted.reason, "accepted")
        if (step.diagnostic !== undefined) {
          const diagnostic = `${hookName}: ${step.diagnostic}`
          yield* Effect.logWarning(diagnostic)
          // On the request's record, as the stage's runs are (read again only on this rare path).
          const recorder = yield* currentRecorder
          yield* recorder.modify((r) => ({ ...r, diagnostics: [...r.diagnostics, diagnostic] }))
        }
        return true
      })
    case "Violation":
      return false
  }
}

/**
 * Hooks run in order on a snapshot of the enrichments so far; each result is
 * judged (`enrichmentJudgement.ts`); the first accepted short-circuit ends
 * the stage; a contract violation fails it whatever the hook's policy.
 */
const rule: Stage.Rule<Parameters<Handler>, Accumulated, Step, HookContractError> = {
  point: "before_planning",
  args: (state) => [snapshot(state), state.gate],
  accept: judge,
  accepted: (step, state, { id }) => stepTaken(step, state, id),
  rejected: (result) =>
    result.value?._tag === "Violation"
      ? Effect.zipRight(
        ShortCircuit.recordDecisionMetric("invalid", result.value.error.reason, "invalid"),
        Effect.fail(result.value.error)
      )
      : undefined
}

/**
 * Builds the stage from its ordered participants (see `PipelineHooks.layer`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (participants: ReadonlyArray<Participant<Handler>>): BeforePlanning.Service => {
  const stage = Stage.make(rule, participants)
  return {
    hookCount: participants.length,
    run: (request, { gate, hasTool, maxEnrichmentBytes }) =>
      participants.length === 0
        ? Effect.succeed({ enrichments: request.context.enrichments })
        : Effect.clockWith((clock) =>
          Effect.map(
            stage(Stage.whole, {
              context: request.context,
              gate,
              maxEnrichmentBytes,
              hasTool,
              clock,
              enrichments: { ...request.context.enrichments },
              tools: [],
              toolKeys: new Set(),
              sizes: undefined,
              version: 0,
              view: undefined,
              viewVersion: -1,
              shortCircuit: undefined
            }),
            ({ enrichments, shortCircuit, tools }) =>
              shortCircuit === undefined ? { enrichments, tools } : { enrichments, shortCircuit, tools }
          )
        )
  }
}
