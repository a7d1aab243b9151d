#!/usr/bin/env bash
# SPlisHSPlasH 2.16 as a benchmark peer: builds the open-source simulator
# outside this repository and runs Eddy's reference dam break in it (the scene
# of bench/bench_pbf.cpp, bench/bench_sph.cpp and bench/bench_scene.h).
#
# Usage:
#   bench/peers/splishsplash.sh build [--git-base BASE] [--force]
#   bench/peers/splishsplash.sh run pbf|dfsph|wcsph [--steps N] [--warmup N] [--threads T]
#   bench/peers/splishsplash.sh status
#
# build: clones SPlisHSPlasH (tag 2.16.0, or the commit whose version.txt says
#   2.16.0) and the four libraries it pins (CompactNSearch, Discregrid,
#   GenericParameters, PositionBasedDynamics) from BASE into
#   ${EDDY_PEERS_DIR:-$HOME/.cache/eddy/peers}/splishsplash/, configures a
#   Release build with the Python bindings off and GLFW on its headless
#   (OSMesa) back end, builds the SPHSimulator target only and writes a stamp
#   with the commits used. BASE is a URL prefix (default
#   https://github.com/InteractiveComputerGraphics, each library at
#   BASE/<Name>.git) or a folder of mirrors, BASE/InteractiveComputerGraphics+<Name>/repo
#   (or BASE/<Name>.git, BASE/<Name>). A second build is a no-op; --force
#   starts again from scratch.
# run: writes the scene into a temporary folder (removed on exit), runs
#   SPHSimulator --no-gui on it and prints one line on stdout:
#     peer=splishsplash method=pbf particles=59319 ms_per_step=... search_ms=... iterations=... steps=N
#   Progress and warnings go to stderr.
# status: prints the stamp and exits 0 if built, exits 1 otherwise.
#
# Nothing of SPlisHSPlasH enters this repository: its sources, its build and
# the scene files live outside it. Builds are under `nice -n 10`, at most
# -j2 (EDDY_PEER_JOBS=1 for fewer); runs at normal priority, as Eddy's
# benchmarks run, so that side-by-side figures are fair.
set -euo pipefail

PEER_ROOT="${EDDY_PEERS_DIR:-$HOME/.cache/eddy/peers}/splishsplash"
SRC="$PEER_ROOT/src"
DEPS="$PEER_ROOT/deps"
BUILD="$PEER_ROOT/build"
STAMP="$PEER_ROOT/stamp"
BIN="$SRC/bin/SPHSimulator"  # SPlisHSPlasH puts executables in <source>/bin
READY="$PEER_ROOT/.sources-ready"
BUILD_LOG="$PEER_ROOT/build.log"

SPH_TAG="2.16.0"
# The upstream commit whose version.txt and Changelog say 2.16.0, used when the
# source has no 2.16.0 tag.
SPH_COMMIT="c5a063ddd33d0172ce951f412fec769929ff57ee"
DEP_NAMES=(CompactNSearch Discregrid GenericParameters PositionBasedDynamics)
DEFAULT_BASE="https://github.com/InteractiveComputerGraphics"
JOBS="${EDDY_PEER_JOBS:-2}"
((JOBS >= 1 && JOBS <= 2)) || JOBS=2
NICE=(nice -n 10)

say() { echo "splishsplash.sh: $*" >&2; }
warn() { echo "splishsplash.sh: WARNING: $*" >&2; }
die() {
  echo "splishsplash.sh: error: $*" >&2
  exit 1
}
usage() {
  sed -n '/^# Usage:/,/^# status:/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# Where to clone library NAME from, given BASE.
repo_source() {
  local base=${1%/} name=$2
  if [[ -d "$base/InteractiveComputerGraphics+$name/repo" ]]; then
    echo "$base/InteractiveComputerGraphics+$name/repo"
  elif [[ -d "$base/$name.git" ]]; then
    echo "$base/$name.git"
  elif [[ -d "$base/$name" ]]; then
    echo "$base/$name"
  else
    echo "$base/$name.git"
  fi
}

# Checks COMMIT out in DIR (cloned with --no-checkout). A mirror may lack the
# contents of some files (large data files); those are left out of the
# checkout with sparse-checkout, and a warning names them.
checkout_tolerant() {
  local dir=$1 commit=$2 label=$3 tree missing paths
  tree=$(git -C "$dir" ls-tree -r "$commit")
  missing=$(awk -F'\t' '{ split($1, a, " "); if (a[2] == "blob") print a[3] }' <<<"$tree" |
    git -C "$dir" cat-file --batch-check 2>/dev/null | awk '$2 == "missing" { print $1 }')
  if [[ -n "$missing" ]]; then
    paths=$(awk -F'\t' 'NR == FNR { m[$1] = 1; next } { split($1, a, " "); if (a[3] in m) print $2 }' \
      <(printf '%s\n' "$missing") <(printf '%s\n' "$tree"))
    warn "$label: the source lacks the contents of $(wc -l <<<"$paths") file(s), left out of the checkout: $(tr '\n' ' ' <<<"$paths")"
    git -C "$dir" config core.sparseCheckout true
    { echo '/*'; sed 's|^|!/|' <<<"$paths"; } >"$dir/.git/info/sparse-checkout"
  fi
  # (git still complains once per missing object while it builds the index; those lines are dropped)
  local err
  if ! err=$(git -C "$dir" -c advice.detachedHead=false checkout --quiet --detach "$commit" 2>&1); then
    printf '%s\n' "$err" >&2
    die "$label: cannot check out $commit"
  fi
  [[ -z "$err" ]] || grep -v '^error: invalid object ' <<<"$err" >&2 || true
}

# The commit a library is pinned to: the GIT_TAG after its GIT_REPOSITORY line
# in SPlisHSPlasH's CMake files.
pinned_commit() {
  awk -v url="InteractiveComputerGraphics/$1.git" '
    index($0, url) { f = 1; next }
    f && /GIT_TAG/ { sub(/.*GIT_TAG[ \t]*"?/, ""); sub(/"?[ \t]*$/, ""); print; exit }' \
    "$SRC/CMake/SetUpExternalProjects.cmake" "$SRC/CMake/NeighborhoodSearch.cmake"
}

fetch_sources() {
  local base=$1 url commit pinned note name
  rm -rf "$SRC" "$DEPS" "$BUILD" "$STAMP" "$READY"
  mkdir -p "$PEER_ROOT" "$DEPS"
  : >"$PEER_ROOT/commits.tmp"

  url=$(repo_source "$base" SPlisHSPlasH)
  say "cloning SPlisHSPlasH from $url"
  git clone --quiet --no-checkout "$url" "$SRC" || die "cannot clone SPlisHSPlasH from $url"
  if commit=$(git -C "$SRC" rev-parse --verify --quiet "refs/tags/$SPH_TAG^{commit}"); then
    note="tag $SPH_TAG"
  elif commit=$(git -C "$SRC" rev-parse --verify --quiet "$SPH_COMMIT^{commit}"); then
    note="the 2.16.0 commit; no tag $SPH_TAG in the source"
    warn "SPlisHSPlasH: no tag $SPH_TAG in $url; using commit $commit, whose version.txt says $SPH_TAG"
  else
    commit=$(git -C "$SRC" rev-parse --verify "HEAD^{commit}")
    [[ "$(git -C "$SRC" show "$commit:version.txt" 2>/dev/null | tr -d '[:space:]')" == "$SPH_TAG" ]] ||
      die "the source has neither tag $SPH_TAG, nor commit $SPH_COMMIT, nor a HEAD whose version.txt is $SPH_TAG"
    note="default branch HEAD, version.txt $SPH_TAG; no tag $SPH_TAG in the source"
    warn "SPlisHSPlasH: no tag $SPH_TAG in $url; using its HEAD $commit, whose version.txt says $SPH_TAG"
  fi
  checkout_tolerant "$SRC" "$commit" SPlisHSPlasH
  echo "splishsplash_commit=$commit ($note)" >>"$PEER_ROOT/commits.tmp"

  for name in "${DEP_NAMES[@]}"; do
    pinned=$(pinned_commit "$name")
    [[ -n "$pinned" ]] || die "cannot find the commit SPlisHSPlasH pins for $name"
    url=$(repo_source "$base" "$name")
    say "cloning $name from $url (pinned $pinned)"
    git clone --quiet --no-checkout "$url" "$DEPS/$name" || die "cannot clone $name from $url"
    if commit=$(git -C "$DEPS/$name" rev-parse --verify --quiet "$pinned^{commit}"); then
      note="pinned"
    else
      commit=$(git -C "$DEPS/$name" rev-parse --verify "HEAD^{commit}")
      note="STAND-IN: pinned $pinned is not in the source, default branch HEAD used"
      warn "$name: the commit SPlisHSPlasH pins ($pinned) is not in $url; using its default branch HEAD $commit as a stand-in"
    fi
    checkout_tolerant "$DEPS/$name" "$commit" "$name"
    echo "$(tr '[:upper:]' '[:lower:]' <<<"$name")_commit=$commit ($note)" >>"$PEER_ROOT/commits.tmp"
  done

  # The ExternalProjects would clone from GitHub at configure/build time. Point
  # each at the checkout made above instead (SOURCE_DIR, no download step):
  # that is what makes the fall-back commits and mirrors with missing files work.
  for name in "${DEP_NAMES[@]}"; do
    sed -i -E "/GIT_REPOSITORY +https:\/\/github\.com\/InteractiveComputerGraphics\/$name\.git/{s#GIT_REPOSITORY .*#SOURCE_DIR \"$DEPS/$name\"#;n;/GIT_TAG/d}" \
      "$SRC/CMake/SetUpExternalProjects.cmake" "$SRC/CMake/NeighborhoodSearch.cmake"
  done
  if grep -nE "github\.com/InteractiveComputerGraphics/($(
    IFS='|'
    echo "${DEP_NAMES[*]}"
  ))\.git" "$SRC/CMake/SetUpExternalProjects.cmake" "$SRC/CMake/NeighborhoodSearch.cmake" >&2; then
    die "patching the ExternalProject sources failed (lines above still name GitHub)"
  fi
  echo "git_base=$base" >>"$PEER_ROOT/commits.tmp"
  mv "$PEER_ROOT/commits.tmp" "$READY"
}

# Where a stand-in library (see fetch_sources) lacks an API that SPlisHSPlasH
# 2.16 calls, add the smallest equivalent to the checkout under deps/ (never
# to SPlisHSPlasH itself). Idempotent; run on every build.
apply_compat_shims() {
  local h="$DEPS/CompactNSearch/include/CompactNSearch.h"
  # CompactNSearch before the pinned commit has no NeighborhoodSearch::reset(),
  # which SimulatorBase::reset() calls (only on a GUI reset or a state reload,
  # never in a --no-gui run). The shim drops the grid so the next
  # find_neighbors() builds it again from scratch.
  if [[ -f "$h" ]] && ! grep -q 'void reset()' "$h"; then
    grep -q 'void z_sort();' "$h" || die "cannot add reset() to $h"
    sed -i 's|^\([[:space:]]*\)void z_sort();|&\n\1void reset() { m_map.clear(); m_entries.clear(); m_initialized = false; } // added by Eddy'"'"'s peer script: the stand-in lacks it|' "$h"
    warn "CompactNSearch stand-in: added NeighborhoodSearch::reset() (not called in --no-gui runs)"
    echo "compactnsearch_shim=reset() added (the stand-in lacks it)" >>"$READY"
    # an earlier build installed the header without it: build that project again
    rm -rf "$BUILD/extern/CompactNSearch/src/Ext_NeighborhoodSearch-stamp"
  fi
}

cmd_build() {
  local base=$DEFAULT_BASE force=0 t0 t1
  while (($#)); do
    case $1 in
    --git-base) [[ $# -ge 2 ]] || usage; base=$2; shift 2 ;;
    --force) force=1; shift ;;
    *) usage ;;
    esac
  done
  if ((force == 0)) && [[ -f "$STAMP" && -x "$BIN" ]]; then
    say "already built (--force to rebuild):"
    cat "$STAMP" >&2
    return 0
  fi
  command -v git >/dev/null || die "git is needed"
  command -v cmake >/dev/null || die "cmake is needed"
  mkdir -p "$PEER_ROOT"
  t0=$(date +%s)
  # Sources are fetched once; an interrupted build resumes from them.
  if ((force == 1)) || [[ ! -f "$READY" ]]; then
    fetch_sources "$base"
  else
    say "reusing the sources in $PEER_ROOT (fetched from $(sed -n 's/^git_base=//p' "$READY"))"
  fi
  apply_compat_shims

  say "configuring (Release, no Python, headless GLFW) in $BUILD; log: $BUILD_LOG"
  # GLFW_USE_OSMESA: GLFW's headless back end, so no X11/Wayland development
  # packages are needed; the GUI code is compiled but never started (--no-gui).
  # NFD_PORTAL=ON without dbus makes the file-dialog library drop out.
  if ! "${NICE[@]}" cmake -S "$SRC" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DUSE_PYTHON_BINDINGS=OFF -DUSE_EMBEDDED_PYTHON=OFF \
    -DGLFW_USE_OSMESA=ON -DGLFW_BUILD_EXAMPLES=OFF -DGLFW_BUILD_TESTS=OFF -DGLFW_BUILD_DOCS=OFF \
    -DNFD_PORTAL=ON >"$BUILD_LOG" 2>&1; then
    tail -n 40 "$BUILD_LOG" >&2
    die "configure failed (full log: $BUILD_LOG)"
  fi
  say "building SPHSimulator with -j$JOBS (this takes a while)"
  if ! "${NICE[@]}" cmake --build "$BUILD" --target SPHSimulator -j "$JOBS" >>"$BUILD_LOG" 2>&1; then
    tail -n 40 "$BUILD_LOG" >&2
    die "build failed (full log: $BUILD_LOG)"
  fi
  [[ -x "$BIN" ]] || die "the build finished but $BIN is missing"
  t1=$(date +%s)
  {
    cat "$READY"
    echo "version=$("$BIN" --version 2>/dev/null | tail -n 1)"
    echo "binary=$BIN"
    echo "build_type=Release"
    echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "build_seconds=$((t1 - t0))"
  } >"$STAMP.tmp"
  mv "$STAMP.tmp" "$STAMP"
  say "built in $((t1 - t0)) s:"
  cat "$STAMP" >&2
}

cmd_status() {
  if [[ -f "$STAMP" && -x "$BIN" ]]; then
    cat "$STAMP"
    return 0
  fi
  echo "splishsplash: not built (run: $0 build)"
  return 1
}

# The scene: Eddy's dam break. A cube of 39^3 particles, r = 0.0125 m on a
# lattice of spacing 2r with centres at r + 2r*i from the box's corner (0,0,0)
# (SPlisHSPlasH's regular block sampling puts centres at start + 2r*(1+i) for
# i < round((end - start) / 2r) - 1, so start = -r, end = -r + 40 * 2r = 0.9875);
# the closed box [0,4] x [0,3] x [0,1.5] m as Akinci 2012 boundary particles
# (the UnitBox mesh scaled and moved, regular triangle sampling); gravity -9.81
# on y (Eddy's PbfParams::gravity); fixed time steps (cflMethod 0).
# Kernel 4 / gradKernel 4: SPlisHSPlasH's default, its cubic spline read from
# a precomputed table, the fastest it offers (EDDY_PEER_SPH_KERNEL=0 for the
# exact spline).
# No viscosity, vorticity, surface tension, drag or elasticity (method 0) and
# XSPH 0; z-sort at the peer's default (on, every 500 steps); no export.
write_scene() {
  local method=$1 file=$2 box_obj=$3 kernel=${EDDY_PEER_SPH_KERNEL:-4} sim dt solver
  case $method in
  pbf)
    sim=2 dt=0.001
    solver='"PBF": { "minIterations": 2, "maxIterations": 100, "maxError": 1.0, "velocityUpdateMethod": 0 }'
    ;;
  dfsph)
    sim=4 dt=0.001
    solver='"DFSPH": { "minIterations": 2, "maxIterations": 100, "maxError": 0.05, "maxIterationsV": 100, "maxErrorV": 0.1, "enableDivergenceSolver": true }'
    ;;
  wcsph)
    sim=0 dt=0.0005
    solver='"WCSPH": { "stiffness": 50000, "exponent": 7 }'
    ;;
  esac
  cat >"$file" <<EOF
{
  "Configuration": {
    "pause": false,
    "particleRadius": 0.0125,
    "simulationMethod": $sim,
    "gravitation": [0, -9.81, 0],
    "timeStepSize": $dt,
    "cflMethod": 0,
    "boundaryHandlingMethod": 0,
    "kernel": $kernel,
    "gradKernel": $kernel,
    "enableZSort": true,
    "enablePartioExport": false,
    "enableVTKExport": false,
    "enableRigidBodyExport": false,
    "enableRigidBodyVTKExport": false,
    "enableStateExport": false,
    $solver
  },
  "Materials": [
    {
      "id": "Fluid",
      "density0": 1000,
      "viscosityMethod": 0,
      "vorticityMethod": 0,
      "surfaceTensionMethod": 0,
      "dragMethod": 0,
      "elasticityMethod": 0,
      "XSPH": { "xsph": 0.0, "xsphBoundary": 0.0 }
    }
  ],
  "RigidBodies": [
    {
      "geometryFile": "$box_obj",
      "translation": [2.0, 1.5, 0.75],
      "scale": [4.0, 3.0, 1.5],
      "rotationAxis": [1, 0, 0],
      "rotationAngle": 0,
      "isDynamic": false,
      "isWall": true,
      "samplingMode": 1
    }
  ],
  "FluidBlocks": [
    {
      "id": "Fluid",
      "denseMode": 0,
      "start": [-0.0125, -0.0125, -0.0125],
      "end": [0.9875, 0.9875, 0.9875]
    }
  ]
}
EOF
}

# Runs the simulator on SCENE for N steps (stopAt = (N - 0.5) dt: SPlisHSPlasH
# steps while time <= stopAt), its console output into LOG.
sim_steps() {
  local scene=$1 n=$2 dt=$3 threads=$4 out=$5 log=$6 stop
  stop=$(awk -v n="$n" -v dt="$dt" 'BEGIN { printf "%.9g", (n - 0.5) * dt }')
  (cd "$out" && OMP_NUM_THREADS=$threads "$BIN" --no-gui --no-cache --output-dir "$out" \
    --stopAt "$stop" "$scene") >"$log" 2>&1 || {
    tail -n 30 "$log" >&2
    die "SPHSimulator failed ($n steps)"
  }
}

# From a run's log: the value of "<kind>: NAME: value" (kind "Time sum",
# "Average time", "Total number"); 0 when absent (a run of no steps).
stat_of() {
  awk -v key="$2: $3: " 'index($0, key) { s = substr($0, index($0, key) + length(key)); split(s, a, " "); v = a[1] }
    END { print (v == "" ? 0 : v) }' "$1"
}

cmd_run() {
  [[ $# -ge 1 ]] || usage
  local method=$1 steps warmup threads=2 dt iter_counter
  shift
  case $method in
  pbf) steps=300 warmup=200 dt=0.001 iter_counter="PBF - iterations" ;;
  dfsph) steps=100 warmup=50 dt=0.001 iter_counter="DFSPH - iterations" ;;
  wcsph) steps=100 warmup=100 dt=0.0005 iter_counter="" ;;
  *) die "unknown method '$method' (pbf, dfsph or wcsph)" ;;
  esac
  while (($#)); do
    case $1 in
    --steps) [[ $# -ge 2 ]] || usage; steps=$2; shift 2 ;;
    --warmup) [[ $# -ge 2 ]] || usage; warmup=$2; shift 2 ;;
    --threads) [[ $# -ge 2 ]] || usage; threads=$2; shift 2 ;;
    *) usage ;;
    esac
  done
  [[ "$steps" =~ ^[0-9]+$ && "$steps" -ge 1 ]] || die "--steps must be a positive integer"
  [[ "$warmup" =~ ^[0-9]+$ ]] || die "--warmup must be an integer >= 0"
  [[ "$threads" =~ ^[0-9]+$ && "$threads" -ge 1 ]] || die "--threads must be a positive integer"
  [[ -f "$STAMP" && -x "$BIN" ]] || die "not built: run '$0 build' first"
  [[ -f "$SRC/data/models/UnitBox.obj" ]] || die "missing $SRC/data/models/UnitBox.obj"

  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/eddy-splishsplash.XXXXXX")
  if [[ -n "${EDDY_PEER_KEEP:-}" ]]; then
    say "keeping the scene and the simulator's logs in $tmp (EDDY_PEER_KEEP)"
  else
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" EXIT
  fi
  write_scene "$method" "$tmp/dambreak_$method.json" "$SRC/data/models/UnitBox.obj"

  # What is timed: SPlisHSPlasH's own "SimStep" timer (START_TIMING /
  # STOP_TIMING_AVG around TimeStep::step() in SimulatorBase::timeStepNoGUI,
  # i.e. the whole solver step: neighbour search, density, pressure solve,
  # non-pressure forces, integration; not scene loading, boundary sampling or
  # the initial neighbour search). It prints per-timer sums at exit, with no
  # way to leave steps out, so the warm-up is removed by difference: run A
  # does the warm-up steps only, run B warm-up + timed steps, from the same
  # scene, and ms_per_step = (sum_B - sum_A) / steps. search_ms likewise from
  # its "neighborhood_search" timer (CompactNSearch find_neighbors; the z-sort
  # every 500 steps is outside it but inside SimStep), iterations from its
  # "PBF - iterations" / "DFSPH - iterations" (pressure solve) counter sums.
  local logA="$tmp/warmup.log" logB="$tmp/timed.log" total=$((warmup + steps))
  if ((warmup > 0)); then
    say "$method: warm-up run, $warmup steps"
    mkdir -p "$tmp/a"
    sim_steps "$tmp/dambreak_$method.json" "$warmup" "$dt" "$threads" "$tmp/a" "$logA"
  else
    : >"$logA"
  fi
  say "$method: timed run, $warmup + $steps steps"
  mkdir -p "$tmp/b"
  sim_steps "$tmp/dambreak_$method.json" "$total" "$dt" "$threads" "$tmp/b" "$logB"

  local particles nA nB
  particles=$(awk -F': ' '/Number of fluid particles:/ { n = $NF } END { print n + 0 }' "$logB")
  ((particles == 59319)) || warn "the peer reports $particles fluid particles, not 59319"
  # Steps actually taken: sum / average of the SimStep timer.
  nA=$(awk -v s="$(stat_of "$logA" "Time sum" SimStep)" -v a="$(stat_of "$logA" "Average time" SimStep)" \
    'BEGIN { print (a > 0 ? int(s / a + 0.5) : 0) }')
  nB=$(awk -v s="$(stat_of "$logB" "Time sum" SimStep)" -v a="$(stat_of "$logB" "Average time" SimStep)" \
    'BEGIN { print (a > 0 ? int(s / a + 0.5) : 0) }')
  ((nA == warmup && nB == total)) || warn "step counts: warm-up run $nA (wanted $warmup), timed run $nB (wanted $total)"

  awk -v method="$method" -v particles="$particles" -v steps="$((nB - nA))" \
    -v tA="$(stat_of "$logA" "Time sum" SimStep)" -v tB="$(stat_of "$logB" "Time sum" SimStep)" \
    -v sA="$(stat_of "$logA" "Time sum" neighborhood_search)" -v sB="$(stat_of "$logB" "Time sum" neighborhood_search)" \
    -v iA="${iter_counter:+$(stat_of "$logA" "Total number" "$iter_counter")}" \
    -v iB="${iter_counter:+$(stat_of "$logB" "Total number" "$iter_counter")}" \
    'BEGIN {
       if (steps <= 0) { print "splishsplash.sh: error: no timed steps" > "/dev/stderr"; exit 1 }
       it = (iB == "" ? "nan" : sprintf("%.2f", (iB - iA) / steps))
       printf "peer=splishsplash method=%s particles=%d ms_per_step=%.1f search_ms=%.1f iterations=%s steps=%d\n",
              method, particles, (tB - tA) / steps, (sB - sA) / steps, it, steps
     }'
}

case ${1:-} in
build) shift; cmd_build "$@" ;;
run) shift; cmd_run "$@" ;;
status) shift; cmd_status "$@" ;;
*) usage ;;
esac
