/**
 * Before/after transforms (seed 002): chained in declaration order, each
 * gets the previous one's output — prompts and completions, tool arguments
 * and results, retrieval queries and documents, memory queries, loaded
 * records, records to store and stored ids. By default they fail closed
 * (seed 001 failure policy): a failing transform stops its operation
 * (`HookFailed`); fail-open ones are recorded and skipped. A wrong shape or
 * an undeclared rewrite is a contract failure of that hook.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, TestClock } from "effect"
import {
  type ExecutionRecord,
  Hook,
  type Json,
  Memory,
  type Operation,
  PipelineError,
  Retrieval
} from "effect-agent-pipeline"
import { makeHarness, plan, quoteStep, weatherStep } from "../support/Harness.js"
import {
  at,
  completed,
  makeSeamAgent,
  observerOf,
  probe,
  runsOf,
  type Seen,
  stepResultsIn,
  textPrompts,
  untyped
} from "./OperationsSupport.js"

const FAIL_CLOSED = (reason: ExecutionRecord.HookDecision["reason"]) =>
  ({ policy: "fail_closed", action: "terminate", reason }) as const
const FAIL_OPEN = (reason: ExecutionRecord.HookDecision["reason"]) =>
  ({ policy: "fail_open", action: "continue", reason }) as const

/** A transform hook that appends `mark` to every prompt. */
const appendToPrompt = (name: string, mark: string, options: Partial<Hook.Hook<never>> = {}): Hook.Hook<never> =>
  Hook.make({ name, ...options, beforeInference: (_call, prompt) => Effect.succeed(`${prompt}\n${mark}`) })

// ---------------------------------------------------------------------------
// Inference
// ---------------------------------------------------------------------------

describe("transforms: inference", () => {
  it.effect("seed 002: beforeInference transforms chain in order; the model receives the rewritten prompt (planning and synthesis)", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const inputs: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          appendToPrompt("a", "[a]"),
          Hook.make({
            name: "b",
            beforeInference: (_call, prompt) => Effect.sync(() => (inputs.push(prompt), `${prompt}\n[b]`))
          }),
          Hook.make({ name: "watch", around: { inference: observerOf("watch", seen) } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "quote", requestId: "t-prompt" }))
      expect(h.prompts).toHaveLength(2)
      for (const p of h.prompts) expect(p.prompt.endsWith("\n[a]\n[b]")).toBe(true)
      // b got a's output.
      expect(inputs.every((p) => p.endsWith("\n[a]"))).toBe(true)
      // The snapshot keeps the prompt as the pipeline built it.
      for (const run of runsOf(seen, "inference")) expect(run.call.payload.prompt).not.toContain("[a]")
      const record = yield* h.record("t-prompt")
      const runs = at(record, "before_inference")
      expect(runs.map((i) => [i.name, i.operation, i.status])).toEqual([
        ["a", "inference", "completed"],
        ["b", "inference", "completed"],
        ["a", "inference", "completed"],
        ["b", "inference", "completed"]
      ])
      expect(runs.every((i) => typeof i.contributionHash === "string")).toBe(true)
      expect(runs.map((i) => i.phase)).toEqual([1, 1, undefined, undefined])
    }))

  it.effect("seed 002: an afterInference rewrite of a planning response is what the plan is decoded from", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "ticker-map",
            afterInference: (call, text) =>
              Effect.succeed(call.payload.purpose === "planning" ? text.replaceAll("ACME", "MSFT") : text)
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-plan" }))
      expect(response.phases[0]!.plan.steps[0]!.parameters).toEqual({ symbol: "MSFT" })
      expect(response.phases[0]!.steps[0]).toMatchObject({ status: "succeeded", output: { symbol: "MSFT" } })
      const record = yield* h.record("t-plan")
      // Only the planning call's response changed.
      expect(at(record, "after_inference").map((i) => typeof i.contributionHash)).toEqual(["string", "undefined"])
    }))

  it.effect("seed 002: a planning response rewritten into something that is not a plan fails planning (invalid_plan)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "garble", afterInference: () => Effect.succeed("not json at all") })],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "t-plan-bad" }))
      expect(error).toMatchObject({ _tag: "PlanningError", reason: "invalid_plan", phase: 1 })
    }))

  it.effect("seed 002: afterInference transforms chain over the synthesis draft; AfterSynthesis gets the rewritten draft", () =>
    Effect.gen(function*() {
      const drafts: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "one",
            afterInference: (c, text) => Effect.succeed(c.payload.purpose === "synthesis" ? `${text}+1` : text)
          }),
          Hook.make({
            name: "two",
            afterInference: (c, text) => Effect.succeed(c.payload.purpose === "synthesis" ? `${text}+2` : text)
          }),
          Hook.make({
            name: "final",
            afterSynthesis: (_ctx, text) => Effect.sync(() => (drafts.push(text), `${text}!`))
          })
        ],
        script: { plans: [plan([])], synthesis: "draft" }
      })
      const response = completed(yield* h.pipeline.process({ request: "hi", requestId: "t-draft" }))
      expect(drafts).toEqual(["draft+1+2"])
      expect(response.rawDraft).toBe("draft+1+2")
      expect(response.response).toBe("draft+1+2!")
      const record = yield* h.record("t-draft")
      expect(record.rawDraft).toBe("draft+1+2")
      expect(record.finalResponse).toBe("draft+1+2!")
    }))

  it.effect("seed 002: a failing inference transform fails closed by default: HookFailed (point, reason, cause); the model gets nothing", () =>
    Effect.gen(function*() {
      const crash = new Error("scrubber down")
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "scrubber", beforeInference: () => Effect.fail(crash) })],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "quote", requestId: "t-fail" }))
      expect(error).toBeInstanceOf(PipelineError.HookFailed)
      expect(error).toMatchObject({
        _tag: "HookFailed",
        hookName: "scrubber",
        point: "before_inference",
        reason: "hook_failed",
        detail: "scrubber down"
      })
      const cause = error._tag === "HookFailed" ? error.cause : undefined
      expect(cause instanceof Error && cause.message).toBe("scrubber down")
      expect(h.prompts).toEqual([])
      const record = yield* h.record("t-fail")
      expect(record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookFailed" })
      expect(at(record, "before_inference")).toEqual([
        expect.objectContaining({
          name: "scrubber",
          status: "failed",
          error: "scrubber down",
          decision: FAIL_CLOSED("hook_error")
        })
      ])
    }))

  it.effect("seed 002: a fail-open inference transform that fails is recorded and skipped: the previous value is kept and the chain goes on", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "flaky", failure: "fail_open", beforeInference: () => Effect.fail("translator offline") }),
          appendToPrompt("after", "[after]")
        ],
        script: { plans: [plan([])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "hi", requestId: "t-open" }))
      for (const p of h.prompts) expect(p.prompt.endsWith("\n[after]")).toBe(true)
      const record = yield* h.record("t-open")
      expect(at(record, "before_inference").map((i) => [i.name, i.status, i.decision])).toEqual([
        ["flaky", "failed", FAIL_OPEN("hook_error")],
        ["after", "completed", undefined],
        ["flaky", "failed", FAIL_OPEN("hook_error")],
        ["after", "completed", undefined]
      ])
    }))

  it.effect("seed 002: an inference transform returning the wrong shape (JavaScript) fails closed with reason wrong_shape", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [untyped({ name: "numeric", afterInference: () => Effect.succeed(42) })],
        script: { plans: [plan([])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "hi", requestId: "t-shape" }))
      expect(error).toMatchObject({
        _tag: "HookFailed",
        hookName: "numeric",
        point: "after_inference",
        reason: "wrong_shape",
        detail: "after_inference must return a string"
      })
    }))

  it.effect("seed 001/002: a prompt rewrite without the declared prompt_rewrite capability is refused (undeclared_contribution); the model never sees it", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [appendToPrompt("sneaky", "[sneaky]", { capabilities: ["completion_rewrite"] })],
        script: { plans: [plan([])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "hi", requestId: "t-undeclared" }))
      expect(error).toMatchObject({
        _tag: "HookFailed",
        hookName: "sneaky",
        point: "before_inference",
        reason: "undeclared_contribution"
      })
      expect(h.prompts).toEqual([])
      const record = yield* h.record("t-undeclared")
      expect(at(record, "before_inference")).toEqual([
        expect.objectContaining({ status: "failed", decision: FAIL_CLOSED("undeclared_contribution") })
      ])
      expect(at(record, "before_inference")[0]!.error).toContain("without the \"prompt_rewrite\" capability")
    }))

  it.effect("seed 001/002: a fail-open undeclared rewrite is refused and the operation goes on with the value unchanged", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          appendToPrompt("sneaky", "[sneaky]", { capabilities: ["completion_rewrite"], failure: "fail_open" }),
          appendToPrompt("declared", "[declared]", { capabilities: ["prompt_rewrite"] })
        ],
        script: { plans: [plan([])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "hi", requestId: "t-undeclared-open" }))
      for (const p of h.prompts) {
        expect(p.prompt).not.toContain("[sneaky]")
        expect(p.prompt.endsWith("\n[declared]")).toBe(true)
      }
      const record = yield* h.record("t-undeclared-open")
      expect(at(record, "before_inference").filter((i) => i.name === "sneaky").map((i) => i.decision)).toEqual([
        FAIL_OPEN("undeclared_contribution"),
        FAIL_OPEN("undeclared_contribution")
      ])
    }))

  it.effect("seed 001/002: returning the value unchanged needs no capability and records no contribution", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "reader", capabilities: [], beforeInference: (_c, prompt) => Effect.succeed(prompt) })
        ],
        script: { plans: [plan([])], synthesis: "ok" }
      })
      completed(yield* h.pipeline.process({ request: "hi", requestId: "t-same" }))
      const record = yield* h.record("t-same")
      expect(at(record, "before_inference").map((i) => [i.status, i.contributionHash])).toEqual([
        ["completed", undefined],
        ["completed", undefined]
      ])
    }))
})

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

describe("transforms: tools", () => {
  it.effect("seed 002: beforeTool transforms chain over the arguments; the tool receives the rewritten ones", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const observe = observerOf("watch", seen)
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "map",
            beforeTool: (_call, parameters) => Effect.succeed({ ...parameters, symbol: "msft" })
          }),
          Hook.make({
            name: "upper",
            beforeTool: (_call, parameters) =>
              Effect.succeed({ ...parameters, symbol: String(parameters.symbol).toUpperCase() })
          }),
          Hook.make({ name: "watch", around: { toolCall: observe, toolExecution: observe } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-args" }))
      expect(response.phases[0]!.steps[0]).toMatchObject({ status: "succeeded", output: { symbol: "MSFT" } })
      // The plan is unchanged: the rewrite belongs to the call.
      expect(response.phases[0]!.plan.steps[0]!.parameters).toEqual({ symbol: "ACME" })
      expect(runsOf(seen, "tool_call")[0]!.call.payload.parameters).toEqual({ symbol: "ACME" })
      expect(runsOf(seen, "tool_execution")[0]!.call.payload.parameters).toEqual({ symbol: "MSFT" })
      const record = yield* h.record("t-args")
      expect(at(record, "before_tool").map((i) => [i.name, i.operation, i.stepId, i.phase, typeof i.contributionHash]))
        .toEqual([
          ["map", "tool_call", "q1", 1, "string"],
          ["upper", "tool_call", "q1", 1, "string"]
        ])
    }))

  it.effect("seed 002: afterTool transforms chain over the result; the step's output — and what the model sees — is the rewritten one", () =>
    Effect.gen(function*() {
      const inputs: Array<Hook.ToolOutcome> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "withhold-price",
            afterTool: (call, result) =>
              Effect.succeed(
                call.payload.capability === "stock_quote" && "output" in result
                  ? { output: { price: "withheld" } }
                  : result
              )
          }),
          Hook.make({
            name: "stamp",
            afterTool: (_call, result) =>
              Effect.sync(() => {
                inputs.push(result)
                return "output" in result && typeof result.output === "object" && result.output !== null &&
                    !Array.isArray(result.output)
                  ? { output: { ...result.output, reviewed: true } }
                  : result
              })
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-result" }))
      expect(inputs).toEqual([{ output: { price: "withheld" } }])
      expect(response.phases[0]!.steps[0]).toMatchObject({
        status: "succeeded",
        output: { price: "withheld", reviewed: true }
      })
      const [synthesis] = textPrompts(h.prompts)
      expect(stepResultsIn(synthesis!)?.[0]?.output).toEqual({ price: "withheld", reviewed: true })
      expect(synthesis).not.toContain("\"currency\"")
    }))

  it.effect("seed 002: afterTool may rewrite a tool's error — or recover from it with an output", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "errors",
            afterTool: (call, result) =>
              Effect.succeed(
                "error" in result
                  ? call.coordinates.stepId === "bad1"
                    ? { error: "quote service unavailable" }
                    : { output: { fallback: true } }
                  : result
              )
          })
        ],
        script: { plans: [plan([quoteStep("bad1", "not a ticker"), quoteStep("bad2", "also bad")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-error" }))
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status, s.error, s.output])).toEqual([
        ["bad1", "failed", "quote service unavailable", undefined],
        ["bad2", "succeeded", undefined, { fallback: true }]
      ])
    }))

  it.effect("seed 002: afterTool sees a failing tool's error text, and may turn a success into an error", () =>
    Effect.gen(function*() {
      const inputs: Array<Hook.ToolOutcome> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "block-weather",
            afterTool: (call, result) =>
              Effect.sync(() => {
                inputs.push(result)
                return call.payload.capability === "weather_forecast" ? { error: "forecasts are embargoed" } : result
              })
          })
        ],
        script: { plans: [plan([quoteStep("bad", "nope"), weatherStep("w1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "weather", requestId: "t-error-2" }))
      const errorInput = inputs.find((i) => "error" in i)
      expect(errorInput !== undefined && "error" in errorInput && errorInput.error.startsWith("invalid_parameters:"))
        .toBe(true)
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status])).toEqual([["bad", "failed"], ["w1", "failed"]])
      expect(response.phases[0]!.steps[1]!.error).toBe("forecasts are embargoed")
    }))

  it.effect("seed 002: a failing afterTool transform fails closed: the step fails with the HookFailed message, its output never reaches the model; the request completes", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "redactor", afterTool: () => Effect.fail(new Error("redactor crashed")) })],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-tool-fail" }))
      const step = response.phases[0]!.steps[0]!
      expect(step.status).toBe("failed")
      expect(step.output).toBeUndefined()
      expect(step.error).toBe(
        "fail-closed hook \"redactor\" stopped the request at after_tool (hook_failed): redactor crashed"
      )
      const [synthesis] = textPrompts(h.prompts)
      expect(synthesis).not.toContain("\"price\"")
      const record = yield* h.record("t-tool-fail")
      expect(record.lifecycle?.status).toBe("succeeded")
      expect(at(record, "after_tool")).toEqual([
        expect.objectContaining({
          name: "redactor",
          stepId: "q1",
          status: "failed",
          decision: FAIL_CLOSED("hook_error")
        })
      ])
    }))

  it.effect("seed 002: a failing beforeTool transform fails the step closed before the tool runs", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "validator", beforeTool: () => Effect.fail("arguments rejected") }),
          Hook.make({ name: "watch", around: { toolExecution: observerOf("watch", seen) } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-args-fail" }))
      expect(response.phases[0]!.steps[0]).toMatchObject({
        status: "failed",
        error: "fail-closed hook \"validator\" stopped the request at before_tool (hook_failed): arguments rejected"
      })
      expect(seen).toEqual([])
    }))

  it.effect("seed 002: a tool transform returning the wrong shape (JavaScript) fails the step with reason wrong_shape", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          untyped({ name: "numeric", afterTool: () => Effect.succeed(42) }),
          untyped({
            name: "listy",
            beforeTool: (call: Operation.Call<"tool_call">, p: unknown) =>
              Effect.succeed(call.coordinates.stepId === "w1" ? [p] : p)
          })
        ],
        script: { plans: [plan([quoteStep("q1"), weatherStep("w1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-tool-shape" }))
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status, s.error])).toEqual([
        [
          "q1",
          "failed",
          "fail-closed hook \"numeric\" stopped the request at after_tool (wrong_shape): after_tool must return { output } (JSON) or { error } (a string)"
        ],
        [
          "w1",
          "failed",
          "fail-closed hook \"listy\" stopped the request at before_tool (wrong_shape): before_tool must return a JSON object of arguments"
        ]
      ])
    }))

  it.effect("seed 002: a fail-open afterTool transform that fails keeps the tool's result; the chain goes on", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "flaky", failure: "fail_open", afterTool: () => Effect.fail("audit log full") }),
          Hook.make({
            name: "tag",
            afterTool: (_c, result) =>
              Effect.succeed("output" in result ? { output: { wrapped: result.output } } : result)
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-tool-open" }))
      const output: Json.Json | undefined = response.phases[0]!.steps[0]!.output
      expect(output).toMatchObject({ wrapped: { symbol: "ACME", currency: "USD" } })
      const record = yield* h.record("t-tool-open")
      expect(at(record, "after_tool").map((i) => [i.name, i.status, i.decision])).toEqual([
        ["flaky", "failed", FAIL_OPEN("hook_error")],
        ["tag", "completed", undefined]
      ])
    }))

  it.effect("seed 001/002: tool rewrites need tool_input_rewrite / tool_output_rewrite: an undeclared one fails the step (undeclared_contribution), the tool never runs", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "out-only",
            capabilities: ["tool_output_rewrite"],
            beforeTool: (_c, parameters) => Effect.succeed({ ...parameters, symbol: "MSFT" }),
            afterTool: (_c, result) => Effect.succeed(result)
          }),
          Hook.make({ name: "watch", around: { toolExecution: observerOf("watch", seen) } })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-tool-undeclared" }))
      const step = response.phases[0]!.steps[0]!
      expect(step.status).toBe("failed")
      expect(step.error).toContain(
        "fail-closed hook \"out-only\" stopped the request at before_tool (undeclared_contribution)"
      )
      expect(seen).toEqual([])
    }))

  it.effect("seed 001/002: a transform overrunning its deadline fails the step closed (timed_out)", () =>
    Effect.gen(function*() {
      const entered = yield* Deferred.make<void>()
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "slow-scrub",
            execution: Hook.deadline("1 second"),
            beforeTool: () => Effect.zipRight(Deferred.succeed(entered, undefined), Effect.never)
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "quote", requestId: "t-deadline" }))
      yield* Deferred.await(entered)
      yield* TestClock.adjust("1 second")
      const response = completed(yield* Fiber.join(fiber))
      expect(response.phases[0]!.steps[0]).toMatchObject({ status: "failed" })
      expect(response.phases[0]!.steps[0]!.error).toContain(
        "\"slow-scrub\" stopped the request at before_tool (timed_out)"
      )
      const record = yield* h.record("t-deadline")
      expect(at(record, "before_tool")).toEqual([
        expect.objectContaining({ status: "timed_out", execution: "deadline", decision: FAIL_CLOSED("timed_out") })
      ])
    }))
})

describe("transforms: capabilities and policies", () => {
  it.effect("seed 001/002: every model and tool rewrite needs its capability: declared none (fail open) → each rewrite refused, values unchanged", () =>
    Effect.gen(function*() {
      const none = { capabilities: [], failure: "fail_open" } as const
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "prompt", ...none, beforeInference: (_c, prompt) => Effect.succeed(`${prompt}\n[x]`) }),
          Hook.make({
            name: "completion",
            ...none,
            afterInference: (c, text) => Effect.succeed(c.payload.purpose === "synthesis" ? "[x]" : text)
          }),
          Hook.make({
            name: "args",
            ...none,
            beforeTool: (_c, parameters) => Effect.succeed({ ...parameters, symbol: "MSFT" })
          }),
          Hook.make({ name: "result", ...none, afterTool: () => Effect.succeed({ output: "[x]" }) })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "draft" }
      })
      const response = completed(yield* h.pipeline.process({ request: "quote", requestId: "t-caps" }))
      for (const p of h.prompts) expect(p.prompt).not.toContain("[x]")
      expect(response.rawDraft).toBe("draft")
      expect(response.phases[0]!.steps[0]).toMatchObject({ status: "succeeded", output: { symbol: "ACME" } })
      const record = yield* h.record("t-caps")
      const refused = record.hookInvocations.filter((i) => i.decision?.reason === "undeclared_contribution")
      expect(refused.map((i) => [i.stage, i.status, i.decision?.policy])).toEqual(
        expect.arrayContaining([
          ["before_inference", "failed", "fail_open"],
          ["after_inference", "failed", "fail_open"],
          ["before_tool", "failed", "fail_open"],
          ["after_tool", "failed", "fail_open"]
        ])
      )
      const needs = Object.fromEntries(refused.map((i) => [i.stage, i.error]))
      expect(needs.before_inference).toContain("\"prompt_rewrite\"")
      expect(needs.after_inference).toContain("\"completion_rewrite\"")
      expect(needs.before_tool).toContain("\"tool_input_rewrite\"")
      expect(needs.after_tool).toContain("\"tool_output_rewrite\"")
    }))

  it.effect("seed 001/002: a transform cannot run detached: a background transform is refused at construction", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        makeHarness({
          hooks: [Hook.make({ name: "late", execution: Hook.background, afterTool: (_c, r) => Effect.succeed(r) })]
        })
      )
      expect(error).toMatchObject({
        _tag: "InvalidHookSubscription",
        reason: "policy_not_applicable",
        hookName: "late"
      })
    }))

  it.effect("seed 001/002: a transform that dies is a panic: recorded propagate_panic, and the request dies", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [Hook.make({ name: "buggy", beforeInference: () => Effect.die(new Error("boom")) })],
        script: { plans: [plan([])], synthesis: "never" }
      })
      const exit = yield* Effect.exit(h.pipeline.process({ request: "hi", requestId: "t-panic" }))
      expect(exit._tag === "Failure" && exit.cause._tag).toBe("Die")
      const record = yield* h.record("t-panic")
      expect(at(record, "before_inference")).toEqual([
        expect.objectContaining({
          status: "failed",
          decision: { policy: "fail_closed", action: "propagate_panic", reason: "panic" }
        })
      ])
    }))
})

// ---------------------------------------------------------------------------
// Retrieval
// ---------------------------------------------------------------------------

describe("transforms: retrieval", () => {
  it.scoped("seed 002: beforeRetrieval rewrites the query, afterRetrieval filters and re-ranks the documents (chained)", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<ReadonlyArray<Operation.Document>, unknown>> = []
      const seen: Array<Seen> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Retrieval.retrieve("stock news"), outcomes),
          Hook.make({
            name: "expand",
            beforeRetrieval: (_c, query) => Effect.succeed(query.replace("stock news", "ACME"))
          }),
          Hook.make({ name: "focus", beforeRetrieval: (_c, query) => Effect.succeed(`${query} dividend`) }),
          Hook.make({
            name: "no-internal",
            afterRetrieval: (_c, documents) =>
              Effect.succeed(documents.filter((d) => !d.content.startsWith("Internal")))
          }),
          Hook.make({ name: "reverse", afterRetrieval: (_c, documents) => Effect.succeed([...documents].reverse()) }),
          Hook.make({ name: "watch", around: { retrieval: observerOf("watch", seen) } })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-retrieval" }))
      // "ACME dividend" finds d2 (both words), then d1 and d4; d4 is filtered out; the rest reversed.
      expect(outcomes.map((o) => Either.map(o, (docs) => docs.map((d) => d.id)))).toEqual([Either.right(["d1", "d2"])])
      expect(runsOf(seen, "retrieval")[0]!.call.payload).toEqual({ retriever: "memory", query: "stock news", limit: 5 })
      const record = yield* agent.test.record("t-retrieval")
      expect(
        record.hookInvocations
          .filter((i) => i.stage === "before_retrieval" || i.stage === "after_retrieval")
          .map((i) => [i.stage, i.name, i.operation, typeof i.contributionHash])
      ).toEqual([
        ["before_retrieval", "expand", "retrieval", "string"],
        ["before_retrieval", "focus", "retrieval", "string"],
        ["after_retrieval", "no-internal", "retrieval", "string"],
        ["after_retrieval", "reverse", "retrieval", "string"]
      ])
    }))

  it.scoped("seed 002: a failing retrieval transform fails Retrieval.retrieve with HookFailed", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<ReadonlyArray<Operation.Document>, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Retrieval.retrieve("ACME"), outcomes),
          Hook.make({ name: "reranker", afterRetrieval: () => Effect.fail("reranker model missing") })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-retrieval-fail" }))
      const [outcome] = outcomes
      expect(Either.isLeft(outcome!) && outcome.left).toMatchObject({
        _tag: "HookFailed",
        hookName: "reranker",
        point: "after_retrieval",
        reason: "hook_failed",
        detail: "reranker model missing"
      })
    }))

  it.scoped("seed 002: documents of the wrong shape (JavaScript) fail the retrieval with reason wrong_shape", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<ReadonlyArray<Operation.Document>, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Retrieval.retrieve("ACME"), outcomes),
          untyped({ name: "ids", afterRetrieval: () => Effect.succeed([{ id: 1 }]) })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-retrieval-shape" }))
      const [outcome] = outcomes
      expect(Either.isLeft(outcome!) && outcome.left).toMatchObject({
        _tag: "HookFailed",
        point: "after_retrieval",
        reason: "wrong_shape"
      })
    }))

  it.scoped("seed 001/002: filtering documents needs documents_rewrite: a fail-open undeclared filter is refused, the documents are unchanged", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<ReadonlyArray<Operation.Document>, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Retrieval.retrieve("ACME"), outcomes),
          Hook.make({
            name: "query-only",
            capabilities: ["query_rewrite"],
            failure: "fail_open",
            afterRetrieval: (_c, documents) => Effect.succeed(documents.slice(0, 1))
          })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-retrieval-undeclared" }))
      expect(outcomes.map((o) => Either.map(o, (docs) => docs.length))).toEqual([Either.right(3)])
      const record = yield* agent.test.record("t-retrieval-undeclared")
      expect(at(record, "after_retrieval")).toEqual([
        expect.objectContaining({ status: "failed", decision: FAIL_OPEN("undeclared_contribution") })
      ])
    }))
})

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

describe("transforms: memory", () => {
  it.scoped("seed 002: beforeMemoryLoad rewrites the query, afterMemoryLoad filters the records", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<ReadonlyArray<Operation.MemoryRecord>, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.load("user-1", "euro"), outcomes),
          Hook.make({
            name: "normalize",
            beforeMemoryLoad: (_c, query) => Effect.succeed({ ...query, query: query.query.replace("euro", "EUR") })
          }),
          Hook.make({
            name: "no-private",
            afterMemoryLoad: (_c, records) => Effect.succeed(records.filter((r) => r.metadata?.private !== true))
          })
        ]
      })
      // Seeded outside any request: a plain store call.
      yield* agent.memory.store("user-1", { content: "prefers EUR" })
      yield* agent.memory.store("user-1", { content: "EUR account number 42", metadata: { private: true } })
      yield* agent.memory.store("user-1", { content: "lives in Lisbon" })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-mem-load" }))
      expect(outcomes.map((o) => Either.map(o, (records) => records.map((r) => r.content)))).toEqual([
        Either.right(["prefers EUR"])
      ])
      const record = yield* agent.test.record("t-mem-load")
      expect(at(record, "before_memory_load").map((i) => [i.name, i.operation, typeof i.contributionHash])).toEqual([
        ["normalize", "memory_load", "string"]
      ])
      expect(at(record, "after_memory_load").map((i) => [i.name, typeof i.contributionHash])).toEqual([[
        "no-private",
        "string"
      ]])
    }))

  it.scoped("seed 002: beforeMemoryStore scrubs a record before it is stored (chained); afterMemoryStore sees the stored id", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<string, unknown>> = []
      const ids: Array<string> = []
      const seen: Array<Seen> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.store("user-1", { content: "my ssn is 123-45-6789" }), outcomes),
          Hook.make({
            name: "scrub",
            beforeMemoryStore: (_c, record) =>
              Effect.succeed({ ...record, content: record.content.replace(/\d{3}-\d{2}-\d{4}/g, "[ssn]") })
          }),
          Hook.make({
            name: "mark",
            beforeMemoryStore: (_c, record) =>
              Effect.succeed({ ...record, metadata: { ...record.metadata, scrubbed: true } })
          }),
          Hook.make({ name: "audit", afterMemoryStore: (_c, id) => Effect.sync(() => (ids.push(id), id)) }),
          Hook.make({ name: "watch", around: { memoryStore: observerOf("watch", seen) } })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-mem-store" }))
      expect(outcomes).toEqual([Either.right("mem-1")])
      expect(ids).toEqual(["mem-1"])
      expect(yield* agent.memory.load("user-1", { query: "", limit: 10 })).toEqual([
        { id: "mem-1", content: "my ssn is [ssn]", metadata: { scrubbed: true } }
      ])
      // The snapshot is what the caller asked to store.
      expect(runsOf(seen, "memory_store")[0]!.call.payload.record).toEqual({ content: "my ssn is 123-45-6789" })
      const record = yield* agent.test.record("t-mem-store")
      expect(at(record, "before_memory_store").map((i) => [i.name, typeof i.contributionHash])).toEqual([
        ["scrub", "string"],
        ["mark", "string"]
      ])
      expect(at(record, "after_memory_store").map((i) => [i.name, i.status, i.contributionHash])).toEqual([
        ["audit", "completed", undefined]
      ])
    }))

  it.scoped("seed 002: a failing beforeMemoryStore transform fails Memory.store with HookFailed and nothing is stored", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<string, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.store("user-1", { content: "my ssn is 123-45-6789" }), outcomes),
          Hook.make({ name: "scrub", beforeMemoryStore: () => Effect.fail("pii detector offline") })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-mem-store-fail" }))
      const [outcome] = outcomes
      expect(Either.isLeft(outcome!) && outcome.left).toMatchObject({
        _tag: "HookFailed",
        hookName: "scrub",
        point: "before_memory_store",
        reason: "hook_failed"
      })
      expect(yield* agent.memory.load("user-1", { query: "", limit: 10 })).toEqual([])
    }))

  it.scoped("seed 002: a failing afterMemoryStore transform aborts the call (HookFailed) after the store completed", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<string, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.store("user-1", { content: "note" }), outcomes),
          Hook.make({ name: "audit", afterMemoryStore: () => Effect.fail("audit trail unavailable") })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-mem-after-fail" }))
      const [outcome] = outcomes
      expect(Either.isLeft(outcome!) && outcome.left).toMatchObject({ _tag: "HookFailed", point: "after_memory_store" })
      expect((yield* agent.memory.load("user-1", { query: "", limit: 10 })).map((r) => r.content)).toEqual(["note"])
    }))

  it.scoped("seed 001/002: rewriting a record to store needs memory_rewrite: an undeclared scrub is refused (fail closed: nothing stored)", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<string, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.store("user-1", { content: "secret" }), outcomes),
          Hook.make({
            name: "query-only",
            capabilities: ["query_rewrite"],
            beforeMemoryStore: (_c, record) => Effect.succeed({ ...record, content: "[scrubbed]" })
          })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-mem-undeclared" }))
      const [outcome] = outcomes
      expect(Either.isLeft(outcome!) && outcome.left).toMatchObject({
        _tag: "HookFailed",
        point: "before_memory_store",
        reason: "undeclared_contribution"
      })
      expect(yield* agent.memory.load("user-1", { query: "", limit: 10 })).toEqual([])
    }))

  it.scoped("seed 001/002: every retrieval and memory rewrite needs its capability: declared none (fail open) → each rewrite refused", () =>
    Effect.gen(function*() {
      const none = { capabilities: [], failure: "fail_open" } as const
      const outcomes: Array<
        Either.Either<[ReadonlyArray<Operation.Document>, string, ReadonlyArray<Operation.MemoryRecord>], unknown>
      > = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(
            Effect.all([
              Retrieval.retrieve("ACME dividend"),
              Memory.store("u", { content: "note" }),
              Memory.load("u", "note")
            ]),
            outcomes
          ),
          Hook.make({ name: "q", ...none, beforeRetrieval: () => Effect.succeed("weather") }),
          Hook.make({ name: "docs", ...none, afterRetrieval: () => Effect.succeed([]) }),
          Hook.make({ name: "mq", ...none, beforeMemoryLoad: (_c, q) => Effect.succeed({ ...q, query: "nothing" }) }),
          Hook.make({ name: "mrecords", ...none, afterMemoryLoad: () => Effect.succeed([]) }),
          Hook.make({ name: "mstore", ...none, beforeMemoryStore: () => Effect.succeed({ content: "[x]" }) })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-seam-caps" }))
      const [outcome] = outcomes
      expect(Either.isRight(outcome!)).toBe(true)
      if (Either.isRight(outcome!)) {
        const [documents, id, records] = outcome.right
        expect(documents.map((d) => d.id)).toEqual(["d2", "d1", "d4"])
        expect(id).toBe("mem-1")
        expect(records.map((r) => r.content)).toEqual(["note"])
      }
      const record = yield* agent.test.record("t-seam-caps")
      const needs = Object.fromEntries(
        record.hookInvocations.filter((i) => i.decision?.reason === "undeclared_contribution").map((
          i
        ) => [i.stage, i.error])
      )
      expect(Object.keys(needs).sort()).toEqual([
        "after_memory_load",
        "after_retrieval",
        "before_memory_load",
        "before_memory_store",
        "before_retrieval"
      ])
      expect(needs.before_retrieval).toContain("\"query_rewrite\"")
      expect(needs.before_memory_load).toContain("\"query_rewrite\"")
      expect(needs.after_retrieval).toContain("\"documents_rewrite\"")
      expect(needs.after_memory_load).toContain("\"memory_rewrite\"")
      expect(needs.before_memory_store).toContain("\"memory_rewrite\"")
    }))

  it.scoped("seed 001/002: a memory query rewrite with the declared query_rewrite capability is allowed", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<ReadonlyArray<Operation.MemoryRecord>, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.load("user-1", "anything"), outcomes),
          Hook.make({
            name: "all",
            capabilities: ["query_rewrite"],
            beforeMemoryLoad: (_c, q) => Effect.succeed({ ...q, query: "" })
          })
        ]
      })
      yield* agent.memory.store("user-1", { content: "prefers EUR" })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "t-mem-declared" }))
      expect(outcomes.map((o) => Either.map(o, (records) => records.length))).toEqual([Either.right(1)])
    }))
})
