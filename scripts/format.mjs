// The project's formatter: dprint's TypeScript plugin with the configuration
// of Effect's own repository (its eslint `@effect/dprint` rule), run from the
// npm packages so no plugin is downloaded at format time.
//
//   node scripts/format.mjs          rewrite files that are not formatted
//   node scripts/format.mjs --check  list them and exit 1 (CI)
//   node scripts/format.mjs a.ts b.ts  only these files
import { createFromBuffer } from "@dprint/formatter"
import { getPath } from "@dprint/typescript"
import * as fs from "node:fs"
import * as path from "node:path"

const roots = ["src", "test", "examples", "bench", "scripts", "viewer"]
const rootFiles = ["vitest.config.ts", "vitest.package.config.ts"]
const extensions = new Set([".ts", ".mts", ".mjs", ".js"])
const skip = new Set(["node_modules", "dist", "data", ".git"])

const formatter = createFromBuffer(fs.readFileSync(getPath()))
formatter.setConfig({ indentWidth: 2, lineWidth: 120 }, {
  semiColons: "asi",
  quoteStyle: "alwaysDouble",
  trailingCommas: "never",
  operatorPosition: "maintain",
  "arrowFunction.useParentheses": "force"
})

const files = []
const walk = (dir) => {
  if (!fs.existsSync(dir)) return
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(entry.name)) continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) walk(full)
    else if (extensions.has(path.extname(entry.name))) files.push(full)
  }
}
const named = process.argv.slice(2).filter((arg) => !arg.startsWith("--"))
if (named.length > 0) files.push(...named)
else {
  roots.forEach(walk)
  for (const file of rootFiles) if (fs.existsSync(file)) files.push(file)
}

const check = process.argv.includes("--check")
const unformatted = []
for (const file of files) {
  const text = fs.readFileSync(file, "utf8")
  // A second pass settles the few constructs whose first layout moves a line
  // break; formatting is stable after it.
  let formatted = text
  for (let pass = 0; pass < 3; pass++) {
    const next = formatter.formatText({ filePath: file, fileText: formatted })
    if (next === formatted) break
    formatted = next
  }
  if (formatted === text) continue
  unformatted.push(file)
  if (!check) fs.writeFileSync(file, formatted)
}

if (check && unformatted.length > 0) {
  console.error(`Not formatted (run \`npm run format\`):\n  ${unformatted.join("\n  ")}`)
  process.exit(1)
}
console.log(`${files.length} files checked, ${unformatted.length} ${check ? "unformatted" : "rewritten"}`)
