/**
 * A test's handle on a real child process (Node with tsx) that talks JSON
 * lines: events on its stdout, commands on its stdin. What the process-level
 * store tests share (several agent processes over one store are several OS
 * processes — the only honest way to test file locks and migrations).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

/** A running child process. */
export interface TestProcess {
  readonly child: ChildProcess
  /**
   * The next event with this name, or one of these names (events of other
   * names are kept for later calls); a `crash` event or the process exiting
   * first fails it, with its stderr.
   */
  readonly next: (event: string | ReadonlyArray<string>, timeoutMs?: number) => Promise<Record<string, unknown>>
  /** Writes one JSON line to the process's stdin. */
  readonly send: (command: unknown) => void
  /** Closes stdin (a worker that reads commands exits once they are done). */
  readonly end: () => void
  readonly exited: Promise<number | null>
  /** What the process wrote on stderr so far. */
  readonly stderr: () => string
}

/** Who the process runs as (a test running as root starts a process file modes do apply to). */
export interface StartOptions {
  readonly uid?: number
  readonly gid?: number
}

/** Starts `script` (a path relative to this folder, or absolute) under Node with tsx. */
export const start = (script: string, args: ReadonlyArray<string> = [], options: StartOptions = {}): TestProcess => {
  const file = script.startsWith("/") ? script : fileURLToPath(new URL(script, import.meta.url))
  const child = spawn(process.execPath, ["--import", "tsx", file, ...args], {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid })
  })
  const events: Array<Record<string, unknown>> = []
  const waiters: Array<() => void> = []
  const wake = () => {
    for (const w of waiters.splice(0)) w()
  }
  let stderr = ""
  let exitCode: number | null | undefined
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
  // A child that exits with commands still unwritten must not crash the test with EPIPE.
  child.stdin!.on("error", () => {})
  readline.createInterface({ input: child.stdout! }).on("line", (line) => {
    try {
      events.push(JSON.parse(line))
    } catch {
      events.push({ event: "noise", line })
    }
    wake()
  })
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      exitCode = code
      wake()
      resolve(code)
    })
  )
  const next = async (name: string | ReadonlyArray<string>, timeoutMs = 30_000) => {
    const names: ReadonlyArray<unknown> = typeof name === "string" ? [name, "crash"] : [...name, "crash"]
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const i = events.findIndex((e) => names.includes(e.event))
      if (i >= 0) {
        const [found] = events.splice(i, 1)
        if (found!.event === "crash") throw new Error(`process crashed: ${String(found!.error)}\n${stderr}`)
        return found!
      }
      if (exitCode !== undefined) {
        throw new Error(`process exited (${exitCode}) before "${String(name)}"; stderr:\n${stderr}`)
      }
      if (Date.now() > deadline) {
        throw new Error(`no "${String(name)}" event within ${timeoutMs} ms; stderr:\n${stderr}`)
      }
      await Promise.race([
        new Promise<void>((resolve) => waiters.push(resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, 100))
      ])
    }
  }
  return {
    child,
    next,
    send: (command) => child.stdin!.write(`${JSON.stringify(command)}\n`),
    end: () => child.stdin!.end(),
    exited,
    stderr: () => stderr
  }
}
