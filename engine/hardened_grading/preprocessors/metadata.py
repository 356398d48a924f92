"""``CheckCellMetadata``: nbgrader's check of each cell's metadata, with its JSON schema checked once per run."""

import functools
import traceback

import jsonschema
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata as NbgraderCheckCellMetadata


class _SchemaCheckedOnce(BaseMetadataValidator):
    """The schema part of nbgrader's cell validation, with the schema itself checked once per process."""

    def validate_cell(self, cell):
        meta = cell.metadata.get("nbgrader")
        if meta is None or meta.get("schema_version", 0) != self.schema_version:
            return super().validate_cell(cell)  # nothing to check, or nbgrader's own errors for another version
        error = jsonschema.exceptions.best_match(self.schema_validator().iter_errors(meta))
        if error is not None:
            raise error

    @functools.lru_cache(maxsize=1)
    def schema_validator(self):
        validator = jsonschema.validators.validator_for(self.schema)
        validator.check_schema(self.schema)
        return validator(self.schema)


class OnceCheckedSchemaValidator(MetadataValidator, _SchemaCheckedOnce):
    """nbgrader's validator of its cell metadata (every check of its current version's class, in whose
    ``super()`` chain :class:`_SchemaCheckedOnce` comes in place of nbgrader's base), faster.

    nbgrader calls ``jsonschema.validate`` for every cell, which checks the schema again each time, and
    makes a new validator (reading three schema files) for every notebook: 0.08 s per submission, twice
    as much as the check itself (`make bench`). The verdict and its errors are nbgrader's: the same
    schema, jsonschema's same best-matching error, and nbgrader's own errors for another schema version.
    """


@functools.lru_cache(maxsize=1)
def _metadata_validator():
    return OnceCheckedSchemaValidator()


class CheckCellMetadata(NbgraderCheckCellMetadata):
    """nbgrader's CheckCellMetadata, with :class:`OnceCheckedSchemaValidator`: the same check, faster."""

    def preprocess(self, nb, resources):
        try:
            _metadata_validator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            self.log.error("Notebook failed to validate; the nbgrader metadata may be corrupted.")
            raise ValidationError("Notebook failed to validate; the nbgrader metadata may be corrupted.") from None
        return nb, resources
