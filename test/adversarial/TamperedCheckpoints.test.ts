/**
 * Issue 17, class 1 — "a tampered checkpoint runs a forbidden tool"
 * (DESIGN §7 "an approval binds to what was approved"). At process level:
 * agents keep their records and checkpoints in a real SQLite file, a request
 * is suspended by an approval policy with a harmless tool (`stock_quote`) in
 * its plan, and the required after-planning hook forbids `execute_trade`.
 * Another OS process opens the same file with its own SQLite connection
 * (`test/support/processes/tamperCheckpoint.ts`) and rewrites the stored
 * checkpoint; then a human approves it, in a second agent instance.
 *
 * What must hold: the resume refuses it as `CheckpointError` `tampered` and
 * nothing runs (every tool handler's calls are counted); the request's
 * record says so (a diagnostic; its lifecycle stays `suspended`); a warning
 * is logged; the checkpoint stays stored, unclaimed, and is refused again on
 * every later try. Whatever the seal says, an approved resume runs the
 * required hook again on the stored plan. A decision other than exactly
 * `"approve"` / `"reject"` is `invalid_decision` before anything is claimed;
 * a plan digest the approver echoes must be the checkpoint's. The embedded
 * default keeps the key in a file beside the database (0600), which a second
 * agent reuses; PostgreSQL needs `AGENT_CHECKPOINT_KEY`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Context, Effect, Exit, Layer, Logger, Option } from "effect"
import {
  Agent,
  Approval,
  CheckpointKey,
  CheckpointStore,
  type ExecutionRecord,
  ExecutionStore,
  Hook,
  Pipeline,
  type PipelineError,
  ScriptedModel,
  ToolRegistry
} from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ExecuteTrade, NAMESPACE, StockQuote } from "../../examples/shared/DemoTools.js"
import type { TamperCommand, TamperMode } from "../support/processes/tamperCheckpoint.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const tamperScript = fileURLToPath(new URL("../support/processes/tamperCheckpoint.ts", import.meta.url))

/** The part of better-sqlite3 this test reads the file with (the agent never sees this connection). */
interface Connection {
  prepare(sql: string): { all(...params: ReadonlyArray<unknown>): ReadonlyArray<unknown> }
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new(
  file: string,
  options: { readonly readonly: boolean }
) => Connection

// ---------------------------------------------------------------------------
// One agent's world: a SQLite file, counted tools, a required hook whose rule
// can change, an ordinary after-planning hook that must never run on resume
// ---------------------------------------------------------------------------

const quotePlan = {
  steps: [{
    step_id: "q1",
    namespace: NAMESPACE,
    agent: "stock-service",
    capability: "stock_quote",
    parameters: { symbol: "ACME" }
  }],
  terminal: true
}

interface World {
  readonly dir: string
  readonly file: string
  readonly keyFile: string
  readonly calls: { quote: number; trade: number; required: number; ordinary: number }
  /** Capabilities the required hook refuses besides `execute_trade` (its rule, changeable). */
  readonly frozen: Set<string>
  readonly tools: ReadonlyArray<ToolRegistry.ToolEntry<never>>
  readonly hooks: ReadonlyArray<Hook.Hook<never>>
}

const makeWorld = (): World => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-tampered-"))
  const file = path.join(dir, "agent.db")
  const calls = { quote: 0, trade: 0, required: 0, ordinary: 0 }
  const frozen = new Set<string>()
  const tools = [
    ToolRegistry.entry({
      namespace: NAMESPACE,
      agent: "stock-service",
      tool: StockQuote,
      handler: ({ symbol }) => Effect.sync(() => (calls.quote++, { symbol, price: 12.5, currency: "USD" }))
    }),
    ToolRegistry.entry({
      namespace: NAMESPACE,
      agent: "trading-service",
      tool: ExecuteTrade,
      handler: ({ quantity, side, symbol }) =>
        Effect.sync(() => (calls.trade++, { orderId: `order-${side}-${symbol}-${quantity}`, status: "accepted" }))
    })
  ]
  const hooks = [
    Hook.make({ name: "observer", afterPlanning: (_ctx, plan) => Effect.sync(() => (calls.ordinary++, plan)) }),
    Hook.required({
      name: "no-trades",
      afterPlanning: (_ctx, plan) =>
        Effect.suspend(() => {
          calls.required++
          const refused = plan.steps.find((s) => s.capability === "execute_trade" || frozen.has(s.capability))
          return refused === undefined
            ? Effect.succeed(plan)
            : Effect.fail(new Error(`${refused.capability} is not allowed`))
        })
    })
  ]
  return { dir, file, keyFile: `${file}.checkpoint-key`, calls, frozen, tools, hooks }
}

const suspendEveryPlan: Approval.ApprovalPolicy["Type"] = {
  evaluate: () => Effect.succeed(Approval.suspend("a human signs off every plan"))
}

/** One agent instance over the world's SQLite file: its own client, model and key (from the key file unless given). */
const agentLayer = (world: World, key?: Layer.Layer<CheckpointKey.CheckpointKey>) => {
  const stores = Sqlite.layer({ filename: world.file })
  return Agent.layer({
    model: ScriptedModel.layer({ plans: [quotePlan], synthesis: "ACME is at 12.5" }),
    tools: world.tools,
    hooks: world.hooks,
    approval: suspendEveryPlan,
    executionStore: stores,
    checkpointStore: stores,
    checkpointKey: key ?? CheckpointKey.layerFile(world.keyFile)
  })
}

interface Services {
  readonly pipeline: Pipeline.Pipeline.Service
  readonly store: ExecutionStore.ExecutionStore.Service
  readonly checkpoints: CheckpointStore.CheckpointStore.Service
}

/** Builds an agent instance, runs `body` with it, and shuts it down (as a process would). */
const withAgent = <A, E, E2>(
  layer: Layer.Layer<Agent.Services, E2>,
  body: (services: Services) => Effect.Effect<A, E>
) =>
  Effect.scoped(
    Effect.flatMap(Layer.build(layer), (context) =>
      body({
        pipeline: Context.get(context, Pipeline.Pipeline),
        store: Context.get(context, ExecutionStore.ExecutionStore),
        checkpoints: Context.get(context, CheckpointStore.CheckpointStore)
      }))
  )

/** Suspends a request in its own agent instance; returns the checkpoint the approver is shown. */
const suspend = (world: World, requestId: string) =>
  withAgent(agentLayer(world), ({ pipeline }) =>
    Effect.gen(function*() {
      const result = yield* pipeline.process({ request: "What is ACME trading at?", requestId })
      if (result._tag !== "Suspended") return yield* Effect.dieMessage(`expected a suspension, got ${result._tag}`)
      return result.checkpoint
    }))

/** Another process opens the SQLite file and rewrites the checkpoint's body. */
const tamper = (world: World, checkpointId: string, mode: TamperMode, source?: string) =>
  Effect.tryPromise(() => {
    const command: TamperCommand = { file: world.file, checkpointId, mode, ...(source === undefined ? {} : { source }) }
    return new Promise<Record<string, unknown>>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--import", "tsx", tamperScript, JSON.stringify(command)],
        { cwd: root, timeout: 60_000 },
        (error, stdout, stderr) => {
          const last = stdout.trim().split("\n").at(-1) ?? ""
          try {
            const event: Record<string, unknown> = JSON.parse(last)
            if (error === null && event["event"] === "tampered") resolve(event)
            else reject(new Error(`tamper process failed: ${last}\n${stderr}`))
          } catch {
            reject(new Error(`tamper process failed: ${String(error)}\n${stdout}\n${stderr}`))
          }
        }
      )
    )
  }).pipe(Effect.orDie, Effect.tap((event) => expect(event["changes"]).toBe(1)))

/** The checkpoint's row as the file holds it (a read-only connection of the test's own). */
const storedRow = (world: World, checkpointId: string) =>
  Effect.sync(() => {
    const db = new Database(world.file, { readonly: true })
    try {
      return db.prepare("SELECT claim_owner, length(body) AS size FROM eap_checkpoints WHERE checkpoint_id = ?").all(
        checkpointId
      )
    } finally {
      db.close()
    }
  })

/** The stored record of a request (fails the test if absent). */
const recordOf = (store: ExecutionStore.ExecutionStore.Service, requestId: string) =>
  Effect.flatMap(Effect.orDie(store.get(requestId)), (found) =>
    Option.match(found, {
      onNone: () => Effect.dieMessage(`no record for ${requestId}`),
      onSome: (record): Effect.Effect<ExecutionRecord.ExecutionRecord> => Effect.succeed(record)
    }))

/** Runs `effect` with a logger that keeps the warnings (and lets nothing else through). */
const keepingWarnings = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel.label === "WARN") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
    })
    return Effect.map(
      Effect.exit(effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))),
      (exit) => ({ exit, warnings })
    )
  })

const failureOf = <A>(exit: Exit.Exit<A, PipelineError.PipelineError>) => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  return Option.getOrThrowWith(Cause.failureOption(exit.cause), () => new Error(Cause.pretty(exit.cause)))
}

const cleanup = (world: World) => Effect.sync(() => fs.rmSync(world.dir, { recursive: true, force: true }))

// ---------------------------------------------------------------------------
// Rewritten in the SQLite file → tampered, nothing runs
// ---------------------------------------------------------------------------

const rewrites: ReadonlyArray<readonly [TamperMode, string]> = [
  ["forbidden_plan", "a plan rewritten to the forbidden tool"],
  ["forbidden_plan_redigested", "a plan rewritten to the forbidden tool, its digest recomputed"],
  ["enrichments", "only the enrichments flipped"],
  ["resigned", "a forbidden plan re-signed with a wrong key"],
  ["undecodable", "a body that does not decode"],
  ["copied_from", "another checkpoint's intact, validly sealed body copied under its id"]
]

describe("tampered checkpoints (issue 17, class 1): a checkpoint rewritten in the SQLite file never runs", () => {
  for (const [mode, label] of rewrites) {
    it.effect(`tampered checkpoints: ${label} is refused as tampered; the forbidden tool never runs, the record says so, and the checkpoint stays stored and unresumable`, () => {
      const world = makeWorld()
      return Effect.gen(function*() {
        const requestId = `r-${mode}`
        const checkpoint = yield* suspend(world, requestId)
        const source = mode === "copied_from" ? yield* suspend(world, `${requestId}-source`) : undefined
        expect(world.calls).toEqual({ quote: 0, trade: 0, required: source ? 2 : 1, ordinary: source ? 2 : 1 })
        yield* tamper(world, checkpoint.checkpointId, mode, source?.checkpointId)

        // The human approves — in another agent instance over the same file and key.
        yield* withAgent(agentLayer(world), ({ checkpoints, pipeline, store }) =>
          Effect.gen(function*() {
            const { exit, warnings } = yield* keepingWarnings(pipeline.resume(checkpoint.checkpointId, "approve"))
            const error = failureOf(exit)
            expect(error).toMatchObject({
              _tag: "CheckpointError",
              reason: "tampered",
              checkpointId: checkpoint.checkpointId
            })
            expect(error.message).toContain(`checkpoint ${checkpoint.checkpointId} tampered`)
            // Nothing ran: no tool, and not even the required hook (the seal is checked first).
            expect(world.calls).toEqual({ quote: 0, trade: 0, required: source ? 2 : 1, ordinary: source ? 2 : 1 })
            expect(warnings.filter((w) => w.includes("refused (tampered)"))).toHaveLength(1)

            // The record says so; its lifecycle is unchanged. (A copied body is
            // authentic only about its own request: the refusal goes there.)
            const record = yield* recordOf(store, requestId)
            expect(record.lifecycle?.status).toBe("suspended")
            expect(record.mode).toBe("pipeline")
            expect(record.phases).toEqual([])
            const noted = source === undefined ? record : yield* recordOf(store, source.requestId)
            expect(noted.lifecycle?.status).toBe("suspended")
            expect(
              noted.diagnostics.filter((d) => d.includes(`checkpoint ${checkpoint.checkpointId} refused (tampered)`))
            )
              .toHaveLength(1)

            // Still stored (for forensics), unclaimed — and refused again, whatever the decision.
            expect(yield* storedRow(world, checkpoint.checkpointId)).toEqual([
              { claim_owner: null, size: expect.any(Number) }
            ])
            for (const decision of ["approve", "reject"] as const) {
              const again = yield* Effect.flip(pipeline.resume(checkpoint.checkpointId, decision))
              expect(again).toMatchObject({ _tag: "CheckpointError", reason: "tampered" })
            }
            expect(yield* storedRow(world, checkpoint.checkpointId)).toEqual([
              { claim_owner: null, size: expect.any(Number) }
            ])
            if (mode === "undecodable") {
              expect(Exit.isFailure(yield* Effect.exit(checkpoints.get(checkpoint.checkpointId)))).toBe(true)
            }
            expect(world.calls.trade).toBe(0)
            expect(world.calls.quote).toBe(0)
            expect((yield* recordOf(store, requestId)).lifecycle?.status).toBe("suspended")

            // Only the tampered checkpoint is refused: the one it was copied from resumes.
            if (source !== undefined) {
              const resumed = yield* pipeline.resume(source.checkpointId, "approve")
              expect(resumed._tag).toBe("Completed")
              expect(world.calls).toMatchObject({ quote: 1, trade: 0 })
            }
          }))
      }).pipe(Effect.ensuring(cleanup(world)))
    })
  }

  it.effect("tampered checkpoints: a body rewritten after the pre-claim check is verified again on what the claim returns — refused, released, nothing runs", () => {
    const world = makeWorld()
    return Effect.gen(function*() {
      const checkpoint = yield* suspend(world, "r-race")
      // A store whose claim hands back a rewritten body (a write between `get` and `claim`).
      const forbidden = {
        ...checkpoint.plan,
        steps: [{
          ...checkpoint.plan.steps[0]!,
          agent: "trading-service",
          capability: "execute_trade",
          parameters: { symbol: "ACME", quantity: 1000, side: "buy" }
        }]
      }
      const racing = Layer.effect(
        CheckpointStore.CheckpointStore,
        Effect.map(CheckpointStore.CheckpointStore, (inner): CheckpointStore.CheckpointStore.Service => ({
          ...inner,
          claim: (checkpointId, options) =>
            Effect.map(inner.claim(checkpointId, options), (result) =>
              result._tag === "Claimed"
                ? CheckpointStore.ClaimResult.Claimed({
                  claim: result.claim,
                  checkpoint: new Approval.Checkpoint({ ...result.checkpoint, plan: forbidden })
                })
                : result)
        }))
      ).pipe(Layer.provide(Sqlite.layerCheckpointStore({ filename: world.file })))
      const layer = Agent.layer({
        model: ScriptedModel.layer({ plans: [], synthesis: "never" }),
        tools: world.tools,
        hooks: world.hooks,
        executionStore: Sqlite.layerExecutionStore({ filename: world.file }),
        checkpointStore: racing,
        checkpointKey: CheckpointKey.layerFile(world.keyFile)
      })
      yield* withAgent(layer, ({ pipeline, store }) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(pipeline.resume(checkpoint.checkpointId, "approve"))
          expect(error).toMatchObject({ _tag: "CheckpointError", reason: "tampered" })
          expect(world.calls).toMatchObject({ quote: 0, trade: 0, required: 1 })
          // The claim it took was released.
          expect(yield* storedRow(world, checkpoint.checkpointId)).toEqual([{
            claim_owner: null,
            size: expect.any(Number)
          }])
          const record = yield* recordOf(store, "r-race")
          expect(record.lifecycle?.status).toBe("suspended")
          expect(record.diagnostics.some((d) => d.includes("refused (tampered)"))).toBe(true)
        }))
      // The untouched checkpoint still resumes with the real store.
      yield* withAgent(agentLayer(world), ({ pipeline }) => pipeline.resume(checkpoint.checkpointId, "approve"))
      expect(world.calls).toMatchObject({ quote: 1, trade: 0 })
    }).pipe(Effect.ensuring(cleanup(world)))
  })
})

// ---------------------------------------------------------------------------
// The required boundary runs again on every approved resume
// ---------------------------------------------------------------------------

describe("tampered checkpoints: an approved resume runs the required boundary again", () => {
  it.effect("tampered checkpoints: a valid checkpoint whose plan the required hook now rejects fails with RequiredAfterPlanningError, runs no tool, and resumes once the rule allows it again", () => {
    const world = makeWorld()
    return Effect.gen(function*() {
      const checkpoint = yield* suspend(world, "r-rule")
      // The rule changed between suspension and resume: quotes are frozen now.
      world.frozen.add("stock_quote")
      yield* withAgent(agentLayer(world), ({ pipeline, store }) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(pipeline.resume(checkpoint.checkpointId, "approve"))
          expect(error).toMatchObject({ _tag: "RequiredAfterPlanningError", hookName: "no-trades", phase: 1 })
          expect(error.message).toContain("stock_quote is not allowed")
          // C9: nothing ran; C8: the ordinary after-planning hook did not run again.
          expect(world.calls).toEqual({ quote: 0, trade: 0, required: 2, ordinary: 1 })
          const failed = yield* recordOf(store, "r-rule")
          expect(failed.lifecycle).toMatchObject({ status: "failed", errorTag: "RequiredAfterPlanningError" })
          expect(failed.phases).toEqual([])
          const refusal = failed.hookInvocations.filter((i) => i.stage === "after_planning").at(-1)
          expect(refusal).toMatchObject({ name: "no-trades", outcome: "failed", phase: 1 })

          // A failed resume releases its claim: once the rule allows the plan again, it runs.
          world.frozen.delete("stock_quote")
          const resumed = yield* pipeline.resume(checkpoint.checkpointId, "approve")
          expect(resumed._tag === "Completed" && resumed.response.response).toBe("ACME is at 12.5")
          expect(world.calls).toEqual({ quote: 1, trade: 0, required: 3, ordinary: 1 })
          const done = yield* recordOf(store, "r-rule")
          expect(done.lifecycle?.status).toBe("succeeded")
          const accepted = done.hookInvocations.filter((i) => i.stage === "after_planning" && i.name === "no-trades")
          expect(accepted.map((i) => i.outcome)).toEqual(["succeeded", "failed", "succeeded"])
          expect(accepted.at(-1)?.decision).toEqual({ policy: "fail_closed", action: "continue", reason: "accepted" })
          expect(done.hookInvocations.filter((i) => i.name === "observer")).toHaveLength(1)
        }))
    }).pipe(Effect.ensuring(cleanup(world)))
  })

  it.effect("tampered checkpoints: a rejection runs nothing — not the required hook either — and completes the checkpoint", () => {
    const world = makeWorld()
    return Effect.gen(function*() {
      const checkpoint = yield* suspend(world, "r-reject")
      yield* withAgent(agentLayer(world), ({ pipeline }) =>
        Effect.gen(function*() {
          const rejected = yield* pipeline.resume(checkpoint.checkpointId, "reject")
          expect(rejected._tag).toBe("Rejected")
          expect(world.calls).toEqual({ quote: 0, trade: 0, required: 1, ordinary: 1 })
          expect(yield* storedRow(world, checkpoint.checkpointId)).toEqual([])
        }))
    }).pipe(Effect.ensuring(cleanup(world)))
  })
})

// ---------------------------------------------------------------------------
// The decision, and the plan the approver saw
// ---------------------------------------------------------------------------

describe("tampered checkpoints: the decision is exactly approve or reject, on the plan the approver saw", () => {
  it.effect("tampered checkpoints: \"APPROVE\" (or any other value a JavaScript caller passes) is invalid_decision before anything is claimed; \"approve\" then runs", () => {
    const world = makeWorld()
    return Effect.gen(function*() {
      const checkpoint = yield* suspend(world, "r-decision")
      yield* withAgent(agentLayer(world), ({ pipeline, store }) =>
        Effect.gen(function*() {
          const before = yield* recordOf(store, "r-decision")
          // What an untyped caller can pass: the type rejects these at the call site.
          const untyped: ReadonlyArray<unknown> = [
            "APPROVE",
            "Approve",
            " approve",
            "approved",
            "yes",
            true,
            1,
            null,
            undefined,
            {}
          ]
          for (const decision of untyped) {
            // @ts-expect-error — a JavaScript caller, or a server passing a request body through
            const error = yield* Effect.flip(pipeline.resume(checkpoint.checkpointId, decision))
            expect(error).toMatchObject({
              _tag: "CheckpointError",
              reason: "invalid_decision",
              checkpointId: checkpoint.checkpointId
            })
            expect(error.message).toContain("exactly \"approve\" or \"reject\"")
          }
          // Nothing was claimed, nothing ran, the record is as it was — and not rejected.
          expect(yield* storedRow(world, checkpoint.checkpointId)).toEqual([{
            claim_owner: null,
            size: expect.any(Number)
          }])
          expect(world.calls).toEqual({ quote: 0, trade: 0, required: 1, ordinary: 1 })
          const after = yield* recordOf(store, "r-decision")
          expect(after.recordRevision).toBe(before.recordRevision)
          expect(after.lifecycle?.status).toBe("suspended")

          const resumed = yield* pipeline.resume(checkpoint.checkpointId, "approve")
          expect(resumed._tag).toBe("Completed")
          expect(world.calls).toMatchObject({ quote: 1, trade: 0 })
        }))
    }).pipe(Effect.ensuring(cleanup(world)))
  })

  it.effect("tampered checkpoints: a planDigest echo that is not the checkpoint's is plan_mismatch and runs nothing; the digest the approver saw resumes", () => {
    const world = makeWorld()
    return Effect.gen(function*() {
      const checkpoint = yield* suspend(world, "r-digest")
      // The digest is the plan's canonical SHA-256: what a server shows and echoes.
      expect(checkpoint.planDigest).toBe(CheckpointKey.planDigest(checkpoint.plan))
      expect(checkpoint.planDigest).toMatch(/^[0-9a-f]{64}$/)
      const otherPlan = CheckpointKey.planDigest({ ...checkpoint.plan, terminal: false })
      yield* withAgent(agentLayer(world), ({ pipeline, store }) =>
        Effect.gen(function*() {
          const echoes: ReadonlyArray<Approval.ResumeOptions> = [
            { planDigest: otherPlan },
            { planDigest: checkpoint.planDigest.toUpperCase() },
            { planDigest: "" },
            // An untyped caller's options: never coerced, never a crash.
            {
              get planDigest(): string {
                throw new Error("a getter that throws")
              }
            }
          ]
          for (const options of echoes) {
            const error = yield* Effect.flip(pipeline.resume(checkpoint.checkpointId, "approve", options))
            expect(error).toMatchObject({
              _tag: "CheckpointError",
              reason: "plan_mismatch",
              checkpointId: checkpoint.checkpointId
            })
          }
          // @ts-expect-error — a JavaScript caller's number
          const numeric = yield* Effect.flip(pipeline.resume(checkpoint.checkpointId, "approve", { planDigest: 42 }))
          expect(numeric).toMatchObject({ _tag: "CheckpointError", reason: "plan_mismatch" })
          expect(world.calls).toEqual({ quote: 0, trade: 0, required: 1, ordinary: 1 })
          expect(yield* storedRow(world, checkpoint.checkpointId)).toEqual([{
            claim_owner: null,
            size: expect.any(Number)
          }])
          const record = yield* recordOf(store, "r-digest")
          expect(record.lifecycle?.status).toBe("suspended")
          expect(record.diagnostics.filter((d) => d.includes("refused (plan_mismatch)"))).toHaveLength(5)

          const resumed = yield* pipeline.resume(checkpoint.checkpointId, "approve", {
            planDigest: checkpoint.planDigest
          })
          expect(resumed._tag).toBe("Completed")
          expect(world.calls).toMatchObject({ quote: 1, trade: 0 })
        }))
    }).pipe(Effect.ensuring(cleanup(world)))
  })
})

// ---------------------------------------------------------------------------
// The key
// ---------------------------------------------------------------------------

const withConfig = (values: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(values))))

describe("tampered checkpoints: the checkpoint key", () => {
  it.effect("tampered checkpoints: the embedded default creates the key file beside the SQLite file, owner-only (0600), says so, and a second agent reuses it: the checkpoint resumes there — and an agent with another key refuses it", () => {
    const world = makeWorld()
    const configured = (requestScript: ScriptedModel.Script) =>
      Agent.layerConfig({
        model: ScriptedModel.layer(requestScript),
        tools: world.tools,
        hooks: world.hooks,
        approval: suspendEveryPlan
      }).pipe(Layer.provide(withConfig({ SQLITE_PATH: world.file })))
    return Effect.gen(function*() {
      expect(fs.existsSync(world.keyFile)).toBe(false)
      const infos: Array<string> = []
      const logger = Logger.make(({ message }) =>
        void infos.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
      )
      const checkpoint = yield* withAgent(
        configured({ plans: [quotePlan], synthesis: "unused" }),
        ({ pipeline }) =>
          Effect.gen(function*() {
            const result = yield* pipeline.process({ request: "What is ACME trading at?", requestId: "r-key" })
            if (result._tag !== "Suspended") return yield* Effect.dieMessage("expected a suspension")
            return result.checkpoint
          })
      ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))

      // Created owner-only, 32 random bytes as hex, and the log says where.
      expect(fs.statSync(world.keyFile).mode & 0o777).toBe(0o600)
      expect(fs.readFileSync(world.keyFile, "utf8")).toMatch(/^[0-9a-f]{64}\n$/)
      expect(infos.filter((line) => line.includes("created the checkpoint key file") && line.includes(world.keyFile)))
        .toHaveLength(1)
      const keyText = fs.readFileSync(world.keyFile, "utf8")

      // An agent with a key of its own (the default of Agent.layer) refuses it: tampered, nothing runs.
      yield* withAgent(agentLayer(world, CheckpointKey.layerRandom), ({ pipeline }) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(pipeline.resume(checkpoint.checkpointId, "approve"))
          expect(error).toMatchObject({ _tag: "CheckpointError", reason: "tampered" })
          expect(error.message).toContain("does not verify with this agent's checkpoint key")
        }))
      expect(world.calls).toMatchObject({ quote: 0, trade: 0 })

      // A second agent from the same configuration reuses the file (unchanged) and resumes it.
      yield* withAgent(
        configured({ plans: [], synthesis: "ACME is at 12.5" }),
        ({ pipeline }) =>
          Effect.gen(function*() {
            const resumed = yield* pipeline.resume(checkpoint.checkpointId, "approve", {
              planDigest: checkpoint.planDigest
            })
            expect(resumed._tag === "Completed" && resumed.response.response).toBe("ACME is at 12.5")
          })
      )
      expect(world.calls).toMatchObject({ quote: 1, trade: 0 })
      expect(fs.readFileSync(world.keyFile, "utf8")).toBe(keyText)
      expect(fs.statSync(world.keyFile).mode & 0o777).toBe(0o600)
      // The key never reaches the record.
      const record = yield* withAgent(configured({ plans: [], synthesis: "" }), ({ store }) => recordOf(store, "r-key"))
      expect(JSON.stringify(record)).not.toContain(keyText.trim())
    }).pipe(Effect.ensuring(cleanup(world)))
  })

  it.effect("tampered checkpoints: AGENT_STORE=postgres without AGENT_CHECKPOINT_KEY is a clear ConfigError (several processes must share one key); a short or malformed key is refused without being shown", () =>
    Effect.gen(function*() {
      const build = (values: Record<string, string>) =>
        Effect.flip(
          Effect.scoped(Layer.build(Agent.layerConfig({ tools: [] }).pipe(Layer.provide(withConfig(values)))))
        )
      // A port nothing listens on: the configuration fails before any connection.
      const missing = yield* build({
        AGENT_STORE: "postgres",
        DATABASE_URL: "postgres://nobody:secret@127.0.0.1:1/none"
      })
      expect(missing).toMatchObject({ _tag: "ConfigError", _op: "MissingData", path: ["AGENT_CHECKPOINT_KEY"] })
      expect(String(missing)).toContain("AGENT_STORE=postgres needs AGENT_CHECKPOINT_KEY")
      expect(String(missing)).toContain("same key")

      const short = "c0ffee".repeat(5)
      const refused = yield* build({ AGENT_STORE: "memory", AGENT_CHECKPOINT_KEY: short })
      expect(refused).toMatchObject({ _tag: "ConfigError", _op: "InvalidData", path: ["AGENT_CHECKPOINT_KEY"] })
      expect(String(refused)).toContain("at least 32 bytes")
      expect(String(refused)).not.toContain(short)
      const malformed = yield* build({ AGENT_STORE: "memory", AGENT_CHECKPOINT_KEY: "not a key!" })
      expect(String(malformed)).toContain("hex or base64")
    }))
})
