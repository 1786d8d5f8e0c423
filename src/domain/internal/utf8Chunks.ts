/**
 * UTF-8 aware text chunking: splitting text into byte-bounded pieces without
 * breaking a code point, re-chunking streamed text deltas so that a surrogate
 * pair split across two deltas is never emitted half-way, and decoding byte
 * streams whose multi-byte characters straddle chunk boundaries.
 *
 * Lone surrogates (malformed UTF-16) are treated as one 3-byte unit, which is
 * what `TextEncoder` writes for them (U+FFFD).
 */
import { Option, Stream } from "effect"

/**
 * The smallest accepted chunk size: the longest UTF-8 encoding of one code
 * point, so every chunk can hold at least one.
 *
 * @example
 * ```ts
 * chunkUtf8("😀😀", 1) // ["😀", "😀"]: 1 is raised to minChunkBytes (4)
 * ```
 */
export const minChunkBytes = 4

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/** UTF-8 size of the code point at `i`; 4 means a surrogate pair (two units). */
const sizeAt = (text: string, i: number): number => {
  const code = text.charCodeAt(i)
  if (code < 0x80) return 1
  if (code < 0x800) return 2
  if (isHighSurrogate(code) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) return 4
  // BMP character, or a lone surrogate (encoded as U+FFFD, 3 bytes).
  return 3
}

/**
 * The UTF-8 byte length of `text`, without encoding it (one pass over the
 * UTF-16 code units; a lone surrogate counts as the 3 bytes of U+FFFD).
 *
 * @example
 * ```ts
 * byteLength("héllo 😀") // 11
 * ```
 */
export const byteLength = (text: string): number => {
  // Node's native count when available (lone surrogates count 3, as here).
  if (nativeByteLength !== undefined) return nativeByteLength(text)
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const size = sizeAt(text, i)
    bytes += size
    if (size === 4) i++
  }
  return bytes
}

const nativeByteLength: ((text: string) => number) | undefined = typeof globalThis.Buffer?.byteLength === "function"
  ? (text) => globalThis.Buffer.byteLength(text, "utf8")
  : undefined

/**
 * Splits `text` into chunks of at most `maxBytes` UTF-8 bytes each, never
 * splitting a code point (a surrogate pair stays together). The chunks
 * concatenate to `text`; empty text gives no chunks.
 *
 * `maxBytes` below {@link minChunkBytes} (or `NaN`) is treated as 4, and a
 * fractional value is rounded down. One pass over the UTF-16 code units; no
 * encoding is performed.
 *
 * @example
 * ```ts
 * chunkUtf8("ab€😀", 4) // ["ab", "€", "😀"]
 * chunkUtf8("héllo", 1) // ["hél", "lo"] (maxBytes below 4 is treated as 4)
 * chunkUtf8("", 16) // []
 * ```
 */
export const chunkUtf8 = (text: string, maxBytes: number): ReadonlyArray<string> => {
  const limit = Number.isNaN(maxBytes) ? minChunkBytes : Math.max(minChunkBytes, Math.floor(maxBytes))
  const chunks: Array<string> = []
  const length = text.length
  let start = 0
  let bytes = 0
  let i = 0
  while (i < length) {
    const size = sizeAt(text, i)
    const units = size === 4 ? 2 : 1
    if (bytes + size > limit) {
      chunks.push(text.slice(start, i))
      start = i
      bytes = 0
    }
    bytes += size
    i += units
  }
  if (start < length) chunks.push(text.slice(start))
  return chunks
}

/**
 * Re-chunks a stream of text deltas so that no emitted string ends with a
 * high surrogate whose low half is still to come: a trailing high surrogate
 * is held back and prepended to the next delta. Whatever is held back when
 * the stream ends is emitted then. Empty strings are dropped. The
 * concatenation of the output equals the concatenation of the input.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * // "😀" is "\uD83D\uDE00"; a provider split it across two deltas.
 * const deltas = joinSurrogates(Stream.make("hi \uD83D", "\uDE00!"))
 * // emits "hi ", "😀!"
 * ```
 */
export const joinSurrogates = <E, R>(stream: Stream.Stream<string, E, R>): Stream.Stream<string, E, R> =>
  stream.pipe(
    Stream.map((delta: string): Option.Option<string> => Option.some(delta)),
    // `None` marks the end of the input, where the held-back text is flushed.
    Stream.concat(Stream.succeed(Option.none<string>())),
    Stream.mapAccum("", (pending: string, delta: Option.Option<string>): readonly [string, string] => {
      if (Option.isNone(delta)) return ["", pending]
      const text = pending + delta.value
      return text.length > 0 && isHighSurrogate(text.charCodeAt(text.length - 1))
        ? [text.slice(-1), text.slice(0, -1)]
        : ["", text]
    }),
    Stream.filter((text) => text.length > 0)
  )

/**
 * Decodes a stream of UTF-8 byte chunks into text, where a multi-byte
 * character may be split across chunks. Each run of the stream uses a fresh
 * streaming `TextDecoder`, flushed when the input ends; invalid sequences
 * become U+FFFD. Empty strings are not emitted.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * // "€" is E2 82 AC, split across two chunks.
 * const text = decodeUtf8Stream(Stream.make(new Uint8Array([0xe2, 0x82]), new Uint8Array([0xac])))
 * // emits "€"
 * ```
 */
export const decodeUtf8Stream = <E, R>(stream: Stream.Stream<Uint8Array, E, R>): Stream.Stream<string, E, R> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder("utf-8")
    return stream.pipe(
      Stream.map((bytes) => decoder.decode(bytes, { stream: true })),
      Stream.concat(Stream.sync(() => decoder.decode())),
      Stream.filter((text) => text.length > 0)
    )
  })
