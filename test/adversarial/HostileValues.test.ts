/**
 * Class 4 of issue 17 — "one bad value kills a whole request" — pinned:
 * values are checked where they enter, and a bad one fails only what it
 * entered through.
 *
 * - Tool results: a `bigint`, a cycle, a function, a symbol, a class
 *   instance (a `Date` included), a non-finite number, `undefined` in an
 *   array, a hole, a getter or Proxy that throws, nesting past 256 levels —
 *   each fails only its step with `invalid_result` naming the path; the
 *   request completes through synthesis.
 * - Stage-hook contributions (enrichments, short-circuit payloads, tools,
 *   removals, the result object itself): the same values fail only that
 *   hook run, `invalid_result`, under its failure policy.
 * - Requests: wire JSON nested thousands deep, throwing getters, Proxies and
 *   bad request ids are a typed `InvalidRequest`, never a defect.
 * - Plans: model text nested thousands deep, hostile plan objects and
 *   dependency chains thousands long are typed planning failures.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Duration, Effect, Either, Exit, FastCheck as fc, Layer, Option, Schema, Stream } from "effect"
import {
  type AgentResponse,
  type ExecutionRecord,
  Hook,
  Json,
  PipelineContext,
  PipelineError,
  PipelineRequest,
  PlanOutput,
  PlanValidation,
  PromptBuilder,
  RoutingPlan,
  ToolCalls,
  ToolRegistry
} from "effect-agent-pipeline"
import { stockQuote } from "../../examples/shared/DemoTools.js"
import { makeHarness, NAMESPACE, plan, quoteStep, untypedInput } from "../support/Harness.js"
import { HookRuntime, PipelineHooks, PlanExecutor } from "../support/Internal.js"
import { jsonArbitrary } from "../support/JsonArbitrary.js"

// ---------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------

class Money {
  constructor(readonly amount: number) {}
}

const cyclic = (): Record<string, unknown> => {
  const o: Record<string, unknown> = { name: "loop" }
  o.self = o
  return o
}

/** An object whose `boom` property throws when read (enumerable, so a walk reaches it). */
const withThrowingGetter = (): object => {
  const o = { ok: 1 }
  Object.defineProperty(o, "boom", {
    enumerable: true,
    get() {
      throw new Error("getter exploded")
    }
  })
  return o
}

/** A Proxy over `{ a: 1 }` whose every property read throws. */
const throwingProxy = (): object =>
  new Proxy({ a: 1 }, {
    get() {
      throw new Error("trap exploded")
    }
  })

/** A revoked Proxy: every operation on it throws, even `Array.isArray`. */
const revokedProxy = (): object => {
  const r = Proxy.revocable({}, {})
  r.revoke()
  return r.proxy
}

/** `{"a":{"a":…}}` nested `depth` levels, built without recursion. */
const nested = (depth: number): Record<string, unknown> => {
  let value: Record<string, unknown> = {}
  for (let i = 1; i < depth; i++) value = { a: value }
  return value
}

/** `depth` nested arrays as JSON text. */
const deepArrayText = (depth: number): string => "[".repeat(depth) + "]".repeat(depth)
/** `depth` nested objects as JSON text. */
const deepObjectText = (depth: number): string => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)

// A hole needs an array literal with an elision.
// eslint-disable-next-line no-sparse-arrays
const withHole = (): Array<unknown> => [1, , 3]

// ---------------------------------------------------------------------------
// Tool results
// ---------------------------------------------------------------------------

const Hostile = Tool.make("hostile_result", {
  description: "Returns whatever the test gives it",
  parameters: { kind: Schema.String },
  success: Schema.Unknown
})

const hostileTool = (produce: (kind: string) => unknown): ToolRegistry.ToolEntry<never> =>
  ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "hostile-service",
    tool: Hostile,
    handler: ({ kind }) => Effect.sync(() => produce(kind))
  })

const hostileStep = (stepId: string, kind: string, extra: Record<string, unknown> = {}) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "hostile-service",
  capability: "hostile_result",
  parameters: { kind },
  ...extra
})

const completed = (result: AgentResponse.PipelineResult): AgentResponse.AgentResponse => {
  if (result._tag !== "Completed") throw new Error(`expected Completed, got ${result._tag}`)
  return result.response
}

const stepOf = (record: ExecutionRecord.ExecutionRecord, stepId: string) =>
  record.phases.flatMap((p) => p.steps).find((s) => s.step_id === stepId)

/** Label, the tool's value, what its step's error must say. */
const hostileResults: ReadonlyArray<readonly [string, () => unknown, string]> = [
  ["a BigInt", () => ({ price: 10n }), "invalid_result: result.price: a bigint is not a JSON value"],
  ["a cyclic object", cyclic, "invalid_result: result.self: a cycle (the value contains itself)"],
  ["a function", () => ({ f: () => 1 }), "invalid_result: result.f: a function is not a JSON value"],
  ["a symbol", () => ({ s: Symbol("x") }), "invalid_result: result.s: a symbol is not a JSON value"],
  ["a Date", () => ({ when: new Date(0) }), "invalid_result: result.when: a Date instance is not a plain JSON object"],
  [
    "a class instance",
    () => ({ cost: new Money(1) }),
    "invalid_result: result.cost: a Money instance is not a plain JSON object"
  ],
  [
    "a Map as the whole result",
    () => new Map([["a", 1]]),
    "invalid_result: result: a Map instance is not a plain JSON object"
  ],
  ["NaN", () => ({ n: Number.NaN }), "invalid_result: result.n: NaN is not a finite number"],
  [
    "Infinity in an array",
    () => [1, Number.POSITIVE_INFINITY],
    "invalid_result: result[1]: Infinity is not a finite number"
  ],
  ["undefined in an array", () => [1, undefined], "invalid_result: result[1]: undefined is not a JSON value"],
  ["a hole", withHole, "invalid_result: result[1]: a hole (a missing array element) is not a JSON value"],
  ["a throwing getter", withThrowingGetter, "invalid_result: result.boom: reading it threw: Error: getter exploded"],
  ["a Proxy whose reads throw", throwingProxy, "invalid_result: result.a: reading it threw: Error: trap exploded"],
  [
    "a revoked Proxy",
    revokedProxy,
    "invalid_result: result: reading it threw: TypeError: Cannot perform 'IsArray' on a proxy that has been revoked"
  ],
  ["JSON nested 5,000 deep", () => nested(5_000), "invalid_result: result.a.a.a"]
]

describe("hostile values: tool results are checked as JSON where they enter", () => {
  for (const [label, produce, error] of hostileResults) {
    it.effect(`hostile values: a tool returning ${label} fails only its step with invalid_result; the request completes`, () =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          tools: [stockQuote, hostileTool(produce)],
          script: {
            plans: [plan([hostileStep("bad", "x"), quoteStep("good")])],
            synthesis: (p) => `saw: ${p.includes("invalid_result")}`
          }
        })
        const response = completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "hostile-tool" }))
        const [bad, good] = response.phases[0]!.steps
        expect(bad).toMatchObject({ step_id: "bad", status: "failed" })
        expect(bad!.error!.startsWith(error)).toBe(true)
        expect(bad!.output).toBeUndefined()
        // Other steps are unaffected, and synthesis ran with the failure in view.
        expect(good).toMatchObject({ step_id: "good", status: "succeeded" })
        expect(response.response).toBe("saw: true")
        const record = yield* h.record("hostile-tool")
        expect(record.lifecycle?.status).toBe("succeeded")
        expect(stepOf(record, "bad")).toMatchObject({ status: "failed", error: bad!.error })
        expect(stepOf(record, "bad")?.output).toBeUndefined()
        expect(() => JSON.stringify(record)).not.toThrow()
      }))
  }

  it.effect("hostile values: an undefined object property in a tool result is dropped, as JSON.stringify drops it (the step succeeds)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        tools: [hostileTool(() => ({ a: 1, note: undefined }))],
        script: { plans: [plan([hostileStep("s1", "x")])], synthesis: "done" }
      })
      const response = completed(yield* h.pipeline.process({ request: "q", requestId: "undef-prop" }))
      expect(response.phases[0]!.steps[0]).toMatchObject({ status: "succeeded", output: { a: 1 } })
      expect(Object.keys(response.phases[0]!.steps[0]!.output as object)).toEqual(["a"])
    }))

  it.effect("hostile values: the step keeps a copy — a tool mutating its result after returning changes neither the record nor what later steps see", () =>
    Effect.gen(function*() {
      const shared: { value: string } = { value: "original" }
      const tool = hostileTool((kind) => {
        if (kind === "first") return shared
        shared.value = "mutated" // the second call mutates what the first returned
        return { ok: true }
      })
      const h = yield* makeHarness({
        tools: [tool],
        script: {
          plans: [plan([
            hostileStep("s1", "first"),
            hostileStep("s2", "second", { depends_on: ["s1"] }),
            { ...hostileStep("s3", "{{steps.s1.output.value}}"), depends_on: ["s2"] }
          ])],
          synthesis: "done"
        }
      })
      const response = completed(yield* h.pipeline.process({ request: "q", requestId: "mutated" }))
      expect(shared.value).toBe("mutated")
      expect(response.phases[0]!.steps[0]).toMatchObject({ step_id: "s1", output: { value: "original" } })
      const record = yield* h.record("mutated")
      expect(stepOf(record, "s1")?.output).toEqual({ value: "original" })
    }))

  it.effect("hostile values: a hand-written tool (a hook's extra tool, not ToolRegistry.entry) returning a BigInt is checked by the tool caller: invalid_result, the request completes", () =>
    Effect.gen(function*() {
      const handWritten = {
        namespace: "user-tools",
        agent: "raw",
        tool: Hostile,
        call: () => Effect.succeed({ total: 7n })
      }
      const h = yield* makeHarness({
        tools: [stockQuote],
        hooks: [
          Hook.make({
            name: "adds-raw",
            beforePlanning: () => Effect.succeed({ tools: [handWritten as unknown as ToolRegistry.ToolEntry<never>] })
          })
        ],
        script: {
          plans: [
            plan([{
              step_id: "r1",
              namespace: "user-tools",
              agent: "raw",
              capability: "hostile_result",
              parameters: { kind: "x" }
            }, quoteStep("q1")])
          ],
          synthesis: "done"
        }
      })
      const response = completed(yield* h.pipeline.process({ request: "q", requestId: "raw-tool" }))
      expect(response.phases[0]!.steps.map((s) => [s.step_id, s.status, s.error])).toEqual([
        ["r1", "failed", "invalid_result: result.total: a bigint is not a JSON value"],
        ["q1", "succeeded", undefined]
      ])
    }))

  it.effect("hostile values: PlanExecutor over a hand-written registry checks what it returns (invalid_result, the other steps run)", () =>
    Effect.gen(function*() {
      const base = yield* ToolRegistry.make([stockQuote])
      const raw: ToolRegistry.ToolRegistry.Service = {
        ...base,
        has: () => true,
        // A JavaScript registry returning what its type forbids.
        call: (namespace, agent, capability, parameters, options) =>
          capability === "raw"
            ? Effect.succeed(cyclic() as unknown as Json.Json)
            : base.call(namespace, agent, capability, parameters, options)
      }
      const p = yield* RoutingPlan.decodeUnknown(plan([
        { step_id: "r", namespace: "n", agent: "a", capability: "raw" },
        quoteStep("q")
      ]))
      const results = yield* PlanExecutor.execute(raw, p, new Map())
      expect(results.map((r) => [r.step_id, r.status, r.error])).toEqual([
        ["r", "failed", "invalid_result: result.self: a cycle (the value contains itself)"],
        ["q", "succeeded", undefined]
      ])
    }))
})

// ---------------------------------------------------------------------------
// Tool results: property tests at the registry boundary
// ---------------------------------------------------------------------------

type Leaf =
  | "bigint"
  | "function"
  | "symbol"
  | "date"
  | "instance"
  | "nan"
  | "infinity"
  | "getter"
  | "proxy"
  | "revoked"
  | "cycle"
  | "undefined"
  | "hole"

const leafKinds: ReadonlyArray<Leaf> = [
  "bigint",
  "function",
  "symbol",
  "date",
  "instance",
  "nan",
  "infinity",
  "getter",
  "proxy",
  "revoked",
  "cycle",
  "undefined",
  "hole"
]

/** What the check says about a leaf, and the extra path segment it names (a getter's or a Proxy's key). */
const leafReason: Readonly<Record<Leaf, readonly [string, ReadonlyArray<string>]>> = {
  bigint: ["a bigint is not a JSON value", []],
  function: ["a function is not a JSON value", []],
  symbol: ["a symbol is not a JSON value", []],
  date: ["a Date instance is not a plain JSON object", []],
  instance: ["a Money instance is not a plain JSON object", []],
  nan: ["NaN is not a finite number", []],
  infinity: ["-Infinity is not a finite number", []],
  getter: ["reading it threw: Error: getter exploded", ["boom"]],
  proxy: ["reading it threw: Error: trap exploded", ["a"]],
  revoked: ["reading it threw: TypeError", []],
  cycle: ["a cycle (the value contains itself)", []],
  undefined: ["undefined is not a JSON value", []],
  hole: ["a hole (a missing array element) is not a JSON value", []]
}

type Key = string | number

/**
 * A JSON value with one hostile leaf at `path`: JSON siblings before and
 * after it at every level (so the check has to walk past valid data).
 */
const plant = (
  kind: Leaf,
  path: ReadonlyArray<Key>,
  sibling: Json.Json
): { readonly value: unknown; readonly path: ReadonlyArray<Key> } => {
  // undefined and holes only exist as array elements; a cycle needs a container above it.
  const at: Array<Key> = [...path]
  if ((kind === "undefined" || kind === "hole") && typeof at[at.length - 1] !== "number") at.push(0)
  if (kind === "cycle" && at.length === 0) at.push("loop")
  const root: { value: unknown } = { value: undefined }
  const containers: Array<unknown> = []
  const build = (depth: number): unknown => {
    if (depth === at.length) {
      switch (kind) {
        case "bigint":
          return 12345678901234567890n
        case "function":
          return () => 1
        case "symbol":
          return Symbol("leaf")
        case "date":
          return new Date(0)
        case "instance":
          return new Money(3)
        case "nan":
          return Number.NaN
        case "infinity":
          return Number.NEGATIVE_INFINITY
        case "getter":
          return withThrowingGetter()
        case "proxy":
          return throwingProxy()
        case "revoked":
          return revokedProxy()
        case "cycle":
          return root
        case "undefined":
        case "hole":
          return undefined
      }
    }
    const key = at[depth]!
    const inner = build(depth + 1)
    if (typeof key === "number") {
      const array: Array<unknown> = []
      for (let i = 0; i < key; i++) array.push(sibling)
      if (!(kind === "hole" && depth === at.length - 1)) array[key] = inner
      else array.length = key + 1
      array.push(sibling)
      containers.push(array)
      return array
    }
    const object: Record<string, unknown> = { s0: sibling }
    Object.defineProperty(object, key, {
      value: inner === root ? root : inner,
      enumerable: true,
      writable: true,
      configurable: true
    })
    object.s1 = sibling
    containers.push(object)
    return object
  }
  const value = build(0)
  // The cycle leaf points back at the root container.
  if (kind === "cycle") {
    const parent = at.slice(0, -1).reduce<unknown>((node, key) => (node as Record<Key, unknown>)[key], value)
    ;(parent as Record<Key, unknown>)[at[at.length - 1]!] = value
  }
  return { value, path: [...at, ...leafReason[kind][1]] }
}

const keyArb: fc.Arbitrary<Key> = fc.oneof(
  fc.string({ maxLength: 5 }).map((s) => `k${s}`),
  fc.constant("__proto__"),
  fc.nat({ max: 3 })
)

const callEntry = (value: unknown) =>
  Effect.runSync(Effect.either(
    ToolRegistry.entry({ namespace: "n", agent: "a", tool: Hostile, handler: () => Effect.succeed(value) }).call({
      kind: "x"
    })
  ))

describe("hostile values: tool results (property)", () => {
  it("hostile values: a tool result holding any non-JSON leaf at any path fails with invalid_result naming that path (property, 1000 runs)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...leafKinds),
        fc.array(keyArb, { maxLength: 5 }),
        fc.jsonValue({ maxDepth: 2 }),
        (kind, path, sibling) => {
          const planted = plant(kind, path, sibling as Json.Json)
          const result = callEntry(planted.value)
          expect(Either.isLeft(result)).toBe(true)
          if (Either.isRight(result)) return
          expect(result.left.reason).toBe("invalid_result")
          const [reason] = leafReason[kind]
          expect(
            result.left.message.startsWith(`invalid_result: ${Json.formatPath("result", planted.path)}: ${reason}`)
          ).toBe(true)
        }
      ),
      { numRuns: 1000 }
    )
  })

  it("hostile values: every JSON tool result is kept as an equal copy, which later mutation of the original does not reach (property, 500 runs)", () => {
    fc.assert(
      fc.property(jsonArbitrary(5), (value) => {
        const original = structuredClone(value)
        const result = callEntry(value)
        expect(Either.isRight(result)).toBe(true)
        if (Either.isLeft(result)) return
        expect(result.right).toStrictEqual(original)
        if (typeof value === "object" && value !== null) {
          expect(result.right).not.toBe(value)
          // Mutating what the tool returned changes nothing the step kept.
          if (Array.isArray(value)) (value as Array<Json.Json>).push("later")
          else (value as Record<string, Json.Json>)["later"] = "later"
          expect(result.right).toStrictEqual(original)
        }
      }),
      { numRuns: 500 }
    )
  })
})

// ---------------------------------------------------------------------------
// Stage-hook contributions
// ---------------------------------------------------------------------------

const FAIL_OPEN = { policy: "fail_open", action: "continue", reason: "hook_error" } as const

/** A hook as a JavaScript caller could write it: the types are not checked. */
const untyped = (hook: object): Hook.Hook<never> => hook as Hook.Hook<never>

const brokenTool = (): unknown => ({
  namespace: "user-tools",
  agent: "broken",
  call: () => Effect.succeed(1),
  // `Tool.getJsonSchema` reads these: they throw.
  tool: new Proxy({ name: "broken_tool" }, {
    get(target, key) {
      if (key === "name") return target.name
      throw new Error("schema exploded")
    }
  })
})

const throwingRemove = (): unknown =>
  new Proxy(["rag_context"], {
    get(target, key) {
      if (key === "length" || typeof key === "symbol") return Reflect.get(target, key)
      throw new Error("remove exploded")
    }
  })

const throwingEnrichmentsField = (): object => {
  const o = {}
  Object.defineProperty(o, "enrichments", {
    enumerable: true,
    get() {
      throw new Error("field exploded")
    }
  })
  return o
}

/** Label, what the beforePlanning hook returns, what its recorded error must say. */
const hostileContributions: ReadonlyArray<readonly [string, () => unknown, RegExp]> = [
  [
    "an enrichment holding a BigInt",
    () => ({ enrichments: { rag_context: { n: 1n } } }),
    /^invalid result: enrichment rag_context is not a JSON value \(at rag_context\.n: a bigint is not a JSON value\)$/
  ],
  [
    "a cyclic enrichment",
    () => ({ enrichments: { rag_context: cyclic() } }),
    /^invalid result: enrichment rag_context is not a JSON value \(at rag_context\.self: a cycle/
  ],
  [
    "a Date enrichment",
    () => ({ enrichments: { when: new Date(0) } }),
    /^invalid result: enrichment when is not a JSON value \(at when: a Date instance is not a plain JSON object\)$/
  ],
  [
    "an enrichment whose getter throws",
    () => ({ enrichments: withThrowingGetter() }),
    /^invalid result: enrichment boom could not be read: reading it threw: Error: getter exploded$/
  ],
  [
    "enrichments as a Proxy whose reads throw",
    () => ({ enrichments: throwingProxy() }),
    /^invalid result: enrichment a could not be read: reading it threw: Error: trap exploded$/
  ],
  [
    "a result whose enrichments field throws",
    throwingEnrichmentsField,
    /^invalid result: enrichments could not be read: reading it threw: Error: field exploded$/
  ],
  [
    "a revoked Proxy as the whole result",
    revokedProxy,
    /^invalid result: the result could not be read: reading it threw: TypeError/
  ],
  [
    "an enrichment nested 5,000 deep",
    () => ({ enrichments: { rag_context: nested(5_000) } }),
    /^invalid result: enrichments nest deeper than 256 levels \(at enrichments\.rag_context\.a\.a/
  ],
  [
    "a legacy short-circuit whose metadata holds a BigInt",
    () => ({ shortCircuit: { response: "cached", metadata: { n: 1n } } }),
    /^invalid result: shortCircuit is not a JSON value \(at shortCircuit\.metadata\.n: a bigint is not a JSON value\)$/
  ],
  [
    "a decision whose payload is cyclic",
    () => ({ decision: { kind: "authoritative", shortCircuit: { response: "x", metadata: cyclic() } } }),
    /^invalid result: decision is not a JSON value \(at decision\.shortCircuit\.metadata\.self: a cycle/
  ],
  [
    "a short-circuit whose source is not a string",
    () => ({ shortCircuit: { response: "cached", source: { not: "a string" } } }),
    /^invalid result: shortCircuit\.source must be a string$/
  ],
  [
    "a short-circuit whose metadata is an array",
    () => ({ decision: { kind: "authoritative", shortCircuit: { response: "cached", metadata: [1] } } }),
    /^invalid result: decision\.shortCircuit\.metadata must be a JSON object$/
  ],
  [
    "a tool entry whose Schemas throw when described",
    () => ({ tools: [brokenTool()] }),
    /^invalid result: tool user-tools\/broken\/broken_tool: its descriptor could not be built: schema exploded$/
  ],
  [
    "a tool list whose elements throw when read",
    () => ({ tools: throwingProxy() }),
    /^wrong result shape: tools must be an array of tool entries/
  ],
  [
    "a remove list whose elements throw when read",
    () => ({ remove: throwingRemove() }),
    /^invalid result: remove could not be read: reading it threw: Error: remove exploded$/
  ]
]

describe("hostile values: stage-hook contributions are checked where they enter", () => {
  for (const [label, result, error] of hostileContributions) {
    it.effect(`hostile values: a beforePlanning hook returning ${label} fails only that run (invalid_result, fail open); the next hook runs and the request completes`, () =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            untyped({ name: "bad", beforePlanning: () => Effect.sync(result) }),
            Hook.make({
              name: "good",
              beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "from good" } })
            })
          ],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "the draft" }
        })
        const response = completed(yield* h.pipeline.process({ request: "quote ACME", requestId: "hostile-hook" }))
        // Nothing was short-circuited: the request planned, executed and synthesized.
        expect(response.response).toBe("the draft")
        expect(h.prompts.some((p) => p.kind === "plan")).toBe(true)
        const record = yield* h.record("hostile-hook")
        expect(record.lifecycle?.status).toBe("succeeded")
        expect(record.shortCircuit).toBeUndefined()
        const [bad, good] = record.hookInvocations
        expect(bad).toMatchObject({ name: "bad", stage: "before_planning", outcome: "failed", decision: FAIL_OPEN })
        expect(bad!.error).toMatch(error)
        expect(bad!.effects).toEqual([])
        expect(good).toMatchObject({ name: "good", outcome: "succeeded" })
        expect(PromptBuilder.readSection(h.prompts[0]!.prompt, "agent_memory")).toBe("from good")
        expect(() => JSON.stringify(record)).not.toThrow()
      }))
  }

  it.effect("hostile values: a fail-closed beforePlanning hook returning a BigInt enrichment stops the request with HookFailed reason invalid_result (its failure policy)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          untyped({
            name: "strict",
            failure: "fail_closed",
            beforePlanning: () => Effect.succeed({ enrichments: { k: 1n } })
          })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "never" }
      })
      const error = yield* Effect.flip(h.pipeline.process({ request: "q", requestId: "strict-bigint" }))
      expect(error).toMatchObject({
        _tag: "HookFailed",
        hookName: "strict",
        point: "before_planning",
        reason: "invalid_result"
      })
      expect(error.message).toContain("enrichment k is not a JSON value")
      expect(h.prompts).toEqual([])
    }))

  it.effect("hostile values: an enrichment getter is read exactly once; the pipeline keeps what that read returned", () =>
    Effect.gen(function*() {
      let reads = 0
      const enrichments = {}
      Object.defineProperty(enrichments, "rag_context", {
        enumerable: true,
        get: () => `read ${++reads}`
      })
      const h = yield* makeHarness({
        hooks: [untyped({ name: "getter", beforePlanning: () => Effect.succeed({ enrichments }) })],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "q", requestId: "getter-once" })
      expect(reads).toBe(1)
      expect(PromptBuilder.readSection(h.prompts[0]!.prompt, "agent_memory")).toBe("read 1")
      const effect = (yield* h.record("getter-once")).hookInvocations[0]!.effects[0]!
      expect((effect.data as { readonly after: string }).after).toBe("read 1")
    }))

  it.effect("hostile values: an enrichment nesting exactly 256 levels (with the enrichments object) is accepted; one level more is refused", () =>
    Effect.gen(function*() {
      const at = (depth: number) =>
        untyped({
          name: `d${depth}`,
          beforePlanning: () => Effect.succeed({ enrichments: { [`k${depth}`]: nested(depth) } })
        })
      const h = yield* makeHarness({
        hooks: [at(255), at(256)],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "q", requestId: "enrich-depth" })
      const record = yield* h.record("enrich-depth")
      expect(record.hookInvocations.map((i) => [i.name, i.outcome])).toEqual([["d255", "succeeded"], [
        "d256",
        "failed"
      ]])
      expect(record.hookInvocations[1]!.error).toMatch(/nest deeper than 256 levels/)
    }))

  it.effect("hostile values: afterSynthesis returning a revoked Proxy fails open with wrong_shape and keeps the previous string; afterExecution returning one is ignored", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          untyped({ name: "observer", afterExecution: () => Effect.sync(revokedProxy) }),
          untyped({ name: "rewriter", afterSynthesis: () => Effect.sync(revokedProxy) })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "the draft" }
      })
      const response = completed(yield* h.pipeline.process({ request: "q", requestId: "proxy-synth" }))
      expect(response.response).toBe("the draft")
      const record = yield* h.record("proxy-synth")
      expect(record.hookInvocations.map((i) => [i.name, i.outcome])).toEqual([["observer", "succeeded"], [
        "rewriter",
        "failed"
      ]])
      expect(record.hookInvocations[1]!.error).toBe("afterSynthesis must return a string, got object")
    }))
})

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

const refusal = (input: unknown) => Effect.runSync(Effect.flip(PipelineRequest.decode(input)))

describe("hostile values: requests", () => {
  it.effect("hostile values: wire JSON metadata nested 5,000 and 100,000 deep is InvalidRequest too_deep (no stack overflow), by decode, process and stream; nothing is recorded", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ script: { plans: [], synthesis: "never" } })
      for (const depth of [5_000, 100_000]) {
        const body: unknown = JSON.parse(`{"request":"q","metadata":{"x":${deepArrayText(depth)}}}`)
        const decoded = refusal(body)
        expect(decoded).toMatchObject({ _tag: "InvalidRequest", reason: "too_deep" })
        expect(decoded.detail).toBe("nests deeper than 256 levels, the limit for metadata")
        expect(decoded.path.startsWith("metadata.x[0][0]")).toBe(true)
        expect(decoded.message.length).toBeLessThan(400)
        const processed = yield* Effect.exit(h.pipeline.process(untypedInput(body)))
        expect(Exit.isFailure(processed) && Option.getOrUndefined(Cause.failureOption(processed.cause))).toMatchObject({
          reason: "too_deep"
        })
        const streamed = yield* Effect.flip(Stream.runCollect(h.pipeline.stream(untypedInput(body))))
        expect(streamed).toMatchObject({ reason: "too_deep" })
      }
      expect((yield* Effect.orDie(h.store.list())).records).toEqual([])
    }))

  it("hostile values: metadata nesting exactly 256 levels is accepted, 257 is too_deep (the documented limit)", () => {
    const at = (depth: number) =>
      Effect.runSync(Effect.either(PipelineRequest.decode({ request: "q", metadata: nested(depth) })))
    expect(PipelineRequest.maxMetadataDepth).toBe(256)
    expect(Either.isRight(at(256))).toBe(true)
    const deeper = at(257)
    expect(Either.isLeft(deeper) && deeper.left.reason).toBe("too_deep")
  })

  it("hostile values: a throwing getter or Proxy anywhere in a request is a typed InvalidRequest naming where, never a defect", () => {
    const getterOn = (name: string, base: Record<string, unknown>) => {
      Object.defineProperty(base, name, {
        enumerable: true,
        get() {
          throw new Error(`${name} exploded`)
        }
      })
      return base
    }
    expect(refusal(getterOn("metadata", { request: "q" }))).toMatchObject({
      reason: "malformed",
      path: "metadata",
      detail: "could not be read: reading it threw: Error: metadata exploded"
    })
    expect(refusal(getterOn("request", {}))).toMatchObject({ reason: "malformed", path: "request" })
    expect(refusal({ request: "q", metadata: { user: getterOn("secret", { name: "ann" }) } })).toMatchObject({
      reason: "malformed",
      path: "metadata.user.secret",
      detail: "could not be read: reading it threw: Error: secret exploded"
    })
    expect(refusal({ request: "q", metadata: { list: [1, throwingProxy()] } })).toMatchObject({
      reason: "malformed",
      path: "metadata.list[1].a"
    })
    // The request object itself: its keys cannot be listed, or it is revoked.
    const noKeys = new Proxy({ request: "q" }, {
      ownKeys() {
        throw new Error("keys exploded")
      }
    })
    expect(refusal(noKeys)).toMatchObject({
      reason: "malformed",
      path: "",
      detail: "could not be read: reading it threw: Error: keys exploded"
    })
    expect(refusal(revokedProxy())).toMatchObject({ reason: "malformed", path: "" })
    expect(refusal({ request: "q", metadata: revokedProxy() })).toMatchObject({ reason: "malformed", path: "metadata" })
  })

  it.effect("hostile values: a request field is read once; what that read returned is what the pipeline records", () =>
    Effect.gen(function*() {
      let reads = 0
      const body = { request: "q", requestId: "read-once" }
      Object.defineProperty(body, "metadata", { enumerable: true, get: () => ({ read: ++reads }) })
      const h = yield* makeHarness({ script: { plans: [plan([quoteStep("s1")])], synthesis: "done" } })
      yield* h.pipeline.process(untypedInput(body))
      expect(reads).toBe(1)
      expect((yield* h.record("read-once")).metadata).toEqual({ read: 1 })
    }))

  it.effect("hostile values: request-shaped input with one hostile value planted anywhere is always a typed InvalidRequest (property, 300 runs)", () =>
    Effect.sync(() => {
      const fieldArb = fc.constantFrom("request", "metadata", "requestId")
      fc.assert(
        fc.property(
          fc.constantFrom(...leafKinds, "deep" as const),
          fieldArb,
          fc.array(keyArb, { maxLength: 4 }),
          fc.jsonValue({ maxDepth: 2 }),
          (kind, field, path, sibling) => {
            const planted = kind === "deep"
              ? { value: nested(300), path }
              : plant(kind, field === "metadata" ? ["m", ...path] : path, sibling as Json.Json)
            const input: Record<string, unknown> = { request: "q", requestId: "r-1" }
            input[field] = planted.value
            const decoded = Effect.runSync(Effect.exit(PipelineRequest.decode(input)))
            // Never a defect: a typed failure, or (an undefined metadata property) a request.
            if (Exit.isSuccess(decoded)) return
            const error = Option.getOrThrow(Cause.failureOption(decoded.cause))
            expect(error).toBeInstanceOf(PipelineError.InvalidRequest)
            expect(["malformed", "too_deep"]).toContain(error.reason)
            expect(error.path.startsWith(field)).toBe(true)
            expect(error.message).not.toContain("\n")
          }
        ),
        { numRuns: 300 }
      )
    }))
})

describe("hostile values: request ids (the RequestId rule)", () => {
  const refused: ReadonlyArray<readonly [string, string, RegExp]> = [
    ["a NUL byte", "a\u0000b", /^must be printable: .*U\+0000 at index 1/],
    ["a newline", "a\nb", /U\+000A/],
    ["a tab", "a\tb", /U\+0009/],
    ["a space", "a b", /U\+0020/],
    ["an escape sequence", "a\u001b[31mred", /U\+001B/],
    ["a zero-width space", "a\u200bb", /U\+200B/],
    ["a right-to-left override", "a\u202Egnp.exe", /U\+202E/],
    ["a lone surrogate", "a\ud800b", /U\+D800/],
    ["a path traversal", "../../etc/passwd", /^must not contain "\/" or "\\" \(found "\/"\)$/],
    ["a slash", "tenant/42", /found "\/"/],
    ["a backslash", "..\\..\\win", /found "\\"/],
    [".", ".", /^must not be "\." or "\.\."$/],
    ["..", "..", /^must not be "\." or "\.\."$/],
    ["100,000 characters", "x".repeat(100_000), /^must be at most 200 bytes of UTF-8 \(is 100000\)$/],
    ["201 bytes", "x".repeat(201), /is 201\)$/],
    ["67 three-byte characters (201 bytes)", "€".repeat(67), /is 201\)$/],
    ["empty", "", /^must be a non-empty string$/]
  ]
  for (const [label, id, detail] of refused) {
    it.effect(`hostile values: a requestId with ${label} is refused (InvalidRequest malformed at requestId) by decode, process, the Schema and RequestId.make; nothing is recorded`, () =>
      Effect.gen(function*() {
        const error = refusal({ request: "q", requestId: id })
        expect(error).toMatchObject({ reason: "malformed", path: "requestId" })
        expect(error.detail).toMatch(detail)
        expect(error.detail.length).toBeLessThanOrEqual(300)
        const h = yield* makeHarness({ script: { plans: [plan([quoteStep("s1")])], synthesis: "done" } })
        expect(yield* Effect.flip(h.pipeline.process({ request: "q", requestId: id }))).toMatchObject({
          path: "requestId"
        })
        expect(Schema.is(PipelineContext.RequestId)(id)).toBe(false)
        expect(() => PipelineContext.RequestId.make(id)).toThrow()
        expect((yield* Effect.orDie(h.store.list())).records).toEqual([])
      }))
  }

  it("hostile values: printable ids of any script up to 200 bytes are accepted, exactly at the limit included", () => {
    for (
      const id of [
        "order-42",
        "tenant:a.b_c-1",
        "заказ-7",
        "注文-7",
        "a..b",
        ".hidden",
        "x".repeat(200),
        "€".repeat(66) + "xx",
        "😀".repeat(50)
      ]
    ) {
      expect(PipelineContext.requestIdProblem(id)).toBeUndefined()
      const decoded = Effect.runSync(Effect.either(PipelineRequest.decode({ request: "q", requestId: id })))
      expect(Either.isRight(decoded) && decoded.right.requestId).toBe(id)
    }
  })

  it.effect("hostile values: a PipelineRequest constructed with validation disabled and a bad requestId is still refused by process", () =>
    Effect.gen(function*() {
      const sneaky = new PipelineRequest.PipelineRequest(
        { request: "q", metadata: {}, requestId: "../../x" as PipelineContext.RequestId },
        { disableValidation: true }
      )
      const h = yield* makeHarness({ script: { plans: [plan([quoteStep("s1")])], synthesis: "done" } })
      expect(yield* Effect.flip(h.pipeline.process(sneaky))).toMatchObject({
        _tag: "InvalidRequest",
        path: "requestId"
      })
      const bigint = new PipelineRequest.PipelineRequest(
        { request: "q", metadata: { n: 1n } as unknown as Json.JsonObject },
        { disableValidation: true }
      )
      expect(yield* Effect.flip(h.pipeline.process(bigint))).toMatchObject({
        _tag: "InvalidRequest",
        path: "metadata.n"
      })
    }))
})

// ---------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------

const deepPlanText = (depth: number) =>
  `{"steps":[{"step_id":"s1","namespace":"${NAMESPACE}","agent":"stock-service","capability":"stock_quote","parameters":{"symbol":"ACME","x":${
    deepObjectText(depth)
  }}}]}`

const deepWireText = (depth: number) =>
  JSON.stringify({
    reasoning: null,
    terminal: true,
    steps: [{
      step_id: "s1",
      namespace: NAMESPACE,
      agent: "stock-service",
      capability: "stock_quote",
      parameters_json: `{"symbol":"ACME","x":${deepObjectText(depth)}}`,
      depends_on: [],
      implicit_deps: [],
      metadata_json: null
    }]
  })

describe("hostile values: plans", () => {
  it.effect("hostile values: model output nested 5,000 deep (plain and wire form) is PlanningError invalid_plan, not a stack overflow; no tool ran", () =>
    Effect.gen(function*() {
      for (const [label, text] of [["plain", deepPlanText(5_000)], ["wire", deepWireText(5_000)]] as const) {
        const h = yield* makeHarness({ script: { plans: [text, text], synthesis: "never" } })
        const error = yield* Effect.flip(h.pipeline.process({ request: "q", requestId: `deep-${label}` }))
        expect(error).toMatchObject({ _tag: "PlanningError", reason: "invalid_plan" })
        expect(error.message).toMatch(/nests (deeper than 256 levels|too deep)/)
        const record = yield* h.record(`deep-${label}`)
        expect(record.lifecycle?.status).toBe("failed")
        expect(record.phases.flatMap((p) => p.steps)).toEqual([])
      }
    }))

  it("hostile values: RoutingPlan.decodeText, PlanOutput and PlanFromWire refuse 100,000-deep JSON with a one-line error", () => {
    const plain = RoutingPlan.decodeTextEither(deepPlanText(100_000))
    expect(Either.isLeft(plain) && plain.left.message).toMatch(
      /^the plan nests deeper than 256 levels \(at plan\.steps\[0\]\.parameters\.x\.a/
    )
    const wire = RoutingPlan.decodeTextEither(deepWireText(100_000))
    expect(Either.isLeft(wire) && wire.left.message).toMatch(/parameters_json nests too deep/)
    const output = Schema.decodeUnknownEither(PlanOutput.PlanOutput)(JSON.parse(deepPlanText(100_000)))
    expect(Either.isLeft(output) && output.left.message).toMatch(/the plan nests deeper than 256 levels/)
    // At the limit: a plan whose parameters bring it to exactly 256 levels decodes.
    expect(Either.isRight(RoutingPlan.decodeTextEither(deepPlanText(252)))).toBe(true)
    expect(Either.isLeft(RoutingPlan.decodeTextEither(deepPlanText(253)))).toBe(true)
  })

  it.effect("hostile values: executePlanWithSynthesis with a hostile plan object (a throwing getter, a Proxy, a BigInt, 5,000-deep parameters) is PlanningError invalid_plan; no tool ran", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ script: { plans: [], synthesis: "never" } })
      const step = quoteStep("s1")
      const plans: ReadonlyArray<readonly [string, unknown, RegExp]> = [
        [
          "a getter",
          { steps: [{ ...step, parameters: withThrowingGetter() }] },
          /could not be read \(at plan\.steps\[0\]\.parameters\.boom: reading it threw/
        ],
        ["a Proxy", { steps: [throwingProxy()] }, /could not be read \(at plan\.steps\[0\]\.a/],
        ["a revoked Proxy", revokedProxy(), /could not be read \(at plan: reading it threw: TypeError/],
        ["a BigInt", { steps: [{ ...step, parameters: { n: 1n } }] }, /a bigint is not a JSON value/],
        ["deep parameters", { steps: [{ ...step, parameters: nested(5_000) }] }, /nests deeper than 256 levels/]
      ]
      for (const [label, p, detail] of plans) {
        const error = yield* Effect.flip(
          h.pipeline.executePlanWithSynthesis(
            { request: "q", requestId: `wf-${label.replace(/\W/g, "")}` },
            p as RoutingPlan.RoutingPlanInput
          )
        )
        expect(error).toMatchObject({ _tag: "PlanningError", reason: "invalid_plan" })
        expect(error.message).toMatch(detail)
      }
      expect(h.prompts).toEqual([])
    }))

  it("hostile values: a dependency chain of 20,000 steps validates without a stack overflow, and a cycle through all of them is found", () => {
    const n = 20_000
    const steps = Array.from({ length: n }, (_, i) => ({
      ...quoteStep(`s${i}`),
      depends_on: i === 0 ? [] : [`s${i - 1}`]
    }))
    const context = { hasTool: () => true, priorStepIds: new Set<string>() }
    const chain = PlanValidation.validate({ steps }, context)
    expect(Either.isRight(chain) && chain.right.steps.length).toBe(n)
    const looped = PlanValidation.validate(
      { steps: [{ ...steps[0]!, depends_on: [`s${n - 1}`] }, ...steps.slice(1)] },
      context
    )
    expect(Either.isLeft(looped) && looped.left.reason).toBe("cycle")
  })
})

// ---------------------------------------------------------------------------
// The tool caller's own limit
// ---------------------------------------------------------------------------

describe("hostile values: the tool caller (ToolCalls.make) with hooks on tool calls", () => {
  it.effect("hostile values: with tool hooks registered, a BigInt result still fails only its call with invalid_result before any after_tool transform sees it", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const context = yield* Layer.build(PipelineHooks.layer([
        Hook.make({ name: "watch", afterTool: (_call, outcome) => Effect.sync(() => (seen.push(outcome), outcome)) })
      ]))
      const { operations } = Context.get(context, HookRuntime.HookRuntime)
      const registry = yield* ToolRegistry.make([hostileTool(() => ({ n: 1n }))])
      const call = ToolCalls.make(registry, operations, Duration.seconds(5))
      const result = yield* call({
        namespace: NAMESPACE,
        agent: "hostile-service",
        capability: "hostile_result",
        parameters: { kind: "x" },
        coordinates: { requestId: "tc", stepId: "s1" }
      })
      expect(result).toEqual({ status: "failed", error: "invalid_result: result.n: a bigint is not a JSON value" })
      // The transform saw the failure, never the BigInt.
      expect(JSON.stringify(seen)).toContain("invalid_result")
    }).pipe(Effect.scoped))
})

describe("hostile values: plans returned by AfterPlanning hooks", () => {
  for (
    const [label, make] of [["a Proxy whose traps throw", throwingProxy], ["a revoked Proxy", revokedProxy], [
      "a throwing getter",
      withThrowingGetter
    ]] as const
  ) {
    it.effect(`hostile values: an afterPlanning hook returning ${label} fails only that hook run (fail open: the last valid plan runs)`, () =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [
            Hook.make({ name: "hostile-plan", afterPlanning: () => Effect.succeed(make() as RoutingPlan.RoutingPlan) })
          ],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "draft" }
        })
        const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "hostile-plan" })
        expect(completed(result).response).toBe("draft")
        const record = yield* h.record("hostile-plan")
        const run = record.hookInvocations.find((i) => i.name === "hostile-plan")
        expect(run?.status).toBe("failed")
        expect(record.phases[0]?.steps[0]?.status).toBe("succeeded")
      }))
  }
})

describe("hostile values: what a hook fails with", () => {
  const failures: ReadonlyArray<readonly [string, () => unknown]> = [
    // (A revoked Proxy cannot even be failed with: `Effect.fail` throws in the handler — a panic, by the rules.)
    ["a Proxy whose traps throw", throwingProxy],
    ["an object without a prototype", () => Object.create(null)],
    ["a cyclic object", cyclic],
    ["an object holding a BigInt", () => ({ code: 10n })]
  ]
  for (const [label, make] of failures) {
    it.effect(`hostile values: a hook failing with ${label} fails open and is recorded — never a crash`, () =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [Hook.make({ name: "bad-failure", beforePlanning: () => Effect.fail(make()) })],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "draft" }
        })
        const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "bad-failure" })
        expect(completed(result).response).toBe("draft")
        const run = (yield* h.record("bad-failure")).hookInvocations.find((i) => i.name === "bad-failure")
        expect(run?.status).toBe("failed")
        expect(typeof run?.error).toBe("string")
      }))
  }

  it.effect("hostile values: a hook failing with an object that holds credentials (a request's headers) records its text without them, bounded", () =>
    Effect.gen(function*() {
      const secret = "sk-live-canary-0123456789"
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "leaky",
            beforePlanning: () =>
              Effect.fail({
                request: { url: "https://api.example", headers: { authorization: `Bearer ${secret}` }, apiKey: secret },
                body: "x".repeat(50_000)
              })
          })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "draft" }
      })
      yield* h.pipeline.process({ request: "quote ACME", requestId: "leaky" })
      const record = yield* h.record("leaky")
      const run = record.hookInvocations.find((i) => i.name === "leaky")!
      expect(run.error).toContain("https://api.example")
      expect(JSON.stringify(record)).not.toContain(secret)
      expect(run.error!.length).toBeLessThan(4_100)
    }))
})
