"""rudnn inside other libraries: ``rudnn.integrations.transformers`` makes
it an attention implementation of Hugging Face transformers."""
