#!/usr/bin/env bash
# Installs everything Trace Explorer needs on a Debian/Ubuntu machine, idempotently:
# the system libraries Qt loads, a CJK font, Xvfb (for real-window tests), a virtualenv and the
# package with its test extras at the versions of the lock files. Called by `make setup` (and so
# by `make demo` / `make test`).
set -euo pipefail
venv=${1:-.venv}
extra=${2:-}  # "spark": also Java 17 and the spark extra (warehouse source; make test)

# Qt's offscreen/xcb platform plugins, fonts and tools, all required on a bare Debian 12.
apt_pkgs=(libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0
  libx11-xcb1 libxcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
  libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1
  libxcb-util1 libxcb-xfixes0 libxcb-xkb1 libxkbcommon-x11-0
  fonts-wqy-microhei fonts-dejavu-core fonts-symbola xvfb xauth poppler-utils)
[ "$extra" = spark ] && apt_pkgs+=(openjdk-17-jre-headless)
python3 -m venv --help >/dev/null 2>&1 && python3 -c 'import ensurepip' 2>/dev/null || apt_pkgs+=(python3-venv)

if command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${apt_pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup: installing system packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "setup: no apt-get here; install the Qt runtime libraries and a CJK font yourself" >&2
fi

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# the locked versions first (requirements.lock: the dependencies and the test extra;
# requirements-spark.lock: what the spark extra adds; `make lock` writes them), then the package
# itself without resolving again
locks=(-r requirements.lock)
[ "$extra" = spark ] && locks+=(-r requirements-spark.lock)
"$venv/bin/python" -m pip install -q "${locks[@]}"
"$venv/bin/python" -m pip install -q --no-deps --no-build-isolation -e .
echo "setup: ready ($venv)"
