/**
 * The `progress` events of `POST /v1/requests/stream` (issue 21): what
 * changed between two snapshots of a request's execution record — a phase
 * accepted, a tool call started or ended, a hook run recorded or changing
 * status. Pure: the stream decides when snapshots are taken (each store
 * poll, and the final record), this module only compares them.
 *
 * Order, for the same pair of snapshots always the same: by when each
 * thing happened as the record tells it — a hook run at its start, a tool
 * at its start and at its end, a phase at its first step's start — and
 * what the record has no time for yet (a phase whose steps are all in
 * flight, a tool in flight) after everything else. Ties keep the order
 * phase, tool starts (plan order), tool ends (the record's step order),
 * hook runs (invocation index). A step seen ended without having been seen
 * running (it started and ended between two polls) gets its
 * `tool_started` too, so every `tool_ended` follows its `tool_started`.
 *
 * @since 0.1.0
 */
import type { ExecutionRecord, HookDecision, PhaseRecord } from "../../domain/ExecutionRecord.js"

/**
 * A phase's plan passed AfterPlanning and the phase began.
 *
 * @since 0.1.0
 * @category models
 */
export interface PhaseStarted {
  readonly kind: "phase"
  readonly phase: number
}

/**
 * A plan step's tool call is in flight.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolStarted {
  readonly kind: "tool_started"
  readonly phase: number
  readonly stepId: string
  readonly namespace: string
  readonly agent: string
  readonly capability: string
}

/**
 * A plan step ended (`succeeded`, `failed`, `skipped` or `denied`), after
 * `duration` milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolEnded {
  readonly kind: "tool_ended"
  readonly phase: number
  readonly stepId: string
  readonly status: string
  readonly duration: number
}

/**
 * A hook run was recorded, or its status changed (a backgrounded run that
 * completed, a run that timed out). `invocation` is its index in the
 * record's `hookInvocations`; `status` is the run's status, or its outcome
 * for runs recorded without one.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookRun {
  readonly kind: "hook_run"
  readonly invocation: number
  readonly hookName: string
  readonly stage: string
  readonly status: string
  readonly decision?: HookDecision
}

/**
 * One `progress` event's data.
 *
 * @since 0.1.0
 * @category models
 */
export type Progress = PhaseStarted | ToolStarted | ToolEnded | HookRun

/** The newest entry of each phase number (a phase's entry may be replaced). */
const phasesByNumber = (record: ExecutionRecord | undefined): Map<number, PhaseRecord> => {
  const out = new Map<number, PhaseRecord>()
  if (record !== undefined) { for (const phase of record.phases) out.set(phase.phase, phase) }
  return out
}

const toolStarted = (phase: PhaseRecord, stepId: string): ToolStarted => {
  const step = phase.plan.steps.find((s) => s.step_id === stepId)
  return {
    kind: "tool_started",
    phase: phase.phase,
    stepId,
    namespace: step?.namespace ?? "",
    agent: step?.agent ?? "",
    capability: step?.capability ?? ""
  }
}

/** An event and when it happened, as far as the record says (`Infinity`: not yet known — in flight). */
interface Timed {
  readonly at: number
  readonly progress: Progress
}

/**
 * The progress from `previous` (the last snapshot the client was told
 * about; `undefined` before the first) to `next`.
 *
 * @example
 * ```ts
 * const events = diff(undefined, record) // everything the record shows so far
 * const more = diff(record, newer) // only what changed
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const diff = (previous: ExecutionRecord | undefined, next: ExecutionRecord): Array<Progress> => {
  const before = phasesByNumber(previous)
  const after = [...phasesByNumber(next).values()].sort((a, b) => a.phase - b.phase)
  const timed: Array<Timed> = []
  for (const phase of after) {
    const old = before.get(phase.phase)
    const wasEnded = new Set(old?.steps.map((s) => s.step_id))
    const wasStarted = new Set([...wasEnded, ...(old?.running ?? [])])
    const planned = new Set(phase.plan.steps.map((s) => s.step_id))
    const endedAt = new Map(phase.steps.map((s) => [s.step_id, s.startedAt]))
    if (old === undefined) {
      const starts = phase.steps.map((s) => s.startedAt)
      timed.push({ at: starts.length === 0 ? Infinity : Math.min(...starts), progress: phaseStarted(phase) })
    }
    // Steps that ended are placed at their start and end times; steps in
    // flight have no time in the record yet, so they come last.
    const starting = [
      ...phase.plan.steps.map((s) => s.step_id),
      // Ids the plan does not name (a plan replaced mid-phase) still start and end.
      ...phase.steps.map((s) => s.step_id).filter((id) => !planned.has(id)),
      ...(phase.running ?? []).filter((id) => !planned.has(id))
    ]
    const running = new Set(phase.running ?? [])
    for (const id of new Set(starting)) {
      if (wasStarted.has(id) || !(running.has(id) || endedAt.has(id))) continue
      timed.push({ at: endedAt.get(id) ?? Infinity, progress: toolStarted(phase, id) })
    }
    for (const step of phase.steps) {
      if (wasEnded.has(step.step_id)) continue
      timed.push({
        at: step.startedAt + step.duration,
        progress: {
          kind: "tool_ended",
          phase: phase.phase,
          stepId: step.step_id,
          status: step.status,
          duration: step.duration
        }
      })
    }
  }
  const oldRuns = previous?.hookInvocations ?? []
  next.hookInvocations.forEach((run, index) => {
    const old = oldRuns[index]
    const status = run.status ?? run.outcome
    const changed = old === undefined || old.runId !== run.runId || old.name !== run.name ||
      (old.status ?? old.outcome) !== status || old.decision?.action !== run.decision?.action
    if (!changed) return
    const progress: HookRun = run.decision === undefined
      ? { kind: "hook_run", invocation: index, hookName: run.name, stage: run.stage, status }
      : { kind: "hook_run", invocation: index, hookName: run.name, stage: run.stage, status, decision: run.decision }
    timed.push({ at: run.startedAt, progress })
  })
  // A stable sort: equal times keep the order above (phase, starts, ends, then hook runs by index).
  return timed.sort((a, b) => (a.at === b.at ? 0 : a.at < b.at ? -1 : 1)).map((t) => t.progress)
}

const phaseStarted = (phase: PhaseRecord): PhaseStarted => ({ kind: "phase", phase: phase.phase })
