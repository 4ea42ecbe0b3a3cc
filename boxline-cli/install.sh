#!/bin/sh
# Builds the boxline command and installs it: the jar and the launcher go to PREFIX/lib and PREFIX/bin
# (PREFIX defaults to ~/.local), bash completion to PREFIX/share/bash-completion/completions.
# Usage, from the repository root: sh boxline-cli/install.sh [PREFIX]
set -e
prefix="${1:-$HOME/.local}"
root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$root" && ./mvnw -q -B -pl boxline-cli -am package -DskipTests)
mkdir -p "$prefix/bin" "$prefix/lib" "$prefix/share/bash-completion/completions"
cp "$root"/boxline-cli/target/boxline-cli-*-all.jar "$prefix/lib/boxline-cli-all.jar"
cp "$root/boxline-cli/src/main/dist/boxline" "$prefix/bin/boxline"
chmod +x "$prefix/bin/boxline"
"$prefix/bin/boxline" completion > "$prefix/share/bash-completion/completions/boxline"
echo "installed $prefix/bin/boxline (put $prefix/bin on your PATH); try: boxline --help"
