/**
 * A record fit for durability (DESIGN §7): it exists from the request's
 * start (`running`, with this process's owner lease), created atomically on
 * its request id; the pipeline renews the lease while the request runs;
 * a store that cannot create it does not block the request.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, type Duration, Effect, Fiber, Option, TestClock } from "effect"
import { Agent, ExecutionStore, Hook, HookEffects, Pipeline, ToolRegistry } from "effect-agent-pipeline"
import { makeHarness, plan } from "../support/Harness.js"
import { slowStep, slowTool } from "../support/SlowTool.js"
import { StartCounter } from "../support/StartCounter.js"

/** An agent over a memory store whose Layers live as long as the test. */
const agentWith = (
  tools: ReadonlyArray<ToolRegistry.ToolEntry<never>>,
  plans: ReadonlyArray<unknown>,
  options?: { readonly recordLease?: Duration.DurationInput }
) =>
  Agent.layerTest({
    script: { plans, synthesis: "answer" },
    tools,
    hooks: [],
    options,
    executionStore: ExecutionStore.layerMemory({ sweepEvery: "1 hour" })
  })

/**
 * Runs `body` over an agent whose one-step plan calls the slow tool: the
 * test sees `started` once the step runs and ends it with `release`.
 */
const whileSlowStepRuns = <A, E>(
  body: (context: {
    readonly pipeline: Pipeline.Pipeline.Service
    readonly store: ExecutionStore.ExecutionStore.Service
    readonly started: Deferred.Deferred<void>
    readonly release: Deferred.Deferred<void>
  }) => Effect.Effect<A, E>,
  options?: { readonly recordLease?: Duration.DurationInput }
) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    return yield* Effect.gen(function*() {
      const pipeline = yield* Pipeline.Pipeline
      const store = yield* ExecutionStore.ExecutionStore
      return yield* body({ pipeline, store, started, release })
    }).pipe(Effect.provide(agentWith([slowTool(started, release)], [plan([slowStep("s1")])], options)))
  })

describe("a record fit for durability", () => {
  it.effect("the record exists from the start: running, owned by this process, with a lease", () =>
    whileSlowStepRuns(({ pipeline, release, started, store }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(pipeline.process({ request: "q", requestId: "early" }))
        yield* Deferred.await(started)
        const running = Option.getOrThrow(yield* store.get("early"))
        expect(running.lifecycle?.status).toBe("running")
        expect(running.lifecycle?.owner).toMatch(/^\d+:[0-9a-f]{8}$/)
        expect(running.lifecycle?.leaseExpiresAt).toBe(running.lifecycle!.startedAt + 30_000)
        expect(running.request).toBe("q")
        yield* Deferred.succeed(release, undefined)
        const result = yield* Fiber.join(fiber)
        expect(result._tag).toBe("Completed")
        const done = Option.getOrThrow(yield* store.get("early"))
        expect(done.lifecycle?.status).toBe("succeeded")
        // A finished record carries no lease: nobody has to renew it.
        expect(done.lifecycle?.leaseExpiresAt).toBeUndefined()
        expect(done.recordRevision).toBeGreaterThan(running.recordRevision)
      })
    ))

  it.effect("two concurrent requests with the same id: the second gets InvalidRequest and the first's record is kept", () =>
    whileSlowStepRuns(({ pipeline, release, started, store }) =>
      Effect.gen(function*() {
        const first = yield* Effect.fork(pipeline.process({ request: "first", requestId: "dup" }))
        yield* Deferred.await(started)
        const second = yield* Effect.flip(pipeline.process({ request: "second", requestId: "dup" }))
        expect(second._tag).toBe("InvalidRequest")
        expect(second._tag === "InvalidRequest" && second.reason).toBe("request_id_in_use")
        yield* Deferred.succeed(release, undefined)
        expect((yield* Fiber.join(first))._tag).toBe("Completed")
        const record = Option.getOrThrow(yield* store.get("dup"))
        expect(record.request).toBe("first")
        expect(record.lifecycle?.status).toBe("succeeded")
      })
    ))

  it.effect("the lease is renewed while the request runs (a new revision each third of the lease) and no longer after", () =>
    whileSlowStepRuns(({ pipeline, release, started, store }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(pipeline.process({ request: "q", requestId: "long" }))
        yield* Deferred.await(started)
        const first = Option.getOrThrow(yield* store.get("long"))
        expect(first.lifecycle?.leaseExpiresAt).toBe(3_000)
        yield* TestClock.adjust("1001 millis")
        const renewed = Option.getOrThrow(yield* store.get("long"))
        expect(renewed.lifecycle?.status).toBe("running")
        expect(renewed.lifecycle?.leaseExpiresAt).toBe(1_000 + 3_000)
        expect(renewed.recordRevision).toBeGreaterThan(first.recordRevision)
        // Long past the first lease: still running, still leased, never abandoned.
        yield* TestClock.adjust("10 seconds")
        expect(yield* store.sweepAbandoned).toBe(0)
        const later = Option.getOrThrow(yield* store.get("long"))
        expect(later.lifecycle?.status).toBe("running")
        expect(later.lifecycle!.leaseExpiresAt!).toBeGreaterThan(11_000)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(fiber)
        const done = Option.getOrThrow(yield* store.get("long"))
        yield* TestClock.adjust("10 seconds")
        const after = Option.getOrThrow(yield* store.get("long"))
        expect(after.recordRevision).toBe(done.recordRevision)
        expect(after.lifecycle?.status).toBe("succeeded")
      }), { recordLease: "3 seconds" }))

  it.effect("progress is written while the request runs: the plan and the step in flight within 500 ms", () =>
    whileSlowStepRuns(({ pipeline, release, started, store }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(pipeline.process({ request: "q", requestId: "progress" }))
        yield* Deferred.await(started)
        // Not yet written: the store has the record as created.
        expect(Option.getOrThrow(yield* store.get("progress")).phases).toEqual([])
        yield* TestClock.adjust("500 millis")
        const midway = Option.getOrThrow(yield* store.get("progress"))
        expect(midway.lifecycle?.status).toBe("running")
        expect(midway.phases.map((p) => [p.phase, p.plan.steps.map((s) => s.step_id), p.running])).toEqual([
          [1, ["s1"], ["s1"]]
        ])
        // Nothing changed since: the next period writes nothing.
        yield* TestClock.adjust("500 millis")
        // (the lease renewal at 10 s is the next write)
        expect(Option.getOrThrow(yield* store.get("progress")).recordRevision).toBe(midway.recordRevision)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(fiber)
        const done = Option.getOrThrow(yield* store.get("progress"))
        expect(done.phases.map((p) => [p.steps.map((s) => [s.step_id, s.status]), p.running])).toEqual([
          [[["s1", "succeeded"]], undefined]
        ])
      })
    ))

  it.effect("a store that cannot create the record does not block the request; the final record says so", () =>
    Effect.gen(function*() {
      const inner = yield* ExecutionStore.makeMemory()
      const store: ExecutionStore.ExecutionStore.Service = {
        ...inner,
        create: () =>
          Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "create", detail: "database is locked" }))
      }
      const h = yield* makeHarness({ script: { plans: [plan([])], synthesis: "answer" }, store })
      const result = yield* h.pipeline.process({ request: "q", requestId: "locked" })
      expect(result._tag === "Completed" && result.response.response).toBe("answer")
      const record = yield* h.record("locked")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.diagnostics).toContain(
        "record not created at request start: execution store create failed: database is locked"
      )
    }))

  it.effect("a generated id's record is created inline on the memory store, on a fiber of its own on any other", () =>
    Effect.gen(function*() {
      // The fibers a request starts (a supervisor sees every fiber forked under it).
      const fibersStarted = (store: ExecutionStore.ExecutionStore.Service) =>
        Effect.gen(function*() {
          const h = yield* makeHarness({ script: { plans: [plan([])], synthesis: "answer" }, store })
          const supervisor = new StartCounter()
          const result = yield* h.pipeline.process({ request: "q" }).pipe(Effect.supervised(supervisor))
          const requestId = result._tag === "Completed" ? result.response.requestId : ""
          const record = yield* h.record(requestId)
          expect(record.lifecycle?.status).toBe("succeeded")
          return supervisor.started
        })
      const memory = yield* ExecutionStore.makeMemory()
      // The same store behind a wrapper: the pipeline cannot know its writes never wait.
      const wrapped: ExecutionStore.ExecutionStore.Service = { ...memory }
      const inline = yield* fibersStarted(memory)
      const forked = yield* fibersStarted(wrapped)
      expect(forked).toBe(inline + 1)
    }))

  it.effect("C15: a late effect update after every earlier write failed still writes the record, whole", () =>
    Effect.gen(function*() {
      const inner = yield* ExecutionStore.makeMemory()
      // The store is down until the request has ended, then back.
      let down = true
      const refuse = new ExecutionStore.ExecutionStoreError({ operation: "write", detail: "database is down" })
      const store: ExecutionStore.ExecutionStore.Service = {
        ...inner,
        create: (r) => (down ? Effect.fail(refuse) : inner.create(r)),
        save: (r) => (down ? Effect.fail(refuse) : inner.save(r))
      }
      const release = yield* Deferred.make<void>()
      const reported = yield* Deferred.make<void>()
      const audit = Hook.make({
        name: "audit",
        beforePlanning: () =>
          Effect.gen(function*() {
            yield* HookEffects.report({ effectId: "audit-write", name: "Audit write", status: "pending" })
            yield* Effect.forkDaemon(
              Deferred.await(release).pipe(
                Effect.zipRight(
                  HookEffects.report({ effectId: "audit-write", name: "Audit write", status: "succeeded" })
                ),
                Effect.zipRight(Deferred.succeed(reported, undefined)),
                Effect.orDie
              )
            )
          }).pipe(Effect.orDie)
      })
      const h = yield* makeHarness({ hooks: [audit], script: { plans: [plan([])], synthesis: "answer" }, store })
      const result = yield* h.pipeline.process({ request: "q", requestId: "late-after-outage" })
      expect(result._tag).toBe("Completed")
      expect(Option.isNone(yield* inner.get("late-after-outage"))).toBe(true)
      down = false
      yield* Deferred.succeed(release, undefined)
      yield* Deferred.await(reported)
      const record = Option.getOrThrow(yield* inner.get("late-after-outage"))
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(record.finalResponse).toBe("answer")
      expect(record.hookInvocations[0]?.effects.map((e) => [e.effectId, e.status])).toEqual([[
        "audit-write",
        "succeeded"
      ]])
    }))

  it.effect("recording off: no record is created and no lease is held", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        script: { plans: [plan([]), plan([])], synthesis: "answer" },
        options: { recording: false }
      })
      yield* h.pipeline.process({ request: "q", requestId: "off" })
      expect(Option.isNone(yield* h.store.get("off"))).toBe(true)
      // The same id can be used again: nothing holds it.
      expect((yield* h.pipeline.process({ request: "q", requestId: "off" }))._tag).toBe("Completed")
    }))
})
