/**
 * What changed between two snapshots of a request's execution record
 * (issue 21, issue 23 seed 004 "Progress Tracking"): a phase accepted, a
 * tool call started or ended, a hook run recorded or changing status. Pure:
 * the caller decides when snapshots are taken (each change of a live
 * recorder, each store poll, the final record); this module only compares
 * them. Two renderings of the same comparison: {@link diff}, the `progress`
 * events of `POST /v1/requests/stream` (their wire shape), and
 * {@link events}, the typed events of `Progress`.
 *
 * Order, for the same pair of snapshots always the same: by when each
 * thing happened as the record tells it — a hook run at its start, a tool
 * at its start and at its end, a phase at its first step's start — and
 * what the record has no time for yet (a phase whose steps are all in
 * flight, a tool in flight) after everything else. Ties keep the order
 * phase, tool starts (plan order), tool ends (the record's step order),
 * hook runs (invocation index). A step seen ended without having been seen
 * running (it started and ended between two snapshots) gets its start too,
 * so every tool end follows its start.
 *
 * @since 0.1.0
 */
import type {
  ExecutionRecord,
  HookDecision,
  HookInvocation,
  PhaseRecord,
  StepResult
} from "../../domain/ExecutionRecord.js"
import type { HookPoint } from "../../domain/HookPoint.js"
import * as Message from "./progressMessage.js"
import type { ProgressEvent } from "./progressModel.js"

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
 * One `progress` event's data on `POST /v1/requests/stream`.
 *
 * @since 0.1.0
 * @category models
 */
export type Progress = PhaseStarted | ToolStarted | ToolEnded | HookRun

/** One change the two snapshots show, before it is rendered. */
type Change =
  | { readonly _tag: "Phase"; readonly phase: PhaseRecord }
  | { readonly _tag: "ToolStarted"; readonly phase: PhaseRecord; readonly stepId: string }
  | { readonly _tag: "ToolEnded"; readonly phase: number; readonly step: StepResult }
  | {
    readonly _tag: "Hook"
    readonly index: number
    readonly run: HookInvocation
    readonly old: HookInvocation | undefined
  }

/** A change and when it happened, as far as the record says (`Infinity`: not yet known — in flight). */
interface Timed {
  readonly at: number
  readonly change: Change
}

/** The newest entry of each phase number (a phase's entry may be replaced). */
const phasesByNumber = (record: ExecutionRecord | undefined): Map<number, PhaseRecord> => {
  const out = new Map<number, PhaseRecord>()
  if (record !== undefined) { for (const phase of record.phases) out.set(phase.phase, phase) }
  return out
}

const runStatus = (run: HookInvocation): string => run.status ?? run.outcome

/** An ended run's status: its own, or its outcome for runs recorded without one. */
const endStatus = (run: HookInvocation): ProgressEventOf<"HookEnded">["status"] =>
  run.status ?? (run.outcome === "pending" ? "started" : run.outcome)

type ProgressEventOf<Tag extends ProgressEvent["_tag"]> = Extract<ProgressEvent, { readonly _tag: Tag }>

/** The changes from `previous` to `next`, in the order described above. */
const changes = (previous: ExecutionRecord | undefined, next: ExecutionRecord): Array<Change> => {
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
      timed.push({ at: starts.length === 0 ? Infinity : Math.min(...starts), change: { _tag: "Phase", phase } })
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
    for (const stepId of new Set(starting)) {
      if (wasStarted.has(stepId) || !(running.has(stepId) || endedAt.has(stepId))) continue
      timed.push({ at: endedAt.get(stepId) ?? Infinity, change: { _tag: "ToolStarted", phase, stepId } })
    }
    for (const step of phase.steps) {
      if (wasEnded.has(step.step_id)) continue
      timed.push({ at: step.startedAt + step.duration, change: { _tag: "ToolEnded", phase: phase.phase, step } })
    }
  }
  const oldRuns = previous?.hookInvocations ?? []
  next.hookInvocations.forEach((run, index) => {
    const old = oldRuns[index]
    const changed = old === undefined || old.runId !== run.runId || old.name !== run.name ||
      runStatus(old) !== runStatus(run) || old.decision?.action !== run.decision?.action
    if (changed) timed.push({ at: run.startedAt, change: { _tag: "Hook", index, run, old } })
  })
  // A stable sort: equal times keep the order above (phase, starts, ends, then hook runs by index).
  return timed.sort((a, b) => (a.at === b.at ? 0 : a.at < b.at ? -1 : 1)).map((t) => t.change)
}

const stepOf = (phase: PhaseRecord, stepId: string) => {
  const step = phase.plan.steps.find((s) => s.step_id === stepId)
  return { namespace: step?.namespace ?? "", agent: step?.agent ?? "", capability: step?.capability ?? "" }
}

/**
 * The `progress` events of `POST /v1/requests/stream` from `previous` (the
 * last snapshot the client was told about; `undefined` before the first)
 * to `next`.
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
export const diff = (previous: ExecutionRecord | undefined, next: ExecutionRecord): Array<Progress> =>
  changes(previous, next).map((change): Progress => {
    switch (change._tag) {
      case "Phase":
        return { kind: "phase", phase: change.phase.phase }
      case "ToolStarted":
        return {
          kind: "tool_started",
          phase: change.phase.phase,
          stepId: change.stepId,
          ...stepOf(change.phase, change.stepId)
        }
      case "ToolEnded": {
        const { duration, status, step_id } = change.step
        return { kind: "tool_ended", phase: change.phase, stepId: step_id, status, duration }
      }
      case "Hook": {
        const { decision, name, stage } = change.run
        const status = runStatus(change.run)
        return decision === undefined
          ? { kind: "hook_run", invocation: change.index, hookName: name, stage, status }
          : { kind: "hook_run", invocation: change.index, hookName: name, stage, status, decision }
      }
    }
  })

/** Whether a run has ended (its status, or its outcome for runs recorded without one). */
export const hasEnded = (run: HookInvocation): boolean =>
  run.status === undefined ? run.outcome !== "pending" : run.status !== "started" && run.status !== "backgrounded"

const hookFields = (index: number, run: HookInvocation) => {
  const fields: {
    invocation: number
    hookName: string
    stage: HookPoint
    phase?: number
    stepId?: string
  } = { invocation: index, hookName: run.name, stage: run.stage }
  if (run.phase !== undefined) fields.phase = run.phase
  if (run.stepId !== undefined) fields.stepId = run.stepId
  return fields
}

/**
 * The typed progress events from `previous` to `next`. A hook run starts
 * when it first appears in the record and ends when it is first seen
 * ended; a run recorded only once it ended (most are) starts and ends
 * together, at its start. A later change of an ended run (a decision
 * revised) is no new event.
 *
 * @since 0.1.0
 * @category utils
 */
export const events = (previous: ExecutionRecord | undefined, next: ExecutionRecord): Array<ProgressEvent> => {
  const out: Array<ProgressEvent> = []
  for (const change of changes(previous, next)) {
    switch (change._tag) {
      case "Phase":
        out.push({ _tag: "PhaseStarted", phase: change.phase.phase, message: Message.phaseStarted(change.phase.phase) })
        break
      case "ToolStarted": {
        const step = stepOf(change.phase, change.stepId)
        out.push({
          _tag: "ToolStarted",
          phase: change.phase.phase,
          stepId: change.stepId,
          ...step,
          message: Message.toolStarted(step.capability, change.stepId)
        })
        break
      }
      case "ToolEnded": {
        const { agent, capability, duration, namespace, status, step_id } = change.step
        out.push({
          _tag: "ToolEnded",
          phase: change.phase,
          stepId: step_id,
          namespace,
          agent,
          capability,
          status,
          duration,
          message: Message.toolEnded(capability, step_id, status, duration)
        })
        break
      }
      case "Hook": {
        const { index, old, run } = change
        const fresh = old === undefined || old.runId !== run.runId || old.name !== run.name
        const fields = hookFields(index, run)
        if (fresh) {
          const status = run.status === "backgrounded" ? "backgrounded" : "started"
          out.push({
            _tag: "HookStarted",
            ...fields,
            status,
            message: Message.hookStarted(run.name, run.stage, status)
          })
        }
        if (hasEnded(run) && (fresh || !hasEnded(old))) {
          const status = endStatus(run)
          const message = Message.hookEnded(run.name, run.stage, status, run.duration, run.decision)
          out.push(
            run.decision === undefined
              ? { _tag: "HookEnded", ...fields, status, duration: run.duration, message }
              : { _tag: "HookEnded", ...fields, status, duration: run.duration, decision: run.decision, message }
          )
        }
        break
      }
    }
  }
  return out
}
