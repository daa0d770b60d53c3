"""bench/cpuid_avx2.c: a process it is loaded into (and that process's children) sees its CPU without AVX-512,
while AVX2 stays, and a fault of another kind still ends the process. (bench/rerank_cost.py --isa avx2 holds ONNX
Runtime's kernels to AVX2 with it; the rerank-avx2-* records rest on this.)

It needs a C compiler, the kernel's CPUID faulting and a CPU with AVX-512 to hide: elsewhere there is nothing
to check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from rerank_cost import cpu_flags, cpuid_held_library  # noqa: E402  (bench/ is no package)

FLAGS = cpu_flags()
pytestmark = pytest.mark.skipif(not {"avx512f", "avx2"} <= FLAGS, reason="needs a CPU with AVX-512 to hide")

# numpy reads CPUID as it starts; a child process of a held process must see the same
SEEN = ("from numpy._core._multiarray_umath import __cpu_features__ as f; "
        "print(f['AVX2'], f['AVX512F'], f['AVX512_CLX'])")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, why = cpuid_held_library(tmp_path_factory.mktemp("cpuid"))   # as rerank_cost.py --isa avx2 builds it
    if out is None:   # no CPUID faulting (cpuid_fault) or no C compiler; a source that does not build fails
        assert "did not build" not in why, why
        pytest.skip(why)
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
