/**
 * What a BeforePlanning hook's result changes: reading it (enrichments to
 * set or remove, tools, a short-circuit or decision), applying it with the
 * exact before/after effects, and the enrichments' JSON sizes.
 *
 * A result is read where it enters, exactly once, into copies: every
 * enrichment and short-circuit payload is checked as a JSON value (at most
 * `Json.maxDepth` levels), every tool entry is rebuilt from its fields and
 * described. A getter or Proxy that throws, a `bigint`, a cycle, a `Date`
 * — anything that is not what the stage takes — is a rejection of that hook
 * run (`invalid_result`, or `wrong_shape` when the result is not the
 * stage's shape at all), never a defect, and nothing of it is applied.
 */
import { Duration, Either } from "effect"
import * as ToolRegistry from "../../ai/ToolRegistry.js"
import type { HookEffect } from "../../domain/ExecutionRecord.js"
import { thrownText } from "../../domain/internal/jsonSnapshot.js"
import { keepLatest } from "../../domain/internal/liveShapes.js"
import { byteLength } from "../../domain/internal/utf8Chunks.js"
import { encodedSize, equals, formatPath, type Json, type JsonObject, maxDepth, snapshot } from "../../domain/Json.js"
import type { HookFailureReason } from "../../domain/PipelineError.js"

export interface Changes {
  readonly set: JsonObject
  /** What each key in `set` adds to the enrichments' JSON text (`"key":value`), measured while copying. */
  readonly sizes: ReadonlyMap<string, number>
  readonly remove: ReadonlyArray<string>
  /** A checked copy of the legacy short-circuit (JSON), or what the hook returned when nullish. */
  readonly legacy: unknown
  /** A checked copy of the decision (JSON), or what the hook returned when nullish. */
  readonly decision: unknown
  readonly tools: ReadonlyArray<ToolRegistry.ToolEntry<never>>
}

/** Why a result was not taken: the run's failure text and its reason. */
export interface Refused {
  readonly reason: Extract<HookFailureReason, "wrong_shape" | "invalid_result">
  readonly error: string
}

/**
 * The most JSON text a short-circuit payload (the answer and its metadata)
 * may hold: the walk that checks it stops there.
 */
export const maxPayloadBytes = 16 * 1_048_576

const noChanges: Changes = { set: {}, sizes: new Map(), remove: [], legacy: undefined, decision: undefined, tools: [] }

const wrongShape = (error: string): Refused => ({ reason: "wrong_shape", error: `wrong result shape: ${error}` })
const invalid = (error: string): Refused => ({ reason: "invalid_result", error: `invalid result: ${error}` })

const isRefused = (u: unknown): u is Refused =>
  typeof u === "object" && u !== null && "reason" in u && "error" in u && !("set" in u)

// Reads of a hook's value that may throw (a getter, a Proxy trap): each is
// one read, and a throw names what was being read.
const read = <A>(what: string, f: () => A): A | Refused => {
  try {
    return f()
  } catch (thrown) {
    return invalid(`${what} could not be read: reading it threw: ${thrownText(thrown)}`)
  }
}

const getField = (value: object, name: string): unknown =>
  read(`${name}`, () => (value as Readonly<Record<string, unknown>>)[name])

/** The elements of an array a hook returned, read once each; `undefined` when it is not an array. */
const elementsOf = (what: string, u: unknown): ReadonlyArray<unknown> | undefined | Refused =>
  read(what, () => {
    if (!Array.isArray(u)) return undefined
    const length: unknown = u.length
    const out: Array<unknown> = []
    if (typeof length !== "number") return out
    for (let i = 0; i < length; i++) out.push(u[i])
    return out
  })

/** A tool entry rebuilt from its fields (each read once), described; or why it is not one. */
const toolEntryOf = (u: unknown, index: number): ToolRegistry.ToolEntry<never> | Refused => {
  const shape = wrongShape("tools must be an array of tool entries (ToolRegistry.entry)")
  const fields = read(`tools[${index}]`, () => {
    if (typeof u !== "object" || u === null) return undefined
    const { agent, call, namespace, timeout, tool } = u as Readonly<Record<string, unknown>>
    const name = typeof tool === "object" && tool !== null ? (tool as { readonly name?: unknown }).name : undefined
    return { agent, call, namespace, timeout, tool, name }
  })
  if (isRefused(fields)) return fields
  if (fields === undefined) return shape
  const { agent, call, name, namespace, timeout, tool } = fields
  if (
    typeof namespace !== "string" || typeof agent !== "string" || typeof call !== "function" ||
    typeof name !== "string" || typeof tool !== "object" || tool === null
  ) return shape
  if (timeout !== undefined && !Duration.isDuration(timeout)) {
    return wrongShape(`tools[${index}].timeout must be a Duration`)
  }
  // The entry's own fields, as they were read: the registry never reads the hook's object again.
  const entry = {
    namespace,
    agent,
    tool,
    call,
    timeout
  } as ToolRegistry.ToolEntry<never>
  const described = ToolRegistry.describeEntry(entry)
  return Either.isLeft(described) ? invalid(`tool ${namespace}/${agent}/${name}: ${described.left}`) : entry
}

const assignKey = (out: Record<string, Json>, key: string, value: Json): void => {
  // An own "__proto__" key stays a key: assigning it would set the prototype.
  if (key === "__proto__") {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  } else out[key] = value
}

/** The enrichments a hook set, copied and measured; or why they are refused. */
const enrichmentsOf = (
  u: unknown,
  maxBytes: number
): { readonly set: JsonObject; readonly sizes: ReadonlyMap<string, number> } | Refused => {
  const keys = read(
    "enrichments",
    () => typeof u !== "object" || u === null || Array.isArray(u) ? undefined : Object.keys(u)
  )
  if (isRefused(keys)) return keys
  if (keys === undefined) return wrongShape("enrichments must be an object of JSON values")
  const set: Record<string, Json> = {}
  const sizes = new Map<string, number>()
  for (const key of keys) {
    const value = read(`enrichment ${key}`, () => (u as Readonly<Record<string, unknown>>)[key])
    if (isRefused(value)) return value
    // The enrichments object is level 1: each value has one level less.
    const copied = snapshot(value, { maxBytes, maxDepth: maxDepth - 1 })
    if (Either.isLeft(copied)) {
      const { kind, path, reason } = copied.left
      const where = formatPath(key, path)
      switch (kind) {
        case "too_large":
          return {
            reason: "invalid_result",
            error: `enrichment ${key} alone is over the limit of ${maxBytes} bytes ` +
              "(PipelineOptions.maxEnrichmentBytes); the hook's changes were dropped"
          }
        case "too_deep":
          return invalid(
            `enrichments nest deeper than ${maxDepth} levels (at ${formatPath("enrichments", [key, ...path])})`
          )
        case "unreadable":
          return invalid(`enrichment ${key} could not be read (at ${where}: ${reason})`)
        case "not_json":
          return invalid(`enrichment ${key} is not a JSON value (at ${where}: ${reason})`)
      }
    }
    assignKey(set, key, copied.right.value)
    sizes.set(key, byteLength(key) + 3 + copied.right.bytes)
  }
  return { set, sizes }
}

/** The keys a hook removed, read once each. */
const removedKeys = (u: unknown): ReadonlyArray<string> | Refused => {
  const elements = elementsOf("remove", u)
  if (isRefused(elements)) return elements
  if (elements === undefined || !elements.every((k) => typeof k === "string")) {
    return wrongShape("remove must be an array of keys")
  }
  return elements as ReadonlyArray<string>
}

/**
 * A short-circuit payload (a legacy `shortCircuit` or a `decision`),
 * copied as JSON. Optional fields may be `undefined` (dropped); a `source`
 * must be a string and a `metadata` a JSON object where present. A missing
 * or mistyped `response` or `kind` is left to the contract check (C5).
 */
const payloadOf = (field: "shortCircuit" | "decision", u: unknown): unknown => {
  if (u === undefined || u === null) return u
  const copied = snapshot(u, { maxBytes: maxPayloadBytes, undefinedProperties: "drop" })
  if (Either.isLeft(copied)) {
    const { kind, path, reason } = copied.left
    const where = formatPath(field, path)
    return kind === "too_large"
      ? invalid(`${field} is over ${maxPayloadBytes} bytes of JSON`)
      : kind === "too_deep"
      ? invalid(`${field} nests deeper than ${maxDepth} levels (at ${where})`)
      : invalid(`${field} is not a JSON value (at ${where}: ${reason})`)
  }
  const payload = copied.right.value
  const answer = field === "decision" && isObject(payload) ? payload.shortCircuit : payload
  const at = field === "decision" ? "decision.shortCircuit" : "shortCircuit"
  if (isObject(answer)) {
    if (answer.source !== undefined && typeof answer.source !== "string") {
      return invalid(`${at}.source must be a string`)
    }
    if (answer.metadata !== undefined && !isObject(answer.metadata)) {
      return invalid(`${at}.metadata must be a JSON object`)
    }
  }
  return payload
}

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Reads a hook's result (see the module comment). `maxEnrichmentBytes`
 * bounds each enrichment value the walk copies (the total is checked by
 * the stage).
 */
export const readChanges = (value: unknown, maxEnrichmentBytes: number): Changes | Refused => {
  if (value === undefined || value === null) return noChanges
  const isArray = read("the result", () => Array.isArray(value))
  if (isRefused(isArray)) return isArray
  if (typeof value !== "object" || isArray) return wrongShape("beforePlanning must return an object or nothing")
  const enrichments = getField(value, "enrichments")
  if (isRefused(enrichments)) return enrichments
  const remove = getField(value, "remove")
  if (isRefused(remove)) return remove
  const shortCircuit = getField(value, "shortCircuit")
  if (isRefused(shortCircuit)) return shortCircuit
  const decision = getField(value, "decision")
  if (isRefused(decision)) return decision
  const tools = getField(value, "tools")
  if (isRefused(tools)) return tools

  const entries: Array<ToolRegistry.ToolEntry<never>> = []
  if (tools !== undefined) {
    const elements = elementsOf("tools", tools)
    if (isRefused(elements)) return elements
    if (elements === undefined) return wrongShape("tools must be an array of tool entries (ToolRegistry.entry)")
    for (let i = 0; i < elements.length; i++) {
      const entry = toolEntryOf(elements[i], i)
      if (isRefused(entry)) return entry
      entries.push(entry)
    }
  }
  let set: JsonObject = {}
  let sizes: ReadonlyMap<string, number> = noChanges.sizes
  if (enrichments !== undefined) {
    const copied = enrichmentsOf(enrichments, maxEnrichmentBytes)
    if (isRefused(copied)) return copied
    set = copied.set
    sizes = copied.sizes
  }
  let removed: ReadonlyArray<string> = []
  if (remove !== undefined) {
    const keys = removedKeys(remove)
    if (isRefused(keys)) return keys
    removed = keys
  }
  const legacy = payloadOf("shortCircuit", shortCircuit)
  if (isRefused(legacy)) return legacy
  const decided = payloadOf("decision", decision)
  if (isRefused(decided)) return decided
  return { set, sizes, remove: removed, legacy, decision: decided, tools: entries }
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
  keepLatest("enrichments", current)
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

export const toolKey = (t: ToolRegistry.ToolEntry<never>) => `${t.namespace}/${t.agent}/${t.tool.name}`

export const sizesOf = (enrichments: JsonObject): Map<string, number> => {
  const sizes = new Map<string, number>()
  for (const key of Object.keys(enrichments)) sizes.set(key, entrySize(key, enrichments[key]!))
  return sizes
}

/** The per-key sizes after `changes` (set, then remove — as they are applied). */
export const sizesAfter = (sizes: ReadonlyMap<string, number>, changes: Changes): Map<string, number> => {
  const next = new Map(sizes)
  // Measured when the hook's result was copied: no second walk.
  for (const [key, size] of changes.sizes) next.set(key, size)
  for (const key of changes.remove) next.delete(key)
  return next
}

export const totalSize = (sizes: ReadonlyMap<string, number>): number => {
  let total = 2 + Math.max(0, sizes.size - 1)
  for (const size of sizes.values()) total += size
  return total
}
