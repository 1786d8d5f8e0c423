/**
 * A direct model's functions before the `IdGenerator` they need is
 * provided, and that `IdGenerator`. The pipeline runs every model call on
 * a fiber of its own (its deadline, runtime/internal/deadline.ts), which
 * starts with these services in its context: no `Effect.provideService`
 * per call (about twelve interpreter instructions each — it goes through
 * `acquireUseRelease` — two calls a request). Anyone else calling the
 * direct functions gets them provided, as before.
 */
import type { AiError, IdGenerator } from "@effect/ai"
import type { Context, Effect } from "effect"
import type { ModelResponse } from "../../domain/ModelCall.js"

/**
 * The unprovided functions and their services.
 *
 * @since 0.1.0
 * @category models
 */
export interface Unprovided {
  readonly services: Context.Context<IdGenerator.IdGenerator>
  readonly generateText: (prompt: string) => Effect.Effect<ModelResponse, AiError.AiError, IdGenerator.IdGenerator>
  readonly generatePlan: (prompt: string) => Effect.Effect<ModelResponse, AiError.AiError, IdGenerator.IdGenerator>
}

// Keyed by the direct service object (a `DirectModel.Service`; not named
// here: ModelProvider.ts imports this module).
const registry = new WeakMap<object, Unprovided>()

/**
 * Registers `direct`'s unprovided functions; returns `direct`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const register = <D extends object>(direct: D, unprovided: Unprovided): D => {
  registry.set(direct, unprovided)
  return direct
}

/**
 * The unprovided functions registered for `direct`, if any.
 *
 * @since 0.1.0
 * @category utils
 */
export const unprovidedOf = (direct: object): Unprovided | undefined => registry.get(direct)
