import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, FastCheck, Fiber, Option, TestClock } from "effect"
import { ExecutionRecord, ExecutionStore, Hook, HookEffects } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, weatherStep } from "../support/Harness.js"

const script = { plans: [plan([quoteStep("s1")])], synthesis: "answer" }

/** Seed 000 §7.5: an audit hook whose writer completes (or fails) later. */
const auditHook = (submit: (done: (error?: string) => Effect.Effect<void>) => Effect.Effect<void, string>) =>
  Hook.make({
    name: "application-audit",
    afterExecution: (_ctx, results) =>
      Effect.gen(function*() {
        const effect = {
          effectId: "audit-write",
          name: "Application audit write",
          data: { step_count: results.steps.length }
        }
        // Announce before returning; later callbacks update this same id.
        yield* HookEffects.report({ ...effect, status: "pending" }).pipe(Effect.ignore)
        const done = (error?: string) =>
          HookEffects.report(
            error === undefined
              ? { ...effect, status: "succeeded", summary: "Audit writer acknowledged completion" }
              : { ...effect, status: "failed", error, summary: "Audit writer reported failure" }
          ).pipe(Effect.ignore)
        yield* submit(done).pipe(Effect.tapError((error) => done(error)))
      })
  })

describe("invocation evidence", () => {
  it.effect("C14: every invocation records name, stage, outcome, phase-local sequence, phase, start, duration, failure text, decision", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "slow", beforePlanning: () => Effect.sleep("5 seconds") }),
          Hook.make({ name: "failing", beforePlanning: () => Effect.fail("exact failure text: 42") }),
          Hook.make({ name: "planner-observer", afterPlanning: (_c, p) => Effect.succeed(p) })
        ],
        script: { plans: [plan([quoteStep("s1")], false), plan([weatherStep("s2")])], synthesis: "x" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "q", requestId: "evidence" }))
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(fiber)
      const record = yield* h.record("evidence")
      const [slow, failing, ap1, ap2] = record.hookInvocations
      expect(slow).toMatchObject({
        name: "slow",
        stage: "before_planning",
        outcome: "succeeded",
        sequence: 0,
        startedAt: 1_700_000_000_000,
        duration: 5000
      })
      expect(slow?.decision).toBeUndefined() // not recorded ≠ succeeded
      expect(slow?.phase).toBeUndefined()
      expect(failing).toMatchObject({
        name: "failing",
        stage: "before_planning",
        outcome: "failed",
        sequence: 1,
        error: "exact failure text: 42",
        startedAt: 1_700_000_005_000,
        decision: { policy: "fail_open", action: "continue", reason: "hook_error" }
      })
      expect([ap1?.stage, ap1?.phase, ap1?.sequence]).toEqual(["after_planning", 1, 0])
      expect([ap2?.stage, ap2?.phase, ap2?.sequence]).toEqual(["after_planning", 2, 0])
    }))

  it.effect("C14: invocation records decode from their persisted form (a missing decision stays missing)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ hooks: [Hook.make({ name: "n", beforePlanning: () => Effect.void })], script })
      yield* h.pipeline.process({ request: "q", requestId: "codec" })
      const record = yield* h.record("codec")
      const encoded = yield* ExecutionRecord.encode(record)
      const decoded = yield* ExecutionRecord.decodeUnknown(JSON.parse(JSON.stringify(encoded)))
      expect(decoded).toEqual(record)
      expect(decoded.hookInvocations[0]?.decision).toBeUndefined()
    }))
})

describe("effects", () => {
  it.effect("C15: a pending effect announced before return is updated in place by a detached writer (§7.5)", () =>
    Effect.gen(function*() {
      const write = yield* Deferred.make<string | undefined>()
      const finished = yield* Deferred.make<void>()
      const hook = auditHook((done) =>
        Effect.asVoid(
          Effect.forkDaemon(
            Deferred.await(write).pipe(
              Effect.flatMap((error) => done(error)),
              Effect.ensuring(Deferred.succeed(finished, undefined))
            )
          )
        )
      )
      const h = yield* makeHarness({ hooks: [hook], script })
      yield* h.pipeline.process({ request: "q", requestId: "audit" })

      const running = yield* h.record("audit")
      const inv = running.hookInvocations[0]
      expect(inv?.outcome).toBe("succeeded")
      expect(inv?.effects).toHaveLength(1)
      expect(inv?.effects[0]).toMatchObject({ effectId: "audit-write", status: "pending", data: { step_count: 1 } })

      yield* Deferred.succeed(write, undefined)
      yield* Deferred.await(finished)
      const acknowledged = yield* h.record("audit")
      expect(acknowledged.recordRevision).toBeGreaterThan(running.recordRevision)
      expect(acknowledged.hookInvocations[0]?.outcome).toBe("succeeded")
      expect(acknowledged.hookInvocations[0]?.effects).toHaveLength(1)
      expect(acknowledged.hookInvocations[0]?.effects[0]).toMatchObject({
        effectId: "audit-write",
        status: "succeeded",
        summary: "Audit writer acknowledged completion"
      })
      expect(acknowledged.lifecycle?.status).toBe("succeeded")
    }))

  it.effect("C15: a writer that reports failure later turns the same effect failed; the invocation stays succeeded", () =>
    Effect.gen(function*() {
      const finished = yield* Deferred.make<void>()
      const hook = auditHook((done) =>
        Effect.asVoid(Effect.forkDaemon(done("disk full").pipe(Effect.ensuring(Deferred.succeed(finished, undefined)))))
      )
      const h = yield* makeHarness({ hooks: [hook], script })
      yield* h.pipeline.process({ request: "q", requestId: "audit-fail" })
      yield* Deferred.await(finished)
      const inv = (yield* h.record("audit-fail")).hookInvocations[0]
      expect(inv?.outcome).toBe("succeeded")
      expect(inv?.effects.map((e) => [e.effectId, e.status, e.error])).toEqual([["audit-write", "failed", "disk full"]])
    }))

  it.effect("C15: a submission that fails immediately fails the invocation (fail-open) and the effect", () =>
    Effect.gen(function*() {
      const hook = auditHook(() => Effect.fail("queue full"))
      const h = yield* makeHarness({ hooks: [hook], script })
      const result = yield* h.pipeline.process({ request: "q", requestId: "audit-now" })
      expect(result._tag).toBe("Completed")
      const inv = (yield* h.record("audit-now")).hookInvocations[0]
      expect(inv?.outcome).toBe("failed")
      expect(inv?.decision?.policy).toBe("fail_open")
      expect(inv?.effects.map((e) => [e.status, e.error])).toEqual([["failed", "queue full"]])
    }))

  it.effect("C15: a new effect id after the hook returned is refused, never recorded", () =>
    Effect.gen(function*() {
      const outcome = yield* Deferred.make<string>()
      const late = Hook.make({
        name: "late",
        beforePlanning: () =>
          Effect.asVoid(
            Effect.forkDaemon(
              Effect.sleep("1 millis").pipe(
                Effect.zipRight(HookEffects.report({ effectId: "surprise", name: "Surprise", status: "succeeded" })),
                Effect.match({ onFailure: (e) => e.reason, onSuccess: () => "recorded" }),
                Effect.flatMap((r) => Deferred.succeed(outcome, r))
              )
            )
          )
      })
      const h = yield* makeHarness({ hooks: [late], script })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "q", requestId: "late" }))
      yield* Fiber.join(fiber)
      yield* TestClock.adjust("1 millis")
      expect(yield* Deferred.await(outcome)).toBe("unannounced_after_return")
      expect((yield* h.record("late")).hookInvocations[0]?.effects).toEqual([])
    }))

  it.effect("C15: invalid effects and reports outside a hook get typed errors; the business outcome is unchanged", () =>
    Effect.gen(function*() {
      const reasons: Array<string> = []
      const sloppy = Hook.make({
        name: "sloppy",
        beforePlanning: () =>
          HookEffects.report({ effectId: "x", name: "X", status: "done" as "pending" }).pipe(
            Effect.catchAll((e) => Effect.sync(() => void reasons.push(e.reason)))
          )
      })
      const h = yield* makeHarness({ hooks: [sloppy], script })
      const result = yield* h.pipeline.process({ request: "q", requestId: "sloppy" })
      expect(result._tag).toBe("Completed")
      expect(reasons).toEqual(["invalid_effect"])
      const outside = yield* Effect.flip(HookEffects.report({ effectId: "y", name: "Y", status: "pending" }))
      expect(outside.reason).toBe("outside_hook")
    }))

  it.effect("C15: with recording off, reporting is a no-op and nothing is stored", () =>
    Effect.gen(function*() {
      const results: Array<string> = []
      const reporter = Hook.make({
        name: "reporter",
        beforePlanning: () =>
          HookEffects.report({ effectId: "e", name: "E", status: "pending" }).pipe(
            Effect.match({ onFailure: (e) => e.reason, onSuccess: () => "ok" }),
            Effect.map((r) => void results.push(r))
          )
      })
      const h = yield* makeHarness({ hooks: [reporter], script, options: { recording: false } })
      const result = yield* h.pipeline.process({ request: "q", requestId: "off" })
      expect(result._tag).toBe("Completed")
      expect(results).toEqual(["ok"])
      expect(yield* h.store.get("off")).toEqual(Option.none())
    }))

  it.effect("C15: BeforePlanning changes are recorded as planning_enrichment:<key> effects with exact before/after values", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "writer",
            beforePlanning: () => Effect.succeed({ enrichments: { rag_context: { docs: ["a", "b"] }, note: "n1" } })
          }),
          Hook.make({
            name: "editor",
            beforePlanning: () =>
              Effect.succeed({ enrichments: { note: "n2", rag_context: { docs: ["a", "b"] } }, remove: ["absent"] })
          }),
          Hook.make({ name: "remover", beforePlanning: () => Effect.succeed({ remove: ["note"] }) })
        ],
        script
      })
      yield* h.pipeline.process({ request: "q", requestId: "diff", metadata: { rag_context: "promoted" } })
      const [writer, editor, remover] = (yield* h.record("diff")).hookInvocations
      expect(writer?.effects.map((e) => [e.effectId, e.status, e.data])).toEqual([
        ["planning_enrichment:rag_context", "succeeded", {
          key: "rag_context",
          operation: "updated",
          before: "promoted",
          after: { docs: ["a", "b"] }
        }],
        ["planning_enrichment:note", "succeeded", { key: "note", operation: "added", after: "n1" }]
      ])
      // Unchanged values and removals of absent keys produce no effect.
      expect(editor?.effects.map((e) => e.data)).toEqual([
        { key: "note", operation: "updated", before: "n1", after: "n2" }
      ])
      expect(remover?.effects.map((e) => e.data)).toEqual([{ key: "note", operation: "removed", before: "n2" }])
    }))

  it.effect.prop(
    "C15: property — concurrent detached effect updates interleaved with snapshot writes never lose the newest data nor decrease record_revision",
    [FastCheck.array(FastCheck.nat({ max: 6 }), { minLength: 1, maxLength: 12 })],
    ([delays]) =>
      Effect.gen(function*() {
        const written: Array<number> = []
        const inner = yield* ExecutionStore.makeMemory()
        const watching: ExecutionStore.ExecutionStore.Service = {
          ...inner,
          save: (record) =>
            Effect.tap(inner.save(record), (r) =>
              Effect.sync(() => r === "written" && written.push(record.recordRevision))),
          update: (id, f) =>
            Effect.tap(inner.update(id, f), (r) =>
              r === "written"
                ? Effect.map(inner.get(id), (stored) =>
                  void written.push(Option.getOrThrow(stored).recordRevision))
                : Effect.void)
        }
        const started = yield* Deferred.make<void>()
        const all = yield* Deferred.make<void>()
        let finished = 0
        const n = delays.length
        const reporter = Hook.make({
          name: "fan-out",
          beforePlanning: () =>
            Effect.gen(function*() {
              for (let i = 0; i < n; i++) {
                yield* HookEffects.report({ effectId: `e${i}`, name: `E${i}`, status: "pending" })
              }
              for (let i = 0; i < n; i++) {
                yield* Effect.forkDaemon(
                  Effect.gen(function*() {
                    yield* Deferred.await(started)
                    for (let k = 0; k < (delays[i] ?? 0); k++) yield* Effect.yieldNow()
                    yield* HookEffects.report({ effectId: `e${i}`, name: `E${i}`, status: "succeeded", data: i })
                    yield* HookEffects.report({
                      effectId: `e${i}`,
                      name: `E${i}`,
                      status: "failed",
                      data: i,
                      error: `final-${i}`
                    })
                    if (++finished === n) yield* Deferred.succeed(all, undefined)
                  }).pipe(Effect.orDie)
                )
              }
            }).pipe(Effect.orDie)
        })
        const h = yield* makeHarness({ hooks: [reporter], script, store: watching })
        const fiber = yield* Effect.fork(h.pipeline.process({ request: "q", requestId: "prop" }))
        // Detached updates race with the request's own record writes.
        yield* Deferred.succeed(started, undefined)
        yield* Fiber.join(fiber)
        yield* Deferred.await(all)
        const stored = yield* h.record("prop")
        const effects = stored.hookInvocations[0]?.effects ?? []
        expect(effects.map((e) => e.effectId)).toEqual(Array.from({ length: n }, (_, i) => `e${i}`))
        expect(effects.every((e, i) => e.status === "failed" && e.error === `final-${i}`)).toBe(true)
        expect(stored.lifecycle?.status).toBe("succeeded")
        expect(written.length).toBeGreaterThan(0)
        for (let i = 1; i < written.length; i++) expect(written[i]).toBeGreaterThan(written[i - 1] ?? -1)
        expect(written.at(-1)).toBe(stored.recordRevision)
      }),
    { fastCheck: { numRuns: 30 } }
  )
})

describe("store failures", () => {
  it.effect("C15: a store that dies (not just fails) never changes the business outcome", () =>
    Effect.gen(function*() {
      const inner = yield* ExecutionStore.makeMemory()
      const dying: ExecutionStore.ExecutionStore.Service = {
        ...inner,
        save: () => Effect.dieMessage("driver bug"),
        update: () => Effect.dieMessage("driver bug")
      }
      const h = yield* makeHarness({ script, store: dying })
      const result = yield* h.pipeline.process({ request: "q", requestId: "dying" })
      expect(result._tag === "Completed" && result.response.response).toBe("answer")
      // Only the record created at the request's start was written: it still
      // says running (every later write died).
      const stored = Option.getOrThrow(yield* inner.get("dying"))
      expect(stored.lifecycle?.status).toBe("running")
      expect(stored.recordRevision).toBe(0)
    }))
})

describe("lifecycle and retention", () => {
  it.effect("C16: records carry lifecycle evidence; normal and error records have separate retention", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.required({
            name: "gov",
            afterPlanning: (ctx, p) => (ctx.request === "deny" ? Effect.fail("denied") : Effect.succeed(p))
          })
        ],
        script: { plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")])], synthesis: "x" },
        retention: { normal: "1 hour", error: "1 day" }
      })
      yield* h.pipeline.process({ request: "allow", requestId: "normal" })
      yield* Effect.flip(h.pipeline.process({ request: "deny", requestId: "error" }))
      expect(ExecutionRecord.requestCompletion(yield* h.record("normal"))).toBe("succeeded")
      expect(ExecutionRecord.requestCompletion(yield* h.record("error"))).toBe("failed")
      yield* TestClock.adjust("2 hours")
      expect(yield* h.store.get("normal")).toEqual(Option.none())
      expect(Option.isSome(yield* h.store.get("error"))).toBe(true)
      yield* TestClock.adjust("1 day")
      expect(yield* h.store.get("error")).toEqual(Option.none())
    }))

  it.effect("C16: a legacy record without lifecycle has unknown completion even when every step succeeded", () =>
    Effect.gen(function*() {
      const legacy = yield* ExecutionRecord.decodeUnknown({
        requestId: "old",
        request: "q",
        phases: [{
          phase: 1,
          plan: { steps: [quoteStep("s1")] },
          steps: [{
            step_id: "s1",
            namespace: "demo-tools",
            agent: "stock-service",
            capability: "stock_quote",
            status: "succeeded",
            output: { price: 1 },
            startedAt: 0,
            duration: 1
          }]
        }]
      })
      expect(legacy.lifecycle).toBeUndefined()
      expect(ExecutionRecord.requestCompletion(legacy)).toBe("unknown")
      expect(legacy.schemaVersion).toBe(0)
    }))
})
