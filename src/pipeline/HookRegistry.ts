/**
 * Registering hook handlers by point while an agent runs (seed 004: "hooks
 * := engine.NewHookRegistry(); hooks.Register(engine.BeforeLLMCall,
 * myHook)"). An agent built with `registry: true` (`Agent.layer`) provides
 * this service beside its `Pipeline`.
 *
 * The hooks a request runs are fixed when it starts: the agent's `hooks`
 * and every handler registered by then, in registration order (priorities
 * and dependencies as on any hook). A registration or removal made during a
 * request never changes that request; it takes effect from the next one.
 * Registrations and removals are serialized; each one validates the whole
 * resulting hook list first, and on any failure leaves the registry as it
 * was (a typed {@link HookRegistryError}).
 *
 * @since 0.1.0
 */
import { Context, Effect, Schema } from "effect"
import {
  InvalidHookSubscription,
  InvalidOrchestratorConfig,
  InvalidRequiredAfterPlanningHook
} from "../domain/ConfigError.js"
import { id, TypeId } from "../domain/ErrorId.js"
import type { HookPoint } from "../domain/HookPoint.js"
import type * as Hook from "./Hook.js"
import type { Handler as PointHandler, Point } from "./internal/hookRegistryPoints.js"

/**
 * Why a registration or removal was refused (the registry is unchanged):
 *
 * - `unknown_point`: the point is not a `HookPoint` (a JavaScript caller's typo)
 * - `invalid_registration`: the handler is not a function, or an option is
 *   unknown or has the wrong shape
 * - `duplicate_name`: a hook of that name is already registered, or is one
 *   of the agent's `hooks`
 * - `refused`: the hook list with the change does not validate (a
 *   dependency that does not exist, a cycle, a policy the point cannot
 *   honour, a hook sorting after the required one…): `cause` says which
 * - `not_registered`: no registered hook has that name (the agent's own
 *   `hooks` cannot be removed)
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookRegistryErrorReason = Schema.Literal(
  "unknown_point",
  "invalid_registration",
  "duplicate_name",
  "refused",
  "not_registered"
)
/**
 * One of the {@link HookRegistryErrorReason} literals.
 *
 * @since 0.1.0
 * @category models
 */
export type HookRegistryErrorReason = typeof HookRegistryErrorReason.Type

/**
 * A registration or removal was refused; the registry is unchanged.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HookRegistry } from "effect-agent-pipeline"
 *
 * const once = HookRegistry.register("after_synthesis", (_ctx, text) => Effect.succeed(text), { name: "audit" }).pipe(
 *   Effect.catchTag("HookRegistryError", (e) =>
 *     e.reason === "duplicate_name" ? Effect.log("already registered") : Effect.fail(e))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class HookRegistryError extends Schema.TaggedError<HookRegistryError>(id("HookRegistryError"))(
  "HookRegistryError",
  {
    reason: HookRegistryErrorReason,
    /** The hook the change concerns (empty when the point was refused before a name was chosen). */
    hookName: Schema.String,
    point: Schema.optional(Schema.String),
    detail: Schema.String,
    /** The validation error of the resulting hook list (`refused`, `invalid_registration`). */
    cause: Schema.optional(
      Schema.Union(InvalidOrchestratorConfig, InvalidRequiredAfterPlanningHook, InvalidHookSubscription)
    )
  }
) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    const subject = this.hookName === "" ? `a ${this.point ?? "hook"} handler` : `hook "${this.hookName}"`
    return `${subject} not changed in the registry (${this.reason}): ${this.detail}`
  }
}

/**
 * The handler a point takes — the type of that point's field on a
 * {@link Hook.Hook} (`before_planning` takes a `beforePlanning` handler,
 * `guard_tool_call` a `guard.toolCall` guard, `after_tool` an `afterTool`
 * transform).
 *
 * @since 0.1.0
 * @category models
 */
export type Handler<P extends RegistryPoint> = PointHandler<P>

/**
 * The points a handler can be registered at: every {@link HookPoint}.
 *
 * @since 0.1.0
 * @category models
 */
export type RegistryPoint = Point

/**
 * A registration's subscription options, as on {@link Hook.Hook}. Without
 * a `name`, one is generated: `registry:<point>:<n>`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RegisterOptions
  extends Pick<Hook.Hook, "priority" | "dependsOn" | "execution" | "failure" | "timeout" | "capabilities">
{
  /** The hook's unique name (its subscription id, in records and span names). */
  readonly name?: string | undefined
}

/**
 * A registered handler: its hook's name, its point, and the Effect that
 * removes it (from the next request on). Removing it again, or after
 * `unregister`, does nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registration {
  readonly name: string
  readonly point: RegistryPoint
  /** Fails (`refused`) only when a registered hook still depends on it. */
  readonly remove: Effect.Effect<void, HookRegistryError>
}

/**
 * The registry service of an agent built with `registry: true`.
 *
 * @since 0.1.0
 * @category services
 */
export class HookRegistry extends Context.Tag("effect-agent-pipeline/HookRegistry")<
  HookRegistry,
  HookRegistry.Service
>() {}

/**
 * The types of the {@link HookRegistry} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace HookRegistry {
  /**
   * Registration, removal and inspection of the agent's hooks.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * Registers `handler` at `point`, for every request that starts once
     * the returned Effect has succeeded.
     */
    readonly register: <P extends RegistryPoint>(
      point: P,
      handler: NoInfer<Handler<P>>,
      options?: RegisterOptions
    ) => Effect.Effect<Registration, HookRegistryError>
    /** Removes the registered hook `name`, for every request that starts once this has succeeded. */
    readonly unregister: (name: string) => Effect.Effect<void, HookRegistryError>
    /** The hooks the next request runs: the agent's `hooks`, then the registered ones, in registration order. */
    readonly hooks: Effect.Effect<ReadonlyArray<Hook.Any>>
  }
}

/**
 * The registry part of an agent's configuration.
 *
 * `registry: true` makes the agent provide a `HookRegistry` beside its
 * `Pipeline`: handlers registered at a point while the agent runs, each
 * request running the hooks registered when it started (the agent's
 * `hooks` first). Every change rebuilds the agent's hooks, inference seam
 * and pipeline (not its model, tools or stores) and swaps them in for the
 * next request. Default `false`: no registry, and the pipeline is called
 * directly.
 *
 * @since 0.1.0
 * @category models
 */
export interface RegistryConfig<G extends boolean = false> {
  /** Whether the agent provides a `HookRegistry` (default `false`). */
  readonly registry?: G | undefined
}

/**
 * What `registry: true` adds to an agent's {@link Services}: the
 * {@link HookRegistry} (nothing otherwise).
 *
 * @since 0.1.0
 * @category models
 */
export type RegistryServices<G extends boolean> = [G] extends [true] ? HookRegistry : never

/**
 * Registers `handler` at `point` on the agent's registry (see
 * {@link HookRegistry.Service}).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, HookRegistry, Pipeline } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const shout = yield* HookRegistry.register("after_synthesis", (_ctx, text) => Effect.succeed(text.toUpperCase()))
 *   const pipeline = yield* Pipeline.Pipeline
 *   yield* pipeline.process({ request: "weather in Paris" }) // upper-cased
 *   yield* shout.remove
 * }).pipe(Effect.provide(Agent.layerOffline({ tools: [], registry: true })))
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const register = <P extends RegistryPoint>(
  point: P,
  handler: NoInfer<Handler<P>>,
  options?: RegisterOptions
): Effect.Effect<Registration, HookRegistryError, HookRegistry> =>
  Effect.flatMap(HookRegistry, (registry) => registry.register(point, handler, options))

/**
 * Removes the registered hook `name` (see {@link HookRegistry.Service}).
 *
 * @example
 * ```ts
 * import { HookRegistry } from "effect-agent-pipeline"
 *
 * const stopAuditing = HookRegistry.unregister("audit")
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const unregister = (name: string): Effect.Effect<void, HookRegistryError, HookRegistry> =>
  Effect.flatMap(HookRegistry, (registry) => registry.unregister(name))

/**
 * The hooks the next request runs (see {@link HookRegistry.Service}).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HookRegistry } from "effect-agent-pipeline"
 *
 * const names = Effect.map(HookRegistry.hooks, (hooks) => hooks.map((h) => h.name))
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const hooks: Effect.Effect<ReadonlyArray<Hook.Any>, never, HookRegistry> = Effect.flatMap(
  HookRegistry,
  (registry) => registry.hooks
)
