"""``python -m mycode_core``: the same as the ``mycode`` command."""

from mycode_core.cli.entry import console_main

if __name__ == "__main__":
    console_main()
