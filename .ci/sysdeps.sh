#!/usr/bin/env bash
# System packages the tests need: Graphviz's `dot`, Debian's chromium (UI tests) and npm (the
# browser-side Graphviz and Pyodide's package list come from the npm registry).
# fonts-wqy-microhei gives matplotlib Chinese glyphs for notebooks/zh.
# Installed with apt-get when missing and running as root; otherwise a clear message.
set -u
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-liberation fonts-dejavu-core)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# the Cairo library cairosvg loads (viz: PNG/PDF of a graph without `dot`)
ldconfig -p 2>/dev/null | grep -q 'libcairo\.so\.2' || missing+=(libcairo2)
# a font with Chinese glyphs, for the heatmap titles of the Chinese notebooks (notebooks/zh)
[ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || missing+=(fonts-wqy-microhei)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "sysdeps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "sysdeps: missing ${missing[*]}; install them with: sudo apt-get install ${missing[*]}" >&2
  echo "sysdeps: tests that need them will be skipped." >&2
fi
