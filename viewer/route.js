// @ts-check
/**
 * The viewer's routes, from the URL's hash: `#/` (or anything else) the
 * request list, `#/records/<id>` the detail of a request (the id
 * URI-encoded).
 */

/**
 * The route of a hash: the list, or the detail of a request id.
 *
 * @param {string} hash
 * @returns {{ readonly page: "list" } | { readonly page: "detail", readonly id: string }}
 */
export const route = (hash) => {
  const match = /^#\/records\/(.+)$/.exec(hash)
  if (match === null || match[1] === undefined) return { page: "list" }
  try {
    return { page: "detail", id: decodeURIComponent(match[1]) }
  } catch {
    return { page: "list" }
  }
}
