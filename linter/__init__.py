"""trainlint: lint and auto-patch LLM fine-tuning configs for the GPUs they will run on."""

__version__ = "0.1.0"
