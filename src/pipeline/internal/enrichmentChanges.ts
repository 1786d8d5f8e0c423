/**
 * What a BeforePlanning hook's result changes: reading it (enrichments to
 * set or remove, tools, a short-circuit or decision), applying it with the
 * exact before/after effects, and the enrichments' JSON sizes.
 */
import { Predicate } from "effect"
import type * as ToolRegistry from "../../ai/ToolRegistry.js"
import type { HookEffect } from "../../domain/ExecutionRecord.js"
import { encodedSize, equals, isJson, type Json, type JsonObject } from "../../domain/Json.js"
import { byteLength } from "../../domain/Utf8Chunks.js"

export interface Changes {
  readonly set: JsonObject
  readonly remove: ReadonlyArray<string>
  readonly legacy: unknown
  readonly decision: unknown
  readonly tools: ReadonlyArray<ToolRegistry.ToolEntry<never>>
}

/** Whether a JavaScript value is a tool entry (`ToolRegistry.entry(...)`). */
const isToolEntry = (u: unknown): u is ToolRegistry.ToolEntry<never> =>
  Predicate.hasProperty(u, "namespace") && typeof u.namespace === "string" &&
  Predicate.hasProperty(u, "agent") && typeof u.agent === "string" &&
  Predicate.hasProperty(u, "call") && typeof u.call === "function" &&
  Predicate.hasProperty(u, "tool") && Predicate.hasProperty(u.tool, "name") && typeof u.tool.name === "string"

export const toolKey = (t: ToolRegistry.ToolEntry<never>) => `${t.namespace}/${t.agent}/${t.tool.name}`

export const readChanges = (value: unknown): Changes | string => {
  if (value === undefined || value === null) {
    return { set: {}, remove: [], legacy: undefined, decision: undefined, tools: [] }
  }
  if (typeof value !== "object" || Array.isArray(value)) return "beforePlanning must return an object or nothing"
  const { decision, enrichments, remove, shortCircuit, tools } = value as {
    readonly enrichments?: unknown
    readonly remove?: unknown
    readonly shortCircuit?: unknown
    readonly decision?: unknown
    readonly tools?: unknown
  }
  if (tools !== undefined && (!Array.isArray(tools) || !tools.every(isToolEntry))) {
    return "tools must be an array of tool entries (ToolRegistry.entry)"
  }
  if (enrichments !== undefined) {
    if (typeof enrichments !== "object" || enrichments === null || Array.isArray(enrichments)) {
      return "enrichments must be an object of JSON values"
    }
    for (const [key, v] of Object.entries(enrichments)) {
      if (!isJson(v)) return `enrichment ${key} is not a JSON value`
    }
  }
  if (remove !== undefined && (!Array.isArray(remove) || !remove.every((k) => typeof k === "string"))) {
    return "remove must be an array of keys"
  }
  return {
    set: (enrichments ?? {}) as JsonObject,
    remove: (remove ?? []) as ReadonlyArray<string>,
    legacy: shortCircuit,
    decision,
    tools: tools ?? []
  }
}

const enrichmentEffect = (
  key: string,
  operation: "added" | "updated" | "removed",
  before: Json | undefined,
  after: Json | undefined,
  now: number
): HookEffect => {
  const data: Record<string, Json> = { key, operation }
  if (before !== undefined) data.before = before
  if (after !== undefined) data.after = after
  return {
    effectId: `planning_enrichment:${key}`,
    schemaVersion: 1,
    name: `Planning enrichment ${key}`,
    status: "succeeded",
    data,
    startedAt: now,
    duration: 0,
    summary: `${operation} ${key}`
  }
}

/** Applies changes and returns the enrichment effects (exact before/after). */
/**
 * Applies changes; returns the enrichment effects (exact before/after) and
 * what actually changed (`[key, "set", value]` / `[key, "removed"]`): the
 * hook's contribution.
 */
export const applyChanges = (
  current: Record<string, Json>,
  changes: Changes,
  now: number
): { readonly effects: ReadonlyArray<HookEffect>; readonly applied: ReadonlyArray<Json> } => {
  const effects: Array<HookEffect> = []
  const applied: Array<Json> = []
  for (const [key, after] of Object.entries(changes.set)) {
    const had = Object.prototype.hasOwnProperty.call(current, key)
    const before = had ? current[key] : undefined
    if (had && equals(before, after)) continue
    current[key] = after
    effects.push(enrichmentEffect(key, had ? "updated" : "added", before, after, now))
    applied.push([key, "set", after])
  }
  for (const key of changes.remove) {
    if (!Object.prototype.hasOwnProperty.call(current, key)) continue
    const before = current[key]
    delete current[key]
    effects.push(enrichmentEffect(key, "removed", before, undefined, now))
    applied.push([key, "removed"])
  }
  // By key: equal changes contribute equally, whatever order the hook returned them in.
  return { effects, applied: applied.sort((a, b) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0)) }
}

/** The evidence of a tool added for the request. */
export const toolEffect = (t: ToolRegistry.ToolEntry<never>, now: number): HookEffect => ({
  effectId: `request_tool:${toolKey(t)}`,
  schemaVersion: 1,
  name: `Request tool ${toolKey(t)}`,
  status: "succeeded",
  data: { namespace: t.namespace, agent: t.agent, capability: t.tool.name },
  startedAt: now,
  duration: 0,
  summary: `added ${toolKey(t)} for this request`
})

/** What one enrichment adds to the JSON text of all of them: `"key":value`. */
const entrySize = (key: string, value: Json): number => byteLength(key) + 3 + encodedSize(value)

export const sizesOf = (enrichments: JsonObject): Map<string, number> => {
  const sizes = new Map<string, number>()
  for (const key of Object.keys(enrichments)) sizes.set(key, entrySize(key, enrichments[key]!))
  return sizes
}

/** The per-key sizes after `changes` (set, then remove — as they are applied). */
export const sizesAfter = (sizes: ReadonlyMap<string, number>, changes: Changes): Map<string, number> => {
  const next = new Map(sizes)
  for (const key of Object.keys(changes.set)) next.set(key, entrySize(key, changes.set[key]!))
  for (const key of changes.remove) next.delete(key)
  return next
}

export const totalSize = (sizes: ReadonlyMap<string, number>): number => {
  let total = 2 + Math.max(0, sizes.size - 1)
  for (const size of sizes.values()) total += size
  return total
}

