/**
 * Durable requests in one process (issue 24), on the real SQLite engine:
 * the same lifecycle as `Pipeline.process` run as a workflow; a request id
 * is one execution (processing it again joins it: no hook or tool runs
 * twice); the record is the request's, with every region's attempt; a human
 * approval is a durable signal bound to the plan's digest, checked as a
 * HITL resume is (seal, digest, decision) and never runnable through
 * `Pipeline.resume`; tools a hook adds are refused. The crash behaviour is
 * in DurableRequestCrash.test.ts.
 */
import { Tool } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Schema } from "effect"
import {
  Agent,
  Approval,
  CheckpointStore,
  ExecutionStore,
  Hook,
  Pipeline,
  ToolCalls,
  ToolRegistry
} from "effect-agent-pipeline"
import * as DurablePipeline from "effect-agent-pipeline/durable"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const Charge = Tool.make("charge", {
  description: "Charge an amount",
  parameters: { cents: Schema.Number },
  success: Schema.String
})

/** What ran: each tool call's idempotency key, each hook run. */
interface Ran {
  readonly tools: Array<string>
  readonly hooks: Array<string>
}

const chargeTool = (ran: Ran) =>
  ToolRegistry.entry({
    namespace: "billing",
    agent: "payments",
    tool: Charge,
    handler: ({ cents }) =>
      Effect.map(ToolCalls.current, (call) => {
        ran.tools.push(Option.getOrThrow(call).idempotencyKey)
        return `charged ${cents}`
      })
  })

const step = (id: string, cents: number) => ({
  step_id: id,
  namespace: "billing",
  agent: "payments",
  capability: "charge",
  parameters: { cents }
})

const hooksOf = (ran: Ran) => [
  Hook.make({
    name: "notes",
    beforePlanning: () => Effect.sync(() => (ran.hooks.push("before_planning"), { enrichments: { note: "n" } }))
  }),
  Hook.make({ name: "ledger", afterExecution: () => Effect.sync(() => void ran.hooks.push("after_execution")) }),
  Hook.make({
    name: "sign",
    afterSynthesis: (_ctx, text) => Effect.sync(() => (ran.hooks.push("after_synthesis"), `${text}.`))
  })
]

const plans = [{ steps: [step("c1", 100), step("c2", 250)] }]

/** An agent with durable requests on a fresh SQLite engine file. */
const durableAgent = (
  ran: Ran,
  options?: { readonly approval?: boolean; readonly extraTools?: boolean; readonly requiredAllows?: number }
) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-durable-request-"))
  let allowed = 0
  // A required boundary that allows its first `requiredAllows` plans, then rejects.
  const required = Hook.required({
    name: "boundary",
    afterPlanning: (_ctx, plan) =>
      allowed++ < (options?.requiredAllows ?? Number.POSITIVE_INFINITY)
        ? Effect.succeed(plan)
        : Effect.fail(new Error("charges are closed"))
  })
  const hooks = options?.extraTools === true
    ? [Hook.make({ name: "adds-tools", beforePlanning: () => Effect.succeed({ tools: [chargeTool(ran)] }) })]
    : [...hooksOf(ran), required]
  const agent = Agent.layerTest({
    tools: options?.extraTools === true ? [] : [chargeTool(ran)],
    hooks,
    ...(options?.approval === true
      ? { approval: { evaluate: () => Effect.succeed(Approval.suspend("a human approves charges")) } }
      : {}),
    script: { plans: [...plans, ...plans], synthesis: "done" }
  })
  return DurablePipeline.layer().pipe(
    Layer.provideMerge(agent),
    Layer.provide(DurablePipeline.engineSqlite({ filename: path.join(dir, "workflows.db") }))
  )
}

const record = (requestId: string) =>
  Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get(requestId)).pipe(Effect.map(Option.getOrThrow))

/** Polls until the request awaits its approval. */
const awaitingApproval = (requestId: string) =>
  Effect.gen(function*() {
    const durable = yield* DurablePipeline.DurablePipeline
    for (let i = 0; i < 200; i++) {
      const status = yield* durable.poll(requestId)
      if (Option.isSome(status) && status.value._tag === "Suspended") return
      yield* Effect.sleep(25)
    }
    throw new Error(`${requestId} never awaited its approval`)
  })

describe("DurablePipeline: requests as durable workflows (issue 24)", () => {
  it.live(
    "runs the request's lifecycle as Pipeline.process does, recorded as a durable request",
    () =>
      Effect.gen(function*() {
        const ran: Ran = { tools: [], hooks: [] }
        const { durable, stored } = yield* Effect.gen(function*() {
          const durable = yield* (yield* DurablePipeline.DurablePipeline).process({
            request: "charge twice",
            requestId: "order-1"
          })
          return { durable, stored: yield* record("order-1") }
        }).pipe(Effect.provide(durableAgent(ran)), Effect.scoped)
        const inProcess = yield* Effect.flatMap(
          Pipeline.Pipeline,
          (pipeline) => pipeline.process({ request: "charge twice", requestId: "order-1" })
        ).pipe(Effect.provide(durableAgent({ tools: [], hooks: [] })), Effect.scoped)

        expect(durable._tag).toBe("Completed")
        expect(inProcess._tag).toBe("Completed")
        if (durable._tag !== "Completed" || inProcess._tag !== "Completed") return
        expect(durable.response.response).toBe("done.")
        expect(durable.response.response).toBe(inProcess.response.response)
        expect(durable.response.phases.map((p) => p.steps.map((s) => [s.step_id, s.status, s.output]))).toEqual(
          inProcess.response.phases.map((p) => p.steps.map((s) => [s.step_id, s.status, s.output]))
        )
        expect(ran.tools.sort()).toEqual(["order-1/c1", "order-1/c2"])
        expect(ran.hooks).toEqual(["before_planning", "after_execution", "after_synthesis"])

        expect(stored.mode).toBe("durable")
        expect(stored.lifecycle?.status).toBe("succeeded")
        expect(stored.finalResponse).toBe("done.")
        expect(stored.rawDraft).toBe("done")
        expect(stored.phases.map((p) => p.steps.map((s) => s.status))).toEqual([["succeeded", "succeeded"]])
        expect(stored.hookInvocations.map((h) => h.name).filter((n) => n !== undefined).sort()).toEqual(
          expect.arrayContaining(["ledger", "notes", "sign"])
        )
        // Every region started once.
        expect(stored.diagnostics.filter((d) => d.startsWith("durable: ")).sort()).toEqual([
          "durable: after_execution started (attempt 1)",
          "durable: before_planning started (attempt 1)",
          "durable: phase/1 started (attempt 1)",
          "durable: phase/1/plan started (attempt 1)",
          "durable: phase/1/step/c1 started (attempt 1)",
          "durable: phase/1/step/c2 started (attempt 1)",
          "durable: synthesis started (attempt 1)"
        ])
      }),
    60_000
  )

  it.live(
    "a request id is one execution: processing it again joins it (no hook or tool runs again)",
    () =>
      Effect.gen(function*() {
        const ran: Ran = { tools: [], hooks: [] }
        const { first, second, submitted, stored } = yield* Effect.gen(function*() {
          const durable = yield* DurablePipeline.DurablePipeline
          const first = yield* durable.process({ request: "charge twice", requestId: "order-2" })
          const second = yield* durable.process({ request: "charge twice", requestId: "order-2" })
          const polled = yield* durable.poll("order-2")
          expect(Option.isSome(polled) && polled.value._tag).toBe("Complete")
          expect(yield* durable.poll("nobody")).toEqual(Option.none())
          const submitted = yield* durable.submit({ request: "charge twice", requestId: "order-2" })
          return { first, second, submitted, stored: yield* record("order-2") }
        }).pipe(Effect.provide(durableAgent(ran)), Effect.scoped)
        expect(second).toEqual(first)
        expect(submitted).toBe("order-2")
        expect(ran.tools.sort()).toEqual(["order-2/c1", "order-2/c2"])
        expect(ran.hooks).toEqual(["before_planning", "after_execution", "after_synthesis"])
        expect(stored.hookInvocations.filter((h) => h.name === "ledger")).toHaveLength(1)
      }),
    60_000
  )

  it.live(
    "bad input is InvalidRequest before anything runs; another request's id is refused",
    () =>
      Effect.gen(function*() {
        const ran: Ran = { tools: [], hooks: [] }
        const { invalid, taken } = yield* Effect.gen(function*() {
          const durable = yield* DurablePipeline.DurablePipeline
          const invalid = yield* Effect.either(durable.process({ request: "" }))
          const pipeline = yield* Pipeline.Pipeline
          yield* pipeline.process({ request: "charge twice", requestId: "order-3" })
          const taken = yield* Effect.either(durable.process({ request: "charge twice", requestId: "order-3" }))
          return { invalid, taken }
        }).pipe(Effect.provide(durableAgent(ran)), Effect.scoped)
        expect(Either.isLeft(invalid) && invalid.left._tag).toBe("InvalidRequest")
        expect(Either.isLeft(taken) && taken.left._tag === "InvalidRequest" && taken.left.reason).toBe(
          "request_id_in_use"
        )
        // Only the in-process request ran its tools.
        expect(ran.tools.sort()).toEqual(["order-3/c1", "order-3/c2"])
      }),
    60_000
  )

  it.live(
    "an approval is a durable signal bound to the plan: wrong digest and Pipeline.resume refused, then approved",
    () =>
      Effect.gen(function*() {
        const ran: Ran = { tools: [], hooks: [] }
        yield* Effect.gen(function*() {
          const durable = yield* DurablePipeline.DurablePipeline
          yield* durable.submit({ request: "charge twice", requestId: "order-4" })
          yield* awaitingApproval("order-4")
          const checkpointId = "order-4/approval/1"
          const checkpoint = Option.getOrThrow(
            yield* Effect.flatMap(CheckpointStore.CheckpointStore, (store) => store.get(checkpointId))
          )
          const suspended = yield* record("order-4")
          expect(suspended.lifecycle?.status).toBe("suspended")
          expect(suspended.checkpointId).toBe(checkpointId)
          expect(ran.tools).toEqual([])

          const wrong = yield* Effect.flip(durable.approve(checkpointId, "approve", { planDigest: "0".repeat(64) }))
          expect(wrong.reason).toBe("plan_mismatch")
          const viaResume = yield* Effect.flip(
            Effect.flatMap(
              Pipeline.Pipeline,
              (p) => p.resume(checkpointId, "approve", { planDigest: checkpoint.planDigest })
            )
          )
          expect(viaResume._tag === "CheckpointError" && viaResume.reason).toBe("not_found")
          const notADecision = yield* Effect.flip(durable.approve(checkpointId, "yes" as "approve"))
          expect(notADecision.reason).toBe("invalid_decision")
          expect(ran.tools).toEqual([])

          yield* durable.approve(checkpointId, "approve", { planDigest: checkpoint.planDigest })
          const result = yield* durable.process({ request: "charge twice", requestId: "order-4" })
          expect(result._tag).toBe("Completed")
          expect(ran.tools.sort()).toEqual(["order-4/c1", "order-4/c2"])
          const again = yield* Effect.flip(durable.approve(checkpointId, "approve"))
          expect(again.reason).toBe("not_found")
          const done = yield* record("order-4")
          expect(done.lifecycle?.status).toBe("succeeded")
          expect(done.finalResponse).toBe("done.")
          expect(done.diagnostics).toContain("durable: phase/1/approved started (attempt 1)")
        }).pipe(Effect.provide(durableAgent(ran, { approval: true })), Effect.scoped)
      }),
    60_000
  )

  it.live(
    "a rejected plan ends Rejected and runs nothing; a tampered approval checkpoint is refused",
    () =>
      Effect.gen(function*() {
        const ran: Ran = { tools: [], hooks: [] }
        yield* Effect.gen(function*() {
          const durable = yield* DurablePipeline.DurablePipeline
          const checkpoints = yield* CheckpointStore.CheckpointStore
          yield* durable.submit({ request: "charge twice", requestId: "order-5" })
          yield* durable.submit({ request: "charge twice", requestId: "order-6" })
          yield* awaitingApproval("order-5")
          yield* awaitingApproval("order-6")

          yield* durable.approve("order-5/approval/1", "reject")
          const rejected = yield* durable.process({ request: "charge twice", requestId: "order-5" })
          expect(rejected._tag).toBe("Rejected")

          // The stored plan rewritten (a bigger charge): its seal no longer verifies.
          const sealed = Option.getOrThrow(yield* checkpoints.get("order-6/approval/1"))
          yield* checkpoints.save({
            ...sealed,
            plan: { ...sealed.plan, steps: [{ ...sealed.plan.steps[0]!, parameters: { cents: 999_999 } }] }
          })
          const tampered = yield* Effect.flip(durable.approve("order-6/approval/1", "approve"))
          expect(tampered.reason).toBe("tampered")
          const status = yield* durable.poll("order-6")
          expect(Option.isSome(status) && status.value._tag).toBe("Suspended")
        }).pipe(Effect.provide(durableAgent(ran, { approval: true })), Effect.scoped)
        expect(ran.tools).toEqual([])
      }),
    60_000
  )

  it.live(
    "tools a BeforePlanning hook adds are refused in a durable request (HookContractError not_durable)",
    () =>
      Effect.gen(function*() {
        const ran: Ran = { tools: [], hooks: [] }
        const error = yield* Effect.flatMap(
          DurablePipeline.DurablePipeline,
          (durable) => Effect.flip(durable.process({ request: "charge twice", requestId: "order-7" }))
        ).pipe(Effect.provide(durableAgent(ran, { extraTools: true })), Effect.scoped)
        expect(error._tag === "HookContractError" && error.reason).toBe("not_durable")
        expect(ran.tools).toEqual([])
      }),
    60_000
  )

  it.live(
    "an approved plan passes the required after-planning hook again before anything runs",
    () =>
      Effect.gen(function*() {
        const ran: Ran = { tools: [], hooks: [] }
        const { error, stored } = yield* Effect.gen(function*() {
          const durable = yield* DurablePipeline.DurablePipeline
          yield* durable.submit({ request: "charge twice", requestId: "order-8" })
          yield* awaitingApproval("order-8")
          yield* durable.approve("order-8/approval/1", "approve")
          const error = yield* Effect.flip(durable.process({ request: "charge twice", requestId: "order-8" }))
          return { error, stored: yield* record("order-8") }
        }).pipe(Effect.provide(durableAgent(ran, { approval: true, requiredAllows: 1 })), Effect.scoped)
        expect(error._tag).toBe("RequiredAfterPlanningError")
        expect(ran.tools).toEqual([])
        expect(stored.lifecycle?.status).toBe("failed")
      }),
    60_000
  )
})
