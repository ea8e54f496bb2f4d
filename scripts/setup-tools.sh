#!/usr/bin/env bash
# Installs the real benchmark / eval tools that tests/test_real_tools_*.py run, each in its OWN
# virtualenv under .venv-tools/<tool> (their pins conflict with each other and with the app's:
# aiperf and inference-perf cannot share one environment). Pinned in requirements-tools/<tool>.txt.
# Idempotent: a venv whose requirements file has not changed is kept. A tool whose Python is
# missing (inference-perf needs >= 3.12) is skipped with a message; its tests then skip.
# Called by `make test` (target tools); usage: scripts/setup-tools.sh [ROOT=.venv-tools] [TOOL ...]
set -uo pipefail
root=${1:-.venv-tools}; shift || true
tools=("$@"); [ ${#tools[@]} -gt 0 ] || tools=(aiperf guidellm inference-perf lm-eval evalscope genai-perf)

find_python() {  # $1 = minor version (11, 12): a python3.$1 on PATH or under pyenv
  local c
  for c in "python3.$1" /root/.pyenv/versions/3."$1".*/bin/python3."$1" /usr/bin/python3."$1"; do
    command -v "$c" >/dev/null 2>&1 && "$c" -c 'import venv, ensurepip' 2>/dev/null && { echo "$c"; return 0; }
  done
  return 1
}

native_libs() {  # $1 = tool, $2 = its venv: shared libraries a tool's binary needs beyond its wheels
  [ "$1" = genai-perf ] || return 0  # perf_analyzer links libb64.so.0d (Debian libb64-0d)
  local d; d=$(mktemp -d)
  (cd "$d" && apt-get download -q libb64-0d >/dev/null 2>&1) && dpkg -x "$d"/libb64-0d_*.deb "$2/native"
  rm -rf "$d"
  ls "$2"/native/usr/lib/*/libb64.so.0d >/dev/null 2>&1 \
    || { echo "setup-tools: libb64-0d (apt-get download) unavailable: $1 skipped" >&2; return 1; }
}

install_one() {  # $1 = tool; returns non-zero when its install failed
  local t=$1 req="requirements-tools/$1.txt" minor venv stamp py start
  case $t in inference-perf) minor=12 ;; *) minor=11 ;; esac  # torch's CPU wheel on disk is cp311
  venv="$root/$t"; stamp="$venv/.installed"
  if [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then return 0; fi
  py=$(find_python $minor) || { echo "setup-tools: no python3.$minor, $t skipped (its tests skip)" >&2; return 0; }
  start=$(date +%s)
  rm -rf "$venv"
  if "$py" -m venv "$venv" && "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" 2>&1 \
       | grep -v "is ignored: it is neither a file nor a directory" >&2; [ "${PIPESTATUS[0]}" -eq 0 ] \
     && native_libs "$t" "$venv"; then
    cp "$req" "$stamp"
    echo "setup-tools: $t ready in $(( $(date +%s) - start )) s ($venv)"
  else
    echo "setup-tools: installing $t failed after $(( $(date +%s) - start )) s; its tests skip" >&2
    rm -rf "$venv"; return 1
  fi
}

# in parallel: the installs wait on downloads more than on the 2 cores
mkdir -p "$root"
pids=()
for t in "${tools[@]}"; do install_one "$t" & pids+=($!); done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
