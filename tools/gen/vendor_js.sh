#!/bin/sh
# Re-vendors the two JavaScript libraries the replay page (./sim --html, docs/replay.md) inlines:
# three.js (the 3D view, with its OrbitControls addon) bundled into one IIFE script that defines
# window.THREE and window.OrbitControls, and uPlot (the plots) as published. Needs node and npm
# and the npm registry; the build never runs this, it reads third_party/ as committed.
#   sh tools/gen/vendor_js.sh [THREE_VERSION] [UPLOT_VERSION]
set -eu
THREE=${1:-0.187.0}
UPLOT=${2:-1.6.32}
ESBUILD=0.28.2
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund "three@$THREE" "uplot@$UPLOT" "esbuild@$ESBUILD" >/dev/null
cat > entry.js <<'JS'
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
window.THREE = THREE;
window.OrbitControls = OrbitControls;
JS
mkdir -p "$repo/third_party/three" "$repo/third_party/uplot"
./node_modules/.bin/esbuild entry.js --bundle --minify --format=iife --legal-comments=eof \
    --outfile="$repo/third_party/three/three.bundle.min.js"
cp node_modules/three/LICENSE "$repo/third_party/three/LICENSE"
cp node_modules/uplot/LICENSE "$repo/third_party/uplot/LICENSE"
cp node_modules/uplot/dist/uPlot.iife.min.js node_modules/uplot/dist/uPlot.min.css "$repo/third_party/uplot/"
printf 'three %s (npm), bundled with esbuild %s by tools/gen/vendor_js.sh\n' "$THREE" "$ESBUILD" > "$repo/third_party/three/VERSION"
printf 'uplot %s (npm), dist/ as published\n' "$UPLOT" > "$repo/third_party/uplot/VERSION"
echo "vendored three $THREE and uplot $UPLOT into third_party/"
