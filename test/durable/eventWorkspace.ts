/**
 * What the durable crash harnesses share: a temporary folder, child
 * processes of one script that append JSON events to one log file (on disk
 * before a `kill -9` can land), reading that log and waiting on it, and
 * cleaning up. A child that logs an `error` event fails the wait at once.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { start, type TestProcess } from "../support/processes/ChildProcess.js"

/** An event of the shared log: every child writes at least these. */
export interface LoggedEvent {
  readonly pid: number
  readonly t: number
  readonly ev: string
  readonly error?: string | undefined
}

/** A workspace's folder, log and processes; `cleanup` kills what is left and removes the files. */
export interface EventWorkspace<E extends LoggedEvent, C extends object> {
  readonly dir: string
  readonly log: string
  /** Starts the script with its command as one JSON argument (`log` and `extra` added). */
  readonly spawn: (command: C) => TestProcess
  readonly events: () => ReadonlyArray<E>
  readonly waitFor: (pred: (e: E) => boolean, timeoutMs: number) => Promise<E>
  readonly cleanup: () => Promise<void>
}

/** `kill -9`, and wait until the process is gone. */
export const killHard = async (process: TestProcess): Promise<void> => {
  if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill("SIGKILL")
  await process.exited
}

export const eventWorkspace = <E extends LoggedEvent, C extends object>(
  script: string,
  prefix: string,
  extra: (dir: string) => object = () => ({})
): EventWorkspace<E, C> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const log = path.join(dir, "events.jsonl")
  const children: Array<TestProcess> = []
  const events = (): ReadonlyArray<E> =>
    fs.existsSync(log)
      ? fs.readFileSync(log, "utf8").split("\n").filter((l) => l !== "").map((l): E => JSON.parse(l))
      : []
  const stderrs = () => children.map((c) => `[pid ${c.child.pid}] ${c.stderr().slice(-1_500)}`).join("\n")
  const waitFor = async (pred: (e: E) => boolean, timeoutMs: number): Promise<E> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const all = events()
      const hit = all.find(pred)
      if (hit !== undefined) return hit
      const error = all.find((e) => e.ev === "error")
      if (error !== undefined) throw new Error(`a child failed: ${error.error}\n${stderrs()}`)
      if (Date.now() > deadline) {
        throw new Error(
          `no matching event within ${timeoutMs} ms; log:\n${JSON.stringify(all).slice(-4_000)}\n${stderrs()}`
        )
      }
      await new Promise((r) => setTimeout(r, 25))
    }
  }
  return {
    dir,
    log,
    spawn: (command) => {
      const child = start(script, [JSON.stringify({ ...command, ...extra(dir), log })])
      children.push(child)
      return child
    },
    events,
    waitFor,
    cleanup: async () => {
      await Promise.all(children.map((c) => killHard(c)))
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}
