/**
 * Construction-time validation of the hook list (C1–C3, seed 000 §8, seed
 * 001 subscriptions) and the subscription registry built from it.
 *
 * A null/undefined entry — or anything that is not a hook, from a JavaScript
 * caller — fails with `InvalidOrchestratorConfig` naming its zero-based
 * index. The required marker is checked for stage drift, uniqueness and
 * sorting last among the after-planning hooks (priorities and dependencies
 * included). Subscriptions are checked for duplicate ids, dependencies,
 * guardable operations, applicable policies and known capabilities.
 *
 * @since 0.1.0
 */
import { Either, Predicate } from "effect"
import { isGuardable, type Operation } from "../domain/Operation.js"
import {
  type HookConfigError,
  InvalidHookSubscription,
  InvalidOrchestratorConfig,
  InvalidRequiredAfterPlanningHook
} from "../domain/PipelineError.js"
import { type Capability, type Grant, isCapability } from "../runtime/Capability.js"
import type { RunLimit } from "../runtime/internal/bounded.js"
import type { OperationHandlers } from "../runtime/OperationHooks.js"
import { blocking, type ExecutionPolicy } from "../runtime/Policy.js"
import * as Subscription from "../runtime/Subscription.js"
import type * as Hook from "./Hook.js"

/**
 * A hook's handlers by point.
 *
 * @since 0.1.0
 */
export interface HandlerMap<R = never> extends OperationHandlers<R> {
  readonly before_planning?: Hook.Hook<R>["beforePlanning"]
  readonly after_planning?: Hook.Hook<R>["afterPlanning"]
  readonly after_execution?: Hook.Hook<R>["afterExecution"]
  readonly after_synthesis?: Hook.Hook<R>["afterSynthesis"]
}

/**
 * The registry of validated subscriptions.
 *
 * @since 0.1.0
 */
export type Registry = Subscription.Registry<HandlerMap>

const STAGE_HANDLERS = ["beforePlanning", "afterPlanning", "afterExecution", "afterSynthesis"] as const

const TRANSFORM_HANDLERS = {
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
export const OPERATION_KEYS = {
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

const EXECUTION_TAGS = new Set(["Blocking", "Deadline", "FireAndRecord", "Background"])

/** Every key a hook may have: anything else is a mistake (`beforePlaning`), never silently ignored. */
const HOOK_KEYS: ReadonlyArray<string> = [
  "name",
  "required",
  "priority",
  "dependsOn",
  "enabled",
  "execution",
  "failure",
  "capabilities",
  "timeout",
  ...STAGE_HANDLERS,
  "around",
  "guard",
  ...Object.keys(TRANSFORM_HANDLERS)
]
const KNOWN_KEYS: ReadonlySet<string> = new Set(HOOK_KEYS)

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
  for (const known of HOOK_KEYS) {
    const d = distance(key.toLowerCase(), known.toLowerCase())
    if (d < bestDistance) {
      best = known
      bestDistance = d
    }
  }
  const hint = best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 4))
    ? ` (did you mean "${best}"?)`
    : ""
  return `unknown key "${key}"${hint}: a hook has ${HOOK_KEYS.join(", ")}`
}

const handlerProblem = (key: string, value: unknown): string | undefined =>
  value !== undefined && typeof value !== "function" ? `${key} is a ${typeof value}, not a function` : undefined

const operationsProblem = (key: "around" | "guard", value: unknown): string | undefined => {
  if (value === undefined) return undefined
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `${key} must be an object of handlers`
  for (const [name, handler] of Object.entries(value)) {
    if (!(name in OPERATION_KEYS)) {
      return `${key}.${name} is not an operation (${Object.keys(OPERATION_KEYS).join(", ")})`
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
    if (!KNOWN_KEYS.has(key)) return unknownKey(key)
  }
  for (const key of [...STAGE_HANDLERS, ...Object.keys(TRANSFORM_HANDLERS)]) {
    const problem = handlerProblem(key, record[key])
    if (problem !== undefined) return problem
  }
  const around = operationsProblem("around", record.around)
  if (around !== undefined) return around
  const guard = operationsProblem("guard", record.guard)
  if (guard !== undefined) return guard
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
    !(Predicate.hasProperty(record.execution, "_tag") && EXECUTION_TAGS.has(String(record.execution._tag)))
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
const safeProblem = (entry: unknown): string | undefined => {
  try {
    return entryProblem(entry)
  } catch (error) {
    return `reading the entry threw: ${error instanceof Error ? error.message : String(error)}`
  }
}

/**
 * Whether the hook is the fail-closed after-planning boundary: only an
 * explicit marker makes it so (seed 000 §7.4: "an explicit marker keeps
 * optional enrichment resilient"); a hook that merely fails closed is an
 * ordinary fail-closed hook.
 */
export const isRequired = <R>(hook: Hook.Hook<R>): boolean => hook.required === true

/**
 * A hook's handlers by point.
 *
 * @since 0.1.0
 */
export const handlersOf = <R>(hook: Hook.Hook<R>): HandlerMap<R> => {
  const around = hook.around ?? {}
  const guard = hook.guard ?? {}
  return {
    before_planning: hook.beforePlanning,
    after_planning: hook.afterPlanning,
    after_execution: hook.afterExecution,
    after_synthesis: hook.afterSynthesis,
    around_request: around.request,
    around_phase: around.phase,
    around_inference: around.inference,
    around_tool_call: around.toolCall,
    around_tool_execution: around.toolExecution,
    around_retrieval: around.retrieval,
    around_memory_load: around.memoryLoad,
    around_memory_store: around.memoryStore,
    around_approval_wait: around.approvalWait,
    around_record_write: around.recordWrite,
    guard_request: guard.request,
    guard_inference: guard.inference,
    guard_tool_call: guard.toolCall,
    guard_retrieval: guard.retrieval,
    guard_memory_load: guard.memoryLoad,
    guard_memory_store: guard.memoryStore,
    before_inference: hook.beforeInference,
    after_inference: hook.afterInference,
    before_tool: hook.beforeTool,
    after_tool: hook.afterTool,
    before_retrieval: hook.beforeRetrieval,
    after_retrieval: hook.afterRetrieval,
    before_memory_load: hook.beforeMemoryLoad,
    after_memory_load: hook.afterMemoryLoad,
    before_memory_store: hook.beforeMemoryStore,
    after_memory_store: hook.afterMemoryStore
  }
}

const grantOf = <R>(hook: Hook.Hook<R>): Either.Either<Grant, InvalidHookSubscription> => {
  if (hook.capabilities === undefined) return Either.right("all")
  const declared = new Set<Capability>()
  for (const capability of hook.capabilities) {
    if (!isCapability(capability)) {
      return Either.left(
        new InvalidHookSubscription({
          reason: "unknown_capability",
          hookName: hook.name,
          detail: `${JSON.stringify(capability) ?? String(capability)} is not a capability`
        })
      )
    }
    declared.add(capability)
  }
  return Either.right(declared)
}

const guardProblem = <R>(hook: Hook.Hook<R>): InvalidHookSubscription | undefined => {
  for (const [key, handler] of Object.entries(hook.guard ?? {})) {
    const operation = OPERATION_KEYS[key as keyof typeof OPERATION_KEYS]
    if (handler !== undefined && !isGuardable(operation)) {
      return new InvalidHookSubscription({
        reason: "not_guardable",
        hookName: hook.name,
        detail: `guard.${key}: ${operation} is not a guardable operation (only observers may target it)`
      })
    }
  }
  return undefined
}

/**
 * Builds the subscription registry of hooks that passed {@link validate}'s
 * entry checks, and checks that the required hook sorts last among the
 * after-planning hooks.
 *
 * @since 0.1.0
 */
export const registryOf = <R>(
  hooks: ReadonlyArray<Hook.Hook<R>>,
  limit?: RunLimit | undefined
): Either.Either<Subscription.Registry<HandlerMap<R>>, HookConfigError> => {
  const specs: Array<Subscription.Spec<HandlerMap<R>>> = []
  for (let index = 0; index < hooks.length; index++) {
    const hook = hooks[index]!
    const notGuardable = guardProblem(hook)
    if (notGuardable !== undefined) return Either.left(notGuardable)
    const grant = grantOf(hook)
    if (Either.isLeft(grant)) return Either.left(grant.left)
    const execution: ExecutionPolicy = hook.execution ?? blocking
    specs.push({
      id: hook.name,
      index,
      handlers: handlersOf(hook),
      priority: hook.priority ?? 0,
      dependsOn: hook.dependsOn ?? [],
      enabled: hook.enabled ?? true,
      execution,
      // The required hook fails closed at its after-planning point.
      failure: hook.failure ?? (hook.required === true ? "fail_closed" : undefined),
      grant: grant.right,
      timeout: hook.timeout
    })
  }
  const registry = Subscription.build(specs, limit)
  if (Either.isLeft(registry)) return Either.left(registry.left)
  const afterPlanning = registry.right.at("after_planning")
  const required = afterPlanning.findIndex((p) => isRequired(hooks[p.index]!))
  if (required >= 0 && required < afterPlanning.length - 1) {
    const late = afterPlanning[required + 1]!
    return Either.left(
      new InvalidRequiredAfterPlanningHook({ reason: "required_not_terminal", hookName: late.id, index: late.index })
    )
  }
  return Either.right(registry.right)
}

/**
 * Validates a hook list. An empty list is valid. Accepts `unknown` entries so
 * JavaScript callers get typed errors rather than crashes.
 *
 * @example
 * ```ts
 * import { HookRegistration } from "effect-agent-pipeline"
 * HookRegistration.validate([undefined]) // Left(InvalidOrchestratorConfig { index: 0 })
 * ```
 *
 * @since 0.1.0
 */
export const validate = <R = never>(
  hooks: ReadonlyArray<Hook.Hook<R> | null | undefined> | unknown
): Either.Either<ReadonlyArray<Hook.Hook<R>>, HookConfigError> => {
  if (!Array.isArray(hooks)) {
    return Either.left(new InvalidOrchestratorConfig({ index: -1, detail: "hooks must be an array" }))
  }
  const out: Array<Hook.Hook<R>> = []
  for (let index = 0; index < hooks.length; index++) {
    const entry: unknown = hooks[index]
    const problem = safeProblem(entry)
    if (problem !== undefined) return Either.left(new InvalidOrchestratorConfig({ index, detail: problem }))
    // entryProblem checked the shape a JavaScript caller could get wrong.
    out.push(entry as Hook.Hook<R>)
  }
  let required: string | undefined
  for (let index = 0; index < out.length; index++) {
    const hook = out[index]!
    if (hook.required === true && hook.afterPlanning === undefined) {
      return Either.left(new InvalidRequiredAfterPlanningHook({ reason: "stage_drift", hookName: hook.name, index }))
    }
    if (hook.required === true && hook.failure === "fail_open") {
      return Either.left(
        new InvalidHookSubscription({
          reason: "policy_not_applicable",
          hookName: hook.name,
          detail: "a required hook fails closed; it cannot be fail_open"
        })
      )
    }
    if (isRequired(hook)) {
      if (required !== undefined) {
        return Either.left(
          new InvalidRequiredAfterPlanningHook({ reason: "multiple_required", hookName: hook.name, index })
        )
      }
      required = hook.name
    }
  }
  const registry = registryOf(out)
  return Either.isLeft(registry) ? Either.left(registry.left) : Either.right(out)
}
