#!/bin/bash
# Is one CPU of this machine noisier than the others? The plain C floor (timing_floor.c)
# times a one-thread kernel pinned to each CPU named, in fresh processes, rounds taking
# the CPUs in turn; prints per CPU the median of the processes' medians, their CoV, and
# the device interrupts the CPU took meanwhile (/proc/interrupts).
#
#   perf/bench/placement_floor.sh [CPUS="0 7 15"] [ROUNDS=15] [N=256]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
last=$(($(nproc) - 1))
CPUS=$(echo ${CPUS:-0 $((last / 2)) $last} | tr " " "\n" | sort -nu | tr "\n" " ")
ROUNDS=${ROUNDS:-15}
N=${N:-256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
march=-march=native
grep -q avx512f /proc/cpuinfo && kernel=k04_avx512_rows.c || kernel=k06_avx2_4x8.c
gcc -O2 "$here/timing_floor.c" -o "$work/floor" -ldl
gcc -shared -fPIC -O3 $march -fopenmp "$root/tests/data/kernels/$kernel" -o "$work/k.so" -lm

irqs() {  # device interrupts per CPU (the rows with a number as name), one line
  awk 'NR == 1 { n = NF; next } $1 ~ /^[0-9]+:$/ { for (i = 2; i <= n + 1; i++) s[i - 2] += $i }
       END { for (i = 0; i < n; i++) printf "%d ", s[i]; print "" }' /proc/interrupts
}
before=$(irqs)
for ((r = 0; r < ROUNDS; r++)); do
  for c in $CPUS; do
    printf "%s " "$c" >> "$work/times"
    OMP_NUM_THREADS=1 OMP_PROC_BIND=false taskset -c "$c" "$work/floor" "$work/k.so" "$N" 40 | awk 'NR == 1 {print $1}' >> "$work/times"
  done
done
after=$(irqs)
echo "$kernel on one thread, ${N}^3, $ROUNDS fresh processes per CPU (40 calls each, median)"
for c in $CPUS; do
  b=$(echo "$before" | awk -v c="$c" '{print $(c + 1)}')
  a=$(echo "$after" | awk -v c="$c" '{print $(c + 1)}')
  awk -v c="$c" -v n="$N" '$1 == c { print 2 * n * n * n / $2 * 1e-9 }' "$work/times" | sort -g |
    awk -v c="$c" -v irq=$((a - b)) '{ x[++k] = $1; s += $1 }
      END { m = s / k; for (i = 1; i <= k; i++) v += (x[i] - m) ^ 2
            printf "  CPU %3d: median %.1f GFLOPS, CoV %.1f%%, median/slowest %.2f, device interrupts %d\n",
                   c, x[int((k + 1) / 2)], 100 * sqrt(v / (k - 1)) / m, x[int((k + 1) / 2)] / x[1], irq }'
done
