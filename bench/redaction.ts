/**
 * Redaction's costs (issue 23): buffered redaction throughput on a mixed
 * text (prose, numbers, code-ish lines, ~1 finding per 2 KB), the time of
 * adversarial inputs built against backtracking, and the stream guard's
 * added latency per token for 4-character tokens against passing the
 * tokens through unchanged.
 *
 *   npx tsx bench/redaction.ts
 *
 * Not a test: figures move with the machine. Runs in well under 30 s.
 */
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { performance } from "node:perf_hooks"
import * as Redaction from "../src/runtime/Redaction.js"

const corpus: { readonly secrets: ReadonlyArray<{ readonly text: string }> } = JSON.parse(
  readFileSync(new URL("../test/fixtures/secrets/corpus.json", import.meta.url), "utf8")
)
const redactor = Effect.runSync(Redaction.make())
const guard = Effect.runSync(Redaction.streamGuard(redactor))

const PROSE = [
  "The quarterly report for order #100234987 shipped on 2024-01-15 with version 10.4.12 of the tool.",
  "Prices rose 3.5% to 1,234.56 EUR; see ISBN 978-3-16-148410-0 and commit a1b2c3d for details.",
  "Café owners in 日本 met at 12:30 — 👋🏽 — and discussed the roadmap, the budget and the hiring plan.",
  "  const total = items.reduce((sum, item) => sum + item.price * item.quantity, 0) // v1.2.3",
  "Call the front desk on extension 4021 or visit room 101 on the third floor after lunch."
]

/** About `bytes` of mixed text: prose with a corpus secret every ~2 KB. */
const mixed = (size: number): string => {
  const parts: Array<string> = []
  let length = 0
  for (let i = 0; length < size; i++) {
    const part = i % 20 === 19 ? corpus.secrets[(i / 20) % corpus.secrets.length | 0]!.text : PROSE[i % PROSE.length]!
    parts.push(part)
    length += part.length + 1
  }
  return parts.join("\n")
}

const time = (f: () => void): number => {
  const start = performance.now()
  f()
  return performance.now() - start
}

const best = (runs: number, f: () => void): number => Math.min(...Array.from({ length: runs }, () => time(f)))

// Buffered throughput.
const text = mixed(4 * 2 ** 20)
const bytes = Buffer.byteLength(text)
redactor.redact(text.slice(0, 100_000))
const ms = best(3, () => redactor.redact(text))
const findings = redactor.scan(text).length
console.log(
  `buffered redact: ${(bytes / 2 ** 20).toFixed(1)} MiB, ${findings} findings, ` +
    `${ms.toFixed(0)} ms, ${(bytes / 2 ** 20 / (ms / 1000)).toFixed(1)} MiB/s`
)

// Adversarial inputs (each 200,000 characters).
const adversarial: ReadonlyArray<readonly [string, string]> = [
  ["digits and spaces", "4 ".repeat(100_000)],
  ["grouped digits", "4111 ".repeat(40_000)],
  ["an endless local part", "a".repeat(200_000)],
  ["labels without a TLD", "a@" + "b.".repeat(99_999)],
  ["key prefixes", "sk-".repeat(66_666)],
  ["unterminated JWT", "eyJ" + "A".repeat(199_990) + "."],
  ["private key headers", "-----BEGIN PRIVATE KEY-----".repeat(7_400)],
  ["phone separators", "+1 ".repeat(66_666)],
  ["bearer without token", "Bearer ".repeat(28_000)]
]
for (const [name, input] of adversarial) {
  const t = best(2, () => redactor.redact(input))
  console.log(`adversarial ${name.padEnd(22)} ${String(input.length).padStart(7)} chars: ${t.toFixed(1)} ms`)
}

// Stream guard latency per 4-character token.
const streamText = mixed(2 ** 19)
const tokens: Array<string> = []
for (let i = 0; i < streamText.length; i += 4) tokens.push(streamText.slice(i, i + 4))
let sink = 0
const passThrough = best(3, () => {
  for (const token of tokens) sink += token.length
})
let out = ""
const guarded = best(2, () => {
  let state = guard.initial
  out = ""
  for (const token of tokens) {
    const [next, released] = guard.push(state, token)
    state = next
    out += released
  }
  out += guard.end(state)
})
if (out !== redactor.redact(streamText).text) throw new Error("the guard's output differs from buffered redaction")
const perToken = ((guarded - passThrough) * 1000) / tokens.length
console.log(
  `stream guard: ${tokens.length} tokens of 4 characters, pass-through ${passThrough.toFixed(1)} ms, ` +
    `guarded ${guarded.toFixed(0)} ms: +${perToken.toFixed(2)} µs/token (window ${guard.window} characters)`
)
if (sink < 0) console.log(sink)
