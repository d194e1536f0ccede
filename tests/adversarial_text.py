"""Adversarial texts for the scanners and parsers that read untrusted text.

For each credential shape and each Markdown or frontmatter construct: its prefix repeated, a run
without its terminator, its separators repeated. Each text is a function of the length wanted,
so that the tests (which count the work) and `bench/scanner_bench.py` (which times it) build the
same texts at 64 KB and 256 KB.
"""

from __future__ import annotations

from typing import Callable, Dict

Text = Callable[[int], str]

# A 40-character AWS secret access key and an access key ID, assembled so that no
# credential-looking literal sits in the source.
AWS_ID = "AKIA" + "Q3J7ZT2LMX4PRW8B"
AWS_KEY = "wJalrXUtnF" + "EMI/K7MDENG/bPxRfiCY" + "zQ3kT9aB1x"


def repeated(unit: str, head: str = "") -> Text:
    """`head`, then `unit` again and again up to the length."""
    return lambda size: (head + unit * (size // len(unit) + 1))[:size]


def run(prefix: str, char: str, tail: str = "") -> Text:
    """`prefix`, one long run of `char`, then `tail`: a run that never meets its terminator."""
    return lambda size: prefix + char * max(0, size - len(prefix) - len(tail)) + tail


def open_runs_then_pairs(size: int) -> str:
    """Backtick runs of many lengths that nothing closes (no run of 4 closes any of them), then
    pairs of 4-backtick runs, then a link: each open run could be searched for to the end."""
    count = int((size / 4) ** 0.5)
    head = " ".join("`" * length for length in range(1, count + 1) if length != 4)
    return repeated(" ```` ````", head)(size - 6) + " [[y]]"


SECRET_TEXTS: Dict[str, Dict[str, Text]] = {
    "private key": {
        "prefix repeated": repeated("-----BEGIN "),
        "words without the key": run("-----BEGIN ", "A "),
        "header without dashes": repeated("-----BEGIN RSA PRIVATE KEY "),
    },
    "AWS access key ID": {
        "prefix repeated": repeated("AKIA"),
        "run without a word end": run("AKIA", "Q"),
        "IDs with keys beside them": repeated(f"{AWS_ID} {AWS_KEY}\n"),
        "IDs in a run of key characters": repeated(f"{AWS_ID}+", "A/"),
    },
    "AWS secret access key": {
        "label repeated": repeated("aws_secret_access_key"),
        "label with blanks and no sign": run("aws_secret_access_key", " "),
        "signs repeated": repeated("aws_secret_access_key = : "),
        "value run too long": run("aws_secret_access_key = ", "A"),
    },
    "Azure storage account key": {
        "prefix repeated": repeated("AccountKey="),
        "run without its ==": run("AccountKey=", "A"),
    },
    "GitHub token": {
        "prefix repeated": repeated("ghp_"),
        "prefix after dashes": repeated("-ghp_"),
        "run too long": run("ghp_", "a"),
    },
    "GitHub fine-grained token": {
        "prefix repeated": repeated("github_pat_"),
        "run without its separator": run("github_pat_", "1"),
    },
    "GitLab token": {
        "prefix repeated in one run": repeated("-glpat"),
        "prefix repeated": repeated("glpat-"),
        "dashes without a word end": run("glpat-", "-", " "),
        "letters without a word end": run("glpat-", "a", "\u00e9"),
    },
    "Slack token": {
        "prefix repeated": repeated("xoxb-1-"),
        "words too short": repeated("xoxb-1-a-b-c-"),
        "digits without a dash": run("xoxb-", "1"),
    },
    "Slack webhook": {
        "prefix repeated": repeated("https://hooks.slack.com/services/T"),
        "run without its /B": run("https://hooks.slack.com/services/T", "A"),
    },
    "Stripe key": {
        "prefix repeated": repeated("sk_live_"),
        "run without a word end": run("rk_test_", "a", "_"),
    },
    "npm token": {"prefix repeated": repeated("npm_"), "run too long": run("npm_", "a")},
    "PyPI token": {
        "prefix repeated in one run": repeated("-pypi-AgE"),
        "dashes": run("pypi-AgE", "-"),
    },
    "Hugging Face token": {"prefix repeated": repeated("hf_"), "run too long": run("hf_", "a")},
    "Google API key": {"prefix repeated": repeated("AIza"), "run too long": run("AIza", "a")},
    "SendGrid API key": {
        "prefix repeated": repeated("SG."),
        "first part repeated": repeated("SG.aaaaaaaaaaaaaaaaaaaaaa."),
    },
    "Discord bot token": {
        "first part repeated": repeated("Maaaaaaaaaaaaaaaaaaaaaaa."),
        "dots repeated": repeated("M.a."),
    },
    "Telegram bot token": {
        "prefix repeated": repeated("123456789:AA"),
        "digits without a colon": run("", "1"),
        "colons repeated": repeated(":"),
    },
    "Twilio key": {"prefix repeated": repeated("SKAC"), "run too long": run("AC", "f")},
    "Heroku API key": {
        "prefix repeated in one run": repeated("-HRKU-"),
        "label repeated": repeated("herokukey"),
        "label with blanks and no sign": run("heroku_api_key", "\t"),
        "signs repeated": repeated("HEROKU_API_KEY=: "),
    },
    "Anthropic API key": {
        "prefix repeated": repeated("sk-ant-"),
        "purpose repeated": repeated("sk-ant-ab12-"),
    },
    "API key (sk-)": {
        "prefix repeated": repeated("sk-"),
        "kind repeated in one run": repeated("-sk-proj-"),
        "run without a word end": run("sk-", "a", "-"),
    },
    "JSON Web Token": {
        "prefix repeated in one run": repeated("-eyJ"),
        "first parts without a second": repeated("eyJabcdefgh."),
        "run without a dot": run("eyJ", "a"),
        "dots repeated": repeated("eyJ."),
    },
    "credential URI": {
        "scheme repeated": repeated("ab://"),
        "user repeated": repeated("ab://u:"),
        "passwords without a host": repeated("ab://u:p@"),
        "user run without a colon": run("ab://", "u"),
        "separators repeated": repeated("://"),
    },
}

MARKDOWN_TEXTS: Dict[str, Dict[str, Text]] = {
    "wikilinks": {
        "openers repeated": repeated("[["),
        "link without its closer": run("[[", "a"),
        "links on one line with code": repeated("[[a]]", "`a` "),
        "links among fences": lambda size: (
            repeated("```\n```\n")(size // 2) + repeated("[[a]]\n")(size - size // 2)
        ),
    },
    "headings": {
        "hashes repeated": repeated("#", "\n"),
        "closing sequence after blanks": lambda size: (
            "\n# x" + " " * (size // 2) + "#" * (size // 2) + "a#\n"
        ),
        "headings repeated": repeated("\n# x #"),
    },
    "block ids": {
        "carets repeated": repeated("^a"),
        "id followed by blanks and text": run("text ^abc", " ", "x"),
    },
    "code spans": {
        "backtick runs of every length": lambda size: (
            "[[x]] "
            + " ".join("`" * n for n in range(1, int((2 * size) ** 0.5)))[: size - 12]
            + " [[y]]"
        ),
        "unclosed runs": repeated("`` [[a]] "),
        "open runs of many lengths before closed pairs": open_runs_then_pairs,
    },
    "callouts": {"markers repeated": repeated("> [!note] x\n"), "blanks": run(">", " ", "[!x]")},
}

RUNTIME_TEXTS: Dict[str, Dict[str, Text]] = {
    "frontmatter": {
        "key without a colon": run("---\n", "a", "\n---\n"),
        "colons repeated": run("---\nkey", ":", "\n---\n"),
        "keys repeated": repeated("k: v\n", "---\n"),
    },
    "index rows": {
        "blanks inside a description": run("- [[a]]: x", " ", "y"),
        "rows repeated": repeated("- [[a]]: x\n"),
        "openers repeated": repeated("- [["),
    },
    "conflict markers": {
        "markers repeated": repeated("<<<<<<< a\n=======\n>>>>>>> b\n"),
        "marker run": run("", "<"),
    },
}
