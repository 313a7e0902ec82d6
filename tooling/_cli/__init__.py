"""The command line's plumbing: loading targets, finding tools, the parser and run wrapper."""
