"""How users see results: the Monte Carlo figures and headless rendering of one rollout."""
