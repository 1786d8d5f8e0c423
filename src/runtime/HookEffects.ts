/**
 * The API hooks use to report effects — work they started and what they
 * observed (seed 000 §7.5, C15).
 *
 * A hook announces a `pending` effect before it returns; later reports with
 * the same `effectId` update that effect (never a duplicate), also from
 * detached fibers forked by the hook. A new effect id reported after the hook
 * returned is refused. With recording off, reporting is a no-op. Reporting
 * never changes the business outcome: callers usually `Effect.ignore` errors.
 *
 * @since 0.1.0
 */
import { Clock, Effect, FiberRef, Schema } from "effect"
import { HookEffect, type HookEffectStatus } from "../domain/ExecutionRecord.js"
import type { Json } from "../domain/Json.js"

/**
 * A report was refused.
 *
 * @since 0.1.0
 * @category errors
 */
export class HookEffectReportError extends Schema.TaggedError<HookEffectReportError>(
  "effect-agent-pipeline/HookEffectReportError"
)("HookEffectReportError", {
  reason: Schema.Literal("outside_hook", "invalid_effect", "unannounced_after_return"),
  effectId: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `effect ${this.effectId} not recorded (${this.reason}): ${this.detail}`
  }
}

/**
 * What a hook reports. `schemaVersion` defaults to 1, `startedAt` to now.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookEffectInput {
  readonly effectId: string
  readonly schemaVersion?: number | undefined
  readonly name: string
  readonly status: HookEffectStatus
  readonly data?: Json | undefined
  readonly startedAt?: number | undefined
  readonly duration?: number | undefined
  readonly summary?: string | undefined
  readonly error?: string | undefined
}

/**
 * Where one invocation's effects go (the request recorder implements it).
 *
 * @since 0.1.0
 * @category models
 */
export interface InvocationEffects {
  readonly upsert: (effect: HookEffect) => Effect.Effect<void, HookEffectReportError>
}

/**
 * Which invocation a fiber's `report` goes to. Each fiber has its own slot
 * (a fork copies its parent's), so the runner switches it around a handler
 * by assignment — cheaper than a FiberRef write per hook run, which copies
 * the fiber's whole FiberRef map. `"disabled"` means recording is off.
 *
 * @internal
 *
 * @since 0.1.0
 * @category models
 */
export interface InvocationSlot {
  current: InvocationEffects | "disabled" | undefined
}

/**
 * The slot of fibers that never had one of their own: shared, so it is never
 * switched (the runner scopes a fresh slot instead; see `hasOwnSlot`).
 *
 * @internal
 *
 * @since 0.1.0
 * @category constants
 */
export const sharedSlot: InvocationSlot = Object.freeze({ current: undefined })

/**
 * The current fiber's slot: set per request (and per detached run), copied
 * into forked fibers, kept by the parent when a child joins.
 *
 * @internal
 *
 * @since 0.1.0
 * @category context
 */
export const currentInvocation: FiberRef.FiberRef<InvocationSlot> = FiberRef.unsafeMake<InvocationSlot>(sharedSlot, {
  fork: (slot) => ({ current: slot.current }),
  join: (parent) => parent
})

/**
 * A fresh slot reporting into `target`.
 *
 * @internal
 *
 * @since 0.1.0
 * @category constructors
 */
export const slotFor = (target: InvocationSlot["current"]): InvocationSlot => ({ current: target })

const decodeEffect = Schema.decodeUnknownEither(HookEffect)

const strip = (input: HookEffectInput, now: number): Record<string, unknown> => {
  const out: Record<string, unknown> = {
    effectId: input.effectId,
    schemaVersion: input.schemaVersion ?? 1,
    name: input.name,
    status: input.status,
    startedAt: input.startedAt ?? now
  }
  if (input.data !== undefined) out.data = input.data
  if (input.duration !== undefined) out.duration = input.duration
  if (input.summary !== undefined) out.summary = input.summary
  if (input.error !== undefined) out.error = input.error
  return out
}

/**
 * Reports (or updates) an effect of the current hook invocation.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, HookEffects } from "effect-agent-pipeline"
 *
 * const audit = Hook.make({
 *   name: "application-audit",
 *   afterExecution: (_ctx, results) =>
 *     Effect.gen(function*() {
 *       yield* HookEffects.report({ effectId: "audit-write", name: "Audit write", status: "pending" })
 *       yield* Effect.forkDaemon(
 *         Effect.sleep("10 millis").pipe(
 *           Effect.zipRight(HookEffects.report({
 *             effectId: "audit-write", name: "Audit write", status: "succeeded",
 *             data: { step_count: results.steps.length }
 *           })),
 *           Effect.ignore
 *         )
 *       )
 *     }).pipe(Effect.ignore)
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const report = (input: HookEffectInput): Effect.Effect<void, HookEffectReportError> =>
  Effect.flatMap(FiberRef.get(currentInvocation), ({ current: target }) => {
    if (target === "disabled") return Effect.void
    const effectId = typeof input?.effectId === "string" ? input.effectId : String(input?.effectId)
    if (target === undefined) {
      return Effect.fail(
        new HookEffectReportError({
          reason: "outside_hook",
          effectId,
          detail: "report called outside a hook invocation"
        })
      )
    }
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const decoded = decodeEffect(typeof input === "object" && input !== null ? strip(input, now) : input)
      if (decoded._tag === "Left") {
        return Effect.fail(
          new HookEffectReportError({ reason: "invalid_effect", effectId, detail: decoded.left.message })
        )
      }
      return target.upsert(decoded.right)
    })
  })
