/**
 * effect-agent-pipeline: LLM agents on Effect whose plan → execute →
 * synthesize lifecycle is opened up by typed, recorded lifecycle hooks.
 *
 * @since 0.1.0
 */
// The request lifecycle, hooks and agent assembly
export * as AfterExecution from "./pipeline/AfterExecution.js"
export * as AfterPlanning from "./pipeline/AfterPlanning.js"
export * as AfterSynthesis from "./pipeline/AfterSynthesis.js"
export * as Agent from "./pipeline/Agent.js"
export * as Approval from "./pipeline/Approval.js"
export * as BeforePlanning from "./pipeline/BeforePlanning.js"
export * as ConversationHistory from "./pipeline/ConversationHistory.js"
export * as Guardrails from "./pipeline/Guardrails.js"
export * as Hook from "./pipeline/Hook.js"
export * as HookGroup from "./pipeline/HookGroup.js"
export * as HookRegistry from "./pipeline/HookRegistry.js"
export * as Pipeline from "./pipeline/Pipeline.js"
export * as PipelineOptions from "./pipeline/PipelineOptions.js"
export * as PromptBuilder from "./pipeline/PromptBuilder.js"
export * as PromptPreparation from "./pipeline/PromptPreparation.js"
export * as ShortCircuit from "./pipeline/ShortCircuit.js"
export * as SkillSelector from "./pipeline/SkillSelector.js"

// Built-in hooks
export * as Activity from "./hooks/Activity.js"
export * as Audit from "./hooks/Audit.js"
export * as ConversationHistoryHook from "./hooks/ConversationHistoryHook.js"
export * as MemoryHooks from "./hooks/MemoryHooks.js"
export * as SemanticCache from "./hooks/SemanticCache.js"
export * as UserMemoryHooks from "./hooks/UserMemoryHooks.js"

// Data: requests, plans, records, errors
export * as AgentResponse from "./domain/AgentResponse.js"
export * as ExecutionRecord from "./domain/ExecutionRecord.js"
export * as HookPoint from "./domain/HookPoint.js"
export * as Json from "./domain/Json.js"
export * as ModelCall from "./domain/ModelCall.js"
export * as Operation from "./domain/Operation.js"
export * as PipelineContext from "./domain/PipelineContext.js"
export * as PipelineError from "./domain/PipelineError.js"
export * as PipelineRequest from "./domain/PipelineRequest.js"
export * as PlanOutput from "./domain/PlanOutput.js"
export * as PlanValidation from "./domain/PlanValidation.js"
export * as RoutingPlan from "./domain/RoutingPlan.js"
export * as UserProfile from "./domain/UserProfile.js"

// The hook runtime: effect reporting, recording, the request scope
export * as Capability from "./runtime/Capability.js"
export * as HookEffects from "./runtime/HookEffects.js"
export * as Operations from "./runtime/Operations.js"
export * as PipelineMetrics from "./runtime/PipelineMetrics.js"
export * as Policy from "./runtime/Policy.js"
export * as Progress from "./runtime/Progress.js"
export * as Redaction from "./runtime/Redaction.js"
export * as RequestScope from "./runtime/RequestScope.js"
export * as Subscription from "./runtime/Subscription.js"

// Models, planning, synthesis, tools
export * as Embeddings from "./ai/Embeddings.js"
export * as Inference from "./ai/Inference.js"
export * as Memory from "./ai/Memory.js"
export * as ModelConfig from "./ai/ModelConfig.js"
export * as ModelPolicy from "./ai/ModelPolicy.js"
export * as ModelProvider from "./ai/ModelProvider.js"
export * as OfflineModel from "./ai/OfflineModel.js"
export * as Planner from "./ai/Planner.js"
export * as ProviderEndpoint from "./ai/ProviderEndpoint.js"
export * as Retrieval from "./ai/Retrieval.js"
export * as Retriever from "./ai/Retriever.js"
export * as ScriptedModel from "./ai/ScriptedModel.js"
export * as Synthesizer from "./ai/Synthesizer.js"
export * as ToolCalls from "./ai/ToolCalls.js"
export * as ToolRegistry from "./ai/ToolRegistry.js"

// Stores
export * as ActivityStore from "./stores/ActivityStore.js"
export * as CheckpointKey from "./stores/CheckpointKey.js"
export * as CheckpointStore from "./stores/CheckpointStore.js"
export * as EpisodicMemory from "./stores/EpisodicMemory.js"
export * as ExecutionStore from "./stores/ExecutionStore.js"
export * as KnowledgeBase from "./stores/KnowledgeBase.js"
export * as MemoryStore from "./stores/MemoryStore.js"
export * as StoreConfig from "./stores/StoreConfig.js"
export * as UserFacts from "./stores/UserFacts.js"
export * as VectorStore from "./stores/VectorStore.js"
