/**
 * Resuming a HITL checkpoint claims it under a lease (DESIGN §4 step 5):
 * the resume's exit settles the claim — success deletes the checkpoint;
 * a typed failure, a defect or an interruption releases it, so the same
 * decision can be resumed again. A second resume while the first holds the
 * claim fails with `CheckpointError` `already_claimed`; a claim whose lease
 * ran out (its process died) can be taken over. A rejection is a decided
 * outcome: the checkpoint is completed like any other success.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Option, TestClock } from "effect"
import { Approval, Hook, type Pipeline, ToolRegistry } from "effect-agent-pipeline"
import { allTools, ExecuteTrade, NAMESPACE } from "../../examples/shared/DemoTools.js"
import { type Harness, makeHarness, plan, tradeStep } from "../support/Harness.js"

const tradesNeedApproval: Approval.ApprovalPolicy["Type"] = {
  evaluate: (_ctx, p) =>
    Effect.succeed(
      p.steps.some((s) => s.capability === "execute_trade") ? Approval.suspend("trades need a human") : Approval.approve
    )
}

/**
 * The demo tools with a trade tool that counts its executions; while
 * `gate` is set, each trade signals `started` and waits for the gate.
 */
const gatedTrades = () => {
  const trades: Array<string> = []
  const control: {
    gate?: { readonly started: Deferred.Deferred<void>; readonly open: Deferred.Deferred<void> } | undefined
  } = {}
  const trade = ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "trading-service",
    tool: ExecuteTrade,
    handler: ({ quantity, side, symbol }) =>
      Effect.gen(function*() {
        const gate = control.gate
        if (gate !== undefined) {
          yield* Deferred.succeed(gate.started, undefined)
          yield* Deferred.await(gate.open)
        }
        trades.push(`${side} ${quantity} ${symbol}`)
        return { orderId: `mock-${side}-${symbol}-${quantity}`, status: "accepted (mock)" }
      })
  })
  const tools = [...allTools.filter((t) => t.tool.name !== "execute_trade"), trade]
  /** Holds the next trades at the gate; returns the gate's two latches. */
  const hold = Effect.gen(function*() {
    const gate = { started: yield* Deferred.make<void>(), open: yield* Deferred.make<void>() }
    control.gate = gate
    return gate
  })
  return { tools, trades, hold }
}

/** An agent whose every trade needs approval; suspends request `requestId` and returns its checkpoint id. */
const suspendedTrade = (
  requestId: string,
  options: {
    readonly hooks?: ReadonlyArray<Hook.Hook<never>>
    readonly tools?: ReadonlyArray<ToolRegistry.ToolEntry<never>>
    readonly options?: Pipeline.PipelineOptions
  } = {}
) =>
  Effect.gen(function*() {
    const h: Harness = yield* makeHarness({
      ...options,
      approval: tradesNeedApproval,
      script: { plans: [plan([tradeStep("t1")])], synthesis: "bought 10 ACME" }
    })
    const suspended = yield* h.pipeline.process({ request: "buy ACME", requestId })
    if (suspended._tag !== "Suspended") throw new Error(`expected a suspension, got ${suspended._tag}`)
    return { h, checkpointId: suspended.checkpoint.checkpointId }
  })

const isStored = (h: Harness, checkpointId: string) =>
  Effect.map(Effect.orDie(h.checkpoints.get(checkpointId)), Option.isSome)

describe("resume claims its checkpoint", () => {
  const failures = [
    ["a typed failure (a guard that fails closed)", () => Effect.fail("policy service unreachable"), "HookDenied"],
    ["a defect (a guard that dies)", () => Effect.die(new Error("guard crashed")), undefined]
  ] as const
  for (const [label, failWith, errorTag] of failures) {
    it.effect(`a resume that ends in ${label} releases its claim: the same checkpoint resumes again, and then it is gone`, () =>
      Effect.gen(function*() {
        const state = { failing: false }
        const guard = Hook.make({
          name: "resume-guard",
          guard: {
            request: (call, proceed) => call.payload.mode === "resume" && state.failing ? failWith() : proceed
          }
        })
        const { tools, trades } = gatedTrades()
        const { checkpointId, h } = yield* suspendedTrade("claim-fail", { hooks: [guard], tools })

        state.failing = true
        const exit = yield* Effect.exit(h.pipeline.resume(checkpointId, "approve"))
        if (Exit.isSuccess(exit)) return expect.unreachable("the resume should have failed")
        if (errorTag === undefined) expect(Cause.isDie(exit.cause)).toBe(true)
        else expect(Option.getOrUndefined(Cause.failureOption(exit.cause))).toMatchObject({ _tag: errorTag })
        expect(trades).toEqual([])
        expect((yield* h.record("claim-fail")).lifecycle?.status).toBe("failed")
        // Released, not deleted: still there, and claimable at once.
        expect(yield* isStored(h, checkpointId)).toBe(true)

        state.failing = false
        const retried = yield* h.pipeline.resume(checkpointId, "approve")
        expect(retried._tag === "Completed" && retried.response.response).toBe("bought 10 ACME")
        expect(trades).toEqual(["buy 10 ACME"])
        expect((yield* h.record("claim-fail")).lifecycle?.status).toBe("succeeded")
        expect(yield* isStored(h, checkpointId)).toBe(false)
        const again = yield* Effect.flip(h.pipeline.resume(checkpointId, "approve"))
        expect(again).toMatchObject({ _tag: "CheckpointError", reason: "not_found", checkpointId })
      }))
  }

  it.effect("an interrupted resume releases its claim: the checkpoint resumes again", () =>
    Effect.gen(function*() {
      const { hold, tools, trades } = gatedTrades()
      const { checkpointId, h } = yield* suspendedTrade("claim-interrupt", { tools })
      const gate = yield* hold
      const first = yield* Effect.fork(h.pipeline.resume(checkpointId, "approve"))
      yield* Deferred.await(gate.started)
      yield* Fiber.interrupt(first)
      expect(trades).toEqual([])
      expect((yield* h.record("claim-interrupt")).lifecycle?.status).toBe("interrupted")
      expect(yield* isStored(h, checkpointId)).toBe(true)

      // The next resume is not refused as already claimed.
      yield* Deferred.succeed(gate.open, undefined)
      const retried = yield* h.pipeline.resume(checkpointId, "approve")
      expect(retried._tag).toBe("Completed")
      expect(trades).toEqual(["buy 10 ACME"])
      expect(yield* isStored(h, checkpointId)).toBe(false)
    }))

  it.effect("two concurrent resumes: one proceeds, the other fails with already_claimed and does not free the first's claim", () =>
    Effect.gen(function*() {
      const { hold, tools, trades } = gatedTrades()
      const { checkpointId, h } = yield* suspendedTrade("claim-race", { tools })
      const gate = yield* hold
      const first = yield* Effect.fork(h.pipeline.resume(checkpointId, "approve"))
      yield* Deferred.await(gate.started)

      const second = yield* Effect.flip(h.pipeline.resume(checkpointId, "approve"))
      expect(second).toMatchObject({ _tag: "CheckpointError", reason: "already_claimed", checkpointId })
      expect(second.message).toContain(`checkpoint ${checkpointId} already_claimed: another resume holds it`)
      // The refused resume left the first one's claim alone: a third is refused too, a rejection as well.
      expect(yield* Effect.flip(h.pipeline.resume(checkpointId, "reject"))).toMatchObject({ reason: "already_claimed" })
      expect(yield* isStored(h, checkpointId)).toBe(true)

      yield* Deferred.succeed(gate.open, undefined)
      const result = yield* Fiber.join(first)
      expect(result._tag === "Completed" && result.response.response).toBe("bought 10 ACME")
      expect(trades).toEqual(["buy 10 ACME"])
      expect(yield* isStored(h, checkpointId)).toBe(false)
      expect((yield* h.record("claim-race")).lifecycle?.status).toBe("succeeded")
    }))

  it.effect("concurrent resumes, all at once: exactly one runs the plan, every other one is already_claimed", () =>
    Effect.gen(function*() {
      const { tools, trades } = gatedTrades()
      const { checkpointId, h } = yield* suspendedTrade("claim-many", { tools })
      const exits = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i): Approval.ApprovalDecision => (i % 2 === 0 ? "approve" : "reject")),
        (decision) => Effect.exit(h.pipeline.resume(checkpointId, decision)),
        { concurrency: "unbounded" }
      )
      const succeeded = exits.filter(Exit.isSuccess)
      expect(succeeded).toHaveLength(1)
      for (const exit of exits.filter(Exit.isFailure)) {
        expect(Option.getOrUndefined(Cause.failureOption(exit.cause))).toMatchObject({
          _tag: "CheckpointError",
          reason: expect.stringMatching(/^(already_claimed|not_found)$/)
        })
      }
      expect(trades.length).toBeLessThanOrEqual(1)
      expect(yield* isStored(h, checkpointId)).toBe(false)
    }))

  it.effect("the checkpointClaimLease option sets the lease: the refused resume is told when the claim runs out", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_000)
      const { hold, tools } = gatedTrades()
      const { checkpointId, h } = yield* suspendedTrade("claim-lease", {
        tools,
        options: { checkpointClaimLease: "30 seconds" }
      })
      const gate = yield* hold
      const first = yield* Effect.fork(h.pipeline.resume(checkpointId, "approve"))
      yield* Deferred.await(gate.started)
      const refused = yield* Effect.flip(h.pipeline.resume(checkpointId, "approve"))
      expect(refused.detail).toContain(`until ${new Date(31_000).toISOString()}`)
      yield* Deferred.succeed(gate.open, undefined)
      yield* Fiber.join(first)
    }))

  it.effect("a claim whose lease ran out (its process died) is taken over by the next resume", () =>
    Effect.gen(function*() {
      const { tools, trades } = gatedTrades()
      const { checkpointId, h } = yield* suspendedTrade("claim-dead", { tools })
      // Another process claimed it, then died without completing or releasing.
      const claimed = yield* Effect.orDie(
        h.checkpoints.claim(checkpointId, { owner: "dead-process", leaseFor: "1 minute" })
      )
      expect(claimed._tag).toBe("Claimed")

      const refused = yield* Effect.flip(h.pipeline.resume(checkpointId, "approve"))
      expect(refused).toMatchObject({ reason: "already_claimed" })
      expect(refused.detail).toContain("dead-process")

      yield* TestClock.adjust("1 minute")
      const result = yield* h.pipeline.resume(checkpointId, "approve")
      expect(result._tag).toBe("Completed")
      expect(trades).toEqual(["buy 10 ACME"])
      expect(yield* isStored(h, checkpointId)).toBe(false)
      // The dead process, back, can no longer settle it.
      expect(yield* Effect.orDie(h.checkpoints.release(checkpointId, "dead-process"))).toBe(false)
    }))

  it.effect("a resume that overran its lease cannot settle the claim of the resume that took over (each resume claims as its own owner)", () =>
    Effect.gen(function*() {
      const { hold, tools, trades } = gatedTrades()
      const { checkpointId, h } = yield* suspendedTrade("claim-overrun", {
        tools,
        // The trade outlives the claim lease, not its own timeout.
        options: { checkpointClaimLease: "30 seconds", toolTimeout: "10 minutes" }
      })
      const gate = yield* hold
      const overran = yield* Effect.fork(h.pipeline.resume(checkpointId, "approve"))
      yield* Deferred.await(gate.started)
      yield* TestClock.adjust("31 seconds")
      // The lease ran out: another resume of the same pipeline takes the checkpoint over.
      const next = yield* hold
      const takeover = yield* Effect.fork(h.pipeline.resume(checkpointId, "approve"))
      yield* Deferred.await(next.started)
      yield* Fiber.interrupt(overran)
      // The overrun resume's exit released nothing: the takeover still holds the claim.
      const probe = yield* Effect.orDie(h.checkpoints.claim(checkpointId, { owner: "probe", leaseFor: "1 minute" }))
      expect(probe._tag).toBe("AlreadyClaimed")
      yield* Deferred.succeed(next.open, undefined)
      expect((yield* Fiber.join(takeover))._tag).toBe("Completed")
      expect(trades).toEqual(["buy 10 ACME"])
      expect(yield* isStored(h, checkpointId)).toBe(false)
    }))

  it.effect("a resume that suspends again at a later phase completes the old checkpoint; the new one is stored and resumable", () =>
    Effect.gen(function*() {
      const { tools, trades } = gatedTrades()
      const h = yield* makeHarness({
        tools,
        approval: tradesNeedApproval,
        script: { plans: [plan([tradeStep("t1")], false), plan([tradeStep("t2")])], synthesis: "bought twice" }
      })
      const first = yield* h.pipeline.process({ request: "buy ACME twice", requestId: "claim-again" })
      if (first._tag !== "Suspended") throw new Error("expected a suspension")
      const second = yield* h.pipeline.resume(first.checkpoint.checkpointId, "approve")
      if (second._tag !== "Suspended") throw new Error(`expected a second suspension, got ${second._tag}`)
      expect(second.checkpoint.phase).toBe(2)
      expect(second.checkpoint.checkpointId).not.toBe(first.checkpoint.checkpointId)
      expect(yield* isStored(h, first.checkpoint.checkpointId)).toBe(false)
      expect(yield* isStored(h, second.checkpoint.checkpointId)).toBe(true)
      const done = yield* h.pipeline.resume(second.checkpoint.checkpointId, "approve")
      expect(done._tag === "Completed" && done.response.response).toBe("bought twice")
      expect(trades).toEqual(["buy 10 ACME", "buy 10 ACME"])
      expect(yield* isStored(h, second.checkpoint.checkpointId)).toBe(false)
    }))

  it.effect("a rejected resume completes its checkpoint like any success: it is gone, and the decision cannot be taken twice", () =>
    Effect.gen(function*() {
      const { tools, trades } = gatedTrades()
      const { checkpointId, h } = yield* suspendedTrade("claim-reject", { tools })
      const rejected = yield* h.pipeline.resume(checkpointId, "reject")
      expect(rejected).toMatchObject({ _tag: "Rejected", requestId: "claim-reject", checkpointId })
      expect(yield* isStored(h, checkpointId)).toBe(false)
      expect((yield* h.record("claim-reject")).lifecycle?.status).toBe("rejected")
      expect(yield* Effect.flip(h.pipeline.resume(checkpointId, "approve"))).toMatchObject({ reason: "not_found" })
      expect(yield* Effect.flip(h.pipeline.resume(checkpointId, "reject"))).toMatchObject({ reason: "not_found" })
      expect(trades).toEqual([])
    }))
})
