#!/usr/bin/env bash
# Eddy and SPlisHSPlasH side by side on the reference dam break: for each
# method, Eddy's benchmark and the peer run alternately (Eddy, peer, Eddy,
# peer, ...), so both see the same machine, and the ratio is taken from the
# same run. On shared machines only such a ratio means anything.
#
# Usage: bench/peers/side_by_side.sh BUILD_DIR [--methods pbf,dfsph,wcsph] [--rounds N]
#                                    [--steps N] [--warmup N] [--threads T] [--eddy-defaults]
#
# Eddy runs the peer scene's work (--peer-scene: no XSPH in PBF, no viscosity
# in SPH, as the peer's scene has none), so that the ratio compares the same
# work; --eddy-defaults runs Eddy's defaults instead (XSPH 0.01, water
# viscosity), which do more.
#
# Needs the peer built (bench/peers/splishsplash.sh build); exits 3 without
# it. Prints each run's line, then a table: the mean ms per step of each
# side, the ratio of the means, and the lowest and highest ratio of the
# rounds (each Eddy run against the peer run after it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: side_by_side.sh BUILD_DIR [--methods LIST] [--rounds N] [--steps N] [--warmup N] [--threads T]}
shift
methods=pbf,dfsph,wcsph rounds=2 steps=100 warmup=50 threads=2 scene=--peer-scene
while (($#)); do
  case $1 in
  --methods) methods=$2; shift 2 ;;
  --rounds) rounds=$2; shift 2 ;;
  --steps) steps=$2; shift 2 ;;
  --warmup) warmup=$2; shift 2 ;;
  --threads) threads=$2; shift 2 ;;
  --eddy-defaults) scene=""; shift ;;
  *) echo "side_by_side.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if ! "$here/splishsplash.sh" status >/dev/null 2>&1; then
  echo "side_by_side.sh: SPlisHSPlasH is not built (bench/peers/splishsplash.sh build)" >&2
  exit 3
fi

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
eddy_line() {
  case $1 in
  pbf) "$build/bin/eddy_bench_pbf" --line $scene --steps "$steps" --warmup "$warmup" --threads "$threads" ;;
  *) "$build/bin/eddy_bench_sph" --line $scene --only "$1" --steps "$steps" --warmup "$warmup" --threads "$threads" ;;
  esac
}

echo "Side by side on this machine: $threads threads, $steps timed steps after $warmup warm-up steps, $rounds rounds"
if [[ -n $scene ]]; then
  echo "  Eddy does the peer scene's work: no XSPH (PBF), no viscosity (SPH)"
else
  echo "  Eddy runs its defaults: XSPH 0.01 (PBF) and water viscosity (SPH), which the peer's scene leaves out"
fi
"$here/splishsplash.sh" status | sed 's/^/  peer: /'
table=()
IFS=, read -ra list <<<"$methods"
for m in "${list[@]}"; do
  e_sum=0 p_sum=0 lo="" hi="" e_it="" p_it="" e_n="" p_n=""
  for ((k = 1; k <= rounds; ++k)); do
    e=$(eddy_line "$m")
    p=$("$here/splishsplash.sh" run "$m" --steps "$steps" --warmup "$warmup" --threads "$threads")
    echo "  $e"
    echo "  $p"
    em=$(field ms_per_step "$e") pm=$(field ms_per_step "$p")
    e_it=$(field iterations "$e") p_it=$(field iterations "$p")
    e_n=$(field particles "$e") p_n=$(field particles "$p")
    if ! [[ $em =~ ^[0-9]+(\.[0-9]+)?$ && $pm =~ ^[0-9]+(\.[0-9]+)?$ ]] || [[ $em == 0 || $pm == 0 ]]; then
      echo "side_by_side.sh: $m, round $k: no time per step in the lines above" >&2
      exit 1
    fi
    if [[ $e_n != "$p_n" ]]; then
      echo "side_by_side.sh: $m: Eddy ran $e_n particles, the peer $p_n: not the same scene" >&2
      exit 1
    fi
    e_sum=$(awk -v a="$e_sum" -v b="$em" 'BEGIN { print a + b }')
    p_sum=$(awk -v a="$p_sum" -v b="$pm" 'BEGIN { print a + b }')
    r=$(awk -v a="$pm" -v b="$em" 'BEGIN { printf "%.2f", a / b }')
    lo=$(awk -v a="${lo:-$r}" -v b="$r" 'BEGIN { print (b < a ? b : a) }')
    hi=$(awk -v a="${hi:-$r}" -v b="$r" 'BEGIN { print (b > a ? b : a) }')
  done
  table+=("$(awk -v m="$m" -v e="$e_sum" -v p="$p_sum" -v n="$rounds" -v lo="$lo" -v hi="$hi" -v ei="$e_it" -v pi="$p_it" \
    'BEGIN { printf "  %-6s %10.1f %14.1f %8.2fx   (rounds %.2fx-%.2fx)   iterations %s / %s", m, e / n, p / n, p / e, lo, hi, ei, pi }')")
done
echo
printf "  %-6s %10s %14s %9s\n" method "Eddy ms" "SPlisHSPlasH" ratio
printf "%s\n" "${table[@]}"
