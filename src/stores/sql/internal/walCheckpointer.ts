/**
 * The WAL checkpoints of a SQLite file, off the event loop (issue 20).
 * `better-sqlite3` is synchronous: the checkpoint SQLite runs after a
 * commit once the WAL holds `wal_autocheckpoint` pages — copying them into
 * the database file and syncing both (`synchronous = NORMAL`) — stopped
 * every request of the process for milliseconds at a time, about half of
 * what a recorded request spent in SQLite (a 16-row batch of 5.7 KB records:
 * 50 µs a row with it, 24 µs without; its worst batch 11–15 ms, then
 * 0.8 ms).
 *
 * A worker thread with its own connection to the file runs a `PASSIVE`
 * checkpoint every {@link everyMillis}: it never blocks the writer, and it
 * syncs as the client's connection would (the same `synchronous`), so what
 * a crash or a power loss can lose is unchanged. The client's connection
 * keeps a checkpoint of its own, at {@link fallbackPages} pages: should the
 * worker fail or fall behind, the WAL stays bounded. Several processes on
 * one file each run one; SQLite lets one checkpoint run at a time.
 */
import { Effect, Runtime, type Scope } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

/** How often the worker checkpoints. */
export const everyMillis = 100

/** The client connection's own checkpoint threshold (SQLite's default is 1,000 pages). */
export const fallbackPages = 10_000

// CommonJS (an `eval` worker): the driver is required by its resolved path.
// A failed checkpoint is reported once, and the worker stops checkpointing.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.filename, { fileMustExist: true })
db.pragma("synchronous = " + workerData.synchronous)
const timer = setInterval(() => {
  try { db.pragma("wal_checkpoint(PASSIVE)") } catch (error) {
    clearInterval(timer)
    parentPort.postMessage(String(error))
  }
}, workerData.everyMillis)
parentPort.once("message", () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

/**
 * Runs the checkpoints of `filename` in a worker thread for the current
 * Scope. A worker that cannot start, or fails, leaves the checkpoints to
 * the client's connection, as before, with one warning.
 */
export const start = (
  filename: string,
  synchronous: "NORMAL" | "FULL"
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const warn = (message: string, detail: string) => void Runtime.runFork(runtime, Effect.logWarning(message, detail))
    const worker = yield* Effect.sync(() => {
      try {
        const driver = createRequire(import.meta.url).resolve("better-sqlite3")
        return new Worker(workerSource, { eval: true, workerData: { driver, filename, synchronous, everyMillis } })
      } catch (error) {
        warn("SQLite checkpoint worker not started", String(error))
        return undefined
      }
    })
    if (worker === undefined) return
    let exited = false
    const exit = Effect.async<void>((resume) => {
      if (exited) resume(Effect.void)
      else worker.once("exit", () => resume(Effect.void))
    })
    worker.once("exit", () => void (exited = true))
    worker.on("error", (error) => warn("SQLite checkpoint worker stopped", String(error)))
    worker.on("message", (message) => warn("SQLite checkpoint failed", String(message)))
    // It never keeps a process alive.
    worker.unref()
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        if (exited) return Effect.void
        // Asked to stop between checkpoints, not terminated in one.
        worker.postMessage("close")
        return exit.pipe(
          Effect.timeout("2 seconds"),
          Effect.catchAll(() => Effect.promise(() => worker.terminate()))
        )
      })
    )
  })
