/**
 * The public surface is documented the way `@effect/ai`'s is: every export of
 * a namespace `src/index.ts` re-exports, and of every subpath entry in
 * package.json "exports", carries a JSDoc block with `@since` and `@category`
 * (re-exports `export { X } from` included, and the member interfaces of an
 * exported `declare namespace`); constants are named one way (no
 * SCREAMING_CASE); every module directly in a layer folder (`src/<layer>/X.ts`)
 * is public — a namespace of `src/index.ts` or a subpath — unless listed below
 * as a part of a public module; and no module under an `internal/` folder is
 * public.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))
const src = join(root, "src")
const index = join(src, "index.ts")

/** The package's entry points: `./dist/X.js` in package.json "exports" is `src/X.ts`. */
const entries: ReadonlyArray<readonly [subpath: string, file: string]> = Object.entries(
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports as Record<
    string,
    string | { readonly default?: string }
  >
).flatMap(([subpath, target]) => {
  const match = /^\.\/dist\/(.+)\.js$/.exec(typeof target === "string" ? target : target.default ?? "")
  return match ? [[subpath, join(src, `${match[1]!}.ts`)] as const] : []
})

const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile)
const options = ts.parseJsonConfigFileContent(config.config, ts.sys, root).options
const program = ts.createProgram({ rootNames: entries.map(([, file]) => file), options: { ...options, noEmit: true } })
const checker = program.getTypeChecker()

const moduleName = (file: string): string => relative(src, file).replace(/\\/g, "/").replace(/\.ts$/, "")
const isInternal = (file: string): boolean => moduleName(file).split("/").includes("internal")

const moduleSymbol = (file: string): ts.Symbol => {
  const source = program.getSourceFile(file)
  const symbol = source && checker.getSymbolAtLocation(source)
  if (!symbol) throw new Error(`${moduleName(file)} is not a module the program can read`)
  return symbol
}

/** The source file a module specifier (`export … from "…"`) resolves to. */
const fileOf = (specifier: ts.Expression): string | undefined => {
  const target = checker.getSymbolAtLocation(specifier)
  const declaration = target?.valueDeclaration ?? target?.declarations?.[0]
  return declaration && ts.isSourceFile(declaration) ? declaration.fileName : undefined
}

/**
 * The public modules: the namespaces `src/index.ts` re-exports
 * (`export * as X from`) and every other subpath entry. An export of
 * `index.ts` that is not a namespace is checked as part of an "index" module.
 */
const publicModules = (() => {
  const files = new Set<string>()
  const indexExports: Array<ts.Symbol> = []
  for (const symbol of checker.getExportsOfModule(moduleSymbol(index))) {
    const namespace = symbol.declarations?.find(ts.isNamespaceExport)
    const file = namespace && fileOf(namespace.parent.moduleSpecifier!)
    if (file) files.add(file)
    else indexExports.push(symbol)
  }
  for (const [, file] of entries) if (file !== index) files.add(file)
  return { files: [...files].sort(), indexExports }
})()

/**
 * The modules directly in a layer folder that are not public modules
 * themselves, each with the public module that re-exports what users name
 * of it (the test checks that it does). Anything else directly in a layer
 * folder is a namespace of `src/index.ts`; implementation goes under
 * `internal/`.
 */
const partsOfPublicModules: Readonly<Record<string, string>> = {
  // Stores seal and read checkpoints, so the data sits in domain; users name it `Approval.Checkpoint`.
  "domain/Checkpoint": "pipeline/Approval",
  // The construction errors, split out of `PipelineError`, which names every error.
  "domain/ConfigError": "domain/PipelineError",
  // The tag helper and `TypeId` every layer's errors use; users name `PipelineError.TypeId`.
  "domain/ErrorId": "domain/PipelineError",
  // The errors a hook stops a request with, split out of `PipelineError`, which names every error.
  "domain/HookError": "domain/PipelineError",
  // A hook run's evidence, part of the record: `ExecutionRecord.HookInvocation`.
  "domain/HookInvocation": "domain/ExecutionRecord",
  // The prompt section format `UserProfile` and the offline model (ai) use too; users reach it through `PromptBuilder`.
  "domain/PromptSections": "pipeline/PromptBuilder",
  // Checked wherever a request id is made (`PipelineRequest` too); users name `PipelineContext.RequestId`.
  "domain/RequestId": "domain/PipelineContext",
  // The tool shape the ai layer's registry and planner share; users name `PromptBuilder.ToolDescriptor`.
  "domain/ToolDescriptor": "pipeline/PromptBuilder",
  // The parts an agent is assembled from: `Agent.AgentConfig`.
  "pipeline/AgentConfig": "pipeline/Agent",
  // The server's error classes: `AgentServer.ApiError`.
  "server/ApiError": "server/AgentServer",
  // What a test reads back from `Agent.layerTest`: `Agent.TestAgent`.
  "pipeline/TestAgent": "pipeline/Agent",
  // The hook runtime's synchronous fast path (runtime); users mark a handler with `Hook.sync`.
  "runtime/SyncHandler": "pipeline/Hook"
}

/**
 * Programs, not modules: the package's `bin` entries (`effect-agent-pipeline
 * viewer`), which export nothing. The test checks each is a `bin` target.
 */
const programs: ReadonlySet<string> = new Set(["cli/main"])

/** The modules directly in a layer folder (`src/<layer>/X.ts`, so not `src/index.ts`), as `layer/X`. */
const topLevelModules: ReadonlyArray<string> = readdirSync(src, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((layer) =>
    readdirSync(join(src, layer.name), { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
      .map((entry) => `${layer.name}/${entry.name.slice(0, -".ts".length)}`)
  )
  .sort()

const tagsOf = (node: ts.Node): ReadonlySet<string> =>
  new Set(
    ts.getJSDocTags(node)
      .filter((tag) => (ts.getTextOfJSDocComment(tag.comment) ?? "").trim() !== "")
      .map((tag) => tag.tagName.text)
  )

/**
 * The nodes a declaration's JSDoc block may sit above: a variable's
 * statement; a re-export's `export … from` (or, in `export { … }`, the name
 * itself); the declaration itself otherwise.
 */
const docNodes = (declaration: ts.Declaration): ReadonlyArray<ts.Node> =>
  ts.isVariableDeclaration(declaration)
    ? [declaration.parent.parent]
    : ts.isExportSpecifier(declaration)
    ? [declaration, declaration.parent.parent]
    : ts.isNamespaceExport(declaration)
    ? [declaration.parent]
    : [declaration]

const isDocumented = (declaration: ts.Declaration): boolean =>
  docNodes(declaration).some((node) => {
    const tags = tagsOf(node)
    return tags.has("since") && tags.has("category")
  })

interface Exported {
  readonly module: string
  readonly name: string
  readonly symbol: ts.Symbol
}

/** The members a `declare namespace X { export … }` exports, as `X.Member`. */
const namespaceMembers = (exported: Exported): ReadonlyArray<Exported> => {
  if (!exported.symbol.declarations?.some(ts.isModuleDeclaration)) return []
  const members: Array<Exported> = []
  exported.symbol.exports?.forEach((member, name) => {
    if (!member.declarations?.some((declaration) => ts.isModuleBlock(declaration.parent))) return
    const inner = { module: exported.module, name: `${exported.name}.${String(name)}`, symbol: member }
    members.push(inner, ...namespaceMembers(inner))
  })
  return members
}

const exported: ReadonlyArray<Exported> = [
  ...publicModules.indexExports.map((symbol) => ({ module: "index", name: symbol.name, symbol })),
  ...publicModules.files.flatMap((file) =>
    checker.getExportsOfModule(moduleSymbol(file)).map((symbol) => ({
      module: moduleName(file),
      name: symbol.name,
      symbol
    }))
  )
].flatMap((entry) => [entry, ...namespaceMembers(entry)])

/**
 * Whether an export is documented: a re-export by the block above its
 * `export … from`; a declaration by the block above each of its declarations
 * (a function's overloads count as one declaration, documented once).
 */
const documented = ({ symbol }: Exported): boolean => {
  const declarations = symbol.declarations ?? []
  if (declarations.length === 0) return false
  const functions = declarations.filter(ts.isFunctionDeclaration)
  const others = declarations.filter((declaration) => !ts.isFunctionDeclaration(declaration))
  return (functions.length === 0 || functions.some(isDocumented)) &&
    others.every(isDocumented)
}

describe("public surface (issue 18)", () => {
  it("the package has entry points and public modules to check", () => {
    expect(entries.map(([subpath]) => subpath)).toContain(".")
    expect(publicModules.files.length).toBeGreaterThan(0)
    expect(exported.length).toBeGreaterThan(0)
  })

  it("every export of a public module has a JSDoc block with @since and @category", () => {
    const missing = exported.filter((entry) => !documented(entry)).map(({ module, name }) => `${module}: ${name}`)
    expect(missing, `exports without @since and @category:\n${missing.join("\n")}`).toEqual([])
  })

  it("no exported constant is named in SCREAMING_CASE", () => {
    const screaming = exported.filter(({ name, symbol }) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      const local = name.split(".").at(-1)!
      return local.length > 1 && /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/.test(local) &&
        (target.declarations ?? []).some(ts.isVariableDeclaration)
    }).map(({ module, name }) => `${module}: ${name}`)
    expect(screaming, `constants in SCREAMING_CASE:\n${screaming.join("\n")}`).toEqual([])
  })

  it("every module directly in a layer folder is public, or a listed part of a public module", () => {
    const publicNames = new Set(publicModules.files.map(moduleName))
    const bins = Object.values(
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")).bin as Record<string, string>
    ).map((target) => target.replace(/^\.\/dist\//, "").replace(/\.js$/, ""))
    expect([...programs].filter((program) => !bins.includes(program)), "programs that are no bin target").toEqual([])
    const unexported = topLevelModules.filter((module) =>
      !publicNames.has(module) && !(module in partsOfPublicModules) && !programs.has(module)
    )
    expect(
      unexported,
      `modules directly in a layer folder that are neither a namespace of src/index.ts nor a subpath ` +
        `(export them, move them under internal/, or list them in partsOfPublicModules):\n${unexported.join("\n")}`
    ).toEqual([])
    // The list stays true: each part sits directly in a layer folder, is not
    // public itself, and its public module re-exports from it.
    const stale = Object.entries(partsOfPublicModules).flatMap(([part, owner]) => {
      if (!topLevelModules.includes(part)) return [`${part}: not a module directly in a layer folder`]
      if (publicNames.has(part)) return [`${part}: public itself`]
      if (!publicNames.has(owner)) return [`${part}: ${owner} is not a public module`]
      const reexports = program.getSourceFile(join(src, `${owner}.ts`))!.statements.some((statement) => {
        if (!ts.isExportDeclaration(statement) || statement.moduleSpecifier === undefined) return false
        const target = fileOf(statement.moduleSpecifier)
        return target !== undefined && moduleName(target) === part
      })
      return reexports ? [] : [`${part}: ${owner} re-exports nothing from it`]
    })
    expect(stale, `partsOfPublicModules entries that no longer hold:\n${stale.join("\n")}`).toEqual([])
  })

  it("no module under an internal/ folder is exported from src/index.ts or a subpath", () => {
    const leaks: Array<string> = [
      ...entries.filter(([, file]) => isInternal(file)).map(([subpath, file]) => `${subpath} → ${moduleName(file)}`),
      ...publicModules.files.filter(isInternal).map((file) => `index → ${moduleName(file)}`)
    ]
    // `export * from` / `export * as X from` an internal module, anywhere on the surface.
    for (const file of [index, ...publicModules.files]) {
      for (const statement of program.getSourceFile(file)!.statements) {
        if (!ts.isExportDeclaration(statement) || statement.moduleSpecifier === undefined) continue
        if (statement.exportClause !== undefined && !ts.isNamespaceExport(statement.exportClause)) continue
        const target = fileOf(statement.moduleSpecifier)
        if (target !== undefined && isInternal(target)) leaks.push(`${moduleName(file)} → ${moduleName(target)}`)
      }
    }
    expect(leaks, `internal modules on the public surface:\n${leaks.join("\n")}`).toEqual([])
  })
})
