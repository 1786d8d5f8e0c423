/**
 * Declared capabilities (seed 001): the contributions a hook may make. A
 * hook that declares its capabilities may make only those contributions;
 * an undeclared one is refused (nothing changes) and recorded as a contract
 * failure of that hook (decision reason `undeclared_contribution`). A hook
 * that declares none may make every contribution its points allow.
 *
 * | capability | contribution | point |
 * | --- | --- | --- |
 * | `enrichments` | sets or removes enrichments | before_planning |
 * | `short_circuit` | ends the request with an answer | before_planning |
 * | `extra_tools` | adds tools for this request only | before_planning |
 * | `plan_rewrite` | returns a different plan | after_planning |
 * | `response_rewrite` | returns a different response | after_synthesis |
 * | `prompt_rewrite` | rewrites a model prompt | before_inference |
 * | `completion_rewrite` | rewrites a model response | after_inference |
 * | `tool_input_rewrite` | rewrites tool arguments | before_tool |
 * | `tool_output_rewrite` | rewrites a tool result or error | after_tool |
 * | `query_rewrite` | rewrites a retrieval query, or a memory query (its text, limit, minimum score or kinds) | before_retrieval, before_memory_load |
 * | `documents_rewrite` | filters or re-ranks retrieved documents | after_retrieval |
 * | `memory_rewrite` | rewrites loaded memory, or a record to store (its id included) | after_memory_load, before_memory_store |
 * | `inference_cache` | serves a model response without calling the model (`Hook.respond`) | before_inference |
 * | `deny` | refuses an operation | guard_* |
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import type { HookPoint } from "../domain/HookPoint.js"

/**
 * The capabilities.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Capability = Schema.Literal(
  "enrichments",
  "short_circuit",
  "extra_tools",
  "plan_rewrite",
  "response_rewrite",
  "prompt_rewrite",
  "completion_rewrite",
  "tool_input_rewrite",
  "tool_output_rewrite",
  "query_rewrite",
  "documents_rewrite",
  "memory_rewrite",
  "inference_cache",
  "deny"
)
/**
 * A capability a hook's subscription can declare.
 *
 * @since 0.1.0
 * @category models
 */
export type Capability = typeof Capability.Type

const known: ReadonlySet<string> = new Set(Capability.literals)

/**
 * Whether a string names a capability.
 *
 * @since 0.1.0
 * @category guards
 */
export const isCapability = (u: unknown): u is Capability => typeof u === "string" && known.has(u)

/**
 * The capability a rewrite at a transform or stage point needs (guards need
 * `deny`; BeforePlanning's two contributions are checked separately).
 *
 * @since 0.1.0
 * @category constants
 */
export const rewriteCapability: Partial<Readonly<Record<HookPoint, Capability>>> = {
  after_planning: "plan_rewrite",
  after_synthesis: "response_rewrite",
  before_inference: "prompt_rewrite",
  after_inference: "completion_rewrite",
  before_tool: "tool_input_rewrite",
  after_tool: "tool_output_rewrite",
  before_retrieval: "query_rewrite",
  before_memory_load: "query_rewrite",
  after_retrieval: "documents_rewrite",
  after_memory_load: "memory_rewrite",
  before_memory_store: "memory_rewrite"
}

/**
 * A subscription's grant: every capability (none declared), or the declared set.
 *
 * @since 0.1.0
 * @category models
 */
export type Grant = "all" | ReadonlySet<Capability>

/**
 * Whether a grant allows a capability.
 *
 * @since 0.1.0
 * @category utils
 */
export const allows = (grant: Grant, capability: Capability): boolean => grant === "all" || grant.has(capability)
