"""mycode built-in tools."""
