import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, FastCheck, Stream } from "effect"
import { chunkUtf8, decodeUtf8Stream, joinSurrogates } from "../../src/domain/internal/utf8Chunks.js"

const encoder = new TextEncoder()
const byteLength = (text: string): number => encoder.encode(text).length

const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff
const startsWithLow = (text: string): boolean => text.length > 0 && isLow(text.charCodeAt(0))
const endsWithHigh = (text: string): boolean => text.length > 0 && isHigh(text.charCodeAt(text.length - 1))

/** Every invariant of `chunkUtf8` for text without lone surrogates. */
const expectValidChunks = (text: string, maxBytes: number): ReadonlyArray<string> => {
  const chunks = chunkUtf8(text, maxBytes)
  const limit = Math.max(4, maxBytes)
  expect(chunks.join("")).toBe(text)
  for (const chunk of chunks) {
    expect(chunk.length).toBeGreaterThan(0)
    expect(byteLength(chunk)).toBeLessThanOrEqual(limit)
    expect(startsWithLow(chunk)).toBe(false)
    expect(endsWithHigh(chunk)).toBe(false)
  }
  // Greedy: a chunk is only cut when the next code point would not fit.
  for (let i = 0; i + 1 < chunks.length; i++) {
    const next = String.fromCodePoint(chunks[i + 1]!.codePointAt(0)!)
    expect(byteLength(chunks[i]! + next)).toBeGreaterThan(limit)
  }
  return chunks
}

const collect = <E>(stream: Stream.Stream<string, E>): Effect.Effect<ReadonlyArray<string>, E> =>
  Effect.map(Stream.runCollect(stream), Chunk.toReadonlyArray)

describe("chunkUtf8", () => {
  it("empty text gives no chunks", () => {
    expect(chunkUtf8("", 10)).toEqual([])
    expect(chunkUtf8("", 1)).toEqual([])
  })

  it("ASCII is split every maxBytes characters", () => {
    expect(chunkUtf8("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"])
    expect(chunkUtf8("abcdefgh", 4)).toEqual(["abcd", "efgh"])
    expect(chunkUtf8("abc", 100)).toEqual(["abc"])
  })

  it("maxBytes below 4, NaN or fractional is clamped to a whole number ≥ 4", () => {
    expect(chunkUtf8("abcdefgh", 1)).toEqual(["abcd", "efgh"])
    expect(chunkUtf8("abcdefgh", 0)).toEqual(["abcd", "efgh"])
    expect(chunkUtf8("abcdefgh", -5)).toEqual(["abcd", "efgh"])
    expect(chunkUtf8("abcdefgh", Number.NaN)).toEqual(["abcd", "efgh"])
    expect(chunkUtf8("abcdefgh", 5.9)).toEqual(["abcde", "fgh"])
    expect(chunkUtf8("😀😀", 3)).toEqual(["😀", "😀"])
    expect(chunkUtf8("abc😀", Number.POSITIVE_INFINITY)).toEqual(["abc😀"])
  })

  it("2-byte characters (é) are never split", () => {
    expect(chunkUtf8("ééé", 4)).toEqual(["éé", "é"])
    expect(chunkUtf8("aéé", 4)).toEqual(["aé", "é"])
    expect(chunkUtf8("aaaé", 4)).toEqual(["aaa", "é"])
  })

  it("3-byte characters (€, CJK) are never split", () => {
    expect(chunkUtf8("€€", 4)).toEqual(["€", "€"])
    expect(chunkUtf8("a€b", 4)).toEqual(["a€", "b"])
    expect(chunkUtf8("aa€", 4)).toEqual(["aa", "€"])
    expect(chunkUtf8("日本語", 6)).toEqual(["日本", "語"])
    expect(chunkUtf8("日本語", 8)).toEqual(["日本", "語"])
  })

  it("4-byte characters (😀) keep their surrogate pair together", () => {
    expect(chunkUtf8("😀😀", 4)).toEqual(["😀", "😀"])
    expect(chunkUtf8("a😀", 4)).toEqual(["a", "😀"])
    expect(chunkUtf8("😀a", 5)).toEqual(["😀a"])
    expect(chunkUtf8("😀😀😀", 11)).toEqual(["😀😀", "😀"])
  })

  it("combining marks are code points of their own (2 bytes each)", () => {
    // "e" + U+0301 COMBINING ACUTE ACCENT: 1 + 2 bytes.
    const text = "e\u0301e\u0301"
    expect(chunkUtf8(text, 4)).toEqual(["e\u0301e", "\u0301"])
    expectValidChunks(text, 4)
  })

  it("a multi-byte character at every offset relative to a chunk boundary", () => {
    for (const char of ["é", "€", "語", "😀", "e\u0301"]) {
      for (let maxBytes = 4; maxBytes <= 9; maxBytes++) {
        for (let offset = 0; offset <= maxBytes + 1; offset++) {
          const text = "a".repeat(offset) + char + "b".repeat(offset) + char + char
          expectValidChunks(text, maxBytes)
        }
      }
    }
  })

  it("every maxBytes over a mixed string", () => {
    const text = "aé€😀語e\u0301b😀😀日本€é"
    const total = byteLength(text)
    for (let maxBytes = 1; maxBytes <= total + 1; maxBytes++) {
      const chunks = expectValidChunks(text, maxBytes)
      if (maxBytes >= total) expect(chunks).toEqual([text])
    }
  })

  it("a lone surrogate counts as 3 bytes (U+FFFD) and is kept", () => {
    expect(chunkUtf8("a\uD83Db", 4)).toEqual(["a\uD83D", "b"])
    expect(chunkUtf8("\uDE00\uDE00", 4)).toEqual(["\uDE00", "\uDE00"])
    expect(byteLength("\uD83D")).toBe(3)
  })

  it.prop(
    "property: chunks fit, keep code points whole and join to the input",
    [
      FastCheck.oneof(
        FastCheck.string(),
        FastCheck.fullUnicodeString({ maxLength: 200 }),
        FastCheck.string({ unit: "grapheme", maxLength: 100 })
      ),
      FastCheck.integer({ min: -2, max: 64 })
    ],
    ([text, maxBytes]) => {
      expectValidChunks(text, maxBytes)
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "property: with lone surrogates, every chunk fits (lone ones as 3 bytes) and no pair is split",
    [FastCheck.string({ unit: "binary", maxLength: 100 }), FastCheck.integer({ min: 4, max: 32 })],
    ([text, maxBytes]) => {
      const chunks = chunkUtf8(text, maxBytes)
      expect(chunks.join("")).toBe(text)
      for (const chunk of chunks) expect(byteLength(chunk)).toBeLessThanOrEqual(maxBytes)
      for (let i = 0; i + 1 < chunks.length; i++) {
        const splitPair = endsWithHigh(chunks[i]!) && startsWithLow(chunks[i + 1]!)
        expect(splitPair).toBe(false)
      }
    },
    { fastCheck: { numRuns: 300 } }
  )
})

describe("joinSurrogates", () => {
  it.effect("an emoji split across deltas is emitted whole", () =>
    Effect.gen(function*() {
      const out = yield* collect(joinSurrogates(Stream.make("\uD83D", "\uDE00")))
      expect(out).toEqual(["😀"])
    }))

  it.effect("a trailing high surrogate is prepended to the next delta", () =>
    Effect.gen(function*() {
      const out = yield* collect(joinSurrogates(Stream.make("hi \uD83D", "\uDE00 there", "", "!")))
      expect(out).toEqual(["hi ", "😀 there", "!"])
    }))

  it.effect("a held-back surrogate survives empty deltas and is flushed at the end", () =>
    Effect.gen(function*() {
      expect(yield* collect(joinSurrogates(Stream.make("a\uD83D", "", "\uDE00")))).toEqual(["a", "😀"])
      expect(yield* collect(joinSurrogates(Stream.make("a", "\uD83D")))).toEqual(["a", "\uD83D"])
      expect(yield* collect(joinSurrogates(Stream.make("", "")))).toEqual([])
      expect(yield* collect(joinSurrogates(Stream.empty))).toEqual([])
    }))

  it.effect("stream failures pass through after the text already emitted", () =>
    Effect.gen(function*() {
      const failing = Stream.make("ok", "\uD83D").pipe(Stream.concat(Stream.fail("boom")))
      const result = yield* Effect.either(collect(joinSurrogates(failing)))
      expect(result._tag).toBe("Left")
    }))

  it.effect.prop(
    "property: any split of a valid string joins back with no half pair emitted",
    [FastCheck.fullUnicodeString({ maxLength: 60 }), FastCheck.array(FastCheck.nat(60), { maxLength: 10 })],
    ([text, cuts]) =>
      Effect.gen(function*() {
        const points = [...new Set(cuts.map((c) => Math.min(c, text.length)))].sort((a, b) => a - b)
        const deltas: Array<string> = []
        let previous = 0
        for (const point of [...points, text.length]) {
          deltas.push(text.slice(previous, point))
          previous = point
        }
        const out = yield* collect(joinSurrogates(Stream.fromIterable(deltas)))
        expect(out.join("")).toBe(text)
        for (const delta of out) {
          expect(delta.length).toBeGreaterThan(0)
          expect(endsWithHigh(delta)).toBe(false)
          expect(startsWithLow(delta)).toBe(false)
        }
      }),
    { fastCheck: { numRuns: 200 } }
  )
})

describe("decodeUtf8Stream", () => {
  it.effect("'€' split across byte chunks decodes to one character", () =>
    Effect.gen(function*() {
      const euro = encoder.encode("€")
      expect([...euro]).toEqual([0xe2, 0x82, 0xac])
      const out = yield* collect(
        decodeUtf8Stream(Stream.make(euro.slice(0, 1), euro.slice(1, 2), euro.slice(2)))
      )
      expect(out).toEqual(["€"])
    }))

  it.effect("a truncated sequence at the end is flushed as U+FFFD", () =>
    Effect.gen(function*() {
      const out = yield* collect(decodeUtf8Stream(Stream.make(encoder.encode("a"), new Uint8Array([0xe2, 0x82]))))
      expect(out.join("")).toBe("a\uFFFD")
    }))

  it.effect("each run uses a fresh decoder", () =>
    Effect.gen(function*() {
      // The first run stops with "\xE2" still buffered in the decoder; a shared
      // decoder would make the second run start with U+FFFD.
      const stream = decodeUtf8Stream(Stream.make(new Uint8Array([0x61, 0xe2]), new Uint8Array([0x82, 0xac]))).pipe(
        Stream.take(1)
      )
      expect(yield* collect(stream)).toEqual(["a"])
      expect(yield* collect(stream)).toEqual(["a"])
    }))

  it.effect.prop(
    "property: any byte split of valid text decodes to the text",
    [FastCheck.fullUnicodeString({ maxLength: 60 }), FastCheck.array(FastCheck.nat(240), { maxLength: 12 })],
    ([text, cuts]) =>
      Effect.gen(function*() {
        const bytes = encoder.encode(text)
        const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b)
        const chunks: Array<Uint8Array> = []
        let previous = 0
        for (const point of [...points, bytes.length]) {
          chunks.push(bytes.slice(previous, point))
          previous = point
        }
        const out = yield* collect(decodeUtf8Stream(Stream.fromIterable(chunks)))
        expect(out.join("")).toBe(text)
        for (const piece of out) expect(piece.length).toBeGreaterThan(0)
      }),
    { fastCheck: { numRuns: 200 } }
  )
})
