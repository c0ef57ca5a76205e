'use strict'

/**
 * The top-level keys of a snake_case record (`inspect()`), in camelCase: the field names follow
 * the Node.js API. Nested map keys are values (drop-reason codes such as `bad_mac`, peer ids) and
 * stay as every other surface spells them.
 * @param {Record<string, any>} record
 * @returns {Record<string, any>}
 */
function camelKeys(record) {
  /** @type {Record<string, any>} */
  const out = {}
  for (const [k, v] of Object.entries(record)) out[k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase())] = v
  return out
}

module.exports = { camelKeys }
