/**
 * A registered tool as the planner sees it: where it lives (namespace,
 * agent), what a plan step calls (capability), what it does and the JSON
 * Schema of its parameters.
 *
 * @since 0.1.0
 */
import type { JsonObject } from "./Json.js"

/**
 * A registered tool as the planner sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolDescriptor {
  readonly namespace: string
  readonly agent: string
  readonly capability: string
  readonly description: string
  /** JSON Schema of the tool's parameters. */
  readonly parameters: JsonObject
}
