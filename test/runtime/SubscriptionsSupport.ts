/**
 * Helpers shared by the seed 001 subscription and policy tests
 * (`Subscriptions.test.ts`, `Policies.test.ts`).
 *
 * - {@link expectRefused}: a hook list is refused at construction, by
 *   `HookRegistration.validate` and by the registration Layer alike.
 * - {@link buildAgent}: an agent whose hooks Layer (and so the background
 *   pool) lives in a scope the test owns — `makeHarness` closes its Layer
 *   scope at once, which closes the pool, so detached runs and shutdown
 *   draining need this instead. Built from `Pipeline.layer` +
 *   `PipelineHooks.layer(hooks, poolOptions)` like `Agent.layer` does.
 * - {@link overrun}: runs an effect while letting `TestClock` pass a deadline.
 */
import { LanguageModel } from "@effect/ai"
import { expect } from "@effect/vitest"
import { Chunk, Context, Duration, Effect, Either, Exit, Fiber, Layer, Option, Scope, TestClock } from "effect"
import {
  CheckpointStore,
  type ExecutionRecord,
  ExecutionStore,
  type Hook,
  Inference,
  Pipeline,
  ScriptedModel,
  ToolRegistry
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import { makeHarness } from "../support/Harness.js"
import { HookRegistration, PipelineHooks } from "../support/Internal.js"

type Invocation = ExecutionRecord.HookInvocation
type Point = Invocation["stage"]

/** A hook as a JavaScript caller could write it: its shape is not checked. */
export const untypedHook = (hook: unknown): Hook.Hook<never> => hook as Hook.Hook<never>

/** The recorded runs at one point, in record order. */
export const runsAt = (record: ExecutionRecord.ExecutionRecord, point: Point): ReadonlyArray<Invocation> =>
  record.hookInvocations.filter((i) => i.stage === point)

/** The one recorded run of `name` at `point` (fails the test otherwise). */
export const runOf = (record: ExecutionRecord.ExecutionRecord, point: Point, name: string): Invocation => {
  const found = record.hookInvocations.filter((i) => i.stage === point && i.name === name)
  expect(found.map((i) => `${i.stage}:${i.name}`), `exactly one run of ${name} at ${point}`).toEqual([
    `${point}:${name}`
  ])
  return found[0]!
}

/** `[name, status]` of every run at a point, in record order. */
export const statusesAt = (record: ExecutionRecord.ExecutionRecord, point: Point) =>
  runsAt(record, point).map((i) => [i.name, i.status] as const)

export type SubscriptionReason =
  | "duplicate_id"
  | "missing_dependency"
  | "disabled_dependency"
  | "cyclic_dependency"
  | "not_guardable"
  | "policy_not_applicable"
  | "unknown_capability"

/**
 * The hooks are refused at construction with `InvalidHookSubscription`
 * (`reason`, `hookName`): by `HookRegistration.validate` (a Left) and by the
 * agent Layer, which fails with the same error.
 */
export const expectRefused = (
  hooks: ReadonlyArray<Hook.Hook<never>>,
  reason: SubscriptionReason,
  hookName: string,
  detail?: RegExp
) =>
  Effect.gen(function*() {
    const validated = HookRegistration.validate(hooks)
    if (Either.isRight(validated)) return expect.unreachable(`expected ${reason}, but the hooks validated`)
    const error = validated.left
    expect(error._tag).toBe("InvalidHookSubscription")
    if (error._tag !== "InvalidHookSubscription") return
    expect(error.reason).toBe(reason)
    expect(error.hookName).toBe(hookName)
    if (detail !== undefined) expect(error.detail).toMatch(detail)
    expect(error.message).toContain(`(${reason})`)
    // The Layer fails with the same typed error.
    const built = yield* Effect.flip(makeHarness({ hooks }))
    expect(built._tag).toBe("InvalidHookSubscription")
    expect(built._tag === "InvalidHookSubscription" && [built.reason, built.hookName, built.detail]).toEqual([
      error.reason,
      error.hookName,
      error.detail
    ])
  })

/** The hooks validate and the agent Layer builds. */
export const expectAccepted = (hooks: ReadonlyArray<Hook.Hook<never>>) =>
  Effect.gen(function*() {
    const validated = HookRegistration.validate(hooks)
    expect(Either.isRight(validated) ? "valid" : validated.left.message).toBe("valid")
    yield* makeHarness({ hooks })
  })

/** Pool options of {@link buildAgent} (defaults: concurrency 4, drainTimeout 1 second). */
export interface AgentOptions {
  readonly hooks: ReadonlyArray<Hook.Hook<never>>
  readonly script: ScriptedModel.Script
  readonly pool?: PipelineHooks.Options
}

export interface ScopedAgent {
  readonly pipeline: Pipeline.Pipeline.Service
  readonly store: ExecutionStore.ExecutionStore.Service
  /** The scope the hooks Layer (and its background pool) lives in. */
  readonly scope: Scope.CloseableScope
  readonly prompts: ReadonlyArray<ScriptedModel.RecordedPrompt>
  readonly drainTimeout: Duration.Duration
  /** The stored record (dies if absent). */
  readonly record: (requestId: string) => Effect.Effect<ExecutionRecord.ExecutionRecord>
}

/**
 * An agent over the scripted model, the demo tools and in-memory stores,
 * built in a scope the test owns and closes (see {@link shutdown}).
 */
export const buildAgent = (options: AgentOptions): Effect.Effect<ScopedAgent, unknown> =>
  Effect.gen(function*() {
    const scripted = yield* ScriptedModel.make(options.script)
    const drainTimeout = Duration.decode(options.pool?.drainTimeout ?? Duration.seconds(1))
    const pool = { ...options.pool, drainTimeout }
    const hooks = PipelineHooks.layer(options.hooks, pool)
    const model = Layer.succeed(LanguageModel.LanguageModel, scripted.service)
    const layer = Pipeline.layer().pipe(
      Layer.provide(
        Layer.mergeAll(
          hooks,
          Inference.layer.pipe(Layer.provide(Layer.merge(model, hooks))),
          ToolRegistry.layer(allTools)
        )
      ),
      Layer.provideMerge(Layer.merge(ExecutionStore.layerMemory(), CheckpointStore.layerMemory))
    )
    const scope = yield* Scope.make()
    // Built in a daemon fiber: if shutdown ever hangs, the fibers stuck in it
    // are not children of the test's fiber (which would then never end).
    const context = yield* Fiber.join(yield* Effect.forkDaemon(Layer.buildWithScope(layer, scope)))
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    return {
      pipeline: Context.get(context, Pipeline.Pipeline),
      store,
      scope,
      prompts: scripted.prompts,
      drainTimeout,
      record: (requestId: string) =>
        store.get(requestId).pipe(
          Effect.orDie,
          Effect.flatMap(Option.match({
            onNone: () => Effect.dieMessage(`no execution record for ${requestId}`),
            onSome: Effect.succeed
          }))
        )
    }
  })

/** Lets other fibers run: yields, then lets a real macrotask pass. */
export const settle = Effect.gen(function*() {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
  yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))
})

/** Waits (without moving the TestClock) until the stored record satisfies `predicate`. */
export const awaitRecord = (
  agent: Pick<ScopedAgent, "record">,
  requestId: string,
  predicate: (record: ExecutionRecord.ExecutionRecord) => boolean,
  label = "the record to change"
) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const record = yield* agent.record(requestId)
      if (predicate(record)) return record
      yield* settle
    }
    return yield* Effect.dieMessage(`timed out waiting for ${label}`)
  })

/** Waits until at least `count` fibers sleep on the TestClock. */
export const untilSleeping = (count = 1) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      if (Chunk.size(yield* TestClock.sleeps()) >= count) return
      yield* settle
    }
    return yield* Effect.dieMessage(`no ${count} fiber(s) started sleeping on the TestClock`)
  })

/**
 * Runs `effect` in a fiber; once something sleeps on the TestClock (the
 * hook's deadline), moves the clock by `by`, then joins.
 */
export const overrun = <A, E>(effect: Effect.Effect<A, E>, by: Duration.DurationInput = "200 millis") =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    yield* untilSleeping()
    yield* TestClock.adjust(by)
    return yield* Fiber.join(fiber)
  })

/**
 * Waits for `fiber` (without moving the TestClock), failing the test instead
 * of hanging when it does not finish.
 */
export const joinWithin = <A, E>(fiber: Fiber.Fiber<A, E>, label: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) return yield* Fiber.join(fiber)
      yield* settle
    }
    return yield* Effect.dieMessage(`${label} did not finish`)
  })

/**
 * Starts closing the agent's scope in a daemon fiber (a close that hangs
 * must not hang the test's own fiber).
 */
export const startClosing = (agent: Pick<ScopedAgent, "scope">) =>
  Effect.forkDaemon(Scope.close(agent.scope, Exit.void))

/**
 * Closes the agent's scope (its background pool drains, bounded by
 * `drainTimeout`, then interrupts what is left); moves the TestClock past
 * the drain bound if the close waits on it. Fails the test if the scope
 * does not close once the drain bound has passed.
 */
export const shutdown = (agent: Pick<ScopedAgent, "scope" | "drainTimeout">) =>
  Effect.gen(function*() {
    const closing = yield* startClosing(agent)
    for (let i = 0; i < 200; i++) {
      const done = yield* Fiber.poll(closing)
      if (Option.isSome(done)) return yield* Fiber.join(closing)
      if (Chunk.size(yield* TestClock.sleeps()) > 0) yield* TestClock.adjust(agent.drainTimeout)
      yield* settle
    }
    return yield* Effect.dieMessage("the agent's scope did not close after its drain bound passed (shutdown hangs)")
  })
