/**
 * One hook run's slot in a request's record (seed 001 effect reporting):
 * effects the run reports are buffered until it is recorded; a detached
 * run's entry accepts new effects until it completes. The recorder
 * (`requestRecorder.ts`) owns the record; a slot writes into its log.
 */
import { Effect } from "effect"
import type { HookEffect, HookInvocation } from "../../domain/ExecutionRecord.js"
import { HookEffectReportError, type InvocationEffects } from "../HookEffects.js"

export const upsertEffect = (effects: ReadonlyArray<HookEffect>, effect: HookEffect): ReadonlyArray<HookEffect> => {
  const i = effects.findIndex((e) => e.effectId === effect.effectId)
  if (i < 0) return [...effects, effect]
  const next = effects.slice()
  next[i] = effect
  return next
}

/**
 * One hook run's slot in the record: effects reported while it runs are
 * buffered (or, once {@link begin} recorded a detached run, written into its
 * entry); {@link complete} records how it ended.
 */
export interface InvocationHandle extends InvocationEffects {
  /**
   * Records a run that goes on detached from the request (`backgrounded`):
   * its entry exists from now on, and it may still announce effects until
   * it completes.
   */
  readonly begin: (invocation: Omit<HookInvocation, "effects">) => Effect.Effect<void>
  /** Records the run's end: appends it, or replaces the entry {@link begin} made. */
  readonly complete: (
    invocation: Omit<HookInvocation, "effects">,
    extra?: ReadonlyArray<HookEffect>
  ) => Effect.Effect<void>
  /**
   * {@link complete}, applied now (call it only from inside a running
   * effect); returns what is left to do — writing the snapshot once the
   * request has ended, else nothing. The hook runner's hot path: it takes
   * `invocation` over (it becomes the record's entry, given its `effects`),
   * so pass an object nobody else holds.
   */
  readonly completeNow: (
    invocation: { -readonly [K in keyof Omit<HookInvocation, "effects">]: HookInvocation[K] },
    extra?: ReadonlyArray<HookEffect>
  ) => Effect.Effect<void>
}

/** What a request's invocation slots write into. */
export interface InvocationLog {
  readonly invocations: Array<HookInvocation>
  /** A run id unique across the record's writers (for runs recorded before they end). */
  readonly nextRunId: () => string
  /**
   * Records a change (revision + 1); writes once the request ended: the
   * change of run `slot` alone when given (merged into the newest stored
   * record), else the snapshot.
   */
  readonly changed: (slot?: number) => Effect.Effect<void>
}

/**
 * One hook run's slot (one object per run: the methods live on the
 * prototype of this one class). Effects reported while it runs are buffered
 * until it is recorded; a detached run's entry accepts new effects until it
 * completes.
 */
export class Invocation implements InvocationHandle {
  private buffer: ReadonlyArray<HookEffect> = []
  private slot: number | undefined = undefined
  private open = false
  // Set when the run was recorded before it ended: its later entry replaces exactly that one.
  private runId: string | undefined = undefined

  constructor(private readonly log: InvocationLog) {}

  upsert(effect: HookEffect): Effect.Effect<void, HookEffectReportError> {
    return Effect.suspend(() => {
      const { invocations } = this.log
      const slot = this.slot
      if (slot === undefined) {
        this.buffer = upsertEffect(this.buffer, effect)
        return Effect.void
      }
      const invocation = invocations[slot]
      if (invocation === undefined || (!this.open && !invocation.effects.some((e) => e.effectId === effect.effectId))) {
        return Effect.fail(
          new HookEffectReportError({
            reason: "unannounced_after_return",
            effectId: effect.effectId,
            detail: "a new effect must be announced (pending) before the hook returns"
          })
        )
      }
      invocations[slot] = { ...invocation, effects: upsertEffect(invocation.effects, effect) }
      return this.log.changed(slot)
    })
  }

  begin(invocation: Omit<HookInvocation, "effects">): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.slot = this.log.invocations.length
      this.open = true
      this.runId = this.log.nextRunId()
      this.log.invocations.push({ ...invocation, runId: this.runId, effects: this.buffer })
      return this.log.changed()
    })
  }

  complete(invocation: Omit<HookInvocation, "effects">, extra?: ReadonlyArray<HookEffect>): Effect.Effect<void> {
    return Effect.suspend(() => this.completeNow({ ...invocation }, extra))
  }

  completeNow(
    invocation: { -readonly [K in keyof Omit<HookInvocation, "effects">]: HookInvocation[K] },
    extra?: ReadonlyArray<HookEffect>
  ): Effect.Effect<void> {
    const { invocations } = this.log
    const slot = this.slot
    let effects = slot === undefined ? this.buffer : invocations[slot]?.effects ?? this.buffer
    if (extra !== undefined) { for (const e of extra) effects = upsertEffect(effects, e) }
    this.open = false
    if (this.runId !== undefined) invocation.runId = this.runId
    // The caller's fresh object becomes the entry (no copy).
    const entry: HookInvocation = Object.assign(invocation, { effects })
    if (slot === undefined) {
      this.slot = invocations.length
      invocations.push(entry)
    } else {
      invocations[slot] = entry
    }
    return this.log.changed(this.slot)
  }
}

/** The slot of a run when recording is off: reports and records nothing. */
export const noopHandle: InvocationHandle = {
  upsert: () => Effect.void,
  begin: () => Effect.void,
  complete: () => Effect.void,
  completeNow: () => Effect.void
}
