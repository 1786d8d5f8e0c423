/**
 * The crash harness of the durable tests: real runner processes
 * (fixtures/durableChild.ts), `kill -9` at a chosen point, a restart or a
 * surviving runner, and the shared event log to judge what ran. Each
 * scenario is a function of its kill point, so a loop over many kill points
 * (issue 24 asks for 200 runs) reuses it as it is.
 */
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type EventWorkspace, eventWorkspace, killHard } from "./eventWorkspace.js"
import type { ActivityName, ChildCommand, ChildEvent } from "./fixtures/durableChild.js"

const childScript = fileURLToPath(new URL("./fixtures/durableChild.ts", import.meta.url))

/** Where to kill: as soon as `activity` has logged its `start` (it is then mid-activity: it sleeps). */
export interface KillPoint {
  readonly activity: ActivityName
  /** Extra wait after the start event before the kill (default 100 ms). */
  readonly afterMillis?: number | undefined
}

/** One scenario's working files and processes (see eventWorkspace.ts). */
export type Workspace = EventWorkspace<ChildEvent, Omit<ChildCommand, "log">>

export const workspace = (): Workspace => eventWorkspace(childScript, "eap-durable-")

export { killHard }

/** A free TCP port on 127.0.0.1 (for a runner's socket). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** What one crash scenario ran: the event log, and the starts of each activity in order. */
export interface CrashOutcome {
  readonly events: ReadonlyArray<ChildEvent>
  readonly starts: (activity: ActivityName) => ReadonlyArray<ChildEvent>
  readonly result: string
  /** From the kill to the `complete` event. */
  readonly killToCompleteMillis: number
  /** From the kill to the re-run's start of the killed activity. */
  readonly killToRestartMillis: number
  readonly killedPid: number
}

const outcome = (ws: Workspace, kill: KillPoint, killedPid: number, killedAt: number, done: ChildEvent) => {
  const events = ws.events()
  const starts = (activity: ActivityName) => events.filter((e) => e.ev === "start" && e.activity === activity)
  const rerun = starts(kill.activity).find((e) => e.pid !== killedPid)
  return {
    events,
    starts,
    result: done.result ?? "",
    killToCompleteMillis: done.t - killedAt,
    killToRestartMillis: rerun === undefined ? Number.NaN : rerun.t - killedAt,
    killedPid
  }
}

/**
 * SQLite, one process: the first process executes `requestId` and is
 * killed at `kill`; a second process on the same file only builds its
 * Layers (no execute, no resume call) and the execution completes there.
 */
export const sqliteCrashAndRestart = async (ws: Workspace, kill: KillPoint, requestId: string) => {
  const backend = { sqlite: path.join(ws.dir, "durable.db") }
  const first = ws.spawn({ action: "execute", backend, requestId, slowActivity: kill.activity })
  const started = await ws.waitFor((e) => e.ev === "start" && e.activity === kill.activity, 30_000)
  await new Promise((r) => setTimeout(r, kill.afterMillis ?? 100))
  await killHard(first)
  const killedAt = Date.now()
  const second = ws.spawn({ action: "passive", backend, requestId })
  const done = await ws.waitFor((e) => e.ev === "complete" && e.pid === second.child.pid, 30_000)
  await killHard(second)
  return outcome(ws, kill, started.pid, killedAt, done)
}

/**
 * PostgreSQL, two runners (socket runners on free ports, one table
 * prefix): both start, one submits `requestId`; whichever runner runs the
 * activity at `kill` is killed; the survivor takes its shards over and
 * completes the execution.
 */
export const postgresTakeover = async (
  ws: Workspace,
  kill: KillPoint,
  requestId: string,
  options: { readonly url: string; readonly prefix: string; readonly failover?: ChildCommand["failover"] }
) => {
  const runners = await Promise.all([freePort(), freePort()])
  const backendAt = (port: number) => ({
    postgres: options.url,
    prefix: options.prefix,
    runner: { host: "127.0.0.1", port }
  })
  // The first runner submits once both are up and have split the shards.
  const spawned = runners.map((port, i) =>
    ws.spawn({
      action: i === 0 ? "submit" : "passive",
      backend: backendAt(port),
      requestId,
      slowActivity: kill.activity,
      submitAfterMillis: 3_000,
      failover: options.failover
    })
  )
  const started = await ws.waitFor((e) => e.ev === "start" && e.activity === kill.activity, 30_000)
  await new Promise((r) => setTimeout(r, kill.afterMillis ?? 100))
  const victim = spawned.find((c) => c.child.pid === started.pid)
  if (victim === undefined) throw new Error(`no runner with pid ${started.pid}`)
  await killHard(victim)
  const killedAt = Date.now()
  const done = await ws.waitFor((e) => e.ev === "complete" && e.pid !== started.pid, 60_000)
  return outcome(ws, kill, started.pid, killedAt, done)
}
