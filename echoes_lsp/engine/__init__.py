"""The engine: pure analysis over the runtime's rules (parsing, the vault model, findings,
completion candidates, link targets, page fixes). It returns plain values, never LSP types, and
imports neither the server nor the CLI nor the runtime client, so both faces share it unchanged."""
