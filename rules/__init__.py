"""trainlint's built-in rule pack, one module per topic. Importing it registers every rule;
it is named in the `trainlint.rules` entry-point group like any third-party pack."""

from . import deepspeed, memory, numerics, precision, quantization, schema, syntax, training, versions  # noqa: F401
