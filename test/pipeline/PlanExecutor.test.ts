/**
 * The plan executor: a validated plan runs as a dependency DAG with bounded
 * concurrency; every step gets a result (succeeded / failed / skipped) and a
 * duration; tool failures and defects never fail the request.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Queue, Schema, TestClock } from "effect"
import { type ExecutionRecord, Json, RoutingPlan, ToolRegistry } from "effect-agent-pipeline"
import { allTools, NAMESPACE } from "../../examples/shared/DemoTools.js"
import { convertStep, plan, quoteStep, weatherStep } from "../support/Harness.js"
import { PlanExecutor } from "../support/Internal.js"

type StepResult = ExecutionRecord.StepResult

const TEST_NS = "test-tools"

// ---- test tools --------------------------------------------------------------

const Gate = Tool.make("gate", {
  description: "Blocks until the test releases it",
  parameters: { id: Schema.String },
  success: Schema.Struct({ id: Schema.String })
})

// `Schema.Unknown` rather than `Json.Json`: see the registry test at the end of this file.
const Echo = Tool.make("echo", {
  description: "Returns its value",
  parameters: { value: Schema.Unknown },
  success: Schema.Struct({ value: Schema.Unknown })
})

const Refuse = Tool.make("refuse", {
  description: "Always fails with a typed error",
  parameters: { why: Schema.String },
  success: Schema.String,
  failure: Schema.String
})

const Explode = Tool.make("explode", {
  description: "Dies (a defect)",
  parameters: { how: Schema.Literal("die", "throw") },
  success: Schema.String
})

const Nap = Tool.make("nap", {
  description: "Sleeps for `ms` milliseconds",
  parameters: { ms: Schema.Number },
  success: Schema.Struct({ slept: Schema.Number })
})

interface Latch {
  readonly started: Queue.Queue<string>
  readonly release: Deferred.Deferred<void>
  readonly inFlight: () => number
  readonly maxInFlight: () => number
  readonly entry: ToolRegistry.ToolEntry
}

const makeLatch: Effect.Effect<Latch> = Effect.gen(function*() {
  const started = yield* Queue.unbounded<string>()
  const release = yield* Deferred.make<void>()
  let inFlight = 0
  let maxInFlight = 0
  const entry = ToolRegistry.entry({
    namespace: TEST_NS,
    agent: "latch",
    tool: Gate,
    handler: ({ id }) =>
      Effect.gen(function*() {
        inFlight += 1
        maxInFlight = Math.max(maxInFlight, inFlight)
        yield* Queue.offer(started, id)
        yield* Deferred.await(release)
        inFlight -= 1
        return { id }
      })
  })
  return { started, release, inFlight: () => inFlight, maxInFlight: () => maxInFlight, entry }
})

const echoCalls: Array<Json.Json> = []
const echo = ToolRegistry.entry({
  namespace: TEST_NS,
  agent: "echo",
  tool: Echo,
  handler: ({ value }) => Effect.sync(() => (echoCalls.push(value as Json.Json), { value }))
})

const refuse = ToolRegistry.entry({
  namespace: TEST_NS,
  agent: "refuser",
  tool: Refuse,
  handler: ({ why }) => Effect.fail(`out of stock: ${why}`)
})

const explode = ToolRegistry.entry({
  namespace: TEST_NS,
  agent: "bomb",
  tool: Explode,
  handler: ({ how }) => {
    if (how === "throw") throw new Error("thrown synchronously")
    return Effect.die(new Error("kaboom"))
  }
})

const nap = ToolRegistry.entry({
  namespace: TEST_NS,
  agent: "sleeper",
  tool: Nap,
  handler: ({ ms }) => Effect.as(Effect.sleep(ms), { slept: ms })
})

const step = (
  stepId: string,
  agent: string,
  capability: string,
  parameters: Json.JsonObject,
  extra: Record<string, unknown> = {}
) => ({
  step_id: stepId,
  namespace: TEST_NS,
  agent,
  capability,
  parameters,
  ...extra
})
const gateStep = (stepId: string, extra: Record<string, unknown> = {}) =>
  step(stepId, "latch", "gate", { id: stepId }, extra)
const echoStep = (stepId: string, value: Json.Json, extra: Record<string, unknown> = {}) =>
  step(stepId, "echo", "echo", { value }, extra)
const refuseStep = (stepId: string, extra: Record<string, unknown> = {}) =>
  step(stepId, "refuser", "refuse", { why: stepId }, extra)
const napStep = (stepId: string, ms: number, extra: Record<string, unknown> = {}) =>
  step(stepId, "sleeper", "nap", { ms }, extra)

/** Decodes a wire-form plan (defaults applied). The executor expects a validated plan; these are. */
const decodePlan = (raw: unknown) => Effect.orDie(RoutingPlan.decodeUnknown(raw))

const registry = (extra: ReadonlyArray<ToolRegistry.ToolEntry> = []) =>
  ToolRegistry.make([...allTools, echo, refuse, explode, nap, ...extra])

const byId = (results: ReadonlyArray<StepResult>, id: string): StepResult => {
  const found = results.find((r) => r.step_id === id)
  if (found === undefined) throw new Error(`no result for ${id}`)
  return found
}

/** An earlier phase's stock_quote result. */
const priorQuote = (
  stepId: string,
  status: StepResult["status"],
  output?: Json.Json
): StepResult => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "stock-service",
  capability: "stock_quote",
  status,
  ...(output === undefined ? {} : { output }),
  ...(status === "succeeded" ? {} : { error: "tool_failed: nope" }),
  startedAt: 0,
  duration: 1
})

/** Lets every runnable fiber run for a while (a third tool call would start here if it could). */
const settle = Effect.repeatN(Effect.yieldNow(), 100)

describe("PlanExecutor.execute: concurrency", () => {
  it.effect("independent steps run concurrently but never more than `concurrency` at once", () =>
    Effect.gen(function*() {
      const latch = yield* makeLatch
      const tools = yield* registry([latch.entry])
      const p = yield* decodePlan(plan(["a", "b", "c", "d", "e", "f"].map((id) => gateStep(id))))
      const fiber = yield* Effect.fork(PlanExecutor.execute(tools, p, new Map(), { concurrency: 2 }))
      // Two calls start (concurrently: both are in flight while neither has finished)...
      const first = yield* Queue.take(latch.started)
      const second = yield* Queue.take(latch.started)
      expect(new Set([first, second]).size).toBe(2)
      // ...and no third one while they are blocked.
      yield* settle
      expect(yield* Queue.size(latch.started)).toBe(0)
      expect(latch.inFlight()).toBe(2)
      yield* Deferred.succeed(latch.release, undefined)
      const results = yield* Fiber.join(fiber)
      expect(latch.maxInFlight()).toBe(2)
      expect(results.map((r) => [r.step_id, r.status, r.output])).toEqual(
        ["a", "b", "c", "d", "e", "f"].map((id) => [id, "succeeded", { id }])
      )
    }))

  it.effect("concurrency 1 runs one tool call at a time", () =>
    Effect.gen(function*() {
      const latch = yield* makeLatch
      const tools = yield* registry([latch.entry])
      const p = yield* decodePlan(plan(["a", "b", "c"].map((id) => gateStep(id))))
      const fiber = yield* Effect.fork(PlanExecutor.execute(tools, p, new Map(), { concurrency: 1 }))
      yield* Queue.take(latch.started)
      yield* settle
      expect(yield* Queue.size(latch.started)).toBe(0)
      yield* Deferred.succeed(latch.release, undefined)
      const results = yield* Fiber.join(fiber)
      expect(latch.maxInFlight()).toBe(1)
      expect(results.every((r) => r.status === "succeeded")).toBe(true)
    }))

  it.effect("the default concurrency is 4", () =>
    Effect.gen(function*() {
      const latch = yield* makeLatch
      const tools = yield* registry([latch.entry])
      const p = yield* decodePlan(plan(["a", "b", "c", "d", "e", "f"].map((id) => gateStep(id))))
      const fiber = yield* Effect.fork(PlanExecutor.execute(tools, p, new Map()))
      for (let i = 0; i < 4; i++) yield* Queue.take(latch.started)
      yield* settle
      expect(yield* Queue.size(latch.started)).toBe(0)
      expect(latch.inFlight()).toBe(4)
      yield* Deferred.succeed(latch.release, undefined)
      yield* Fiber.join(fiber)
      expect(latch.maxInFlight()).toBe(4)
    }))

  it.effect("an empty plan yields no results", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      expect(yield* PlanExecutor.execute(tools, { steps: [], terminal: true }, new Map())).toEqual([])
    }))
})

describe("PlanExecutor.execute: dependencies", () => {
  it.effect("a dependent step waits for its dependency and receives its output", () =>
    Effect.gen(function*() {
      const latch = yield* makeLatch
      const tools = yield* registry([latch.entry])
      echoCalls.length = 0
      const p = yield* decodePlan(plan([
        gateStep("s1"),
        echoStep("s2", "{{steps.s1.output.id}}", { depends_on: ["s1"] })
      ]))
      const fiber = yield* Effect.fork(PlanExecutor.execute(tools, p, new Map(), { concurrency: 4 }))
      expect(yield* Queue.take(latch.started)).toBe("s1")
      yield* settle
      // A free slot exists, but s2 must not run before s1 finished.
      expect(echoCalls).toEqual([])
      yield* Deferred.succeed(latch.release, undefined)
      const results = yield* Fiber.join(fiber)
      expect(echoCalls).toEqual(["s1"])
      expect(byId(results, "s2")).toMatchObject({ status: "succeeded", output: { value: "s1" } })
    }))

  it.live("a dependent listed before its dependency does not deadlock under concurrency 1", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([
        echoStep("s2", "{{steps.s1.output.value}}", { depends_on: ["s1"] }),
        echoStep("s1", "first")
      ]))
      const results = yield* PlanExecutor.execute(tools, p, new Map(), { concurrency: 1 }).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("deadlock") })
      )
      expect(results.map((r) => [r.step_id, r.status, r.output])).toEqual([
        ["s2", "succeeded", { value: "first" }],
        ["s1", "succeeded", { value: "first" }]
      ])
    }))

  it.effect("a whole-value reference yields the JSON value (a number), an embedded one its text", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([
        quoteStep("s1"),
        convertStep("s2", "{{steps.s1.output.price}}", { depends_on: ["s1"] }),
        echoStep("s3", "ACME at {{steps.s1.output.price}} {{steps.s1.output.currency}}", { depends_on: ["s1"] }),
        weatherStep("s4", "x", { parameters: { city: "near {{steps.s1.output.symbol}}" }, depends_on: ["s1"] }),
        echoStep("s5", "{{steps.s1.output}}", { depends_on: ["s1"] })
      ]))
      const results = yield* PlanExecutor.execute(tools, p, new Map())
      const quote = byId(results, "s1")
      expect(quote.status).toBe("succeeded")
      const output = quote.output as { readonly symbol: string; readonly price: number; readonly currency: string }
      expect(output.symbol).toBe("ACME")
      expect(typeof output.price).toBe("number")
      // convert_currency decodes `amount` as a number: it only succeeds with the number itself.
      expect(byId(results, "s2")).toMatchObject({
        status: "succeeded",
        output: { amount: Math.round(output.price * 0.92 * 100) / 100, currency: "EUR" }
      })
      expect(byId(results, "s3").output).toEqual({ value: `ACME at ${output.price} USD` })
      expect(byId(results, "s4")).toMatchObject({ status: "succeeded", output: { city: "near ACME" } })
      expect(byId(results, "s5").output).toEqual({ value: output })
    }))

  it.effect("a failing tool fails its step with the error text; dependents are skipped, transitively", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([
        refuseStep("s1"),
        echoStep("s2", "{{steps.s1.output}}", { depends_on: ["s1"] }),
        echoStep("s3", "{{steps.s2.output}}", { depends_on: ["s2"] }),
        echoStep("s4", "independent")
      ]))
      const results = yield* PlanExecutor.execute(tools, p, new Map())
      expect(byId(results, "s1")).toMatchObject({
        status: "failed",
        error: "tool_failed: out of stock: s1",
        namespace: TEST_NS,
        agent: "refuser",
        capability: "refuse"
      })
      expect(byId(results, "s1").output).toBeUndefined()
      expect(byId(results, "s2")).toMatchObject({
        status: "skipped",
        error: "dependency did not succeed: s1",
        duration: 0
      })
      expect(byId(results, "s3")).toMatchObject({
        status: "skipped",
        error: "dependency did not succeed: s2",
        duration: 0
      })
      expect(byId(results, "s4")).toMatchObject({ status: "succeeded", output: { value: "independent" } })
    }))

  it.effect("a step with several dependencies is skipped when any one did not succeed, naming it", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([
        echoStep("ok", 1),
        refuseStep("bad"),
        echoStep("both", ["{{steps.ok.output}}", "{{steps.bad.output}}"], { depends_on: ["ok", "bad"] })
      ]))
      const results = yield* PlanExecutor.execute(tools, p, new Map())
      expect(byId(results, "both")).toMatchObject({ status: "skipped", error: "dependency did not succeed: bad" })
    }))
})

describe("PlanExecutor.execute: implicit_deps (earlier phases)", () => {
  it.effect("implicit_deps read earlier phases' outputs", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const prior = new Map([["q1", priorQuote("q1", "succeeded", { symbol: "ACME", price: 100, currency: "USD" })]])
      const p = yield* decodePlan(plan([
        convertStep("c1", "{{steps.q1.output.price}}", { implicit_deps: ["q1"] }),
        echoStep("e1", "was {{steps.q1.output.symbol}}", { implicit_deps: ["q1"] })
      ]))
      const results = yield* PlanExecutor.execute(tools, p, prior)
      expect(byId(results, "c1")).toMatchObject({ status: "succeeded", output: { amount: 92, currency: "EUR" } })
      expect(byId(results, "e1").output).toEqual({ value: "was ACME" })
    }))

  it.effect("a failed earlier step makes the dependent skipped", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const prior = new Map([["q1", priorQuote("q1", "failed")]])
      const p = yield* decodePlan(plan([convertStep("c1", "{{steps.q1.output.price}}", { implicit_deps: ["q1"] })]))
      const results = yield* PlanExecutor.execute(tools, p, prior)
      expect(results).toHaveLength(1)
      expect(byId(results, "c1")).toMatchObject({ status: "skipped", error: "dependency did not succeed: q1" })
    }))

  it.effect("a skipped earlier step (or one missing from `prior`) makes the dependent skipped", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const prior = new Map([["q1", priorQuote("q1", "skipped")]])
      const p = yield* decodePlan(plan([
        convertStep("c1", "{{steps.q1.output.price}}", { implicit_deps: ["q1"] }),
        convertStep("c2", "{{steps.q2.output.price}}", { implicit_deps: ["q2"] })
      ]))
      const results = yield* PlanExecutor.execute(tools, p, prior)
      expect(byId(results, "c1")).toMatchObject({ status: "skipped", error: "dependency did not succeed: q1" })
      expect(byId(results, "c2")).toMatchObject({ status: "skipped", error: "dependency did not succeed: q2" })
    }))
})

describe("PlanExecutor.execute: tool failures never fail the request", () => {
  it.effect("invalid parameters fail the step with reason invalid_parameters", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([
        quoteStep("s1", "acme"),
        quoteStep("s2"),
        convertStep("s3", "{{steps.s2.output.symbol}}", { depends_on: ["s2"] })
      ]))
      const results = yield* PlanExecutor.execute(tools, p, new Map())
      expect(byId(results, "s1").status).toBe("failed")
      expect(byId(results, "s1").error).toMatch(/^invalid_parameters: /)
      expect(byId(results, "s2").status).toBe("succeeded")
      // A string where convert_currency expects a number.
      expect(byId(results, "s3").status).toBe("failed")
      expect(byId(results, "s3").error).toMatch(/^invalid_parameters: /)
    }))

  it.effect("a tool that dies fails its step (tool_defect), not the execution", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([
        step("s1", "bomb", "explode", { how: "die" }),
        echoStep("s2", "{{steps.s1.output}}", { depends_on: ["s1"] }),
        echoStep("s3", "fine")
      ]))
      const results = yield* PlanExecutor.execute(tools, p, new Map())
      expect(byId(results, "s1")).toMatchObject({ status: "failed", error: "tool_defect: kaboom" })
      expect(byId(results, "s2")).toMatchObject({ status: "skipped", error: "dependency did not succeed: s1" })
      expect(byId(results, "s3")).toMatchObject({ status: "succeeded", output: { value: "fine" } })
    }))

  it.effect("a tool handler that throws synchronously fails its step (tool_defect), not the execution", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([step("s1", "bomb", "explode", { how: "throw" }), echoStep("s2", "fine")]))
      const results = yield* PlanExecutor.execute(tools, p, new Map())
      expect(byId(results, "s1")).toMatchObject({ status: "failed", error: "tool_defect: thrown synchronously" })
      expect(byId(results, "s2")).toMatchObject({ status: "succeeded", output: { value: "fine" } })
    }))

  it.effect("a step naming an unregistered tool fails with unknown_tool", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([step("s1", "nobody", "nothing", {})]))
      const results = yield* PlanExecutor.execute(tools, p, new Map())
      expect(byId(results, "s1")).toMatchObject({ status: "failed", error: "unknown_tool: test-tools/nobody/nothing" })
    }))
})

describe("PlanExecutor.execute: results", () => {
  it.effect("results come back in plan order, with start times and durations (ms) from the clock", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      yield* TestClock.setTime(1_000)
      const p = yield* decodePlan(plan([
        napStep("long", 100),
        echoStep("quick", "q"),
        napStep("short", 30),
        napStep("after", 20, { depends_on: ["short"] }),
        refuseStep("bad"),
        echoStep("skip", "{{steps.bad.output}}", { depends_on: ["bad"] })
      ]))
      const fiber = yield* Effect.fork(PlanExecutor.execute(tools, p, new Map()))
      yield* TestClock.adjust("100 millis")
      const results = yield* Fiber.join(fiber)
      expect(results.map((r) => r.step_id)).toEqual(["long", "quick", "short", "after", "bad", "skip"])
      expect(results.map((r) => r.status)).toEqual([
        "succeeded",
        "succeeded",
        "succeeded",
        "succeeded",
        "failed",
        "skipped"
      ])
      for (const r of results) {
        expect(r.duration).toBeGreaterThanOrEqual(0)
        expect(Number.isFinite(r.duration)).toBe(true)
      }
      expect(byId(results, "long")).toMatchObject({ startedAt: 1_000, duration: 100, output: { slept: 100 } })
      expect(byId(results, "quick")).toMatchObject({ startedAt: 1_000, duration: 0 })
      expect(byId(results, "short")).toMatchObject({ startedAt: 1_000, duration: 30 })
      expect(byId(results, "after")).toMatchObject({ startedAt: 1_030, duration: 20 })
    }))
})

describe("PlanExecutor.resolveReferences", () => {
  const outputs = new Map<string, Json.Json>([
    ["s1", { symbol: "ACME", price: 12.5, tags: ["a", "b"], nested: { deep: { flag: true } }, none: null }],
    ["s2", "plain text"],
    ["s-3_x", 7]
  ])
  const resolve = (parameters: Json.JsonObject) => PlanExecutor.resolveReferences(parameters, outputs)

  it("a value that is exactly one reference becomes the referenced JSON value", () => {
    expect(resolve({
      price: "{{steps.s1.output.price}}",
      symbol: "{{steps.s1.output.symbol}}",
      tags: "{{steps.s1.output.tags}}",
      flag: "{{steps.s1.output.nested.deep.flag}}",
      none: "{{steps.s1.output.none}}",
      text: "{{steps.s2.output}}",
      number: "{{steps.s-3_x.output}}"
    })).toEqual({
      price: 12.5,
      symbol: "ACME",
      tags: ["a", "b"],
      flag: true,
      none: null,
      text: "plain text",
      number: 7
    })
    expect(resolve({ all: "{{steps.s1.output}}" }).all).toEqual(outputs.get("s1"))
  })

  it("array elements are addressed by index", () => {
    expect(resolve({ first: "{{steps.s1.output.tags.1}}" })).toEqual({ first: "b" })
  })

  it("a reference inside a longer string becomes its text (strings as-is, other values as JSON)", () => {
    expect(resolve({
      a: "price={{steps.s1.output.price}}",
      b: "{{steps.s1.output.symbol}} / {{steps.s2.output}}",
      c: "tags: {{steps.s1.output.tags}}",
      d: " {{steps.s1.output.nested}}"
    })).toEqual({
      a: "price=12.5",
      b: "ACME / plain text",
      c: "tags: [\"a\",\"b\"]",
      d: " {\"deep\":{\"flag\":true}}"
    })
  })

  it("references nested in arrays and objects are resolved; other values are untouched", () => {
    expect(resolve({
      list: ["{{steps.s1.output.price}}", "x", 3, null, false],
      obj: { inner: { symbol: "{{steps.s1.output.symbol}}" } },
      text: "no reference here",
      braces: "{{not a reference}}",
      n: 42
    })).toEqual({
      list: [12.5, "x", 3, null, false],
      obj: { inner: { symbol: "ACME" } },
      text: "no reference here",
      braces: "{{not a reference}}",
      n: 42
    })
  })

  it("a missing output or path resolves to null (whole value) or the empty string (embedded)", () => {
    expect(resolve({
      unknownStep: "{{steps.ghost.output}}",
      unknownPath: "{{steps.s1.output.missing.deeper}}",
      embedded: "[{{steps.ghost.output.price}}]"
    })).toEqual({ unknownStep: null, unknownPath: null, embedded: "[]" })
  })

  it("does not mutate its input", () => {
    const parameters = { p: "{{steps.s1.output.price}}", l: ["{{steps.s2.output}}"] }
    resolve(parameters)
    expect(parameters).toEqual({ p: "{{steps.s1.output.price}}", l: ["{{steps.s2.output}}"] })
  })
})

describe("ToolRegistry with JSON-valued tool parameters", () => {
  it.effect("a tool whose parameters use Json.Json can be registered and called", () =>
    Effect.gen(function*() {
      const JsonEcho = Tool.make("json_echo", {
        description: "Returns its JSON value",
        parameters: { value: Json.Json },
        success: Schema.Struct({ value: Json.Json })
      })
      const entry = ToolRegistry.entry({
        namespace: TEST_NS,
        agent: "json-echo",
        tool: JsonEcho,
        handler: ({ value }) => Effect.succeed({ value })
      })
      // The descriptor's JSON Schema must be derivable (Json.Json is documented as
      // "lets providers derive a JSON Schema").
      const tools = yield* Effect.exit(ToolRegistry.make([entry]))
      expect(tools._tag).toBe("Success")
      if (tools._tag !== "Success") return
      const p = yield* decodePlan(plan([step("s1", "json-echo", "json_echo", { value: { a: [1, "two", null] } })]))
      const results = yield* PlanExecutor.execute(tools.value, p, new Map())
      expect(byId(results, "s1")).toMatchObject({ status: "succeeded", output: { value: { a: [1, "two", null] } } })
    }))
})

describe("PlanExecutor.execute: tool results are checked where they enter (issue 17, classes 4 and 5)", () => {
  it.effect("hostile values: an echo of a value that is not JSON fails only its step with invalid_result naming the path", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      const p = yield* decodePlan(plan([echoStep("s1", "fine"), echoStep("s2", "also fine")]))
      // The parameters decode as Schema.Unknown; the handler echoes what it got,
      // so a registry handing it a cyclic value is what a misbehaving tool does.
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      const raw: ToolRegistry.ToolRegistry.Service = {
        ...tools,
        call: (namespace, agent, capability, parameters, options) =>
          tools.call(
            namespace,
            agent,
            capability,
            (parameters.value === "fine" ? { value: cyclic } : parameters) as Json.JsonObject,
            options
          )
      }
      const results = yield* PlanExecutor.execute(raw, p, new Map())
      expect(byId(results, "s1")).toMatchObject({
        status: "failed",
        error: "invalid_result: result.value.self: a cycle (the value contains itself)"
      })
      expect(byId(results, "s2")).toMatchObject({ status: "succeeded", output: { value: "also fine" } })
    }))

  it.effect("unbounded sizes: maxResultBytes bounds what a step keeps; a result exactly at it is kept, one byte more fails with invalid_result", () =>
    Effect.gen(function*() {
      const tools = yield* registry()
      // {"value":"xxxx"} is 12 bytes of JSON plus the string's length.
      const p = yield* decodePlan(plan([echoStep("at", "x".repeat(88)), echoStep("over", "x".repeat(89))]))
      const results = yield* PlanExecutor.execute(tools, p, new Map(), { maxResultBytes: 100 })
      expect(byId(results, "at")).toMatchObject({ status: "succeeded" })
      expect(byId(results, "over")).toMatchObject({
        status: "failed",
        error:
          "invalid_result: result too large: its JSON text is over the limit of 100 bytes (PipelineOptions.maxToolResultBytes); it was not kept"
      })
      expect(byId(results, "over").output).toBeUndefined()
    }))
})
