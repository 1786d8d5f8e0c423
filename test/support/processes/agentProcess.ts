/**
 * One agent process for the multi-process store tests (`node --import tsx
 * agentProcess.ts '<command JSON>'`). It talks to the test on stdout, one
 * JSON event per line, and shares the test's SQLite file or PostgreSQL
 * tables — the only thing two agent processes share in production.
 *
 * Commands:
 * - `suspend`: a request whose plan needs approval; an `audit` hook announces
 *   a pending effect and completes it from a detached fiber once
 *   `releaseFile` exists (after the request was suspended — a late update).
 *   Prints `suspended`, then `effect-done`, then exits.
 * - `resume`: approves `checkpointId`; the tool prints `tool-started` and
 *   takes `toolMillis` (and, with `holdFile`, until that file exists).
 *   Prints `result` or `error`.
 * - `hang`: a request whose tool prints `tool-started` and never returns
 *   (the test kills the process).
 * - `write-revisions`: saves snapshots of one record with the given
 *   revisions (racing another process doing the same). Prints `written`
 *   with what each save returned.
 */
import { Tool } from "@effect/ai"
import { Deferred, Effect, Layer, Redacted, Schema } from "effect"
import {
  Agent,
  Approval,
  CheckpointKey,
  CheckpointStore,
  ExecutionStore,
  Hook,
  HookEffects,
  Pipeline,
  ScriptedModel,
  ToolRegistry
} from "effect-agent-pipeline"
import * as Postgres from "effect-agent-pipeline/postgres"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import * as fs from "node:fs"

export interface Command {
  readonly action: "suspend" | "resume" | "hang" | "write-revisions"
  readonly store: { readonly sqlite: string } | { readonly postgres: string; readonly tablePrefix: string }
  readonly requestId?: string
  readonly checkpointId?: string
  readonly releaseFile?: string
  readonly toolMillis?: number
  /** `resume`: the tool also waits until this file exists. */
  readonly holdFile?: string
  /** `write-revisions`: the revisions this process saves, in order. */
  readonly revisions?: ReadonlyArray<number>
  /**
   * The checkpoint key (hex) every process of one test shares, as processes
   * resuming each other's checkpoints must (otherwise each has a random key
   * and a resume elsewhere is refused as tampered).
   */
  readonly checkpointKey?: string
}

const command: Command = JSON.parse(process.argv[2] ?? "{}")
const emit = (event: Record<string, unknown>) => Effect.sync(() => process.stdout.write(`${JSON.stringify(event)}\n`))

const Work = Tool.make("work", {
  description: "Does the work.",
  parameters: { q: Schema.String },
  success: Schema.String
})
const work = ToolRegistry.entry({
  namespace: "proc",
  agent: "worker",
  tool: Work,
  handler: ({ q }) =>
    Effect.gen(function*() {
      yield* emit({ event: "tool-started", pid: process.pid })
      if (command.action === "hang") return yield* Effect.never
      yield* Effect.sleep(command.toolMillis ?? 0)
      const hold = command.holdFile
      if (hold !== undefined) { while (!fs.existsSync(hold)) yield* Effect.sleep("20 millis") }
      return `worked on ${q}`
    })
})

const plan = {
  steps: [{ step_id: "w1", namespace: "proc", agent: "worker", capability: "work", parameters: { q: "x" } }],
  terminal: true
}

/** Completed by the detached fiber once its late update was written. */
const effectDone = Effect.runSync(Deferred.make<void>())

/** Announces a pending effect; a detached fiber completes it once the release file exists. */
const audit = Hook.make({
  name: "audit",
  beforePlanning: () =>
    Effect.gen(function*() {
      yield* HookEffects.report({ effectId: "audit-write", name: "Audit write", status: "pending" })
      const release = command.releaseFile
      if (release === undefined) return
      yield* Effect.forkDaemon(
        Effect.gen(function*() {
          while (!fs.existsSync(release)) yield* Effect.sleep("20 millis")
          yield* HookEffects.report({
            effectId: "audit-write",
            name: "Audit write",
            status: "succeeded",
            data: { by: process.pid },
            summary: "written after the request was suspended"
          })
          yield* emit({ event: "effect-done" })
          yield* Deferred.succeed(effectDone, undefined)
        }).pipe(Effect.orDie)
      )
    }).pipe(Effect.orDie)
})

const stores: Layer.Layer<
  ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore,
  ExecutionStore.ExecutionStoreError
> = "sqlite" in command.store
  ? Sqlite.layer({ filename: command.store.sqlite })
  : Postgres.layer({ url: command.store.postgres, tablePrefix: command.store.tablePrefix })

const agent = Agent.layer({
  model: ScriptedModel.layer({ plans: [plan], synthesis: "done" }),
  tools: [work],
  hooks: [audit],
  approval: command.action === "suspend"
    ? { evaluate: () => Effect.succeed(Approval.suspend("needs a human")) }
    : undefined,
  options: { recordLease: "1 second" },
  executionStore: stores,
  checkpointStore: stores,
  checkpointKey: command.checkpointKey === undefined
    ? CheckpointKey.layerRandom
    : CheckpointKey.layer(Redacted.make(command.checkpointKey))
})

const program = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  switch (command.action) {
    case "suspend": {
      const result = yield* pipeline.process({ request: "do the work", requestId: command.requestId })
      if (result._tag !== "Suspended") return yield* emit({ event: "unexpected", tag: result._tag })
      yield* emit({ event: "suspended", checkpointId: result.checkpoint.checkpointId })
      // Stay alive until the detached fiber's late update is written.
      if (command.releaseFile !== undefined) yield* Deferred.await(effectDone)
      return
    }
    case "resume": {
      const outcome = yield* Effect.either(pipeline.resume(command.checkpointId ?? "", "approve"))
      if (outcome._tag === "Right") return yield* emit({ event: "result", tag: outcome.right._tag })
      const error = outcome.left
      return yield* emit({ event: "error", tag: error._tag, reason: "reason" in error ? error.reason : undefined })
    }
    case "hang": {
      yield* pipeline.process({ request: "do the work", requestId: command.requestId })
      return
    }
    case "write-revisions": {
      const store = yield* ExecutionStore.ExecutionStore
      const results: Array<string> = []
      for (const revision of command.revisions ?? []) {
        results.push(
          yield* store.save({
            schemaVersion: 1,
            requestId: command.requestId ?? "race",
            recordRevision: revision,
            mode: "pipeline",
            request: "race",
            metadata: {},
            lifecycle: { status: "running", startedAt: 0 },
            phases: [],
            hookInvocations: [],
            finalResponse: `rev-${revision} by ${process.pid}`,
            diagnostics: []
          })
        )
      }
      return yield* emit({ event: "written", results })
    }
  }
})

Effect.runPromise(Effect.scoped(Effect.provide(program, agent))).then(
  () => process.exit(0),
  (error) => {
    process.stdout.write(`${JSON.stringify({ event: "crash", error: String(error) })}\n`)
    process.exit(1)
  }
)
