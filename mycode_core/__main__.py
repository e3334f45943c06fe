"""``python -m mycode_core``: the same as the ``mycode`` command."""

from mycode_core.cli.main import main

if __name__ == "__main__":
    main()
