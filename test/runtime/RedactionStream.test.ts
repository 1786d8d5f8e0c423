/**
 * The stream guard (issue 23, "Streamed tokens"): over random splits of
 * texts mixing the corpus of secrets with ordinary text (multi-byte
 * characters and surrogate pairs included, cut anywhere),
 *
 * - S1: the concatenated output equals `redact(concatenated input).text`;
 * - S2: no corpus secret appears in what the client has seen at any moment
 *   (every prefix of the emitted output);
 * - S3: the held-back text never exceeds the guard's window;
 * - S4: no emitted chunk splits a surrogate pair;
 * - S5: text that can no longer be part of a secret is released at once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, FastCheck as fc, Stream } from "effect"
import * as Redaction from "../../src/runtime/Redaction.js"
import { corpus, redactor } from "../fixtures/secrets/corpus.js"
import { propertyRuns } from "../support/PropertyRuns.js"

const guard = Effect.runSync(Redaction.streamGuard(redactor))

/** Ordinary text: words, digits, punctuation, accents, CJK, emoji (surrogate pairs). */
const ordinary = fc.oneof(
  fc.constantFrom(
    "the",
    "order",
    "2024-01-15",
    "v1.2.3",
    "#123456789",
    "café",
    "日本語",
    "👋🏽",
    "𝄞",
    "—",
    "\n",
    "sk",
    "@",
    "+1"
  ),
  fc.fullUnicodeString({ maxLength: 12 }),
  fc.string({ maxLength: 12 })
)
const secret = fc.constantFrom(...corpus.secrets)
const separator = fc.constantFrom(" ", "\n", ", ", " | ", ": ", "\t")

/** A text of pieces and the corpus secrets in it. */
const text = fc.array(fc.tuple(fc.oneof(secret.map((s) => ({ s })), ordinary.map((o) => ({ o }))), separator), {
  maxLength: 12
}).map((pieces) => ({
  text: pieces.map(([p, sep]) => ("s" in p ? p.s.text : p.o) + sep).join(""),
  secrets: pieces.flatMap(([p]) => ("s" in p ? [p.s.secret] : []))
}))

/** Cut points anywhere, surrogate pairs included. */
const split = (t: string, cuts: ReadonlyArray<number>): ReadonlyArray<string> => {
  const at = [...new Set(cuts.map((c) => c % (t.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<string> = []
  let from = 0
  for (const c of at) {
    chunks.push(t.slice(from, c))
    from = c
  }
  chunks.push(t.slice(from))
  return chunks
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Runs the guard over chunks, checking S2–S4 after every step; returns the output. */
const runGuard = (chunks: ReadonlyArray<string>, secrets: ReadonlyArray<string>): string => {
  let state = guard.initial
  let seen = ""
  for (const chunk of chunks) {
    const [next, out] = guard.push(state, chunk)
    state = next
    seen += out
    expect(guard.held(state)).toBeLessThanOrEqual(guard.window)
    expect(out).not.toMatch(LONE_SURROGATE)
    for (const s of secrets) expect(seen).not.toContain(s)
  }
  const tail = guard.end(state)
  expect(tail).not.toMatch(LONE_SURROGATE)
  return seen + tail
}

describe("Redaction stream guard (properties)", () => {
  it.prop(
    "S1–S4: over random splits, output = buffered redaction; no secret in any prefix; held ≤ window; pairs whole",
    [text, fc.array(fc.nat(), { maxLength: 40 })],
    ([t, cuts]) => {
      const chunks = split(t.text, cuts)
      expect(chunks.join("")).toBe(t.text)
      expect(runGuard(chunks, t.secrets)).toBe(redactor.redact(t.text).text)
    },
    { fastCheck: { numRuns: propertyRuns(2_000, 200) } }
  )

  it.prop(
    "S1: pieces glued with no separator (boundaries that depend on neighbours), output = buffered redaction",
    [
      fc.array(fc.oneof(secret.map((s) => s.text), ordinary, fc.constantFrom("+", "-", "4", "a")), { maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 40 })
    ],
    ([pieces, cuts]) => {
      const t = pieces.join("")
      expect(runGuard(split(t, cuts), [])).toBe(redactor.redact(t).text)
    },
    { fastCheck: { numRuns: propertyRuns(2_000, 200) } }
  )

  it.prop(
    "S1: one character at a time (every boundary at once) equals the buffered redaction",
    [text],
    ([t]) => {
      expect(runGuard([...t.text.split("")], t.secrets)).toBe(redactor.redact(t.text).text)
    },
    { fastCheck: { numRuns: propertyRuns(500, 50) } }
  )

  it.prop(
    "S1, S3: a guard with a fixed, larger window releases the same text and holds at most that window",
    [text, fc.array(fc.nat(), { maxLength: 20 }), fc.integer({ min: 0, max: 5_000 })],
    ([t, cuts, extra]) => {
      const wide = Effect.runSync(Redaction.streamGuard(redactor, { window: redactor.window + extra }))
      let state = wide.initial
      let out = ""
      for (const chunk of split(t.text, cuts)) {
        const [next, released] = wide.push(state, chunk)
        state = next
        out += released
        expect(wide.held(state)).toBeLessThanOrEqual(wide.window)
      }
      expect(out + wide.end(state)).toBe(redactor.redact(t.text).text)
    },
    { fastCheck: { numRuns: propertyRuns(500, 50) } }
  )
})

describe("Redaction stream guard (examples)", () => {
  it("S5: text without a trigger or an @ is held back no longer than the longest pattern with neither (phone)", () => {
    let state = guard.initial
    for (let i = 0; i < 500; i++) [state] = guard.push(state, "word ")
    // phone: 71 characters at most, plus 16 of lookahead.
    expect(guard.held(state)).toBeLessThanOrEqual(87)
    expect(guard.held(state)).toBeGreaterThan(0)
    // An @ holds back up to an email's reach (345 + 16) from 64 characters before it.
    const [withAt] = guard.push(state, "mail ann@")
    expect(guard.held(withAt)).toBeLessThanOrEqual(87 + 64 + 9)
  })

  it("S5: a trigger holds text back until the pattern's window has passed or the stream ends", () => {
    const [state, out] = guard.push(guard.initial, "intro -----BEGIN PRIVATE KEY-----\nMIIE")
    expect(out).toBe("")
    const [closed, stillHeld] = guard.push(state, "\n-----END PRIVATE KEY-----\nafter")
    expect(stillHeld).toBe("")
    expect(guard.end(closed)).toBe("intro [REDACTED:private_key]\nafter")
    const [, released] = guard.push(closed, " and on".repeat(redactor.window))
    expect(released.startsWith("intro [REDACTED:private_key]\nafter and on")).toBe(true)
  })

  it("S2: a key split inside its prefix is redacted whole", () => {
    const key = corpus.secrets.find((s) => s.kind === "anthropic_key")!.text
    const out = runGuard(["see s", "k-an", key.slice(5, 30), key.slice(30), " ok"], [key])
    expect(out).toBe("see [REDACTED:anthropic_key] ok")
  })

  it.effect("S1: redactStream over a Stream of tokens emits the buffered redaction, no empty chunks", () =>
    Effect.gen(function*() {
      const input = corpus.secrets.map((s) => s.text).join(" and ")
      const tokens = Stream.fromIterable(split(input, Array.from({ length: 400 }, (_, i) => i * 7)))
      const out = yield* Stream.runCollect(tokens.pipe(Redaction.redactStream(redactor)))
      expect(Chunk.join(out, "")).toBe(redactor.redact(input).text)
      expect(Chunk.every(out, (c) => c.length > 0)).toBe(true)
      const viaGuard = yield* Stream.runCollect(tokens.pipe(Redaction.redactStream(guard)))
      expect(Chunk.join(viaGuard, "")).toBe(redactor.redact(input).text)
    }))

  it.effect("S1: a failing stream fails with its error and releases nothing held", () =>
    Effect.gen(function*() {
      const tokens = Stream.make("mail ann@exa").pipe(Stream.concat(Stream.fail("boom")))
      const error = yield* Stream.runCollect(tokens.pipe(Redaction.redactStream(redactor))).pipe(Effect.flip)
      expect(error).toBe("boom")
    }))
})
