import { Agent } from "effect-agent-pipeline"
import * as OpenAiCompat from "effect-agent-pipeline/openai-compat"

// Ollama on this machine, over Chat Completions.
export const OllamaAgent = Agent.layer({
  model: OpenAiCompat.layer({
    model: "qwen2.5:7b-instruct",
    apiUrl: "http://localhost:11434/v1",
    config: { temperature: 0 }
  }),
  tools: []
})

// The same from configuration: OPENAI_BASE_URL, OPENAI_API_KEY.
export const ConfiguredAgent = Agent.layer({ model: OpenAiCompat.layerConfig("qwen2.5:7b-instruct"), tools: [] })
