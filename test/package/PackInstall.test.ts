/**
 * The packed package works for a user who installs it: `npm pack` the
 * library, install the tarball (with the peers the README's install line
 * names) into a fresh project outside the repository,
 * typecheck a typed consumer against the installed `.d.ts`, and run the
 * README's first snippet, compiled, under plain Node (no tsx). The
 * `effect-agent-pipeline/otel` subpath is installed with the peers the
 * README's Telemetry section names, typechecked and run the same way. The
 * model providers the README's "Model providers" install line names are
 * installed too: the provider subpaths (`/openai`, `/anthropic`) must
 * typecheck and load.
 *
 * Not part of `npm test` (it needs npm and the npm cache); run it with
 * `npm run test:package`. Set `KEEP_PACKAGE_TEST_DIR=1` to keep the temp
 * project for debugging (its path is printed).
 */
import { Schema } from "effect"
import { spawnSync, type SpawnSyncReturns } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { isAbsolute, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const readmeSnippet = join(repoRoot, "examples", "readme", "first-agent.ts")

const TIMEOUT = 240_000
const COMMAND_TIMEOUT = 180_000

const PackResult = Schema.Array(Schema.Struct({
  filename: Schema.String,
  files: Schema.Array(Schema.Struct({ path: Schema.String }))
}))
const decodePackResult = Schema.decodeUnknownSync(PackResult)
const decodeVersion = Schema.decodeUnknownSync(Schema.Struct({ version: Schema.String }))
const decodeSourceMap = Schema.decodeUnknownSync(Schema.Struct({
  sources: Schema.Array(Schema.String),
  sourcesContent: Schema.optional(Schema.Array(Schema.NullOr(Schema.String)))
}))

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"))

/** The exact version installed in the repo, so the temp install reuses the npm cache. */
const repoVersionOf = (pkg: string): string =>
  decodeVersion(readJson(join(repoRoot, "node_modules", pkg, "package.json"))).version

/**
 * The child environment: without the variables `npm run` sets for the repo
 * (`npm_config_local_prefix`, `npm_package_*`, `INIT_CWD`, ...), so the
 * nested npm sees only the temp project. Cache and registry settings stay.
 */
const childEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) =>
    !/^npm_(package_|lifecycle_|config_local_prefix$|config_prefix$|command$)/i.test(key) && key !== "INIT_CWD"
  )
)

interface Run {
  readonly result: SpawnSyncReturns<string>
  readonly ok: boolean
  /** The command, its exit and both streams: the message of a failed assertion. */
  readonly transcript: string
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = childEnv): Run => {
  const result = spawnSync(command, args, {
    cwd,
    env,
    encoding: "utf8",
    timeout: COMMAND_TIMEOUT,
    maxBuffer: 64 * 1024 * 1024
  })
  const transcript = [
    `$ ${command} ${args.join(" ")}   (in ${cwd})`,
    `exit status ${String(result.status)}, signal ${String(result.signal)}${
      result.error === undefined ? "" : `, error ${result.error.message}`
    }`,
    "--- stdout",
    result.stdout ?? "",
    "--- stderr",
    result.stderr ?? ""
  ].join("\n")
  return { result, ok: result.error === undefined && result.status === 0, transcript }
}

const runOrThrow = (command: string, args: ReadonlyArray<string>, cwd: string): Run => {
  const r = run(command, args, cwd)
  if (!r.ok) throw new Error(`command failed:\n${r.transcript}`)
  return r
}

/** `npm pack --json` prints the JSON on stdout; tolerate anything printed before it. */
const parsePackJson = (stdout: string): typeof PackResult.Type => {
  const start = stdout.search(/^\[/m)
  return decodePackResult(JSON.parse(start < 0 ? stdout : stdout.slice(start)))
}

/** The packages after the tarball on the README's `npm install ./effect-agent-pipeline-….tgz …` line. */
const readmePeers = (): ReadonlyArray<string> => {
  const line = readFileSync(join(repoRoot, "README.md"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("npm install ./effect-agent-pipeline-"))
  if (line === undefined) throw new Error("README.md has no `npm install ./effect-agent-pipeline-….tgz` line")
  const [, , , ...peers] = line.trim().split(/\s+/)
  if (peers.length === 0) throw new Error(`the README install line names no peer packages: ${line}`)
  return peers
}

/** The packages of the README's telemetry install line (`npm install @effect/opentelemetry@… …`). */
const readmeTelemetryPeers = (): ReadonlyArray<string> => {
  const line = readFileSync(join(repoRoot, "README.md"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("npm install @effect/opentelemetry"))
  if (line === undefined) throw new Error("README.md has no `npm install @effect/opentelemetry…` line")
  return line.trim().split(/\s+/).slice(2)
}

/** The child environment without any OpenTelemetry variable of the caller's. */
const withoutOtel = (extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(childEnv).filter(([key]) => !key.startsWith("OTEL_"))),
  ...extra
})

/** The packages on the README's `npm install @effect/ai-openai@… …` line (model providers). */
const readmeProviderPackages = (): ReadonlyArray<string> => {
  const line = readFileSync(join(repoRoot, "README.md"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("npm install @effect/ai-openai"))
  if (line === undefined) throw new Error("README.md has no `npm install @effect/ai-openai…` line")
  const [, , ...packages] = line.split("#")[0]!.trim().split(/\s+/)
  return packages
}

/** The ```text block after "It prints:" in the README's first-agent section. */
const readmePrintedOutput = (): string => {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
  const match = /It prints:\n\n```text\n([\s\S]*?)\n```/.exec(readme)
  if (match?.[1] === undefined) throw new Error("README.md has no 'It prints:' text block")
  return match[1]
}

const ALLOWED_TOP_LEVEL = new Set(["package.json", "README.md", "LICENSE"])
const DIST_FILE = /^dist\/.+\.(?:js|d\.ts|js\.map)$/
const FORBIDDEN_PREFIXES = ["src/", "test/", "bench/", "examples/", ".ci/"]

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
  include: ["*.ts"]
}

describe("the packed package, installed in a fresh project", { timeout: TIMEOUT }, () => {
  let workDir = ""
  let project = ""
  let tarballFiles: ReadonlyArray<string> = []

  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), "effect-agent-pipeline-package-"))
    const fromRepo = relative(repoRoot, workDir)
    if (!(fromRepo.startsWith("..") || isAbsolute(fromRepo))) {
      throw new Error(`the temp dir ${workDir} is inside the repository ${repoRoot}; set TMPDIR elsewhere`)
    }

    // 1. Pack (runs prepack → build) into the temp dir.
    const pack = runOrThrow("npm", ["pack", "--json", "--pack-destination", workDir], repoRoot)
    const packed = parsePackJson(pack.result.stdout)
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
    // Exactly the packages the README's install lines name (the library's,
    // then the model providers'), the tarball in its place.
    runOrThrow(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        tarball,
        ...readmePeers(),
        ...readmeProviderPackages()
      ],
      project
    )
    // The `effect-agent-pipeline/otel` subpath's optional peers, as the README's Telemetry section installs them.
    runOrThrow("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...readmeTelemetryPeers()], project)

    // 3. The consumer's sources: the README snippet unchanged, and the typed-import checks.
    copyFileSync(readmeSnippet, join(project, "first-agent.ts"))
    copyFileSync(fixture("typed-import.ts"), join(project, "typed-import.ts"))
    copyFileSync(fixture("otel-import.ts"), join(project, "otel-import.ts"))
    copyFileSync(fixture("providers.ts"), join(project, "providers.ts"))
    copyFileSync(fixture("hostile-input.ts"), join(project, "hostile-input.ts"))
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(STRICT_TSCONFIG, null, 2) + "\n")
  }, TIMEOUT)

  afterAll(() => {
    if (workDir === "") return
    if (process.env["KEEP_PACKAGE_TEST_DIR"]) {
      console.log(`KEEP_PACKAGE_TEST_DIR is set: keeping the package test project at ${workDir}`)
      return
    }
    rmSync(workDir, { recursive: true, force: true })
  })

  it("the tarball holds only the built library", () => {
    const listing = tarballFiles.join("\n")
    const unexpected = tarballFiles.filter((path) => !ALLOWED_TOP_LEVEL.has(path) && !DIST_FILE.test(path))
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
        "dist/ai/providers/OpenAi.js",
        "dist/ai/providers/OpenAi.d.ts",
        "dist/ai/providers/Anthropic.js",
        "dist/ai/providers/Anthropic.d.ts"
      ]
    ) {
      expect(tarballFiles, listing).toContain(required)
    }

    // Installed from the tarball (a copy, not a link back into the repo).
    const installed = join(project, "node_modules", "effect-agent-pipeline")
    expect(lstatSync(installed).isSymbolicLink()).toBe(false)
    expect(existsSync(join(installed, "dist", "index.js"))).toBe(true)

    // The build inlines sources: the maps work without src/ in the package.
    const maps = tarballFiles.filter((path) => path.endsWith(".js.map"))
    expect(maps.length, listing).toBeGreaterThan(0)
    const indexMap = decodeSourceMap(readJson(join(installed, "dist", "index.js.map")))
    expect(indexMap.sourcesContent?.length ?? 0).toBeGreaterThan(0)
    expect(indexMap.sourcesContent?.every((content) => typeof content === "string" && content.length > 0)).toBe(
      true
    )
  })

  it("a fresh project typechecks against the installed types", () => {
    // The README snippet is copied byte for byte.
    expect(readFileSync(join(project, "first-agent.ts")).equals(readFileSync(readmeSnippet))).toBe(true)

    const tsc = run(join(project, "node_modules", ".bin", "tsc"), ["-p", "."], project)
    expect(tsc.ok, tsc.transcript).toBe(true)
    expect(existsSync(join(project, "out", "first-agent.js")), tsc.transcript).toBe(true)
    expect(existsSync(join(project, "out", "otel-import.js")), tsc.transcript).toBe(true)
    expect(existsSync(join(project, "out", "providers.js")), tsc.transcript).toBe(true)
  })

  it("the provider subpaths resolve and load under plain Node", () => {
    const script = [
      "const OpenAi = await import('effect-agent-pipeline/openai')",
      "const Anthropic = await import('effect-agent-pipeline/anthropic')",
      "const { ModelConfig } = await import('effect-agent-pipeline')",
      "console.log([OpenAi.layer, OpenAi.layerConfig, OpenAi.layerEmbeddings, Anthropic.layer, Anthropic.layerConfig,",
      "  ModelConfig.languageModelLayer].map((f) => typeof f).join(' '))"
    ].join("\n")
    const node = run(process.execPath, ["--input-type=module", "-e", script], project)
    expect(node.ok, node.transcript).toBe(true)
    expect(node.result.stdout.trim(), node.transcript).toBe(Array.from({ length: 6 }, () => "function").join(" "))
  })

  it("the README's first snippet runs unchanged under plain Node", () => {
    const compiled = join(project, "out", "first-agent.js")
    expect(existsSync(compiled), "out/first-agent.js is missing: the typecheck test failed").toBe(true)

    const node = run(process.execPath, [compiled], project)
    expect(node.ok, node.transcript).toBe(true)
    expect(node.result.stdout, node.transcript).toContain("Lisbon")
    expect(node.result.stdout, node.transcript).toMatch(/desk-notes: succeeded/)
    // Exactly what the README says it prints.
    expect(node.result.stdout.trimEnd()).toBe(readmePrintedOutput())
  })

  it("fail closed at the edges, as a new user meets them: hostile input against the installed package", () => {
    const compiled = join(project, "out", "hostile-input.js")
    expect(existsSync(compiled), "out/hostile-input.js is missing: the typecheck test failed").toBe(true)

    const node = run(process.execPath, [compiled], project)
    expect(node.ok, node.transcript).toBe(true)
    expect(JSON.parse(node.result.stdout.trim().split("\n").at(-1) ?? "{}"), node.transcript).toEqual({
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

  it("the otel subpath resolves and runs under plain Node, with and without an endpoint", () => {
    const compiled = join(project, "out", "otel-import.js")
    expect(existsSync(compiled), "out/otel-import.js is missing: the typecheck test failed").toBe(true)

    const off = run(process.execPath, [compiled], project, withoutOtel())
    expect(off.ok, off.transcript).toBe(true)
    expect(off.result.stdout.trim(), off.transcript).toBe("telemetry off: Completed")

    // Nothing listens on port 9: the exporters load from the installed peers, give up quietly, and the program answers.
    const on = run(
      process.execPath,
      [compiled],
      project,
      withoutOtel({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" })
    )
    expect(on.ok, on.transcript).toBe(true)
    expect(on.result.stdout.trim(), on.transcript).toBe("telemetry on: Completed")
  })
})
