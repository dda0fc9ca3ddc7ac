"""`gatewatch serve`: Gatewatch as an MCP server. Imports the mcp SDK: never on the proxy path."""
