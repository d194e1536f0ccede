"""Document links: every resolvable `[[link]]` and `![[asset]]` becomes a clickable target."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from lsprotocol import types

from .conftest import Session
from .nav_helpers import covered, doc, request


async def links(session: Session, uri: str) -> Optional[Sequence[types.DocumentLink]]:
    return await request(
        session.client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=doc(uri))
        )
    )


def described(
    session: Session, text: str, found: Optional[Sequence[types.DocumentLink]]
) -> List[Tuple[str, str]]:
    assert found is not None
    return [
        (covered(session, text, link.range), (link.target or "").rsplit("/", 1)[-1])
        for link in found
    ]


async def test_resolvable_links_only(shared: Session) -> None:
    page = shared.page("auth.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    found = await links(shared, uri)
    assert described(shared, text, found) == [
        ("[[sessions]]", "sessions.md"),
        ("[[legacy-auth]]", "legacy-auth.md"),
        ("[[sessions#Token lifetime]]", "sessions.md#L13"),
        ("[[sessions#^rotation]]", "sessions.md#L15"),
        # The heading is missing, but the page exists: the link opens the page.
        ("[[sessions#No such heading]]", "sessions.md"),
        ("![[diagram.png]]", "diagram.png"),
    ]
    assert found is not None
    assert found[0].target is not None
    assert found[0].target == shared.page("sessions.md").resolve().as_uri()
    if shared.kind == "visual_studio_code":  # Neovim does not show tooltips
        assert found[0].tooltip == "Session storage, token lifetime and rotation."
        assert found[-1].tooltip == "assets/diagram.png"
    else:
        assert found[0].tooltip is None


async def test_links_after_non_ascii_text_and_in_unsaved_buffers(shared: Session) -> None:
    page = shared.page("tokens.md")
    text = page.read_text(encoding="utf-8")
    uri = shared.open(page)
    found = described(shared, text, await links(shared, uri))
    assert found[0] == ("[[sessions|the session page]]", "sessions.md")
    assert ("[[Sessions#token lifetime]]", "sessions.md#L13") in found
    assert ("[[pages/auth.md]]", "auth.md") in found
    # The unsaved buffer moves every link and swaps one for another that the disk does not hold:
    # links read from the disk would cover the wrong text and miss [[legacy-auth]].
    edited = "Unsaved [[legacy-auth]] line.\n" + text.replace(
        "[[pages/auth.md]]", "[[missing-one]]"
    )
    shared.replace(uri, edited)
    found = described(shared, edited, await links(shared, uri))
    assert found[0] == ("[[legacy-auth]]", "legacy-auth.md")
    assert found[1] == ("[[sessions|the session page]]", "sessions.md")
    assert all(name != "[[missing-one]]" for name, _target in found)
    assert [target for _name, target in found].count("auth.md") == 0
    assert all(name.startswith(("[[", "![[")) and name.endswith("]]") for name, _t in found)


async def test_no_links_for_unknown_documents(shared: Session) -> None:
    assert not await links(shared, shared.page("nowhere.md").resolve().as_uri())
    assert not await links(shared, "untitled:Untitled-1")
