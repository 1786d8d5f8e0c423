/**
 * Bad input at every boundary: malformed requests, hooks that return the
 * wrong shape (as a JavaScript caller could write them), malformed hook
 * lists, a several-MB enrichment, an interrupted request and a failing
 * execution store. None of them may crash the pipeline or change the
 * business outcome beyond what the contract says.
 */
import { LanguageModel, Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Deferred, Effect, Exit, Fiber, Layer, Option, Schema, Stream } from "effect"
import {
  AfterSynthesis,
  Agent,
  type AgentResponse,
  BeforePlanning,
  CheckpointStore,
  ExecutionStore,
  Hook,
  Inference,
  Pipeline,
  PipelineError,
  PromptBuilder,
  type ScriptedModel,
  ScriptedModel as Scripted,
  ToolRegistry
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import { makeHarness, NAMESPACE, plan, quoteStep, tracer, untypedInput, weatherStep } from "../support/Harness.js"
import { PipelineHooks } from "../support/Internal.js"

/** A hook as a JavaScript caller could write it: the types are not checked. */
const untyped = (hook: object): Hook.Hook<never> => hook as Hook.Hook<never>

const completedText = (result: AgentResponse.PipelineResult): string | undefined =>
  result._tag === "Completed" ? result.response.response : undefined

const FAIL_OPEN = { policy: "fail_open", action: "continue", reason: "hook_error" } as const

// ---------------------------------------------------------------------------
// Malformed requests
// ---------------------------------------------------------------------------

const cyclic: Record<string, unknown> = {}
cyclic.self = cyclic

/** Label, input, and what the refusal must say: the first failing path and its one-line detail. */
const malformedRequests: ReadonlyArray<readonly [string, unknown, string, RegExp]> = [
  ["null", null, "", /^expected an object with a "request" string, got null$/],
  ["undefined", undefined, "", /^expected an object with a "request" string, got undefined$/],
  ["a string", "quote ACME", "", /^expected an object with a "request" string, got a string$/],
  ["an empty object", {}, "request", /^is required$/],
  ["an empty request", { request: "" }, "request", /^must be a non-empty string$/],
  ["a numeric request", { request: 42 }, "request", /^Expected string, actual 42$/],
  ["an array", [{ request: "quote" }], "", /^expected an object with a "request" string, got an array$/],
  [
    "a function in metadata",
    { request: "quote", metadata: { callback: () => 1 } },
    "metadata.callback",
    /^a function is not a JSON value$/
  ],
  [
    "NaN in metadata",
    { request: "quote", metadata: { score: Number.NaN } },
    "metadata.score",
    /^NaN is not a finite number$/
  ],
  [
    "Infinity nested in metadata",
    { request: "quote", metadata: { deep: { list: [1, Number.POSITIVE_INFINITY] } } },
    "metadata.deep.list[1]",
    /^Infinity is not a finite number$/
  ],
  [
    "undefined in metadata",
    { request: "quote", metadata: { missing: undefined } },
    "metadata.missing",
    /^undefined is not a JSON value$/
  ],
  [
    "a class instance in metadata",
    { request: "quote", metadata: { when: new Date(0) } },
    "metadata.when",
    /^a Date instance is not a plain JSON object$/
  ],
  [
    "a cyclic metadata object",
    { request: "quote", metadata: cyclic },
    "metadata.self",
    /^a cycle \(the value contains itself\)$/
  ],
  [
    "metadata that is an array",
    { request: "quote", metadata: ["a"] },
    "metadata",
    /^expected a JSON object, got an array$/
  ],
  [
    "metadata that is a string",
    { request: "quote", metadata: "tenant=1" },
    "metadata",
    /^expected a JSON object, got a string$/
  ],
  ["an empty requestId", { request: "quote", requestId: "" }, "requestId", /^must be a non-empty string$/]
]

describe("malformed requests", () => {
  for (const [label, input, path, detail] of malformedRequests) {
    it.effect(`process(${label}) fails with InvalidRequest naming the first failing path, and records nothing`, () =>
      Effect.gen(function*() {
        const calls: Array<string> = []
        const h = yield* makeHarness({
          hooks: [tracer("t", calls)],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
        })
        const error = yield* Effect.flip(h.pipeline.process(untypedInput(input)))
        expect(error).toBeInstanceOf(PipelineError.InvalidRequest)
        if (error._tag !== "InvalidRequest") return expect.unreachable()
        expect(error.reason).toBe("malformed")
        expect(error.path).toBe(path)
        expect(error.detail).toMatch(detail)
        expect(error.message).toBe(
          path === "" ? `invalid request: ${error.detail}` : `invalid request at ${path}: ${error.detail}`
        )
        expect(error.message).not.toContain("\n")
        // The full schema error stays available.
        expect(error.issues?.length ?? 0).toBeGreaterThan(0)
        expect((yield* Effect.orDie(h.store.list())).records).toEqual([])
        expect(calls).toEqual([])
        expect(h.prompts).toEqual([])
      }))
  }

  it.effect("stream(...) and executePlanWithSynthesis(...) reject malformed requests the same way", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ script: { plans: [], synthesis: "done" } })
      for (const input of [null, {}, { request: "" }, { request: 42 }, { request: "q", metadata: { f: () => 1 } }]) {
        const streamed = yield* Effect.flip(Stream.runCollect(h.pipeline.stream(untypedInput(input))))
        expect(streamed._tag).toBe("InvalidRequest")
        const workflow = yield* Effect.flip(
          h.pipeline.executePlanWithSynthesis(untypedInput(input), plan([quoteStep("s1")]))
        )
        expect(workflow._tag).toBe("InvalidRequest")
      }
      expect((yield* Effect.orDie(h.store.list())).records).toEqual([])
      expect(h.prompts).toEqual([])
    }))

  it.effect("a valid request with JSON metadata is accepted (the rejection above is specific)", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({ script: { plans: [plan([quoteStep("s1")])], synthesis: "done" } })
      const result = yield* h.pipeline.process({
        request: "quote",
        requestId: "ok-meta",
        metadata: { n: 1.5, nested: { list: [null, true, "x"] } }
      })
      expect(completedText(result)).toBe("done")
      expect((yield* h.record("ok-meta")).metadata).toEqual({ n: 1.5, nested: { list: [null, true, "x"] } })
    }))
})

// ---------------------------------------------------------------------------
// Hooks returning the wrong shape
// ---------------------------------------------------------------------------

interface WrongShapeCase {
  readonly label: string
  readonly hook: Hook.Hook<never>
  readonly stage: "before_planning" | "after_planning" | "after_execution" | "after_synthesis"
  readonly error: RegExp
}

const wrongShapes: ReadonlyArray<WrongShapeCase> = [
  {
    label: "beforePlanning returning a number",
    hook: untyped({ name: "bad", beforePlanning: () => Effect.succeed(42) }),
    stage: "before_planning",
    error: /beforePlanning must return an object or nothing/
  },
  {
    label: "beforePlanning returning an array",
    hook: untyped({ name: "bad", beforePlanning: () => Effect.succeed([{ enrichments: { rag_context: "x" } }]) }),
    stage: "before_planning",
    error: /beforePlanning must return an object or nothing/
  },
  {
    label: "beforePlanning returning a function-valued enrichment",
    hook: untyped({ name: "bad", beforePlanning: () => Effect.succeed({ enrichments: { k: () => 1 } }) }),
    stage: "before_planning",
    error: /enrichment k is not a JSON value/
  },
  {
    label: "beforePlanning returning enrichments that are not an object",
    hook: untyped({ name: "bad", beforePlanning: () => Effect.succeed({ enrichments: "rag" }) }),
    stage: "before_planning",
    error: /enrichments must be an object/
  },
  {
    label: "beforePlanning returning a Promise instead of an Effect",
    hook: untyped({ name: "bad", beforePlanning: () => Promise.resolve({ enrichments: { rag_context: "x" } }) }),
    stage: "before_planning",
    error: /did not return an Effect/
  },
  {
    label: "beforePlanning returning a plain value instead of an Effect",
    hook: untyped({ name: "bad", beforePlanning: () => ({ enrichments: { rag_context: "x" } }) }),
    stage: "before_planning",
    error: /did not return an Effect/
  },
  {
    label: "afterPlanning returning null",
    hook: untyped({ name: "bad", afterPlanning: () => Effect.succeed(null) }),
    stage: "after_planning",
    error: /afterPlanning must return a routing plan/
  },
  {
    label: "afterPlanning returning a string",
    hook: untyped({ name: "bad", afterPlanning: () => Effect.succeed("run everything") }),
    stage: "after_planning",
    error: /afterPlanning must return a routing plan/
  },
  {
    label: "afterPlanning returning a plain plan instead of an Effect",
    hook: untyped({ name: "bad", afterPlanning: (_c: unknown, p: unknown) => p }),
    stage: "after_planning",
    error: /did not return an Effect/
  },
  {
    label: "afterExecution returning a Promise",
    hook: untyped({ name: "bad", afterExecution: () => Promise.resolve() }),
    stage: "after_execution",
    error: /did not return an Effect/
  },
  {
    label: "afterSynthesis returning a number",
    hook: untyped({ name: "bad", afterSynthesis: () => Effect.succeed(42) }),
    stage: "after_synthesis",
    error: /afterSynthesis must return a string, got number/
  },
  {
    label: "afterSynthesis returning a plain string instead of an Effect",
    hook: untyped({ name: "bad", afterSynthesis: () => "REPLACED" }),
    stage: "after_synthesis",
    error: /did not return an Effect/
  }
]

describe("hooks returning the wrong shape fail open", () => {
  for (const c of wrongShapes) {
    it.effect(`C8/C11/C12/C14: ${c.label} → fail_open/continue/hook_error, the request completes`, () =>
      Effect.gen(function*() {
        const h = yield* makeHarness({
          hooks: [c.hook],
          script: { plans: [plan([quoteStep("s1")])], synthesis: "the draft" }
        })
        const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "shape" })
        // The stage fallback: nothing changed, the request completed with the draft.
        expect(completedText(result)).toBe("the draft")
        const record = yield* h.record("shape")
        expect(record.lifecycle?.status).toBe("succeeded")
        const invocations = record.hookInvocations.filter((i) => i.name === "bad")
        expect(invocations).toHaveLength(1)
        const invocation = invocations[0]!
        expect(invocation.stage).toBe(c.stage)
        expect(invocation.outcome).toBe("failed")
        expect(invocation.decision).toEqual(FAIL_OPEN)
        expect(invocation.error).toMatch(c.error)
        // Nothing of the rejected result was applied.
        expect(invocation.effects).toEqual([])
        expect(record.phases[0]!.plan.steps.map((s) => s.step_id)).toEqual(["s1"])
        expect(record.finalResponse).toBe("the draft")
        expect(h.prompts[0]!.prompt).not.toContain("<agent_memory>")
      }))
  }

  it.effect("C4/C14: a rejected beforePlanning result is not half-applied, and the next hook still runs", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          untyped({
            name: "bad",
            beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "half-applied", k: () => 1 } })
          }),
          Hook.make({
            name: "good",
            beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "from good" } })
          })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" }
      })
      yield* h.pipeline.process({ request: "quote", requestId: "half" })
      const prompt = h.prompts[0]!.prompt
      expect(prompt).not.toContain("half-applied")
      expect(PromptBuilder.readSection(prompt, "agent_memory")).toBe("from good")
      const record = yield* h.record("half")
      expect(record.hookInvocations.map((i) => [i.name, i.outcome])).toEqual([["bad", "failed"], ["good", "succeeded"]])
      expect(record.hookInvocations[1]!.effects.map((e) => e.effectId)).toEqual(["planning_enrichment:rag_context"])
    }))

  it.effect("C12: a wrong-shaped afterSynthesis keeps the previous string in the chain", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "upper", afterSynthesis: (_c, t) => Effect.succeed(t.toUpperCase()) }),
          untyped({ name: "bad", afterSynthesis: () => Effect.succeed({ text: "object" }) }),
          Hook.make({ name: "suffix", afterSynthesis: (_c, t) => Effect.succeed(`${t}!`) })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "draft" }
      })
      const result = yield* h.pipeline.process({ request: "q", requestId: "chain" })
      expect(completedText(result)).toBe("DRAFT!")
      const record = yield* h.record("chain")
      expect(record.hookInvocations.find((i) => i.name === "bad")?.error).toBe(
        "afterSynthesis must return a string, got object"
      )
    }))
})

// ---------------------------------------------------------------------------
// Malformed hook lists from JavaScript callers
// ---------------------------------------------------------------------------

const buildUnknown = (hooks: unknown) => Effect.flip(Effect.scoped(Layer.build(PipelineHooks.layerUnknown(hooks))))

describe("malformed hook lists (C2)", () => {
  const ok = { name: "ok", beforePlanning: () => Effect.void }
  const cases: ReadonlyArray<readonly [string, unknown, number, RegExp]> = [
    ["a handler that is a number", [{ name: "x", beforePlanning: 42 }], 0, /beforePlanning is a number/],
    ["a null entry", [null], 0, /null/],
    ["an undefined entry after a valid one", [ok, undefined], 1, /undefined/],
    ["a string entry", [ok, ok, "hook"], 2, /string/],
    ["a hook without a name", [ok, { afterSynthesis: () => Effect.succeed("x") }], 1, /name/],
    ["a hook with an empty name", [{ name: "", afterSynthesis: () => Effect.succeed("x") }], 0, /name/],
    [
      "a handler that is an object",
      [ok, { name: "y", afterSynthesis: { run: true } }],
      1,
      /afterSynthesis is a object/
    ],
    ["a non-boolean required marker", [{ name: "z", required: "yes", afterPlanning: () => Effect.void }], 0, /required/]
  ]
  for (const [label, hooks, index, detail] of cases) {
    it.effect(`C2: layerUnknown with ${label} fails with InvalidOrchestratorConfig at index ${index}`, () =>
      Effect.gen(function*() {
        const error = yield* buildUnknown(hooks)
        expect(error).toBeInstanceOf(PipelineError.InvalidOrchestratorConfig)
        if (error._tag !== "InvalidOrchestratorConfig") return expect.unreachable()
        expect(error.index).toBe(index)
        expect(error.detail).toMatch(detail)
        expect(error.message).toContain(`hook entry ${index}`)
      }))
  }

  it.effect("C2: layerUnknown with something that is not an array fails with InvalidOrchestratorConfig, not a crash", () =>
    Effect.gen(function*() {
      for (const hooks of ["not an array", 42, null, undefined, { 0: ok, length: 1 }]) {
        const exit = yield* Effect.exit(Effect.scoped(Layer.build(PipelineHooks.layerUnknown(hooks))))
        expect(Exit.isFailure(exit) && Option.isSome(Cause.failureOption(exit.cause))).toBe(true)
        const error = yield* buildUnknown(hooks)
        expect(error._tag).toBe("InvalidOrchestratorConfig")
        expect(error.message).toMatch(/array/)
      }
    }))

  it.effect("C2: a whole pipeline built over layerUnknown fails its Layer with the typed error", () =>
    Effect.gen(function*() {
      const model = yield* Scripted.make({ plans: [], synthesis: "x" })
      const hooks = PipelineHooks.layerUnknown([{ name: "x", beforePlanning: 42 }])
      const layer = Pipeline.layer().pipe(
        Layer.provide(hooks),
        Layer.provide(
          Inference.layer.pipe(
            Layer.provide(Layer.merge(hooks, Layer.succeed(LanguageModel.LanguageModel, model.service)))
          )
        ),
        Layer.provide(ToolRegistry.layer(allTools)),
        Layer.provide(ExecutionStore.layerMemory()),
        Layer.provide(CheckpointStore.layerMemory)
      )
      const error = yield* Effect.flip(Effect.scoped(Layer.build(layer)))
      expect(error._tag).toBe("InvalidOrchestratorConfig")
    }))

  it.effect("C2: layerUnknown accepts a well-formed list (the failures above are specific)", () =>
    Effect.gen(function*() {
      const context = yield* Effect.scoped(
        Layer.build(PipelineHooks.layerUnknown([ok, { name: "s", afterSynthesis: () => Effect.succeed("s") }]))
      )
      expect(Context.get(context, AfterSynthesis.AfterSynthesis).hookCount).toBe(1)
      expect(Context.get(context, BeforePlanning.BeforePlanning).hookCount).toBe(1)
    }))
})

// ---------------------------------------------------------------------------
// A several-MB enrichment
// ---------------------------------------------------------------------------

describe("a several-MB enrichment", () => {
  it.effect("C4/C7/C15: under a raised maxEnrichmentBytes, a 5 MB rag_context flows into <agent_memory> and its exact value into the enrichment effect", () =>
    Effect.gen(function*() {
      const unit = "retrieved passage about ACME quarterly results; "
      const big = unit.repeat(Math.ceil((5 * 1024 * 1024) / unit.length))
      expect(big.length).toBeGreaterThanOrEqual(5 * 1024 * 1024)
      const h = yield* makeHarness({
        hooks: [
          Hook.make({ name: "rag", beforePlanning: () => Effect.succeed({ enrichments: { rag_context: big } }) })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "done" },
        // Over the 1 MiB default on purpose: a deployment that raised the limit.
        options: { maxEnrichmentBytes: 8 * 1024 * 1024 }
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "big" })
      expect(completedText(result)).toBe("done")

      const planning = h.prompts.find((p) => p.kind === "plan")!
      expect(planning.prompt.includes(`<agent_memory>\n${big}\n</agent_memory>`)).toBe(true)
      const section = PromptBuilder.readSection(planning.prompt, "agent_memory")
      expect(section?.length).toBe(big.length)
      expect(section === big).toBe(true)

      const record = yield* h.record("big")
      expect(record.lifecycle?.status).toBe("succeeded")
      const effect = record.hookInvocations[0]!.effects.find((e) => e.effectId === "planning_enrichment:rag_context")
      expect(effect).toBeDefined()
      const data = effect!.data as { readonly key: string; readonly operation: string; readonly after: string }
      expect(data.key).toBe("rag_context")
      expect(data.operation).toBe("added")
      expect(typeof data.after).toBe("string")
      expect(data.after.length).toBe(big.length)
      expect(data.after === big).toBe(true)
    }))
})

// ---------------------------------------------------------------------------
// An interrupted request
// ---------------------------------------------------------------------------

const BlockForever = Tool.make("block_forever", {
  description: "Never returns",
  parameters: { label: Schema.String },
  success: Schema.String
})

const blockingStep = (stepId: string) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "blocking-service",
  capability: "block_forever",
  parameters: { label: stepId }
})

const blockingTool = (started: Deferred.Deferred<string>): ToolRegistry.ToolEntry<never> =>
  ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "blocking-service",
    tool: BlockForever,
    handler: ({ label }) => Effect.zipRight(Deferred.succeed(started, label), Effect.never)
  })

describe("an interrupted request", () => {
  it.effect("C16: interrupting process while a tool blocks finalizes the record as interrupted and keeps earlier hook invocations", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<string>()
      const calls: Array<string> = []
      const h = yield* makeHarness({
        hooks: [tracer("a", calls), tracer("b", calls)],
        tools: [...allTools, blockingTool(started)],
        script: { plans: [plan([blockingStep("blk")])], synthesis: "never" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "block", requestId: "int" }))
      expect(yield* Deferred.await(started)).toBe("blk")
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)

      const record = yield* h.record("int")
      expect(record.lifecycle?.status).toBe("interrupted")
      expect(record.lifecycle?.endedAt).toBeTypeOf("number")
      expect(record.hookInvocations.map((i) => `${i.stage}:${i.name}:${i.outcome}`)).toEqual([
        "before_planning:a:succeeded",
        "before_planning:b:succeeded",
        "after_planning:a:succeeded",
        "after_planning:b:succeeded"
      ])
      expect(record.finalResponse).toBeUndefined()
      expect(calls).not.toContain("after_execution:a")
    }))

  it.effect("C13/C16: an interrupted second phase keeps the completed first phase, and the second's plan and running step", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<string>()
      const h = yield* makeHarness({
        tools: [...allTools, blockingTool(started)],
        script: { plans: [plan([weatherStep("w1")], false), plan([blockingStep("blk2")])], synthesis: "never" }
      })
      const fiber = yield* Effect.fork(h.pipeline.process({ request: "two", requestId: "int2" }))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      const record = yield* h.record("int2")
      expect(record.lifecycle?.status).toBe("interrupted")
      expect(record.phases.map((p) => p.phase)).toEqual([1, 2])
      expect(record.phases[0]!.steps.map((s) => [s.step_id, s.status])).toEqual([["w1", "succeeded"]])
      expect(record.phases[0]!.running).toBeUndefined()
      // The phase that was executing: its accepted plan, no result, the step in flight.
      expect(record.phases[1]!.plan.steps.map((s) => s.step_id)).toEqual(["blk2"])
      expect(record.phases[1]!.steps).toEqual([])
      expect(record.phases[1]!.running).toEqual(["blk2"])
    }))
})

// ---------------------------------------------------------------------------
// A failing execution store
// ---------------------------------------------------------------------------

interface StoreProbe {
  readonly service: ExecutionStore.ExecutionStore.Service
  readonly saves: () => number
}

const failingStore = (): StoreProbe => {
  let saves = 0
  return {
    saves: () => saves,
    service: {
      save: () =>
        Effect.suspend(() => {
          saves++
          return Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "save", detail: "disk full" }))
        }),
      create: () => Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "create", detail: "disk full" })),
      update: () =>
        Effect.suspend(() => {
          saves++
          return Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "update", detail: "disk full" }))
        }),
      get: () => Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "get", detail: "disk full" })),
      list: () => Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "list", detail: "disk full" })),
      purgeExpired: Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "purge", detail: "disk full" })),
      sweepAbandoned: Effect.fail(new ExecutionStore.ExecutionStoreError({ operation: "sweep", detail: "disk full" }))
    }
  }
}

/** Like the harness, but over the given execution store. */
const pipelineOver = (
  store: ExecutionStore.ExecutionStore.Service,
  options: { readonly hooks?: ReadonlyArray<Hook.Hook<never>>; readonly script: ScriptedModel.Script }
) =>
  Effect.gen(function*() {
    const model = yield* Scripted.make(options.script)
    const layer = Agent.layer({
      model: Layer.succeed(LanguageModel.LanguageModel, model.service),
      tools: allTools,
      hooks: options.hooks ?? [],
      executionStore: Layer.succeed(ExecutionStore.ExecutionStore, store)
    })
    return Context.get(yield* Effect.scoped(Layer.build(layer)), Pipeline.Pipeline)
  })

describe("a failing execution store", () => {
  it.effect("C15: a store whose save always fails does not change the business outcome (process)", () =>
    Effect.gen(function*() {
      const store = failingStore()
      const pipeline = yield* pipelineOver(store.service, {
        hooks: [
          Hook.make({ name: "rag", beforePlanning: () => Effect.succeed({ enrichments: { rag_context: "ctx" } }) }),
          Hook.make({ name: "upper", afterSynthesis: (_c, t) => Effect.succeed(t.toUpperCase()) })
        ],
        script: { plans: [plan([quoteStep("s1")])], synthesis: "final answer" }
      })
      const result = yield* pipeline.process({ request: "quote ACME", requestId: "fs-1" })
      expect(result._tag).toBe("Completed")
      if (result._tag !== "Completed") return
      expect(result.response.response).toBe("FINAL ANSWER")
      expect(result.response.rawDraft).toBe("final answer")
      expect(result.response.phases[0]!.steps[0]!.status).toBe("succeeded")
      // The pipeline did try to write the evidence.
      expect(store.saves()).toBeGreaterThan(0)
    }))

  it.effect("C15: a failing store does not change a streamed outcome, nor a typed failure", () =>
    Effect.gen(function*() {
      const store = failingStore()
      const pipeline = yield* pipelineOver(store.service, {
        hooks: [
          Hook.required({
            name: "gov",
            afterPlanning: (ctx, p) => ctx.request === "deny" ? Effect.fail("no") : Effect.succeed(p)
          })
        ],
        script: {
          plans: [plan([quoteStep("s1")]), plan([quoteStep("s1")])],
          synthesis: "streamed",
          chunks: ["stre", "amed"]
        }
      })
      const events = Array.from(yield* Stream.runCollect(pipeline.stream({ request: "quote" })))
      expect(events.map((e) => e._tag)).toEqual(["Token", "Token", "Completed"])
      const last = events[2]!
      expect(last._tag === "Completed" && last.response.response).toBe("streamed")
      // A typed failure stays that typed failure (not a store error).
      const error = yield* Effect.flip(pipeline.process({ request: "deny" }))
      expect(error._tag).toBe("RequiredAfterPlanningError")
      expect(store.saves()).toBeGreaterThanOrEqual(2)
    }))
})
