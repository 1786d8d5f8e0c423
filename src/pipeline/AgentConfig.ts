/**
 * The parts an agent is assembled from (`Agent.layer`): its model, tools,
 * hooks, stores, human-in-the-loop policy and options.
 *
 * @since 0.1.0
 */
import type { LanguageModel } from "@effect/ai"
import type { Effect, Layer } from "effect"
import type * as ToolRegistry from "../ai/ToolRegistry.js"
import type * as CheckpointKey from "../stores/CheckpointKey.js"
import type * as CheckpointStore from "../stores/CheckpointStore.js"
import type * as ExecutionStore from "../stores/ExecutionStore.js"
import type { ApprovalPolicy } from "./Approval.js"
import type { ConversationHistoryPreparer } from "./ConversationHistory.js"
import type { RedactionOptions } from "./Guardrails.js"
import type * as Hook from "./Hook.js"
import type * as PipelineHooks from "./internal/pipelineHooks.js"
import type { PipelineOptions } from "./Pipeline.js"
import type { PromptBuilder } from "./PromptBuilder.js"
import type { PromptValuePreparer } from "./PromptPreparation.js"
import type { Gate } from "./ShortCircuit.js"

/**
 * The parts of an agent. Only `model` and `tools` are required; every other
 * part has a default.
 *
 * Type parameters are inferred from the parts: `EM`/`RM` are the model
 * Layer's error and requirements, `H` the hooks (what they need is
 * `Hook.Requirements<H>`; `EH`/`RB` what building them fails with and
 * needs — a `Scope` among them is the agent's: hooks built in it, such as
 * detached work, end when the agent does), `T` the tools (their handlers need `ToolRegistry.Requirements<T>`),
 * `ES`/`RS` and `EC`/`RC` the stores', `EK`/`RK` the checkpoint key's.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentConfig<
  EM,
  RM,
  H extends Hook.Any,
  EH,
  RB,
  T extends ToolRegistry.Any,
  ES,
  RS,
  EC,
  RC,
  EK = never,
  RK = never
> {
  /**
   * The language model: `OfflineModel.layer` (deterministic, no network),
   * `ScriptedModel.layer(script)` (tests), a provider's (`OpenAi.layer` from
   * `effect-agent-pipeline/openai`, `Anthropic.layer` from
   * `effect-agent-pipeline/anthropic`, `ModelConfig.layerLanguageModel`) or
   * any other `@effect/ai` `LanguageModel` Layer.
   */
  readonly model: Layer.Layer<LanguageModel.LanguageModel, EM, RM>
  /**
   * A model to ask once `model` gave up on a call (its retries spent): any
   * `LanguageModel` Layer. Planning and synthesis fall back alike; a stream
   * falls back only before it delivered any text.
   */
  readonly fallbackModel?: Layer.Layer<LanguageModel.LanguageModel, EM, RM> | undefined
  /** The tools the planner may call (`ToolRegistry.entry`). */
  readonly tools: ReadonlyArray<T>
  /**
   * The hooks, in registration order — or an Effect that builds them (a
   * client to open, configuration to read). Default: none.
   */
  readonly hooks?:
    | ReadonlyArray<H>
    | Effect.Effect<ReadonlyArray<H>, EH, RB>
    | undefined
  /** Where execution records go. Default: `ExecutionStore.layerMemory()`. */
  readonly executionStore?: Layer.Layer<ExecutionStore.ExecutionStore, ES, RS> | undefined
  /** Where HITL checkpoints wait. Default: `CheckpointStore.layerMemory`. */
  readonly checkpointStore?: Layer.Layer<CheckpointStore.CheckpointStore, EC, RC> | undefined
  /**
   * The key that seals HITL checkpoints (binds each to the plan the human
   * approves; a resume verifies it). Default: `CheckpointKey.layerRandom`,
   * a key of this agent's own — its checkpoints cannot be resumed by
   * another process, another agent Layer or after a restart (they are
   * refused as `tampered`). With a shared or persistent checkpoint store,
   * give every agent the same key: `CheckpointKey.layerConfig()`
   * (`AGENT_CHECKPOINT_KEY`) or `CheckpointKey.layerFile(path)`.
   */
  readonly checkpointKey?: Layer.Layer<CheckpointKey.CheckpointKey, EK, RK> | undefined
  /** Human-in-the-loop: may suspend a phase's plan for a decision. Default: approve everything. */
  readonly approval?: ApprovalPolicy["Type"] | undefined
  /** The short-circuit gate (cache reads, variation dimensions). Default: `ShortCircuit.defaultGate`. */
  readonly gate?: Gate["Type"] | undefined
  /** Renders planning, continuation and synthesis prompts. Default: `PromptBuilder.defaultBuilder`. */
  readonly promptBuilder?: PromptBuilder.Service | undefined
  /** Turns `metadata.conversation_turns` into `conversation_history`. Default: the last 20 turns. */
  readonly conversationHistory?: ConversationHistoryPreparer["Type"] | undefined
  /**
   * Prepares the known string enrichments for every prompt (`PromptPreparation`);
   * hooks and the record keep the values as written. Default: the identity.
   */
  readonly promptValues?: PromptValuePreparer.Service | undefined
  /**
   * The redaction guardrail (`Guardrails`): secrets and personal data are
   * redacted in tool output before the model sees it (`allowTools`
   * exempt), in the response, streamed tokens and errors, and in the stored
   * record (unless `rawEvidence`). Invalid patterns fail the Layer with
   * `RedactionError`. Default: off.
   */
  readonly redaction?: RedactionOptions | undefined
  /** Pipeline options (phases, concurrency, recording, size limits). */
  readonly options?: PipelineOptions | undefined
  /**
   * The pool detached hook runs (`Hook.background`, `Hook.fireAndRecord`)
   * live in: background concurrency (default 4) and how long shutdown waits
   * for them before interrupting (default 5 seconds).
   */
  readonly background?: Omit<PipelineHooks.Options, "hookTimeout" | "hookGracePeriod"> | undefined
}
