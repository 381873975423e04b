#!/bin/sh
# Validates the desktop app's data files: the desktop file (desktop-file-validate), the AppStream
# metainfo (appstreamcli validate --no-net: warnings pass, errors fail), the GSettings schema
# (glib-compile-schemas --strict) and the MIME XML and icons (well-formed XML).
# Usage: test-data-files.sh SOURCE_DATA_DIR BUILD_DATA_DIR. Exits 77 (skipped) only when a
# validator is not installed, and says which.
set -u
src=${1:?source data dir}
build=${2:?build data dir}
app_id=org.onnxworkbench.Workbench
status=0

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "SKIP: $1 is not installed ($2)"
    exit 77
  fi
}
need desktop-file-validate "Debian: desktop-file-utils"
need appstreamcli "Debian: appstream"
need glib-compile-schemas "Debian: libglib2.0-bin"

fail() {
  echo "FAIL: $*"
  status=1
}

for f in "$build/$app_id.desktop" "$build/$app_id.metainfo.xml" "$src/$app_id.gschema.xml" \
         "$src/$app_id.mime.xml" "$src/icons/hicolor/scalable/apps/$app_id.svg" \
         "$src/icons/hicolor/symbolic/apps/$app_id-symbolic.svg"; do
  [ -f "$f" ] || fail "missing $f"
done

# desktop-file-validate prints hints and warnings too; only its errors fail.
out=$(desktop-file-validate "$build/$app_id.desktop" 2>&1)
echo "desktop-file-validate: ${out:-ok}"
if echo "$out" | grep -q ': error: '; then
  fail "desktop-file-validate reports errors"
fi
grep -q '^Exec=onnx-workbench %F$' "$build/$app_id.desktop" || fail "desktop file: Exec is not 'onnx-workbench %F'"
grep -q "^Icon=$app_id\$" "$build/$app_id.desktop" || fail "desktop file: Icon is not $app_id"
grep -q '^MimeType=application/x-onnx;$' "$build/$app_id.desktop" || fail "desktop file: no ONNX MIME type"

# appstreamcli exits non-zero on errors (warnings and pedantic notes pass).
if ! appstreamcli validate --no-net "$build/$app_id.metainfo.xml"; then
  fail "appstreamcli validate reports errors"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$src/$app_id.gschema.xml" "$tmp/"
if ! glib-compile-schemas --strict --dry-run "$tmp"; then
  fail "glib-compile-schemas --strict rejects the schema"
fi
# The build tree's compiled schema is what tests and build-tree runs use.
[ -f "$build/gschemas.compiled" ] || fail "missing $build/gschemas.compiled"

# The MIME XML and the icons have no validator of their own installed; check they are well-formed
# XML and that the MIME type matches *.onnx.
if command -v xmllint >/dev/null 2>&1; then
  for f in "$src/$app_id.mime.xml" "$src/icons/hicolor/scalable/apps/$app_id.svg" \
           "$src/icons/hicolor/symbolic/apps/$app_id-symbolic.svg"; do
    xmllint --noout "$f" || fail "$f is not well-formed XML"
  done
else
  echo "note: xmllint not installed, MIME XML and icons not checked for well-formedness"
fi
grep -q '<glob pattern="\*.onnx"/>' "$src/$app_id.mime.xml" || fail "MIME XML: no *.onnx glob"
grep -q 'type="application/x-onnx"' "$src/$app_id.mime.xml" || fail "MIME XML: no application/x-onnx type"

[ $status -eq 0 ] && echo "all data files valid"
exit $status
