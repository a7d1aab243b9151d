#!/usr/bin/env bash
# eddy farm on a real Slurm: a private single-node cluster (slurm_cluster.sh)
# cooks a short lemon shot submitted by `eddy farm submit`: a 2-value wedge,
# each variant a simulation chain of 2 jobs (frames 1-3, 4-6) and 3
# surfacing array tasks (1-2, 3-4, 5-6; the middle one waits on both).
# Mid-way, one chain job is cancelled: the downstream tasks reading its
# frames are cancelled with it, `eddy farm status` counts the frames it left, `eddy farm resubmit`
# submits them again, and the new job resumes from the last frame on disk
# (cooking none of the frames before). Another chain job's eddy is killed
# (a crash): the job puts itself back in the queue and resumes on its own.
# Every file written equals a local `eddy run` of the same variant, byte
# for byte.
#   slurm_test.sh BUILD_DIR
# Exit 77 (skipped) where slurm-wlm and munge are not installed.
set -euo pipefail

build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
eddy=$build/bin/eddy
graph=$here/../../examples/water_hits_lemon.eddy.json
dir=$(mktemp -d /tmp/eddy_slurm.XXXXXX)
fail() { echo "slurm_test: FAILED: $*" >&2; exit 1; }
cleanup() {
  bash "$here/slurm_cluster.sh" stop "$dir/cluster" 2>/dev/null || true
  [[ -n ${EDDY_KEEP_SLURM_TEST:-} ]] && echo "slurm_test: kept $dir" >&2 || rm -rf "$dir"
}
trap cleanup EXIT
mkdir "$dir/cluster"
set +e
env_lines=$(bash "$here/slurm_cluster.sh" start "$dir/cluster")
rc=$?
set -e
if [[ $rc == 77 ]]; then
  echo "slurm_test: skipped: slurm-wlm and munge are not installed (make test's setup installs them)"
  exit 77
fi
[[ $rc == 0 ]] || fail "the test cluster did not start"
eval "$env_lines"

# A short, light shot: fewer, larger particles, more substeps (the
# simulation's frames take long enough to kill a job between two of them).
sets=(--set water.particle_radius=0.004 --set solver.substeps=96 --set solver.max_substeps=96 --set liquid.Dx=0.006)
out=$dir/out
jobs=$out/farm/lemon
"$eddy" farm submit "$graph" --frames 1-6 --chunk 3 --post-chunk 2 --wedge solver.xsph=0.0,0.05 --threads 1 --name lemon \
  --out "$out" "${sets[@]}" > "$dir/submit.log" 2>&1 || fail "submit: $(cat "$dir/submit.log")"
grep -q "job array" "$dir/submit.log" || fail "no array submitted: $(cat "$dir/submit.log")"

# Waits until none of the submission's jobs is in the queue (at most $1 s).
drain() {
  local t=0
  while squeue -r --noheader --format=%i --name="$(squeue_names)" | grep -q .; do
    sleep 1
    t=$((t + 1))
    ((t < $1)) || fail "jobs still queued after $1 s: $(squeue -r --noheader --format='%i %j %T %r')"
  done
}
squeue_names() { echo "eddy.lemon.post,eddy.lemon.sim.v0.c0,eddy.lemon.sim.v0.c1,eddy.lemon.sim.v1.c0,eddy.lemon.sim.v1.c1"; }

# Once each variant's second chain job has simulated frame 4: variant 0's
# job is cancelled (as a user or the farm would; resubmitted by hand below),
# variant 1's eddy is killed inside its job (a crash: the job puts itself
# back in the queue and resumes on its own).
v0=$out/solver.xsph=0.0 v1=$out/solver.xsph=0.05
cancelled="" crashed=""
for ((t = 0; t < 1200; t++)); do
  [[ -n $cancelled && -n $crashed ]] && break
  if [[ -z $cancelled && -f $v0/checkpoints/solver/solver.0004.eddystate ]]; then
    cancelled=$(squeue --noheader --format=%i --name=eddy.lemon.sim.v0.c1)
    [[ -n $cancelled ]] || fail "variant 0's chain job ended before it could be cancelled (make its frames longer)"
    scancel --signal=KILL "$cancelled" || fail "scancel $cancelled: $(scontrol show job "$cancelled")"
  fi
  if [[ -z $crashed && -f $v1/checkpoints/solver/solver.0004.eddystate ]]; then
    crashed=$(pgrep -f -- "--part sim --frames 4-6 --out $v1 " || true)
    [[ -n $crashed ]] || fail "variant 1's chain job ended before its eddy could be killed (make its frames longer)"
    kill -KILL $crashed
  fi
  sleep 0.1
done
[[ -n $cancelled && -n $crashed ]] || fail "frame 4 never simulated: $(squeue -r)"
drain 300
[[ ! -f $v0/checkpoints/solver/solver.0006.eddystate ]] || fail "the cancelled job had simulated frame 6 (make its frames longer)"
scontrol show job "$cancelled" | grep -q "JobState=CANCELLED" || fail "job $cancelled: $(scontrol show job "$cancelled")"
# The crashed one came back by itself, resumed, and finished.
log1=$(ls "$jobs"/logs/eddy.lemon.sim.v1.c1.*.log)
grep -q "eddy farm: eddy exited with status 137: requeued to resume" "$log1" || fail "no requeue after the crash: $(cat "$log1")"
grep -q "solver: taken from its checkpoint" "$log1" || fail "the requeued job did not resume: $(cat "$log1")"
[[ -f $v1/checkpoints/solver/solver.0006.eddystate ]] || fail "the requeued job did not finish"

"$eddy" farm status --jobs-dir "$jobs" > "$dir/status.log" 2>&1 || fail "status: $(cat "$dir/status.log")"
grep -q "frames: 8 done, 0 pending, 4 failed" "$dir/status.log" || fail "status after the kill: $(cat "$dir/status.log")"

# The last frame the killed job finished (4, or 5 when the kill came late).
last=4
[[ -f $v0/checkpoints/solver/solver.0005.eddystate ]] && last=5

# The resubmission: variant 0's second chain job and its downstream task only.
"$eddy" farm resubmit --jobs-dir "$jobs" > "$dir/resubmit.log" 2>&1 || fail "resubmit: $(cat "$dir/resubmit.log")"
grep -q "eddy.lemon.sim.v0.c1 (frames 4-6)" "$dir/resubmit.log" || fail "resubmit: $(cat "$dir/resubmit.log")"
grep -q "tasks 1,2)" "$dir/resubmit.log" || fail "resubmit: $(cat "$dir/resubmit.log")"
if grep -q "sim.v1\|sim.v0.c0" "$dir/resubmit.log"; then fail "resubmitted what was done: $(cat "$dir/resubmit.log")"; fi
drain 300
"$eddy" farm status --jobs-dir "$jobs" > "$dir/status.log" 2>&1
grep -q "frames: 12 done, 0 pending, 0 failed" "$dir/status.log" || fail "status at the end: $(cat "$dir/status.log")"
# It resumed: the frames the killed job finished were skipped, the next one
# started from the last one's checkpoint.
log=$(ls -t "$jobs"/logs/eddy.lemon.sim.v0.c1.*.log | head -1)
grep -q "frame $last done before" "$log" || fail "the resubmitted job did not skip frame $last: $(cat "$log")"
grep -q "frame $last solver: taken from its checkpoint" "$log" || fail "no resume from frame $last: $(cat "$log")"
if grep -q "frame [123] solver: [0-9]* particles" "$log"; then fail "the resubmitted job simulated frames 1-3 again"; fi

# Every file the farm wrote is the local run's.
for value in 0.0 0.05; do
  local_out=$dir/local_$value
  "$eddy" run "$graph" --frames 1-6 --threads 1 --quiet --out "$local_out" "${sets[@]}" --set solver.xsph=$value \
    > "$dir/local.log" 2>&1 || fail "local run: $(cat "$dir/local.log")"
  (cd "$local_out" && find . -type f | sort) > "$dir/want"
  (cd "$out/solver.xsph=$value" && find . -type f ! -path './.eddy/*' ! -path './checkpoints/*' | sort) > "$dir/got"
  diff "$dir/want" "$dir/got" > /dev/null || fail "variant $value wrote other files: $(diff "$dir/want" "$dir/got")"
  [[ $(wc -l < "$dir/want") -ge 12 ]] || fail "variant $value: too few files"
  while read -r f; do
    cmp -s "$local_out/$f" "$out/solver.xsph=$value/$f" || fail "variant $value: $f differs from the local run's"
  done < "$dir/want"
done
# A second submission (2 chain jobs, 2 array tasks), cancelled at once:
# every job of it leaves the queue.
"$eddy" farm submit "$graph" --frames 1-6 --chunk 3 --threads 1 --name lemon2 --out "$dir/out2" "${sets[@]}" \
  > "$dir/submit2.log" 2>&1 || fail "second submit: $(cat "$dir/submit2.log")"
"$eddy" farm cancel --jobs-dir "$dir/out2/farm/lemon2" > "$dir/cancel.log" 2>&1 || fail "cancel: $(cat "$dir/cancel.log")"
grep -q "cancelled 4 job(s) of submission lemon2" "$dir/cancel.log" || fail "cancel: $(cat "$dir/cancel.log")"
sleep 1
if squeue -r --noheader --format='%i %j %T' | grep -q "lemon2"; then fail "still queued: $(squeue -r)"; fi

echo "slurm_test: passed (2 variants x 6 frames through Slurm, one job cancelled and resubmitted, one crashed and requeued itself, a submission cancelled)"
