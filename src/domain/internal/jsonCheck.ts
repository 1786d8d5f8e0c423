/**
 * Whether a value is plain JSON data, and if not, where it stops being JSON
 * — the checks behind `Json.isJson`, `Json.findNotJson` and the `Json` /
 * `JsonObject` Schemas. The walk recurses (the valid path allocates
 * nothing), so it checks the nesting bound before every level.
 */
import { ParseResult, Schema, type SchemaAST as AST } from "effect"
import { instanceName, thrownText, walk } from "./jsonSnapshot.js"

/**
 * How deep the structural checks let a value nest: twice `Json.maxDepth`,
 * room for the evidence that wraps the values admitted at the entry.
 */
export const structuralDepth = 512

// The path is built in reverse while unwinding: a valid value allocates nothing.
interface Found {
  readonly path: Array<string | number>
  readonly reason: string
}

/** Where a value stops being JSON: the path to the offending value, and why. */
export interface NotJsonAt {
  readonly path: ReadonlyArray<string | number>
  readonly reason: string
}

const notJsonAt = (u: unknown, depth: number, seen: Set<object>): Found | undefined => {
  switch (typeof u) {
    case "string":
    case "boolean":
      return undefined
    case "number":
      return Number.isFinite(u) ? undefined : { path: [], reason: `${u} is not a finite number` }
    case "object": {
      if (u === null) return undefined
      if (depth > structuralDepth) return { path: [], reason: `nesting deeper than ${structuralDepth} levels` }
      if (seen.has(u)) return { path: [], reason: "a cycle (the value contains itself)" }
      seen.add(u)
      let found: Found | undefined
      if (Array.isArray(u)) {
        for (let i = 0; i < u.length && found === undefined; i++) {
          const item: unknown = u[i]
          found = item === undefined && !(i in u)
            ? { path: [], reason: "a hole (a missing array element) is not a JSON value" }
            : notJsonAt(item, depth + 1, seen)
          if (found !== undefined) found.path.push(i)
        }
      } else {
        const proto: unknown = Object.getPrototypeOf(u)
        if (proto !== Object.prototype && proto !== null) {
          found = { path: [], reason: `${instanceName(u)} is not a plain JSON object` }
        } else {
          for (const key of Object.keys(u)) {
            found = notJsonAt((u as Record<string, unknown>)[key], depth + 1, seen)
            if (found !== undefined) {
              found.path.push(key)
              break
            }
          }
        }
      }
      seen.delete(u)
      return found
    }
    case "undefined":
      return { path: [], reason: "undefined is not a JSON value" }
    default:
      return { path: [], reason: `a ${typeof u} is not a JSON value` }
  }
}

// A getter or a Proxy trap that throws makes the value "not JSON", never a
// defect of the caller (one try for the whole walk: the valid path pays nothing).
const notJsonSafely = (u: unknown): Found | undefined => {
  try {
    return notJsonAt(u, 0, new Set())
  } catch (thrown) {
    // Rare: find where, with the walk that catches every read (the path
    // is built in reverse, as `notJsonAt` builds it).
    const walked = walk(u, {
      maxDepth: structuralDepth,
      maxBytes: Number.MAX_SAFE_INTEGER,
      undefinedProperties: "refuse",
      lenient: false
    })
    return walked._tag === "Refused"
      ? { path: [...walked.refusal.path].reverse(), reason: walked.refusal.reason }
      : { path: [], reason: `reading it threw: ${thrownText(thrown)}` }
  }
}

/** Whether a value is plain JSON data. */
export const isJsonValue = (u: unknown): boolean => notJsonSafely(u) === undefined

/** The first place where a value is not plain JSON data, or `undefined` when it is JSON. */
export const findNotJson = (u: unknown): NotJsonAt | undefined => {
  const found = notJsonSafely(u)
  return found === undefined ? undefined : { path: found.path.reverse(), reason: found.reason }
}

/**
 * A schema over a JSON predicate whose failure points at the first
 * offending value (`metadata.deep.list[1]: Infinity is not a finite number`)
 * instead of rejecting the whole value.
 */
export const declareJson = <A>(
  isA: (u: unknown) => u is A,
  notA: (u: unknown) => string | undefined,
  annotations: Schema.Annotations.Schema<A>
): Schema.Schema<A> => {
  const parse = () => (u: unknown, _options: unknown, ast: AST.Declaration) => {
    if (isA(u)) return ParseResult.succeed(u)
    const shape = notA(u)
    if (shape !== undefined) return ParseResult.fail(new ParseResult.Type(ast, u, shape))
    const found = findNotJson(u)
    const issue = new ParseResult.Type(ast, u, found?.reason ?? "not a JSON value")
    if (found === undefined) return ParseResult.fail(issue)
    const [head, ...tail] = found.path
    return ParseResult.fail(head === undefined ? issue : new ParseResult.Pointer([head, ...tail], u, issue))
  }
  return Schema.declare([], { decode: parse, encode: parse }, annotations)
}
