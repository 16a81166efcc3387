#!/usr/bin/env bash
# The README's second command: the whole test suite. Stage 1 builds and runs every test in a
# release build; stage 2 rebuilds under AddressSanitizer + UndefinedBehaviorSanitizer and runs the
# suite again, with the sample sizes of tests labelled "slow" scaled down, and without the
# browser test (label "browser": the web page is the same bytes in both builds), the replica
# tests (nginx in front of two servers) and the comparisons with llama.cpp's programs (label
# "llamacpp": numbers, which the sanitizers do not change; tests/CMakeLists.txt says which
# sanitizer tests run their code).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
stage_start=$SECONDS
stage() {
  local now=$SECONDS
  printf '[stage] %s: %ds\n' "$1" $((now - stage_start))
  stage_start=$now
}

# Node.js, Chromium and the npm packages of the JavaScript tests (tests/server); never fails: what
# it cannot install, those tests skip, saying why.
bash scripts/install-test-deps.sh
stage "test dependencies"
bash scripts/build.sh build
stage "release build"
ctest --test-dir build --output-on-failure -j"$jobs"
stage "release tests"

if [[ ${EAGLE2_SKIP_SANITIZERS:-0} != 1 ]]; then
  # -O1 with line tables only: the sanitizer build is about memory safety, not speed, and this
  # keeps its compile time (two full builds on 2 cores) inside CI's budget. For the same reason
  # it compiles as unity units (files of a library concatenated, about 8 per unit: 30-35 % less
  # compile time); the release build above compiles every file on its own, which keeps each
  # file's include list honest.
  bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1" \
    -DEAGLE2_SANITIZE=ON -DEAGLE2_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON
  stage "sanitizer build"
  EAGLE2_TEST_SCALE=${EAGLE2_TEST_SCALE:-0.25} ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE 'browser|replicas|llamacpp'
  stage "sanitizer tests (ASan + UBSan)"
fi
