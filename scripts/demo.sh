#!/usr/bin/env bash
# Runs the app on the bundled (simulated) demo workload. Without a display it says so and
# writes a screenshot of the loaded window to ./demo-out/ instead.
set -euo pipefail
py=${1:-.venv/bin/python}
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  mkdir -p demo-out
  echo "demo: no display (DISPLAY / WAYLAND_DISPLAY unset); rendering the window offscreen instead"
  QT_QPA_PLATFORM=offscreen "$py" -m explorer --demo --screenshot demo-out/trace-explorer-demo.png
  echo "demo: screenshot written to $(pwd)/demo-out/trace-explorer-demo.png"
else
  exec "$py" -m explorer --demo
fi
