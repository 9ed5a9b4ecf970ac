#!/usr/bin/env bash
# Regenerates the committed seed corpora Fuzz/corpus/<target>/ from the repository's fixtures.
#
#   Fuzz/make-corpus.sh [target...]      default: every target
#
# Each target defines its own seeds next to its input format (the `seeds:` of its FuzzTarget):
# this script builds the targets and runs each with RECEIPTD_FUZZ_WRITE_SEEDS=<dir>, which writes
# the seeds and exits. Sources: Tests/AppStoreTests/Resources/cli (openssl-made valid and invalid
# JWS), Tests/AppStoreTests/Resources/receipts (openssl-made PKCS#7 receipts, make-receipt-fixtures.sh),
# samples signed by a fresh TestPKI, receipt-submitted/v1 documents (valid, and one per ingest
# rejection), and ../shared/vectors (Apple's JWS and receipts, Apple's Python library JWS) when
# present. The TestPKI keys are new on every run, so those seeds change each time.
set -euo pipefail
fuzz_dir=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cd "$fuzz_dir/Sources" && ls -d Fuzz* | grep -vx FuzzSupport)
fi
swift build -c release --package-path "$fuzz_dir" -Xswiftc -sanitize=fuzzer,address 2>&1 \
  | grep -v -e "Cannot export local symbol '__asan_extra_spill_area'" -e '^\[' || true
bin=$(swift build -c release --package-path "$fuzz_dir" -Xswiftc -sanitize=fuzzer,address --show-bin-path)
export SWIFT_BACKTRACE=enable=no
for target in "${targets[@]}"; do
  rm -rf "${fuzz_dir:?}/corpus/$target"
  RECEIPTD_FUZZ_WRITE_SEEDS="$fuzz_dir/corpus/$target" "$bin/$target"
done
bytes=$(find "$fuzz_dir/corpus" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')
echo "corpus: $(find "$fuzz_dir/corpus" -type f | wc -l) files, $bytes bytes"
[ "$bytes" -lt 2000000 ] || echo "warning: the corpus exceeds 2 MB; keep committed seeds small" >&2
