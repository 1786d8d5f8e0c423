/**
 * A path into a value as one readable, bounded string (`root.user.tags[2]`),
 * for error messages: a path too long to read keeps its start and its end.
 */

/** The most characters of a formatted path. */
const pathChars = 200

const formatTail = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (let i = path.length - 1; i >= 0 && out.length < 60; i--) {
    const key = path[i]!
    out = typeof key === "number" ? `[${key}]${out}` : `.${String(key)}${out}`
  }
  return out.length > 60 ? out.slice(out.length - 60) : out
}

/** `root` followed by `path`, at most about 200 characters. */
export const formatPath = (root: string, path: ReadonlyArray<PropertyKey>): string => {
  let out = root
  for (const key of path) {
    out = typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`
    // Stop building once the kept parts are known: a deep path is long.
    if (out.length > pathChars * 4) break
  }
  if (out.length <= pathChars) return out
  const full = path.length
  return `${out.slice(0, 120)}…(${full} keys)…${formatTail(path)}`
}
