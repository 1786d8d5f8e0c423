// Steady state and bursts, side by side, for ../shared/bench-peers' adapters
// (issue 20: "measure on the user's workload — steady state and bursts — not
// on a benchmark's forced-GC condition alone").
//
//   npm run build
//   b=$(mktemp -d) && cp -r ../shared/bench-peers/. "$b" && (cd "$b" && npm ci)
//   EAP_DIST=$PWD node --expose-gc bench/peers/steady-state.mjs "$b" [frameworks] [H]
//
// frameworks: comma-separated bench-peers adapters (default ai-sdk,eap-lm,eap-norec);
// H: no-op hook units (default 16). For each framework, in a child process of
// its own, rounds alternate two conditions, 500 requests each:
//   burst  — two full collections before the batch (what bench-peers does);
//   steady — the batch follows the previous one with no collection forced.
// It prints, per framework and condition, the sequential median and the
// requests per second with 64 in flight, summed over the rounds. Compare
// ratios within one run only.
import { spawnSync } from "node:child_process"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const ROUNDS = Number(process.env.STEADY_ROUNDS ?? 8)
const BATCH = 500

if (process.argv[2] === "--child") {
  const [, , , peersDir, fw, hText] = process.argv
  const H = Number(hText)
  const { ADAPTERS, newCounters, EXPECTED_FINAL } = await import(pathToFileURL(path.join(peersDir, "bench.mjs")).href)
  if (fw === "eap-lm") process.env.EAP_MODEL = "languagemodel"
  const gc = globalThis.gc
  if (gc === undefined) throw new Error("run with node --expose-gc")
  const sc = await ADAPTERS[fw].build(H, newCounters(H))
  const one = async () => {
    if ((await sc.run()) !== EXPECTED_FINAL) throw new Error(`${fw}: unexpected answer`)
  }
  const pool = async (n, width) => {
    let issued = 0
    await Promise.all(Array.from({ length: width }, async () => {
      while (issued < n) {
        issued++
        await one()
      }
    }))
  }
  await pool(2000, 64)
  const out = { burst: { lat: [], ns: 0n, n: 0 }, steady: { lat: [], ns: 0n, n: 0 } }
  for (let round = 0; round < ROUNDS; round++) {
    for (const condition of round % 2 === 0 ? ["burst", "steady"] : ["steady", "burst"]) {
      const o = out[condition]
      if (condition === "burst") {
        await new Promise((resolve) => setTimeout(resolve, 20))
        gc()
        gc()
      }
      for (let i = 0; i < BATCH; i++) {
        const t = process.hrtime.bigint()
        await one()
        o.lat.push(Number(process.hrtime.bigint() - t) / 1e3)
      }
      if (condition === "burst") {
        await new Promise((resolve) => setTimeout(resolve, 20))
        gc()
        gc()
      }
      const t = process.hrtime.bigint()
      await pool(BATCH, 64)
      o.ns += process.hrtime.bigint() - t
      o.n += BATCH
    }
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  console.log(JSON.stringify(Object.fromEntries(
    Object.entries(out).map(([k, o]) => [k, { median: median(o.lat), rps: o.n / (Number(o.ns) / 1e9) }])
  )))
} else {
  const peersDir = path.resolve(process.argv[2] ?? ".")
  const frameworks = (process.argv[3] ?? "ai-sdk,eap-lm,eap-norec").split(",")
  const H = process.argv[4] ?? "16"
  const self = fileURLToPath(import.meta.url)
  const rows = []
  for (const fw of frameworks) {
    const child = spawnSync(process.execPath, ["--expose-gc", self, "--child", peersDir, fw, H], {
      encoding: "utf8",
      cwd: peersDir,
      env: process.env
    })
    const line = child.stdout.trim().split("\n").pop() ?? ""
    if (child.status !== 0 || !line.startsWith("{")) {
      console.error(child.stderr)
      throw new Error(`${fw}: exited ${child.status}`)
    }
    rows.push([fw, JSON.parse(line)])
  }
  const [, base] = rows[0]
  console.log(
    `node ${process.version}, H=${H}, ${ROUNDS} rounds of ${BATCH} requests per condition; ratios to ${rows[0][0]}\n`
  )
  console.log(
    "| framework | burst median µs | steady median µs | burst req/s, 64 in flight | steady req/s, 64 in flight |"
  )
  console.log("| --- | ---: | ---: | ---: | ---: |")
  const cell = (v, b) => `${v.toFixed(1)} (${(v / b).toFixed(2)}×)`
  for (const [fw, r] of rows) {
    console.log(
      `| ${fw} | ${cell(r.burst.median, base.burst.median)} | ${cell(r.steady.median, base.steady.median)} | ${
        cell(r.burst.rps, base.burst.rps)
      } | ${cell(r.steady.rps, base.steady.rps)} |`
    )
  }
}
