#!/bin/sh
# Checks the translations: every catalogue in po/LINGUAS compiles (msgfmt --check) and covers
# every translatable string of the sources in po/POTFILES, with nothing fuzzy or untranslated.
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
langs=$(sed 's/#.*//' po/LINGUAS | tr -s ' \n' ' ')
[ -n "$(echo "$langs" | tr -d ' ')" ] || { echo "po/LINGUAS lists no language"; exit 1; }
files=$(sed 's/#.*//' po/POTFILES | grep -v '^ *$')
# The same keywords as meson's glib preset.
xgettext --from-code=UTF-8 --add-comments --keyword=_ --keyword=N_ --keyword=C_:1c,2 \
  --keyword=NC_:1c,2 --keyword=g_dcgettext:2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3 \
  --flag=N_:1:pass-c-format --flag=C_:2:pass-c-format --flag=NC_:2:pass-c-format \
  --flag=g_dngettext:2:pass-c-format --flag=g_strdup_printf:1:c-format \
  --flag=g_string_printf:2:c-format --flag=g_string_append_printf:2:c-format \
  --flag=g_error_new:3:c-format --flag=g_set_error:4:c-format --keyword=ngettext:1,2 \
  -o "$tmp/all.pot" $files
total=$(msgattrib --no-obsolete "$tmp/all.pot" | grep -c '^msgid "' || true)
echo "template: $((total - 1)) strings"
status=0
for lang in $langs; do
  msgfmt --check --output-file=/dev/null "po/$lang.po" || { echo "$lang: does not compile"; status=1; continue; }
  msgmerge --quiet --no-fuzzy-matching "po/$lang.po" "$tmp/all.pot" -o "$tmp/$lang.po"
  stats=$(msgfmt --statistics --output-file=/dev/null "$tmp/$lang.po" 2>&1)
  echo "$lang: $stats"
  if msgattrib --untranslated --no-obsolete "$tmp/$lang.po" | grep -q '^msgid "[^"]'; then
    echo "$lang: untranslated:"; msgattrib --untranslated --no-obsolete "$tmp/$lang.po" | grep '^msgid' | head -20
    status=1
  fi
  if msgattrib --only-fuzzy --no-obsolete "$tmp/$lang.po" | grep -q '^msgid "[^"]'; then
    echo "$lang: fuzzy entries"; status=1
  fi
done
exit $status
