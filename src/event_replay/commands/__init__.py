"""Command-line parsers of `replay`'s subcommands that join several packages (compare.py: `replay compare`, which
can rank a tuning grid against the live output after the comparison)."""
