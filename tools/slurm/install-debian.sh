#!/bin/bash
# Installs what selftest.sh needs on a Debian or Ubuntu machine, as root:
# Slurm (slurmctld, slurmd and the client commands) and MUNGE, its
# authentication daemon. Debian starts neither daemon in a container
# without systemd; selftest.sh starts its own and stops them.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
	echo "install-debian.sh: run as root (apt-get installs packages)" >&2
	exit 2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends slurm-wlm munge
