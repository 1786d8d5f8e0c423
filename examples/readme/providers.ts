/**
 * README "Model providers": an agent on a real model — from configuration
 * (`AGENT_MODEL`), or by hand with the provider subpaths.
 */
import { allTools } from "../shared/DemoTools.js"
// #region readme
import { Agent } from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as OpenAi from "effect-agent-pipeline/openai"

// From configuration (default: the offline model):
//   AGENT_MODEL=openai:gpt-4.1-mini OPENAI_API_KEY=sk-…
//   AGENT_MODEL=openai:qwen2.5:7b-instruct OPENAI_BASE_URL=http://localhost:11434/v1   (Ollama, no key)
//   AGENT_MODEL=anthropic:claude-sonnet-4-5 ANTHROPIC_API_KEY=sk-ant-…
export const AgentLive = Agent.layerConfig({ tools: allTools })

// By hand: a vLLM server, and Claude with its key from ANTHROPIC_API_KEY.
export const VllmAgent = Agent.layer({
  model: OpenAi.layer({ model: "Qwen/Qwen2.5-7B-Instruct", apiUrl: "http://localhost:8000/v1" }),
  tools: allTools
})
export const ClaudeAgent = Agent.layer({ model: Anthropic.layerConfig("claude-sonnet-4-5"), tools: allTools })
// #endregion readme
