# Gives the guest core module's exports short names inside the component (build.sh's last step).
#
# The canonical ABI names the core module's exports after the WIT (for example
# "tenure:election/node@0.3.0#[method]node.handle-message", "cabi_post_…"). `wasm-tools component
# new` needs those names to find the functions, but once it has wired them the component reaches
# them only through its own `alias core export` entries: nothing outside the component sees them.
# Each long name is stored twice (the module's export, the component's alias), about 4 KB in all.
#
# Usage: awk -f short-names.awk CORE.wat COMPONENT.wat > OUT.wat
#   CORE.wat       `wasm-tools print` of the core module as embedded (its exports are the names)
#   COMPONENT.wat  `wasm-tools print` of the component
# Every quoted export name of CORE.wat becomes a decimal number, on the lines of COMPONENT.wat that
# declare an export or alias a core export (so the component's own import and export names, such
# as "tenure:election/node@0.3.0", are untouched: no core export has such a name). Likewise the
# core module's import module names and the nested export component's "import-…" names (below).
# `wasm-tools validate` afterwards proves that every reference still finds its definition; the
# hosts' tests (make test-component) that the component's own interface is unchanged.
FNR == NR {
  if (match($0, /^ *\(export "[^"]*"/)) {
    name = substr($0, RSTART, RLENGTH)
    sub(/^ *\(export /, "", name)
    short[name] = "\"" count++ "\""
  }
  if (match($0, /^ *\(import "[^"]*" "/)) {
    name = substr($0, RSTART, RLENGTH - 2)
    sub(/^ *\(import /, "", name)
    if (!(name in module)) module[name] = "\"m" modules++ "\""
  }
  next
}
# `with "name"` / `(import "name"`: the first quoted string after `prefix` becomes `to`.
function swap(line, prefix, name, to,    at) {
  at = index(line, prefix name)
  if (at) line = substr(line, 1, at - 1) prefix to substr(line, at + length(prefix name))
  return line
}
{
  line = $0
  if (index(line, "(export \"") || index(line, "(alias core export ")) {
    for (name in short) {
      at = index(line, name)
      if (at) line = substr(line, 1, at - 1) short[name] substr(line, at + length(name))
    }
  }
  # The core module's import modules: in its imports (two strings) and the `with` arguments that
  # instantiate it (the component's own import of the same name has one string: untouched).
  for (name in module) {
    if (index(line, "(import " name " \"")) line = swap(line, "(import ", name, module[name])
    if (index(line, "(with " name " (instance")) line = swap(line, "(with ", name, module[name])
  }
  # The nested export component's import names ("import-type-config", …), private to it and the
  # instantiation that supplies them: short kebab-case labels.
  if (match(line, /\((import|with) "import-[a-z0-9-]*"/)) {
    name = substr(line, RSTART, RLENGTH)
    sub(/^\((import|with) /, "", name)
    if (!(name in label)) label[name] = "\"i" labels++ "\""
    line = substr(line, 1, RSTART - 1) substr(line, RSTART, RLENGTH - length(name)) label[name] substr(line, RSTART + RLENGTH)
  }
  print line
}
