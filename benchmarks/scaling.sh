#!/usr/bin/env bash
# Scaling on a bigger machine: the shard function over 1, 2, 4, 8 and 16 processes.
#   bash benchmarks/scaling.sh                 # all counts up to the machine's cores
#   PROCS=1,2 bash benchmarks/scaling.sh       # a quick check on a 2-core machine
#   bash benchmarks/scaling.sh --json out.json # extra args go to benchmarks/scaling.py
# Needs only Python 3.11+ with numpy and pyarrow (no Ray, no install: the repo goes on PYTHONPATH),
# so it runs as is on the 16-core device machine. Not part of the tests or CI.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PROCS=${PROCS:-1,2,4,8,16}
# One thread per process, so that P processes use P cores.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" benchmarks/scaling.py --procs "$PROCS" "$@"
