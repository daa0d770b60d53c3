"""The documentation: the site builds with `mkdocs build --strict` (a broken link, a missing anchor
or picture, a page left out of the nav fails it; see mkdocs.yml's validation), and the README stays
a short front page that links every page of the site. Neither test needs a Neo4j server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README_MAX_LINES = 200


def test_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"mkdocs build --strict failed (exit {proc.returncode}):\n{output}"
    assert (tmp_path / "site" / "index.html").is_file(), output


def _readme_doc_links(text: str) -> set[str]:
    """Paths under docs/ that README's Markdown links and images point at (anchors dropped)."""
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return {t.split("#", 1)[0] for t in targets if t.startswith("docs/")}


def test_readme_is_short_and_links_the_docs() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; at most {README_MAX_LINES} (move the rest to docs/)"

    links = _readme_doc_links(text)
    missing = sorted(link for link in links if not (REPO / link).exists())
    assert not missing, f"README.md links docs files that do not exist: {missing}"

    # Every page of the site (and each docs/ path the README names in code) is linked from it.
    pages = {p.relative_to(REPO).as_posix() for p in DOCS.rglob("*.md")}
    unlinked = sorted(pages - links)
    assert not unlinked, f"README.md does not link these docs pages: {unlinked}"
    named = set(re.findall(r"`(docs/[^`\s]+\.md)`", text))
    assert named <= pages | links, f"README.md names docs pages that do not exist: {sorted(named - pages)}"
