/**
 * The library's internal modules, for tests that exercise them directly.
 * They are not part of the public surface (`src/index.ts`): users never
 * import them, so tests reach them here instead of through
 * `effect-agent-pipeline`.
 */
export * as CanonicalJson from "../../src/domain/internal/canonicalJson.js"
export * as Utf8Chunks from "../../src/domain/internal/utf8Chunks.js"
export * as PlanWire from "../../src/domain/PlanWire.js"
export * as HookRegistration from "../../src/pipeline/HookRegistration.js"
export * as PipelineHooks from "../../src/pipeline/PipelineHooks.js"
export * as PlanExecutor from "../../src/pipeline/PlanExecutor.js"
export * as BackgroundPool from "../../src/runtime/BackgroundPool.js"
export * as HookRuntime from "../../src/runtime/HookRuntime.js"
export * as OperationHooks from "../../src/runtime/OperationHooks.js"
export * as RequestRecorder from "../../src/runtime/RequestRecorder.js"
