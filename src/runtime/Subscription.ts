/**
 * Subscriptions (seed 001): a hook's binding to the points it handles, with
 * a stable unique id (the hook's name), a priority, explicit dependencies on
 * other subscriptions of the same point, an enabled flag, execution and
 * failure policies and declared capabilities.
 *
 * {@link build} validates every subscription once, at construction, and
 * orders each point's participants: dependencies first, then higher
 * priority first, then registration order — so with no priorities and no
 * dependencies, registration order is execution order (C1). Everything a run
 * needs (span name, resolved policies, dependency positions) is computed
 * here, so a hook call only looks it up.
 *
 * @since 0.1.0
 */
import { Duration, Either, Option } from "effect"
import { type HookPoint, isObserveOnly, TransformPoint } from "../domain/HookPoint.js"
import type { RunMeta } from "../domain/Operation.js"
import { InvalidHookSubscription } from "../domain/PipelineError.js"
import type { Grant } from "./Capability.js"
import { defaultLimit, type RunLimit } from "./internal/bounded.js"
import { type HookRunLabels, hookRunLabels } from "./PipelineMetrics.js"
import { type ExecutionPolicy, type FailurePolicy, isDetached } from "./Policy.js"
import { plainOf } from "./SyncHandler.js"

/**
 * One hook's subscription, before validation. `handlers` maps each point it
 * handles to its handler.
 *
 * @since 0.1.0
 * @category models
 */
export interface Spec<H extends { readonly [P in HookPoint]?: unknown }> {
  readonly id: string
  /** Zero-based registration index. */
  readonly index: number
  readonly handlers: H
  readonly priority: number
  readonly dependsOn: ReadonlyArray<string>
  readonly enabled: boolean
  readonly execution: ExecutionPolicy
  /** Omitted: the point's default. */
  readonly failure: FailurePolicy | undefined
  readonly grant: Grant
  /** How long one run may take (omitted: `Hook.deadline`'s timeout, else the runtime's default). */
  readonly timeout?: Duration.DurationInput | undefined
  /** The group the hook belongs to (`HookGroup.make`), if any: its runs' `RunMeta.group`. */
  readonly group?: string | undefined
}

/**
 * One subscription at one point, ready to run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Participant<Handler> {
  readonly id: string
  readonly index: number
  readonly point: HookPoint
  readonly handler: Handler
  /** The plain function of a handler marked `Hook.sync` (the synchronous fast path), computed once. */
  readonly plain?: ((...args: ReadonlyArray<unknown>) => unknown) | undefined
  /** `pipeline.hook.<point>.<id>`, computed once. */
  readonly spanName: string
  /** The tags of its runs' `pipeline.hook.duration` samples, computed once (omitted: not measured). */
  readonly metricLabels?: HookRunLabels | undefined
  readonly enabled: boolean
  readonly execution: ExecutionPolicy
  readonly failure: FailurePolicy
  readonly grant: Grant
  /** How long one run may take and its grace period once interrupted, resolved once (omitted: the defaults). */
  readonly limit?: RunLimit | undefined
  /** Positions (in this point's order) of the participants this one depends on. */
  readonly after: ReadonlyArray<number>
  /** The group the hook belongs to, if any. */
  readonly group?: string | undefined
  /**
   * The `RunMeta` its last run got: the runtime hands it on while the
   * request and round stay the same (no allocation per run).
   */
  meta?: RunMeta | undefined
}

/**
 * The ordered participants of every point.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registry<H extends { readonly [P in HookPoint]?: unknown }> {
  readonly at: <P extends HookPoint>(point: P) => ReadonlyArray<Participant<NonNullable<H[P]>>>
  /** Whether any subscription handles the point. */
  readonly has: (point: HookPoint) => boolean
}

/**
 * Why a participant does not run: it is disabled, or a participant it
 * depends on did not complete at this point (seed 001 "skipped").
 *
 * @since 0.1.0
 * @category utils
 */
export const skipReason = (
  participant: { readonly enabled: boolean; readonly after: ReadonlyArray<number> },
  completed: ReadonlyArray<boolean>
): "disabled" | "dependency_failed" | undefined =>
  !participant.enabled
    ? "disabled"
    : participant.after.some((i) => completed[i] !== true)
    ? "dependency_failed"
    : undefined

/**
 * Why a fail-closed participant could not run: the dependencies that did
 * not complete. A fail-closed hook that cannot run stops the request (or
 * denies its operation) — it is never silently skipped.
 *
 * @since 0.1.0
 * @category utils
 */
export const unmetDependencies = (
  participant: { readonly after: ReadonlyArray<number> },
  participants: ReadonlyArray<{ readonly id: string }>,
  completed: ReadonlyArray<boolean>
): string =>
  `could not run: ${
    participant.after.filter((i) => completed[i] !== true).map((i) => `"${participants[i]?.id}"`).join(", ")
  } did not complete`

const transformPoints: ReadonlySet<string> = new Set(TransformPoint.literals)

/**
 * The failure policy of a point when a subscription declares none: guards
 * and transforms fail closed (seed 002: a hook's error aborts the operation;
 * DESIGN §6: a guard that errs denies), stages and observers fail open
 * (seed 000).
 *
 * @since 0.1.0
 * @category utils
 */
export const defaultFailure = (point: HookPoint): FailurePolicy =>
  point.startsWith("guard_") || transformPoints.has(point) ? "fail_closed" : "fail_open"

const refuse = (reason: InvalidHookSubscription["reason"], hookName: string, detail: string) =>
  Either.left(new InvalidHookSubscription({ reason, hookName, detail }))

const pointsOf = <H extends { readonly [P in HookPoint]?: unknown }>(spec: Spec<H>): ReadonlyArray<HookPoint> =>
  (Object.keys(spec.handlers) as Array<HookPoint>).filter((p) => spec.handlers[p] !== undefined)

/**
 * Orders one point's participants: a dependency runs before its dependents;
 * among the ready ones, higher priority first, then registration order. A
 * cycle leaves participants unplaced and is reported by name.
 */
const order = <H extends { readonly [P in HookPoint]?: unknown }>(
  point: HookPoint,
  here: ReadonlyArray<Spec<H>>
): Either.Either<ReadonlyArray<Spec<H>>, InvalidHookSubscription> => {
  const ids = new Set(here.map((s) => s.id))
  const placed: Array<Spec<H>> = []
  const done = new Set<string>()
  const pending = [...here]
  while (pending.length > 0) {
    let best: number | undefined
    for (let i = 0; i < pending.length; i++) {
      const candidate = pending[i]!
      if (!candidate.dependsOn.every((d) => !ids.has(d) || done.has(d))) continue
      const current = best === undefined ? undefined : pending[best]!
      if (
        current === undefined || candidate.priority > current.priority ||
        (candidate.priority === current.priority && candidate.index < current.index)
      ) best = i
    }
    if (best === undefined) {
      const cycle = pending.map((s) => s.id).join(", ")
      return refuse("cyclic_dependency", pending[0]!.id, `dependencies form a cycle at ${point} among: ${cycle}`)
    }
    const [next] = pending.splice(best, 1)
    placed.push(next!)
    done.add(next!.id)
  }
  return Either.right(placed)
}

/** A timeout a run can honour: positive and finite. */
const validTimeout = (input: unknown): Duration.Duration | undefined => {
  const decoded = Duration.decodeUnknown(input)
  return Option.isSome(decoded) && Duration.isFinite(decoded.value) &&
      Duration.greaterThan(decoded.value, Duration.zero)
    ? decoded.value
    : undefined
}

/**
 * A subscription's bound: its own `timeout`, or its `Hook.deadline`'s, or
 * the runtime's default; a timeout that is not a positive finite duration
 * (a negative `Hook.deadline`) is refused.
 */
const limitOf = <H extends { readonly [P in HookPoint]?: unknown }>(
  spec: Spec<H>,
  defaults: RunLimit
): Either.Either<RunLimit, InvalidHookSubscription> => {
  const given = spec.timeout !== undefined
    ? { what: "timeout", value: spec.timeout }
    : spec.execution._tag === "Deadline"
    ? { what: "Hook.deadline", value: spec.execution.timeout }
    : undefined
  if (spec.timeout !== undefined && spec.execution._tag === "Deadline") {
    return refuse("policy_not_applicable", spec.id, "give either timeout or Hook.deadline(d), not both")
  }
  if (given === undefined) return Either.right(defaults)
  const timeout = validTimeout(given.value)
  return timeout === undefined
    ? refuse("policy_not_applicable", spec.id, `${given.what} must be a positive, finite duration`)
    : Either.right({ timeout, grace: defaults.grace })
}

/**
 * Validates subscriptions and orders every point.
 *
 * Refuses (with {@link InvalidHookSubscription}): a duplicate id; a
 * dependency that does not exist, shares no point with its dependent, or is
 * disabled; a dependency cycle; a detached execution policy on a point whose
 * result the request waits for; a fail-closed Around observer (it observes
 * and cannot change an outcome); a timeout that is not positive and finite.
 * Every run is bounded: `defaults` is the bound of subscriptions that set
 * none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = <H extends { readonly [P in HookPoint]?: unknown }>(
  specs: ReadonlyArray<Spec<H>>,
  defaults: RunLimit = defaultLimit
): Either.Either<Registry<H>, InvalidHookSubscription> => {
  const byId = new Map<string, Spec<H>>()
  const limits = new Map<string, RunLimit>()
  for (const spec of specs) {
    if (byId.has(spec.id)) {
      return refuse(
        "duplicate_id",
        spec.id,
        `hooks ${byId.get(spec.id)!.index} and ${spec.index} are both named "${spec.id}"`
      )
    }
    byId.set(spec.id, spec)
    const limit = limitOf(spec, defaults)
    if (Either.isLeft(limit)) return Either.left(limit.left)
    limits.set(spec.id, limit.right)
  }
  const points = new Map<HookPoint, Array<Spec<H>>>()
  for (const spec of specs) {
    const own = pointsOf(spec)
    for (const dep of spec.dependsOn) {
      const target = byId.get(dep)
      if (target === undefined) {
        return refuse("missing_dependency", spec.id, `depends on "${dep}", which is not registered`)
      }
      if (!pointsOf(target).some((p) => own.includes(p))) {
        return refuse("missing_dependency", spec.id, `depends on "${dep}", which handles none of its points`)
      }
      if (spec.enabled && !target.enabled) {
        return refuse("disabled_dependency", spec.id, `depends on "${dep}", which is disabled`)
      }
      if (isDetached(target.execution)) {
        return refuse(
          "policy_not_applicable",
          spec.id,
          `depends on "${dep}", which runs detached (${target.execution._tag}): nothing waits for it to complete`
        )
      }
    }
    for (const point of own) {
      if (isDetached(spec.execution) && !isObserveOnly(point)) {
        return refuse(
          "policy_not_applicable",
          spec.id,
          `${spec.execution._tag} cannot apply to ${point}: the request waits for what it returns`
        )
      }
      if (spec.failure === "fail_closed" && isDetached(spec.execution)) {
        return refuse(
          "policy_not_applicable",
          spec.id,
          `a ${spec.execution._tag} hook cannot fail closed: the request does not wait for it`
        )
      }
      if (spec.failure === "fail_closed" && (point.startsWith("around_") || point === "on_error")) {
        return refuse(
          "policy_not_applicable",
          spec.id,
          `an ${point} observer cannot fail closed: it cannot change the outcome`
        )
      }
      const list = points.get(point)
      if (list === undefined) points.set(point, [spec])
      else list.push(spec)
    }
  }
  const ordered = new Map<HookPoint, ReadonlyArray<Participant<unknown>>>()
  for (const [point, here] of points) {
    const sorted = order(point, here)
    if (Either.isLeft(sorted)) return Either.left(sorted.left)
    const position = new Map(sorted.right.map((s, i) => [s.id, i]))
    ordered.set(
      point,
      sorted.right.map((spec): Participant<unknown> => ({
        id: spec.id,
        index: spec.index,
        point,
        handler: spec.handlers[point],
        plain: plainOf(spec.handlers[point]),
        spanName: `pipeline.hook.${point}.${spec.id}`,
        metricLabels: hookRunLabels(spec.id, point),
        enabled: spec.enabled,
        execution: spec.execution,
        failure: spec.failure ?? defaultFailure(point),
        grant: spec.grant,
        limit: limits.get(spec.id) ?? defaults,
        after: spec.dependsOn.flatMap((d) => {
          const at = position.get(d)
          return at === undefined ? [] : [at]
        }),
        group: spec.group,
        meta: undefined
      }))
    )
  }
  const none: ReadonlyArray<never> = []
  return Either.right({
    // Handlers were placed under their own point by the typed spec.
    at: <P extends HookPoint>(point: P) =>
      (ordered.get(point) ?? none) as ReadonlyArray<Participant<NonNullable<H[P]>>>,
    has: (point) => ordered.has(point)
  })
}
