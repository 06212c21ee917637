#!/bin/bash
# The job after a sweep's array (submit.sh submits it with
# --dependency=afterok on the array): joins RESULTS/shard-* into
# RESULTS/all and draws its report. SIMRUN names the simrun binary
# (default: simrun on PATH).
#SBATCH --job-name=kvcosim-merge
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: sbatch --dependency=afterok:ARRAY_JOB merge.sh RESULTS" >&2
	exit 2
fi
results=$1
simrun=${SIMRUN:-simrun}
"$simrun" merge -o "$results/all" "$results"/shard-*
"$simrun" report -i "$results/all"
