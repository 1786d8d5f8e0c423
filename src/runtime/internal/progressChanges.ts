/**
 * The changes between two snapshots of a request's execution record, in
 * the order progress reports them (`progressDiff.ts` renders them): a phase
 * accepted, a tool call started or ended, a hook run recorded or changing
 * status.
 *
 * Order, for the same pair of snapshots always the same: the request's
 * own — hook runs before the first phase; then each phase's planning runs,
 * its start, and its tools; then the runs after the last phase. Within a
 * phase's tools, by when each thing happened as the record tells it — a
 * tool at its start and at its end, a hook run at its start — and a tool
 * the record has no time for yet (in flight) last. Times are whole
 * milliseconds, so most things share one on a fast machine: ties keep tool
 * starts (plan order), hook runs (invocation index), tool ends (the
 * record's step order), and a step's own hook runs always fall between its
 * start and its end. A step seen ended without having been seen running
 * (it started and ended between two snapshots) gets its start too, so every
 * tool end follows its start.
 */
import type { ExecutionRecord, HookInvocation, PhaseRecord, StepResult } from "../../domain/ExecutionRecord.js"

/** One change the two snapshots show, before it is rendered. */
export type Change =
  | { readonly _tag: "Phase"; readonly phase: PhaseRecord }
  | { readonly _tag: "ToolStarted"; readonly phase: PhaseRecord; readonly stepId: string }
  | { readonly _tag: "ToolEnded"; readonly phase: number; readonly step: StepResult }
  | {
    readonly _tag: "Hook"
    readonly index: number
    readonly run: HookInvocation
    readonly old: HookInvocation | undefined
  }

/** A change, where it belongs in the request, and when it happened (`Infinity`: not yet known — in flight). */
interface Placed {
  /** The request's part: 0 before the first phase, phase n at n, after the last phase `Infinity`. */
  readonly part: number
  /** Within a phase: 0 its planning runs, 1 its start, 2 its tools (starts, tool hook runs, ends by time). */
  readonly section: number
  readonly at: number
  /** Ties within a section: tool starts, then hook runs, then tool ends. */
  readonly rank: number
  readonly change: Change
}

/** The newest entry of each phase number (a phase's entry may be replaced). */
const phasesByNumber = (record: ExecutionRecord | undefined): Map<number, PhaseRecord> => {
  const out = new Map<number, PhaseRecord>()
  if (record !== undefined) { for (const phase of record.phases) out.set(phase.phase, phase) }
  return out
}

/** A run's status, or its outcome for runs recorded without one. */
export const runStatus = (run: HookInvocation): string => run.status ?? run.outcome

/**
 * Where each hook run belongs: its phase's planning (a run with a phase and
 * no step: planning, its model calls, AfterPlanning), its phase's tools (a
 * run with a step), before the first phase (BeforePlanning) or after the
 * last (AfterExecution, AfterSynthesis). A run the record places nowhere
 * (an operation outside the phases: synthesis' model calls, memory) comes
 * after the phases once a run before it in the record was in or after one,
 * or once it started after the first tool did; before them otherwise.
 */
const hookParts = (record: ExecutionRecord, phases: ReadonlyMap<number, PhaseRecord>): Array<{
  readonly part: number
  readonly section: number
}> => {
  const phaseOfStep = new Map<string, number>()
  let firstStart = Infinity
  for (const phase of phases.values()) {
    for (const s of phase.steps) {
      phaseOfStep.set(s.step_id, phase.phase)
      firstStart = Math.min(firstStart, s.startedAt)
    }
    for (const id of phase.running ?? []) phaseOfStep.set(id, phase.phase)
  }
  let pastPhases = false
  return record.hookInvocations.map((run) => {
    const stepPhase = run.stepId === undefined ? undefined : run.phase ?? phaseOfStep.get(run.stepId)
    let placed: { part: number; section: number }
    if (stepPhase !== undefined) placed = { part: stepPhase, section: 2 }
    else if (run.phase !== undefined) placed = { part: run.phase, section: 0 }
    else if (run.stage === "before_planning") placed = { part: 0, section: 0 }
    else if (run.stage === "after_execution" || run.stage === "after_synthesis") placed = { part: Infinity, section: 0 }
    else placed = { part: pastPhases || run.startedAt > firstStart ? Infinity : 0, section: 0 }
    if (placed.part > 0) pastPhases = true
    return placed
  })
}

/** The changes from `previous` to `next`, in the order described above. */
export const changes = (previous: ExecutionRecord | undefined, next: ExecutionRecord): Array<Change> => {
  const before = phasesByNumber(previous)
  const current = phasesByNumber(next)
  const after = [...current.values()].sort((a, b) => a.phase - b.phase)
  const placed: Array<Placed> = []
  // Each step's hook runs' first and last start: start times are whole
  // milliseconds, so a step's start or computed end may read later or
  // earlier than its own hook runs, which ran within it.
  const stepRuns = new Map<string, { first: number; last: number }>()
  for (const run of next.hookInvocations) {
    if (run.stepId === undefined) continue
    const key = `${run.phase ?? ""}/${run.stepId}`
    const seen = stepRuns.get(key)
    stepRuns.set(
      key,
      seen === undefined
        ? { first: run.startedAt, last: run.startedAt }
        : { first: Math.min(seen.first, run.startedAt), last: Math.max(seen.last, run.startedAt) }
    )
  }
  for (const phase of after) {
    const part = phase.phase
    const old = before.get(phase.phase)
    const wasEnded = new Set(old?.steps.map((s) => s.step_id))
    const wasStarted = new Set([...wasEnded, ...(old?.running ?? [])])
    const planned = new Set(phase.plan.steps.map((s) => s.step_id))
    const endedAt = new Map(phase.steps.map((s) => [s.step_id, s.startedAt]))
    if (old === undefined) placed.push({ part, section: 1, at: 0, rank: 0, change: { _tag: "Phase", phase } })
    // Steps that ended are placed at their start and end times; steps in
    // flight have no time in the record yet, so they come last.
    const starting = [
      ...phase.plan.steps.map((s) => s.step_id),
      // Ids the plan does not name (a plan replaced mid-phase) still start and end.
      ...phase.steps.map((s) => s.step_id).filter((id) => !planned.has(id)),
      ...(phase.running ?? []).filter((id) => !planned.has(id))
    ]
    const running = new Set(phase.running ?? [])
    for (const stepId of new Set(starting)) {
      if (wasStarted.has(stepId) || !(running.has(stepId) || endedAt.has(stepId))) continue
      const runs = stepRuns.get(`${part}/${stepId}`)
      const at = Math.min(endedAt.get(stepId) ?? Infinity, runs?.first ?? Infinity)
      placed.push({ part, section: 2, at, rank: 0, change: { _tag: "ToolStarted", phase, stepId } })
    }
    for (const step of phase.steps) {
      if (wasEnded.has(step.step_id)) continue
      const at = Math.max(step.startedAt + step.duration, stepRuns.get(`${part}/${step.step_id}`)?.last ?? -Infinity)
      placed.push({ part, section: 2, at, rank: 2, change: { _tag: "ToolEnded", phase: part, step } })
    }
  }
  const oldRuns = previous?.hookInvocations ?? []
  const parts = hookParts(next, current)
  next.hookInvocations.forEach((run, index) => {
    const old = oldRuns[index]
    const changed = old === undefined || old.runId !== run.runId || old.name !== run.name ||
      runStatus(old) !== runStatus(run) || old.decision?.action !== run.decision?.action
    if (changed) {
      placed.push({ ...parts[index]!, at: run.startedAt, rank: 1, change: { _tag: "Hook", index, run, old } })
    }
  })
  // A stable sort: what stays equal keeps the order above (phases, starts
  // in plan order, ends in the record's order, then hook runs by index).
  return placed.sort((a, b) =>
    a.part !== b.part
      ? a.part - b.part
      : a.section !== b.section
      ? a.section - b.section
      : a.at !== b.at
      ? (a.at < b.at ? -1 : 1)
      : a.rank - b.rank
  ).map((p) => p.change)
}
