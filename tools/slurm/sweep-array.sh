#!/bin/bash
# One task of a Slurm job array: shard I of N of a sweep, where I is this
# task's place in the array (0 for its first task, whatever the first
# index) and N the array's task count. Submit it with submit.sh, or:
#
#   sbatch --array=0-15 tools/slurm/sweep-array.sh SWEEP.yaml RESULTS
#
# Shard I's points land in RESULTS/shard-I; merge.sh joins them. The
# array's indices must be consecutive (0-15 or 1-16, with or without a
# %limit on tasks at once, but no :step), so that every shard is run.
# SIMRUN names the simrun binary (default: simrun on PATH); the task runs
# as many points at once as it has CPUs (--cpus-per-task, default 1).
#SBATCH --job-name=kvcosim-sweep
set -euo pipefail

if [[ $# -ne 2 ]]; then
	echo "usage: sbatch --array=0-N sweep-array.sh SWEEP.yaml RESULTS" >&2
	exit 2
fi
sweep=$1 results=$2
if [[ -z ${SLURM_ARRAY_TASK_ID:-} ]]; then
	echo "sweep-array.sh: SLURM_ARRAY_TASK_ID is not set: submit with sbatch --array=0-N" >&2
	exit 2
fi
if [[ ${SLURM_ARRAY_TASK_STEP:-1} -ne 1 ]]; then
	echo "sweep-array.sh: --array has step ${SLURM_ARRAY_TASK_STEP}: shards need consecutive indices (e.g. 0-15)" >&2
	exit 2
fi
first=${SLURM_ARRAY_TASK_MIN:?} last=${SLURM_ARRAY_TASK_MAX:?} shards=${SLURM_ARRAY_TASK_COUNT:?}
shard=$((SLURM_ARRAY_TASK_ID - first))
if ((last - first + 1 != shards)); then
	echo "sweep-array.sh: --array=$first-$last holds $shards tasks, not one an index: give a range without gaps" >&2
	exit 2
fi

exec "${SIMRUN:-simrun}" sweep -c "$sweep" -o "$results/shard-$shard" \
	-j "${SLURM_CPUS_PER_TASK:-1}" --shard "$shard/$shards"
