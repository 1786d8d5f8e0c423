// The effect-agent-pipeline adapter for ../shared/bench-peers (`EAP_ADAPTER`):
// the same scenario and counters as the peers, on this library's current API.
//
//   npm run build
//   b=$(mktemp -d) && cp -r ../shared/bench-peers/. "$b" && (cd "$b" && npm ci)
//   (cd "$b" && EAP_DIST=$OLDPWD EAP_ADAPTER=$OLDPWD/bench/peers/eap-adapter.mjs node bench.mjs)
//
// Mapping onto the common scenario (counts per request):
// - Model: the library's ScriptedModel. Call #1 is the plan (one step
//   bench/lookup/lookup {q:"bench"}); call #2 is synthesis, which reads the
//   step result from the <step_results> section of its prompt. Stateless: the
//   plan entry is an endless view of one prompt→plan function, and the live
//   prompt log is truncated on every call (as the AI SDK mock's is).
// - Tool: an @effect/ai Tool registered with ToolRegistry.entry; its handler
//   is synchronous (×1).
// - Enrichment: one BeforePlanning hook returns { rag_context: 1 KiB } (×1);
//   the default PromptBuilder renders it in both the planning and the
//   synthesis prompt, and the fake model checks both (×2 seen).
// - Redaction: one AfterSynthesis hook (×1).
// - Every hook handler is a plain synchronous function marked with
//   `Hook.sync` (like the peers' middleware functions); the library runs it
//   with the same policies, records and spans as an Effect handler. With
//   `EAP_HANDLERS=effect` the same bodies are written as `Effect.sync`
//   handlers instead (the Effect-native style).
// - Each H unit is one hook with the operation hooks closest to the peers'
//   before-model, after-model and around-tool (the AI SDK's transformParams,
//   wrapGenerate and execute wrapper):
//     beforeInference transform (both model calls) -> counter `before`     (×2)
//     afterInference transform  (both model calls) -> counter `after`      (×2)
//     around.toolExecution observer                -> counter `aroundTool` (×1)
//   Hook calls per request: 2 + 5H (the AI SDK's: 6 + 5H).
// - Records: ExecutionStore.layerMemory with 1 s retention, purged inside
//   every 500th timed request (recording on), as the built-in adapter does.
// - Spans: no tracer provided, so Effect's built-in tracer (the default).
export async function build(H, C, { recording, locate, scenario }) {
  const { CONTEXT_MARKER, CONTEXT_1KB, USER_MSG, TOOL_Q, toolResultFor, finalAnswerFor, EXPECTED_FINAL, redact } =
    scenario
  const eap = locate()
  const { Agent, ExecutionStore, Hook, Pipeline, PromptBuilder, ScriptedModel, ToolRegistry } = await import(
    eap.mainUrl
  )
  const { Effect, ManagedRuntime, Option, Schema } = await import(eap.dep("effect").url)
  const { Tool } = await import(eap.dep("@effect/ai").url)

  // A handler from a body: Hook.sync (default) or an Effect.sync handler.
  const handler = process.env.EAP_HANDLERS === "effect"
    ? (body) => (...args) => Effect.sync(() => body(...args))
    : (body) => Hook.sync(body)

  const ESC_MARKER = PromptBuilder.escapeContent(CONTEXT_MARKER)
  const PLAN_TEXT = JSON.stringify({
    steps: [{ step_id: "s1", namespace: "bench", agent: "lookup", capability: "lookup", parameters: { q: TOOL_Q } }],
    terminal: true
  })
  let handle
  const planFor = (prompt) => {
    handle.prompts.length = 0
    C.model++
    if (prompt.includes(ESC_MARKER)) C.modelSawEnrichment++
    return PLAN_TEXT
  }
  const synthesisFor = (prompt) => {
    handle.prompts.length = 0
    C.model++
    if (prompt.includes(ESC_MARKER)) C.modelSawEnrichment++
    let toolResult
    const results = PromptBuilder.readSection(prompt, "step_results")
    if (results !== undefined) {
      for (const line of results.split("\n")) {
        const step = JSON.parse(line)
        if (step.capability === "lookup" && step.status === "succeeded") toolResult = step.output
      }
    }
    if (typeof toolResult !== "string") throw new Error("synthesis prompt carries no lookup result")
    C.modelSawToolResult++
    return finalAnswerFor(toolResult)
  }
  const endlessPlans = new Proxy([], {
    get: (target, key) =>
      key === "length"
        ? Number.MAX_SAFE_INTEGER
        : typeof key === "string" && /^\d+$/.test(key)
        ? planFor
        : Reflect.get(target, key)
  })
  handle = Effect.runSync(ScriptedModel.make({ plans: endlessPlans, synthesis: synthesisFor }))

  const Lookup = Tool.make("lookup", {
    description: "Look up a fact.",
    parameters: { q: Schema.String },
    success: Schema.String
  })
  const tools = [
    ToolRegistry.entry({
      namespace: "bench",
      agent: "lookup",
      tool: Lookup,
      handler: ({ q }) =>
        Effect.sync(() => {
          C.tool++
          return toolResultFor(q)
        })
    })
  ]

  const hooks = [
    Hook.make({
      name: "enrichment",
      beforePlanning: handler(() => {
        C.enrich++
        return { enrichments: { rag_context: CONTEXT_1KB } }
      })
    })
  ]
  for (let i = 0; i < H; i++) {
    hooks.push(
      Hook.make({
        name: `noop_${i}`,
        beforeInference: handler((_call, prompt) => {
          C.before[i]++
          return prompt
        }),
        afterInference: handler((_call, text) => {
          C.after[i]++
          return text
        }),
        around: {
          toolExecution: handler(() => {
            C.aroundTool[i]++
          })
        }
      })
    )
  }
  hooks.push(
    Hook.make({
      name: "redaction",
      afterSynthesis: handler((_ctx, text) => {
        C.redact++
        return redact(text)
      })
    })
  )

  const layer = Agent.layer({
    model: handle.layer,
    tools,
    hooks,
    options: { recording },
    executionStore: ExecutionStore.layerMemory({ retention: { normal: "1 second", error: "1 second" } })
  })
  const runtime = ManagedRuntime.make(layer)
  const pipeline = await runtime.runPromise(Pipeline.Pipeline)
  const store = await runtime.runPromise(ExecutionStore.ExecutionStore)
  let n = 0

  const run = async () => {
    const request = pipeline.process({ request: USER_MSG })
    const res = await runtime.runPromise(
      recording && ++n % 500 === 0 ? Effect.zipRight(store.purgeExpired, request) : request
    )
    if (res._tag !== "Completed") throw new Error(`effect-agent-pipeline: request ended ${res._tag}`)
    return res.response.response
  }

  // The evidence, checked once: with recording on the stored record lists
  // every hook invocation; with recording off nothing is stored.
  {
    const res = await runtime.runPromise(pipeline.process({ request: USER_MSG }))
    const rec = await runtime.runPromise(store.get(res.response.requestId))
    const wantInvocations = 2 + 5 * H
    if (recording) {
      if (Option.isNone(rec)) throw new Error("eap: recording on, but no execution record was stored")
      const r = rec.value
      if (r.lifecycle.status !== "succeeded" || r.hookInvocations.length !== wantInvocations || r.phases.length !== 1) {
        throw new Error(
          `eap: record: status ${r.lifecycle.status}, ${r.hookInvocations.length} hook invocations (want ${wantInvocations}), ${r.phases.length} phases`
        )
      }
      if (r.finalResponse !== EXPECTED_FINAL) throw new Error("eap: record.finalResponse is not the redacted answer")
    } else if (Option.isSome(rec)) {
      throw new Error("eap: recording off, but an execution record was stored")
    }
  }

  return {
    run,
    expected: {
      model: 2,
      modelSawEnrichment: 2,
      modelSawToolResult: 1,
      tool: 1,
      enrich: 1,
      redact: 1,
      before: 2 * H,
      after: 2 * H,
      aroundTool: H
    }
  }
}
