"""Layer 1 (data): the JSON Schema of the report (``report-2.json``), shipped
with the package so that consumers can validate ``bayeserr report --format json``."""
