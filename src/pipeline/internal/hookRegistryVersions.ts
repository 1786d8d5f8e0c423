/**
 * The versions of a registry agent's pipeline: one per hook list, each
 * built like `Agent.layer` builds a static agent's (validate →
 * `PipelineHooks.make` → `Inference.makeWith` over the agent's one
 * `LanguageModel` → `Pipeline.make`) in a scope of its own, a child of the
 * agent's.
 *
 * The `Pipeline` callers get delegates each request to the version current
 * when it starts, whole: taking the current version and counting the
 * request on it is one synchronous step, and so is a swap. A replaced
 * version stays open while requests still run on it (its detached-run pool,
 * its record leases); the last of them closes it, in the background — a
 * closing pool drains its detached runs, which no caller should wait for.
 */
import type { LanguageModel } from "@effect/ai"
import { Context, Effect, ExecutionStrategy, Exit, FiberSet, Scope, Stream } from "effect"
import { Inference, makeWith } from "../../ai/Inference.js"
import type * as ModelPolicy from "../../ai/ModelPolicy.js"
import type { ToolRegistry } from "../../ai/ToolRegistry.js"
import type { AgentConfigError } from "../../domain/ConfigError.js"
import { servicesOf } from "../../runtime/internal/handlerContext.js"
import type { CheckpointStore } from "../../stores/CheckpointStore.js"
import type { ExecutionStore } from "../../stores/ExecutionStore.js"
import type * as Hook from "../Hook.js"
import { make as makePipeline, type Pipeline, type PipelineOptions } from "../Pipeline.js"
import * as PipelineHooks from "./pipelineHooks.js"

/** One version: its hook list and the pipeline built from it. */
export class Version {
  /** Requests running on this version. */
  inFlight = 0
  /** Replaced: closes once no request runs on it. */
  retired = false
  constructor(
    readonly hooks: ReadonlyArray<Hook.Hook>,
    readonly pipeline: Pipeline.Service,
    readonly scope: Scope.CloseableScope
  ) {}
}

/** Runs an effect with exactly `context` (nothing of the caller's). */
const only = <R>(context: Context.Context<R>) => <A, E>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E> =>
  Effect.mapInputContext(self, (_: Context.Context<never>) => context)

/** What building a version takes besides the hooks. */
export interface BuildOptions {
  readonly runtimeOptions: PipelineHooks.Options
  readonly policy: ModelPolicy.ModelPolicy
  readonly pipelineOptions: PipelineOptions | undefined
  /** The services the agent's hooks were given (what `Hook.Requirements` names). */
  readonly hookContext: Context.Context<never>
}

/** The services every version is built over. */
export type Base = LanguageModel.LanguageModel | ToolRegistry | ExecutionStore | CheckpointStore

/** The versions of one agent. */
export interface Versions {
  /** Builds a version of `hooks` (not yet current); fails as the agent's Layer would. */
  readonly build: (hooks: ReadonlyArray<Hook.Hook>) => Effect.Effect<Version, AgentConfigError>
  /** The version the next request runs on. */
  readonly current: () => Version
  /** Makes `next` current and retires the version it replaces. */
  readonly swap: (next: Version) => Effect.Effect<void>
  /** The pipeline callers get: each request on the version current when it starts. */
  readonly pipeline: Pipeline.Service
}

/**
 * Builds the first version of `hooks` and the delegating pipeline; versions
 * live in the current scope (the agent's).
 */
export const make = (
  hooks: ReadonlyArray<Hook.Hook>,
  options: BuildOptions
): Effect.Effect<Versions, AgentConfigError, Base | Scope.Scope> =>
  Effect.gen(function*() {
    const agentScope = yield* Effect.scope
    const base = servicesOf(yield* Effect.context<Base>())
    const closers = yield* FiberSet.make<void>()

    const assemble = (list: ReadonlyArray<Hook.Hook>, scope: Scope.CloseableScope) =>
      Effect.gen(function*() {
        // Hooks get the services they were declared with, as `PipelineHooks.layer` gives them.
        const stages = yield* PipelineHooks.make(list, options.runtimeOptions).pipe(
          only(Context.add(options.hookContext, Scope.Scope, scope))
        )
        const parts = Context.merge(base, stages)
        const inference = yield* makeWith(options.policy).pipe(only(parts))
        return yield* makePipeline(options.pipelineOptions).pipe(
          only(parts.pipe(Context.add(Inference, inference), Context.add(Scope.Scope, scope)))
        )
      })

    const build = (list: ReadonlyArray<Hook.Hook>) =>
      Effect.flatMap(
        Scope.fork(agentScope, ExecutionStrategy.sequential),
        (scope) =>
          assemble(list, scope).pipe(
            Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))),
            Effect.map((pipeline) => new Version(list, pipeline, scope))
          )
      )

    const close = (version: Version) =>
      Effect.asVoid(FiberSet.run(closers, Effect.uninterruptible(Scope.close(version.scope, Exit.void))))

    let current = yield* build(hooks)

    const swap = (next: Version) =>
      Effect.suspend(() => {
        const previous = current
        current = next
        previous.retired = true
        return previous.inFlight === 0 ? close(previous) : Effect.void
      })

    const acquire = Effect.sync(() => {
      const version = current
      version.inFlight++
      return version
    })
    const release = (version: Version) =>
      Effect.suspend(() => {
        version.inFlight--
        return version.retired && version.inFlight === 0 ? close(version) : Effect.void
      })
    const using = <A, E>(f: (pipeline: Pipeline.Service) => Effect.Effect<A, E>) =>
      Effect.acquireUseRelease(acquire, (version) => f(version.pipeline), release)

    const pipeline: Pipeline.Service = {
      process: (input) => using((p) => p.process(input)),
      stream: (input) =>
        Stream.unwrapScoped(
          Effect.map(Effect.acquireRelease(acquire, release), (version) => version.pipeline.stream(input))
        ),
      resume: (checkpointId, decision, resumeOptions) => using((p) => p.resume(checkpointId, decision, resumeOptions)),
      executePlanWithSynthesis: (input, plan) => using((p) => p.executePlanWithSynthesis(input, plan))
    }

    return { build, current: () => current, swap, pipeline }
  })
