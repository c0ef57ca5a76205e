// The guided tour: five things to try, each pointing at its control, each with a "do it for me".
// `actions` are the page's own actions (see main.js), so the tour never drives the cluster any
// other way than a person would.

const $ = (id) => document.getElementById(id);

/** @param {{ crashLeader(): void, split(): void, selectFollower(): string|null, timeoutNow(): void,
 *   selectLeader(): string|null, transfer(): void, rewind(ms: number): void, pickMessage(): void }} a */
export function steps(a) {
  return [
    {
      head: 'Crash the leader',
      text: 'Press “Crash the leader” (or the c key). The others stop hearing heartbeats; the first whose election timer (the ring) fills up asks for pre-votes, then votes, and wins a higher term.',
      target: 'crash-leader',
      run: () => a.crashLeader(),
    },
    {
      head: 'Cut the cluster in two',
      text: '“Split 2 | rest” puts the leader and one other node on their own. Two of five is not a majority: that leader steps down by itself, and the three on the other side elect a new one. “Heal” joins them again.',
      target: 'split',
      run: () => a.split(),
    },
    {
      head: 'Time a follower out now',
      text: 'Select a follower and press “Time out now”: its election timer fires at once. While the leader is healthy, the others refuse its pre-vote, so it cannot disrupt the leader — watch the P replies come back ✗.',
      target: 'timeout-now',
      run: () => {
        a.selectFollower();
        a.timeoutNow();
      },
    },
    {
      head: 'Hand leadership over',
      text: 'Select the leader, pick a node under “Transfer leadership to” and press it. The leader sends timeout-now (T); the target campaigns at once and wins the next term.',
      target: 'transfer',
      run: () => {
        a.selectLeader();
        a.transfer();
      },
    },
    {
      head: 'Rewind and look closer',
      text: 'Drag the history slider back to replay the last minute (the simulation pauses), and click a message in flight (or press m) to see what the core decodes from its bytes. “Back to live” returns.',
      target: 'scrub',
      run: () => {
        a.rewind(1500);
        a.pickMessage();
      },
    },
  ];
}

export class Tour {
  constructor(actions) {
    this.steps = steps(actions);
    this.i = -1;
    $('tour-start').addEventListener('click', () => this.open(0));
    $('tour-next').addEventListener('click', () => this.open(this.i + 1));
    $('tour-prev').addEventListener('click', () => this.open(this.i - 1));
    $('tour-close').addEventListener('click', () => this.close());
    $('tour-do').addEventListener('click', () => this.steps[this.i]?.run());
  }

  open(i) {
    if (i < 0 || i >= this.steps.length) return this.close();
    this.unmark();
    this.i = i;
    const s = this.steps[i];
    $('tour').hidden = false;
    $('tour').dataset.step = String(i + 1);
    $('tour-count').textContent = `${i + 1} of ${this.steps.length}`;
    $('tour-head').textContent = s.head;
    $('tour-text').textContent = s.text;
    $('tour-prev').disabled = i === 0;
    $('tour-next').textContent = i === this.steps.length - 1 ? 'Finish' : 'Next';
    $(s.target).classList.add('tour-target');
    $('tour-title').focus();
    $(s.target).scrollIntoView({ block: 'nearest' });
  }

  unmark() {
    for (const el of document.querySelectorAll('.tour-target')) el.classList.remove('tour-target');
  }

  close() {
    this.unmark();
    this.i = -1;
    $('tour').hidden = true;
    $('tour-start').focus();
  }
}
