/**
 * One process of the store-startup race (`node --import tsx storeStartup.ts`):
 * a long-lived worker that, for every trial the test sends on stdin (one JSON
 * line), opens the stores on that trial's fresh database — exactly as an agent
 * process does when it starts: the execution and checkpoint stores over one
 * client, and the activity store over a second connection — uses them, closes
 * them, and reports on stdout (one JSON event per line).
 *
 * The worker stays alive between trials so that every trial's processes open
 * the database within a millisecond or two of each other (`startAt`, a wall
 * clock instant all workers wait for): process start-up jitter, hundreds of
 * milliseconds under tsx, would otherwise hide the race this test is about.
 *
 * Events: `ready` once loaded; per trial `opened` (with what the process read
 * back) or `failed` (with the error's message and its cause).
 */
import { Cause, Effect, Exit, Layer, Option } from "effect"
import * as readline from "node:readline"
// The store modules only, not the package's index: eight workers load faster on two cores.
import * as ActivityStore from "../../../src/stores/ActivityStore.js"
import * as CheckpointStore from "../../../src/stores/CheckpointStore.js"
import * as ExecutionStore from "../../../src/stores/ExecutionStore.js"
import * as Postgres from "../../../src/stores/sql/Postgres.js"
import * as Sqlite from "../../../src/stores/sql/Sqlite.js"

/** One trial: where the stores live and when to open them. */
export interface Trial {
  readonly trial: number
  readonly store: { readonly sqlite: string } | { readonly postgres: string; readonly tablePrefix: string }
  /** Epoch ms at which every worker opens the database. */
  readonly startAt: number
}

const emit = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`)

const layersFor = (store: Trial["store"]) =>
  "sqlite" in store
    ? Layer.merge(
      Sqlite.layer({ filename: store.sqlite }),
      Sqlite.layerActivityStore({ filename: store.sqlite })
    )
    : Layer.merge(
      Postgres.layer({ url: store.postgres, tablePrefix: store.tablePrefix, maxConnections: 3 }),
      Postgres.layerActivityStore({ url: store.postgres, tablePrefix: store.tablePrefix, maxConnections: 2 })
    )

const use = (trial: number) =>
  Effect.gen(function*() {
    const records = yield* ExecutionStore.ExecutionStore
    const checkpoints = yield* CheckpointStore.CheckpointStore
    const activity = yield* ActivityStore.ActivityStore
    const requestId = `startup-${trial}-${process.pid}`
    const created = yield* records.create({
      schemaVersion: 1,
      requestId,
      recordRevision: 1,
      mode: "pipeline",
      request: "start up",
      metadata: {},
      lifecycle: { status: "running", startedAt: 0 },
      phases: [],
      hookInvocations: [],
      diagnostics: []
    })
    const readBack = Option.isSome(yield* records.get(requestId))
    const noCheckpoint = Option.isNone(yield* checkpoints.get(`none-${requestId}`))
    yield* activity.announce(
      { signalId: requestId, domain: "startup", agent: "worker", requestId, summary: "starting" },
      "1 minute"
    )
    const signals = yield* activity.listActive("startup")
    return { created, readBack, noCheckpoint, sawOwnSignal: signals.some((s) => s.signalId === requestId) }
  })

const runTrial = async (trial: Trial): Promise<void> => {
  const wait = trial.startAt - Date.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  const exit = await Effect.runPromiseExit(Effect.scoped(Effect.provide(use(trial.trial), layersFor(trial.store))))
  if (Exit.isSuccess(exit)) emit({ event: "opened", trial: trial.trial, pid: process.pid, ...exit.value })
  else {
    const failure = Cause.squash(exit.cause)
    emit({
      event: "failed",
      trial: trial.trial,
      pid: process.pid,
      error: failure instanceof Error ? failure.message : String(failure),
      cause: Cause.pretty(exit.cause)
    })
  }
}

// Trials one at a time, in the order they come.
let queue = Promise.resolve()
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "") return
  const trial: Trial = JSON.parse(line)
  queue = queue.then(() => runTrial(trial))
}).on("close", () => {
  void queue.then(() => process.exit(0))
})
emit({ event: "ready", pid: process.pid })
