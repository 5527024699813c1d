#!/usr/bin/env bash
# Compiles the JetBrains plugin here without Gradle or the IntelliJ Platform:
# the platform-free core, its tests and the IDE layer in ONE kotlinc run (the
# IDE layer against the compile-only stubs in stubs/src), then runs the core's
# tests against the real sidecar ($GIC_BINARY).
#
#   GIC_BINARY=/path/to/gemini-ide-companion plugins/jetbrains/scripts/check.sh [test-name-filter]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

kotlin="$here/tools/node_modules/kotlin-compiler"
if ! command -v java >/dev/null || ! command -v npm >/dev/null; then
	# Fail in CI, skip on a developer machine without a JDK.
	if [[ -n "${CI:-}" ]]; then echo "a JDK 17+ (java) and npm are needed to compile the JetBrains plugin"; exit 1; fi
	echo "skipping the JetBrains plugin: needs a JDK 17+ (java) and npm"
	exit 0
fi
if [[ ! -d tools/node_modules/kotlin-compiler || tools/package-lock.json -nt tools/node_modules/.package-lock.json ]]; then
	(cd tools && npm ci --no-audit --no-fund --loglevel=error)
fi

# The core must stay platform-free: only the Kotlin and Java standard libraries.
bad="$(grep -HnE '^import ' src/main/kotlin/com/github/geminiidecompanion/core/*.kt | grep -vE 'import (kotlin|java)\.' || true)"
[[ -z "$bad" ]] || { echo "the core imports something outside kotlin.* and java.*:"; echo "$bad"; exit 1; }

# Every stubbed platform class must be listed, with its source, in SIGNATURES.md.
missing=0
while IFS= read -r f; do
	cls="${f#stubs/src/}"
	cls="${cls%.*}"
	cls="${cls//\//.}"
	[[ "$cls" == org.jetbrains.annotations.* ]] && continue
	grep -q "\`$cls\`" SIGNATURES.md || { echo "stub $cls is not listed in SIGNATURES.md"; missing=1; }
done < <(find stubs/src -name '*.java' -o -name '*.kt' | sort)
((missing == 0)) || exit 1

# Editor link v2, section 6: transport and lifecycle live in one module of at most 400 lines.
lines=$(wc -l < src/main/kotlin/com/github/geminiidecompanion/core/Sidecar.kt)
((lines <= 400)) || { echo "core/Sidecar.kt (transport and lifecycle) has $lines lines; the contract allows 400"; exit 1; }

out="$here/build-local"
rm -rf "$out"
mkdir -p "$out/classes"
echo "kotlinc: core + tests + IDE layer (against stubs)"
"$kotlin/bin/kotlinc" -nowarn -jvm-target 17 \
	-cp "$kotlin/lib/kotlin-test.jar" \
	-d "$out/classes" \
	src/main/kotlin src/test/kotlin stubs/src
# Stub classes compiled from Kotlin stubs are compile-only: drop them.
rm -rf "$out/classes/com/intellij" "$out/classes/org/jetbrains"

# plugin.xml is well-formed, every class it names was compiled, and every
# action id the code looks up is declared in it.
python3 - "$out/classes" <<'PY'
import re, sys, os, xml.etree.ElementTree as ET
classes = sys.argv[1]
root = ET.parse("src/main/resources/META-INF/plugin.xml").getroot()
bad = []
names = set()
ids = set()
for el in root.iter():
    for attr in ("class", "implementation", "instance"):
        v = el.get(attr)
        if v and v.startswith("com.github."):
            names.add(v)
    if el.tag == "action":
        ids.add(el.get("id"))
for n in sorted(names):
    if not os.path.isfile(os.path.join(classes, n.replace(".", "/") + ".class")):
        bad.append("plugin.xml names %s, which was not compiled" % n)
code = ""
for d, _, fs in os.walk("src/main/kotlin"):
    for f in fs:
        code += open(os.path.join(d, f), encoding="utf-8").read()
for used in sorted(set(re.findall(r'getAction\("([^"]+)"\)', code))):
    if used not in ids:
        bad.append("the code looks up action %s, which plugin.xml does not declare" % used)
if not names:
    bad.append("plugin.xml names no plugin classes")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
echo "plugin.xml: well-formed; its classes and action ids match the code"

: "${GIC_BINARY:?set GIC_BINARY to a built gemini-ide-companion}"
GIC_BINARY="$GIC_BINARY" java -cp "$out/classes:$kotlin/lib/kotlin-stdlib.jar:$kotlin/lib/kotlin-test.jar" \
	com.github.geminiidecompanion.core.RunnerKt "$@"
