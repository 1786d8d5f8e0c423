/**
 * The scanner shared by buffered redaction and the stream guard: every
 * match of every pattern at every start (not only non-overlapping ones), and
 * one merge that turns them into output. Both paths run this same code over
 * the same text, so what a stream emits is what buffering would produce.
 *
 * Locality, which the stream guard relies on: whether a pattern matches at a
 * start `s`, and where, depends only on the text in
 * `[s - LOOKBEHIND, s + maxLength + LOOKAHEAD)`. The merge then decides each
 * position from the findings that can cover it.
 */

/** Characters a pattern may look at before its match. */
export const LOOKBEHIND = 16
/** Characters a pattern may look at after its match (a greedy run reads one). */
export const LOOKAHEAD = 16

/** A compiled pattern. */
export interface Compiled {
  readonly kind: string
  /** Global, with indices (`d`) for a `secret` group. */
  readonly regex: RegExp
  readonly maxLength: number
  /** `maxLength + LOOKAHEAD`: how far past a start the pattern can read. */
  readonly reach: number
  /**
   * The regex without its leading negative lookbehinds (sticky), tried where
   * another finding ends: that finding becomes a marker, whose `]` passes
   * every such boundary — so redacting twice finds nothing new.
   */
  readonly adjacent: RegExp | undefined
  readonly trigger: { readonly regex: RegExp; readonly length: number } | undefined
  readonly needs: { readonly literal: string; readonly within: number } | undefined
  readonly validate: ((text: string) => boolean) | undefined
}

/** The compiled patterns of a redactor. */
export interface Engine {
  readonly patterns: ReadonlyArray<Compiled>
  readonly allow: ReadonlySet<string>
  /** The longest reach: no held-back text is ever longer. */
  readonly window: number
}

/** A raw finding: a matched range, its kind's tie-break rank, and where its match began. */
export interface Hit {
  readonly start: number
  readonly end: number
  readonly rank: number
  readonly matchStart: number
}

/**
 * The hits of every pattern in `text` (positions offset by `base`), for
 * matches starting at or after `from[i]` (relative to `text`) and, unless
 * the stream has ended, whose whole reach lies in the text (final ones).
 */
export const collect = (
  engine: Engine,
  text: string,
  base: number,
  from: (pattern: Compiled) => number,
  ended: boolean,
  seeds: ReadonlyArray<number>
): Array<Hit> => {
  const hits: Array<Hit> = []
  const { allow, patterns } = engine
  for (let rank = 0; rank < patterns.length; rank++) {
    const p = patterns[rank]!
    const { regex } = p
    const last = ended ? text.length : text.length - p.reach
    let at = Math.max(0, from(p))
    while (at <= last) {
      if (p.needs !== undefined) {
        // No match starts further than `within` before the literal.
        const k = text.indexOf(p.needs.literal, at)
        if (k < 0) break
        at = Math.max(at, k - p.needs.within + 1)
      }
      regex.lastIndex = at
      const m = regex.exec(text)
      if (m === null || m.index > last) break
      at = m.index + 1
      const hit = accept(p, allow, text, m) ?? retryShorter(p, regex, allow, text, m)
      if (hit !== undefined) hits.push({ start: base + hit[0], end: base + hit[1], rank, matchStart: base + m.index })
    }
  }
  adjacentHits(engine, text, base, ended, seeds, hits)
  return hits.sort((a, b) => a.start - b.start || b.end - a.end || a.rank - b.rank)
}

/** Matches of the `adjacent` regexes where a hit (or a seed, absolute) ends, and where those end, and so on. */
const adjacentHits = (
  engine: Engine,
  text: string,
  base: number,
  ended: boolean,
  seeds: ReadonlyArray<number>,
  hits: Array<Hit>
): void => {
  const { allow, patterns } = engine
  const queue = [...seeds.map((e) => e - base), ...hits.map((h) => h.end - base)]
  const seen = new Set<number>()
  const known = new Set(hits.map((h) => `${h.start}:${h.end}:${h.rank}`))
  while (queue.length > 0) {
    const e = queue.pop()!
    if (seen.has(e) || e < 0 || e >= text.length) continue
    seen.add(e)
    for (let rank = 0; rank < patterns.length; rank++) {
      const p = patterns[rank]!
      if (p.adjacent === undefined || (!ended && e + p.reach > text.length)) continue
      p.adjacent.lastIndex = e
      const m = p.adjacent.exec(text)
      if (m === null) continue
      const hit = accept(p, allow, text, m) ?? retryShorter(p, p.adjacent, allow, text, m)
      if (hit === undefined) continue
      const key = `${base + hit[0]}:${base + hit[1]}:${rank}`
      if (known.has(key)) continue
      known.add(key)
      hits.push({ start: base + hit[0], end: base + hit[1], rank, matchStart: base + e })
      queue.push(hit[1])
    }
  }
}

/** The finding's range of a match, unless refused (too long, empty, allowed, or invalid). */
const accept = (
  p: Compiled,
  allow: ReadonlySet<string>,
  text: string,
  m: RegExpExecArray
): readonly [number, number] | undefined => {
  const length = m[0].length
  if (length === 0 || length > p.maxLength) return undefined
  const secret = m.indices?.groups?.["secret"]
  const start = secret === undefined ? m.index : secret[0]
  const end = secret === undefined ? m.index + length : secret[1]
  if (end <= start) return undefined
  const found = text.slice(start, end)
  return allow.has(found) || (p.validate !== undefined && !p.validate(found)) ? undefined : [start, end]
}

/** Shorter matches tried at one start when validation refuses the longest. */
const RETRIES = 8
const WORD = /\w/

/**
 * When validation refuses a match, the same start is tried on the text cut
 * at the match's last non-word character, a few times: a greedy run that swallowed a
 * neighbouring number ("4111 1111 1111 1111 123") must not hide the card
 * before it. The cut lies inside the match, so this stays local.
 */
const retryShorter = (
  p: Compiled,
  regex: RegExp,
  allow: ReadonlySet<string>,
  text: string,
  first: RegExpExecArray
): readonly [number, number] | undefined => {
  if (p.validate === undefined) return undefined
  const at = first.index
  let end = at + first[0].length
  for (let i = 0; i < RETRIES; i++) {
    // Cut at the last non-word character inside the match.
    let j = end - 1
    while (j > at && WORD.test(text.charAt(j))) j--
    if (j <= at) return undefined
    const cut = text.slice(0, j)
    regex.lastIndex = at
    const m = regex.exec(cut)
    if (m === null || m.index !== at) return undefined
    end = at + m[0].length
    // Only a shorter match that ends where a word of the original ends: a
    // Luhn-invalid number must not yield a valid prefix.
    if (WORD.test(text.charAt(end))) continue
    const hit = accept(p, allow, cut, m)
    if (hit !== undefined) return hit
  }
  return undefined
}

/** Where a merge stands: output is decided before `decided`; `open` when the position before it was redacted. */
export interface Cursor {
  decided: number
  open: boolean
}

/** A merged finding (absolute positions). */
export interface Run {
  readonly kind: string
  readonly start: number
  end: number
}

/**
 * Decides the positions before `limit` (and any covered ones past it):
 * text no finding covers is copied, each maximal run of covered text becomes
 * one marker named after the first finding of the run. `text` starts at
 * absolute position `base`. Mutates `cursor`; returns the output.
 */
export const merge = (
  engine: Engine,
  hits: ReadonlyArray<Hit>,
  text: string,
  base: number,
  limit: number,
  cursor: Cursor,
  runs: Array<Run> | undefined
): string => {
  let out = ""
  let current: Run | undefined = undefined
  for (const hit of hits) {
    if (hit.end <= cursor.decided) continue
    if (cursor.open && hit.start <= cursor.decided) {
      cursor.decided = hit.end
      if (current !== undefined) current.end = hit.end
      continue
    }
    if (hit.start >= limit) break
    if (hit.start > cursor.decided) out += text.slice(cursor.decided - base, hit.start - base)
    const kind = engine.patterns[hit.rank]!.kind
    out += marker(kind)
    cursor.open = true
    cursor.decided = hit.end
    current = { kind, start: hit.start, end: hit.end }
    runs?.push(current)
  }
  if (cursor.decided < limit) {
    out += text.slice(cursor.decided - base, limit - base)
    cursor.decided = limit
    cursor.open = false
  }
  return out
}

/** The text that replaces a run of findings of `kind`. */
export const marker = (kind: string): string => `[REDACTED:${kind}]`

/** Buffered redaction: the output and the merged findings (ranges in `text`). */
export const redactAll = (
  engine: Engine,
  text: string
): { readonly text: string; readonly findings: ReadonlyArray<Run> } => {
  const findings: Array<Run> = []
  const hits = collect(engine, text, 0, () => 0, true, [])
  const out = merge(engine, hits, text, 0, text.length, { decided: 0, open: false }, findings)
  return { text: out, findings }
}
