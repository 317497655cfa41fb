"""fluxplane.config.cdk8s_charts: the project's charts found in charts/, before any of their code runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fluxplane.config.cdk8s_charts import find_cdk8s_charts


@pytest.mark.parametrize(
    "link",
    [
        "_lib/x.py",
        "_lib/__init__.py",
        "_lib/data.yaml",
        "_lib/deeper/more/x.py",
        "_lib/deeper",
        "_lib/.hidden.py",
    ],
)
def test_a_symbolic_link_at_any_depth_below_charts_is_refused(tmp_path: Path, link: str) -> None:
    # GIVEN a chart whose helper package holds a symbolic link (a module, its __init__.py, a file it reads,
    # a folder, at any depth) to something outside the project
    root = tmp_path / "project"
    (root / "charts" / "_lib").mkdir(parents=True)
    (root / "charts" / "_lib" / "__init__.py").write_text("")
    (root / "charts" / "quota.py").write_text("from charts._lib import x\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.py").write_text("print('ran')\n")
    target = root / "charts" / link
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    os.symlink(outside if link == "_lib/deeper" else outside / "x.py", target)
    # WHEN the charts are found THEN the link is named, with its path in the project
    found, problems = find_cdk8s_charts(root, lambda path: path.relative_to(root).as_posix())
    assert problems == [f"charts/{link}: a symbolic link; charts/ holds the project's own files"]
    assert found == {"quota": root / "charts" / "quota.py"}


def test_a_project_without_links_has_no_problems(tmp_path: Path) -> None:
    (tmp_path / "charts" / "_lib" / "deeper").mkdir(parents=True)
    (tmp_path / "charts" / "_lib" / "deeper" / "x.py").write_text("")
    (tmp_path / "charts" / "quota.py").write_text("")
    assert find_cdk8s_charts(tmp_path, lambda path: path.relative_to(tmp_path).as_posix()) == (
        {"quota": tmp_path / "charts" / "quota.py"},
        [],
    )
