/**
 * The parts `Agent.layer` assembles besides hooks, model and stores: the
 * optional services a config names, and the redaction guardrail's Layer.
 */
import { Context, Effect, Layer } from "effect"
import { InvalidPipelineOptions } from "../../domain/PipelineError.js"
import type { AgentConfig } from "../AgentConfig.js"
import { ApprovalPolicy } from "../Approval.js"
import { ConversationHistoryPreparer } from "../ConversationHistory.js"
import * as Guardrails from "../Guardrails.js"
import { PromptBuilder } from "../PromptBuilder.js"
import { PromptValuePreparer } from "../PromptPreparation.js"
import { Gate } from "../ShortCircuit.js"

/** The optional services a config names, as one context. */
export const optionalServices = (
  config: Pick<
    AgentConfig<unknown, unknown, never, unknown, unknown, never, unknown, unknown, unknown, unknown, unknown, unknown>,
    "approval" | "gate" | "promptBuilder" | "conversationHistory" | "promptValues"
  >
) => {
  let services = Context.empty()
  if (config.approval !== undefined) services = Context.add(services, ApprovalPolicy, config.approval)
  if (config.gate !== undefined) services = Context.add(services, Gate, config.gate)
  if (config.promptBuilder !== undefined) services = Context.add(services, PromptBuilder, config.promptBuilder)
  if (config.conversationHistory !== undefined) {
    services = Context.add(services, ConversationHistoryPreparer, config.conversationHistory)
  }
  if (config.promptValues !== undefined) services = Context.add(services, PromptValuePreparer, config.promptValues)
  return services
}

/** The guardrail's Layer; refused options fail it as an invalid `redaction` option. */
export const guardrailLayer = (options: Guardrails.RedactionOptions) =>
  Layer.effect(
    Guardrails.RedactionGuardrail,
    Effect.mapError(
      Guardrails.redaction(options),
      (refused) => new InvalidPipelineOptions({ option: "redaction", detail: refused.message })
    )
  )
