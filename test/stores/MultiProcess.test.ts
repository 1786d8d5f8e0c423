/**
 * Several OS processes over one store (DESIGN §7): the SQLite file and
 * PostgreSQL. Each agent process is `test/support/processes/agentProcess.ts`,
 * started with Node and talking JSON lines on stdout.
 *
 * - two processes writing the same record: the newest revision wins;
 * - a request suspended in one process is resumed by another; a second
 *   concurrent resume gets `already_claimed`; a late effect update from the
 *   suspending process merges into the resumed record (nothing is lost);
 * - `kill -9` in the middle of a request: the database opens, the record
 *   decodes, and once the lease ran out it reads `abandoned` with the plan
 *   and the step that was running.
 */
import { Effect, type Layer, Option } from "effect"
import { CheckpointStore, ExecutionStore } from "effect-agent-pipeline"
import * as Postgres from "effect-agent-pipeline/postgres"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { dropTablesNow, postgresClient, postgresUrl, unavailable, uniquePrefix } from "../support/Backends.js"
import type { Command } from "../support/processes/agentProcess.js"
import { start as startProcess, type TestProcess } from "../support/processes/ChildProcess.js"

/** An agent process running `command` (see `agentProcess.ts`). */
const start = (command: Command): TestProcess => startProcess("./agentProcess.ts", [JSON.stringify(command)])

interface Backend {
  readonly name: string
  readonly store: Command["store"]
  /** The stores as this test process sees them. */
  readonly layer: Layer.Layer<
    ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore,
    ExecutionStore.ExecutionStoreError
  >
  readonly cleanup: () => Promise<void>
}

const sqliteBackend = (): Backend => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-mp-"))
  const file = path.join(dir, "agent.db")
  return {
    name: "sqlite",
    store: { sqlite: file },
    layer: Sqlite.layer({ filename: file }),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true })
  }
}

const postgresBackend = (): Backend => {
  const tablePrefix = uniquePrefix()
  const url = postgresUrl ?? ""
  return {
    name: "postgres",
    store: { postgres: url, tablePrefix },
    layer: Postgres.layer({ url, tablePrefix }),
    cleanup: () => Effect.runPromise(Effect.provide(dropTablesNow(tablePrefix), postgresClient()))
  }
}

const withStores = <A, E>(
  backend: Backend,
  f: Effect.Effect<A, E, ExecutionStore.ExecutionStore | CheckpointStore.CheckpointStore>
) => Effect.runPromise(Effect.scoped(Effect.provide(f, backend.layer)))

const recordOf = (backend: Backend, requestId: string) =>
  withStores(backend, Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get(requestId)))

const suite = (makeBackend: () => Backend) => {
  const name = makeBackend.name.replace("Backend", "")
  describe(`several processes over one store: ${name}`, () => {
    it("two processes racing snapshots of one record: the newest revision wins, revisions never go back", async () => {
      const backend = makeBackend()
      try {
        const odd = start({
          action: "write-revisions",
          store: backend.store,
          requestId: "race",
          revisions: [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
        })
        const even = start({
          action: "write-revisions",
          store: backend.store,
          requestId: "race",
          revisions: [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
        })
        const [a, b] = await Promise.all([odd.next("written"), even.next("written")])
        await Promise.all([odd.exited, even.exited])
        // The newest snapshot was written by whoever wrote it; every save either wrote or was refused as stale.
        expect((b.results as Array<string>).at(-1)).toBe("written")
        for (const r of [...(a.results as Array<string>), ...(b.results as Array<string>)]) {
          expect(["written", "stale"]).toContain(r)
        }
        const record = Option.getOrThrow(await recordOf(backend, "race"))
        expect(record.recordRevision).toBe(20)
        expect(record.finalResponse).toBe(`rev-20 by ${even.child.pid}`)
      } finally {
        await backend.cleanup()
      }
    }, 60_000)

    it(
      "suspended in one process, resumed in another: one of two concurrent resumes wins, the other gets already_claimed; the suspending process's late effect is merged, not lost",
      async () => {
        const backend = makeBackend()
        const release = path.join(os.tmpdir(), `eap-release-${process.pid}-${Date.now()}`)
        // The processes share a checkpoint key, as a deployment's processes do: a resume elsewhere verifies the seal.
        const checkpointKey = randomBytes(32).toString("hex")
        try {
          const suspender = start({
            action: "suspend",
            store: backend.store,
            requestId: "mp-hitl",
            releaseFile: release,
            checkpointKey
          })
          const { checkpointId } = await suspender.next("suspended")
          expect(typeof checkpointId).toBe("string")
          const suspended = Option.getOrThrow(await recordOf(backend, "mp-hitl"))
          expect(suspended.lifecycle?.status).toBe("suspended")
          expect(suspended.hookInvocations.find((i) => i.name === "audit")?.effects.map((e) => e.status)).toEqual([
            "pending"
          ])

          const winner = start({
            action: "resume",
            store: backend.store,
            checkpointId: String(checkpointId),
            holdFile: `${release}.hold`,
            checkpointKey
          })
          await winner.next("tool-started")
          const loser = start({
            action: "resume",
            store: backend.store,
            checkpointId: String(checkpointId),
            checkpointKey
          })
          const refused = await loser.next("error")
          expect(refused, JSON.stringify(refused)).toMatchObject({ tag: "CheckpointError", reason: "already_claimed" })

          // While the resumed request runs elsewhere, the suspended part's detached fiber reports.
          fs.writeFileSync(release, "go")
          await suspender.next("effect-done")
          fs.writeFileSync(`${release}.hold`, "go")
          const result = await winner.next("result")
          expect(result.tag).toBe("Completed")
          await Promise.all([suspender.exited, winner.exited, loser.exited])

          const record = Option.getOrThrow(await recordOf(backend, "mp-hitl"))
          expect(record.lifecycle?.status).toBe("succeeded")
          expect(record.mode).toBe("resume")
          expect(record.recordRevision).toBeGreaterThan(suspended.recordRevision)
          const effects = record.hookInvocations.find((i) => i.name === "audit")?.effects ?? []
          expect(effects.map((e) => [e.effectId, e.status, e.data])).toEqual([
            ["audit-write", "succeeded", { by: suspender.child.pid }]
          ])
          expect(record.phases.at(-1)?.steps.map((s) => [s.step_id, s.status])).toEqual([["w1", "succeeded"]])
          // Decided: the checkpoint is gone.
          const left = await withStores(
            backend,
            Effect.flatMap(CheckpointStore.CheckpointStore, (store) => store.get(String(checkpointId)))
          )
          expect(Option.isNone(left)).toBe(true)
        } finally {
          fs.rmSync(release, { force: true })
          fs.rmSync(`${release}.hold`, { force: true })
          await backend.cleanup()
        }
      },
      90_000
    )

    it(
      "kill -9 in the middle of a request: the record decodes, and once the lease ran out it is abandoned with its plan and running step",
      async () => {
        const backend = makeBackend()
        try {
          const doomed = start({ action: "hang", store: backend.store, requestId: "mp-kill" })
          await doomed.next("tool-started")
          // The progress write (at most ~1/3 s later) shows the step in flight.
          let running: ReadonlyArray<string> | undefined
          for (let i = 0; i < 100 && running === undefined; i++) {
            const record = await recordOf(backend, "mp-kill")
            running = Option.getOrUndefined(record)?.phases[0]?.running
            if (running === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
          }
          expect(running).toEqual(["w1"])
          doomed.child.kill("SIGKILL")
          expect(await doomed.exited).toBe(null)

          const stillRunning = Option.getOrThrow(await recordOf(backend, "mp-kill"))
          expect(stillRunning.lifecycle?.status).toBe("running")
          const leaseEnd = stillRunning.lifecycle?.leaseExpiresAt ?? 0
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, leaseEnd - Date.now()) + 100))
          const marked = await withStores(
            backend,
            Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.sweepAbandoned)
          )
          expect(marked).toBe(1)
          const record = Option.getOrThrow(await recordOf(backend, "mp-kill"))
          expect(record.lifecycle?.status).toBe("abandoned")
          expect(record.lifecycle?.errorTag).toBe("Abandoned")
          expect(record.phases.map((p) => [p.plan.steps.map((s) => s.step_id), p.running, p.steps])).toEqual([
            [["w1"], ["w1"], []]
          ])
        } finally {
          await backend.cleanup()
        }
      },
      60_000
    )
  })
}

suite(sqliteBackend)
const skipped = unavailable("postgres")
if (skipped === undefined) suite(postgresBackend)
else describe("several processes over one store: postgres", () => it.skip(`skipped: ${skipped}`, () => {}))
