/**
 * An agent process over SQLite files it may not write
 * (`node --import tsx readOnlyStore.ts <file>…`), for the test that store
 * warnings carry the driver's real cause. The test makes each file (or its
 * folder) read-only and, when it runs as root — whom file modes do not stop —
 * starts this process as an unprivileged user.
 *
 * For each file in turn, an agent over it answers one request; prints one
 * JSON line per file: `answered` (the request's outcome, every warning
 * logged, and the error of a direct `create`), or `open-failed` (the stores
 * did not open: the error's message).
 */
import { Cause, Effect, Exit } from "effect"
import { ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { agentWithBoundary, keepingWarnings } from "../StoreTrouble.js"

const emit = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`)

const program = Effect.gen(function*() {
  const pipeline = yield* Pipeline.Pipeline
  const store = yield* ExecutionStore.ExecutionStore
  const result = yield* pipeline.process({ request: "What is the stock quote for ACME?", requestId: "read-only" })
  const created = yield* Effect.flip(
    store.create({
      schemaVersion: 1,
      requestId: "direct",
      recordRevision: 1,
      mode: "pipeline",
      request: "direct",
      metadata: {},
      lifecycle: { status: "running", startedAt: 0 },
      phases: [],
      hookInvocations: [],
      diagnostics: []
    })
  )
  return { tag: result._tag, createError: created.message }
})

const runOn = async (file: string): Promise<void> => {
  const warnings: Array<string> = []
  const agent = agentWithBoundary(Sqlite.layer({ filename: file, busyTimeout: "200 millis" }))
  const exit = await Effect.runPromiseExit(
    Effect.scoped(program.pipe(Effect.provide(agent), Effect.provide(keepingWarnings(warnings))))
  )
  if (Exit.isSuccess(exit)) emit({ event: "answered", file, ...exit.value, warnings })
  else {
    const failure = Cause.squash(exit.cause)
    emit({ event: "open-failed", file, message: failure instanceof Error ? failure.message : String(failure) })
  }
}

const main = async () => {
  for (const file of process.argv.slice(2)) await runOn(file)
}
main().then(
  () => process.exit(0),
  (error) => {
    emit({ event: "crash", error: String(error) })
    process.exit(1)
  }
)
