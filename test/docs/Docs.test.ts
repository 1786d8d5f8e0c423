/**
 * The README and the pages of `docs/` stay true: every TypeScript block is a
 * whole file under `examples/readme/` (which the typecheck covers), every such
 * file is shown, the links and repository paths they name exist, the README
 * stays an overview with a map of every page, and the reference tables name
 * every pipeline option and every typed error. (What the examples print is
 * checked by `DocsExamples.test.ts`, and again from the packed tarball by the
 * package test.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Api from "effect-agent-pipeline"
import {
  Activity,
  ActivityStore,
  ExecutionStore,
  HookEffects,
  PipelineError,
  PipelineOptions
} from "effect-agent-pipeline"
import * as Anthropic from "effect-agent-pipeline/anthropic"
import * as DurablePipeline from "effect-agent-pipeline/durable"
import * as OpenAi from "effect-agent-pipeline/openai"
import * as OpenAiCompat from "effect-agent-pipeline/openai-compat"
import * as Telemetry from "effect-agent-pipeline/otel"
import * as Postgres from "effect-agent-pipeline/postgres"
import * as Redis from "effect-agent-pipeline/redis"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import {
  blocks,
  exampleFiles,
  EXAMPLES_DIR,
  fileText,
  installLines,
  isProgram,
  isTypeScript,
  pages,
  repoRoot,
  shownExamples
} from "./DocPages.js"

const all = pages()
const readme = all.find((p) => p.path === "README.md")!
const page = (path: string) => {
  const found = all.find((p) => p.path === path)
  expect(found, `${path} is missing`).toBeDefined()
  return found!
}
const packageJson = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  readonly version: string
  readonly devDependencies: Readonly<Record<string, string>>
}

/** The pages the reference is split into (the list, plus the pages for what fits none). */
const REFERENCE_PAGES = [
  "docs/agents.md",
  "docs/hooks.md",
  "docs/operations.md",
  "docs/human-in-the-loop.md",
  "docs/records.md",
  "docs/stores.md",
  "docs/models.md",
  "docs/telemetry.md",
  "docs/testing.md",
  "docs/errors.md",
  "docs/performance.md",
  "docs/layout.md",
  "docs/contract.md",
  "docs/server.md",
  "docs/viewer.md",
  "docs/memory.md",
  "docs/semantic-cache.md",
  "docs/guardrails.md",
  "docs/durable.md"
]

/** Files that are modules the others import (or that other tests import), not programs. */
const MODULES = new Set([
  "examples/readme/tools.ts",
  "examples/readme/user-profile.ts",
  "examples/readme/telemetry.ts",
  // Layers for a local server the tests do not run (the provider's own tests do, over the wire).
  "examples/readme/openai-compat.ts",
  // A Layer serving an agent over HTTP; test/server/Example.test.ts serves it.
  "examples/readme/server.ts"
])
/** Programs whose output the page describes in prose (it names a generated id). */
const PROSE_OUTPUT = new Set(["examples/readme/deploy-config.ts"])

describe("the README is an overview", () => {
  it("at most 400 lines", () => {
    expect(readme.text.split("\n").length).toBeLessThanOrEqual(400)
  })

  it("has what a newcomer needs: quick start, install, first agent, a map of the docs", () => {
    for (const heading of ["## Quick start", "## Install in your project", "## Your first agent", "## Documentation"]) {
      expect(readme.text).toContain(`\n${heading}\n`)
    }
    expect(readme.text).toContain("npm install && npm start")
    expect(readme.text).toContain("npm test")
  })

  it("its map links every page of docs/, and every page the reference is split into exists", () => {
    const documented = all.filter((p) => p.path.startsWith("docs/")).map((p) => p.path)
    expect(new Set(documented)).toEqual(new Set(REFERENCE_PAGES))
    const map = readme.text.slice(readme.text.indexOf("## Documentation"))
    for (const path of documented) expect(map, `the README's map does not link ${path}`).toContain(`](${path})`)
  })

  it("its one TypeScript block is the first agent, importing only published packages", () => {
    const typescript = blocks(readme).filter(isTypeScript)
    expect(typescript.map((b) => b.example)).toEqual(["examples/readme/first-agent.ts"])
    const imports = [...typescript[0]!.code.matchAll(/from "([^"]+)"/g)].map((m) => m[1])
    expect(imports.every((spec) => spec !== undefined && !spec.startsWith("."))).toBe(true)
  })

  it("the install line names this version's tarball", () => {
    expect(readme.text).toContain(`npm install ./effect-agent-pipeline-${packageJson.version}.tgz `)
  })
})

describe("every snippet is a whole example file", () => {
  const shown = shownExamples()

  it("every TypeScript block is marked with the example file it shows", () => {
    const typescript = all.flatMap((p) => blocks(p).filter(isTypeScript))
    expect(typescript.length).toBeGreaterThan(15)
    for (const block of typescript) {
      expect(block.example, `${block.page} line ${block.line}: a ts block without <!-- example: … --> above it`)
        .toBeDefined()
    }
  })

  it("every TypeScript block is exactly its file, whole", () => {
    for (const block of shown) {
      expect(block.example).toMatch(/^examples\/readme\/[\w-]+(\.test)?\.ts$/)
      expect(block.code, `${block.page} line ${block.line} differs from ${block.example}`).toBe(fileText(block.example))
    }
  })

  it("every file under examples/readme/ is shown exactly once", () => {
    const counts = new Map<string, number>()
    for (const block of shown) counts.set(block.example, (counts.get(block.example) ?? 0) + 1)
    for (const file of exampleFiles()) {
      expect(counts.get(`${EXAMPLES_DIR}/${file}`), `${EXAMPLES_DIR}/${file} is shown ${counts.get(file) ?? 0} times`)
        .toBe(1)
    }
  })

  it("an example imports only published packages and the other examples (its helpers are visible)", () => {
    for (const block of shown) {
      for (const [, spec] of block.code.matchAll(/from "([^"]+)"/g)) {
        if (spec!.startsWith(".")) {
          expect(spec, `${block.example} imports ${spec}`).toMatch(/^\.\/[\w-]+\.js$/)
          expect(existsSync(join(repoRoot, EXAMPLES_DIR, spec!.replace(/\.js$/, ".ts")))).toBe(true)
        }
      }
    }
  })

  it("an example another example imports is a module: importing it runs nothing", () => {
    const imported = new Set(
      shown.flatMap((b) => [...b.code.matchAll(/from "\.\/([\w-]+)\.js"/g)].map((m) => `${EXAMPLES_DIR}/${m[1]}.ts`))
    )
    for (const path of imported) expect(isProgram(path), `${path} is imported, yet runs itself`).toBe(false)
  })

  it("every program shows what it prints, unless the page describes a generated value in prose", () => {
    for (const block of shown) {
      if (block.example.endsWith(".test.ts")) continue
      if (MODULES.has(block.example)) {
        expect(isProgram(block.example), `${block.example} is listed as a module`).toBe(false)
        continue
      }
      expect(isProgram(block.example), `${block.example}: a program ends with NodeRuntime.runMain`).toBe(true)
      if (PROSE_OUTPUT.has(block.example)) continue
      expect(block.prints, `${block.page} line ${block.line}: no "… prints:" text block after ${block.example}`)
        .toBeDefined()
    }
  })
})

describe("links and paths", () => {
  const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s-]/gu, "").replace(/\s/g, "-")
  const anchorsOf = (text: string) => new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)))

  it("no page names a path outside the repository or the design notes", () => {
    for (const p of all) {
      expect(p.text, p.path).not.toMatch(/\]\(\.\.\//)
      expect(p.text, p.path).not.toMatch(/DESIGN\.md|\bseeds\//)
    }
  })

  it("every relative link and anchor resolves", () => {
    let checked = 0
    for (const p of all) {
      for (const [, target, anchor] of p.text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        if (/^https?:/.test(target!)) continue
        const file = target === "" ? p.path : normalize(join(dirname(p.path), target!))
        expect(existsSync(join(repoRoot, file)), `${p.path} links ${target}, which does not exist`).toBe(true)
        if (anchor !== undefined) {
          const text = file === p.path ? p.text : readFileSync(join(repoRoot, file), "utf8")
          expect(anchorsOf(text).has(anchor), `${p.path} links ${file}#${anchor}: no such heading`).toBe(true)
        }
        checked++
      }
    }
    expect(checked).toBeGreaterThan(30)
  })

  it("every repository path a page names in code spans exists", () => {
    let checked = 0
    for (const p of all) {
      for (const [, path] of p.text.matchAll(/`((?:examples|docs|src|test|bench)\/[^`\s<>]*)`/g)) {
        expect(existsSync(join(repoRoot, path!.replace(/\/$/, ""))), `${p.path} names ${path}, which does not exist`)
          .toBe(true)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(10)
  })

  it("no page uses a name that is leaving the public surface", () => {
    const internal =
      /\b(RequestRecorder|BackgroundPool|PipelineHooks|PlanWire|OPERATION_KEYS|handlersOf|openAiEndpoint|anthropicEndpoint|OPENAI_DEFAULT_BASE_URL)\b/
    for (const p of all) expect(p.text, p.path).not.toMatch(internal)
    for (const file of exampleFiles()) expect(fileText(`${EXAMPLES_DIR}/${file}`), file).not.toMatch(internal)
  })
})

describe("the names the pages use", () => {
  /** The namespaces a reader imports: the package's and its subpaths' (as the examples name them). */
  const namespaces: Readonly<Record<string, object>> = {
    ...(Api as Record<string, object>),
    Anthropic,
    DurablePipeline,
    OpenAi,
    OpenAiCompat,
    Postgres,
    Redis,
    Sqlite,
    Telemetry
  }
  /** `Namespace.member` spans that name a type, a service's method, or another package's module of the same name. */
  const NOT_VALUES = new Set([
    "PipelineRequest.Input",
    "ExecutionStore.get",
    "CheckpointStore.get",
    "Pipeline.stream",
    "Pipeline.process",
    "Pipeline.resume",
    // The durable service's methods (the module exports its Layers).
    "DurablePipeline.process",
    "DurablePipeline.submit",
    "DurablePipeline.poll",
    "DurablePipeline.approve",
    "Telemetry.CurrentSpanTransformer" // @effect/ai's Telemetry
  ])

  it("every `Namespace.member` a page names exists in the public API", () => {
    let checked = 0
    for (const p of all) {
      for (const [, namespace, member] of p.text.matchAll(/`([A-Z]\w+)\.(\w+)/g)) {
        const module = namespaces[namespace!]
        if (module === undefined || NOT_VALUES.has(`${namespace}.${member}`)) continue
        expect(member! in module, `${p.path} names ${namespace}.${member}, which the package does not export`)
          .toBe(true)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(30)
  })
})

describe("reference tables", () => {
  /** The first-column names of the table rows in the section under `heading`, up to the next `## `. */
  const rowsOf = (path: string, heading: string): ReadonlySet<string> => {
    const text = page(path).text
    const start = text.indexOf(`${heading}\n`)
    expect(start, `${path} has no "${heading}" section`).toBeGreaterThanOrEqual(0)
    const end = text.indexOf("\n## ", start + heading.length)
    const section = text.slice(start, end < 0 ? undefined : end)
    return new Set([...section.matchAll(/^\| `([A-Za-z]+)` \|/gm)].map((m) => m[1]!))
  }

  it("the options table has a row for every PipelineOptions field, and no other", () => {
    expect(rowsOf("docs/agents.md", "## Pipeline options")).toEqual(new Set(Object.keys(PipelineOptions.defaults)))
  })

  it("the errors table has a row for every typed error a user can get", () => {
    const exported: ReadonlyArray<unknown> = [
      ...Object.values(PipelineError),
      ExecutionStore.ExecutionStoreError,
      HookEffects.HookEffectReportError,
      ActivityStore.ActivityStoreError,
      Activity.InvalidActivityOptions
    ]
    const tagged = exported.flatMap((value) =>
      typeof value === "function" && value.prototype instanceof Error ? [value.name] : []
    )
    expect(tagged.length).toBeGreaterThanOrEqual(11)
    const rows = rowsOf("docs/errors.md", "# Errors")
    for (const tag of tagged) expect(rows.has(tag), `the errors table has no row for ${tag}`).toBe(true)
    expect(rows.has("NoSuchElementException")).toBe(true)
  })
})

describe("install lines", () => {
  it("the testing page installs the test runner versions this repository tests with (the Effect 3 line)", () => {
    const testing = installLines().filter((l) => l.page === "docs/testing.md")
    expect(testing).toHaveLength(1)
    const { devDependencies } = packageJson
    expect(testing[0]!.packages).toEqual([
      `vitest@${devDependencies["vitest"]}`,
      `@effect/vitest@${devDependencies["@effect/vitest"]}`
    ])
    expect(page("docs/testing.md").text).toContain(`\`${devDependencies["effect"]}\``)
  })

  it("every optional package is installed with a range of the Effect 3 line, as the package test installs it", () => {
    const lines = installLines()
    const packages = lines.flatMap((l) => l.packages).filter((p) => !p.startsWith("./"))
    for (const spec of packages) expect(spec, "an install line without a version range").toMatch(/^@?[\w/.-]+@[~^]\d/)
    for (
      const name of [
        "effect",
        "@effect/ai",
        "@effect/platform-node",
        "@effect/sql",
        "@effect/sql-sqlite-node",
        "@effect/sql-pg",
        "ioredis",
        "@effect/ai-openai",
        "@effect/ai-anthropic",
        "@effect/opentelemetry",
        "@effect/platform",
        "vitest",
        "@effect/vitest"
      ]
    ) {
      expect(packages.some((p) => p.startsWith(`${name}@`)), `no install line names ${name}`).toBe(true)
    }
  })
})
