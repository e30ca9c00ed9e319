#!/usr/bin/env bash
# Retake docs/playground.png (the README's picture) with the browser tests' own screenshot of the
# playground at 1280x720. Needs requirements-dev.txt installed and Debian's chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pytest -q -m e2e "tests/e2e/test_browser_pages.py::test_page_opens_directly[/playground]"
mkdir -p docs
cp test-output/screenshots/playground.png docs/playground.png
echo "updated docs/playground.png"
