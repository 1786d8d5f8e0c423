/**
 * What a transform's returned value means at its point (seed 002): a value
 * of the wrong shape, a value that is not JSON data where the operation
 * carries JSON, or a rewrite the hook did not declare the capability for,
 * is refused; a hostile value (a throwing getter, a Proxy whose traps
 * throw) is refused like any invalid one, never a crash.
 */
import type { HookDecision } from "../../domain/ExecutionRecord.js"
import type { TransformPoint } from "../../domain/HookPoint.js"
import * as Json from "../../domain/Json.js"
import type { MemoryQuery, MemoryRecord } from "../../domain/Operation.js"
import type { HookFailed } from "../../domain/PipelineError.js"
import { allows, rewriteCapability } from "../Capability.js"
import type { Participant } from "../Subscription.js"
import type { TransformValues } from "./operationHooks.js"
import type { AnyTransform } from "./participants.js"

/** Does a transform's value have the point's shape? */
export const validValue = (point: TransformPoint, value: unknown): string | undefined => {
  switch (point) {
    case "before_inference":
    case "after_inference":
    case "before_retrieval":
    case "after_memory_store":
      return typeof value === "string" ? undefined : `${point} must return a string`
    case "before_memory_load":
      return invalidMemoryQuery(value)
    case "before_tool":
      return typeof value === "object" && value !== null && !Array.isArray(value) && Json.isJson(value)
        ? undefined
        : "before_tool must return a JSON object of arguments"
    case "after_tool":
      return typeof value === "object" && value !== null &&
          (("output" in value && Json.isJson(value.output)) || ("error" in value && typeof value.error === "string"))
        ? undefined
        : "after_tool must return { output } (JSON) or { error } (a string)"
    case "after_retrieval":
      return Array.isArray(value) &&
          value.every((d) =>
            typeof d === "object" && d !== null && typeof d.id === "string" && typeof d.content === "string"
          )
        ? undefined
        : "after_retrieval must return documents ({ id, content })"
    case "after_memory_load":
      return Array.isArray(value) &&
          value.every((r) => typeof r === "object" && r !== null && typeof r.content === "string")
        ? undefined
        : "after_memory_load must return memory records ({ content })"
    case "before_memory_store":
      return invalidMemoryRecord(value)
  }
}

/** The bounds of a memory query a `before_memory_load` transform returns. */
const queryBounds = { maxLimit: 1000, maxKinds: 32, maxKindLength: 64 } as const
/** The longest id a `before_memory_store` transform may store a record under. */
const maxRecordIdLength = 256

const invalidMemoryQuery = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "before_memory_load must return a memory query ({ query, limit, minScore?, kinds? })"
  }
  const { kinds, limit, minScore, query } = value as Partial<Record<keyof MemoryQuery, unknown>>
  if (typeof query !== "string") return "before_memory_load must return a query string"
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > queryBounds.maxLimit) {
    return `before_memory_load must return an integer limit from 1 to ${queryBounds.maxLimit}`
  }
  if (minScore !== undefined && (typeof minScore !== "number" || !(minScore >= -1 && minScore <= 1))) {
    return "before_memory_load must return a minScore from -1 to 1"
  }
  if (
    kinds !== undefined &&
    (!Array.isArray(kinds) || kinds.length > queryBounds.maxKinds ||
      !kinds.every((k) => typeof k === "string" && k.length > 0 && k.length <= queryBounds.maxKindLength))
  ) {
    return `before_memory_load must return kinds as at most ${queryBounds.maxKinds} non-empty strings of at most ${queryBounds.maxKindLength} characters`
  }
  return undefined
}

const invalidMemoryRecord = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null || typeof (value as { content?: unknown }).content !== "string") {
    return "before_memory_store must return a memory record ({ content })"
  }
  const { id } = value as { readonly id?: unknown }
  return id === undefined || (typeof id === "string" && id.length > 0 && id.length <= maxRecordIdLength)
    ? undefined
    : `before_memory_store must return a record id of 1 to ${maxRecordIdLength} characters (or none)`
}

/**
 * A memory query as plain data: its own copy, each member read once,
 * without absent members (so an unchanged query compares equal to its
 * input).
 */
export const memoryQueryOf = (value: MemoryQuery): MemoryQuery => {
  const { kinds, limit, minScore, query } = value
  return {
    query,
    limit,
    ...(minScore === undefined ? {} : { minScore }),
    // A non-array stays as it is, for the shape check to refuse.
    ...(kinds === undefined ? {} : { kinds: Array.isArray(kinds) ? Array.from(kinds) : kinds })
  }
}

/** A memory record as plain data: each member read once, without absent members (its metadata as given). */
export const memoryRecordOf = (value: MemoryRecord): MemoryRecord => {
  const { content, id, metadata } = value
  return {
    ...(id === undefined ? {} : { id }),
    content,
    ...(metadata === undefined ? {} : { metadata })
  }
}

/**
 * What a transform returned, read once where the point's value is an
 * object the operation carries on member by member (a memory query or
 * record): checked and used as that copy, so a Proxy or getter cannot
 * answer one way to the check and another way to the store.
 */
const readOnce = (point: TransformPoint, value: unknown): unknown => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value
  switch (point) {
    case "before_memory_load":
      return memoryQueryOf(value as MemoryQuery)
    case "before_memory_store":
      return memoryRecordOf(value as MemoryRecord)
    default:
      return value
  }
}

/**
 * Where a value of the right shape is not JSON data (a BigInt, a cycle, a
 * class instance, a non-finite number…): the value the operation would
 * carry on with must be plain data, or nothing downstream can record it.
 */
const notJson = (point: TransformPoint, value: unknown): string | undefined => {
  const found = Json.findNotJson(
    point === "after_tool" ? (value as { readonly output?: unknown }).output ?? null : value
  )
  if (found === undefined) return undefined
  const at = found.path.length === 0 ? "" : ` at ${found.path.join(".")}`
  return `${point} returned a value that is not JSON${at}: ${found.reason}`
}

/** Whether `value` has the shape of a point whose value carries JSON data (tool arguments, a tool's output). */
const carriesJson = (point: TransformPoint, value: unknown): boolean =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
  (point === "before_tool" || (point === "after_tool" && "output" in value))

const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (Json.isJson(a) && Json.isJson(b) && Json.equals(a, b))

/** What a transform's returned value means at its point. */
export type Judged<V> =
  | { readonly _tag: "Next"; readonly value: V; readonly changed: boolean }
  | {
    readonly _tag: "Refused"
    readonly error: string
    readonly why: HookFailed["reason"]
    readonly reason: HookDecision["reason"]
  }

/**
 * Judges a transform's value; a hostile value (a throwing getter, a Proxy
 * whose traps throw) is refused like any invalid one, never a crash.
 */
export const judge = <P extends TransformPoint>(
  point: P,
  participant: Participant<AnyTransform>,
  input: TransformValues[P],
  value: unknown
): Judged<TransformValues[P]> => {
  try {
    return judgeValue(point, participant, input, value)
  } catch (error) {
    return {
      _tag: "Refused",
      error: `${point} returned a value that cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      why: "invalid_result",
      reason: "invalid_result"
    }
  }
}

const judgeValue = <P extends TransformPoint>(
  point: P,
  participant: Participant<AnyTransform>,
  input: TransformValues[P],
  value: unknown
): Judged<TransformValues[P]> => {
  const read = readOnce(point, value)
  const invalid = validValue(point, read)
  if (invalid !== undefined) {
    // Tool arguments or output of the right shape holding something that is
    // not data (a BigInt, a cycle…): refused as an invalid result.
    const hostile = carriesJson(point, value) ? notJson(point, value) : undefined
    return hostile !== undefined
      ? { _tag: "Refused", error: hostile, why: "invalid_result", reason: "invalid_result" }
      : { _tag: "Refused", error: invalid, why: "wrong_shape", reason: "hook_error" }
  }
  // validValue checked the point's shape.
  const next = read as TransformValues[P]
  const changed = !sameValue(next, input)
  const capability = rewriteCapability[point]
  if (changed && capability !== undefined && !allows(participant.grant, capability)) {
    return {
      _tag: "Refused",
      error: `undeclared contribution: rewrote ${point} without the "${capability}" capability`,
      why: "undeclared_contribution",
      reason: "undeclared_contribution"
    }
  }
  return { _tag: "Next", value: next, changed }
}
