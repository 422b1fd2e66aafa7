"""Speed of the dynamics estimators against the dense computations they replace, one section after another.

Run: ``.venv/bin/python bench/dynamics.py`` (sections run in sequence; each prints a markdown table).
"""

from collections.abc import Callable


def main() -> None:
    sections: list[Callable[[], None]] = []
    for section in sections:
        section()


if __name__ == "__main__":
    main()
