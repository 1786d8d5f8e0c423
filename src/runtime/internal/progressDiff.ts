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
 * Order: the request's own (see `progressChanges.ts`).
 *
 * @since 0.1.0
 */
import type { ExecutionRecord, HookDecision, HookInvocation, PhaseRecord } from "../../domain/ExecutionRecord.js"
import type { HookPoint } from "../../domain/HookPoint.js"
import { changes, runStatus } from "./progressChanges.js"
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

/** An ended run's status: its own, or its outcome for runs recorded without one. */
const endStatus = (run: HookInvocation): ProgressEventOf<"HookEnded">["status"] =>
  run.status ?? (run.outcome === "pending" ? "started" : run.outcome)

type ProgressEventOf<Tag extends ProgressEvent["_tag"]> = Extract<ProgressEvent, { readonly _tag: Tag }>

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
