import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, type Exit, Fiber, FiberRef, Stream } from "effect"
import { Approval, ExecutionStore, Hook, HookEffects, RequestScope } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, tradeStep } from "../support/Harness.js"

const script = { plans: [plan([quoteStep("s1")])], synthesis: "answer" }

/** A hook that takes a "lease" and releases it when the request ends, reporting the release. */
const leaseHook = (exits: Array<string>) =>
  Hook.make({
    name: "lease",
    beforePlanning: () =>
      Effect.gen(function*() {
        yield* HookEffects.report({ effectId: "lease-release", name: "Lease release", status: "pending" })
        yield* RequestScope.addFinalizer((exit: Exit.Exit<unknown, unknown>) =>
          Effect.gen(function*() {
            exits.push(
              exit._tag === "Success" ? "success" : Cause.isInterruptedOnly(exit.cause) ? "interrupt" : "failure"
            )
            yield* HookEffects.report({ effectId: "lease-release", name: "Lease release", status: "succeeded" }).pipe(
              Effect.ignore
            )
          })
        )
      }).pipe(Effect.orDie)
  })

describe("request scope", () => {
  it.effect("closes on success before the record is finalized, so cleanups report into the first written record", () =>
    Effect.gen(function*() {
      const exits: Array<string> = []
      const inner = yield* ExecutionStore.makeMemory()
      const firstWrites: Array<string | undefined> = []
      const watching: ExecutionStore.ExecutionStore.Service = {
        ...inner,
        // Snapshot writes (the record created at the start holds no runs yet).
        save: (record) =>
          Effect.sync(() => firstWrites.push(record.hookInvocations[0]?.effects[0]?.status)).pipe(
            Effect.zipRight(inner.save(record))
          ),
        update: (id, f) =>
          inner.update(id, (stored) => {
            const next = f(stored)
            if (next !== undefined) firstWrites.push(next.hookInvocations[0]?.effects[0]?.status)
            return next
          })
      }
      const h = yield* makeHarness({ hooks: [leaseHook(exits)], script, store: watching })
      yield* h.pipeline.process({ request: "q", requestId: "scope-ok" })
      expect(exits).toEqual(["success"])
      expect(firstWrites[0]).toBe("succeeded")
      expect((yield* h.record("scope-ok")).lifecycle?.status).toBe("succeeded")
    }))

  it.effect("closes on failure (a required-hook denial) with the failure exit", () =>
    Effect.gen(function*() {
      const exits: Array<string> = []
      const deny = Hook.required({ name: "gov", afterPlanning: () => Effect.fail("denied") })
      const h = yield* makeHarness({
        hooks: [leaseHook(exits), deny],
        script: { plans: [plan([tradeStep("s1")])], synthesis: "x" }
      })
      yield* Effect.flip(h.pipeline.process({ request: "q", requestId: "scope-fail" }))
      expect(exits).toEqual(["failure"])
      const record = yield* h.record("scope-fail")
      expect(record.lifecycle?.status).toBe("failed")
      expect(record.hookInvocations[0]?.effects[0]?.status).toBe("succeeded")
    }))

  it.effect("closes on interruption, and work forked into the request is interrupted with it", () =>
    Effect.gen(function*() {
      const exits: Array<string> = []
      const entered = yield* Deferred.make<void>()
      const background = yield* Deferred.make<Exit.Exit<unknown, unknown>>()
      const forker = Hook.make({
        name: "renewal",
        beforePlanning: () =>
          RequestScope.fork(Effect.never.pipe(Effect.onExit((exit) => Deferred.succeed(background, exit)))).pipe(
            Effect.asVoid
          )
      })
      const blocker = Hook.make({
        name: "blocker",
        beforePlanning: () => Effect.zipRight(Deferred.succeed(entered, undefined), Effect.never)
      })
      const h = yield* makeHarness({ hooks: [leaseHook(exits), forker, blocker], script })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "q", requestId: "scope-int" }))
      yield* Deferred.await(entered)
      yield* Fiber.interrupt(fiber)
      expect(exits).toEqual(["interrupt"])
      const exit = yield* Deferred.await(background)
      expect(exit._tag).toBe("Failure")
      expect((yield* h.record("scope-int")).lifecycle?.status).toBe("interrupted")
    }))

  it.effect("closes on HITL suspension and on the streaming path", () =>
    Effect.gen(function*() {
      const exits: Array<string> = []
      const suspending = yield* makeHarness({
        hooks: [leaseHook(exits)],
        approval: { evaluate: () => Effect.succeed(Approval.suspend("human")) },
        script
      })
      const result = yield* suspending.pipeline.process({ request: "q" })
      expect(result._tag).toBe("Suspended")
      const streaming = yield* makeHarness({ hooks: [leaseHook(exits)], script })
      yield* Stream.runDrain(streaming.pipeline.stream({ request: "q" }))
      expect(exits).toEqual(["success", "success"])
    }))

  it.effect("is set only while a request runs: the caller's fiber gets its own values back after success and failure", () =>
    Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      const probe = Hook.make({
        name: "probe",
        beforePlanning: () =>
          Effect.map(FiberRef.get(RequestScope.currentRequest), (request) => void seen.push(request?.requestId))
      })
      const deny = Hook.required({ name: "gov", afterPlanning: () => Effect.fail("denied") })
      const ok = yield* makeHarness({ hooks: [probe], script })
      const failing = yield* makeHarness({
        hooks: [probe, deny],
        script: { plans: [plan([tradeStep("s1")])], synthesis: "x" }
      })
      const slotBefore = yield* FiberRef.get(HookEffects.currentInvocation)
      yield* ok.pipeline.process({ request: "q", requestId: "scope-set-ok" })
      expect(yield* FiberRef.get(RequestScope.currentRequest)).toBeUndefined()
      expect(yield* FiberRef.get(HookEffects.currentInvocation)).toBe(slotBefore)
      yield* Effect.flip(failing.pipeline.process({ request: "q", requestId: "scope-set-fail" }))
      expect(yield* FiberRef.get(RequestScope.currentRequest)).toBeUndefined()
      expect(yield* FiberRef.get(HookEffects.currentInvocation)).toBe(slotBefore)
      // Inside, the hooks saw their own request.
      expect(seen).toEqual(["scope-set-ok", "scope-set-fail"])
    }))

  it.effect("outside a request a finalizer runs at once", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      yield* RequestScope.addFinalizer(() => Effect.sync(() => void ran.push("now")))
      expect(ran).toEqual(["now"])
    }))
})

describe("request scope: synthesis inference hooks", () => {
  // A transform on every model call that sees the request and reports an effect into its own run.
  const probe = (seen: Array<string>) =>
    Hook.make({
      name: "probe",
      afterInference: (call, text) =>
        Effect.gen(function*() {
          const request = yield* RequestScope.current
          seen.push(`${call.payload.purpose}:${request._tag === "Some" ? request.value.requestId : "none"}`)
          yield* HookEffects.report({ effectId: `seen-${call.payload.purpose}`, name: "Seen", status: "succeeded" })
          return text
        }).pipe(Effect.orDie)
    })

  for (const mode of ["buffered", "streamed"] as const) {
    it.effect(`seed 002/C15: ${mode} synthesis — its inference hooks run in the request's scope and report into their own runs`, () =>
      Effect.gen(function*() {
        const seen: Array<string> = []
        const h = yield* makeHarness({ hooks: [probe(seen)], script })
        const requestId = `synthesis-scope-${mode}`
        if (mode === "buffered") yield* h.pipeline.process({ request: "q", requestId })
        else yield* Stream.runDrain(h.pipeline.stream({ request: "q", requestId }))
        expect(seen).toEqual([`planning:${requestId}`, `synthesis:${requestId}`])
        const record = yield* h.record(requestId)
        const runs = record.hookInvocations.filter((i) => i.stage === "after_inference")
        expect(runs.map((i) => [i.status, i.effects.map((e) => e.effectId)])).toEqual([
          ["completed", ["seen-planning"]],
          ["completed", ["seen-synthesis"]]
        ])
      }))
  }
})
