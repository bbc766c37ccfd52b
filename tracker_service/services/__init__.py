"""What the tracker does on its own: certify recipes, audit hops, dial nodes'
data planes, rebalance, plan routes and drive route sessions across their hops.

Built on the domain, the store, the relay and security; never imports the API.
"""
