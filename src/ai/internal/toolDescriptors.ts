/**
 * How the planner sees a tool: its address, its description and its
 * parameters' JSON Schema, built from the tool's Schemas.
 */
import { Tool } from "@effect/ai"
import { isJson, type Json, type JsonObject } from "../../domain/Json.js"
import type { ToolDescriptor } from "../../domain/ToolDescriptor.js"

// A descriptor's JSON Schema is built by `Tool.getJsonSchema` from the
// tool's Schemas: plain data, which only needs a copy when it is not JSON.
const toJson = (u: unknown): Json => (u === undefined ? null : isJson(u) ? u : JSON.parse(JSON.stringify(u)))

// Descriptors already built, by entry: a tool a hook adds for one request
// is described once, when the hook's result is checked.
const described = new WeakMap<object, ToolDescriptor>()

/**
 * How the planner sees a tool.
 *
 * @since 0.1.0
 * @category utils
 */
export const descriptorOf = (
  e: { readonly namespace: string; readonly agent: string; readonly tool: Tool.Any }
): ToolDescriptor => {
  const known = described.get(e)
  if (known !== undefined) return known
  const descriptor: ToolDescriptor = {
    namespace: e.namespace,
    agent: e.agent,
    capability: e.tool.name,
    description: e.tool.description ?? "",
    parameters: toJson(Tool.getJsonSchema(e.tool as Parameters<typeof Tool.getJsonSchema>[0])) as JsonObject
  }
  described.set(e, descriptor)
  return descriptor
}
