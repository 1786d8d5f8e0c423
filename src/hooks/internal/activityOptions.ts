/**
 * The shapes of the activity hooks' configuration and handle (see
 * `Activity.make`): kept apart from the hooks' behaviour so the module that
 * builds them stays one concept.
 */
import type { Duration, Effect } from "effect"
import type { Json } from "../../domain/Json.js"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { Hook } from "../../pipeline/Hook.js"
import type { ActivityStore } from "../../stores/ActivityStore.js"

/**
 * Options of {@link make}. Only `agent` is required.
 *
 * - `agent`: this agent's name, on every signal it announces
 * - `domain`: the domain signals are announced in and read from — a fixed
 *   one, or one per request; default: request metadata `activity_domain`
 *   (a non-empty string), else `"default"`
 * - `ttl`: how long a signal lives without renewal (default 30 seconds)
 * - `renewEvery`: how often a managed request renews it (default `ttl / 3`, less than `ttl`)
 * - `summary`: what the signal says this agent does (default: the request, at most 200 characters)
 * - `data`: JSON attached to the signal
 * - `maxActivities`: at most this many concurrent activities are injected (default 10)
 * - `announcementName` / `cleanupName`: the hooks' names
 *   (default `activity-announcement` / `activity-cleanup`)
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly agent: string
  readonly domain?: string | ((context: PipelineContext) => string) | undefined
  readonly ttl?: Duration.DurationInput | undefined
  readonly renewEvery?: Duration.DurationInput | undefined
  readonly summary?: ((context: PipelineContext) => string) | undefined
  readonly data?: ((context: PipelineContext) => Json | undefined) | undefined
  readonly maxActivities?: number | undefined
  readonly announcementName?: string | undefined
  readonly cleanupName?: string | undefined
}

/**
 * What the owner holds right now: requests whose signal it owns, and
 * renewal fibers it forked and has not joined yet (both 0 once every
 * request ended).
 *
 * @since 0.1.0
 * @category models
 */
export interface Ownership {
  readonly requests: number
  readonly renewalFibers: number
  /** Renewal fibers still running (a subset of `renewalFibers`). */
  readonly runningRenewalFibers: number
}

/**
 * The activity hooks: register `hooks` (announcement first).
 *
 * @since 0.1.0
 * @category models
 */
export interface ActivityHooks {
  /**
   * BeforePlanning: announces the request's activity (effect
   * `activity_signal`), reads the other live activities of its domain
   * (`activity_context`) and returns them as the `activity_coordination`
   * enrichment. In a managed request it first makes the request the
   * signal's owner: pending `activity_signal_renewal` and
   * `activity_signal_cleanup`, a renewal fiber in the request's scope, and a
   * finalizer that joins renewal, removes the signal and completes both
   * effects on every exit. A store failure fails the hook (fail-open: the
   * request goes on without coordination).
   */
  readonly announcement: Hook<ActivityStore>
  /**
   * AfterSynthesis: returns the response unchanged. Without an owner (the
   * handlers called directly, outside a pipeline) it removes the signal and
   * reports `activity_signal_cleanup`; in a managed request the owner does.
   *
   * @example
   * ```ts
   * import { Effect, Schema } from "effect"
   * import { Activity, ActivityStore, PipelineContext, ShortCircuit } from "effect-agent-pipeline"
   *
   * // Direct use: no pipeline, no owner — the cleanup hook removes the signal.
   * const context: PipelineContext.PipelineContext = {
   *   requestId: Schema.decodeSync(PipelineContext.RequestId)("job-7"),
   *   request: "rotate the TLS certificates",
   *   metadata: { activity_domain: "infra" },
   *   enrichments: {}
   * }
   * const program = Effect.gen(function*() {
   *   const activity = yield* Activity.make({ agent: "ops-bot" })
   *   yield* activity.announcement.beforePlanning!(context, ShortCircuit.defaultGate)
   *   // … plan, execute, synthesize …
   *   return yield* activity.cleanup.afterSynthesis!(context, "done")
   * }).pipe(Effect.provide(ActivityStore.layerMemory))
   * ```
   */
  readonly cleanup: Hook<ActivityStore>
  /** Both hooks in registration order: announcement, then cleanup. */
  readonly hooks: readonly [Hook<ActivityStore>, Hook<ActivityStore>]
  /** What the owner holds now (0 requests and 0 renewal fibers once every request ended). */
  readonly ownership: Effect.Effect<Ownership>
}
