"""Hardened autograding for any nbgrader course, plugged into nbgrader through its configuration hooks.

``nbgrader_config.py`` installs these pieces; ``nbgrader autograde ASSIGNMENT`` stays the command.

- :class:`TolerantNotebookExporter` (``Autograde.exporter_class``): a submission that cannot be
  read (corrupt, truncated, empty, not JSON) is graded as the blank release with a first cell
  that says why, so it is recorded with 0 points and the rest of the class is graded.
- :func:`adopt_renamed_notebook` (``Autograde.pre_convert_hook``): a student who submitted the
  assignment's one notebook under another name (``exercises (1).ipynb``) has it graded under the
  released name; the file they sent is left as it is.
- :class:`hardened_grading.preprocessors.restore.RestoreReleaseCells` (first of ``Autograde.sanitize_preprocessors``):
  the graded notebook is the student's own, run once from top to bottom as stock nbgrader runs it,
  with the release's locked cells restored; deleted, edited, reordered or duplicated test cells and
  changed cell metadata therefore cannot change what is run.
- :class:`ResilientExecute` (in place of ``Execute`` in ``Autograde.autograde_preprocessors``):
  runs the student's cells in the kernel ``hardened-grading`` (:mod:`hardened_grading.sandbox`,
  sandboxed and memory-limited) and the test cells in this process, out of the student code's
  reach (:mod:`hardened_grading.judge`). A cell that kills the kernel or exhausts its memory limit
  costs only the tests that need it.
- :func:`mark_graded` (``Autograde.post_convert_hook``) and :func:`remove_unfinished` (which
  ``nbgrader_config.py`` calls when ``nbgrader autograde`` starts): a folder that a run left half-graded is
  graded again by the next run, and a folder that a live run is grading is never touched, whatever the
  assignment. Importing this module has nbgrader's Autograde hold each submission's lock while it grades it
  (:func:`lock_submissions_while_graded`, :mod:`hardened_grading.locks`).
"""

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
