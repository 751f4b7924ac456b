"""observe: tool results -> typed records -> facts (typed observations)."""
