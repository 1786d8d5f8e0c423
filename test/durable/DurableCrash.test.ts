/**
 * `kill -9` in the middle of an activity, with real processes (issue 24):
 *
 * - SQLite, one process: a restarted process resumes the execution by
 *   itself (it only builds its Layers) and completes it; the activity that
 *   completed before the crash does not run again, the killed one runs again
 *   with the same `Activity.idempotencyKey`, the next one runs once;
 * - PostgreSQL, two runners: the runner running the activity is killed and
 *   the survivor takes its shards over and completes the execution (the
 *   takeover time is printed: it is the figure the deployment docs quote).
 */
import { afterEach, describe, expect, it } from "vitest"
import { postgresUrl, unavailable } from "../support/Backends.js"
import {
  type CrashOutcome,
  postgresTakeover,
  sqliteCrashAndRestart,
  type Workspace,
  workspace
} from "./crashHarness.js"
import { dropClusterTables, uniqueClusterPrefix } from "./durableSupport.js"

const workspaces: Array<Workspace> = []
const open = () => {
  const ws = workspace()
  workspaces.push(ws)
  return ws
}
afterEach(async () => {
  await Promise.all(workspaces.splice(0).map((ws) => ws.cleanup()))
})

/** What every kill during B must show: A once, B twice with one key, C once, a complete result. */
const expectResumedAfterKillDuringB = (run: CrashOutcome) => {
  expect(run.starts("A").length).toBe(1)
  const b = run.starts("B")
  expect(b.length).toBe(2)
  expect(b[0]!.pid).toBe(run.killedPid)
  expect(b[1]!.pid).not.toBe(run.killedPid)
  expect(b[1]!.key).toBe(b[0]!.key)
  expect(run.starts("C").length).toBe(1)
  expect(run.result).toMatch(/^A@\d+\|B@\d+\|C@\d+$/)
  // B's stored result is the re-run's: the killed run never returned.
  expect(run.result).toContain(`B@${b[1]!.pid}`)
}

describe("durable engine: kill -9 during an activity", () => {
  it(
    "SQLite: a restarted process resumes by itself, completed activities are not re-run, the killed one re-runs with the same idempotency key",
    async () => {
      const run = await sqliteCrashAndRestart(open(), { activity: "B" }, `crash-sqlite-${Date.now()}`)
      expectResumedAfterKillDuringB(run)
      console.log(
        `sqlite restart: kill → re-run of B ${run.killToRestartMillis} ms, → complete ${run.killToCompleteMillis} ms`
      )
    },
    45_000
  )

  const skip = unavailable("postgres")
  it.skipIf(skip !== undefined)(
    "PostgreSQL, two runners: the survivor takes the killed runner's shards over and completes the execution",
    async () => {
      const prefix = uniqueClusterPrefix()
      try {
        const run = await postgresTakeover(open(), { activity: "B" }, `crash-pg-${Date.now()}`, {
          url: postgresUrl ?? "",
          prefix
        })
        expectResumedAfterKillDuringB(run)
        console.log(
          `postgres takeover: kill → re-run of B on the survivor ${run.killToRestartMillis} ms, → complete ${run.killToCompleteMillis} ms`
        )
        // Tuned failover: seconds, not the 35 s of the cluster's defaults.
        expect(run.killToRestartMillis).toBeLessThan(15_000)
      } finally {
        // The runners first (the workspace's cleanup), then their tables.
        await Promise.all(workspaces.splice(0).map((ws) => ws.cleanup()))
        await dropClusterTables(prefix)
      }
    },
    60_000
  )
})
