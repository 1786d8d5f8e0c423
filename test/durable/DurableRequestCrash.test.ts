/**
 * Durable requests under `kill -9` (issue 24): runner processes are killed
 * at random moments while a batch of requests runs and restarted until all
 * have ended. Every request completes exactly once with its answer; a tool
 * call, AfterExecution or AfterSynthesis run that completed never runs
 * again (only a process that was killed leaves one to run again), an
 * in-flight tool call runs again with the same idempotency key, and each
 * request's record is `succeeded` with what ran and every attempt.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as path from "node:path"
import type { ExecutionRecord } from "../../src/domain/ExecutionRecord.js"
import { ExecutionStore } from "../../src/index.js"
import * as Postgres from "../../src/stores/sql/Postgres.js"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import { postgresUrl, unavailable } from "../support/Backends.js"
import { freePort, killHard } from "./crashHarness.js"
import { dropClusterTables, uniqueClusterPrefix } from "./durableSupport.js"
import { attemptsOf, completed, judge, requestWorkspace, seeded } from "./requestHarness.js"

const requests = Number(process.env.EAP_DURABLE_REQUESTS ?? 200)
const seed = Number(process.env.EAP_DURABLE_SEED ?? Date.now() % 100_000)

const records = (stores: "sqlite" | "postgres", at: string, ids: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* ExecutionStore.ExecutionStore
      const out = new Map<string, ExecutionRecord>()
      for (const id of ids) {
        const record = yield* store.get(id)
        if (Option.isSome(record)) out.set(id, record.value)
      }
      return out
    }).pipe(Effect.provide(stores === "sqlite" ? Sqlite.layer({ filename: at }) : Postgres.layer({ url: at })))
  )

describe("durable requests under kill -9 (issue 24)", () => {
  it(
    `SQLite, one process: ${requests} requests, the process killed at random moments and restarted (seed ${seed})`,
    async () => {
      const ws = requestWorkspace()
      try {
        const random = seeded(seed)
        const storesFile = path.join(ws.dir, "stores.db")
        const command = {
          backend: { sqlite: path.join(ws.dir, "engine.db") },
          storesFile,
          requestPrefix: "r",
          requests,
          toolMillis: 60
        }
        const killed = new Set<number>()
        let current = ws.spawn(command)
        for (let kill = 0; kill < 12; kill++) {
          const pid = current.child.pid!
          await ws.waitFor((e) => e.ev === "ready" && e.pid === pid, 60_000)
          await new Promise((r) => setTimeout(r, 300 + random() * 1_500))
          if (completed(ws.events()).size === requests) break
          await killHard(current)
          killed.add(pid)
          current = ws.spawn(command)
        }
        const deadline = Date.now() + 180_000
        while (completed(ws.events()).size < requests && Date.now() < deadline) {
          await ws.waitFor((e) => e.ev === "complete", 1_000).catch(() => undefined)
          await new Promise((r) => setTimeout(r, 200))
        }
        await killHard(current)
        const events = ws.events()
        const ids = Array.from({ length: requests }, (_, i) => `r-${i}`)
        const stored = await records("sqlite", storesFile, ids)
        const problems = ids.flatMap((id) => judge(id, events, stored.get(id), killed).map((p) => `${id}: ${p}`))
        expect(problems.slice(0, 20)).toEqual([])
        // The kills landed mid-request: some tool call ran again, with the key of its first attempt.
        const reruns = events.filter((e) => e.ev === "tool-start").length - 3 * requests
        const rerunRegions = [...stored.values()].filter((r) => attemptsOf(r, "phase/1") > 1).length
        console.log(
          `kills ${killed.size}, tool re-runs ${reruns}, requests with a phase re-run ${rerunRegions}, seed ${seed}`
        )
        expect(killed.size).toBeGreaterThan(0)
        expect(reruns).toBeGreaterThan(0)
      } finally {
        await ws.cleanup()
      }
    },
    400_000
  )

  it.skipIf(unavailable("postgres") !== undefined)(
    `PostgreSQL, two runners: ${requests} requests, a runner killed at random moments and replaced (seed ${seed})`,
    async () => {
      const ws = requestWorkspace()
      const prefix = uniqueClusterPrefix()
      const url = postgresUrl ?? ""
      try {
        const random = seeded(seed)
        const requestPrefix = `pg${seed}-${Date.now().toString(36)}`
        const runner = async (submitAfterMillis: number) =>
          ws.spawn({
            backend: { postgres: url, prefix, runner: { host: "127.0.0.1", port: await freePort() } },
            requestPrefix,
            requests,
            toolMillis: 60,
            submitAfterMillis
          })
        // Both up before the requests go in (the shards split between them).
        const runners = [await runner(3_000), await runner(3_000)]
        const killed = new Set<number>()
        const replacements = new Set<number>()
        await ws.waitFor((e) => e.ev === "tool-start", 60_000)
        for (let kill = 0; kill < 3; kill++) {
          await new Promise((r) => setTimeout(r, 500 + random() * 2_500))
          if (completed(ws.events()).size === requests) break
          const victim = random() < 0.5 ? 0 : 1
          const pid = runners[victim]!.child.pid!
          await killHard(runners[victim]!)
          killed.add(pid)
          // A runner joins under load and takes shards over.
          runners[victim] = await runner(0)
          replacements.add(runners[victim]!.child.pid!)
        }
        const deadline = Date.now() + 240_000
        while (completed(ws.events()).size < requests && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 250))
        }
        await Promise.all(runners.map(killHard))
        const events = ws.events()
        const ids = Array.from({ length: requests }, (_, i) => `${requestPrefix}-${i}`)
        const stored = await records("postgres", url, ids)
        const problems = ids.flatMap((id) => judge(id, events, stored.get(id), killed).map((p) => `${id}: ${p}`))
        expect(problems.slice(0, 20)).toEqual([])
        const reruns = events.filter((e) => e.ev === "tool-start").length - 3 * requests
        const joinedWork = events.filter((e) => e.ev === "tool-start" && replacements.has(e.pid)).length
        console.log(`kills ${killed.size}, tool re-runs ${reruns}, tool calls on joined runners ${joinedWork}`)
        expect(killed.size).toBeGreaterThan(0)
        expect(reruns).toBeGreaterThan(0)
        expect(joinedWork).toBeGreaterThan(0)
      } finally {
        await ws.cleanup()
        await dropClusterTables(prefix)
      }
    },
    400_000
  )
})
