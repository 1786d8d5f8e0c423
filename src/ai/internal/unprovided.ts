/**
 * A `ModelProvider` direct model's calls before `@effect/ai`'s `IdGenerator`
 * is provided to them, and the context that provides it.
 *
 * `Effect.provideService` is a context switch: about 25 interpreter steps
 * and 9 KB allocated per call here — more than the rest of a model call's
 * plumbing together. The pipeline runs every model call on a fiber of its
 * own anyway (its timeout does, `runtime/internal/deadline.ts`), so it hands
 * this context to that fiber as it starts and calls these instead. Anyone
 * else calls the public `DirectModel` functions, which provide it
 * themselves. Keyed by the `DirectModel` service object, so the public
 * interface stays as it is.
 */
import type { AiError, IdGenerator } from "@effect/ai"
import type { Context, Effect } from "effect"
import type { ModelResponse } from "../../domain/ModelCall.js"

/** The calls and their context. */
export interface Unprovided {
  readonly services: Context.Context<IdGenerator.IdGenerator>
  readonly generateText: (prompt: string) => Effect.Effect<ModelResponse, AiError.AiError, IdGenerator.IdGenerator>
  readonly generatePlan: (prompt: string) => Effect.Effect<ModelResponse, AiError.AiError, IdGenerator.IdGenerator>
}

// Keyed by the `DirectModel` service object (typed `object`: this module
// sits below ModelProvider.ts, which imports it).
const registry = new WeakMap<object, Unprovided>()

/** Registers `direct`'s unprovided calls (by `ModelProvider.make`). */
export const register = <D extends object>(direct: D, unprovided: Unprovided): D => {
  registry.set(direct, unprovided)
  return direct
}

/** `direct`'s unprovided calls, when it is a `ModelProvider` model. */
export const unprovidedOf = (direct: object): Unprovided | undefined => registry.get(direct)
