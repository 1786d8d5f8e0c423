/**
 * The registry service and the Layer `Agent.layer` builds for
 * `registry: true`: the agent's own hooks (built once, in the agent's
 * scope, with the services they require), the versions of its pipeline,
 * and registration by point.
 *
 * Every change is serialized (one permit) and validated by building the
 * version it leads to; only a version that built becomes current, so a
 * refused change leaves both the list and the running pipeline as they
 * were.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import type { AgentConfigError } from "../../domain/ConfigError.js"
import { servicesOf } from "../../runtime/internal/handlerContext.js"
import type * as Hook from "../Hook.js"
import { HookRegistry, HookRegistryError, type RegisterOptions, type Registration } from "../HookRegistry.js"
import { Pipeline } from "../Pipeline.js"
import { fieldsOf, type Handler, isPoint, type Point } from "./hookRegistryPoints.js"
import * as Versions from "./hookRegistryVersions.js"

/** The agent's own hooks, and the services they were declared with. */
export class StaticHooks extends Context.Tag("effect-agent-pipeline/internal/StaticHooks")<StaticHooks, {
  /** Typed as needing nothing: `context` is what they need, provided wherever they run. */
  readonly hooks: ReadonlyArray<Hook.Hook>
  readonly context: Context.Context<never>
}>() {}

/**
 * The agent's own hooks, built in the agent's scope with the services
 * outside the agent (what their handlers require), as `PipelineHooks`
 * captures them for a static agent.
 */
export const layerStatic = <R, E, RB>(
  hooks: Effect.Effect<ReadonlyArray<Hook.Hook<R>>, E, RB>
): Layer.Layer<StaticHooks, E, R | Exclude<RB, Scope.Scope>> =>
  Layer.scoped(
    StaticHooks,
    Effect.gen(function*() {
      const list = yield* hooks
      const context: Context.Context<never> = servicesOf(yield* Effect.context<R>())
      // Paired with `context` from here on (as `PipelineHooks` pairs a hook with its services).
      return { hooks: list as ReadonlyArray<Hook.Hook<unknown>> as ReadonlyArray<Hook.Hook>, context }
    })
  )

/** One registered hook. */
interface Entry {
  /** Identifies the registration (a name may be registered again once removed). */
  readonly token: number
  readonly hook: Hook.Hook
}

const optionKeys: ReadonlySet<string> = new Set([
  "name",
  "priority",
  "dependsOn",
  "execution",
  "failure",
  "timeout",
  "capabilities"
])

/** What is wrong with options from an untyped caller, if anything (the hook's own checks see the values). */
const optionsProblem = (options: unknown): string | undefined => {
  if (options === undefined) return undefined
  if (typeof options !== "object" || options === null) return "options must be an object"
  try {
    for (const key of Object.keys(options)) if (!optionKeys.has(key)) return `${key} is not a registration option`
  } catch {
    return "options cannot be read"
  }
  return undefined
}

const errorOf = (hookName: string, point: Point | undefined) => (error: AgentConfigError) =>
  // The options were valid when the agent was built; they cannot become invalid.
  error._tag === "InvalidPipelineOptions"
    ? Effect.die(error)
    : Effect.fail(
      new HookRegistryError({
        reason: error._tag === "InvalidOrchestratorConfig"
          ? "invalid_registration"
          : error._tag === "InvalidHookSubscription" && error.reason === "duplicate_id"
          ? "duplicate_name"
          : "refused",
        hookName,
        point,
        detail: error.message,
        cause: error
      })
    )

/** The registry over an agent's versions; `statics` are the agent's own hooks. */
export const make = (
  versions: Versions.Versions,
  statics: ReadonlyArray<Hook.Hook>
): Effect.Effect<HookRegistry.Service> =>
  Effect.gen(function*() {
    const permit = yield* Effect.makeSemaphore(1)
    let entries: ReadonlyArray<Entry> = []
    let tokens = 0
    let generated = 0

    const taken = (name: string) => statics.some((h) => h.name === name) || entries.some((e) => e.hook.name === name)

    /** Builds the version of `next` and makes both current, or fails leaving everything as it was. */
    const change = (next: ReadonlyArray<Entry>, hookName: string, point: Point | undefined) =>
      Effect.uninterruptibleMask((restore) =>
        restore(versions.build([...statics, ...next.map((e) => e.hook)])).pipe(
          Effect.catchAll(errorOf(hookName, point)),
          Effect.flatMap((version) =>
            Effect.suspend(() => {
              entries = next
              return versions.swap(version)
            })
          )
        )
      )

    const removeWhere = (found: (entry: Entry) => boolean, absent: Effect.Effect<void, HookRegistryError>) =>
      permit.withPermits(1)(Effect.suspend(() => {
        const entry = entries.find(found)
        if (entry === undefined) return absent
        return change(entries.filter((e) => e !== entry), entry.hook.name, undefined)
      }))

    const register = <P extends Point>(
      point: P,
      handler: Handler<P>,
      options?: RegisterOptions
    ): Effect.Effect<Registration, HookRegistryError> =>
      Effect.suspend(() => {
        const given = options?.name
        const invalid = (reason: HookRegistryError["reason"], detail: string) =>
          Effect.fail(
            new HookRegistryError({ reason, hookName: typeof given === "string" ? given : "", point, detail })
          )
        if (!isPoint(point)) {
          return invalid("unknown_point", `${JSON.stringify(point) ?? String(point)} is not a hook point`)
        }
        const problem = optionsProblem(options)
        if (problem !== undefined) {
          return invalid("invalid_registration", problem)
        }
        if (typeof handler !== "function") {
          return invalid("invalid_registration", `the ${point} handler must be a function`)
        }
        if (given !== undefined && typeof given !== "string") {
          return invalid("invalid_registration", "name must be a string")
        }
        const { name: _name, ...subscription } = options ?? {}
        return permit.withPermits(1)(Effect.suspend(() => {
          if (given !== undefined && taken(given)) {
            return invalid("duplicate_name", `a hook named "${given}" already exists`)
          }
          let name = given
          while (name === undefined || taken(name)) {
            name = `registry:${point}:${++generated}`
          }
          const hook: Hook.Hook = { ...subscription, ...fieldsOf(point, handler), name }
          const entry: Entry = { token: ++tokens, hook }
          return Effect.as(change([...entries, entry], name, point), {
            name,
            point,
            remove: removeWhere((e) => e.token === entry.token, Effect.void)
          })
        }))
      })

    const unregister = (name: string) =>
      removeWhere(
        (e) => e.hook.name === name,
        Effect.fail(
          new HookRegistryError({
            reason: "not_registered",
            hookName: name,
            detail: taken(name) ? "the agent's own hooks cannot be removed" : "no registered hook has this name"
          })
        )
      )

    return { register, unregister, hooks: Effect.sync(() => versions.current().hooks) }
  })

/**
 * The registry agent's `Pipeline` and `HookRegistry`: the first version is
 * built from the agent's own hooks, and fails as a static agent's Layer
 * would.
 */
export const layer = (
  options: Omit<Versions.BuildOptions, "hookContext">
): Layer.Layer<Pipeline | HookRegistry, AgentConfigError, StaticHooks | Versions.Base> =>
  Layer.scopedContext(Effect.gen(function*() {
    const statics = yield* StaticHooks
    const versions = yield* Versions.make(statics.hooks, { ...options, hookContext: statics.context })
    const registry = yield* make(versions, statics.hooks)
    return Context.make(Pipeline, versions.pipeline).pipe(Context.add(HookRegistry, registry))
  }))
