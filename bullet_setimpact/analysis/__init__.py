"""Analysis without PyBullet: the journal's planar examples in closed form, the compliant
bilinear-spring model that validates restitution, distances between outcome sets, and
order-independence diagnostics."""
