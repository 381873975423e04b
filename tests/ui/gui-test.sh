#!/bin/sh
# Runs one GUI test under its own Xvfb display and D-Bus session (GTK 4.8 has no headless
# backend), with a throwaway home so recent files and settings of the user are never touched.
set -e
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" XDG_CACHE_HOME="$home/cache"
export XDG_STATE_HOME="$home/state"
export GSK_RENDERER="${GSK_RENDERER:-cairo}"
export GDK_BACKEND=x11
if [ -z "${OWB_KEEP_A11Y:-}" ]; then
  export GTK_A11Y=none NO_AT_BRIDGE=1
fi
if [ -n "${DISPLAY:-}" ] && [ -n "${OWB_USE_DISPLAY:-}" ]; then
  exec dbus-run-session -- "$@"
fi
exec xvfb-run -a -s "-screen 0 1600x1000x24" dbus-run-session -- "$@"
