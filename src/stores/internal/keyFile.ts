/**
 * A secret kept in a file beside the data it protects: read it, or create
 * it — owner-only (0600), complete or not at all. Two processes starting on
 * a fresh directory at once end up with the same key: the file appears by
 * a hard link of a fully written, synced temporary file, which fails with
 * `EEXIST` for the loser, who then reads the winner's.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/** What {@link readOrCreate} found or made. */
export interface KeyFile {
  /** The absolute path. */
  readonly path: string
  readonly text: string
  /** Whether this call created it. */
  readonly created: boolean
  /** Permission bits other than the owner's (`mode & 0o077`); 0 when owner-only. */
  readonly othersMode: number
}

const codeOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "code" in error ? error.code : undefined

const read = (file: string): KeyFile | undefined => {
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) throw new Error("not a regular file")
    return { path: file, text: fs.readFileSync(file, "utf8"), created: false, othersMode: stat.mode & 0o077 }
  } catch (error) {
    if (codeOf(error) === "ENOENT") return undefined
    throw error
  }
}

/**
 * Reads the key file at `file`, or creates it with `generate()`'s text
 * (mode 0600, its folder created). Synchronous: run it inside `Effect.try`.
 */
export const readOrCreate = (file: string, generate: () => string): KeyFile => {
  const absolute = path.resolve(file)
  // A second round only when a file we raced with vanished again in between.
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = read(absolute)
    if (existing !== undefined) return existing
    fs.mkdirSync(path.dirname(absolute), { recursive: true })
    const text = generate()
    const temporary = `${absolute}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
    const fd = fs.openSync(temporary, "wx", 0o600)
    try {
      fs.writeSync(fd, `${text}\n`)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    try {
      // The umask can only narrow 0600; this makes sure nothing widened it.
      fs.chmodSync(temporary, 0o600)
      fs.linkSync(temporary, absolute)
      return { path: absolute, text, created: true, othersMode: 0 }
    } catch (error) {
      if (codeOf(error) !== "EEXIST") throw error
    } finally {
      fs.rmSync(temporary, { force: true })
    }
  }
  throw new Error("the file kept appearing and disappearing while it was being created")
}
