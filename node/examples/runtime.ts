// The runtime in TypeScript: one Elector per process; run three of them with different ids:
//   node -r ... examples/runtime.ts 127.0.0.1:7001 127.0.0.1:7002 127.0.0.1:7003

import { Elector, type LeaderInfo, type FollowerInfo } from 'tenure'

const [id = '127.0.0.1:7001', ...peers] = process.argv.slice(2)
const elector = new Elector({
  id,
  peers: peers.length > 0 ? peers : ['127.0.0.1:7002', '127.0.0.1:7003'],
  cluster: 'example',
  stateFile: `/tmp/tenure-${id.replace(':', '_')}.state`,
  confirmLeader: async ({ term }) => {
    // e.g. check that this replica is healthy before accepting leadership
    return term > 0
  },
})

elector.on('leader', ({ term, signal }: LeaderInfo) => {
  console.log(`leading term ${term}`)
  signal.addEventListener('abort', () => console.log(`no longer leading term ${term}`), { once: true })
})
elector.on('follower', ({ leader }: FollowerInfo) => console.log(`following ${leader ?? 'nobody'}`))
elector.on('error', (err: Error) => console.error(err))

async function main(): Promise<void> {
  await elector.start()
  const stop = (): void => {
    elector.stop().then(() => process.exit(0), () => process.exit(1))
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}

void main()
