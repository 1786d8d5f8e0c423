/**
 * The model seam (DESIGN §2, §6): every model call — planning and
 * synthesis, buffered or streamed, in any phase, resumed or not — is one run
 * of the `inference` operation, so Around observers, guards and
 * before/after inference transforms see it whatever `LanguageModel` Layer is
 * installed (offline, scripted, a provider's). The service decorates that
 * `LanguageModel` once, when the Layer is built.
 *
 * - `before_inference` transforms rewrite the prompt;
 * - `after_inference` transforms rewrite the response text — for planning
 *   before the plan is decoded from it, for a streamed synthesis once the
 *   stream ended (tokens already sent stay sent; the rewritten text becomes
 *   the draft);
 * - guards wrap the call (on a stream: the decision to start it).
 *
 * Model failures become `PlanningError` / `SynthesisError`; a guard's
 * refusal is `HookDenied`; a fail-closed transform's failure `HookFailed`.
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@effect/ai"
import { Context, Effect, Layer, Option, Stream } from "effect"
import type { CallRef, Coordinates } from "../domain/Operation.js"
import { type HookDenied, type HookFailed, PlanningError, SynthesisError } from "../domain/PipelineError.js"
import { PlanOutput } from "../domain/PlanOutput.js"
import { decodeText, RoutingPlan } from "../domain/RoutingPlan.js"
import { joinSurrogates } from "../domain/Utf8Chunks.js"
import { HookRuntime } from "../runtime/HookRuntime.js"
import { DirectModel } from "./ModelProvider.js"
import type { RequestRecorder } from "../runtime/RequestRecorder.js"

/**
 * One model call: its prompt and where it happens.
 *
 * @since 0.1.0
 */
export interface InferenceRequest {
  readonly prompt: string
  readonly coordinates: Coordinates
  /** The operation run that makes the call (the phase for planning, the request for synthesis). */
  readonly parent?: CallRef | undefined
  readonly recorder: RequestRecorder
}

/**
 * What a streamed synthesis emits: text deltas, then the full (transformed)
 * text once.
 *
 * @since 0.1.0
 */
export type StreamPart =
  | { readonly _tag: "Delta"; readonly text: string }
  | { readonly _tag: "Done"; readonly text: string }

/**
 * The seam service.
 *
 * @since 0.1.0
 */
export class Inference extends Context.Tag("effect-agent-pipeline/Inference")<Inference, Inference.Service>() {}

/** @since 0.1.0 */
export declare namespace Inference {
  /** @since 0.1.0 */
  export interface Service {
    /** A plan as structured output, decoded by the `RoutingPlan` Schema (not yet validated). */
    readonly plan: (request: InferenceRequest) => Effect.Effect<RoutingPlan, PlanningError | HookDenied | HookFailed>
    /** A buffered text answer. */
    readonly complete: (request: InferenceRequest) => Effect.Effect<string, SynthesisError | HookDenied | HookFailed>
    /** A streamed text answer. */
    readonly stream: (request: InferenceRequest) => Stream.Stream<StreamPart, SynthesisError | HookDenied | HookFailed>
  }
}

const excerpt = (error: { readonly message: string }) => error.message.slice(0, 400)

const decodePlanText = decodeText

/**
 * Decorates a `LanguageModel` with the hook runtime's inference hooks.
 *
 * @since 0.1.0
 */
export const make: Effect.Effect<Inference.Service, never, LanguageModel.LanguageModel | HookRuntime> = Effect.gen(
  function*() {
    const model = yield* LanguageModel.LanguageModel
    // The provider's narrow interface when it offers one (ModelProvider),
    // else any LanguageModel through @effect/ai.
    const direct = Option.getOrUndefined(yield* Effect.serviceOption(DirectModel))
    const { operations } = yield* HookRuntime

    const synthesisError = (error: { readonly message: string }) => new SynthesisError({ detail: excerpt(error), cause: error })

    const planningError = (phase: number | undefined) => (error: { readonly _tag: string; readonly message: string }) =>
      new PlanningError({
        reason: error._tag === "MalformedOutput" ? "invalid_plan" : "model_failed",
        phase: phase ?? 1,
        detail: excerpt(error),
        cause: error
      })

    const generatePlan = (prompt: string, phase: number | undefined) =>
      Effect.mapError(
        direct !== undefined
          ? direct.generatePlan(prompt)
          : model.generateObject({ prompt, schema: PlanOutput, objectName: "routing_plan" }),
        planningError(phase)
      )

    const generateText = (prompt: string): Effect.Effect<string, SynthesisError> =>
      direct !== undefined
        ? Effect.mapError(direct.generateText(prompt), synthesisError)
        : Effect.mapBoth(model.generateText({ prompt }), { onFailure: synthesisError, onSuccess: (r) => r.text })

    const call = (request: InferenceRequest, purpose: "planning" | "synthesis", streamed: boolean) =>
      operations.call("inference", {
        coordinates: request.coordinates,
        parent: request.parent,
        payload: { purpose, streamed, prompt: request.prompt }
      })

    const plan: Inference.Service["plan"] = (request) => {
      const phase = request.coordinates.phase
      if (!operations.observes("inference")) return Effect.map(generatePlan(request.prompt, phase), (r) => r.value)
      return Effect.flatMap(call(request, "planning", false), (snapshot) =>
        operations.run(
          snapshot,
          request.recorder,
          Effect.gen(function*() {
            const prompt = yield* operations.transform("before_inference", snapshot, request.prompt, request.recorder)
            const response = yield* generatePlan(prompt, phase)
            const text = yield* operations.transform("after_inference", snapshot, response.text, request.recorder)
            if (text === response.text) return response.value
            // A rewritten response is decoded again, from the rewritten text.
            return yield* decodePlanText(text).pipe(
              Effect.mapError((error) =>
                new PlanningError({ reason: "invalid_plan", phase: phase ?? 1, detail: excerpt(error), cause: error })
              )
            )
          })
        ))
    }

    const complete: Inference.Service["complete"] = (request) => {
      if (!operations.observes("inference")) {
        return generateText(request.prompt)
      }
      return Effect.flatMap(call(request, "synthesis", false), (snapshot) =>
        operations.run(
          snapshot,
          request.recorder,
          Effect.gen(function*() {
            const prompt = yield* operations.transform("before_inference", snapshot, request.prompt, request.recorder)
            const text = yield* generateText(prompt)
            return yield* operations.transform("after_inference", snapshot, text, request.recorder)
          })
        ))
    }

    const deltas = (prompt: string): Stream.Stream<string, SynthesisError> =>
      model.streamText({ prompt }).pipe(
        Stream.mapError(synthesisError),
        Stream.filterMap((part) => (part.type === "text-delta" ? Option.some(part.delta) : Option.none())),
        joinSurrogates
      )

    const stream: Inference.Service["stream"] = (request) => {
      if (!operations.observes("inference")) {
        const parts: Array<string> = []
        return Stream.concat(
          Stream.map(deltas(request.prompt), (text): StreamPart => {
            parts.push(text)
            return { _tag: "Delta", text }
          }),
          Stream.sync((): StreamPart => ({ _tag: "Done", text: parts.join("") }))
        )
      }
      return Stream.unwrapScoped(
        Effect.flatMap(call(request, "synthesis", true), (snapshot) =>
          // Observers and guards see the whole stream as one run: it begins
          // when the stream is opened and ends with it.
          operations.runScoped(snapshot, request.recorder, Effect.void).pipe(
            Effect.zipRight(operations.transform("before_inference", snapshot, request.prompt, request.recorder)),
            Effect.map((prompt) => {
              const parts: Array<string> = []
              return Stream.concat(
                Stream.map(deltas(prompt), (text): StreamPart => {
                  parts.push(text)
                  return { _tag: "Delta", text }
                }),
                Stream.fromEffect(
                  Effect.map(
                    Effect.suspend(() => operations.transform("after_inference", snapshot, parts.join(""), request.recorder)),
                    (text): StreamPart => ({ _tag: "Done", text })
                  )
                )
              )
            })
          ))
      )
    }

    return { plan, complete, stream }
  }
)

/**
 * The seam as a Layer over the installed `LanguageModel` and hook runtime.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Inference, never, LanguageModel.LanguageModel | HookRuntime> = Layer.effect(
  Inference,
  make
)
