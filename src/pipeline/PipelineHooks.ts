/**
 * Registration: the one Layer that validates the hook list (C1–C3) and
 * builds the four stage services from it. A hook's requirements become the
 * Layer's requirements; handlers run with them provided, so every stage
 * service has `R = never`.
 *
 * @since 0.1.0
 */
import { Context, Effect, Either, Layer } from "effect"
import { AfterExecution, make as makeAfterExecution } from "./AfterExecution.js"
import { AfterPlanning, make as makeAfterPlanning } from "./AfterPlanning.js"
import { AfterSynthesis, make as makeAfterSynthesis } from "./AfterSynthesis.js"
import { BeforePlanning, make as makeBeforePlanning } from "./BeforePlanning.js"
import type * as Hook from "./Hook.js"
import { validate } from "./HookRegistration.js"
import type { HookConfigError } from "../domain/PipelineError.js"

/**
 * The four stage services.
 *
 * @since 0.1.0
 */
export type Stages = BeforePlanning | AfterPlanning | AfterExecution | AfterSynthesis

const provideTo = <R>(hook: Hook.Hook<R>, context: Context.Context<R>): Hook.Hook<never> => {
  // Nothing to provide (the common case): skip a context merge per invocation.
  if (context.unsafeMap.size === 0) return hook as unknown as Hook.Hook<never>
  // A JavaScript handler may return a non-Effect; pass it through untouched so
  // the runner reports the wrong shape instead of crashing here.
  const wrap = <Args extends ReadonlyArray<unknown>, A>(
    f: ((...args: Args) => Effect.Effect<A, unknown, R>) | undefined
  ): ((...args: Args) => Effect.Effect<A, unknown>) | undefined =>
    f === undefined ? undefined : (...args: Args) => {
      const returned: unknown = f(...args)
      return Effect.isEffect(returned)
        ? Effect.provide(returned as Effect.Effect<A, unknown, R>, context)
        : (returned as Effect.Effect<A, unknown>)
    }
  return {
    name: hook.name,
    required: hook.required,
    beforePlanning: wrap(hook.beforePlanning),
    afterPlanning: wrap(hook.afterPlanning),
    afterExecution: wrap(hook.afterExecution),
    afterSynthesis: wrap(hook.afterSynthesis)
  }
}

/**
 * Validates hooks and builds the stage services.
 *
 * @since 0.1.0
 */
export const make = <R>(
  hooks: ReadonlyArray<Hook.Hook<R>>
): Effect.Effect<Context.Context<Stages>, HookConfigError, R> =>
  Effect.gen(function*() {
    const validated = validate(hooks)
    if (Either.isLeft(validated)) return yield* Effect.fail(validated.left)
    const context = yield* Effect.context<R>()
    const provided = validated.right.map((h) => provideTo(h, context))
    return Context.empty().pipe(
      Context.add(BeforePlanning, makeBeforePlanning(provided)),
      Context.add(AfterPlanning, makeAfterPlanning(provided)),
      Context.add(AfterExecution, makeAfterExecution(provided)),
      Context.add(AfterSynthesis, makeAfterSynthesis(provided))
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
 */
export const layer = <R = never>(hooks: ReadonlyArray<Hook.Hook<R>>): Layer.Layer<Stages, HookConfigError, R> =>
  Layer.effectContext(make(hooks))

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
 */
export const layerEffect = <R, E, R2>(
  hooks: Effect.Effect<ReadonlyArray<Hook.Hook<R>>, E, R2>
): Layer.Layer<Stages, HookConfigError | E, R | R2> => Layer.effectContext(Effect.flatMap(hooks, make))

/**
 * Registration from untyped input (JavaScript callers, configuration):
 * anything that is not a hook fails with a typed error, never a crash.
 *
 * @since 0.1.0
 */
export const layerUnknown = (hooks: unknown): Layer.Layer<Stages, HookConfigError> =>
  Layer.effectContext(
    Effect.suspend(() => {
      const validated = validate<never>(hooks)
      return Either.isLeft(validated) ? Effect.fail(validated.left) : make<never>(validated.right)
    })
  )
