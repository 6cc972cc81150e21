"""Build the ROS 2 interface packages neurok_interfaces/ and, where the venv lacks it,
third_party_interfaces/tf2_msgs/ into a virtualenv (`make setup` runs it).

    <venv>/bin/python scripts/build_interfaces.py [--venv VENV] [--jobs N] [--force]

1. installs the build-only wheels pinned in requirements-interfaces.txt (ament_cmake, the rosidl
   generators, catkin_pkg; the message packages' run-time wheels come from requirements.txt);
2. rewrites the build machine's paths that the ros-* wheels' CMake exports hold
   (/opt/python/cp311-cp311/...: CMake refuses targets whose include directories do not exist) to
   this interpreter's Python and numpy include directories;
3. configures, builds and installs each package with cmake + make into the venv prefix: the
   Python package into <venv>/lib/python3.X/site-packages, the typesupport libraries into <venv>/lib
   next to the ros-* wheels' own, where the venv's interpreter finds them (the ros-wheels-bootstrapper
   .pth that rclpy installs puts <venv>/lib on LD_LIBRARY_PATH at start-up), the ament index entries
   into <venv>/share/ament_index;
4. checks that the venv's interpreter imports the messages (TFMessage too) and the action with their typesupport,
   and writes the stamp <venv>/.neurok_interfaces.stamp (the Makefile's target). With the same sources,
   requirements and interpreter a second run returns in a second (the build folders
   <venv>/build/<package> are kept for incremental rebuilds).

The packages: neurok_interfaces (always) and tf2_msgs (TFMessage only, the type of /tf: no tf2_msgs
wheel exists). tf2_msgs is skipped when the venv's interpreter (without a sourced ROS environment, as
everything here) already imports tf2_msgs.msg from elsewhere than this script's own earlier install:
a ROS installation or wheel then provides the real package.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "neurok_interfaces"
SOURCE = ROOT / PACKAGE
TF2_MSGS = "tf2_msgs"  # built only where the venv cannot import it (see the module docstring)
TF2_SOURCE = ROOT / "third_party_interfaces" / TF2_MSGS
TF2_MARKER = "for neurok_ros virtualenvs"  # in its package.xml's description: tells our install from a real one
REQUIREMENTS = ROOT / "requirements-interfaces.txt"
RUNTIME_REQUIREMENTS = ROOT / "requirements.txt"  # the message packages' and rclpy's wheels
WHEEL_PYTHON = "/opt/python/cp311-cp311"  # where the ros-* wheels were built
STAMP_NAME = f".{PACKAGE}.stamp"
CHECK = (f"import {PACKAGE}.msg as m, {PACKAGE}.action as a; "
         "from rclpy.type_support import check_for_type_support as c; "
         "[c(t) for t in (m.Joint, m.Articulation, a.PredictMotion)]; "
         "a.PredictMotion.Goal(); m.Articulation(joints=[m.Joint()]); "
         "import tf2_msgs.msg as t; c(t.TFMessage); t.TFMessage(transforms=[]); print(m.__file__)")
PROVIDED = f"import {TF2_MSGS}.msg as t; print(t.__file__)"


def _log(text: str) -> None:
    print(f"[build_interfaces] {text}", flush=True)


def _inputs_digest(python: Path) -> str:
    """SHA-256 of everything the build depends on: the packages' sources, both pinned requirements
    files, this script and the interpreter's version."""
    digest = hashlib.sha256()
    files = sorted(p for source in (SOURCE, TF2_SOURCE) for p in source.rglob("*") if p.is_file())
    files += [REQUIREMENTS, RUNTIME_REQUIREMENTS, Path(__file__).resolve()]
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    version = subprocess.run([str(python), "-c", "import sys; print(sys.version)"], check=True, capture_output=True,
                             text=True).stdout
    digest.update(version.encode())
    return digest.hexdigest()


def _venv_paths(python: Path) -> dict:
    """The venv interpreter's prefix, site-packages, Python include and numpy include directories."""
    probe = ("import sys, sysconfig, numpy; print(sys.prefix); print(sysconfig.get_paths()['purelib']); "
             "print(sysconfig.get_paths()['include']); print(numpy.get_include())")
    lines = subprocess.run([str(python), "-c", probe], check=True, capture_output=True, text=True).stdout.splitlines()
    return dict(zip(("prefix", "site", "include", "numpy"), lines[-4:]))


def rewrite_wheel_paths(prefix: Path, python_include: str, numpy_include: str) -> list[Path]:
    """Replace the wheels' build-machine paths in <prefix>/share/**/cmake/*.cmake; returns the files changed."""
    replacements = [(f"{WHEEL_PYTHON}/lib/python3.11/site-packages/numpy/_core/include", numpy_include),
                    (f"{WHEEL_PYTHON}/include/python3.11", python_include)]
    changed = []
    for path in sorted((prefix / "share").glob("*/cmake/*.cmake")):
        text = path.read_text()
        if WHEEL_PYTHON not in text:
            continue
        new = text
        for old, value in replacements:
            new = new.replace(old, value)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def _run(command: list, env: dict, what: str) -> None:
    started = time.monotonic()
    result = subprocess.run([str(c) for c in command], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-20000:])
        raise SystemExit(f"[build_interfaces] {what} failed (exit {result.returncode}); output above")
    _log(f"{what}: {time.monotonic() - started:.0f} s")


def _clean_env() -> dict:
    """The user's environment without a ROS 2 installation's variables, so that only the venv is used."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH", "COLCON_PREFIX_PATH", "PYTHONPATH", "ROS_DISTRO",
                        "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    return env


def _tf2_msgs_elsewhere(python: Path, prefix: Path, env: dict) -> str | None:
    """Where the venv's interpreter imports tf2_msgs.msg from when that is not this script's own
    install (a ROS installation's or a wheel's real package); None when it must be built. Ours is
    the one in the venv prefix whose installed package.xml is third_party_interfaces/tf2_msgs's
    (its description names neurok_ros)."""
    probe = subprocess.run([str(python), "-c", PROVIDED], env=env, capture_output=True, text=True, cwd="/")
    if probe.returncode != 0:
        return None
    where = Path(probe.stdout.strip().splitlines()[-1]).resolve()
    installed = prefix / "share" / TF2_MSGS / "package.xml"
    ours = (where.is_relative_to(prefix.resolve()) and installed.is_file()
            and TF2_MARKER in installed.read_text())
    return None if ours else str(where)


def _build(source: Path, build: Path, prefix: Path, python: Path, jobs: int, env: dict) -> float:
    """cmake configure, build and install one package; returns the seconds it took."""
    started = time.monotonic()
    build.mkdir(parents=True, exist_ok=True)
    name = source.name
    _run(["cmake", "-S", source, "-B", build, "-G", "Unix Makefiles", f"-DCMAKE_INSTALL_PREFIX={prefix}",
          f"-DCMAKE_PREFIX_PATH={prefix}", f"-DPython3_EXECUTABLE={python}", "-DCMAKE_BUILD_TYPE=Release",
          "-DBUILD_TESTING=OFF"], env, f"{name}: cmake configure")
    _run(["cmake", "--build", build, "--", f"-j{max(1, jobs)}"], env, f"{name}: make")
    _run(["cmake", "--install", build], env, f"{name}: make install")
    return time.monotonic() - started


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", default=sys.prefix, help="the virtualenv to build into (default: this interpreter's)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compile jobs")
    parser.add_argument("--force", action="store_true", help="build even when the stamp says it is up to date")
    args = parser.parse_args(argv)

    venv = Path(args.venv).absolute()
    python = venv / "bin" / "python"
    stamp = venv / STAMP_NAME
    digest = _inputs_digest(python)
    env = _clean_env()
    if not args.force and stamp.is_file() and stamp.read_text().strip() == digest:
        check = subprocess.run([str(python), "-c", CHECK], env=env, capture_output=True, text=True, cwd="/")
        if check.returncode == 0:
            stamp.touch()  # newer than its inputs again, for make
            _log(f"{PACKAGE} and {TF2_MSGS} are up to date in {venv}")
            return 0
    started = time.monotonic()
    stamp.unlink(missing_ok=True)

    _run([python, "-m", "pip", "install", "-q", "-r", REQUIREMENTS], env, "pip install -r requirements-interfaces.txt")
    paths = _venv_paths(python)
    prefix = Path(paths["prefix"])
    changed = rewrite_wheel_paths(prefix, paths["include"], paths["numpy"])
    _log(f"rewrote {WHEEL_PYTHON} in {len(changed)} CMake files")

    sources = [SOURCE]
    elsewhere = _tf2_msgs_elsewhere(python, prefix, _clean_env())
    if elsewhere:
        _log(f"{TF2_MSGS} is provided by {elsewhere}: not building {TF2_SOURCE.relative_to(ROOT)}")
    else:
        sources.append(TF2_SOURCE)
    env.update(AMENT_PREFIX_PATH=str(prefix), CMAKE_PREFIX_PATH=str(prefix),
               PATH=os.pathsep.join([str(venv / "bin"), env.get("PATH", "")]))
    for source in sources:
        seconds = _build(source, venv / "build" / source.name, prefix, python, args.jobs, env)
        _log(f"{source.name}: built and installed in {seconds:.0f} s")

    check = subprocess.run([str(python), "-c", CHECK], env=_clean_env(), capture_output=True, text=True, cwd="/")
    if check.returncode != 0:
        sys.stdout.write(check.stdout + check.stderr)
        raise SystemExit(f"[build_interfaces] the venv's python cannot import {PACKAGE} or {TF2_MSGS}; output above")
    stamp.write_text(digest + "\n")
    _log(f"built and installed {', '.join(s.name for s in sources)} into {prefix} in "
         f"{time.monotonic() - started:.0f} s ({check.stdout.strip().splitlines()[-1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
