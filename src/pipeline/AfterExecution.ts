/**
 * The AfterExecution stage (seed 000 §4.3, C11): runs once after all phases'
 * tools and before synthesis. Observe-only — hooks get the combined results
 * and cannot change them; failures fail open.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import type { HookFailed } from "../domain/PipelineError.js"
import {
  dependencyFailed,
  type Detach,
  failedClosed,
  guarded,
  type Inflight,
  type InvocationSpec,
  invoke,
  syncOnly
} from "../runtime/internal/invoke.js"
import { skipped } from "../runtime/internal/skip.js"
import type { Participant } from "../runtime/Subscription.js"
import type { ExecutionResults, StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"

/**
 * The stage service.
 *
 * @since 0.1.0
 */
export class AfterExecution extends Context.Tag("effect-agent-pipeline/AfterExecution")<
  AfterExecution,
  AfterExecution.Service
>() {}

/** @since 0.1.0 */
export declare namespace AfterExecution {
  /** @since 0.1.0 */
  export interface Service {
    readonly hookCount: number
    readonly run: (request: StageRequest, results: ExecutionResults) => Effect.Effect<void, HookFailed>
  }
}

const isPlain = (u: object): u is { readonly [key: string]: unknown } => {
  const proto: unknown = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

/**
 * The frozen deep copy walk. Results are JSON-shaped (steps, plans, JSON
 * outputs), so plain objects and arrays are copied directly — several times
 * cheaper than `structuredClone` — while keeping its semantics: shared
 * references and cycles stay shared (a step is both in its phase and in
 * `steps`), holes stay holes, an own `__proto__` key stays a key, and
 * anything else is left to `structuredClone` (which also refuses functions
 * and symbols, as before).
 */
const frozenCopy = (value: unknown, copies: Map<object, unknown>): unknown => {
  if (typeof value !== "object" || value === null) {
    return typeof value === "function" || typeof value === "symbol" ? structuredClone(value) : value
  }
  const known = copies.get(value)
  if (known !== undefined) return known
  if (Array.isArray(value)) {
    const out: Array<unknown> = new Array(value.length)
    copies.set(value, out)
    for (let i = 0; i < value.length; i++) if (i in value) out[i] = frozenCopy(value[i], copies)
    return Object.freeze(out)
  }
  if (!isPlain(value)) {
    const out = deepFreeze(structuredClone(value))
    copies.set(value, out)
    return out
  }
  const out: Record<string, unknown> = {}
  copies.set(value, out)
  for (const key of Object.keys(value)) {
    const v = frozenCopy(value[key], copies)
    // Assigning `__proto__` would set the prototype instead of the key.
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
    } else {
      out[key] = v
    }
  }
  return Object.freeze(out)
}

/**
 * What every hook observes: a deeply frozen copy of the results, so no hook
 * can change what synthesis sees (C11).
 */
const snapshot = <A>(value: A): A => {
  const copy = frozenCopy(value, new Map())
  // The copy has the value's shape: every plain object and array is rebuilt
  // key for key, everything else comes from `structuredClone`.
  return copy as A
}

/**
 * An AfterExecution handler, its requirements provided.
 *
 * @since 0.1.0
 */
export type Handler = NonNullable<Hook.Hook<never>["afterExecution"]>

/**
 * Builds the stage from its ordered participants (see `PipelineHooks.layer`);
 * `detach` starts the runs of `fireAndRecord` / `background` hooks.
 *
 * @since 0.1.0
 */
export const make = (participants: ReadonlyArray<Participant<Handler>>, detach: Detach): AfterExecution.Service => {
  // Defined once per stage, not per request: a generator created per call
  // loses its optimized code whenever a full GC finds none in flight.
  const body = Effect.fnUntraced(function*(request: StageRequest, results: ExecutionResults, inflight: Inflight) {
    // Observe-only: every hook sees the same frozen copy.
    const view = snapshot(results)
    const completed: Array<boolean> = []
    for (let sequence = 0; sequence < participants.length; sequence++) {
      const participant = participants[sequence]!
      const { handler, id: hookName } = participant
      const spec: InvocationSpec<void> = {
        point: "after_execution",
        hookName,
        spanName: participant.spanName,
        metricLabels: participant.metricLabels,
        sequence,
        recorder: request.recorder,
        inflight,
        failure: participant.failure,
        execution: participant.execution,
        limit: participant.limit,
        detach,
        call: () => handler(request.context, view),
        plain: participant.plain === undefined ? undefined : () => participant.plain?.(request.context, view),
        accept: () => ({ _tag: "Accept", value: undefined })
      }
      const skip = skipped(participant, participants, completed, spec, dependencyFailed)
      if (skip !== undefined) {
        yield* skip
        continue
      }
      const result = yield* invoke(spec)
      completed[sequence] = result._tag !== "Rejected"
      if (result._tag === "Rejected" && participant.failure === "fail_closed") {
        return yield* Effect.fail(failedClosed(spec, result))
      }
    }
  })
  // Sync-only points run without an exit hook while spans are not collected.
  const sync = syncOnly(participants)
  return {
    hookCount: participants.length,
    run: (request, results) =>
      participants.length === 0 ? Effect.void : guarded((inflight) => body(request, results, inflight), sync)
  }
}
