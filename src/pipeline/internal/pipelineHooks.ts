/**
 * Registration: the one Layer that validates the hook list (C1–C3, seed 001
 * subscriptions) and builds the four stage services and the hook runtime
 * (operations engine, detached-run pool) from it. A hook's requirements
 * become the Layer's requirements; handlers run with them provided, so every
 * service has `R = never`. The pool belongs to the Layer's scope: detached
 * runs are drained, then interrupted, when it closes.
 */
import { Context, Duration, Effect, Either, Exit, Layer, type Scope } from "effect"
import { isGuardable } from "../../domain/Operation.js"
import type { HookConfigError } from "../../domain/PipelineError.js"
import * as BackgroundPool from "../../runtime/internal/backgroundPool.js"
import { defaultLimit, type RunLimit } from "../../runtime/internal/bounded.js"
import { provideServices, servicesOf } from "../../runtime/internal/handlerContext.js"
import { HookRuntime } from "../../runtime/internal/hookRuntime.js"
import * as Operations from "../../runtime/Operations.js"
import { isSync, plainOf, sync } from "../../runtime/SyncHandler.js"
import { AfterExecution, make as makeAfterExecution } from "../AfterExecution.js"
import { AfterPlanning, make as makeAfterPlanning } from "../AfterPlanning.js"
import { AfterSynthesis, make as makeAfterSynthesis } from "../AfterSynthesis.js"
import { BeforePlanning, make as makeBeforePlanning } from "../BeforePlanning.js"
import type * as Hook from "../Hook.js"
import { isRequired, registryOf, validate } from "./hookRegistration.js"

/**
 * The four stage services and the hook runtime.
 *
 * @since 0.1.0
 * @category models
 */
export type Stages = BeforePlanning | AfterPlanning | AfterExecution | AfterSynthesis | HookRuntime

/**
 * Registration options: the runtime's pool for detached (`background`,
 * `fireAndRecord`) hook runs, and the bound of every hook run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends BackgroundPool.PoolOptions {
  /** How long one run of a hook may take unless the hook sets its own bound (default 30 seconds). */
  readonly hookTimeout?: Duration.DurationInput | undefined
  /** How long an interrupted run gets to stop before it is abandoned (default 1 second). */
  readonly hookGracePeriod?: Duration.DurationInput | undefined
}

// Handlers that return an Effect directly (`onError` too): each wrapped alike.
const transformKeys = [
  "beforeInference",
  "afterInference",
  "beforeTool",
  "afterTool",
  "beforeRetrieval",
  "afterRetrieval",
  "beforeMemoryLoad",
  "afterMemoryLoad",
  "beforeMemoryStore",
  "afterMemoryStore",
  "onError"
] as const

const provideTo = <R>(hook: Hook.Hook<R>, context: Context.Context<R>): Hook.Hook<never> => {
  // Nothing to provide (the common case): skip a context merge per invocation.
  if (context.unsafeMap.size === 0) return hook as unknown as Hook.Hook<never>
  // A JavaScript handler may return a non-Effect; pass it through untouched so
  // the runner reports the wrong shape instead of crashing here.
  // An exit (`Effect.succeed`, `Effect.fail`) has ended: it needs no services,
  // and left as it is the runner takes it as it is, with nothing to run.
  const provide = (returned: unknown): unknown =>
    Effect.isEffect(returned) && !Exit.isExit(returned)
      ? provideServices(returned as Effect.Effect<unknown, unknown, R>, context)
      : returned
  // A Hook.sync handler needs no services: it stays as it is (and keeps its fast path).
  const wrap = (f: unknown): unknown =>
    typeof f === "function" && !isSync(f) ? (...args: Array<unknown>) => provide(f(...args)) : f
  // An Around observer's finish callback needs the same services — also
  // the one a Hook.sync observer returns (which stays synchronous itself).
  const wrapAround = (f: unknown): unknown => {
    if (typeof f !== "function") return f
    const plain = plainOf(f)
    if (plain !== undefined) {
      return sync((...args: ReadonlyArray<unknown>) => {
        const finish = plain(...args)
        return typeof finish === "function" ? wrap(finish) : finish
      })
    }
    return (...args: Array<unknown>) => {
      const returned: unknown = f(...args)
      if (!Effect.isEffect(returned)) return returned
      // An observer that has already begun (`Effect.void`, `Effect.succeed(finish)`)
      // stays an exit: the runner then begins it synchronously.
      if (Exit.isExit(returned)) {
        return Exit.isSuccess(returned) && typeof returned.value === "function"
          ? Exit.succeed(wrap(returned.value))
          : returned
      }
      return provide(Effect.map(returned, (finish) => (typeof finish === "function" ? wrap(finish) : finish)))
    }
  }
  const mapValues = (handlers: object | undefined, f: (h: unknown) => unknown) =>
    handlers === undefined ? undefined : Object.fromEntries(Object.entries(handlers).map(([k, v]) => [k, f(v)]))
  const provided: Record<string, unknown> = {
    ...hook,
    beforePlanning: wrap(hook.beforePlanning),
    afterPlanning: wrap(hook.afterPlanning),
    afterExecution: wrap(hook.afterExecution),
    afterSynthesis: wrap(hook.afterSynthesis),
    around: mapValues(hook.around, wrapAround),
    guard: mapValues(hook.guard, wrap)
  }
  for (const key of transformKeys) provided[key] = wrap(hook[key])
  // Every handler now has the hook's requirements provided.
  return provided as unknown as Hook.Hook<never>
}

/** The bound of hook runs that set none of their own. */
const limitOf = (options: Options | undefined): RunLimit => ({
  timeout: options?.hookTimeout === undefined ? defaultLimit.timeout : Duration.decode(options.hookTimeout),
  grace: options?.hookGracePeriod === undefined ? defaultLimit.grace : Duration.decode(options.hookGracePeriod)
})

/**
 * Validates hooks and builds the stage services and the hook runtime (its
 * pool lives in the current scope).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R>(
  hooks: ReadonlyArray<Hook.Hook<R>>,
  options?: Options
): Effect.Effect<Context.Context<Stages>, HookConfigError, R | Scope.Scope> =>
  Effect.gen(function*() {
    const validated = validate(hooks)
    if (Either.isLeft(validated)) return yield* Effect.fail(validated.left)
    const context = servicesOf(yield* Effect.context<R>())
    const limit = limitOf(options)
    const registry = registryOf(validated.right.map((h) => provideTo(h, context)), limit)
    if (Either.isLeft(registry)) return yield* Effect.fail(registry.left)
    const at = registry.right.at
    const pool = yield* BackgroundPool.make(options)
    const operations = Operations.make(
      {
        around: (operation) => at(`around_${operation}`),
        guard: (operation) => (isGuardable(operation) ? at(`guard_${operation}`) : []),
        transform: (point) => at(point),
        onError: () => at("on_error")
      },
      pool.detach,
      limit
    )
    return Context.empty().pipe(
      Context.add(BeforePlanning, makeBeforePlanning(at("before_planning"))),
      Context.add(AfterPlanning, makeAfterPlanning(at("after_planning"), validated.right.find(isRequired)?.name)),
      Context.add(AfterExecution, makeAfterExecution(at("after_execution"), pool.detach)),
      Context.add(AfterSynthesis, makeAfterSynthesis(at("after_synthesis"))),
      Context.add(HookRuntime, { operations, detach: pool.detach })
    )
  })

/**
 * The registration Layer. Registration order is execution order within each
 * stage; an empty list is valid.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, PipelineHooks } from "effect-agent-pipeline"
 *
 * const HooksLive = PipelineHooks.layer([
 *   Hook.make({ name: "rag", beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "…" } }) }),
 *   Hook.make({ name: "redact", afterSynthesis: (_ctx, text) => Effect.succeed(text.replaceAll("secret", "[redacted]")) })
 * ])
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R = never>(
  hooks: ReadonlyArray<Hook.Hook<R>>,
  options?: Options
): Layer.Layer<Stages, HookConfigError, R> => Layer.scopedContext(make(hooks, options))

/**
 * Registration of hooks that need construction (a client to open, a
 * configuration to read): the Effect builds the list, then it is validated
 * like {@link layer}'s.
 *
 * @example
 * ```ts
 * import { Config, Effect } from "effect"
 * import { Hook, PipelineHooks } from "effect-agent-pipeline"
 *
 * const HooksLive = PipelineHooks.layerEffect(
 *   Effect.gen(function*() {
 *     const banner = yield* Config.string("BANNER").pipe(Config.withDefault(""))
 *     return [Hook.make({ name: "banner", afterSynthesis: (_c, t) => Effect.succeed(banner + t) })]
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEffect = <R, E, R2>(
  hooks: Effect.Effect<ReadonlyArray<Hook.Hook<R>>, E, R2>,
  options?: Options
): Layer.Layer<Stages, HookConfigError | E, R | Exclude<R2, Scope.Scope>> =>
  Layer.scopedContext(Effect.flatMap(hooks, (list) => make(list, options)))

/**
 * Registration from untyped input (JavaScript callers, configuration):
 * anything that is not a hook fails with a typed error, never a crash.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerUnknown = (hooks: unknown, options?: Options): Layer.Layer<Stages, HookConfigError> =>
  Layer.scopedContext(
    Effect.suspend(() => {
      const validated = validate<never>(hooks)
      return Either.isLeft(validated) ? Effect.fail(validated.left) : make<never>(validated.right, options)
    })
  )
