#!/usr/bin/env bash
# Scaling on a bigger machine: the shard work over 1, 2, 4, 8 and 16 processes.
#   bash benchmarks/scaling.sh                  # every mode, all counts up to the machine's cores
#   PROCS=1,2 bash benchmarks/scaling.sh        # a quick check on a 2-core machine
#   MODES=pipeline bash benchmarks/scaling.sh   # one mode
#   OUT=dir bash benchmarks/scaling.sh          # also write each mode's figures to dir/*.json
# Modes (weak scaling, a process pool, no Ray: the 16-core machine has none):
#   pipeline   pipeline.task.run_shard as the Ray tasks run it (engine auto: the compiled kernel),
#              simulate + Arrow tables + zstd Parquet              (benchmarks/scaling.py)
#   reference  the same with the reference engine                  (benchmarks/scaling.py)
#   kernel     the compiled kernel alone, events captured, no I/O  (benchmarks/scaling_kernel.py)
# Needs only Python 3.11+ with numpy, numba and pyarrow (no install: the repo goes on PYTHONPATH),
# so it runs as is on the 16-core device machine. Not part of the tests or CI.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PROCS=${PROCS:-1,2,4,8,16}
MODES=${MODES:-pipeline,reference,kernel}
# One thread per process, so that P processes use P cores.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
json() { if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; echo "--json $OUT/scaling-$1.json"; fi; }
for mode in ${MODES//,/ }; do
  echo "== $mode"
  case $mode in
    pipeline)  "$PY" benchmarks/scaling.py --procs "$PROCS" --engine auto $(json "$mode") "$@" ;;
    reference) "$PY" benchmarks/scaling.py --procs "$PROCS" --engine reference $(json "$mode") "$@" ;;
    kernel)
      if [ -f benchmarks/scaling_kernel.py ]; then
        "$PY" benchmarks/scaling_kernel.py --procs "$PROCS" --mode kernel $(json "$mode") "$@"
      else
        echo "benchmarks/scaling_kernel.py not found: skipped"
      fi ;;
    *) echo "unknown mode $mode (pipeline, reference, kernel)" >&2; exit 2 ;;
  esac
done
