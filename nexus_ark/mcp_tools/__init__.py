"""Tools from MCP servers: which servers (servers.py), talking to them (hub.py, connect.py), what a call
gives (results.py, faults.py), and who may run what (approvals.py)."""
