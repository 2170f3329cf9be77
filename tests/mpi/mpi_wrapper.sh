#!/bin/sh
# mpi_wrapper.sh MODE PROGRAM [ARGS...] - the wrapper scripts users put in
# front of an MPI program (modules, environment, a log line), started by
# plain `p2run -n N -- mpi_wrapper.sh ...`: exec hands the process over;
# child runs other programs first and the MPI program as a child of the
# shell; twice starts the MPI program twice in one rank (refused).
mode=$1
shift
case $mode in
exec)
    OMP_NUM_THREADS=1 exec "$@" ;;
child)
    date >/dev/null
    echo "wrapper: rank $P2_RANK starts $1" >&2
    "$@"
    st=$?
    echo "wrapper: rank $P2_RANK done" >&2
    exit $st ;;
twice)
    "$@" || exit
    "$@" ;;
esac
