/**
 * The memory store's caps (count and bytes) and the totals they are held
 * to, kept as entries come and go: a cap costs one measurement per write,
 * never a walk over the store. Running records count toward both caps but
 * are never evicted, so the store also tracks what they hold.
 */

/** What the caps read of an entry. */
export interface Counted {
  readonly bytes: number
  readonly status: string
}

/** The totals of a store's entries, against its caps. */
export class MemoryCaps {
  private totalBytes = 0
  private runningBytes = 0
  private runningCount = 0

  constructor(readonly maxRecords: number, readonly maxBytes: number) {}

  /** Counts `entry` in (`sign` 1) or out (-1). */
  count(entry: Counted, sign: 1 | -1): void {
    this.totalBytes += sign * entry.bytes
    if (entry.status === "running") {
      this.runningBytes += sign * entry.bytes
      this.runningCount += sign
    }
  }

  /** Whether `size` entries holding the counted bytes pass a cap. */
  over(size: number): boolean {
    return size > this.maxRecords || this.totalBytes > this.maxBytes
  }

  /**
   * Whether the caps can never hold finished `entry` beside the running
   * records (which are never evicted): bigger than the byte cap on its own,
   * or with them, or no room left in the count beside them.
   */
  cannotHold(entry: Counted): boolean {
    return entry.status !== "running" &&
      (this.runningBytes + entry.bytes > this.maxBytes || this.runningCount + 1 > this.maxRecords)
  }
}
