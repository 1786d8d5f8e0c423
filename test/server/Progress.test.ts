/**
 * The `progress` events between two snapshots of a record (issue 21), over
 * hand-built record pairs: a new phase, tools starting and ending (also
 * between two polls), hook runs appended or changing status, nothing for an
 * unchanged record, and a deterministic order.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ExecutionRecord } from "effect-agent-pipeline"
import { diff } from "../../src/server/internal/progress.js"

type Record = ExecutionRecord.ExecutionRecord
type Invocation = ExecutionRecord.HookInvocation
type Phase = ExecutionRecord.PhaseRecord

const step = (id: string) => ({
  step_id: id,
  namespace: "ns",
  agent: `agent-${id}`,
  capability: `cap-${id}`,
  parameters: {},
  depends_on: [],
  implicit_deps: [],
  metadata: {}
})

const ended = (id: string, startedAt: number, duration: number, status: "succeeded" | "failed" = "succeeded") => ({
  step_id: id,
  namespace: "ns",
  agent: `agent-${id}`,
  capability: `cap-${id}`,
  status,
  startedAt,
  duration
})

const phase = (n: number, ids: ReadonlyArray<string>, parts: Partial<Phase> = {}): Phase => ({
  phase: n,
  plan: { steps: ids.map(step), terminal: true },
  steps: [],
  ...parts
})

const run = (name: string, startedAt: number, parts: Partial<Invocation> = {}): Invocation => ({
  name,
  stage: "before_planning",
  outcome: "succeeded",
  status: "completed",
  sequence: 0,
  startedAt,
  duration: 1,
  effects: [],
  ...parts
})

const record = (revision: number, parts: Partial<Record> = {}): Record => ({
  schemaVersion: 1,
  requestId: "r",
  recordRevision: revision,
  mode: "stream",
  request: "q",
  metadata: {},
  lifecycle: { status: "running", startedAt: 0 },
  phases: [],
  hookInvocations: [],
  diagnostics: [],
  ...parts
})

const label = (p: ReturnType<typeof diff>[number]): string =>
  p.kind === "hook_run" ? p.hookName : `${p.kind}${"stepId" in p ? `:${p.stepId}` : ""}`

describe("progress between two snapshots", () => {
  it("nothing when nothing changed", () => {
    const r = record(3, {
      phases: [phase(1, ["a"], { steps: [ended("a", 10, 5)] })],
      hookInvocations: [run("h", 1)]
    })
    expect(diff(r, { ...r, recordRevision: 4 })).toEqual([])
  })

  it("from nothing: everything the record shows, in the order it happened", () => {
    const r = record(5, {
      hookInvocations: [run("pre", 1), run("post", 100, { stage: "after_synthesis" })],
      phases: [phase(1, ["a", "b"], { steps: [ended("b", 20, 10, "failed"), ended("a", 10, 30)] })]
    })
    expect(diff(undefined, r)).toEqual([
      { kind: "hook_run", invocation: 0, hookName: "pre", stage: "before_planning", status: "completed" },
      { kind: "phase", phase: 1 },
      { kind: "tool_started", phase: 1, stepId: "a", namespace: "ns", agent: "agent-a", capability: "cap-a" },
      { kind: "tool_started", phase: 1, stepId: "b", namespace: "ns", agent: "agent-b", capability: "cap-b" },
      { kind: "tool_ended", phase: 1, stepId: "b", status: "failed", duration: 10 },
      { kind: "tool_ended", phase: 1, stepId: "a", status: "succeeded", duration: 30 },
      { kind: "hook_run", invocation: 1, hookName: "post", stage: "after_synthesis", status: "completed" }
    ])
  })

  it("a phase whose tools are in flight: the phase and the starts, nothing ended", () => {
    const before = record(1, { hookInvocations: [run("pre", 1)] })
    const after = record(2, {
      hookInvocations: [run("pre", 1)],
      phases: [phase(1, ["a", "b", "c"], { running: ["b", "a"] })]
    })
    expect(diff(before, after)).toEqual([
      { kind: "phase", phase: 1 },
      { kind: "tool_started", phase: 1, stepId: "a", namespace: "ns", agent: "agent-a", capability: "cap-a" },
      { kind: "tool_started", phase: 1, stepId: "b", namespace: "ns", agent: "agent-b", capability: "cap-b" }
    ])
  })

  it("a tool seen running then ended: only its end; one that started and ended between polls: both", () => {
    const before = record(2, { phases: [phase(1, ["a", "b"], { running: ["a"] })] })
    const after = record(3, { phases: [phase(1, ["a", "b"], { steps: [ended("a", 10, 4), ended("b", 12, 1)] })] })
    expect(diff(before, after)).toEqual([
      { kind: "tool_started", phase: 1, stepId: "b", namespace: "ns", agent: "agent-b", capability: "cap-b" },
      { kind: "tool_ended", phase: 1, stepId: "b", status: "succeeded", duration: 1 },
      { kind: "tool_ended", phase: 1, stepId: "a", status: "succeeded", duration: 4 }
    ])
  })

  it("a second phase after the first one's steps", () => {
    const first = phase(1, ["a"], { steps: [ended("a", 10, 4)] })
    const before = record(3, { phases: [first] })
    const after = record(4, { phases: [first, phase(2, ["x"], { running: ["x"] })] })
    expect(diff(before, after)).toEqual([
      { kind: "phase", phase: 2 },
      { kind: "tool_started", phase: 2, stepId: "x", namespace: "ns", agent: "agent-x", capability: "cap-x" }
    ])
  })

  it("hook runs: new ones, and old ones whose status or decision changed", () => {
    const decision = { policy: "fail_closed", action: "deny", reason: "refused" } as const
    const before = record(1, {
      hookInvocations: [
        run("bg", 1, { status: "backgrounded", outcome: "pending", runId: "w/1" }),
        run("same", 2),
        run("guard", 3, { stage: "guard_tool_call", status: "started", outcome: "pending" })
      ]
    })
    const after = record(2, {
      hookInvocations: [
        run("bg", 1, { status: "completed", runId: "w/1" }),
        run("same", 2),
        run("guard", 3, { stage: "guard_tool_call", status: "denied", decision }),
        run("late", 50, { stage: "after_execution", outcome: "failed", status: undefined })
      ]
    })
    expect(diff(before, after)).toEqual([
      { kind: "hook_run", invocation: 0, hookName: "bg", stage: "before_planning", status: "completed" },
      { kind: "hook_run", invocation: 2, hookName: "guard", stage: "guard_tool_call", status: "denied", decision },
      // Recorded without a run status: its outcome.
      { kind: "hook_run", invocation: 3, hookName: "late", stage: "after_execution", status: "failed" }
    ])
  })

  it("is deterministic: the same pair gives the same events", () => {
    const before = record(1)
    const after = record(2, {
      phases: [phase(1, ["a", "b", "c"], { steps: [ended("c", 5, 1), ended("a", 5, 1)], running: ["b"] })],
      hookInvocations: [run("x", 5), run("y", 5)]
    })
    const once = diff(before, after)
    expect(diff(before, after)).toEqual(once)
    // BeforePlanning runs first; then the phase, starts (plan order), ends (record order); in flight last.
    expect(once.map(label)).toEqual([
      "x",
      "y",
      "phase",
      "tool_started:a",
      "tool_started:c",
      "tool_ended:c",
      "tool_ended:a",
      "tool_started:b"
    ])
  })

  it("everything in one millisecond: the request's own order, each step's hook runs between its start and end", () => {
    const r = record(2, {
      hookInvocations: [
        run("pre", 7),
        run("plan-model", 7, { stage: "around_inference", phase: 1 }),
        run("plan-check", 7, { stage: "after_planning", phase: 1 }),
        // Started after the step's end as computed from its whole-millisecond start.
        run("tool-scrub", 8, { stage: "after_tool", phase: 1, stepId: "a" }),
        run("exec", 7, { stage: "after_execution" }),
        run("synth-model", 7, { stage: "around_inference" }),
        run("post", 7, { stage: "after_synthesis" })
      ],
      phases: [phase(1, ["a"], { steps: [ended("a", 7, 0.5)] })]
    })
    expect(diff(undefined, r).map(label)).toEqual([
      "pre",
      "plan-model",
      "plan-check",
      "phase",
      "tool_started:a",
      "tool-scrub",
      "tool_ended:a",
      "exec",
      "synth-model",
      "post"
    ])
  })

  it("a step in flight: its start before its own hook runs", () => {
    const r = record(2, {
      hookInvocations: [run("gate", 9, { stage: "guard_tool_call", phase: 1, stepId: "a" })],
      phases: [phase(1, ["a"], { running: ["a"] })]
    })
    expect(diff(undefined, r).map(label)).toEqual(["phase", "tool_started:a", "gate"])
  })
})
