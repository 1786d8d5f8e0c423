/**
 * The scanner (issue 23, seed 004's secrets and PII scanning): every fake
 * secret of the corpus is found with its kind and nothing of it survives;
 * every near-miss is left alone; findings merge; redaction is idempotent;
 * options (`kinds`, `patterns`, `allow`) and their refusals; adversarial
 * inputs stay linear (their timing is in `bench/redaction.ts`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import * as Redaction from "../../src/runtime/Redaction.js"
import { corpus, redactor } from "../fixtures/secrets/corpus.js"

describe("Redaction scanner: the corpus, both directions", () => {
  for (const s of corpus.secrets) {
    it(`C1 finds: ${s.kind} (${s.text.slice(0, 12)}…) is redacted with its kind, nothing of it left`, () => {
      const text = `before ${s.text} after`
      const { findings, text: out } = redactor.redact(text)
      expect(findings.map((f) => f.kind)).toEqual([s.kind])
      expect(out).not.toContain(s.secret)
      expect(out).toContain(`[REDACTED:${s.kind}]`)
      expect(out.startsWith("before ")).toBe(true)
      // A private key without its END line is redacted to 4,096 characters on.
      if (s.kind !== "private_key" || s.text.includes("-----END")) expect(out.endsWith(" after")).toBe(true)
      // A finding is a kind and a range: nothing of the secret to leak into a log.
      expect(Object.keys(findings[0]!).sort()).toEqual(["end", "kind", "start"])
      expect(text.slice(findings[0]!.start, findings[0]!.end)).toContain(s.secret)
    })
  }

  for (const text of corpus.nearMisses) {
    it(`C2 leaves alone: ${JSON.stringify(text)}`, () => {
      expect(redactor.scan(text)).toEqual([])
      expect(redactor.redact(`x ${text} y`).text).toBe(`x ${text} y`)
    })
  }

  it("C1 every built-in kind has at least one corpus secret", () => {
    expect(new Set(corpus.secrets.map((s) => s.kind))).toEqual(new Set(Redaction.kinds))
  })

  it("C1 a card number followed by another number is still found; a Luhn-invalid one is not", () => {
    expect(redactor.redact("card 4111 1111 1111 1111 123 ok").text).toBe("card [REDACTED:card_number] 123 ok")
    expect(redactor.redact("card 4111 1111 1111 1112 ok").text).toBe("card 4111 1111 1111 1112 ok")
  })
})

describe("Redaction scanner: merging and idempotence", () => {
  it("C3 overlapping and adjacent findings become one marker, named after the first", () => {
    const jwt = corpus.secrets.find((s) => s.kind === "jwt")!.text
    const { findings, text } = redactor.redact(`Authorization: Bearer ${jwt} done`)
    expect(text).toBe("Authorization: Bearer [REDACTED:bearer_token] done")
    expect(findings).toHaveLength(1)
    // Two findings from the same start: the longer one names the run.
    const same = redactor.redact("AKIAIOSFODNN7EXAMPLEjane@example.com")
    expect(same.text).toBe("[REDACTED:email]")
    const adjacent = redactor.redact("ann@example.org 4111 1111 1111 1111")
    expect(adjacent.findings.map((f) => f.kind)).toEqual(["email", "card_number"])
  })

  it("C4 a finding may start right where another ends, whatever its boundary says: one marker, stable", () => {
    const jwt = corpus.secrets.find((s) => s.kind === "jwt")!.text
    for (
      const glued of [
        `4111111111111111${jwt}`,
        "AKIAIOSFODNN7EXAMPLE+14155550132",
        "6011111111111117AKIAIOSFODNN7EXAMPLE"
      ]
    ) {
      const once = redactor.redact(`(${glued})`)
      expect(once.findings).toHaveLength(1)
      expect(redactor.redact(once.text).text).toBe(once.text)
    }
  })

  it.prop(
    "C4 redact(redact(x)) = redact(x) over corpus secrets mixed with arbitrary text (property)",
    [fc.array(fc.oneof(fc.constantFrom(...corpus.secrets.map((s) => s.text)), fc.fullUnicodeString()))],
    ([pieces]) => {
      const once = redactor.redact(pieces.join(" ")).text
      expect(redactor.redact(once).text).toBe(once)
      for (const s of corpus.secrets) if (pieces.includes(s.text)) expect(once).not.toContain(s.secret)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("C4 scan and redact agree: the findings are the runs redact replaced", () => {
    const text = corpus.secrets.map((s) => s.text).join(" | ")
    const { findings, text: out } = redactor.redact(text)
    expect(redactor.scan(text)).toEqual(findings)
    let rebuilt = ""
    let at = 0
    for (const f of findings) {
      rebuilt += text.slice(at, f.start) + `[REDACTED:${f.kind}]`
      at = f.end
    }
    expect(rebuilt + text.slice(at)).toBe(out)
  })
})

describe("Redaction options", () => {
  it.effect("C5 kinds: only the enabled kinds are found", () =>
    Effect.gen(function*() {
      const emails = yield* Redaction.make({ kinds: ["email"] })
      expect(emails.kinds).toEqual(["email"])
      expect(emails.redact("AKIAIOSFODNN7EXAMPLE ann@example.org").text).toBe("AKIAIOSFODNN7EXAMPLE [REDACTED:email]")
    }))

  it.effect("C5 allow: an allowed text is never redacted, others of its kind are", () =>
    Effect.gen(function*() {
      const r = yield* Redaction.make({ allow: ["support@example.com"] })
      expect(r.redact("support@example.com or ann@example.org").text).toBe("support@example.com or [REDACTED:email]")
    }))

  it.effect("C5 patterns: an extra bounded pattern is found under its name, a secret group narrows it", () =>
    Effect.gen(function*() {
      const r = yield* Redaction.make({
        kinds: [],
        patterns: [{ name: "ticket", regex: /ticket=(?<secret>T[0-9]{6,10})/, maxLength: 18 }]
      })
      expect(r.redact("see ticket=T1234567 now").text).toBe("see ticket=[REDACTED:ticket] now")
      expect(r.window).toBe(18 + 16)
    }))

  it.effect("C6 a pattern without a bounded length is refused with a typed error", () =>
    Effect.gen(function*() {
      for (const regex of [/TCK-\d+/, /a.*b/, /x{2,}/]) {
        const e = yield* Effect.flip(Redaction.make({ patterns: [{ name: "p", regex, maxLength: 20 }] }))
        expect(e._tag).toBe("RedactionError")
        expect(e.reason).toBe("unbounded_pattern")
        expect(e.pattern).toBe("p")
      }
      const noLength = yield* Effect.flip(Redaction.make({ patterns: [{ name: "p", regex: /x{2}/, maxLength: 0 }] }))
      expect(noLength.reason).toBe("unbounded_pattern")
      // A `+` inside a character class or escaped is not a quantifier.
      yield* Redaction.make({ patterns: [{ name: "p", regex: /[+*]\+\*{1,3}/, maxLength: 5 }] })
    }))

  it.effect("C6 a bad name, a taken name or a pattern that matches a marker is refused", () =>
    Effect.gen(function*() {
      const bad = (name: string, regex: RegExp) =>
        Effect.flip(Redaction.make({ patterns: [{ name, regex, maxLength: 30 }] })).pipe(Effect.map((e) => e.reason))
      expect(yield* bad("Bad Name", /x/)).toBe("invalid_pattern")
      expect(yield* bad("email", /x/)).toBe("invalid_pattern")
      expect(yield* bad("shouty", /REDACTED/)).toBe("invalid_pattern")
    }))

  it.effect("C6 a guard window below the redactor's is refused; a larger one is kept", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(Redaction.streamGuard(redactor, { window: redactor.window - 1 }))
      expect(e.reason).toBe("window_too_small")
      const guard = yield* Redaction.streamGuard(redactor, { window: redactor.window + 100 })
      expect(guard.window).toBe(redactor.window + 100)
    }))
})

describe("Redaction scanner: adversarial inputs", () => {
  // Each is 200,000 characters built to make a backtracking pattern
  // explode; these finish (their throughput is measured in the bench).
  const adversarial: ReadonlyArray<readonly [string, string]> = [
    ["digits and spaces", "4 ".repeat(100_000)],
    ["an endless local part", "a".repeat(200_000)],
    ["labels without a TLD", "a@" + "b.".repeat(99_999)],
    ["key prefixes", "sk-".repeat(66_666)],
    ["unterminated JWTs", "eyJ" + "A".repeat(199_990) + "."],
    ["private key headers", "-----BEGIN PRIVATE KEY-----".repeat(7_000)],
    ["phone separators", "+1 ".repeat(66_666)],
    ["bearer without token", "Bearer ".repeat(28_000)]
  ]
  for (const [name, text] of adversarial) {
    it(`C7 ${name}: scanned, and redaction is idempotent on it`, () => {
      const once = redactor.redact(text).text
      expect(redactor.redact(once).text).toBe(once)
    })
  }
})
