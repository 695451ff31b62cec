"""The version, in one place (read by the package and by report provenance)."""

__version__ = "0.2.0"
