/**
 * `effect-agent-pipeline viewer` as a user runs it: the demo (`npm start`'s
 * program) writes `./data/agent.db` in a fresh folder, then the command —
 * a real child process, on a free port — serves that file's records
 * read-only: the demo's requests on `GET /v1/records`, their detail, the
 * viewer's page; no request route; the database file unchanged. Without
 * `--store` it finds `./data/agent.db` as the store configuration says; a
 * missing file and the memory store are clear errors.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm")).href

interface Run {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<number | null>
}

/** Runs a TypeScript file of the repository under Node with tsx, in `cwd`. */
const run = (file: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}): Run => {
  // The store and server settings come from the test alone, not from the environment it runs in.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !/^(AGENT_|SQLITE_PATH$|DATABASE_URL$|ACTIVITY_STORE$|OTEL_)/.test(name)
    )
  )
  const child = spawn(process.execPath, ["--import", tsx, join(root, file), ...args], {
    cwd,
    env: { ...inherited, TSX_TSCONFIG_PATH: join(root, "tsconfig.json"), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  child.stdout!.on("data", (c: Buffer) => (out += c.toString("utf8")))
  child.stderr!.on("data", (c: Buffer) => (err += c.toString("utf8")))
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited: new Promise((resolve) => child.on("exit", (code) => resolve(code)))
  }
}

/** The viewer command, for the scope; its announced base URL. */
const viewer = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const process = run("src/cli/main.ts", ["viewer", "--port", "0", ...args], cwd, env)
      const deadline = Date.now() + 30_000
      for (;;) {
        const announced = /Execution viewer \(read-only\) at (http:\/\/127\.0\.0\.1:\d+)\//.exec(process.stdout())
        if (announced !== null) return { process, url: announced[1]! }
        if (process.child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`the viewer did not start: ${process.stdout()} ${process.stderr()}`)
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }),
    ({ process }) =>
      Effect.promise(async () => {
        process.child.kill("SIGTERM")
        await process.exited
      })
  )

const getJson = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  })

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex")

interface Summary {
  readonly requestId: string
  readonly status: string
  readonly request: string
  readonly hookCount: number
}

describe("effect-agent-pipeline viewer", () => {
  // One demo run for the file: `npm start`'s program in a fresh folder, so its ./data/agent.db is its own.
  const folder = mkdtempSync(join(tmpdir(), "eap-viewer-cli-"))
  const demo = run("examples/demo/main.ts", [], folder)
  const demoDone = demo.exited.then((code) => {
    if (code !== 0) throw new Error(`the demo failed: ${demo.stdout()} ${demo.stderr()}`)
    return code
  })
  afterAll(() => rmSync(folder, { recursive: true, force: true }))

  it.scopedLive("serves the records the demo left in ./data/agent.db, read-only", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => demoDone)
      // A copy, as the issue says: the command never needs the agent's own file.
      const copy = join(folder, "copy.db")
      copyFileSync(join(folder, "data", "agent.db"), copy)
      const before = sha256(copy)
      const { url } = yield* viewer(folder, ["--store", copy])

      const list = yield* getJson(`${url}/v1/records`)
      expect(list.status).toBe(200)
      const records = list.body["records"] as ReadonlyArray<Summary>
      const demoRequests = [
        "What is the stock quote for ACME?",
        "What's the weather forecast in Lisbon?",
        "Buy 10 shares of ACME stock",
        "Tell me insider news about ACME",
        "Convert 100 USD to EUR"
      ]
      expect(records.map((r) => r.request)).toEqual([...demoRequests].reverse())
      expect(records.map((r) => r.status)).toEqual(["suspended", "succeeded", "failed", "succeeded", "succeeded"])
      expect(records.every((r) => r.hookCount >= 2)).toBe(true)

      // A detail, with its hook evidence.
      const quote = records.find((r) => r.request === demoRequests[0])!
      const detail = yield* getJson(`${url}/v1/records/${encodeURIComponent(quote.requestId)}`)
      expect(detail.status).toBe(200)
      const names = (detail.body["hookInvocations"] as ReadonlyArray<{ readonly name: string }>).map((i) => i.name)
      expect(names).toEqual(expect.arrayContaining(["desk-context", "allowed-operations", "application-audit"]))

      // The page and its configuration: read-only.
      const page = yield* Effect.promise(() => fetch(`${url}/`).then((r) => r.text()))
      expect(page).toContain("<script type=\"module\" src=\"/viewer/app.js\"></script>")
      expect((yield* getJson(`${url}/viewer/config.json`)).body).toEqual({ readOnly: true, authRequired: false })
      // No route that runs or resumes anything.
      const post = yield* Effect.promise(() =>
        fetch(`${url}/v1/requests`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ request: "What is the stock quote for ACME?" })
        })
      )
      expect(post.status).toBe(404)
      expect(sha256(copy)).toBe(before)
    }), 60_000)

  it.scopedLive(
    "without --store, ./data/agent.db of the working folder (the store configuration's default)",
    () =>
      Effect.gen(function*() {
        yield* Effect.promise(() => demoDone)
        const { url } = yield* viewer(folder, [])
        const list = yield* getJson(`${url}/v1/records?status=failed`)
        expect((list.body["records"] as ReadonlyArray<Summary>).map((r) => r.request)).toEqual([
          "Buy 10 shares of ACME stock"
        ])
      }),
    60_000
  )

  it.live(
    "a missing file or the memory store: a clear error, exit code 1; --help lists the options",
    () =>
      Effect.promise(async () => {
        const empty = mkdtempSync(join(tmpdir(), "eap-viewer-empty-"))
        try {
          // Three processes at once: each pays tsx's start-up, not one after the other.
          const missing = run("src/cli/main.ts", ["viewer", "--port", "0", "--store", join(empty, "none.db")], empty)
          const memory = run("src/cli/main.ts", ["viewer", "--port", "0"], empty, { AGENT_STORE: "memory" })
          const help = run("src/cli/main.ts", ["viewer", "--help"], root)
          expect(await Promise.all([missing.exited, memory.exited, help.exited])).toEqual([1, 1, 0])
          expect(missing.stderr() + missing.stdout()).toContain(
            "none.db does not exist: nothing was recorded there yet"
          )
          expect(memory.stderr() + memory.stdout()).toContain(
            "AGENT_STORE=memory keeps records inside the agent's own process"
          )
          for (const option of ["--port", "--host", "--store", "--trace-url"]) expect(help.stdout()).toContain(option)
        } finally {
          rmSync(empty, { recursive: true, force: true })
        }
      }),
    60_000
  )
})
