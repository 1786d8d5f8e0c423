/**
 * The owner of a managed request's activity signal (C18, DESIGN §3 "A
 * request owns a Scope"): registered before the signal is announced, it
 * announces the pending `activity_signal_renewal` and
 * `activity_signal_cleanup` effects, renews the latest signal from a fiber
 * forked into the request's scope, and — on every exit of the request —
 * interrupts and joins that fiber, then removes the signal, then completes
 * both effects with their counters.
 */
import { Cause, Effect, Either, type Exit, Fiber, Schedule } from "effect"
import * as HookEffects from "../../runtime/HookEffects.js"
import * as RequestScope from "../../runtime/RequestScope.js"
import type { ActivityStore, Announcement } from "../../stores/ActivityStore.js"

/** Effect ids of the managed owner. */
export const renewalEffectId = "activity_signal_renewal"
export const cleanupEffectId = "activity_signal_cleanup"

/** One request's owner. Mutated only by its own hook, fiber and finalizer. */
export interface Owner {
  readonly requestId: string
  /** The signal the owner renews and removes: the latest announced. */
  latest: Announcement
  fiber: Fiber.RuntimeFiber<void, never> | undefined
  /** The request ended: its finalizer ran (or runs). */
  closed: boolean
  submissions: number
  errors: number
  lastError: string | undefined
}

/** The owners of one set of activity hooks, and their renewal fibers not yet joined. */
export interface Registry {
  readonly owners: Map<string, Owner>
  readonly renewals: Set<Fiber.RuntimeFiber<void, never>>
}

/** What the owner needs to know, fixed when the hooks are built. */
export interface OwnerConfig {
  readonly store: ActivityStore.Service
  readonly registry: Registry
  readonly ttlMillis: number
  readonly renewEveryMillis: number
}

const exitOf = (exit: Exit.Exit<unknown, unknown>): string =>
  exit._tag === "Success" ? "success" : Cause.isInterruptedOnly(exit.cause) ? "interrupted" : "failure"

/** Reports an effect of the current hook run; a refused report does not change the request. */
export const report = (input: HookEffects.HookEffectInput) => Effect.ignore(HookEffects.report(input))

/**
 * Reports the terminal `activity_signal_cleanup` effect: one removal
 * submitted, and whether the store returned an error (not whether the
 * backend is healthy).
 */
export const reportCleanup = (
  signalId: string,
  removal: Either.Either<unknown, { readonly message: string }>,
  started: number,
  how: { readonly mode: "managed" | "direct"; readonly summary: string; readonly requestExit?: string }
) =>
  Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
    report({
      effectId: cleanupEffectId,
      name: "Activity signal cleanup",
      status: Either.isRight(removal) ? "succeeded" : "failed",
      data: {
        signal_id: signalId,
        mode: how.mode,
        submitted: 1,
        errors: Either.isRight(removal) ? 0 : 1,
        provider_call_status: Either.isRight(removal) ? "returned" : "error",
        ...(how.requestExit === undefined ? {} : { request_exit: how.requestExit })
      },
      summary: how.summary,
      startedAt: started,
      duration: Math.max(0, now - started),
      ...(Either.isLeft(removal) ? { error: removal.left.message } : {})
    }))

/** One renewal: extend the latest signal; re-announce it if it expired meanwhile. */
const renewOnce = (config: OwnerConfig, owner: Owner) =>
  Effect.suspend(() => {
    const signal = owner.latest
    owner.submissions++
    return config.store.renew(signal.signalId, config.ttlMillis).pipe(
      Effect.flatMap((live) => (live ? Effect.void : Effect.asVoid(config.store.announce(signal, config.ttlMillis)))),
      // A store call in flight completes: interruption waits for it, so the
      // removal that follows a join never races a late renewal.
      Effect.uninterruptible,
      Effect.catchAll((error) =>
        Effect.zipRight(
          Effect.sync(() => {
            owner.errors++
            owner.lastError = error.message
          }),
          Effect.logWarning("activity signal renewal failed", error.message)
        )
      )
    )
  })

/**
 * Registers the owner of `requestId`'s signal in the request's scope: the
 * pending effects are reported now (before the announcing hook returns) and
 * the finalizer is added; both or neither.
 */
export const register = (config: OwnerConfig, signal: Announcement): Effect.Effect<Owner> =>
  Effect.uninterruptible(Effect.gen(function*() {
    const owner: Owner = {
      requestId: signal.requestId,
      latest: signal,
      fiber: undefined,
      closed: false,
      submissions: 0,
      errors: 0,
      lastError: undefined
    }
    const common = {
      signal_id: signal.signalId,
      domain: signal.domain,
      ttl_ms: config.ttlMillis,
      interval_ms: config.renewEveryMillis
    }
    yield* report({
      effectId: renewalEffectId,
      name: "Activity signal renewal",
      status: "pending",
      data: { ...common, state: "running" },
      summary: "renewing until the request ends"
    })
    yield* report({
      effectId: cleanupEffectId,
      name: "Activity signal cleanup",
      status: "pending",
      data: { signal_id: signal.signalId, mode: "managed" },
      summary: "removal when the request ends"
    })
    config.registry.owners.set(signal.requestId, owner)
    const started = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    yield* RequestScope.addFinalizer((exit) => close(config, owner, exit, started, common))
    return owner
  }))

/**
 * Starts the renewal fiber in the request's scope — unless the request
 * already ended, in which case the just announced signal is removed here
 * (the finalizer may have run while the announcement was in flight).
 */
export const startRenewal = (config: OwnerConfig, owner: Owner): Effect.Effect<void> =>
  Effect.uninterruptible(Effect.suspend(() => {
    if (owner.closed) return Effect.ignore(config.store.remove(owner.latest.signalId))
    if (owner.fiber !== undefined) return Effect.void
    // Forked from an uninterruptible region: the loop itself must be
    // interruptible, or the owner's join would wait forever.
    const loop = Effect.schedule(renewOnce(config, owner), Schedule.spaced(config.renewEveryMillis)).pipe(
      Effect.asVoid,
      Effect.interruptible,
      Effect.annotateLogs({ activity_signal: owner.latest.signalId })
    )
    return Effect.map(RequestScope.fork(loop), (fiber) => {
      owner.fiber = fiber
      config.registry.renewals.add(fiber)
    })
  }))

/** The owner's finalizer: join renewal, then remove, then complete both effects. */
const close = (
  config: OwnerConfig,
  owner: Owner,
  exit: Exit.Exit<unknown, unknown>,
  started: number,
  common: Readonly<Record<string, string | number>>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    owner.closed = true
    if (config.registry.owners.get(owner.requestId) === owner) config.registry.owners.delete(owner.requestId)
    const fiber = owner.fiber
    if (fiber !== undefined) {
      yield* Fiber.interrupt(fiber)
      config.registry.renewals.delete(fiber)
    }
    const signalId = owner.latest.signalId
    const removal = yield* Effect.either(config.store.remove(signalId))
    const requestExit = exitOf(exit)
    yield* report({
      effectId: renewalEffectId,
      name: "Activity signal renewal",
      status: owner.errors === 0 ? "succeeded" : "failed",
      data: {
        ...common,
        state: "joined",
        submissions: owner.submissions,
        errors: owner.errors,
        request_exit: requestExit
      },
      summary: `${owner.submissions} renewals submitted, ${owner.errors} errors`,
      startedAt: started,
      ...(owner.lastError === undefined ? {} : { error: owner.lastError })
    })
    yield* reportCleanup(signalId, removal, started, {
      mode: "managed",
      summary: "removal submitted after renewal was joined",
      requestExit
    })
  })
