/**
 * Before and after transforms of an operation (seed 002): a point's
 * transforms chain its value in order, each getting the previous one's
 * result. A value of the wrong shape, or a rewrite the hook did not declare
 * the capability for, is a failure; a failing transform fails closed by
 * default (the operation stops with `HookFailed`), or fails open and the
 * chain goes on with the value it was given.
 *
 * A `before_inference` transform may serve the model's response instead
 * (`Hook.respond`, with the `inference_cache` capability): its run is
 * recorded completed with decision `short_circuit` / `cache_match`, the
 * rest of the chain does not run, and the chain stops with `Served` for the
 * operation combinator. Every handler gets the run's `RunMeta` last.
 */
import { Cause, Effect, Exit, type Fiber } from "effect"
import type { HookDecision } from "../../domain/ExecutionRecord.js"
import type { TransformPoint } from "../../domain/HookPoint.js"
import { keepLatest } from "../../domain/internal/liveShapes.js"
import type { Call } from "../../domain/Operation.js"
import type { HookFailed } from "../../domain/PipelineError.js"
import { allows } from "../Capability.js"
import { type Participant, skipReason } from "../Subscription.js"
import { type Attempt, attempt, attemptLean, propagateInterruption, propagatePanic } from "./attempt.js"
import { failureText } from "./failures.js"
import { completedOperationEntry, succeeded } from "./fastPath.js"
import { dependencyFailed, failedClosed } from "./invoke.js"
import { OnFiber } from "./onFiber.js"
import { CachedResponse, type TransformValues } from "./operationHooks.js"
import type { AnyTransform, OperationRunSpec, SpecOf } from "./participants.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { openRun, openRunNow, type Run } from "./run.js"
import { metaOf, servedMetaOf } from "./runMeta.js"
import { Served } from "./served.js"
import { skipped } from "./skip.js"
import { RunTimer } from "./timing.js"
import { judge, validValue } from "./transformValues.js"

/** How a chain stops early: a fail-closed failure, or a served response. */
type Stop = HookFailed | Served

/**
 * Builds, once, the function that chains a point's transforms over a value
 * (`call` is a run of the operation the point rewrites for; `servedBy`,
 * the hook that served the value, for `after_inference` on a served
 * response).
 *
 * Handlers marked `Hook.sync` run back to back in one synchronous loop (no
 * interpreter steps between them) while spans are not collected; any other
 * handler, or a collecting tracer, takes the Effect path. Both record the
 * same entries and apply the same policies.
 */
export const makeTransform = (
  participants: { readonly transform: (point: TransformPoint) => ReadonlyArray<Participant<AnyTransform>> },
  specOf: SpecOf
) =>
<P extends TransformPoint>(
  point: P,
  call: Call,
  value: TransformValues[P],
  recorder: RequestRecorder,
  servedBy?: string
): Effect.Effect<TransformValues[P], Stop> => {
  const chain = participants.transform(point)
  if (chain.length === 0) return Effect.succeed(value)
  return Effect.withFiberRuntime((fiber) =>
    keepLatest("transformChain", new TransformChain(point, chain, specOf, call, value, recorder, fiber, servedBy))
      .loop(0)
  )
}

/** One chaining of a point's transforms over a value, on the fiber that runs it. */
class TransformChain<P extends TransformPoint> extends OnFiber {
  current: TransformValues[P]
  // Whether the chain's first value has the point's shape (values a hook
  // returned were checked as they came); checked once, when first needed.
  firstValid: boolean | undefined = undefined

  constructor(
    readonly point: P,
    readonly chain: ReadonlyArray<Participant<AnyTransform>>,
    readonly specOf: SpecOf,
    readonly call: Call,
    readonly value: TransformValues[P],
    readonly recorder: RequestRecorder,
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    readonly servedBy: string | undefined
  ) {
    super(recorder, fiber)
    this.current = value
  }

  /** The meta of participant `p`'s run. */
  meta(p: Participant<AnyTransform>) {
    return this.servedBy === undefined ? metaOf(p, this.call) : servedMetaOf(p, this.call, this.servedBy)
  }

  /**
   * Run `i` served the model's response: recorded as such, and the chain
   * stops — unless the point or the hook's capabilities do not allow it.
   */
  served(i: number, spec: OperationRunSpec, run: Run, signal: CachedResponse): Effect.Effect<TransformValues[P], Stop> {
    const participant = this.chain[i]!
    if (this.point !== "before_inference") {
      const error = `Hook.respond serves a model response: only a before_inference transform can (not ${this.point})`
      return this.failed(i, spec, run, "failed", error, "hook_failed", "hook_error", signal)
    }
    if (!allows(participant.grant, "inference_cache")) {
      const error = "undeclared contribution: served a model response without the \"inference_cache\" capability"
      return this.failed(i, spec, run, "failed", error, "undeclared_contribution", "undeclared_contribution")
    }
    const text: unknown = signal.text
    if (typeof text !== "string") {
      return this.failed(i, spec, run, "failed", "Hook.respond must serve a string", "wrong_shape", "hook_error")
    }
    this.completed[i] = true
    return Effect.zipRight(
      run.finish({
        status: "completed",
        decision: { policy: participant.failure, action: "short_circuit", reason: "cache_match" },
        contribution: text
      }, Exit.void),
      Effect.fail(new Served(text, participant.id))
    )
  }

  inputValid(): boolean {
    return this.current !== this.value || (this.firstValid ??= validValue(this.point, this.value) === undefined)
  }

  /** A refused or failed run: recorded, then the chain goes on (fail open) or stops (fail closed). */
  failed(
    i: number,
    spec: OperationRunSpec,
    run: Run,
    status: "failed" | "timed_out",
    error: string,
    why: HookFailed["reason"],
    decisionReason: HookDecision["reason"],
    cause?: unknown,
    exit: Exit.Exit<unknown, unknown> = Exit.void
  ): Effect.Effect<TransformValues[P], Stop> {
    const participant = this.chain[i]!
    this.completed[i] = false
    const decision: HookDecision = participant.failure === "fail_open"
      ? { policy: "fail_open", action: "continue", reason: decisionReason }
      : { policy: "fail_closed", action: "terminate", reason: decisionReason }
    const recorded = run.finish({ status, error, decision }, exit)
    return participant.failure === "fail_open"
      ? Effect.zipRight(recorded, this.next(i + 1))
      : Effect.zipRight(recorded, Effect.fail(failedClosed(spec, { reason: why, error, cause })))
  }

  /** How run `i` ended; the chain's continuation. */
  settle(
    i: number,
    spec: OperationRunSpec,
    run: Run,
    input: TransformValues[P],
    ended: Attempt
  ): Effect.Effect<TransformValues[P], Stop> {
    switch (ended._tag) {
      case "Value": {
        const judged = judge(this.point, this.chain[i]!, input, ended.value)
        if (judged._tag === "Refused") {
          return this.failed(i, spec, run, "failed", judged.error, judged.why, judged.reason)
        }
        this.completed[i] = true
        this.current = judged.value
        // Recorded now; the chain goes on at once unless the write must wait.
        const rest = run.finishNow(
          judged.changed ? { status: "completed", contribution: judged.value } : { status: "completed" },
          Exit.void
        )
        return rest === Effect.void ? this.loop(i + 1) : Effect.zipRight(rest, this.next(i + 1))
      }
      case "WrongShape":
        return this.failed(i, spec, run, "failed", "hook handler did not return an Effect", "wrong_shape", "hook_error")
      case "TimedOut":
        return this.failed(i, spec, run, "timed_out", ended.error, "timed_out", "timed_out")
      case "Failed":
        if (ended.error instanceof CachedResponse) return this.served(i, spec, run, ended.error)
        return this.failed(
          i,
          spec,
          run,
          "failed",
          failureText(ended.error),
          "hook_failed",
          "hook_error",
          ended.error,
          Exit.failCause(ended.cause)
        )
      case "Panic":
        return propagatePanic(run, this.chain[i]!.failure, ended.cause)
      case "Interrupted":
        return propagateInterruption(run)
    }
  }

  /**
   * Run `i` on the Effect path (`handled`: its handler's call, when the
   * synchronous path already made it).
   */
  step(i: number, handled?: () => unknown): Effect.Effect<TransformValues[P], Stop> {
    const participant = this.chain[i]!
    const spec = this.specOf(participant, i, this.call, this.recorder)
    const skip = skipped(participant, this.chain, this.completed, spec, dependencyFailed)
    if (skip !== undefined) return Effect.zipRight(skip, this.next(i + 1))
    const input = this.current
    const call = this.call
    return Effect.flatMap(
      openRun(spec),
      (run) =>
        Effect.flatMap(
          attempt(spec, run, handled ?? (() => participant.handler(call, input, this.meta(participant)))),
          (ended) => this.settle(i, spec, run, input, ended)
        )
    )
  }

  /**
   * Run `i` on the lean Effect path: the handler's effect and one
   * continuation — no span, no run effect, no deadline (blocking only).
   */
  leanStep(
    i: number,
    participant: Participant<AnyTransform>,
    returned: unknown
  ): Effect.Effect<TransformValues[P], Stop> {
    const input = this.current
    const call = this.call
    const spec = this.specOf(participant, i, call, this.recorder)
    const run = openRunNow(spec, this.clock)
    return attemptLean(
      spec,
      run,
      this.slot,
      () => returned,
      (ended) => this.settle(i, spec, run, input, ended)
    )
  }

  /**
   * Runs from `start`: synchronous handlers in a loop — `Hook.sync`
   * functions, and Effect handlers whose effect is already a success
   * (`Effect.succeed`: nothing to run) — the rest on the Effect path.
   */
  loop(start: number): Effect.Effect<TransformValues[P], Stop> {
    const { call, chain, clock, completed, fast, lean, point, recorder } = this
    // Timings are for the record: none read with recording off.
    const recording = recorder.enabled
    let timer: RunTimer | undefined
    let i = start
    while (i < chain.length) {
      const participant = chain[i]!
      const plain = participant.plain
      if (!fast || participant.execution._tag !== "Blocking") return this.step(i)
      if (skipReason(participant, completed) !== undefined) return this.step(i)
      const input = this.current
      if (recording) timer ??= new RunTimer(clock)
      const startedAt = timer === undefined ? 0 : timer.startedAt()
      let value: unknown
      try {
        if (plain !== undefined) value = plain(call, input, this.meta(participant))
        else {
          const returned: unknown = participant.handler(call, input, this.meta(participant))
          if (!succeeded(returned)) return lean ? this.leanStep(i, participant, returned) : this.step(i, () => returned)
          value = returned.value
        }
      } catch (defect) {
        // Rare: a panic, recorded through a full run.
        const spec = this.specOf(participant, i, call, recorder)
        return this.settle(i, spec, openRunNow(spec, clock), input, { _tag: "Panic", cause: Cause.die(defect) })
      }
      const duration = timer === undefined ? 0 : timer.lap()
      // The value handed back as it was (the common pass-through): nothing
      // to judge, once the chain's first value passed the point's check.
      let contribution: TransformValues[P] | undefined
      if (value !== input || !this.inputValid()) {
        const judged = judge(point, participant, input, value)
        if (judged._tag === "Refused") {
          const spec = this.specOf(participant, i, call, recorder)
          return this.settle(i, spec, openRunNow(spec, clock), input, { _tag: "Value", value })
        }
        this.current = judged.value
        if (judged.changed) contribution = judged.value
      }
      completed[i] = true
      const rest = recording
        ? recorder.appendNow(completedOperationEntry(participant, i, call, startedAt, duration, contribution))
        : Effect.void
      i++
      if (rest !== Effect.void) return Effect.zipRight(rest, this.next(i))
    }
    return Effect.succeed(this.current)
  }

  next(i: number): Effect.Effect<TransformValues[P], Stop> {
    return i === this.chain.length ? Effect.sync(() => this.current) : Effect.suspend(() => this.loop(i))
  }
}
