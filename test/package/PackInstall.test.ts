/**
 * The packed package works for a user who installs it: `npm pack` the
 * library, install the tarball into a fresh project outside the repository
 * with exactly the packages the install lines of the README and of `docs/`
 * name (one `npm install`), then, in that project:
 *
 * - typecheck every example the README and `docs/` show (`examples/readme/`,
 *   copied unchanged) and the typed consumers of `fixtures/` against the
 *   installed `.d.ts`, with `strict` and `exactOptionalPropertyTypes`;
 * - run every example program, compiled, under plain Node (no tsx), and
 *   compare what it prints with what its page says ("It prints:"): the
 *   README's first agent in a process of its own, the others one after
 *   another in one process (`fixtures/examples-runner.ts` imports each file
 *   unchanged and runs the effect it gives `NodeRuntime.runMain`); the
 *   testing page's `agent.test.ts` runs under the project's own Vitest, at
 *   the versions that page installs;
 * - check that stack traces and source maps point at files the package ships;
 * - run the hostile-input and telemetry consumers of `fixtures/`.
 *
 * Not part of `npm test` (it needs npm and the npm cache); run it with
 * `npm run test:package`. Set `KEEP_PACKAGE_TEST_DIR=1` to keep the temp
 * project for debugging (its path is printed).
 */
import { Schema } from "effect"
import { spawn } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { dirname, isAbsolute, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  exampleFiles,
  EXAMPLES_DIR,
  installLines,
  isProgram,
  printedLines,
  repoRoot,
  shownExamples
} from "../docs/DocPages.js"
import { freePort } from "../durable/crashHarness.js"

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const FIXTURES = [
  "typed-import.ts",
  "otel-import.ts",
  "providers.ts",
  "hostile-input.ts",
  "stack-trace.ts",
  "examples-runner.ts",
  "examples-hooks.ts",
  "examples-platform-node.ts",
  "server-and-viewer.ts"
]

const TIMEOUT = 300_000
const COMMAND_TIMEOUT = 240_000

const PackResult = Schema.Array(Schema.Struct({
  filename: Schema.String,
  files: Schema.Array(Schema.Struct({ path: Schema.String }))
}))
const decodePackResult = Schema.decodeUnknownSync(PackResult)
const decodeVersion = Schema.decodeUnknownSync(Schema.Struct({ version: Schema.String }))
const decodeSourceMap = Schema.decodeUnknownSync(Schema.Struct({ sources: Schema.Array(Schema.String) }))

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"))

/** The exact version installed in the repo, so the temp install reuses the npm cache. */
const repoVersionOf = (pkg: string): string =>
  decodeVersion(readJson(join(repoRoot, "node_modules", pkg, "package.json"))).version

/**
 * The child environment: without the variables `npm run` sets for the repo
 * (`npm_config_local_prefix`, `npm_package_*`, `INIT_CWD`, ...), so the
 * nested npm sees only the temp project, and without the caller's agent,
 * provider, store or telemetry settings, so the examples run on their
 * defaults. Cache and registry settings stay.
 */
const childEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) =>
    !/^npm_(package_|lifecycle_|config_local_prefix$|config_prefix$|command$)/i.test(key) && key !== "INIT_CWD" &&
    !/^(OTEL_|AGENT_|OPENAI_|ANTHROPIC_|ACTIVITY_STORE$|DATABASE_URL$|REDIS_URL$|SQLITE_PATH$)/.test(key)
  )
)

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ok: boolean
  /** The command, its exit and both streams: the message of a failed assertion. */
  readonly transcript: string
}

/** Runs a command to its end without blocking this process (a local server may have to answer it). */
const run = (
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: NodeJS.ProcessEnv = childEnv
): Promise<Run> =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let failure = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => void (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (stderr += chunk))
    const timer = setTimeout(() => {
      failure = `timed out after ${COMMAND_TIMEOUT} ms`
      child.kill("SIGKILL")
    }, COMMAND_TIMEOUT)
    child.on("error", (error) => void (failure = error.message))
    child.on("close", (status, signal) => {
      clearTimeout(timer)
      const transcript = [
        `$ ${command} ${args.join(" ")}   (in ${cwd})`,
        `exit status ${String(status)}, signal ${String(signal)}${failure === "" ? "" : `, ${failure}`}`,
        "--- stdout",
        stdout,
        "--- stderr",
        stderr
      ].join("\n")
      resolve({ status, stdout, stderr, ok: failure === "" && status === 0, transcript })
    })
  })

const runOrThrow = async (command: string, args: ReadonlyArray<string>, cwd: string): Promise<Run> => {
  const r = await run(command, args, cwd)
  if (!r.ok) throw new Error(`command failed:\n${r.transcript}`)
  return r
}

/** `npm pack --json` prints the JSON on stdout; tolerate anything printed before it. */
const parsePackJson = (stdout: string): typeof PackResult.Type => {
  const start = stdout.search(/^\[/m)
  return decodePackResult(JSON.parse(start < 0 ? stdout : stdout.slice(start)))
}

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name)).map((file) => `${entry.name}/${file}`)
      : [entry.name]
  )

const ALLOWED_TOP_LEVEL = new Set(["package.json", "README.md", "LICENSE"])
/** The execution viewer's static files, served from the installed package. */
const VIEWER_FILE = /^viewer\/[a-z-]+\.(?:html|js|css|svg)$/
const DIST_FILE = /^dist\/.+\.(?:js|d\.ts|js\.map|d\.ts\.map)$/
const SRC_FILE = /^src\/.+\.ts$/
const FORBIDDEN_PREFIXES = ["test/", "bench/", "examples/", ".ci/", "scripts/", "data/"]

const STRICT_TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: true,
    types: ["node"],
    rootDir: ".",
    outDir: "out"
  },
  include: ["*.ts", "examples/**/*.ts"]
}

/** A stand-in for a provider that refuses every call: HTTP 400, which is not retried. */
const refusingServer = (): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        response.writeHead(400, { "content-type": "application/json" })
        response.end(JSON.stringify({
          error: { message: "model not found", type: "invalid_request_error", param: null, code: null }
        }))
      })
    })
    server.listen(0, "127.0.0.1", () => resolve(server))
  })

describe("the packed package, installed in a fresh project", { timeout: TIMEOUT }, () => {
  let workDir = ""
  let project = ""
  let installed = ""
  let tarballFiles: ReadonlyArray<string> = []
  /** The typecheck of the project, started once the project exists; the tests that need its output await it. */
  let typecheck: Promise<Run> | undefined
  const compiled = (): Promise<Run> => typecheck ?? Promise.reject(new Error("the project was not set up"))

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), "effect-agent-pipeline-package-"))
    const fromRepo = relative(repoRoot, workDir)
    if (!(fromRepo.startsWith("..") || isAbsolute(fromRepo))) {
      throw new Error(`the temp dir ${workDir} is inside the repository ${repoRoot}; set TMPDIR elsewhere`)
    }

    // 1. Pack (runs prepack → build) into the temp dir.
    const pack = await runOrThrow("npm", ["pack", "--json", "--pack-destination", workDir], repoRoot)
    const packed = parsePackJson(pack.stdout)
    const packResult = packed[0]
    if (packed.length !== 1 || packResult === undefined) {
      throw new Error(`expected one packed package\n${pack.transcript}`)
    }
    tarballFiles = packResult.files.map((f) => f.path)
    const tarball = join(workDir, packResult.filename)
    if (!existsSync(tarball)) throw new Error(`no tarball at ${tarball}\n${pack.transcript}`)

    // 2. A fresh ESM project that installs the tarball, as a user would.
    project = join(workDir, "consumer")
    mkdirSync(project)
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify(
        {
          name: "consumer",
          version: "0.0.0",
          private: true,
          type: "module",
          devDependencies: {
            typescript: repoVersionOf("typescript"),
            "@types/node": repoVersionOf("@types/node")
          }
        },
        null,
        2
      ) + "\n"
    )
    // Exactly the packages the pages' install lines name (the README's
    // library line with the tarball in its place, the stores', providers',
    // telemetry's and testing's), in one install. Install scripts are
    // skipped: the one that matters, better-sqlite3's, compiles SQLite
    // (minutes here, with no prebuilt binaries reachable); its binary is
    // the repository's own build of the same version, below.
    const packages = installLines().flatMap((line) =>
      line.packages.map((spec) => (spec.startsWith("./effect-agent-pipeline-") ? tarball : spec))
    )
    if (!packages.includes(tarball)) throw new Error("no install line names the package's tarball")
    await runOrThrow(
      "npm",
      ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts", ...new Set(packages)],
      project
    )
    const sqlite = join(project, "node_modules", "better-sqlite3")
    const binary = join("build", "Release", "better_sqlite3.node")
    if (decodeVersion(readJson(join(sqlite, "package.json"))).version === repoVersionOf("better-sqlite3")) {
      mkdirSync(join(sqlite, "build", "Release"), { recursive: true })
      copyFileSync(join(repoRoot, "node_modules", "better-sqlite3", binary), join(sqlite, binary))
    } else {
      await runOrThrow("npm", ["rebuild", "better-sqlite3"], project)
    }
    installed = join(project, "node_modules", "effect-agent-pipeline")

    // 3. The consumer's sources: every example the pages show, unchanged, and the typed consumers.
    mkdirSync(join(project, EXAMPLES_DIR), { recursive: true })
    for (const file of exampleFiles()) {
      copyFileSync(join(repoRoot, EXAMPLES_DIR, file), join(project, EXAMPLES_DIR, file))
    }
    for (const file of FIXTURES) copyFileSync(fixture(file), join(project, file))
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(STRICT_TSCONFIG, null, 2) + "\n")
    typecheck = run(join(project, "node_modules", ".bin", "tsc"), ["-p", "."], project)
  }, TIMEOUT)

  afterAll(() => {
    if (workDir === "") return
    if (process.env["KEEP_PACKAGE_TEST_DIR"]) {
      console.log(`KEEP_PACKAGE_TEST_DIR is set: keeping the package test project at ${workDir}`)
      return
    }
    rmSync(workDir, { recursive: true, force: true })
  })

  /** Runs a compiled file of the project under plain Node, in a directory of its own (its `./data` is its own). */
  const node = async (
    file: string,
    env: NodeJS.ProcessEnv = childEnv,
    flags: ReadonlyArray<string> = [],
    args: ReadonlyArray<string> = []
  ) => {
    const tsc = await compiled()
    expect(tsc.ok, tsc.transcript).toBe(true)
    const cwd = join(project, "runs", file.replace(/[/.]/g, "_"))
    mkdirSync(cwd, { recursive: true })
    return run(process.execPath, [...flags, join(project, "out", file), ...args], cwd, env)
  }

  describe("the tarball", () => {
    it("holds the built library, its sources and nothing else", () => {
      const listing = tarballFiles.join("\n")
      const unexpected = tarballFiles.filter((path) =>
        !ALLOWED_TOP_LEVEL.has(path) && !DIST_FILE.test(path) && !SRC_FILE.test(path) && !VIEWER_FILE.test(path)
      )
      expect(unexpected, `unexpected files in the tarball:\n${listing}`).toEqual([])
      for (const prefix of FORBIDDEN_PREFIXES) {
        expect(tarballFiles.filter((path) => path.startsWith(prefix)), listing).toEqual([])
      }
      for (
        const required of [
          "package.json",
          "README.md",
          "LICENSE",
          "dist/index.js",
          "dist/index.d.ts",
          "dist/index.js.map",
          "dist/index.d.ts.map",
          "src/index.ts",
          "dist/ai/providers/OpenAi.js",
          "dist/ai/providers/OpenAi.d.ts",
          "dist/ai/providers/Anthropic.js",
          "dist/ai/providers/Anthropic.d.ts"
        ]
      ) {
        expect(tarballFiles, listing).toContain(required)
      }

      // Installed from the tarball (a copy, not a link back into the repo).
      expect(lstatSync(installed).isSymbolicLink()).toBe(false)
      expect(existsSync(join(installed, "dist", "index.js"))).toBe(true)
    })

    it("every source map and declaration map points at sources the package ships", () => {
      const maps = filesUnder(join(installed, "dist")).filter((path) => path.endsWith(".map"))
      expect(maps.filter((path) => path.endsWith(".js.map")).length).toBeGreaterThan(20)
      expect(maps.filter((path) => path.endsWith(".d.ts.map")).length).toBeGreaterThan(20)
      for (const map of maps) {
        const { sources } = decodeSourceMap(readJson(join(installed, "dist", map)))
        expect(sources.length, map).toBeGreaterThan(0)
        for (const source of sources) {
          const resolved = join(installed, "dist", dirname(map), source)
          expect(relative(installed, resolved), `${map} → ${source}`).toMatch(/^src\//)
          expect(existsSync(resolved), `${map} names ${source}, which the package does not ship`).toBe(true)
        }
      }
    })

    it("a stack trace names files the package ships: dist/*.js, or src/*.ts with source maps on", async () => {
      const framesOf = (stack: string) =>
        [...stack.matchAll(/\/node_modules\/effect-agent-pipeline\/([^:\s)]+):\d+:\d+/g)].map((m) => m[1]!)
      const plain = await node("stack-trace.js")
      expect(plain.ok, plain.transcript).toBe(true)
      const mapped = await node("stack-trace.js", childEnv, ["--enable-source-maps"])
      expect(mapped.ok, mapped.transcript).toBe(true)
      expect(framesOf(plain.stdout).length, plain.transcript).toBeGreaterThan(0)
      expect(framesOf(plain.stdout).every((file) => /^dist\/.+\.js$/.test(file)), plain.transcript).toBe(true)
      expect(framesOf(mapped.stdout).length, mapped.transcript).toBeGreaterThan(0)
      expect(framesOf(mapped.stdout).every((file) => /^src\/.+\.ts$/.test(file)), mapped.transcript).toBe(true)
      for (const file of [...framesOf(plain.stdout), ...framesOf(mapped.stdout)]) {
        expect(existsSync(join(installed, file)), `the stack names ${file}, which the package does not ship`).toBe(true)
      }
    })
  })

  describe("a fresh project", () => {
    it("typechecks every example of the README and docs/, and the typed consumers, against the installed types", async () => {
      // The examples are copied byte for byte.
      for (const file of exampleFiles()) {
        expect(readFileSync(join(project, EXAMPLES_DIR, file)).equals(readFileSync(join(repoRoot, EXAMPLES_DIR, file))))
          .toBe(true)
      }
      const tsc = await compiled()
      expect(tsc.ok, tsc.transcript).toBe(true)
      for (const file of exampleFiles()) {
        const out = join(project, "out", EXAMPLES_DIR, file.replace(/\.ts$/, ".js"))
        expect(existsSync(out), `${out} is missing\n${tsc.transcript}`).toBe(true)
      }
      for (const file of FIXTURES) expect(existsSync(join(project, "out", file.replace(/\.ts$/, ".js")))).toBe(true)
    })

    it("loads the provider subpaths under plain Node", async () => {
      const script = [
        "const OpenAi = await import('effect-agent-pipeline/openai')",
        "const Anthropic = await import('effect-agent-pipeline/anthropic')",
        "const OpenAiCompat = await import('effect-agent-pipeline/openai-compat')",
        "const { ModelConfig } = await import('effect-agent-pipeline')",
        "const { Layer } = await import('effect')",
        "console.log([OpenAi.layer, OpenAi.layerConfig, OpenAi.layerEmbeddings, Anthropic.layer, Anthropic.layerConfig,",
        "  OpenAiCompat.layer, OpenAiCompat.layerConfig].map((f) => typeof f).join(' '),",
        "  Layer.isLayer(ModelConfig.layerLanguageModel))"
      ].join("\n")
      const r = await run(process.execPath, ["--input-type=module", "-e", script], project)
      expect(r.ok, r.transcript).toBe(true)
      expect(r.stdout.trim(), r.transcript).toBe(`${Array.from({ length: 7 }, () => "function").join(" ")} true`)
    })
  })

  describe("every program of the README and docs/ prints what its page says", () => {
    const programs = shownExamples().filter((shown) => !shown.example.endsWith(".test.ts") && isProgram(shown.example))
    const backends = process.env["EAP_TEST_DATABASE_URL"] !== undefined &&
      process.env["EAP_TEST_REDIS_URL"] !== undefined

    interface RunnerResult {
      readonly printed: string
      readonly failure?: string
    }
    let outcome: Promise<{ readonly run: Run; readonly results: Readonly<Record<string, RunnerResult>> }> | undefined
    /** The programs that need PostgreSQL (and Redis). */
    const needsBackends = (name: string) => name === "deploy-postgres.ts" || name === "durable-postgres.ts"
    /** One Node process runs every program (`fixtures/examples-runner.ts`), once, for all the tests below. */
    const runAll = () =>
      outcome ??= (async () => {
        const server = await refusingServer()
        try {
          const { port } = server.address() as AddressInfo
          const runnerPort = await freePort()
          const envOf = (name: string): Record<string, string> => {
            switch (name) {
              case "model-policy.ts":
                return { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_API_KEY: "sk-package-test" }
              case "durable-postgres.ts":
                return {
                  DATABASE_URL: process.env["EAP_TEST_DATABASE_URL"] ?? "",
                  RUNNER_PORT: String(runnerPort),
                  AGENT_CHECKPOINT_KEY: "b2".repeat(32)
                }
              case "deploy-postgres.ts":
                return {
                  DATABASE_URL: process.env["EAP_TEST_DATABASE_URL"] ?? "",
                  REDIS_URL: process.env["EAP_TEST_REDIS_URL"] ?? "",
                  AGENT_CHECKPOINT_KEY: "b2".repeat(32)
                }
              default:
                return {}
            }
          }
          const specs = [
            ...programs
              .map((shown) => shown.example.split("/").at(-1)!)
              .filter((name) => !needsBackends(name) || backends)
              .map((file) => ({ file, env: envOf(file) })),
            { file: "telemetry.ts", env: {}, export: "program" }
          ]
          const r = await node("examples-runner.js", childEnv, [], [JSON.stringify(specs)])
          expect(r.ok, r.transcript).toBe(true)
          const results = JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, RunnerResult>
          return { run: r, results }
        } finally {
          server.close()
        }
      })()

    it("there are programs to run", () => {
      expect(programs.length).toBeGreaterThanOrEqual(17)
    })

    it("README.md: first-agent.ts runs unchanged under plain Node, NodeRuntime.runMain and all", async () => {
      const first = programs.find((shown) => shown.example === `${EXAMPLES_DIR}/first-agent.ts`)
      const r = await node(`${EXAMPLES_DIR}/first-agent.js`)
      expect(r.ok, r.transcript).toBe(true)
      expect(r.stdout, r.transcript).toMatch(/desk-notes: succeeded/)
      expect(r.stdout.trimEnd(), r.transcript).toBe(first?.prints)
    })

    for (const shown of programs) {
      const name = shown.example.split("/").at(-1)!
      const skip = needsBackends(name) && !backends
      it.skipIf(skip)(
        `${shown.page}: ${name}${skip ? " (skipped: EAP_TEST_DATABASE_URL / EAP_TEST_REDIS_URL unset)" : ""}`,
        async () => {
          const { results, run: r } = await runAll()
          const result = results[name]
          expect(result, r.transcript).toBeDefined()
          expect(result?.failure, `${name} failed\n${r.transcript}`).toBeUndefined()
          if (shown.prints === undefined) {
            // deploy-config.ts: its page says, in prose, one line: the generated id and `succeeded`.
            expect(printedLines(result!.printed), r.transcript).toMatch(/^[0-9a-f-]{36} succeeded$/)
          } else {
            expect(printedLines(result!.printed), `${shown.page} line ${shown.line}\n${r.transcript}`).toBe(
              shown.prints
            )
          }
        }
      )
    }

    it("telemetry.ts: its program runs, with OTEL_EXPORTER_OTLP_ENDPOINT unset", async () => {
      const { results, run: r } = await runAll()
      expect(results["telemetry.ts"], r.transcript).toEqual({ printed: "Completed" })
    })

    it("docs/testing.md: agent.test.ts passes under the project's Vitest, at the versions the page installs", async () => {
      const r = await run(
        join(project, "node_modules", ".bin", "vitest"),
        ["run", `${EXAMPLES_DIR}/agent.test.ts`],
        project,
        { ...childEnv, CI: "1", NO_COLOR: "1" }
      )
      expect(r.ok, r.transcript).toBe(true)
      expect(r.stdout, r.transcript).toMatch(/Tests\s+2 passed \(2\)/)
      expect(decodeVersion(readJson(join(project, "node_modules", "@effect", "vitest", "package.json"))).version)
        .toMatch(/^0\.30\./)
    })
  })

  describe("the edges, as a new user meets them", () => {
    it.concurrent("fail closed: hostile input against the installed package", async () => {
      const r = await node("hostile-input.js")
      expect(r.ok, r.transcript).toBe(true)
      expect(JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}"), r.transcript).toEqual({
        pipeline: {
          // A BigInt tool result fails only its step; a wedged hook times out; proceed twice runs the tool once.
          completed: "Completed",
          steps: ["s1:failed:invalid_result", "s2:denied:tool_call denied by hook \"twice\" (proceed_misuse)"],
          toolRuns: { ACME: 1, TWICE: 1 },
          never: "timed_out",
          twice: ["completed", "proceed_misuse"],
          // JSON nested 5,000 deep and a path-like request id are typed refusals, not crashes.
          deep: "too_deep",
          badId: "malformed:requestId"
        },
        // A 429 from the provider: the API key is nowhere in the printed error.
        leak: { failed: true, keyLeaked: false }
      })
    })

    it.concurrent("the server subpath serves an agent, and the installed bin's viewer serves what it recorded", async () => {
      const served = await node("server-and-viewer.js")
      expect(served.ok, served.transcript).toBe(true)
      expect(JSON.parse(served.stdout.trim().split("\n").at(-1) ?? "{}"), served.transcript).toEqual({
        status: 200,
        result: "Completed",
        routes: 12,
        viewerPage: true,
        viewerScript: 200
      })
      // `npx effect-agent-pipeline viewer` over the file the server's agent left, from the installed package.
      const cwd = join(project, "runs", "server-and-viewer_js")
      const bin = join(project, "node_modules", ".bin", "effect-agent-pipeline")
      const viewer = spawn(bin, ["viewer", "--port", "0", "--store", "./data/agent.db"], {
        cwd,
        env: childEnv,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      viewer.stdout.setEncoding("utf8").on("data", (chunk: string) => void (output += chunk))
      viewer.stderr.setEncoding("utf8").on("data", (chunk: string) => void (output += chunk))
      try {
        const deadline = Date.now() + 60_000
        let url: string | undefined
        while (url === undefined) {
          url = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(output)?.[1]
          if (url === undefined && (viewer.exitCode !== null || Date.now() > deadline)) {
            throw new Error(`the viewer did not start:\n${output}`)
          }
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        const list = await fetch(`${url}/v1/records`).then((r) => r.json() as Promise<{ records: Array<object> }>)
        expect(list.records, output).toMatchObject([{ requestId: "package-1", status: "succeeded" }])
        expect(await fetch(`${url}/`).then((r) => r.text())).toContain("/viewer/app.js")
        expect((await fetch(`${url}/v1/requests`, { method: "POST", body: "{}" })).status).toBe(404)
      } finally {
        viewer.kill("SIGTERM")
      }
    })

    it.concurrent("the otel subpath resolves and runs, with and without an endpoint", async () => {
      const off = await node("otel-import.js")
      expect(off.ok, off.transcript).toBe(true)
      expect(off.stdout.trim(), off.transcript).toBe("telemetry off: Completed")

      // Nothing listens on port 9: the exporters load from the installed peers, give up quietly, and the program answers.
      const on = await node("otel-import.js", { ...childEnv, OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" })
      expect(on.ok, on.transcript).toBe(true)
      expect(on.stdout.trim(), on.transcript).toBe("telemetry on: Completed")
    })
  })
})
