"""The package's modules import one another without a cycle.

The graph is read from the source with `ast`: every `import neurok_ros...` and `from neurok_ros...
import ...` (relative ones too) anywhere in a module, inside functions included, is an edge to the
module it names (`from package import name`: package.name when that is a module, else package).
Importing a module runs its packages' __init__ first, but that is not an edge here: every package
whose __init__ imports its own modules would otherwise be a cycle.
"""
import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[1] / "neurok_ros"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """{dotted module name: file} of every .py file under package (a package is its __init__.py)."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, source: str, modules: set[str], is_package: bool = False) -> set[str]:
    """The modules of `modules` that module `name` (its source text; a package's __init__ when
    is_package) imports, at any level."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                if target in modules:
                    found.add(target)
    return found - {name}


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """{module: the modules of files it imports}."""
    names = set(files)
    return {name: imported_modules(name, path.read_text(), names, path.name == "__init__.py")
            for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as [a, b, ..., a], or None (depth-first, in sorted order)."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if target in path:
                return path[path.index(target):] + [target]
            if target not in done:
                found = visit(target)
                if found:
                    return found
        done.add(node)
        path.pop()
        return None

    for node in sorted(graph):
        if node not in done:
            found = visit(node)
            if found:
                return found
    return None


def test_the_package_imports_without_a_cycle():
    files = module_files()
    graph = import_graph(files)
    assert len(graph) > 100 and "neurok_ros.kinematics.inverse_kinematics" in graph
    # the graph sees imports inside functions: the CLI's heavy imports all are
    assert "neurok_ros.kinematics.joints_first_ik" in graph["neurok_ros.cli.ik_command"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_graph_reads_every_kind_of_import_and_finds_a_cycle():
    modules = {"p", "p.a", "p.b", "p.c", "p.sub", "p.sub.d"}
    source = """
import p.b
from p import c
from p.sub import d
from .. import a

def later():
    from .d import thing
    import numpy
"""
    assert imported_modules("p.sub.e", source, modules) == {"p.a", "p.b", "p.c", "p.sub.d"}
    assert imported_modules("p.a", "from p import VERSION\nfrom p.sub.d import thing", modules) == {"p", "p.sub.d"}
    assert imported_modules("p.sub", "from . import d\nfrom .. import a", modules, is_package=True) == {"p.sub.d",
                                                                                                      "p.a"}
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"b", "d"}, "d": set()}) == ["b", "c", "b"]
    assert find_cycle({"x": {"x2"}, "x2": {"x"}}) == ["x", "x2", "x"]
