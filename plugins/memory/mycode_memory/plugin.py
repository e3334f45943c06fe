"""The memory plugin's hook implementations (entry point ``memory``)."""
