# Sourced by the multi-GPU test scripts: exits 77 (ctest's "skipped") with fewer than two GPUs;
# otherwise sets `gpus` (how many nvidia-smi lists), keeps NVLink SHARP off unless the caller
# chose (NCCL_NVLS_ENABLE), has every GPU take part in every multi-gpu case (the tests run the
# multi-GPU code at sizes for which scalebench would use one GPU: SCALEBENCH_PARTICIPANTS) and
# makes a scratch folder `tmp`, removed on exit.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 2 ]; then
  echo "fewer than two GPUs visible: skipped"
  exit 77
fi
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export SCALEBENCH_PARTICIPANTS=${SCALEBENCH_PARTICIPANTS:-all}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
