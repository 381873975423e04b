#!/bin/sh
# Runs one GUI test under its own Xvfb display and D-Bus session (GTK 4.8 has no headless
# backend), with a throwaway home so recent files and settings of the user are never touched.
# Xvfb picks a free display itself and writes its number once it accepts clients (-displayfd),
# which avoids the start-up race of `xvfb-run -a` when several servers start together; -noreset
# keeps it from resetting (and refusing clients meanwhile) when the accessibility bus launcher,
# its first client, disconnects.
set -eu
home=$(mktemp -d)
xvfb_pid=
cleanup() {
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$home"
}
trap cleanup EXIT INT TERM
export XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" XDG_CACHE_HOME="$home/cache"
export XDG_STATE_HOME="$home/state"
export GSK_RENDERER="${GSK_RENDERER:-cairo}"
export GDK_BACKEND=x11
if [ -z "${OWB_KEEP_A11Y:-}" ]; then
  export GTK_A11Y=none NO_AT_BRIDGE=1
fi
if [ -z "${DISPLAY:-}" ] || [ -z "${OWB_USE_DISPLAY:-}" ]; then
  Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp -noreset 3>"$home/display" 2>"$home/xvfb.log" &
  xvfb_pid=$!
  tries=0
  while [ ! -s "$home/display" ]; do
    tries=$((tries + 1))
    if [ $tries -gt 200 ] || ! kill -0 "$xvfb_pid" 2>/dev/null; then
      echo "gui-test: Xvfb did not start:" >&2
      cat "$home/xvfb.log" >&2
      exit 1
    fi
    sleep 0.05
  done
  DISPLAY=":$(cat "$home/display")"
  export DISPLAY
fi
dbus-run-session -- "$@"
