/**
 * The redaction guardrail (seed 004, issue 23): secrets and personal data
 * are redacted wherever they would leave the pipeline — not only in tool
 * output, but in what the model writes and streams, and in what is stored.
 *
 * With a {@link RedactionGuardrail} in the pipeline's context
 * (`Agent.layer({ redaction })` installs both parts):
 *
 * - **tool output** is redacted before it enters the model's context, by
 *   the `redaction` hook ({@link redactionHook}: an `after_tool` transform
 *   that sorts after every other, so no later hook can put a secret back),
 *   except the output of the tools in `allowTools` (passed unchanged);
 * - **the final response** is redacted by the same hook's `after_synthesis`
 *   handler, and again by the pipeline after every AfterSynthesis hook (a
 *   hook ordered after it cannot reintroduce a secret); a short-circuit
 *   answer likewise; the response's `rawDraft` is the redacted draft;
 * - **streamed tokens** pass a stream guard (`Redaction.streamGuard`) that
 *   holds back at most `window` characters, so a secret split across any
 *   token boundary never reaches the client; the delivered text is what
 *   the client received;
 * - **errors** returned to the caller: a `PlanningError`'s rejected model
 *   output and details, a `SynthesisError`'s details;
 * - **the stored record**: every text it keeps (the request, metadata, plan
 *   parameters, step outputs and errors — exempt tools' included —, model
 *   calls' prompts and outputs, the raw draft, the delivered and final
 *   text, hook errors and effect data, diagnostics) is redacted as it is
 *   written, unless the operator opts into raw evidence (`rawEvidence:
 *   true`, seed 000 §9: exact-fidelity evidence is an opt-in).
 *
 * What it does not cover: JSON numbers (data, not text); HITL checkpoints,
 * which keep the plan and step outputs the resumed request needs (sealed,
 * and redacted already for tools that are not exempt); hooks' own side
 * channels (logs, metrics, stores they write to).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import * as HookEffects from "../runtime/HookEffects.js"
import * as Redaction from "../runtime/Redaction.js"
import * as Hook from "./Hook.js"
import { redactJson, textRedaction } from "./internal/redactValues.js"

/**
 * What the guardrail redacts with, and what it leaves alone.
 *
 * @since 0.1.0
 * @category models
 */
export interface RedactionOptions extends Redaction.Options {
  /** Tools (by capability name) whose output reaches the model unchanged. */
  readonly allowTools?: ReadonlyArray<string> | undefined
  /** Store records unredacted — exact-fidelity evidence (default false). */
  readonly rawEvidence?: boolean | undefined
  /** A fixed hold-back window for streamed tokens (default: as short as the patterns allow). */
  readonly streamWindow?: number | undefined
}

/**
 * The guardrail the pipeline enforces when it finds this service.
 *
 * @since 0.1.0
 * @category services
 */
export class RedactionGuardrail extends Context.Tag("effect-agent-pipeline/RedactionGuardrail")<
  RedactionGuardrail,
  RedactionGuardrail.Service
>() {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace RedactionGuardrail {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly redactor: Redaction.Redactor
    readonly allowTools: ReadonlySet<string>
    readonly rawEvidence: boolean
    /** The guard each streamed response passes. */
    readonly streamGuard: Redaction.StreamGuard
  }
}

/**
 * Builds the guardrail: a bad pattern, or a window shorter than the
 * patterns need, fails with `RedactionError`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Guardrails } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const guardrail = yield* Guardrails.redaction({ allowTools: ["vault_lookup"] })
 *   return guardrail.redactor.redact("mail ann@example.org").text // "mail [REDACTED:email]"
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const redaction = (
  options: RedactionOptions = {}
): Effect.Effect<RedactionGuardrail.Service, Redaction.RedactionError> =>
  Effect.gen(function*() {
    const redactor = yield* Redaction.make(options)
    const streamGuard = yield* Redaction.streamGuard(redactor, { window: options.streamWindow })
    return {
      redactor,
      allowTools: new Set(options.allowTools ?? []),
      rawEvidence: options.rawEvidence === true,
      streamGuard
    }
  })

/**
 * The guardrail as a Layer (`Agent.layer({ redaction })` builds it for you).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRedaction = (
  options: RedactionOptions = {}
): Layer.Layer<RedactionGuardrail, Redaction.RedactionError> => Layer.effect(RedactionGuardrail, redaction(options))

/** Reports what a run redacted (kinds and count, never the text) as the hook run's effect. */
const reported = (target: string, kinds: ReadonlySet<string>, subject?: string) =>
  kinds.size === 0 ? Effect.void : HookEffects.report({
    effectId: "redaction",
    name: "Redaction",
    status: "succeeded",
    data: subject === undefined ? { target, kinds: [...kinds] } : { target, tool: subject, kinds: [...kinds] }
  }).pipe(Effect.ignore)

/**
 * The `redaction` hook: redacts tool output (the tools in `allowTools`
 * excepted) and the final response, and reports what it found as an effect
 * of its run. It sorts after every other hook at both points.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Guardrails, PipelineHooks } from "effect-agent-pipeline"
 *
 * // By hand, for a pipeline not built by Agent.layer: the hook, and the
 * // service the pipeline enforces (streams, errors, records).
 * const HooksLive = Effect.map(Guardrails.redaction(), (guardrail) => [Guardrails.redactionHook(guardrail)])
 * const layer = PipelineHooks.layerEffect(HooksLive)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const redactionHook = (guardrail: RedactionGuardrail.Service): Hook.Hook =>
  Hook.make({
    name: "redaction",
    // The lowest priority there is: it runs after every other hook.
    priority: -Number.MAX_VALUE,
    capabilities: ["tool_output_rewrite", "response_rewrite"],
    afterTool: (call, result) =>
      Effect.suspend(() => {
        const tool = call.payload.capability
        if (guardrail.allowTools.has(tool)) return Effect.succeed(result)
        const kinds = new Set<string>()
        const redact = textRedaction(guardrail.redactor, kinds)
        const next = "output" in result
          ? { output: redactJson(result.output, redact) }
          : { error: redact(result.error) }
        return kinds.size === 0 ? Effect.succeed(result) : Effect.as(reported("tool_output", kinds, tool), next)
      }),
    afterSynthesis: (_context, response) =>
      Effect.suspend(() => {
        const { findings, text } = guardrail.redactor.redact(response)
        return findings.length === 0
          ? Effect.succeed(response)
          : Effect.as(reported("response", new Set(findings.map((f) => f.kind))), text)
      })
  })
