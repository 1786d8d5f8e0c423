/**
 * Construction-time validation of the hook list (C1–C3, seed 000 §8, seed
 * 001 subscriptions) and the subscription registry built from it.
 *
 * A null/undefined entry — or anything that is not a hook, from a JavaScript
 * caller — fails with `InvalidOrchestratorConfig` naming its zero-based
 * index. The required marker is checked for stage drift, uniqueness and
 * sorting last among the after-planning hooks (priorities and dependencies
 * included). Subscriptions are checked for duplicate ids, dependencies,
 * guardable operations, applicable policies and known capabilities; hook
 * groups (`HookGroup`) for unique group names and unique hook names across
 * groups.
 */
import { Either } from "effect"
import { isGuardable } from "../../domain/Operation.js"
import {
  type HookConfigError,
  InvalidHookSubscription,
  InvalidOrchestratorConfig,
  InvalidRequiredAfterPlanningHook
} from "../../domain/PipelineError.js"
import { type Capability, type Grant, isCapability } from "../../runtime/Capability.js"
import type { RunLimit } from "../../runtime/internal/bounded.js"
import { tokenOf } from "../../runtime/internal/hookGroups.js"
import type { OperationHandlers } from "../../runtime/internal/operationHooks.js"
import { blocking, type ExecutionPolicy } from "../../runtime/Policy.js"
import * as Subscription from "../../runtime/Subscription.js"
import type * as Hook from "../Hook.js"
import { operationKeys, safeProblem } from "./hookShape.js"

/**
 * A hook's handlers by point.
 *
 * @since 0.1.0
 * @category models
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
 * @category models
 */
export type Registry = Subscription.Registry<HandlerMap>

/**
 * Whether the hook is the fail-closed after-planning boundary: only an
 * explicit marker makes it so (seed 000 §7.4: "an explicit marker keeps
 * optional enrichment resilient"); a hook that merely fails closed is an
 * ordinary fail-closed hook.
 *
 * @since 0.1.0
 * @category guards
 */
export const isRequired = <R>(hook: Hook.Hook<R>): boolean => hook.required === true

/**
 * A hook's handlers by point.
 *
 * @since 0.1.0
 * @category utils
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
    after_memory_store: hook.afterMemoryStore,
    on_error: hook.onError
  }
}

const duplicate = (hookName: string, detail: string) =>
  new InvalidHookSubscription({ reason: "duplicate_id", hookName, detail })

const where = <R>(hook: Hook.Hook<R>, index: number): string =>
  hook.group === undefined ? `entry ${index} (no group)` : `group "${hook.group}" (entry ${index})`

/**
 * Groups: two groups may not share a name, and no hook name may repeat
 * across (or within) groups — each a `duplicate_id`, naming the groups.
 */
const groupProblem = <R>(hooks: ReadonlyArray<Hook.Hook<R>>): InvalidHookSubscription | undefined => {
  const groups = new Map<string, { readonly token: object | undefined; readonly index: number }>()
  const names = new Map<string, number>()
  for (let index = 0; index < hooks.length; index++) {
    const hook = hooks[index]!
    const group = hook.group
    if (group !== undefined) {
      const token = tokenOf(hook)
      const seen = groups.get(group)
      if (seen === undefined) groups.set(group, { token, index })
      else if (seen.token !== token) {
        return duplicate(hook.name, `two groups are named "${group}" (entries ${seen.index} and ${index})`)
      }
    }
    const first = names.get(hook.name)
    if (first === undefined) {
      names.set(hook.name, index)
      continue
    }
    const other = hooks[first]!
    if (other.group === undefined && group === undefined) continue
    return duplicate(
      hook.name,
      other === hook
        ? `group "${group}" is registered twice (its hook at entries ${first} and ${index})`
        : `two hooks are named "${hook.name}": in ${where(other, first)} and in ${where(hook, index)}`
    )
  }
  return undefined
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
    const operation = operationKeys[key as keyof typeof operationKeys]
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
 * @category constructors
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
      timeout: hook.timeout,
      group: hook.group
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
 * @category utils
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
  const grouped = groupProblem(out)
  if (grouped !== undefined) return Either.left(grouped)
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
