/**
 * Built-in activity coordination hooks (seed 000 §10, C18): agents that
 * work side by side announce what they are doing and see what the others
 * do, in the planning prompt.
 *
 * - The **announcement** hook (BeforePlanning) announces this request's
 *   activity to the {@link ActivityStore} and returns the other live
 *   activities of the same domain as the `activity_coordination`
 *   enrichment, which the default prompt builder renders as
 *   `<agent_coordination>` (C7).
 * - In a **managed request** (inside a pipeline: the request owns a
 *   Scope), the request is the signal's owner. Before the announcement hook
 *   returns it reports the pending `activity_signal_renewal` and
 *   `activity_signal_cleanup` effects; a fiber forked into the request's
 *   scope renews the latest signal every `renewEvery`; when the request
 *   ends — success, failure, interruption or suspension — the owner
 *   interrupts and joins that fiber, then removes the signal, then
 *   completes both effects with their counters (submissions and errors:
 *   what was asked of the store, not whether the backend is healthy).
 * - The **cleanup** hook (AfterSynthesis) passes the response through. In a
 *   managed request it does nothing more: the owner cleans up. Used
 *   directly, without an owner (the handlers called outside a pipeline),
 *   it submits the signal's removal after synthesis and reports
 *   `activity_signal_cleanup`.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option, Schema } from "effect"
import { id } from "../domain/ErrorId.js"
import type { JsonObject } from "../domain/Json.js"
import { enrichmentActivityCoordination, type PipelineContext } from "../domain/PipelineContext.js"
import type { Hook } from "../pipeline/Hook.js"
import * as RequestScope from "../runtime/RequestScope.js"
import { type ActivitySignal, ActivityStore, type Announcement } from "../stores/ActivityStore.js"
import type { ActivityHooks, Options, Ownership } from "./internal/activityOptions.js"
import {
  type OwnerConfig,
  register,
  type Registry,
  report,
  reportCleanup,
  startRenewal
} from "./internal/activityOwner.js"

/**
 * Effect ids of the owner's cleanup and lease renewal reports.
 *
 * @since 0.1.0
 * @category constants
 */
export { cleanupEffectId, renewalEffectId } from "./internal/activityOwner.js"

/**
 * Effect id of the announced signal (submitted signal and TTL).
 *
 * @since 0.1.0
 * @category constants
 */
export const signalEffectId = "activity_signal"
/**
 * Effect id of the concurrent activities read (discovered and selected signals).
 *
 * @since 0.1.0
 * @category constants
 */
export const contextEffectId = "activity_context"
/**
 * The request metadata key the domain is read from when `domain` is not set.
 *
 * @since 0.1.0
 * @category constants
 */
export const metadataActivityDomain = "activity_domain"

/**
 * The activity hooks' options are out of range.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidActivityOptions extends Schema.TaggedError<InvalidActivityOptions>(id("InvalidActivityOptions"))(
  "InvalidActivityOptions",
  { option: Schema.String, detail: Schema.String }
) {
  override get message(): string {
    return `invalid activity option ${this.option}: ${this.detail}`
  }
}

/**
 * The hooks' options (`agent`, `domain`, timings, summary), what the owner
 * holds (`Ownership`) and what `make` returns (`ActivityHooks`).
 *
 * @since 0.1.0
 * @category models
 */
export type { ActivityHooks, Options, Ownership } from "./internal/activityOptions.js"

const millisOf = (option: string, input: Duration.DurationInput): Effect.Effect<number, InvalidActivityOptions> => {
  const decoded = Duration.decodeUnknown(input)
  const millis = Option.isSome(decoded) ? Duration.toMillis(decoded.value) : Number.NaN
  return Number.isFinite(millis) && millis >= 1
    ? Effect.succeed(Math.ceil(millis))
    : Effect.fail(new InvalidActivityOptions({ option, detail: `must be a finite duration of at least 1 ms` }))
}

const nonEmpty = (option: string, value: unknown): Effect.Effect<string, InvalidActivityOptions> =>
  typeof value === "string" && value.length > 0
    ? Effect.succeed(value)
    : Effect.fail(new InvalidActivityOptions({ option, detail: "must be a non-empty string" }))

/**
 * The signal id of an agent's activity for a request.
 *
 * @since 0.1.0
 * @category utils
 */
export const signalIdFor = (agent: string, requestId: string): string => `${agent}:${requestId}`

const defaultSummary = (context: PipelineContext): string =>
  context.request.length <= 200 ? context.request : `${context.request.slice(0, 199)}…`

/**
 * The `activity_coordination` text: one line per concurrent activity.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (domain: string, signals: ReadonlyArray<ActivitySignal>): string =>
  [
    `Other agents active in domain "${domain}" right now:`,
    ...signals.map((s) => `- ${s.agent} (request ${s.requestId}): ${s.summary}`)
  ].join("\n")

/**
 * Builds the announcement and cleanup hooks (they share who owns which
 * request's signal). Register both, announcement first; provide an
 * `ActivityStore` (memory, SQL or Redis) to the agent.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Activity, ActivityStore, Agent } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({
 *   tools: [],
 *   hooks: Effect.map(Activity.make({ agent: "deploy-bot", domain: "payments" }), (activity) => activity.hooks)
 * }).pipe(Layer.provide(ActivityStore.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<ActivityHooks, InvalidActivityOptions> =>
  Effect.gen(function*() {
    const agent = yield* nonEmpty("agent", options.agent)
    const ttlMillis = yield* millisOf("ttl", options.ttl ?? Duration.seconds(30))
    const renewEveryMillis = options.renewEvery === undefined
      ? Math.max(1, Math.floor(ttlMillis / 3))
      : yield* millisOf("renewEvery", options.renewEvery)
    if (renewEveryMillis >= ttlMillis) {
      return yield* new InvalidActivityOptions({ option: "renewEvery", detail: "must be shorter than ttl" })
    }
    const maxActivities = options.maxActivities ?? 10
    if (!Number.isInteger(maxActivities) || maxActivities < 0) {
      return yield* new InvalidActivityOptions({ option: "maxActivities", detail: "must be a whole number ≥ 0" })
    }
    const fixedDomain = typeof options.domain === "string" ? yield* nonEmpty("domain", options.domain) : undefined
    const announcementName = yield* nonEmpty("announcementName", options.announcementName ?? "activity-announcement")
    const cleanupName = yield* nonEmpty("cleanupName", options.cleanupName ?? "activity-cleanup")

    const registry: Registry = { owners: new Map(), renewals: new Set() }

    const domainOf = (context: PipelineContext): string => {
      if (fixedDomain !== undefined) return fixedDomain
      if (typeof options.domain === "function") return options.domain(context)
      const fromMetadata = context.metadata[metadataActivityDomain]
      return typeof fromMetadata === "string" && fromMetadata.length > 0 ? fromMetadata : "default"
    }

    const announcementOf = (context: PipelineContext): Announcement => {
      const data = options.data?.(context)
      return {
        signalId: signalIdFor(agent, context.requestId),
        domain: domainOf(context),
        agent,
        requestId: context.requestId,
        summary: (options.summary ?? defaultSummary)(context),
        ...(data === undefined ? {} : { data })
      }
    }

    const announce = (context: PipelineContext) =>
      Effect.gen(function*() {
        const store = yield* ActivityStore
        const signal = announcementOf(context)
        const config: OwnerConfig = { store, registry, ttlMillis, renewEveryMillis }
        // Managed: the owner exists (effects pending, finalizer added)
        // before the signal does, so no exit can leave the signal behind.
        const managed = Option.isSome(yield* RequestScope.get)
        let owner = managed ? registry.owners.get(context.requestId) : undefined
        if (owner !== undefined) owner.latest = signal
        else if (managed) owner = yield* register(config, signal)

        const stored = yield* Effect.uninterruptible(store.announce(signal, ttlMillis)).pipe(
          Effect.tapError((error) =>
            report({
              effectId: signalEffectId,
              name: "Activity signal",
              status: "failed",
              data: { signal_id: signal.signalId, domain: signal.domain, ttl_ms: ttlMillis },
              error: error.message
            })
          )
        )
        yield* report({
          effectId: signalEffectId,
          name: "Activity signal",
          status: "succeeded",
          data: {
            signal_id: stored.signalId,
            domain: stored.domain,
            agent,
            summary: stored.summary,
            ttl_ms: ttlMillis,
            expires_at: stored.expiresAt,
            managed
          }
        })
        if (owner !== undefined) yield* startRenewal(config, owner)

        const concurrent = yield* store.listActive(signal.domain, { excludeSignalId: signal.signalId }).pipe(
          Effect.tapError((error) =>
            report({
              effectId: contextEffectId,
              name: "Activity context",
              status: "failed",
              data: { domain: signal.domain },
              error: error.message
            })
          )
        )
        const selected = concurrent.slice(0, maxActivities)
        yield* report({
          effectId: contextEffectId,
          name: "Activity context",
          status: "succeeded",
          data: {
            domain: signal.domain,
            discovered: concurrent.length,
            selected: selected.map((s) => ({ signal_id: s.signalId, agent: s.agent, request_id: s.requestId }))
          }
        })
        if (selected.length === 0) return undefined
        const enrichments: JsonObject = { [enrichmentActivityCoordination]: render(signal.domain, selected) }
        return { enrichments }
      })

    const cleanUp = (context: PipelineContext, response: string) =>
      Effect.gen(function*() {
        // Managed: the owner removes the signal when the request ends.
        if (registry.owners.has(context.requestId)) return response
        const store = yield* ActivityStore
        const signalId = signalIdFor(agent, context.requestId)
        const started = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const removal = yield* Effect.either(Effect.uninterruptible(store.remove(signalId)))
        yield* reportCleanup(signalId, removal, started, {
          mode: "direct",
          summary: "removal submitted after synthesis"
        })
        return response
      })

    const announcement: Hook<ActivityStore> = {
      name: announcementName,
      capabilities: ["enrichments"],
      beforePlanning: (context) => announce(context)
    }
    const cleanup: Hook<ActivityStore> = {
      name: cleanupName,
      afterSynthesis: cleanUp
    }
    const ownership = Effect.sync((): Ownership => {
      let running = 0
      for (const fiber of registry.renewals) if (fiber.unsafePoll() === null) running++
      return { requests: registry.owners.size, renewalFibers: registry.renewals.size, runningRenewalFibers: running }
    })
    return { announcement, cleanup, hooks: [announcement, cleanup] as const, ownership }
  })
