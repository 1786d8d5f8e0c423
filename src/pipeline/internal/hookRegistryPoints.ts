/**
 * Where a handler registered by point goes on a hook: the inverse of
 * `handlersOf` (hookRegistration). The table is typed point by point, so a
 * handler lands only on the field whose type is its point's, and a point
 * added to `HookPoint` without an entry here is a type error.
 */
import type { HookPoint } from "../../domain/HookPoint.js"
import type * as Hook from "../Hook.js"
import type { HandlerMap } from "./hookRegistration.js"

/** The points a handler can be registered at: every point. */
export type Point = HookPoint

/**
 * The handler a point takes: the type of that point's field on a hook.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler<P extends Point> = NonNullable<HandlerMap[P]>

/** A hook without its name: the handler fields and subscription options. */
export type HookFields = Omit<Hook.Hook, "name">

type Placement = { readonly [P in Point]: (handler: Handler<P>) => HookFields }

const placement: Placement = {
  before_planning: (beforePlanning) => ({ beforePlanning }),
  after_planning: (afterPlanning) => ({ afterPlanning }),
  after_execution: (afterExecution) => ({ afterExecution }),
  after_synthesis: (afterSynthesis) => ({ afterSynthesis }),
  around_request: (request) => ({ around: { request } }),
  around_phase: (phase) => ({ around: { phase } }),
  around_inference: (inference) => ({ around: { inference } }),
  around_tool_call: (toolCall) => ({ around: { toolCall } }),
  around_tool_execution: (toolExecution) => ({ around: { toolExecution } }),
  around_retrieval: (retrieval) => ({ around: { retrieval } }),
  around_memory_load: (memoryLoad) => ({ around: { memoryLoad } }),
  around_memory_store: (memoryStore) => ({ around: { memoryStore } }),
  around_approval_wait: (approvalWait) => ({ around: { approvalWait } }),
  around_record_write: (recordWrite) => ({ around: { recordWrite } }),
  guard_request: (request) => ({ guard: { request } }),
  guard_inference: (inference) => ({ guard: { inference } }),
  guard_tool_call: (toolCall) => ({ guard: { toolCall } }),
  guard_retrieval: (retrieval) => ({ guard: { retrieval } }),
  guard_memory_load: (memoryLoad) => ({ guard: { memoryLoad } }),
  guard_memory_store: (memoryStore) => ({ guard: { memoryStore } }),
  before_inference: (beforeInference) => ({ beforeInference }),
  after_inference: (afterInference) => ({ afterInference }),
  before_tool: (beforeTool) => ({ beforeTool }),
  after_tool: (afterTool) => ({ afterTool }),
  before_retrieval: (beforeRetrieval) => ({ beforeRetrieval }),
  after_retrieval: (afterRetrieval) => ({ afterRetrieval }),
  before_memory_load: (beforeMemoryLoad) => ({ beforeMemoryLoad }),
  after_memory_load: (afterMemoryLoad) => ({ afterMemoryLoad }),
  before_memory_store: (beforeMemoryStore) => ({ beforeMemoryStore }),
  after_memory_store: (afterMemoryStore) => ({ afterMemoryStore }),
  on_error: (onError) => ({ onError })
}

/** Whether a value (from a JavaScript caller too) is a point. */
export const isPoint = (u: unknown): u is Point => typeof u === "string" && Object.hasOwn(placement, u)

/** The handler fields of a hook that handles `point` with `handler`. */
export const fieldsOf = <P extends Point>(point: P, handler: Handler<P>): HookFields => placement[point](handler)
