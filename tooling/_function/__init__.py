"""From a Python function to a tool: the target, its docstring, one frozen spec, FunctionTool."""
