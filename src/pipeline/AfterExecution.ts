/**
 * The AfterExecution stage (seed 000 §4.3, C11): runs once after all phases'
 * tools and before synthesis. Observe-only — hooks get the combined results
 * and cannot change them; failures fail open.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import type { HookFailed } from "../domain/PipelineError.js"
import type { Detach, Verdict } from "../runtime/internal/invoke.js"
import * as Stage from "../runtime/internal/stage.js"
import type { Participant } from "../runtime/Subscription.js"
import type { ExecutionResults, StageRequest } from "./Hook.js"
import type * as Hook from "./Hook.js"

/**
 * The stage service.
 *
 * @since 0.1.0
 * @category services
 */
export class AfterExecution extends Context.Tag("effect-agent-pipeline/AfterExecution")<
  AfterExecution,
  AfterExecution.Service
>() {}

/**
 * The types of the {@link AfterExecution} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace AfterExecution {
  /**
   * The AfterExecution stage: how many hooks it runs, and a run over a request's execution results.
   *
   * @since 0.1.0
   * @category models
   */
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
 * @category models
 */
export type Handler = NonNullable<Hook.Hook<never>["afterExecution"]>

/** One request's pass: the context, and the frozen copy of the results every hook observes. */
interface State {
  readonly context: StageRequest["context"]
  readonly view: ExecutionResults
}

const accepted: Verdict<void> = { _tag: "Accept", value: undefined }

/** Observe-only: every run gets the same frozen copy, and any value it returns is accepted as nothing. */
const rule: Stage.Rule<Parameters<Handler>, State, void, never> = {
  point: "after_execution",
  args: (state) => [state.context, state.view],
  accept: () => accepted
}

/**
 * Builds the stage from its ordered participants (see `PipelineHooks.layer`);
 * `detach` starts the runs of `fireAndRecord` / `background` hooks.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (participants: ReadonlyArray<Participant<Handler>>, detach: Detach): AfterExecution.Service => {
  const stage = Stage.make(rule, participants, detach)
  return {
    hookCount: participants.length,
    run: (request, results) =>
      participants.length === 0
        ? Effect.void
        : Effect.asVoid(stage(Stage.whole, { context: request.context, view: snapshot(results) }))
  }
}
