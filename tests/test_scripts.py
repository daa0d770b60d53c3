"""scripts/env.sh (sourced by quickstart.sh and test.sh) with a stand-in Python: what it says on a
fresh checkout and on a re-run."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from tests.conftest import REPO

# A stand-in for python3 and for .venv/bin/python: `-m venv DIR` makes DIR/bin/python (itself),
# `-m pip install` marks mhgraph installed, `-c` (env.sh's "is mhgraph installed?") reads the mark.
FAKE_PYTHON = """#!/usr/bin/env bash
root="$(cd "$(dirname "$0")/../.." && pwd)"
case "$1 $2" in
  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
  "-m pip") [ "$3" = install ] && [ "$4" = -q ] && [ "$5" = -e ] && touch "$root/.venv/installed" ; exit 0 ;;
  -c*) [ -e "$root/.venv/installed" ] ;;
esac
"""


def _source_env(checkout: Path, bin_dir: Path) -> str:
    done = subprocess.run(["bash", "-c", "source scripts/env.sh"], cwd=checkout, capture_output=True, text=True,
                          env={**os.environ, "PYTHON": str(bin_dir / "python3"),
                               "PATH": f"{bin_dir}:{os.environ['PATH']}"}, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_env_sh_says_first_time_only_the_first_time(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "env.sh", checkout / "scripts" / "env.sh")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("python3", FAKE_PYTHON), ("mvn", "#!/bin/sh\n")):   # mvn: no apt-get
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    first = _source_env(checkout, bin_dir)
    assert (checkout / ".venv" / "installed").exists()
    assert "first time: several minutes" in first
    again = _source_env(checkout, bin_dir)
    assert "first time" not in again and "checking mhgraph's install in .venv" in again
