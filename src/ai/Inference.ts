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
 * - guards wrap the call (on a stream: the decision to start it);
 * - a `before_inference` transform may serve the response itself
 *   (`Hook.respond`, an LLM response cache): the model is not called and
 *   no `ModelCall` is recorded; the `after_inference` transforms run on the
 *   served text, planning decodes the plan from it (a served text that is
 *   not a plan is not re-asked), and a streamed synthesis emits it as one
 *   delta.
 *
 * Behind the seam each call is bounded and retried by the `ModelPolicy`
 * (timeout per attempt, transient failures retried with backoff, the
 * fallback model through `ExecutionPlan`) and each attempt is recorded as a
 * `ModelCall`. A planning answer that is not a plan is re-asked — a new
 * inference run whose prompt carries the rejected output and why it was
 * rejected — up to `planReasks` times (hooks never trigger re-planning).
 *
 * Model failures become `PlanningError` / `SynthesisError` (reason
 * `model_failed`, `timed_out`, or `output_too_large` for an answer over
 * the policy's `maxOutputBytes`), their `cause` the model's failure made
 * safe to keep (no request headers or keys, see `internal/modelCalls.ts`);
 * a guard's refusal is `HookDenied`; a fail-closed transform's failure
 * `HookFailed`.
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@effect/ai"
import { Context, Effect, Either, Layer, Option, type ParseResult, Stream } from "effect"
import { joinSurrogates } from "../domain/internal/utf8Chunks.js"
import type { CallRef, Coordinates } from "../domain/Operation.js"
import { type HookDenied, type HookFailed, PlanningError, SynthesisError } from "../domain/PipelineError.js"
import { escapeContent } from "../domain/PromptSections.js"
import { decodeTextEither, type RoutingPlan } from "../domain/RoutingPlan.js"
import { HookRuntime } from "../runtime/internal/hookRuntime.js"
import { makeCaller } from "./internal/modelCalls.js"
import { clientOf, ModelIdentity } from "./internal/modelClient.js"
import type { CallInfo } from "./internal/modelRecord.js"
import { aiErrorText } from "./internal/safeAiError.js"
import * as ModelPolicy from "./ModelPolicy.js"
import { DirectModel, directOf } from "./ModelProvider.js"

/**
 * One model call: its prompt and where it happens.
 *
 * @since 0.1.0
 * @category models
 */
export interface InferenceRequest {
  readonly prompt: string
  readonly coordinates: Coordinates
  /** The operation run that makes the call (the phase for planning, the request for synthesis). */
  readonly parent?: CallRef | undefined
}

/**
 * What a streamed synthesis emits: text deltas, then the full (transformed)
 * text once.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamPart =
  | { readonly _tag: "Delta"; readonly text: string }
  | { readonly _tag: "Done"; readonly text: string }

/**
 * The seam service.
 *
 * @since 0.1.0
 * @category services
 */
export class Inference extends Context.Tag("effect-agent-pipeline/Inference")<Inference, Inference.Service>() {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace Inference {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** A plan as structured output, decoded by the `RoutingPlan` Schema (not yet validated). */
    readonly plan: (request: InferenceRequest) => Effect.Effect<RoutingPlan, PlanningError | HookDenied | HookFailed>
    /** A buffered text answer. */
    readonly complete: (request: InferenceRequest) => Effect.Effect<string, SynthesisError | HookDenied | HookFailed>
    /** A streamed text answer. */
    readonly stream: (request: InferenceRequest) => Stream.Stream<StreamPart, SynthesisError | HookDenied | HookFailed>
  }
}

/**
 * A second model to ask once the primary gave up (its retries spent):
 * a `LanguageModel` Layer's services, see {@link layerFallback}.
 *
 * @since 0.1.0
 * @category services
 */
export class FallbackModel extends Context.Tag("effect-agent-pipeline/FallbackModel")<FallbackModel, {
  readonly languageModel: LanguageModel.Service
  readonly direct: DirectModel.Service | undefined
  /** Which model it is, for telemetry, when its Layer says (provider, model, server). */
  readonly identity?: ModelIdentity.Service | undefined
}>() {}

/**
 * The fallback model from a `LanguageModel` Layer (any provider's).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Inference, OfflineModel } from "effect-agent-pipeline"
 *
 * const fallback = Inference.layerFallback(OfflineModel.layer)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFallback = <E, R>(
  model: Layer.Layer<LanguageModel.LanguageModel, E, R>
): Layer.Layer<FallbackModel, E, R> =>
  Layer.effect(
    FallbackModel,
    Effect.all({
      languageModel: LanguageModel.LanguageModel,
      direct: Effect.serviceOption(DirectModel),
      identity: Effect.map(Effect.serviceOption(ModelIdentity), Option.getOrUndefined)
    }).pipe(Effect.map(({ direct, identity, languageModel }) => ({
      languageModel,
      direct: Option.getOrElse(direct, () => directOf(languageModel)),
      identity
    })))
  ).pipe(Layer.provide(model))

const excerpt = (failure: ModelPolicy.ModelFailure) =>
  (failure._tag === "ModelTimeout" || failure._tag === "ModelOutputTooLarge" ? failure.message : aiErrorText(failure))
    .slice(0, 400)

const reasonOf = (failure: ModelPolicy.ModelFailure) =>
  failure._tag === "ModelTimeout"
    ? "timed_out"
    : failure._tag === "ModelOutputTooLarge"
    ? "output_too_large"
    : "model_failed"

/** The prompt of a re-ask: the original, the rejected output, and why it was rejected. */
const reaskPrompt = (prompt: string, output: string, problem: string): string =>
  `${prompt}\n\n<rejected_output>\n${escapeContent(output)}\n</rejected_output>\n\n<output_error>\n${
    escapeContent(problem)
  }\n</output_error>\n\nYour previous answer (rejected_output) is not a valid routing_plan: see output_error. ` +
  "Answer again with only the routing_plan JSON object."

const planningFailure = (phase: number) => (failure: ModelPolicy.ModelFailure) =>
  new PlanningError({
    reason: reasonOf(failure),
    phase,
    detail: excerpt(failure),
    cause: failure
  })

const synthesisFailure = (failure: ModelPolicy.ModelFailure) =>
  new SynthesisError({
    reason: reasonOf(failure),
    detail: excerpt(failure),
    cause: failure
  })

/** The `invalid_plan` error of text that is not a plan: it keeps the text. */
const invalidPlan = (text: string, error: ParseResult.ParseError, phase: number): PlanningError =>
  new PlanningError({ reason: "invalid_plan", phase, detail: error.message.slice(0, 2000), output: text, cause: error })

/**
 * Decorates a `LanguageModel` with the hook runtime's inference hooks and
 * the model policy.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (
  policy: ModelPolicy.ModelPolicy
): Effect.Effect<Inference.Service, never, LanguageModel.LanguageModel | HookRuntime> =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    // The provider's narrow interface when it offers one (ModelProvider):
    // provided as DirectModel, or carried by the LanguageModel service
    // (provided alone); else any LanguageModel through @effect/ai.
    const direct = Option.getOrElse(yield* Effect.serviceOption(DirectModel), () => directOf(model))
    const fallback = Option.getOrUndefined(yield* Effect.serviceOption(FallbackModel))
    // Which model it is (provider, model asked for), when its Layer says: for telemetry.
    const identity = Option.getOrUndefined(yield* Effect.serviceOption(ModelIdentity))
    const { withOperation, withOperationStream } = (yield* HookRuntime).operations
    const caller = makeCaller(
      policy,
      clientOf("primary", model, direct, identity),
      fallback === undefined
        ? undefined
        : clientOf("fallback", fallback.languageModel, fallback.direct, fallback.identity)
    )

    const info = (request: InferenceRequest, purpose: CallInfo["purpose"], reask = 0): CallInfo => ({
      purpose,
      phase: request.coordinates.phase,
      reask
    })

    /** The inference run of `request`, asking `prompt`. */
    const inference = (
      request: InferenceRequest,
      purpose: "planning" | "synthesis",
      streamed: boolean,
      prompt = request.prompt
    ) => ({
      operation: "inference" as const,
      coordinates: request.coordinates,
      parent: request.parent,
      payload: { purpose, streamed, prompt }
    })

    /**
     * One ask for a plan: one inference run, whose plan is decoded from the
     * transformed answer inside the run. When the model's own answer is not
     * a plan, the ask is repeated with a prompt that carries the rejected
     * output and why (up to `planReasks` times); an answer an
     * after_inference transform rewrote into something that is not a plan
     * is not re-asked (asking again would meet the same hook).
     */
    const plan: Inference.Service["plan"] = (request) => {
      const phase = request.coordinates.phase ?? 1
      const ask = (
        reask: number,
        prompt: string
      ): Effect.Effect<RoutingPlan, PlanningError | HookDenied | HookFailed> =>
        Effect.suspend(() => {
          let answered: string | undefined
          let rejected = false
          const once = withOperation(inference(request, "planning", false, prompt))(
            (prompt) =>
              caller.generate(info(request, "planning", reask), prompt, "plan").pipe(
                Effect.mapBoth({
                  onFailure: planningFailure(phase),
                  onSuccess: (response) => (answered = response.text)
                })
              ),
            (text) => {
              const decoded = decodeTextEither(text)
              if (Either.isRight(decoded)) return Effect.succeed(decoded.right)
              rejected = text === answered
              return Effect.fail(invalidPlan(text, decoded.left, phase))
            }
          )
          if (reask >= policy.planReasks) return once
          return Effect.catchIf(
            once,
            (error): error is PlanningError => rejected && error._tag === "PlanningError",
            (error) => ask(reask + 1, reaskPrompt(request.prompt, error.output ?? "", error.detail))
          )
        })
      return ask(0, request.prompt)
    }

    const complete: Inference.Service["complete"] = (request) =>
      withOperation(inference(request, "synthesis", false))((prompt) =>
        Effect.mapBoth(caller.generate(info(request, "synthesis"), prompt, "text"), {
          onFailure: synthesisFailure,
          onSuccess: (response) => response.text
        })
      )

    // Observers and guards see the whole stream as one run: it begins when
    // the stream is opened and ends with it — canceled when its consumer
    // stops pulling before the end.
    const stream: Inference.Service["stream"] = (request) =>
      withOperationStream(inference(request, "synthesis", true))((prompt, after) => {
        const parts: Array<string> = []
        return Stream.concat(
          caller.stream(info(request, "synthesis"), prompt).pipe(
            Stream.mapError(synthesisFailure),
            joinSurrogates,
            Stream.map((text): StreamPart => {
              parts.push(text)
              return { _tag: "Delta", text }
            })
          ),
          Stream.fromEffect(
            Effect.map(Effect.suspend(() => after(parts.join(""))), (text): StreamPart => ({ _tag: "Done", text }))
          )
        )
      }, (text, after) =>
        // A served response: one delta, then the text the after transforms made of it.
        Stream.concat(
          Stream.succeed<StreamPart>({ _tag: "Delta", text }),
          Stream.fromEffect(Effect.map(after(text), (done): StreamPart => ({ _tag: "Done", text: done })))
        ))

    return { plan, complete, stream }
  })

/**
 * {@link makeWith} on the default model policy.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Inference.Service, never, LanguageModel.LanguageModel | HookRuntime> = makeWith(
  ModelPolicy.defaults
)

/**
 * The seam as a Layer over the installed `LanguageModel` and hook runtime.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Inference, never, LanguageModel.LanguageModel | HookRuntime> = Layer.effect(
  Inference,
  make
)

/**
 * The seam as a Layer, with a model policy (`Agent.layer` builds it from
 * the pipeline options).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  policy: ModelPolicy.ModelPolicy
): Layer.Layer<Inference, never, LanguageModel.LanguageModel | HookRuntime> => Layer.effect(Inference, makeWith(policy))
