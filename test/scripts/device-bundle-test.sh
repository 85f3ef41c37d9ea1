#!/usr/bin/env bash
# The GPU-check bundle, tested without a GPU: it builds from this build, its
# binaries (gzipped) need only glibc, libstdc++ and libgcc, it stays under
# 64 MiB, its dry run passes the preflight and writes the summary and the
# archive; and
# device-check itself (on stand-in binaries) stops at once without a device
# and keeps every step within its time limit, the summary always written.
#
#   device-bundle-test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/rudnn-bundle-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- the bundle ---------------------------------------------------------------
"$source/scripts/device-bundle" --build "$build" --dest "$work/bundle" \
  > "$work/bundle.log" 2>&1 || { cat "$work/bundle.log"; fail "device-bundle"; }
grep -q "bundle/device-check" "$work/bundle.log" || fail "no command printed"
count=0
mkdir -p "$work/unpacked"
for packed in "$work"/bundle/bin/*.gz; do
  count=$((count + 1))
  exe="$work/unpacked/$(basename "$packed" .gz)"
  gzip -dc "$packed" > "$exe" && chmod +x "$exe"
  extra=$(ldd "$exe" | awk '{print $1}' | sed 's|.*/||' |
    grep -vE '^(linux-vdso|libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|librt|libdl)\.so' || true)
  [[ -z "$extra" ]] || fail "$(basename "$exe") needs $extra"
  libraries=$(ldd "$exe")
  ! grep -qiE "nvrtc|libcuda|boost|benchmark" <<<"$libraries" ||
    fail "$(basename "$exe") links a CUDA, Boost or benchmark library"
done
((count == 13)) || fail "bundle has $count binaries, expected 13"
(($(du -sb "$work/bundle" | cut -f1) < 64 << 20)) || fail "bundle over 64 MiB"

# --- its dry run ----------------------------------------------------------------
OUT="$work/dry" "$work/bundle/device-check" --dry-run > "$work/dry.log" 2>&1 ||
  { cat "$work/dry.log"; fail "dry run failed"; }
[[ -s "$work/dry/summary.txt" && -s "$work/dry/device-check.tar.gz" ]] ||
  fail "dry run wrote no summary or archive"
grep -q "^nvrtc: nvrtc 1[2-9]" "$work/dry.log" || fail "dry run found no NVRTC"
grep -q "kda-fla .*limit  150s" "$work/dry.log" || fail "no plan with limits"
grep -qE "^gpu-operators +dry run" "$work/dry/summary.txt" || fail "summary lacks steps"
# Listed first: grep -q would stop reading early, and pipefail would count
# tar's broken pipe as a failure.
listing=$(tar -tzf "$work/dry/device-check.tar.gz")
grep -q "preflight.log" <<<"$listing" || fail "archive lacks the preflight log"

# --- device-check on stand-ins: no device, then a hung step ----------------------
fake="$work/fake"
mkdir -p "$fake/bin" "$fake/path"
cat > "$fake/bin/rudnn-run" <<'SH'
#!/bin/sh
echo "rudnn: 0.0.0"; echo "nvrtc: nvrtc 13.0 (stand-in)"
[ -n "$FAKE_DEVICE" ] && echo "device 0: stand-in GPU"
exit 0
SH
cat > "$fake/bin/rudnn-gpu-tests" <<'SH'
#!/bin/sh
echo "[  PASSED  ] 3 tests."
SH
cat > "$fake/bin/rudnn-api-gpu-tests" <<'SH'
#!/bin/sh
sleep 600
SH
for exe in rudnn-api-operator-gpu-tests rudnn-runtime-tests rudnn-api-tests \
           rudnn-bench-compile rudnn-bench-kda rudnn-bench-attention \
           rudnn-bench-decode rudnn-bench-lstm rudnn-bench-gru rudnn-bench-norm; do
  printf '#!/bin/sh\necho "[  FAILED  ] Stand.In"\nexit 1\n' > "$fake/bin/$exe"
done
printf '#!/bin/sh\n[ -n "$FAKE_DEVICE" ] && echo "GPU 0: stand-in"\nexit 0\n' \
  > "$fake/path/nvidia-smi"
chmod +x "$fake"/bin/* "$fake"/path/*

# Where nvidia-smi lists no GPU the run stops in the preflight.
begin=$SECONDS
if PATH="$fake/path:$PATH" RUDNN_BIN="$fake/bin" OUT="$work/nogpu" \
   "$source/scripts/device-check" > "$work/nogpu.log" 2>&1; then
  fail "device-check passed without a device"
fi
((SECONDS - begin < 30)) || fail "no-device stop took $((SECONDS - begin)) s"
grep -q "NO GPU" "$work/nogpu.log" || fail "no-device message missing"
grep -qE "^gpu-runtime +not run" "$work/nogpu/summary.txt" ||
  fail "no-device summary missing"

# With a (stand-in) device, the hung suite is stopped at its limit and the
# steps after it still run; the summary names both outcomes.
begin=$SECONDS
if FAKE_DEVICE=1 PATH="$fake/path:$PATH" RUDNN_BIN="$fake/bin" \
   RUDNN_CHECK_STEP_SECONDS=3 OUT="$work/hung" \
   "$source/scripts/device-check" > "$work/hung.log" 2>&1; then
  fail "device-check passed with a hung suite"
fi
elapsed=$((SECONDS - begin))
((elapsed < 60)) || fail "a 3-second step limit let the run take $elapsed s"
grep -qE "^gpu-api +TIMED OUT \(3s\)" "$work/hung/summary.txt" ||
  { cat "$work/hung.log"; fail "hung step not reported as timed out"; }
grep -qE "^gpu-runtime +ok .*PASSED \] 3 tests" "$work/hung/summary.txt" ||
  fail "passing step not reported"
grep -qE "^bench-compile +FAILED \(rc=1\)" "$work/hung/summary.txt" ||
  fail "the last step did not run after the hung one"
grep -q "Stand.In" "$work/hung/summary.txt" || fail "failed tests not listed"
listing=$(tar -tzf "$work/hung/device-check.tar.gz")
grep -q "gpu-api.log" <<<"$listing" || fail "archive lacks the hung step's log"
echo "device bundle and device-check: ok ($count binaries)"
