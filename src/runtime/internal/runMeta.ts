/**
 * The `RunMeta` every operation hook run gets (seed 002): the request's id,
 * the round of the model loop and the hook's group. A run inside planning
 * phase `n` is round `n - 1` (read from its coordinates); a run outside any
 * phase is the round after the phases its request had begun when the run
 * started — noted when its call is made, so every hook of one run sees the
 * same round.
 *
 * A participant keeps the meta its last run got and hands it on while the
 * request and round stay the same; a meta made for another hook of the same
 * group (or of no group) in the same request and round is shared too — so
 * a request's hooks allocate one meta per group and round, not one per
 * call. Metas are frozen, so sharing one is safe.
 */
import type { Call, RunMeta } from "../../domain/Operation.js"

/** The round of a run outside any phase, when it is not 0. */
const rounds = new WeakMap<Call, number>()
/**
 * The highest phase each request has begun, by the request's scope (its
 * handle is made anew for each stage region; its scope is the request's).
 */
const phases = new WeakMap<object, number>()

/** A phase run of `request` began. */
export const notePhase = (request: object | undefined, phase: number): void => {
  if (request === undefined) return
  const begun = phases.get(request)
  if (begun === undefined || phase > begun) phases.set(request, phase)
}

/** A run's call was made on `request`: a run outside any phase takes the round after the phases begun. */
export const noteRound = (call: Call, request: object | undefined): void => {
  if (request === undefined || call.coordinates.phase !== undefined) return
  const begun = phases.get(request)
  if (begun !== undefined && begun > 0) rounds.set(call, begun)
}

// The last call outside any phase asked about, and its round: its hooks ask in a row.
let lastCall: Call | undefined
let lastRound = 0

/** The zero-based round of the model loop `call` belongs to. */
export const iterationOf = (call: Call): number => {
  const phase = call.coordinates.phase
  if (phase !== undefined) return phase - 1
  if (call !== lastCall) {
    lastCall = call
    lastRound = rounds.get(call) ?? 0
  }
  return lastRound
}

/** The newest meta of each group (`undefined`: no group), for the next hook of that group to share. */
const latest = new Map<string | undefined, RunMeta>()

/** What the runtime reads from a participant (a `Subscription.Participant`). */
export interface MetaHolder {
  readonly group?: string | undefined
  meta?: RunMeta | undefined
}

/** The meta of `holder`'s run on `call`: its last one when request and round are the same. */
export const metaOf = (holder: MetaHolder, call: Call): RunMeta => {
  const runId = call.coordinates.requestId
  const iteration = iterationOf(call)
  const last = holder.meta
  if (last !== undefined && last.runId === runId && last.iteration === iteration) return last
  const group = holder.group
  const shared = latest.get(group)
  if (shared !== undefined && shared.runId === runId && shared.iteration === iteration) {
    holder.meta = shared
    return shared
  }
  const meta: RunMeta = Object.freeze({ runId, iteration, group })
  latest.set(group, meta)
  holder.meta = meta
  return meta
}

/** The meta of an `after_inference` run on a response `servedBy` served (never cached: it is rare). */
export const servedMetaOf = (holder: MetaHolder, call: Call, servedBy: string): RunMeta =>
  Object.freeze({
    runId: call.coordinates.requestId,
    iteration: iterationOf(call),
    group: holder.group,
    servedBy
  })
