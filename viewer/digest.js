// @ts-check
/**
 * The plan digest an approval echoes: the SHA-256 (hex) of the plan's
 * canonical JSON text — object keys sorted by UTF-16 code units, no
 * whitespace, strings and numbers as `JSON.stringify` writes them, members
 * whose value is `undefined` left out (the library's `Approval.planText`).
 * The viewer computes it over the plan it shows, so the digest it sends is
 * the digest of what the approver saw. SHA-256 is written out here because
 * `crypto.subtle` exists only in secure contexts (a viewer reached over
 * plain HTTP on another host has none).
 */

/**
 * The canonical JSON text of a JSON value.
 *
 * @param {unknown} value
 * @returns {string}
 */
export const canonicalJson = (value) => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value)
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON: ${value} is not a finite number`)
      return JSON.stringify(value)
    case "object": {
      if (value === null) return "null"
      if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(",")}]`
      const record = /** @type {Record<string, unknown>} */ (value)
      const members = Object.keys(record).sort().flatMap((key) =>
        record[key] === undefined ? [] : [`${JSON.stringify(key)}:${canonicalJson(record[key])}`]
      )
      return `{${members.join(",")}}`
    }
    default:
      throw new TypeError(`canonical JSON: a ${typeof value} is not a JSON value`)
  }
}

const K = new Uint32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2
])

/**
 * The SHA-256 of a text's UTF-8 bytes, as 64 lowercase hex digits.
 *
 * @param {string} text
 * @returns {string}
 */
export const sha256Hex = (text) => {
  const bytes = new TextEncoder().encode(text)
  const bitLength = bytes.length * 8
  const padded = new Uint8Array(Math.ceil((bytes.length + 9) / 64) * 64)
  padded.set(bytes)
  padded[bytes.length] = 0x80
  const view = new DataView(padded.buffer)
  view.setUint32(padded.length - 8, Math.floor(bitLength / 0x1_0000_0000))
  view.setUint32(padded.length - 4, bitLength >>> 0)
  const h = new Uint32Array([
    0x6a09e667,
    0xbb67ae85,
    0x3c6ef372,
    0xa54ff53a,
    0x510e527f,
    0x9b05688c,
    0x1f83d9ab,
    0x5be0cd19
  ])
  const w = new Uint32Array(64)
  const rotr = (/** @type {number} */ x, /** @type {number} */ n) => (x >>> n) | (x << (32 - n))
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4)
    for (let i = 16; i < 64; i++) {
      const a = /** @type {number} */ (w[i - 15])
      const b = /** @type {number} */ (w[i - 2])
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10)
      w[i] = /** @type {number} */ (w[i - 16]) + s0 + /** @type {number} */ (w[i - 7]) + s1
    }
    let [a, b, c, d, e, f, g, hh] = /** @type {[number, number, number, number, number, number, number, number]} */ (
      Array.from(h)
    )
    for (let i = 0; i < 64; i++) {
      const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
      const ch = (e & f) ^ (~e & g)
      const t1 = (hh + s1 + ch + /** @type {number} */ (K[i]) + /** @type {number} */ (w[i])) >>> 0
      const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
      const maj = (a & b) ^ (a & c) ^ (b & c)
      const t2 = (s0 + maj) >>> 0
      hh = g
      g = f
      f = e
      e = (d + t1) >>> 0
      d = c
      c = b
      b = a
      a = (t1 + t2) >>> 0
    }
    const add = [a, b, c, d, e, f, g, hh]
    // Uint32Array keeps each sum modulo 2^32.
    for (let i = 0; i < 8; i++) h[i] = (h[i] ?? 0) + (add[i] ?? 0)
  }
  return Array.from(h, (word) => word.toString(16).padStart(8, "0")).join("")
}

/**
 * The digest of a plan (its encoded form, as the API returns it).
 *
 * @param {unknown} plan
 * @returns {string}
 */
export const planDigest = (plan) => sha256Hex(canonicalJson(plan))
