# Sourced by the multi-GPU test scripts: exits 77 (ctest's "skipped") with fewer than two GPUs;
# otherwise sets `gpus` (how many nvidia-smi lists), keeps NVLink SHARP off unless the caller
# chose (NCCL_NVLS_ENABLE) and makes a scratch folder `tmp`, removed on exit.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 2 ]; then
  echo "fewer than two GPUs visible: skipped"
  exit 77
fi
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
