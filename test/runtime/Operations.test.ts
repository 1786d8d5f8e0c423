/**
 * Operation hooks on every path through the pipeline (seed 002, seed 003):
 * the streamed path (planning buffered, synthesis streamed), several phases,
 * a resumed HITL request and workflow mode — observers, guards and
 * transforms fire on each, with the right parents and coordinates.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import { type AgentResponse, Approval, Hook } from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, tracer, tradeStep, weatherStep } from "../support/Harness.js"
import { at, completed, observerOf, planPrompts, refOf, runsOf, type Seen, textPrompts } from "./OperationsSupport.js"

type StreamEvent = AgentResponse.StreamEvent

/** Every event of a stream, and how it ended (Right: completed; Left: its failure). */
const collectEither = <E>(stream: Stream.Stream<StreamEvent, E>) =>
  Effect.map(Stream.runCollect(Stream.either(stream)), (chunk) => {
    const items = Chunk.toReadonlyArray(chunk)
    const events = items.flatMap((i) => (Either.isRight(i) ? [i.right] : []))
    const failure = items.flatMap((i) => (Either.isLeft(i) ? [i.left] : []))[0]
    return { events, failure }
  })

const tokensOf = (events: ReadonlyArray<StreamEvent>): string =>
  events.flatMap((e) => (e._tag === "Token" ? [e.text] : [])).join("")

const completedOf = (events: ReadonlyArray<StreamEvent>) =>
  events.flatMap((e) => (e._tag === "Completed" ? [e.response] : []))

/** Observes every pipeline operation with one logging observer. */
const observeRuns = (seen: Array<Seen>, log?: Array<string>): Hook.Hook<never> => {
  const observe = observerOf("o", seen, log)
  return Hook.make({
    name: "o",
    around: {
      request: observe,
      phase: observe,
      inference: observe,
      toolCall: observe,
      toolExecution: observe,
      approvalWait: observe
    }
  })
}

/** A run's parent as a plain reference. */
const parentOf = (seen: Seen) =>
  seen.call.parent === undefined
    ? undefined
    : { operation: seen.call.parent.operation, callId: seen.call.parent.callId }

const tradesNeedApproval: Approval.ApprovalPolicy["Type"] = {
  evaluate: (_ctx, p) =>
    Effect.succeed(
      p.steps.some((s) => s.capability === "execute_trade") ? Approval.suspend("trades need a human") : Approval.approve
    )
}

const noTrades = Hook.make({
  name: "no-trades",
  guard: {
    toolCall: (
      call,
      proceed
    ) => (call.payload.capability === "execute_trade" ? Hook.deny("trades are not allowed") : proceed)
  }
})

const SSN = /\d{3}-\d{2}-\d{4}/g

// ---------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------

describe("operations on the streamed path", () => {
  it.effect("seed 003: on the streamed path observers see the request (mode stream), the buffered planning call, the tool calls and the streamed synthesis", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const log: Array<string> = []
      const h = yield* makeHarness({
        hooks: [observeRuns(seen, log)],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "hello world", chunks: ["hello", " world"] }
      })
      const { events, failure } = yield* collectEither(h.pipeline.stream({ request: "quote", requestId: "p-stream" }))
      expect(failure).toBeUndefined()
      expect(events.map((e) => e._tag)).toEqual(["Token", "Token", "Completed"])
      const [request] = runsOf(seen, "request")
      expect(request!.call.payload).toEqual({ mode: "stream", request: "quote" })
      expect(runsOf(seen, "inference").map((s) => [s.call.payload.purpose, s.call.payload.streamed, s.result?.outcome]))
        .toEqual([
          ["planning", false, "completed"],
          ["synthesis", true, "completed"]
        ])
      const [, synthesis] = runsOf(seen, "inference")
      expect(parentOf(synthesis!)).toEqual(refOf(request!.call))
      expect(synthesis!.call.payload.prompt).toBe(h.prompts.find((p) => p.kind === "stream")?.prompt)
      expect(runsOf(seen, "tool_call").map((s) => [s.call.coordinates.stepId, s.result?.outcome])).toEqual([[
        "q1",
        "completed"
      ]])
      // The streamed synthesis ends inside the request run.
      expect(log.slice(-3)).toEqual(["begin:o:inference", "end:o:inference:completed", "end:o:request:completed"])
      const record = yield* h.record("p-stream")
      expect(record.mode).toBe("stream")
      expect(at(record, "around_inference").map((i) => i.status)).toEqual(["completed", "completed"])
    }))

  it.effect("seed 002: streamed synthesis: beforeInference rewrites the streamed prompt; afterInference rewrites the full text — tokens stay as the model produced them, the rewritten text is the draft AfterSynthesis gets", () =>
    Effect.gen(function*() {
      const drafts: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "system-note",
            beforeInference: (call, prompt) => Effect.succeed(call.payload.streamed ? `${prompt}\n[streamed]` : prompt)
          }),
          Hook.make({
            name: "redact",
            afterInference: (call, text) =>
              Effect.succeed(call.payload.purpose === "synthesis" ? text.replace(SSN, "[ssn]") : text)
          }),
          Hook.make({
            name: "sign",
            afterSynthesis: (_ctx, text) => Effect.sync(() => (drafts.push(text), `${text} — bot`))
          })
        ],
        script: {
          plans: [plan([quoteStep("q1")])],
          synthesis: "your ssn is 123-45-6789",
          chunks: ["your ssn", " is 123-", "45-6789"]
        }
      })
      const { events, failure } = yield* collectEither(
        h.pipeline.stream({ request: "quote", requestId: "p-stream-rewrite" })
      )
      expect(failure).toBeUndefined()
      expect(tokensOf(events)).toBe("your ssn is 123-45-6789")
      const [response] = completedOf(events)
      expect(drafts).toEqual(["your ssn is [ssn]"])
      expect(response?.rawDraft).toBe("your ssn is [ssn]")
      expect(response?.response).toBe("your ssn is [ssn] — bot")
      const streamed = h.prompts.filter((p) => p.kind === "stream")
      expect(streamed).toHaveLength(1)
      expect(streamed[0]!.prompt.endsWith("\n[streamed]")).toBe(true)
      expect(planPrompts(h.prompts)[0]).not.toContain("[streamed]")
      const record = yield* h.record("p-stream-rewrite")
      expect(record.rawDraft).toBe("your ssn is [ssn]")
      expect(record.finalResponse).toBe("your ssn is [ssn] — bot")
    }))

  it.effect("seed 003: an inference guard denying the streamed synthesis fails the stream with HookDenied before any token", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          observeRuns(seen),
          Hook.make({
            name: "no-streams",
            guard: { inference: (call, proceed) => (call.payload.streamed ? Hook.deny("streaming is off") : proceed) }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "never", chunks: ["ne", "ver"] }
      })
      const { events, failure } = yield* collectEither(
        h.pipeline.stream({ request: "quote", requestId: "p-stream-deny" })
      )
      expect(events).toEqual([])
      expect(failure).toMatchObject({
        _tag: "HookDenied",
        hookName: "no-streams",
        operation: "inference",
        reason: "refused"
      })
      expect(h.prompts.filter((p) => p.kind === "stream")).toEqual([])
      expect(runsOf(seen, "inference").map((s) => s.result?.outcome)).toEqual(["completed", "denied"])
      const record = yield* h.record("p-stream-deny")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookDenied" })
    }))

  it.effect("seed 002: a fail-closed afterInference failure on a streamed synthesis fails the stream (HookFailed) after the tokens were sent", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "checker",
            afterInference: (
              call,
              text
            ) => (call.payload.streamed ? Effect.fail("checker offline") : Effect.succeed(text))
          })
        ],
        script: { plans: [plan([])], synthesis: "ab", chunks: ["a", "b"] }
      })
      const { events, failure } = yield* collectEither(h.pipeline.stream({ request: "hi", requestId: "p-stream-fail" }))
      expect(tokensOf(events)).toBe("ab")
      expect(completedOf(events)).toEqual([])
      expect(failure).toMatchObject({
        _tag: "HookFailed",
        hookName: "checker",
        point: "after_inference",
        reason: "hook_failed"
      })
      const record = yield* h.record("p-stream-fail")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookFailed" })
      expect(record.finalResponse).toBeUndefined()
    }))

  it.effect("seed 003: a request guard on the streamed path wraps the run's start: a retry re-runs a failing start and records attempts: 2", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "retry-run", guard: { request: (_call, proceed) => Effect.retry(proceed, { times: 2 }) } })
        ],
        script: { plans: [new Error("overloaded"), plan([quoteStep("q1")])], synthesis: "ok", chunks: ["o", "k"] }
      })
      const { events, failure } = yield* collectEither(
        h.pipeline.stream({ request: "quote", requestId: "p-stream-retry" })
      )
      expect(failure).toBeUndefined()
      expect(tokensOf(events)).toBe("ok")
      expect(completedOf(events)[0]?.phases[0]?.steps.map((s) => s.status)).toEqual(["succeeded"])
      const record = yield* h.record("p-stream-retry")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(at(record, "guard_request")).toEqual([expect.objectContaining({ status: "completed", attempts: 2 })])
    }))
})

// ---------------------------------------------------------------------------
// Several phases
// ---------------------------------------------------------------------------

describe("operations across phases", () => {
  it.effect("seed 003: each phase is a run under the request; each planning call is a child of its phase; tool calls of both phases go through their hooks", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          observeRuns(seen),
          Hook.make({ name: "mark", beforeInference: (_c, prompt) => Effect.succeed(`${prompt}\n[marked]`) }),
          Hook.make({
            name: "relocate",
            beforeTool: (call, parameters) =>
              Effect.succeed(
                call.payload.capability === "weather_forecast" ? { ...parameters, city: "Lisbon" } : parameters
              )
          }),
          Hook.make({ name: "gate", guard: { toolCall: (_call, proceed) => proceed } })
        ],
        script: { plans: [plan([quoteStep("q1")], false), plan([weatherStep("w2")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote then weather", requestId: "p-phases" }))
      expect(response.phases.map((p) => [p.phase, p.steps.map((s) => [s.step_id, s.status])])).toEqual([
        [1, [["q1", "succeeded"]]],
        [2, [["w2", "succeeded"]]]
      ])
      expect(response.phases[1]!.steps[0]!.output).toMatchObject({ city: "Lisbon" })
      // Both planning prompts (the continuation too) and the synthesis prompt were rewritten.
      expect(h.prompts.map((p) => [p.kind, p.prompt.endsWith("\n[marked]")])).toEqual([
        ["plan", true],
        ["plan", true],
        ["text", true]
      ])

      const [request] = runsOf(seen, "request")
      const phases = runsOf(seen, "phase")
      expect(phases.map((s) => [s.call.payload, parentOf(s), s.result?.outcome])).toEqual([
        [{ phase: 1, resumed: false }, refOf(request!.call), "completed"],
        [{ phase: 2, resumed: false }, refOf(request!.call), "completed"]
      ])
      const inference = runsOf(seen, "inference")
      expect(inference.map((s) => [s.call.payload.purpose, s.call.coordinates.phase, parentOf(s)])).toEqual([
        ["planning", 1, refOf(phases[0]!.call)],
        ["planning", 2, refOf(phases[1]!.call)],
        ["synthesis", undefined, refOf(request!.call)]
      ])
      expect(runsOf(seen, "tool_call").map((s) => [s.call.coordinates.stepId, s.call.coordinates.phase, parentOf(s)]))
        .toEqual([
          ["q1", 1, refOf(phases[0]!.call)],
          ["w2", 2, refOf(phases[1]!.call)]
        ])
      const record = yield* h.record("p-phases")
      expect(at(record, "guard_tool_call").map((i) => [i.stepId, i.phase, i.status])).toEqual([
        ["q1", 1, "completed"],
        ["w2", 2, "completed"]
      ])
      expect(at(record, "before_tool").map((i) => [i.stepId, i.phase, typeof i.contributionHash])).toEqual([
        ["q1", 1, "undefined"],
        ["w2", 2, "string"]
      ])
      expect(at(record, "around_phase").map((i) => i.phase)).toEqual([1, 2])
    }))

  it.effect("seed 003: a guard denying the second phase's planning fails the request after the first phase executed", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "one-phase-only",
            guard: {
              inference: (call, proceed) => ((call.coordinates.phase ?? 0) > 1 ? Hook.deny("one phase only") : proceed)
            }
          })
        ],
        script: { plans: [plan([quoteStep("q1")], false), plan([weatherStep("w2")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "two phases", requestId: "p-phase-deny" }))
      expect(error).toMatchObject({ _tag: "HookDenied", operation: "inference", detail: "one phase only" })
      expect(h.plansUsed()).toBe(1)
      const record = yield* h.record("p-phase-deny")
      expect(record.phases.map((p) => p.phase)).toEqual([1])
      expect(at(record, "guard_inference").map((i) => [i.phase, i.status])).toEqual([[1, "completed"], [2, "denied"]])
    }))
})

// ---------------------------------------------------------------------------
// A resumed HITL request
// ---------------------------------------------------------------------------

describe("operations on a resumed request", () => {
  it.effect("seed 003: after resume, the approved plan's tool calls go through tool hooks; the resumed phase and the next one are runs of the resume request", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          observeRuns(seen),
          Hook.make({
            name: "cap-quantity",
            beforeTool: (call, parameters) =>
              Effect.succeed(call.payload.capability === "execute_trade" ? { ...parameters, quantity: 1 } : parameters)
          }),
          Hook.make({ name: "gate", guard: { toolCall: (_call, proceed) => proceed } })
        ],
        approval: tradesNeedApproval,
        script: { plans: [plan([tradeStep("t1")], false), plan([quoteStep("q2")])], synthesis: "bought one" }
      })
      const suspended = yield* h.pipeline.process({ request: "buy then quote", requestId: "p-resume" })
      if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
      // Nothing executed before the human decided.
      expect(runsOf(seen, "tool_call")).toEqual([])
      expect(runsOf(seen, "phase").map((s) => s.result?.outcome)).toEqual(["completed"])

      const response = completed(yield* h.pipeline.resume(suspended.checkpoint.checkpointId, "approve"))
      expect(response.response).toBe("bought one")
      expect(response.phases.map((p) => [p.phase, p.steps.map((s) => [s.step_id, s.status, s.output])])).toEqual([
        [1, [["t1", "succeeded", { orderId: "mock-buy-ACME-1", status: "accepted (mock)" }]]],
        [2, [["q2", "succeeded", expect.objectContaining({ symbol: "ACME" })]]]
      ])

      const resumeRequest = runsOf(seen, "request").find((s) => s.call.payload.mode === "resume")
      expect(resumeRequest?.result?.outcome).toBe("completed")
      const phases = runsOf(seen, "phase").filter((s) => parentOf(s)?.callId === resumeRequest!.call.callId)
      expect(phases.map((s) => s.call.payload)).toEqual([{ phase: 1, resumed: true }, { phase: 2, resumed: false }])
      const toolCalls = runsOf(seen, "tool_call")
      expect(toolCalls.map((s) => [s.call.coordinates.stepId, s.call.coordinates.phase, parentOf(s)])).toEqual([
        ["t1", 1, refOf(phases[0]!.call)],
        ["q2", 2, refOf(phases[1]!.call)]
      ])
      expect(runsOf(seen, "tool_execution")[0]!.call.payload.parameters).toEqual({
        symbol: "ACME",
        quantity: 1,
        side: "buy"
      })
      // The resumed phase did not plan again; phase 2 planned, then synthesis.
      expect(
        runsOf(seen, "inference").slice(1).map((s) => [s.call.payload.purpose, s.call.coordinates.phase])
      ).toEqual([["planning", 2], ["synthesis", undefined]])
      expect(runsOf(seen, "approval_wait").map((s) => s.result?.outcome)).toEqual(["completed"])

      const record = yield* h.record("p-resume")
      expect(record.mode).toBe("resume")
      expect(at(record, "guard_tool_call").map((i) => [i.stepId, i.status])).toEqual([["t1", "completed"], [
        "q2",
        "completed"
      ]])
      expect(at(record, "before_tool").map((i) => [i.stepId, typeof i.contributionHash])).toEqual([
        ["t1", "string"],
        ["q2", "undefined"]
      ])
    }))

  it.effect("seed 003: approving a plan does not bypass guards: a guard denies the approved trade on resume", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [noTrades],
        approval: tradesNeedApproval,
        script: { plans: [plan([tradeStep("t1")])], synthesis: "not bought" }
      })
      const suspended = yield* h.pipeline.process({ request: "buy", requestId: "p-resume-deny" })
      if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
      const response = completed(yield* h.pipeline.resume(suspended.checkpoint.checkpointId, "approve"))
      expect(response.phases[0]!.steps[0]).toMatchObject({
        status: "denied",
        error: "tool_call denied by hook \"no-trades\" (refused): trades are not allowed"
      })
      expect(response.response).toBe("not bought")
    }))

  it.effect("seed 003: a request guard also guards the resumed run", () =>
    Effect.gen(function*() {
      let resumes = 0
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "no-resume",
            guard: {
              request: (call, proceed) => (call.payload.mode === "resume"
                ? Effect.zipRight(
                  Effect.sync(() => void resumes++),
                  Hook.deny("resumes are frozen")
                )
                : proceed)
            }
          })
        ],
        approval: tradesNeedApproval,
        script: { plans: [plan([tradeStep("t1")])], synthesis: "never" }
      })
      const suspended = yield* h.pipeline.process({ request: "buy", requestId: "p-resume-guard" })
      if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
      const error = yield* Effect.flip(h.pipeline.resume(suspended.checkpoint.checkpointId, "approve"))
      expect(error).toMatchObject({ _tag: "HookDenied", operation: "request", detail: "resumes are frozen" })
      expect(resumes).toBe(1)
      expect(textPrompts(h.prompts)).toEqual([])
      const record = yield* h.record("p-resume-guard")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookDenied" })
      expect(record.phases).toEqual([])
    }))
})

// ---------------------------------------------------------------------------
// Workflow mode
// ---------------------------------------------------------------------------

describe("operations in workflow mode", () => {
  it.effect("seed 003 / C20: executePlanWithSynthesis runs no stage hook, but tool and inference operation hooks fire", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          tracer("stages", calls),
          observeRuns(seen),
          noTrades,
          Hook.make({
            name: "ticker",
            beforeTool: (_c, parameters) => Effect.succeed({ ...parameters, symbol: "MSFT" })
          }),
          Hook.make({ name: "sign", afterInference: (_c, text) => Effect.succeed(`${text} (signed)`) })
        ],
        script: { plans: [], synthesis: "workflow draft" }
      })
      const response = yield* h.pipeline.executePlanWithSynthesis(
        { request: "quote and buy", requestId: "p-workflow" },
        plan([quoteStep("q1"), tradeStep("t1")])
      )
      expect(calls).toEqual([])
      expect(response.response).toBe("workflow draft (signed)")
      expect(response.rawDraft).toBe("workflow draft (signed)")
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status])).toEqual([["q1", "succeeded"], [
        "t1",
        "denied"
      ]])
      expect(response.phases[0]!.steps[0]!.output).toMatchObject({ symbol: "MSFT" })
      // No planning call; the synthesis call went through the inference hooks.
      expect(runsOf(seen, "inference").map((s) => [s.call.payload.purpose, s.result?.outcome])).toEqual([[
        "synthesis",
        "completed"
      ]])
      expect(runsOf(seen, "tool_call").map((s) => [s.call.coordinates.stepId, s.result?.outcome])).toEqual([
        ["q1", "completed"],
        ["t1", "denied"]
      ])
      expect(runsOf(seen, "tool_execution").map((s) => s.call.payload.parameters)).toEqual([{ symbol: "MSFT" }])
      const record = yield* h.record("p-workflow")
      expect(record.mode).toBe("workflow")
      const stages = new Set(record.hookInvocations.map((i) => i.stage))
      for (const stage of ["before_planning", "after_planning", "after_execution", "after_synthesis"] as const) {
        expect(stages.has(stage)).toBe(false)
      }
      expect(stages).toEqual(
        new Set([
          "around_request",
          "around_tool_call",
          "around_tool_execution",
          "guard_tool_call",
          "before_tool",
          "around_inference",
          "after_inference"
        ])
      )
    }))

  it.effect("seed 003: in workflow mode the request is one observed run (mode workflow), the parent its tool calls and synthesis name", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({ hooks: [observeRuns(seen)], script: { plans: [], synthesis: "ok" } })
      yield* h.pipeline.executePlanWithSynthesis(
        { request: "quote", requestId: "p-workflow-run" },
        plan([quoteStep("q1")])
      )
      const requests = runsOf(seen, "request")
      expect(requests.map((s) => [s.call.payload, s.result?.outcome])).toEqual([
        [{ mode: "workflow", request: "quote" }, "completed"]
      ])
      // Every parent a run names is a run the observers saw.
      const ids = new Set(seen.map((s) => s.call.callId))
      const dangling = seen.filter((s) => s.call.parent !== undefined && !ids.has(s.call.parent.callId))
      expect(dangling.map((s) => `${s.call.operation} → ${s.call.parent?.operation}`)).toEqual([])
    }))
})

describe("calls of runs nobody hooks", () => {
  it.effect("seed 003: a hooked run's call is frozen with its own copies, and names an unhooked parent run by reference only", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      // Only inference is observed: the request and phase runs are unhooked.
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "o", around: { inference: observerOf("o", seen) } })],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      yield* h.pipeline.process({ request: "quote", requestId: "p-unhooked-parent" })
      const inference = runsOf(seen, "inference")
      expect(inference.map((s) => s.call.payload.purpose)).toEqual(["planning", "synthesis"])
      for (const { call } of inference) {
        expect([Object.isFrozen(call), Object.isFrozen(call.coordinates), Object.isFrozen(call.payload)]).toEqual([
          true,
          true,
          true
        ])
        expect(call.coordinates).toEqual({
          requestId: "p-unhooked-parent",
          phase: call.payload.purpose === "planning" ? 1 : undefined
        })
        // The parent (a phase run, or the request run) is a frozen reference: its operation and id, nothing else.
        expect(Object.isFrozen(call.parent)).toBe(true)
        expect(Object.keys(call.parent ?? {})).toEqual(["operation", "callId"])
        expect(call.parent?.operation).toBe(call.payload.purpose === "planning" ? "phase" : "request")
        expect(call.parent?.callId).toMatch(new RegExp(`^${call.parent?.operation}-`))
      }
    }))
})
