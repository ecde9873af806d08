"""The impact problem and its LCP solvers: NumPy and SciPy only, no PyBullet.

- :mod:`.problem`: :class:`ImpactProblem` (M, Jn, Jt, mu, restitution at one configuration) and
  the LCPs of the journal's eqs. (31) and (75);
- :mod:`.lcp`: Lemke's method (lexicographic, Harris ratio test) and the LCP residual;
- :mod:`.lcp_solve`: :func:`solve_lcp`, Lemke's stages and the complete fallback;
- :mod:`.lcp_milp`: the mixed-integer formulation that completes them (HiGHS);
- :mod:`.branch_sampling`: the batched step-LCP solvers of Algorithm 2 (cached bases).
"""
