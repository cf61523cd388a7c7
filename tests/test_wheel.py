"""The wheel is the whole tool: built from the project, installed (not editable) into a fresh
venv, it runs `check` on its bundled default snippet and lists its gallery from another folder.

The fresh venv reuses the torch and textual already installed for the tests rather than
downloading them: a `.pth` file names the site-packages folders they live in (a venv made with
`--system-site-packages` sees the base interpreter's packages, not another venv's). A path in a
`.pth` file is added to `sys.path` without processing that folder's own `.pth` files, so the
editable install of this checkout stays invisible to the fresh venv.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What the installed tool imports from outside itself (the worker: torch).
DEPENDENCIES = ("torch", "textual", "rich", "watchdog", "pygments")
#: Not part of a build: earlier builds, the tests themselves. Nor is anything whose name starts
#: with a dot: git, the venvs, the caches, and in a CI clone `.ci/run`'s own `.ci-tools` and
#: `.uv-cache` (uv's cache, 5.5 GB with torch 2.14.1's CUDA libraries while `make test` runs:
#: copying it took this test from 7 s to 44 s there).
_SKIP = {"build", "dist", "tests", "__pycache__"}


def _ignore(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n in _SKIP or n.startswith(".") or n.endswith(".egg-info")}


def _declared_packages() -> list[str]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]


def _source_packages() -> list[str]:
    """Every package folder under playground/ and tui/, as a dotted name."""
    found = []
    for top in ("playground", "tui"):
        for init in sorted((ROOT / top).rglob("__init__.py")):
            found.append(".".join(init.parent.relative_to(ROOT).parts))
    # The gallery's sections (snippets/models/) ship as subpackages of playground.snippets.
    for init in sorted((ROOT / "snippets").glob("*/__init__.py")):
        found.append(f"playground.snippets.{init.parent.name}")
    return found


def test_pyproject_names_every_package():
    """The package list is explicit (for the snippets mapping): a new subpackage must join it,
    or the wheel would ship without it while the editable install still worked."""
    declared = _declared_packages()
    assert sorted(set(_source_packages()) - set(declared)) == []
    assert "playground.snippets" in declared


def _site_dirs() -> list[str]:
    """The folders the dependencies are installed in, found without importing them."""
    dirs = []
    for name in DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, f"{name} is not installed"
        folder = str(Path(spec.origin).parents[1])
        if folder not in dirs:
            dirs.append(folder)
    return dirs


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the fresh venv's python, a folder outside the checkout, the environment to run in)."""
    base = tmp_path_factory.mktemp("wheel")
    # A copy of the sources: an in-tree build would leave build/ behind, and setuptools puts
    # whatever an earlier build left in build/lib into the next wheel.
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=_ignore)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PIP_NO_INDEX"] = "1"  # nothing is downloaded: the build needs only setuptools, installed here
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    dist = base / "dist"
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(source)],
        cwd=base,
        env=env,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    wheels = list(dist.glob("compile_playground-*.whl"))
    assert len(wheels) == 1, wheels

    target = base / "venv"
    venv.EnvBuilder(with_pip=False, clear=True).create(target)
    python = target / "bin" / "python"
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base, env=env
    ).stdout.strip()
    (Path(purelib) / "reuse_installed_torch.pth").write_text("\n".join(_site_dirs()) + "\n")
    # The tests' pip installs into the fresh venv (--python): no pip of its own needed there.
    install = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", str(wheels[0])],
        cwd=base,
        env=env,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return python, elsewhere, env


def test_the_wheel_holds_the_gallery_and_the_default_snippet(installed):
    python, _, _ = installed
    wheel = next((python.parents[2] / "dist").glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    gallery = sorted(
        p.relative_to(ROOT / "snippets").as_posix()
        for p in (ROOT / "snippets").rglob("*.py")
        if p.name != "__init__.py"
    )
    assert "models/gpt2.py" in gallery
    for name in gallery:
        assert f"playground/snippets/{name}" in names
    assert "tui/app.tcss" in names
    # Every module of the checkout travels: none is left behind by the explicit package list.
    for top in ("playground", "tui"):
        for path in (ROOT / top).rglob("*.py"):
            assert "/".join(path.relative_to(ROOT).parts) in names


def test_installed_wheel_checks_its_default_and_lists_its_gallery(installed):
    python, elsewhere, env = installed
    probe = (
        "import json, playground, tui.files.gallery as f\n"
        "d = playground.snippets_dir()\n"
        "print(json.dumps({'dir': str(d), 'playground': playground.__file__,\n"
        "  'gallery': [e.name for e in f.list_gallery(d)]}))\n"
    )
    found = _run([str(python), "-c", probe], cwd=elsewhere, env=env)
    assert found.returncode == 0, found.stderr[-3000:]
    info = json.loads(found.stdout)
    site = str(python.parents[1])
    assert info["playground"].startswith(site), "the checkout was imported, not the wheel"
    assert info["dir"].startswith(site)
    expected = sorted(p.stem for p in (ROOT / "snippets").glob("*.py") if not p.name.startswith("_"))
    for section in sorted(init.parent for init in (ROOT / "snippets").glob("*/__init__.py")):
        expected += sorted(f"{section.name}/{p.stem}" for p in section.glob("*.py") if p.stem[0] != "_")
    assert info["gallery"] == expected

    default = Path(info["dir"]) / "default.py"
    script = python.parent / "compile-playground"
    argv = [str(script), "check", str(default), "--backend", "eager", "--json", "--no-timing"]
    checked = _run(argv, cwd=elsewhere, env=env)
    assert checked.returncode == 0, checked.stderr[-3000:]
    report = json.loads(checked.stdout)
    assert report["error"] is None
    assert report["snippet"] == str(default)
    assert report["settings"]["backend"] == "eager"
    assert report["graph_count"] >= 1 and report["equivalence"]["ok"] is True


def test_installed_app_start_copies_the_bundled_default(installed):
    """`compile-playground` with no argument makes ./snippet.py from the wheel's default."""
    python, elsewhere, env = installed
    code = "from pathlib import Path; import tui.cli as c; print(c.default_snippet(Path.cwd())[1])"
    made = _run([str(python), "-c", code], cwd=elsewhere, env=env)
    assert made.returncode == 0, made.stderr[-3000:]
    assert "created snippet.py" in made.stdout
    assert (elsewhere / "snippet.py").read_bytes() == (ROOT / "snippets" / "default.py").read_bytes()
