"""bench/cpuid_avx2.c: a process it is loaded into (and that process's children) sees its CPU without AVX-512,
while AVX2 stays, and a fault of another kind still ends the process. (bench/rerank_cost.py --isa avx2 holds ONNX
Runtime's kernels to AVX2 with it; the rerank-avx2-* records rest on this.)

It needs the kernel's CPUID faulting and a CPU with AVX-512 to hide: elsewhere there is nothing to check."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "cpuid_avx2.c"
FLAGS = set(next((line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("flags")), [])) if Path("/proc/cpuinfo").exists() else set()
pytestmark = pytest.mark.skipif(
    not {"cpuid_fault", "avx512f", "avx2"} <= FLAGS or shutil.which("cc") is None,
    reason="needs a C compiler and a CPU with AVX-512 and the kernel's CPUID faulting (cpuid_fault)")

# numpy reads CPUID as it starts; a child process of a held process must see the same
SEEN = ("from numpy._core._multiarray_umath import __cpu_features__ as f; "
        "print(f['AVX2'], f['AVX512F'], f['AVX512_CLX'])")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cpuid") / "cpuid_avx2.so"
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(out), str(SOURCE)], check=True)
    if (started := run("pass", out)).returncode == 97:   # the flag is there, but this kernel refuses the switch
        pytest.skip(started.stderr.strip())
    return out


def run(code: str, preload: Path | None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin"} | ({"LD_PRELOAD": str(preload)} if preload else {})
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_held_process_and_its_children_see_avx2_without_avx512(library: Path) -> None:
    assert run(SEEN, None).stdout.split() == ["True", "True", "True" if "avx512_vnni" in FLAGS else "False"]
    held = run(f"import subprocess, sys; {SEEN}; "
               f"print(subprocess.run([sys.executable, '-c', {SEEN!r}], capture_output=True, text=True).stdout)",
               library)
    assert held.returncode == 0, held.stderr
    assert held.stdout.split() == ["True", "False", "False"] * 2


def test_a_real_fault_still_ends_the_process(library: Path) -> None:
    crashed = run("import ctypes; ctypes.string_at(0)", library)
    assert crashed.returncode == -11   # SIGSEGV, as without the library: not caught and retried for ever
