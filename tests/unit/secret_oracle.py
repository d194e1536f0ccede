"""The secret scanner as it was written first, one regular expression per shape: the oracle for
the findings of the linear scanner. It is slow on long runs (an expression restarts at every
prefix inside a run), so the tests give it short texts only."""

from __future__ import annotations

import re
from typing import Iterator, List, Tuple

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
SECRET_PATTERNS: Tuple[Tuple[str, str], ...] = (
    ("private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("AWS access key ID", r"A(?:KIA|SIA|BIA|CCA)(?<!\w.{4})[0-9A-Z]{16}\b"),
    (
        "AWS secret access key",
        r"(?i:aws_?secret_?access_?key)[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<value>(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    ),
    ("Azure storage account key", r"AccountKey=[A-Za-z0-9+/]{86}=="),
    ("GitHub token", r"gh[pousr]_(?<!\w.{4})[A-Za-z0-9]{36,255}\b"),
    ("GitHub fine-grained token", r"github_pat_(?<!\w.{11})[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b"),
    ("GitLab token", r"gl(?<!\w..)(?:pat|dt|ptt|rt|cbt|oas)-[A-Za-z0-9_-]{20,}\b"),
    ("Slack token", r"xox(?<!\w...)[abposr]-[0-9]+-(?:[0-9A-Za-z]+-){0,3}[0-9A-Za-z]{6,}\b"),
    (
        "Slack webhook",
        r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
    ),
    ("Stripe key", r"sk_(?<!\w...)(?:live|test)_[0-9A-Za-z]{16,}\b"),
    ("Stripe key", r"rk_(?<!\w...)(?:live|test)_[0-9A-Za-z]{16,}\b"),
    ("npm token", r"npm_(?<!\w....)[A-Za-z0-9]{36}\b"),
    ("PyPI token", r"pypi-(?<!\w.{5})AgE[A-Za-z0-9_-]{50,}"),
    ("Hugging Face token", r"hf_(?<!\w...)[A-Za-z]{34}\b"),
    ("Google API key", r"AIza(?<!\w....)[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    ("SendGrid API key", r"SG\.(?<!\w...)[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![\w-])"),
    (
        "Discord bot token",
        r"[MNO](?<![\w-].)[A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![\w-])",
    ),
    ("Telegram bot token", r"(?<![\w:])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])"),
    ("Twilio key", r"SK(?<!\w..)[0-9a-fA-F]{32}(?![0-9A-Za-z_])"),
    ("Twilio key", r"AC(?<!\w..)[0-9a-f]{32}(?![0-9A-Za-z_])"),
    ("Heroku API key", r"HRKU-(?<!\w.{5})[A-Za-z0-9_-]{60,}"),
    (
        "Heroku API key",
        r"(?i:heroku)[A-Za-z_-]{0,20}(?i:key|token)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>"
        + _UUID
        + r")\b",
    ),
    ("Anthropic API key", r"sk-ant-(?<!\w.{7})[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{20,}"),
    ("API key (sk-)", r"sk-(?<!\w...)(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}"),
    ("API key (sk-)", r"sk-(?<!\w...)[A-Za-z0-9]{32,}(?![\w-])"),
    (
        "JSON Web Token",
        r"eyJ(?<!\w...)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}",
    ),
    (
        "credential URI",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'\"<>]{1,64}:[^\s/@'\"<>]{1,128}@[^\s/@'\"<>]+",
    ),
)
_URI_SCHEME_MAX = 21
_AWS_PAIR_REACH = 200
_AWS_SECRET = r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
_MIXED_KINDS = ("API key (sk-)", "Discord bot token", "AWS secret access key")
_PLACEHOLDER_WORDS = ("example", "xxxx", "placeholder", "your_", "your-", "redacted", "<", "${")
_PLACEHOLDER_PASSWORDS = ("password", "pass", "passwd", "secret", "changeme", "***", "pwd")


def _looks_like_placeholder(value: str) -> bool:
    lowered = value.lower()
    return any(word in lowered for word in _PLACEHOLDER_WORDS)


def _mixes_classes(value: str) -> bool:
    return (
        any(ch.isupper() for ch in value)
        and any(ch.islower() for ch in value)
        and any(ch.isdigit() for ch in value)
    )


def matches(kind: str, pattern: str, text: str) -> Iterator[re.Match]:
    """What `re.finditer(pattern, text)` gives; a credential URI is tried only near `://`."""
    compiled = re.compile(pattern)
    if kind != "credential URI":
        yield from compiled.finditer(text)
        return
    position = 0
    while True:
        found = text.find("://", position)
        if found < 0:
            return
        for start in range(max(position, found - _URI_SCHEME_MAX), found - 1):
            match = compiled.match(text, start)
            if match is not None:
                yield match
                position = match.end()
                break
        else:
            position = found + 1


def _is_secret_value(kind: str, value: str) -> bool:
    if kind == "credential URI":
        password = value.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
        return not _looks_like_placeholder(password) and password not in _PLACEHOLDER_PASSWORDS
    if _looks_like_placeholder(value):
        return False
    if kind in _MIXED_KINDS:
        tail = value.rsplit(".", 1)[-1] if kind == "Discord bot token" else value
        if kind == "AWS secret access key":
            tail = value[-40:]
        return _mixes_classes(tail)
    return True


def spans(text: str) -> List[Tuple[str, int, int]]:
    """(kind, start, end) of every credential-shaped string, in text order."""
    found: List[Tuple[str, int, int]] = []
    for kind, pattern in SECRET_PATTERNS:
        for match in matches(kind, pattern, text):
            part = "value" if match.re.groupindex else 0
            start, end = match.span(part)
            if any(start < e and s < end for _k, s, e in found):
                continue
            if not _is_secret_value(kind, match.group(part)):
                continue
            found.append((kind, start, end))
    _add_aws_pairs(text, found)
    found.sort(key=lambda span: span[1])
    return found


def _add_aws_pairs(text: str, found: List[Tuple[str, int, int]]) -> None:
    pattern = re.compile(_AWS_SECRET)
    for kind, start, end in list(found):
        if kind != "AWS access key ID":
            continue
        low = max(0, start - _AWS_PAIR_REACH)
        for match in pattern.finditer(text, low, min(len(text), end + _AWS_PAIR_REACH)):
            s, e = match.span()
            if any(s < taken_end and taken_start < e for _k, taken_start, taken_end in found):
                continue
            if _is_secret_value("AWS secret access key", match.group(0)):
                found.append(("AWS secret access key", s, e))
