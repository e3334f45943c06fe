"""mycode-memory: notes kept under ``MYCODE_HOME`` and shown to later sessions."""

__version__ = "0.1.0"
