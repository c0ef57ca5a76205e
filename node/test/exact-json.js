'use strict'
// JSON.parse that keeps every integer exact: safe integers become numbers, larger ones BigInt
// (seeds and u64::MAX terms in the shared test files do not fit a double). Node 20's JSON.parse
// has no access to the source text of numbers, hence this small parser.

/** @param {string} text */
function parseExact(text) {
  let i = 0
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++
  }
  /** @returns {any} */
  const value = () => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++
      /** @type {Record<string, any>} */
      const o = {}
      ws()
      if (text[i] === '}') return i++, o
      for (;;) {
        ws()
        const k = /** @type {string} */ (value())
        ws()
        if (text[i++] !== ':') throw new SyntaxError(`expected ':' at ${i - 1}`)
        o[k] = value()
        ws()
        const d = text[i++]
        if (d === '}') return o
        if (d !== ',') throw new SyntaxError(`expected ',' or '}' at ${i - 1}`)
      }
    }
    if (c === '[') {
      i++
      const a = []
      ws()
      if (text[i] === ']') return i++, a
      for (;;) {
        a.push(value())
        ws()
        const d = text[i++]
        if (d === ']') return a
        if (d !== ',') throw new SyntaxError(`expected ',' or ']' at ${i - 1}`)
      }
    }
    if (c === '"') {
      const start = i
      i++
      while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
      i++
      return JSON.parse(text.slice(start, i))
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?|^true|^false|^null/.exec(text.slice(i, i + 400))
    if (!m) throw new SyntaxError(`unexpected ${JSON.stringify(c)} at ${i}`)
    i += m[0].length
    const tok = m[0]
    if (tok === 'true') return true
    if (tok === 'false') return false
    if (tok === 'null') return null
    if (/^-?\d+$/.test(tok)) {
      const b = BigInt(tok)
      return b >= -BigInt(Number.MAX_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b
    }
    return Number(tok)
  }
  const v = value()
  ws()
  if (i !== text.length) throw new SyntaxError(`trailing data at ${i}`)
  return v
}

module.exports = { parseExact }
