/**
 * The library's internal modules, for tests that exercise them directly.
 * They sit under `internal/` folders and are not part of the public surface
 * (`src/index.ts`, the package subpaths): users never import them, so tests
 * reach them here instead of through `effect-agent-pipeline`.
 */
export * as CanonicalJson from "../../src/domain/internal/canonicalJson.js"
export * as LiveShapes from "../../src/domain/internal/liveShapes.js"
export * as PlanWire from "../../src/domain/internal/planWire.js"
export * as Utf8Chunks from "../../src/domain/internal/utf8Chunks.js"
export * as HookRegistration from "../../src/pipeline/internal/hookRegistration.js"
export * as PipelineHooks from "../../src/pipeline/internal/pipelineHooks.js"
export * as PlanExecutor from "../../src/pipeline/internal/planExecutor.js"
export * as BackgroundPool from "../../src/runtime/internal/backgroundPool.js"
export * as HookRuntime from "../../src/runtime/internal/hookRuntime.js"
export * as OperationHooks from "../../src/runtime/internal/operationHooks.js"
export * as RequestRecorder from "../../src/runtime/internal/requestRecorder.js"
