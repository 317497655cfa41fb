"""The fleet definition reference (fluxplane.config.reference), made from the models so it cannot drift from them."""

from __future__ import annotations

from fluxplane.config import apps, models
from fluxplane.config.reference import SECTIONS, field_rows, html_escaped, markdown, markdown_cell


def test_a_model_s_rows_are_its_fields_with_type_default_and_description() -> None:
    # GIVEN a model with a required field, a defaulted field and an enumerated field
    # WHEN its rows are made THEN one per field, in declaration order, as the page shows them
    assert field_rows(models.Taint) == [
        ("key", "string", "**required**", "Taint key."),
        ("value", "string", '`""`', "Taint value."),
        ("effect", "one of `NoSchedule`, `PreferNoSchedule`, `NoExecute`", "**required**", "Taint effect."),
    ]
    # AND without quoting, as the command prints them
    assert field_rows(models.Taint, quote=False)[2] == (
        "effect",
        "one of NoSchedule, PreferNoSchedule, NoExecute",
        "required",
        "Taint effect.",
    )


def test_a_field_users_do_not_write_is_left_out() -> None:
    # an app's name is its file's name
    assert "name" not in [key for key, _, _, _ in field_rows(apps.App)]


def test_a_placeholder_outside_code_shows_on_the_page() -> None:
    assert html_escaped("environments/<env>.yaml, `<kept>`") == "environments/&lt;env>.yaml, `<kept>`"
    assert markdown_cell("a | b <c>") == "a \\| b &lt;c>"


def test_the_page_has_one_table_per_model_in_reading_order() -> None:
    page = markdown()
    headings = [line.removeprefix("#### ") for line in page.splitlines() if line.startswith("#### ")]
    assert headings == [heading for _, heading, _ in SECTIONS]
    assert "| `effect` | one of `NoSchedule`, `PreferNoSchedule`, `NoExecute` | **required** | Taint effect. |" in page
