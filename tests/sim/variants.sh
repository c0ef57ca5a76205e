#!/usr/bin/env bash
# Runs the simulator's fault variants with TOTAL seeds shared among them, prints one line per
# variant (seeds, violations, per-invariant counts, failover percentiles, seconds) and the totals,
# and exits 1 if any variant found a violation (after running them all).
#
#   tests/sim/variants.sh TOTAL SIM...      e.g. tests/sim/variants.sh 1000000 target/release/tenure-sim
#
# `make test-sim` runs it with 50,000 seeds, `make soak` with 1,000,000. Shares are per mille of
# TOTAL; first seeds differ per variant so that no two variants replay the same schedules.
# SIM_VARIANTS=REGEX runs only the variants whose name matches (e.g. SIM_VARIANTS='^(replay|huge-terms)$').
set -u
total=$1
shift
sim=("$@")

# name | per mille | first seed | options
variants=(
  "default|50|0|"
  "3-nodes-rtt20|100|100000000|--nodes 3 --rtt-ms 20"
  "7-nodes-rtt1|50|200000000|--nodes 7 --rtt-ms 1"
  "no-pre-vote|50|300000000|--no-pre-vote"
  "all-faults|100|400000000|--faults all"
  "all-faults-3-nodes-rtt20|30|450000000|--faults all --nodes 3 --rtt-ms 20"
  "all-faults-no-durable|40|500000000|--faults all --no-durable"
  "crash-points|50|600000000|--faults crash"
  "clock-drift|40|700000000|--faults drift,pause,partition"
  "late-duplicates|40|800000000|--faults latedup,dup,reorder,crash"
  "replay|40|900000000|--faults replay,crash,partition"
  "replay-3-nodes-rtt20|20|1800000000|--nodes 3 --rtt-ms 20 --faults replay,crash,partition,deny,reorder"
  "fake-ids|40|1000000000|--faults fakeids,crash,partition"
  "fake-voter|40|1100000000|--faults fakevoter,partition,oneway"
  "huge-terms|40|1200000000|--faults hugeterm,crash,partition"
  "false-peer-down|40|1300000000|--faults falsedown,partition,crash"
  "membership|30|1400000000|--faults membership,crash,partition"
  "refused|30|1600000000|--faults refused,crash,partition,pause,drift,loss"
  "refused-fast-lease|30|1700000000|--heartbeat-interval 20 --lease-duration 50 --faults refused,crash,partition,pause,drift,loss,dup,reorder,transfer"
  "mixed-versions|20|1900000000|--faults versions,crash,pause,partition,loss,dup,reorder,transfer,replay"
  "death-notice|20|2000000000|--faults notice,crash,pause,partition,oneway,loss,dup,reorder,transfer,deny,handler,drift,latedup,replay"
  "death-notice-3-nodes-rtt20|10|2100000000|--nodes 3 --rtt-ms 20 --faults notice,crash,pause,partition,loss,dup,reorder,transfer,replay"
  "death-notice-mixed-versions|10|2200000000|--faults versions,notice,crash,pause,partition,loss,dup,reorder,transfer,replay"
  "death-notice-all-faults|10|2300000000|--faults all,notice"
  "priority|15|2400000000|--faults priority,crash,pause,partition,oneway,loss,dup,reorder,transfer,deny,handler,drift"
  "priority-3-nodes-rtt20|5|2500000000|--nodes 3 --rtt-ms 20 --faults priority,crash,pause,partition,loss,dup,reorder,transfer"
  "priority-mixed-versions|5|2600000000|--faults priority,versions,crash,pause,partition,loss,dup,reorder,transfer,replay"
  "priority-all-faults|5|2700000000|--faults all,priority"
  "observers|8|2800000000|--observers 2 --faults crash,pause,partition,oneway,loss,dup,reorder,transfer,replay,deny,handler,drift,latedup"
  "observers-all-faults|6|2900000000|--observers 2 --faults all,notice"
  "observers-mixed-versions|6|3000000000|--observers 2 --faults versions,notice,crash,pause,partition,loss,dup,reorder,transfer,replay"
  "admit-unknown-peers|20|1500000000|--admit-unknown-peers --faults crash,pause,partition,oneway,loss,dup,reorder,deny,handler,transfer,broadcast,drift,latedup,replay,hugeterm,falsedown"
)

start=$(date +%s)
failed=0
declare -A inv_total
sum_seeds=0
sum_viol=0
ran=0
printf '%-26s %8s %5s  %s\n' variant seeds viol "per-invariant violations / failover p50 p99 max ms / seconds"
for v in "${variants[@]}"; do
  IFS='|' read -r name share first opts <<<"$v"
  if [ -n "${SIM_VARIANTS:-}" ] && ! [[ $name =~ $SIM_VARIANTS ]]; then continue; fi
  ran=$(( ran + 1 ))
  n=$(( total * share / 1000 ))
  [ "$n" -ge 1 ] || n=1
  t0=$(date +%s)
  # shellcheck disable=SC2086
  out=$("${sim[@]}" --seeds "$n" --first-seed "$first" $opts 2>/dev/null)
  rc=$?
  t1=$(date +%s)
  summary=$(grep '^seeds=' <<<"$out")
  invs=$(grep '^invariants:' <<<"$out" | sed 's/^invariants: //; s/ (.*//')
  viol=$(sed -n 's/.* violations=\([0-9]*\).*/\1/p' <<<"$summary")
  p50=$(sed -n 's/.*failover_p50_ms=\([^ ]*\).*/\1/p' <<<"$summary")
  p99=$(sed -n 's/.*failover_p99_ms=\([^ ]*\).*/\1/p' <<<"$summary")
  max=$(sed -n 's/.*failover_max_ms=\([^ ]*\).*/\1/p' <<<"$summary")
  printf '%-26s %8d %5s  %s / %s %s %s / %ds\n' "$name" "$n" "${viol:-?}" "$invs" "$p50" "$p99" "$max" $(( t1 - t0 ))
  for kv in $invs; do
    k=${kv%%=*}
    inv_total[$k]=$(( ${inv_total[$k]:-0} + ${kv#*=} ))
  done
  sum_seeds=$(( sum_seeds + n ))
  sum_viol=$(( sum_viol + ${viol:-1} ))
  if [ "$rc" -ne 0 ]; then
    failed=1
    grep -m1 -A3 '^VIOLATION' <<<"$out" | cut -c1-300 | sed 's/^/    /'
    grep '^failing seeds:' <<<"$out" | sed 's/^/    /'
    grep '^reproduce:' <<<"$out" | sed "s/(same options)/--first-seed $first $opts/; s/^/    /"
  fi
done
end=$(date +%s)
line=""
for k in $(printf '%s\n' "${!inv_total[@]}" | sort); do line+="$k=${inv_total[$k]} "; done
echo "total: seeds=$sum_seeds violations=$sum_viol variants=$ran elapsed_s=$(( end - start ))"
echo "total per invariant: $line"
exit $failed
