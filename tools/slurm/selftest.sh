#!/bin/bash
# Runs a sweep on a one-node Slurm cluster on this machine and checks that
# the array's merged result is byte-identical to a local sweep of the same
# file. Needs root and Debian's slurm-wlm and munge (install-debian.sh).
#
#   tools/slurm/selftest.sh [SWEEP.yaml [SHARDS]]
#
# Defaults: selftest-sweep.yaml (8 points) in 4 shards. It starts its own
# munged, slurmctld and slurmd (in the foreground, from a configuration in a
# fresh temporary folder, on ports of their own) and stops them, and every
# process that carries that folder in its environment, on any exit. The
# folder is removed on success and kept, with the daemons' logs, on failure.
# SLURM_SELFTEST_PORT (default 16817) is slurmctld's port, slurmd's the next.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
sweep=$(realpath "${1:-$here/selftest-sweep.yaml}")
shards=${2:-4}
ctld_port=${SLURM_SELFTEST_PORT:-16817}
slurmd_port=$((ctld_port + 1))
timeout_s=${SLURM_SELFTEST_TIMEOUT_S:-600}

say() { echo "selftest: $*"; }
die() {
	echo "selftest: FAIL: $*" >&2
	exit 1
}

[[ $(id -u) -eq 0 ]] || die "run as root: slurmd runs jobs as their user and needs root to"
for cmd in munged slurmctld slurmd sbatch scontrol sinfo go; do
	command -v "$cmd" >/dev/null || die "$cmd is not installed (tools/slurm/install-debian.sh installs Slurm and MUNGE)"
done
for port in "$ctld_port" "$slurmd_port"; do
	if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "port $port is in use: set SLURM_SELFTEST_PORT to a free pair"
	fi
done

work=$(mktemp -d /tmp/kvcosim-slurm.XXXXXX)
chmod 755 "$work"
pids=()
ok=0

# stop ends this test's jobs and daemons, newest first, then any process
# left whose environment names $work (a job's slurmstepd or simrun).
stop() {
	if [[ -f $work/slurm.conf ]] && ((${#pids[@]} > 1)); then
		SLURM_CONF=$work/slurm.conf scancel --quiet --full --user=root 2>/dev/null || true
	fi
	local i
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -TERM "${pids[i]}" 2>/dev/null || true
		wait "${pids[i]}" 2>/dev/null || true
	done
	local env pid
	for env in /proc/[0-9]*/environ; do
		pid=${env#/proc/}
		pid=${pid%/environ}
		[[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
		if grep -qsF "$work" "$env" 2>/dev/null; then
			say "stopping leftover process $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	if ((ok)); then
		rm -rf "$work"
	else
		say "kept $work (logs in $work/log)"
		tail -n 20 "$work"/log/* "$work"/results/logs/*.out 2>/dev/null || true
	fi
}
trap stop EXIT
trap 'exit 130' INT TERM

mkdir -p "$work"/{bin,munge,ctld,spool,log,results}
export SLURM_CONF=$work/slurm.conf SIMRUN=$work/bin/simrun

say "building simrun into $work/bin"
(cd "$repo" && go build -o "$SIMRUN" ./cmd/simrun)

say "starting munged"
chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --foreground --force --socket="$work/munge/munge.socket" --key-file="$work/munge/munge.key" \
	--pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" \
	--log-file="$work/log/munged.log" >"$work/log/munged.out" 2>&1 &
pids+=($!)

node=$(hostname -s)
mem_mib=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
cat >"$SLURM_CONF" <<EOF
# A one-node cluster for tools/slurm/selftest.sh: no cgroups (a container
# has none to give), no accounting, everything under $work.
ClusterName=kvcosim-selftest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/ctld
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/ctld/slurmctld.pid
SlurmdPidFile=$work/spool/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MailProg=/bin/true
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 RealMemory=$mem_mib State=UNKNOWN
PartitionName=selftest Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

say "starting slurmctld and slurmd on $node (ports $ctld_port, $slurmd_port)"
slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)

deadline=$((SECONDS + 60))
until [[ $(sinfo --noheader --nodes="$node" --format=%T 2>/dev/null) == idle ]]; do
	((SECONDS < deadline)) || die "node $node not idle after 60 s: $(sinfo --noheader --nodes="$node" --format='%T %E' 2>&1)"
	for pid in "${pids[@]}"; do
		kill -0 "$pid" 2>/dev/null || die "a daemon (pid $pid) exited"
	done
	sleep 1
done
say "node $node is idle: $(sinfo --noheader --format='%P %D nodes, %c CPUs, %m MB')"

say "submitting $sweep as an array of $shards tasks and a dependent merge"
read -r array merge < <("$here/submit.sh" "$sweep" "$work/results" "$shards" --cpus-per-task=1)

say "running the same sweep locally while the array runs"
"$SIMRUN" sweep -c "$sweep" -o "$work/local" -j 1 >"$work/log/local.out"
"$SIMRUN" report -i "$work/local" >>"$work/log/local.out"

deadline=$((SECONDS + timeout_s))
while :; do
	state=$(scontrol show job "$merge" --oneliner | grep -o 'JobState=[A-Z_]*' || true)
	case $state in
	JobState=COMPLETED) break ;;
	JobState=PENDING | JobState=RUNNING | JobState=CONFIGURING | JobState=COMPLETING) ;;
	*) die "merge job $merge: ${state:-no state} ($(scontrol show job "$merge" --oneliner | grep -o 'Reason=[^ ]*' || true))" ;;
	esac
	((SECONDS < deadline)) || die "merge job $merge not done after $timeout_s s"
	sleep 2
done
say "merge job $merge completed after array job $array:"
scontrol show job "$array" --oneliner |
	sed -E 's/.* ArrayTaskId=([0-9]+) .* JobState=([A-Z]+) .* ExitCode=([0-9:]+) .*/selftest:   task \1: \2, exit code \3/' | sort
for log in "$work"/results/logs/*.out; do
	say "  $(basename "$log"): $(tail -n 1 "$log")"
done

say "comparing $work/results against the local sweep $work/local"
diff -r --exclude=points "$work/local" "$work/results/all" || die "the merged folder differs from the local sweep's"
say "  sweep.csv, sweep.json, report.html and $(find "$work/local" -maxdepth 1 -name '*.svg' | wc -l) plots byte-identical"
compared=0 walltime=0
for dir in "$work"/local/points/*/; do
	dir=${dir%/} name=$(basename "$dir")
	copies=("$work"/results/shard-*/points/"$name")
	[[ ${#copies[@]} -eq 1 && -d ${copies[0]} ]] || die "point $name is in ${#copies[@]} shards' folders, not one"
	diff -r --exclude=summary.json "$dir" "${copies[0]}" || die "point $name differs from the local sweep's"
	if ! cmp -s "$dir/summary.json" "${copies[0]}/summary.json"; then
		# The one field a run's host decides, not its scenario: tolerated
		# while summary.json still records it.
		diff <(grep -v '^  "wall_time_s": ' "$dir/summary.json") <(grep -v '^  "wall_time_s": ' "${copies[0]}/summary.json") ||
			die "point $name: summary.json differs from the local sweep's in more than wall_time_s"
		walltime=$((walltime + 1))
	fi
	compared=$((compared + 1))
done
total=$(find "$work"/results/shard-*/points -mindepth 1 -maxdepth 1 -type d | wc -l)
((total == compared)) || die "the shards hold $total point folders; the local sweep $compared"
if ((walltime == 0)); then
	say "  all $compared point folders byte-identical (requests.csv, scenario.yaml, summary.json)"
	say "PASS: $shards array tasks and the merge match the local sweep byte for byte"
else
	say "  all $compared point folders byte-identical (requests.csv, scenario.yaml, summary.json) but for"
	say "  wall_time_s in $walltime summary.json files: the host's wall-clock time of the run, not a simulated figure"
	say "PASS: $shards array tasks and the merge match the local sweep byte for byte, wall_time_s aside"
fi
ok=1
