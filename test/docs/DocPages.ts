/**
 * Reads the documentation as the tests see it: the README and every page of
 * `docs/`, their fenced blocks, the example file each TypeScript block shows
 * (`<!-- example: examples/readme/… -->` right above the fence) and what the
 * page says that example prints (a paragraph ending in "prints:" right after
 * the block, then a ```text block). Shared by `test/docs` (which runs the
 * examples against `src/`) and `test/package` (which runs them in a fresh
 * project that installed the packed tarball); it imports nothing of the
 * library.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository's root directory. */
export const repoRoot: string = fileURLToPath(new URL("../..", import.meta.url))

/** The folder every example a page shows lives in, relative to the root. */
export const EXAMPLES_DIR = "examples/readme"

export interface Page {
  /** Relative to the repository root: `README.md`, `docs/hooks.md`, … */
  readonly path: string
  readonly text: string
}

/** The README, then the pages of `docs/` in name order. */
export const pages = (): ReadonlyArray<Page> => [
  { path: "README.md", text: readFileSync(join(repoRoot, "README.md"), "utf8") },
  ...readdirSync(join(repoRoot, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => ({ path: `docs/${name}`, text: readFileSync(join(repoRoot, "docs", name), "utf8") }))
]

export interface Block {
  readonly page: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly lang: string
  readonly code: string
  /** The `<!-- example: path -->` marker right above the fence, if any. */
  readonly example: string | undefined
  /** Line index (0-based) just after the closing fence. */
  readonly end: number
}

export const blocks = (page: Page): ReadonlyArray<Block> => {
  const out: Array<Block> = []
  const lines = page.text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)$/.exec(lines[i]!)
    if (open === null) continue
    const start = i
    const body: Array<string> = []
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!)
    const marker = /^<!-- example: (\S+) -->$/.exec(lines[start - 1] ?? "")
    out.push({
      page: page.path,
      line: start + 1,
      lang: open[1] ?? "",
      code: body.join("\n"),
      example: marker?.[1],
      end: i + 1
    })
  }
  return out
}

export const isTypeScript = (block: Block): boolean => block.lang === "ts" || block.lang === "typescript"

export interface Shown {
  readonly page: string
  readonly line: number
  /** Relative to the repository root, e.g. `examples/readme/hooks.ts`. */
  readonly example: string
  readonly code: string
  /** The sentence that introduces the printed output ("It prints:"), if the page shows it. */
  readonly lead: string | undefined
  /** What the page says the example prints, if it shows it. */
  readonly prints: string | undefined
}

/** Every marked TypeScript block of every page, with what the page says it prints. */
export const shownExamples = (): ReadonlyArray<Shown> =>
  pages().flatMap((page) => {
    const lines = page.text.split("\n")
    const all = blocks(page)
    return all.filter((b) => isTypeScript(b) && b.example !== undefined).map((block) => {
      // The paragraph right after the block, and the block after that paragraph.
      let i = block.end
      while (i < lines.length && lines[i] === "") i++
      const paragraph: Array<string> = []
      while (i < lines.length && lines[i] !== "" && !lines[i]!.startsWith("```")) paragraph.push(lines[i++]!)
      while (i < lines.length && lines[i] === "") i++
      const lead = paragraph.join(" ")
      const next = all.find((b) => b.line === i + 1)
      const printed = lead.endsWith("prints:") && next !== undefined && next.lang === "text"
      return {
        page: page.path,
        line: block.line,
        example: block.example!,
        code: block.code,
        lead: printed ? lead : undefined,
        prints: printed ? next.code : undefined
      }
    })
  })

/** The file names under `examples/readme/`. */
export const exampleFiles = (): ReadonlyArray<string> => readdirSync(join(repoRoot, EXAMPLES_DIR)).sort()

/** A file a page shows, as it is on disk (without its trailing newline). */
export const fileText = (path: string): string => readFileSync(join(repoRoot, path), "utf8").trimEnd()

/** Whether an example is a program (it runs itself) rather than a module other files import. */
export const isProgram = (path: string): boolean => /\bNodeRuntime\.runMain\b/.test(fileText(path))

/**
 * The packages of every `npm install <packages>` line of the pages' `sh`
 * blocks (a comment after `#`, flags such as `-D`, and anything after `&&`
 * dropped; `npm install` alone is not one), in page order.
 */
export const installLines = (): ReadonlyArray<{ readonly page: string; readonly packages: ReadonlyArray<string> }> =>
  pages().flatMap((page) =>
    blocks(page)
      .filter((b) => b.lang === "sh")
      .flatMap((b) => b.code.split("\n"))
      .filter((line) => line.startsWith("npm install "))
      .map((line) => {
        const words = line.split("#")[0]!.trim().split(/\s+/).slice(2)
        const end = words.findIndex((word) => /^(&&|\|\||;|\|)$/.test(word))
        return {
          page: page.path,
          packages: (end < 0 ? words : words.slice(0, end)).filter((word) => !word.startsWith("-"))
        }
      })
      .filter((line) => line.packages.length > 0)
  )

/**
 * Output lines a program printed, without log lines (Effect's default logger:
 * `timestamp=…`; the pretty logger `NodeRuntime.runMain` installs: `[12:00:00.000] INFO …`).
 */
export const printedLines = (stdout: string): string =>
  stdout.split("\n").filter((line) => !/^(timestamp=|\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+ )/.test(line)).join("\n")
    .trimEnd()
