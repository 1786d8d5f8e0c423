/**
 * What the operation combinator reads about each operation, as data: the
 * transform points of an operation with transforms and where its input is
 * in its payload, which runs start others, and which runs are not recorded.
 */
import type { TransformPoint } from "../../domain/HookPoint.js"
import { type Operation, operations, type Payloads } from "../../domain/Operation.js"
import type { Transformed, TransformedOperation } from "./operationHooks.js"
import { disabled } from "./requestRecorder.js"
import { memoryQueryOf, memoryRecordOf } from "./transformValues.js"

/** Each transformed operation's transform points, and where its input is in its payload. */
export const transformsOf: {
  readonly [Op in TransformedOperation]: {
    readonly before: TransformPoint
    readonly after: TransformPoint
    readonly input: (payload: Payloads[Op]) => Transformed[Op]["input"]
  }
} = {
  inference: { before: "before_inference", after: "after_inference", input: (payload) => payload.prompt },
  tool_call: { before: "before_tool", after: "after_tool", input: (payload) => payload.parameters },
  retrieval: { before: "before_retrieval", after: "after_retrieval", input: (payload) => payload.query },
  // The memory input is the payload's query (or record) as plain data: what a transform returns unchanged compares equal.
  memory_load: { before: "before_memory_load", after: "after_memory_load", input: memoryQueryOf },
  memory_store: {
    before: "before_memory_store",
    after: "after_memory_store",
    input: (payload) => memoryRecordOf(payload.record)
  }
}

/** The transform points of `operation`, and where its input is in a payload (none: it has no transforms). */
export const pointsOf = (operation: Operation): {
  readonly before: TransformPoint
  readonly after: TransformPoint
  readonly input: (payload: unknown) => unknown
} | undefined => (transformsOf as Partial<Record<Operation, ReturnType<typeof pointsOf>>>)[operation]

/**
 * The runs that start others, and which: a run gets a snapshot (so its
 * children can name it as their parent) when a hook sees it or one of them.
 */
export const childrenOf: Partial<Record<Operation, ReadonlyArray<Operation>>> = {
  request: operations,
  phase: operations,
  tool_call: ["tool_execution"]
}

/**
 * Runs whose hook runs are not recorded on the request: `record_write`
 * observers watch the record being written, and recording their runs in
 * it would write it again, forever (their spans are their evidence).
 */
export const unrecorded: ReadonlySet<Operation> = new Set(["record_write"])

/** The recorder of runs outside any request, and of unrecorded runs: it records nothing. */
export const noRecorder = disabled({
  schemaVersion: 1,
  requestId: "",
  recordRevision: 0,
  mode: "pipeline",
  request: "",
  metadata: {},
  phases: [],
  hookInvocations: [],
  diagnostics: []
})
