/**
 * The hook registry (seed 004 "hooks.Register(point, hook)", issue 23): an
 * agent built with `registry: true` takes handlers by point while it runs.
 * The hooks a request runs are fixed when it starts; a change takes effect
 * from the next request; a refused change leaves the registry as it was.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import { Agent, Hook, Pipeline } from "effect-agent-pipeline"
import { expectTypeOf } from "vitest"
import * as HookRegistry from "../../src/pipeline/HookRegistry.js"

const plans = Array.from({ length: 40 }, () => ({ steps: [] }))

/** An agent whose own hook holds each request in BeforePlanning until `release` (signalling `started`). */
const heldAgent = (started: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  Agent.layerTest({
    tools: [],
    registry: true,
    script: { plans, synthesis: "answer" },
    hooks: [
      Hook.make({
        name: "hold",
        beforePlanning: () => Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))
      })
    ]
  })

/** Runs `body` on a held agent. */
const held = <A, E, R>(
  body: (started: Deferred.Deferred<void>, release: Deferred.Deferred<void>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    return yield* body(started, release).pipe(Effect.provide(heldAgent(started, release)))
  })

const agent = (hooks: ReadonlyArray<Hook.Hook> = []) =>
  Agent.layerTest({ tools: [], registry: true, script: { plans, synthesis: "answer" }, hooks })

const answer = (requestId: string) =>
  Effect.flatMap(Pipeline.Pipeline, (pipeline) => pipeline.process({ request: "hello", requestId })).pipe(
    Effect.map((result) => (result._tag === "Completed" ? result.response.response : "suspended"))
  )

const invoked = (requestId: string) =>
  Effect.flatMap(Agent.TestAgent, (test) => test.record(requestId)).pipe(
    Effect.map((record) => record.hookInvocations.map((i) => `${i.stage}:${i.name}`))
  )

const names = Effect.map(HookRegistry.hooks, (hooks) => hooks.map((h) => h.name))

const shout = (_ctx: unknown, text: string) => Effect.succeed(text.toUpperCase())

describe("HookRegistry: a request runs the hooks registered when it started", () => {
  it.effect("registry: a handler registered while a request is in flight is not seen by it, and is seen by the next", () =>
    held((started, release) =>
      Effect.gen(function*() {
        const first = yield* Effect.fork(answer("r-1"))
        yield* Deferred.await(started)
        const registration = yield* HookRegistry.register("after_synthesis", shout, { name: "shout" })
        expect(registration.name).toBe("shout")
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(first)).toBe("answer")
        expect(yield* invoked("r-1")).not.toContain("after_synthesis:shout")
        expect(yield* answer("r-2")).toBe("ANSWER")
        expect(yield* invoked("r-2")).toContain("after_synthesis:shout")
      })
    ))

  it.effect("registry: unregister while a request is in flight: that request still runs the hook, the next does not", () =>
    held((started, release) =>
      Effect.gen(function*() {
        yield* HookRegistry.register("after_synthesis", shout, { name: "shout" })
        const first = yield* Effect.fork(answer("r-1"))
        yield* Deferred.await(started)
        yield* HookRegistry.unregister("shout")
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(first)).toBe("ANSWER")
        expect(yield* invoked("r-1")).toContain("after_synthesis:shout")
        expect(yield* answer("r-2")).toBe("answer")
        expect(yield* invoked("r-2")).not.toContain("after_synthesis:shout")
      })
    ))

  it.effect("registry: a stream takes its hooks when it is run; a registration made meanwhile applies to the next", () =>
    held((started, release) =>
      Effect.gen(function*() {
        const pipeline = yield* Pipeline.Pipeline
        const final = (requestId: string) =>
          pipeline.stream({ request: "hello", requestId }).pipe(
            Stream.runCollect,
            Effect.map((events) => [...events].flatMap((e) => (e._tag === "Completed" ? [e.response.response] : [])))
          )
        const first = yield* Effect.fork(final("s-1"))
        yield* Deferred.await(started)
        yield* HookRegistry.register("after_synthesis", shout)
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(first)).toEqual(["answer"])
        expect(yield* final("s-2")).toEqual(["ANSWER"])
      })
    ))

  it.effect("registry: registered hooks are recorded under their names; a generated name is registry:<point>:<n>", () =>
    Effect.gen(function*() {
      const a = yield* HookRegistry.register("before_planning", () => Effect.void)
      const b = yield* HookRegistry.register("around_inference", () => Effect.void)
      expect([a.name, b.name]).toEqual(["registry:before_planning:1", "registry:around_inference:2"])
      expect(yield* names).toEqual(["static", "registry:before_planning:1", "registry:around_inference:2"])
      yield* answer("r-1")
      const runs = yield* invoked("r-1")
      expect(runs).toContain("before_planning:registry:before_planning:1")
      expect(runs).toContain("around_inference:registry:around_inference:2")
    }).pipe(Effect.provide(agent([Hook.make({ name: "static", afterExecution: () => Effect.void })]))))

  it.effect("registry: an on_error handler registered by point sees a run a registered guard denied", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      yield* HookRegistry.register(
        "on_error",
        (call, result) => Effect.sync(() => seen.push(`${call.operation}:${result.outcome}`))
      )
      yield* HookRegistry.register("guard_inference", () => Hook.deny("no model today"), { name: "no-model" })
      const error = yield* Effect.flip(answer("r-1"))
      expect(error._tag).toBe("HookDenied")
      expect(seen).toContain("inference:denied")
    }).pipe(Effect.provide(agent())))

  it.effect("registry: options apply as on a hook — a higher priority runs before the agent's own hook", () =>
    Effect.gen(function*() {
      yield* HookRegistry.register("after_synthesis", (_c, t) => Effect.succeed(`${t}+low`), { name: "low" })
      yield* HookRegistry.register("after_synthesis", (_c, t) => Effect.succeed(`${t}+high`), {
        name: "high",
        priority: 10
      })
      expect(yield* answer("r-1")).toBe("answer+high+static+low")
    }).pipe(
      Effect.provide(agent([Hook.make({ name: "static", afterSynthesis: (_c, t) => Effect.succeed(`${t}+static`) })]))
    ))

  it.effect("registry: concurrent registrations all land (serialized), and the next request runs every one", () =>
    Effect.gen(function*() {
      const registered = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => `n${i}`),
        (name) => HookRegistry.register("after_execution", () => Effect.void, { name }),
        { concurrency: "unbounded" }
      )
      expect(new Set(registered.map((r) => r.name)).size).toBe(12)
      expect([...(yield* names)].sort()).toEqual(registered.map((r) => r.name).sort())
      yield* answer("r-1")
      const runs = yield* invoked("r-1")
      for (const r of registered) expect(runs).toContain(`after_execution:${r.name}`)
    }).pipe(Effect.provide(agent())))

  it.effect("registry: requests racing registrations each run one whole version: a prefix of the registrations", () =>
    Effect.gen(function*() {
      const order = Array.from({ length: 8 }, (_, i) => `p${i}`)
      const requests = Array.from({ length: 8 }, (_, i) => `race-${i}`)
      // Both sides yield between steps, so requests start between (and during) registrations.
      const registering = Effect.forEach(
        order,
        (name) =>
          HookRegistry.register("after_execution", () => Effect.void, { name }).pipe(Effect.zipLeft(Effect.yieldNow())),
        {
          discard: true
        }
      )
      const requesting = Effect.forEach(requests, (id) => Effect.zipRight(Effect.yieldNow(), Effect.fork(answer(id))))
      const [, fibers] = yield* Effect.all([registering, requesting], { concurrency: "unbounded" })
      yield* Fiber.joinAll(fibers)
      const lengths: Array<number> = []
      for (const id of requests) {
        const ran = (yield* invoked(id)).filter((r) => r.startsWith("after_execution:p")).map((r) => r.slice(16))
        expect(ran).toEqual(order.slice(0, ran.length))
        lengths.push(ran.length)
      }
      // The race happened: some requests ran an earlier version than others.
      expect(new Set(lengths).size).toBeGreaterThan(1)
    }).pipe(Effect.provide(agent())))

  it.effect("registry: Registration.remove takes effect on the next request, and removing again does nothing", () =>
    Effect.gen(function*() {
      const registration = yield* HookRegistry.register("after_synthesis", shout)
      expect(yield* answer("r-1")).toBe("ANSWER")
      yield* registration.remove
      yield* registration.remove
      expect(yield* names).toEqual([])
      expect(yield* answer("r-2")).toBe("answer")
      // A name freed by removal can be registered again; the old handle does not remove the new one.
      yield* HookRegistry.register("after_synthesis", shout, { name: registration.name })
      yield* registration.remove
      expect(yield* names).toEqual([registration.name])
    }).pipe(Effect.provide(agent())))
})

describe("HookRegistry: a refused change leaves the registry as it was", () => {
  let requests = 0
  /** `effect` fails, and neither the hook list nor what a request answers changed. */
  const refused = <A>(effect: Effect.Effect<A, HookRegistry.HookRegistryError, HookRegistry.HookRegistry>) =>
    Effect.gen(function*() {
      const before = yield* names
      const answered = yield* answer(`refused-${++requests}`)
      const error = yield* Effect.flip(effect)
      expect(yield* names).toEqual(before)
      expect(yield* answer(`refused-${++requests}`)).toBe(answered)
      return error
    })

  it.effect("registry: a duplicate name (registered, or one of the agent's hooks) is duplicate_name", () =>
    Effect.gen(function*() {
      yield* HookRegistry.register("after_execution", () => Effect.void, { name: "audit" })
      const again = yield* refused(HookRegistry.register("after_synthesis", shout, { name: "audit" }))
      expect([again._tag, again.reason, again.hookName, again.point]).toEqual([
        "HookRegistryError",
        "duplicate_name",
        "audit",
        "after_synthesis"
      ])
      const ownName = yield* refused(HookRegistry.register("after_synthesis", shout, { name: "static" }))
      expect(ownName.reason).toBe("duplicate_name")
    }).pipe(Effect.provide(agent([Hook.make({ name: "static", afterExecution: () => Effect.void })]))))

  it.effect("registry: from JavaScript, an unknown point, a handler that is not a function, an unknown option are typed errors", () =>
    Effect.gen(function*() {
      const registry = yield* HookRegistry.HookRegistry
      // A JavaScript caller's mistakes, which the types rule out.
      const untyped = registry.register as (point: unknown, handler: unknown, options?: unknown) => Effect.Effect<
        HookRegistry.Registration,
        HookRegistry.HookRegistryError
      >
      expect((yield* refused(untyped("before_llm_call", () => Effect.void))).reason).toBe("unknown_point")
      expect((yield* refused(untyped("after_synthesis", "shout"))).reason).toBe("invalid_registration")
      const option = yield* refused(untyped("after_synthesis", shout, { priorty: 1 }))
      expect([option.reason, option.detail]).toEqual(["invalid_registration", "priorty is not a registration option"])
      const name = yield* refused(untyped("after_synthesis", shout, { name: 42 }))
      expect(name.reason).toBe("invalid_registration")
      const failure = yield* refused(untyped("after_synthesis", shout, { failure: "sometimes" }))
      expect([failure.reason, failure.cause?._tag]).toEqual(["invalid_registration", "InvalidOrchestratorConfig"])
    }).pipe(Effect.provide(agent())))

  it.effect("registry: a subscription the hook list cannot honour is refused, with the validation error as cause", () =>
    Effect.gen(function*() {
      const missing = yield* refused(
        HookRegistry.register("after_synthesis", shout, { name: "late", dependsOn: ["nobody"] })
      )
      expect([missing.reason, missing.cause?._tag]).toEqual(["refused", "InvalidHookSubscription"])
      const detached = yield* refused(
        HookRegistry.register("after_planning", (_c, plan) => Effect.succeed(plan), { execution: Hook.background })
      )
      expect([detached.reason, detached.cause?._tag]).toEqual(["refused", "InvalidHookSubscription"])
    }).pipe(Effect.provide(agent())))

  it.effect("registry: removing a hook another one depends on is refused; unknown and the agent's own names are not_registered", () =>
    Effect.gen(function*() {
      yield* HookRegistry.register("after_synthesis", (_c, t) => Effect.succeed(`${t}+a`), { name: "a" })
      yield* HookRegistry.register("after_synthesis", (_c, t) => Effect.succeed(`${t}+b`), {
        name: "b",
        dependsOn: ["a"]
      })
      expect((yield* refused(HookRegistry.unregister("a"))).reason).toBe("refused")
      expect((yield* refused(HookRegistry.unregister("nobody"))).reason).toBe("not_registered")
      const own = yield* refused(HookRegistry.unregister("static"))
      expect([own.reason, own.detail]).toEqual(["not_registered", "the agent's own hooks cannot be removed"])
      yield* HookRegistry.unregister("b")
      yield* HookRegistry.unregister("a")
      expect(yield* names).toEqual(["static"])
    }).pipe(Effect.provide(agent([Hook.make({ name: "static", afterExecution: () => Effect.void })]))))
})

describe("HookRegistry: types and wiring", () => {
  it("registry: the handler's type follows the point (a handler of another point is a type error)", () => {
    const program = Effect.gen(function*() {
      yield* HookRegistry.register("after_synthesis", (_ctx, response) => Effect.succeed(response.trim()))
      yield* HookRegistry.register("before_tool", (call, args) => Effect.succeed({ ...args, by: call.operation }))
      yield* HookRegistry.register("guard_tool_call", (_call, proceed) => proceed)
      // @ts-expect-error an after_synthesis handler returns the (string) response, not a number
      yield* HookRegistry.register("after_synthesis", (_ctx, response) => Effect.succeed(response.length))
      // @ts-expect-error an after_execution observer gets execution results, not a string
      yield* HookRegistry.register("after_execution", (_ctx, results: string) => Effect.log(results))
      // @ts-expect-error not a hook point
      yield* HookRegistry.register("before_llm_call", () => Effect.void)
      // @ts-expect-error "priorty" is not an option
      yield* HookRegistry.register("after_execution", () => Effect.void, { priorty: 1 })
    })
    expectTypeOf<Effect.Effect.Context<typeof program>>().toEqualTypeOf<HookRegistry.HookRegistry>()
  })

  it("registry: only an agent built with registry: true provides the HookRegistry", () => {
    const withRegistry = Agent.layerOffline({ tools: [], registry: true })
    const without = Agent.layerOffline({ tools: [] })
    expectTypeOf<Layer.Layer.Success<typeof withRegistry>>().toEqualTypeOf<Agent.Services | HookRegistry.HookRegistry>()
    expectTypeOf<Layer.Layer.Success<typeof without>>().toEqualTypeOf<Agent.Services>()
  })

  it.effect("registry: without registry: true no HookRegistry is provided at run time either", () =>
    Effect.gen(function*() {
      expect(Option.isNone(yield* Effect.serviceOption(HookRegistry.HookRegistry))).toBe(true)
    }).pipe(Effect.provide(Agent.layerOffline({ tools: [] }))))

  it.effect("registry: the agent's own hooks given as an Effect are built once and run in every version", () => {
    let built = 0
    return Effect.gen(function*() {
      yield* HookRegistry.register("after_synthesis", (_c, t) => Effect.succeed(`${t}+r`))
      expect(yield* answer("r-1")).toBe("answer+own+r")
      expect(built).toBe(1)
    }).pipe(
      Effect.provide(Agent.layerTest({
        tools: [],
        registry: true,
        script: { plans, synthesis: "answer" },
        hooks: Effect.sync(() => {
          built++
          return [Hook.make({ name: "own", afterSynthesis: (_c, t) => Effect.succeed(`${t}+own`) })]
        })
      }))
    )
  })

  it.effect("registry: an invalid hook list of the agent's own fails the agent Layer, as without a registry", () =>
    Effect.gen(function*() {
      const hooks = [Hook.make({ name: "x", afterExecution: () => Effect.void, dependsOn: ["nobody"] })]
      const error = yield* Effect.flip(Layer.build(Agent.layerOffline({ tools: [], registry: true, hooks })))
      expect(error._tag).toBe("InvalidHookSubscription")
    }).pipe(Effect.scoped))
})
