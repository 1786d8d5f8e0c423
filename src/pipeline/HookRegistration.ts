/**
 * Construction-time validation of the hook list (C1–C3, seed 000 §8).
 *
 * A null/undefined entry — or anything that is not a hook, from a JavaScript
 * caller — fails with `InvalidOrchestratorConfig` naming its zero-based index.
 * The required marker is checked for stage drift, uniqueness and being the
 * terminal after-planning participant.
 *
 * @since 0.1.0
 */
import { Either } from "effect"
import type * as Hook from "./Hook.js"
import { type HookConfigError, InvalidOrchestratorConfig, InvalidRequiredAfterPlanningHook } from "../domain/PipelineError.js"

const HANDLERS = ["beforePlanning", "afterPlanning", "afterExecution", "afterSynthesis"] as const

const entryProblem = (entry: unknown): string | undefined => {
  if (entry === null) return "entry is null"
  if (entry === undefined) return "entry is undefined"
  if (typeof entry !== "object") return `entry is a ${typeof entry}, not a hook`
  const record = entry as Record<string, unknown>
  if (typeof record.name !== "string" || record.name.length === 0) return "hook has no non-empty string name"
  for (const handler of HANDLERS) {
    const value = record[handler]
    if (value !== undefined && typeof value !== "function") return `${handler} is a ${typeof value}, not a function`
  }
  if (record.required !== undefined && typeof record.required !== "boolean") return "required must be a boolean"
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
  let required: { readonly name: string; readonly index: number } | undefined
  for (let index = 0; index < hooks.length; index++) {
    const entry: unknown = hooks[index]
    const problem = safeProblem(entry)
    if (problem !== undefined) return Either.left(new InvalidOrchestratorConfig({ index, detail: problem }))
    // entryProblem checked the shape a JavaScript caller could get wrong.
    const hook = entry as Hook.Hook<R>
    if (required !== undefined && hook.afterPlanning !== undefined && hook.required !== true) {
      return Either.left(
        new InvalidRequiredAfterPlanningHook({ reason: "required_not_terminal", hookName: hook.name, index })
      )
    }
    if (hook.required === true) {
      if (hook.afterPlanning === undefined) {
        return Either.left(new InvalidRequiredAfterPlanningHook({ reason: "stage_drift", hookName: hook.name, index }))
      }
      if (required !== undefined) {
        return Either.left(
          new InvalidRequiredAfterPlanningHook({ reason: "multiple_required", hookName: hook.name, index })
        )
      }
      required = { name: hook.name, index }
    }
    out.push(hook)
  }
  return Either.right(out)
}
