"""plan: which read-only check to make next (rule registry, tiers, the queue)."""
