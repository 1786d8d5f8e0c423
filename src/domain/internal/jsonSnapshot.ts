/**
 * Reading a value that comes from outside the library — a request body, a
 * tool's result, a hook's contribution, a plan a hook returned — into a
 * fresh copy made of plain objects and arrays, in one iterative walk.
 *
 * Why a copy: the value is read exactly once. A getter that throws, a Proxy
 * whose traps throw or answer differently on every read, an object its
 * producer mutates later — none of them reach the code that runs after the
 * check: it sees the copy, which was checked, and nothing else holds it.
 *
 * Why iterative: the value's nesting is chosen by whoever sent it, and
 * JavaScript's stack is not. The walk keeps its own stack, refuses nesting
 * past `maxDepth` and stops as soon as the JSON text would pass `maxBytes`
 * (so a value sharing one sub-object a million times costs at most
 * `maxBytes` of work, not a million copies).
 *
 * Two modes:
 * - strict: anything that is not JSON is refused (with its path);
 * - lenient: plain objects and arrays are copied, every other leaf is kept
 *   as it is (a function, a `Date`, a `bigint`, `undefined`, a cycle
 *   reproduced in the copy) for a Schema to judge — its messages stay the
 *   Schema's, while the Schema only ever reads data this walk made.
 *
 * Depth counts arrays and objects: a scalar is at depth 0, `{}` and `[]` at
 * 1, `{"a":[]}` at 2.
 */
import { byteLength } from "./utf8Chunks.js"

/** Why a value was refused. */
export type RefusalKind = "not_json" | "too_deep" | "too_large" | "unreadable"

/** Where and why a value was refused. */
export interface Refusal {
  readonly kind: RefusalKind
  /** The path to the offending value, from the root. */
  readonly path: ReadonlyArray<string | number>
  readonly reason: string
}

/** What a walk made of a value. */
export type Walked =
  | {
    readonly _tag: "Copied"
    readonly value: unknown
    /** The UTF-8 size of the copy's compact JSON text (as `Json.encodedSize` measures it). */
    readonly bytes: number
    /** Whether the copy is strict JSON (always, in strict mode). */
    readonly json: boolean
  }
  | { readonly _tag: "Refused"; readonly refusal: Refusal }

/** How to walk. */
export interface WalkOptions {
  /** The most levels of arrays and objects. */
  readonly maxDepth: number
  /** The most UTF-8 bytes of JSON text; the walk stops once past it. */
  readonly maxBytes: number
  /**
   * An object property whose value is `undefined`: refused (strict JSON),
   * dropped (what `JSON.stringify` does) or kept (lenient).
   */
  readonly undefinedProperties: "refuse" | "drop" | "keep"
  /** Keep values that are not JSON as leaves instead of refusing them. */
  readonly lenient: boolean
}

/** One array or object being copied. */
interface Frame {
  readonly source: object
  readonly out: Array<unknown> | Record<string, unknown>
  /** The keys to copy; `undefined` for an array. */
  readonly keys: ReadonlyArray<string> | undefined
  readonly length: number
  /** The key this container sits under in its parent. */
  readonly key: string | number
  index: number
  written: number
}

/** `a Date instance`, `a class instance`; never throws. */
export const instanceName = (u: object): string => {
  try {
    const name: unknown = (u as { readonly constructor?: { readonly name?: unknown } }).constructor?.name
    return typeof name === "string" && name !== "" ? `a ${name} instance` : "a class instance"
  } catch {
    return "a class instance"
  }
}

/** What a thrown value says, in one bounded line; never throws. */
export const thrownText = (thrown: unknown): string => {
  let text: string
  try {
    text = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown)
  } catch {
    text = "a value that cannot be printed"
  }
  const line = text.replace(/\s+/g, " ").trim()
  return line.length <= 200 ? line : `${line.slice(0, 199)}…`
}

/**
 * The UTF-8 size of a string: short ASCII strings (most keys and values)
 * are counted here, cheaper than a native call; anything else natively.
 */
const textBytes = (text: string): number => {
  const length = text.length
  if (length > 32) return byteLength(text)
  for (let i = 0; i < length; i++) if (text.charCodeAt(i) > 0x7f) return byteLength(text)
  return length
}

/** The length of a finite number's JSON text; integers without formatting them. */
const numberBytes = (n: number): number => {
  if (Number.isInteger(n) && n > -1e15 && n < 1e15) {
    let digits = n < 0 ? 2 : 1
    for (let rest = Math.abs(n); rest >= 10; rest = Math.floor(rest / 10)) digits++
    return digits
  }
  return String(n).length
}

const assign = (out: Array<unknown> | Record<string, unknown>, key: string | number, value: unknown): void => {
  // An own "__proto__" key stays a key: assigning it would set the prototype.
  if (key === "__proto__") {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    ;(out as Record<string | number, unknown>)[key] = value
  }
}

const pathOf = (stack: ReadonlyArray<Frame>, last: string | number | undefined): Array<string | number> => {
  const path: Array<string | number> = []
  for (let i = 1; i < stack.length; i++) path.push(stack[i]!.key)
  if (last !== undefined) path.push(last)
  return path
}

const refused = (kind: RefusalKind, path: ReadonlyArray<string | number>, reason: string): Walked => ({
  _tag: "Refused",
  refusal: { kind, path, reason }
})

/**
 * Walks `root` into a copy (see the module comment). Never throws: reading
 * that throws is a refusal (`unreadable`).
 */
export const walk = (root: unknown, options: WalkOptions): Walked => {
  const { lenient, maxBytes, maxDepth, undefinedProperties } = options
  const stack: Array<Frame> = []
  let bytes = 0
  let json = true
  let result: unknown = undefined
  // The value to place next, and the key it goes under in the top frame.
  let value: unknown = root
  let key: string | number | undefined = undefined
  let pending = true
  try {
    for (;;) {
      if (pending) {
        pending = false
        let placed: unknown = value
        let opened: Frame | undefined
        switch (typeof value) {
          case "string":
            bytes += textBytes(value) + 2
            break
          case "boolean":
            bytes += value ? 4 : 5
            break
          case "number":
            if (Number.isFinite(value)) {
              bytes += numberBytes(value)
            } else if (lenient) {
              json = false
            } else {
              return refused("not_json", pathOf(stack, key), `${value} is not a finite number`)
            }
            break
          case "object": {
            if (value === null) {
              bytes += 4
              break
            }
            let cycle: Frame | undefined
            for (let i = 0; i < stack.length; i++) {
              if (stack[i]!.source === value) {
                cycle = stack[i]
                break
              }
            }
            if (cycle !== undefined) {
              if (!lenient) return refused("not_json", pathOf(stack, key), "a cycle (the value contains itself)")
              json = false
              placed = cycle.out
              break
            }
            const at = key ?? ""
            if (Array.isArray(value)) {
              if (stack.length >= maxDepth) {
                return refused("too_deep", pathOf(stack, key), `nests deeper than ${maxDepth} levels`)
              }
              const length: unknown = value.length
              // Each element takes at least one byte and a comma: a length
              // past the budget is refused before anything is allocated.
              if (typeof length !== "number" || length > maxBytes) {
                return refused("too_large", pathOf(stack, key), `is over the limit of ${maxBytes} bytes`)
              }
              // Filled in order from empty: a packed array (`new Array(n)` is a
              // holey one, which `JSON.stringify` writes about three times slower).
              opened = { source: value, out: [], keys: undefined, length, key: at, index: 0, written: 0 }
              bytes += 2
            } else {
              const proto: unknown = Object.getPrototypeOf(value)
              if (proto !== Object.prototype && proto !== null) {
                if (!lenient) {
                  return refused("not_json", pathOf(stack, key), `${instanceName(value)} is not a plain JSON object`)
                }
                json = false
                break
              }
              if (stack.length >= maxDepth) {
                return refused("too_deep", pathOf(stack, key), `nests deeper than ${maxDepth} levels`)
              }
              const keys = Object.keys(value)
              opened = { source: value, out: {}, keys, length: keys.length, key: at, index: 0, written: 0 }
              bytes += 2
            }
            placed = opened.out
            break
          }
          case "undefined":
            // An array element or the root (properties are handled where they are read).
            if (!lenient) return refused("not_json", pathOf(stack, key), "undefined is not a JSON value")
            json = false
            break
          default:
            if (!lenient) return refused("not_json", pathOf(stack, key), `a ${typeof value} is not a JSON value`)
            json = false
        }
        if (bytes > maxBytes) return refused("too_large", pathOf(stack, key), `is over the limit of ${maxBytes} bytes`)
        const parent = stack[stack.length - 1]
        if (parent === undefined) result = placed
        else assign(parent.out, key!, placed)
        if (opened !== undefined) stack.push(opened)
      }
      const top = stack[stack.length - 1]
      if (top === undefined) break
      if (top.index >= top.length) {
        // Trailing holes a lenient copy kept still count in its length.
        if (Array.isArray(top.out)) top.out.length = top.length
        stack.pop()
        continue
      }
      const i = top.index++
      if (top.keys === undefined) {
        // Set before reading: a read that throws is reported at this key.
        key = i
        const element: unknown = (top.source as ReadonlyArray<unknown>)[i]
        if (top.written++ > 0) bytes++
        if (element === undefined && !(i in top.source)) {
          if (!lenient) {
            return refused("not_json", pathOf(stack, i), "a hole (a missing array element) is not a JSON value")
          }
          // The copy keeps the hole.
          json = false
          bytes += 4
          continue
        }
        value = element
        pending = true
        continue
      }
      const name = top.keys[i]!
      key = name
      const property: unknown = (top.source as Readonly<Record<string, unknown>>)[name]
      if (property === undefined) {
        if (undefinedProperties === "drop") continue
        if (undefinedProperties === "refuse") {
          return refused("not_json", pathOf(stack, name), "undefined is not a JSON value")
        }
        json = false
        assign(top.out, name, undefined)
        continue
      }
      if (top.written++ > 0) bytes++
      bytes += textBytes(name) + 3
      value = property
      pending = true
    }
  } catch (thrown) {
    // A getter or a Proxy trap threw while the value at `key` was read
    // (`key` is set before every read; the frame it would open is not pushed yet).
    return refused("unreadable", pathOf(stack, key), `reading it threw: ${thrownText(thrown)}`)
  }
  return { _tag: "Copied", value: result, bytes, json }
}
