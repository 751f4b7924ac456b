"""The model's part in an investigation (optional: ``--model none`` never enters here).

- :mod:`.turns`: the actions and facts the model proposes, validated.
- :mod:`.steps`: structured turns constrained by JSON schemas built from the tools.
- :mod:`.context`: each turn's prompt assembled under a token budget.
"""
