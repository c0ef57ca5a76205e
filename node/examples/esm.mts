// ESM consumers: named imports and the default export name the same objects.
import tenure, { Node, FenceChecker, type Output } from 'tenure'

const node: Node = new tenure.Node({ id: 'a', cluster: 'esm', bootstrap: ['a', 'b', 'c'] })
const outputs: Output[] = node.drain()
const fence = new FenceChecker()
console.log(node.role, outputs.length, fence.check(1, 'a'), tenure.Node === Node)
