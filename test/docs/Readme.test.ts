/**
 * The README stays true: every TypeScript snippet is the text of a file under
 * `examples/readme/` (which the typecheck covers), every such file is shown,
 * the paths it mentions exist inside the repository, and its tables name
 * every pipeline option and every typed error.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Activity,
  ActivityStore,
  ExecutionStore,
  HookEffects,
  PipelineError,
  PipelineOptions
} from "effect-agent-pipeline"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const readme = readFileSync(join(root, "README.md"), "utf8")

/** The `// #region readme` part of an example file, or the whole file. */
const shownPart = (path: string): string => {
  const text = readFileSync(join(root, path), "utf8")
  const start = text.indexOf("// #region readme\n")
  if (start < 0) return text.trimEnd()
  const end = text.indexOf("// #endregion readme", start)
  expect(end, `${path}: #region readme without #endregion readme`).toBeGreaterThan(start)
  return text.slice(start + "// #region readme\n".length, end).trimEnd()
}

interface Block {
  readonly lang: string
  readonly code: string
  /** The `<!-- example: path -->` marker right above the fence, if any. */
  readonly example: string | undefined
  readonly line: number
}

const blocks = (markdown: string): ReadonlyArray<Block> => {
  const out: Array<Block> = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)$/.exec(lines[i]!)
    if (open === null) continue
    const start = i
    const body: Array<string> = []
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!)
    const marker = /^<!-- example: (\S+) -->$/.exec(lines[start - 1] ?? "")
    out.push({ lang: open[1] ?? "", code: body.join("\n"), example: marker?.[1], line: start + 1 })
  }
  return out
}

describe("README snippets", () => {
  const all = blocks(readme)
  const typescript = all.filter((b) => b.lang === "ts" || b.lang === "typescript")

  it("every TypeScript block is marked with the example file it shows", () => {
    expect(typescript.length).toBeGreaterThan(5)
    for (const block of typescript) {
      expect(block.example, `README line ${block.line}: a ts block without <!-- example: … --> above it`).toBeDefined()
    }
  })

  it("every TypeScript block is exactly the shown part of its example file", () => {
    for (const block of typescript) {
      if (block.example === undefined) continue
      expect(block.example).toMatch(/^examples\/readme\/[\w-]+(\.test)?\.ts$/)
      expect(block.code, `README line ${block.line} differs from ${block.example}`).toBe(shownPart(block.example))
    }
  })

  it("every file under examples/readme/ is shown in the README", () => {
    const shown = new Set(typescript.map((b) => b.example))
    for (const file of readdirSync(join(root, "examples", "readme"))) {
      expect(shown.has(`examples/readme/${file}`), `examples/readme/${file} is not in the README`).toBe(true)
    }
  })

  it("the first snippet imports only published packages (it runs unchanged in a user's project)", () => {
    const first = typescript[0]!
    expect(first.example).toBe("examples/readme/first-agent.ts")
    const imports = [...first.code.matchAll(/from "([^"]+)"/g)].map((m) => m[1])
    expect(imports.every((spec) => spec !== undefined && !spec.startsWith("."))).toBe(true)
  })
})

describe("README references", () => {
  it("mentions no path outside the repository", () => {
    expect(readme).not.toContain("../")
    expect(readme).not.toMatch(/DESIGN\.md|\bseeds\//)
  })

  it("every relative link and every repository path it names exists", () => {
    const links = [...readme.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^https?:/.test(l))
    const paths = [...readme.matchAll(/`((?:examples|docs|src|test|bench)\/[^`\s]*)`/g)].map((m) => m[1]!)
    expect(links.length + paths.length).toBeGreaterThan(3)
    for (const path of [...links, ...paths]) {
      expect(existsSync(join(root, path.replace(/\/$/, ""))), `README names ${path}, which does not exist`).toBe(true)
    }
  })

  it("the install line names this version's tarball", () => {
    const version =
      (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { readonly version: string }).version
    expect(readme).toContain(`npm install ./effect-agent-pipeline-${version}.tgz `)
  })
})

describe("README tables", () => {
  const rowsOf = (heading: string): ReadonlySet<string> => {
    const start = readme.indexOf(heading)
    expect(start, `no "${heading}" section`).toBeGreaterThanOrEqual(0)
    const section = readme.slice(start, readme.indexOf("\n## ", start + heading.length))
    return new Set([...section.matchAll(/^\| `([A-Za-z]+)` \|/gm)].map((m) => m[1]!))
  }

  it("the options table has a row for every PipelineOptions field, and no other", () => {
    expect(rowsOf("### Pipeline options")).toEqual(new Set(Object.keys(PipelineOptions.defaults)))
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
    const rows = rowsOf("## Errors")
    for (const tag of tagged) expect(rows.has(tag), `the errors table has no row for ${tag}`).toBe(true)
    expect(rows.has("NoSuchElementException")).toBe(true)
  })
})
