"""Ray on this machine alone, for the tests that run the Ray recipes: every process of the cluster on 127.0.0.1.

Ray's own switch for that (the mode it uses on macOS and Windows, where its clusters stay on one machine) makes
each node, the driver and the workers take the loopback address as theirs; without it they listen on every
interface of the machine. Set before the cluster starts, and inherited by the processes it starts; a cluster
started in the test's own process also needs ``node_ip_address="127.0.0.1"`` (Ray read the switch when it was
imported). No usage statistics are sent.
"""

RAY_ON_LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
