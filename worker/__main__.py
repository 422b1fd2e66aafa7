"""``python -m worker``."""

from worker import main

main()
