/**
 * How deep parsed JSON nests, found without recursion: `JSON.parse` (which
 * V8 runs without recursing) accepts text nested any depth, and the
 * recursive code after it — a Schema, a formatter printing the value in an
 * error — overflows the stack a few thousand levels down. This is the check
 * that runs between the two.
 *
 * For plain data only (what `JSON.parse` makes): it reads arrays and own
 * enumerable keys, nothing else. Depth counts arrays and objects: `{}` is
 * at 1, `{"a":[]}` at 2.
 */

interface Level {
  readonly node: object
  readonly keys: ReadonlyArray<string> | undefined
  readonly key: string | number
  index: number
}

/**
 * The path to the first array or object nested deeper than `maxDepth`
 * levels, or `undefined` when `value` nests at most that deep.
 */
export const deeperThan = (value: unknown, maxDepth: number): ReadonlyArray<string | number> | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  if (maxDepth < 1) return []
  const stack: Array<Level> = [open(value, "")]
  for (;;) {
    const top = stack[stack.length - 1]
    if (top === undefined) return undefined
    const length = top.keys === undefined ? (top.node as ReadonlyArray<unknown>).length : top.keys.length
    if (top.index >= length) {
      stack.pop()
      continue
    }
    const i = top.index++
    const key = top.keys === undefined ? i : top.keys[i]!
    const child: unknown = (top.node as Readonly<Record<string | number, unknown>>)[key]
    if (typeof child !== "object" || child === null) continue
    if (stack.length >= maxDepth) {
      const path: Array<string | number> = []
      for (let j = 1; j < stack.length; j++) path.push(stack[j]!.key)
      path.push(key)
      return path
    }
    stack.push(open(child, key))
  }
}

const open = (node: object, key: string | number): Level => ({
  node,
  keys: Array.isArray(node) ? undefined : Object.keys(node),
  key,
  index: 0
})
