"""`Refusal`: a request that cannot be honoured, with the sentence that tells the person why.

Engine functions raise it (a rename to a name that is taken), and the server's guard turns it into
an LSP error carrying that sentence; it sits here, alone, so the guard needs no analysis module.
"""

from __future__ import annotations


class Refusal(Exception):
    """A request that cannot be honoured; the message is shown to the user."""
