# Shared by the tests/mpi scripts: how to start K ranks here. OpenMPI refuses
# root without --allow-run-as-root; --oversubscribe lets 3 ranks share 2
# cores. Shared memory (vader) without single-copy works in containers.
MPIRUN=${1:-mpirun}
mpi() { # mpi K command...
	local k=$1; shift
	timeout 120 "$MPIRUN" --allow-run-as-root --oversubscribe -n "$k" \
		--mca btl self,vader --mca btl_vader_single_copy_mechanism none "$@"
}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
