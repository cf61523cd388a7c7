"""The docs as a reader meets them: the README opens with the two commands and stays a few screens,
every relative link and `#anchor` in README.md and docs/*.md resolves to a file or a heading (by
GitHub's anchor rules), external links are well formed, and the docs say what is, not when it
changed: history lives in commit messages."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

#: What a diary writes and a user's document does not: an issue number, a round, a re-measurement,
#: what was tried and dropped, a date. Case-insensitive, so "Issue 12" and "(issue 12)" count too.
HISTORY = re.compile(
    r"issue [0-9]"
    r"|\b(this|last|next|previous) round\b"
    r"|\bround (one|two|three|four|five|[0-9]+)\b"
    r"|\bbefore this (change|round)\b"
    r"|\bre-measured\b"
    r"|\btried and dropped\b"
    r"|\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b",
    re.IGNORECASE,
)

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
#: Inline code, which may wrap onto the next line but never crosses a blank one.
CODE_SPAN = re.compile(r"(`+)((?:(?!\n[ \t]*\n).)+?)\1", re.DOTALL)
#: [text](dest "title") and ![alt](dest): the text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s()]+)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)", re.MULTILINE)
AUTOLINK = re.compile(r"<((?:https?|mailto):[^\s>]+)>")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]*)\"", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:name|id)=\"([^\"]*)\"", re.IGNORECASE)
#: A line anchor on a source file, as GitHub's file view takes it.
LINE_ANCHOR = re.compile(r"^L\d+(-L\d+)?$")


@dataclass(frozen=True)
class Link:
    doc: Path
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}: {self.target}"


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1: where links and headings live."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                if not line.strip().lstrip(fence[0]):
                    fence = None
        else:
            out.append((number, line))
    return out


def without_code_spans(line: str) -> str:
    """The line with its inline code blanked: a `[x](y)` inside backticks is not a link."""
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def heading_text(raw: str) -> str:
    """A heading's text as GitHub renders it: code spans keep their content, links their text,
    emphasis and HTML tags go."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), raw)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\*+|~~|(?<!\w)_+|_+(?!\w)", "", text)
    return text.strip()


def slug(text: str) -> str:
    """GitHub's anchor for a heading (github-slugger): lower case, every character but letters,
    marks, numbers, `_`, `-` and spaces dropped, each space a hyphen."""
    kept = "".join(ch for ch in text.lower() if ch in " -_" or unicodedata.category(ch)[0] in ("L", "M", "N"))
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every `#anchor` a Markdown file offers: its headings' slugs (a repeated one gets -1, -2…,
    as GitHub numbers them) and explicit `<a name=…>`/`id=…` anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    lines = prose_lines(text)
    previous: tuple[int, str] | None = None
    for number, line in lines:
        title: str | None = None
        heading = ATX_HEADING.match(line)
        if heading:
            title = heading.group(1) or ""
        elif (
            SETEXT_UNDERLINE.match(line)
            and previous is not None
            and previous[0] == number - 1
            and previous[1].strip()
            and not re.match(r"^ {0,3}([|>#*+-]|\d+[.)])", previous[1])
        ):
            title = previous[1]
        if title is not None:
            base = slug(heading_text(title))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(m.group(1) for m in HTML_ANCHOR.finditer(line))
        previous = (number, line)
    return found


def links(doc: Path) -> list[Link]:
    """Every link target in a Markdown file: inline links and images (whose text may wrap onto the
    next line), reference definitions, autolinks and HTML href/src, outside code."""
    text = doc.read_text()
    lines = [""] * len(text.splitlines())
    for number, line in prose_lines(text):
        lines[number - 1] = line
    prose = without_code_spans("\n".join(lines))
    found = [
        (m.start(1), m.group(1))
        for pattern in (INLINE_LINK, REFERENCE_DEFINITION, AUTOLINK, HTML_LINK)
        for m in pattern.finditer(prose)
    ]
    return [Link(doc, prose.count("\n", 0, at) + 1, t[1:-1] if t.startswith("<") else t) for at, t in sorted(found)]


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target))


def problem(link: Link, root: Path = ROOT) -> str | None:
    """Why a relative link does not resolve, or None when it does."""
    path_part, _, anchor = link.target.partition("#")
    path_part = unquote(path_part)
    if not path_part:
        target = link.doc
    elif path_part.startswith("/"):
        target = root / path_part.lstrip("/")
    else:
        target = link.doc.parent / path_part
    target = target.resolve()
    if not target.is_relative_to(root):
        return "points outside the repository"
    if not target.exists():
        return f"no such file: {target.relative_to(root)}"
    if not anchor:
        return None
    anchor = unquote(anchor)
    if target.suffix == ".md":
        if anchor not in anchors(target.read_text()):
            return f"no heading #{anchor} in {target.relative_to(root)}"
        return None
    if target.is_file() and LINE_ANCHOR.match(anchor):
        return None
    return f"#{anchor} on a file that has no headings"


def external_problem(target: str) -> str | None:
    """Why an external link is malformed (only its form is checked: no network)."""
    parts = urlsplit(target)
    if parts.scheme == "mailto":
        return None if re.match(r"^[^@\s]+@[^@\s]+$", parts.path) else "not an address"
    if parts.scheme not in ("http", "https"):
        return f"scheme {parts.scheme!r}: only http, https and mailto"
    if not parts.netloc or "." not in parts.netloc or re.search(r"\s", target):
        return "no host"
    return None


def doc_id(doc: Path) -> str:
    return str(doc.relative_to(ROOT))


# --- the checker itself: what it takes for a heading and a link --------------------------------


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Running it for a room: present, follow, serve, limits", "running-it-for-a-room-present-follow-serve-limits"),
        ("Step 3. `.item()`: a break, a guard, or an error (6 min)", "step-3-item-a-break-a-guard-or-an-error-6-min"),
        ("The 2.14.1 stage", "the-2141-stage"),
        ("keypress -> repaint", "keypress---repaint"),
        ("**Bold** and [a link](x.md) × 2", "bold-and-a-link--2"),
        ("snake_case_name", "snake_case_name"),
    ],
)
def test_a_heading_gets_githubs_anchor(heading: str, expected: str):
    assert slug(heading_text(heading)) == expected


def test_repeated_headings_and_code_blocks_are_counted_as_github_counts_them():
    text = "# Step\n\n## Step\n\n```\n# not a heading\n```\n\nSetext\n------\n\n## Step\n"
    assert anchors(text) == {"step", "step-1", "step-2", "setext"}


def test_the_checker_finds_a_broken_link_and_a_missing_anchor(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Here\n")
    doc = tmp_path / "README.md"
    doc.write_text(
        "[ok](docs/a.md#here) [gone](docs/b.md) [no heading](docs/a.md#there) [self\n"
        "wrapped](#nowhere) `code that\nwraps [x](docs/c.md)`\n"
        "`[in code](docs/b.md)`\n\n```\n[in a block](docs/b.md)\n```\n"
    )
    found = {link.target: problem(link, root=tmp_path) for link in links(doc)}
    assert found == {
        "docs/a.md#here": None,
        "docs/b.md": "no such file: docs/b.md",
        "docs/a.md#there": "no heading #there in docs/a.md",
        "#nowhere": "no heading #nowhere in README.md",
    }
    assert problem(Link(doc, 1, "../outside.md"), root=tmp_path) == "points outside the repository"


@pytest.mark.parametrize(
    ("line", "flagged"),
    [
        ("the heading (issue 12)", True),
        ("Re-measured on the next round's code", True),
        ("Before this round's change", True),
        ("round two of the speedups", True),
        ("Tried and dropped: both stages at once", True),
        ("a diary entry of 2026-12-03", True),
        ("rounds alternating which goes first, within rounding", False),
        ("github.com/pytorch/pytorch/issues/12345", False),
    ],
)
def test_the_history_check_knows_a_diary_from_a_document(line: str, flagged: bool):
    assert bool(HISTORY.search(line)) is flagged


# --- the docs ------------------------------------------------------------------------------------


def test_the_readme_opens_with_the_two_commands_and_stays_a_few_screens():
    text = (ROOT / "README.md").read_text()
    opening = text.split("```")[1].splitlines()
    assert opening[0] == "sh"
    assert [line.split("#")[0].strip() for line in opening[1:]] == ["make run", "make test"]
    assert len(text.splitlines()) <= 300


def test_every_doc_is_reached_from_the_readme():
    reached = {
        (link.doc.parent / unquote(link.target.partition("#")[0])).resolve()
        for link in links(ROOT / "README.md")
        if not is_external(link.target) and link.target.partition("#")[0]
    }
    assert [doc_id(d) for d in DOCS[1:] if d.resolve() not in reached] == []


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_every_relative_link_and_anchor_resolves(doc: Path):
    relative = [link for link in links(doc) if not is_external(link.target)]
    assert [f"{link}: {why}" for link in relative if (why := problem(link))] == []


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_external_links_are_well_formed(doc: Path):
    external = [link for link in links(doc) if is_external(link.target)]
    assert [f"{link}: {why}" for link in external if (why := external_problem(link.target))] == []


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_the_docs_say_what_is_not_when_it_changed(doc: Path):
    lines = doc.read_text().splitlines()
    diary = [f"{doc_id(doc)}:{n}: {line.strip()}" for n, line in enumerate(lines, 1) if HISTORY.search(line)]
    assert diary == []


#: The code's comments and docstrings, and pyproject.toml's, say why the code is as it is today:
#: which change made it so is the commit message's to say.
CODE = (
    *sorted((ROOT / "playground").rglob("*.py")),
    *sorted((ROOT / "tui").rglob("*.py")),
    *sorted((ROOT / "tui").rglob("*.tcss")),
    ROOT / "pyproject.toml",
)


def test_the_code_says_why_it_is_so_not_which_change_made_it():
    pattern = re.compile(r"issue [0-9]|(this|last|next) round", re.IGNORECASE)
    diary = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in CODE
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert diary == []
