#!/usr/bin/env bash
# Install everything AncientBench needs on a fresh Linux machine, idempotently:
#   .venv with a pinned CPU torch (skip the torch step by installing your own CUDA/NPU torch into .venv
#   first), the package with its test and build extras at the versions CI uses (requirements/constraints.txt),
#   and the registry data sources the builders read: Debian `unicode-data` (Unihan) and npm `chinese-poetry`.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_install() {  # Debian packages, installed only when something is missing
  $SUDO apt-get update -q && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
}

# Python >= 3.11 (the builders' tshet-uinh needs it): python3.11 if present, else python3.
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' \
  || { echo "install.sh: need Python >= 3.11 (set PYTHON=...)"; exit 1; }
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then  # also repairs a venv left half-made
  rm -rf .venv
  "$PYTHON" -m venv .venv || { apt_install python3-venv && "$PYTHON" -m venv .venv; }
fi
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check -c requirements/constraints.txt)
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  "${PIP[@]}" "torch==2.13.0"  # the CPU build on CI's machines; on an ordinary GPU machine pip's default CUDA build
fi
"${PIP[@]}" -e ".[test,build]"

# Unihan (Kangxi radicals, readings, variants): Debian package unicode-data.
if [ ! -f /usr/share/unicode/Unihan_RadicalStrokeCounts.txt.bz2 ]; then
  apt_install unicode-data
fi

# Headless browser for the human-baseline page test (chromium + chromedriver, driven by selenium), and a
# CJK font so report plots and the page render Chinese: Debian chromium, chromium-driver, fonts-wqy-microhei.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ] || [ ! -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]; then
  apt_install chromium chromium-driver fonts-wqy-microhei
fi

# The classics (論語, 孟子, 大學, 中庸, 詩經, 楚辭, 古文觀止): npm chinese-poetry, MIT.
if [ ! -f .sources/node_modules/chinese-poetry/package.json ]; then
  command -v npm >/dev/null || apt_install nodejs npm
  mkdir -p .sources
  npm install --prefix .sources --no-audit --no-fund --silent chinese-poetry@2.0.1
fi
# The bare Hugging Face names, offline from any folder: load_dataset("ancientbench", cfg), evaluate.load("ancientbench_metric").
.venv/bin/ancientbench register >/dev/null
echo "install.sh: ready (.venv, unicode-data, chromium, fonts-wqy-microhei, .sources/node_modules/chinese-poetry)"
