"""The installed package's version, recorded on every stored run and shown by the health check."""

from importlib.metadata import PackageNotFoundError, version

try:
    CODE_VERSION = version("estibench")
except PackageNotFoundError:
    CODE_VERSION = "0+unknown"
