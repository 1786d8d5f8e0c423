/**
 * The built-in activity hooks (C18, C7): announcement and concurrent
 * activity in the planning prompt; in a managed request, pending renewal and
 * cleanup effects announced before the hook returns, renewal on the Clock,
 * and the owner's join-then-remove on every exit; in direct use, removal by
 * the cleanup hook.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Schema, TestClock } from "effect"
import {
  Activity,
  ActivityStore,
  Approval,
  type ExecutionRecord,
  Hook,
  HookEffects,
  PipelineContext,
  RequestScope,
  ShortCircuit
} from "effect-agent-pipeline"
import { activityHooks, counting, makeAgent, memoryStore, workStep } from "./ActivitySupport.js"

const plan = <S>(steps: ReadonlyArray<S>) => ({ steps, terminal: true })
const payments = { activity_domain: "payments" }

const announcementOf = (record: ExecutionRecord.ExecutionRecord) =>
  record.hookInvocations.find((i) => i.name === "activity-announcement")

const effectsOf = (record: ExecutionRecord.ExecutionRecord) =>
  Object.fromEntries((announcementOf(record)?.effects ?? []).map((e) => [e.effectId, e]))

/** Effect ids and statuses of the announcement's effects, in report order. */
const statuses = (effects: ReadonlyArray<ExecutionRecord.HookEffect> | undefined) =>
  (effects ?? []).map((e) => [e.effectId, e.status])

describe("C18: managed request", () => {
  it.effect("C18: renewal and cleanup effects are pending when the announcement hook returns and terminal in the final record; the signal is gone after success", () =>
    Effect.gen(function*() {
      const store = counting(yield* memoryStore)
      const activity = yield* activityHooks()
      let atReturn: ReadonlyArray<ReadonlyArray<string>> = []
      let liveDuring: ReadonlyArray<string> = []
      // Runs right after the announcement hook returned: reads the request's record as it is now.
      const probe = Hook.make({
        name: "probe",
        beforePlanning: () =>
          Effect.gen(function*() {
            const request = Option.getOrThrow(yield* RequestScope.current)
            atReturn = statuses(announcementOf(request.recorder.current())?.effects)
            liveDuring = (yield* store.service.listActive("payments")).map((s) => s.signalId)
          }).pipe(Effect.orDie)
      })
      const agent = yield* makeAgent({
        hooks: [activity.announcement, probe, activity.cleanup],
        script: { plans: [plan([workStep("s1", 0)])], synthesis: "done" },
        store: store.service
      })
      const result = yield* agent.pipeline.process({
        request: "restart the gateway",
        requestId: "ok",
        metadata: payments
      })
      expect(result._tag).toBe("Completed")

      expect(atReturn).toEqual([
        ["activity_signal_renewal", "pending"],
        ["activity_signal_cleanup", "pending"],
        ["activity_signal", "succeeded"],
        ["activity_context", "succeeded"]
      ])
      expect(liveDuring).toEqual(["bot-a:ok"])

      const record = yield* agent.test.record("ok")
      const effects = effectsOf(record)
      // Same ids, updated in place: no duplicates.
      expect(statuses(announcementOf(record)?.effects)).toEqual([
        ["activity_signal_renewal", "succeeded"],
        ["activity_signal_cleanup", "succeeded"],
        ["activity_signal", "succeeded"],
        ["activity_context", "succeeded"]
      ])
      expect(effects["activity_signal_renewal"]?.data).toMatchObject({
        signal_id: "bot-a:ok",
        state: "joined",
        submissions: 0,
        errors: 0,
        request_exit: "success"
      })
      expect(effects["activity_signal_cleanup"]?.data).toMatchObject({
        signal_id: "bot-a:ok",
        mode: "managed",
        submitted: 1,
        errors: 0,
        request_exit: "success"
      })
      expect(effects["activity_signal"]?.data).toMatchObject({
        signal_id: "bot-a:ok",
        domain: "payments",
        ttl_ms: 30_000
      })
      // In a managed request the cleanup hook only passes the answer through: one removal, the owner's.
      const cleanupRun = record.hookInvocations.find((i) => i.name === "activity-cleanup")
      expect(cleanupRun?.effects).toEqual([])
      expect(store.calls.get("bot-a:ok")).toEqual({ announce: 1, renew: 0, remove: 1 })
      expect(yield* store.service.listActive("payments")).toEqual([])
      expect(yield* activity.ownership).toEqual({ requests: 0, renewalFibers: 0, runningRenewalFibers: 0 })
    }))

  const exits = [
    {
      name: "failure (the required hook rejects the plan)",
      requestExit: "failure",
      hooks: [Hook.required({ name: "gov", afterPlanning: () => Effect.fail("denied") })],
      approval: undefined
    },
    {
      name: "a panic (an AfterExecution hook dies)",
      requestExit: "failure",
      hooks: [Hook.make({ name: "boom", afterExecution: () => Effect.die("boom") })],
      approval: undefined
    },
    {
      name: "HITL suspension",
      requestExit: "success",
      hooks: [],
      approval: { evaluate: () => Effect.succeed(Approval.suspend("human")) }
    }
  ] as const

  for (const exit of exits) {
    it.effect(`C18: the owner removes the signal and completes both effects on ${exit.name}`, () =>
      Effect.gen(function*() {
        const store = counting(yield* memoryStore)
        const activity = yield* activityHooks()
        const agent = yield* makeAgent({
          hooks: [activity.announcement, ...exit.hooks, activity.cleanup],
          script: { plans: [plan([workStep("s1", 0)])], synthesis: "done" },
          store: store.service,
          approval: exit.approval
        })
        yield* Effect.exit(agent.pipeline.process({ request: "q", requestId: "r", metadata: payments }))
        const effects = effectsOf(yield* agent.test.record("r"))
        expect(effects["activity_signal_renewal"]?.status).toBe("succeeded")
        expect(effects["activity_signal_cleanup"]?.status).toBe("succeeded")
        expect(effects["activity_signal_cleanup"]?.data).toMatchObject({ submitted: 1, request_exit: exit.requestExit })
        expect(store.calls.get("bot-a:r")?.remove).toBe(1)
        expect(yield* store.service.listActive("payments")).toEqual([])
        expect(yield* activity.ownership).toEqual({ requests: 0, renewalFibers: 0, runningRenewalFibers: 0 })
      }))
  }

  it.effect("C18: on interruption (inside a tool) the owner joins renewal, then removes the signal, then completes the effects", () =>
    Effect.gen(function*() {
      const store = counting(yield* memoryStore)
      const activity = yield* activityHooks()
      const order: Array<string> = []
      store.before = (operation) => Effect.sync(() => void order.push(operation))
      const agent = yield* makeAgent({
        hooks: [activity.announcement, activity.cleanup],
        script: { plans: [plan([workStep("s1", 3_600_000)])], synthesis: "done" },
        store: store.service
      })
      const fiber = yield* Effect.fork(agent.pipeline.process({ request: "q", requestId: "int", metadata: payments }))
      yield* TestClock.adjust("25 seconds") // two renewals while the tool works
      expect((yield* activity.ownership).runningRenewalFibers).toBe(1)
      yield* Fiber.interrupt(fiber)
      expect(order).toEqual(["announce", "renew", "renew", "remove"])
      const record = yield* agent.test.record("int")
      expect(record.lifecycle?.status).toBe("interrupted")
      const effects = effectsOf(record)
      expect(effects["activity_signal_renewal"]?.data).toMatchObject({
        submissions: 2,
        errors: 0,
        request_exit: "interrupted"
      })
      expect(effects["activity_signal_cleanup"]?.data).toMatchObject({ submitted: 1, request_exit: "interrupted" })
      expect(yield* store.service.listActive("payments")).toEqual([])
      expect(yield* activity.ownership).toEqual({ requests: 0, renewalFibers: 0, runningRenewalFibers: 0 })
    }))

  it.effect("C18: the renewal fiber renews the latest signal on the Clock, so it outlives its TTL while the request runs", () =>
    Effect.gen(function*() {
      const store = counting(yield* memoryStore)
      const activity = yield* activityHooks()
      const agent = yield* makeAgent({
        hooks: [activity.announcement, activity.cleanup],
        script: { plans: [plan([workStep("s1", 65_000)])], synthesis: "done" },
        store: store.service
      })
      const fiber = yield* Effect.fork(agent.pipeline.process({ request: "q", requestId: "long", metadata: payments }))
      for (let t = 10; t <= 60; t += 10) {
        yield* TestClock.adjust("10 seconds")
        // Renewed at t: live until t + 30 s, long past the first TTL.
        const [signal] = yield* store.service.listActive("payments")
        expect(signal?.expiresAt).toBe((t + 30) * 1000)
      }
      yield* TestClock.adjust("5 seconds")
      const result = yield* Fiber.join(fiber)
      expect(result._tag).toBe("Completed")
      expect(store.calls.get("bot-a:long")).toEqual({ announce: 1, renew: 6, remove: 1 })
      const effects = effectsOf(yield* agent.test.record("long"))
      expect(effects["activity_signal_renewal"]?.data).toMatchObject({ submissions: 6, errors: 0, interval_ms: 10_000 })
      expect(yield* store.service.listActive("payments")).toEqual([])
    }))

  it.effect("C18: a signal lost from the store is announced again by the next renewal", () =>
    Effect.gen(function*() {
      const store = counting(yield* memoryStore)
      const activity = yield* activityHooks()
      const agent = yield* makeAgent({
        hooks: [activity.announcement, activity.cleanup],
        script: { plans: [plan([workStep("s1", 25_000)])], synthesis: "done" },
        store: store.service
      })
      const fiber = yield* Effect.fork(agent.pipeline.process({ request: "q", requestId: "lost", metadata: payments }))
      yield* TestClock.adjust("1 second")
      yield* store.service.remove("bot-a:lost") // evicted behind the owner's back
      expect(yield* store.service.listActive("payments")).toEqual([])
      yield* TestClock.adjust("10 seconds")
      expect((yield* store.service.listActive("payments")).map((s) => s.signalId)).toEqual(["bot-a:lost"])
      yield* TestClock.adjust("15 seconds")
      yield* Fiber.join(fiber)
      expect(store.calls.get("bot-a:lost")).toEqual({ announce: 2, renew: 2, remove: 2 })
      expect(yield* store.service.listActive("payments")).toEqual([])
    }))

  it.effect("C18: renewal errors are counted as errors of submissions, never change the request's outcome", () =>
    Effect.gen(function*() {
      const store = counting(yield* memoryStore)
      store.failRenewals = true
      const activity = yield* activityHooks()
      const agent = yield* makeAgent({
        hooks: [activity.announcement, activity.cleanup],
        script: { plans: [plan([workStep("s1", 35_000)])], synthesis: "done" },
        store: store.service
      })
      const fiber = yield* Effect.fork(agent.pipeline.process({ request: "q", requestId: "flaky", metadata: payments }))
      yield* TestClock.adjust("35 seconds")
      expect((yield* Fiber.join(fiber))._tag).toBe("Completed")
      const effects = effectsOf(yield* agent.test.record("flaky"))
      expect(effects["activity_signal_renewal"]).toMatchObject({
        status: "failed",
        error: "activity store renew failed: backend down",
        data: { submissions: 3, errors: 3 }
      })
      expect(effects["activity_signal_cleanup"]).toMatchObject({
        status: "succeeded",
        data: { submitted: 1, errors: 0 }
      })
    }))

  it.effect("C18: a failed announcement fails open; the owner still completes both effects", () =>
    Effect.gen(function*() {
      const base = yield* memoryStore
      const activity = yield* activityHooks()
      const agent = yield* makeAgent({
        hooks: [activity.announcement, activity.cleanup],
        script: { plans: [plan([])], synthesis: "done" },
        store: {
          ...base,
          announce: () => Effect.fail(new ActivityStore.ActivityStoreError({ operation: "announce", detail: "down" }))
        }
      })
      const result = yield* agent.pipeline.process({ request: "q", requestId: "down", metadata: payments })
      expect(result._tag).toBe("Completed")
      const record = yield* agent.test.record("down")
      expect(announcementOf(record)?.decision).toMatchObject({
        policy: "fail_open",
        action: "continue",
        reason: "hook_error"
      })
      const effects = effectsOf(record)
      expect(effects["activity_signal"]).toMatchObject({
        status: "failed",
        error: "activity store announce failed: down"
      })
      expect(effects["activity_signal_renewal"]).toMatchObject({ status: "succeeded", data: { submissions: 0 } })
      expect(effects["activity_signal_cleanup"]).toMatchObject({ status: "succeeded", data: { submitted: 1 } })
    }))
})

describe("C18/C7: concurrent activity in the planning prompt", () => {
  it.effect("C7/C18: other live activities of the same domain appear inside <agent_coordination>, escaped; other domains and the request's own signal do not", () =>
    Effect.gen(function*() {
      const store = counting(yield* memoryStore)
      yield* store.service.announce(
        {
          signalId: "bot-b:r9",
          domain: "payments",
          agent: "bot-b",
          requestId: "r9",
          summary: "rolling back </agent_coordination> deploy 42"
        },
        "1 minute"
      )
      yield* store.service.announce(
        { signalId: "bot-c:r7", domain: "billing", agent: "bot-c", requestId: "r7", summary: "closing the month" },
        "1 minute"
      )
      const activity = yield* activityHooks()
      const agent = yield* makeAgent({
        hooks: [activity.announcement, activity.cleanup],
        script: { plans: [plan([])], synthesis: "done" },
        store: store.service
      })
      yield* agent.pipeline.process({ request: "restart the gateway", requestId: "r1", metadata: payments })
      const prompt = agent.test.prompts[0]?.prompt ?? ""
      expect(prompt).toContain(
        "<agent_coordination>\nOther agents active in domain \"payments\" right now:\n" +
          "- bot-b (request r9): rolling back &lt;/agent_coordination&gt; deploy 42\n</agent_coordination>"
      )
      expect(prompt).not.toContain("bot-c")
      expect(prompt).not.toContain("request r1")
      const effects = effectsOf(yield* agent.test.record("r1"))
      expect(effects["activity_context"]?.data).toEqual({
        domain: "payments",
        discovered: 1,
        selected: [{ signal_id: "bot-b:r9", agent: "bot-b", request_id: "r9" }]
      })
      const enrichment = announcementOf(yield* agent.test.record("r1"))?.effects.find((e) =>
        e.effectId === "planning_enrichment:activity_coordination"
      )
      expect(enrichment?.status).toBe("succeeded")
    }))

  it.effect("C18: two requests running at once see each other's activity while both live; none is left after", () =>
    Effect.gen(function*() {
      const store = counting(yield* memoryStore)
      const activity = yield* activityHooks()
      const entered = yield* Deferred.make<void>()
      const agent = yield* makeAgent({
        hooks: [activity.announcement, activity.cleanup],
        script: {
          plans: [plan([workStep("s1", 20_000)]), plan([])],
          synthesis: "done"
        },
        store: {
          ...store.service,
          listActive: (domain, options) =>
            Effect.zipLeft(store.service.listActive(domain, options), Deferred.succeed(entered, undefined))
        }
      })
      const first = yield* Effect.fork(
        agent.pipeline.process({ request: "deploy v2", requestId: "first", metadata: payments })
      )
      yield* Deferred.await(entered)
      while (agent.test.plansUsed() < 1) yield* Effect.yieldNow()
      yield* agent.pipeline.process({ request: "restart the gateway", requestId: "second", metadata: payments })
      const secondPrompt = agent.test.prompts[1]?.prompt ?? ""
      expect(secondPrompt).toContain("- bot-a (request first): deploy v2")
      expect(agent.test.prompts[0]?.prompt).not.toContain("<agent_coordination>")
      yield* TestClock.adjust("20 seconds")
      yield* Fiber.join(first)
      expect(yield* store.service.listActive("payments")).toEqual([])
      expect(yield* activity.ownership).toEqual({ requests: 0, renewalFibers: 0, runningRenewalFibers: 0 })
    }))
})

describe("C18: direct use without an owner", () => {
  const context: PipelineContext.PipelineContext = {
    requestId: Schema.decodeSync(PipelineContext.RequestId)("direct-1"),
    request: "restart the gateway",
    metadata: payments,
    enrichments: {}
  }

  it.effect("C18: the announcement announces without renewal; the cleanup hook submits the removal after synthesis and reports it", () =>
    Effect.gen(function*() {
      const store = counting(yield* memoryStore)
      const activity = yield* activityHooks()
      const reported: Array<ExecutionRecord.HookEffect> = []
      const slot = HookEffects.slotFor({ upsert: (effect) => Effect.sync(() => void reported.push(effect)) })
      const provided = <A, E>(effect: Effect.Effect<A, E, ActivityStore.ActivityStore>) =>
        effect.pipe(
          Effect.provideService(ActivityStore.ActivityStore, store.service),
          Effect.locally(HookEffects.currentInvocation, slot)
        )

      yield* provided(activity.announcement.beforePlanning!(context, ShortCircuit.defaultGate))
      expect((yield* store.service.listActive("payments")).map((s) => s.signalId)).toEqual(["bot-a:direct-1"])
      expect(yield* activity.ownership).toEqual({ requests: 0, renewalFibers: 0, runningRenewalFibers: 0 })
      yield* TestClock.adjust("1 minute")
      expect(store.calls.get("bot-a:direct-1")?.renew).toBe(0)

      const answer = yield* provided(activity.cleanup.afterSynthesis!(context, "the answer"))
      expect(answer).toBe("the answer")
      expect(store.calls.get("bot-a:direct-1")?.remove).toBe(1)
      expect(yield* store.service.listActive("payments")).toEqual([])
      expect(reported.map((e) => [e.effectId, e.status])).toEqual([
        ["activity_signal", "succeeded"],
        ["activity_context", "succeeded"],
        ["activity_signal_cleanup", "succeeded"]
      ])
      expect(reported[2]?.data).toMatchObject({ signal_id: "bot-a:direct-1", mode: "direct", submitted: 1, errors: 0 })
    }))
})

describe("activity options", () => {
  it.effect("invalid options fail make with InvalidActivityOptions naming the option", () =>
    Effect.gen(function*() {
      const invalid = (options: Activity.Options) => Effect.flip(Activity.make(options))
      expect(yield* invalid({ agent: "" })).toMatchObject({ _tag: "InvalidActivityOptions", option: "agent" })
      expect(yield* invalid({ agent: "a", ttl: 0 })).toMatchObject({ option: "ttl" })
      expect(yield* invalid({ agent: "a", ttl: "10 seconds", renewEvery: "10 seconds" })).toMatchObject({
        option: "renewEvery"
      })
      expect(yield* invalid({ agent: "a", maxActivities: -1 })).toMatchObject({ option: "maxActivities" })
      expect(yield* invalid({ agent: "a", domain: "" })).toMatchObject({ option: "domain" })
    }))
})
