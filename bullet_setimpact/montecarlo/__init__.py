"""Monte Carlo over outcome sets: scenarios, rollouts on any ``concurrent.futures.Executor``
(Dask's included), per-rollout records, a run's results, and the resumable results directory."""
