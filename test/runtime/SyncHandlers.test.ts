/**
 * `Hook.sync` handlers (seed 001–003, C13, C14, C17): a plain function
 * marked `Hook.sync` has exactly the semantics of the same body wrapped in
 * `Effect.sync`. Transforms and Around observers marked this way run on a
 * synchronous fast path (called back to back, no interpreter steps) while no
 * collecting tracer is installed; everything else — and everything while a
 * tracer collects spans — takes the Effect path.
 *
 * The technique: every scenario runs twice on a fresh agent, once with its
 * handlers written as `Effect.sync`-returning functions and once with the
 * same bodies wrapped in `Hook.sync`, and the two runs must agree: the
 * outcome, the prompts the model saw, what the handlers observed, and the
 * execution record (hook invocations compared without `startedAt`,
 * `duration` and `callId`). Each marked handler is wrapped in a `Proxy`
 * that counts calls through its Effect-returning form, so a test can tell
 * which path actually ran (the fast path calls the plain function directly).
 *
 * A third run writes each body as `(...args) => Effect.succeed(body(...args))`:
 * an Effect handler whose effect is already a success takes the same
 * synchronous path (issue 20) and must agree with the other two as well.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Option } from "effect"
import {
  Agent,
  type AgentResponse,
  type ExecutionRecord,
  Hook,
  HookEffects,
  type Operation,
  Pipeline,
  type PipelineContext,
  type PipelineError,
  Retriever,
  type RoutingPlan,
  type ScriptedModel,
  type ShortCircuit
} from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import { syncOnly } from "../../src/runtime/internal/invoke.js"
import { type HarnessOptions, makeHarness, plan, quoteStep, weatherStep } from "../support/Harness.js"
import * as InMemoryTracing from "../support/InMemoryTracing.js"
import { at, completed as completedResult, makeSeamAgent, untyped } from "./OperationsSupport.js"

// ---------------------------------------------------------------------------
// Running a scenario in both forms
// ---------------------------------------------------------------------------

type Form = "effect" | "sync" | "exit"

/** One run's way of writing handlers, and what its handlers logged. */
interface Writer {
  readonly form: Form
  /**
   * The body as a handler: `(...args) => Effect.sync(() => body(...args))`
   * in the Effect form, `Hook.sync(body)` in the sync form.
   */
  readonly h: <Args extends ReadonlyArray<unknown>, A>(
    body: (...args: Args) => A
  ) => (...args: Args) => Effect.Effect<A>
  /** What the handlers saw, in call order. */
  readonly log: Array<string>
  /** Calls of marked handlers through their Effect-returning form (the Effect path). */
  readonly effectPath: { count: number }
}

const writer = (form: Form): Writer => {
  const effectPath = { count: 0 }
  return {
    form,
    log: [],
    effectPath,
    h: <Args extends ReadonlyArray<unknown>, A>(body: (...args: Args) => A) =>
      form === "effect"
        ? (...args: Args) => Effect.sync(() => body(...args))
        : form === "exit"
        ? (...args: Args) => Effect.succeed(body(...args))
        // The Proxy keeps the mark (the runtime still sees a Hook.sync
        // handler) and counts the calls that went through the Effect path.
        : new Proxy(Hook.sync(body), {
          apply(target, _this, args) {
            effectPath.count++
            return Reflect.apply(target, undefined, args)
          }
        })
  }
}

/** A hook invocation without what legitimately differs between two runs. */
const stripInvocation = (invocation: ExecutionRecord.HookInvocation) => {
  const { callId: _callId, duration: _duration, startedAt: _startedAt, ...rest } = invocation
  return {
    ...rest,
    effects: rest.effects.map(({ duration: _d, startedAt: _s, ...effect }) => effect)
  }
}

/** The record without timings, call ids and its writer's (random) id. */
const stripRecord = (record: ExecutionRecord.ExecutionRecord) => {
  const { hookInvocations, lifecycle, writer: _writer, ...rest } = record
  const stripped = { ...rest, hookInvocations: hookInvocations.map(stripInvocation) }
  if (lifecycle === undefined) return stripped
  const { endedAt: _endedAt, startedAt: _startedAt, ...evidence } = lifecycle
  return { ...stripped, lifecycle: evidence }
}

/** How a request ended: its result, its typed error, or its defect. */
const settled = (exit: Exit.Exit<AgentResponse.PipelineResult, PipelineError.PipelineError>) =>
  Exit.match(exit, {
    onSuccess: (value) => ({ _tag: "Success", value }) as const,
    onFailure: (cause) =>
      Option.match(Cause.failureOption(cause), {
        onSome: (error) => ({ _tag: "Failure", error }) as const,
        onNone: () => ({ _tag: "Defect", defect: Cause.squash(cause) }) as const
      })
  })

interface Ran {
  readonly form: Form
  readonly exit: Exit.Exit<AgentResponse.PipelineResult, PipelineError.PipelineError>
  readonly record: ExecutionRecord.ExecutionRecord
  readonly prompts: ReadonlyArray<ScriptedModel.RecordedPrompt>
  readonly log: ReadonlyArray<string>
  readonly effectPath: number
}

const REQUEST_ID = "sync-1"

/** Runs the scenario once in `form` on a fresh agent. */
const runIn = (form: Form, scenario: (w: Writer) => HarnessOptions, request: string) =>
  Effect.gen(function*() {
    const w = writer(form)
    const h = yield* makeHarness(scenario(w))
    const exit = yield* Effect.exit(h.pipeline.process({ request, requestId: REQUEST_ID }))
    const record = yield* h.record(REQUEST_ID)
    return { form, exit, record, prompts: h.prompts, log: w.log, effectPath: w.effectPath.count } satisfies Ran
  })

/**
 * Runs the scenario in both forms and checks they agree; returns both runs
 * (Effect form first). `fastPath`: the sync form must not have called any
 * marked handler through its Effect form.
 */
const bothForms = (
  scenario: (w: Writer) => HarnessOptions,
  options: { readonly request?: string; readonly fastPath?: boolean } = {}
) =>
  Effect.gen(function*() {
    const request = options.request ?? "quote ACME"
    const effect = yield* runIn("effect", scenario, request)
    const sync = yield* runIn("sync", scenario, request)
    const succeeded = yield* runIn("exit", scenario, request)
    for (const other of [sync, succeeded]) {
      expect(other.record.hookInvocations.map(stripInvocation)).toEqual(
        effect.record.hookInvocations.map(stripInvocation)
      )
      expect(stripRecord(other.record)).toEqual(stripRecord(effect.record))
      expect(settled(other.exit)).toEqual(settled(effect.exit))
      expect(other.prompts).toEqual(effect.prompts)
      expect(other.log).toEqual(effect.log)
    }
    expect(effect.effectPath).toBe(0)
    if (options.fastPath === true) expect(sync.effectPath).toBe(0)
    return [effect, sync] as const
  })

const completedOf = (ran: Ran): AgentResponse.AgentResponse => {
  if (Exit.isFailure(ran.exit) || ran.exit.value._tag !== "Completed") {
    throw new Error(`${ran.form}: expected Completed`)
  }
  return ran.exit.value.response
}

const errorOf = (ran: Ran): PipelineError.PipelineError => {
  const failure = Exit.isFailure(ran.exit) ? Cause.failureOption(ran.exit.cause) : Option.none()
  if (Option.isNone(failure)) throw new Error(`${ran.form}: expected a typed failure`)
  return failure.value
}

const defectOf = (ran: Ran): unknown => {
  const defect = Exit.isFailure(ran.exit) ? Cause.dieOption(ran.exit.cause) : Option.none()
  if (Option.isNone(defect)) throw new Error(`${ran.form}: expected a defect`)
  return defect.value
}

const FAIL_CLOSED = (reason: ExecutionRecord.HookDecision["reason"]) =>
  ({ policy: "fail_closed", action: "terminate", reason }) as const
const FAIL_OPEN = (reason: ExecutionRecord.HookDecision["reason"]) =>
  ({ policy: "fail_open", action: "continue", reason }) as const

type InferenceCall = Operation.Call<"inference">

const onePhase = { plans: [plan([quoteStep("q1")])], synthesis: "draft answer" }

// ---------------------------------------------------------------------------
// Transforms
// ---------------------------------------------------------------------------

describe("Hook.sync transforms: the fast path has the Effect path's semantics", () => {
  it.effect("seed 002: a chain of before/after inference transforms records the same runs; rewrites carry a contributionHash, pass-throughs none; the model sees the rewritten prompt", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "tag",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => `${prompt}\n[tag]`)
          }),
          Hook.make({
            name: "peek",
            beforeInference: w.h((call: InferenceCall, prompt: string) => {
              w.log.push(`peek:${call.payload.purpose}:${prompt.endsWith("\n[tag]")}`)
              return prompt
            })
          }),
          Hook.make({
            name: "shout",
            afterInference: w.h((call: InferenceCall, text: string) =>
              call.payload.purpose === "synthesis" ? text.toUpperCase() : text
            )
          }),
          Hook.make({
            name: "echo",
            afterInference: w.h((call: InferenceCall, text: string) => {
              w.log.push(`echo:${call.payload.purpose}:${text}`)
              return text
            })
          })
        ],
        script: onePhase
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        expect(ran.prompts.map((p) => p.kind)).toEqual(["plan", "text"])
        for (const p of ran.prompts) expect(p.prompt.endsWith("\n[tag]")).toBe(true)
        expect(ran.log).toEqual([
          "peek:planning:true",
          expect.stringMatching(/^echo:planning:\{/),
          "peek:synthesis:true",
          "echo:synthesis:DRAFT ANSWER"
        ])
        expect(completedOf(ran).response).toBe("DRAFT ANSWER")
        const before = at(ran.record, "before_inference")
        expect(before.map((i) => [i.name, i.status, i.phase, typeof i.contributionHash])).toEqual([
          ["tag", "completed", 1, "string"],
          ["peek", "completed", 1, "undefined"],
          ["tag", "completed", undefined, "string"],
          ["peek", "completed", undefined, "undefined"]
        ])
        const after = at(ran.record, "after_inference")
        // The planning response passes through "shout"; the synthesis text is rewritten.
        expect(after.map((i) => [i.name, typeof i.contributionHash])).toEqual([
          ["shout", "undefined"],
          ["echo", "undefined"],
          ["shout", "string"],
          ["echo", "undefined"]
        ])
      }
    }))

  it.effect("seed 002: a sync transform returning the wrong shape fails closed by default (HookFailed, wrong_shape), exactly as its Effect form", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "fine",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => `${prompt}\n[fine]`)
          }),
          untyped({ name: "numeric", beforeInference: w.h(() => 42) })
        ],
        script: onePhase
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        expect(errorOf(ran)).toMatchObject({
          _tag: "HookFailed",
          hookName: "numeric",
          point: "before_inference",
          reason: "wrong_shape",
          detail: "before_inference must return a string"
        })
        // The model never got the prompt.
        expect(ran.prompts).toEqual([])
        expect(at(ran.record, "before_inference").map((i) => [i.name, i.status, i.error, i.decision])).toEqual([
          ["fine", "completed", undefined, undefined],
          ["numeric", "failed", "before_inference must return a string", FAIL_CLOSED("hook_error")]
        ])
        expect(ran.record.lifecycle).toMatchObject({ status: "failed", errorTag: "HookFailed" })
      }
    }))

  it.effect("seed 001/002: a fail-open sync transform returning the wrong shape is recorded; the chain goes on with the value it was given", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          untyped({ name: "numeric", failure: "fail_open", beforeInference: w.h(() => 42) }),
          Hook.make({
            name: "after",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => {
              w.log.push(`after got ${prompt.length} chars`)
              return `${prompt}\n[after]`
            })
          }),
          untyped({ name: "bad-answer", failure: "fail_open", afterInference: w.h(() => ({ text: "not a string" })) })
        ],
        script: onePhase
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        expect(completedOf(ran).response).toBe("draft answer")
        for (const p of ran.prompts) {
          expect(p.prompt.endsWith("\n[after]")).toBe(true)
          expect(p.prompt).not.toContain("42")
        }
        expect(at(ran.record, "before_inference").map((i) => [i.name, i.status, i.error, i.decision])).toEqual([
          ["numeric", "failed", "before_inference must return a string", FAIL_OPEN("hook_error")],
          ["after", "completed", undefined, undefined],
          ["numeric", "failed", "before_inference must return a string", FAIL_OPEN("hook_error")],
          ["after", "completed", undefined, undefined]
        ])
        expect(at(ran.record, "after_inference").map((i) => [i.name, i.status, i.error, i.decision])).toEqual([
          ["bad-answer", "failed", "after_inference must return a string", FAIL_OPEN("hook_error")],
          ["bad-answer", "failed", "after_inference must return a string", FAIL_OPEN("hook_error")]
        ])
      }
      // "after" got the original prompt (numeric contributed nothing): the same lengths in both forms.
      expect(sync.log).toEqual(effect.log)
      expect(sync.log).toHaveLength(2)
    }))

  it.effect("seed 001 capabilities: an undeclared rewrite by a sync transform (capabilities: []) is refused exactly as its Effect form; a pass-through is not a contribution", () =>
    Effect.gen(function*() {
      const scenario = (failure: "fail_closed" | "fail_open") => (w: Writer): HarnessOptions => ({
        hooks: [
          Hook.make({
            name: "reader",
            capabilities: [],
            beforeInference: w.h((_call: InferenceCall, prompt: string) => (w.log.push("reader"), prompt))
          }),
          Hook.make({
            name: "sneaky",
            capabilities: [],
            failure,
            beforeInference: w.h((_call: InferenceCall, prompt: string) => `${prompt}\n[sneaky]`)
          })
        ],
        script: onePhase
      })
      const refusal = "undeclared contribution: rewrote before_inference without the \"prompt_rewrite\" capability"

      const [closedEffect, closedSync] = yield* bothForms(scenario("fail_closed"), { fastPath: true })
      for (const ran of [closedEffect, closedSync]) {
        expect(errorOf(ran)).toMatchObject({
          _tag: "HookFailed",
          hookName: "sneaky",
          reason: "undeclared_contribution",
          detail: refusal
        })
        expect(ran.prompts).toEqual([])
        expect(
          at(ran.record, "before_inference").map((i) => [i.name, i.status, i.error, i.decision, i.contributionHash])
        ).toEqual([
          ["reader", "completed", undefined, undefined, undefined],
          ["sneaky", "failed", refusal, FAIL_CLOSED("undeclared_contribution"), undefined]
        ])
      }

      const [openEffect, openSync] = yield* bothForms(scenario("fail_open"), { fastPath: true })
      for (const ran of [openEffect, openSync]) {
        expect(completedOf(ran).response).toBe("draft answer")
        // The refused rewrite never reached the model.
        for (const p of ran.prompts) expect(p.prompt).not.toContain("[sneaky]")
        expect(at(ran.record, "before_inference").map((i) => [i.name, i.status, i.decision])).toEqual([
          ["reader", "completed", undefined],
          ["sneaky", "failed", FAIL_OPEN("undeclared_contribution")],
          ["reader", "completed", undefined],
          ["sneaky", "failed", FAIL_OPEN("undeclared_contribution")]
        ])
      }
    }))

  it.effect("seed 002: mixed chains (sync, Effect, sync) run in order and record the same runs as the all-Effect chain", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "s1",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => (w.log.push("s1"), `${prompt}\n[s1]`))
          }),
          Hook.make({
            name: "e1",
            // Always an Effect: this hook is the same in both runs.
            beforeInference: (_call, prompt) =>
              Effect.gen(function*() {
                yield* Effect.yieldNow()
                w.log.push(`e1 saw s1: ${prompt.endsWith("\n[s1]")}`)
                return `${prompt}\n[e1]`
              })
          }),
          Hook.make({
            name: "s2",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => {
              w.log.push(`s2 saw e1: ${prompt.endsWith("\n[s1]\n[e1]")}`)
              return prompt
            })
          })
        ],
        script: onePhase
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        const once = ["s1", "e1 saw s1: true", "s2 saw e1: true"]
        expect(ran.log).toEqual([...once, ...once])
        for (const p of ran.prompts) expect(p.prompt.endsWith("\n[s1]\n[e1]")).toBe(true)
        expect(at(ran.record, "before_inference").map((i) => [i.name, i.sequence, i.status, typeof i.contributionHash]))
          .toEqual([
            ["s1", 0, "completed", "string"],
            ["e1", 1, "completed", "string"],
            ["s2", 2, "completed", "undefined"],
            ["s1", 0, "completed", "string"],
            ["e1", 1, "completed", "string"],
            ["s2", 2, "completed", "undefined"]
          ])
      }
    }))

  it.effect("seed 001: a disabled sync transform and one whose dependency failed are recorded skipped, exactly as their Effect forms", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "off",
            enabled: false,
            beforeInference: w.h((_call: InferenceCall, prompt: string) => (w.log.push("off ran"), `${prompt}\n[off]`))
          }),
          untyped({ name: "flaky", failure: "fail_open", beforeInference: w.h(() => null) }),
          Hook.make({
            name: "dependent",
            failure: "fail_open",
            dependsOn: ["flaky"],
            beforeInference: w.h((
              _call: InferenceCall,
              prompt: string
            ) => (w.log.push("dependent ran"), `${prompt}\n[dep]`))
          }),
          Hook.make({
            name: "tail",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => (w.log.push("tail"), `${prompt}\n[tail]`))
          }),
          // A dependent of a sync hook that completed runs.
          Hook.make({
            name: "follower",
            dependsOn: ["tail"],
            beforeInference: w.h((_call: InferenceCall, prompt: string) => (w.log.push("follower"), prompt))
          })
        ],
        script: onePhase
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        expect(ran.log).toEqual(["tail", "follower", "tail", "follower"])
        for (const p of ran.prompts) {
          expect(p.prompt.endsWith("\n[tail]")).toBe(true)
          expect(p.prompt).not.toMatch(/\[off\]|\[dep\]/)
        }
        const once = [
          ["off", "skipped", "disabled"],
          ["flaky", "failed", undefined],
          ["dependent", "skipped", "dependency_failed"],
          ["tail", "completed", undefined],
          ["follower", "completed", undefined]
        ]
        expect(at(ran.record, "before_inference").map((i) => [i.name, i.status, i.skipReason])).toEqual([
          ...once,
          ...once
        ])
      }
    }))

  it.effect("seed 001: a fail-closed sync transform whose dependency failed stops the request (HookFailed, dependency_failed) as its Effect form does", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          untyped({ name: "flaky", failure: "fail_open", beforeInference: w.h(() => 7) }),
          Hook.make({
            name: "strict",
            dependsOn: ["flaky"],
            beforeInference: w.h((_call: InferenceCall, prompt: string) => (w.log.push("strict ran"), prompt))
          })
        ],
        script: onePhase
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        expect(ran.log).toEqual([])
        expect(errorOf(ran)).toMatchObject({
          _tag: "HookFailed",
          hookName: "strict",
          reason: "dependency_failed",
          detail: "could not run: \"flaky\" did not complete"
        })
        expect(at(ran.record, "before_inference").map((i) => [i.name, i.status, i.skipReason])).toEqual([
          ["flaky", "failed", undefined],
          ["strict", "skipped", "dependency_failed"]
        ])
      }
    }))

  it.effect("seed 001 deadline: a sync transform under a deadline policy takes the Effect path and records what its Effect form records", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "bounded",
            execution: Hook.deadline("1 second"),
            beforeInference: w.h((_call: InferenceCall, prompt: string) => `${prompt}\n[bounded]`)
          })
        ],
        script: onePhase
      }))
      // Deadlines are the Effect path's job: the marked handler was called as an Effect.
      expect(sync.effectPath).toBe(2)
      for (const ran of [effect, sync]) {
        for (const p of ran.prompts) expect(p.prompt.endsWith("\n[bounded]")).toBe(true)
        expect(at(ran.record, "before_inference").map((i) => [i.name, i.status, i.execution])).toEqual([
          ["bounded", "completed", "deadline"],
          ["bounded", "completed", "deadline"]
        ])
      }
    }))
})

// ---------------------------------------------------------------------------
// Panics
// ---------------------------------------------------------------------------

describe("Hook.sync panics", () => {
  it.effect("C13: a sync transform that throws is a panic (the thrown value, as a defect) recorded propagate_panic under either failure policy, exactly as Effect.sync(() => { throw })", () =>
    Effect.gen(function*() {
      for (const failure of ["fail_closed", "fail_open"] as const) {
        const boom = new Error("scrubber exploded")
        const [effect, sync] = yield* bothForms((w) => ({
          hooks: [
            Hook.make({
              name: "first",
              beforeInference: w.h((_call: InferenceCall, prompt: string) => (w.log.push("first"), prompt))
            }),
            Hook.make({
              name: "bomb",
              failure,
              beforeInference: w.h((_call: InferenceCall, _prompt: string): string => {
                throw boom
              })
            }),
            Hook.make({
              name: "never",
              beforeInference: w.h((_call: InferenceCall, prompt: string) => (w.log.push("never"), prompt))
            })
          ],
          script: onePhase
        }), { fastPath: true })
        for (const ran of [effect, sync]) {
          expect(defectOf(ran)).toBe(boom)
          expect(ran.log).toEqual(["first"])
          expect(ran.prompts).toEqual([])
          expect(at(ran.record, "before_inference").map((i) => [i.name, i.status, i.error, i.decision])).toEqual([
            ["first", "completed", undefined, undefined],
            ["bomb", "failed", "panic: scrubber exploded", {
              policy: failure,
              action: "propagate_panic",
              reason: "panic"
            }]
          ])
          expect(ran.record.lifecycle).toMatchObject({ status: "failed", errorMessage: "panic: scrubber exploded" })
        }
      }
    }))

  it.effect("C13: a sync Around observer or stage handler that throws is a panic recorded propagate_panic, as its Effect form", () =>
    Effect.gen(function*() {
      const boom = new Error("observer exploded")
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "watch",
            around: {
              toolExecution: w.h((_call: Operation.Call<"tool_execution">): void => {
                throw boom
              })
            }
          })
        ],
        script: onePhase
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        expect(defectOf(ran)).toBe(boom)
        expect(at(ran.record, "around_tool_execution").map((i) => [i.name, i.status, i.error, i.decision])).toEqual([
          ["watch", "failed", "panic: observer exploded", {
            policy: "fail_open",
            action: "propagate_panic",
            reason: "panic"
          }]
        ])
      }

      const stageBoom = new Error("enricher exploded")
      const [stageEffect, stageSync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "enrich",
            beforePlanning: w.h((_ctx: PipelineContext.PipelineContext, _gate: ShortCircuit.PipelineGate): void => {
              throw stageBoom
            })
          })
        ],
        script: onePhase
      }))
      for (const ran of [stageEffect, stageSync]) {
        expect(defectOf(ran)).toBe(stageBoom)
        expect(at(ran.record, "before_planning").map((i) => [i.name, i.status, i.error, i.decision])).toEqual([
          ["enrich", "failed", "panic: enricher exploded", {
            policy: "fail_open",
            action: "propagate_panic",
            reason: "panic"
          }]
        ])
      }
    }))
})

// ---------------------------------------------------------------------------
// Around observers
// ---------------------------------------------------------------------------

describe("Hook.sync Around observers", () => {
  it.effect("seed 003: sync observers (nothing returned, a finish function returned, a wrong value returned) begin and end as their Effect forms, with the same records", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "quiet",
            around: {
              toolExecution: w.h((call: Operation.Call<"tool_execution">) =>
                void w.log.push(`begin:quiet:${call.coordinates.stepId}`)
              )
            }
          }),
          Hook.make({
            name: "timer",
            around: {
              toolExecution: w.h((call: Operation.Call<"tool_execution">) => {
                w.log.push(`begin:timer:${call.coordinates.stepId}`)
                return (result: Operation.Result) =>
                  Effect.sync(() => void w.log.push(`end:timer:${call.coordinates.stepId}:${result.outcome}`))
              })
            }
          }),
          Hook.make({
            name: "stamp",
            around: {
              toolExecution: w.h((call: Operation.Call<"tool_execution">) => {
                w.log.push(`begin:stamp:${call.coordinates.stepId}`)
                // A marked finish callback is a handler like any other.
                return Hook.sync((result: Operation.Result) =>
                  void w.log.push(`end:stamp:${call.coordinates.stepId}:${result.outcome}`)
                )
              })
            }
          }),
          untyped({ name: "wrong", around: { toolExecution: w.h(() => 42) } }),
          untyped({ name: "plain-finish", around: { toolExecution: w.h(() => () => "not an Effect") } }),
          Hook.make({
            name: "last",
            dependsOn: ["quiet"],
            around: {
              toolExecution: w.h((call: Operation.Call<"tool_execution">) =>
                void w.log.push(`begin:last:${call.coordinates.stepId}`)
              )
            }
          }),
          // Its dependency's begin failed: skipped (observers fail open).
          Hook.make({
            name: "after-wrong",
            dependsOn: ["wrong"],
            around: { toolExecution: w.h(() => void w.log.push("after-wrong ran")) }
          })
        ],
        script: {
          plans: [plan([quoteStep("q1"), weatherStep("w1", "Paris", { depends_on: ["q1"] })])],
          synthesis: "ok"
        }
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        expect(completedOf(ran).response).toBe("ok")
        const run = (step: string) => [
          `begin:quiet:${step}`,
          `begin:timer:${step}`,
          `begin:stamp:${step}`,
          `begin:last:${step}`,
          `end:stamp:${step}:completed`,
          `end:timer:${step}:completed`
        ]
        expect(ran.log).toEqual([...run("q1"), ...run("w1")])
        const failed = (error: string) => ({ ...FAIL_OPEN("hook_error"), error })
        const records = at(ran.record, "around_tool_execution").map((i) =>
          i.status === "failed" ? [i.name, i.stepId, failed(i.error ?? "?"), i.decision] : [i.name, i.stepId, i.status]
        )
        const once = (step: string) => [
          [
            "wrong",
            step,
            failed("an Around observer must return a finish function or nothing"),
            FAIL_OPEN("hook_error")
          ],
          ["after-wrong", step, "skipped"],
          // Ended last-begun first; "plain-finish" and "stamp" have callbacks, so from "plain-finish" on in order.
          ["last", step, "completed"],
          ["plain-finish", step, failed("finish did not return an Effect"), FAIL_OPEN("hook_error")],
          ["stamp", step, "completed"],
          ["timer", step, "completed"],
          ["quiet", step, "completed"]
        ]
        expect(records).toEqual([...once("q1"), ...once("w1")])
      }
    }))

  it.effect("seed 003: a sync observer sees a denied run's outcome as its Effect form does", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "watch",
            around: {
              toolCall: w.h((call: Operation.Call<"tool_call">) => (result: Operation.Result) =>
                Effect.sync(() => void w.log.push(`${call.payload.capability}:${result.outcome}`))
              )
            }
          }),
          Hook.make({
            name: "no-weather",
            guard: {
              toolCall: (call, proceed) =>
                call.payload.capability === "weather_forecast" ? Hook.deny("no weather") : proceed
            }
          })
        ],
        script: { plans: [plan([quoteStep("q1"), weatherStep("w1")])], synthesis: "ok" }
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        expect([...ran.log].sort()).toEqual(["stock_quote:completed", "weather_forecast:denied"])
        expect(at(ran.record, "around_tool_call").map((i) => i.status)).toEqual(["completed", "completed"])
      }
    }))
})

// ---------------------------------------------------------------------------
// Stage handlers
// ---------------------------------------------------------------------------

describe("Hook.sync stage handlers", () => {
  it.effect("C4/C8/C11/C12: BeforePlanning, AfterPlanning, AfterExecution and AfterSynthesis handlers marked Hook.sync work like their Effect forms", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "enrich",
            beforePlanning: w.h((ctx: PipelineContext.PipelineContext, _gate: ShortCircuit.PipelineGate) => {
              w.log.push(`before_planning:${ctx.request}`)
              return { enrichments: { rag_context: "- ACME reports on Friday" } }
            })
          }),
          Hook.make({
            name: "planner-check",
            afterPlanning: w.h((_ctx: PipelineContext.PipelineContext, p: RoutingPlan.RoutingPlan) => {
              w.log.push(`after_planning:${p.steps.length}`)
              return { ...p, steps: p.steps.filter((s) => s.capability === "stock_quote") }
            })
          }),
          Hook.make({
            name: "audit",
            afterExecution: w.h((_ctx: PipelineContext.PipelineContext, results: Hook.ExecutionResults) =>
              void w.log.push(`after_execution:${results.steps.map((s) => `${s.step_id}=${s.status}`).join(",")}`)
            )
          }),
          Hook.make({
            name: "sign",
            afterSynthesis: w.h((_ctx: PipelineContext.PipelineContext, text: string) => `${text} -- signed`)
          }),
          untyped({ name: "numeric", afterSynthesis: w.h(() => 7) })
        ],
        script: { plans: [plan([quoteStep("q1"), weatherStep("w1")])], synthesis: "draft" }
      }))
      for (const ran of [effect, sync]) {
        expect(ran.log).toEqual(["before_planning:quote ACME", "after_planning:2", "after_execution:q1=succeeded"])
        const response = completedOf(ran)
        expect(response.response).toBe("draft -- signed")
        expect(response.phases[0]!.plan.steps.map((s) => s.step_id)).toEqual(["q1"])
        expect(ran.prompts[0]!.prompt).toContain("- ACME reports on Friday")
        expect(ran.record.hookInvocations.map((i) => [i.name, i.stage, i.status, i.error])).toEqual([
          ["enrich", "before_planning", "completed", undefined],
          ["planner-check", "after_planning", "completed", undefined],
          ["audit", "after_execution", "completed", undefined],
          ["sign", "after_synthesis", "completed", undefined],
          ["numeric", "after_synthesis", "failed", expect.any(String)]
        ])
        expect(at(ran.record, "after_synthesis")[1]!.decision).toEqual(FAIL_OPEN("hook_error"))
      }
    }))
})

// ---------------------------------------------------------------------------
// Spans
// ---------------------------------------------------------------------------

/** A hook span as the comparison sees it: everything but ids and times. */
const describeSpan = (spans: ReadonlyArray<InMemoryTracing.ReadableSpan>, span: InMemoryTracing.ReadableSpan) => ({
  name: span.name,
  attributes: span.attributes,
  status: span.status.code,
  events: span.events.map((e) => e.name),
  ancestors: InMemoryTracing.ancestorsOf(spans, span).map((a) => a.name)
})

const traceIn = (form: Form, scenario: (w: Writer) => HarnessOptions) => {
  const tracing = InMemoryTracing.make()
  return Effect.gen(function*() {
    const ran = yield* runIn(form, scenario, "quote ACME")
    const spans = tracing.spans()
    const hooks = InMemoryTracing.hookSpans(spans).map((s) => describeSpan(spans, s))
    const key = (d: ReturnType<typeof describeSpan>) => JSON.stringify([d.name, d.ancestors, d.attributes])
    return {
      ran,
      hookSpans: [...hooks].sort((a, b) => key(a).localeCompare(key(b))),
      names: spans.map((s) => s.name).sort()
    }
  }).pipe(Effect.provide(tracing.layer))
}

describe("Hook.sync spans", () => {
  it.effect("C17: with a collecting tracer installed, sync handlers produce exactly the Effect form's hook spans (names, parents, attributes)", () =>
    Effect.gen(function*() {
      const scenario = (w: Writer): HarnessOptions => ({
        hooks: [
          Hook.make({
            name: "ops",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => `${prompt}\n[ops]`),
            afterInference: w.h((_call: InferenceCall, text: string) => text),
            around: {
              inference: w.h((_call: InferenceCall) => undefined),
              toolExecution: w.h((_call: Operation.Call<"tool_execution">) => (_result: Operation.Result) =>
                Effect.void
              )
            }
          }),
          Hook.make({
            name: "stages",
            beforePlanning: w.h((_ctx: PipelineContext.PipelineContext, _gate: ShortCircuit.PipelineGate) => undefined),
            afterSynthesis: w.h((_ctx: PipelineContext.PipelineContext, text: string) => `${text}!`)
          }),
          untyped({ name: "strict", failure: "fail_open", afterInference: w.h(() => 1) })
        ],
        script: onePhase
      })
      const effect = yield* traceIn("effect", scenario)
      const sync = yield* traceIn("sync", scenario)
      expect(effect.hookSpans.length).toBeGreaterThan(0)
      expect(sync.hookSpans).toEqual(effect.hookSpans)
      expect(sync.names).toEqual(effect.names)
      // The records agree as well.
      expect(stripRecord(sync.ran.record)).toEqual(stripRecord(effect.ran.record))
      // While spans are collected the marked handlers ran on the Effect path.
      expect(sync.ran.effectPath).toBeGreaterThan(0)
      const strict = effect.hookSpans.filter((s) => s.name === "pipeline.hook.after_inference.strict")
      expect(strict).toHaveLength(2)
      for (const s of strict) {
        expect(s.attributes).toMatchObject({
          "pipeline.hook.status": "failed",
          "pipeline.hook.decision.policy": "fail_open",
          "pipeline.hook.error": "after_inference must return a string"
        })
      }
      const ops = effect.hookSpans.find((s) => s.name === "pipeline.hook.before_inference.ops")
      expect(ops?.ancestors).toContain("pipeline.request")
    }))
})

// ---------------------------------------------------------------------------
// The marked handler as an ordinary handler; effect reporting
// ---------------------------------------------------------------------------

describe("Hook.sync as an ordinary handler", () => {
  it.effect("seed 001: Hook.sync(f) called directly returns a lazy Effect of f's value; a throw becomes the defect", () =>
    Effect.gen(function*() {
      let calls = 0
      const add = Hook.sync((a: number, b: number) => (calls++, a + b))
      const effect = add(2, 3)
      expect(Effect.isEffect(effect)).toBe(true)
      // Like Effect.sync: nothing runs until the Effect does.
      expect(calls).toBe(0)
      expect(yield* effect).toBe(5)
      expect(yield* effect).toBe(5)
      expect(calls).toBe(2)

      const boom = new Error("thrown")
      const thrower = Hook.sync((): number => {
        throw boom
      })
      const exit = yield* Effect.exit(thrower())
      expect(Exit.isFailure(exit) && Option.getOrUndefined(Cause.dieOption(exit.cause))).toBe(boom)
      expect(Exit.isFailure(exit) && Option.isNone(Cause.failureOption(exit.cause))).toBe(true)
    }))

  it.effect("C15: an Effect-form handler between sync handlers still reports effects, onto its own invocation (not a neighbouring sync hook's)", () =>
    Effect.gen(function*() {
      const [effect, sync] = yield* bothForms((w) => ({
        hooks: [
          Hook.make({
            name: "s1",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => prompt),
            around: { inference: w.h((_call: InferenceCall) => undefined) }
          }),
          Hook.make({
            name: "reporter",
            beforeInference: (_call, prompt) =>
              HookEffects.report({
                effectId: "audit",
                name: "Prompt audit",
                status: "succeeded",
                data: { chars: prompt.length }
              }).pipe(
                Effect.orDie,
                Effect.as(prompt)
              ),
            around: {
              inference: (call) =>
                HookEffects.report({ effectId: "watch", name: "Inference watch", status: "pending" }).pipe(
                  Effect.orDie,
                  Effect.as((result: Operation.Result) =>
                    HookEffects.report({
                      effectId: "watch",
                      name: "Inference watch",
                      status: "succeeded",
                      data: { purpose: call.payload.purpose, outcome: result.outcome }
                    }).pipe(Effect.orDie)
                  )
                )
            }
          }),
          Hook.make({
            name: "s2",
            beforeInference: w.h((_call: InferenceCall, prompt: string) => `${prompt}\n[s2]`),
            around: { inference: w.h((_call: InferenceCall) => undefined) }
          })
        ],
        script: onePhase
      }), { fastPath: true })
      for (const ran of [effect, sync]) {
        const effects = ran.record.hookInvocations.map((
          i
        ) => [i.stage, i.name, i.effects.map((e) => [e.effectId, e.status])])
        // Per model call: the transforms in order, then the observers ending last-begun first.
        const perCall = [
          ["before_inference", "s1", []],
          ["before_inference", "reporter", [["audit", "succeeded"]]],
          ["before_inference", "s2", []],
          ["around_inference", "s2", []],
          ["around_inference", "reporter", [["watch", "succeeded"]]],
          ["around_inference", "s1", []]
        ]
        expect(effects).toEqual([...perCall, ...perCall])
        const watch = at(ran.record, "around_inference").flatMap((i) => i.effects.map((e) => e.data))
        expect(watch).toEqual([{ purpose: "planning", outcome: "completed" }, {
          purpose: "synthesis",
          outcome: "completed"
        }])
      }
    }))
})

// ---------------------------------------------------------------------------
// Regressions found while building the fast path
// ---------------------------------------------------------------------------

describe("Hook.sync: regressions", () => {
  it.scoped("seed 003: the finish callback a Hook.sync observer returns gets the hook's services", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const finish = (_result: Operation.Result) =>
        Effect.map(Retriever.Retriever, (retriever) => void seen.push(typeof retriever.retrieve))
      const agent = yield* makeSeamAgent({
        hooks: [
          Hook.make<Retriever.Retriever>({
            name: "obs",
            around: { toolExecution: Hook.sync((_call: Operation.Call<"tool_execution">) => finish) }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      completedResult(yield* agent.pipeline.process({ request: "quote", requestId: "sync-finish-services" }))
      expect(seen).toEqual(["function"])
      const record = yield* agent.test.record("sync-finish-services")
      expect(at(record, "around_tool_execution").map((i) => [i.name, i.status])).toEqual([["obs", "completed"]])
    }))

  it.effect("C13: an observer that panics at begin still ends the observers begun before it (recorded, spans ended)", () => {
    const tracing = InMemoryTracing.make()
    return Effect.gen(function*() {
      const ended: Array<string> = []
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "a",
            around: { toolExecution: () => Effect.succeed(() => Effect.sync(() => void ended.push("a"))) }
          }),
          Hook.make({
            name: "b",
            around: {
              toolExecution: () =>
                Effect.sync(() => {
                  throw new Error("boom")
                })
            }
          })
        ],
        script: { plans: [plan([quoteStep("q1")])], synthesis: "ok" }
      })
      const exit = yield* Effect.exit(h.pipeline.process({ request: "quote", requestId: "begin-panic" }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect(ended).toEqual(["a"])
      const record = yield* h.record("begin-panic")
      expect(at(record, "around_tool_execution").map((i) => [i.name, i.status]).sort()).toEqual([
        ["a", "completed"],
        ["b", "failed"]
      ])
      const spans = InMemoryTracing.named(tracing.spans(), "pipeline.hook.around_tool_execution.a")
      expect(spans.map((s) => s.ended)).toEqual([true])
    }).pipe(Effect.provide(tracing.layer))
  })
})

describe("points without an exit hook", () => {
  it("a point needs no exit hook only when every hook is a blocking Hook.sync handler", () => {
    const blocking = { _tag: "Blocking" }
    expect(syncOnly([{ plain: () => 1, execution: blocking }, { plain: () => 2, execution: blocking }])).toBe(true)
    // An Effect handler can be in flight when the fiber is interrupted.
    expect(syncOnly([{ plain: () => 1, execution: blocking }, { plain: undefined, execution: blocking }])).toBe(false)
    // A detached run is not the point's to finish.
    expect(syncOnly([{ plain: () => 1, execution: { _tag: "FireAndRecord" } }])).toBe(false)
  })
})

describe("Effect handlers whose effect is already a success (issue 20)", () => {
  it.effect("each handler is called exactly once per run, whatever it returns: a success (synchronous path), an effect to run, a failure, or not an Effect", () =>
    Effect.gen(function*() {
      const calls: Record<string, number> = {}
      const counted =
        <Args extends ReadonlyArray<unknown>, A>(name: string, f: (...args: Args) => A) => (...args: Args): A => {
          calls[name] = (calls[name] ?? 0) + 1
          return f(...args)
        }
      const h = yield* makeHarness({
        hooks: [
          Hook.make({
            name: "succeeds",
            beforeInference: counted("succeeds", (_call: InferenceCall, prompt: string) => Effect.succeed(prompt)),
            around: { toolExecution: counted("observes", () => Effect.void) }
          }),
          Hook.make({
            name: "runs",
            beforeInference: counted("runs", (_call: InferenceCall, prompt: string) => Effect.sync(() => prompt)),
            around: { toolExecution: counted("observesLater", () => Effect.sync(() => undefined)) }
          }),
          Hook.make({
            name: "fails",
            failure: "fail_open",
            beforeInference: counted("fails", (_call: InferenceCall, _prompt: string) => Effect.fail("no"))
          }),
          untyped({
            name: "shapeless",
            failure: "fail_open",
            beforeInference: counted("shapeless", () => "not an Effect")
          })
        ],
        script: onePhase
      })
      const result = yield* h.pipeline.process({ request: "quote ACME", requestId: "once-1" })
      expect(result._tag).toBe("Completed")
      // Two model calls (planning, synthesis), one tool execution.
      expect(calls).toEqual({ succeeds: 2, runs: 2, fails: 2, shapeless: 2, observes: 1, observesLater: 1 })
      const record = yield* h.record("once-1")
      expect(at(record, "before_inference").map((i) => [i.name, i.status])).toEqual([
        ["succeeds", "completed"],
        ["runs", "completed"],
        ["fails", "failed"],
        ["shapeless", "failed"],
        ["succeeds", "completed"],
        ["runs", "completed"],
        ["fails", "failed"],
        ["shapeless", "failed"]
      ])
    }))
})

describe("an Around observer that has already begun (its effect a success) keeps its hook's services", () => {
  class Seen extends Context.Tag("test/Seen")<Seen, { readonly log: Array<string> }>() {}

  it.effect("its finish callback, returned by Effect.succeed, runs with the services the hook was registered with", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const hook = Hook.make({
        name: "watch",
        around: {
          toolExecution: (call: Operation.Call<"tool_execution">) =>
            Effect.succeed((result: { readonly outcome: string }) =>
              Effect.flatMap(
                Seen,
                (seen) => Effect.sync(() => seen.log.push(`${call.payload.capability}:${result.outcome}`))
              )
            )
        }
      })
      const layer = Agent.layerOffline({ tools: allTools, hooks: [hook] }).pipe(
        Layer.provide(Layer.succeed(Seen, { log }))
      )
      const result = yield* Effect.flatMap(
        Pipeline.Pipeline,
        (pipeline) => pipeline.process({ request: "What is the stock quote for ACME?", requestId: "begun-1" })
      ).pipe(
        Effect.provide(layer)
      )
      expect(result._tag).toBe("Completed")
      expect(log).toEqual(["stock_quote:completed"])
    }))
})
