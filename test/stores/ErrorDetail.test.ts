/**
 * Store errors carry the driver's real cause (issue class 6): the detail of
 * every store error is built by `errorDetail`, which goes down the `cause`
 * chain past `@effect/sql`'s and the Migrator's wrappers to the driver's own
 * message and code — and reads nothing else a driver error may carry (the
 * statement's parameters, connection options).
 */
import * as Migrator from "@effect/sql/Migrator"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Cause } from "effect"
import { errorDetail } from "../../src/stores/internal/errorDetail.js"

/** What better-sqlite3 throws: an Error with SQLite's code. */
const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { code })

describe("store error detail", () => {
  it("store errors: a failed statement names SQLite's code and message under @effect/sql's wrapper", () => {
    const error = new SqlError({
      message: "Failed to execute statement",
      cause: sqliteError("SQLITE_READONLY", "attempt to write a readonly database")
    })
    expect(errorDetail(error)).toBe(
      "Failed to execute statement: SQLITE_READONLY: attempt to write a readonly database"
    )
  })

  it("store errors: a failed migration names the migration and the driver's cause", () => {
    const error = new Migrator.MigrationError({
      reason: "failed",
      message: `Migration "1_execution_records" failed`,
      cause: new SqlError({
        message: "Failed to execute statement",
        cause: sqliteError("SQLITE_FULL", "database or disk is full")
      })
    })
    expect(errorDetail(error)).toBe(
      `Migration "1_execution_records" failed: Failed to execute statement: SQLITE_FULL: database or disk is full`
    )
  })

  it("store errors: a Layer's Cause is described by its failure, or else its defect", () => {
    expect(errorDetail(Cause.die(sqliteError("SQLITE_CANTOPEN", "unable to open database file")))).toBe(
      "SQLITE_CANTOPEN: unable to open database file"
    )
    expect(
      errorDetail(
        Cause.fail(
          new SqlError({ message: "Connection error", cause: new Error("Connection terminated unexpectedly") })
        )
      )
    )
      .toBe("Connection error: Connection terminated unexpectedly")
  })

  it("store errors: a code the message already says is not repeated; an AggregateError names what it aggregates", () => {
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: "ECONNREFUSED" })
    expect(errorDetail(refused("127.0.0.1:5432"))).toBe("connect ECONNREFUSED 127.0.0.1:5432")
    expect(errorDetail(new AggregateError([refused("::1:5432"), refused("127.0.0.1:5432")], "")))
      .toBe("connect ECONNREFUSED ::1:5432: connect ECONNREFUSED 127.0.0.1:5432")
  })

  it("store errors: only message, code and cause are read — never parameters or connection options", () => {
    const error = Object.assign(new Error("duplicate key value violates unique constraint"), {
      code: "23505",
      parameters: ["secret-parameter"],
      options: { password: "secret-password" }
    })
    const detail = errorDetail(new SqlError({ message: "Failed to execute statement", cause: error }))
    expect(detail).toBe("Failed to execute statement: 23505: duplicate key value violates unique constraint")
    expect(detail).not.toContain("secret")
  })

  it("store errors: a cycle, a throwing getter, a Proxy or a huge message still give a bounded detail", () => {
    const cyclic: { message: string; cause?: unknown } = { message: "outer" }
    cyclic.cause = cyclic
    expect(errorDetail(cyclic)).toBe("outer")
    const hostile = {
      get message(): string {
        throw new Error("no")
      },
      cause: new Error("the real cause")
    }
    expect(errorDetail(hostile)).toBe("the real cause")
    const trap = new Proxy({}, {
      get: () => {
        throw new Error("trap")
      }
    })
    expect(typeof errorDetail(trap)).toBe("string")
    expect(errorDetail(new Error("x".repeat(10_000))).length).toBeLessThanOrEqual(1_001)
    expect(errorDetail("plain text")).toBe("plain text")
  })
})
