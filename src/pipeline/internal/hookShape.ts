/**
 * The shape of one entry of the hook list, checked before anything else
 * reads it (C1, seed 001): a hook object whose keys are all known (a
 * misspelled key gets a "did you mean"), whose handlers are functions, and
 * whose policies and timeout are valid. A hostile entry — a getter or Proxy
 * that throws — is a problem to report, never a crash.
 */
import { Predicate } from "effect"
import type { Operation } from "../../domain/Operation.js"

export const stageHandlers = ["beforePlanning", "afterPlanning", "afterExecution", "afterSynthesis"] as const

export const transformHandlers = {
  beforeInference: "before_inference",
  afterInference: "after_inference",
  beforeTool: "before_tool",
  afterTool: "after_tool",
  beforeRetrieval: "before_retrieval",
  afterRetrieval: "after_retrieval",
  beforeMemoryLoad: "before_memory_load",
  afterMemoryLoad: "after_memory_load",
  beforeMemoryStore: "before_memory_store",
  afterMemoryStore: "after_memory_store"
} as const

/** The keys of `around` / `guard`, and the operation each names. */
export const operationKeys = {
  request: "request",
  phase: "phase",
  inference: "inference",
  toolCall: "tool_call",
  toolExecution: "tool_execution",
  retrieval: "retrieval",
  memoryLoad: "memory_load",
  memoryStore: "memory_store",
  approvalWait: "approval_wait",
  recordWrite: "record_write"
} as const satisfies Record<string, Operation>

const executionTags = new Set(["Blocking", "Deadline", "FireAndRecord", "Background"])

/** Every key a hook may have: anything else is a mistake (`beforePlaning`), never silently ignored. */
const hookKeys: ReadonlyArray<string> = [
  "name",
  "required",
  "priority",
  "dependsOn",
  "enabled",
  "execution",
  "failure",
  "capabilities",
  "timeout",
  "group",
  ...stageHandlers,
  "around",
  "guard",
  ...Object.keys(transformHandlers),
  "onError"
]
const knownKeys: ReadonlySet<string> = new Set(hookKeys)

/** Edit distance, for a "did you mean" on a misspelled key (keys are short). */
const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = row
  }
  return previous[b.length]!
}

const unknownKey = (key: string): string => {
  let best: string | undefined
  let bestDistance = Infinity
  for (const known of hookKeys) {
    const d = distance(key.toLowerCase(), known.toLowerCase())
    if (d < bestDistance) {
      best = known
      bestDistance = d
    }
  }
  const hint = best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 4))
    ? ` (did you mean "${best}"?)`
    : ""
  return `unknown key "${key}"${hint}: a hook has ${hookKeys.join(", ")}`
}

const handlerProblem = (key: string, value: unknown): string | undefined =>
  value !== undefined && typeof value !== "function" ? `${key} is a ${typeof value}, not a function` : undefined

const operationsProblem = (key: "around" | "guard", value: unknown): string | undefined => {
  if (value === undefined) return undefined
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `${key} must be an object of handlers`
  for (const [name, handler] of Object.entries(value)) {
    if (!(name in operationKeys)) {
      return `${key}.${name} is not an operation (${Object.keys(operationKeys).join(", ")})`
    }
    const problem = handlerProblem(`${key}.${name}`, handler)
    if (problem !== undefined) return problem
  }
  return undefined
}

const entryProblem = (entry: unknown): string | undefined => {
  if (entry === null) return "entry is null"
  if (entry === undefined) return "entry is undefined"
  if (typeof entry !== "object") return `entry is a ${typeof entry}, not a hook`
  const record = entry as Record<string, unknown>
  if (typeof record.name !== "string" || record.name.length === 0) return "hook has no non-empty string name"
  for (const key of Object.keys(record)) {
    if (!knownKeys.has(key)) return unknownKey(key)
  }
  for (const key of [...stageHandlers, ...Object.keys(transformHandlers), "onError"]) {
    const problem = handlerProblem(key, record[key])
    if (problem !== undefined) return problem
  }
  const around = operationsProblem("around", record.around)
  if (around !== undefined) return around
  const guard = operationsProblem("guard", record.guard)
  if (guard !== undefined) return guard
  if (record.group !== undefined && !(typeof record.group === "string" && record.group.length > 0)) {
    return "group must be a non-empty string (a group's name)"
  }
  if (record.required !== undefined && typeof record.required !== "boolean") return "required must be a boolean"
  if (record.priority !== undefined && !(typeof record.priority === "number" && Number.isFinite(record.priority))) {
    return "priority must be a finite number"
  }
  if (
    record.dependsOn !== undefined && !(Array.isArray(record.dependsOn) && record.dependsOn.every(Predicate.isString))
  ) {
    return "dependsOn must be an array of hook names"
  }
  if (record.enabled !== undefined && typeof record.enabled !== "boolean") return "enabled must be a boolean"
  if (
    record.execution !== undefined &&
    !(Predicate.hasProperty(record.execution, "_tag") && executionTags.has(String(record.execution._tag)))
  ) {
    return "execution must be Hook.blocking, Hook.deadline(d), Hook.fireAndRecord or Hook.background"
  }
  if (record.failure !== undefined && record.failure !== "fail_open" && record.failure !== "fail_closed") {
    return "failure must be \"fail_open\" or \"fail_closed\""
  }
  if (record.capabilities !== undefined && !Array.isArray(record.capabilities)) {
    return "capabilities must be an array"
  }
  return undefined
}

/** A hostile entry (a throwing getter) is a configuration error too, never a crash. */
export const safeProblem = (entry: unknown): string | undefined => {
  try {
    return entryProblem(entry)
  } catch (error) {
    return `reading the entry threw: ${error instanceof Error ? error.message : String(error)}`
  }
}
