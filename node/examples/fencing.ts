// A fencing write in TypeScript: the leader passes its term (the fencing token) with each write,
// and checks its lease right before it; the resource refuses stale terms with a FenceChecker.

import { Elector, FenceChecker, type FenceVerdict, type U64 } from 'tenure'

const fence = new FenceChecker() // lives next to the resource
const rows: string[] = []

function write(term: U64, leader: string, row: string): FenceVerdict {
  const verdict = fence.check(term, leader)
  if (verdict === 'accepted') rows.push(row)
  return verdict
}

export function writeIfLeading(elector: Elector, row: string): FenceVerdict | 'not_leading' {
  const token = elector.fencingToken
  const lease = elector.leaseRemainingMs
  if (token === null || lease === null || lease <= 0) return 'not_leading'
  return write(token, elector.id, row)
}

console.log(write(4, 'a', 'x'), write(3, 'b', 'y'), rows)
