#!/usr/bin/env bash
# Builds the fuzz targets (release, libFuzzer + AddressSanitizer) and runs each one for a fixed
# time budget, one after the other.
#
#   Fuzz/run.sh [seconds-per-target] [target...]      default: 60 s, every target
#
# Every directory Fuzz/Sources/Fuzz<Name> except FuzzSupport is a target (FuzzBase64URL, FuzzES256Batch,
# FuzzIngest, FuzzJSON, FuzzJWS, FuzzJWSSegments, FuzzReceipt today); each gets the same budget. One libFuzzer
# process at a time, in this shell: no -jobs/-workers (with -jobs libFuzzer forks children that
# log to ./fuzz-<n>.log, and the machine's 2 cores are shared).
#
# A target's source declares its input size bound and optional dictionary in header comments:
#   // fuzz-max-len: 16384          (libFuzzer -max_len; default 4096)
#   // fuzz-dict: json.dict         (Fuzz/dictionaries/json.dict as -dict)
#
# Per target: the seeds in Fuzz/corpus/<target>/ (read-only), new inputs in
# fuzz-artifacts/corpus/<target>/, crashes, timeouts and out-of-memory inputs in
# fuzz-artifacts/<target>/, the libFuzzer log in fuzz-artifacts/<target>.log (fuzz-artifacts/ is
# gitignored). Prints executions, exec/s, coverage and crashes per target; exits 1 when any
# target crashed. Reproduce a crash with: Fuzz/.build/release/<target> <crash-file>
# (with SWIFT_BACKTRACE=enable=no, as below).
set -euo pipefail
fuzz_dir=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$fuzz_dir")
artifacts="$repo/fuzz-artifacts"
seconds=${1:-60}
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cd "$fuzz_dir/Sources" && ls -d Fuzz* | grep -vx FuzzSupport)
fi

echo "building ${#targets[@]} fuzz targets (release, -sanitize=fuzzer,address)..."
swift build -c release --package-path "$fuzz_dir" -Xswiftc -sanitize=fuzzer,address 2>&1 \
  | grep -v -e "Cannot export local symbol '__asan_extra_spill_area'" -e '^\[' || true
bin=$(swift build -c release --package-path "$fuzz_dir" -Xswiftc -sanitize=fuzzer,address --show-bin-path)

# The Swift runtime's backtracer would catch the crash signal before libFuzzer and hang the
# run; libFuzzer and ASan report crashes themselves.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}

status=0
summary=()
for target in "${targets[@]}"; do
  [ -x "$bin/$target" ] || { echo "no such fuzz target: $target" >&2; exit 2; }
  max_len=$(sed -n 's|^// fuzz-max-len: \([0-9]*\).*|\1|p' "$fuzz_dir/Sources/$target/"*.swift | head -1)
  dict=$(sed -n 's|^// fuzz-dict: \([^ ]*\).*|\1|p' "$fuzz_dir/Sources/$target/"*.swift | head -1)
  dict_flag=()
  [ -n "$dict" ] && dict_flag=(-dict="$fuzz_dir/dictionaries/$dict")
  mkdir -p "$artifacts/$target" "$artifacts/corpus/$target" "$fuzz_dir/corpus/$target"
  log="$artifacts/$target.log"
  echo "== $target: ${seconds}s, -max_len=${max_len:-4096}${dict:+, -dict=dictionaries/$dict}"
  "$bin/$target" "$artifacts/corpus/$target" "$fuzz_dir/corpus/$target" "${dict_flag[@]}" \
    -max_total_time="$seconds" -max_len="${max_len:-4096}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/$target/" -print_final_stats=1 >"$log" 2>&1 && rc=0 || rc=$?
  # Count what this run wrote (a known crash found again overwrites its file, named by SHA-1);
  # slow-unit-* files are not failures. A failing exit without an artifact still counts.
  crashes=$(grep -cE 'Test unit written to .*/(crash|timeout|oom|leak)-' "$log" || true)
  [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
  line=$(printf '%-16s %6ss %12s execs %8s exec/s  cov %5s  ft %6s  corpus %-12s crashes %s' \
    "$target" "$seconds" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corpus:-?}" "$crashes")
  echo "$line"
  summary+=("$line")
  if [ "$crashes" -ne 0 ]; then
    status=1
    echo "    libFuzzer exit status $rc, log $log"
    grep -E 'invariant failed|ERROR: |SUMMARY: |Fatal error|Test unit written' "$log" | head -5 | sed 's/^/    /'
  fi
done

echo
echo "summary ($(swift --version 2>/dev/null | head -1)):"
printf '%s\n' "${summary[@]}"
[ "$status" -eq 0 ] && echo "no crashes" || echo "CRASHES: see $artifacts"
exit "$status"
