import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { Agent, Pipeline } from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as OpenAi from "effect-agent-pipeline/openai"
import { QuotesLive, stockQuote } from "./tools.js"

// From configuration (default: the offline model):
//   AGENT_MODEL=openai:gpt-4.1-mini OPENAI_API_KEY=sk-…
//   AGENT_MODEL=openai:qwen2.5:7b-instruct OPENAI_BASE_URL=http://localhost:11434/v1   (Ollama, no key)
//   AGENT_MODEL=anthropic:claude-sonnet-4-5 ANTHROPIC_API_KEY=sk-ant-…
const AgentLive = Agent.layerConfig({ tools: [stockQuote] }).pipe(Layer.provide(QuotesLive))

// By hand: a vLLM server, and Claude with its key from ANTHROPIC_API_KEY.
export const VllmAgent = Agent.layer({
  model: OpenAi.layer({ model: "Qwen/Qwen2.5-7B-Instruct", apiUrl: "http://localhost:8000/v1" }),
  tools: [stockQuote]
}).pipe(Layer.provide(QuotesLive))
export const ClaudeAgent = Agent.layer({ model: Anthropic.layerConfig("claude-sonnet-4-5"), tools: [stockQuote] })
  .pipe(Layer.provide(QuotesLive))

const main = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const result = yield* pipeline.process({ request: "What is the stock quote for ACME?" })
  yield* Console.log(result._tag === "Completed" ? result.response.response : "suspended")
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
