#!/usr/bin/env bash
# Runs each libFuzzer target of a PRISM_FUZZ build for a set time (`make fuzz` calls this):
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]      (default: every target)
# Each target starts from its committed seed corpus (tests/fuzz/corpus/<target>/) copied into
# BUILD_DIR/fuzz/corpus/<target>/, which is where libFuzzer adds the inputs it finds; the
# committed corpus is never written. Crashing inputs land in BUILD_DIR/fuzz/artifacts/<target>/,
# the full logs in BUILD_DIR/fuzz/<target>.log. Exits 1 if any target reported a crash, a leak,
# undefined behaviour, an out-of-memory or a timeout (every target runs regardless); prints one
# summary line per target with libFuzzer's final figures.
set -u

build=${1:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors idx text cli checkpoint results)
here=$(cd "$(dirname "$0")" && pwd)
out=$build/fuzz

# Longest input per target: enough for every seed and for the structures each reader parses.
max_len() {
  case $1 in
    cli) echo 512 ;;
    *) echo 4096 ;;
  esac
}

# One thread: the readers are serial, and libFuzzer's figures should not depend on the machine.
export OMP_NUM_THREADS=1
# UBSan already aborts (-fno-sanitize-recover); the stack trace says where.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

mkdir -p "$out"
summary=$out/summary.txt
printf '%-12s %6s %12s %9s %7s %7s %9s  %s\n' target seconds executions exec/s corpus cov ft result \
  > "$summary"
status=0
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  if [ ! -x "$bin" ]; then
    echo "prism fuzz: $bin is not built" >&2
    exit 2
  fi
  rm -rf "$out/corpus/$t" "$out/artifacts/$t"
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
  cp "$here/corpus/$t/"* "$out/corpus/$t/"
  dict=()
  [ -f "$here/$t.dict" ] && dict=("-dict=$here/$t.dict")
  echo "prism fuzz: $t for ${seconds} s (log: $out/$t.log)"
  start=$(date +%s)
  "$bin" "$out/corpus/$t" "${dict[@]}" -max_total_time="$seconds" -max_len="$(max_len "$t")" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t/" > "$out/$t.log" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  log=$out/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  # The last status line: "#N DONE cov: C ft: F corp: U/SIZEb ..." (or the last before a crash).
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<< "$last")
  result=ok
  if [ $rc -ne 0 ] || grep -qE '^(==[0-9]+==ERROR|SUMMARY: )|runtime error:' "$log"; then
    result="FAILED (exit $rc)"
    status=1
  fi
  printf '%-12s %6s %12s %9s %7s %7s %9s  %s\n' "$t" "$took" "${execs:--}" "${rate:--}" \
    "${corp:--}" "${cov:--}" "${ft:--}" "$result" >> "$summary"
  if [ "$result" != ok ]; then
    echo "prism fuzz: $t FAILED; the end of $log:" >&2
    tail -40 "$log" >&2
    ls "$out/artifacts/$t/" 2> /dev/null | sed "s|^|prism fuzz: reproducer: $out/artifacts/$t/|" >&2
  fi
done
echo
echo "prism fuzz: libFuzzer's final figures (corpus: inputs/bytes; cov: edges; ft: features)"
cat "$summary"
exit $status
