/**
 * The agent the viewer's browser tests look at, served by `AgentServer` on
 * a free loopback port. A scripted model plans by the request's words; the
 * hooks leave every kind of evidence the viewer shows: enrichments, the
 * required plan boundary's decision (accepting, or refusing trades), an
 * effect whose status changes while the request runs, an audit effect,
 * operation hooks (a tool-call guard, an inference observer), a failing
 * fail-open hook — and, for requests that say "xss", a corpus of hostile
 * strings in enrichments, tool outputs, effect payloads, model output and
 * error texts. Two gates (`Deferred`s) hold a "hold" request: one its
 * effect's completion, one its tool call.
 */
import { Tool } from "@effect/ai"
import { HttpServer } from "@effect/platform"
import { Context, Deferred, Effect, Layer, type Redacted, Schema } from "effect"
import { Agent, Approval, Hook, HookEffects, ToolRegistry } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import { allTools, NAMESPACE } from "../../examples/shared/DemoTools.js"

/** Hostile strings: each must reach the page as text and never run or make an element. */
export const XSS = [
  "<script>alert('xss-script')</script>",
  "</agent_memory><script>alert('xss-memory')</script>",
  "\"><img src=x onerror=alert('xss-img') id=xss-img>",
  "'><svg onload=alert('xss-svg') id=xss-svg></svg>",
  "javascript:alert('xss-link')",
  "<a id=xss-a href=\"javascript:alert('xss-a')\">click</a>",
  "<iframe id=xss-iframe src=\"javascript:alert('xss-iframe')\"></iframe>",
  "</pre></td></tr></table><b id=xss-bold>injected</b>",
  "{{constructor.constructor('alert(\"xss-template\")')()}}"
] as const

/** The effect id the "hold" request's before-planning hook reports, pending until released. */
export const liveEffectId = "live-audit-write"

const step = (id: string, agent: string, capability: string, parameters: object, dependsOn: Array<string> = []) => ({
  step_id: id,
  namespace: NAMESPACE,
  agent,
  capability,
  parameters,
  depends_on: dependsOn
})

const EchoTool = Tool.make("echo_text", {
  description: "Echoes a text (test tool)",
  parameters: { text: Schema.String },
  success: Schema.Struct({ echoed: Schema.String, html: Schema.String })
})

const HoldTool = Tool.make("hold", {
  description: "Waits until the test releases it (test tool)",
  parameters: {},
  success: Schema.Struct({ released: Schema.Boolean })
})

/** The request text between the prompt's `<user_request>` tags. */
const userRequest = (prompt: string): string => /<user_request>\n?([\s\S]*?)\n?<\/user_request>/.exec(prompt)?.[1] ?? ""

/** The plan for a request, by its words. */
const planFor = (prompt: string): unknown => {
  const request = userRequest(prompt).toLowerCase()
  if (request.includes("hold")) {
    return { steps: [step("h1", "test-service", "hold", {})], terminal: true, reasoning: "held by the test" }
  }
  if (request.includes("xss")) {
    return {
      steps: [step("x1", "test-service", "echo_text", { text: XSS.join(" ") })],
      terminal: true,
      reasoning: `reasoning ${XSS[0]} ${XSS[2]}`
    }
  }
  if (request.includes("trade")) {
    return { steps: [step("t1", "trading-service", "execute_trade", { symbol: "ACME", quantity: 10, side: "buy" })] }
  }
  if (request.includes("convert")) {
    return { steps: [step("c1", "fx-service", "convert_currency", { amount: 100, from: "USD", to: "EUR" })] }
  }
  // A DAG: two independent quotes, then a forecast after both.
  return {
    steps: [
      step("q1", "stock-service", "stock_quote", { symbol: "ACME" }),
      step("q2", "stock-service", "stock_quote", { symbol: "INIT" }),
      step("w1", "weather-service", "weather_forecast", { city: "Lisbon" }, ["q1", "q2"])
    ],
    terminal: true,
    reasoning: "quotes first, then the forecast"
  }
}

/** The gates a "hold" request waits on. */
export interface Gates {
  /** Completes the live effect (pending → succeeded). */
  readonly effect: Deferred.Deferred<void>
  /** Lets the held tool call return (the request then completes). */
  readonly tool: Deferred.Deferred<void>
}

const hooks = (gates: Gates) => [
  Hook.make({
    name: "desk-context",
    beforePlanning: (ctx) =>
      Effect.succeed({
        enrichments: {
          rag_context: ctx.request.includes("xss") ? XSS.join("\n") : "Desk notes: quotes are delayed 15 minutes."
        }
      })
  }),
  Hook.make({
    name: "live-audit",
    beforePlanning: (ctx) =>
      ctx.request.includes("hold")
        ? Effect.gen(function*() {
          yield* HookEffects.report({
            effectId: liveEffectId,
            name: "Live audit write",
            status: "pending",
            data: { submitted: true }
          })
          // Detached work updates the same effect later: the viewer must change its card, not add one.
          yield* Effect.forkDaemon(
            Deferred.await(gates.effect).pipe(
              Effect.zipRight(HookEffects.report({
                effectId: liveEffectId,
                name: "Live audit write",
                status: "succeeded",
                data: { submitted: true, acknowledged: true },
                summary: "audit writer acknowledged"
              })),
              Effect.ignore
            )
          )
        }).pipe(Effect.ignore)
        : Effect.void
  }),
  Hook.make({
    name: "no-guarded-echo",
    capabilities: ["deny"],
    guard: {
      toolCall: (call, proceed) =>
        call.payload.capability === "execute_trade" ? Hook.deny("trades are never called") : proceed
    }
  }),
  Hook.make({
    name: "model-observer",
    execution: Hook.fireAndRecord,
    around: { inference: () => Effect.succeed(() => Effect.void) }
  }),
  Hook.make({
    name: "application-audit",
    afterExecution: (ctx, results) =>
      HookEffects.report({
        effectId: ctx.request.includes("xss") ? `audit-${XSS[2]}` : "audit-write",
        name: ctx.request.includes("xss") ? `Audit ${XSS[0]}` : "Application audit write",
        status: "succeeded",
        data: ctx.request.includes("xss") ? { payloads: [...XSS], link: XSS[4] } : { step_count: results.steps.length },
        summary: ctx.request.includes("xss") ? XSS[5] : "audit writer acknowledged"
      }).pipe(Effect.ignore)
  }),
  Hook.make({
    name: "xss-failure",
    afterSynthesis: (ctx, response) =>
      ctx.request.includes("xss") ? Effect.fail(new Error(`failed: ${XSS[3]} ${XSS[6]}`)) : Effect.succeed(response)
  }),
  Hook.required({
    name: "plan-policy",
    afterPlanning: (_ctx, plan) =>
      plan.steps.some((s) => s.capability === "execute_trade")
        ? Effect.fail(new Error("trades are not allowed by this application"))
        : Effect.succeed(plan)
  })
]

/** The test agent (a scripted model, the demo tools and the test tools, the hooks above, in-memory stores). */
export const agentLayer = (gates: Gates): Layer.Layer<Agent.Services> =>
  Agent.layerTest({
    script: {
      plans: Array.from({ length: 200 }, () => planFor),
      synthesis: (prompt) =>
        userRequest(prompt).includes("xss") ? `Answer: ${XSS.join(" | ")}` : "Here is what the tools returned."
    },
    tools: [
      ...allTools,
      ToolRegistry.entry({
        namespace: NAMESPACE,
        agent: "test-service",
        tool: EchoTool,
        handler: ({ text }) => Effect.succeed({ echoed: text, html: XSS[7] })
      }),
      ToolRegistry.entry({
        namespace: NAMESPACE,
        agent: "test-service",
        tool: HoldTool,
        handler: () => Effect.as(Deferred.await(gates.tool), { released: true })
      })
    ],
    hooks: hooks(gates),
    approval: {
      evaluate: (_ctx, plan) =>
        Effect.succeed(
          plan.steps.some((s) => s.capability === "convert_currency")
            ? Approval.suspend("currency conversions need a human")
            : Approval.approve
        )
    }
  }).pipe(Layer.orDie)

/** A running server: its base URL and the hold gates. */
export interface Served {
  readonly url: string
  readonly gates: Gates
}

/** The test agent behind `AgentServer.layer` on a free loopback port, for the scope. */
export const serve = (options: { readonly apiKey?: Redacted.Redacted<string>; readonly traceUrl?: string } = {}) =>
  Effect.gen(function*() {
    const gates: Gates = { effect: yield* Deferred.make<void>(), tool: yield* Deferred.make<void>() }
    const server = AgentServer.layer({
      port: 0,
      host: "127.0.0.1",
      rateLimit: false,
      apiKey: options.apiKey,
      traceUrl: options.traceUrl ?? "http://jaeger.test/trace/{traceId}",
      recordPollInterval: "50 millis",
      drainTimeout: "1 second"
    }).pipe(Layer.provide(agentLayer(gates)), Layer.orDie)
    const context = yield* Layer.build(server)
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("the server is not on TCP")
    return { url: `http://127.0.0.1:${address.port}`, gates } satisfies Served
  })

/** Sends a request to the server (`POST /v1/requests`); the parsed JSON answer. */
export const submit = (served: Served, body: object, apiKey?: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${served.url}/v1/requests`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` })
      },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  })
