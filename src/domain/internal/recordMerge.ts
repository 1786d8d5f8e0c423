/**
 * Late evidence is never lost (C15, seed 000 "late effect updates merge
 * into the newest full snapshot"): when a snapshot replaces the stored
 * record, each hook run it shares with the stored one keeps whatever the
 * stored one has that is further along — an effect the snapshot lacks, an
 * effect that is terminal (`succeeded` / `failed`) where the snapshot still
 * says `pending`, a run that has ended where the snapshot still says it runs.
 *
 * This matters when two writers hold the same record: a request resumed in
 * another process writes full snapshots while a detached hook of the
 * suspended part still reports effects into the stored record. Effects and
 * runs only move forward, so "further along" is well defined.
 */
import type { ExecutionRecord, HookEffect, HookInvocation } from "../ExecutionRecord.js"

/**
 * The identity of a hook run across snapshots and processes: its `runId`
 * when it has one (a run recorded before it ended — a detached run starts
 * later than it was queued, so its start time changes between its two
 * entries), else where and when it ran.
 */
export const sameRun = (a: HookInvocation, b: HookInvocation): boolean =>
  a.runId !== undefined || b.runId !== undefined
    ? a.runId === b.runId
    : a.name === b.name && a.stage === b.stage && a.sequence === b.sequence && a.startedAt === b.startedAt &&
      a.phase === b.phase && a.callId === b.callId

const terminal = (effect: HookEffect): boolean => effect.status !== "pending"

const running = (run: HookInvocation): boolean => run.status === "started" || run.status === "backgrounded"

/** `incoming`'s effects, with the ones `stored` has further along. */
const mergeEffectLists = (
  stored: ReadonlyArray<HookEffect>,
  incoming: ReadonlyArray<HookEffect>
): ReadonlyArray<HookEffect> => {
  let merged: Array<HookEffect> | undefined
  for (const effect of stored) {
    const i = incoming.findIndex((e) => e.effectId === effect.effectId)
    if (i < 0) {
      merged ??= incoming.slice()
      merged.push(effect)
    } else if (terminal(effect) && !terminal(incoming[i]!)) {
      merged ??= incoming.slice()
      merged[i] = effect
    }
  }
  return merged ?? incoming
}

/** One run: `incoming`, or the two merged when `stored` is further along. */
export const mergeRun = (stored: HookInvocation, incoming: HookInvocation): HookInvocation => {
  if (stored === incoming) return incoming
  const base = running(incoming) && !running(stored) ? stored : incoming
  const effects = mergeEffectLists(stored.effects, incoming.effects)
  return base === incoming && effects === incoming.effects ? incoming : { ...base, effects }
}

/**
 * `incoming` with the evidence `stored` has further along (the same object
 * when there is none: the usual case of one writer).
 */
export const mergeStoredEvidence = (stored: ExecutionRecord, incoming: ExecutionRecord): ExecutionRecord => {
  const before = stored.hookInvocations
  if (before.length === 0) return incoming
  const runs = incoming.hookInvocations
  let merged: Array<HookInvocation> | undefined
  // Runs usually keep their place: look there first.
  for (let i = 0; i < before.length; i++) {
    const old = before[i]!
    const at = runs[i] !== undefined && (runs[i] === old || sameRun(runs[i]!, old))
      ? i
      : runs.findIndex((r) => sameRun(r, old))
    if (at < 0) continue
    const next = mergeRun(old, runs[at]!)
    if (next !== runs[at]) {
      merged ??= runs.slice()
      merged[at] = next
    }
  }
  return merged === undefined ? incoming : { ...incoming, hookInvocations: merged }
}

/** `record` with `run` in place of the run it matches (appended when none does). */
export const withRun = (record: ExecutionRecord, run: HookInvocation): ExecutionRecord => {
  const runs = record.hookInvocations
  const i = runs.findIndex((r) => sameRun(r, run))
  const next = runs.slice()
  if (i < 0) next.push(run)
  else next[i] = mergeRun(runs[i]!, run)
  return { ...record, hookInvocations: next }
}

/**
 * `merged` — a snapshot already merged into the stored record — keeping
 * what only the stored record has. For a durable request, whose record two
 * executions may write at once (a runner handing its shards over finishes
 * what it runs while another takes the request over): the other
 * execution's hook runs, diagnostics, phases and response are evidence
 * too, never overwritten by a snapshot that predates them, and a settled
 * lifecycle stays settled.
 */
export const keepConcurrentEvidence = (stored: ExecutionRecord, merged: ExecutionRecord): ExecutionRecord => {
  // A request settles once: a later write of the execution it replaced (a
  // lease renewal, its interruption) does not unsettle it.
  const settled = (record: ExecutionRecord) =>
    record.lifecycle?.status === "succeeded" || record.lifecycle?.status === "failed"
  const lifecycle = settled(stored) && !settled(merged) ? stored.lifecycle : merged.lifecycle
  const runs = stored.hookInvocations.filter((old) => !merged.hookInvocations.some((run) => sameRun(run, old)))
  const lines = stored.diagnostics.filter((line) => !merged.diagnostics.includes(line))
  const phases = stored.phases.filter((old) => !merged.phases.some((p) => p.phase === old.phase))
  return {
    ...merged,
    ...(lifecycle === undefined ? {} : { lifecycle }),
    hookInvocations: runs.length === 0 ? merged.hookInvocations : [...merged.hookInvocations, ...runs],
    diagnostics: lines.length === 0 ? merged.diagnostics : [...merged.diagnostics, ...lines],
    phases: phases.length === 0 ? merged.phases : [...merged.phases, ...phases].sort((a, b) => a.phase - b.phase),
    ...(merged.finalResponse === undefined && stored.finalResponse !== undefined
      ? { finalResponse: stored.finalResponse }
      : {}),
    ...(merged.rawDraft === undefined && stored.rawDraft !== undefined ? { rawDraft: stored.rawDraft } : {}),
    ...(merged.shortCircuit === undefined && stored.shortCircuit !== undefined
      ? { shortCircuit: stored.shortCircuit }
      : {}),
    ...(merged.checkpointId === undefined && stored.checkpointId !== undefined
      ? { checkpointId: stored.checkpointId }
      : {})
  }
}
