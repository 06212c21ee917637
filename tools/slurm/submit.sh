#!/bin/bash
# Submits a sweep to Slurm: an array of SHARDS tasks (sweep-array.sh,
# shard I of SHARDS each) and a merge (merge.sh) that starts only once
# every task has succeeded. Options after SHARDS go to both sbatch calls
# (--partition, --time, --cpus-per-task, --account, ...). Logs go to
# RESULTS/logs. Prints the array's and the merge's job ids on stdout.
#
#   tools/slurm/submit.sh SWEEP.yaml RESULTS SHARDS [SBATCH OPTION...]
#
# RESULTS must be on a file system that every node sees. SIMRUN (default:
# simrun on PATH) names the simrun binary, which the jobs inherit.
set -euo pipefail

if [[ $# -lt 3 || ! $3 =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: submit.sh SWEEP.yaml RESULTS SHARDS [SBATCH OPTION...] (SHARDS >= 1)" >&2
	exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sweep=$(realpath "$1") results=$(realpath -m "$2") shards=$3
shift 3
mkdir -p "$results/logs"

array=$(sbatch --parsable --array="0-$((shards - 1))" --output="$results/logs/shard-%a.out" \
	"$@" "$here/sweep-array.sh" "$sweep" "$results")
array=${array%%;*} # --parsable prints "id;cluster" on a federation
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
	--output="$results/logs/merge.out" "$@" "$here/merge.sh" "$results")
merge=${merge%%;*}
echo "submit.sh: array job $array ($shards shards), merge job $merge; results in $results/all" >&2
echo "$array $merge"
