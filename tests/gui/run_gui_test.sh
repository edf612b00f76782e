#!/bin/sh
# Runs a Studio GUI test on a virtual display: xvfb-run when present (also when DISPLAY is set,
# so that `make test` never opens windows on a desktop), else the current DISPLAY, else skip.
# Exit 77 = skipped (SKIP_RETURN_CODE of the CTest test).
if command -v xvfb-run >/dev/null 2>&1; then
  exec xvfb-run -a -s "-screen 0 1600x1200x24" "$@"
elif [ -n "$DISPLAY" ]; then
  exec "$@"
else
  echo "SKIPPED: no DISPLAY and no xvfb-run (install xvfb xauth)"
  exit 77
fi
