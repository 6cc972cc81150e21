"""Every relative link in the user-facing Markdown pages points at a file that exists.

Checked pages: README.md, docs/*.md and msg/README.md. A link is `[text](target)` or
`![alt](target)` (and a reference definition `[label]: target`); web links (any `scheme:`) and
links to an anchor of the same page (`#...`) are skipped, and a `#fragment` is stripped from the
rest. Links inside fenced code blocks and inline code spans are not links. Targets resolve relative
to the page that holds them.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+[\"'(][^)]*)?\s*\)")
REFERENCE = re.compile(r"^[ \t]{0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)", re.MULTILINE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def pages() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "msg" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [page for page in found if page.is_file()]


def relative_targets(markdown: str) -> list[str]:
    """The relative link targets of a Markdown text, fragments stripped, in order."""
    text = FENCE.sub("", markdown)
    text = INLINE_CODE.sub("", text)
    targets = []
    for match in [*INLINE_LINK.finditer(text), *REFERENCE.finditer(text)]:
        target = match.group(1).strip("<>").strip()
        if not target or target.startswith("#") or SCHEME.match(target):
            continue
        target = target.split("#", 1)[0]
        if target:
            targets.append(target)
    return targets


def test_link_extraction_skips_web_links_anchors_and_code():
    text = (
        "See [the model](docs/model.md#pruned-starts) and ![a picture](figures/a.png \"title\").\n"
        "[web](https://example.org/x.md), [plain web](http://example.org), [anchor](#limits),\n"
        "[mail](mailto:someone@example.org), `[not a link](code.md)`.\n"
        "```\n[also not](fenced.md)\n```\n"
        "[ref]: ../msg/README.md\n"
        "Options such as `neurok ik [--json]` and [--fits K] are text.\n"
    )
    assert relative_targets(text) == ["docs/model.md", "figures/a.png", "../msg/README.md"]


def test_the_checked_pages_have_links():
    """The check is not vacuous: the README and the docs link to each other and show pictures."""
    assert (ROOT / "README.md").is_file()
    readme = relative_targets((ROOT / "README.md").read_text(encoding="utf-8"))
    assert any(target.endswith(".png") or target.endswith(".gif") for target in readme)
    assert sum(len(relative_targets(page.read_text(encoding="utf-8"))) for page in pages()) >= 20


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path):
    broken = [target for target in relative_targets(page.read_text(encoding="utf-8"))
              if not (page.parent / target).exists()]
    assert not broken, f"{page.relative_to(ROOT)}: links to missing files: {broken}"
