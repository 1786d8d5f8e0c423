/**
 * The stream guard's state machine: text arrives in chunks, and each chunk
 * releases what can no longer be part of a finding.
 *
 * Why the output equals buffered redaction: a position is released only
 * when every match that could cover it is final — its pattern's whole reach
 * has arrived (see `redactionScan.ts`, locality) or the stream has ended —
 * and the release runs the buffered path's own merge over those matches.
 * A pattern with a trigger (a literal every match starts with) cannot start
 * where its trigger is absent, so only a trigger seen (or cut off) near the
 * end holds text back for that pattern; patterns without one hold back their
 * reach. Held-back text is therefore never longer than the engine's window.
 */
import { collect, type Compiled, type Cursor, type Engine, LOOKBEHIND, merge } from "./redactionScan.js"

/** The guard's state (immutable: each step returns a new one). */
export interface State {
  /** The text from absolute position `base` to what has arrived. */
  readonly text: string
  readonly base: number
  /** Output is decided (emitted) for every position before this one. */
  readonly decided: number
  /** Whether the last decided position was redacted (a marker is open). */
  readonly open: boolean
  /** Where recent final findings end: where a finding may start whatever precedes it. */
  readonly ends: ReadonlyArray<number>
}

/** Nothing arrived yet. */
export const initial: State = { text: "", base: 0, decided: 0, open: false, ends: [] }

/** Characters received but not yet released. */
export const held = (state: State): number => state.base + state.text.length - state.decided

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/**
 * The first position some pattern may still start a non-final match at;
 * with a `fixed` window, no later than `fixed` characters before the end.
 */
const limitOf = (engine: Engine, text: string, base: number, fixed: number | undefined): number => {
  const received = base + text.length
  let limit = fixed === undefined ? received : received - fixed + 1
  for (const p of engine.patterns) {
    const from = received - p.reach + 1
    // A pattern whose every non-final start is past the limit cannot lower it.
    if (from < limit) limit = Math.min(limit, pendingStart(p, text, base, from))
  }
  return limit
}

const pendingStart = (p: Compiled, text: string, base: number, from: number): number => {
  const received = base + text.length
  if (p.needs !== undefined) {
    // A start needs the literal within reach: one seen, or one that may still arrive.
    const { literal, within } = p.needs
    const k = text.indexOf(literal, from - base)
    const arriving = received - literal.length + 1 - within + 1
    return Math.max(from, k < 0 ? arriving : Math.min(arriving, base + k - within + 1))
  }
  if (p.trigger === undefined) return from
  const partial = Math.max(from, received - p.trigger.length + 1)
  const regex = p.trigger.regex
  regex.lastIndex = from - base
  const m = regex.exec(text)
  return m === null ? partial : Math.min(partial, base + m.index)
}

const step = (
  engine: Engine,
  fixed: number | undefined,
  state: State,
  text: string,
  ended: boolean
): readonly [State, string] => {
  const { base } = state
  const received = base + text.length
  let limit = ended ? received : limitOf(engine, text, base, fixed)
  // Never release half of a surrogate pair: its other half may be in the next chunk.
  if (!ended && limit > state.decided && isHighSurrogate(text.charCodeAt(limit - 1 - base))) limit--
  const hits = collect(engine, text, base, (p) => state.decided - p.reach - base, ended, state.ends)
  const cursor: Cursor = { decided: state.decided, open: state.open }
  const out = merge(engine, hits, text, base, Math.max(limit, state.decided), cursor, undefined)
  // Keep enough released text for the lookbehind of every match that can still cover new text.
  const keep = Math.max(base, cursor.decided - engine.window - LOOKBEHIND)
  const recent = cursor.decided - engine.window
  const ends = [...new Set([...state.ends, ...hits.map((h) => h.end)])].filter((e) => e > recent)
  return [{ text: text.slice(keep - base), base: keep, decided: cursor.decided, open: cursor.open, ends }, out]
}

/**
 * Takes a chunk; returns the new state and the text it releases. `fixed`:
 * hold back exactly that many characters (at least the engine's window)
 * instead of releasing text no trigger can reach.
 */
export const push = (
  engine: Engine,
  fixed: number | undefined,
  state: State,
  chunk: string
): readonly [State, string] => chunk.length === 0 ? [state, ""] : step(engine, fixed, state, state.text + chunk, false)

/** Ends the stream: releases the rest, redacted. */
export const end = (engine: Engine, state: State): string => step(engine, undefined, state, state.text, true)[1]
