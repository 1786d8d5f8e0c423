/**
 * Around observers (seed 003): they begin in order before a run and finish
 * in reverse order after it with its closed outcome (completed, denied,
 * failed, canceled); they observe and cannot change it (their failures fail
 * open and are recorded); each gets the run's immutable call snapshot —
 * operation, id, start time, coordinates, causal parent, payload.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, TestClock } from "effect"
import {
  Approval,
  type ExecutionRecord,
  Hook,
  Memory,
  type Operation,
  PipelineError,
  Retrieval,
  ToolRegistry
} from "effect-agent-pipeline"
import { allTools, NAMESPACE } from "../../examples/shared/DemoTools.js"
import { makeHarness, plan, quoteStep, tradeStep } from "../support/Harness.js"
import {
  at,
  BlockForever,
  blockingStep,
  blockingTool,
  completed,
  makeSeamAgent,
  observerOf,
  planPrompts,
  refOf,
  runsOf,
  type SeamServices,
  type Seen,
  textPrompts,
  untyped
} from "./OperationsSupport.js"

/** A run's parent as a plain reference (whatever else the snapshot's `parent` carries). */
const parentOf = (call: Operation.Call): Operation.CallRef | undefined =>
  call.parent === undefined ? undefined : { operation: call.parent.operation, callId: call.parent.callId }

/** A hook observing every operation with one logging observer. */
const observeAll = (name: string, seen: Array<Seen>, log?: Array<string>): Hook.Hook<never> => {
  const observe = observerOf(name, seen, log)
  return Hook.make({
    name,
    around: {
      request: observe,
      phase: observe,
      inference: observe,
      toolCall: observe,
      toolExecution: observe,
      retrieval: observe,
      memoryLoad: observe,
      memoryStore: observe,
      approvalWait: observe
    }
  })
}

const tradesNeedApproval: Approval.ApprovalPolicy["Type"] = {
  evaluate: (_ctx, p) =>
    Effect.succeed(
      p.steps.some((s) => s.capability === "execute_trade") ? Approval.suspend("trades need a human") : Approval.approve
    )
}

/** A tool that takes two seconds (of the test clock). */
const slowTool = ToolRegistry.entry({
  namespace: NAMESPACE,
  agent: "blocking-service",
  tool: BlockForever,
  handler: ({ label }) => Effect.as(Effect.sleep("2 seconds"), label)
})

// ---------------------------------------------------------------------------
// Order and nesting
// ---------------------------------------------------------------------------

describe("observers: order", () => {
  it.effect("seed 003: observers begin in registration order before the run and finish in reverse order after it", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "a", around: { toolCall: observerOf("a", seen, log) } }),
          Hook.make({ name: "b", around: { toolCall: observerOf("b", seen, log) } }),
          Hook.make({ name: "exec", around: { toolExecution: observerOf("exec", seen, log) } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "o-order" }))
      expect(log).toEqual([
        "begin:a:tool_call",
        "begin:b:tool_call",
        "begin:exec:tool_execution",
        "end:exec:tool_execution:completed",
        "end:b:tool_call:completed",
        "end:a:tool_call:completed"
      ])
      const record = yield* h.record("o-order")
      // Each run is recorded when it ends (b before a); its sequence is its place in the order.
      expect(at(record, "around_tool_call").map((i) => [i.name, i.sequence, i.status])).toEqual([
        ["b", 1, "completed"],
        ["a", 0, "completed"]
      ])
    }))

  it.effect("seed 001/003: a higher-priority observer begins first and finishes last", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "a", around: { request: observerOf("a", [], log) } }),
          Hook.make({ name: "b", priority: 1, around: { request: observerOf("b", [], log) } })
        ],
        script: { plans: [plan([])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "hi", requestId: "o-prio" }))
      expect(log).toEqual(["begin:b:request", "begin:a:request", "end:a:request:completed", "end:b:request:completed"])
    }))

  it.effect("seed 003: runs nest: request ⊃ phase ⊃ planning inference, tool_call ⊃ tool_execution; synthesis inside the request", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", [], log)],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "o-nest" }))
      expect(log).toEqual([
        "begin:o:request",
        "begin:o:phase",
        "begin:o:inference",
        "end:o:inference:completed",
        "begin:o:tool_call",
        "begin:o:tool_execution",
        "end:o:tool_execution:completed",
        "end:o:tool_call:completed",
        "end:o:phase:completed",
        "begin:o:inference",
        "end:o:inference:completed",
        "end:o:request:completed"
      ])
    }))
})

// ---------------------------------------------------------------------------
// Outcomes
// ---------------------------------------------------------------------------

describe("observers: outcomes", () => {
  it.effect("seed 003: a guard's refusal is the run's denied outcome, with the HookDenied as its error; the execution never begins", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          observeAll("o", seen),
          Hook.make({
            name: "no-trades",
            guard: {
              toolCall: (
                call,
                proceed
              ) => (call.payload.capability === "execute_trade" ? Hook.deny("no trades") : proceed)
            }
          })
        ],
        script: { plans: [plan([tradeStep("t1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "buy", requestId: "o-denied" }))
      const [toolCall] = runsOf(seen, "tool_call")
      expect(toolCall?.result?.outcome).toBe("denied")
      expect(toolCall?.result?.error).toBeInstanceOf(PipelineError.HookDenied)
      expect(toolCall?.result?.error).toMatchObject({ hookName: "no-trades", reason: "refused", detail: "no trades" })
      expect(runsOf(seen, "tool_execution")).toEqual([])
      // The denial stays in its step: the phase and the request completed.
      expect(runsOf(seen, "phase").map((s) => s.result?.outcome)).toEqual(["completed"])
      expect(runsOf(seen, "request").map((s) => s.result?.outcome)).toEqual(["completed"])
    }))

  it.effect("seed 003: a request guard's refusal is the request's denied outcome", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", seen), Hook.make({ name: "closed", guard: { request: () => Hook.deny("closed") } })],
        script: { plans: [plan([])], synthesis: "never" }
      })
      yield* Effect.flip(h.pipeline.process({ request: "hi", requestId: "o-denied-req" }))
      expect(seen.map((s) => [s.call.operation, s.result?.outcome])).toEqual([["request", "denied"]])
    }))

  it.effect("seed 003: a failing model call is the failed outcome of the inference, its phase and the request, with the error", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", seen)],
        script: { plans: [new Error("model down")], synthesis: "never" }
      })
      yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "o-failed" }))
      expect(seen.map((s) => [s.call.operation, s.result?.outcome])).toEqual([
        ["request", "failed"],
        ["phase", "failed"],
        ["inference", "failed"]
      ])
      for (const s of seen) {
        expect(s.result?.error).toBeInstanceOf(PipelineError.PlanningError)
        expect(s.result?.error).toMatchObject({ reason: "model_failed" })
      }
    }))

  it.effect("seed 003: a failing tool handler is the failed outcome of its tool_execution; the tool_call completes (its result is the error)", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", seen)],
        script: { plans: [plan([quoteStep("q1", "not a ticker")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "o-tool-failed" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("failed")
      const [execution] = runsOf(seen, "tool_execution")
      expect(execution?.result?.outcome).toBe("failed")
      expect(execution?.result?.error).toMatchObject({ _tag: "ToolCallFailure", reason: "invalid_parameters" })
      expect(runsOf(seen, "tool_call").map((s) => s.result?.outcome)).toEqual(["completed"])
    }))

  it.effect("seed 003: interrupting a request is the canceled outcome of every run in flight; the observers' own runs are recorded", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<string>()
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", seen)],
        tools: [...allTools, blockingTool(started)],
        script: { plans: [plan([blockingStep("b1")])], synthesis: "never" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "block", requestId: "o-canceled" }))
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(seen.map((s) => [s.call.operation, s.result?.outcome])).toEqual([
        ["request", "canceled"],
        ["phase", "canceled"],
        ["inference", "completed"],
        ["tool_call", "canceled"],
        ["tool_execution", "canceled"]
      ])
      const record = yield* h.record("o-canceled")
      expect(record.lifecycle?.status).toBe("interrupted")
      expect(record.hookInvocations.map((i) => [i.stage, i.status])).toEqual(
        expect.arrayContaining([
          ["around_request", "completed"],
          ["around_phase", "completed"],
          ["around_tool_call", "completed"],
          ["around_tool_execution", "completed"]
        ])
      )
    }))
})

// ---------------------------------------------------------------------------
// Observers cannot change the outcome
// ---------------------------------------------------------------------------

describe("observers: they observe, they cannot change the outcome", () => {
  it.effect("seed 003: an observer whose begin fails is recorded failed (fail_open) and the run goes on; later observers still see it", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "broken", around: { toolCall: () => Effect.fail("metrics backend down") } }),
          Hook.make({ name: "fine", around: { toolCall: observerOf("fine", seen) } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "o-begin-fails" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("succeeded")
      expect(seen.map((s) => s.result?.outcome)).toEqual(["completed"])
      const record = yield* h.record("o-begin-fails")
      expect(at(record, "around_tool_call")).toEqual([
        expect.objectContaining({
          name: "broken",
          status: "failed",
          error: "metrics backend down",
          decision: { policy: "fail_open", action: "continue", reason: "hook_error" }
        }),
        expect.objectContaining({ name: "fine", status: "completed" })
      ])
    }))

  it.effect("seed 003: an observer whose finish fails is recorded failed; the outcome is unchanged", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "flaky-finish",
            around: { request: () => Effect.succeed(() => Effect.fail(new Error("exporter closed"))) }
          })
        ],
        script: { plans: [plan([])], synthesis: "fine" }
      })
      const response = completed(yield* h.pipeline.process({ request: "hi", requestId: "o-finish-fails" }))
      expect(response.response).toBe("fine")
      const record = yield* h.record("o-finish-fails")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(at(record, "around_request")).toEqual([
        expect.objectContaining({
          status: "failed",
          error: "exporter closed",
          decision: { policy: "fail_open", action: "continue", reason: "hook_error" }
        })
      ])
    }))

  it.effect("seed 003: an observer of a failing run cannot turn it into a success (nor a success into a failure)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "meddler",
            around: {
              inference: () => Effect.succeed(() => Effect.fail("pretend it failed")),
              request: () => Effect.succeed(() => Effect.void)
            }
          })
        ],
        script: { plans: [plan([])], synthesis: "answer" }
      })
      expect(completed(yield* h.pipeline.process({ request: "hi", requestId: "o-meddle-1" })).response).toBe("answer")
      const failing = yield* makeHarness({
        hooks: [Hook.make({ name: "meddler", around: { request: () => Effect.succeed(() => Effect.void) } })],
        script: { plans: [new Error("down")], synthesis: "never" }
      })
      const error = yield* Effect.flip(failing.pipeline.process({ request: "hi", requestId: "o-meddle-2" }))
      expect(error._tag).toBe("PlanningError")
    }))

  it.effect("seed 003: an observer returning nothing is recorded completed; one returning something else (JavaScript) is recorded failed", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "silent", around: { phase: () => Effect.void } }),
          untyped({ name: "odd", around: { phase: () => Effect.succeed(42) } }),
          untyped({ name: "not-an-effect", around: { phase: () => "hello" } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "o-shapes" }))
      const record = yield* h.record("o-shapes")
      const runs = [...at(record, "around_phase")].sort((x, y) => x.sequence - y.sequence)
      expect(runs.map((i) => [i.name, i.status, i.error])).toEqual([
        ["silent", "completed", undefined],
        ["odd", "failed", "an Around observer must return a finish function or nothing"],
        ["not-an-effect", "failed", "hook handler did not return an Effect"]
      ])
    }))

  it.scoped("seed 001/003: a detached (fire-and-record) observer sees the run after it ended, off the request's path; recorded backgrounded, then completed", () =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<readonly [string, Operation.Outcome]>()
      const late = Hook.make<SeamServices>({
        name: "late",
        execution: Hook.fireAndRecord,
        around: {
          toolCall: (call) =>
            Effect.succeed((result: Operation.Result) => Deferred.succeed(done, [call.callId, result.outcome] as const))
        }
      })
      const agent = yield* makeSeamAgent({
        hooks: [late],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* agent.pipeline.process({ request: "quote", requestId: "o-detached" }))
      expect(response.phases[0]!.steps[0]!.status).toBe("succeeded")
      const [callId, outcome] = yield* Deferred.await(done)
      expect(outcome).toBe("completed")
      let entry: ExecutionRecord.HookInvocation | undefined
      for (let i = 0; i < 100 && entry?.status !== "completed"; i++) {
        entry = at(yield* agent.test.record("o-detached"), "around_tool_call")[0]
        if (entry?.status !== "completed") yield* Effect.yieldNow()
      }
      expect(entry).toMatchObject({
        name: "late",
        callId,
        operation: "tool_call",
        execution: "fire_and_record",
        status: "completed"
      })
    }))

  it.effect("seed 001/003: an observer cannot fail closed: the subscription is refused at construction (policy_not_applicable)", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        makeHarness({
          hooks: [Hook.make({ name: "strict", failure: "fail_closed", around: { toolCall: () => Effect.void } })]
        })
      )
      expect(error).toMatchObject({
        _tag: "InvalidHookSubscription",
        reason: "policy_not_applicable",
        hookName: "strict"
      })
    }))
})

// ---------------------------------------------------------------------------
// The call snapshot
// ---------------------------------------------------------------------------

describe("observers: the call snapshot", () => {
  it.effect("seed 003: each run's snapshot names its operation, a unique id, its coordinates, its causal parent and its payload", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", seen)],
        script: { plans: [plan([quoteStep("q1"), quoteStep("q2", "MSFT")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote ACME and MSFT", requestId: "o-snap" }))

      const [request] = runsOf(seen, "request")
      const [phase] = runsOf(seen, "phase")
      const [planning, synthesis] = runsOf(seen, "inference")
      const toolCalls = runsOf(seen, "tool_call")
      const executions = runsOf(seen, "tool_execution")
      expect(request!.call).toEqual({
        operation: "request",
        callId: request!.call.callId,
        startedAt: 0,
        coordinates: { requestId: "o-snap" },
        payload: { mode: "pipeline", request: "quote ACME and MSFT" }
      })
      expect(request!.call.parent).toBeUndefined()
      expect(phase!.call).toMatchObject({
        coordinates: { requestId: "o-snap", phase: 1 },
        payload: { phase: 1, resumed: false }
      })
      expect(parentOf(phase!.call)).toEqual(refOf(request!.call))
      expect(planning!.call).toMatchObject({
        coordinates: { requestId: "o-snap", phase: 1 },
        payload: { purpose: "planning", streamed: false, prompt: planPrompts(h.prompts)[0] }
      })
      expect(parentOf(planning!.call)).toEqual(refOf(phase!.call))
      expect(synthesis!.call).toMatchObject({
        coordinates: { requestId: "o-snap" },
        payload: { purpose: "synthesis", streamed: false, prompt: textPrompts(h.prompts)[0] }
      })
      expect(parentOf(synthesis!.call)).toEqual(refOf(request!.call))
      expect(synthesis!.call.coordinates.phase).toBeUndefined()
      expect(toolCalls.map((s) => s.call.coordinates.stepId).sort()).toEqual(["q1", "q2"])
      for (const toolCall of toolCalls) {
        const stepId = toolCall.call.coordinates.stepId
        expect(parentOf(toolCall.call)).toEqual(refOf(phase!.call))
        expect(toolCall.call).toMatchObject({
          coordinates: { requestId: "o-snap", phase: 1, stepId },
          payload: {
            namespace: NAMESPACE,
            agent: "stock-service",
            capability: "stock_quote",
            parameters: { symbol: stepId === "q1" ? "ACME" : "MSFT" }
          }
        })
        const execution = executions.find((e) => e.call.coordinates.stepId === stepId)
        expect(execution?.call).toMatchObject({
          coordinates: { requestId: "o-snap", phase: 1, stepId },
          payload: toolCall.call.payload
        })
        expect(parentOf(execution!.call)).toEqual(refOf(toolCall.call))
      }
      // Every run has its own id, prefixed by its operation.
      const ids = seen.map((s) => s.call.callId)
      expect(new Set(ids).size).toBe(ids.length)
      for (const s of seen) expect(s.call.callId.startsWith(`${s.call.operation}-`)).toBe(true)
    }))

  it.scoped("seed 003: a run's parent is a reference to the run that started it ({ operation, callId }), never that run's whole snapshot", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const observe = observerOf("o", seen)
      const app = Hook.make<SeamServices>({
        name: "app",
        beforePlanning: () =>
          Effect.gen(function*() {
            yield* Retrieval.retrieve("ACME results")
            yield* Memory.store("user-1", { content: "prefers EUR" })
            yield* Memory.load("user-1", "EUR")
          })
      })
      const agent = yield* makeSeamAgent({
        hooks: [
          app,
          Hook.make({
            name: "o",
            around: {
              request: observe,
              phase: observe,
              inference: observe,
              toolCall: observe,
              toolExecution: observe,
              retrieval: observe,
              memoryLoad: observe,
              memoryStore: observe,
              recordWrite: observe
            }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "o-parents" }))
      const parents = seen
        .filter((s) => s.call.parent !== undefined)
        .map((s) => [s.call.operation, Object.keys(s.call.parent!).sort()] as const)
      expect(new Set(parents.map(([operation]) => operation))).toEqual(
        new Set([
          "phase",
          "inference",
          "tool_call",
          "tool_execution",
          "retrieval",
          "memory_load",
          "memory_store",
          "record_write"
        ])
      )
      expect(parents.filter(([, keys]) => keys.join() !== "callId,operation").map(([operation]) => operation)).toEqual(
        []
      )
    }))

  it.effect("seed 003: the snapshot is deeply frozen: changing it changes nothing", () =>
    Effect.gen(function*() {
      const attempts: Array<boolean> = []
      const calls: Array<Operation.Call<"tool_call">> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "meddler",
            around: {
              toolCall: (call) =>
                Effect.sync(() => {
                  calls.push(call)
                  attempts.push(Reflect.set(call.payload.parameters, "symbol", "EVIL"))
                  attempts.push(Reflect.set(call.payload, "capability", "execute_trade"))
                  attempts.push(Reflect.set(call.coordinates, "stepId", "other"))
                  attempts.push(Reflect.set(call, "callId", "forged"))
                })
            }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "o-frozen" }))
      expect(attempts).toEqual([false, false, false, false])
      const [call] = calls
      for (const part of [call, call!.payload, call!.payload.parameters, call!.coordinates, call!.parent]) {
        expect(Object.isFrozen(part)).toBe(true)
      }
      // The tool ran with the plan's arguments.
      expect(response.phases[0]!.steps[0]).toMatchObject({
        capability: "stock_quote",
        status: "succeeded",
        output: { symbol: "ACME" }
      })
      const record = yield* h.record("o-frozen")
      expect(at(record, "around_tool_call")[0]!.callId).toBe(call!.callId)
    }))

  it.effect("seed 003: startedAt and endedAt come from the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_000)
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "timer",
            around: { toolExecution: observerOf("timer", seen), request: observerOf("timer", seen) }
          })
        ],
        tools: [...allTools, slowTool],
        script: { plans: [plan([blockingStep("slow")])], synthesis: "ok" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "slow", requestId: "o-clock" }))
      yield* TestClock.adjust("2 seconds")
      completed(yield* Fiber.join(fiber))
      const [request] = runsOf(seen, "request")
      const [execution] = runsOf(seen, "tool_execution")
      expect([execution!.call.startedAt, execution!.result?.endedAt]).toEqual([1_000, 3_000])
      expect([request!.call.startedAt, request!.result?.endedAt]).toEqual([1_000, 3_000])
      expect(execution!.result?.error).toBeUndefined()
    }))

  it.effect("seed 003: a run's observers and guards get the same call snapshot", () =>
    Effect.gen(function*() {
      const observed: Array<Operation.Call> = []
      const guarded: Array<Operation.Call> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "watch", around: { toolCall: (call) => Effect.sync(() => void observed.push(call)) } }),
          Hook.make({
            name: "gate",
            guard: { toolCall: (call, proceed) => Effect.zipRight(Effect.sync(() => void guarded.push(call)), proceed) }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "o-same" }))
      expect(guarded).toHaveLength(1)
      expect(guarded[0]).toEqual(observed[0])
      const record = yield* h.record("o-same")
      expect(new Set(record.hookInvocations.map((i) => i.callId))).toEqual(new Set([observed[0]!.callId]))
    }))

  it.effect("seed 003: the record places each observer run at its operation run (operation, callId, stepId, phase)", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", seen)],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "o-record" }))
      const record = yield* h.record("o-record")
      const expected = seen.map((s) => ({
        stage: `around_${s.call.operation}`,
        operation: s.call.operation,
        callId: s.call.callId,
        stepId: s.call.coordinates.stepId,
        phase: s.call.coordinates.phase
      }))
      const recorded = record.hookInvocations.map((i) => ({
        stage: i.stage,
        operation: i.operation,
        callId: i.callId,
        stepId: i.stepId,
        phase: i.phase
      }))
      expect(recorded).toHaveLength(expected.length)
      expect(recorded).toEqual(expect.arrayContaining(expected))
      expect(record.hookInvocations.every((i) => i.name === "o" && i.status === "completed")).toBe(true)
    }))

  it.scoped("seed 003: retrieval and memory runs started by a hook are children of the request, with their payloads", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const observe = observerOf("o", seen)
      const app = Hook.make<SeamServices>({
        name: "app",
        beforePlanning: () =>
          Effect.gen(function*() {
            yield* Retrieval.retrieve("ACME results", { limit: 2 })
            yield* Memory.store("user-1", { content: "prefers EUR", metadata: { source: "chat" } })
            yield* Memory.load("user-1", "EUR", { limit: 3 })
          })
      })
      const agent = yield* makeSeamAgent({
        hooks: [
          app,
          Hook.make({
            name: "o",
            around: { request: observe, retrieval: observe, memoryLoad: observe, memoryStore: observe }
          })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "o-seams" }))
      const [request] = runsOf(seen, "request")
      const parent = refOf(request!.call)
      const [retrieval] = runsOf(seen, "retrieval")
      const [store] = runsOf(seen, "memory_store")
      const [load] = runsOf(seen, "memory_load")
      expect(retrieval!.call).toMatchObject({
        coordinates: { requestId: "o-seams" },
        payload: { retriever: "memory", query: "ACME results", limit: 2 }
      })
      expect(store!.call.payload).toEqual({
        scope: "user-1",
        record: { content: "prefers EUR", metadata: { source: "chat" } }
      })
      expect(load!.call.payload).toEqual({ scope: "user-1", query: "EUR", limit: 3 })
      for (const run of [retrieval!, store!, load!]) expect(parentOf(run.call)).toEqual(parent)
      expect(seen.every((s) => s.result?.outcome === "completed" && Object.isFrozen(s.call.payload))).toBe(true)
    }))

  it.scoped("seed 003: the snapshot is the runtime's copy: the caller's own record is not frozen by it", () =>
    Effect.gen(function*() {
      const mine = { content: "draft note", metadata: { tags: ["a"] } }
      const app = Hook.make<SeamServices>({
        name: "app",
        beforePlanning: () => Effect.asVoid(Memory.store("user-1", mine))
      })
      const agent = yield* makeSeamAgent({
        hooks: [app, Hook.make({ name: "o", around: { memoryStore: () => Effect.void } })]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "o-copy" }))
      expect([Object.isFrozen(mine), Object.isFrozen(mine.metadata), Object.isFrozen(mine.metadata.tags)]).toEqual([
        false,
        false,
        false
      ])
    }))
})

// ---------------------------------------------------------------------------
// Approval waits and record writes
// ---------------------------------------------------------------------------

describe("observers: approval waits", () => {
  it.effect("seed 003: an approval_wait observer sees the wait when the decision arrives: it began at the checkpoint, approve → completed", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(5_000)
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", seen)],
        approval: tradesNeedApproval,
        script: { plans: [plan([tradeStep("t1")])], synthesis: "bought" }
      })
      const suspended = yield* h.pipeline.process({ request: "buy", requestId: "o-wait" })
      if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
      const checkpoint = suspended.checkpoint
      expect(runsOf(seen, "approval_wait")).toEqual([])
      expect(runsOf(seen, "request").map((s) => s.result?.outcome)).toEqual(["completed"])

      yield* TestClock.setTime(9_000)
      completed(yield* h.pipeline.resume(checkpoint.checkpointId, "approve"))
      const requests = runsOf(seen, "request")
      expect(requests.map((s) => s.call.payload.mode)).toEqual(["pipeline", "resume"])
      const [wait] = runsOf(seen, "approval_wait")
      expect(wait!.call).toMatchObject({
        operation: "approval_wait",
        startedAt: 5_000,
        coordinates: { requestId: "o-wait", phase: 1 },
        payload: { checkpointId: checkpoint.checkpointId, reason: "trades need a human", decision: "approve" }
      })
      expect(wait!.call.coordinates).toEqual({ requestId: "o-wait", phase: 1 })
      expect(parentOf(wait!.call)).toEqual(refOf(requests[1]!.call))
      expect(wait!.result).toEqual({ outcome: "completed", endedAt: 9_000 })
      const record = yield* h.record("o-wait")
      expect(at(record, "around_approval_wait")).toEqual([
        expect.objectContaining({ operation: "approval_wait", callId: wait!.call.callId, status: "completed" })
      ])
    }))

  it.effect("seed 003: a rejection is a decision, not a failure: the wait completes with decision reject, the resumed request completes, no tool runs", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [observeAll("o", seen)],
        approval: tradesNeedApproval,
        script: { plans: [plan([tradeStep("t1")])], synthesis: "never" }
      })
      const suspended = yield* h.pipeline.process({ request: "buy", requestId: "o-wait-rej" })
      if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
      const checkpointId = suspended.checkpoint.checkpointId
      const rejected = yield* h.pipeline.resume(checkpointId, "reject")
      expect(rejected._tag).toBe("Rejected")
      const [wait] = runsOf(seen, "approval_wait")
      expect(wait?.call.payload).toEqual({ checkpointId, reason: "trades need a human", decision: "reject" })
      expect(wait?.result?.outcome).toBe("completed")
      expect(wait?.result?.error).toBeUndefined()
      expect(runsOf(seen, "tool_call")).toEqual([])
      expect(runsOf(seen, "request").map((s) => [s.call.payload.mode, s.result?.outcome])).toEqual([
        ["pipeline", "completed"],
        ["resume", "completed"]
      ])
      expect((yield* h.record("o-wait-rej")).lifecycle?.status).toBe("rejected")
    }))
})

describe("observers: record writes", () => {
  it.effect("seed 003: a record_write observer sees each write (revision, status) as a child of the request; its own runs are not in the record", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const observe = observerOf("writes", seen)
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "writes", around: { recordWrite: observe, request: observe } })],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "o-writes" }))
      const record = yield* h.record("o-writes")
      const writes = runsOf(seen, "record_write")
      expect(writes.length).toBeGreaterThanOrEqual(1)
      const [request] = runsOf(seen, "request")
      for (const write of writes) {
        expect(write.call.coordinates).toEqual({ requestId: "o-writes" })
        expect(parentOf(write.call)).toEqual(refOf(request!.call))
        expect(write.result?.outcome).toBe("completed")
        expect(Object.isFrozen(write.call.payload)).toBe(true)
      }
      expect(writes.at(-1)!.call.payload).toEqual({ revision: record.recordRevision, status: "succeeded" })
      // The request observer is recorded; the record_write observer is not (it would write forever).
      expect(record.hookInvocations.map((i) => i.stage)).toEqual(["around_request"])
    }))
})
