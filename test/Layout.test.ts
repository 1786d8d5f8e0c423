/**
 * The source layout holds (DESIGN §2): folders are layers, a module imports
 * only from its own folder or the layers below it, and no modules import
 * each other in a cycle — type-only imports included.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { fileURLToPath } from "node:url"

const src = fileURLToPath(new URL("../src", import.meta.url))

/** What each layer may import from (its own folder included). */
const ALLOWED: Readonly<Record<string, ReadonlyArray<string>>> = {
  domain: ["domain"],
  runtime: ["domain", "runtime"],
  stores: ["domain", "stores"],
  // The memory operation (ai/Memory.ts) runs over the MemoryStore service.
  ai: ["domain", "runtime", "stores", "ai"],
  pipeline: ["domain", "runtime", "stores", "ai", "pipeline"],
  // Durable requests (the effect-agent-pipeline/durable subpath) run the pipeline's stages as workflow activities.
  durable: ["domain", "runtime", "stores", "ai", "pipeline", "durable"],
  // The built-in memory hooks run their reads and writes as memory operations (ai/Memory.ts).
  hooks: ["domain", "runtime", "stores", "ai", "pipeline", "hooks"],
  // The HTTP + SSE server and the viewer serve whatever agent a user built.
  server: ["domain", "runtime", "stores", "ai", "pipeline", "hooks", "durable", "server"],
  // The command line (`effect-agent-pipeline viewer`) starts a server over a store.
  cli: ["domain", "runtime", "stores", "ai", "pipeline", "hooks", "durable", "server", "cli"]
}

const modules = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? modules(path) : name.endsWith(".ts") ? [path] : []
  })

/**
 * Relative imports of a module — static imports, re-exports and dynamic
 * `import("…")` alike (a provider or store backend loaded on demand still
 * makes an edge) — as repository-relative `.ts` paths.
 */
const importsOf = (file: string): ReadonlyArray<string> =>
  [
    ...readFileSync(file, "utf8").matchAll(
      /(?:(?:import|export)\s[^"]*?from\s+|import\(\s*)"(\.{1,2}\/[^"]+)\.js"/g
    )
  ].map((m) => relative(src, normalize(join(dirname(file), `${m[1]!}.ts`))))

const all = modules(src).map((file) => relative(src, file))
const graph = new Map(all.map((module) => [module, importsOf(join(src, module))]))
const layerOf = (module: string): string => (module.includes("/") ? module.split("/")[0]! : "index")

describe("source layout (DESIGN §2)", () => {
  it("every module is in a known layer (index.ts is the public surface)", () => {
    for (const module of all) {
      const layer = layerOf(module)
      expect(layer === "index" || layer in ALLOWED, `${module} is outside the known layers`).toBe(true)
    }
  })

  it("a module imports only from its own layer or the layers below it", () => {
    const violations: Array<string> = []
    for (const [module, imports] of graph) {
      const layer = layerOf(module)
      if (layer === "index") continue
      for (const target of imports) {
        if (!ALLOWED[layer]!.includes(layerOf(target))) violations.push(`${module} → ${target}`)
      }
    }
    expect(violations).toEqual([])
  })

  it("no import cycles, type-only imports included", () => {
    const cycles: Array<string> = []
    const state = new Map<string, "visiting" | "done">()
    const visit = (module: string, path: ReadonlyArray<string>): void => {
      if (state.get(module) === "done") return
      if (state.get(module) === "visiting") {
        cycles.push([...path.slice(path.indexOf(module)), module].join(" → "))
        return
      }
      state.set(module, "visiting")
      for (const target of graph.get(module) ?? []) visit(target, [...path, module])
      state.set(module, "done")
    }
    for (const module of graph.keys()) visit(module, [])
    expect(cycles).toEqual([])
  })

  it("no module is over 350 lines (DESIGN §2: a longer one owns two things)", () => {
    const long = all
      .map((module) => ({ module, lines: readFileSync(join(src, module), "utf8").split("\n").length }))
      .filter(({ lines }) => lines > 351)
      .map(({ lines, module }) => `${module}: ${lines - 1} lines`)
    expect(long).toEqual([])
  })

  it("every import names an existing module", () => {
    for (const [module, imports] of graph) {
      for (const target of imports) expect(graph.has(target), `${module} imports missing ${target}`).toBe(true)
    }
  })
})
