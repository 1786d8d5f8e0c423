/**
 * The parts a pipeline was built from, for the request paths that live
 * outside `pipeline/` — durable requests (`effect-agent-pipeline/durable`),
 * which run the same stages as workflow activities. Kept beside the service
 * rather than on it: the service's public shape stays what users program
 * against, and modules that do not need the parts never see them.
 */
import type { Inference } from "../../ai/Inference.js"
import type * as PipelineRequest from "../../domain/PipelineRequest.js"
import type { Operations } from "../../runtime/Operations.js"
import type { CheckpointKey } from "../../stores/CheckpointKey.js"
import type { CheckpointStore } from "../../stores/CheckpointStore.js"
import type { ExecutionStore } from "../../stores/ExecutionStore.js"
import type { AfterPlanning } from "../AfterPlanning.js"
import type { PhaseLoop } from "./phaseLoop.js"
import type { ActivePreparer } from "./promptValues.js"
import type { TextRedaction } from "./redactValues.js"
import type { Begin } from "./requestRecord.js"
import type { RequestStages } from "./requestStages.js"

/** What a pipeline's request paths are made of. */
export interface PipelineParts {
  readonly begin: Begin
  readonly recording: boolean
  readonly limits: PipelineRequest.Limits
  /** The store records are written to (the redacting one under the redaction guardrail). */
  readonly store: ExecutionStore.Service
  readonly inference: Inference.Service
  readonly checkpoints: CheckpointStore["Type"]
  /** Seals every checkpoint the pipeline saves. */
  readonly checkpointKey: CheckpointKey.Service
  readonly operations: Operations
  readonly stages: RequestStages
  readonly phases: Pick<PhaseLoop, "planPhase" | "executePhase" | "withPhaseRun" | "validationFor">
  readonly afterPlanning: AfterPlanning.Service
  readonly maxPhases: number
  /** The prompt-value preparer; `undefined` for the identity. */
  readonly promptValues: ActivePreparer
  /** The redaction guardrail's text redaction; `undefined`: none. */
  readonly redact: TextRedaction | undefined
}

const registered = new WeakMap<object, PipelineParts>()

/** Remembers the parts `service` was built from. */
export const register = <S extends object>(service: S, parts: PipelineParts): S => {
  registered.set(service, parts)
  return service
}

/** The parts of a pipeline service built by `Pipeline.make` (`undefined`: one built some other way). */
export const partsOf = (service: object): PipelineParts | undefined => registered.get(service)

/**
 * The id of the checkpoint that shows a durable request's phase plan to its
 * approver. Its decision goes to the request's workflow
 * (`DurablePipeline.approve`), never through `Pipeline.resume`, which would
 * run the plan outside the workflow.
 */
export const durableApprovalId = (requestId: string, phase: number): string => `${requestId}/approval/${phase}`

/** Whether a checkpoint id is a {@link durableApprovalId}. */
export const isDurableApproval = (checkpointId: string): boolean => /\/approval\/[0-9]+$/.test(checkpointId)
