/**
 * Server test harness: an `AgentServer` on a real socket (port 0 on
 * loopback) over a test agent, and `fetch` to it.
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Layer, type Scope } from "effect"
import { Agent, Approval, type ScriptedModel } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import { allTools } from "../../examples/shared/DemoTools.js"

/** A running server: its base URL and a `fetch` bound to it. */
export interface Running {
  readonly url: string
  readonly port: number
  readonly hostname: string
  readonly fetch: (path: string, init?: RequestInit) => Effect.Effect<Response>
  readonly json: (
    path: string,
    init?: RequestInit
  ) => Effect.Effect<{ readonly status: number; readonly body: any; readonly headers: Headers }>
}

/** Starts `server` (provided with `services`) in the test's Scope. */
export const start = <E1, E2, R>(
  server: Layer.Layer<HttpServer.HttpServer, E1, R>,
  services: Layer.Layer<R, E2>
): Effect.Effect<Running, E1 | E2, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Layer.provide(server, services))
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    return running(address.hostname, address.port)
  })

/** A client of the server at `hostname:port`. */
export const running = (hostname: string, port: number): Running => {
  const url = `http://${hostname}:${port}`
  const fetchTo = (path: string, init?: RequestInit) => Effect.promise(() => fetch(`${url}${path}`, init))
  return {
    url,
    port,
    hostname,
    fetch: fetchTo,
    json: (path, init) =>
      Effect.flatMap(fetchTo(path, init), (response) =>
        Effect.promise(async () => {
          const text = await response.text()
          let body: unknown = text
          try {
            body = JSON.parse(text)
          } catch {
            // not JSON: the text itself
          }
          return { status: response.status, body, headers: response.headers }
        }))
  }
}

/** A JSON `POST` init. */
export const post = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body)
})

/** Every trade needs a human's approval. */
export const tradesNeedApproval: Approval.ApprovalPolicy["Type"] = {
  evaluate: (_ctx, p) =>
    Effect.succeed(
      p.steps.some((s) => s.capability === "execute_trade") ? Approval.suspend("trades need a human") : Approval.approve
    )
}

/** A test agent over the demo tools, trades suspended for approval. */
export const agent = (script: ScriptedModel.Script) =>
  Agent.layerTest({ tools: allTools, approval: tradesNeedApproval, script })

/** A server (port 0 on loopback unless `options` says otherwise, no rate limit) over a test agent. */
export const startAgent = (script: ScriptedModel.Script, options: AgentServer.Options = {}) =>
  start(AgentServer.layer({ port: 0, rateLimit: false, ...options }), agent(script))
