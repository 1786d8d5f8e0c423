/**
 * Builds a redactor's engine from its options: the enabled built-in kinds,
 * the user's patterns (checked to be bounded, since the stream guard's
 * window is their longest match) and the allow-list.
 */
import { Either } from "effect"
import { builtIns, type PatternSpec } from "./redactionPatterns.js"
import { type Compiled, type Engine, LOOKAHEAD, marker } from "./redactionScan.js"

/** A refused option, before `Redaction` names it as a `RedactionError`. */
export interface Refusal {
  readonly reason: "unbounded_pattern" | "invalid_pattern"
  readonly pattern: string
  readonly detail: string
}

/** A user pattern as `Redaction.make` takes it. */
export interface UserPattern {
  readonly name: string
  readonly regex: RegExp
  readonly maxLength: number
  readonly validate?: (text: string) => boolean
}

/** The most a user pattern may declare: the stream guard holds this much back. */
export const MAX_PATTERN_LENGTH = 65_536

const NAME = /^[a-z][a-z0-9_]{0,39}$/

/**
 * The first quantifier without an upper bound (`*`, `+`, `{n,}`) outside a
 * character class, if any. Escapes are skipped; a lazy or possessive suffix
 * does not bound a quantifier.
 */
export const unboundedQuantifier = (source: string): string | undefined => {
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!
    if (c === "\\") {
      i++
      continue
    }
    if (inClass) {
      if (c === "]") inClass = false
      continue
    }
    if (c === "[") inClass = true
    else if (c === "*" || c === "+") return c
    else if (c === "{") {
      const m = /^\{\d+,\}/.exec(source.slice(i))
      if (m !== null) return m[0]
    }
  }
  return undefined
}

/** The source without its leading negative lookbehinds, if it has any. */
export const withoutLeadingLookbehinds = (source: string): string | undefined => {
  let rest = source
  while (rest.startsWith("(?<!")) {
    let depth = 0
    let inClass = false
    let close = -1
    for (let i = 0; i < rest.length && close < 0; i++) {
      const c = rest[i]!
      if (c === "\\") i++
      else if (inClass) inClass = c !== "]"
      else if (c === "[") inClass = true
      else if (c === "(") depth++
      else if (c === ")" && --depth === 0) close = i
    }
    if (close < 0) return undefined
    rest = rest.slice(close + 1)
  }
  // A top-level alternation would leave the lookbehind on the first branch only.
  return rest === source || topLevelAlternation(rest) ? undefined : rest
}

const topLevelAlternation = (source: string): boolean => {
  let depth = 0
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!
    if (c === "\\") i++
    else if (inClass) inClass = c !== "]"
    else if (c === "[") inClass = true
    else if (c === "(") depth++
    else if (c === ")") depth--
    else if (c === "|" && depth === 0) return true
  }
  return false
}

const compile = (spec: PatternSpec): Compiled => ({
  kind: spec.kind,
  regex: new RegExp(spec.regex.source, flagsOf(spec.regex)),
  adjacent: adjacentOf(spec.regex),
  maxLength: spec.maxLength,
  reach: spec.maxLength + LOOKAHEAD,
  trigger: spec.trigger === undefined
    ? undefined
    : { regex: new RegExp(spec.trigger.regex.source, flagsOf(spec.trigger.regex)), length: spec.trigger.length },
  needs: spec.needs,
  validate: spec.validate
})

const adjacentOf = (regex: RegExp): RegExp | undefined => {
  const source = withoutLeadingLookbehinds(regex.source)
  return source === undefined ? undefined : new RegExp(source, flagsOf(regex).replace("g", "y"))
}

// Global (every match, from a start index) with indices (a `secret` group's
// range); sticky would stop the search at the start index.
const flagsOf = (regex: RegExp): string => [...new Set([...regex.flags.replace(/[gyd]/g, ""), "g", "d"])].join("")

const checkUser = (p: UserPattern, names: ReadonlySet<string>): Refusal | undefined => {
  const refuse = (reason: Refusal["reason"], detail: string): Refusal => ({ reason, pattern: p.name, detail })
  if (!NAME.test(p.name)) return refuse("invalid_pattern", "a name is a-z, 0-9 and _, starting with a letter (≤ 40)")
  if (names.has(p.name)) return refuse("invalid_pattern", "the name is already taken")
  if (!Number.isInteger(p.maxLength) || p.maxLength < 1 || p.maxLength > MAX_PATTERN_LENGTH) {
    return refuse("unbounded_pattern", `maxLength must be a whole number in 1..${MAX_PATTERN_LENGTH}`)
  }
  const open = unboundedQuantifier(p.regex.source)
  if (open !== undefined) {
    return refuse("unbounded_pattern", `the quantifier ${open} has no upper bound; use {m,n} within maxLength`)
  }
  return undefined
}

/** The engine for these options, or the first refusal. */
export const engineOf = (options: {
  readonly kinds?: ReadonlyArray<string> | undefined
  readonly patterns?: ReadonlyArray<UserPattern> | undefined
  readonly allow?: ReadonlyArray<string> | undefined
}): Either.Either<Engine, Refusal> => {
  const enabled = options.kinds === undefined ? undefined : new Set(options.kinds)
  const specs: Array<PatternSpec> = builtIns.filter((b) => enabled === undefined || enabled.has(b.kind))
  const names = new Set(builtIns.map((b) => b.kind))
  for (const p of options.patterns ?? []) {
    const refusal = checkUser(p, names)
    if (refusal !== undefined) return Either.left(refusal)
    names.add(p.name)
    specs.push({
      kind: p.name,
      regex: p.regex,
      maxLength: p.maxLength,
      ...(p.validate === undefined ? {} : { validate: p.validate })
    })
  }
  const patterns = specs.map(compile)
  // A pattern that matches a marker would redact its own output again.
  for (const p of patterns) {
    for (const name of names) {
      p.regex.lastIndex = 0
      if (p.regex.test(marker(name))) {
        return Either.left({
          reason: "invalid_pattern",
          pattern: p.kind,
          detail: `it matches the marker ${marker(name)}, so redacting twice would change the text`
        })
      }
    }
  }
  const window = Math.max(1, ...patterns.map((p) => p.reach))
  return Either.right({ patterns, allow: new Set(options.allow ?? []), window })
}
