/**
 * The stage fold (DESIGN §2, seed 000 §4, seed 001): the one loop over a
 * stage's participants. For each, in order: skip it if it is disabled or a
 * dependency did not complete (a fail-closed one whose dependency failed
 * stops the stage), invoke it (span, deadline, record — `invoke.ts`), mark
 * whether it completed, then apply its failure policy — a fail-closed
 * participant's rejected run stops the stage with `HookFailed`.
 *
 * The runs are recorded on the request the fiber works for (its
 * `currentRequest`, read once per pass), not on an argument: outside any
 * request, or with recording off, nothing is recorded.
 *
 * A stage is its {@link Rule}: the arguments a run gets, how its returned
 * value is judged, and how an accepted value folds into the stage's state.
 * `BeforePlanning`, `AfterPlanning`, `AfterExecution` and `AfterSynthesis`
 * hold nothing else.
 */
import { Effect } from "effect"
import type { HookFailed } from "../../domain/PipelineError.js"
import type { Participant } from "../Subscription.js"
import { currentRecorder } from "./currentRecorder.js"
import {
  dependencyFailed,
  type Detach,
  failedClosed,
  guarded,
  type Inflight,
  type InvocationSpec,
  invoke,
  type Rejected,
  syncOnly,
  type Verdict
} from "./invoke.js"
import { skipped } from "./skip.js"

/** The points whose participants run as a stage (one after another, on the request). */
export type StagePoint = "before_planning" | "after_planning" | "after_execution" | "after_synthesis"

/**
 * What makes one stage different from another. `Args` are a handler's
 * arguments, `S` the stage's state for one request (what the runs see and
 * what accepted values fold into), `A` what an accepted value becomes, `E`
 * the errors the rule adds to the fold's `HookFailed`.
 */
export interface Rule<Args extends ReadonlyArray<unknown>, S, A, E> {
  readonly point: StagePoint
  /** The arguments of the next run: the handler (or a `Hook.sync` one's plain function) is called with them. */
  readonly args: (state: S) => Args
  /** Judges a run's returned value, inside its span: the value is read here once and never again. */
  readonly accept: (value: unknown, state: S, participant: Participant<Handler<Args>>) => Verdict<A>
  /**
   * Folds an accepted value into the state; `true` ends the stage (the
   * later participants are not called). Omitted: accepted values change
   * nothing (observe-only).
   */
  readonly accepted?:
    | ((value: A, state: S, participant: Participant<Handler<Args>>) => boolean | Effect.Effect<boolean, E>)
    | undefined
  /**
   * What a rejected run means besides its failure policy, applied first: it
   * may fail the stage with the rule's own error (a contract violation, the
   * required boundary) or log; `undefined` leaves it to the policy alone.
   */
  readonly rejected?:
    | ((result: Rejected<A>, state: S, participant: Participant<Handler<Args>>) => Effect.Effect<void, E> | undefined)
    | undefined
  /**
   * The error a fail-closed participant whose dependency did not complete
   * stops the stage with; `undefined` (or omitted): `HookFailed` with reason
   * `dependency_failed`.
   */
  readonly unmet?: ((participant: Participant<Handler<Args>>, detail: string, state: S) => E | undefined) | undefined
}

/** A handler of a stage whose runs get `Args`. */
export type Handler<Args extends ReadonlyArray<unknown>> = (...args: Args) => unknown

/** One request's pass through a stage. */
export interface Pass {
  /** The phase the runs belong to (after-planning runs are per phase). */
  readonly phase?: number | undefined
  /**
   * Runs only the participant at this position, the others counting as
   * completed (a HITL resume re-checks the required hook alone).
   */
  readonly only?: number | undefined
}

/** A pass over every participant, in no phase (every stage but AfterPlanning). */
export const whole: Pass = {}

/**
 * A stage over its ordered participants: `run(pass, state)` folds every
 * participant's run into `state` and returns it. `detach` starts the runs
 * of `fireAndRecord` / `background` participants (stages whose hooks may
 * not detach omit it).
 */
export const make = <Args extends ReadonlyArray<unknown>, S, A, E>(
  rule: Rule<Args, S, A, E>,
  participants: ReadonlyArray<Participant<Handler<Args>>>,
  detach?: Detach | undefined
): (pass: Pass, state: S) => Effect.Effect<S, E | HookFailed> => {
  const stop = (participant: Participant<Handler<Args>>, state: S) => (spec: InvocationSpec<A>, detail: string) =>
    rule.unmet?.(participant, detail, state) ?? dependencyFailed(spec, detail)

  const fold = Effect.fnUntraced(function*(pass: Pass, state: S, inflight: Inflight) {
    // The request's recorder, once per pass.
    const recorder = yield* currentRecorder
    // The runs a pass skips (a resume's) completed when the plan was made.
    const completed: Array<boolean> = pass.only === undefined ? [] : participants.map(() => true)
    const end = pass.only === undefined ? participants.length : pass.only + 1
    for (let sequence = pass.only ?? 0; sequence < end; sequence++) {
      const participant = participants[sequence]!
      const { handler, plain } = participant
      const spec: InvocationSpec<A> = {
        point: rule.point,
        hookName: participant.id,
        spanName: participant.spanName,
        metricLabels: participant.metricLabels,
        sequence,
        phase: pass.phase,
        recorder,
        inflight,
        failure: participant.failure,
        execution: participant.execution,
        limit: participant.limit,
        detach,
        call: () => handler(...rule.args(state)),
        plain: plain === undefined ? undefined : () => plain(...rule.args(state)),
        accept: (value) => rule.accept(value, state, participant)
      }
      const skip = skipped<InvocationSpec<A>, E | HookFailed>(
        participant,
        participants,
        completed,
        spec,
        stop(participant, state)
      )
      if (skip !== undefined) {
        yield* skip
        continue
      }
      const result = yield* invoke(spec)
      completed[sequence] = result._tag !== "Rejected"
      if (result._tag === "Accepted") {
        if (rule.accepted === undefined) continue
        const done = rule.accepted(result.value, state, participant)
        if (done === true || (done !== false && (yield* done))) return state
      } else if (result._tag === "Rejected") {
        const own = rule.rejected?.(result, state, participant)
        if (own !== undefined) yield* own
        if (participant.failure === "fail_closed") return yield* Effect.fail(failedClosed(spec, result))
      }
    }
    return state
  })

  if (participants.length === 0) return (_pass, state) => Effect.succeed(state)
  // Sync-only stages run without an exit hook while spans are not collected.
  const sync = syncOnly(participants)
  return (pass, state) => guarded((inflight) => fold(pass, state, inflight), sync)
}
