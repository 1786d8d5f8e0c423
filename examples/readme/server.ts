import { Layer } from "effect"
import { Agent } from "effect-agent-pipeline"
import * as AgentServer from "effect-agent-pipeline/server"
import { weatherForecast } from "./tools.js"

// Your agent, assembled as usual.
export const AgentLive = Agent.layerOffline({ tools: [weatherForecast] })

// One Layer serves it on http://127.0.0.1:4111: the JSON and SSE routes,
// /v1/chat/completions, /openapi.json, /docs and the viewer at /. When
// AGENT_API_KEY is set, every route but the viewer's page requires it.
export const ServerLive = AgentServer.layer({ port: 4111 }).pipe(Layer.provide(AgentLive))

// Your entry point launches it (`Layer.launch(ServerLive)` under Node's
// runtime); the server stops, draining its streams, on Ctrl-C.
