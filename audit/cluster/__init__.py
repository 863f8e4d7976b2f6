"""URL checks on a Dask cluster (--cluster local:N | tcp://HOST:PORT), issue 21.

The driver (this process) stays the frontier: discovery, expansion, validation, robots.txt
and the report stay here. `driver.Cluster` hands host-affine batches of URL checks to Dask
workers (`politeness.HostLanes`: a host's lanes, each at its share of the rate), and each
worker makes the requests a local run makes (`task.run_batch`: HttpClient.fetch, or
fetch_page with the driver's facts sinks) and sends back evidence, which the driver judges
with the local checks and hooks (one transport more). Dask (the optional `cluster` extra) is imported only when a run asks for a
cluster; `spec` (parsing and the one-line errors) imports nothing of it.

Imports the pipeline, the HTTP layer, the checks and the core; never the CLI or the API.
"""

from __future__ import annotations

from audit.cluster.spec import ClusterSpec, parse_spec

__all__ = ["ClusterSpec", "parse_spec"]
