/**
 * Errors carry the library's TypeId, and the union guards tell request
 * errors from construction errors (and from anything else).
 */
import { describe, expect, it } from "@effect/vitest"
import { PipelineError } from "effect-agent-pipeline"

describe("error guards", () => {
  const request = [
    new PipelineError.InvalidRequest({ reason: "malformed", path: "", detail: "x" }),
    new PipelineError.RequiredAfterPlanningError({ hookName: "h", phase: 1, detail: "x" }),
    new PipelineError.HookContractError({
      hookName: "h",
      stage: "before_planning",
      reason: "unknown_kind",
      detail: "x"
    }),
    new PipelineError.PlanningError({ reason: "invalid_plan", phase: 1, detail: "x" }),
    new PipelineError.SynthesisError({ detail: "x" }),
    new PipelineError.CheckpointError({ reason: "already_claimed", checkpointId: "c", detail: "x" })
  ]
  const config = [
    new PipelineError.InvalidOrchestratorConfig({ index: 0, detail: "x" }),
    new PipelineError.InvalidRequiredAfterPlanningHook({ reason: "stage_drift", hookName: "h", index: 0 }),
    new PipelineError.InvalidPipelineOptions({ option: "concurrency", detail: "x" })
  ]

  it("every error carries the TypeId", () => {
    for (const error of [...request, ...config]) expect(error[PipelineError.TypeId]).toBe(PipelineError.TypeId)
  })

  it("isPipelineError accepts exactly the request errors", () => {
    expect(request.every(PipelineError.isPipelineError)).toBe(true)
    expect(config.some(PipelineError.isPipelineError)).toBe(false)
  })

  it("isAgentConfigError accepts exactly the construction errors", () => {
    expect(config.every(PipelineError.isAgentConfigError)).toBe(true)
    expect(request.some(PipelineError.isAgentConfigError)).toBe(false)
  })

  it("look-alikes without the TypeId are not errors of this library", () => {
    for (const impostor of [{ _tag: "InvalidRequest" }, new Error("InvalidRequest"), null, "InvalidRequest"]) {
      expect(PipelineError.isPipelineError(impostor)).toBe(false)
      expect(PipelineError.isAgentConfigError(impostor)).toBe(false)
    }
  })
})
