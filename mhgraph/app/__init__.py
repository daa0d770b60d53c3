"""Application services: what a command does, as functions the CLI (and the coming HTTP server)
call with settings and get results from; they print nothing. The CLI parses flags, calls these,
and prints what they return."""
