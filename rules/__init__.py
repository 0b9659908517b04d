"""trainlint's built-in rule pack, one module per topic. Importing it registers every rule;
it is named in the `trainlint.rules` entry-point group like any third-party pack."""

from . import (deepspeed, memory, models, numerics, precision, quantization, quantized_weights, schema,  # noqa: F401
               syntax, versions)
