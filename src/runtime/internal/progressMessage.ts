/**
 * The human-readable `message` of each progress event (seed 004: "a
 * human-readable status message"), e.g. `Running tool quote (step q1)` and
 * `Tool quote succeeded in 12 ms (step q1)`.
 *
 * @since 0.1.0
 */
import type { HookDecision } from "../../domain/ExecutionRecord.js"

const millis = (duration: number): string => `${Math.round(duration)} ms`

/** @internal */
export const phaseStarted = (phase: number): string => `Phase ${phase} started`

/** @internal */
export const toolStarted = (capability: string, stepId: string): string =>
  `Running tool ${capability || stepId} (step ${stepId})`

/** @internal */
export const toolEnded = (capability: string, stepId: string, status: string, duration: number): string => {
  const tool = capability || stepId
  switch (status) {
    case "succeeded":
      return `Tool ${tool} succeeded in ${millis(duration)} (step ${stepId})`
    case "failed":
      return `Tool ${tool} failed after ${millis(duration)} (step ${stepId})`
    default:
      return `Tool ${tool} ${status} (step ${stepId})`
  }
}

/** @internal */
export const hookStarted = (name: string, stage: string, status: "started" | "backgrounded"): string =>
  status === "backgrounded" ? `Hook ${name} running in the background (${stage})` : `Hook ${name} started (${stage})`

/** @internal */
export const hookEnded = (
  name: string,
  stage: string,
  status: string,
  duration: number,
  decision: HookDecision | undefined
): string => {
  const decided = decision === undefined || decision.action === "continue"
    ? ""
    : `: ${decision.action.replace(/_/g, " ")} (${decision.reason.replace(/_/g, " ")})`
  return `Hook ${name} ${status.replace(/_/g, " ")} in ${millis(duration)} (${stage})${decided}`
}
